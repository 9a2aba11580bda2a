package bson

import (
	"bytes"
	"encoding/binary"
	"math"
	"strconv"
	"strings"
)

// Raw is an encoded BSON document. Its methods read the bytes in place: they
// never decode more than they return and never copy.
//
// Lookups and iteration check bounds as they go, so they are safe on any
// bytes; call Validate first to check the whole document, including UTF-8
// and nested contents.
type Raw []byte

// Validate checks that r is exactly one well-formed BSON document, with all
// nested documents, strings and lengths valid. The error is a *DecodeError.
func (r Raw) Validate() error {
	var v validator
	return v.validateTop(r)
}

// Iter returns an iterator over r's top-level elements.
func (r Raw) Iter() RawIter {
	return RawIter{doc: r}
}

// Elements returns r's top-level elements.
func (r Raw) Elements() ([]RawElement, error) {
	var out []RawElement
	it := r.Iter()
	for it.Next() {
		out = append(out, it.Element())
	}
	return out, it.Err()
}

// Values returns r's top-level values.
func (r Raw) Values() ([]RawValue, error) {
	var out []RawValue
	it := r.Iter()
	for it.Next() {
		out = append(out, it.Value())
	}
	return out, it.Err()
}

// Index returns the element at position i.
func (r Raw) Index(i int) (RawElement, error) {
	it := r.Iter()
	for n := 0; it.Next(); n++ {
		if n == i {
			return it.Element(), nil
		}
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	return nil, ErrElementNotFound
}

// Lookup returns the value at the path of keys, descending into documents
// and arrays (array elements by their index keys "0", "1", ...). It returns
// the zero RawValue when the path is absent or the bytes are malformed; use
// LookupErr to tell which.
func (r Raw) Lookup(keys ...string) RawValue {
	v, _ := r.LookupErr(keys...)
	return v
}

// LookupErr is Lookup with an error: ErrElementNotFound when the path is
// absent, a *DecodeError when the bytes are malformed.
func (r Raw) LookupErr(keys ...string) (RawValue, error) {
	if len(keys) == 0 {
		return RawValue{}, ErrElementNotFound
	}
	doc := r
	base := 0
	for depth, key := range keys {
		v, off, err := doc.lookupOne(key, base)
		if err != nil {
			if depth > 0 && err != ErrElementNotFound {
				err = withParent(err, strings.Join(keys[:depth], "."))
			}
			return RawValue{}, err
		}
		if depth == len(keys)-1 {
			return v, nil
		}
		if v.Type != TypeEmbeddedDocument && v.Type != TypeArray {
			return RawValue{}, ErrElementNotFound
		}
		doc, base = Raw(v.Value), off
	}
	return RawValue{}, ErrElementNotFound
}

// LookupPath looks up a dotted path such as "cursor.firstBatch.0._id". Use
// LookupErr when a key itself contains a dot.
func (r Raw) LookupPath(path string) (RawValue, error) {
	var keys [16]string
	parts := keys[:0]
	for {
		i := strings.IndexByte(path, '.')
		if i < 0 {
			parts = append(parts, path)
			break
		}
		parts = append(parts, path[:i])
		path = path[i+1:]
	}
	return r.LookupErr(parts...)
}

// lookupOne finds key among r's top-level elements; off is the offset of the
// found value in the outermost buffer, given r's own offset base.
func (r Raw) lookupOne(key string, base int) (RawValue, int, error) {
	it := RawIter{doc: r, base: base}
	for it.Next() {
		if string(it.key) == key {
			return it.val, base + it.vpos, nil
		}
	}
	if it.err != nil {
		return RawValue{}, 0, it.err
	}
	return RawValue{}, 0, ErrElementNotFound
}

// RawIter iterates over a document's top-level elements without allocating.
//
//	it := doc.Iter()
//	for it.Next() {
//		use(it.Key(), it.Value())
//	}
//	if err := it.Err(); err != nil { ... }
type RawIter struct {
	doc  []byte
	base int
	pos  int // next element's offset; 0 before the first call to Next
	end  int // offset of the terminating NUL
	key  []byte
	val  RawValue
	epos int // current element's offset
	vpos int // current value's offset
	err  error
}

// Next advances to the next element and reports whether there is one. It
// returns false at the end of the document or on malformed bytes; Err tells
// which.
func (it *RawIter) Next() bool {
	if it.err != nil {
		return false
	}
	b := it.doc
	if it.pos == 0 {
		n, err := docBounds(b, it.base)
		if err != nil {
			it.err = err
			return false
		}
		it.end = n - 1
		it.pos = 4
	}
	i := it.pos
	if i >= it.end {
		return false
	}
	t := Type(b[i])
	if t == 0 {
		it.err = decodeErr(it.base+i, "", "document terminator found before the end of the document")
		return false
	}
	kl, ok := readCString(b, i+1, it.end)
	if !ok {
		it.err = decodeErr(it.base+i+1, "", "element key is not NUL-terminated within the document")
		return false
	}
	if !t.Valid() {
		it.err = withParent(unknownTypeErr(t, it.base+i), string(b[i+1:i+1+kl]))
		return false
	}
	vpos := i + 1 + kl + 1
	n, err := valueSize(t, b, vpos, it.end, it.base)
	if err != nil {
		it.err = withParent(err, string(b[i+1:i+1+kl]))
		return false
	}
	it.key = b[i+1 : i+1+kl]
	it.val = RawValue{Type: t, Value: b[vpos : vpos+n : vpos+n]}
	it.epos, it.vpos = i, vpos
	it.pos = vpos + n
	return true
}

// Key returns the current element's key. It allocates; KeyBytes does not.
func (it *RawIter) Key() string { return string(it.key) }

// KeyBytes returns the current element's key as a view into the document.
func (it *RawIter) KeyBytes() []byte { return it.key }

// Value returns the current element's value.
func (it *RawIter) Value() RawValue { return it.val }

// Element returns the current element.
func (it *RawIter) Element() RawElement {
	return RawElement(it.doc[it.epos:it.pos:it.pos])
}

// Offset returns the current element's offset within the document.
func (it *RawIter) Offset() int { return it.epos }

// Err returns the error that stopped the iteration, if any.
func (it *RawIter) Err() error { return it.err }

// RawElement is one encoded element: type byte, key and value.
type RawElement []byte

// KeyErr returns the element's key.
func (e RawElement) KeyErr() (string, error) {
	if len(e) < 2 {
		return "", decodeErr(0, "", "element truncated before its key")
	}
	i := bytes.IndexByte(e[1:], 0)
	if i < 0 {
		return "", decodeErr(1, "", "element key is not NUL-terminated")
	}
	return string(e[1 : 1+i]), nil
}

// Key returns the element's key, or "" when the element is malformed.
func (e RawElement) Key() string {
	k, _ := e.KeyErr()
	return k
}

// ValueErr returns the element's value.
func (e RawElement) ValueErr() (RawValue, error) {
	if len(e) < 2 {
		return RawValue{}, decodeErr(0, "", "element truncated before its key")
	}
	i := bytes.IndexByte(e[1:], 0)
	if i < 0 {
		return RawValue{}, decodeErr(1, "", "element key is not NUL-terminated")
	}
	vpos := 1 + i + 1
	t := Type(e[0])
	n, err := valueSize(t, e, vpos, len(e), 0)
	if err != nil {
		return RawValue{}, err
	}
	return RawValue{Type: t, Value: e[vpos : vpos+n : vpos+n]}, nil
}

// Value returns the element's value, or the zero RawValue when the element
// is malformed.
func (e RawElement) Value() RawValue {
	v, _ := e.ValueErr()
	return v
}

// RawValue is one encoded BSON value and its type. The accessors return the
// zero value of their result when the type differs or the bytes are too
// short; the ...OK forms say whether they succeeded. None of them panic.
type RawValue struct {
	Type  Type
	Value []byte
}

// IsZero reports whether v holds no value (as a failed Lookup returns).
func (v RawValue) IsZero() bool { return v.Type == 0 && len(v.Value) == 0 }

// Validate checks that v's bytes are a well-formed value of its type.
func (v RawValue) Validate() error {
	var val validator
	n, err := val.validateValue(v.Type, v.Value, 0, len(v.Value), 0, 1)
	if err != nil {
		return err
	}
	if n != len(v.Value) {
		return decodeErr(n, "", v.Type.String()+" value is "+strconv.Itoa(n)+" bytes but "+strconv.Itoa(len(v.Value))+" were given")
	}
	return nil
}

// Equal reports whether v and w have the same type and bytes.
func (v RawValue) Equal(w RawValue) bool {
	return v.Type == w.Type && bytes.Equal(v.Value, w.Value)
}

func (v RawValue) fixed(t Type, n int) ([]byte, bool) {
	if v.Type != t || len(v.Value) < n {
		return nil, false
	}
	return v.Value, true
}

// DoubleOK returns a double value.
func (v RawValue) DoubleOK() (float64, bool) {
	b, ok := v.fixed(TypeDouble, 8)
	if !ok {
		return 0, false
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b)), true
}

// Double returns a double value, or 0.
func (v RawValue) Double() float64 { f, _ := v.DoubleOK(); return f }

func (v RawValue) stringOf(t Type) (string, bool) {
	if v.Type != t {
		return "", false
	}
	s, n, ok := readStringValue(v.Value, 0)
	if !ok || n != len(v.Value) && t != TypeDBPointer {
		return "", false
	}
	return s, true
}

// readStringValue reads a length-prefixed string at b[pos:], returning the
// string and the bytes it occupies.
func readStringValue(b []byte, pos int) (string, int, bool) {
	if len(b)-pos < 5 {
		return "", 0, false
	}
	n := int(readInt32(b, pos))
	if n < 1 || n > len(b)-pos-4 || b[pos+4+n-1] != 0 {
		return "", 0, false
	}
	return string(b[pos+4 : pos+4+n-1]), 4 + n, true
}

// StringValueOK returns a string value.
func (v RawValue) StringValueOK() (string, bool) { return v.stringOf(TypeString) }

// StringValue returns a string value, or "". (String returns Extended JSON.)
func (v RawValue) StringValue() string { s, _ := v.StringValueOK(); return s }

// DocumentOK returns an embedded document.
func (v RawValue) DocumentOK() (Raw, bool) {
	if v.Type != TypeEmbeddedDocument {
		return nil, false
	}
	return Raw(v.Value), true
}

// Document returns an embedded document, or nil.
func (v RawValue) Document() Raw { d, _ := v.DocumentOK(); return d }

// ArrayOK returns an array, as a document keyed "0", "1", ...
func (v RawValue) ArrayOK() (Raw, bool) {
	if v.Type != TypeArray {
		return nil, false
	}
	return Raw(v.Value), true
}

// Array returns an array, or nil.
func (v RawValue) Array() Raw { a, _ := v.ArrayOK(); return a }

// BinaryOK returns a binary value. Data is a view of v's bytes. For subtype
// 0x02 the inner length is removed.
func (v RawValue) BinaryOK() (Binary, bool) {
	if v.Type != TypeBinary || len(v.Value) < 5 {
		return Binary{}, false
	}
	n := int(readInt32(v.Value, 0))
	if n < 0 || n > len(v.Value)-5 {
		return Binary{}, false
	}
	st := v.Value[4]
	data := v.Value[5 : 5+n]
	if st == SubtypeBinaryOld {
		if n < 4 || int(readInt32(data, 0)) != n-4 {
			return Binary{}, false
		}
		data = data[4:]
	}
	return Binary{Subtype: st, Data: data}, true
}

// Binary returns a binary value, or the zero Binary.
func (v RawValue) Binary() Binary { b, _ := v.BinaryOK(); return b }

// ObjectIDOK returns an ObjectID.
func (v RawValue) ObjectIDOK() (ObjectID, bool) {
	var id ObjectID
	b, ok := v.fixed(TypeObjectID, 12)
	if ok {
		copy(id[:], b)
	}
	return id, ok
}

// ObjectID returns an ObjectID, or the zero ObjectID.
func (v RawValue) ObjectID() ObjectID { id, _ := v.ObjectIDOK(); return id }

// BooleanOK returns a boolean.
func (v RawValue) BooleanOK() (bool, bool) {
	b, ok := v.fixed(TypeBoolean, 1)
	if !ok || b[0] > 1 {
		return false, false
	}
	return b[0] == 1, true
}

// Boolean returns a boolean, or false.
func (v RawValue) Boolean() bool { b, _ := v.BooleanOK(); return b }

// DateTimeOK returns a datetime in milliseconds since the epoch.
func (v RawValue) DateTimeOK() (int64, bool) {
	b, ok := v.fixed(TypeDateTime, 8)
	if !ok {
		return 0, false
	}
	return int64(binary.LittleEndian.Uint64(b)), true
}

// DateTime returns a datetime in milliseconds since the epoch, or 0.
func (v RawValue) DateTime() int64 { d, _ := v.DateTimeOK(); return d }

// RegexOK returns a regex's pattern and options.
func (v RawValue) RegexOK() (pattern, options string, ok bool) {
	if v.Type != TypeRegex {
		return "", "", false
	}
	p := bytes.IndexByte(v.Value, 0)
	if p < 0 {
		return "", "", false
	}
	o := bytes.IndexByte(v.Value[p+1:], 0)
	if o < 0 {
		return "", "", false
	}
	return string(v.Value[:p]), string(v.Value[p+1 : p+1+o]), true
}

// Regex returns a regex's pattern and options.
func (v RawValue) Regex() (pattern, options string) {
	p, o, _ := v.RegexOK()
	return p, o
}

// DBPointerOK returns a DBPointer's namespace and ObjectID.
func (v RawValue) DBPointerOK() (string, ObjectID, bool) {
	var id ObjectID
	if v.Type != TypeDBPointer {
		return "", id, false
	}
	s, n, ok := readStringValue(v.Value, 0)
	if !ok || len(v.Value)-n < 12 {
		return "", id, false
	}
	copy(id[:], v.Value[n:])
	return s, id, true
}

// DBPointer returns a DBPointer's namespace and ObjectID.
func (v RawValue) DBPointer() (string, ObjectID) {
	s, id, _ := v.DBPointerOK()
	return s, id
}

// JavaScriptOK returns JavaScript code.
func (v RawValue) JavaScriptOK() (string, bool) { return v.stringOf(TypeJavaScript) }

// JavaScript returns JavaScript code, or "".
func (v RawValue) JavaScript() string { s, _ := v.JavaScriptOK(); return s }

// SymbolOK returns a symbol.
func (v RawValue) SymbolOK() (string, bool) { return v.stringOf(TypeSymbol) }

// Symbol returns a symbol, or "".
func (v RawValue) Symbol() string { s, _ := v.SymbolOK(); return s }

// CodeWithScopeOK returns a code-with-scope's code and scope document.
func (v RawValue) CodeWithScopeOK() (string, Raw, bool) {
	if v.Type != TypeCodeWithScope || len(v.Value) < 4 {
		return "", nil, false
	}
	code, n, ok := readStringValue(v.Value, 4)
	if !ok {
		return "", nil, false
	}
	return code, Raw(v.Value[4+n:]), true
}

// CodeWithScope returns a code-with-scope's code and scope document.
func (v RawValue) CodeWithScope() (string, Raw) {
	c, s, _ := v.CodeWithScopeOK()
	return c, s
}

// Int32OK returns a 32-bit integer.
func (v RawValue) Int32OK() (int32, bool) {
	b, ok := v.fixed(TypeInt32, 4)
	if !ok {
		return 0, false
	}
	return readInt32(b, 0), true
}

// Int32 returns a 32-bit integer, or 0.
func (v RawValue) Int32() int32 { i, _ := v.Int32OK(); return i }

// TimestampOK returns a timestamp's seconds and ordinal.
func (v RawValue) TimestampOK() (t, i uint32, ok bool) {
	b, ok := v.fixed(TypeTimestamp, 8)
	if !ok {
		return 0, 0, false
	}
	return binary.LittleEndian.Uint32(b[4:]), binary.LittleEndian.Uint32(b), true
}

// Timestamp returns a timestamp's seconds and ordinal.
func (v RawValue) Timestamp() (t, i uint32) {
	t, i, _ = v.TimestampOK()
	return t, i
}

// Int64OK returns a 64-bit integer.
func (v RawValue) Int64OK() (int64, bool) {
	b, ok := v.fixed(TypeInt64, 8)
	if !ok {
		return 0, false
	}
	return int64(binary.LittleEndian.Uint64(b)), true
}

// Int64 returns a 64-bit integer, or 0.
func (v RawValue) Int64() int64 { i, _ := v.Int64OK(); return i }

// Decimal128OK returns a Decimal128.
func (v RawValue) Decimal128OK() (Decimal128, bool) {
	b, ok := v.fixed(TypeDecimal128, 16)
	if !ok {
		return Decimal128{}, false
	}
	return Decimal128{l: binary.LittleEndian.Uint64(b), h: binary.LittleEndian.Uint64(b[8:])}, true
}

// Decimal128 returns a Decimal128, or the zero value.
func (v RawValue) Decimal128() Decimal128 { d, _ := v.Decimal128OK(); return d }

// AsInt64OK returns an int32, int64, or integral double as an int64. Server
// replies use all three for counts and flags.
func (v RawValue) AsInt64OK() (int64, bool) {
	switch v.Type {
	case TypeInt32:
		i, ok := v.Int32OK()
		return int64(i), ok
	case TypeInt64:
		return v.Int64OK()
	case TypeDouble:
		f, ok := v.DoubleOK()
		if !ok || f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 {
			return 0, false
		}
		return int64(f), true
	}
	return 0, false
}

// AsFloat64OK returns any numeric value (int32, int64, double) as a float64.
func (v RawValue) AsFloat64OK() (float64, bool) {
	switch v.Type {
	case TypeInt32:
		i, ok := v.Int32OK()
		return float64(i), ok
	case TypeInt64:
		i, ok := v.Int64OK()
		return float64(i), ok
	case TypeDouble:
		return v.DoubleOK()
	}
	return 0, false
}

// IsNumber reports whether v is an int32, int64, double or decimal128.
func (v RawValue) IsNumber() bool {
	switch v.Type {
	case TypeInt32, TypeInt64, TypeDouble, TypeDecimal128:
		return true
	}
	return false
}
