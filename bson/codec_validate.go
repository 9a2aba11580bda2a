package bson

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// scanDoc is the validator's fast path: it checks the document at b[pos:]
// (b ends where the enclosing document's contents end) and counts what it
// holds exactly as validateDoc does, but only answers yes or no, inlining
// the common element types and scanning keys and ASCII strings eight bytes
// at a time. validateTop falls back to validateDoc to explain a no; the two
// must accept the same documents, which FuzzRawDecode and
// TestValidatorPathsAgree check.
func (v *validator) scanDoc(b []byte, pos, depth int, array bool) (int, bool) {
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
	slot := -1
	if v.record {
		slot = len(v.docLens)
		v.docLens = append(v.docLens, 0)
	}
	var count int32
	i := pos + 4
	for i < end {
		t := Type(b[i])
		i++
		kl, ascii, ok := scanKey(b, i, end)
		if !ok || !ascii && !utf8.Valid(b[i:i+kl]) {
			return 0, false
		}
		i += kl + 1
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
			if l < 1 || l > end-i-4 || b[i+4+l-1] != 0 || !validUTF8(b[i+4:i+4+l-1]) {
				return 0, false
			}
			i += 4 + l
		case TypeEmbeddedDocument, TypeArray:
			m, ok := v.scanDoc(b[:end], i, depth+1, t == TypeArray)
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
			m, err := v.validateValue(t, b, i, end, 0, depth)
			if err != nil {
				return 0, false
			}
			i += m
		}
		if i > end {
			return 0, false
		}
		v.counts[t]++
		count++
	}
	if array {
		v.arrElems += count
	} else {
		v.elems += count
	}
	if slot >= 0 {
		v.docLens[slot] = count
	}
	return n, true
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// zeroByte returns the index of the first zero byte of the little-endian
// word x, or 8. (x-lsb)&^x&msb sets the top bit of every zero byte, and of
// no byte before the first zero.
func zeroByte(x uint64) int {
	return bits.TrailingZeros64((x-lsb)&^x&msb) >> 3
}

// scanKey finds the NUL ending the key at b[i:end], eight bytes at a time,
// and reports the key's length, whether it is all ASCII, and whether the
// NUL was found before end.
func scanKey(b []byte, i, end int) (n int, ascii, ok bool) {
	var high uint64
	for j := i; ; j += 8 {
		if j+8 > end {
			for ; j < end; j++ {
				if b[j] == 0 {
					return j - i, high&msb == 0, true
				}
				high |= uint64(b[j])
			}
			return 0, false, false
		}
		x := binary.LittleEndian.Uint64(b[j:])
		if z := zeroByte(x); z < 8 {
			high |= x & (1<<(8*z) - 1)
			return j + z - i, high&msb == 0, true
		}
		high |= x
	}
}

// validUTF8 is utf8.Valid with the all-ASCII case, by far the most common
// for field values, checked inline eight bytes at a time.
func validUTF8(b []byte) bool {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if binary.LittleEndian.Uint64(b[i:])&msb != 0 {
			return utf8.Valid(b)
		}
	}
	for ; i < len(b); i++ {
		if b[i] >= 0x80 {
			return utf8.Valid(b)
		}
	}
	return true
}

// keyLen returns the length of the NUL-terminated key at b[i:] in a
// validated document.
func keyLen(b []byte, i int) int {
	for j := i; j+8 <= len(b); j += 8 {
		if z := zeroByte(binary.LittleEndian.Uint64(b[j:])); z < 8 {
			return j + z - i
		}
	}
	j := i
	for b[j] != 0 {
		j++
	}
	return j - i
}

// validateForDecode validates a whole document before decoding, returning
// the validator's detailed *DecodeError when it is not valid.
func validateForDecode(b []byte) error {
	var v validator
	return v.validateTop(b)
}
