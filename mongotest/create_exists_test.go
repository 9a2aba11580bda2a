package mongotest

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

// frSpec is {locale: "fr"} with mongod's defaults filled in, as mongod
// prints it.
const frSpec = `{ locale: "fr", caseLevel: false, caseFirst: "off", strength: 3, numericOrdering: false, alternate: "non-ignorable", maxVariable: "punct", normalization: false, backwards: false, version: "57.1" }`

// TestCreateExisting: create on a namespace that exists succeeds when the
// options are the same and fails with NamespaceExists (48) and mongod's
// message otherwise, as mongod 7.0+ (SERVER-60064).
func TestCreateExisting(t *testing.T) {
	_, c := crudServer(t)
	plain := d("create", "c")
	capped := d("create", "c", "capped", true, "size", 4096, "max", 3)
	validated := d("create", "c", "validator", d("a", d("$gt", 1)), "validationLevel", "moderate", "validationAction", "warn")
	clustered := d("create", "c", "clusteredIndex", d("key", d("_id", 1), "unique", true))
	ts := d("create", "c", "timeseries", d("timeField", "t", "metaField", "m"), "expireAfterSeconds", 60)
	view := d("create", "c", "viewOn", "src", "pipeline", bson.A{d("$match", d("a", 1))})
	tests := []struct {
		name        string
		first, next bson.D
		// msg is the whole message, with {uuid} for the collection's
		// UUID; "" means success.
		msg string
	}{
		// The same options: ok.
		{"plain", plain, plain, ""},
		{"generic arguments and idIndex ignored", plain, d("create", "c", "writeConcern", d("w", 1), "comment", "again", "idIndex", d("key", d("_id", 1), "name", "_id_", "v", 2)), ""},
		{"capped", capped, d("create", "c", "capped", true, "size", int64(4096), "max", 3.0), ""},
		{"validator numbers by value", validated, d("create", "c", "validator", d("a", d("$gt", 1.0)), "validationLevel", "moderate", "validationAction", "warn"), ""},
		{"empty validator is none", plain, d("create", "c", "validator", bson.D{}, "storageEngine", bson.D{}), ""},
		{"collation defaults", d("create", "c", "collation", d("locale", "fr")), d("create", "c", "collation", d("locale", "fr", "strength", 3, "caseLevel", false)), ""},
		{"simple collation is none", plain, d("create", "c", "collation", d("locale", "simple")), ""},
		{"clustered with its default name", clustered, d("create", "c", "clusteredIndex", d("key", d("_id", 1), "unique", true, "name", "_id_")), ""},
		{"timeseries with its default granularity", ts, d("create", "c", "timeseries", d("timeField", "t", "metaField", "m", "granularity", "seconds"), "expireAfterSeconds", int64(60)), ""},
		{"autoIndexId", d("create", "c", "autoIndexId", true), d("create", "c", "autoIndexId", true), ""},
		{"pre- and post-images", d("create", "c", "changeStreamPreAndPostImages", d("enabled", true)), d("create", "c", "changeStreamPreAndPostImages", d("enabled", true)), ""},
		{"view", view, view, ""},
		{"view with an empty pipeline", d("create", "c", "viewOn", "src"), d("create", "c", "viewOn", "src", "pipeline", bson.A{}), ""},
		{"view collation defaults", d("create", "c", "viewOn", "src", "collation", d("locale", "fr")), d("create", "c", "viewOn", "src", "collation", d("locale", "fr", "strength", 3)), ""},

		// Other options: NamespaceExists, quoting the existing ones.
		{"plain then capped", plain, capped, `namespace {db}.c already exists, but with different options: { uuid: {uuid} }`},
		{"capped then plain", capped, plain, `namespace {db}.c already exists, but with different options: { uuid: {uuid}, capped: true, size: 4096, max: 3 }`},
		{"capped size", capped, d("create", "c", "capped", true, "size", 8192, "max", 3), `namespace {db}.c already exists, but with different options: { uuid: {uuid}, capped: true, size: 4096, max: 3 }`},
		{"capped max", capped, d("create", "c", "capped", true, "size", 4096), `namespace {db}.c already exists, but with different options: { uuid: {uuid}, capped: true, size: 4096, max: 3 }`},
		{"validator", validated, d("create", "c", "validator", d("a", d("$gt", 2)), "validationLevel", "moderate", "validationAction", "warn"),
			`namespace {db}.c already exists, but with different options: { uuid: {uuid}, validator: { a: { $gt: 1 } }, validationLevel: "moderate", validationAction: "warn" }`},
		{"validator field order", d("create", "c", "validator", d("a", 1, "b", 1)), d("create", "c", "validator", d("b", 1, "a", 1)),
			`namespace {db}.c already exists, but with different options: { uuid: {uuid}, validator: { a: 1, b: 1 } }`},
		{"validationLevel given once", d("create", "c", "validationLevel", "strict"), plain,
			`namespace {db}.c already exists, but with different options: { uuid: {uuid}, validationLevel: "strict" }`},
		{"validationAction", validated, d("create", "c", "validator", d("a", d("$gt", 1)), "validationLevel", "moderate", "validationAction", "error"),
			`namespace {db}.c already exists, but with different options: { uuid: {uuid}, validator: { a: { $gt: 1 } }, validationLevel: "moderate", validationAction: "warn" }`},
		{"collation", d("create", "c", "collation", d("locale", "fr")), d("create", "c", "collation", d("locale", "fr", "strength", 1)),
			`namespace {db}.c already exists, but with different options: { uuid: {uuid}, collation: ` + frSpec + ` }`},
		{"collation then none", d("create", "c", "collation", d("locale", "fr")), plain,
			`namespace {db}.c already exists, but with different options: { uuid: {uuid}, collation: ` + frSpec + ` }`},
		{"clustered then plain", clustered, plain,
			`namespace {db}.c already exists, but with different options: { uuid: {uuid}, clusteredIndex: { v: 2, key: { _id: 1 }, name: "_id_", unique: true } }`},
		{"clustered expireAfterSeconds", clustered, d("create", "c", "clusteredIndex", d("key", d("_id", 1), "unique", true), "expireAfterSeconds", 10),
			`namespace {db}.c already exists, but with different options: { uuid: {uuid}, clusteredIndex: { v: 2, key: { _id: 1 }, name: "_id_", unique: true } }`},
		{"autoIndexId", plain, d("create", "c", "autoIndexId", true), `namespace {db}.c already exists, but with different options: { uuid: {uuid} }`},
		{"pre- and post-images", d("create", "c", "changeStreamPreAndPostImages", d("enabled", true)), plain,
			`namespace {db}.c already exists, but with different options: { uuid: {uuid}, changeStreamPreAndPostImages: { enabled: true } }`},
		{"view on a collection", plain, view, `namespace {db}.c already exists, but with different options: { uuid: {uuid} }`},
		{"collection on a view", view, plain, `namespace {db}.c already exists, but is a view on {db}.src rather than {db}`},
		{"view viewOn", view, d("create", "c", "viewOn", "other", "pipeline", bson.A{d("$match", d("a", 1))}),
			`namespace {db}.c already exists, but is a view on {db}.src rather than {db}.other`},
		{"view pipeline", view, d("create", "c", "viewOn", "src", "pipeline", bson.A{d("$match", d("a", 2))}),
			`namespace {db}.c already exists, but with pipeline { 0: { $match: { a: 1 } } } rather than { 0: { $match: { a: 2 } } }`},
		{"view pipeline removed", view, d("create", "c", "viewOn", "src"),
			`namespace {db}.c already exists, but with pipeline { 0: { $match: { a: 1 } } } rather than {}`},
		{"view collation", view, d("create", "c", "viewOn", "src", "pipeline", bson.A{d("$match", d("a", 1))}, "collation", d("locale", "fr", "backwards", false)),
			`namespace {db}.c already exists, but with collation: {} rather than { locale: "fr", caseLevel: false, caseFirst: "off", strength: 3, numericOrdering: false, alternate: "non-ignorable", maxVariable: "punct", normalization: false, backwards: false }`},
		{"view collation removed", d("create", "c", "viewOn", "src", "collation", d("locale", "fr")), d("create", "c", "viewOn", "src"),
			`namespace {db}.c already exists, but with collation: ` + frSpec + ` rather than {}`},
		// A time-series request gets the create's own error.
		{"timeseries timeField", ts, d("create", "c", "timeseries", d("timeField", "u", "metaField", "m"), "expireAfterSeconds", 60), `A timeseries collection already exists. NS: {db}.c`},
		{"timeseries expireAfterSeconds", ts, d("create", "c", "timeseries", d("timeField", "t", "metaField", "m")), `A timeseries collection already exists. NS: {db}.c`},
		{"timeseries on a collection", plain, ts, `Collection {db}.c already exists.`},
		{"timeseries on a view", view, ts, `A view already exists. NS: {db}.c`},
		{"collection on a timeseries", ts, plain, `namespace {db}.c already exists, but is a view on {db}.system.buckets.c rather than {db}`},
		{"view on a timeseries", ts, view, `namespace {db}.c already exists, but is a view on {db}.system.buckets.c rather than {db}.src`},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := fmt.Sprintf("exists%d", i)
			c.mustRun(db, tc.first)
			uuid := collectionUUID(t, c, db, "c")
			_, err := c.run(db, tc.next)
			if tc.msg == "" {
				if err != nil {
					t.Fatalf("create again: %v; want ok", err)
				}
				return
			}
			want := strings.NewReplacer("{db}", db, "{uuid}", uuid).Replace(tc.msg)
			ce := wantCode(t, err, 48, "")
			if ce.CodeName != "NamespaceExists" || ce.Message != want {
				t.Fatalf("got %s: %s\nwant NamespaceExists: %s", ce.CodeName, ce.Message, want)
			}
		})
	}
}

// collectionUUID returns db.name's UUID as mongod prints it,
// UUID("..."), or "" for a view or time-series collection.
func collectionUUID(t *testing.T, c *client, db, name string) string {
	t.Helper()
	r := c.mustRun(db, d("listCollections", 1, "filter", d("name", name)))
	v, err := r.LookupPath("cursor.firstBatch.0.info.uuid")
	if err != nil {
		return ""
	}
	h := hex.EncodeToString(v.Binary().Data)
	return `UUID("` + h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:] + `")`
}

// TestCreateAfterImplicitCreation: a collection an insert or createIndexes
// created has the default options, so create succeeds on it and keeps its
// documents and indexes; other options fail.
func TestCreateAfterImplicitCreation(t *testing.T) {
	_, c := crudServer(t)
	c.mustRun("db", d("insert", "ins", "documents", bson.A{d("_id", 1)}))
	c.mustRun("db", d("createIndexes", "ix", "indexes", bson.A{d("key", d("a", 1), "name", "a_1")}))
	for _, name := range []string{"ins", "ix"} {
		c.mustRun("db", d("create", name))
		_, err := c.run("db", d("create", name, "capped", true, "size", 4096))
		wantCode(t, err, 48, "already exists, but with different options")
	}
	expectField(t, c.mustRun("db", d("count", "ins")), "n", "1")
	expectField(t, c.mustRun("db", d("listIndexes", "ix")), "cursor.firstBatch.1.name", `"a_1"`)
	// Implicit creation still works on new names and on the created ones.
	c.mustRun("db", d("insert", "ix", "documents", bson.A{d("_id", 2)}))
	c.mustRun("db", d("insert", "fresh", "documents", bson.A{d("_id", 3)}))
	expectField(t, c.mustRun("db", d("count", "fresh")), "n", "1")
}
