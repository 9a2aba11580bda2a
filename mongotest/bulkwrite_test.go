package mongotest

import (
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

func TestBulkWrite(t *testing.T) {
	ns := bson.A{d("ns", "db.a"), d("ns", "other.b")}
	for _, tc := range []struct {
		name     string
		cmd      bson.D
		path     string
		want     string
		outcomeA string // db.a afterwards, when set
	}{
		{"mixed", d("bulkWrite", 1, "nsInfo", ns, "ops", bson.A{
			d("insert", 0, "document", d("_id", 3, "x", "c")),
			d("insert", 1, "document", d("_id", 1)),
			d("update", 0, "filter", d("_id", 1), "updateMods", d("$set", d("y", 1))),
			d("update", 0, "filter", d("_id", 9), "updateMods", d("$set", d("y", 2)), "upsert", true),
			d("delete", 0, "filter", d("x", "b"), "multi", true),
		}), "", `{"cursor":{"firstBatch":[{"ok":1,"idx":0,"n":1},{"ok":1,"idx":1,"n":1},{"ok":1,"idx":2,"n":1,"nModified":1},{"ok":1,"idx":3,"n":1,"nModified":0,"upserted":{"_id":9}},{"ok":1,"idx":4,"n":1}],"id":0,"ns":"admin.$cmd.bulkWrite"},"nErrors":0,"nInserted":2,"nMatched":1,"nModified":1,"nUpserted":1,"nDeleted":1,"ok":1}`,
			`[{"_id":1,"x":"a","y":1},{"_id":3,"x":"c"},{"_id":9,"y":2}]`},
		{"ordered stops at the first error", d("bulkWrite", 1, "nsInfo", ns, "ops", bson.A{
			d("insert", 0, "document", d("_id", 1)), d("insert", 0, "document", d("_id", 5))}),
			"nErrors", `1`, `[{"_id":1,"x":"a"},{"_id":2,"x":"b"}]`},
		{"unordered goes on", d("bulkWrite", 1, "nsInfo", ns, "ordered", false, "errorsOnly", true, "ops", bson.A{
			d("insert", 0, "document", d("_id", 1)), d("insert", 0, "document", d("_id", 5))}),
			"cursor.firstBatch.0.code", `11000`, `[{"_id":1,"x":"a"},{"_id":2,"x":"b"},{"_id":5}]`},
		{"error item shape", d("bulkWrite", 1, "nsInfo", ns, "ops", bson.A{d("insert", 0, "document", d("_id", 1))}),
			"cursor.firstBatch.0", `{"ok":0,"idx":0,"code":11000,"codeName":"DuplicateKey","errmsg":"E11000 duplicate key error collection: db.a index: _id_ dup key: { _id: 1 }","keyPattern":{"_id":1},"keyValue":{"_id":1},"n":0}`, ""},
		{"collation and let", d("bulkWrite", 1, "nsInfo", ns, "let", d("v", "B"), "ops", bson.A{
			d("delete", 0, "filter", d("x", "A"), "collation", d("locale", "en", "strength", 2)),
			d("update", 0, "filter", d("$expr", d("$eq", bson.A{d("$toUpper", "$x"), "$$v"})), "updateMods", bson.A{d("$set", d("z", "$$v"))}),
		}), "nDeleted", `1`, `[{"_id":2,"x":"b","z":"B"}]`},
		{"errorsOnly", d("bulkWrite", 1, "nsInfo", ns, "errorsOnly", true, "ops", bson.A{d("insert", 0, "document", d("_id", 7))}),
			"cursor.firstBatch", `[]`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c := crudServer(t)
			c.mustRun("db", d("insert", "a", "documents", bson.A{d("_id", 1, "x", "a"), d("_id", 2, "x", "b")}))
			r := c.mustRun("admin", tc.cmd)
			if tc.path == "" {
				if got := relaxedDoc(t, r); js(t, got) != js(t, tc.want) {
					t.Errorf("reply %s\nwant  %s", got, tc.want)
				}
			} else {
				expectField(t, r, tc.path, tc.want)
			}
			if tc.outcomeA != "" {
				if got := findAll(t, c, "db", "a"); js(t, got) != js(t, tc.outcomeA) {
					t.Errorf("db.a holds %s, want %s", got, tc.outcomeA)
				}
			}
		})
	}
	_, c := crudServer(t)
	for _, tc := range []struct {
		name string
		cmd  bson.D
		code int32
		msg  string
	}{
		{"not admin", d("bulkWrite", 1, "nsInfo", ns, "ops", bson.A{}), 13, ""},
		{"bad nsInfo index", d("bulkWrite", 1, "nsInfo", ns, "ops", bson.A{d("insert", 2, "document", bson.D{})}), 2, "nsInfo index"},
		{"unknown op", d("bulkWrite", 1, "nsInfo", ns, "ops", bson.A{d("upsert", 0)}), 9, "upsert"},
		{"unknown op field", d("bulkWrite", 1, "nsInfo", ns, "ops", bson.A{d("insert", 0, "document", bson.D{}, "x", 1)}), 40415, "x"},
		{"no ops", d("bulkWrite", 1, "nsInfo", ns), 40414, "ops"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := "admin"
			if tc.name == "not admin" {
				db = "db"
			}
			_, err := c.run(db, tc.cmd)
			wantCode(t, err, tc.code, tc.msg)
		})
	}
}

func relaxedDoc(t *testing.T, r bson.Raw) string {
	t.Helper()
	b, err := bson.AppendExtJSON(nil, r, false)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestBulkWriteRetry: a retried bulkWrite (same lsid and txnNumber)
// replies as the first attempt did and writes nothing again.
func TestBulkWriteRetry(t *testing.T) {
	s := NewServer(t, primaryOpts())
	c := connect(t, s, clientOpts{})
	cmd := withTxn(d("bulkWrite", 1, "nsInfo", bson.A{d("ns", "db.c")}, "ops", bson.A{
		d("insert", 0, "document", d("_id", 1, "n", 0)),
		d("update", 0, "filter", d("_id", 1), "updateMods", d("$inc", d("n", 1))),
		d("update", 0, "filter", d("_id", 2), "updateMods", d("$inc", d("n", 1)), "upsert", true),
	}), newLSID(), 1)
	for attempt := 0; attempt < 3; attempt++ {
		r := c.mustRun("admin", cmd)
		expectField(t, r, "cursor.firstBatch", `[{"ok":1,"idx":0,"n":1},{"ok":1,"idx":1,"n":1,"nModified":1},{"ok":1,"idx":2,"n":1,"nModified":0,"upserted":{"_id":2}}]`)
		expectField(t, r, "nUpserted", `1`)
	}
	if got, want := findAll(t, c, "db", "c"), `[{"_id":1,"n":1},{"_id":2,"n":1}]`; js(t, got) != js(t, want) {
		t.Fatalf("db.c holds %s, want %s", got, want)
	}
}
