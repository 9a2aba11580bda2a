package mongotest

import (
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

func TestAggregate(t *testing.T) {
	s, c := crudServer(t)
	insertN(t, c, "db", "c", 6)
	tests := []struct {
		name     string
		pipeline bson.A
		want     string
	}{
		{"match sort", bson.A{d("$match", d("g", 1)), d("$sort", d("_id", -1))}, `[{"_id":4,"v":2,"g":1},{"_id":1,"v":5,"g":1}]`},
		{"group", bson.A{d("$group", d("_id", "$g", "n", d("$sum", 1), "vs", d("$push", "$v"))), d("$sort", d("_id", 1))},
			`[{"_id":0,"n":2,"vs":[6,3]},{"_id":1,"n":2,"vs":[5,2]},{"_id":2,"n":2,"vs":[4,1]}]`},
		{"count", bson.A{d("$match", d("v", d("$gt", 2))), d("$count", "n")}, `[{"n":4}]`},
		{"project limit skip", bson.A{d("$skip", 1), d("$limit", 2), d("$project", d("_id", 0, "x", d("$add", bson.A{"$v", 1})))}, `[{"x":6},{"x":5}]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := c.mustRun("db", d("aggregate", "c", "pipeline", tc.pipeline, "cursor", bson.D{}))
			expectField(t, r, "cursor.firstBatch", tc.want)
			expectField(t, r, "cursor.id", "0")
			expectField(t, r, "cursor.ns", `"db.c"`)
		})
	}
	r := c.mustRun("db", d("aggregate", "c", "pipeline", bson.A{}, "cursor", d("batchSize", 4)))
	id := cursorID(t, r)
	r = c.mustRun("db", d("getMore", id, "collection", "c"))
	if got := batchIDs(t, r, "nextBatch"); got != "4,5" || cursorID(t, r) != 0 {
		t.Fatalf("aggregate getMore %s", r)
	}

	// $out replaces the target, keeping its indexes.
	c.mustRun("db", d("insert", "out", "documents", bson.A{d("_id", 100)}))
	c.mustRun("db", d("createIndexes", "out", "indexes", bson.A{d("key", d("g", 1), "name", "g_1")}))
	r = c.mustRun("db", d("aggregate", "c", "pipeline", bson.A{d("$match", d("g", 2)), d("$out", "out")}, "cursor", bson.D{}))
	expectField(t, r, "cursor.firstBatch", "[]")
	if got := findAll(t, c, "db", "out"); js(t, got) != js(t, `[{"_id":2,"v":4,"g":2},{"_id":5,"v":1,"g":2}]`) {
		t.Errorf("$out wrote %s", got)
	}
	r = c.mustRun("db", d("listIndexes", "out"))
	if got := names(t, r, "cursor.firstBatch"); got != "_id_,g_1" {
		t.Errorf("$out target indexes %q", got)
	}
	r = c.mustRun("db", d("listCollections", 1, "nameOnly", true))
	if got := names(t, r, "cursor.firstBatch"); got != "c,out" {
		t.Errorf("collections after $out: %q", got)
	}
	// A failed $out leaves the target as it was.
	c.mustRun("db", d("createIndexes", "out", "indexes", bson.A{d("key", d("v", 1), "name", "v_1", "unique", true)}))
	_, err := c.run("db", d("aggregate", "c", "pipeline", bson.A{d("$project", d("v", d("$literal", 1))), d("$out", "out")}, "cursor", bson.D{}))
	wantCode(t, err, 11000, "dup key")
	if got := findAll(t, c, "db", "out"); js(t, got) != js(t, `[{"_id":2,"v":4,"g":2},{"_id":5,"v":1,"g":2}]`) {
		t.Errorf("failed $out changed the target: %s", got)
	}
	// No temporary collection is left behind.
	r = c.mustRun("db", d("listCollections", 1, "nameOnly", true, "filter", d("name", d("$regex", "^tmp"))))
	expectField(t, r, "cursor.firstBatch", "[]")

	errTests := []struct {
		name string
		cmd  bson.D
		code int32
		msg  string
	}{
		{"no cursor", d("aggregate", "c", "pipeline", bson.A{}), 9, "'cursor' option is required"},
		{"explain", d("aggregate", "c", "pipeline", bson.A{}, "explain", true), 238, "explain"},
		{"unknown stage", d("aggregate", "c", "pipeline", bson.A{d("$nosuch", 1)}, "cursor", bson.D{}), 40324, ""},
		{"unsupported stage", d("aggregate", "c", "pipeline", bson.A{d("$graphLookup", d("from", "x"))}, "cursor", bson.D{}), 238, "$graphLookup"},
		{"collation caseFirst", d("aggregate", "c", "pipeline", bson.A{}, "cursor", bson.D{}, "collation", d("locale", "fr", "caseFirst", "upper")), 238, "caseFirst"},
		{"boundaries sorted by the collation", d("aggregate", "c", "pipeline", bson.A{d("$bucket", d("groupBy", "$a", "boundaries", bson.A{"B", "a"}))}, "cursor", bson.D{}, "collation", d("locale", "fr")), 40194, "must be sorted"},
		{"let not a document", d("aggregate", "c", "pipeline", bson.A{}, "cursor", bson.D{}, "let", 1), 14, "'aggregate.let' is the wrong type"},
		{"collectionless", d("aggregate", 1, "pipeline", bson.A{d("$match", bson.D{})}, "cursor", bson.D{}), 73, "a collection is required"},
		{"currentOp outside admin", d("aggregate", 1, "pipeline", bson.A{d("$currentOp", bson.D{})}, "cursor", bson.D{}), 73, "$currentOp must be run against the 'admin' database"},
		{"documents", d("aggregate", 1, "pipeline", bson.A{d("$documents", bson.A{})}, "cursor", bson.D{}), 238, "$documents"},
		{"out to capped", d("aggregate", "c", "pipeline", bson.A{d("$out", "capped")}, "cursor", bson.D{}), 17152, "capped"},
	}
	c.mustRun("db", d("create", "capped", "capped", true, "size", 4096))
	for _, tc := range errTests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.run("db", tc.cmd)
			wantCode(t, err, tc.code, tc.msg)
		})
	}

	// $out writes, so a secondary refuses it even with secondaryOk.
	if err := s.SetTopology(Topology{Role: RoleSecondary, SetName: "rs"}); err != nil {
		t.Fatal(err)
	}
	_, err = c.run("db", d("aggregate", "c", "pipeline", bson.A{d("$out", "o2")}, "cursor", bson.D{}, "$readPreference", d("mode", "secondary")))
	wantCode(t, err, 10107, "not primary")
	c.mustRun("db", d("aggregate", "c", "pipeline", bson.A{}, "cursor", bson.D{}, "$readPreference", d("mode", "secondary")))
	_, err = c.run("db", d("aggregate", "c", "pipeline", bson.A{}, "cursor", bson.D{}))
	wantCode(t, err, 13435, "secondaryOk=false")
}
