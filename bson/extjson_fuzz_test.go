package bson

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/internal/spectest"
)

// ejCorpusSeeds reads the BSON corpus at fuzz time, when the specifications
// are present, and returns its Extended JSON strings and its BSON byte
// strings. Nothing from it is committed.
func ejCorpusSeeds() (texts []string, docs [][]byte) {
	root, ok := spectest.Root()
	if !ok {
		return nil, nil
	}
	paths, _ := filepath.Glob(filepath.Join(root, "bson-corpus", "tests", "*.json"))
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		var f corpusFile
		if json.Unmarshal(data, &f) != nil {
			continue
		}
		addHex := func(s string) {
			if b, err := hex.DecodeString(s); err == nil && len(b) > 0 {
				docs = append(docs, b)
			}
		}
		for _, v := range f.Valid {
			for _, s := range []string{v.CanonicalExtJSON, v.RelaxedExtJSON, v.DegenerateExtJSON, v.ConvertedExtJSON} {
				if s != "" {
					texts = append(texts, s)
				}
			}
			addHex(v.CanonicalBSON)
			addHex(v.DegenerateBSON)
			addHex(v.ConvertedBSON)
		}
		for _, d := range f.DecodeErrors {
			addHex(d.BSON)
		}
		for _, p := range f.ParseErrors {
			if f.BSONType == "0x13" {
				q, _ := json.Marshal(p.String)
				texts = append(texts, `{"d":{"$numberDecimal":`+string(q)+`}}`)
			} else {
				texts = append(texts, p.String)
			}
		}
	}
	return texts, docs
}

var ejLiteralSeeds = []string{
	`{}`,
	`{"a":1,"b":-2.5e-3,"c":"x\u00e9\ud83d\ude00\n","d":[true,false,null],"e":{"f":9223372036854775808}}`,
	`{"a":{"$regex":"^a","$options":"im"},"b":{"$type":"80","$binary":"AQID"},"c":{"$uuid":"73ffd264-44b3-4c69-90e8-e7d1dfc035d4"}}`,
	`{"a":{"$scope":{"x":{"$code":"y","$scope":{}}},"$code":"f"},"b":{"$dbPointer":{"$ref":"n","$id":{"$oid":"56e1fc72e0c917e9c4714161"}}}}`,
	`{"a":{"$date":"2012-12-24T12:15:30.501+01:30"},"b":{"$date":{"$numberLong":"-1"}},"c":{"$timestamp":{"t":1,"i":2}}}`,
	`{"q":{"$regex":{"$regularExpression":{"pattern":"foo*","options":""}},"$options":"ix"},"z":{"$type":2}}`,
	`{"a":{"$numberDecimal":"-1.50E+3"},"b":{"$numberDouble":"-0.0"},"c":{"$minKey":1},"d":{"$undefined":true}}`,
}

func FuzzParseExtJSON(f *testing.F) {
	for _, s := range ejLiteralSeeds {
		f.Add([]byte(s))
	}
	texts, _ := ejCorpusSeeds()
	for _, s := range texts {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := ParseExtJSON(data)
		out, aerr := AppendParseExtJSON([]byte("pre"), data)
		if (err == nil) != (aerr == nil) {
			t.Fatalf("ParseExtJSON error %v, AppendParseExtJSON error %v", err, aerr)
		}
		if err != nil {
			var e *ExtJSONError
			if !errors.As(err, &e) {
				t.Fatalf("error %v is %T, want *ExtJSONError", err, err)
			}
			if e.Offset < 0 || e.Offset > len(data) {
				t.Fatalf("error offset %d outside the %d-byte input: %v", e.Offset, len(data), err)
			}
			if doc != nil || string(out) != "pre" {
				t.Fatalf("failed parse left output: %X / %q", []byte(doc), out)
			}
			return
		}
		if !bytes.Equal(out[3:], doc) {
			t.Fatalf("AppendParseExtJSON and ParseExtJSON disagree")
		}
		if err := doc.Validate(); err != nil {
			t.Fatalf("parsed BSON is invalid: %v\ninput %q\nbson %X", err, data, []byte(doc))
		}
		// The scanner is strict: anything it accepts is valid JSON.
		if !json.Valid(data) {
			t.Fatalf("accepted input that encoding/json rejects: %q", data)
		}
		// Canonical output re-parses to the same bytes: parsing is
		// lossless for every value it can produce.
		canon, err := AppendExtJSON(nil, doc, true)
		if err != nil {
			t.Fatalf("AppendExtJSON(canonical) of parsed BSON: %v", err)
		}
		again, err := ParseExtJSON(canon)
		if err != nil {
			t.Fatalf("canonical output does not parse: %v\n%s", err, canon)
		}
		if !bytes.Equal(again, doc) {
			t.Fatalf("canonical round trip changed the BSON\ninput %q\ncanonical %s\n first %X\nsecond %X", data, canon, []byte(doc), []byte(again))
		}
		// Relaxed output is stable: relaxed -> BSON -> relaxed.
		relax, err := AppendExtJSON(nil, doc, false)
		if err != nil {
			t.Fatalf("AppendExtJSON(relaxed) of parsed BSON: %v", err)
		}
		rdoc, err := ParseExtJSON(relax)
		if err != nil {
			t.Fatalf("relaxed output does not parse: %v\n%s", err, relax)
		}
		relax2, err := AppendExtJSON(nil, rdoc, false)
		if err != nil || !bytes.Equal(relax2, relax) {
			t.Fatalf("relaxed round trip unstable (%v)\n first %s\nsecond %s", err, relax, relax2)
		}
		if doc.String() != string(relax) {
			t.Fatalf("Raw.String differs from relaxed output")
		}
	})
}

// ejNestedDollarKey reports whether any document below the top level has a
// key starting with '$'. Extended JSON has no escape for such keys, so the
// text of {"a": {"$oid": "..."}} (a document) and of an ObjectID value are
// the same, and parsing it back cannot give the document (the
// specification's "Restrictions and limitations").
func ejNestedDollarKey(doc []byte, top bool) bool {
	it := RawIter{doc: doc}
	for it.Next() {
		if !top && len(it.key) > 0 && it.key[0] == '$' {
			return true
		}
		v := it.val
		switch v.Type {
		case TypeEmbeddedDocument, TypeArray:
			if ejNestedDollarKey(v.Value, false) {
				return true
			}
		case TypeCodeWithScope:
			if _, scope, ok := v.CodeWithScopeOK(); ok && ejNestedDollarKey(scope, false) {
				return true
			}
		}
	}
	return false
}

// ejNormalizeBSON re-encodes valid BSON the way a parse of its canonical
// Extended JSON must come back: array keys renumbered, regex options
// sorted, every NaN double the quiet NaN, every Decimal128 in the form its
// string parses to (NaN payloads and non-canonical encodings are lossy, as
// the corpus says).
func ejNormalizeBSON(dst, doc []byte, array bool) []byte {
	start, dst := AppendDocumentStart(dst)
	it := RawIter{doc: doc}
	for i := 0; it.Next(); i++ {
		key := string(it.key)
		if array {
			key = ArrayKey(i)
		}
		v := it.val
		switch v.Type {
		case TypeEmbeddedDocument, TypeArray:
			dst = AppendHeader(dst, v.Type, key)
			dst = ejNormalizeBSON(dst, v.Value, v.Type == TypeArray)
		case TypeRegex:
			p, o := v.Regex()
			dst = AppendRegexElement(dst, key, p, o)
		case TypeDouble:
			if math.IsNaN(v.Double()) {
				dst = AppendDoubleElement(dst, key, math.Float64frombits(0x7FF8000000000000))
			} else {
				dst = AppendValueElement(dst, key, v)
			}
		case TypeDecimal128:
			d, err := ParseDecimal128(v.Decimal128().String())
			if err != nil {
				panic("Decimal128.String output does not parse: " + err.Error())
			}
			dst = AppendDecimal128Element(dst, key, d)
		case TypeCodeWithScope:
			code, scope := v.CodeWithScope()
			dst = AppendCodeWithScopeElement(dst, key, code, ejNormalizeBSON(nil, scope, false))
		default:
			dst = AppendValueElement(dst, key, v)
		}
	}
	dst, _ = AppendDocumentEnd(dst, start)
	return dst
}

func FuzzExtJSONFromBSON(f *testing.F) {
	for _, s := range ejLiteralSeeds {
		if doc, err := ParseExtJSON([]byte(s)); err == nil {
			f.Add([]byte(doc))
		}
	}
	f.Add([]byte{5, 0, 0, 0, 0})
	_, docs := ejCorpusSeeds()
	for _, d := range docs {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		canon, cerr := AppendExtJSON([]byte("pre"), data, true)
		relax, rerr := AppendExtJSON([]byte("pre"), data, false)
		verr := Raw(data).Validate()
		// The writer checks exactly what Validate checks.
		if (cerr == nil) != (verr == nil) || (rerr == nil) != (verr == nil) {
			t.Fatalf("AppendExtJSON errors (%v, %v) disagree with Validate (%v) on %X", cerr, rerr, verr, data)
		}
		// The String methods take any bytes; whatever they return that is
		// not an error marker is JSON.
		if len(data) > 0 {
			if vs := (RawValue{Type: Type(data[0]), Value: data[1:]}).String(); !strings.HasPrefix(vs, "<invalid BSON: ") && !json.Valid([]byte(vs)) {
				t.Fatalf("RawValue.String() = %q is not JSON", vs)
			}
		}
		if es := RawElement(data).String(); !strings.HasPrefix(es, "<invalid BSON: ") && !json.Valid([]byte("{"+es+"}")) {
			t.Fatalf("RawElement.String() = %q is not a JSON member", es)
		}
		s := Raw(data).String()
		if cerr != nil {
			var de *DecodeError
			if !errors.As(cerr, &de) || !errors.As(rerr, &de) {
				t.Fatalf("errors %v / %v, want *DecodeError", cerr, rerr)
			}
			if string(canon) != "pre" || string(relax) != "pre" {
				t.Fatalf("failed write left output")
			}
			if !strings.HasPrefix(s, "<invalid BSON: ") {
				t.Fatalf("Raw.String of invalid BSON = %q", s)
			}
			return
		}
		canon, relax = canon[3:], relax[3:]
		if s != string(relax) {
			t.Fatalf("Raw.String differs from relaxed output")
		}
		if !json.Valid(canon) || !json.Valid(relax) {
			t.Fatalf("output is not valid JSON:\n%s\n%s", canon, relax)
		}
		ambiguous := ejNestedDollarKey(data, true)
		doc, err := ParseExtJSON(canon)
		if err != nil {
			if ambiguous {
				return
			}
			t.Fatalf("canonical output does not parse: %v\n%s", err, canon)
		}
		if err := doc.Validate(); err != nil {
			t.Fatalf("re-parsed BSON is invalid: %v", err)
		}
		if ambiguous {
			return
		}
		if want := ejNormalizeBSON(nil, data, false); !bytes.Equal(doc, want) {
			t.Fatalf("canonical round trip\ninput %X\njson  %s\n got %X\nwant %X", data, canon, []byte(doc), want)
		}
		canon2, err := AppendExtJSON(nil, doc, true)
		if err != nil || !bytes.Equal(canon2, canon) {
			t.Fatalf("canonical output is not a fixed point (%v)\n%s\n%s", err, canon, canon2)
		}
		rdoc, err := ParseExtJSON(relax)
		if err != nil {
			t.Fatalf("relaxed output does not parse: %v\n%s", err, relax)
		}
		relax2, err := AppendExtJSON(nil, rdoc, false)
		if err != nil || !bytes.Equal(relax2, relax) {
			t.Fatalf("relaxed round trip unstable (%v)\n first %s\nsecond %s", err, relax, relax2)
		}
	})
}
