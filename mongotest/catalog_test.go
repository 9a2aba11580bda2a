package mongotest

import (
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

func names(t testing.TB, r bson.Raw, path string) string {
	t.Helper()
	v, err := r.LookupPath(path)
	if err != nil {
		t.Fatalf("no %s in %s", path, r)
	}
	var out []string
	it := v.Array().Iter()
	for it.Next() {
		out = append(out, it.Value().Document().Lookup("name").StringValue())
	}
	return strings.Join(out, ",")
}

func TestCatalog(t *testing.T) {
	_, c := crudServer(t)
	c.mustRun("db", d("create", "a"))
	c.mustRun("db", d("create", "capped", "capped", true, "size", 10000, "max", 5, "validator", d("x", d("$exists", true)), "validationLevel", "strict"))
	c.mustRun("db", d("insert", "b", "documents", bson.A{d("_id", 1, "k", 1)}))
	c.mustRun("other", d("insert", "z", "documents", bson.A{d("_id", 1)}))

	r := c.mustRun("admin", d("listDatabases", 1))
	if got := names(t, r, "databases"); got != "db,other" {
		t.Errorf("databases %q", got)
	}
	expectField(t, r, "databases.0.empty", "false")
	if _, err := r.LookupErr("totalSize"); err != nil {
		t.Error("no totalSize")
	}
	r = c.mustRun("admin", d("listDatabases", 1, "nameOnly", true, "filter", d("name", "other")))
	expectField(t, r, "databases", `[{"name":"other"}]`)
	expectField(t, r, "totalSize", "<missing>")
	_, err := c.run("db", d("listDatabases", 1))
	wantCode(t, err, 13, "admin")

	r = c.mustRun("db", d("listCollections", 1))
	if got := names(t, r, "cursor.firstBatch"); got != "a,b,capped" {
		t.Errorf("collections %q", got)
	}
	expectField(t, r, "cursor.ns", `"db.$cmd.listCollections"`)
	expectField(t, r, "cursor.id", "0")
	expectField(t, r, "cursor.firstBatch.2.options", `{"capped":true,"size":10000,"max":5,"validator":{"x":{"$exists":true}},"validationLevel":"strict"}`)
	r = c.mustRun("db", d("listCollections", 1, "nameOnly", true, "filter", d("name", d("$in", bson.A{"a", "b"}))))
	expectField(t, r, "cursor.firstBatch", `[{"name":"a","type":"collection"},{"name":"b","type":"collection"}]`)
	r = c.mustRun("db", d("listCollections", 1, "cursor", d("batchSize", 1)))
	id := cursorID(t, r)
	r = c.mustRun("db", d("getMore", id, "collection", "$cmd.listCollections"))
	if got := names(t, r, "cursor.nextBatch"); got != "b,capped" || cursorID(t, r) != 0 {
		t.Errorf("listCollections getMore %s", r)
	}

	r = c.mustRun("db", d("createIndexes", "b", "indexes", bson.A{d("key", d("k", 1), "name", "k_1", "unique", true), d("key", d("p", -1), "name", "p", "partialFilterExpression", d("p", d("$gt", 1)), "unique", true)}))
	expectField(t, r, "numIndexesBefore", "1")
	expectField(t, r, "numIndexesAfter", "3")
	expectField(t, r, "createdCollectionAutomatically", "false")
	r = c.mustRun("db", d("createIndexes", "b", "indexes", bson.A{d("key", d("k", 1), "name", "k_1", "unique", true)}))
	expectField(t, r, "note", `"all indexes already exist"`)
	r = c.mustRun("db", d("createIndexes", "new", "indexes", bson.A{d("key", d("q", 1), "name", "q_1")}))
	expectField(t, r, "createdCollectionAutomatically", "true")
	// The unique indexes are enforced, the partial one only where it applies.
	r = c.mustRun("db", d("insert", "b", "documents", bson.A{d("_id", 2, "k", 1)}))
	expectField(t, r, "writeErrors.0.keyPattern", `{"k":1}`)
	r = c.mustRun("db", d("insert", "b", "documents", bson.A{d("_id", 3, "k", 3, "p", 0), d("_id", 4, "k", 4, "p", 0), d("_id", 5, "k", 5, "p", 5), d("_id", 6, "k", 6, "p", 5)}, "ordered", false))
	expectField(t, r, "n", "3")
	expectField(t, r, "writeErrors.0.index", "3")

	r = c.mustRun("db", d("listIndexes", "b"))
	if got := names(t, r, "cursor.firstBatch"); got != "_id_,k_1,p" {
		t.Errorf("indexes %q", got)
	}
	expectField(t, r, "cursor.ns", `"db.b"`)
	_, err = c.run("db", d("listIndexes", "nope"))
	wantCode(t, err, 26, "ns does not exist")

	r = c.mustRun("db", d("collMod", "b", "index", d("name", "k_1", "hidden", true)))
	expectField(t, r, "hidden_old", "false")
	expectField(t, r, "hidden_new", "true")
	r = c.mustRun("db", d("listIndexes", "b"))
	expectField(t, r, "cursor.firstBatch.1.hidden", "true")
	c.mustRun("db", d("collMod", "a", "validator", d("y", 1)))
	r = c.mustRun("db", d("listCollections", 1, "filter", d("name", "a")))
	expectField(t, r, "cursor.firstBatch.0.options", `{"validator":{"y":1}}`)

	r = c.mustRun("db", d("dropIndexes", "b", "index", "k_1"))
	expectField(t, r, "nIndexesWas", "3")
	r = c.mustRun("db", d("dropIndexes", "b", "index", d("p", -1)))
	expectField(t, r, "nIndexesWas", "2")
	_, err = c.run("db", d("dropIndexes", "b", "index", "nosuch"))
	wantCode(t, err, 27, "")
	_, err = c.run("db", d("dropIndexes", "b", "index", "_id_"))
	wantCode(t, err, 72, "")

	c.mustRun("admin", d("renameCollection", "db.b", "to", "db.b2"))
	expectField(t, c.mustRun("db", d("find", "b2")), "cursor.firstBatch.0._id", "1")
	_, err = c.run("admin", d("renameCollection", "db.b2", "to", "db.a"))
	wantCode(t, err, 48, "")
	c.mustRun("admin", d("renameCollection", "db.b2", "to", "db.a", "dropTarget", true))
	_, err = c.run("db", d("renameCollection", "db.a", "to", "db.x"))
	wantCode(t, err, 13, "admin")

	r = c.mustRun("db", d("drop", "a"))
	expectField(t, r, "ns", `"db.a"`)
	c.mustRun("db", d("drop", "a")) // mongod 7.0+: no error for a missing collection
	r = c.mustRun("other", d("dropDatabase", 1))
	expectField(t, r, "dropped", `"other"`)
	r = c.mustRun("admin", d("listDatabases", 1, "nameOnly", true))
	expectField(t, r, "databases", `[{"name":"db"}]`)

	errTests := []struct {
		name string
		db   string
		cmd  bson.D
		code int32
		msg  string
	}{
		{"create exists", "db", d("create", "capped"), 48, "already exists"},
		{"create capped without size", "db", d("create", "c2", "capped", true), 72, "size"},
		{"create encryptedFields", "db", d("create", "ef", "encryptedFields", d("fields", bson.A{})), 238, "encryptedFields"},
		{"create bad name", "db", d("create", "a$b"), 73, ""},
		{"create unknown", "db", d("create", "x", "bogus", 1), 40415, "create.bogus"},
		{"createIndexes collation caseFirst", "db", d("createIndexes", "x", "indexes", bson.A{d("key", d("a", 1), "name", "a", "collation", d("locale", "fr", "caseFirst", "upper"))}), 238, "caseFirst"},
		{"createIndexes empty", "db", d("createIndexes", "x", "indexes", bson.A{}), 2, "at least one"},
		{"collMod missing", "db", d("collMod", "nope", "validator", bson.D{}), 26, ""},
		{"collMod both", "db", d("collMod", "capped", "index", d("hidden", true)), 72, "index name or key pattern"},
		{"collMod capped", "db", d("collMod", "capped", "cappedSize", 100), 238, "cappedSize"},
		{"dropIndexes missing", "db", d("dropIndexes", "nope", "index", "*"), 26, ""},
		{"rename missing", "admin", d("renameCollection", "db.nope", "to", "db.x"), 26, ""},
	}
	for _, tc := range errTests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.run(tc.db, tc.cmd)
			wantCode(t, err, tc.code, tc.msg)
		})
	}
}
