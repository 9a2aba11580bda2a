package agg

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// parseDoc parses relaxed Extended JSON: 1 is an int32, 1.0 a double,
// {"$numberLong": "1"} an int64.
func parseDoc(t testing.TB, s string) bson.Raw {
	t.Helper()
	d, err := bson.ParseExtJSON([]byte(s))
	if err != nil {
		t.Fatalf("parse %s: %v", s, err)
	}
	return d
}

// parseArray parses a JSON array of documents.
func parseArray(t testing.TB, s string) []bson.Raw {
	t.Helper()
	if s == "" {
		return nil
	}
	wrapped := parseDoc(t, `{"a": `+s+`}`)
	var out []bson.Raw
	for _, v := range arrayValues(wrapped.Lookup("a")) {
		d, ok := v.DocumentOK()
		if !ok {
			t.Fatalf("%s: element %s is not a document", s, v)
		}
		out = append(out, d)
	}
	return out
}

// canonical renders documents as canonical Extended JSON, which keeps
// every type visible, for comparison.
func canonical(t testing.TB, docs []bson.Raw) string {
	t.Helper()
	parts := make([]string, len(docs))
	for i, d := range docs {
		b, err := bson.AppendExtJSON(nil, d, true)
		if err != nil {
			t.Fatalf("ext json: %v", err)
		}
		parts[i] = string(b)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func feed(docs []bson.Raw) func(func(bson.Raw) bool) {
	return func(yield func(bson.Raw) bool) {
		for _, d := range docs {
			if !yield(d) {
				return
			}
		}
	}
}

var testNow = time.Date(2024, 5, 6, 7, 8, 9, 10e6, time.UTC)

type pipeCase struct {
	name     string
	input    string // JSON array of documents
	pipeline string // JSON array of stages
	want     string // JSON array of documents
	code     int32  // expected error code, 0 for success
}

func runCases(t *testing.T, cases []pipeCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stages := parseArray(t, c.pipeline)
			p, err := Compile(stages, Options{Now: testNow, DB: "db", Out: func(string, string, []bson.Raw) error { return nil }})
			checkRun(t, p, err, c.input, c.want, c.code)
		})
	}
}

func canonicalOrNil(t testing.TB, docs []bson.Raw) string {
	if docs == nil {
		return "no results"
	}
	return canonical(t, docs)
}

func TestStages(t *testing.T) {
	abc := `[{"_id": 1, "a": 1, "b": "x"}, {"_id": 2, "a": 3, "b": "y"}, {"_id": 3, "a": 2, "b": "x"}]`
	runCases(t, []pipeCase{
		{"empty pipeline", abc, `[]`, abc, 0},
		{"match", abc, `[{"$match": {"b": "x"}}]`, `[{"_id": 1, "a": 1, "b": "x"}, {"_id": 3, "a": 2, "b": "x"}]`, 0},
		{"match empty", abc, `[{"$match": {}}]`, abc, 0},
		{"match not object", abc, `[{"$match": 1}]`, "", 15959},
		{"match $expr", abc, `[{"$match": {"$expr": {"$gt": ["$a", 1]}}}]`, `[{"_id": 2, "a": 3, "b": "y"}, {"_id": 3, "a": 2, "b": "x"}]`, 0},
		{"match $expr and filter", abc, `[{"$match": {"b": "x", "$expr": {"$gt": ["$a", 1]}}}]`, `[{"_id": 3, "a": 2, "b": "x"}]`, 0},
		{"match $expr error", abc, `[{"$match": {"$expr": {"$divide": ["$a", 0]}}}]`, "", 16608},
		{"match $expr bad", abc, `[{"$match": {"$expr": {"$foo": 1}}}]`, "", mongoerr.InvalidPipelineOperator},
		{"match bad operator", abc, `[{"$match": {"a": {"$bogus": 1}}}]`, "", mongoerr.BadValue},
		{"sort", abc, `[{"$sort": {"a": -1}}]`, `[{"_id": 2, "a": 3, "b": "y"}, {"_id": 3, "a": 2, "b": "x"}, {"_id": 1, "a": 1, "b": "x"}]`, 0},
		{"sort stable on ties", abc, `[{"$sort": {"b": 1}}]`, `[{"_id": 1, "a": 1, "b": "x"}, {"_id": 3, "a": 2, "b": "x"}, {"_id": 2, "a": 3, "b": "y"}]`, 0},
		{"sort empty", abc, `[{"$sort": {}}]`, "", 15976},
		{"sort not object", abc, `[{"$sort": 1}]`, "", 15973},
		{"sort bad direction", abc, `[{"$sort": {"a": 2}}]`, "", mongoerr.BadValue},
		{"skip", abc, `[{"$skip": 2}]`, `[{"_id": 3, "a": 2, "b": "x"}]`, 0},
		{"skip past end", abc, `[{"$skip": {"$numberLong": "5"}}]`, `[]`, 0},
		{"skip double", abc, `[{"$skip": 1.0}, {"$project": {"_id": 1}}]`, `[{"_id": 2}, {"_id": 3}]`, 0},
		{"skip negative", abc, `[{"$skip": -1}]`, "", 15956},
		{"skip string", abc, `[{"$skip": "1"}]`, "", 15972},
		{"skip fraction", abc, `[{"$skip": 1.5}]`, "", 5107200},
		{"limit", abc, `[{"$limit": 1}]`, `[{"_id": 1, "a": 1, "b": "x"}]`, 0},
		{"limit zero", abc, `[{"$limit": 0}]`, "", 15958},
		{"limit string", abc, `[{"$limit": "1"}]`, "", 15957},
		{"sort skip limit", abc, `[{"$sort": {"a": 1}}, {"$skip": 1}, {"$limit": 1}]`, `[{"_id": 3, "a": 2, "b": "x"}]`, 0},
		{"count", abc, `[{"$count": "n"}]`, `[{"n": 3}]`, 0},
		{"count after match", abc, `[{"$match": {"b": "y"}}, {"$count": "n"}]`, `[{"n": 1}]`, 0},
		{"count nothing", abc, `[{"$match": {"b": "z"}}, {"$count": "n"}]`, `[]`, 0},
		{"count empty name", abc, `[{"$count": ""}]`, "", 40157},
		{"count dollar", abc, `[{"$count": "$n"}]`, "", 40158},
		{"count dot", abc, `[{"$count": "a.b"}]`, "", 40160},
		{"count not string", abc, `[{"$count": 1}]`, "", 40156},
		{"replaceRoot", `[{"_id": 1, "s": {"x": 1}}]`, `[{"$replaceRoot": {"newRoot": "$s"}}]`, `[{"x": 1}]`, 0},
		{"replaceWith", `[{"_id": 1, "s": {"x": 1}}]`, `[{"$replaceWith": {"y": "$s.x"}}]`, `[{"y": 1}]`, 0},
		{"replaceRoot not object", `[{"_id": 1, "s": 5}]`, `[{"$replaceRoot": {"newRoot": "$s"}}]`, "", 40228},
		{"replaceRoot missing", `[{"_id": 1}]`, `[{"$replaceRoot": {"newRoot": "$s"}}]`, "", 40228},
		{"replaceRoot no newRoot", abc, `[{"$replaceRoot": {}}]`, "", 40414},
		{"replaceRoot unknown field", abc, `[{"$replaceRoot": {"newRoot": "$s", "x": 1}}]`, "", 40415},
		{"replaceRoot not doc", abc, `[{"$replaceRoot": 1}]`, "", 40229},
		{"no input", `[]`, `[{"$group": {"_id": null, "n": {"$sum": 1}}}]`, `[]`, 0},

		{"unknown stage", abc, `[{"$foo": {}}]`, "", mongoerr.Location40324},
		{"graphLookup unsupported", abc, `[{"$graphLookup": {}}]`, "", mongoerr.NotImplemented},
		{"lookup without from", abc, `[{"$lookup": {}}]`, "", mongoerr.FailedToParse},
		{"facet empty", abc, `[{"$facet": {}}]`, "", 40169},
		{"merge unsupported", abc, `[{"$merge": {"into": "x"}}]`, "", mongoerr.NotImplemented},
		{"changeStream unsupported", abc, `[{"$changeStream": {}}]`, "", mongoerr.NotImplemented},
		{"bucketAuto unsupported", abc, `[{"$bucketAuto": {}}]`, "", mongoerr.NotImplemented},
		{"bucket empty", abc, `[{"$bucket": {}}]`, "", 40198},
		{"geoNear unsupported", abc, `[{"$geoNear": {}}]`, "", mongoerr.NotImplemented},
		{"two fields in stage", abc, `[{"$match": {}, "$limit": 1}]`, "", 40323},
		{"empty stage", abc, `[{}]`, "", 40323},
		{"later stage checked before running", abc, `[{"$match": {}}, {"$foo": 1}]`, "", mongoerr.Location40324},
	})
}

func TestStageErrorMessages(t *testing.T) {
	for _, c := range []struct{ stage, msg string }{
		{`{"$foo": {}}`, "Unrecognized pipeline stage name: '$foo'"},
		{`{"$lookup": {}}`, "must specify 'from' field for a $lookup"},
		{`{"$graphLookup": {}}`, "$graphLookup"},
		{`{"$project": {"a": {"$foo": 1}}}`, "Unrecognized expression '$foo'"},
		{`{"$group": {"_id": null, "x": {"$foo": 1}}}`, "unknown group operator '$foo'"},
		{`{"$unwind": "a"}`, "should be prefixed with a '$': a"},
	} {
		_, err := Compile([]bson.Raw{parseDoc(t, c.stage)}, Options{})
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: got %v, want message containing %q", c.stage, err, c.msg)
		}
	}
}

func TestProject(t *testing.T) {
	doc := `[{"_id": 1, "a": 1, "b": {"c": 2, "d": 3}, "e": [{"c": 1, "d": 2}, {"c": 3}, 5], "f": "s"}]`
	runCases(t, []pipeCase{
		{"inclusion keeps _id", doc, `[{"$project": {"a": 1}}]`, `[{"_id": 1, "a": 1}]`, 0},
		{"inclusion true", doc, `[{"$project": {"a": true, "f": 1.0}}]`, `[{"_id": 1, "a": 1, "f": "s"}]`, 0},
		{"inclusion input order", doc, `[{"$project": {"f": 1, "a": 1}}]`, `[{"_id": 1, "a": 1, "f": "s"}]`, 0},
		{"inclusion without _id", doc, `[{"$project": {"_id": 0, "a": 1}}]`, `[{"a": 1}]`, 0},
		{"only _id", doc, `[{"$project": {"_id": 1}}]`, `[{"_id": 1}]`, 0},
		{"only _id excluded", doc, `[{"$project": {"_id": 0}}]`, `[{"a": 1, "b": {"c": 2, "d": 3}, "e": [{"c": 1, "d": 2}, {"c": 3}, 5], "f": "s"}]`, 0},
		{"dotted inclusion", doc, `[{"$project": {"b.c": 1}}]`, `[{"_id": 1, "b": {"c": 2}}]`, 0},
		{"nested inclusion", doc, `[{"$project": {"b": {"d": 1}}}]`, `[{"_id": 1, "b": {"d": 3}}]`, 0},
		{"inclusion through array", doc, `[{"$project": {"_id": 0, "e.c": 1}}]`, `[{"e": [{"c": 1}, {"c": 3}]}]`, 0},
		{"inclusion of missing", doc, `[{"$project": {"zz": 1}}]`, `[{"_id": 1}]`, 0},
		{"exclusion", doc, `[{"$project": {"a": 0, "e": 0}}]`, `[{"_id": 1, "b": {"c": 2, "d": 3}, "f": "s"}]`, 0},
		{"dotted exclusion", doc, `[{"$project": {"b.c": 0, "_id": 0, "a": 0, "f": 0}}]`, `[{"b": {"d": 3}, "e": [{"c": 1, "d": 2}, {"c": 3}, 5]}]`, 0},
		{"exclusion through array keeps scalars", doc, `[{"$project": {"e.c": 0, "_id": 0, "a": 0, "b": 0, "f": 0}}]`, `[{"e": [{"d": 2}, {}, 5]}]`, 0},
		{"computed", doc, `[{"$project": {"x": "$b.c", "y": {"$add": ["$a", 10]}}}]`, `[{"_id": 1, "x": 2, "y": 11}]`, 0},
		{"computed goes after included", doc, `[{"$project": {"x": "$a", "f": 1}}]`, `[{"_id": 1, "f": "s", "x": 1}]`, 0},
		{"computed replaces", doc, `[{"$project": {"a": "$f"}}]`, `[{"_id": 1, "a": "s"}]`, 0},
		{"computed missing left out", doc, `[{"$project": {"x": "$nope"}}]`, `[{"_id": 1}]`, 0},
		{"computed literal string", doc, `[{"$project": {"x": "lit"}}]`, `[{"_id": 1, "x": "lit"}]`, 0},
		{"$literal number", doc, `[{"$project": {"x": {"$literal": 1}}}]`, `[{"_id": 1, "x": 1}]`, 0},
		{"$literal dollar string", doc, `[{"$project": {"x": {"$literal": "$a"}}}]`, `[{"_id": 1, "x": "$a"}]`, 0},
		{"nested computed", doc, `[{"$project": {"b": {"z": "$a"}}}]`, `[{"_id": 1, "b": {"z": 1}}]`, 0},
		{"computed array path", doc, `[{"$project": {"_id": 0, "x": "$e.c"}}]`, `[{"x": [1, 3]}]`, 0},
		{"$$ROOT", `[{"_id": 1}]`, `[{"$project": {"r": "$$ROOT"}}]`, `[{"_id": 1, "r": {"_id": 1}}]`, 0},
		{"$$CURRENT path", `[{"_id": 1, "a": {"b": 2}}]`, `[{"$project": {"r": "$$CURRENT.a.b"}}]`, `[{"_id": 1, "r": 2}]`, 0},
		{"$$REMOVE", doc, `[{"$project": {"a": "$$REMOVE", "f": 1}}]`, `[{"_id": 1, "f": "s"}]`, 0},
		{"$$NOW", `[{"_id": 1}]`, `[{"$project": {"t": "$$NOW"}}]`, `[{"_id": 1, "t": {"$date": "2024-05-06T07:08:09.010Z"}}]`, 0},
		{"object expression", doc, `[{"$project": {"_id": 0, "o": {"p": "$a", "q": ["$a", "$nope"]}}}]`, `[{"o": {"p": 1, "q": [1, null]}}]`, 0},
		{"_id computed", doc, `[{"$project": {"_id": "$f"}}]`, `[{"_id": "s"}]`, 0},
		{"mixed inclusion exclusion", doc, `[{"$project": {"a": 1, "b": 0}}]`, "", mongoerr.Location31254},
		{"expression in exclusion", doc, `[{"$project": {"a": 0, "x": "$b"}}]`, "", 31252},
		{"empty spec", doc, `[{"$project": {}}]`, "", 51272},
		{"empty sub-projection", doc, `[{"$project": {"b": {}}}]`, "", 51270},
		{"path collision", doc, `[{"$project": {"b": 1, "b.c": 1}}]`, "", 31250},
		{"path collision reversed", doc, `[{"$project": {"b.c": 1, "b": 1}}]`, "", 31250},
		{"dollar field", doc, `[{"$project": {"$a": 1}}]`, "", 16410},
		{"empty path part", doc, `[{"$project": {"a..b": 1}}]`, "", mongoerr.Location15998},
		{"not object", doc, `[{"$project": 1}]`, "", 15969},
		{"bad field path", doc, `[{"$project": {"x": "$"}}]`, "", 16872},
		{"bad field path part", doc, `[{"$project": {"x": "$a.$b"}}]`, "", 16410},
		{"undefined variable", doc, `[{"$project": {"x": "$$foo"}}]`, "", 17276},
		{"empty variable", doc, `[{"$project": {"x": "$$"}}]`, "", 16869},
		{"two-key operator", doc, `[{"$project": {"x": {"$add": [1], "$abs": 1}}}]`, "", 15983},
		{"dotted object key", doc, `[{"$project": {"x": [{"a.b": 1}]}}]`, "", 16412},
		{"unknown operator", doc, `[{"$project": {"x": {"$foo": 1}}}]`, "", mongoerr.InvalidPipelineOperator},
		{"unsupported operator", doc, `[{"$project": {"x": {"$dateToString": {}}}}]`, "", mongoerr.NotImplemented},
	})
}

func TestAddFieldsSetUnset(t *testing.T) {
	doc := `[{"_id": 1, "a": 1, "b": {"c": 2}, "e": [{"c": 1}, 5]}]`
	runCases(t, []pipeCase{
		{"add new", doc, `[{"$addFields": {"x": 1, "y": true}}]`, `[{"_id": 1, "a": 1, "b": {"c": 2}, "e": [{"c": 1}, 5], "x": 1, "y": true}]`, 0},
		{"replace in place", doc, `[{"$set": {"a": "$b.c"}}]`, `[{"_id": 1, "a": 2, "b": {"c": 2}, "e": [{"c": 1}, 5]}]`, 0},
		{"dotted into document", doc, `[{"$set": {"b.d": 3}}]`, `[{"_id": 1, "a": 1, "b": {"c": 2, "d": 3}, "e": [{"c": 1}, 5]}]`, 0},
		{"nested spec merges", doc, `[{"$set": {"b": {"d": 3}}}]`, `[{"_id": 1, "a": 1, "b": {"c": 2, "d": 3}, "e": [{"c": 1}, 5]}]`, 0},
		{"dotted over scalar", doc, `[{"$set": {"a.z": 3}}]`, `[{"_id": 1, "a": {"z": 3}, "b": {"c": 2}, "e": [{"c": 1}, 5]}]`, 0},
		{"dotted into array", doc, `[{"$set": {"e.z": 0}}]`, `[{"_id": 1, "a": 1, "b": {"c": 2}, "e": [{"c": 1, "z": 0}, {"z": 0}]}]`, 0},
		{"dotted new path", doc, `[{"$set": {"n.m": 1}}]`, `[{"_id": 1, "a": 1, "b": {"c": 2}, "e": [{"c": 1}, 5], "n": {"m": 1}}]`, 0},
		{"remove", doc, `[{"$set": {"a": "$$REMOVE"}}]`, `[{"_id": 1, "b": {"c": 2}, "e": [{"c": 1}, 5]}]`, 0},
		{"missing value not added", doc, `[{"$set": {"x": "$nope"}}]`, `[{"_id": 1, "a": 1, "b": {"c": 2}, "e": [{"c": 1}, 5]}]`, 0},
		{"empty document value", doc, `[{"$set": {"x": {}}}]`, `[{"_id": 1, "a": 1, "b": {"c": 2}, "e": [{"c": 1}, 5], "x": {}}]`, 0},
		{"empty spec", doc, `[{"$addFields": {}}]`, doc, 0},
		{"chained sees previous", doc, `[{"$set": {"x": 5}}, {"$set": {"y": {"$add": ["$x", 1]}}}, {"$project": {"_id": 0, "y": 1}}]`, `[{"y": 6}]`, 0},
		{"addFields not object", doc, `[{"$addFields": 1}]`, "", 40272},
		{"set collision", doc, `[{"$set": {"a": 1, "a.b": 2}}]`, "", 31250},
		{"unset one", doc, `[{"$unset": "a"}]`, `[{"_id": 1, "b": {"c": 2}, "e": [{"c": 1}, 5]}]`, 0},
		{"unset many", doc, `[{"$unset": ["a", "b.c", "e"]}]`, `[{"_id": 1, "b": {}}]`, 0},
		{"unset _id", doc, `[{"$unset": ["_id", "e"]}]`, `[{"a": 1, "b": {"c": 2}}]`, 0},
		{"unset empty array", doc, `[{"$unset": []}]`, "", 31119},
		{"unset non-string", doc, `[{"$unset": ["a", 1]}]`, "", 31120},
		{"unset number", doc, `[{"$unset": 1}]`, "", 31002},
		{"unset dollar", doc, `[{"$unset": "$a"}]`, "", 16410},
	})
}

func TestGroup(t *testing.T) {
	sales := `[
		{"_id": 1, "item": "a", "price": 10, "qty": 2, "tags": ["x"]},
		{"_id": 2, "item": "b", "price": 20, "qty": 1},
		{"_id": 3, "item": "a", "price": 5, "qty": {"$numberLong": "10"}},
		{"_id": 4, "item": "c", "price": 2.5, "qty": "n/a"},
		{"_id": 5, "price": 1, "qty": 1}
	]`
	runCases(t, []pipeCase{
		{"null _id counts all", sales, `[{"$group": {"_id": null, "n": {"$sum": 1}}}]`, `[{"_id": null, "n": 5}]`, 0},
		{"$count accumulator", sales, `[{"$group": {"_id": null, "n": {"$count": {}}}}]`, `[{"_id": null, "n": 5}]`, 0},
		{"constant _id", sales, `[{"$group": {"_id": "k", "n": {"$sum": 1}}}]`, `[{"_id": "k", "n": 5}]`, 0},
		{"by field, first-seen order", sales, `[{"$group": {"_id": "$item", "total": {"$sum": "$price"}}}]`,
			`[{"_id": "a", "total": 15}, {"_id": "b", "total": 20}, {"_id": "c", "total": 2.5}, {"_id": null, "total": 1}]`, 0},
		{"sum int32 stays int32", sales, `[{"$match": {"item": "a"}}, {"$group": {"_id": null, "s": {"$sum": "$price"}}}]`, `[{"_id": null, "s": 15}]`, 0},
		{"sum with int64 is int64", sales, `[{"$match": {"item": "a"}}, {"$group": {"_id": null, "s": {"$sum": "$qty"}}}]`, `[{"_id": null, "s": {"$numberLong": "12"}}]`, 0},
		{"sum ignores non-numbers", sales, `[{"$match": {"item": "c"}}, {"$group": {"_id": null, "s": {"$sum": "$qty"}}}]`, `[{"_id": null, "s": 0}]`, 0},
		{"sum of nothing is int32 0", sales, `[{"$group": {"_id": null, "s": {"$sum": "$nope"}}}]`, `[{"_id": null, "s": 0}]`, 0},
		{"sum with double is double", sales, `[{"$group": {"_id": null, "s": {"$sum": "$price"}}}]`, `[{"_id": null, "s": 38.5}]`, 0},
		{"sum int32 overflow becomes int64", `[{"v": 2147483647}, {"v": 1}]`, `[{"$group": {"_id": null, "s": {"$sum": "$v"}}}]`,
			`[{"_id": null, "s": {"$numberLong": "2147483648"}}]`, 0},
		{"sum int64 overflow becomes double", `[{"v": {"$numberLong": "9223372036854775807"}}, {"v": 1}]`, `[{"$group": {"_id": null, "s": {"$sum": "$v"}}}]`,
			`[{"_id": null, "s": 9.223372036854775808e18}]`, 0},
		{"sum decimal unsupported", `[{"v": {"$numberDecimal": "1.5"}}]`, `[{"$group": {"_id": null, "s": {"$sum": "$v"}}}]`, "", mongoerr.NotImplemented},
		{"avg is double", sales, `[{"$match": {"item": "a"}}, {"$group": {"_id": "$item", "m": {"$avg": "$price"}}}]`, `[{"_id": "a", "m": 7.5}]`, 0},
		{"avg of ints exact", `[{"v": 1}, {"v": 2}]`, `[{"$group": {"_id": null, "m": {"$avg": "$v"}}}]`, `[{"_id": null, "m": 1.5}]`, 0},
		{"avg of nothing is null", sales, `[{"$group": {"_id": null, "m": {"$avg": "$nope"}}}]`, `[{"_id": null, "m": null}]`, 0},
		{"min max", sales, `[{"$group": {"_id": null, "lo": {"$min": "$price"}, "hi": {"$max": "$price"}}}]`, `[{"_id": null, "lo": 1, "hi": 20}]`, 0},
		{"min max across types", sales, `[{"$group": {"_id": null, "lo": {"$min": "$qty"}, "hi": {"$max": "$qty"}}}]`, `[{"_id": null, "lo": 1, "hi": "n/a"}]`, 0},
		{"min ignores null and missing", `[{"v": null}, {"v": 3}, {}]`, `[{"$group": {"_id": null, "lo": {"$min": "$v"}}}]`, `[{"_id": null, "lo": 3}]`, 0},
		{"min of nothing is null", `[{}]`, `[{"$group": {"_id": null, "lo": {"$min": "$v"}, "hi": {"$max": "$v"}}}]`, `[{"_id": null, "lo": null, "hi": null}]`, 0},
		{"push skips missing", sales, `[{"$group": {"_id": null, "items": {"$push": "$item"}}}]`, `[{"_id": null, "items": ["a", "b", "a", "c"]}]`, 0},
		{"push documents", `[{"a": 1}, {"a": 2}]`, `[{"$group": {"_id": null, "d": {"$push": {"v": "$a"}}}}]`, `[{"_id": null, "d": [{"v": 1}, {"v": 2}]}]`, 0},
		{"addToSet", sales, `[{"$group": {"_id": null, "items": {"$addToSet": "$item"}}}]`, `[{"_id": null, "items": ["a", "b", "c"]}]`, 0},
		{"addToSet numeric equality", `[{"v": 1}, {"v": 1.0}, {"v": {"$numberLong": "1"}}, {"v": 2}]`, `[{"$group": {"_id": null, "s": {"$addToSet": "$v"}}}]`, `[{"_id": null, "s": [1, 2]}]`, 0},
		{"first last", sales, `[{"$group": {"_id": null, "f": {"$first": "$item"}, "l": {"$last": "$item"}}}]`, `[{"_id": null, "f": "a", "l": null}]`, 0},
		{"first after sort", sales, `[{"$sort": {"price": -1}}, {"$group": {"_id": null, "f": {"$first": "$_id"}, "l": {"$last": "$_id"}}}]`, `[{"_id": null, "f": 2, "l": 5}]`, 0},
		{"missing and null share a group", `[{"k": null, "v": 1}, {"v": 2}]`, `[{"$group": {"_id": "$k", "s": {"$sum": "$v"}}}]`, `[{"_id": null, "s": 3}]`, 0},
		{"numeric keys share a group", `[{"k": 1}, {"k": 1.0}, {"k": {"$numberLong": "1"}}, {"k": {"$numberDecimal": "1.0"}}]`, `[{"$group": {"_id": "$k", "n": {"$sum": 1}}}]`, `[{"_id": 1, "n": 4}]`, 0},
		{"compound _id", sales, `[{"$match": {"item": {"$exists": true}}}, {"$group": {"_id": {"i": "$item", "cheap": {"$lt": ["$price", 10]}}, "n": {"$sum": 1}}}]`,
			`[{"_id": {"i": "a", "cheap": false}, "n": 1}, {"_id": {"i": "b", "cheap": false}, "n": 1}, {"_id": {"i": "a", "cheap": true}, "n": 1}, {"_id": {"i": "c", "cheap": true}, "n": 1}]`, 0},
		{"compound _id drops missing", `[{"a": 1}]`, `[{"$group": {"_id": {"a": "$a", "b": "$b"}}}]`, `[{"_id": {"a": 1}}]`, 0},
		{"expression argument", sales, `[{"$group": {"_id": null, "rev": {"$sum": {"$multiply": ["$price", 2]}}}}]`, `[{"_id": null, "rev": 77.0}]`, 0},
		{"array group key", `[{"k": [1, 2]}, {"k": [1, 2]}, {"k": [2, 1]}]`, `[{"$group": {"_id": "$k", "n": {"$sum": 1}}}]`, `[{"_id": [1, 2], "n": 2}, {"_id": [2, 1], "n": 1}]`, 0},
		{"no _id", sales, `[{"$group": {"n": {"$sum": 1}}}]`, "", 15955},
		{"unknown accumulator", sales, `[{"$group": {"_id": null, "n": {"$foo": 1}}}]`, "", 15952},
		{"unsupported accumulator", sales, `[{"$group": {"_id": null, "n": {"$stdDevPop": "$price"}}}]`, "", mongoerr.NotImplemented},
		{"not accumulator object", sales, `[{"$group": {"_id": null, "n": 1}}]`, "", 40234},
		{"two accumulators", sales, `[{"$group": {"_id": null, "n": {"$sum": 1, "$avg": 1}}}]`, "", 40238},
		{"array operand", sales, `[{"$group": {"_id": null, "n": {"$sum": [1, 2]}}}]`, "", 40237},
		{"dotted field", sales, `[{"$group": {"_id": null, "a.b": {"$sum": 1}}}]`, "", 40235},
		{"dollar field", sales, `[{"$group": {"_id": null, "$a": {"$sum": 1}}}]`, "", 40236},
		{"not object", sales, `[{"$group": 1}]`, "", 15947},
		{"bad count", sales, `[{"$group": {"_id": null, "n": {"$count": 1}}}]`, "", mongoerr.TypeMismatch},
		{"bad _id expression", sales, `[{"$group": {"_id": {"$foo": 1}}}]`, "", mongoerr.InvalidPipelineOperator},
		{"runtime error in accumulator", `[{"a": "x"}]`, `[{"$group": {"_id": null, "n": {"$sum": {"$add": ["$a", 1]}}}}]`, "", 16554},
	})
}

func TestUnwind(t *testing.T) {
	in := `[
		{"_id": 1, "a": [1, 2]},
		{"_id": 2, "a": []},
		{"_id": 3, "a": null},
		{"_id": 4},
		{"_id": 5, "a": "s"},
		{"_id": 6, "a": [[3]], "z": 0}
	]`
	runCases(t, []pipeCase{
		{"string form", in, `[{"$unwind": "$a"}]`,
			`[{"_id": 1, "a": 1}, {"_id": 1, "a": 2}, {"_id": 5, "a": "s"}, {"_id": 6, "a": [3], "z": 0}]`, 0},
		{"document form", in, `[{"$unwind": {"path": "$a"}}]`,
			`[{"_id": 1, "a": 1}, {"_id": 1, "a": 2}, {"_id": 5, "a": "s"}, {"_id": 6, "a": [3], "z": 0}]`, 0},
		{"preserve", in, `[{"$unwind": {"path": "$a", "preserveNullAndEmptyArrays": true}}]`,
			`[{"_id": 1, "a": 1}, {"_id": 1, "a": 2}, {"_id": 2}, {"_id": 3, "a": null}, {"_id": 4}, {"_id": 5, "a": "s"}, {"_id": 6, "a": [3], "z": 0}]`, 0},
		{"index", in, `[{"$unwind": {"path": "$a", "includeArrayIndex": "i"}}]`,
			`[{"_id": 1, "a": 1, "i": {"$numberLong": "0"}}, {"_id": 1, "a": 2, "i": {"$numberLong": "1"}}, {"_id": 5, "a": "s", "i": null}, {"_id": 6, "a": [3], "z": 0, "i": {"$numberLong": "0"}}]`, 0},
		{"index and preserve", in, `[{"$unwind": {"path": "$a", "includeArrayIndex": "i", "preserveNullAndEmptyArrays": true}}, {"$match": {"_id": {"$in": [2, 3, 4]}}}]`,
			`[{"_id": 2, "i": null}, {"_id": 3, "a": null, "i": null}, {"_id": 4, "i": null}]`, 0},
		{"nested path", `[{"_id": 1, "d": {"a": [1, 2], "b": 0}}]`, `[{"$unwind": "$d.a"}]`,
			`[{"_id": 1, "d": {"a": 1, "b": 0}}, {"_id": 1, "d": {"a": 2, "b": 0}}]`, 0},
		{"path does not cross arrays", `[{"_id": 1, "d": [{"a": [1, 2]}]}]`, `[{"$unwind": "$d.a"}]`, `[]`, 0},
		{"unwind then group", `[{"t": ["x", "y"]}, {"t": ["x"]}]`, `[{"$unwind": "$t"}, {"$group": {"_id": "$t", "n": {"$sum": 1}}}]`,
			`[{"_id": "x", "n": 2}, {"_id": "y", "n": 1}]`, 0},
		{"no dollar", in, `[{"$unwind": "a"}]`, "", 28818},
		{"empty path", in, `[{"$unwind": ""}]`, "", 40719},
		{"bad type", in, `[{"$unwind": 1}]`, "", 15981},
		{"no path", in, `[{"$unwind": {"includeArrayIndex": "i"}}]`, "", 28812},
		{"path not string", in, `[{"$unwind": {"path": 1}}]`, "", 28808},
		{"unknown option", in, `[{"$unwind": {"path": "$a", "x": 1}}]`, "", 28811},
		{"preserve not bool", in, `[{"$unwind": {"path": "$a", "preserveNullAndEmptyArrays": 1}}]`, "", 28809},
		{"index dollar", in, `[{"$unwind": {"path": "$a", "includeArrayIndex": "$i"}}]`, "", 28822},
		{"index empty", in, `[{"$unwind": {"path": "$a", "includeArrayIndex": ""}}]`, "", 28810},
		{"index not string", in, `[{"$unwind": {"path": "$a", "includeArrayIndex": 1}}]`, "", 28810},
	})
}

func TestOut(t *testing.T) {
	in := parseArray(t, `[{"_id": 1, "x": 1}, {"_id": 2, "x": 2}]`)
	for _, c := range []struct {
		name, stage    string
		wantDB, wantTo string
	}{
		{"string", `{"$out": "other"}`, "db", "other"},
		{"document", `{"$out": {"db": "db2", "coll": "c"}}`, "db2", "c"},
		{"document default db", `{"$out": {"coll": "c"}}`, "db", "c"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var gotDB, gotColl string
			var written []bson.Raw
			p, err := Compile([]bson.Raw{parseDoc(t, `{"$match": {"x": {"$gt": 1}}}`), parseDoc(t, c.stage)}, Options{
				DB: "db",
				Out: func(db, coll string, docs []bson.Raw) error {
					gotDB, gotColl, written = db, coll, docs
					return nil
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			if !p.HasOut() {
				t.Fatal("HasOut is false")
			}
			res, err := p.Run(feed(in))
			if err != nil || len(res) != 0 {
				t.Fatalf("Run = %v, %v; want no results", res, err)
			}
			if gotDB != c.wantDB || gotColl != c.wantTo || canonical(t, written) != canonical(t, in[1:]) {
				t.Fatalf("wrote %s to %s.%s", canonical(t, written), gotDB, gotColl)
			}
		})
	}

	writeErr := mongoerr.New(mongoerr.DuplicateKey, "dup")
	p, err := Compile([]bson.Raw{parseDoc(t, `{"$out": "o"}`)}, Options{DB: "db", Out: func(string, string, []bson.Raw) error { return writeErr }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(feed(in)); !errors.Is(err, writeErr) {
		t.Fatalf("Run error = %v, want the writer's error", err)
	}
	p, err = Compile([]bson.Raw{parseDoc(t, `{"$match": {}}`)}, Options{})
	if err != nil || p.HasOut() {
		t.Fatalf("pipeline without $out: HasOut = %v, err %v", p != nil && p.HasOut(), err)
	}

	out := func(string, string, []bson.Raw) error { return nil }
	for _, c := range []struct {
		name   string
		stages []string
		opts   Options
		code   int32
	}{
		{"not last", []string{`{"$out": "o"}`, `{"$match": {}}`}, Options{DB: "db", Out: out}, 40601},
		{"no writer", []string{`{"$out": "o"}`}, Options{DB: "db"}, mongoerr.IllegalOperation},
		{"empty name", []string{`{"$out": ""}`}, Options{DB: "db", Out: out}, mongoerr.InvalidNamespace},
		{"no db", []string{`{"$out": "o"}`}, Options{Out: out}, mongoerr.InvalidNamespace},
		{"dollar name", []string{`{"$out": "a$b"}`}, Options{DB: "db", Out: out}, mongoerr.InvalidNamespace},
		{"system collection", []string{`{"$out": "system.x"}`}, Options{DB: "db", Out: out}, 17385},
		{"wrong type", []string{`{"$out": 1}`}, Options{DB: "db", Out: out}, 16990},
		{"coll wrong type", []string{`{"$out": {"coll": 1}}`}, Options{DB: "db", Out: out}, mongoerr.TypeMismatch},
		{"unknown field", []string{`{"$out": {"coll": "c", "x": 1}}`}, Options{DB: "db", Out: out}, 40415},
		{"timeseries", []string{`{"$out": {"coll": "c", "timeseries": {}}}`}, Options{DB: "db", Out: out}, mongoerr.NotImplemented},
	} {
		var stages []bson.Raw
		for _, s := range c.stages {
			stages = append(stages, parseDoc(t, s))
		}
		_, err := Compile(stages, c.opts)
		if me := mongoerr.As(errOrNil(err)); err == nil || me.Code != c.code {
			t.Errorf("%s: got %v, want code %d", c.name, err, c.code)
		}
	}
}

func errOrNil(err error) error {
	if err == nil {
		return errors.New("no error")
	}
	return err
}

func TestCompileInvalidBSON(t *testing.T) {
	for _, raw := range []bson.Raw{nil, {1, 2}, {5, 0, 0, 0, 1}, {12, 0, 0, 0, 0x10, 'a', 0, 1, 0, 0, 0, 9}} {
		_, err := Compile([]bson.Raw{raw}, Options{})
		if err == nil {
			t.Errorf("Compile(%x) succeeded", []byte(raw))
			continue
		}
		var me *mongoerr.Error
		if !errors.As(err, &me) {
			t.Errorf("Compile(%x) error %T is not a *mongoerr.Error", []byte(raw), err)
		}
	}
}

func TestRunReusable(t *testing.T) {
	p, err := Compile(parseArray(t, `[{"$group": {"_id": "$k", "n": {"$sum": 1}}}, {"$sort": {"_id": 1}}]`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := parseArray(t, `[{"k": 2}, {"k": 1}, {"k": 2}]`)
	want := `[{"_id":{"$numberInt":"1"},"n":{"$numberInt":"1"}},{"_id":{"$numberInt":"2"},"n":{"$numberInt":"2"}}]`
	for i := 0; i < 2; i++ {
		got, err := p.Run(feed(in))
		if err != nil {
			t.Fatal(err)
		}
		if g := canonical(t, got); g != want {
			t.Fatalf("run %d: got %s, want %s", i, g, want)
		}
	}
	if got, err := p.Run(nil); err != nil || len(got) != 0 {
		t.Fatalf("Run(nil) = %v, %v", got, err)
	}
}

func TestNowDefaultsToRunTime(t *testing.T) {
	p, err := Compile(parseArray(t, `[{"$project": {"t": "$$NOW"}}]`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now().UnixMilli()
	got, err := p.Run(feed(parseArray(t, `[{"_id": 1}]`)))
	if err != nil {
		t.Fatal(err)
	}
	ms := got[0].Lookup("t").DateTime()
	if ms < before || ms > time.Now().UnixMilli() {
		t.Fatalf("$$NOW = %d, want between %d and now", ms, before)
	}
}

func TestConcurrentRuns(t *testing.T) {
	p, err := Compile(parseArray(t, `[{"$set": {"x": {"$add": ["$a", 1]}}}, {"$group": {"_id": null, "s": {"$sum": "$x"}}}]`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := parseArray(t, `[{"a": 1}, {"a": 2}, {"a": 3}]`)
	want := `[{"_id":null,"s":{"$numberInt":"9"}}]`
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := p.Run(feed(in))
			if err != nil {
				errs <- err.Error()
				return
			}
			if len(got) != 1 {
				errs <- fmt.Sprintf("%d results", len(got))
				return
			}
			if g, err := bson.AppendExtJSON(nil, got[0], true); err != nil || "["+string(g)+"]" != want {
				errs <- fmt.Sprintf("%s %v", g, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// checkRun runs the compiled pipeline p (or takes its compile error err) on
// input and checks the result against want, or the error against code
// when code is not 0.
func checkRun(t *testing.T, p *Pipeline, err error, input, want string, code int32) {
	t.Helper()
	var got []bson.Raw
	if err == nil {
		got, err = p.Run(feed(parseArray(t, input)))
	}
	if code != 0 {
		var me *mongoerr.Error
		if !errors.As(err, &me) {
			t.Fatalf("got %v (%v), want error code %d", err, canonicalOrNil(t, got), code)
		}
		if me.Code != code {
			t.Fatalf("got error %v, want code %d", me, code)
		}
		return
	}
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if g, w := canonical(t, got), canonical(t, parseArray(t, want)); g != w {
		t.Fatalf("got  %s\nwant %s", g, w)
	}
}

func TestMatchNestedExpr(t *testing.T) {
	docs := []bson.Raw{parseDoc(t, `{"_id": 1, "a": 1, "b": 5}`), parseDoc(t, `{"_id": 2, "a": 7, "b": 5}`), parseDoc(t, `{"_id": 3, "a": 9, "b": 1}`)}
	for _, tc := range []struct {
		name, pipeline, want string
		code                 int32
	}{
		{"in $or", `[{"$match": {"$or": [{"$expr": {"$gt": ["$a", "$b"]}}, {"_id": 1}]}}]`, `[{"_id": 1, "a": 1, "b": 5}, {"_id": 2, "a": 7, "b": 5}, {"_id": 3, "a": 9, "b": 1}]`, 0},
		{"in $and with a field", `[{"$match": {"$and": [{"$expr": {"$gt": ["$a", "$b"]}}, {"b": 5}]}}]`, `[{"_id": 2, "a": 7, "b": 5}]`, 0},
		{"undefined variable in $nor", `[{"$match": {"$nor": [{"$expr": {"$eq": ["$a", "$$zz"]}}]}}]`, ``, 17276},
		{"eval error", `[{"$match": {"$or": [{"$expr": {"$divide": ["$a", 0]}}]}}]`, ``, 16608},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stages []bson.Raw
			for _, v := range arrayValues(docValue(parseDoc(t, `{"p": `+tc.pipeline+`}`).Lookup("p").Value)) {
				stages = append(stages, v.Document())
			}
			p, err := Compile(stages, Options{})
			var got []bson.Raw
			if err == nil {
				got, err = p.Run(feed(docs))
			}
			if tc.code != 0 {
				if me := mongoerr.As(errOrNil(err)); err == nil || me.Code != tc.code {
					t.Fatalf("got %v, want code %d", err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g, w := canonical(t, got), canonical(t, docsOf(t, tc.want)); g != w {
				t.Errorf("got %s, want %s", g, w)
			}
		})
	}
}

func docsOf(t *testing.T, js string) []bson.Raw {
	var out []bson.Raw
	for _, v := range arrayValues(parseDoc(t, `{"d": `+js+`}`).Lookup("d")) {
		out = append(out, v.Document())
	}
	return out
}
