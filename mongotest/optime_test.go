package mongotest

import (
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

func tsOf(t *testing.T, r bson.Raw, path ...string) bson.Timestamp {
	t.Helper()
	v, err := r.LookupErr(path...)
	if err != nil {
		t.Fatalf("no %v in %s", path, r)
	}
	ts, i, ok := v.TimestampOK()
	if !ok {
		t.Fatalf("%v is %s", path, v.Type)
	}
	return bson.Timestamp{T: ts, I: i}
}

func tsLess(a, b bson.Timestamp) bool { return a.T < b.T || (a.T == b.T && a.I < b.I) }

// TestClusterTimeAdvancesWithWrites: every write moves the cluster time
// on, and its reply's operationTime is the write's time; reads see the
// latest time; the members of a replica set share one clock.
func TestClusterTimeAdvancesWithWrites(t *testing.T) {
	rs := NewReplicaSet(t, 2, ReplicaSetOptions{})
	c := connect(t, rs.Members()[0], clientOpts{})
	sec := connect(t, rs.Members()[1], clientOpts{})
	writes := []bson.D{
		d("insert", "c", "documents", bson.A{d("_id", 1)}),
		d("update", "c", "updates", bson.A{d("q", d("_id", 1), "u", d("$set", d("x", 1)))}),
		d("findAndModify", "c", "query", d("_id", 1), "update", d("$inc", d("x", 1))),
		d("delete", "c", "deletes", bson.A{d("q", d("_id", 1), "limit", 1)}),
		d("createIndexes", "c", "indexes", bson.A{d("key", d("x", 1), "name", "x_1")}),
		d("create", "c2"),
		d("drop", "c2"),
		d("aggregate", "c", "pipeline", bson.A{d("$out", "c3")}, "cursor", bson.D{}),
		d("aggregate", "c", "pipeline", bson.A{d("$match", bson.D{}), d("$merge", "c3")}, "cursor", bson.D{}),
	}
	var last bson.Timestamp
	for _, w := range writes {
		r := c.mustRun("test", w)
		op := tsOf(t, r, "operationTime")
		ct := tsOf(t, r, "$clusterTime", "clusterTime")
		if !tsLess(last, op) {
			t.Errorf("%s: operationTime %v did not advance past %v", w[0].Key, op, last)
		}
		if tsLess(ct, op) {
			t.Errorf("%s: $clusterTime %v behind operationTime %v", w[0].Key, ct, op)
		}
		last = op
		// A read on the other member sees the same clock.
		rr := sec.mustRun("admin", d("ping", 1))
		if got := tsOf(t, rr, "$clusterTime", "clusterTime"); tsLess(got, op) {
			t.Errorf("after %s: the secondary's $clusterTime %v is behind %v", w[0].Key, got, op)
		}
	}
	// A failed write does not advance the clock.
	c.mustRun("test", d("insert", "c", "documents", bson.A{d("_id", 9)}))
	before := tsOf(t, c.mustRun("admin", d("ping", 1)), "operationTime")
	if _, err := c.run("test", d("insert", "c", "documents", 1)); err == nil {
		t.Fatal("malformed insert succeeded")
	}
	if after := tsOf(t, c.mustRun("admin", d("ping", 1)), "operationTime"); after != before {
		t.Errorf("a failed write moved the cluster time from %v to %v", before, after)
	}
	for _, read := range []bson.D{d("find", "c"), d("aggregate", "c", "pipeline", bson.A{d("$match", bson.D{})}, "cursor", bson.D{}), d("count", "c")} {
		if op := tsOf(t, c.mustRun("test", read), "operationTime"); op != before {
			t.Errorf("%s: operationTime %v, want the cluster time %v", read[0].Key, op, before)
		}
	}
}

func TestAfterClusterTime(t *testing.T) {
	rs := NewReplicaSet(t, 2, ReplicaSetOptions{})
	c := connect(t, rs.Members()[0], clientOpts{})
	r := c.mustRun("test", d("insert", "c", "documents", bson.A{d("_id", 1)}))
	now := tsOf(t, r, "operationTime")
	ahead := bson.Timestamp{T: now.T + 100, I: 1}
	standalone := connect(t, NewServer(t, Options{}), clientOpts{})
	for _, tc := range []struct {
		name     string
		c        *client
		cmd      bson.D
		wantCode int32
	}{
		{"at the cluster time", c, d("find", "c", "readConcern", d("afterClusterTime", now)), 0},
		{"before it", c, d("find", "c", "readConcern", d("level", "majority", "afterClusterTime", bson.Timestamp{T: now.T - 10, I: 1})), 0},
		{"beyond it", c, d("find", "c", "readConcern", d("afterClusterTime", ahead)), 72},
		{"beyond it, aggregate", c, d("aggregate", "c", "pipeline", bson.A{}, "cursor", bson.D{}, "readConcern", d("afterClusterTime", ahead)), 72},
		{"beyond it, gossiped first", c, d("count", "c", "readConcern", d("afterClusterTime", ahead),
			"$clusterTime", d("clusterTime", ahead, "signature", d("hash", bson.Binary{Data: make([]byte, 20)}, "keyId", int64(0)))), 0},
		{"not a timestamp", c, d("find", "c", "readConcern", d("afterClusterTime", 5)), 14},
		{"standalone", standalone, d("find", "c", "readConcern", d("afterClusterTime", now)), 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.c.run("test", tc.cmd)
			switch {
			case tc.wantCode == 0 && err != nil:
				t.Fatal(err)
			case tc.wantCode != 0:
				if ce := asCmdError(t, err); ce.Code != tc.wantCode {
					t.Fatalf("%v, want code %d", ce, tc.wantCode)
				}
			}
		})
	}
	// The gossiped time stays: the member's clock moved up to it.
	if got := tsOf(t, c.mustRun("admin", d("ping", 1)), "$clusterTime", "clusterTime"); tsLess(got, ahead) {
		t.Errorf("cluster time %v after gossiping %v", got, ahead)
	}
}
