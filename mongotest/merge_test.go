package mongotest

import (
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

func TestAggregateMerge(t *testing.T) {
	tests := []struct {
		name   string
		target []any // documents in db.t before the $merge
		merge  any
		want   string // db.t afterwards
		code   int32  // expected error code, 0 for none
	}{
		{"string into new", nil, "t", `[{"_id":1,"v":5,"g":1},{"_id":4,"v":2,"g":1}]`, 0},
		{"default merge", []any{d("_id", 1, "x", 1)}, d("into", "t"),
			`[{"_id":1,"x":1,"v":5,"g":1},{"_id":4,"v":2,"g":1}]`, 0},
		{"replace", []any{d("_id", 1, "x", 1)}, d("into", "t", "whenMatched", "replace"),
			`[{"_id":1,"v":5,"g":1},{"_id":4,"v":2,"g":1}]`, 0},
		{"keepExisting", []any{d("_id", 1, "x", 1)}, d("into", d("db", "db", "coll", "t"), "whenMatched", "keepExisting"),
			`[{"_id":1,"x":1},{"_id":4,"v":2,"g":1}]`, 0},
		{"replace discard", []any{d("_id", 1, "x", 1)}, d("into", "t", "whenMatched", "replace", "whenNotMatched", "discard"),
			`[{"_id":1,"v":5,"g":1}]`, 0},
		{"keepExisting discard unsupported", nil, d("into", "t", "whenMatched", "keepExisting", "whenNotMatched", "discard"), "", 51181},
		{"fail fail unsupported", nil, d("into", "t", "whenMatched", "fail", "whenNotMatched", "fail"), "", 51181},
		{"duplicate on", nil, d("into", "t", "on", bson.A{"a", "a"}), "", 31465},
		{"system collection", nil, "system.x", "", 31319},
		{"internal database", nil, d("into", d("db", "admin", "coll", "x")), "", 31320},
		{"whenMatched fail", []any{d("_id", 4, "x", 1)}, d("into", "t", "whenMatched", "fail"), "", 11000},
		{"whenNotMatched fail", []any{d("_id", 1)}, d("into", "t", "whenNotMatched", "fail"), "", 13113},
		{"pipeline", []any{d("_id", 1, "x", 1)}, d("into", "t", "whenMatched", bson.A{d("$set", d("y", 2))}, "whenNotMatched", "discard"),
			`[{"_id":1,"x":1,"y":2}]`, 0},
		{"pipeline $$new", []any{d("_id", 1, "x", 1)}, d("into", "t", "whenMatched", bson.A{d("$set", d("y", "$$new.v"))}, "whenNotMatched", "discard"),
			`[{"_id":1,"x":1,"y":5}]`, 0},
		{"pipeline let", []any{d("_id", 1, "x", 1)}, d("into", "t", "let", d("nv", "$v", "k", 10), "whenMatched", bson.A{d("$set", d("y", d("$add", bson.A{"$$nv", "$$k"})))}, "whenNotMatched", "discard"),
			`[{"_id":1,"x":1,"y":15}]`, 0},
		{"let hides new", nil, d("into", "t", "let", d("a", 1), "whenMatched", bson.A{d("$set", d("y", "$$new"))}), "", 17276},
		{"on without unique index", nil, d("into", "t", "on", "v"), "", 51183},
		{"bad whenMatched", nil, d("into", "t", "whenMatched", "nope"), "", 2},
		{"bad into", nil, d("into", 1), "", 51178},
		{"no into", nil, d("on", "_id"), "", 40414},
		{"not object", nil, 1, "", 14},
		{"unknown field", nil, d("into", "t", "x", 1), "", 40415},
		{"empty on", nil, d("into", "t", "on", bson.A{}), "", 51187},
		{"let without pipeline", nil, d("into", "t", "let", d("a", 1), "whenMatched", "replace"), "", 51199},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, c := crudServer(t)
			insertN(t, c, "db", "c", 6)
			if len(tc.target) > 0 {
				c.mustRun("db", d("insert", "t", "documents", tc.target))
			}
			r, err := c.run("db", d("aggregate", "c", "pipeline", bson.A{d("$match", d("g", 1)), d("$merge", tc.merge)}, "cursor", bson.D{}))
			if tc.code != 0 {
				wantCode(t, err, tc.code, "")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			expectField(t, r, "cursor.firstBatch", "[]")
			if got := findAll(t, c, "db", "t"); js(t, got) != js(t, tc.want) {
				t.Errorf("target %s, want %s", got, tc.want)
			}
		})
	}
}

func TestAggregateMergeOnUniqueIndex(t *testing.T) {
	_, c := crudServer(t)
	c.mustRun("db", d("insert", "src", "documents", bson.A{d("_id", 1, "k", "a", "n", 1), d("_id", 2, "k", "b", "n", 2)}))
	c.mustRun("db", d("insert", "t", "documents", bson.A{d("_id", 10, "k", "a", "n", 0)}))
	c.mustRun("db", d("createIndexes", "t", "indexes", bson.A{d("key", d("k", 1), "name", "k_1", "unique", true)}))
	c.mustRun("db", d("aggregate", "src", "pipeline", bson.A{d("$project", d("_id", 0)), d("$merge", d("into", "t", "on", "k"))}, "cursor", bson.D{}))
	r := c.mustRun("db", d("find", "t", "projection", d("_id", 0), "sort", d("k", 1)))
	expectField(t, r, "cursor.firstBatch", `[{"k":"a","n":1},{"k":"b","n":2}]`)
	r = c.mustRun("db", d("find", "t", "filter", d("k", "a")))
	expectField(t, r, "cursor.firstBatch", `[{"_id":10,"k":"a","n":1}]`)
	// A document without the 'on' field fails.
	_, err := c.run("db", d("aggregate", "src", "pipeline", bson.A{d("$project", d("k", 0)), d("$merge", d("into", "t", "on", "k"))}, "cursor", bson.D{}))
	wantCode(t, err, 51132, "'on' field cannot be missing")
}

func TestAggregateMergeNotLast(t *testing.T) {
	_, c := crudServer(t)
	_, err := c.run("db", d("aggregate", "c", "pipeline", bson.A{d("$merge", "t"), d("$match", bson.D{})}, "cursor", bson.D{}))
	wantCode(t, err, 40601, "$merge can only be the final stage")
}

func TestAggregateOutMergeValidation(t *testing.T) {
	_, c := crudServer(t)
	insertN(t, c, "db", "c", 3)
	c.mustRun("db", d("create", "t", "validator", d("v", d("$gt", 1))))
	for _, stage := range []bson.D{d("$out", "t"), d("$merge", "t")} {
		_, err := c.run("db", d("aggregate", "c", "pipeline", bson.A{stage}, "cursor", bson.D{}))
		wantCode(t, err, 121, "")
		c.mustRun("db", d("aggregate", "c", "pipeline", bson.A{stage}, "cursor", bson.D{}, "bypassDocumentValidation", true))
	}
	if got := findAll(t, c, "db", "t"); js(t, got) != js(t, `[{"_id":0,"v":3,"g":0},{"_id":1,"v":2,"g":1},{"_id":2,"v":1,"g":2}]`) {
		t.Errorf("target %s", got)
	}
}

// TestAggregateMergeCommandLet: the aggregate command's let is visible in
// $merge's whenMatched pipeline beside $$new.
func TestAggregateMergeCommandLet(t *testing.T) {
	_, c := crudServer(t)
	c.mustRun("db", d("insert", "src", "documents", bson.A{d("_id", 1, "n", 2)}))
	c.mustRun("db", d("insert", "t", "documents", bson.A{d("_id", 1, "n", 0)}))
	c.mustRun("db", d("aggregate", "src", "pipeline", bson.A{d("$merge", d("into", "t", "whenMatched", bson.A{d("$set", d("n", d("$multiply", bson.A{"$$new.n", "$$f"})))}))}, "cursor", bson.D{}, "let", d("f", 10)))
	expectField(t, c.mustRun("db", d("find", "t")), "cursor.firstBatch", `[{"_id":1,"n":20}]`)
}
