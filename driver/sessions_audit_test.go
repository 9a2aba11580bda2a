package driver

import (
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest"
)

// TestImplicitSessionReturnedPerOperation checks the driver-sessions
// rule that an implicit session goes back to the pool when its operation
// ends: at once for the operations without a cursor, and for a cursor when
// it is exhausted (by its first batch or a getMore) or closed.
func TestImplicitSessionReturnedPerOperation(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c := connect(t, srv.URI(), nil)
	coll := seed(t, c, "ret", 3)
	ctx := ctxTimeout(t, 10*time.Second)
	match := bson.A{bson.D{{Key: "$match", Value: bson.D{}}}}
	tests := []struct {
		name string
		run  func() (*Cursor, error)
	}{
		{"Aggregate exhausted by getMores", func() (*Cursor, error) {
			cur, err := coll.Aggregate(ctx, match, &AggregateOptions{BatchSize: Ptr[int32](1)})
			if err != nil || c.sessions.InUse() != 1 {
				t.Errorf("an open aggregate cursor holds %d sessions (err %v), want 1", c.sessions.InUse(), err)
			}
			return cur, err
		}},
		{"Aggregate in one batch", func() (*Cursor, error) { return coll.Aggregate(ctx, match) }},
		{"Database.Aggregate", func() (*Cursor, error) {
			return c.Database("admin").Aggregate(ctx, bson.A{bson.D{{Key: "$currentOp", Value: bson.D{}}}}, &AggregateOptions{BatchSize: Ptr[int32](0)})
		}},
		{"RunCursorCommand", func() (*Cursor, error) {
			return c.Database("sess").RunCursorCommand(ctx, bson.D{{Key: "find", Value: "ret"}, {Key: "batchSize", Value: 1}})
		}},
		{"CountDocuments", func() (*Cursor, error) { _, err := coll.CountDocuments(ctx, bson.D{}); return nil, err }},
		{"EstimatedDocumentCount", func() (*Cursor, error) { _, err := coll.EstimatedDocumentCount(ctx); return nil, err }},
		{"Distinct", func() (*Cursor, error) { return nil, coll.Distinct(ctx, "_id", bson.D{}).Err() }},
		{"UpdateMany", func() (*Cursor, error) {
			_, err := coll.UpdateMany(ctx, bson.D{}, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 1}}}})
			return nil, err
		}},
		{"FindOneAndUpdate", func() (*Cursor, error) {
			return nil, coll.FindOneAndUpdate(ctx, bson.D{}, bson.D{{Key: "$set", Value: bson.D{{Key: "b", Value: 1}}}}).Err()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cur, err := tt.run()
			if err != nil {
				t.Fatal(err)
			}
			if cur != nil {
				for cur.Next(ctx) {
				}
				if cur.Err() != nil || cur.ID() != 0 {
					t.Fatalf("cursor %d, err %v", cur.ID(), cur.Err())
				}
			}
			if n := c.sessions.InUse(); n != 0 {
				t.Fatalf("%d sessions still in use after the operation", n)
			}
		})
	}
}

// A cursor dropped without Close or exhaustion gives its implicit
// session back to the pool when the garbage collector finds it (the
// driver-sessions specification: the cursor SHOULD return the session in
// a finalizer, for runtimes that have them).
func TestAbandonedCursorReturnsSession(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c := connect(t, srv.URI(), nil)
	coll := seed(t, c, "abandon", 3)
	ctx := ctxTimeout(t, 10*time.Second)
	func() {
		cur, err := coll.Find(ctx, bson.D{}, &FindOptions{BatchSize: Ptr[int32](1)})
		if err != nil {
			t.Fatal(err)
		}
		if !cur.Next(ctx) {
			t.Fatal(cur.Err())
		}
	}()
	if n := c.sessions.InUse(); n != 1 {
		t.Fatalf("an open cursor holds %d sessions, want 1", n)
	}
	deadline := time.Now().Add(10 * time.Second)
	for c.sessions.InUse() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the abandoned cursor's session never went back to the pool")
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if c.sessions.Len() != 1 {
		t.Fatalf("the pool holds %d sessions, want the cursor's", c.sessions.Len())
	}
}

// SessionOptions.clone copies every field deeply: a field added later and
// forgotten in clone would share the caller's pointer again.
func TestSessionOptionsCloneCoversEveryField(t *testing.T) {
	d := time.Second
	o := SessionOptions{CausalConsistency: Ptr(true), Snapshot: Ptr(true), SnapshotTime: &bson.Timestamp{T: 1},
		DefaultReadConcern: &ReadConcern{Level: "majority"}, DefaultWriteConcern: Majority(),
		DefaultReadPreference: &ReadPreference{Mode: Secondary, Tags: []map[string]string{{"a": "b"}}, MaxStaleness: &d},
		DefaultTimeout:        &d}
	ov := reflect.ValueOf(o)
	for i := range ov.NumField() {
		if ov.Field(i).IsZero() {
			t.Fatalf("the test leaves SessionOptions.%s unset", ov.Type().Field(i).Name)
		}
	}
	cv := reflect.ValueOf(o.clone())
	for i := range ov.NumField() {
		f := ov.Type().Field(i)
		if !reflect.DeepEqual(ov.Field(i).Interface(), cv.Field(i).Interface()) {
			t.Errorf("clone changed %s", f.Name)
		}
		if f.Type.Kind() == reflect.Pointer && ov.Field(i).Pointer() == cv.Field(i).Pointer() {
			t.Errorf("clone shares the pointer of %s", f.Name)
		}
	}
	c := o.clone()
	if c.DefaultWriteConcern.W == o.DefaultWriteConcern.W || &c.DefaultReadPreference.Tags[0] == &o.DefaultReadPreference.Tags[0] ||
		c.DefaultReadPreference.MaxStaleness == o.DefaultReadPreference.MaxStaleness {
		t.Error("clone shares what a concern points to")
	}
	c.DefaultReadPreference.Tags[0]["a"] = "c"
	if o.DefaultReadPreference.Tags[0]["a"] != "b" {
		t.Error("clone shares the tag sets")
	}
}
