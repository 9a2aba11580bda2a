package mongotest

import (
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

// returnKey and showRecordId, where mongotest can answer as mongod: a
// collection scan gives {} keys, and $recordId follows natural order
// across getMores.
func TestFindReturnKeyShowRecordID(t *testing.T) {
	_, c := crudServer(t)
	c.mustRun("db", d("insert", "c", "documents", bson.A{d("_id", 1, "a", 1), d("_id", 2, "a", 2), d("_id", 3, "a", 3)}))

	r := c.mustRun("db", d("find", "c", "filter", d("a", d("$gte", 2)), "returnKey", true))
	expectField(t, r, "cursor.firstBatch", "[{},{}]")

	r = c.mustRun("db", d("find", "c", "showRecordId", true, "batchSize", 1))
	first, _ := r.LookupPath("cursor.firstBatch.0.$recordId")
	if first.Type != bson.TypeInt64 {
		t.Fatalf("$recordId %s in %s", first.Type, r)
	}
	expectField(t, r, "cursor.firstBatch.0.a", "1")
	id := cursorID(t, r)
	r = c.mustRun("db", d("getMore", id, "collection", "c"))
	vals, _ := r.Lookup("cursor", "nextBatch").Array().Values()
	prev := first.Int64()
	for _, v := range vals {
		rid := v.Document().Lookup("$recordId").Int64()
		if rid <= prev {
			t.Errorf("$recordId %d after %d", rid, prev)
		}
		prev = rid
	}
	if len(vals) != 2 {
		t.Errorf("getMore %s", r)
	}

	r = c.mustRun("db", d("find", "c", "filter", d("_id", 2), "showRecordId", true))
	if v, _ := r.LookupPath("cursor.firstBatch.0.$recordId"); v.Type != bson.TypeInt64 {
		t.Errorf("_id lookup with showRecordId: %s", r)
	}

	// Where mongod scans the _id index, the keys are the _ids, in index
	// order; showRecordId adds nothing to returnKey's keys (as the
	// command monitoring tests expect of mongod).
	for _, tc := range []struct {
		name string
		cmd  bson.D
		want string
	}{
		{"_id sort", d("find", "c", "filter", bson.D{}, "sort", d("_id", 1), "showRecordId", true, "returnKey", true), `[{"_id":1},{"_id":2},{"_id":3}]`},
		{"_id sort descending", d("find", "c", "sort", d("_id", -1), "returnKey", true, "limit", 2), `[{"_id":3},{"_id":2}]`},
		{"_id range", d("find", "c", "filter", d("_id", d("$gte", 2)), "returnKey", true), `[{"_id":2},{"_id":3}]`},
		{"_id equality", d("find", "c", "filter", d("_id", 2), "returnKey", true), `[{"_id":2}]`},
		{"sort $natural: 1 (no longer a nil dereference)", d("find", "c", "sort", d("$natural", 1), "projection", d("_id", 1)), `[{"_id":1},{"_id":2},{"_id":3}]`},
		{"natural order forces a scan", d("find", "c", "filter", d("_id", 2), "sort", d("$natural", 1), "returnKey", true), `[{}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			expectField(t, c.mustRun("db", tc.cmd), "cursor.firstBatch", tc.want)
		})
	}
	_, err := c.run("db", d("find", "c", "filter", d("$or", bson.A{d("_id", 1), d("a", 2)}), "returnKey", true))
	wantCode(t, err, 238, "returnKey")

	c.mustRun("db", d("createIndexes", "c", "indexes", bson.A{d("key", d("a", 1), "name", "a_1")}))
	for _, tc := range []struct {
		name string
		cmd  bson.D
	}{
		{"secondary index", d("find", "c", "filter", d("a", 1), "returnKey", true)},
		{"_id filter", d("find", "c", "filter", d("_id", d("$gt", 1)), "returnKey", true)},
		{"hint", d("find", "c", "hint", "a_1", "returnKey", true)},
		{"projection", d("find", "c", "projection", d("a", 1), "returnKey", true)},
		{"sorted showRecordId", d("find", "c", "sort", d("a", 1), "showRecordId", true)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.run("db", tc.cmd)
			wantCode(t, err, 238, "")
		})
	}
}
