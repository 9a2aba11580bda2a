package bson

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"math"
	"strconv"
	"unicode/utf8"
)

// This file writes BSON as Extended JSON. It reads the bytes with RawIter
// and checks, as it goes, everything Raw.Validate would (UTF-8, boolean
// bytes, nested lengths, depth), so malformed input gives a *DecodeError in
// one pass instead of a validation pass followed by a writing pass.

// ejWriteDoc appends the document or array doc (exactly its bytes) as a
// JSON object or array. base is doc's offset in the outermost buffer and
// depth its nesting depth (the top-level document is 1).
func ejWriteDoc(dst []byte, doc []byte, base, depth int, canonical, array bool) ([]byte, error) {
	if depth > MaxDepth {
		return dst, decodeErr(base, "", "nesting exceeds the maximum depth of "+strconv.Itoa(MaxDepth))
	}
	it := RawIter{doc: doc, base: base}
	if array {
		dst = append(dst, '[')
	} else {
		dst = append(dst, '{')
	}
	first := true
	for it.Next() {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		if !array {
			var bad int
			dst, bad = ejAppendString(dst, it.key)
			if bad >= 0 {
				return dst, decodeErr(base+it.epos+1+bad, "", "element key is not valid UTF-8")
			}
			dst = append(dst, ':')
		} else if !utf8.Valid(it.key) {
			// Array keys are not written, but they must still be valid
			// BSON, as Validate requires.
			return dst, decodeErr(base+it.epos+1, "", "element key is not valid UTF-8")
		}
		var err error
		dst, err = ejWriteValue(dst, it.val.Type, it.val.Value, base+it.vpos, depth, canonical)
		if err != nil {
			return dst, withParent(err, string(it.key))
		}
	}
	if it.err != nil {
		return dst, it.err
	}
	if array {
		return append(dst, ']'), nil
	}
	return append(dst, '}'), nil
}

// ejWriteValue appends one value. b is exactly the value's bytes, as sized
// by valueSize; off is its offset in the outermost buffer; depth is the
// depth of the document holding it.
func ejWriteValue(dst []byte, t Type, b []byte, off, depth int, canonical bool) ([]byte, error) {
	switch t {
	case TypeDouble:
		f := math.Float64frombits(binary.LittleEndian.Uint64(b))
		if canonical || math.IsInf(f, 0) || math.IsNaN(f) {
			dst = append(dst, `{"$numberDouble":"`...)
			dst = ejAppendDouble(dst, f)
			return append(dst, `"}`...), nil
		}
		return ejAppendDouble(dst, f), nil
	case TypeString:
		return ejWriteStringValue(dst, t, b, off)
	case TypeEmbeddedDocument:
		return ejWriteDoc(dst, b, off, depth+1, canonical, false)
	case TypeArray:
		return ejWriteDoc(dst, b, off, depth+1, canonical, true)
	case TypeBinary:
		sub := b[4]
		data := b[5:]
		if sub == SubtypeBinaryOld {
			// The legacy layout repeats the length; Extended JSON carries
			// only the payload, and the parser puts the inner length back.
			if len(data) < 4 {
				return dst, decodeErr(off, "", "binary subtype 0x02 length "+strconv.Itoa(len(data))+" cannot hold its inner length")
			}
			if inner := int(readInt32(data, 0)); inner != len(data)-4 {
				return dst, decodeErr(off+5, "", "binary subtype 0x02 inner length "+strconv.Itoa(inner)+" does not match outer length "+strconv.Itoa(len(data)))
			}
			data = data[4:]
		}
		dst = append(dst, `{"$binary":{"base64":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, data)
		dst = append(dst, `","subType":"`...)
		dst = append(dst, ejHexDigits[sub>>4], ejHexDigits[sub&0xF])
		return append(dst, `"}}`...), nil
	case TypeUndefined:
		return append(dst, `{"$undefined":true}`...), nil
	case TypeObjectID:
		return ejAppendOID(dst, b), nil
	case TypeBoolean:
		switch b[0] {
		case 0:
			return append(dst, "false"...), nil
		case 1:
			return append(dst, "true"...), nil
		}
		return dst, decodeErr(off, "", "boolean byte is 0x"+strconv.FormatUint(uint64(b[0]), 16)+", must be 0x00 or 0x01")
	case TypeDateTime:
		return ejAppendDate(dst, int64(binary.LittleEndian.Uint64(b)), canonical), nil
	case TypeNull:
		return append(dst, "null"...), nil
	case TypeRegex:
		return ejWriteRegex(dst, b, off)
	case TypeDBPointer:
		n := len(b) - 12
		dst = append(dst, `{"$dbPointer":{"$ref":`...)
		var bad int
		dst, bad = ejAppendString(dst, b[4:n-1])
		if bad >= 0 {
			return dst, decodeErr(off+4+bad, "", "dbPointer namespace is not valid UTF-8")
		}
		dst = append(dst, `,"$id":`...)
		dst = ejAppendOID(dst, b[n:])
		return append(dst, `}}`...), nil
	case TypeJavaScript, TypeSymbol:
		if t == TypeJavaScript {
			dst = append(dst, `{"$code":`...)
		} else {
			dst = append(dst, `{"$symbol":`...)
		}
		dst, err := ejWriteStringValue(dst, t, b, off)
		if err != nil {
			return dst, err
		}
		return append(dst, '}'), nil
	case TypeCodeWithScope:
		return ejWriteCodeWithScope(dst, b, off, depth, canonical)
	case TypeInt32:
		v := int64(readInt32(b, 0))
		if canonical {
			dst = append(dst, `{"$numberInt":"`...)
			dst = strconv.AppendInt(dst, v, 10)
			return append(dst, `"}`...), nil
		}
		return strconv.AppendInt(dst, v, 10), nil
	case TypeTimestamp:
		dst = append(dst, `{"$timestamp":{"t":`...)
		dst = strconv.AppendUint(dst, uint64(binary.LittleEndian.Uint32(b[4:])), 10)
		dst = append(dst, `,"i":`...)
		dst = strconv.AppendUint(dst, uint64(binary.LittleEndian.Uint32(b)), 10)
		return append(dst, `}}`...), nil
	case TypeInt64:
		v := int64(binary.LittleEndian.Uint64(b))
		if canonical {
			dst = append(dst, `{"$numberLong":"`...)
			dst = strconv.AppendInt(dst, v, 10)
			return append(dst, `"}`...), nil
		}
		return strconv.AppendInt(dst, v, 10), nil
	case TypeDecimal128:
		d := Decimal128{l: binary.LittleEndian.Uint64(b), h: binary.LittleEndian.Uint64(b[8:])}
		dst = append(dst, `{"$numberDecimal":"`...)
		dst = d.AppendString(dst)
		return append(dst, `"}`...), nil
	case TypeMinKey:
		return append(dst, `{"$minKey":1}`...), nil
	case TypeMaxKey:
		return append(dst, `{"$maxKey":1}`...), nil
	}
	return dst, decodeErr(off, "", "invalid element type 0x"+strconv.FormatUint(uint64(t), 16))
}

// ejWriteStringValue appends a length-prefixed BSON string as a JSON string.
func ejWriteStringValue(dst []byte, t Type, b []byte, off int) ([]byte, error) {
	dst, bad := ejAppendString(dst, b[4:len(b)-1])
	if bad >= 0 {
		return dst, decodeErr(off+4+bad, "", t.String()+" is not valid UTF-8")
	}
	return dst, nil
}

func ejAppendOID(dst []byte, id []byte) []byte {
	dst = append(dst, `{"$oid":"`...)
	dst = hex.AppendEncode(dst, id[:12])
	return append(dst, `"}`...)
}

// ejWriteRegex appends a regex with its options sorted, as the
// specification requires even when the BSON has them out of order.
func ejWriteRegex(dst []byte, b []byte, off int) ([]byte, error) {
	p, _ := readCString(b, 0, len(b))
	pattern := b[:p]
	options := b[p+1 : len(b)-1]
	dst = append(dst, `{"$regularExpression":{"pattern":`...)
	var bad int
	dst, bad = ejAppendString(dst, pattern)
	if bad >= 0 {
		return dst, decodeErr(off+bad, "", "regex pattern is not valid UTF-8")
	}
	dst = append(dst, `,"options":`...)
	var buf [16]byte
	sorted := options
	if !ejSorted(options) {
		if len(options) <= len(buf) {
			sorted = buf[:len(options)]
		} else {
			sorted = make([]byte, len(options))
		}
		copy(sorted, options)
		ejSortBytes(sorted)
	}
	dst, bad = ejAppendString(dst, sorted)
	if bad >= 0 {
		return dst, decodeErr(off+p+1, "", "regex options are not valid UTF-8")
	}
	return append(dst, `}}`...), nil
}

func ejSorted(b []byte) bool {
	for i := 1; i < len(b); i++ {
		if b[i] < b[i-1] {
			return false
		}
	}
	return true
}

// ejSortBytes sorts a short byte slice in place (insertion sort: regex
// options are a handful of letters, and sort.Slice would allocate).
func ejSortBytes(b []byte) {
	for i := 1; i < len(b); i++ {
		for j := i; j > 0 && b[j] < b[j-1]; j-- {
			b[j], b[j-1] = b[j-1], b[j]
		}
	}
}

// ejWriteCodeWithScope checks the nested lengths of a code-with-scope
// value (its total length, the code string's and the scope document's
// must agree) and appends it.
func ejWriteCodeWithScope(dst []byte, b []byte, off, depth int, canonical bool) ([]byte, error) {
	sn, err := stringSize(TypeJavaScript, b, 4, len(b), off)
	if err != nil {
		return dst, err
	}
	spos := 4 + sn
	dn, err := docBounds(b[spos:], off+spos)
	if err != nil {
		return dst, withParent(err, "$scope")
	}
	if spos+dn != len(b) {
		return dst, decodeErr(off, "", "code with scope length "+strconv.Itoa(len(b))+" does not match its contents ("+strconv.Itoa(spos+dn)+" bytes)")
	}
	dst = append(dst, `{"$code":`...)
	var bad int
	dst, bad = ejAppendString(dst, b[8:spos-1])
	if bad >= 0 {
		return dst, decodeErr(off+8+bad, "", "code is not valid UTF-8")
	}
	dst = append(dst, `,"$scope":`...)
	dst, err = ejWriteDoc(dst, b[spos:], off+spos, depth+1, canonical, false)
	if err != nil {
		return dst, withParent(err, "$scope")
	}
	return append(dst, '}'), nil
}

// maxRelaxedDate is 10000-01-01T00:00:00Z in milliseconds: relaxed output
// uses ISO-8601 strings only for years 1970 through 9999.
const maxRelaxedDate = 253402300800000

// ejAppendDate appends a datetime: {"$date":{"$numberLong":"ms"}} in
// canonical form and for dates outside 1970..9999, else an RFC 3339 string
// with milliseconds only when they are non-zero (as the corpus expects).
func ejAppendDate(dst []byte, ms int64, canonical bool) []byte {
	if canonical || ms < 0 || ms >= maxRelaxedDate {
		dst = append(dst, `{"$date":{"$numberLong":"`...)
		dst = strconv.AppendInt(dst, ms, 10)
		return append(dst, `"}}`...)
	}
	days, rem := ms/86400000, ms%86400000
	y, m, d := civilFromDays(days)
	dst = append(dst, `{"$date":"`...)
	dst = ejAppend4(dst, y)
	dst = append(dst, '-')
	dst = ejAppend2(dst, m)
	dst = append(dst, '-')
	dst = ejAppend2(dst, d)
	dst = append(dst, 'T')
	dst = ejAppend2(dst, rem/3600000)
	dst = append(dst, ':')
	dst = ejAppend2(dst, rem/60000%60)
	dst = append(dst, ':')
	dst = ejAppend2(dst, rem/1000%60)
	if frac := rem % 1000; frac != 0 {
		dst = append(dst, '.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
	}
	return append(dst, `Z"}`...)
}

func ejAppend2(dst []byte, v int64) []byte {
	return append(dst, byte('0'+v/10), byte('0'+v%10))
}

func ejAppend4(dst []byte, v int64) []byte {
	return append(dst, byte('0'+v/1000), byte('0'+v/100%10), byte('0'+v/10%10), byte('0'+v%10))
}

// ejAppendDouble appends f in the shortest form that reads back to the same
// float64: "Infinity", "-Infinity" or "NaN" for non-finite values; plain
// decimal notation with at least one fractional digit ("1.0", "-0.0",
// "0.001") when the decimal exponent is in [-4, 16); otherwise scientific
// notation with at least one fractional digit and a signed exponent
// ("1.0E+100", "1.2345678921232E+18", "5.0E-324"). The ".0" keeps relaxed
// output a JSON non-integer, so it parses back as a double.
func ejAppendDouble(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	// strconv gives the shortest digits as "-d.ddde±XX".
	var buf [32]byte
	s := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	if s[0] == '-' {
		dst = append(dst, '-')
		s = s[1:]
	}
	e := 0
	for e < len(s) && s[e] != 'e' {
		e++
	}
	mant := s[:e]
	exp := 0
	neg := s[e+1] == '-'
	for _, c := range s[e+2:] {
		exp = exp*10 + int(c-'0')
	}
	if neg {
		exp = -exp
	}
	// Gather the significant digits without the point.
	var dbuf [24]byte
	digits := append(dbuf[:0], mant[0])
	if len(mant) > 2 {
		digits = append(digits, mant[2:]...)
	}
	switch {
	case exp < -4 || exp >= 16:
		dst = append(dst, digits[0], '.')
		if len(digits) > 1 {
			dst = append(dst, digits[1:]...)
		} else {
			dst = append(dst, '0')
		}
		dst = append(dst, 'E')
		if exp < 0 {
			dst = append(dst, '-')
			exp = -exp
		} else {
			dst = append(dst, '+')
		}
		return strconv.AppendInt(dst, int64(exp), 10)
	case exp < 0:
		dst = append(dst, '0', '.')
		for i := -1; i > exp; i-- {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	if len(digits) <= exp+1 {
		dst = append(dst, digits...)
		for i := len(digits); i <= exp; i++ {
			dst = append(dst, '0')
		}
		return append(dst, '.', '0')
	}
	dst = append(dst, digits[:exp+1]...)
	dst = append(dst, '.')
	return append(dst, digits[exp+1:]...)
}
