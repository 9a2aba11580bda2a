package store

import (
	"errors"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// doc parses Extended JSON into a document.
func doc(t testing.TB, js string) bson.Raw {
	t.Helper()
	d, err := bson.ParseExtJSON([]byte(js))
	if err != nil {
		t.Fatalf("ParseExtJSON(%s): %v", js, err)
	}
	return d
}

// val parses one Extended JSON value.
func val(t testing.TB, js string) bson.RawValue {
	t.Helper()
	return doc(t, `{"v": `+js+`}`).Lookup("v")
}

// code returns err's mongoerr code, or 0 when err is nil or not one.
func code(err error) int32 {
	var e *mongoerr.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// extJSON renders a document as relaxed Extended JSON for comparisons.
func extJSON(t testing.TB, d bson.Raw) string {
	t.Helper()
	b, err := bson.AppendExtJSON(nil, d, false)
	if err != nil {
		t.Fatalf("AppendExtJSON: %v", err)
	}
	return string(b)
}

// ids returns the _id values of the collection's documents in natural
// order, formatted as in mongod's messages.
func ids(c *Collection) []string {
	var out []string
	c.Scan(func(d bson.Raw) bool {
		out = append(out, string(formatValue(nil, d.Lookup("_id"), 0)))
		return true
	})
	return out
}
