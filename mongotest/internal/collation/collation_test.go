package collation

import (
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

func doc(t *testing.T, js string) bson.RawValue {
	t.Helper()
	d, err := bson.ParseExtJSON([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: d}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		spec string
		code int32
	}{
		{`{}`, 40414},
		{`{"strength": 2}`, 40414},
		{`{"locale": "en", "foo": 1}`, 40415},
		{`{"locale": 1}`, mongoerr.TypeMismatch},
		{`{"locale": "en", "strength": "2"}`, mongoerr.TypeMismatch},
		{`{"locale": "en", "strength": 6}`, 51024},
		{`{"locale": "en", "strength": -1}`, 51024},
		{`{"locale": "en", "caseLevel": 1}`, mongoerr.TypeMismatch},
		{`{"locale": "en", "caseFirst": "sideways"}`, mongoerr.BadValue},
		{`{"locale": ""}`, mongoerr.BadValue},
		{`{"locale": "xx_bogus"}`, mongoerr.BadValue},
		{`{"locale": "EN"}`, mongoerr.BadValue},
		{`{"locale": "en", "strength": 1, "backwards": true}`, mongoerr.BadValue},
		{`{"locale": "en", "strength": 2, "caseFirst": "upper"}`, mongoerr.BadValue},
		{`{"locale": "en", "caseFirst": "upper"}`, mongoerr.NotImplemented},
		{`{"locale": "en", "alternate": "shifted"}`, mongoerr.NotImplemented},
		{`{"locale": "de@collation=phonebook"}`, mongoerr.NotImplemented},
		{`{"locale": "en", "version": "1.0"}`, mongoerr.IncompatibleCollationVersion},
	} {
		_, err := Parse(doc(t, tc.spec))
		e := mongoerr.As(err)
		if e == nil || e.Code != tc.code {
			t.Errorf("%s: got %v, want code %d", tc.spec, err, tc.code)
		}
	}
	if c, err := Parse(doc(t, `{"locale": "simple"}`)); c != nil || err != nil {
		t.Errorf("simple: %v %v", c, err)
	}
}

func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		spec, a, b string
		want       int
	}{
		{`{"locale": "en_US", "strength": 2}`, "ping", "PING", 0},
		{`{"locale": "en_US", "strength": 2}`, "café", "cafe", 1},
		{`{"locale": "en_US", "strength": 1}`, "café", "CAFE", 0},
		{`{"locale": "en_US"}`, "ping", "PING", -1},
		{`{"locale": "en_US"}`, "a", "B", -1},
		{`{"locale": "fr", "strength": 1}`, "élève", "ELEVE", 0},
		{`{"locale": "en", "numericOrdering": true}`, "10", "9", 1},
		{`{"locale": "en"}`, "10", "9", -1},
		{`{"locale": "en_US", "strength": 1, "caseLevel": true}`, "a", "A", -1},
	} {
		c, err := Parse(doc(t, tc.spec))
		if err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		if got := c.CompareString(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: compare(%q, %q) = %d, want %d", tc.spec, tc.a, tc.b, got, tc.want)
		}
	}
}

func TestSpec(t *testing.T) {
	c, err := Parse(doc(t, `{"locale": "en_US", "strength": 2}`))
	if err != nil {
		t.Fatal(err)
	}
	js, _ := bson.AppendExtJSON(nil, c.Spec(), false)
	want := `{"locale":"en_US","caseLevel":false,"caseFirst":"off","strength":2,"numericOrdering":false,"alternate":"non-ignorable","maxVariable":"punct","normalization":false,"backwards":false,"version":"57.1"}`
	if string(js) != want {
		t.Errorf("spec %s, want %s", js, want)
	}
}

// FuzzParse: no collation document, however malformed, panics Parse, and
// a parsed collation compares and lists without panicking.
func FuzzParse(f *testing.F) {
	for _, js := range []string{`{"locale": "en_US", "strength": 2}`, `{"locale": "simple"}`, `{"locale": "fr", "backwards": true, "numericOrdering": true}`, `{}`} {
		d, err := bson.ParseExtJSON([]byte(js))
		if err != nil {
			f.Fatal(err)
		}
		f.Add([]byte(d), "a", "B")
	}
	f.Fuzz(func(t *testing.T, spec []byte, a, b string) {
		c, err := Parse(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: spec})
		if err != nil {
			if mongoerr.As(err) == nil {
				t.Fatalf("error %v is not a mongoerr", err)
			}
			return
		}
		if c.CompareString(a, b) != -c.CompareString(b, a) {
			t.Fatalf("compare(%q, %q) is not antisymmetric", a, b)
		}
		_ = c.Spec()
		_ = c.SortKey(a)
	})
}
