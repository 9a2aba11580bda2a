package mongotest

import (
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

func TestViews(t *testing.T) {
	_, c := crudServer(t)
	insertN(t, c, "db", "c", 6)
	c.mustRun("db", d("create", "v", "viewOn", "c", "pipeline", bson.A{d("$match", d("g", 1)), d("$project", d("g", 0))}))
	// A view on a view: its pipeline runs after v's.
	c.mustRun("db", d("create", "vv", "viewOn", "v", "pipeline", bson.A{d("$set", d("w", d("$add", bson.A{"$v", 10})))}))

	r := c.mustRun("db", d("listCollections", 1, "filter", d("name", "v")))
	expectField(t, r, "cursor.firstBatch", `[{"name":"v","type":"view","options":{"viewOn":"c","pipeline":[{"$match":{"g":1}},{"$project":{"g":0}}]},"info":{"readOnly":true}}]`)

	reads := []struct {
		name string
		cmd  bson.D
		path string
		want string
	}{
		{"aggregate", d("aggregate", "v", "pipeline", bson.A{d("$sort", d("_id", -1))}, "cursor", bson.D{}), "cursor.firstBatch", `[{"_id":4,"v":2},{"_id":1,"v":5}]`},
		{"aggregate ns", d("aggregate", "v", "pipeline", bson.A{}, "cursor", bson.D{}), "cursor.ns", `"db.v"`},
		{"find", d("find", "v", "filter", d("v", d("$lt", 5))), "cursor.firstBatch", `[{"_id":4,"v":2}]`},
		{"find sort limit projection", d("find", "v", "sort", d("v", 1), "limit", 1, "projection", d("_id", 0)), "cursor.firstBatch", `[{"v":2}]`},
		{"view on view", d("find", "vv", "sort", d("_id", 1)), "cursor.firstBatch", `[{"_id":1,"v":5,"w":15},{"_id":4,"v":2,"w":12}]`},
		{"count", d("count", "v"), "n", "2"},
		{"count query", d("count", "vv", "query", d("w", 12)), "n", "1"},
		{"distinct", d("distinct", "v", "key", "v"), "values", "[2,5]"},
		{"distinct query", d("distinct", "v", "key", "_id", "query", d("v", 5)), "values", "[1]"},
	}
	for _, tc := range reads {
		t.Run(tc.name, func(t *testing.T) {
			expectField(t, c.mustRun("db", tc.cmd), tc.path, tc.want)
		})
	}

	errs := []struct {
		name string
		cmd  bson.D
		code int32
		msg  string
	}{
		{"insert", d("insert", "v", "documents", bson.A{d("_id", 9)}), 166, "is a view, not a collection"},
		{"update", d("update", "v", "updates", bson.A{d("q", bson.D{}, "u", d("$set", d("x", 1)))}), 166, "is a view"},
		{"delete", d("delete", "v", "deletes", bson.A{d("q", bson.D{}, "limit", 0)}), 166, "is a view"},
		{"findAndModify", d("findAndModify", "v", "query", bson.D{}, "remove", true), 166, "is a view"},
		{"createIndexes", d("createIndexes", "v", "indexes", bson.A{d("key", d("a", 1), "name", "a_1")}), 166, "is a view"},
		{"listIndexes", d("listIndexes", "v"), 166, "is a view"},
		{"dropIndexes", d("dropIndexes", "v", "index", "*"), 166, "is a view"},
		{"out to view", d("aggregate", "c", "pipeline", bson.A{d("$out", "v")}, "cursor", bson.D{}), 166, "is a view"},
		{"merge into view", d("aggregate", "c", "pipeline", bson.A{d("$merge", "v")}, "cursor", bson.D{}), 166, "is a view"},
		{"create over view", d("create", "v"), 48, "already exists"},
		{"view over collection", d("create", "c", "viewOn", "v"), 48, "already exists"},
		{"viewOn type", d("create", "x", "viewOn", 1), 14, "viewOn"},
		{"viewOn empty", d("create", "x", "viewOn", ""), 2, "'viewOn' cannot be empty"},
		{"pipeline without viewOn", d("create", "x", "pipeline", bson.A{}), 72, "requires 'viewOn'"},
		{"capped view", d("create", "x", "viewOn", "c", "capped", true), 72, "capped"},
		{"out in view", d("create", "x", "viewOn", "c", "pipeline", bson.A{d("$out", "y")}), 167, "$out"},
		{"collation caseFirst", d("create", "x", "viewOn", "c", "collation", d("locale", "fr", "caseFirst", "upper")), 238, "caseFirst"},
		{"collation without locale", d("create", "x", "viewOn", "c", "collation", d("strength", 1)), 40414, "collation.locale"},
		{"view on view with other collation", d("create", "x", "viewOn", "v", "collation", d("locale", "fr")), 167, "conflicting collation"},
		{"override view collation", d("find", "v", "collation", d("locale", "fr")), 167, "Cannot override a view's default collation"},
		{"self cycle", d("create", "x", "viewOn", "x"), 5, "View cycle detected: db.x => db.x => db.x"},
		{"collMod cycle", d("collMod", "v", "viewOn", "vv"), 5, "View cycle detected: db.v => db.v => db.vv => db.v"},
		{"collMod viewOn on a collection", d("collMod", "c", "viewOn", "v"), 72, "option only supported on a view: viewOn"},
		{"collMod validator on a view", d("collMod", "v", "validator", d("a", 1)), 72, "option not supported on a view: validator"},
		{"collMod pipeline type", d("collMod", "v", "pipeline", d("a", 1)), 14, "'collMod.pipeline' is the wrong type 'object'"},
	}
	for _, tc := range errs {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.run("db", tc.cmd)
			wantCode(t, err, tc.code, tc.msg)
		})
	}

	_, err := c.run("admin", d("renameCollection", "db.v", "to", "db.w"))
	wantCode(t, err, 166, "cannot rename view: db.v")

	// collMod changes the definition.
	c.mustRun("db", d("collMod", "v", "pipeline", bson.A{d("$match", d("g", 2))}))
	expectField(t, c.mustRun("db", d("count", "vv")), "n", "2")
	expectField(t, c.mustRun("db", d("find", "vv", "sort", d("_id", 1), "limit", 1)), "cursor.firstBatch", `[{"_id":2,"v":4,"g":2,"w":14}]`)

	// Dropping a view leaves the collection; dropping a view's collection
	// leaves an empty view.
	r = c.mustRun("db", d("drop", "vv"))
	expectField(t, r, "ns", `"db.vv"`)
	c.mustRun("db", d("drop", "c"))
	expectField(t, c.mustRun("db", d("find", "v")), "cursor.firstBatch", "[]")
	r = c.mustRun("db", d("listCollections", 1, "nameOnly", true))
	if got := names(t, r, "cursor.firstBatch"); got != "v" {
		t.Errorf("collections %q", got)
	}
	c.mustRun("db", d("create", "s", "viewOn", "c", "collation", d("locale", "simple")))
}

func TestReplicaSetOutOnSecondary(t *testing.T) {
	rs := NewReplicaSet(t, 3, ReplicaSetOptions{})
	p := memberClient(t, rs, 0)
	insertN(t, p, "db", "c", 3)
	sec := memberClient(t, rs, 1)
	// mongod 5.0+ runs $out and $merge sent to a secondary, writing on the
	// primary; the simulated members share the primary's store.
	sec.mustRun("db", d("aggregate", "c", "pipeline", bson.A{d("$out", "o")}, "cursor", bson.D{}, "$readPreference", d("mode", "secondary")))
	sec.mustRun("db", d("aggregate", "c", "pipeline", bson.A{d("$merge", "m")}, "cursor", bson.D{}, "$readPreference", d("mode", "secondaryPreferred")))
	for _, coll := range []string{"o", "m"} {
		if got := findAll(t, p, "db", coll); js(t, got) != js(t, `[{"_id":0,"v":3,"g":0},{"_id":1,"v":2,"g":1},{"_id":2,"v":1,"g":2}]`) {
			t.Errorf("%s on the primary: %s", coll, got)
		}
	}
	// Without a read preference allowing a secondary, the read part fails.
	_, err := sec.run("db", d("aggregate", "c", "pipeline", bson.A{d("$out", "o")}, "cursor", bson.D{}))
	wantCode(t, err, 13435, "secondaryOk=false")
}
