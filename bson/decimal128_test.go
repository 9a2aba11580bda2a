package bson

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/internal/spectest"
)

// dec128CorpusFile is the part of a BSON corpus file the Decimal128 runner
// reads.
type dec128CorpusFile struct {
	Description string `json:"description"`
	BSONType    string `json:"bson_type"`
	TestKey     string `json:"test_key"`
	Valid       []struct {
		Description       string `json:"description"`
		CanonicalBSON     string `json:"canonical_bson"`
		CanonicalExtJSON  string `json:"canonical_extjson"`
		DegenerateExtJSON string `json:"degenerate_extjson"`
		Lossy             bool   `json:"lossy"`
	} `json:"valid"`
	ParseErrors []struct {
		Description string `json:"description"`
		String      string `json:"string"`
	} `json:"parseErrors"`
}

// dec128FromCorpusBSON extracts the value of the corpus document
// {"d": decimal}: a 4-byte length, type 0x13, key "d\x00", 16 value bytes
// and the terminating zero.
func dec128FromCorpusBSON(t *testing.T, hexDoc string) Decimal128 {
	t.Helper()
	b, err := hex.DecodeString(hexDoc)
	if err != nil {
		t.Fatalf("canonical_bson %q is not hex: %v", hexDoc, err)
	}
	if len(b) != 24 || binary.LittleEndian.Uint32(b) != 24 || b[4] != byte(TypeDecimal128) ||
		string(b[5:7]) != "d\x00" || b[23] != 0 {
		t.Fatalf("canonical_bson %s is not the document {\"d\": Decimal128}", hexDoc)
	}
	return NewDecimal128(binary.LittleEndian.Uint64(b[15:23]), binary.LittleEndian.Uint64(b[7:15]))
}

// dec128FromExtJSON extracts the $numberDecimal string of {"d": {...}}.
func dec128FromExtJSON(t *testing.T, doc string) string {
	t.Helper()
	var v struct {
		D struct {
			N *string `json:"$numberDecimal"`
		} `json:"d"`
	}
	if err := json.Unmarshal([]byte(doc), &v); err != nil || v.D.N == nil {
		t.Fatalf("extjson %s is not {\"d\": {\"$numberDecimal\": string}} (err %v)", doc, err)
	}
	return *v.D.N
}

// dec128Bytes is the 16-byte little-endian BSON value of d.
func dec128Bytes(d Decimal128) string {
	return fmt.Sprintf("%X", AppendDecimal128(nil, d))
}

func TestDecimal128Corpus(t *testing.T) {
	var nValid, nDegenerate, nLossy, nParseErrors int
	for _, path := range spectest.Files(t, "decimal128-*.json", "bson-corpus", "tests") {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var f dec128CorpusFile
		if err := json.Unmarshal(raw, &f); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if f.BSONType != "0x13" || f.TestKey != "d" {
			t.Fatalf("%s: bson_type %q, test_key %q; want 0x13 and d", path, f.BSONType, f.TestKey)
		}
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			for _, c := range f.Valid {
				nValid++
				if c.DegenerateExtJSON != "" {
					nDegenerate++
				}
				if c.Lossy {
					nLossy++
				}
				t.Run(c.Description, func(t *testing.T) {
					d := dec128FromCorpusBSON(t, c.CanonicalBSON)
					want := dec128FromExtJSON(t, c.CanonicalExtJSON)
					if got := d.String(); got != want {
						t.Errorf("String() of %s = %q, want %q", c.CanonicalBSON, got, want)
					}
					parsed, err := ParseDecimal128(want)
					if err != nil {
						t.Fatalf("ParseDecimal128(%q): %v", want, err)
					}
					if got := parsed.String(); got != want {
						t.Errorf("ParseDecimal128(%q).String() = %q", want, got)
					}
					// bson-corpus.md: json_to_bson(cEJ) = cB and
					// json_to_bson(dEJ) = cB hold "unless lossy"; a lossy
					// canonical_bson (a NaN with sign, signal bit or payload,
					// a non-canonical zero) has no exact string form.
					if c.Lossy {
						return
					}
					if got, wantB := dec128Bytes(parsed), dec128Bytes(d); got != wantB {
						t.Errorf("ParseDecimal128(%q) = %s, want %s", want, got, wantB)
					}
					if c.DegenerateExtJSON != "" {
						s := dec128FromExtJSON(t, c.DegenerateExtJSON)
						dp, err := ParseDecimal128(s)
						if err != nil {
							t.Fatalf("ParseDecimal128(%q) (degenerate): %v", s, err)
						}
						if got, wantB := dec128Bytes(dp), dec128Bytes(d); got != wantB {
							t.Errorf("ParseDecimal128(%q) = %s, want %s", s, got, wantB)
						}
					}
				})
			}
			for _, c := range f.ParseErrors {
				nParseErrors++
				t.Run(c.Description, func(t *testing.T) {
					d, err := ParseDecimal128(c.String)
					if err == nil {
						t.Fatalf("ParseDecimal128(%q) = %s, want an error", c.String, d)
					}
					var pe *Decimal128ParseError
					if !errors.As(err, &pe) || pe.Input != c.String || pe.Reason == "" {
						t.Fatalf("ParseDecimal128(%q) error %#v, want *Decimal128ParseError with the input and a reason", c.String, err)
					}
				})
			}
		})
	}
	t.Logf("Decimal128 corpus: %d valid cases (%d with degenerate_extjson, %d lossy), %d parse errors",
		nValid, nDegenerate, nLossy, nParseErrors)
	if nValid == 0 || nParseErrors == 0 {
		t.Fatalf("corpus had %d valid cases and %d parse errors; want both", nValid, nParseErrors)
	}
}

// TestDecimal128SpecExamples turns the examples and notes of the
// specification's "From String Representation" and "To String
// Representation" sections, and its Q&A, into checks of coefficient and
// exponent.
func TestDecimal128SpecExamples(t *testing.T) {
	tests := []struct {
		in   string
		coef int64
		exp  int
		str  string
	}{
		{"0", 0, 0, "0"},
		{"12", 12, 0, "12"},
		{"-76", -76, 0, "-76"},
		{"12.70", 1270, -2, "12.70"},
		{"+0.003", 3, -3, "0.003"},
		{"017.", 17, 0, "17"},
		{".5", 5, -1, "0.5"},
		{"4E+9", 4, 9, "4E+9"},
		{"0.73e-7", 73, -9, "7.3E-8"},
		// Q&A: trailing zeros are kept; 2.00 is 200E-2, 2.0 is 20E-1.
		{"2.00", 200, -2, "2.00"},
		{"2.0", 20, -1, "2.0"},
		// To String: exponent > 0 or adjusted exponent < -6 is scientific.
		{"123E+1", 123, 1, "1.23E+3"},
		{"0.000001", 1, -6, "0.000001"},
		{"0.0000001", 1, -7, "1E-7"},
		{"-0", 0, 0, "-0"},
	}
	for _, tt := range tests {
		d, err := ParseDecimal128(tt.in)
		if err != nil {
			t.Errorf("ParseDecimal128(%q): %v", tt.in, err)
			continue
		}
		coef, exp, err := d.BigInt()
		if err != nil || coef.Int64() != tt.coef || exp != tt.exp {
			t.Errorf("ParseDecimal128(%q).BigInt() = %v, %d, %v; want %d, %d", tt.in, coef, exp, err, tt.coef, tt.exp)
		}
		if got := d.String(); got != tt.str {
			t.Errorf("ParseDecimal128(%q).String() = %q, want %q", tt.in, got, tt.str)
		}
	}

	specials := []struct {
		in  string
		inf int
		nan bool
	}{
		{"Inf", 1, false}, {"-infinity", -1, false}, {"NaN", 0, true},
		{"+INFINITY", 1, false}, {"-nan", 0, true},
	}
	for _, tt := range specials {
		d, err := ParseDecimal128(tt.in)
		if err != nil || d.IsInf() != tt.inf || d.IsNaN() != tt.nan || d.IsZero() {
			t.Errorf("ParseDecimal128(%q) = %s, %v; want IsInf %d, IsNaN %v", tt.in, d, err, tt.inf, tt.nan)
		}
	}

	// Notes 1 and 2: a period alone, a sign alone, and no whitespace.
	for _, in := range []string{".", "+.", "-.", "+", "-", " 1", "1 ", "1\t", "\n1"} {
		if d, err := ParseDecimal128(in); err == nil {
			t.Errorf("ParseDecimal128(%q) = %s, want an error", in, d)
		}
	}

	// To String table for special values: every NaN is "NaN".
	nans := []struct {
		name string
		h, l uint64
	}{
		{"positive NaN", 0x7C00000000000000, 0},
		{"negative NaN", 0xFC00000000000000, 0},
		{"signalling NaN", 0x7E00000000000000, 0},
		{"negative signalling NaN", 0xFE00000000000000, 0},
		{"NaN with a payload", 0x7C00000000000000, 12},
	}
	for _, tt := range nans {
		d := NewDecimal128(tt.h, tt.l)
		if !d.IsNaN() || d.IsInf() != 0 || d.IsZero() || d.String() != "NaN" {
			t.Errorf("%s: IsNaN %v IsInf %d IsZero %v String %q", tt.name, d.IsNaN(), d.IsInf(), d.IsZero(), d.String())
		}
		if _, _, err := d.BigInt(); !errors.Is(err, ErrDecimal128NaN) {
			t.Errorf("%s: BigInt error %v, want ErrDecimal128NaN", tt.name, err)
		}
	}
	for _, tt := range []struct {
		h    uint64
		want string
		inf  int
	}{{0x7800000000000000, "Infinity", 1}, {0xF800000000000000, "-Infinity", -1}, {0x7A00000000000000, "Infinity", 1}} {
		d := NewDecimal128(tt.h, 0)
		if d.String() != tt.want || d.IsInf() != tt.inf || d.IsNaN() {
			t.Errorf("%#x: String %q IsInf %d IsNaN %v", tt.h, d.String(), d.IsInf(), d.IsNaN())
		}
		if _, _, err := d.BigInt(); !errors.Is(err, ErrDecimal128Inf) {
			t.Errorf("%#x: BigInt error %v, want ErrDecimal128Inf", tt.h, err)
		}
	}
}

// TestDecimal128ParseEdges covers clamping, exact rounding and the
// boundaries of the exponent range and precision.
func TestDecimal128ParseEdges(t *testing.T) {
	tests := []struct {
		in   string
		want string // String() of the result, or "" for an error
	}{
		{"1234567890123456789012345678901234", "1234567890123456789012345678901234"},
		{"12345678901234567890123456789012345", ""},
		{"12345678901234567890123456789012340", "1.234567890123456789012345678901234E+34"},
		{"1.2345678901234567890123456789012340", "1.234567890123456789012345678901234"},
		{"9999999999999999999999999999999999E+6111", "9.999999999999999999999999999999999E+6144"},
		{"9999999999999999999999999999999999E+6112", ""},
		{"1E+6144", "1.000000000000000000000000000000000E+6144"},
		{"1E+6145", ""},
		{"10E+6143", "1.000000000000000000000000000000000E+6144"},
		{"0.1E+6145", "1.000000000000000000000000000000000E+6144"},
		{"1E-6176", "1E-6176"},
		{"1E-6177", ""},
		{"100E-6178", "1E-6176"},
		{"0E-99999999999999999999999999", "0E-6176"},
		{"-0E+99999999999999999999999999", "-0E+6111"},
		{"1E+99999999999999999999999999", ""},
		{"1E-99999999999999999999999999", ""},
		{"." + strings.Repeat("0", 6175) + "1", "1E-6176"},
		{"." + strings.Repeat("0", 6176) + "1", ""},
		{"1" + strings.Repeat("0", 6144), "1.000000000000000000000000000000000E+6144"},
		{"1" + strings.Repeat("0", 6145), ""},
		{strings.Repeat("0", 100000) + "7." + strings.Repeat("0", 100000), "7.000000000000000000000000000000000"},
		{"00000.000E-2", "0.00000"},
		{"00000.000E-4", "0E-7"},
		{"1.e5", "1E+5"},
		{"1E0", "1"},
		{"1E-0", "1"},
		{"1E+000000000000000000000000000000000000000000000000007", "1E+7"},
		{"ınf", ""},       // dotless i is not ASCII i
		{"infinityy", ""}, // near-special
		{"NaN1", ""},      // NaN payloads are not accepted
		{"sNaN", ""},
		{"1e+", ""},
		{"1e5e", ""},
		{"1\x00", ""},
		{"\xff", ""},
	}
	for _, tt := range tests {
		d, err := ParseDecimal128(tt.in)
		name := tt.in
		if len(name) > 60 {
			name = name[:60] + "..."
		}
		switch {
		case tt.want == "" && err == nil:
			t.Errorf("ParseDecimal128(%q) = %s, want an error", name, d)
		case tt.want != "" && err != nil:
			t.Errorf("ParseDecimal128(%q): %v", name, err)
		case tt.want != "" && d.String() != tt.want:
			t.Errorf("ParseDecimal128(%q) = %s, want %s", name, d, tt.want)
		}
		if err := dec128CheckReference(tt.in, d, err); err != nil {
			t.Errorf("%q: %v", name, err)
		}
	}
}

func TestDecimal128ParseErrorMessage(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", `bson: cannot parse "" as Decimal128: empty string`},
		{"-", `bson: cannot parse "-" as Decimal128: sign without digits`},
		{"1.2.3", `bson: cannot parse "1.2.3" as Decimal128: second decimal point at offset 3`},
		{"12x", `bson: cannot parse "12x" as Decimal128: unexpected 'x' at offset 2`},
		{"1e", `bson: cannot parse "1e" as Decimal128: exponent without digits at end of string`},
		{"1e+x", `bson: cannot parse "1e+x" as Decimal128: exponent without digits: unexpected 'x' at offset 3`},
		{"1e5 ", `bson: cannot parse "1e5 " as Decimal128: unexpected ' ' at offset 3 after the exponent`},
		{"Infi", `bson: cannot parse "Infi" as Decimal128: unexpected 'I' at offset 0: not a number, Infinity, Inf or NaN`},
		{"-\x01", `bson: cannot parse "-\x01" as Decimal128: unexpected byte 0x1 at offset 1: not a number, Infinity, Inf or NaN`},
		{"1E-6177", `bson: cannot parse "1E-6177" as Decimal128: exponent too small: the value underflows Decimal128 (inexact rounding)`},
		{"1E+6145", `bson: cannot parse "1E+6145" as Decimal128: exponent too large: the value overflows Decimal128`},
		{"1.11111111111111111111111111111234549", `bson: cannot parse "1.11111111111111111111111111111234549" as Decimal128: more than 34 significant digits (inexact rounding)`},
		{strings.Repeat("9", 100), `bson: cannot parse "` + strings.Repeat("9", 64) + `"... (100 bytes) as Decimal128: more than 34 significant digits (inexact rounding)`},
	}
	for _, tt := range tests {
		_, err := ParseDecimal128(tt.in)
		var pe *Decimal128ParseError
		if !errors.As(err, &pe) {
			t.Errorf("ParseDecimal128(%q) error %v, want *Decimal128ParseError", tt.in, err)
			continue
		}
		if pe.Input != tt.in {
			t.Errorf("ParseDecimal128(%q): Input %q", tt.in, pe.Input)
		}
		if got := err.Error(); got != tt.want {
			t.Errorf("ParseDecimal128(%q) error\n got %s\nwant %s", tt.in, got, tt.want)
		}
	}
}

func TestDecimal128NonCanonical(t *testing.T) {
	tests := []struct {
		name string
		h, l uint64
		want string
	}{
		// Coefficient 10^34, just out of range, in the first form.
		{"coefficient 10^34", 0x3040000000000000 | d128TenTo34Hi, d128TenTo34Lo, "0"},
		{"coefficient 10^34-1", 0x3040000000000000 | d128TenTo34Hi, d128TenTo34Lo - 1, "9999999999999999999999999999999999"},
		{"largest first-form coefficient", 0x3041FFFFFFFFFFFF, math.MaxUint64, "0"},
		// Second form ("11" after the sign) with exponent 0 and the
		// largest biased exponent, 12287.
		{"second form exponent 0", 0x6000000000000000 | uint64(6176)<<47, 0, "0"},
		{"second form max exponent", 0xE000000000000000 | uint64(12287)<<47, 5, "-0E+6111"},
	}
	for _, tt := range tests {
		d := NewDecimal128(tt.h, tt.l)
		if got := d.String(); got != tt.want {
			t.Errorf("%s: String() = %q, want %q", tt.name, got, tt.want)
		}
		if (tt.want == "0" || tt.want == "-0E+6111") != d.IsZero() {
			t.Errorf("%s: IsZero() = %v", tt.name, d.IsZero())
		}
	}
	if !(Decimal128{}).IsZero() || (Decimal128{}).String() != "0E-6176" {
		t.Errorf("zero Decimal128 is %s, IsZero %v", Decimal128{}, Decimal128{}.IsZero())
	}
}

func TestDecimal128BigInt(t *testing.T) {
	pow := func(n int64) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(n), nil) }
	mul := func(a, b *big.Int) *big.Int { return new(big.Int).Mul(a, b) }
	tenTo34 := pow(34)
	tests := []struct {
		name string
		bi   *big.Int
		exp  int
		want string // String() of the result, or "" when false
	}{
		{"nil", nil, 0, ""},
		{"zero", big.NewInt(0), 0, "0"},
		{"zero clamps high", big.NewInt(0), math.MaxInt, "0E+6111"},
		{"zero clamps low", big.NewInt(0), math.MinInt, "0E-6176"},
		{"negative", big.NewInt(-1050), -3, "-1.050"},
		{"largest coefficient", new(big.Int).Sub(tenTo34, big.NewInt(1)), 0, "9999999999999999999999999999999999"},
		{"10^34 rounds exactly", tenTo34, 0, "1.000000000000000000000000000000000E+34"},
		{"10^34+1 is inexact", new(big.Int).Add(tenTo34, big.NewInt(1)), 0, ""},
		{"huge power of ten", pow(5000), -5000, "1.000000000000000000000000000000000"},
		{"huge inexact", new(big.Int).Add(pow(5000), big.NewInt(1)), 0, ""},
		{"subnormal exact", big.NewInt(1000), -6179, "1E-6176"},
		{"subnormal inexact", big.NewInt(1001), -6179, ""},
		{"underflow far", big.NewInt(1), math.MinInt, ""},
		{"clamp", big.NewInt(1), 6144, "1.000000000000000000000000000000000E+6144"},
		{"overflow", big.NewInt(10), 6144, ""},
		{"overflow far", mul(pow(40), big.NewInt(3)), math.MaxInt, ""},
	}
	for _, tt := range tests {
		d, ok := ParseDecimal128FromBigInt(tt.bi, tt.exp)
		if ok != (tt.want != "") || (ok && d.String() != tt.want) {
			t.Errorf("%s: ParseDecimal128FromBigInt = %s, %v; want %q", tt.name, d, ok, tt.want)
			continue
		}
		if !ok {
			continue
		}
		// The value must survive BigInt: same sign-less magnitude × 10^exp.
		coef, exp, err := d.BigInt()
		if err != nil {
			t.Fatalf("%s: BigInt: %v", tt.name, err)
		}
		if tt.bi.Sign() != 0 {
			l := new(big.Rat).SetFrac(mul(coef, pow(int64(max(exp-tt.exp, 0)))), pow(int64(max(tt.exp-exp, 0))))
			if l.Cmp(new(big.Rat).SetInt(tt.bi)) != 0 {
				t.Errorf("%s: BigInt = %v E%d, not the value %v E%d", tt.name, coef, exp, tt.bi, tt.exp)
			}
		}
		back, ok := ParseDecimal128FromBigInt(coef, exp)
		if !ok || back != d {
			t.Errorf("%s: ParseDecimal128FromBigInt(BigInt()) = %s, %v; want %s", tt.name, back, ok, d)
		}
	}

	// Every corpus-style extreme survives BigInt and back.
	for _, s := range []string{"-1.234567890123456789012345678901234E-6143", "9.999999999999999999999999999999999E+6144", "1E-6176", "0.00123400000"} {
		d, err := ParseDecimal128(s)
		if err != nil {
			t.Fatal(err)
		}
		coef, exp, err := d.BigInt()
		if err != nil {
			t.Fatal(err)
		}
		if back, ok := ParseDecimal128FromBigInt(coef, exp); !ok || back != d {
			t.Errorf("%s: round trip through BigInt gave %s, %v", s, back, ok)
		}
	}
}

func TestDecimal128Text(t *testing.T) {
	type doc struct {
		Price Decimal128  `json:"price"`
		Opt   *Decimal128 `json:"opt,omitempty"`
	}
	var in doc
	var err error
	if in.Price, err = ParseDecimal128("-12.50E+3"); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"price":"-1.250E+4"}` {
		t.Errorf("json.Marshal = %s", b)
	}
	var out doc
	if err := json.Unmarshal(b, &out); err != nil || out.Price != in.Price {
		t.Errorf("json.Unmarshal(%s) = %+v, %v", b, out, err)
	}
	err = json.Unmarshal([]byte(`{"price":"12..5"}`), &out)
	var pe *Decimal128ParseError
	if !errors.As(err, &pe) || pe.Input != "12..5" {
		t.Errorf("json.Unmarshal of a bad decimal: %v, want *Decimal128ParseError", err)
	}
	var d Decimal128
	if err := d.UnmarshalText([]byte("Infinity")); err != nil || d.IsInf() != 1 {
		t.Errorf("UnmarshalText(Infinity) = %s, %v", d, err)
	}
	if err := d.UnmarshalText([]byte("x")); err == nil || d.IsInf() != 1 {
		t.Errorf("failed UnmarshalText changed the value to %s or did not fail (%v)", d, err)
	}
}

func TestDecimal128Allocations(t *testing.T) {
	d, err := ParseDecimal128("-1.234567890123456789012345678901234E-6143")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() { buf = d.AppendString(buf[:0]) }); n != 0 {
		t.Errorf("AppendString allocated %v times per call, want 0", n)
	}
	if string(buf) != "-1.234567890123456789012345678901234E-6143" {
		t.Errorf("AppendString = %s", buf)
	}
	s := "0.001234567890123456789012345678901234"
	if n := testing.AllocsPerRun(100, func() { d, err = ParseDecimal128(s) }); n != 0 || err != nil {
		t.Errorf("ParseDecimal128 allocated %v times per call (err %v), want 0", n, err)
	}
	if n := testing.AllocsPerRun(100, func() { _ = d.String() }); n > 1 {
		t.Errorf("String allocated %v times per call, want at most 1", n)
	}
	if got := string(d.AppendString([]byte("x="))); got != "x="+s {
		t.Errorf("AppendString with a prefix = %q", got)
	}
}

// dec128SyntaxRE and dec128SpecialRE are the specification's grammar for
// numeric strings, written independently of the parser as a reference.
var (
	dec128SyntaxRE  = regexp.MustCompile(`^([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$`)
	dec128SpecialRE = regexp.MustCompile(`^([+-]?)(?i:(inf|infinity)|(nan))$`)
)

// dec128CheckReference checks a ParseDecimal128 result against a slow
// reference built on the grammar and math/big: the value must be accepted
// exactly when it is syntactically valid and representable, and then have
// the sign, exponent and coefficient the specification prescribes (the
// string's exponent, moved only as far as needed to fit).
func dec128CheckReference(s string, got Decimal128, gotErr error) error {
	if gotErr != nil {
		var pe *Decimal128ParseError
		if !errors.As(gotErr, &pe) || pe.Input != s || pe.Reason == "" {
			return fmt.Errorf("error %#v is not a *Decimal128ParseError with the input and a reason", gotErr)
		}
	}
	want, ok := dec128Reference(s)
	switch {
	case !ok && gotErr == nil:
		return fmt.Errorf("parsed as %s (%s), the reference rejects it", got, dec128Bytes(got))
	case ok && gotErr != nil:
		return fmt.Errorf("parse error %v, the reference gives %s (%s)", gotErr, want, dec128Bytes(want))
	case ok && got != want:
		return fmt.Errorf("parsed as %s (%s), the reference gives %s (%s)", got, dec128Bytes(got), want, dec128Bytes(want))
	}
	return nil
}

func dec128Reference(s string) (Decimal128, bool) {
	if m := dec128SpecialRE.FindStringSubmatch(s); m != nil {
		switch {
		case m[3] != "":
			return NewDecimal128(0x7C00000000000000, 0), true
		case m[1] == "-":
			return NewDecimal128(0xF800000000000000, 0), true
		}
		return NewDecimal128(0x7800000000000000, 0), true
	}
	m := dec128SyntaxRE.FindStringSubmatch(s)
	if m == nil || m[2]+m[3] == "" {
		return Decimal128{}, false
	}
	digits := strings.TrimLeft(m[2]+m[3], "0")
	preferred := new(big.Int)
	if m[4] != "" {
		preferred.SetString(strings.TrimPrefix(m[4], "+"), 10)
	}
	preferred.Sub(preferred, big.NewInt(int64(len(m[3]))))

	clamp := func(x *big.Int, lo, hi int64) int64 {
		if x.Cmp(big.NewInt(lo)) < 0 {
			return lo
		}
		if x.Cmp(big.NewInt(hi)) > 0 {
			return hi
		}
		return x.Int64()
	}
	var exp int64
	coef := new(big.Int)
	if digits == "" {
		exp = clamp(preferred, -6176, 6111)
	} else {
		// The value is m × 10^E with m free of trailing zeros; exponents
		// q in [max(-6176, E-(34-len(m))), min(E, 6111)] can hold it.
		trimmed := strings.TrimRight(digits, "0")
		if len(trimmed) > 34 {
			return Decimal128{}, false
		}
		e := new(big.Int).Add(preferred, big.NewInt(int64(len(digits)-len(trimmed))))
		if e.Cmp(big.NewInt(-6176)) < 0 || e.Cmp(big.NewInt(int64(6111+34-len(trimmed)))) > 0 {
			return Decimal128{}, false
		}
		eInt := e.Int64()
		lo := max(-6176, eInt-int64(34-len(trimmed)))
		hi := min(eInt, 6111)
		exp = clamp(preferred, lo, hi)
		coef.SetString(trimmed, 10)
		coef.Mul(coef, new(big.Int).Exp(big.NewInt(10), big.NewInt(eInt-exp), nil))
	}
	var h uint64
	if m[1] == "-" {
		h = 1 << 63
	}
	h |= uint64(exp+6176) << 49
	h |= new(big.Int).Rsh(coef, 64).Uint64()
	l := new(big.Int).And(coef, new(big.Int).SetUint64(math.MaxUint64)).Uint64()
	return NewDecimal128(h, l), true
}

func BenchmarkDecimal128Parse(b *testing.B) {
	for _, s := range []string{"1.5", "-1234567890.123456789012345678901234", "1.000000000000000000000000000000000E+6144"} {
		b.Run(s, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseDecimal128(s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecimal128AppendString(b *testing.B) {
	for _, s := range []string{"1.5", "-1234567890.123456789012345678901234", "1.000000000000000000000000000000000E+6144"} {
		d, err := ParseDecimal128(s)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(s, func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 0, 64)
			for b.Loop() {
				buf = d.AppendString(buf[:0])
			}
		})
	}
}

func ExampleParseDecimal128() {
	price, err := ParseDecimal128("19.90")
	if err != nil {
		fmt.Println(err)
		return
	}
	coef, exp, _ := price.BigInt()
	fmt.Println(price, coef, exp)

	// Values a Decimal128 cannot hold exactly are errors, never rounded.
	_, err = ParseDecimal128("1E-6177")
	fmt.Println(err)
	// Output:
	// 19.90 1990 -2
	// bson: cannot parse "1E-6177" as Decimal128: exponent too small: the value underflows Decimal128 (inexact rounding)
}

func ExampleDecimal128_AppendString() {
	d, _ := ParseDecimal128("1000E+0")
	big, _ := ParseDecimal128("1E3")
	buf := d.AppendString([]byte("plain: "))
	buf = append(buf, "; scientific: "...)
	buf = big.AppendString(buf)
	fmt.Println(string(buf))
	// Output: plain: 1000; scientific: 1E+3
}
