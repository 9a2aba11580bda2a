package store

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"math/big"
	"os"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/internal/spectest"
)

func TestKeyEquality(t *testing.T) {
	// Values in one group must share a key; values in different groups
	// must not.
	groups := [][]string{
		{`{"$numberInt":"1"}`, `{"$numberLong":"1"}`, `{"$numberDouble":"1.0"}`, `{"$numberDecimal":"1"}`, `{"$numberDecimal":"1.0"}`, `{"$numberDecimal":"1E0"}`, `{"$numberDecimal":"0.1E1"}`, `{"$numberDecimal":"1.000000000000000000000000000000000"}`},
		{`{"$numberInt":"0"}`, `{"$numberLong":"0"}`, `{"$numberDouble":"-0.0"}`, `{"$numberDouble":"0.0"}`, `{"$numberDecimal":"-0"}`, `{"$numberDecimal":"0E-10"}`, `{"$numberDecimal":"0E+300"}`},
		{`{"$numberDouble":"NaN"}`, `{"$numberDecimal":"NaN"}`, `{"$numberDecimal":"-NaN"}`},
		{`{"$numberDouble":"Infinity"}`, `{"$numberDecimal":"Infinity"}`},
		{`{"$numberDouble":"-Infinity"}`, `{"$numberDecimal":"-Infinity"}`},
		{`{"$numberInt":"-7"}`, `{"$numberLong":"-7"}`, `{"$numberDouble":"-7.0"}`, `{"$numberDecimal":"-7.00"}`, `{"$numberDecimal":"-0.7E1"}`},
		{`{"$numberDouble":"0.5"}`, `{"$numberDecimal":"0.5"}`, `{"$numberDecimal":"0.50"}`, `{"$numberDecimal":"5E-1"}`},
		{`{"$numberDouble":"0.1"}`},
		{`{"$numberDecimal":"0.1"}`, `{"$numberDecimal":"0.10"}`},
		{`{"$numberLong":"9223372036854775807"}`, `{"$numberDecimal":"9223372036854775807"}`},
		{`{"$numberDouble":"9.223372036854775808E18"}`, `{"$numberDecimal":"9223372036854775808"}`, `{"$numberDecimal":"9.223372036854775808E18"}`},
		{`{"$numberLong":"-9223372036854775808"}`, `{"$numberDouble":"-9.223372036854775808E18"}`, `{"$numberDecimal":"-9223372036854775808"}`},
		{`{"$numberDouble":"1.0E20"}`, `{"$numberDecimal":"1E20"}`, `{"$numberDecimal":"100000000000000000000"}`},
		{`{"$numberLong":"9007199254740993"}`, `{"$numberDecimal":"9007199254740993"}`},
		{`{"$numberLong":"9007199254740992"}`, `{"$numberDouble":"9007199254740992.0"}`},
		{`{"$numberDecimal":"1E-400"}`, `{"$numberDecimal":"10E-401"}`},
		{`{"$numberDecimal":"1234567890123456789012345678901234"}`},
		{`{"$numberDecimal":"1234567890123456789012345678901234E10"}`, `{"$numberDecimal":"12345678901234567890123456789012340E9"}`},
		{`{"$numberDecimal":"1E6111"}`},
		{`"1"`, `{"$symbol":"1"}`},
		{`""`, `{"$symbol":""}`},
		{`"a\u0000b"`},
		{`{"a": 1}`, `{"a": {"$numberDouble":"1.0"}}`, `{"a": {"$numberLong":"1"}}`},
		{`{"b": 2, "a": 1}`},
		{`{"a": 1, "b": 2}`},
		{`{"a": {"b": 1}}`},
		{`{"a.b": 1}`},
		{`{"a": "bc", "d": "e"}`},
		{`{"a": "b", "cd": "e"}`},
		{`{}`},
		{`[]`},
		{`[1, 2]`, `[{"$numberDouble":"1.0"}, {"$numberLong":"2"}]`},
		{`[2, 1]`},
		{`[[1], 2]`},
		{`["a"]`},
		{`"a"`},
		{`null`},
		{`{"$undefined": true}`},
		{`{"$minKey": 1}`},
		{`{"$maxKey": 1}`},
		{`true`},
		{`false`},
		{`{"$oid": "000102030405060708090a0b"}`},
		{`{"$oid": "000102030405060708090a0c"}`},
		{`{"$date": {"$numberLong": "5"}}`},
		{`{"$timestamp": {"t": 0, "i": 5}}`},
		{`{"$binary": {"base64": "AQI=", "subType": "00"}}`},
		{`{"$binary": {"base64": "AQI=", "subType": "80"}}`},
		{`{"$binary": {"base64": "AQID", "subType": "00"}}`},
		{`{"$regularExpression": {"pattern": "a", "options": "i"}}`},
		{`{"$regularExpression": {"pattern": "ai", "options": ""}}`},
		{`{"$code": "x"}`},
		{`{"$code": "x", "$scope": {"a": 1}}`},
		{`{"$dbPointer": {"$ref": "db.c", "$id": {"$oid": "000102030405060708090a0b"}}}`},
	}
	seen := map[string]int{}
	for gi, g := range groups {
		want := Key(val(t, g[0]))
		for _, js := range g {
			got := Key(val(t, js))
			if got != want {
				t.Errorf("group %d: Key(%s) = %x, want %x (Key(%s))", gi, js, got, want, g[0])
			}
		}
		if other, dup := seen[want]; dup {
			t.Errorf("groups %d (%s) and %d (%s) share key %x", other, groups[other][0], gi, g[0], want)
		}
		seen[want] = gi
	}
}

func TestKeyMalformed(t *testing.T) {
	deep := []byte{}
	for i := 0; i < 300; i++ {
		deep = append(deep, 0x0d, 0, 0, 0, byte(bson.TypeEmbeddedDocument), 'a', 0)
	}
	cases := []bson.RawValue{
		{Type: bson.TypeInt32, Value: []byte{1}},
		{Type: bson.TypeString, Value: []byte{5, 0, 0, 0, 'a'}},
		{Type: bson.TypeEmbeddedDocument, Value: []byte{5, 0, 0, 0}},
		{Type: bson.TypeEmbeddedDocument, Value: deep},
		{Type: bson.TypeArray, Value: []byte{0xff, 0xff, 0xff, 0x7f, 0}},
		{Type: bson.TypeDecimal128, Value: []byte{1, 2}},
		{Type: bson.TypeCodeWithScope, Value: []byte{1, 2, 3}},
		{Type: bson.Type(0x42), Value: []byte{1}},
		{Type: bson.TypeBoolean, Value: []byte{2}},
		{},
	}
	valid := Key(val(t, `1`))
	for i, v := range cases {
		k := Key(v)
		if k == "" || k == valid {
			t.Errorf("case %d: key %x", i, k)
		}
		// Malformed values are keyed by their bytes, so the same bytes
		// still find the same document.
		if Key(v) != k {
			t.Errorf("case %d: key not deterministic", i)
		}
	}
}

// numRef is an independent model of a number's value: its class and, for
// finite values, the exact rational.
type numRef struct {
	class string // "nan", "+inf", "-inf", "finite"
	rat   *big.Rat
}

func refNumber(v bson.RawValue) (numRef, bool) {
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64:
		n, ok := v.AsInt64OK()
		return numRef{"finite", new(big.Rat).SetInt64(n)}, ok
	case bson.TypeDouble:
		f, ok := v.DoubleOK()
		switch {
		case !ok:
			return numRef{}, false
		case math.IsNaN(f):
			return numRef{class: "nan"}, true
		case math.IsInf(f, 1):
			return numRef{class: "+inf"}, true
		case math.IsInf(f, -1):
			return numRef{class: "-inf"}, true
		}
		return numRef{"finite", new(big.Rat).SetFloat64(f)}, true
	case bson.TypeDecimal128:
		d, ok := v.Decimal128OK()
		if !ok {
			return numRef{}, false
		}
		return refDecimalString(d.String())
	}
	return numRef{}, false
}

// refDecimalString models a decimal from its string form, independently of
// the key code's bit decoding.
func refDecimalString(s string) (numRef, bool) {
	switch s {
	case "NaN", "-NaN":
		return numRef{class: "nan"}, true
	case "Infinity":
		return numRef{class: "+inf"}, true
	case "-Infinity":
		return numRef{class: "-inf"}, true
	}
	r, ok := new(big.Rat).SetString(s)
	return numRef{"finite", r}, ok
}

func (a numRef) equal(b numRef) bool {
	if a.class != b.class {
		return false
	}
	return a.class != "finite" || a.rat.Cmp(b.rat) == 0
}

// expectedKey is the key the model predicts: integers within int64 as
// int64, exact float64 values as doubles.
func (a numRef) expectedKey() (string, bool) {
	switch a.class {
	case "nan":
		return Key(bson.RawValue{Type: bson.TypeDouble, Value: binary.LittleEndian.AppendUint64(nil, math.Float64bits(math.NaN()))}), true
	case "+inf", "-inf":
		f := math.Inf(1)
		if a.class == "-inf" {
			f = math.Inf(-1)
		}
		return Key(bson.RawValue{Type: bson.TypeDouble, Value: binary.LittleEndian.AppendUint64(nil, math.Float64bits(f))}), true
	}
	if a.rat.IsInt() && a.rat.Num().IsInt64() {
		return Key(bson.RawValue{Type: bson.TypeInt64, Value: binary.LittleEndian.AppendUint64(nil, uint64(a.rat.Num().Int64()))}), true
	}
	if f, exact := a.rat.Float64(); exact {
		return Key(bson.RawValue{Type: bson.TypeDouble, Value: binary.LittleEndian.AppendUint64(nil, math.Float64bits(f))}), true
	}
	return "", false
}

// TestKeyBSONCorpus checks the key of every valid number in the BSON
// corpus (decimal128, double, int32, int64) against the rational model.
func TestKeyBSONCorpus(t *testing.T) {
	tally := spectest.NewTally("bson-corpus numbers")
	defer tally.Log(t)
	var files []string
	for _, pat := range []string{"decimal128-*.json", "double.json", "int32.json", "int64.json"} {
		files = append(files, spectest.Files(t, pat, "bson-corpus", "tests")...)
	}
	for _, path := range files {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var suite struct {
			TestKey string `json:"test_key"`
			Valid   []struct {
				Description   string `json:"description"`
				CanonicalBSON string `json:"canonical_bson"`
			} `json:"valid"`
		}
		if err := json.Unmarshal(raw, &suite); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, c := range suite.Valid {
			tally.Run(t, path[strings.LastIndexByte(path, '/')+1:]+"/"+c.Description, func(t *testing.T) {
				b, err := hex.DecodeString(c.CanonicalBSON)
				if err != nil {
					t.Fatal(err)
				}
				v := bson.Raw(b).Lookup(suite.TestKey)
				ref, ok := refNumber(v)
				if !ok {
					t.Fatalf("no model for %v", v)
				}
				got := Key(v)
				if want, ok := ref.expectedKey(); ok {
					if got != want {
						t.Errorf("Key(%s) = %x, want %x", v, got, want)
					}
				} else if got[0] != tagDecimal {
					t.Errorf("Key(%s) = %x, want the decimal form", v, got)
				}
			})
		}
	}
}

// FuzzKey checks that Key never panics, is deterministic, and for two
// numbers (or two strings) is equal exactly when the values are.
func FuzzKey(f *testing.F) {
	add := func(a, b bson.RawValue) { f.Add(byte(a.Type), a.Value, byte(b.Type), b.Value) }
	seeds := []string{
		`1`, `{"$numberLong":"1"}`, `{"$numberDouble":"1.0"}`, `{"$numberDecimal":"1.0"}`,
		`{"$numberDouble":"-0.0"}`, `{"$numberDecimal":"-0E+5"}`, `{"$numberDouble":"NaN"}`, `{"$numberDecimal":"NaN"}`,
		`{"$numberDouble":"0.5"}`, `{"$numberDecimal":"0.5"}`, `{"$numberDouble":"0.1"}`, `{"$numberDecimal":"0.1"}`,
		`{"$numberDecimal":"9223372036854775808"}`, `{"$numberDouble":"9.223372036854775808E18"}`,
		`{"$numberDecimal":"1E-6176"}`, `{"$numberDecimal":"9999999999999999999999999999999999E6111"}`,
		`"a"`, `{"$symbol":"a"}`, `{"a":[1,{"b":2}]}`, `[1,2]`, `{"$binary":{"base64":"AQI=","subType":"02"}}`,
	}
	for i, s := range seeds {
		add(val(f, s), val(f, seeds[(i+1)%len(seeds)]))
		add(val(f, s), val(f, s))
	}
	f.Fuzz(func(t *testing.T, t1 byte, v1 []byte, t2 byte, v2 []byte) {
		a := bson.RawValue{Type: bson.Type(t1), Value: v1}
		b := bson.RawValue{Type: bson.Type(t2), Value: v2}
		ka, kb := Key(a), Key(b)
		if Key(a) != ka {
			t.Fatal("Key not deterministic")
		}
		if ra, ok := refNumber(a); ok {
			if rb, ok := refNumber(b); ok {
				if (ka == kb) != ra.equal(rb) {
					t.Fatalf("%v vs %v: keys equal %v, values equal %v", a, b, ka == kb, ra.equal(rb))
				}
			}
		}
		sa, okA := a.StringValueOK()
		if !okA {
			sa, okA = a.SymbolOK()
		}
		sb, okB := b.StringValueOK()
		if !okB {
			sb, okB = b.SymbolOK()
		}
		if okA && okB && (ka == kb) != (sa == sb) {
			t.Fatalf("%q vs %q: keys equal %v", sa, sb, ka == kb)
		}
	})
}
