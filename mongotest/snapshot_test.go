package mongotest

import (
	"fmt"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

func snapRC(ts *bson.Timestamp) bson.D {
	if ts == nil {
		return d("level", "snapshot")
	}
	return d("level", "snapshot", "atClusterTime", *ts)
}

// firstBatchJSON renders a find or aggregate reply's first batch.
func batchJSON(t *testing.T, r bson.Raw, key string) string {
	t.Helper()
	v, err := r.LookupErr("cursor", key)
	if err != nil {
		t.Fatalf("no cursor.%s in %s", key, r)
	}
	return arrayJSON(t, v.Array())
}

// arrayJSON renders an array as relaxed Extended JSON.
func arrayJSON(t *testing.T, a bson.Raw) string {
	t.Helper()
	out := []byte("[")
	it := a.Iter()
	for it.Next() {
		if len(out) > 1 {
			out = append(out, ',')
		}
		var err error
		if doc, ok := it.Value().DocumentOK(); ok {
			out, err = bson.AppendExtJSON(out, doc, false)
		} else {
			n, _ := it.Value().AsInt64OK()
			out = fmt.Append(out, n)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return string(append(out, ']'))
}

// TestSnapshotReads: writes at t1, t2 and t3; find, aggregate and
// distinct at each time see the documents as they were then, on either
// member, deleted documents included and later inserts excluded.
func TestSnapshotReads(t *testing.T) {
	rs := NewReplicaSet(t, 2, ReplicaSetOptions{})
	c := connect(t, rs.Members()[0], clientOpts{})
	sec := connect(t, rs.Members()[1], clientOpts{})
	t0 := tsOf(t, c.mustRun("admin", d("ping", 1)), "$clusterTime", "clusterTime")
	t1 := tsOf(t, c.mustRun("db", d("insert", "c", "documents", bson.A{d("_id", 1, "x", 1), d("_id", 2, "x", 1), d("_id", 3, "x", 1)})), "operationTime")
	c.mustRun("db", d("update", "c", "updates", bson.A{d("q", d("_id", 1), "u", d("$set", d("x", 2)))}))
	t2 := tsOf(t, c.mustRun("db", d("delete", "c", "deletes", bson.A{d("q", d("_id", 2), "limit", 1)})), "operationTime")
	c.mustRun("db", d("insert", "c", "documents", bson.A{d("_id", 4, "x", 4)}))
	t3 := tsOf(t, c.mustRun("db", d("findAndModify", "c", "query", d("_id", 1), "update", d("$inc", d("x", 1)))), "operationTime")

	tests := []struct {
		at             bson.Timestamp
		find, distinct string
	}{
		{t0, `[]`, `[]`},
		{t1, `[{"_id":1,"x":1},{"_id":2,"x":1},{"_id":3,"x":1}]`, `[1]`},
		{t2, `[{"_id":1,"x":2},{"_id":3,"x":1}]`, `[1,2]`},
		{t3, `[{"_id":1,"x":3},{"_id":3,"x":1},{"_id":4,"x":4}]`, `[1,3,4]`},
	}
	for i, tc := range tests {
		at := tc.at
		for _, cl := range []*client{c, sec} {
			t.Run(fmt.Sprintf("t%d", i), func(t *testing.T) {
				r := cl.mustRun("db", d("find", "c", "readConcern", snapRC(&at), "$readPreference", d("mode", "secondaryPreferred")))
				if got := batchJSON(t, r, "firstBatch"); got != tc.find {
					t.Errorf("find: %s, want %s", got, tc.find)
				}
				if _, err := r.LookupErr("cursor", "atClusterTime"); err == nil {
					t.Error("find with atClusterTime: the cursor names one")
				}
				r = cl.mustRun("db", d("aggregate", "c", "pipeline", bson.A{d("$sort", d("_id", 1))}, "cursor", bson.D{}, "readConcern", snapRC(&at), "$readPreference", d("mode", "secondaryPreferred")))
				if got := batchJSON(t, r, "firstBatch"); got != tc.find {
					t.Errorf("aggregate: %s, want %s", got, tc.find)
				}
				r = cl.mustRun("db", d("distinct", "c", "key", "x", "readConcern", snapRC(&at), "$readPreference", d("mode", "secondaryPreferred")))
				if got := arrayJSON(t, r.Lookup("values").Array()); got != tc.distinct {
					t.Errorf("distinct: %s, want %s", got, tc.distinct)
				}
				// The _id fast path reads at the time too.
				r = cl.mustRun("db", d("find", "c", "filter", d("_id", 2), "readConcern", snapRC(&at), "$readPreference", d("mode", "secondaryPreferred")))
				want := `[]`
				if at == t1 {
					want = `[{"_id":2,"x":1}]`
				}
				if got := batchJSON(t, r, "firstBatch"); got != want {
					t.Errorf("find _id 2: %s, want %s", got, want)
				}
			})
		}
	}

	// Without atClusterTime: the current time, named in the reply.
	r := c.mustRun("db", d("find", "c", "readConcern", snapRC(nil)))
	if got := tsOf(t, r, "cursor", "atClusterTime"); got != t3 {
		t.Errorf("find's cursor.atClusterTime %v, want %v", got, t3)
	}
	r = c.mustRun("db", d("aggregate", "c", "pipeline", bson.A{}, "cursor", bson.D{}, "readConcern", snapRC(nil)))
	if got := tsOf(t, r, "cursor", "atClusterTime"); got != t3 {
		t.Errorf("aggregate's cursor.atClusterTime %v, want %v", got, t3)
	}
	r = c.mustRun("db", d("distinct", "c", "key", "x", "readConcern", snapRC(nil)))
	if got := tsOf(t, r, "atClusterTime"); got != t3 {
		t.Errorf("distinct's atClusterTime %v, want %v", got, t3)
	}
	// A plain read names no time.
	r = c.mustRun("db", d("find", "c"))
	if _, err := r.LookupErr("cursor", "atClusterTime"); err == nil {
		t.Error("a plain find's cursor names atClusterTime")
	}
}

// TestSnapshotCursorKeepsItsTime: getMore on a snapshot cursor reads at
// the cursor's time, whatever was written since.
func TestSnapshotCursorKeepsItsTime(t *testing.T) {
	rs := NewReplicaSet(t, 1, ReplicaSetOptions{})
	c := connect(t, rs.Members()[0], clientOpts{})
	for _, cmd := range []bson.D{
		d("find", "f", "batchSize", 1, "readConcern", snapRC(nil)),
		d("aggregate", "a", "pipeline", bson.A{}, "cursor", d("batchSize", 1), "readConcern", snapRC(nil)),
	} {
		t.Run(cmd[0].Key, func(t *testing.T) {
			coll := cmd[0].Value.(string)
			c.mustRun("db", d("insert", coll, "documents", bson.A{d("_id", 1), d("_id", 2), d("_id", 3)}))
			r := c.mustRun("db", cmd)
			id := r.Lookup("cursor", "id").Int64()
			if id == 0 {
				t.Fatal("no cursor")
			}
			c.mustRun("db", d("delete", coll, "deletes", bson.A{d("q", d("_id", 2), "limit", 1)}))
			c.mustRun("db", d("insert", coll, "documents", bson.A{d("_id", 9)}))
			c.mustRun("db", d("update", coll, "updates", bson.A{d("q", d("_id", 3), "u", d("$set", d("y", 1)))}))
			r = c.mustRun("db", d("getMore", id, "collection", coll, "readConcern", snapRC(nil)))
			if got, want := batchJSON(t, r, "nextBatch"), `[{"_id":2},{"_id":3}]`; got != want {
				t.Errorf("getMore: %s, want %s", got, want)
			}
		})
	}
}

// TestSnapshotReadErrors: mongod's errors for snapshot reads it cannot
// serve.
func TestSnapshotReadErrors(t *testing.T) {
	rs := NewReplicaSet(t, 1, ReplicaSetOptions{})
	c := connect(t, rs.Members()[0], clientOpts{})
	c.mustRun("db", d("insert", "c", "documents", bson.A{d("_id", 1)}))
	c.mustRun("db", d("create", "capped", "capped", true, "size", 4096))
	c.mustRun("db", d("create", "v", "viewOn", "c", "pipeline", bson.A{}))
	now := tsOf(t, c.mustRun("admin", d("ping", 1)), "$clusterTime", "clusterTime")
	future := bson.Timestamp{T: now.T + 100, I: 1}
	old := bson.Timestamp{T: 1, I: 1}
	tests := []struct {
		name string
		cmd  bson.D
		code int32
		msg  string
	}{
		{"future", d("find", "c", "readConcern", snapRC(&future)), 72, "must not be greater than the current clusterTime"},
		{"too old", d("find", "c", "readConcern", snapRC(&old)), 239, "older than the oldest available timestamp"},
		{"count", d("count", "c", "readConcern", snapRC(nil)), 72, "does not support readConcern level snapshot"},
		{"insert", d("insert", "c", "documents", bson.A{d("_id", 5)}, "readConcern", snapRC(nil)), 72, "does not support"},
		{"$out", d("aggregate", "c", "pipeline", bson.A{d("$out", "o")}, "cursor", bson.D{}, "readConcern", snapRC(nil)), 72, "does not support"},
		{"atClusterTime without snapshot", d("find", "c", "readConcern", d("level", "majority", "atClusterTime", now)), 72, "only valid with readConcern level snapshot"},
		{"atClusterTime and afterClusterTime", d("find", "c", "readConcern", d("level", "snapshot", "atClusterTime", now, "afterClusterTime", now)), 72, "afterClusterTime"},
		{"atClusterTime type", d("find", "c", "readConcern", d("level", "snapshot", "atClusterTime", 1)), 14, "atClusterTime"},
		{"capped", d("find", "capped", "readConcern", snapRC(nil)), 246, "capped"},
		{"view", d("find", "v", "readConcern", snapRC(nil)), 238, "view"},
		{"$lookup of a view", d("aggregate", "c", "pipeline", bson.A{d("$lookup", d("from", "v", "localField", "_id", "foreignField", "_id", "as", "j"))}, "cursor", bson.D{}, "readConcern", snapRC(nil)), 238, "view"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.run("db", tc.cmd)
			wantCode(t, err, tc.code, tc.msg)
		})
	}
}
