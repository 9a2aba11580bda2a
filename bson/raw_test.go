package bson

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func mustMarshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := Marshal(v)
	if err != nil {
		t.Fatalf("Marshal(%v): %v", v, err)
	}
	return b
}

func TestRawLookup(t *testing.T) {
	doc := Raw(mustMarshal(t, D{
		{Key: "ok", Value: 1.0},
		{Key: "cursor", Value: D{
			{Key: "id", Value: int64(0)},
			{Key: "ns", Value: "db.coll"},
			{Key: "firstBatch", Value: A{D{{Key: "_id", Value: int32(7)}}, "x"}},
		}},
		{Key: "a.b", Value: "dotted key"},
	}))
	if err := doc.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := doc.Lookup("ok").Double(); got != 1 {
		t.Errorf("ok = %v", got)
	}
	if got := doc.Lookup("cursor", "ns").StringValue(); got != "db.coll" {
		t.Errorf("cursor.ns = %q", got)
	}
	v, err := doc.LookupPath("cursor.firstBatch.0._id")
	if err != nil || v.Int32() != 7 {
		t.Errorf("LookupPath = %v, %v", v, err)
	}
	if got := doc.Lookup("a.b").StringValue(); got != "dotted key" {
		t.Errorf("key with a dot = %q", got)
	}
	for _, path := range [][]string{{"missing"}, {"cursor", "missing"}, {"ok", "x"}, {}} {
		if _, err := doc.LookupErr(path...); !errors.Is(err, ErrElementNotFound) {
			t.Errorf("LookupErr(%q) = %v, want ErrElementNotFound", path, err)
		}
	}
	if !doc.Lookup("nope").IsZero() {
		t.Error("missing lookup is not the zero RawValue")
	}
}

func TestRawIterAndElements(t *testing.T) {
	doc := Raw(mustMarshal(t, D{{Key: "a", Value: int32(1)}, {Key: "b", Value: "two"}, {Key: "c", Value: true}}))
	var keys []string
	it := doc.Iter()
	for it.Next() {
		keys = append(keys, it.Key())
		if string(it.KeyBytes()) != it.Key() {
			t.Error("KeyBytes and Key differ")
		}
	}
	if it.Err() != nil || strings.Join(keys, ",") != "a,b,c" {
		t.Fatalf("keys %v, err %v", keys, it.Err())
	}
	els, err := doc.Elements()
	if err != nil || len(els) != 3 {
		t.Fatalf("Elements: %d, %v", len(els), err)
	}
	if els[1].Key() != "b" || els[1].Value().StringValue() != "two" {
		t.Errorf("element 1 = %q %v", els[1].Key(), els[1].Value())
	}
	vals, err := doc.Values()
	if err != nil || len(vals) != 3 || !vals[2].Boolean() {
		t.Fatalf("Values: %v, %v", vals, err)
	}
	e, err := doc.Index(2)
	if err != nil || e.Key() != "c" {
		t.Errorf("Index(2) = %v, %v", e, err)
	}
	if _, err := doc.Index(3); !errors.Is(err, ErrElementNotFound) {
		t.Errorf("Index(3) err = %v", err)
	}
}

func TestRawValueAccessors(t *testing.T) {
	oid := ObjectID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	dec := NewDecimal128(0x3040000000000000, 42)
	doc := Raw(mustMarshal(t, D{
		{Key: "d", Value: 2.5}, {Key: "s", Value: "str"}, {Key: "doc", Value: D{{Key: "x", Value: int32(1)}}},
		{Key: "arr", Value: A{int32(1)}}, {Key: "bin", Value: Binary{Subtype: 0x80, Data: []byte{1, 2}}},
		{Key: "old", Value: Binary{Subtype: SubtypeBinaryOld, Data: []byte{9}}},
		{Key: "oid", Value: oid}, {Key: "t", Value: true}, {Key: "dt", Value: DateTime(1234)},
		{Key: "re", Value: Regex{Pattern: "^a", Options: "mi"}}, {Key: "ptr", Value: DBPointer{DB: "db.c", Pointer: oid}},
		{Key: "js", Value: JavaScript("f()")}, {Key: "sym", Value: Symbol("sy")},
		{Key: "cws", Value: CodeWithScope{Code: "g()", Scope: D{{Key: "y", Value: int32(2)}}}},
		{Key: "i32", Value: int32(-5)}, {Key: "ts", Value: Timestamp{T: 10, I: 3}}, {Key: "i64", Value: int64(1) << 40},
		{Key: "dec", Value: dec}, {Key: "fd", Value: 3.0},
	}))
	if err := doc.Validate(); err != nil {
		t.Fatal(err)
	}
	check := func(name string, ok bool) {
		t.Helper()
		if !ok {
			t.Errorf("%s accessor failed", name)
		}
	}
	f, ok := doc.Lookup("d").DoubleOK()
	check("double", ok && f == 2.5)
	s, ok := doc.Lookup("s").StringValueOK()
	check("string", ok && s == "str")
	d, ok := doc.Lookup("doc").DocumentOK()
	check("document", ok && d.Lookup("x").Int32() == 1)
	a, ok := doc.Lookup("arr").ArrayOK()
	check("array", ok && a.Lookup("0").Int32() == 1)
	b, ok := doc.Lookup("bin").BinaryOK()
	check("binary", ok && b.Subtype == 0x80 && bytes.Equal(b.Data, []byte{1, 2}))
	b, ok = doc.Lookup("old").BinaryOK()
	check("binary old", ok && b.Subtype == 2 && bytes.Equal(b.Data, []byte{9}))
	id, ok := doc.Lookup("oid").ObjectIDOK()
	check("objectid", ok && id == oid)
	bo, ok := doc.Lookup("t").BooleanOK()
	check("boolean", ok && bo)
	ms, ok := doc.Lookup("dt").DateTimeOK()
	check("datetime", ok && ms == 1234)
	p, o, ok := doc.Lookup("re").RegexOK()
	check("regex (options sorted on write)", ok && p == "^a" && o == "im")
	ns, pid, ok := doc.Lookup("ptr").DBPointerOK()
	check("dbpointer", ok && ns == "db.c" && pid == oid)
	js, ok := doc.Lookup("js").JavaScriptOK()
	check("javascript", ok && js == "f()")
	sy, ok := doc.Lookup("sym").SymbolOK()
	check("symbol", ok && sy == "sy")
	code, scope, ok := doc.Lookup("cws").CodeWithScopeOK()
	check("code with scope", ok && code == "g()" && scope.Lookup("y").Int32() == 2)
	i, ok := doc.Lookup("i32").Int32OK()
	check("int32", ok && i == -5)
	tt, ti, ok := doc.Lookup("ts").TimestampOK()
	check("timestamp", ok && tt == 10 && ti == 3)
	l, ok := doc.Lookup("i64").Int64OK()
	check("int64", ok && l == 1<<40)
	dv, ok := doc.Lookup("dec").Decimal128OK()
	check("decimal128", ok && dv == dec)
	n, ok := doc.Lookup("fd").AsInt64OK()
	check("AsInt64 of integral double", ok && n == 3)
	_, ok = doc.Lookup("d").AsInt64OK()
	check("AsInt64 of 2.5 fails", !ok)
	fl, ok := doc.Lookup("i64").AsFloat64OK()
	check("AsFloat64", ok && fl == float64(int64(1)<<40))
	check("IsNumber", doc.Lookup("dec").IsNumber() && !doc.Lookup("s").IsNumber())

	// Wrong types and short values give zero values, never a panic.
	if _, ok := doc.Lookup("s").Int32OK(); ok {
		t.Error("Int32OK on a string succeeded")
	}
	short := RawValue{Type: TypeInt64, Value: []byte{1, 2}}
	if _, ok := short.Int64OK(); ok {
		t.Error("Int64OK on 2 bytes succeeded")
	}
	for ty := 0; ty < 256; ty++ {
		for _, val := range [][]byte{nil, {0xff}, {5, 0, 0, 0, 'a'}, {0xff, 0xff, 0xff, 0x7f, 0}} {
			v := RawValue{Type: Type(ty), Value: val}
			v.Double()
			v.StringValue()
			v.Document()
			v.Binary()
			v.ObjectID()
			v.Boolean()
			v.DateTime()
			v.Regex()
			v.DBPointer()
			v.JavaScript()
			v.Symbol()
			v.CodeWithScope()
			v.Int32()
			v.Timestamp()
			v.Int64()
			v.Decimal128()
			v.AsInt64OK()
			_ = v.Validate()
		}
	}
}

// TestDecodeErrorsNameOffsetAndPath checks that malformed input is reported
// with the byte offset and the dotted field path.
func TestDecodeErrorsNameOffsetAndPath(t *testing.T) {
	good := mustMarshal(t, D{{Key: "outer", Value: D{{Key: "list", Value: A{"a", "bb"}}}}})
	// Corrupt the length prefix of the string "bb" (outer.list.1).
	i := bytes.Index(good, []byte{3, 0, 0, 0, 'b', 'b', 0})
	bad := append([]byte(nil), good...)
	bad[i] = 0x7f
	for name, f := range map[string]func([]byte) error{
		"Validate": func(b []byte) error { return Raw(b).Validate() },
		"DecodeD":  func(b []byte) error { _, err := DecodeD(b); return err },
		"DecodeM":  func(b []byte) error { _, err := DecodeM(b); return err },
	} {
		err := f(bad)
		var de *DecodeError
		if !errors.As(err, &de) {
			t.Fatalf("%s: %v, want *DecodeError", name, err)
		}
		if de.Path != "outer.list.1" || de.Offset != i {
			t.Errorf("%s: path %q offset %d, want outer.list.1 at %d (%v)", name, de.Path, de.Offset, i, err)
		}
		if !strings.Contains(err.Error(), "outer.list.1") || !strings.Contains(err.Error(), "byte") {
			t.Errorf("%s: message %q does not name the field and offset", name, err)
		}
	}
	// Lookup reports the same problem when it walks into it.
	if _, err := Raw(bad).LookupErr("outer", "list", "1"); err == nil {
		t.Error("LookupErr through a corrupt string succeeded")
	}
}

func TestDecodeRejects(t *testing.T) {
	cases := []struct {
		name string
		doc  []byte
	}{
		{"empty input", nil},
		{"truncated length", []byte{5, 0, 0}},
		{"length larger than input", []byte{6, 0, 0, 0, 0}},
		{"negative length", []byte{0xff, 0xff, 0xff, 0xff, 0}},
		{"missing terminator", []byte{5, 0, 0, 0, 1}},
		{"extra terminator", []byte{6, 0, 0, 0, 0, 0}},
		{"trailing garbage", []byte{5, 0, 0, 0, 0, 1}},
		{"invalid UTF-8 string", []byte{0x0e, 0, 0, 0, 2, 'a', 0, 2, 0, 0, 0, 0xff, 0, 0}},
		{"invalid UTF-8 key", []byte{0x0c, 0, 0, 0, 0x0a, 0xff, 0, 0x0a, 'b', 0, 0, 0}[:8]},
		{"bad boolean", []byte{9, 0, 0, 0, 8, 'a', 0, 2, 0}},
		{"unknown type", []byte{8, 0, 0, 0, 0x20, 'a', 0, 0}},
		{"oversized binary", []byte{0x0e, 0, 0, 0, 5, 'a', 0, 0xff, 0xff, 0xff, 0x7f, 0, 0, 0}},
	}
	for _, c := range cases {
		if err := Raw(c.doc).Validate(); err == nil {
			t.Errorf("%s: Validate accepted %X", c.name, c.doc)
		}
		if _, err := DecodeD(c.doc); err == nil {
			t.Errorf("%s: DecodeD accepted %X", c.name, c.doc)
		}
	}
}

// nested builds a document nested n levels deep ({"a": {"a": ... {}}}).
func nested(n int, array bool) []byte {
	var b []byte
	starts := make([]int, 0, n)
	var start int
	start, b = AppendDocumentStart(b)
	starts = append(starts, start)
	for i := 1; i < n; i++ {
		if array {
			start, b = AppendArrayElementStart(b, "0")
		} else {
			start, b = AppendDocumentElementStart(b, "a")
		}
		starts = append(starts, start)
	}
	for i := len(starts) - 1; i >= 0; i-- {
		b, _ = AppendDocumentEnd(b, starts[i])
	}
	return b
}

func TestMaxDepth(t *testing.T) {
	for _, array := range []bool{false, true} {
		ok := nested(MaxDepth, array)
		if err := Raw(ok).Validate(); err != nil {
			t.Errorf("depth %d (array %v): %v", MaxDepth, array, err)
		}
		d, err := DecodeD(ok)
		if err != nil {
			t.Fatalf("DecodeD at max depth: %v", err)
		}
		if _, err := Marshal(d); err != nil {
			t.Errorf("Marshal at max depth: %v", err)
		}
		deep := nested(MaxDepth+1, array)
		var de *DecodeError
		if err := Raw(deep).Validate(); !errors.As(err, &de) || !strings.Contains(de.Reason, "depth") {
			t.Errorf("depth %d accepted or wrong error: %v", MaxDepth+1, err)
		}
	}
	// Encoding a value nested too deeply fails rather than overflowing.
	var v any = D{}
	for i := 0; i < MaxDepth+5; i++ {
		v = D{{Key: "a", Value: v}}
	}
	var me *MarshalError
	if _, err := Marshal(v); !errors.As(err, &me) {
		t.Errorf("Marshal of depth %d: %v, want *MarshalError", MaxDepth+5, err)
	}
	// A self-referencing M ends in the depth error, not a stack overflow.
	m := M{}
	m["self"] = m
	if _, err := Marshal(m); !errors.As(err, &me) {
		t.Errorf("Marshal of a cyclic M: %v", err)
	}
}

// TestProhibitNullBytes is the BSON corpus prose test 1: NUL bytes are
// rejected in keys (root and nested) and in regex pattern and options.
func TestProhibitNullBytes(t *testing.T) {
	cases := map[string]any{
		"root key":      D{{Key: "a\x00b", Value: int32(1)}},
		"nested key":    D{{Key: "a", Value: D{{Key: "b\x00", Value: int32(1)}}}},
		"M key":         M{"\x00": 1},
		"regex pattern": D{{Key: "r", Value: Regex{Pattern: "a\x00", Options: "i"}}},
		"regex options": D{{Key: "r", Value: Regex{Pattern: "a", Options: "i\x00"}}},
		"array element": D{{Key: "arr", Value: A{D{{Key: "x\x00", Value: 1}}}}},
	}
	for name, v := range cases {
		buf := []byte("prefix")
		out, err := MarshalAppend(buf, v)
		var me *MarshalError
		if !errors.As(err, &me) {
			t.Errorf("%s: err = %v, want *MarshalError", name, err)
			continue
		}
		if string(out) != "prefix" {
			t.Errorf("%s: MarshalAppend left %q, want the input unchanged", name, out)
		}
	}
	if ValidKey("a\x00") || !ValidKey("a.b$c") {
		t.Error("ValidKey is wrong")
	}
}

func TestMarshalErrorPath(t *testing.T) {
	_, err := Marshal(D{{Key: "a", Value: A{int32(1), D{{Key: "b", Value: make(chan int)}}}}})
	var me *MarshalError
	if !errors.As(err, &me) || me.Path != "a.1.b" {
		t.Fatalf("err = %v, want a *MarshalError at a.1.b", err)
	}
}

func TestEncodeBasicTypes(t *testing.T) {
	now := time.Date(2024, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
	cases := []struct {
		v    any
		want Type
	}{
		{nil, TypeNull}, {int(5), TypeInt32}, {int(math.MaxInt32 + 1), TypeInt64}, {int8(1), TypeInt32},
		{int16(1), TypeInt32}, {uint8(1), TypeInt32}, {uint16(1), TypeInt32}, {uint32(1), TypeInt64},
		{float32(1.5), TypeDouble}, {[]byte{1}, TypeBinary}, {now, TypeDateTime}, {Null{}, TypeNull},
		{Undefined{}, TypeUndefined}, {MinKey{}, TypeMinKey}, {MaxKey{}, TypeMaxKey},
		{[]string{"a"}, TypeArray}, {[]D{{}}, TypeArray}, {map[string]any{"a": 1}, TypeEmbeddedDocument},
		{RawValue{Type: TypeInt32, Value: []byte{1, 0, 0, 0}}, TypeInt32},
		{Raw{5, 0, 0, 0, 0}, TypeEmbeddedDocument},
	}
	for _, c := range cases {
		b, err := Marshal(D{{Key: "v", Value: c.v}})
		if err != nil {
			t.Errorf("%T: %v", c.v, err)
			continue
		}
		if got := Raw(b).Lookup("v").Type; got != c.want {
			t.Errorf("%T encoded as %v, want %v", c.v, got, c.want)
		}
	}
	b := mustMarshal(t, D{{Key: "t", Value: now}})
	if ms := Raw(b).Lookup("t").DateTime(); ms != now.UnixMilli() {
		t.Errorf("time.Time encoded as %d ms, want %d", ms, now.UnixMilli())
	}
	// Invalid raw values are rejected rather than copied in.
	for _, v := range []any{Raw{6, 0, 0, 0, 0}, RawValue{Type: TypeInt32, Value: []byte{1}}} {
		if _, err := Marshal(D{{Key: "v", Value: v}}); err == nil {
			t.Errorf("Marshal accepted invalid %T", v)
		}
	}
}

func TestDecodeDefaultTypes(t *testing.T) {
	src := mustMarshal(t, D{
		{Key: "n", Value: nil}, {Key: "u", Value: Undefined{}}, {Key: "min", Value: MinKey{}},
		{Key: "doc", Value: D{{Key: "x", Value: "y"}}}, {Key: "arr", Value: A{int64(1), "two", D{}}},
		{Key: "cws", Value: CodeWithScope{Code: "c", Scope: D{{Key: "s", Value: int32(1)}}}},
	})
	d, err := DecodeD(src)
	if err != nil {
		t.Fatal(err)
	}
	m := d.Map()
	if m["n"] != nil || m["u"] != (Undefined{}) || m["min"] != (MinKey{}) {
		t.Errorf("null/undefined/minkey decoded as %#v %#v %#v", m["n"], m["u"], m["min"])
	}
	if doc, ok := m["doc"].(D); !ok || doc[0].Value != "y" {
		t.Errorf("doc = %#v", m["doc"])
	}
	if arr, ok := m["arr"].(A); !ok || arr[0] != int64(1) || arr[1] != "two" {
		t.Errorf("arr = %#v", m["arr"])
	}
	if c, ok := m["cws"].(CodeWithScope); !ok || c.Code != "c" {
		t.Errorf("cws = %#v", m["cws"])
	}
	mm, err := DecodeM(src)
	if err != nil {
		t.Fatal(err)
	}
	if doc, ok := mm["doc"].(M); !ok || doc["x"] != "y" {
		t.Errorf("DecodeM nested doc = %#v", mm["doc"])
	}
	// Decoded values do not alias the input: the caller may reuse it.
	for i := range src {
		src[i] = 0
	}
	if d[3].Value.(D)[0].Key != "x" || d[3].Value.(D)[0].Value != "y" {
		t.Error("decoded D changed when the input buffer was overwritten")
	}
}

func TestAppendDocumentEnd(t *testing.T) {
	if _, err := AppendDocumentEnd([]byte{1, 2}, 5); err == nil {
		t.Error("AppendDocumentEnd accepted a start beyond the buffer")
	}
	start, b := AppendDocumentStart([]byte("xy"))
	b = AppendInt32Element(b, "a", 1)
	b, err := AppendDocumentEnd(b, start)
	if err != nil || Raw(b[2:]).Validate() != nil {
		t.Fatalf("built %X, %v", b, err)
	}
	if ArrayKey(5) != "5" || ArrayKey(12345) != "12345" {
		t.Error("ArrayKey")
	}
}

func TestTypeString(t *testing.T) {
	if TypeDouble.String() != "double" || TypeMinKey.String() != "min key" || Type(0x42).String() != "invalid type 0x42" {
		t.Error("Type.String")
	}
	if Type(0x42).Valid() || !TypeMaxKey.Valid() {
		t.Error("Type.Valid")
	}
}

func TestNilSlicesAndMapsEncodeAsNull(t *testing.T) {
	for _, v := range []any{D(nil), M(nil), map[string]any(nil), A(nil), []any(nil), []byte(nil), []string(nil), []D(nil), Raw(nil)} {
		b := mustMarshal(t, D{{Key: "v", Value: v}})
		if got := Raw(b).Lookup("v").Type; got != TypeNull {
			t.Errorf("nil %T encoded as %v, want null", v, got)
		}
	}
	// At the top level a nil document is an empty document.
	if b := mustMarshal(t, D(nil)); !bytes.Equal(b, []byte{5, 0, 0, 0, 0}) {
		t.Errorf("Marshal(D(nil)) = %X", b)
	}
}
