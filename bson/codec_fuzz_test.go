package bson

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// fzItem and fzDoc cover the field kinds the struct codec handles.
type fzItem struct {
	Name  string  `bson:"name"`
	Qty   int32   `bson:"qty"`
	Price float64 `bson:"price,omitempty"`
}

type fzDoc struct {
	ID      ObjectID            `bson:"_id"`
	S       string              `bson:"s"`
	B       bool                `bson:"b"`
	I       int                 `bson:"i"`
	I8      int8                `bson:"i8"`
	I16     int16               `bson:"i16"`
	I32     int32               `bson:"i32"`
	I64     int64               `bson:"i64,minsize"`
	U8      uint8               `bson:"u8"`
	U32     uint32              `bson:"u32"`
	U64     uint64              `bson:"u64"`
	F32     float32             `bson:"f32,truncate"`
	F64     float64             `bson:"f64"`
	Bytes   []byte              `bson:"bytes"`
	Arr     [2]int32            `bson:"arr"`
	BArr    [3]byte             `bson:"barr"`
	Tags    []string            `bson:"tags"`
	Items   []fzItem            `bson:"items"`
	Ptr     *fzItem             `bson:"ptr"`
	Nested  fzItem              `bson:"nested"`
	Meta    map[string]string   `bson:"meta"`
	Counts  map[string]int64    `bson:"counts"`
	ByInt   map[int16]bool      `bson:"byint"`
	Any     any                 `bson:"any"`
	When    time.Time           `bson:"when"`
	Dur     time.Duration       `bson:"dur"`
	Dec     Decimal128          `bson:"dec"`
	Bin     Binary              `bson:"bin"`
	Re      Regex               `bson:"re"`
	TS      Timestamp           `bson:"ts"`
	DT      DateTime            `bson:"dt"`
	D       D                   `bson:"d"`
	A       A                   `bson:"a"`
	M       M                   `bson:"m"`
	Raw     Raw                 `bson:"raw"`
	RV      RawValue            `bson:"rv,omitempty"`
	UUID    UUID                `bson:"uuid"`
	Vec     Vector              `bson:"vec"`
	JS      JavaScript          `bson:"js"`
	CWS     CodeWithScope       `bson:"cws"`
	Omit    string              `bson:"omit,omitempty"`
	Inlined fzInline            `bson:",inline"`
	Rest    map[string]RawValue `bson:",inline"`
}

type fzInline struct {
	X int64  `bson:"x"`
	Y string `bson:"y"`
}

func fzSample() fzDoc {
	return fzDoc{
		ID: ObjectID{1, 2, 3}, S: "str", B: true, I: -5, I8: -8, I16: 300, I32: 1 << 20, I64: 1 << 40, U8: 200, U32: 1 << 31, U64: 1 << 50,
		F32: 0.5, F64: math.E, Bytes: []byte("bytes"), Arr: [2]int32{1, 2}, BArr: [3]byte{1, 2, 3}, Tags: []string{"a", "b"},
		Items: []fzItem{{"x", 1, 2.5}, {"y", 2, 0}}, Ptr: &fzItem{"p", 3, 1}, Nested: fzItem{Name: "n"},
		Meta: map[string]string{"k": "v"}, Counts: map[string]int64{"c": 9}, ByInt: map[int16]bool{-1: true},
		Any: D{{"x", A{int32(1), "y"}}}, When: time.UnixMilli(1234567890123).UTC(), Dur: time.Second, Dec: NewDecimal128(0x3040000000000000, 1234),
		Bin: Binary{Subtype: 0x80, Data: []byte{9}}, Re: Regex{"^x", "i"}, TS: Timestamp{T: 1, I: 2}, DT: 99,
		D: D{{"dk", "dv"}}, A: A{1.5, nil}, M: M{"mk": int64(3)}, Raw: Raw{5, 0, 0, 0, 0}, RV: RawValue{Type: TypeBoolean, Value: []byte{1}},
		UUID: UUID{3: 3}, Vec: NewInt8Vector([]int8{1, 2}), JS: "code", CWS: CodeWithScope{Code: "c", Scope: D{{"s", int32(1)}}},
		Inlined: fzInline{X: 1, Y: "y"}, Rest: map[string]RawValue{"unknown": {Type: TypeInt32, Value: []byte{1, 0, 0, 0}}},
	}
}

// canonical re-encodes a document with the keys of every nested document
// sorted, so documents that differ only in map iteration order compare
// equal byte for byte (which also compares doubles, NaN included, by bits).
func canonical(t *testing.T, b []byte) []byte {
	t.Helper()
	d, err := DecodeD(b)
	if err != nil {
		t.Fatalf("DecodeD of our own output: %v", err)
	}
	var sortAny func(v any) any
	sortAny = func(v any) any {
		switch x := v.(type) {
		case D:
			y := slices.Clone(x)
			for i := range y {
				y[i].Value = sortAny(y[i].Value)
			}
			slices.SortStableFunc(y, func(a, b E) int { return strings.Compare(a.Key, b.Key) })
			return y
		case A:
			y := slices.Clone(x)
			for i := range y {
				y[i] = sortAny(y[i])
			}
			return y
		case CodeWithScope:
			x.Scope = sortAny(x.Scope)
			return x
		}
		return v
	}
	out, err := Marshal(sortAny(d))
	if err != nil {
		t.Fatalf("Marshal of a decoded document: %v", err)
	}
	return out
}

func FuzzUnmarshalStruct(f *testing.F) {
	s := fzSample()
	seed, err := Marshal(&s)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	empty, _ := Marshal(fzDoc{})
	f.Add(empty)
	f.Add(mustDocF(f, D{{"i8", int32(300)}}))
	f.Add(mustDocF(f, D{{"items", A{D{{"qty", 1.5}}}}}))
	f.Add(mustDocF(f, D{{"f32", 0.1}, {"u64", -1.0}, {"when", nil}, {"any", A{D{}}}}))
	f.Add(mustDocF(f, D{{"zzz", MinKey{}}, {"x", "wrong"}}))
	f.Add([]byte{5, 0, 0, 0, 0})
	// Every field with values of many types, so mutations start from
	// documents that reach each decoder and its conversions and errors.
	values := []any{nil, int32(-1), int64(1 << 40), 2.5, -0.0, "s", true, D{{"name", "n"}}, A{int32(1), "x"},
		Binary{Data: []byte{1, 2, 3}}, ObjectID{1}, DateTime(-1), Timestamp{T: 1}, Regex{"a", "b"}, MinKey{}, Symbol("y"), JavaScript("z"), Undefined{}}
	sd, _ := DecodeD(seed)
	for _, e := range sd {
		for _, v := range values {
			f.Add(mustDocF(f, D{{e.Key, v}}))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, valid := validatorPaths(data)
		if fast != valid {
			t.Fatalf("validator fast path = %v, detailed path = %v", fast, valid)
		}
		// Unmarshal is atomic whatever the target holds: start from a
		// zero value (decoded in place), one set field, or a value with
		// every slice, map and pointer set (decoded copy-on-write).
		var r1 fzDoc
		switch len(data) % 3 {
		case 1:
			r1.S = "untouched"
		case 2:
			r1 = fzSample()
		}
		before := fingerprint(&r1)
		held := r1 // shares every reference r1 holds
		heldBefore := fingerprint(&held)
		err := Unmarshal(data, &r1)
		if !valid {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("invalid BSON: Unmarshal returned %v, want *DecodeError", err)
			}
		} else if err != nil {
			var ute *UnmarshalTypeError
			if !errors.As(err, &ute) {
				t.Fatalf("valid BSON: Unmarshal returned %T %v, want *UnmarshalTypeError", err, err)
			}
		}
		if err != nil {
			if after := fingerprint(&r1); after != before {
				t.Fatalf("failed Unmarshal (%v) changed the target:\nbefore %s\n after %s", err, before, after)
			}
			return
		}
		// On success too, nothing the target held before was written.
		if after := fingerprint(&held); after != heldBefore {
			t.Fatalf("Unmarshal wrote into memory the target held:\nbefore %s\n after %s", heldBefore, after)
		}
		b1, err := Marshal(&r1)
		if err != nil {
			t.Fatalf("Marshal of a decoded value: %v", err)
		}
		var r2 fzDoc
		if err := Unmarshal(b1, &r2); err != nil {
			t.Fatalf("Unmarshal of our own encoding: %v\n%s", err, show(b1))
		}
		b2, err := Marshal(&r2)
		if err != nil {
			t.Fatalf("second Marshal: %v", err)
		}
		// Re-encoding a decoded encoding is stable: byte for byte when no
		// map has two entries to order, else up to key order.
		if !bytes.Equal(b1, b2) {
			multi := len(r2.Meta) > 1 || len(r2.Counts) > 1 || len(r2.ByInt) > 1 || len(r2.M) > 1 || len(r2.Rest) > 1
			if !multi || !bytes.Equal(canonical(t, b1), canonical(t, b2)) {
				t.Fatalf("re-encoding differs:\n%s\n%s", show(b1), show(b2))
			}
		}
	})
}

func mustDocF(f *testing.F, d D) []byte {
	b, err := Marshal(d)
	if err != nil {
		f.Fatal(err)
	}
	return b
}

// TestCodecPopulatedRoundTripIsExact checks the fuzz target's strongest
// invariant deterministically: a populated struct's encoding decodes and
// re-encodes to identical bytes.
func TestCodecPopulatedRoundTripIsExact(t *testing.T) {
	s := fzSample()
	b1, err := Marshal(&s)
	if err != nil {
		t.Fatal(err)
	}
	var r fzDoc
	if err := Unmarshal(b1, &r); err != nil {
		t.Fatal(err)
	}
	b2, err := Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b1, b2) {
		t.Fatalf("round trip differs:\n%s\n%s", show(b1), show(b2))
	}
	if !reflect.DeepEqual(r, s) {
		t.Fatalf("decoded value differs:\n got %+v\nwant %+v", r, s)
	}
}
