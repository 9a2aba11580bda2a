package driver_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
)

// crudOp is one CRUD API call and the command it sends.
type crudOp struct {
	name, cmd string
	write     bool // selected as a write: never a $readPreference
	run       func(coll *driver.Collection) error
}

// crudOps returns a call of each CRUD operation; reads that open cursors
// also send a getMore and a killCursors.
func crudOps(t *testing.T) []crudOp {
	ctx := testCtx(t)
	cursor := func(cur *driver.Cursor, err error) error {
		if err != nil {
			return err
		}
		cur.Next(ctx)
		cur.Next(ctx) // a getMore
		return cur.Close(ctx)
	}
	return []crudOp{
		{"Find", "find", false, func(c *driver.Collection) error {
			return cursor(c.Find(ctx, bson.D{}, &driver.FindOptions{BatchSize: driver.Ptr[int32](1)}))
		}},
		{"FindOne", "find", false, func(c *driver.Collection) error { return c.FindOne(ctx, bson.D{}).Err() }},
		{"Aggregate", "aggregate", false, func(c *driver.Collection) error {
			return cursor(c.Aggregate(ctx, bson.A{d("$match", bson.D{})}, &driver.AggregateOptions{BatchSize: driver.Ptr[int32](1)}))
		}},
		{"CountDocuments", "aggregate", false, func(c *driver.Collection) error { _, err := c.CountDocuments(ctx, d()); return err }},
		{"EstimatedDocumentCount", "count", false, func(c *driver.Collection) error { _, err := c.EstimatedDocumentCount(ctx); return err }},
		{"Distinct", "distinct", false, func(c *driver.Collection) error { return c.Distinct(ctx, "qty", d()).Err() }},
		{"InsertOne", "insert", true, func(c *driver.Collection) error { _, err := c.InsertOne(ctx, d("qty", 1)); return err }},
		{"InsertMany", "insert", true, func(c *driver.Collection) error { _, err := c.InsertMany(ctx, []any{d("qty", 1)}); return err }},
		{"UpdateMany", "update", true, func(c *driver.Collection) error {
			_, err := c.UpdateMany(ctx, d(), d("$set", d("t", 1)))
			return err
		}},
		{"DeleteOne", "delete", true, func(c *driver.Collection) error { _, err := c.DeleteOne(ctx, d("_id", -1)); return err }},
		{"FindOneAndUpdate", "findAndModify", true, func(c *driver.Collection) error {
			return c.FindOneAndUpdate(ctx, d("_id", 1), d("$set", d("t", 2))).Err()
		}},
		{"BulkWrite", "delete", true, func(c *driver.Collection) error {
			_, err := c.BulkWrite(ctx, []driver.WriteModel{driver.DeleteManyModel{Filter: d("_id", -1)}})
			return err
		}},
	}
}

// TestReadPreferencePerOperation checks the $readPreference each CRUD
// operation sends (server-selection spec, "Passing read preference to
// mongos and load balancers", "Topology type: Single", "Use of read
// preferences with commands"): the reads carry the collection's read
// preference to a mongos (none for primary) and primaryPreferred on a
// direct connection to a replica-set member; writes, getMore and
// killCursors never carry one, nor does anything to a standalone.
func TestReadPreferencePerOperation(t *testing.T) {
	mongos := mongotest.NewServer(t, mongotest.Options{Topology: mongotest.Topology{Role: mongotest.RoleMongos}})
	rs := mongotest.NewReplicaSet(t, 2, mongotest.ReplicaSetOptions{})
	standalone := mongotest.NewServer(t, mongotest.Options{})
	lb := mongotest.NewServer(t, mongotest.Options{Topology: mongotest.Topology{Role: mongotest.RoleLoadBalanced}})
	secondary := &driver.ReadPreference{Mode: driver.Secondary, Tags: []map[string]string{{"dc": "ny"}, {}}}
	tests := []struct {
		name, uri string
		rp        *driver.ReadPreference
		want      string // the reads' $readPreference; "" for none
	}{
		{"mongos, secondary", mongos.URI(), secondary, `{"mode":"secondary","tags":[{"dc":"ny"},{}]}`},
		{"mongos, secondaryPreferred", mongos.URI(), &driver.ReadPreference{Mode: driver.SecondaryPreferred}, `{"mode":"secondaryPreferred"}`},
		{"mongos, primary", mongos.URI(), nil, ""},
		{"direct to the primary, primary", "mongodb://" + rs.Primary().Addr() + "/?directConnection=true", nil, `{"mode":"primaryPreferred"}`},
		{"standalone, secondary", standalone.URI(), secondary, ""},
		{"load balancer, nearest", lb.URI(), &driver.ReadPreference{Mode: driver.Nearest}, `{"mode":"nearest"}`},
		{"load balancer, primary", lb.URI(), nil, ""},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, rec := recordingClient(t, tc.uri)
			db := c.Database(fmt.Sprintf("rp%d", i))
			coll := db.Collection("items", &driver.CollectionOptions{ReadPreference: tc.rp})
			seed(t, db.Collection("items"), 3)
			for _, op := range crudOps(t) {
				rec.Reset()
				if err := op.run(coll); err != nil {
					t.Fatalf("%s: %v", op.name, err)
				}
				want := tc.want
				if op.write {
					want = ""
				}
				got := field(lastSent(t, rec, op.cmd), "$readPreference")
				if got == "<absent>" {
					got = ""
				}
				if got != want {
					t.Errorf("%s: $readPreference %s, want %q", op.name, got, want)
				}
				for _, name := range []string{"getMore", "killCursors"} {
					for _, e := range sent(rec, name) {
						if field(e.Command, "$readPreference") != "<absent>" {
							t.Errorf("%s: %s carried $readPreference", op.name, name)
						}
					}
				}
			}
		})
	}
}

// TestImplicitSessionPerOperation checks the driver-sessions spec's
// implicit-session rules for every CRUD operation: each command carries an
// lsid, a cursor's getMore and killCursors carry its opening command's,
// and unacknowledged writes carry none ("When using unacknowledged
// writes").
func TestImplicitSessionPerOperation(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 2, mongotest.ReplicaSetOptions{})
	c, rec := recordingClient(t, rs.URI())
	db := c.Database("sess")
	seed(t, db.Collection("items"), 3)
	for _, ack := range []bool{true, false} {
		coll := db.Collection("items")
		if !ack {
			coll = db.Collection("items", &driver.CollectionOptions{WriteConcern: driver.Unacknowledged()})
		}
		for _, op := range crudOps(t) {
			if !ack && !op.write {
				continue
			}
			t.Run(fmt.Sprintf("%s/acknowledged=%v", op.name, ack), func(t *testing.T) {
				rec.Reset()
				err := op.run(coll)
				if err != nil && !(errors.Is(err, driver.ErrUnacknowledgedWrite) && !ack) {
					t.Fatal(err)
				}
				opened := field(lastSent(t, rec, op.cmd), "lsid")
				if ack == (opened == "<absent>") {
					t.Fatalf("%s lsid %s (acknowledged %v)", op.cmd, opened, ack)
				}
				for _, name := range []string{"getMore", "killCursors"} {
					for _, e := range sent(rec, name) {
						if got := field(e.Command, "lsid"); got != opened {
							t.Errorf("%s lsid %s, want the %s's %s", name, got, op.cmd, opened)
						}
					}
				}
			})
		}
	}
}

// TestUnacknowledgedOutHasNoSession checks that an aggregate with $out or
// $merge under an unacknowledged write concern carries no lsid: the
// driver-sessions spec sends no session ID with unacknowledged writes
// "under any circumstances", even though the driver awaits this one's
// reply.
func TestUnacknowledgedOutHasNoSession(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := recordingClient(t, srv.URI())
	ctx := testCtx(t)
	db := c.Database("sess")
	seed(t, db.Collection("items"), 2)
	for _, tc := range []struct {
		name  string
		wc    *driver.WriteConcern
		stage bson.D
		lsid  bool
	}{
		{"$out acknowledged", nil, d("$out", "copy1"), true},
		{"$out unacknowledged", driver.Unacknowledged(), d("$out", "copy2"), false},
		{"$merge unacknowledged", driver.Unacknowledged(), d("$merge", d("into", "copy3")), false},
		{"$out unacknowledged for the operation", nil, d("$out", "copy4"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec.Reset()
			coll := db.Collection("items", &driver.CollectionOptions{WriteConcern: tc.wc})
			var opts *driver.AggregateOptions
			if tc.wc == nil && !tc.lsid {
				opts = &driver.AggregateOptions{WriteConcern: driver.Unacknowledged()}
			}
			cur, err := coll.Aggregate(ctx, bson.A{d("$match", bson.D{}), tc.stage}, opts)
			if err != nil {
				t.Fatal(err)
			}
			cur.Close(ctx)
			if got := field(lastSent(t, rec, "aggregate"), "lsid") != "<absent>"; got != tc.lsid {
				t.Errorf("aggregate carried an lsid: %v, want %v", got, tc.lsid)
			}
		})
	}
}
