package bson

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"unicode/utf8"
)

// This file holds the bounds-checked readers every view and decoder uses.
// None of them can index out of range on any input.

func readInt32(b []byte, pos int) int32 {
	return int32(binary.LittleEndian.Uint32(b[pos:]))
}

func decodeErr(off int, path, reason string) *DecodeError {
	return &DecodeError{Offset: off, Path: path, Reason: reason}
}

// withParent prefixes a nested error's path with the parent key. Only called
// on the error path, so success never builds paths.
func withParent(err error, key string) error {
	if de, ok := err.(*DecodeError); ok {
		if de.Path == "" {
			de.Path = key
		} else {
			de.Path = key + "." + de.Path
		}
	}
	return err
}

// docBounds checks the framing of the document at doc[0:]: a length prefix
// of at least 5 that fits in doc, and a trailing NUL. It returns the length.
// off is doc's offset in the outermost buffer, for error messages.
func docBounds(doc []byte, off int) (int, error) {
	if len(doc) < 4 {
		return 0, decodeErr(off, "", "document length prefix truncated: "+strconv.Itoa(len(doc))+" bytes left, need 4")
	}
	n := int(readInt32(doc, 0))
	if n < 5 {
		return 0, decodeErr(off, "", "document length "+strconv.Itoa(n)+" is less than the minimum of 5")
	}
	if n > len(doc) {
		return 0, decodeErr(off, "", "document length "+strconv.Itoa(n)+" exceeds the "+strconv.Itoa(len(doc))+" bytes available")
	}
	if doc[n-1] != 0 {
		return 0, decodeErr(off+n-1, "", "document does not end with a NUL byte")
	}
	return n, nil
}

// readCString returns the length of the NUL-terminated string at b[pos:]
// (excluding the NUL), bounded by end. Keys are short: a plain loop over the
// first bytes avoids IndexByte's call and setup cost.
func readCString(b []byte, pos, end int) (int, bool) {
	lim := pos + 16
	if lim > end {
		lim = end
	}
	for j := pos; j < lim; j++ {
		if b[j] == 0 {
			return j - pos, true
		}
	}
	if lim == end {
		return 0, false
	}
	i := bytes.IndexByte(b[lim:end], 0)
	if i < 0 {
		return 0, false
	}
	return lim - pos + i, true
}

// valueSize returns the number of bytes the value of type t occupies at
// b[pos:end], checking only what is needed to find its end (not UTF-8, not
// nested contents). base is b's offset in the outermost buffer.
func valueSize(t Type, b []byte, pos, end, base int) (int, error) {
	avail := end - pos
	need := func(n int) (int, error) {
		if n > avail {
			return 0, decodeErr(base+pos, "", t.String()+" value needs "+strconv.Itoa(n)+" bytes but only "+strconv.Itoa(avail)+" remain")
		}
		return n, nil
	}
	switch t {
	case TypeDouble, TypeDateTime, TypeTimestamp, TypeInt64:
		return need(8)
	case TypeInt32:
		return need(4)
	case TypeObjectID:
		return need(12)
	case TypeDecimal128:
		return need(16)
	case TypeBoolean:
		return need(1)
	case TypeUndefined, TypeNull, TypeMinKey, TypeMaxKey:
		return 0, nil
	case TypeString, TypeJavaScript, TypeSymbol:
		return stringSize(t, b, pos, end, base)
	case TypeEmbeddedDocument, TypeArray:
		n, err := docBounds(b[pos:end], base+pos)
		return n, err
	case TypeBinary:
		if _, err := need(5); err != nil {
			return 0, err
		}
		n := int(readInt32(b, pos))
		if n < 0 {
			return 0, decodeErr(base+pos, "", "binary length "+strconv.Itoa(n)+" is negative")
		}
		return need(5 + n)
	case TypeRegex:
		p, ok := readCString(b, pos, end)
		if !ok {
			return 0, decodeErr(base+pos, "", "regex pattern is not NUL-terminated")
		}
		o, ok := readCString(b, pos+p+1, end)
		if !ok {
			return 0, decodeErr(base+pos+p+1, "", "regex options are not NUL-terminated")
		}
		return p + 1 + o + 1, nil
	case TypeDBPointer:
		n, err := stringSize(t, b, pos, end, base)
		if err != nil {
			return 0, err
		}
		return need(n + 12)
	case TypeCodeWithScope:
		if _, err := need(4); err != nil {
			return 0, err
		}
		n := int(readInt32(b, pos))
		if n < 14 {
			return 0, decodeErr(base+pos, "", "code with scope length "+strconv.Itoa(n)+" is less than the minimum of 14")
		}
		return need(n)
	}
	return 0, unknownTypeErr(t, base+pos)
}

func unknownTypeErr(t Type, off int) error {
	return decodeErr(off, "", "unknown element type 0x"+strconv.FormatUint(uint64(t), 16))
}

func stringSize(t Type, b []byte, pos, end, base int) (int, error) {
	if end-pos < 4 {
		return 0, decodeErr(base+pos, "", t.String()+" length prefix truncated")
	}
	n := int(readInt32(b, pos))
	if n < 1 {
		return 0, decodeErr(base+pos, "", t.String()+" length "+strconv.Itoa(n)+" is less than the minimum of 1")
	}
	if n > end-pos-4 {
		return 0, decodeErr(base+pos, "", t.String()+" length "+strconv.Itoa(n)+" exceeds the "+strconv.Itoa(end-pos-4)+" bytes remaining")
	}
	if b[pos+4+n-1] != 0 {
		return 0, decodeErr(base+pos+4+n-1, "", t.String()+" is not NUL-terminated")
	}
	return 4 + n, nil
}

// validator walks a document checking everything the BSON spec requires, and
// counts what a decoder will need to allocate.
type validator struct {
	counts   [256]int32 // values seen, by type
	elems    int32      // elements in all documents (not arrays)
	arrElems int32      // elements in all arrays

	// When record is set, docLens gets the element count of every document
	// and array in pre-order, so a decoder can size each one exactly.
	record  bool
	docLens []int32
}

// validateDoc validates the document starting at b[pos:] and returns its
// length. depth is the nesting depth of this document (the top is 1).
func (v *validator) validateDoc(b []byte, pos, base, depth int, array bool) (int, error) {
	if depth > MaxDepth {
		return 0, decodeErr(base+pos, "", "nesting exceeds the maximum depth of "+strconv.Itoa(MaxDepth))
	}
	n, err := docBounds(b[pos:], base+pos)
	if err != nil {
		return 0, err
	}
	end := pos + n - 1 // index of the terminating NUL
	slot := -1
	if v.record {
		slot = len(v.docLens)
		v.docLens = append(v.docLens, 0)
	}
	var count int32
	i := pos + 4
	for i < end {
		t := Type(b[i])
		if t == 0 {
			return 0, decodeErr(base+i, "", "document terminator found before the end of the document ("+strconv.Itoa(end-i)+" bytes early)")
		}
		// Find the key's NUL and note any non-ASCII byte in one pass;
		// keys are short, so this beats IndexByte plus utf8.Valid.
		j := i + 1
		var high byte
		for j < end && b[j] != 0 {
			high |= b[j]
			j++
		}
		if j >= end {
			return 0, decodeErr(base+i+1, "", "element key is not NUL-terminated within the document")
		}
		key := b[i+1 : j]
		if high >= utf8.RuneSelf && !utf8.Valid(key) {
			return 0, decodeErr(base+i+1, "", "element key is not valid UTF-8")
		}
		if !t.Valid() {
			return 0, withParent(unknownTypeErr(t, base+i), string(key))
		}
		vpos := j + 1
		var size int
		switch t {
		case TypeDouble, TypeInt64, TypeDateTime, TypeTimestamp:
			size = 8
		case TypeInt32:
			size = 4
		default:
			var err error
			if size, err = v.validateValue(t, b, vpos, end, base, depth); err != nil {
				return 0, withParent(err, string(key))
			}
		}
		if vpos+size > end {
			_, err := valueSize(t, b, vpos, end, base)
			return 0, withParent(err, string(key))
		}
		v.counts[t]++
		count++
		i = vpos + size
	}
	if array {
		v.arrElems += count
	} else {
		v.elems += count
	}
	if slot >= 0 {
		v.docLens[slot] = count
	}
	return n, nil
}

func (v *validator) validateValue(t Type, b []byte, pos, end, base, depth int) (int, error) {
	switch t {
	case TypeEmbeddedDocument:
		return v.validateDoc(b[:end], pos, base, depth+1, false)
	case TypeArray:
		return v.validateDoc(b[:end], pos, base, depth+1, true)
	case TypeString, TypeJavaScript, TypeSymbol:
		n, err := stringSize(t, b, pos, end, base)
		if err != nil {
			return 0, err
		}
		if !utf8.Valid(b[pos+4 : pos+n-1]) {
			return 0, decodeErr(base+pos+4, "", t.String()+" is not valid UTF-8")
		}
		return n, nil
	case TypeBoolean:
		if pos >= end {
			return 0, decodeErr(base+pos, "", "boolean value truncated")
		}
		if b[pos] > 1 {
			return 0, decodeErr(base+pos, "", "boolean byte is 0x"+strconv.FormatUint(uint64(b[pos]), 16)+", must be 0x00 or 0x01")
		}
		return 1, nil
	case TypeBinary:
		n, err := valueSize(t, b, pos, end, base)
		if err != nil {
			return 0, err
		}
		if b[pos+4] == SubtypeBinaryOld {
			outer := n - 5
			if outer < 4 {
				return 0, decodeErr(base+pos, "", "binary subtype 0x02 length "+strconv.Itoa(outer)+" cannot hold its inner length")
			}
			inner := int(readInt32(b, pos+5))
			if inner != outer-4 {
				return 0, decodeErr(base+pos+5, "", "binary subtype 0x02 inner length "+strconv.Itoa(inner)+" does not match outer length "+strconv.Itoa(outer))
			}
		}
		return n, nil
	case TypeRegex:
		n, err := valueSize(t, b, pos, end, base)
		if err != nil {
			return 0, err
		}
		if !utf8.Valid(b[pos : pos+n]) {
			return 0, decodeErr(base+pos, "", "regex is not valid UTF-8")
		}
		return n, nil
	case TypeDBPointer:
		n, err := valueSize(t, b, pos, end, base)
		if err != nil {
			return 0, err
		}
		if !utf8.Valid(b[pos+4 : pos+n-13]) {
			return 0, decodeErr(base+pos+4, "", "dbPointer namespace is not valid UTF-8")
		}
		return n, nil
	case TypeCodeWithScope:
		n, err := valueSize(t, b, pos, end, base)
		if err != nil {
			return 0, err
		}
		cend := pos + n
		sn, err := stringSize(TypeJavaScript, b[:cend], pos+4, cend, base)
		if err != nil {
			return 0, err
		}
		if !utf8.Valid(b[pos+8 : pos+4+sn-1]) {
			return 0, decodeErr(base+pos+8, "", "code is not valid UTF-8")
		}
		spos := pos + 4 + sn
		dn, err := v.validateDoc(b[:cend], spos, base, depth+1, false)
		if err != nil {
			return 0, withParent(err, "$scope")
		}
		if spos+dn != cend {
			return 0, decodeErr(base+pos, "", "code with scope length "+strconv.Itoa(n)+" does not match its contents ("+strconv.Itoa(4+sn+dn)+" bytes)")
		}
		return n, nil
	}
	return valueSize(t, b, pos, end, base)
}

// validateTop validates a complete top-level document: its length prefix
// must equal len(b) exactly. The fast path decides; the detailed path runs
// only to explain a failure.
func (v *validator) validateTop(b []byte) error {
	lens := v.docLens
	if n, ok := v.scanDoc(b, 0, 1, false); ok && n == len(b) {
		return nil
	}
	*v = validator{record: v.record, docLens: lens[:0]}
	n, err := v.validateDoc(b, 0, 0, 1, false)
	if err != nil {
		return err
	}
	if n != len(b) {
		return decodeErr(n, "", "document length "+strconv.Itoa(n)+" is less than the "+strconv.Itoa(len(b))+" bytes given")
	}
	// Unreachable while the two paths agree (the fuzz targets check it);
	// never accept what the fast path rejected.
	return decodeErr(0, "", "document is not valid BSON")
}
