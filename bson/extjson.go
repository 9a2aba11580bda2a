package bson

import (
	"strconv"
	"unicode/utf8"
)

// This file holds the public Extended JSON API and the pieces the parser
// (extjson_parse*.go) and the writer (extjson_write.go) share. Both work
// directly between JSON text and BSON bytes: nothing is decoded into Go
// values on the way, so neither allocates per token.

// ExtJSONError reports Extended JSON text that cannot be parsed into BSON.
// Offset is the byte offset in the JSON input where the problem was found;
// Path is the dotted key path of the value being parsed ("" for the
// top-level object itself); Reason says what is wrong.
type ExtJSONError struct {
	Offset int
	Path   string
	Reason string
}

// Error formats the error as "bson: invalid Extended JSON at byte N (field
// "path"): reason".
func (e *ExtJSONError) Error() string {
	return offsetError("bson: invalid Extended JSON at byte ", e.Offset, e.Path, e.Reason)
}

// ejErr builds an *ExtJSONError; the path is filled in as the error
// travels up through the enclosing objects, so success never builds paths.
func ejErr(off int, reason string) *ExtJSONError {
	return &ExtJSONError{Offset: off, Reason: reason}
}

// ejWithParent prefixes an Extended JSON error's path with the key of the
// enclosing element.
func ejWithParent(err error, key string) error {
	if e, ok := err.(*ExtJSONError); ok {
		if e.Path == "" {
			e.Path = key
		} else {
			e.Path = key + "." + e.Path
		}
	}
	return err
}

// ParseExtJSON parses one Extended JSON object (canonical or relaxed, plus
// the legacy {"$binary": ..., "$type": ...}, {"$regex": ..., "$options":
// ...} and {"$uuid": ...} forms) into a BSON document. The top-level value
// must be a JSON object. Errors are *ExtJSONError values naming the byte
// offset and key path of the problem.
func ParseExtJSON(data []byte) (Raw, error) {
	out, err := AppendParseExtJSON(nil, data)
	if err != nil {
		return nil, err
	}
	return Raw(out), nil
}

// AppendParseExtJSON is ParseExtJSON appending the document to dst. On
// error it returns dst unchanged (nothing is left half-written) and an
// *ExtJSONError.
func AppendParseExtJSON(dst []byte, data []byte) ([]byte, error) {
	p := ejParser{data: data}
	defer p.release()
	p.skipWS()
	if p.pos >= len(data) {
		return dst, ejErr(p.pos, "input is empty; want a JSON object")
	}
	if data[p.pos] != '{' {
		return dst, ejErr(p.pos, "the top-level value must be a JSON object, found "+p.describe(p.pos))
	}
	out, _, err := p.parseObject(dst, 1, true)
	if err != nil {
		return dst, err
	}
	p.skipWS()
	if p.pos != len(data) {
		return dst, ejErr(p.pos, "unexpected "+p.describe(p.pos)+" after the top-level object")
	}
	return out, nil
}

// AppendExtJSON appends doc as compact Extended JSON: canonical when
// canonical is true (every type preserved), relaxed otherwise (numbers and
// recent dates as plain JSON). Keys keep their BSON order. Malformed BSON
// gives a *DecodeError and dst unchanged.
func AppendExtJSON(dst []byte, doc Raw, canonical bool) ([]byte, error) {
	n, err := docBounds(doc, 0)
	if err != nil {
		return dst, err
	}
	if n != len(doc) {
		return dst, decodeErr(n, "", "document length "+strconv.Itoa(n)+" is less than the "+strconv.Itoa(len(doc))+" bytes given")
	}
	out, err := ejWriteDoc(dst, doc, 0, 1, canonical, false)
	if err != nil {
		return dst, err
	}
	return out, nil
}

// appendExtJSONValue appends one value as Extended JSON. v.Value must hold
// exactly one value of v.Type. Offsets in errors count from v.Value[0].
func appendExtJSONValue(dst []byte, v RawValue, canonical bool) ([]byte, error) {
	if !v.Type.Valid() {
		return dst, decodeErr(0, "", "invalid element type 0x"+strconv.FormatUint(uint64(v.Type), 16))
	}
	n, err := valueSize(v.Type, v.Value, 0, len(v.Value), 0)
	if err != nil {
		return dst, err
	}
	if n != len(v.Value) {
		return dst, decodeErr(n, "", v.Type.String()+" value is "+strconv.Itoa(n)+" bytes but "+strconv.Itoa(len(v.Value))+" were given")
	}
	out, err := ejWriteValue(dst, v.Type, v.Value, 0, 1, canonical)
	if err != nil {
		return dst, err
	}
	return out, nil
}

// String returns the document as relaxed Extended JSON, or
// "<invalid BSON: ...>" when the bytes are malformed.
func (r Raw) String() string {
	out, err := AppendExtJSON(nil, r, false)
	if err != nil {
		return "<invalid BSON: " + err.Error() + ">"
	}
	return string(out)
}

// String returns the value as relaxed Extended JSON, or
// "<invalid BSON: ...>" when the bytes are malformed. Use StringValue for
// the contents of a string value.
func (v RawValue) String() string {
	out, err := appendExtJSONValue(nil, v, false)
	if err != nil {
		return "<invalid BSON: " + err.Error() + ">"
	}
	return string(out)
}

// String returns the element as `"key":value` with the value in relaxed
// Extended JSON, or "<invalid BSON: ...>" when the bytes are malformed.
func (e RawElement) String() string {
	key, err := e.KeyErr()
	if err != nil {
		return "<invalid BSON: " + err.Error() + ">"
	}
	v, err := e.ValueErr()
	if err != nil {
		return "<invalid BSON: " + err.Error() + ">"
	}
	if vpos := 1 + len(key) + 1; vpos+len(v.Value) != len(e) {
		return "<invalid BSON: " + decodeErr(vpos+len(v.Value), key, "element has "+strconv.Itoa(len(e)-vpos-len(v.Value))+" bytes after its value").Error() + ">"
	}
	out, bad := ejAppendString(make([]byte, 0, len(e)+8), []byte(key))
	if bad >= 0 {
		return "<invalid BSON: " + decodeErr(1+bad, "", "element key is not valid UTF-8").Error() + ">"
	}
	out = append(out, ':')
	out, err = appendExtJSONValue(out, v, false)
	if err != nil {
		return "<invalid BSON: " + withParent(err, key).Error() + ">"
	}
	return string(out)
}

// ejSafe marks the ASCII bytes a JSON string may hold unescaped.
var ejSafe = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const ejHexDigits = "0123456789abcdef"

// ejAppendString appends s as a quoted JSON string. It escapes '"', '\\'
// and the control characters and copies everything else, checking that s
// is valid UTF-8. It returns the index of the first invalid byte, or -1.
func ejAppendString(dst []byte, s []byte) ([]byte, int) {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if ejSafe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', ejHexDigits[c>>4], ejHexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			return dst, i
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"'), -1
}

// ejQuote formats an input fragment for an error message, shortened so a
// huge value does not flood the message.
func ejQuote(b []byte) string {
	const max = 64
	if len(b) > max {
		return strconv.Quote(string(b[:max])) + "..."
	}
	return strconv.Quote(string(b))
}

// daysFromCivil returns the days since 1970-01-01 of a proleptic Gregorian
// date (Howard Hinnant's algorithm), so dates need no time.Time.
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400
	mp := m + 9
	if m > 2 {
		mp = m - 3
	}
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// civilFromDays is the inverse of daysFromCivil for days >= 0.
func civilFromDays(z int64) (y, m, d int64) {
	z += 719468
	era := z / 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	if mp < 10 {
		m = mp + 3
	} else {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}
