package bson

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

type utItem struct {
	SKU   string  `bson:"sku"`
	Price float64 `bson:"price"`
}

type utOrder struct {
	ID    ObjectID          `bson:"_id"`
	Name  string            `bson:"name"`
	Qty   int32             `bson:"qty"`
	Items []utItem          `bson:"items"`
	Meta  map[string]string `bson:"meta"`
	Addr  *mtInner          `bson:"addr"`
	When  time.Time         `bson:"when"`
}

type utUnmarshaler struct {
	Got []byte
}

func (u *utUnmarshaler) UnmarshalBSON(b []byte) error {
	if Raw(b).Lookup("fail").Type != 0 {
		return errors.New("told to fail")
	}
	u.Got = b
	return nil
}

type utValueUnmarshaler struct {
	T Type
	B []byte
}

func (u *utValueUnmarshaler) UnmarshalBSONValue(t Type, b []byte) error {
	if t == TypeBoolean {
		return errors.New("no booleans")
	}
	u.T, u.B = t, b
	return nil
}

type utIface interface{ Name() string }

type utImpl struct {
	N string `bson:"n"`
}

func (u utImpl) Name() string { return u.N }

func TestCodecUnmarshalTypes(t *testing.T) {
	oid := ObjectID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	ms := time.Date(2024, 5, 6, 7, 8, 9, 123e6, time.UTC)
	one := int32(1)
	tests := []struct {
		name string
		doc  D
		into any // pointer to a zero value of the target type
		want any // expected value (not a pointer)
	}{
		{"order", D{{"_id", oid}, {"name", "n"}, {"qty", int32(3)}, {"items", A{D{{"sku", "a"}, {"price", 1.5}}, D{{"price", 2.0}, {"sku", "b"}}}},
			{"meta", D{{"k", "v"}}}, {"addr", D{{"a", int32(1)}, {"b", "x"}}}, {"when", DateTime(ms.UnixMilli())}, {"unknown", D{{"z", A{1}}}}},
			&utOrder{}, utOrder{ID: oid, Name: "n", Qty: 3, Items: []utItem{{"a", 1.5}, {"b", 2}}, Meta: map[string]string{"k": "v"}, Addr: &mtInner{1, "x"}, When: ms}},
		{"ints from every integer type", D{{"a", int32(-8)}, {"b", int64(300)}, {"c", 4.0}, {"d", true}, {"e", int64(math.MaxInt64)}, {"f", int32(7)}},
			&struct {
				A int8
				B int16
				C int32
				D int64
				E int
				F uint8
			}{}, struct {
				A int8
				B int16
				C int32
				D int64
				E int
				F uint8
			}{-8, 300, 4, 1, math.MaxInt64, 7}},
		{"unsigned", D{{"a", int64(math.MaxUint32)}, {"b", int64(math.MaxInt64)}, {"c", 1e18}},
			&struct {
				A uint32
				B uint64
				C uint64
			}{}, struct {
				A uint32
				B uint64
				C uint64
			}{math.MaxUint32, math.MaxInt64, 1e18}},
		{"floats from integers", D{{"a", int32(3)}, {"b", int64(1 << 53)}, {"c", 0.5}, {"d", int32(1 << 24)}},
			&struct {
				A, B float64
				C, D float32
			}{}, struct {
				A, B float64
				C, D float32
			}{3, 1 << 53, 0.5, 1 << 24}},
		{"bool from numbers", D{{"a", int32(2)}, {"b", int64(0)}, {"c", 0.5}, {"d", true}},
			&struct{ A, B, C, D bool }{}, struct{ A, B, C, D bool }{true, false, true, true}},
		{"strings from symbol and javascript", D{{"a", Symbol("s")}, {"b", JavaScript("j")}, {"c", "x"}, {"d", "named"}},
			&struct {
				A, B, C string
				D       mtNamed
			}{}, struct {
				A, B, C string
				D       mtNamed
			}{"s", "j", "x", "named"}},
		{"binary", D{{"a", Binary{Data: []byte{1, 2}}}, {"b", Binary{Subtype: 0x80, Data: []byte{3}}}, {"c", Binary{Data: []byte{4, 5, 6}}}, {"old", Binary{Subtype: SubtypeBinaryOld, Data: []byte{9}}}, {"u", UUID{1: 1}.Binary()}},
			&struct {
				A   []byte
				B   []byte
				C   [3]byte
				Old []byte
				U   UUID
			}{}, struct {
				A   []byte
				B   []byte
				C   [3]byte
				Old []byte
				U   UUID
			}{[]byte{1, 2}, []byte{3}, [3]byte{4, 5, 6}, []byte{9}, UUID{1: 1}}},
		{"nulls give zero values", D{{"s", nil}, {"i", nil}, {"p", nil}, {"sl", nil}, {"m", nil}, {"st", nil}, {"t", nil}, {"o", Undefined{}}, {"b", nil}, {"f", nil}, {"a", nil}},
			&struct {
				S  string
				I  int
				P  *int32
				Sl []int
				M  map[string]int
				St mtInner
				T  time.Time
				O  ObjectID
				B  []byte
				F  float64
				A  any
			}{"x", 1, &one, []int{1}, map[string]int{"a": 1}, mtInner{1, "x"}, time.Now(), ObjectID{1}, []byte{1}, 1, 1}, struct {
				S  string
				I  int
				P  *int32
				Sl []int
				M  map[string]int
				St mtInner
				T  time.Time
				O  ObjectID
				B  []byte
				F  float64
				A  any
			}{}},
		{"absent fields keep their values", D{{"a", int32(5)}}, &mtInner{A: 1, B: "keep"}, mtInner{A: 5, B: "keep"}},
		{"slices, arrays and nesting", D{{"a", A{int32(1), int32(2)}}, {"b", A{"x"}}, {"c", A{A{int64(1)}, A{}}}, {"d", A{true}}, {"e", A{}}},
			&struct {
				A []int
				B [2]string
				C [][]int64
				D [3]bool
				E []int
			}{}, struct {
				A []int
				B [2]string
				C [][]int64
				D [3]bool
				E []int
			}{[]int{1, 2}, [2]string{"x", ""}, [][]int64{{1}, {}}, [3]bool{true}, []int{}}},
		{"maps", D{{"s", D{{"k", "v"}}}, {"i", D{{"-3", "neg"}}}, {"u", D{{"7", true}}}, {"t", D{{"a-b", int32(1)}}}, {"g", D{{"x", D{{"a", int32(1)}}}}}},
			&struct {
				S map[string]string
				I map[int8]string
				U map[uint16]bool
				T map[mtTextKey]int32
				G map[string]mtInner
			}{}, struct {
				S map[string]string
				I map[int8]string
				U map[uint16]bool
				T map[mtTextKey]int32
				G map[string]mtInner
			}{map[string]string{"k": "v"}, map[int8]string{-3: "neg"}, map[uint16]bool{7: true}, map[mtTextKey]int32{{"a", "b"}: 1}, map[string]mtInner{"x": {A: 1}}}},
		{"interfaces get default types", D{{"a", D{{"x", int32(1)}}}, {"b", A{int32(1), "s"}}, {"c", int64(2)}, {"m", D{{"y", D{{"z", true}}}}}},
			&struct {
				A, B, C any
				M       M
			}{}, struct {
				A, B, C any
				M       M
			}{D{{"x", int32(1)}}, A{int32(1), "s"}, int64(2), M{"y": M{"z": true}}}},
		{"bson types", D{{"o", oid}, {"dt", DateTime(5)}, {"dec", NewDecimal128(1, 2)}, {"bin", Binary{Subtype: 0x80, Data: []byte{1}}}, {"re", Regex{"a", "i"}},
			{"dbp", DBPointer{"db.c", oid}}, {"js", JavaScript("f")}, {"sym", Symbol("s")}, {"cws", CodeWithScope{"g", D{{"x", int32(1)}}}}, {"ts", Timestamp{T: 1, I: 2}},
			{"min", MinKey{}}, {"max", MaxKey{}}, {"nul", nil}, {"und", Undefined{}}, {"d", D{{"k", "v"}}}, {"a", A{int32(1)}}, {"r", D{{"x", "y"}}}, {"rv", int32(7)}},
			&struct {
				O   ObjectID
				DT  DateTime
				Dec Decimal128
				Bin Binary
				Re  Regex
				DBP DBPointer
				JS  JavaScript
				Sym Symbol
				CWS CodeWithScope
				TS  Timestamp
				Min MinKey
				Max MaxKey
				Nul Null
				Und Undefined
				D   D
				A   A
				R   Raw
				RV  RawValue
			}{}, nil},
		{"inline", D{{"a", int32(1)}, {"c", int32(2)}, {"p", int32(3)}, {"x", "y"}, {"z", D{{"w", int32(1)}}}},
			&mtInline{}, mtInline{A: 1, Inner: mtInner2{C: 2}, MtPtr: &MtPtr{P: 3}, Extra: map[string]any{"x": "y", "z": M{"w": int32(1)}}}},
		{"embedded struct as nested document", D{{"mtembedded", D{{"e1", int32(4)}}}, {"x", int32(1)}},
			&struct {
				MtEmbedded
				X int32
			}{}, struct {
				MtEmbedded
				X int32
			}{MtEmbedded{4}, 1}},
		{"duplicate keys: the last wins", D{{"a", int32(1)}, {"a", int32(2)}}, &mtInner{}, mtInner{A: 2}},
		{"many fields use the map lookup", D{{"f9", int32(9)}, {"f1", int32(1)}, {"nope", int32(0)}, {"f5", int32(5)}},
			&struct{ F1, F2, F3, F4, F5, F6, F7, F8, F9, F10 int32 }{}, struct{ F1, F2, F3, F4, F5, F6, F7, F8, F9, F10 int32 }{F1: 1, F5: 5, F9: 9}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := mustDoc(t, tc.doc)
			if err := Unmarshal(doc, tc.into); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			got := reflect.ValueOf(tc.into).Elem().Interface()
			if tc.want != nil && !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

func TestCodecUnmarshalSpecialValues(t *testing.T) {
	var tr struct {
		A int32   `bson:"a,truncate"`
		B uint8   `bson:"b,truncate"`
		C float32 `bson:"c,truncate"`
	}
	if err := Unmarshal(mustDoc(t, D{{"a", 2.75}, {"b", 2.5}, {"c", 0.1}}), &tr); err != nil || tr.A != 2 || tr.B != 2 || tr.C != float32(0.1) {
		t.Errorf("truncate: %+v %v", tr, err)
	}
	oid := ObjectID{1}
	var all struct {
		CWS CodeWithScope
		R   Raw
		RV  RawValue
		Re  Regex
		DBP DBPointer
	}
	doc := mustDoc(t, D{{"cws", CodeWithScope{"g", D{{"x", int32(1)}}}}, {"r", D{{"x", "y"}}}, {"rv", int32(7)}, {"re", Regex{"a", "i"}}, {"dbp", DBPointer{"db.c", oid}}})
	if err := Unmarshal(doc, &all); err != nil {
		t.Fatal(err)
	}
	if all.CWS.Code != "g" || !reflect.DeepEqual(all.CWS.Scope, D{{"x", int32(1)}}) || all.R.Lookup("x").StringValue() != "y" ||
		all.RV.Type != TypeInt32 || all.RV.Int32() != 7 || all.Re != (Regex{"a", "i"}) || all.DBP != (DBPointer{"db.c", oid}) {
		t.Errorf("got %+v", all)
	}
}

func TestCodecUnmarshalErrors(t *testing.T) {
	tests := []struct {
		name   string
		doc    D
		into   any
		path   string
		bt     Type
		reason string
	}{
		{"wrong type", D{{"a", "x"}}, &mtInner{}, "a", TypeString, ""},
		{"int8 overflow", D{{"v", int32(300)}}, &struct{ V int8 }{}, "v", TypeInt32, "value 300 overflows int8"},
		{"uint negative", D{{"v", int32(-1)}}, &struct{ V uint }{}, "v", TypeInt32, "value -1 overflows uint"},
		{"int32 from big int64", D{{"v", int64(1 << 40)}}, &struct{ V int32 }{}, "v", TypeInt64, "value 1099511627776 overflows int32"},
		{"double with fraction", D{{"v", 1.5}}, &struct{ V int }{}, "v", TypeDouble, "value 1.5 is not an integer"},
		{"double too big", D{{"v", 1e300}}, &struct{ V int64 }{}, "v", TypeDouble, "value 1e+300 overflows int64"},
		{"double beyond BSON integers", D{{"v", 1e19}}, &struct{ V uint64 }{}, "v", TypeDouble, "value 1e+19 overflows uint64"},
		{"negative double into uint", D{{"v", -1.0}}, &struct{ V uint16 }{}, "v", TypeDouble, "value -1 overflows uint16"},
		{"NaN into int", D{{"v", math.NaN()}}, &struct{ V int }{}, "v", TypeDouble, "value NaN is not an integer"},
		{"inexact float64", D{{"v", int64(1<<53 + 1)}}, &struct{ V float64 }{}, "v", TypeInt64, "cannot be represented exactly as float64"},
		{"float32 precision", D{{"v", 0.1}}, &struct{ V float32 }{}, "v", TypeDouble, "loses precision as float32"},
		{"deep path", D{{"items", A{D{{"sku", "a"}}, D{{"sku", "b"}}, D{}, D{{"price", "cheap"}}}}}, &utOrder{}, "items.3.price", TypeString, ""},
		{"map value path", D{{"meta", D{{"k", int32(1)}}}}, &utOrder{}, "meta.k", TypeInt32, ""},
		{"array too long", D{{"a", A{1, 2, 3}}}, &struct{ A [2]int }{}, "a", TypeArray, "array of 3 elements does not fit"},
		{"byte array length", D{{"a", Binary{Data: []byte{1}}}}, &struct{ A [2]byte }{}, "a", TypeBinary, "binary length 1 does not match array length 2"},
		{"uuid subtype", D{{"u", Binary{Subtype: 3, Data: make([]byte, 16)}}}, &struct{ U UUID }{}, "u", TypeBinary, "binary subtype 0x3 is not a UUID"},
		{"bad int map key", D{{"m", D{{"x", int32(1)}}}}, &struct{ M map[int]int }{}, "m.x", TypeInt32, `map key "x" is not a int`},
		{"bad text map key", D{{"m", D{{"x", int32(1)}}}}, &struct{ M map[mtTextKey]int }{}, "m.x", TypeInt32, "UnmarshalText: no dash"},
		{"chan field", D{{"c", int32(1)}}, &struct{ C chan int }{}, "c", TypeInt32, "Go kind chan"},
		{"struct tag error", D{{"x", int32(1)}}, &mtDup{}, "", TypeEmbeddedDocument, `duplicate bson key "x"`},
		{"nil non-empty interface", D{{"i", D{}}}, &struct{ I utIface }{}, "i", TypeEmbeddedDocument, "nil interface that has methods"},
		{"unmarshaler error", D{{"u", D{{"fail", true}}}}, &struct{ U utUnmarshaler }{}, "u", TypeEmbeddedDocument, "UnmarshalBSON: told to fail"},
		{"unmarshaler needs a document", D{{"u", int32(1)}}, &struct{ U utUnmarshaler }{}, "u", TypeInt32, "UnmarshalBSON takes an embedded document"},
		{"value unmarshaler error", D{{"u", true}}, &struct{ U *utValueUnmarshaler }{}, "u", TypeBoolean, "UnmarshalBSONValue: no booleans"},
		{"marker type", D{{"m", int32(1)}}, &struct{ M MinKey }{}, "m", TypeInt32, ""},
		{"time from string", D{{"t", "2020"}}, &struct{ T time.Time }{}, "t", TypeString, ""},
		{"struct from array", D{{"s", A{}}}, &struct{ S mtInner }{}, "s", TypeArray, ""},
		{"DBRef", D{{"r", D{{"x", int32(1)}}}}, &struct{ R DBRef }{}, "r", TypeEmbeddedDocument, ""},
		{"inline map value", D{{"x", int32(1)}}, &struct {
			M map[string]string `bson:",inline"`
		}{}, "x", TypeInt32, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Unmarshal(mustDoc(t, tc.doc), tc.into)
			var ute *UnmarshalTypeError
			if !errors.As(err, &ute) {
				t.Fatalf("err = %T %v, want *UnmarshalTypeError", err, err)
			}
			if ute.Path != tc.path || ute.BSONType != tc.bt || !strings.Contains(ute.Reason, tc.reason) {
				t.Fatalf("got path %q type %v reason %q (%v), want %q %v %q", ute.Path, ute.BSONType, ute.Reason, err, tc.path, tc.bt, tc.reason)
			}
			if ute.GoType == nil {
				t.Errorf("GoType is nil: %v", err)
			}
		})
	}
}

func TestCodecUnmarshalInvalidBSONLeavesTargetUntouched(t *testing.T) {
	good := mustDoc(t, D{{"a", int32(5)}, {"b", "new"}})
	bad := [][]byte{
		good[:len(good)-1],
		append(append([]byte{}, good...), 0),
		func() []byte { b := append([]byte{}, good...); b[len(b)-3] = 0xff; return b }(), // invalid UTF-8 in "new"
		func() []byte { b := append([]byte{}, good...); b[4] = 0x42; return b }(),        // unknown type
		nil,
	}
	for i, b := range bad {
		s := mtInner{A: 1, B: "old"}
		err := Unmarshal(b, &s)
		var de *DecodeError
		if !errors.As(err, &de) {
			t.Errorf("%d: err = %v, want *DecodeError", i, err)
		}
		if s != (mtInner{A: 1, B: "old"}) {
			t.Errorf("%d: target changed to %+v", i, s)
		}
		d := D{{"keep", 1}}
		if err := Unmarshal(b, &d); err == nil || len(d) != 1 {
			t.Errorf("%d: *D: %v %v", i, d, err)
		}
		m := M{"keep": 1}
		if err := Unmarshal(b, &m); err == nil || len(m) != 1 {
			t.Errorf("%d: *M: %v %v", i, m, err)
		}
		var a any = "keep"
		if err := Unmarshal(b, &a); err == nil || a != "keep" {
			t.Errorf("%d: *any: %v %v", i, a, err)
		}
	}
}

func TestCodecUnmarshalTargets(t *testing.T) {
	doc := mustDoc(t, D{{"a", int32(1)}, {"b", "x"}})
	var s mtInner
	var np *mtInner
	tests := []struct {
		name string
		v    any
		ok   bool
	}{
		{"nil", nil, false},
		{"non-pointer", s, false},
		{"nil pointer", np, false},
		{"nil map", map[string]any(nil), false},
		{"int pointer", new(int), false},
		{"map value", map[string]any{}, true},
		{"pointer to pointer", new(*mtInner), true},
		{"pointer to any", new(any), true},
		{"pointer to D", new(D), true},
		{"pointer to M", new(M), true},
		{"pointer to Raw", new(Raw), true},
		{"pointer to RawValue", new(RawValue), true},
		{"pointer to map[string]int32", new(map[string]int32), false},
		{"pointer to map[string]any", new(map[string]any), true},
	}
	for _, tc := range tests {
		err := Unmarshal(doc, tc.v)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err = %v", tc.name, err)
		}
		if err != nil {
			var ute *UnmarshalTypeError
			if !errors.As(err, &ute) {
				t.Errorf("%s: err = %T, want *UnmarshalTypeError", tc.name, err)
			}
		}
	}
	m := map[string]any{"old": true}
	if err := Unmarshal(doc, m); err != nil || m["a"] != int32(1) || m["old"] != true {
		t.Errorf("map merge: %v %v", m, err)
	}
	pp := new(*mtInner)
	if err := Unmarshal(doc, pp); err != nil || **pp != (mtInner{1, "x"}) {
		t.Errorf("**T: %v", err)
	}
	var r Raw
	if err := Unmarshal(doc, &r); err != nil || !bytes.Equal(r, doc) {
		t.Errorf("Raw: %v", err)
	}
}

func TestCodecUnmarshalPointersAndInterfaces(t *testing.T) {
	doc := mustDoc(t, D{{"p", D{{"a", int32(2)}}}, {"i", D{{"n", "x"}}}, {"e", D{{"a", int32(3)}}}, {"v", D{{"n", "y"}}}})
	existing := &mtInner{A: 1, B: "kept"}
	inner := &mtInner{}
	var s struct {
		P *mtInner
		I utIface
		E any
		V utIface
	}
	s.P = existing
	s.I = &utImpl{}
	s.E = inner
	s.V = utImpl{N: "old"}
	iPtr := s.I
	if err := Unmarshal(doc, &s); err != nil {
		t.Fatal(err)
	}
	// Copy-on-write: a non-nil pointer, bare or in an interface, is
	// replaced by a pointer to an updated copy of its target; the old
	// target is not written.
	if s.P == existing || *s.P != (mtInner{A: 2, B: "kept"}) || *existing != (mtInner{A: 1, B: "kept"}) {
		t.Errorf("existing pointer: got %+v, old target now %+v", s.P, existing)
	}
	if p, ok := s.I.(*utImpl); !ok || p == iPtr.(*utImpl) || p.N != "x" || iPtr.(*utImpl).N != "" {
		t.Errorf("interface holding a pointer: %#v (old target now %#v)", s.I, iPtr)
	}
	if p, ok := s.E.(*mtInner); !ok || p == inner || *p != (mtInner{A: 3}) || *inner != (mtInner{}) {
		t.Errorf("empty interface holding a pointer: %#v (old target now %#v)", s.E, inner)
	}
	if v, ok := s.V.(utImpl); !ok || v.N != "y" {
		t.Errorf("interface holding a value: %#v", s.V)
	}
	// null clears pointers and interfaces.
	if err := Unmarshal(mustDoc(t, D{{"p", nil}, {"i", nil}, {"e", nil}}), &s); err != nil || s.P != nil || s.I != nil || s.E != nil {
		t.Errorf("null: %+v %v", s, err)
	}
}

type utPP *utPP

func TestCodecUnmarshalCycles(t *testing.T) {
	doc := mustDoc(t, D{{"x", int32(1)}})
	var pp utPP
	if err := Unmarshal(doc, &pp); err == nil || !strings.Contains(err.Error(), "indirections") {
		t.Errorf("type P *P: %v", err)
	}
	var self any
	self = &self
	if err := Unmarshal(doc, &self); err == nil || !strings.Contains(err.Error(), "indirections") {
		t.Errorf("interface holding a pointer to itself: %v", err)
	}
	var c mtCycle
	nested := D{}
	for i := 0; i < 50; i++ {
		nested = D{{"next", nested}}
	}
	if err := Unmarshal(mustDoc(t, nested), &c); err != nil {
		t.Fatal(err)
	}
	n := 0
	for p := c.Next; p != nil; p = p.Next {
		n++
	}
	if n != 50 {
		t.Errorf("decoded %d levels, want 50", n)
	}
}

func TestCodecUnmarshalDoesNotAliasInput(t *testing.T) {
	var s struct {
		S  string
		B  []byte
		Bn Binary
		R  Raw
		RV RawValue
		M  map[string]string
		L  []string
		U  utUnmarshaler
		A  any
	}
	doc := mustDoc(t, D{{"s", "abc"}, {"b", Binary{Data: []byte("def")}}, {"bn", Binary{Data: []byte("ghi")}}, {"r", D{{"k", "jkl"}}},
		{"rv", "mno"}, {"m", D{{"k", "pqr"}}}, {"l", A{"stu"}}, {"u", D{{"k", "vwx"}}}, {"a", "yz"}})
	if err := Unmarshal(doc, &s); err != nil {
		t.Fatal(err)
	}
	before, err := Marshal(&s)
	if err != nil {
		t.Fatal(err)
	}
	for i := range doc {
		doc[i] = 'X'
	}
	after, err := Marshal(&s)
	if err != nil || !bytes.Equal(before, after) {
		t.Fatalf("decoded values changed with the input buffer: %v", err)
	}
}

// TestCodecUnmarshalSliceNewBacking: a slice always gets a new backing
// array, even one with room to spare, and the old one is not written.
func TestCodecUnmarshalSliceNewBacking(t *testing.T) {
	backing := []utItem{{"old", 1}, {"old2", 2}, {"old3", 3}}
	s := struct{ Items []utItem }{backing[:1]}
	if err := Unmarshal(mustDoc(t, D{{"items", A{D{{"sku", "a"}}, D{{"price", 2.0}}}}}), &s); err != nil {
		t.Fatal(err)
	}
	want := []utItem{{"a", 0}, {"", 2}}
	if !reflect.DeepEqual(s.Items, want) || &s.Items[0] == &backing[0] {
		t.Errorf("got %+v (reused %v)", s.Items, &s.Items[0] == &backing[0])
	}
	if !reflect.DeepEqual(backing, []utItem{{"old", 1}, {"old2", 2}, {"old3", 3}}) {
		t.Errorf("old backing array written: %+v", backing)
	}
	if err := Unmarshal(mustDoc(t, D{{"items", A{D{}, D{}, D{}, D{}}}}), &s); err != nil || len(s.Items) != 4 || &s.Items[0] == &backing[0] {
		t.Errorf("grow: %+v %v", s.Items, err)
	}
}

func TestCodecUnmarshalMethods(t *testing.T) {
	doc := mustDoc(t, D{{"u", D{{"k", "v"}}}, {"p", D{{"x", int32(1)}}}, {"v", "str"}, {"vn", nil}, {"n", nil}, {"r", D{{"$ref", "c"}, {"$id", int32(7)}}}})
	var s struct {
		U  utUnmarshaler
		P  *utUnmarshaler
		V  utValueUnmarshaler
		VN utValueUnmarshaler
		N  *utUnmarshaler
		R  DBRef
	}
	s.N = &utUnmarshaler{}
	if err := Unmarshal(doc, &s); err != nil {
		t.Fatal(err)
	}
	if Raw(s.U.Got).Lookup("k").StringValue() != "v" || s.P == nil || Raw(s.P.Got).Lookup("x").Int32() != 1 {
		t.Errorf("Unmarshaler: %+v %+v", s.U, s.P)
	}
	if s.V.T != TypeString || !bytes.Equal(s.V.B, AppendString(nil, "str")) || s.VN.T != TypeNull {
		t.Errorf("ValueUnmarshaler: %+v %+v", s.V, s.VN)
	}
	if s.N != nil {
		t.Errorf("null pointer to Unmarshaler: %+v", s.N)
	}
	if s.R.Ref != "c" || s.R.ID != int32(7) {
		t.Errorf("DBRef: %+v", s.R)
	}
	// Top-level Unmarshaler.
	var u utUnmarshaler
	if err := Unmarshal(doc, &u); err != nil || Raw(u.Got).Lookup("v").StringValue() != "str" {
		t.Errorf("top level: %v", err)
	}
}

func TestCodecUnmarshalValue(t *testing.T) {
	var i int64
	if err := UnmarshalValue(TypeInt32, []byte{7, 0, 0, 0}, &i); err != nil || i != 7 {
		t.Errorf("int: %v %v", i, err)
	}
	var s []string
	arr := mustDoc(t, D{{"0", "a"}, {"1", "b"}})
	if err := UnmarshalValue(TypeArray, arr, &s); err != nil || !reflect.DeepEqual(s, []string{"a", "b"}) {
		t.Errorf("array: %v %v", s, err)
	}
	if err := (RawValue{Type: TypeString, Value: AppendString(nil, "x")}).Unmarshal(&s); err == nil {
		t.Error("string into []string succeeded")
	}
	var str string
	if err := (RawValue{Type: TypeString, Value: AppendString(nil, "x")}).Unmarshal(&str); err != nil || str != "x" {
		t.Errorf("RawValue.Unmarshal: %q %v", str, err)
	}
	var de *DecodeError
	if err := UnmarshalValue(TypeString, []byte{9, 0, 0, 0, 'x', 0}, &str); !errors.As(err, &de) || str != "x" {
		t.Errorf("invalid value: %v", err)
	}
	var in mtInner
	if err := Raw(mustDoc(t, D{{"a", int32(4)}})).Unmarshal(&in); err != nil || in.A != 4 {
		t.Errorf("Raw.Unmarshal: %+v %v", in, err)
	}
	var p *int
	if err := UnmarshalValue(TypeNull, nil, &p); err != nil || p != nil {
		t.Errorf("null: %v", err)
	}
}

func TestCodecUnmarshalTime(t *testing.T) {
	var s struct{ T time.Time }
	ms := int64(-62135596800000) // 0001-01-01, the zero time.Time
	if err := Unmarshal(mustDoc(t, D{{"t", DateTime(ms)}}), &s); err != nil || !s.T.IsZero() || s.T != (time.Time{}) {
		t.Errorf("zero time: %v %v", s.T, err)
	}
	if err := Unmarshal(mustDoc(t, D{{"t", DateTime(1)}}), &s); err != nil || s.T.Location() != time.UTC || s.T.UnixMilli() != 1 {
		t.Errorf("UTC: %v %v", s.T, err)
	}
}

// TestCodecUnmarshalTooDeep: nesting beyond MaxDepth is invalid BSON, so a
// recursive struct type cannot be driven into unbounded recursion.
func TestCodecUnmarshalTooDeep(t *testing.T) {
	build := func(levels int) []byte {
		var starts []int
		var b []byte
		for i := 0; i < levels; i++ {
			var s int
			if i == 0 {
				s, b = AppendDocumentStart(b)
			} else {
				s, b = AppendDocumentElementStart(b, "next")
			}
			starts = append(starts, s)
		}
		for i := len(starts) - 1; i >= 0; i-- {
			b, _ = AppendDocumentEnd(b, starts[i])
		}
		return b
	}
	var c mtCycle
	if err := Unmarshal(build(MaxDepth), &c); err != nil {
		t.Fatalf("MaxDepth levels: %v", err)
	}
	var de *DecodeError
	if err := Unmarshal(build(MaxDepth+1), &c); !errors.As(err, &de) || !strings.Contains(err.Error(), "maximum depth") {
		t.Fatalf("MaxDepth+1 levels: %v", err)
	}
}
