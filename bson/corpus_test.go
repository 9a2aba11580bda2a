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
