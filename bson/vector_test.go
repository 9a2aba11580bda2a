package bson

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/internal/spectest"
)

// vectorSpecFile is one file of the bson-binary-vector specification tests;
// see that suite's README for the meaning of each key.
type vectorSpecFile struct {
	Description string           `json:"description"`
	TestKey     string           `json:"test_key"`
	Tests       []vectorSpecCase `json:"tests"`
}

type vectorSpecCase struct {
	Description   string             `json:"description"`
	Valid         bool               `json:"valid"`
	Vector        *[]json.RawMessage `json:"vector"` // nil when absent
	DTypeHex      string             `json:"dtype_hex"`
	DTypeAlias    string             `json:"dtype_alias"`
	Padding       *int               `json:"padding"` // absent means 0
	CanonicalBSON *string            `json:"canonical_bson"`
}

// vectorSpecNumber reads one element of a test vector: a JSON number, or
// a special float written as Extended JSON {"$numberDouble": "-Infinity"}
// or as a bare string such as "inf" (older versions of the files).
func vectorSpecNumber(raw json.RawMessage) (float64, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) > 0 && raw[0] == '{':
		var m map[string]string
		if err := json.Unmarshal(raw, &m); err != nil {
			return 0, err
		}
		s, ok := m["$numberDouble"]
		if !ok || len(m) != 1 {
			return 0, fmt.Errorf("object %s is not {\"$numberDouble\": ...}", raw)
		}
		return strconv.ParseFloat(s, 64)
	case len(raw) > 0 && raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, err
		}
		return strconv.ParseFloat(s, 64)
	}
	return strconv.ParseFloat(string(raw), 64)
}

// TestVectorSpec runs the bson-binary-vector specification tests as the
// suite's README requires: a valid case must encode from its numbers, dtype
// and padding to canonical_bson, and decode from canonical_bson back to the
// same numbers, dtype and padding; an invalid case must fail to encode when
// it has a vector and fail to decode when it has canonical_bson.
func TestVectorSpec(t *testing.T) {
	for _, path := range spectest.Files(t, "*.json", "bson-binary-vector", "tests") {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var file vectorSpecFile
			if err := json.Unmarshal(data, &file); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if file.TestKey == "" || len(file.Tests) == 0 {
				t.Fatalf("%s: no test_key or no tests", path)
			}
			var valid, encodeErrs, decodeErrs int
			for _, tc := range file.Tests {
				t.Run(tc.Description, func(t *testing.T) {
					if tc.Valid {
						runValidVectorCase(t, file.TestKey, tc)
						valid++
						return
					}
					e, d := runInvalidVectorCase(t, file.TestKey, tc)
					encodeErrs += e
					decodeErrs += d
				})
			}
			t.Logf("%s: %d cases: %d valid (encoded and decoded), %d invalid encodings rejected, %d invalid BSON values rejected",
				name, len(file.Tests), valid, encodeErrs, decodeErrs)
		})
	}
}

// parseVectorCase reads a case's dtype, padding and numbers.
func parseVectorCase(t *testing.T, tc vectorSpecCase) (VectorDType, int, []float64) {
	t.Helper()
	d, err := strconv.ParseUint(strings.TrimPrefix(tc.DTypeHex, "0x"), 16, 8)
	if err != nil {
		t.Fatalf("dtype_hex %q: %v", tc.DTypeHex, err)
	}
	dtype := VectorDType(d)
	if tc.DTypeAlias != "" && dtype.String() != tc.DTypeAlias {
		t.Fatalf("dtype %s does not match dtype_alias %q", dtype, tc.DTypeAlias)
	}
	padding := 0
	if tc.Padding != nil {
		padding = *tc.Padding
	}
	var values []float64
	if tc.Vector != nil {
		values = make([]float64, len(*tc.Vector))
		for i, raw := range *tc.Vector {
			if values[i], err = vectorSpecNumber(raw); err != nil {
				t.Fatalf("vector[%d] = %s: %v", i, raw, err)
			}
		}
	}
	return dtype, padding, values
}

func vectorDocument(key string, b Binary) []byte {
	start, doc := AppendDocumentStart(nil)
	doc = AppendBinaryElement(doc, key, b.Subtype, b.Data)
	doc, err := AppendDocumentEnd(doc, start)
	if err != nil {
		panic(err) // a one-element test document cannot be too large
	}
	return doc
}

func runValidVectorCase(t *testing.T, key string, tc vectorSpecCase) {
	dtype, padding, values := parseVectorCase(t, tc)
	if tc.Vector == nil || tc.CanonicalBSON == nil {
		t.Fatal("valid case without vector or canonical_bson")
	}
	canonical, err := hex.DecodeString(*tc.CanonicalBSON)
	if err != nil {
		t.Fatalf("canonical_bson: %v", err)
	}

	// Encode: numbers, dtype and padding -> document -> canonical_bson.
	v, err := NewVector(dtype, values, padding)
	if err != nil {
		t.Fatalf("NewVector(%s, %v, %d): %v", dtype, values, padding, err)
	}
	if got := vectorDocument(key, v.Binary()); !bytes.Equal(got, canonical) {
		t.Errorf("encoded document\n got %X\nwant %s", got, *tc.CanonicalBSON)
	}
	// The typed constructor for the dtype must build the same vector.
	typed := typedVector(t, dtype, values, padding)
	if !typed.Equal(v) {
		t.Errorf("typed constructor built %+v, NewVector built %+v", typed, v)
	}
	if got := vectorDocument(key, typed.Binary()); !bytes.Equal(got, canonical) {
		t.Errorf("typed constructor's document\n got %X\nwant %s", got, *tc.CanonicalBSON)
	}

	// Decode: canonical_bson -> binary -> numbers, dtype and padding.
	b, ok := Raw(canonical).Lookup(key).BinaryOK()
	if !ok {
		t.Fatalf("canonical_bson has no binary %q", key)
	}
	dec, err := NewVectorFromBinary(b)
	if err != nil {
		t.Fatalf("NewVectorFromBinary(%X): %v", b.Data, err)
	}
	if dec.DType() != dtype || int(dec.Padding()) != padding {
		t.Errorf("decoded dtype %s padding %d, want %s padding %d", dec.DType(), dec.Padding(), dtype, padding)
	}
	checkVectorValues(t, dec, values)
	if !dec.Equal(v) {
		t.Errorf("decoded vector %+v differs from the encoded one %+v", dec, v)
	}
}

// typedVector builds the vector with the constructor specific to dtype.
func typedVector(t *testing.T, dtype VectorDType, values []float64, padding int) Vector {
	t.Helper()
	switch dtype {
	case Int8Vector:
		xs := make([]int8, len(values))
		for i, f := range values {
			xs[i] = int8(f)
		}
		return NewInt8Vector(xs)
	case Float32Vector:
		xs := make([]float32, len(values))
		for i, f := range values {
			xs[i] = float32(f)
		}
		return NewFloat32Vector(xs)
	case PackedBitVector:
		xs := make([]byte, len(values))
		for i, f := range values {
			xs[i] = byte(f)
		}
		v, err := NewPackedBitVector(xs, uint8(padding))
		if err != nil {
			t.Fatalf("NewPackedBitVector(%v, %d): %v", xs, padding, err)
		}
		return v
	}
	t.Fatalf("no typed constructor for %s", dtype)
	return Vector{}
}

// checkVectorValues compares a decoded vector with the test's numbers. Go
// has float32, so FLOAT32 values must come back exactly as the float32
// rounding of the input, as the README requires for such languages.
func checkVectorValues(t *testing.T, v Vector, want []float64) {
	t.Helper()
	if v.Len() != len(want)*vectorBitsPerValue(v.DType())-int(v.Padding()) {
		t.Errorf("Len() = %d for %d values", v.Len(), len(want))
	}
	switch v.DType() {
	case Int8Vector:
		got, _ := v.Int8OK()
		if len(got) != len(want) {
			t.Fatalf("decoded %d values, want %d", len(got), len(want))
		}
		for i := range want {
			if float64(got[i]) != want[i] {
				t.Errorf("value %d = %d, want %v", i, got[i], want[i])
			}
		}
	case Float32Vector:
		got, _ := v.Float32OK()
		if len(got) != len(want) {
			t.Fatalf("decoded %d values, want %d", len(got), len(want))
		}
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(float32(want[i])) {
				t.Errorf("value %d = %v, want %v", i, got[i], float32(want[i]))
			}
		}
	case PackedBitVector:
		got, _, _ := v.PackedBitOK()
		if len(got) != len(want) {
			t.Fatalf("decoded %d bytes, want %d", len(got), len(want))
		}
		for i := range want {
			if float64(got[i]) != want[i] {
				t.Errorf("byte %d = %d, want %v", i, got[i], want[i])
			}
		}
	}
}

func vectorBitsPerValue(d VectorDType) int {
	if d == PackedBitVector {
		return 8
	}
	return 1
}

// runInvalidVectorCase checks that an invalid case fails on each side it
// gives data for, and returns how many encode and decode failures it saw.
func runInvalidVectorCase(t *testing.T, key string, tc vectorSpecCase) (encodeErrs, decodeErrs int) {
	dtype, padding, values := parseVectorCase(t, tc)
	if tc.Vector == nil && tc.CanonicalBSON == nil {
		t.Fatal("invalid case with neither vector nor canonical_bson tests nothing")
	}
	if tc.Vector != nil {
		v, err := NewVector(dtype, values, padding)
		var ve *VectorError
		if !errors.As(err, &ve) {
			t.Errorf("NewVector(%s, %v, %d) = %+v, %v; want a *VectorError", dtype, values, padding, v, err)
		} else {
			encodeErrs++
		}
	}
	if tc.CanonicalBSON != nil {
		canonical, err := hex.DecodeString(*tc.CanonicalBSON)
		if err != nil {
			t.Fatalf("canonical_bson: %v", err)
		}
		// The corruption is in the vector, not the document: the document
		// must read, and turning its binary into numbers must fail.
		if err := Raw(canonical).Validate(); err != nil {
			t.Fatalf("canonical_bson is not a valid document: %v", err)
		}
		b, ok := Raw(canonical).Lookup(key).BinaryOK()
		if !ok {
			t.Fatalf("canonical_bson has no binary %q", key)
		}
		v, err := NewVectorFromBinary(b)
		var ve *VectorError
		if !errors.As(err, &ve) {
			t.Errorf("NewVectorFromBinary(%X) = %+v, %v; want a *VectorError", b.Data, v, err)
		} else {
			decodeErrs++
		}
	}
	return encodeErrs, decodeErrs
}

// The README's prose tests on non-zero ignored bits. This package rejects
// them both when encoding and when decoding, as the specification
// recommends for drivers written after it.
func TestVectorIgnoredBitsProse(t *testing.T) {
	// 1. Encoding [255] with padding 7 leaves 7 ignored bits set.
	if v, err := NewPackedBitVector([]byte{0xFF}, 7); err == nil {
		t.Errorf("NewPackedBitVector([255], 7) = %+v, want an error", v)
	}
	if v, err := NewVector(PackedBitVector, []float64{255}, 7); err == nil {
		t.Errorf("NewVector(PACKED_BIT, [255], 7) = %+v, want an error", v)
	}

	// 2. Decoding the same bytes.
	if v, err := NewVectorFromBinary(Binary{Subtype: SubtypeVector, Data: []byte{0x10, 0x07, 0xFF}}); err == nil {
		t.Errorf("NewVectorFromBinary(10 07 ff) = %+v, want an error", v)
	}

	// 3. Comparison. b2's vector cannot be built, so only its binary form
	// takes part.
	b1 := Binary{Subtype: SubtypeVector, Data: []byte{0x10, 0x07, 0x80}}
	b2 := Binary{Subtype: SubtypeVector, Data: []byte{0x10, 0x07, 0xFF}}
	v3, err := NewPackedBitVector([]byte{0x80}, 7)
	if err != nil {
		t.Fatal(err)
	}
	b3 := v3.Binary()
	if bytes.Equal(b1.Data, b2.Data) {
		t.Error("b1 == b2 at the binary level")
	}
	if b1.Subtype != b3.Subtype || !bytes.Equal(b1.Data, b3.Data) {
		t.Errorf("b1 = %x, b3 = %x; want equal", b1.Data, b3.Data)
	}
	v1, err := NewVectorFromBinary(b1)
	if err != nil {
		t.Fatal(err)
	}
	if !v1.Equal(v3) || !v3.Equal(v1) {
		t.Error("v1 != v3 at the vector level")
	}
	if v1.Len() != 1 || !v1.BitAt(0) {
		t.Errorf("v1 has Len %d and bit 0 = %v; want a single set bit", v1.Len(), v1.BitAt(0))
	}
}

func TestNewVectorFromBinaryErrors(t *testing.T) {
	tests := []struct {
		name    string
		subtype byte
		data    []byte
		want    string // "" for success
	}{
		{"int8 ok", 9, []byte{0x03, 0, 0x80, 0x7F}, ""},
		{"float32 ok", 9, []byte{0x27, 0, 0, 0, 0x80, 0x3F}, ""},
		{"packed bit padding 7 ok", 9, []byte{0x10, 7, 0x80}, ""},
		{"packed bit padding 1 zero low bit", 9, []byte{0x10, 1, 0xFF, 0xFE}, ""},
		{"empty int8", 9, []byte{0x03, 0}, ""},
		{"generic subtype", 0, []byte{0x03, 0}, "bson: invalid vector: binary subtype is 0x00, want 0x09"},
		{"uuid subtype", 4, []byte{0x03, 0}, "binary subtype is 0x04"},
		{"no bytes", 9, nil, "bson: invalid vector: binary data is 0 bytes; the dtype and padding bytes need 2"},
		{"dtype only", 9, []byte{0x03}, "binary data is 1 bytes"},
		{"unknown dtype", 9, []byte{0x01, 0}, "bson: invalid dtype 0x01 vector: unknown dtype"},
		{"dtype zero", 9, []byte{0x00, 0}, "unknown dtype"},
		{"int8 padding", 9, []byte{0x03, 1, 1}, "bson: invalid INT8 vector: padding byte is 1; it must be 0 for this dtype"},
		{"float32 padding", 9, []byte{0x27, 3, 0, 0, 0, 0}, "bson: invalid FLOAT32 vector: padding byte is 3"},
		{"float32 1 byte", 9, []byte{0x27, 0, 1}, "data after the dtype and padding is 1 bytes, not a multiple of 4"},
		{"float32 7 bytes", 9, []byte{0x27, 0, 1, 2, 3, 4, 5, 6, 7}, "is 7 bytes, not a multiple of 4"},
		{"packed bit padding 8", 9, []byte{0x10, 8, 0}, "bson: invalid PACKED_BIT vector: padding 8 is outside [0, 7]"},
		{"packed bit padding 255", 9, []byte{0x10, 255, 0}, "padding 255 is outside [0, 7]"},
		{"packed bit empty with padding", 9, []byte{0x10, 1}, "padding 1 given for an empty vector"},
		{"packed bit ignored bit set", 9, []byte{0x10, 3, 0x00, 0x0C}, "the 3 ignored low bits of the last byte 0x0c are not zero"},
		{"packed bit lowest ignored bit set", 9, []byte{0x10, 1, 0x01}, "ignored low bits"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := NewVectorFromBinary(Binary{Subtype: tt.subtype, Data: tt.data})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				if b := v.Binary(); b.Subtype != SubtypeVector || !bytes.Equal(b.Data, tt.data) {
					t.Errorf("re-encoded as %x, want %x", b.Data, tt.data)
				}
				return
			}
			var ve *VectorError
			if !errors.As(err, &ve) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %+v, %v; want a *VectorError containing %q", v, err, tt.want)
			}
		})
	}
}

func TestNewVectorErrors(t *testing.T) {
	tests := []struct {
		name    string
		dtype   VectorDType
		values  []float64
		padding int
		want    string // "" for success
	}{
		{"int8 bounds", Int8Vector, []float64{-128, 127, 0}, 0, ""},
		{"int8 overflow", Int8Vector, []float64{1, 128}, 0, "bson: invalid INT8 vector: value 128 at index 1 is not an integer in [-128, 127]"},
		{"int8 underflow", Int8Vector, []float64{-129}, 0, "value -129 at index 0"},
		{"int8 fraction", Int8Vector, []float64{1.5}, 0, "value 1.5 at index 0 is not an integer"},
		{"int8 NaN", Int8Vector, []float64{math.NaN()}, 0, "value NaN at index 0"},
		{"int8 infinity", Int8Vector, []float64{math.Inf(1)}, 0, "value +Inf at index 0"},
		{"int8 padding", Int8Vector, []float64{1}, 1, "padding is 1; it must be 0 for this dtype"},
		{"float32 specials", Float32Vector, []float64{math.Inf(-1), math.Inf(1), math.NaN(), math.MaxFloat32, -math.MaxFloat32, 1e-50}, 0, ""},
		{"float32 overflow", Float32Vector, []float64{0, 1e39}, 0, "bson: invalid FLOAT32 vector: value 1e+39 at index 1 overflows float32"},
		{"float32 negative overflow", Float32Vector, []float64{-1e300}, 0, "value -1e+300 at index 0 overflows float32"},
		{"float32 padding", Float32Vector, nil, 2, "padding is 2"},
		{"packed bit bounds", PackedBitVector, []float64{0, 255}, 0, ""},
		{"packed bit 256", PackedBitVector, []float64{256}, 0, "bson: invalid PACKED_BIT vector: value 256 at index 0 is not an integer in [0, 255]"},
		{"packed bit -1", PackedBitVector, []float64{-1}, 0, "value -1 at index 0"},
		{"packed bit fraction", PackedBitVector, []float64{0.5}, 0, "value 0.5 at index 0"},
		{"packed bit padding -1", PackedBitVector, []float64{1}, -1, "padding -1 is outside [0, 7]"},
		{"packed bit padding 8", PackedBitVector, []float64{0}, 8, "padding 8 is outside [0, 7]"},
		{"packed bit empty padded", PackedBitVector, nil, 3, "padding 3 given for an empty vector"},
		{"packed bit ignored bits", PackedBitVector, []float64{0xF1}, 1, "ignored low bits of the last byte 0xf1 are not zero"},
		{"unknown dtype", VectorDType(0x42), []float64{1}, 0, "bson: invalid dtype 0x42 vector: unknown dtype"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := NewVector(tt.dtype, tt.values, tt.padding)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				if v.DType() != tt.dtype || v.Len() != len(tt.values)*vectorBitsPerValue(tt.dtype)-tt.padding {
					t.Errorf("built dtype %s with %d elements", v.DType(), v.Len())
				}
				back, err := NewVectorFromBinary(v.Binary())
				if err != nil || !back.Equal(v) {
					t.Errorf("round trip = %+v, %v", back, err)
				}
				return
			}
			var ve *VectorError
			if !errors.As(err, &ve) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %+v, %v; want a *VectorError containing %q", v, err, tt.want)
			}
		})
	}
}

func TestVectorAccessors(t *testing.T) {
	in := []int8{1, -2, 3}
	i8 := NewInt8Vector(in)
	in[0] = 100 // the vector holds its own copy
	if got, ok := i8.Int8OK(); !ok || got[0] != 1 || len(got) != 3 {
		t.Errorf("Int8OK = %v, %v", got, ok)
	}
	if _, ok := i8.Float32OK(); ok {
		t.Error("Float32OK on INT8 succeeded")
	}
	if _, _, ok := i8.PackedBitOK(); ok {
		t.Error("PackedBitOK on INT8 succeeded")
	}
	if i8.Len() != 3 || i8.Padding() != 0 || i8.DType() != Int8Vector {
		t.Errorf("INT8 Len %d Padding %d DType %s", i8.Len(), i8.Padding(), i8.DType())
	}

	f32 := NewFloat32Vector([]float32{1.5, float32(math.Inf(-1))})
	if got, ok := f32.Float32OK(); !ok || got[0] != 1.5 || !math.IsInf(float64(got[1]), -1) {
		t.Errorf("Float32OK = %v, %v", got, ok)
	}
	if _, ok := f32.Int8OK(); ok {
		t.Error("Int8OK on FLOAT32 succeeded")
	}
	if f32.Len() != 2 {
		t.Errorf("FLOAT32 Len = %d", f32.Len())
	}

	bitsIn := []byte{0b10100000, 0b11100000}
	pb, err := NewPackedBitVector(bitsIn, 4)
	if err != nil {
		t.Fatal(err)
	}
	bitsIn[0] = 0
	if got, pad, ok := pb.PackedBitOK(); !ok || pad != 4 || !bytes.Equal(got, []byte{0b10100000, 0b11100000}) {
		t.Errorf("PackedBitOK = %08b, %d, %v", got, pad, ok)
	}
	if pb.Len() != 12 {
		t.Errorf("PACKED_BIT Len = %d, want 12", pb.Len())
	}
	wantBits := "101000001110"
	for i := -1; i <= 13; i++ {
		want := i >= 0 && i < len(wantBits) && wantBits[i] == '1'
		if got := pb.BitAt(i); got != want {
			t.Errorf("BitAt(%d) = %v, want %v", i, got, want)
		}
	}
	if i8.BitAt(0) {
		t.Error("BitAt on INT8 reported a set bit")
	}

	var zero Vector
	if zero.DType() != 0 || zero.Len() != 0 {
		t.Errorf("zero Vector has DType %s Len %d", zero.DType(), zero.Len())
	}
	if _, err := NewVectorFromBinary(zero.Binary()); err == nil {
		t.Error("the zero Vector's binary decoded without error")
	}
}

func TestVectorEqual(t *testing.T) {
	nan := float32(math.NaN())
	negZero := float32(math.Copysign(0, -1))
	p1, _ := NewPackedBitVector([]byte{0x80}, 7)
	p2, _ := NewPackedBitVector([]byte{0x80}, 6)
	p3, _ := NewPackedBitVector([]byte{0x80}, 0)
	tests := []struct {
		a, b Vector
		want bool
	}{
		{NewInt8Vector([]int8{1, 2}), NewInt8Vector([]int8{1, 2}), true},
		{NewInt8Vector([]int8{1, 2}), NewInt8Vector([]int8{1, 3}), false},
		{NewInt8Vector([]int8{1}), NewInt8Vector([]int8{1, 2}), false},
		{NewInt8Vector(nil), NewInt8Vector([]int8{}), true},
		{NewInt8Vector([]int8{1}), p3, false},
		{NewFloat32Vector([]float32{nan}), NewFloat32Vector([]float32{nan}), true},
		{NewFloat32Vector([]float32{0}), NewFloat32Vector([]float32{negZero}), false},
		{NewFloat32Vector([]float32{1}), NewFloat32Vector([]float32{1, 1}), false},
		{p1, p1, true},
		{p1, p2, false},
		{p1, p3, false},
	}
	for i, tt := range tests {
		if got := tt.a.Equal(tt.b); got != tt.want {
			t.Errorf("case %d: Equal = %v, want %v", i, got, tt.want)
		}
		// Equal must agree with comparing the encodings.
		if enc := bytes.Equal(tt.a.Binary().Data, tt.b.Binary().Data); enc != tt.want {
			t.Errorf("case %d: encodings equal = %v, want %v", i, enc, tt.want)
		}
	}
}

func ExampleNewFloat32Vector() {
	v := NewFloat32Vector([]float32{127, 7})
	b := v.Binary()
	fmt.Printf("subtype %d data % x\n", b.Subtype, b.Data)

	// Store it under a key, as in a $vectorSearch query or a document.
	start, doc := AppendDocumentStart(nil)
	doc = AppendBinaryElement(doc, "vector", b.Subtype, b.Data)
	doc, _ = AppendDocumentEnd(doc, start)
	fmt.Printf("%X\n", doc)
	// Output:
	// subtype 9 data 27 00 00 00 fe 42 00 00 e0 40
	// 1C00000005766563746F72000A0000000927000000FE420000E04000
}

func ExampleNewVectorFromBinary() {
	b := Binary{Subtype: SubtypeVector, Data: []byte{0x10, 0x04, 0xEE, 0xE0}}
	v, err := NewVectorFromBinary(b)
	if err != nil {
		panic(err)
	}
	for i := 0; i < v.Len(); i++ {
		if v.BitAt(i) {
			fmt.Print(1)
		} else {
			fmt.Print(0)
		}
	}
	fmt.Println(" dtype", v.DType(), "padding", v.Padding())

	_, err = NewVectorFromBinary(Binary{Subtype: SubtypeVector, Data: []byte{0x27, 0x00, 0x2A, 0x2A, 0x2A}})
	fmt.Println(err)
	// Output:
	// 111011101110 dtype PACKED_BIT padding 4
	// bson: invalid FLOAT32 vector: data after the dtype and padding is 3 bytes, not a multiple of 4
}

func ExampleNewPackedBitVector() {
	v, err := NewPackedBitVector([]byte{0xFF}, 7)
	fmt.Println(v.Len(), err)
	v, err = NewPackedBitVector([]byte{0x80}, 7)
	fmt.Println(v.Len(), err)
	// Output:
	// 0 bson: invalid PACKED_BIT vector: the 7 ignored low bits of the last byte 0xff are not zero
	// 1 <nil>
}

func FuzzVectorFromBinary(f *testing.F) {
	seeds := [][]byte{
		{0x03, 0x00, 0x7F, 0x07},
		{0x27, 0x00, 0x00, 0x00, 0xFE, 0x42},
		{0x27, 0x00, 0x00, 0x00, 0xC0, 0x7F}, // NaN
		{0x10, 0x03, 0x7F, 0x08},
		{0x10, 0x07, 0xFF},
		{0x10, 0x01},
		{0x27, 0x00, 0x2A},
		{},
	}
	for _, s := range seeds {
		f.Add(byte(9), s)
	}
	f.Add(byte(0), []byte{0x03, 0x00})
	f.Fuzz(func(t *testing.T, subtype byte, data []byte) {
		in := append([]byte{}, data...)
		v, err := NewVectorFromBinary(Binary{Subtype: subtype, Data: data})
		if !bytes.Equal(in, data) {
			t.Fatal("NewVectorFromBinary modified its input")
		}
		if err != nil {
			var ve *VectorError
			if !errors.As(err, &ve) {
				t.Fatalf("error %v is %T, want *VectorError", err, err)
			}
			return
		}
		// Success means the data re-encodes to exactly the same bytes, the
		// vector does not alias them, and decoding again gives an equal
		// vector.
		b := v.Binary()
		if subtype != SubtypeVector || b.Subtype != SubtypeVector || !bytes.Equal(b.Data, data) {
			t.Fatalf("subtype %d data %x re-encoded as subtype %d data %x", subtype, data, b.Subtype, b.Data)
		}
		if len(data) > 2 {
			data[len(data)-1] ^= 0xFF
			if !bytes.Equal(v.Binary().Data, in) {
				t.Fatal("the vector aliases its input")
			}
			data[len(data)-1] ^= 0xFF
		}
		again, err := NewVectorFromBinary(b)
		if err != nil || !again.Equal(v) {
			t.Fatalf("decoding the re-encoding: %+v, %v", again, err)
		}
		if v.Len() < 0 {
			t.Fatalf("negative Len %d", v.Len())
		}
	})
}
