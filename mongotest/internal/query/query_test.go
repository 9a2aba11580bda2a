package query

import (
	"cmp"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/collation"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// doc parses relaxed or canonical Extended JSON.
func doc(t testing.TB, s string) bson.Raw {
	t.Helper()
	r, err := bson.ParseExtJSON([]byte(s))
	if err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return r
}

// val parses {"v": <s>} and returns the value.
func val(t testing.TB, s string) bson.RawValue {
	t.Helper()
	return doc(t, `{"v": `+s+`}`).Lookup("v")
}

func TestCompare(t *testing.T) {
	// Each row is in strictly ascending order; all pairs are checked.
	ascending := [][]string{
		{`{"$minKey": 1}`, `null`, `{"$numberDouble": "-Infinity"}`, `{"$numberLong": "-9223372036854775808"}`, `-2.5`, `-2`, `0`, `0.5`, `1`, `{"$numberLong": "9007199254740993"}`, `9.3e18`, `{"$numberDouble": "Infinity"}`,
			`""`, `"a"`, `"ab"`, `"b"`, `{}`, `{"a": 1}`, `{"a": 2}`, `{"b": 1}`, `[]`, `[1]`, `[1, 2]`, `[2]`,
			`{"$binary": {"base64": "AQ==", "subType": "01"}}`, `{"$binary": {"base64": "AQI=", "subType": "00"}}`,
			`{"$oid": "000000000000000000000001"}`, `{"$oid": "100000000000000000000000"}`, `false`, `true`,
			`{"$date": {"$numberLong": "-5"}}`, `{"$date": {"$numberLong": "5"}}`, `{"$timestamp": {"t": 1, "i": 9}}`, `{"$timestamp": {"t": 2, "i": 0}}`,
			`{"$regularExpression": {"pattern": "a", "options": ""}}`, `{"$regularExpression": {"pattern": "a", "options": "i"}}`, `{"$maxKey": 1}`},
		{`{"$numberDouble": "NaN"}`, `{"$numberDecimal": "-Infinity"}`, `{"$numberDecimal": "-1.5"}`, `-1`, `{"$numberDecimal": "0.1"}`, `0.2`, `{"$numberDecimal": "1E+400"}`, `{"$numberDouble": "Infinity"}`},
		{`{"$numberDecimal": "NaN"}`, `{"$numberLong": "9007199254740992"}`, `{"$numberDecimal": "9007199254740992.5"}`, `{"$numberLong": "9007199254740993"}`},
		// Elements compare by type bracket before name, as in mongod.
		{`{"a": 1, "b": 1}`, `{"a": 1, "c": 0}`, `{"a": 1, "b": "x"}`},
		{`{"a": null}`, `{"a": 0}`},
	}
	for _, row := range ascending {
		vals := make([]bson.RawValue, len(row))
		for i, s := range row {
			vals[i] = val(t, s)
		}
		for i := range vals {
			for j := range vals {
				want := cmp.Compare(i, j)
				if got := Compare(vals[i], vals[j]); got != want {
					t.Errorf("Compare(%s, %s) = %d, want %d", row[i], row[j], got, want)
				}
			}
		}
	}
	equal := [][2]string{
		{`1`, `1.0`}, {`1`, `{"$numberLong": "1"}`}, {`1`, `{"$numberDecimal": "1.000"}`}, {`-0.0`, `0`},
		{`{"$numberDouble": "NaN"}`, `{"$numberDecimal": "NaN"}`}, {`{"$numberDouble": "Infinity"}`, `{"$numberDecimal": "Infinity"}`},
		{`{"$symbol": "a"}`, `"a"`}, {`{"a": [1, {"b": 2}]}`, `{"a": [1.0, {"b": {"$numberLong": "2"}}]}`},
		{`{"$numberDecimal": "0.5"}`, `0.5`}, {`{"$undefined": true}`, `{"$undefined": true}`},
	}
	for _, p := range equal {
		if !Equal(val(t, p[0]), val(t, p[1])) || !Equal(val(t, p[1]), val(t, p[0])) {
			t.Errorf("Equal(%s, %s) = false", p[0], p[1])
		}
	}
	// Undefined sorts below null, and neither equals missing... except
	// undefined, which shares the lowest bracket with a missing value.
	if Compare(val(t, `{"$undefined": true}`), val(t, `null`)) >= 0 {
		t.Error("undefined should sort below null")
	}
	// Malformed values order deterministically without panicking.
	bad := []bson.RawValue{{Type: bson.TypeDouble, Value: []byte{1}}, {Type: bson.TypeString, Value: []byte{9, 0, 0, 0, 'a'}},
		{Type: bson.TypeBinary, Value: []byte{1}}, {Type: bson.TypeEmbeddedDocument, Value: []byte{5}}, {Type: 0x55}}
	for _, a := range bad {
		for _, b := range bad {
			if Compare(a, b) != -Compare(b, a) {
				t.Errorf("Compare on malformed values is not antisymmetric: %v %v", a, b)
			}
		}
	}
}

func TestCompareDoesNotAllocate(t *testing.T) {
	a, b := val(t, `{"x": [1, "a", {"y": 2.5}]}`), val(t, `{"x": [1, "a", {"y": 3}]}`)
	if n := testing.AllocsPerRun(100, func() { Compare(a, b) }); n != 0 {
		t.Errorf("Compare allocated %v times", n)
	}
}

func TestMatch(t *testing.T) {
	tests := []struct {
		filter string
		doc    string
		want   bool
	}{
		// Equality, numbers across types.
		{`{}`, `{"a": 1}`, true},
		{`{"a": 1}`, `{"a": 1.0}`, true},
		{`{"a": 1}`, `{"a": {"$numberLong": "1"}}`, true},
		{`{"a": {"$numberDecimal": "1.0"}}`, `{"a": 1}`, true},
		{`{"a": 1}`, `{"a": "1"}`, false},
		{`{"a": 1}`, `{"b": 1}`, false},
		{`{"_id": 5, "a": 1}`, `{"_id": 5, "a": 1}`, true},
		{`{"_id": 5, "a": 2}`, `{"_id": 5, "a": 1}`, false},
		// null vs missing.
		{`{"a": null}`, `{"b": 1}`, true},
		{`{"a": null}`, `{"a": null}`, true},
		{`{"a": null}`, `{"a": 0}`, false},
		{`{"a": null}`, `{"a": [1, null]}`, true},
		{`{"a.b": null}`, `{"a": [{"b": 1}, {"c": 1}]}`, true},
		{`{"a.b": null}`, `{"a": [{"b": 1}]}`, false},
		{`{"a.b": null}`, `{"a": 5}`, true},
		{`{"a": {"$ne": null}}`, `{"b": 1}`, false},
		{`{"a": {"$gte": null}}`, `{}`, true},
		{`{"a": {"$gt": null}}`, `{}`, false},
		{`{"a": {"$in": [null]}}`, `{}`, true},
		{`{"a": {"$in": [1]}}`, `{}`, false},
		// Arrays.
		{`{"a": 5}`, `{"a": [1, 5]}`, true},
		{`{"a": [1, 5]}`, `{"a": [1, 5]}`, true},
		{`{"a": [1, 5]}`, `{"a": [5, 1]}`, false},
		{`{"a": [1, 5]}`, `{"a": [[1, 5], 2]}`, true},
		{`{"a": [1]}`, `{"a": [[[1]]]}`, false},
		{`{"a": {"$gt": 4}}`, `{"a": [1, 5]}`, true},
		{`{"a": {"$gt": 4, "$lt": 2}}`, `{"a": [1, 5]}`, true},
		{`{"a": {"$elemMatch": {"$gt": 4, "$lt": 2}}}`, `{"a": [1, 5]}`, false},
		{`{"a": {"$elemMatch": {"$gt": 1, "$lt": 6}}}`, `{"a": [1, 5]}`, true},
		{`{"a": {"$ne": 5}}`, `{"a": [1, 5]}`, false},
		{`{"a": {"$ne": 5}}`, `{"a": [1, 2]}`, true},
		{`{"a": {"$nin": [5, 6]}}`, `{"a": [1, 6]}`, false},
		{`{"a": {"$nin": [5, 6]}}`, `{}`, true},
		// Dotted paths.
		{`{"a.b": 2}`, `{"a": [{"b": 1}, {"b": 2}]}`, true},
		{`{"a.b.c": 3}`, `{"a": {"b": [{"c": 1}, {"c": 3}]}}`, true},
		{`{"a.b": 1}`, `{"a": [[{"b": 1}]]}`, false},
		{`{"a.1": 5}`, `{"a": [1, 5]}`, true},
		{`{"a.0": 5}`, `{"a": [1, 5]}`, false},
		{`{"a.0.b": 1}`, `{"a": [{"b": 1}]}`, true},
		{`{"a.0.b": null}`, `{"a": [{"b": 1}]}`, false},
		{`{"a.1": {"$exists": true}}`, `{"a": [1]}`, false},
		{`{"a.b": 1}`, `{"a": {"b": [0, 1]}}`, true},
		{`{"a.01": 5}`, `{"a": {"01": 5}}`, true},
		// Comparison brackets.
		{`{"a": {"$gt": 1}}`, `{"a": "x"}`, false},
		{`{"a": {"$lt": "b"}}`, `{"a": "a"}`, true},
		{`{"a": {"$lt": "b"}}`, `{"a": 1}`, false},
		{`{"a": {"$gt": {"$minKey": 1}}}`, `{"a": "x"}`, true},
		{`{"a": {"$lt": {"$maxKey": 1}}}`, `{"a": {"x": 1}}`, true},
		{`{"a": {"$gte": 2, "$lte": 2}}`, `{"a": {"$numberLong": "2"}}`, true},
		{`{"a": {"$lt": {"$date": "2020-01-01T00:00:00Z"}}}`, `{"a": {"$date": "2019-01-01T00:00:00Z"}}`, true},
		{`{"a": {"$gt": [1]}}`, `{"a": [2]}`, true},
		{`{"a": {"$eq": {"b": 1}}}`, `{"a": {"b": 1.0}}`, true},
		{`{"a": {"b": 1, "c": 2}}`, `{"a": {"c": 2, "b": 1}}`, false},
		{`{"a": {"$gt": {"$numberDouble": "NaN"}}}`, `{"a": 1}`, false},
		{`{"a": {"$numberDouble": "NaN"}}`, `{"a": {"$numberDouble": "NaN"}}`, true},
		// Logical.
		{`{"$and": [{"a": 1}, {"b": 2}]}`, `{"a": 1, "b": 2}`, true},
		{`{"$and": [{"a": 1}, {"b": 3}]}`, `{"a": 1, "b": 2}`, false},
		{`{"$or": [{"a": 2}, {"b": 2}]}`, `{"a": 1, "b": 2}`, true},
		{`{"$nor": [{"a": 2}, {"b": 2}]}`, `{"a": 1, "b": 2}`, false},
		{`{"$nor": [{"a": 2}, {"b": 3}]}`, `{"a": 1, "b": 2}`, true},
		{`{"a": {"$not": {"$gt": 3}}}`, `{"a": 1}`, true},
		{`{"a": {"$not": {"$gt": 3}}}`, `{}`, true},
		{`{"a": {"$not": {"$regularExpression": {"pattern": "^x", "options": ""}}}}`, `{"a": "xyz"}`, false},
		{`{"$comment": "hi", "a": 1}`, `{"a": 1}`, true},
		{`{"$alwaysFalse": 1}`, `{"a": 1}`, false},
		// $exists.
		{`{"a": {"$exists": true}}`, `{"a": null}`, true},
		{`{"a": {"$exists": false}}`, `{"a": null}`, false},
		{`{"a": {"$exists": 0}}`, `{"b": 1}`, true},
		{`{"a.b": {"$exists": true}}`, `{"a": [{"c": 1}, {"b": 1}]}`, true},
		{`{"a.b": {"$exists": false}}`, `{"a": [1, 2]}`, true},
		// $type.
		{`{"a": {"$type": "number"}}`, `{"a": {"$numberDecimal": "1"}}`, true},
		{`{"a": {"$type": "string"}}`, `{"a": ["x"]}`, true},
		{`{"a": {"$type": "array"}}`, `{"a": [1]}`, true},
		{`{"a": {"$type": "array"}}`, `{"a": 1}`, false},
		{`{"a": {"$type": 16}}`, `{"a": 1}`, true},
		{`{"a": {"$type": 18}}`, `{"a": 1}`, false},
		{`{"a": {"$type": 2.0}}`, `{"a": "s"}`, true},
		{`{"a": {"$type": ["long", "bool"]}}`, `{"a": true}`, true},
		{`{"a": {"$type": "null"}}`, `{}`, false},
		{`{"a": {"$type": "minKey"}}`, `{"a": {"$minKey": 1}}`, true},
		{`{"a": {"$type": "object"}}`, `{"a": {}}`, true},
		// $in.
		{`{"a": {"$in": [1, "x"]}}`, `{"a": "x"}`, true},
		{`{"a": {"$in": [[1, 2]]}}`, `{"a": [1, 2]}`, true},
		{`{"a": {"$in": [{"$regularExpression": {"pattern": "^ab", "options": ""}}]}}`, `{"a": ["zz", "abc"]}`, true},
		{`{"a": {"$in": []}}`, `{"a": 1}`, false},
		// $all.
		{`{"a": {"$all": [1, 2]}}`, `{"a": [2, 3, 1]}`, true},
		{`{"a": {"$all": [1, 4]}}`, `{"a": [2, 3, 1]}`, false},
		{`{"a": {"$all": [[1, 2]]}}`, `{"a": [1, 2]}`, true},
		{`{"a": {"$all": [1]}}`, `{"a": 1}`, true},
		{`{"a": {"$all": []}}`, `{"a": [1]}`, false},
		{`{"a": {"$all": [{"$elemMatch": {"b": 1}}, {"$elemMatch": {"c": 2}}]}}`, `{"a": [{"b": 1}, {"c": 2}]}`, true},
		// $elemMatch.
		{`{"a": {"$elemMatch": {"b": 1, "c": 2}}}`, `{"a": [{"b": 1}, {"c": 2}]}`, false},
		{`{"a": {"$elemMatch": {"b": 1, "c": 2}}}`, `{"a": [{"b": 1, "c": 2}]}`, true},
		{`{"a": {"$elemMatch": {"b": {"$gt": 1}}}}`, `{"a": [{"b": 0}, {"b": 3}]}`, true},
		{`{"a": {"$elemMatch": {"b": 1}}}`, `{"a": {"b": 1}}`, false},
		{`{"a": {"$elemMatch": {"$or": [{"b": 1}, {"c": 1}]}}}`, `{"a": [{"c": 1}]}`, true},
		{`{"a": {"$elemMatch": {"$elemMatch": {"$eq": 2}}}}`, `{"a": [[1], [2]]}`, true},
		{`{"a": {"$elemMatch": {"$eq": 2}}}`, `{"a": [[2]]}`, false},
		{`{"a.b": {"$elemMatch": {"$gt": 2}}}`, `{"a": [{"b": [1]}, {"b": [3]}]}`, true},
		{`{"a": {"$elemMatch": {"$not": {"$gt": 2}}}}`, `{"a": [3, 1]}`, true},
		// $size.
		{`{"a": {"$size": 2}}`, `{"a": [1, [2, 3]]}`, true},
		{`{"a": {"$size": 0}}`, `{"a": []}`, true},
		{`{"a": {"$size": 1}}`, `{"a": 1}`, false},
		{`{"a": {"$size": 1}}`, `{"a": [[1, 2]]}`, true},
		// $regex.
		{`{"a": {"$regex": "^ab"}}`, `{"a": "abc"}`, true},
		{`{"a": {"$regex": "^AB", "$options": "i"}}`, `{"a": "abc"}`, true},
		{`{"a": {"$regex": "^AB"}}`, `{"a": "abc"}`, false},
		{`{"a": {"$regex": "^b", "$options": "m"}}`, `{"a": "a\nb"}`, true},
		{`{"a": {"$regex": "^b"}}`, `{"a": "a\nb"}`, false},
		{`{"a": {"$regex": "a.b", "$options": "s"}}`, `{"a": "a\nb"}`, true},
		{`{"a": {"$regex": "a.b"}}`, `{"a": "a\nb"}`, false},
		{`{"a": {"$regex": "a b # comment\n c", "$options": "x"}}`, `{"a": "abc"}`, true},
		{`{"a": {"$regex": "a[ ]b", "$options": "x"}}`, `{"a": "a b"}`, true},
		{`{"a": {"$regex": {"$regularExpression": {"pattern": "B$", "options": "i"}}}}`, `{"a": "ab"}`, true},
		{`{"a": {"$regularExpression": {"pattern": "^x", "options": ""}}}`, `{"a": ["y", "xy"]}`, true},
		{`{"a": {"$regularExpression": {"pattern": "^x", "options": ""}}}`, `{"a": {"$symbol": "xy"}}`, true},
		{`{"a": {"$regularExpression": {"pattern": "^x", "options": ""}}}`, `{"a": 1}`, false},
		{`{"a": {"$regularExpression": {"pattern": "^x", "options": ""}}}`, `{"a": {"$regularExpression": {"pattern": "^x", "options": ""}}}`, true},
		{`{"a": {"$eq": {"$regularExpression": {"pattern": "^x", "options": ""}}}}`, `{"a": "xy"}`, false},
		// $mod.
		{`{"a": {"$mod": [4, 1]}}`, `{"a": 9}`, true},
		{`{"a": {"$mod": [4, 1]}}`, `{"a": 9.9}`, true},
		{`{"a": {"$mod": [4, -1]}}`, `{"a": -9}`, true},
		{`{"a": {"$mod": [4, 1]}}`, `{"a": "9"}`, false},
		{`{"a": {"$mod": [4.5, 1]}}`, `{"a": [2, 5]}`, true},
		{`{"a": {"$mod": [4, 0]}}`, `{"a": {"$numberDouble": "NaN"}}`, false},
		// DBRef-shaped values are compared, not parsed as operators.
		{`{"a": {"$ref": "c", "$id": 1}}`, `{"a": {"$ref": "c", "$id": 1}}`, true},
		// Matching on a malformed document does not panic.
	}
	for _, tt := range tests {
		m, err := NewMatcher(doc(t, tt.filter))
		if err != nil {
			t.Errorf("NewMatcher(%s): %v", tt.filter, err)
			continue
		}
		if got := m.Match(doc(t, tt.doc)); got != tt.want {
			t.Errorf("%s on %s = %v, want %v", tt.filter, tt.doc, got, tt.want)
		}
	}
}

func TestMatchMalformedDocument(t *testing.T) {
	m, err := NewMatcher(doc(t, `{"a.b": {"$gt": 1}, "c": {"$size": 2}}`))
	if err != nil {
		t.Fatal(err)
	}
	good := doc(t, `{"a": {"b": 2}, "c": [1, 2]}`)
	if !m.Match(good) {
		t.Fatal("good document should match")
	}
	for i := range good {
		if m.Match(good[:i]) {
			t.Errorf("truncated document of %d bytes matched", i)
		}
	}
	if m.Match(nil) {
		t.Error("nil document matched")
	}
}

func TestMatcherErrors(t *testing.T) {
	tests := []struct {
		filter string
		code   int32
		text   string
	}{
		{`{"a": {"$foo": 1}}`, mongoerr.BadValue, "unknown operator: $foo"},
		{`{"$foo": 1}`, mongoerr.BadValue, "unknown top level operator: $foo"},
		{`{"a": {"$gt": 1, "b": 1}}`, mongoerr.BadValue, "unknown operator: b"},
		{`{"$and": []}`, mongoerr.BadValue, "$and"},
		{`{"$or": {}}`, mongoerr.BadValue, "$or must be an array"},
		{`{"$nor": [1]}`, mongoerr.BadValue, "$nor"},
		{`{"a": {"$in": 1}}`, mongoerr.BadValue, "$in needs an array"},
		{`{"a": {"$nin": [{"$gt": 1}]}}`, mongoerr.BadValue, "cannot nest $ under $nin"},
		{`{"a": {"$size": -1}}`, mongoerr.BadValue, "$size may not be negative"},
		{`{"a": {"$size": 1.5}}`, mongoerr.BadValue, "$size must be a whole number"},
		{`{"a": {"$size": "1"}}`, mongoerr.BadValue, "$size needs a number"},
		{`{"a": {"$type": "foo"}}`, mongoerr.BadValue, "Unknown type name alias: foo"},
		{`{"a": {"$type": 99}}`, mongoerr.BadValue, "Invalid numerical type code: 99"},
		{`{"a": {"$type": []}}`, mongoerr.FailedToParse, "$type must match at least one type"},
		{`{"a": {"$type": true}}`, mongoerr.TypeMismatch, "type must be"},
		{`{"a": {"$regex": "("}}`, 51091, "Regular expression is invalid"},
		{`{"a": {"$regex": "(?<=a)b"}}`, 51091, "Regular expression is invalid"},
		{`{"a": {"$regex": "a", "$options": "q"}}`, 51108, "invalid flag in regex options: q"},
		{`{"a": {"$options": "i"}}`, mongoerr.BadValue, "$options needs a $regex"},
		{`{"a": {"$regex": 1}}`, mongoerr.BadValue, "$regex has to be a string"},
		{`{"a": {"$regex": {"$regularExpression": {"pattern": "a", "options": "i"}}, "$options": "m"}}`, mongoerr.BadValue, "options set in both"},
		{`{"a": {"$mod": [0, 1]}}`, mongoerr.BadValue, "divisor cannot be 0"},
		{`{"a": {"$mod": [1]}}`, mongoerr.BadValue, "not enough elements"},
		{`{"a": {"$mod": [1, 2, 3]}}`, mongoerr.BadValue, "too many elements"},
		{`{"a": {"$mod": ["x", 2]}}`, mongoerr.BadValue, "divisor not a number"},
		{`{"a": {"$not": 1}}`, mongoerr.BadValue, "$not needs a regex or a document"},
		{`{"a": {"$not": {}}}`, mongoerr.BadValue, "$not cannot be empty"},
		{`{"a": {"$elemMatch": 1}}`, mongoerr.BadValue, "$elemMatch needs an Object"},
		{`{"a": {"$all": 1}}`, mongoerr.BadValue, "$all needs an array"},
		{`{"a": {"$ne": {"$regularExpression": {"pattern": "a", "options": ""}}}}`, mongoerr.BadValue, "regex as arg to $ne"},
		{`{"$expr": {"$eq": ["$a", 1]}}`, mongoerr.NotImplemented, "$expr"},
		{`{"$where": "true"}`, mongoerr.NotImplemented, "$where"},
		{`{"$text": {"$search": "x"}}`, mongoerr.NotImplemented, "$text"},
		{`{"a": {"$near": [0, 0]}}`, mongoerr.NotImplemented, "$near"},
		{`{"a": {"$geoWithin": {}}}`, mongoerr.NotImplemented, "$geoWithin"},
		{`{"a": {"$bitsAllSet": 1}}`, mongoerr.NotImplemented, "$bitsAllSet"},
	}
	for _, tt := range tests {
		_, err := NewMatcher(doc(t, tt.filter))
		var me *mongoerr.Error
		if !errors.As(err, &me) {
			t.Errorf("NewMatcher(%s) = %v, want a *mongoerr.Error", tt.filter, err)
			continue
		}
		if me.Code != tt.code || !strings.Contains(me.Message, tt.text) {
			t.Errorf("NewMatcher(%s) = %v, want code %d containing %q", tt.filter, err, tt.code, tt.text)
		}
	}
	if _, err := NewMatcher(bson.Raw{1, 2, 3}); err == nil {
		t.Error("NewMatcher accepted malformed BSON")
	}
	deep := `{"a": ` + strings.Repeat(`{"$not": `, 150) + `{"$gt": 1}` + strings.Repeat(`}`, 151)
	if _, err := NewMatcher(doc(t, deep)); err == nil {
		t.Error("NewMatcher accepted a filter nested 150 deep")
	}
	ok := `{"a": ` + strings.Repeat(`{"$not": `, 50) + `{"$gt": 1}` + strings.Repeat(`}`, 51)
	if m, err := NewMatcher(doc(t, ok)); err != nil || !m.Match(doc(t, `{"a": 2}`)) {
		t.Errorf("50 nested $not: %v", err)
	}
}

func TestMatchByIDDoesNotAllocate(t *testing.T) {
	m, err := NewMatcher(doc(t, `{"_id": {"$oid": "5f0000000000000000000001"}}`))
	if err != nil {
		t.Fatal(err)
	}
	hit := doc(t, `{"_id": {"$oid": "5f0000000000000000000001"}, "x": "payload", "n": 12}`)
	miss := doc(t, `{"_id": {"$oid": "5f0000000000000000000002"}, "x": "payload", "n": 12}`)
	if !m.Match(hit) || m.Match(miss) {
		t.Fatal("wrong match results")
	}
	if n := testing.AllocsPerRun(100, func() { m.Match(hit); m.Match(miss) }); n != 0 {
		t.Errorf("Match by _id allocated %v times", n)
	}
}

func BenchmarkMatchByID(b *testing.B) {
	m, err := NewMatcher(doc(b, `{"_id": 5000}`))
	if err != nil {
		b.Fatal(err)
	}
	d := doc(b, `{"_id": 4999, "name": "someone", "tags": ["a", "b"], "n": 1.5}`)
	b.ReportAllocs()
	for b.Loop() {
		m.Match(d)
	}
}

func TestSort(t *testing.T) {
	tests := []struct {
		spec string
		docs []string // in the expected order
	}{
		{`{"a": 1}`, []string{`{"a": null}`, `{"a": 1}`, `{"a": 2.5}`, `{"a": "x"}`}},
		{`{"a": -1}`, []string{`{"a": "x"}`, `{"a": 2.5}`, `{"a": 1}`}},
		{`{"a": 1, "b": -1}`, []string{`{"a": 1, "b": 3}`, `{"a": 1, "b": 2}`, `{"a": 2, "b": 9}`}},
		// Missing sorts as null (ties keep no order, so only one of each).
		{`{"a": 1}`, []string{`{"b": 1}`, `{"a": 0}`}},
		// Arrays: least element ascending, greatest descending; [] below null.
		{`{"a": 1}`, []string{`{"a": []}`, `{"a": null}`, `{"a": [0, 9]}`, `{"a": 1}`, `{"a": [5, 2]}`}},
		{`{"a": -1}`, []string{`{"a": [0, 9]}`, `{"a": 5}`, `{"a": [1, 4]}`}},
		{`{"a.b": 1}`, []string{`{"a": [{"b": 3}, {"b": 0}]}`, `{"a": {"b": 1}}`, `{"a": [{"b": 2}]}`}},
		{`{"a": {"$numberLong": "-1"}}`, []string{`{"a": 2}`, `{"a": 1}`}},
	}
	for _, tt := range tests {
		s, err := NewSort(doc(t, tt.spec))
		if err != nil {
			t.Fatalf("NewSort(%s): %v", tt.spec, err)
		}
		for i := range tt.docs {
			for j := range tt.docs {
				want := cmp.Compare(i, j)
				if got := s.Compare(doc(t, tt.docs[i]), doc(t, tt.docs[j])); got != want {
					t.Errorf("sort %s: Compare(%s, %s) = %d, want %d", tt.spec, tt.docs[i], tt.docs[j], got, want)
				}
			}
		}
	}
	s, _ := NewSort(nil)
	if !s.Empty() || s.Compare(doc(t, `{"a": 1}`), doc(t, `{"a": 2}`)) != 0 {
		t.Error("empty sort should treat all documents as equal")
	}
	// Sort works with slices.SortStableFunc on real data.
	s, _ = NewSort(doc(t, `{"n": -1}`))
	var docs []bson.Raw
	for _, n := range []string{"3", "1", "2"} {
		docs = append(docs, doc(t, `{"n": `+n+`}`))
	}
	slices.SortStableFunc(docs, s.Compare)
	if docs[0].Lookup("n").Int32() != 3 || docs[2].Lookup("n").Int32() != 1 {
		t.Error("descending sort out of order")
	}
}

func TestSortErrors(t *testing.T) {
	tests := []struct {
		spec string
		code int32
	}{
		{`{"a": 2}`, mongoerr.BadValue},
		{`{"a": "asc"}`, mongoerr.BadValue},
		{`{"a": 0}`, mongoerr.BadValue},
		{`{"a": {"$meta": "textScore"}}`, mongoerr.NotImplemented},
		{`{"": 1}`, mongoerr.BadValue},
		{`{"a..b": 1}`, mongoerr.BadValue},
	}
	for _, tt := range tests {
		_, err := NewSort(doc(t, tt.spec))
		var me *mongoerr.Error
		if !errors.As(err, &me) || me.Code != tt.code {
			t.Errorf("NewSort(%s) = %v, want code %d", tt.spec, err, tt.code)
		}
	}
}

func TestSortDoesNotAllocate(t *testing.T) {
	s, _ := NewSort(doc(t, `{"a.b": 1, "c": -1}`))
	x, y := doc(t, `{"a": [{"b": 1}, {"b": 0}], "c": 1}`), doc(t, `{"a": {"b": 0}, "c": 2}`)
	if n := testing.AllocsPerRun(100, func() { s.Compare(x, y) }); n != 0 {
		t.Errorf("Sort.Compare allocated %v times", n)
	}
}

func TestProjection(t *testing.T) {
	src := `{"_id": 1, "a": 1, "b": {"c": 2, "d": 3}, "e": [{"f": 1, "g": 2}, {"f": 3}, 7, [{"f": 4}]], "h": [1, 2, 3, 4, 5]}`
	tests := []struct {
		spec, want string
	}{
		{`{}`, src},
		{`{"a": 1}`, `{"_id": 1, "a": 1}`},
		{`{"a": true, "_id": 0}`, `{"a": 1}`},
		{`{"_id": 1}`, `{"_id": 1}`},
		{`{"_id": 0}`, `{"a": 1, "b": {"c": 2, "d": 3}, "e": [{"f": 1, "g": 2}, {"f": 3}, 7, [{"f": 4}]], "h": [1, 2, 3, 4, 5]}`},
		{`{"a": 0, "e": 0, "h": 0}`, `{"_id": 1, "b": {"c": 2, "d": 3}}`},
		{`{"b.c": 1}`, `{"_id": 1, "b": {"c": 2}}`},
		{`{"b": {"c": 1}}`, `{"_id": 1, "b": {"c": 2}}`},
		{`{"b.c": 0, "e": 0, "h": 0}`, `{"_id": 1, "a": 1, "b": {"d": 3}}`},
		{`{"e.f": 1}`, `{"_id": 1, "e": [{"f": 1}, {"f": 3}, [{"f": 4}]]}`},
		{`{"e.f": 0, "b": 0, "h": 0}`, `{"_id": 1, "a": 1, "e": [{"g": 2}, {}, 7, [{}]]}`},
		{`{"a.x": 1}`, `{"_id": 1}`},
		{`{"zz": 1}`, `{"_id": 1}`},
		{`{"h": {"$slice": 2}, "_id": 0, "a": 1}`, `{"a": 1, "h": [1, 2]}`},
		{`{"h": {"$slice": -2}, "b": 0, "e": 0}`, `{"_id": 1, "a": 1, "h": [4, 5]}`},
		{`{"h": {"$slice": [1, 2]}, "a": 1}`, `{"_id": 1, "a": 1, "h": [2, 3]}`},
		{`{"h": {"$slice": [-2, 5]}, "a": 1}`, `{"_id": 1, "a": 1, "h": [4, 5]}`},
		{`{"h": {"$slice": [9, 1]}, "a": 1}`, `{"_id": 1, "a": 1, "h": []}`},
		{`{"a": {"$slice": 1}, "b": 0, "e": 0, "h": 0}`, `{"_id": 1, "a": 1}`},
		{`{"e": {"$elemMatch": {"f": {"$gt": 1}}}, "a": 1}`, `{"_id": 1, "a": 1, "e": [{"f": 3}]}`},
		{`{"e": {"$elemMatch": {"f": 9}}}`, `{"_id": 1}`},
		{`{"e": {"$elemMatch": {"f": 1}}, "_id": 0}`, `{"e": [{"f": 1, "g": 2}]}`},
	}
	for _, tt := range tests {
		p, err := NewProjection(doc(t, tt.spec))
		if err != nil {
			t.Errorf("NewProjection(%s): %v", tt.spec, err)
			continue
		}
		out, err := p.Apply(nil, doc(t, src))
		if err != nil {
			t.Errorf("Apply(%s): %v", tt.spec, err)
			continue
		}
		if want := doc(t, tt.want); !slices.Equal(out, want) {
			t.Errorf("projection %s = %s, want %s", tt.spec, bson.Raw(out), want)
		}
	}
}

func TestProjectionErrors(t *testing.T) {
	tests := []struct {
		spec string
		code int32
	}{
		{`{"a": 1, "b": 0}`, mongoerr.Location31254},
		{`{"a": 0, "b": 1}`, 31253},
		{`{"a": 0, "b": {"$elemMatch": {"x": 1}}}`, 31253},
		{`{"a": 1, "a.b": 1}`, 31250},
		{`{"a.b": 1, "a": 1}`, 31250},
		{`{"a": {}}`, 51270},
		{`{"a.$": 1}`, mongoerr.NotImplemented},
		{`{"a": {"$meta": "textScore"}}`, mongoerr.NotImplemented},
		{`{"a": "$b"}`, mongoerr.NotImplemented},
		{`{"a": {"$literal": 1}}`, mongoerr.NotImplemented},
		{`{"a.b": {"$elemMatch": {"x": 1}}}`, 31275},
		{`{"a": {"$elemMatch": 1}}`, mongoerr.BadValue},
		{`{"a": {"$elemMatch": {"$foo": 1}}}`, mongoerr.BadValue},
		{`{"a": {"$slice": "x"}}`, mongoerr.BadValue},
		{`{"a": {"$slice": [1, 0]}}`, mongoerr.BadValue},
		{`{"a": {"$slice": [1]}}`, 28724},
		{`{"a..b": 1}`, mongoerr.Location15998},
		{`{"$a": 1}`, 16410},
	}
	for _, tt := range tests {
		_, err := NewProjection(doc(t, tt.spec))
		var me *mongoerr.Error
		if !errors.As(err, &me) || me.Code != tt.code {
			t.Errorf("NewProjection(%s) = %v, want code %d", tt.spec, err, tt.code)
		}
	}
}

func TestNumberHelpers(t *testing.T) {
	if c := cmpIntFloat(math.MaxInt64, 9223372036854775807.0); c != -1 {
		t.Errorf("MaxInt64 vs 2^63 = %d", c)
	}
	if c := cmpIntFloat(math.MinInt64, -9223372036854775808.0); c != 0 {
		t.Errorf("MinInt64 vs -2^63 = %d", c)
	}
	if c := cmpIntFloat(3, 2.5); c != 1 {
		t.Errorf("3 vs 2.5 = %d", c)
	}
	if c := cmpIntFloat(-3, -2.5); c != -1 {
		t.Errorf("-3 vs -2.5 = %d", c)
	}
}

func FuzzMatcher(f *testing.F) {
	seeds := [][2]string{
		{`{"a": 1}`, `{"a": [1, 2]}`},
		{`{"a.b": {"$gt": 1, "$lt": 5}}`, `{"a": [{"b": 2}, {"b": 9}]}`},
		{`{"$or": [{"a": null}, {"b": {"$exists": false}}]}`, `{"b": null}`},
		{`{"a": {"$elemMatch": {"b": {"$in": [1, "x"]}}}}`, `{"a": [{"b": "x"}]}`},
		{`{"a": {"$regex": "^a.*b", "$options": "ix"}}`, `{"a": "AXB"}`},
		{`{"a": {"$all": [1, 2]}, "c": {"$size": 2}}`, `{"a": [2, 1], "c": [0, 0]}`},
		{`{"a": {"$not": {"$type": "number"}}, "m": {"$mod": [3, 1]}}`, `{"a": "s", "m": 4}`},
		{`{"a.0.b": {"$nin": [null]}}`, `{"a": [{"b": {"$numberDecimal": "1.5"}}]}`},
	}
	for _, s := range seeds {
		f.Add([]byte(doc(f, s[0])), []byte(doc(f, s[1])))
	}
	f.Fuzz(func(t *testing.T, filter, d []byte) {
		m, err := NewMatcher(filter)
		if err != nil {
			var me *mongoerr.Error
			if !errors.As(err, &me) {
				t.Fatalf("error is not a *mongoerr.Error: %v", err)
			}
			return
		}
		m.Match(d)
		m.Match(filter)
		if s, err := NewSort(filter); err == nil {
			s.Compare(d, filter)
		}
		// The same under a collation: the collated paths must not panic
		// either.
		if cm, err := NewMatcherWith(filter, Options{Collator: fuzzCollator}); err == nil {
			cm.Match(d)
			cm.IDEquality()
		}
		if s, err := NewSortWith(filter, fuzzCollator); err == nil {
			s.Compare(d, filter)
		}
		if p, err := NewProjection(filter); err == nil {
			_, _ = p.Apply(nil, d)
		}
	})
}

func TestIDEquality(t *testing.T) {
	tests := []struct {
		filter string
		ok     bool
	}{
		{`{"_id": 5}`, true},
		{`{"_id": {"$eq": "x"}}`, true},
		{`{"_id": {"a": 1}}`, true},
		{`{"_id": {"$gt": 5}}`, false},
		{`{"_id": 5, "a": 1}`, false},
		{`{"_id": null}`, false},
		{`{"_id": [1]}`, false},
		{`{"a": 5}`, false},
		{`{"_id.x": 5}`, false},
	}
	for _, tt := range tests {
		m, err := NewMatcher(doc(t, tt.filter))
		if err != nil {
			t.Fatal(err)
		}
		v, ok := m.IDEquality()
		if ok != tt.ok {
			t.Errorf("IDEquality(%s) ok = %v", tt.filter, ok)
		}
		if ok && !m.Match(doc(t, `{"_id": `+v.String()+`}`)) {
			t.Errorf("IDEquality(%s) = %s, which does not match", tt.filter, v)
		}
	}
}

// fuzzCollator is a case-insensitive collation for FuzzMatcher.
var fuzzCollator = func() Collator {
	c, err := collation.Parse(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: bson.Raw(mustDoc(`{"locale": "en", "strength": 2}`))})
	if err != nil {
		panic(err)
	}
	return c
}()

func mustDoc(js string) bson.Raw {
	d, err := bson.ParseExtJSON([]byte(js))
	if err != nil {
		panic(err)
	}
	return d
}
