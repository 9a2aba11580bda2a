package store

import (
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

func TestFormatValue(t *testing.T) {
	cases := []struct{ js, want string }{
		{`1`, `1`},
		{`{"$numberLong": "-5"}`, `-5`},
		{`{"$numberDouble": "1.0"}`, `1.0`},
		{`{"$numberDouble": "2.5"}`, `2.5`},
		{`{"$numberDouble": "1e300"}`, `1e+300`},
		{`{"$numberDouble": "NaN"}`, `nan.0`},
		{`{"$numberDouble": "-Infinity"}`, `-inf.0`},
		{`{"$numberDecimal": "1.10"}`, `NumberDecimal("1.10")`},
		{`"a\"b"`, `"a\"b"`},
		{`{"$symbol": "s"}`, `"s"`},
		{`{"$oid": "000102030405060708090a0b"}`, `ObjectId('000102030405060708090a0b')`},
		{`true`, `true`},
		{`{"$date": {"$numberLong": "12"}}`, `new Date(12)`},
		{`{"$timestamp": {"t": 1, "i": 2}}`, `Timestamp(1, 2)`},
		{`null`, `null`},
		{`{"$undefined": true}`, `undefined`},
		{`{"$minKey": 1}`, `MinKey`},
		{`{"$maxKey": 1}`, `MaxKey`},
		{`{"$regularExpression": {"pattern": "^a", "options": "i"}}`, `/^a/i`},
		{`{"$binary": {"base64": "AQI=", "subType": "04"}}`, `BinData(4, 0102)`},
		{`{"$code": "f()"}`, `JavaScript("f()")`},
		{`{"$code": "f()", "$scope": {}}`, `CodeWScope("f()")`},
		{`{"$dbPointer": {"$ref": "db.c", "$id": {"$oid": "000102030405060708090a0b"}}}`, `DBRef("db.c", '000102030405060708090a0b')`},
		{`{}`, `{}`},
		{`[]`, `[]`},
		{`{"a": [1, {"b": null}]}`, `{ a: [ 1, { b: null } ] }`},
	}
	for _, c := range cases {
		if got := string(formatValue(nil, val(t, c.js), 0)); got != c.want {
			t.Errorf("formatValue(%s) = %s, want %s", c.js, got, c.want)
		}
	}
	// Long values are cut short rather than growing without bound.
	long := doc(t, `{"a": "`+strings.Repeat("x", 5000)+`", "b": 1, "c": 2}`)
	if got := formatDoc(nil, long, 0); len(got) > 2*maxFormatLen+100 || !strings.HasSuffix(string(got), "... }") {
		t.Errorf("long document formatted to %d bytes: ...%s", len(got), got[len(got)-20:])
	}
	if got := string(formatValue(nil, bson.RawValue{Type: 0x42}, 0)); got != "<type 66>" {
		t.Errorf("unknown type: %s", got)
	}
}
