package bson

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mongoscope/mongoscope/internal/spectest"
)

// corpusFile is one file of the BSON corpus (bson-corpus/tests/*.json).
type corpusFile struct {
	Description string `json:"description"`
	BSONType    string `json:"bson_type"`
	TestKey     string `json:"test_key"`
	Deprecated  bool   `json:"deprecated"`
	Valid       []struct {
		Description       string `json:"description"`
		CanonicalBSON     string `json:"canonical_bson"`
		CanonicalExtJSON  string `json:"canonical_extjson"`
		RelaxedExtJSON    string `json:"relaxed_extjson"`
		DegenerateBSON    string `json:"degenerate_bson"`
		DegenerateExtJSON string `json:"degenerate_extjson"`
		ConvertedBSON     string `json:"converted_bson"`
		ConvertedExtJSON  string `json:"converted_extjson"`
		Lossy             bool   `json:"lossy"`
	} `json:"valid"`
	DecodeErrors []struct {
		Description string `json:"description"`
		BSON        string `json:"bson"`
	} `json:"decodeErrors"`
	ParseErrors []struct {
		Description string `json:"description"`
		String      string `json:"string"`
	} `json:"parseErrors"`
}

func loadCorpus(t *testing.T) map[string]corpusFile {
	t.Helper()
	out := map[string]corpusFile{}
	for _, path := range spectest.Files(t, "*.json", "bson-corpus", "tests") {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var f corpusFile
		if err := json.Unmarshal(data, &f); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out[filepath.Base(path)] = f
	}
	return out
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex in corpus: %v", err)
	}
	return b
}

// TestCorpusNativeBSON checks the corpus assertions that go through the
// native representation (D): native_to_bson(bson_to_native(cB)) = cB and
// native_to_bson(bson_to_native(dB)) = cB, and that every decodeErrors case
// fails both Validate and DecodeD with a *DecodeError.
func TestCorpusNativeBSON(t *testing.T) {
	var valid, degenerate, decodeErrs int
	for name, f := range loadCorpus(t) {
		t.Run(name, func(t *testing.T) {
			for _, c := range f.Valid {
				cB := mustHex(t, c.CanonicalBSON)
				if err := Raw(cB).Validate(); err != nil {
					t.Errorf("%s: Validate(cB): %v", c.Description, err)
					continue
				}
				d, err := DecodeD(cB)
				if err != nil {
					t.Errorf("%s: DecodeD(cB): %v", c.Description, err)
					continue
				}
				got, err := Marshal(d)
				if err != nil {
					t.Errorf("%s: Marshal(DecodeD(cB)): %v", c.Description, err)
					continue
				}
				if !bytes.Equal(got, cB) {
					t.Errorf("%s: native round trip\n got %X\nwant %X", c.Description, got, cB)
					continue
				}
				valid++
				if c.DegenerateBSON != "" {
					dB := mustHex(t, c.DegenerateBSON)
					d, err := DecodeD(dB)
					if err != nil {
						t.Errorf("%s: DecodeD(dB): %v", c.Description, err)
						continue
					}
					got, err := Marshal(d)
					if err != nil || !bytes.Equal(got, cB) {
						t.Errorf("%s: dB -> native -> BSON\n got %X (%v)\nwant %X", c.Description, got, err, cB)
						continue
					}
					degenerate++
				}
			}
			for _, c := range f.DecodeErrors {
				b := mustHex(t, c.BSON)
				var de *DecodeError
				if err := Raw(b).Validate(); !errors.As(err, &de) {
					t.Errorf("%s: Validate: got %v, want a *DecodeError", c.Description, err)
					continue
				}
				if _, err := DecodeD(b); !errors.As(err, &de) {
					t.Errorf("%s: DecodeD: got %v, want a *DecodeError", c.Description, err)
					continue
				}
				decodeErrs++
			}
		})
	}
	t.Logf("bson-corpus native: %d valid cB round trips, %d dB normalisations, %d decodeErrors rejected", valid, degenerate, decodeErrs)
}

// TestCorpusNativeExtJSON checks the corpus assertions for a codec with a
// native representation (D), through MarshalExtJSON and UnmarshalExtJSON:
//
//	native_to_canonical_extended_json(bson_to_native(cB)) = cEJ
//	native_to_relaxed_extended_json(bson_to_native(cB)) = rEJ
//	native_to_canonical_extended_json(json_to_native(cEJ)) = cEJ
//	native_to_bson(json_to_native(cEJ)) = cB, unless lossy
//	native_to_canonical_extended_json(json_to_native(dEJ)) = cEJ
//	native_to_bson(json_to_native(dEJ)) = cB, unless lossy
//	native_to_relaxed_extended_json(json_to_native(rEJ)) = rEJ
//
// and that every parseErrors case fails UnmarshalExtJSON (decimal128 cases
// wrap the string as {"d": {"$numberDecimal": s}}).
func TestCorpusNativeExtJSON(t *testing.T) {
	var assertions, lossySkips, parseErrs int
	for name, f := range loadCorpus(t) {
		t.Run(name, func(t *testing.T) {
			toJSON := func(desc, what string, v D, canonical bool, want string) {
				t.Helper()
				got, err := MarshalExtJSON(v, canonical)
				if err != nil {
					t.Errorf("%s: %s: %v", desc, what, err)
					return
				}
				if ejNormalizeJSON(t, string(got)) != ejNormalizeJSON(t, want) {
					t.Errorf("%s: %s\n got %s\nwant %s", desc, what, got, want)
					return
				}
				assertions++
			}
			fromJSON := func(desc, what, js string) (D, bool) {
				t.Helper()
				var d D
				if err := UnmarshalExtJSON([]byte(js), &d); err != nil {
					t.Errorf("%s: %s: %v", desc, what, err)
					return nil, false
				}
				return d, true
			}
			toBSON := func(desc, what string, d D, want []byte) {
				t.Helper()
				got, err := Marshal(d)
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("%s: %s\n got %X (%v)\nwant %X", desc, what, got, err, want)
					return
				}
				assertions++
			}
			for _, c := range f.Valid {
				cB := mustHex(t, c.CanonicalBSON)
				native, err := DecodeD(cB)
				if err != nil {
					t.Errorf("%s: %v", c.Description, err)
					continue
				}
				toJSON(c.Description, "cB -> native -> cEJ", native, true, c.CanonicalExtJSON)
				if c.RelaxedExtJSON != "" {
					toJSON(c.Description, "cB -> native -> rEJ", native, false, c.RelaxedExtJSON)
				}
				if d, ok := fromJSON(c.Description, "cEJ -> native", c.CanonicalExtJSON); ok {
					toJSON(c.Description, "cEJ -> native -> cEJ", d, true, c.CanonicalExtJSON)
					if c.Lossy {
						lossySkips++ // the corpus: cEJ -> cB is not asserted for lossy cases
					} else {
						toBSON(c.Description, "cEJ -> native -> cB", d, cB)
					}
				}
				if c.DegenerateExtJSON != "" {
					if d, ok := fromJSON(c.Description, "dEJ -> native", c.DegenerateExtJSON); ok {
						toJSON(c.Description, "dEJ -> native -> cEJ", d, true, c.CanonicalExtJSON)
						if c.Lossy {
							lossySkips++
						} else {
							toBSON(c.Description, "dEJ -> native -> cB", d, cB)
						}
					}
				}
				if c.RelaxedExtJSON != "" {
					if d, ok := fromJSON(c.Description, "rEJ -> native", c.RelaxedExtJSON); ok {
						toJSON(c.Description, "rEJ -> native -> rEJ", d, false, c.RelaxedExtJSON)
					}
				}
			}
			for _, c := range f.ParseErrors {
				input := c.String
				if f.BSONType == "0x13" {
					q, _ := json.Marshal(c.String)
					input = `{"d": {"$numberDecimal": ` + string(q) + `}}`
				}
				var d D
				if err := UnmarshalExtJSON([]byte(input), &d); err == nil {
					t.Errorf("%s: UnmarshalExtJSON(%s) succeeded: %v", c.Description, input, d)
					continue
				}
				parseErrs++
			}
		})
	}
	t.Logf("bson-corpus native Extended JSON: %d assertions passed, %d lossy JSON->BSON checks not asserted (per the corpus spec), %d parseErrors rejected", assertions, lossySkips, parseErrs)
}
