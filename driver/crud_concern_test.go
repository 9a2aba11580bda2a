package driver_test

import (
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
)

// TestConcernsPerOperation checks which commands of the CRUD API carry a
// readConcern and a writeConcern (read-write-concern spec, "On the Wire":
// reads take the read concern, writes and aggregate with $out/$merge the
// write concern, getMore and killCursors neither), and that a collection
// set to the server's defaults (ReadConcern{} and WriteConcern{}) sends
// none even under a client that has both (the spec's "Server's Default"
// rules, as the operation tests default-write-concern-*.json check).
func TestConcernsPerOperation(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := recordingClient(t, srv.URI()+"?w=1&journal=true&readConcernLevel=local")
	ctx := testCtx(t)
	inherit := c.Database("conc").Collection("items")
	seed(t, inherit, 6)
	defaults := c.Database("conc").Collection("items", &driver.CollectionOptions{ReadConcern: &driver.ReadConcern{}, WriteConcern: &driver.WriteConcern{}})

	out := []bson.D{{{Key: "$match", Value: bson.D{}}}, {{Key: "$out", Value: "copy"}}}
	tests := []struct {
		name        string
		cmd         string
		run         func(coll *driver.Collection) error
		read, write bool
	}{
		{"Find", "find", func(coll *driver.Collection) error {
			cur, err := coll.Find(ctx, bson.D{}, &driver.FindOptions{BatchSize: driver.Ptr[int32](2)})
			if err == nil {
				cur.Next(ctx)
				cur.Next(ctx)
				cur.Next(ctx) // a getMore
				err = cur.Close(ctx)
			}
			return err
		}, true, false},
		{"FindOne", "find", func(coll *driver.Collection) error { return coll.FindOne(ctx, bson.D{}).Err() }, true, false},
		{"Aggregate", "aggregate", func(coll *driver.Collection) error {
			cur, err := coll.Aggregate(ctx, bson.A{bson.D{{Key: "$match", Value: bson.D{}}}})
			if err == nil {
				err = cur.Close(ctx)
			}
			return err
		}, true, false},
		{"Aggregate $out", "aggregate", func(coll *driver.Collection) error {
			cur, err := coll.Aggregate(ctx, out)
			if err == nil {
				err = cur.Close(ctx)
			}
			return err
		}, true, true},
		{"Aggregate $merge", "aggregate", func(coll *driver.Collection) error {
			cur, err := coll.Aggregate(ctx, []bson.D{{{Key: "$merge", Value: bson.D{{Key: "into", Value: "merged"}}}}})
			if err == nil {
				err = cur.Close(ctx)
			}
			return err
		}, true, true},
		{"CountDocuments", "aggregate", func(coll *driver.Collection) error { _, err := coll.CountDocuments(ctx, bson.D{}); return err }, true, false},
		{"EstimatedDocumentCount", "count", func(coll *driver.Collection) error { _, err := coll.EstimatedDocumentCount(ctx); return err }, true, false},
		{"Distinct", "distinct", func(coll *driver.Collection) error { return coll.Distinct(ctx, "tag", bson.D{}).Err() }, true, false},
		{"InsertOne", "insert", func(coll *driver.Collection) error { _, err := coll.InsertOne(ctx, d("qty", 1)); return err }, false, true},
		{"InsertMany", "insert", func(coll *driver.Collection) error { _, err := coll.InsertMany(ctx, []any{d("qty", 1)}); return err }, false, true},
		{"UpdateOne", "update", func(coll *driver.Collection) error {
			_, err := coll.UpdateOne(ctx, d("_id", 1), d("$inc", d("qty", 1)))
			return err
		}, false, true},
		{"ReplaceOne", "update", func(coll *driver.Collection) error {
			_, err := coll.ReplaceOne(ctx, d("_id", 100), d("qty", 1), &driver.ReplaceOptions{Upsert: driver.Ptr(true)})
			return err
		}, false, true},
		{"DeleteMany", "delete", func(coll *driver.Collection) error { _, err := coll.DeleteMany(ctx, d("qty", 1)); return err }, false, true},
		{"FindOneAndUpdate", "findAndModify", func(coll *driver.Collection) error {
			return coll.FindOneAndUpdate(ctx, d("_id", 2), d("$inc", d("qty", 1))).Err()
		}, false, true},
		{"FindOneAndDelete", "findAndModify", func(coll *driver.Collection) error {
			err := coll.FindOneAndDelete(ctx, d("_id", -1)).Err()
			if err == driver.ErrNoDocuments {
				err = nil
			}
			return err
		}, false, true},
		{"BulkWrite", "update", func(coll *driver.Collection) error {
			_, err := coll.BulkWrite(ctx, []driver.WriteModel{driver.UpdateManyModel{Filter: d(), Update: d("$set", d("b", 1))}})
			return err
		}, false, true},
	}
	for _, tc := range tests {
		for _, cl := range []struct {
			name string
			coll *driver.Collection
		}{{"inherited", inherit}, {"server defaults", defaults}} {
			t.Run(tc.name+"/"+cl.name, func(t *testing.T) {
				rec.Reset()
				if err := tc.run(cl.coll); err != nil {
					t.Fatal(err)
				}
				cmd := lastSent(t, rec, tc.cmd)
				wantRC, wantWC := "<absent>", "<absent>"
				if cl.coll == inherit && tc.read {
					wantRC = `{"level":"local"}`
				}
				if cl.coll == inherit && tc.write {
					wantWC = `{"w":1,"j":true}`
				}
				if got := field(cmd, "readConcern"); got != wantRC {
					t.Errorf("%s readConcern %s, want %s", tc.cmd, got, wantRC)
				}
				if got := field(cmd, "writeConcern"); got != wantWC {
					t.Errorf("%s writeConcern %s, want %s", tc.cmd, got, wantWC)
				}
				for _, name := range []string{"getMore", "killCursors"} {
					for _, e := range sent(rec, name) {
						if field(e.Command, "readConcern") != "<absent>" || field(e.Command, "writeConcern") != "<absent>" {
							t.Errorf("%s carried a concern: %v", name, e.Command)
						}
					}
				}
			})
		}
	}
}

// TestOperationServerDefaultReadConcern checks the read-write-concern
// spec's "Read Commands" rule for an operation's own read concern: the
// server default ({}) is left out when nothing above the operation has a
// read concern, and sent as readConcern: {} when the collection (or
// database, or client) has one, so that it overrides theirs.
func TestOperationServerDefaultReadConcern(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := recordingClient(t, srv.URI())
	ctx := testCtx(t)
	plain := c.Database("conc").Collection("items")
	seed(t, plain, 2)
	local := c.Database("conc", &driver.DatabaseOptions{ReadConcern: &driver.ReadConcern{Level: "local"}}).Collection("items")
	def := &driver.ReadConcern{}
	for _, tc := range []struct {
		name string
		coll *driver.Collection
		want string
	}{{"no inherited read concern", plain, "<absent>"}, {"inherited local", local, "{}"}} {
		t.Run(tc.name, func(t *testing.T) {
			ops := []struct {
				cmd string
				run func() error
			}{
				{"find", func() error { return tc.coll.FindOne(ctx, bson.D{}, &driver.FindOneOptions{ReadConcern: def}).Err() }},
				{"aggregate", func() error {
					cur, err := tc.coll.Aggregate(ctx, bson.A{bson.D{{Key: "$match", Value: bson.D{}}}}, &driver.AggregateOptions{ReadConcern: def})
					if err == nil {
						err = cur.Close(ctx)
					}
					return err
				}},
				{"distinct", func() error {
					return tc.coll.Distinct(ctx, "_id", bson.D{}, &driver.DistinctOptions{ReadConcern: def}).Err()
				}},
			}
			for _, op := range ops {
				rec.Reset()
				if err := op.run(); err != nil {
					t.Fatalf("%s: %v", op.cmd, err)
				}
				if got := field(lastSent(t, rec, op.cmd), "readConcern"); got != tc.want {
					t.Errorf("%s readConcern %s, want %s", op.cmd, got, tc.want)
				}
			}
		})
	}
}
