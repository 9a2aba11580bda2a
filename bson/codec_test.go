package bson

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// ctAll has a field of every supported kind and BSON type.
type ctAll struct {
	Bool     bool              `bson:"bool"`
	Int      int               `bson:"int"`
	Int8     int8              `bson:"int8"`
	Int16    int16             `bson:"int16"`
	Int32    int32             `bson:"int32"`
	Int64    int64             `bson:"int64"`
	Uint     uint              `bson:"uint"`
	Uint8    uint8             `bson:"uint8"`
	Uint16   uint16            `bson:"uint16"`
	Uint32   uint32            `bson:"uint32"`
	Uint64   uint64            `bson:"uint64"`
	Float32  float32           `bson:"float32"`
	Float64  float64           `bson:"float64"`
	String   string            `bson:"string"`
	Named    mtNamed           `bson:"named"`
	Bytes    []byte            `bson:"bytes"`
	Array    [3]int16          `bson:"array"`
	ByteArr  [4]byte           `bson:"bytearr"`
	Slice    []float64         `bson:"slice"`
	Strings  []string          `bson:"strings"`
	Structs  []mtInner         `bson:"structs"`
	PtrSlice []*mtInner        `bson:"ptrslice"`
	MapSS    map[string]string `bson:"mapss"`
	MapSI    map[string]int64  `bson:"mapsi"`
	MapIS    map[int32]string  `bson:"mapis"`
	MapAny   map[string]any    `bson:"mapany"`
	Ptr      *int64            `bson:"ptr"`
	NilPtr   *int64            `bson:"nilptr"`
	Struct   mtInner           `bson:"struct"`
	StructP  *mtInner          `bson:"structp"`
	Iface    any               `bson:"iface"`
	Time     time.Time         `bson:"time"`
	Duration time.Duration     `bson:"duration"`
	OID      ObjectID          `bson:"oid"`
	DT       DateTime          `bson:"dt"`
	Dec      Decimal128        `bson:"dec"`
	Bin      Binary            `bson:"bin"`
	Re       Regex             `bson:"re"`
	DBP      DBPointer         `bson:"dbp"`
	JS       JavaScript        `bson:"js"`
	Sym      Symbol            `bson:"sym"`
	CWS      CodeWithScope     `bson:"cws"`
	TS       Timestamp         `bson:"ts"`
	Min      MinKey            `bson:"min"`
	Max      MaxKey            `bson:"max"`
	Null     Null              `bson:"null"`
	Undef    Undefined         `bson:"undef"`
	D        D                 `bson:"d"`
	M        M                 `bson:"m"`
	A        A                 `bson:"a"`
	Raw      Raw               `bson:"raw"`
	RawValue RawValue          `bson:"rawvalue"`
	UUID     UUID              `bson:"uuid"`
	Vec      Vector            `bson:"vec"`
	Small    int64             `bson:"small,minsize"`
	Omitted  string            `bson:"omitted,omitempty"`
	Inline   mtInner2          `bson:",inline"`
	Extra    map[string]any    `bson:",inline"`
}

func ctSample(t testing.TB) ctAll {
	p := int64(-9)
	raw, _ := Marshal(D{{"r", int32(1)}})
	return ctAll{
		Bool: true, Int: -1 << 40, Int8: -8, Int16: -16, Int32: -32, Int64: -64, Uint: 1 << 40, Uint8: 8, Uint16: 16, Uint32: 1 << 31, Uint64: 1 << 62,
		Float32: 1.5, Float64: math.Pi, String: "héllo", Named: "named", Bytes: []byte{0, 1, 2}, Array: [3]int16{1, -2, 3}, ByteArr: [4]byte{9, 8, 7, 6},
		Slice: []float64{1, 2.5}, Strings: []string{"a", ""}, Structs: []mtInner{{1, "x"}}, PtrSlice: []*mtInner{{2, "y"}, nil},
		MapSS: map[string]string{"k": "v"}, MapSI: map[string]int64{"n": 1}, MapIS: map[int32]string{-4: "four"}, MapAny: map[string]any{"x": int32(1)},
		Ptr: &p, Struct: mtInner{3, "z"}, StructP: &mtInner{4, "w"}, Iface: D{{"q", "r"}},
		Time: time.UnixMilli(1700000000123).UTC(), Duration: 3 * time.Second, OID: ObjectID{1, 2, 3}, DT: 42, Dec: NewDecimal128(0x3040000000000000, 5),
		Bin: Binary{Subtype: 0x80, Data: []byte{5}}, Re: Regex{"^a", "im"}, DBP: DBPointer{"db.c", ObjectID{4}}, JS: "f()", Sym: "sym",
		CWS: CodeWithScope{"g()", D{{"s", int32(1)}}}, TS: Timestamp{T: 7, I: 8}, D: D{{"k", "v"}}, M: M{"mk": "mv"}, A: A{int32(1), "two"},
		Raw: raw, RawValue: RawValue{Type: TypeInt64, Value: []byte{1, 0, 0, 0, 0, 0, 0, 0}}, UUID: UUID{0: 0xaa, 15: 0xbb}, Vec: NewFloat32Vector([]float32{1, -2.5}), Small: 12,
		Inline: mtInner2{C: 5}, Extra: map[string]any{"extra": "yes"},
	}
}

func TestCodecRoundTripEveryType(t *testing.T) {
	in := ctSample(t)
	doc, err := Marshal(&in)
	if err != nil {
		t.Fatal(err)
	}
	var out ctAll
	if err := Unmarshal(doc, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		iv, ov := reflect.ValueOf(in), reflect.ValueOf(out)
		for i := 0; i < iv.NumField(); i++ {
			if !reflect.DeepEqual(iv.Field(i).Interface(), ov.Field(i).Interface()) {
				t.Errorf("%s: got %#v, want %#v", iv.Type().Field(i).Name, ov.Field(i).Interface(), iv.Field(i).Interface())
			}
		}
	}
	again, err := Marshal(&out)
	if err != nil || !bytes.Equal(doc, again) {
		t.Fatalf("re-encoding differs (%v):\n%s\n%s", err, show(doc), show(again))
	}
	// The small int64 was written as int32 (minsize).
	if v := Raw(doc).Lookup("small"); v.Type != TypeInt32 {
		t.Errorf("minsize field has type %v", v.Type)
	}
}

func TestCodecVector(t *testing.T) {
	type S struct {
		V Vector  `bson:"v"`
		Z Vector  `bson:"z"`
		O Vector  `bson:"o,omitempty"`
		P *Vector `bson:"p"`
	}
	v8 := NewInt8Vector([]int8{1, -1})
	in := S{V: v8, P: &v8}
	doc, err := Marshal(&in)
	if err != nil {
		t.Fatal(err)
	}
	want := mustDoc(t, D{{"v", v8.Binary()}, {"z", nil}, {"p", v8.Binary()}})
	if !bytes.Equal(doc, want) {
		t.Fatalf("got %s\nwant %s", show(doc), show(want))
	}
	var out S
	if err := Unmarshal(doc, &out); err != nil || !out.V.Equal(v8) || out.Z.DType() != 0 || out.P == nil || !out.P.Equal(v8) {
		t.Fatalf("decode: %+v %v", out, err)
	}
	err = Unmarshal(mustDoc(t, D{{"v", Binary{Subtype: SubtypeVector, Data: []byte{0x27, 0, 1}}}}), &out)
	var ute *UnmarshalTypeError
	if !errors.As(err, &ute) || ute.Path != "v" || !strings.Contains(ute.Reason, "multiple of 4") {
		t.Fatalf("bad vector data: %v", err)
	}
}

// TestCodecInteroperatesWithDecodeD checks that struct encoding and the
// generic decoder agree on a document's contents.
func TestCodecInteroperatesWithDecodeD(t *testing.T) {
	in := ctSample(t)
	doc, err := Marshal(&in)
	if err != nil {
		t.Fatal(err)
	}
	d, err := DecodeD(doc)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var out ctAll
	if err := Unmarshal(again, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("struct -> D -> struct changed the value")
	}
}

// TestCodecPlanCacheConcurrent builds and uses plans for the same fresh
// types from many goroutines at once; run it with -race.
func TestCodecPlanCacheConcurrent(t *testing.T) {
	type node struct {
		Name     string
		Children []*node
		Meta     map[string]node
	}
	type wrapper struct {
		N  node
		P  *node
		Sl []node
		Aa ctAll
	}
	in := wrapper{N: node{Name: "a", Children: []*node{{Name: "b"}}}, P: &node{Name: "c", Meta: map[string]node{"m": {Name: "d"}}}, Sl: []node{{Name: "e"}}, Aa: ctSample(t)}
	want, err := Marshal(&in)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				var out wrapper
				if err := Unmarshal(want, &out); err != nil {
					errs <- err
					return
				}
				got, err := Marshal(&out)
				if err != nil {
					errs <- err
					return
				}
				if len(got) != len(want) {
					errs <- fmt.Errorf("length %d, want %d", len(got), len(want))
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if codecFor(reflect.TypeFor[wrapper]()) != codecFor(reflect.TypeFor[wrapper]()) {
		t.Error("plan rebuilt for the same type")
	}
}

// TestCodecSteadyStateAllocations pins the allocation counts the design
// promises: none to encode into a buffer, none to decode numbers, one per
// string.
func TestCodecSteadyStateAllocations(t *testing.T) {
	type nums struct {
		A int32
		B int64
		C float64
		D bool
		E ObjectID
		F time.Time
		G struct{ X, Y int }
	}
	n := nums{A: 1, B: 2, C: 3, D: true, E: ObjectID{1}, F: time.UnixMilli(5).UTC()}
	buf, err := MarshalAppend(nil, &n)
	if err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(100, func() { buf, _ = MarshalAppend(buf[:0], &n) }); a != 0 {
		t.Errorf("MarshalAppend: %v allocations, want 0", a)
	}
	var out nums
	if a := testing.AllocsPerRun(100, func() { _ = Unmarshal(buf, &out) }); a != 0 {
		t.Errorf("Unmarshal of numbers: %v allocations, want 0", a)
	}
	type strs struct{ A, B, C string }
	sb, _ := Marshal(strs{"alpha", "beta", "gamma"})
	var so strs
	if a := testing.AllocsPerRun(100, func() { _ = Unmarshal(sb, &so) }); a != 3 {
		t.Errorf("Unmarshal of 3 strings: %v allocations, want 3", a)
	}
	if a := testing.AllocsPerRun(100, func() { _, _ = Marshal(&n) }); a != 1 {
		t.Errorf("Marshal: %v allocations, want 1", a)
	}
}

// TestValidatorPathsAgree runs the validator's fast and detailed paths over
// the BSON corpus's valid and invalid documents.
func TestValidatorPathsAgree(t *testing.T) {
	files := loadCorpus(t)
	n := 0
	check := func(name string, b []byte) {
		if fast, detailed := validatorPaths(b); fast != detailed {
			t.Errorf("%s: fast path = %v, detailed path = %v (% x)", name, fast, detailed, b)
		}
		n++
	}
	for fname, f := range files {
		for _, c := range f.Valid {
			for _, h := range []string{c.CanonicalBSON, c.DegenerateBSON, c.ConvertedBSON} {
				if b, err := hex.DecodeString(h); err == nil && h != "" {
					check(fname+": "+c.Description, b)
				}
			}
		}
		for _, c := range f.DecodeErrors {
			if b, err := hex.DecodeString(c.BSON); err == nil {
				check(fname+": "+c.Description, b)
			}
		}
	}
	if n == 0 {
		t.Fatal("no corpus documents checked")
	}
}

// TestCodecUnmarshalCorpus decodes every valid corpus document into an
// empty interface and a struct with an inline catch-all, and checks the
// re-encoding when the corpus marks it lossless.
func TestCodecUnmarshalCorpus(t *testing.T) {
	if _, err := os.Stat("."); err != nil {
		t.Fatal(err)
	}
	files := loadCorpus(t)
	for fname, f := range files {
		for _, c := range f.Valid {
			b, err := hex.DecodeString(c.CanonicalBSON)
			if err != nil {
				t.Fatalf("%s: %v", fname, err)
			}
			var catchAll struct {
				Rest map[string]RawValue `bson:",inline"`
			}
			if err := Unmarshal(b, &catchAll); err != nil {
				t.Errorf("%s: %s: %v", fname, c.Description, err)
				continue
			}
			out, err := Marshal(&catchAll)
			if err != nil {
				t.Errorf("%s: %s: Marshal: %v", fname, c.Description, err)
				continue
			}
			if len(catchAll.Rest) <= 1 && !bytes.Equal(out, b) {
				t.Errorf("%s: %s: RawValue round trip\n got %x\nwant %x", fname, c.Description, out, b)
			}
		}
	}
}

// ctRecT is built first and reaches ctRecS, which holds a ctRecT by value
// before ctRecT's MarshalBSON has been seen: the field must still use it.
type ctRecT struct {
	P *ctRecS
}

func (ctRecT) MarshalBSON() ([]byte, error) { return Marshal(D{{"custom", int32(1)}}) }

type ctRecS struct {
	T ctRecT
}

func TestCodecRecursivePlanUsesMethods(t *testing.T) {
	if _, err := Marshal(&ctRecT{}); err != nil {
		t.Fatal(err)
	}
	got, err := Marshal(ctRecS{})
	if err != nil {
		t.Fatal(err)
	}
	if want := mustDoc(t, D{{"t", D{{"custom", int32(1)}}}}); !bytes.Equal(got, want) {
		t.Fatalf("got %s, want %s", show(got), show(want))
	}
}
