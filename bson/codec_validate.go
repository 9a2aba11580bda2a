package bson

import "unicode/utf8"

// quickValidTop reports whether b is exactly one valid BSON document. It
// accepts precisely what validator.validateTop accepts (FuzzCodecQuickValid
// checks this), but only answers yes or no, so it can skip the
// bookkeeping the validator does for error messages and decoders: Unmarshal
// runs it first and asks the validator for the detailed error only when it
// says no. The common element types are checked inline; the rare ones are
// handed to the validator.
func quickValidTop(b []byte) bool {
	n, ok := quickDoc(b, 0, 1)
	return ok && n == len(b)
}

// quickDoc validates the document at b[pos:] at nesting depth and returns
// its length. b ends where the enclosing document's contents end.
func quickDoc(b []byte, pos, depth int) (int, bool) {
	if depth > MaxDepth || len(b)-pos < 4 {
		return 0, false
	}
	n := int(le32(b[pos:]))
	if n < 5 || n > len(b)-pos {
		return 0, false
	}
	end := pos + n - 1 // the terminating NUL
	if b[end] != 0 {
		return 0, false
	}
	i := pos + 4
	for i < end {
		t := Type(b[i])
		i++
		k := i
		var high byte // OR of the key's bytes: below 0x80 means ASCII
		for {
			if i >= end {
				return 0, false
			}
			c := b[i]
			if c == 0 {
				break
			}
			high |= c
			i++
		}
		if high >= 0x80 && !utf8.Valid(b[k:i]) {
			return 0, false
		}
		i++
		switch t {
		case TypeDouble, TypeDateTime, TypeTimestamp, TypeInt64:
			i += 8
		case TypeInt32:
			i += 4
		case TypeObjectID:
			i += 12
		case TypeDecimal128:
			i += 16
		case TypeNull, TypeUndefined, TypeMinKey, TypeMaxKey:
		case TypeBoolean:
			if i >= end || b[i] > 1 {
				return 0, false
			}
			i++
		case TypeString, TypeJavaScript, TypeSymbol:
			if end-i < 4 {
				return 0, false
			}
			l := int(le32(b[i:]))
			if l < 1 || l > end-i-4 || b[i+4+l-1] != 0 || !utf8.Valid(b[i+4:i+4+l-1]) {
				return 0, false
			}
			i += 4 + l
		case TypeEmbeddedDocument, TypeArray:
			m, ok := quickDoc(b[:end], i, depth+1)
			if !ok {
				return 0, false
			}
			i += m
		case TypeBinary:
			if end-i < 5 {
				return 0, false
			}
			l := int(le32(b[i:]))
			if l < 0 || l > end-i-5 {
				return 0, false
			}
			if b[i+4] == SubtypeBinaryOld && (l < 4 || int(le32(b[i+5:])) != l-4) {
				return 0, false
			}
			i += 5 + l
		default:
			// Regex, DBPointer, code with scope, and unknown types.
			var v validator
			m, err := v.validateValue(t, b, i, end, 0, depth)
			if err != nil {
				return 0, false
			}
			i += m
		}
		if i > end {
			return 0, false
		}
	}
	return n, true
}

// validateForDecode validates a whole document before decoding, returning
// the validator's detailed *DecodeError when it is not valid.
func validateForDecode(b []byte) error {
	if quickValidTop(b) {
		return nil
	}
	var v validator
	if err := v.validateTop(b); err != nil {
		return err
	}
	// Unreachable while quickValidTop and the validator agree, which the
	// fuzz target checks; never accept what the quick check rejected.
	return decodeErr(0, "", "document is not valid BSON")
}
