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

// mustDoc encodes a D with the reflection-free encoder, for expected values.
func mustDoc(t *testing.T, d D) []byte {
	t.Helper()
	b, err := Marshal(d)
	if err != nil {
		t.Fatalf("Marshal(%v): %v", d, err)
	}
	return b
}

// show renders a document for failure messages.
func show(b []byte) string {
	if err := Raw(b).Validate(); err != nil {
		return "invalid: " + err.Error()
	}
	return Raw(b).String()
}

// Types used by the marshal tests.

type mtInner struct {
	A int32  `bson:"a"`
	B string `bson:"b"`
}

type MtEmbedded struct {
	E1 int32
}

type mtUnexportedEmbedded struct {
	U1 int32
}

type mtTextKey struct{ a, b string }

func (k mtTextKey) MarshalText() ([]byte, error) { return []byte(k.a + "-" + k.b), nil }

func (k *mtTextKey) UnmarshalText(b []byte) error {
	a, bb, ok := strings.Cut(string(b), "-")
	if !ok {
		return errors.New("no dash")
	}
	k.a, k.b = a, bb
	return nil
}

type mtZeroer struct{ N int }

func (z mtZeroer) IsZero() bool { return z.N < 0 }

type mtPtrZeroer struct{ N int }

func (z *mtPtrZeroer) IsZero() bool { return z.N == 42 }

type mtMarshaler struct{ V int32 }

func (m mtMarshaler) MarshalBSON() ([]byte, error) {
	return AppendDocumentEnd(AppendInt32Element(AppendStringElement(make([]byte, 4), "kind", "custom"), "v", m.V), 0)
}

type mtPtrMarshaler struct{ V string }

func (m *mtPtrMarshaler) MarshalBSONValue() (Type, []byte, error) {
	return TypeString, AppendString(nil, "ptr:"+m.V), nil
}

type mtValueMarshaler int

func (m mtValueMarshaler) MarshalBSONValue() (Type, []byte, error) {
	return TypeString, AppendString(nil, "n="+string(rune('0'+int(m)))), nil
}

type mtFailingMarshaler struct{}

func (mtFailingMarshaler) MarshalBSON() ([]byte, error) { return nil, errors.New("boom") }

type mtBadMarshaler struct{}

func (mtBadMarshaler) MarshalBSON() ([]byte, error) { return []byte{1, 2, 3}, nil }

type mtStringer interface{ String() string }

type mtNamed string

func (n mtNamed) String() string { return string(n) }

func TestCodecMarshalTypes(t *testing.T) {
	ts := time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.FixedZone("X", 3600))
	oid := ObjectID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	one := 1
	var nilIface any
	var stringer mtStringer = mtNamed("hi")
	tests := []struct {
		name string
		in   any
		want D
	}{
		{"bool", struct{ B bool }{true}, D{{"b", true}}},
		{"int8 int16 int32", struct {
			A int8
			B int16
			C int32
		}{-8, -16, -32}, D{{"a", int32(-8)}, {"b", int32(-16)}, {"c", int32(-32)}}},
		{"int small and large", struct{ A, B int }{5, math.MaxInt32 + 1}, D{{"a", int32(5)}, {"b", int64(math.MaxInt32 + 1)}}},
		{"int64 stays int64", struct{ A int64 }{5}, D{{"a", int64(5)}}},
		{"uint8 uint16 -> int32", struct {
			A uint8
			B uint16
		}{200, 60000}, D{{"a", int32(200)}, {"b", int32(60000)}}},
		{"uint32 uint64 uint uintptr -> int64", struct {
			A uint32
			B uint64
			C uint
			D uintptr
		}{1, 2, 3, 4}, D{{"a", int64(1)}, {"b", int64(2)}, {"c", int64(3)}, {"d", int64(4)}}},
		{"minsize", struct {
			A int64  `bson:"a,minsize"`
			B int64  `bson:"b,minsize"`
			C uint64 `bson:"c,minsize"`
			D uint32 `bson:"d,minsize"`
			E uint   `bson:"e,minsize"`
		}{7, math.MaxInt32 + 1, 9, math.MaxUint32, 3}, D{{"a", int32(7)}, {"b", int64(math.MaxInt32 + 1)}, {"c", int32(9)}, {"d", int64(math.MaxUint32)}, {"e", int32(3)}}},
		{"floats", struct {
			A float32
			B float64
		}{1.5, -2.25}, D{{"a", 1.5}, {"b", -2.25}}},
		{"string and named string", struct {
			S string
			N mtNamed
		}{"x", "y"}, D{{"s", "x"}, {"n", "y"}}},
		{"bytes", struct {
			B  []byte
			N  []byte
			A  [3]byte
			BB []uint8
		}{[]byte{1, 2}, nil, [3]byte{7, 8, 9}, []uint8{}}, D{{"b", Binary{Data: []byte{1, 2}}}, {"n", nil}, {"a", Binary{Data: []byte{7, 8, 9}}}, {"bb", Binary{Data: []byte{}}}}},
		{"slices and arrays", struct {
			I []int32
			S []string
			N []int
			E []string
			A [2]bool
			P []*int
		}{[]int32{1, 2}, []string{"a"}, nil, []string{}, [2]bool{true, false}, []*int{&one, nil}},
			D{{"i", A{int32(1), int32(2)}}, {"s", A{"a"}}, {"n", nil}, {"e", A{}}, {"a", A{true, false}}, {"p", A{int32(1), nil}}}},
		{"pointer-shaped struct (stored in the interface word)", struct{ P *int }{&one}, D{{"p", int32(1)}}},
		{"pointer-shaped struct holding a map", struct{ M map[string]int }{map[string]int{"a": 1}}, D{{"m", D{{"a", int32(1)}}}}},
		{"nested slices", struct{ M [][]int64 }{[][]int64{{1}, {}, nil}}, D{{"m", A{A{int64(1)}, A{}, nil}}}},
		{"struct and pointer", struct {
			In  mtInner
			P   *mtInner
			Nil *mtInner
		}{mtInner{1, "x"}, &mtInner{2, "y"}, nil}, D{{"in", D{{"a", int32(1)}, {"b", "x"}}}, {"p", D{{"a", int32(2)}, {"b", "y"}}}, {"nil", nil}}},
		{"slice of structs", struct{ L []mtInner }{[]mtInner{{1, "a"}, {2, "b"}}}, D{{"l", A{D{{"a", int32(1)}, {"b", "a"}}, D{{"a", int32(2)}, {"b", "b"}}}}}},
		{"maps", struct {
			S map[string]string
			I map[string]int32
			N map[string]int
			K map[int8]string
			U map[uint16]bool
			T map[mtTextKey]int32
		}{map[string]string{"k": "v"}, map[string]int32{"x": 1}, nil, map[int8]string{-3: "neg"}, map[uint16]bool{7: true}, map[mtTextKey]int32{{"a", "b"}: 1}},
			D{{"s", D{{"k", "v"}}}, {"i", D{{"x", int32(1)}}}, {"n", nil}, {"k", D{{"-3", "neg"}}}, {"u", D{{"7", true}}}, {"t", D{{"a-b", int32(1)}}}}},
		{"interfaces", struct {
			A any
			B any
			C any
			S mtStringer
			Z mtStringer
		}{int64(3), nilIface, mtInner{1, "i"}, stringer, nil}, D{{"a", int64(3)}, {"b", nil}, {"c", D{{"a", int32(1)}, {"b", "i"}}}, {"s", "hi"}, {"z", nil}}},
		{"time and duration", struct {
			T time.Time
			P *time.Time
			D time.Duration
		}{ts, &ts, 1500 * time.Millisecond}, D{{"t", DateTime(ts.UnixMilli())}, {"p", DateTime(ts.UnixMilli())}, {"d", int64(1500 * time.Millisecond)}}},
		{"bson types", struct {
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
			U   UUID
		}{oid, 1234, NewDecimal128(1, 2), Binary{Subtype: 0x80, Data: []byte{1}}, Regex{"a.c", "ix"}, DBPointer{"db.c", oid}, "f()", "sym",
			CodeWithScope{"g()", D{{"x", int32(1)}}}, Timestamp{T: 5, I: 6}, MinKey{}, MaxKey{}, Null{}, Undefined{}, UUID{15: 1}},
			D{{"o", oid}, {"dt", DateTime(1234)}, {"dec", NewDecimal128(1, 2)}, {"bin", Binary{Subtype: 0x80, Data: []byte{1}}}, {"re", Regex{"a.c", "ix"}},
				{"dbp", DBPointer{"db.c", oid}}, {"js", JavaScript("f()")}, {"sym", Symbol("sym")}, {"cws", CodeWithScope{"g()", D{{"x", int32(1)}}}},
				{"ts", Timestamp{T: 5, I: 6}}, {"min", MinKey{}}, {"max", MaxKey{}}, {"nul", nil}, {"und", Undefined{}}, {"u", Binary{Subtype: SubtypeUUID, Data: UUID{15: 1}.Binary().Data}}}},
		{"document types", struct {
			D   D
			M   M
			MA  map[string]any
			A   A
			AA  []any
			R   Raw
			RV  RawValue
			ND  D
			NR  Raw
			NDs []D
		}{D{{"x", int32(1)}}, M{"y": "z"}, map[string]any{"w": true}, A{int32(1), "two"}, []any{3.5}, mustDoc(t, D{{"r", int32(1)}}), RawValue{Type: TypeInt32, Value: []byte{9, 0, 0, 0}}, nil, nil, []D{{{"q", int32(1)}}}},
			D{{"d", D{{"x", int32(1)}}}, {"m", D{{"y", "z"}}}, {"ma", D{{"w", true}}}, {"a", A{int32(1), "two"}}, {"aa", A{3.5}}, {"r", D{{"r", int32(1)}}},
				{"rv", int32(9)}, {"nd", nil}, {"nr", nil}, {"nds", A{D{{"q", int32(1)}}}}}},
		{"tags", struct {
			Renamed   int32 `bson:"other"`
			Skipped   int32 `bson:"-"`
			Dash      int32 `bson:"-,"`
			EmptyName int32 `bson:",omitempty"`
			unexp     int32
			Mixed     int32 `json:"j" bson:"m"`
			JSONOnly  int32 `json:"jsononly"`
		}{1, 2, 3, 4, 6, 7, 8}, D{{"other", int32(1)}, {"-", int32(3)}, {"emptyname", int32(4)}, {"m", int32(7)}, {"jsononly", int32(8)}}},
		{"embedded struct without inline is a nested document", struct {
			MtEmbedded
			mtUnexportedEmbedded
			X int32
		}{MtEmbedded{1}, mtUnexportedEmbedded{2}, 3}, D{{"mtembedded", D{{"e1", int32(1)}}}, {"x", int32(3)}}},
		{"embedded pointer without inline", struct {
			*MtEmbedded
		}{&MtEmbedded{4}}, D{{"mtembedded", D{{"e1", int32(4)}}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Marshal(tc.in)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			want := mustDoc(t, tc.want)
			if !bytes.Equal(got, want) {
				t.Fatalf("Marshal:\n got %s\nwant %s", show(got), show(want))
			}
			// A pointer to the value encodes the same.
			pv := reflect.New(reflect.TypeOf(tc.in))
			pv.Elem().Set(reflect.ValueOf(tc.in))
			got2, err := Marshal(pv.Interface())
			if err != nil || !bytes.Equal(got2, want) {
				t.Fatalf("Marshal(pointer) = %s, %v", show(got2), err)
			}
		})
	}
}

type mtInner2 struct {
	C int32 `bson:"c"`
	D int32 `bson:"d,omitempty"`
}

type mtInline struct {
	A      int32    `bson:"a"`
	Inner  mtInner2 `bson:",inline"`
	*MtPtr `bson:",inline"`
	Extra  map[string]any `bson:",inline"`
}

type MtPtr struct {
	P int32 `bson:"p"`
}

type mtShadow struct {
	A     int32   `bson:"a"`
	Inner mtInner `bson:",inline"` // its "a" is shadowed by the shallower field
}

func TestCodecMarshalInline(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want D
	}{
		{"nil pointer contributes nothing", mtInline{A: 1, Inner: mtInner2{C: 2}}, D{{"a", int32(1)}, {"c", int32(2)}}},
		{"pointer and map", mtInline{A: 1, Inner: mtInner2{C: 2, D: 3}, MtPtr: &MtPtr{P: 4}, Extra: map[string]any{"x": "y"}},
			D{{"a", int32(1)}, {"c", int32(2)}, {"d", int32(3)}, {"p", int32(4)}, {"x", "y"}}},
		{"shallow field wins", mtShadow{A: 1, Inner: mtInner{A: 2, B: "b"}}, D{{"a", int32(1)}, {"b", "b"}}},
		{"inline string map", struct {
			N int32             `bson:"n"`
			M map[string]string `bson:",inline"`
		}{1, map[string]string{"k": "v"}}, D{{"n", int32(1)}, {"k", "v"}}},
		{"unexported embedded struct tagged inline", struct {
			mtUnexportedEmbedded `bson:",inline"`
			X                    int32
		}{mtUnexportedEmbedded{5}, 1}, D{{"u1", int32(5)}, {"x", int32(1)}}},
		{"inline generic map", struct {
			M map[string]int64 `bson:",inline"`
		}{map[string]int64{"k": 2}}, D{{"k", int64(2)}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Marshal(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if want := mustDoc(t, tc.want); !bytes.Equal(got, want) {
				t.Fatalf("got %s\nwant %s", show(got), show(want))
			}
		})
	}
}

func TestCodecMarshalOmit(t *testing.T) {
	var nilPtr *int
	zero := 0
	type S struct {
		B    bool              `bson:",omitempty"`
		I    int               `bson:",omitempty"`
		I8   int8              `bson:",omitempty"`
		U64  uint64            `bson:",omitempty"`
		F    float64           `bson:",omitempty"`
		F32  float32           `bson:",omitempty"`
		S    string            `bson:",omitempty"`
		Sl   []int             `bson:",omitempty"`
		M    map[string]int    `bson:",omitempty"`
		P    *int              `bson:",omitempty"`
		If   any               `bson:",omitempty"`
		T    time.Time         `bson:",omitempty"`
		O    ObjectID          `bson:",omitempty"`
		Z    mtZeroer          `bson:",omitempty"`
		PZ   mtPtrZeroer       `bson:",omitempty"`
		ZP   *mtZeroer         `bson:",omitempty"`
		St   mtInner           `bson:",omitempty"`
		Arr  [2]int            `bson:",omitempty"`
		Arr0 [0]int            `bson:",omitempty"`
		OZ   mtInner           `bson:",omitzero"`
		OZA  [2]int            `bson:",omitzero"`
		D    D                 `bson:",omitempty"`
		RV   RawValue          `bson:",omitempty"`
		TS   Timestamp         `bson:",omitempty"`
		MS   map[string]string `bson:",omitempty"`
	}
	got, err := Marshal(S{P: nilPtr, M: map[string]int{}, Sl: []int{}, Z: mtZeroer{-1}, PZ: mtPtrZeroer{42}, ZP: &mtZeroer{-5}, MS: map[string]string{}})
	if err != nil {
		t.Fatal(err)
	}
	// A struct without IsZero is never empty (official driver behaviour),
	// nor is an array of non-zero length; omitzero drops both when zero.
	want := mustDoc(t, D{{"st", D{{"a", int32(0)}, {"b", ""}}}, {"arr", A{int32(0), int32(0)}}})
	if !bytes.Equal(got, want) {
		t.Fatalf("zero values:\n got %s\nwant %s", show(got), show(want))
	}
	full := S{B: true, I: 1, I8: 1, U64: 1, F: 1, F32: 1, S: "s", Sl: []int{1}, M: map[string]int{"a": 1}, P: &zero, If: 0,
		T: time.UnixMilli(1).UTC(), O: ObjectID{1}, Z: mtZeroer{1}, PZ: mtPtrZeroer{1}, ZP: &mtZeroer{1}, OZ: mtInner{A: 1}, OZA: [2]int{0, 1},
		D: D{{"x", 1}}, RV: RawValue{Type: TypeNull}, TS: Timestamp{T: 1}, MS: map[string]string{"a": "b"}}
	got, err = Marshal(full)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := DecodeD(got)
	if len(d) != 24 { // every field but Arr0
		t.Fatalf("non-zero values: got %d fields, want 24: %s", len(d), show(got))
	}
}

func TestCodecMarshalers(t *testing.T) {
	pm := &mtPtrMarshaler{V: "p"}
	tests := []struct {
		name string
		in   any
		want D
	}{
		{"value receiver in field, pointer, slice", struct {
			M  mtMarshaler
			P  *mtMarshaler
			N  *mtMarshaler
			Sl []mtMarshaler
		}{mtMarshaler{1}, &mtMarshaler{2}, nil, []mtMarshaler{{3}}},
			D{{"m", D{{"kind", "custom"}, {"v", int32(1)}}}, {"p", D{{"kind", "custom"}, {"v", int32(2)}}}, {"n", nil}, {"sl", A{D{{"kind", "custom"}, {"v", int32(3)}}}}}},
		{"pointer receiver reached through a field", struct {
			V mtPtrMarshaler
			P *mtPtrMarshaler
		}{mtPtrMarshaler{"v"}, pm}, D{{"v", "ptr:v"}, {"p", "ptr:p"}}},
		{"value marshaler on a named int", struct{ N mtValueMarshaler }{4}, D{{"n", "n=4"}}},
		{"in an interface", struct{ I any }{mtMarshaler{5}}, D{{"i", D{{"kind", "custom"}, {"v", int32(5)}}}}},
		{"pointer-receiver value in an interface", D{{"i", mtPtrMarshaler{"i"}}}, D{{"i", "ptr:i"}}},
		{"top-level Marshaler", mtMarshaler{6}, D{{"kind", "custom"}, {"v", int32(6)}}},
		{"DBRef uses its MarshalBSON", struct{ R DBRef }{DBRef{Ref: "c", ID: int32(1)}}, D{{"r", D{{"$ref", "c"}, {"$id", int32(1)}}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Marshal(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if want := mustDoc(t, tc.want); !bytes.Equal(got, want) {
				t.Fatalf("got %s\nwant %s", show(got), show(want))
			}
		})
	}
}

type mtCycle struct {
	Next *mtCycle `bson:"next"`
}

type mtPP *mtPP

type mtDup struct {
	A  int32 `bson:"x"`
	B  int32 `bson:"x"`
	In mtInner
}

type mtDupInline struct {
	X mtInner `bson:",inline"`
	Y mtInner `bson:",inline"`
}

type mtSelfInline struct {
	A    int32
	Self *mtSelfInline `bson:",inline"`
}

func TestCodecMarshalErrors(t *testing.T) {
	cyc := &mtCycle{}
	cyc.Next = cyc
	var pp mtPP
	pp = &pp
	var self any
	self = &self
	tests := []struct {
		name     string
		in       any
		path     string
		contains string
	}{
		{"uint64 overflow", struct{ U uint64 }{math.MaxUint64}, "u", "value 18446744073709551615 overflows int64"},
		{"nested path", struct {
			L []struct{ M map[string]uint }
		}{[]struct{ M map[string]uint }{{}, {map[string]uint{"k": math.MaxUint64}}}}, "l.1.m.k", "overflows int64"},
		{"chan", struct{ C chan int }{make(chan int)}, "c", "Go kind chan"},
		{"func", struct{ F func() }{func() {}}, "f", "Go kind func"},
		{"complex", struct{ C complex128 }{1i}, "c", "Go kind complex128"},
		{"bad map key", struct{ M map[float64]int }{map[float64]int{1: 1}}, "m", "map key type float64"},
		{"NUL in map key", struct{ M map[string]int }{map[string]int{"a\x00b": 1}}, "m.a\x00b", "NUL"},
		{"NUL in tag", struct {
			A int `bson:"a\x00"`
		}{}, "", "NUL"},
		{"unknown tag option", struct {
			A int `bson:"a,omitmepty"`
		}{}, "", `unknown bson tag option "omitmepty"`},
		{"duplicate keys", mtDup{}, "", `duplicate bson key "x"`},
		{"duplicate inlined keys", mtDupInline{}, "", `duplicate bson key "a"`},
		{"inline of a non-struct", struct {
			A int `bson:",inline"`
		}{}, "", "inline field A must be"},
		{"inline map with int keys", struct {
			M map[int]int `bson:",inline"`
		}{}, "", "must have string keys"},
		{"two inline maps", struct {
			M map[string]int `bson:",inline"`
			N map[string]int `bson:",inline"`
		}{}, "", "more than one inline map"},
		{"self inline", mtSelfInline{}, "", "contain itself"},
		{"inline map collision", struct {
			A int32          `bson:"a"`
			M map[string]int `bson:",inline"`
		}{1, map[string]int{"a": 2}}, "a", "duplicates a struct field"},
		{"pointer cycle", cyc, strings.TrimSuffix(strings.Repeat("next.", MaxDepth), "."), "maximum depth"},
		{"pointer to pointer cycle", struct{ P mtPP }{pp}, "p", "maximum depth"},
		{"interface holding a pointer to itself", struct{ S any }{self}, "s", "maximum depth"},
		{"marshaler error", struct{ M mtFailingMarshaler }{}, "m", "MarshalBSON: boom"},
		{"marshaler invalid output", struct{ M mtBadMarshaler }{}, "m", "invalid document"},
		{"not a document", 5, "", "cannot encode a Go int as a document"},
		{"nil pointer", (*mtInner)(nil), "", "nil pointer"},
		{"nil", nil, "", "nil"},
		{"slice at top level", []int{1}, "", "as a document"},
		{"regex NUL", struct{ R Regex }{Regex{Pattern: "a\x00"}}, "r", "NUL"},
		{"invalid RawValue", struct{ R RawValue }{RawValue{Type: TypeInt32, Value: []byte{1}}}, "r", "invalid RawValue"},
		{"invalid Raw", struct{ R Raw }{Raw{1, 2}}, "r", ""},
		{"in D via appendOther", D{{"x", struct{ C chan int }{}}}, "x.c", "chan"},
		{"in a map[string]any", map[string]any{"k": []complex64{1}}, "k.0", "complex64"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			prefix := []byte{0xde, 0xad}
			out, err := MarshalAppend(prefix, tc.in)
			if err == nil {
				t.Fatalf("MarshalAppend succeeded: %s", show(out[2:]))
			}
			if !bytes.Equal(out, prefix) {
				t.Errorf("MarshalAppend changed dst on error: % x", out)
			}
			if !strings.Contains(err.Error(), tc.contains) {
				t.Errorf("error %q does not contain %q", err, tc.contains)
			}
			var me *MarshalError
			var de *DecodeError
			switch {
			case errors.As(err, &me):
				if me.Path != tc.path {
					t.Errorf("Path = %q, want %q (error %v)", me.Path, tc.path, err)
				}
			case errors.As(err, &de): // invalid Raw values report the decode error
				if de.Path != tc.path {
					t.Errorf("Path = %q, want %q (error %v)", de.Path, tc.path, err)
				}
			case tc.path != "":
				t.Errorf("error %T %v, want *MarshalError with path %q", err, err, tc.path)
			}
			if _, err := Marshal(tc.in); err == nil {
				t.Errorf("Marshal succeeded")
			}
		})
	}
}

func TestCodecMarshalValue(t *testing.T) {
	tests := []struct {
		in   any
		t    Type
		want []byte
	}{
		{int32(5), TypeInt32, []byte{5, 0, 0, 0}},
		{"a", TypeString, []byte{2, 0, 0, 0, 'a', 0}},
		{nil, TypeNull, []byte{}},
		{[]int{1}, TypeArray, []byte{12, 0, 0, 0, 0x12, '0', 0, 1, 0, 0, 0, 0, 0, 0, 0, 0}[:12]},
		{mtInner{A: 1}, TypeEmbeddedDocument, mustDoc(t, D{{"a", int32(1)}, {"b", ""}})},
		{uint64(7), TypeInt64, []byte{7, 0, 0, 0, 0, 0, 0, 0}},
	}
	tests[3].want = append(AppendInt32Element([]byte{12, 0, 0, 0}, "0", 1), 0)
	tests[3].want[0] = byte(len(tests[3].want))
	for _, tc := range tests {
		typ, b, err := MarshalValue(tc.in)
		if err != nil || typ != tc.t || !bytes.Equal(b, tc.want) {
			t.Errorf("MarshalValue(%#v) = %v % x %v, want %v % x", tc.in, typ, b, err, tc.t, tc.want)
		}
	}
	if _, _, err := MarshalValue(make(chan int)); err == nil {
		t.Error("MarshalValue(chan) succeeded")
	}
	_, _, err := MarshalValue(struct{ L []uint64 }{[]uint64{math.MaxUint64}})
	var me *MarshalError
	if !errors.As(err, &me) || me.Path != "l.0" {
		t.Errorf("MarshalValue error path: %v", err)
	}
}

// TestCodecBareTag checks the official driver's legacy form: a tag with no
// "key:" pairs is a bson tag. (Built with reflect.StructOf, as go vet
// rejects such tags in source.)
func TestCodecBareTag(t *testing.T) {
	typ := reflect.StructOf([]reflect.StructField{
		{Name: "Bare", Type: reflect.TypeFor[int32](), Tag: `bare,omitempty`},
		{Name: "Other", Type: reflect.TypeFor[int32](), Tag: `x`},
	})
	v := reflect.New(typ)
	v.Elem().Field(1).SetInt(2)
	got, err := Marshal(v.Interface())
	if err != nil {
		t.Fatal(err)
	}
	if want := mustDoc(t, D{{"x", int32(2)}}); !bytes.Equal(got, want) {
		t.Fatalf("got %s, want %s", show(got), show(want))
	}
	if err := Unmarshal(mustDoc(t, D{{"bare", int32(5)}}), v.Interface()); err != nil || v.Elem().Field(0).Int() != 5 {
		t.Fatalf("decode: %v", err)
	}
}

func TestCodecMarshalAppendKeepsPrefix(t *testing.T) {
	dst := []byte("prefix")
	out, err := MarshalAppend(dst, mtInner{A: 1, B: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(out, []byte("prefix")) || !bytes.Equal(out[6:], mustDoc(t, D{{"a", int32(1)}, {"b", "x"}})) {
		t.Fatalf("got %q", out)
	}
}

type mtDocValueMarshaler struct{ T Type }

func (m mtDocValueMarshaler) MarshalBSONValue() (Type, []byte, error) {
	switch m.T {
	case TypeEmbeddedDocument:
		return m.T, []byte{5, 0, 0, 0, 0}, nil
	case TypeInt32:
		return m.T, []byte{1, 0, 0, 0}, nil
	case TypeString:
		return m.T, []byte{9, 0, 0, 0}, nil // invalid
	}
	return 0, nil, &MarshalError{Path: "inner", Reason: "custom"}
}

type mtBadTextKey struct{ s string }

func (k mtBadTextKey) MarshalText() ([]byte, error) { return nil, errors.New("no text") }

func TestCodecMarshalTopLevel(t *testing.T) {
	inner := &mtInner{A: 1}
	pinner := &inner
	var iface any = mtInner{A: 2}
	var nilIface any
	tests := []struct {
		name    string
		in      any
		want    D
		wantErr string
	}{
		{"map", map[string]int32{"a": 1}, D{{"a", int32(1)}}, ""},
		{"nil map", map[string]int32(nil), D{}, ""},
		{"pointer to pointer", pinner, D{{"a", int32(1)}, {"b", ""}}, ""},
		{"pointer to interface", &iface, D{{"a", int32(2)}, {"b", ""}}, ""},
		{"pointer to nil interface", &nilIface, nil, "nil value"},
		{"pointer to D", &D{{"x", true}}, D{{"x", true}}, ""},
		{"pointer to Raw", &Raw{5, 0, 0, 0, 0}, D{}, ""},
		{"value marshaler document", mtDocValueMarshaler{TypeEmbeddedDocument}, D{}, ""},
		{"value marshaler non-document", mtDocValueMarshaler{TypeInt32}, nil, "returned a 32-bit integer, not a document"},
		{"value marshaler string", mtDocValueMarshaler{TypeString}, nil, "returned a string, not a document"},
		{"value marshaler error passes through", mtDocValueMarshaler{}, nil, `at "inner": custom`},
		{"value marshaler field invalid", struct{ V mtDocValueMarshaler }{mtDocValueMarshaler{TypeString}}, nil, `at "v": MarshalBSONValue returned an invalid string value`},
		{"value marshaler field error path", struct{ V mtDocValueMarshaler }{}, nil, `at "v.inner": custom`},
		{"marshaler error", mtFailingMarshaler{}, nil, "MarshalBSON: boom"},
		{"marshaler invalid", mtBadMarshaler{}, nil, "invalid document"},
		{"text key error", map[mtBadTextKey]int{{"a"}: 1}, nil, "MarshalText: no text"},
		{"unsupported map key at top level", map[bool]int{true: 1}, nil, "map key type bool"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Marshal(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := mustDoc(t, tc.want); !bytes.Equal(got, want) {
				t.Fatalf("got %s, want %s", show(got), show(want))
			}
		})
	}
}

func TestCodecMarshalPointerShapedValues(t *testing.T) {
	one := 1
	tests := []struct {
		in   any
		want D
	}{
		{[1]*int{&one}, D{{"a", A{int32(1)}}}},
		{map[string]int{"k": 2}, D{{"a", D{{"k", int32(2)}}}}},
		{struct{ P *int }{&one}, D{{"a", D{{"p", int32(1)}}}}},
		{&one, D{{"a", int32(1)}}},
	}
	for _, tc := range tests {
		got, err := Marshal(D{{"a", tc.in}})
		if err != nil {
			t.Fatalf("%T: %v", tc.in, err)
		}
		if want := mustDoc(t, tc.want); !bytes.Equal(got, want) {
			t.Errorf("%T: got %s, want %s", tc.in, show(got), show(want))
		}
	}
}
