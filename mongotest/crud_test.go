package mongotest

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

// crudServer starts a standalone server and connects a client to it.
func crudServer(t *testing.T) (*Server, *client) {
	t.Helper()
	s := NewServer(t, Options{})
	return s, connect(t, s, clientOpts{})
}

// relaxed renders v as relaxed Extended JSON for comparisons.
func relaxed(t testing.TB, v bson.RawValue) string {
	t.Helper()
	if v.Type == 0 {
		return "<missing>"
	}
	start, b := bson.AppendDocumentStart(nil)
	b = bson.AppendValueElement(b, "v", v)
	b, _ = bson.AppendDocumentEnd(b, start)
	js, err := bson.AppendExtJSON(nil, b, false)
	if err != nil {
		t.Fatal(err)
	}
	s := string(js)
	s = strings.TrimPrefix(s, `{"v":`)
	s = strings.TrimPrefix(s, `{"v": `)
	return strings.TrimSuffix(s, "}")
}

// js normalizes a JSON text so equal values compare equal whatever their
// spacing.
func js(t testing.TB, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad JSON %s: %v", s, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// expectField checks field path of reply against want (relaxed JSON).
func expectField(t testing.TB, reply bson.Raw, path, want string) {
	t.Helper()
	v, _ := reply.LookupPath(path)
	got := relaxed(t, v)
	if want == "<missing>" || got == "<missing>" {
		if got != want {
			t.Errorf("%s = %s, want %s (reply %s)", path, got, want, reply)
		}
		return
	}
	if js(t, got) != js(t, want) {
		t.Errorf("%s = %s, want %s (reply %s)", path, got, want, reply)
	}
}

func wantCode(t testing.TB, err error, code int32, msgPart string) *cmdError {
	t.Helper()
	ce := asCmdError(t, err)
	if ce.Code != code {
		t.Fatalf("code %d (%s: %s), want %d", ce.Code, ce.CodeName, ce.Message, code)
	}
	if !strings.Contains(ce.Message, msgPart) {
		t.Fatalf("message %q does not contain %q", ce.Message, msgPart)
	}
	return ce
}

// findAll returns the collection's documents in natural order.
func findAll(t testing.TB, c *client, db, coll string) string {
	t.Helper()
	r := c.mustRun(db, d("find", coll, "batchSize", 1000))
	v, _ := r.LookupPath("cursor.firstBatch")
	return relaxed(t, v)
}

func TestInsert(t *testing.T) {
	_, c := crudServer(t)
	r := c.mustRun("db", d("insert", "c", "documents", bson.A{d("_id", 1, "a", 1), d("_id", 2)}))
	expectField(t, r, "n", "2")
	expectField(t, r, "writeErrors", "<missing>")

	tests := []struct {
		name    string
		ordered any
		docs    bson.A
		n       string
		errs    string
	}{
		{"ordered stops", true, bson.A{d("_id", 3), d("_id", 1), d("_id", 4)}, "1",
			`[{"index":1,"code":11000,"errmsg":"E11000 duplicate key error collection: db.c index: _id_ dup key: { _id: 1 }","keyPattern":{"_id":1},"keyValue":{"_id":1}}]`},
		{"unordered goes on", false, bson.A{d("_id", 2), d("_id", 5), d("_id", 5)}, "1",
			`[{"index":0,"code":11000,"errmsg":"E11000 duplicate key error collection: db.c index: _id_ dup key: { _id: 2 }","keyPattern":{"_id":1},"keyValue":{"_id":2}},` +
				`{"index":2,"code":11000,"errmsg":"E11000 duplicate key error collection: db.c index: _id_ dup key: { _id: 5 }","keyPattern":{"_id":1},"keyValue":{"_id":5}}]`},
		{"bad _id", true, bson.A{d("_id", bson.A{1})}, "0", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := c.mustRun("db", d("insert", "c", "documents", tc.docs, "ordered", tc.ordered))
			expectField(t, r, "n", tc.n)
			if tc.errs != "" {
				expectField(t, r, "writeErrors", tc.errs)
			} else {
				expectField(t, r, "writeErrors.0.code", "2")
			}
		})
	}
	if got := findAll(t, c, "db", "c"); js(t, got) != js(t, `[{"_id":1,"a":1},{"_id":2},{"_id":3},{"_id":5}]`) {
		t.Errorf("collection holds %s", got)
	}
	// A document without _id gets an ObjectID, first.
	c.mustRun("db", d("insert", "gen", "documents", bson.A{d("x", 1)}))
	r = c.mustRun("db", d("find", "gen"))
	first, _ := r.LookupPath("cursor.firstBatch.0")
	if it := first.Document().Iter(); !it.Next() || it.Key() != "_id" || it.Value().Type != bson.TypeObjectID {
		t.Errorf("generated _id missing or not first: %s", first)
	}
}

func TestWriteCommandErrors(t *testing.T) {
	_, c := crudServer(t)
	tests := []struct {
		name string
		cmd  bson.D
		code int32
		msg  string
	}{
		{"unknown field", d("insert", "c", "documents", bson.A{bson.D{}}, "bogus", 1), 40415, "BSON field 'insert.bogus' is an unknown field."},
		{"no documents", d("insert", "c"), 40414, "insert.documents"},
		{"empty batch", d("insert", "c", "documents", bson.A{}), 16, "Got 0 operations"},
		{"non-document", d("insert", "c", "documents", bson.A{1}), 14, "insert.documents.0"},
		{"collection type", d("insert", 1, "documents", bson.A{bson.D{}}), 73, "invalid type"},
		{"insert collation", d("insert", "c", "documents", bson.A{bson.D{}}, "collation", d("locale", "fr")), 40415, "'insert.collation' is an unknown field"},
		{"update let not a document", d("update", "c", "updates", bson.A{d("q", bson.D{}, "u", d("$set", d("a", 1)))}, "let", 1), 14, "'update.let' is the wrong type"},
		{"delete let not a document", d("delete", "c", "deletes", bson.A{d("q", bson.D{}, "limit", 0)}, "let", "x"), 14, "'delete.let' is the wrong type"},
		{"transaction", d("insert", "c", "documents", bson.A{bson.D{}}, "startTransaction", true), 238, "transactions"},
		{"delete limit", d("delete", "c", "deletes", bson.A{d("q", bson.D{}, "limit", 2)}), 9, "must be 0 or 1"},
		{"delete without limit", d("delete", "c", "deletes", bson.A{d("q", bson.D{})}), 40414, "limit"},
		{"update without u", d("update", "c", "updates", bson.A{d("q", bson.D{})}), 40414, "update.updates.u"},
		{"update unknown stmt field", d("update", "c", "updates", bson.A{d("q", bson.D{}, "u", bson.D{}, "x", 1)}), 40415, "update.updates.x"},
		{"writeConcern field", d("insert", "c", "documents", bson.A{bson.D{}}, "writeConcern", d("w", 1, "x", 1)), 40415, "writeConcern.x"},
		{"writeConcern w", d("insert", "c", "documents", bson.A{bson.D{}}, "writeConcern", d("w", true)), 9, "w has to be"},
		{"readConcern snapshot on a standalone", d("find", "c", "readConcern", d("level", "snapshot")), 123, "replica set member to use readConcern: snapshot"},
		{"txnNumber on standalone", d("insert", "c", "documents", bson.A{bson.D{}}, "lsid", d("id", bson.Binary{Subtype: 4, Data: make([]byte, 16)}), "txnNumber", int64(1)), 20, "replica set member or mongos"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.run("db", tc.cmd)
			wantCode(t, err, tc.code, tc.msg)
		})
	}
}

func TestUpdate(t *testing.T) {
	_, c := crudServer(t)
	c.mustRun("db", d("insert", "c", "documents", bson.A{d("_id", 1, "a", 1), d("_id", 2, "a", 2), d("_id", 3, "a", 2, "arr", bson.A{1, 5, 9})}))
	tests := []struct {
		name    string
		stmts   bson.A
		ordered bool
		reply   map[string]string
	}{
		{"single", bson.A{d("q", d("a", 2), "u", d("$inc", d("a", 10)))}, true,
			map[string]string{"n": "1", "nModified": "1", "upserted": "<missing>"}},
		{"multi", bson.A{d("q", d("a", d("$gte", 1)), "u", d("$set", d("b", true)), "multi", true)}, true,
			map[string]string{"n": "3", "nModified": "3"}},
		{"no change", bson.A{d("q", d("_id", 1), "u", d("$set", d("b", true)))}, true,
			map[string]string{"n": "1", "nModified": "0"}},
		{"replacement", bson.A{d("q", d("_id", 2), "u", d("x", "y"))}, true,
			map[string]string{"n": "1", "nModified": "1"}},
		{"upsert with _id from the query", bson.A{d("q", d("_id", 7, "k", "v"), "u", d("$set", d("z", 1)), "upsert", true)}, true,
			map[string]string{"n": "1", "nModified": "0", "upserted": `[{"index":0,"_id":7}]`}},
		{"replacement upsert", bson.A{d("q", d("_id", 8, "k", "v"), "u", d("r", 1), "upsert", true)}, true,
			map[string]string{"upserted": `[{"index":0,"_id":8}]`}},
		{"arrayFilters", bson.A{d("q", d("_id", 3), "u", d("$set", d("arr.$[e]", 0)), "arrayFilters", bson.A{d("e", d("$gt", 4))})}, true,
			map[string]string{"n": "1", "nModified": "1"}},
		{"write errors ordered", bson.A{
			d("q", d("_id", 1), "u", d("$set", d("_id", 5))),
			d("q", d("_id", 1), "u", d("$set", d("c", 1))),
		}, true, map[string]string{"n": "0", "nModified": "0", "writeErrors.0.index": "0", "writeErrors.0.code": "66", "writeErrors.1": "<missing>"}},
		{"write errors unordered", bson.A{
			d("q", d("$bogus", 1), "u", d("$set", d("c", 1))),
			d("q", d("_id", 1), "u", d("$set", d("c", 1))),
			d("q", d("_id", 1), "u", d("c", 1), "multi", true),
		}, false, map[string]string{"n": "1", "nModified": "1", "writeErrors.0.index": "0", "writeErrors.0.code": "2", "writeErrors.1.index": "2", "writeErrors.1.code": "9"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := c.mustRun("db", d("update", "c", "updates", tc.stmts, "ordered", tc.ordered))
			for path, want := range tc.reply {
				expectField(t, r, path, want)
			}
		})
	}
	want := `[{"_id":1,"a":1,"b":true,"c":1},{"_id":2,"x":"y"},{"_id":3,"a":2,"arr":[1,0,0],"b":true},{"_id":7,"k":"v","z":1},{"_id":8,"r":1}]`
	if got := findAll(t, c, "db", "c"); js(t, got) != js(t, want) {
		t.Errorf("collection holds\n%s\nwant\n%s", got, want)
	}
}

func TestDelete(t *testing.T) {
	_, c := crudServer(t)
	c.mustRun("db", d("insert", "c", "documents", bson.A{d("_id", 1, "a", 1), d("_id", 2, "a", 1), d("_id", 3, "a", 2), d("_id", 4, "a", 3)}))
	tests := []struct {
		stmts bson.A
		n     string
	}{
		{bson.A{d("q", d("a", 1), "limit", 1)}, "1"},
		{bson.A{d("q", d("a", d("$gte", 1)), "limit", 0)}, "3"},
		{bson.A{d("q", d("a", 9), "limit", 0)}, "0"},
	}
	for i, tc := range tests {
		r := c.mustRun("db", d("delete", "c", "deletes", tc.stmts))
		expectField(t, r, "n", tc.n)
		if t.Failed() {
			t.Fatalf("case %d", i)
		}
	}
	r := c.mustRun("db", d("delete", "missing", "deletes", bson.A{d("q", bson.D{}, "limit", 0)}))
	expectField(t, r, "n", "0")
}

func TestFindAndModify(t *testing.T) {
	_, c := crudServer(t)
	c.mustRun("db", d("insert", "c", "documents", bson.A{d("_id", 1, "a", 3), d("_id", 2, "a", 1), d("_id", 3, "a", 2)}))
	c.mustRun("db", d("createIndexes", "c", "indexes", bson.A{d("key", d("u", 1), "name", "u_1", "unique", true, "sparse", true)}))
	tests := []struct {
		name  string
		cmd   bson.D
		reply map[string]string
	}{
		{"update returns old", d("findAndModify", "c", "query", d("a", d("$gt", 1)), "sort", d("a", 1), "update", d("$inc", d("a", 10))),
			map[string]string{"value": `{"_id":3,"a":2}`, "lastErrorObject": `{"n":1,"updatedExisting":true}`}},
		{"update returns new with fields", d("findAndModify", "c", "query", d("_id", 2), "update", d("$set", d("b", 1)), "new", true, "fields", d("b", 1)),
			map[string]string{"value": `{"_id":2,"b":1}`}},
		{"no match", d("findAndModify", "c", "query", d("_id", 99), "update", d("$set", d("b", 1))),
			map[string]string{"value": "null", "lastErrorObject": `{"n":0,"updatedExisting":false}`}},
		{"upsert", d("findAndModify", "c", "query", d("_id", 9), "update", d("$set", d("b", 1)), "upsert", true, "new", true),
			map[string]string{"value": `{"_id":9,"b":1}`, "lastErrorObject": `{"n":1,"updatedExisting":false,"upserted":9}`}},
		{"upsert returns old null", d("findAndModify", "c", "query", d("_id", 10), "update", d("v", 1), "upsert", true),
			map[string]string{"value": "null", "lastErrorObject.upserted": "10"}},
		{"remove by sort desc", d("findAndModify", "c", "sort", d("a", -1), "remove", true),
			map[string]string{"value": `{"_id":3,"a":12}`, "lastErrorObject": `{"n":1}`}},
		{"alias", d("findandmodify", "c", "query", d("_id", 2), "remove", true),
			map[string]string{"value.b": "1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := c.mustRun("db", tc.cmd)
			for path, want := range tc.reply {
				expectField(t, r, path, want)
			}
		})
	}
	errTests := []struct {
		name string
		cmd  bson.D
		code int32
		msg  string
	}{
		{"neither", d("findAndModify", "c", "query", bson.D{}), 9, "Either an update or remove=true"},
		{"both", d("findAndModify", "c", "remove", true, "update", d("$set", d("a", 1))), 9, "both an update and remove"},
		{"remove new", d("findAndModify", "c", "remove", true, "new", true), 9, "new=true and remove=true"},
		{"immutable", d("findAndModify", "c", "query", d("_id", 1), "update", d("$set", d("_id", 2))), 66, "_id"},
		{"collation without locale", d("findAndModify", "c", "remove", true, "collation", d("strength", 2)), 40414, "collation.locale"},
	}
	for _, tc := range errTests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.run("db", tc.cmd)
			wantCode(t, err, tc.code, tc.msg)
		})
	}
	c.mustRun("db", d("findAndModify", "c", "query", d("_id", 1), "update", d("$set", d("u", 1))))
	_, err := c.run("db", d("findAndModify", "c", "query", d("_id", 9), "update", d("$set", d("u", 1))))
	ce := wantCode(t, err, 11000, "dup key")
	expectField(t, ce.Raw, "keyPattern", `{"u":1}`)
	expectField(t, ce.Raw, "keyValue", `{"u":1}`)
}

func TestCountDistinct(t *testing.T) {
	_, c := crudServer(t)
	c.mustRun("db", d("insert", "c", "documents", bson.A{
		d("_id", 1, "a", 1, "t", bson.A{"x", "y"}),
		d("_id", 2, "a", 2, "t", "x", "s", d("k", 1)),
		d("_id", 3, "a", 1.0, "s", bson.A{d("k", 2), d("k", 1)}),
		d("_id", 4, "t", bson.A{bson.A{"x"}}),
	}))
	tests := []struct {
		cmd   bson.D
		field string
		want  string
	}{
		{d("count", "c"), "n", "4"},
		{d("count", "c", "query", d("a", 1)), "n", "2"},
		{d("count", "c", "skip", 1, "limit", 2), "n", "2"},
		{d("count", "c", "skip", 3, "limit", -5), "n", "1"},
		{d("count", "missing"), "n", "0"},
		{d("distinct", "c", "key", "a"), "values", "[1,2]"},
		{d("distinct", "c", "key", "t"), "values", `["x","y",["x"]]`},
		{d("distinct", "c", "key", "s.k"), "values", "[1,2]"},
		{d("distinct", "c", "key", "t", "query", d("a", 2)), "values", `["x"]`},
		{d("distinct", "missing", "key", "a"), "values", "[]"},
	}
	for _, tc := range tests {
		r := c.mustRun("db", tc.cmd)
		expectField(t, r, tc.field, tc.want)
	}
	_, err := c.run("db", d("distinct", "c", "key", 1))
	wantCode(t, err, 14, "distinct.key")
	_, err = c.run("db", d("count", "c", "skip", -1))
	wantCode(t, err, 2, "negative")
}

func TestRoleChecks(t *testing.T) {
	lsid := d("id", bson.Binary{Subtype: 4, Data: make([]byte, 16)})
	tests := []struct {
		role   Role
		cmd    bson.D
		code   int32
		labels []string
	}{
		{RoleSecondary, d("insert", "c", "documents", bson.A{bson.D{}}), 10107, nil},
		{RoleSecondary, d("insert", "c", "documents", bson.A{bson.D{}}, "lsid", lsid, "txnNumber", int64(1)), 10107, []string{"RetryableWriteError"}},
		{RoleHidden, d("update", "c", "updates", bson.A{d("q", bson.D{}, "u", d("$set", d("a", 1)))}), 10107, nil},
		{RoleArbiter, d("delete", "c", "deletes", bson.A{d("q", bson.D{}, "limit", 0)}), 10107, nil},
		{RoleSecondary, d("create", "c"), 10107, nil},
		{RoleSecondary, d("find", "c"), 13435, nil},
		{RoleSecondary, d("find", "c", "$readPreference", d("mode", "primary")), 13435, nil},
		{RoleSecondary, d("count", "c"), 13435, nil},
		{RoleArbiter, d("find", "c", "$readPreference", d("mode", "secondary")), 13436, nil},
		{RoleSecondary, d("find", "c", "$readPreference", d("mode", "secondaryPreferred")), 0, nil},
		{RoleHidden, d("listCollections", 1, "$readPreference", d("mode", "nearest")), 0, nil},
		{RolePrimary, d("find", "c"), 0, nil},
		{RolePrimary, d("insert", "c", "documents", bson.A{bson.D{}}), 0, nil},
		{RoleMongos, d("insert", "c", "documents", bson.A{bson.D{}}), 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.role.String()+"/"+tc.cmd[0].Key, func(t *testing.T) {
			topo := Topology{Role: tc.role}
			if tc.role.replicaSet() {
				topo.SetName = "rs"
			}
			s := NewServer(t, Options{Topology: topo})
			c := connect(t, s, clientOpts{})
			_, err := c.run("db", tc.cmd)
			if tc.code == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			ce := wantCode(t, err, tc.code, "")
			if !reflect.DeepEqual(ce.Labels, tc.labels) {
				t.Errorf("labels %v, want %v", ce.Labels, tc.labels)
			}
		})
	}
}
