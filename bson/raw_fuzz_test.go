package bson

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mongoscope/mongoscope/internal/spectest"
)

// addCorpusSeeds seeds a fuzz target with every canonical, degenerate and
// decode-error BSON document of the corpus, read from the specifications at
// fuzz time (never copied into the repository).
func addCorpusSeeds(f *testing.F) {
	root, ok := spectest.Root()
	if !ok {
		return
	}
	files, _ := filepath.Glob(filepath.Join(root, "bson-corpus", "tests", "*.json"))
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		var cf corpusFile
		if json.Unmarshal(data, &cf) != nil {
			continue
		}
		for _, c := range cf.Valid {
			for _, h := range []string{c.CanonicalBSON, c.DegenerateBSON} {
				if b, err := hex.DecodeString(h); err == nil && len(b) > 0 {
					f.Add(b)
				}
			}
		}
		for _, c := range cf.DecodeErrors {
			if b, err := hex.DecodeString(c.BSON); err == nil {
				f.Add(b)
			}
		}
	}
}

// canonicalBSON reports whether a valid document is in the form the encoder
// writes: array keys "0", "1", ... in order and regex options sorted. Only
// such documents can re-encode to identical bytes.
func canonicalBSON(doc Raw, array bool) bool {
	it := doc.Iter()
	for i := 0; it.Next(); i++ {
		if array && string(it.KeyBytes()) != ArrayKey(i) {
			return false
		}
		v := it.Value()
		switch v.Type {
		case TypeEmbeddedDocument:
			if !canonicalBSON(v.Document(), false) {
				return false
			}
		case TypeArray:
			if !canonicalBSON(v.Array(), true) {
				return false
			}
		case TypeCodeWithScope:
			if _, scope, ok := v.CodeWithScopeOK(); !ok || !canonicalBSON(scope, false) {
				return false
			}
		case TypeRegex:
			if _, opts, ok := v.RegexOK(); !ok || !sortedOptions(opts) {
				return false
			}
		}
	}
	return it.Err() == nil
}

// exerciseViews walks every value through every accessor; none may panic.
func exerciseViews(doc Raw, depth int) {
	if depth > 8 {
		return
	}
	it := doc.Iter()
	for it.Next() {
		v := it.Value()
		_ = it.Element().Key()
		_, _ = it.Element().ValueErr()
		v.Double()
		v.StringValue()
		v.Binary()
		v.ObjectID()
		v.Boolean()
		v.DateTime()
		v.Regex()
		v.DBPointer()
		v.JavaScript()
		v.Symbol()
		v.Int32()
		v.Timestamp()
		v.Int64()
		v.Decimal128()
		v.AsInt64OK()
		_ = v.Validate()
		if sub, ok := v.DocumentOK(); ok {
			exerciseViews(sub, depth+1)
		}
		if sub, ok := v.ArrayOK(); ok {
			exerciseViews(sub, depth+1)
		}
		if _, scope, ok := v.CodeWithScopeOK(); ok {
			exerciseViews(scope, depth+1)
		}
	}
	_, _ = doc.LookupErr("a", "b")
	_, _ = doc.LookupPath("0.a.1")
	_, _ = doc.Index(2)
}

// validatorPaths returns the verdicts of the validator's fast path and of
// its detailed path on a top-level document; they must always agree.
func validatorPaths(b []byte) (fast, detailed bool) {
	var f validator
	n, ok := f.scanDoc(b, 0, 1, false)
	var d validator
	m, err := d.validateDoc(b, 0, 0, 1, false)
	return ok && n == len(b), err == nil && m == len(b)
}

// FuzzRawDecode: no panic on any bytes; Validate, DecodeD and DecodeM agree;
// a valid document re-encodes to a fixpoint, and to identical bytes when it
// was in canonical form.
func FuzzRawDecode(f *testing.F) {
	addCorpusSeeds(f)
	f.Add([]byte{5, 0, 0, 0, 0})
	f.Add(nested(4, true))
	f.Fuzz(func(t *testing.T, b []byte) {
		exerciseViews(Raw(b), 0)
		if fast, detailed := validatorPaths(b); fast != detailed {
			t.Fatalf("validator fast path = %v, detailed path = %v", fast, detailed)
		}
		verr := Raw(b).Validate()
		d, derr := DecodeD(b)
		_, merr := DecodeM(b)
		if (verr == nil) != (derr == nil) || (verr == nil) != (merr == nil) {
			t.Fatalf("Validate: %v, DecodeD: %v, DecodeM: %v", verr, derr, merr)
		}
		if verr != nil {
			return
		}
		out, err := Marshal(d)
		if err != nil {
			t.Fatalf("Marshal(DecodeD(valid)): %v", err)
		}
		if err := Raw(out).Validate(); err != nil {
			t.Fatalf("re-encoded document is invalid: %v", err)
		}
		d2, err := DecodeD(out)
		if err != nil {
			t.Fatalf("DecodeD(re-encoded): %v", err)
		}
		out2, err := Marshal(d2)
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("re-encoding is not a fixpoint: %X vs %X (%v)", out, out2, err)
		}
		if canonicalBSON(b, false) && !bytes.Equal(out, b) {
			t.Fatalf("canonical document changed on round trip:\n in %X\nout %X", b, out)
		}
	})
}
