package driver_test

import (
	"context"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
	"github.com/mongoscope/mongoscope/mongotest"
)

// The connections-survive-step-down prose tests
// (connections-survive-step-down/tests/README.md; there is no unified
// version): a 4.2+ primary that steps down or answers "not primary"
// keeps its connections, so the driver keeps its pool; a shutdown error
// clears it.

// stepDownSetup is the README's test setup: a client with
// retryWrites=false and the collection step-down.step-down, dropped and
// created with w:majority.
func stepDownSetup(t *testing.T, rs *mongotest.ReplicaSet) (*driver.Client, *eventtest.Recorder, *driver.Collection) {
	t.Helper()
	c, rec := sessClient(t, rs.URI()+"&retryWrites=false"+fastHeartbeat)
	db := c.Database("step-down")
	coll := db.Collection("step-down", &driver.CollectionOptions{WriteConcern: driver.Majority()})
	ctx := testCtx(t)
	if err := coll.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateCollection(ctx, "step-down"); err != nil {
		t.Fatal(err)
	}
	return c, rec, coll
}

func poolCleared(rec *eventtest.Recorder) int { return len(eventtest.Of[*event.PoolCleared](rec)) }

func TestConnectionsSurviveStepDownGetMore(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{})
	_, rec, coll := stepDownSetup(t, rs)
	ctx := testCtx(t)
	docs := []any{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "_id", Value: 3}},
		bson.D{{Key: "_id", Value: 4}}, bson.D{{Key: "_id", Value: 5}}}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	two := int32(2)
	cur, err := coll.Find(ctx, bson.D{}, &driver.FindOptions{BatchSize: &two})
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close(context.Background())
	for i := 0; i < 2; i++ {
		if !cur.Next(ctx) {
			t.Fatalf("first batch: %v", cur.Err())
		}
	}
	before := poolCleared(rec)
	old := rs.Primary()
	var secondary *mongotest.Server
	for _, m := range rs.Members() {
		if m != old {
			secondary = m
			break
		}
	}
	direct := func(s *mongotest.Server) *driver.Client {
		return dial(t, "mongodb://"+s.Addr()+"/?directConnection=true", nil)
	}
	if _, err := direct(secondary).RunCommand(ctx, "admin", bson.D{{Key: "replSetFreeze", Value: 0}}); err != nil {
		t.Fatalf("replSetFreeze: %v", err)
	}
	if _, err := direct(old).RunCommand(ctx, "admin", bson.D{{Key: "replSetStepDown", Value: 30}, {Key: "force", Value: true}}); err != nil {
		t.Fatalf("replSetStepDown: %v", err)
	}
	if rs.Primary() == old {
		t.Fatal("the primary did not step down")
	}
	for i := 0; i < 3; i++ {
		if !cur.Next(ctx) {
			t.Fatalf("after the step-down, document %d: %v", i+3, cur.Err())
		}
	}
	if n := poolCleared(rec) - before; n != 0 {
		t.Errorf("%d pools cleared, want none", n)
	}
}

func TestConnectionsSurviveStepDownErrors(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{})
	for _, tc := range []struct {
		name    string
		code    int32
		cleared bool
	}{
		{"not primary keeps the pool", 10107, false},
		{"shutdown in progress clears the pool", 91, true},
		{"interrupted at shutdown clears the pool", 11600, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, rec, coll := stepDownSetup(t, rs)
			ctx := testCtx(t)
			before := poolCleared(rec)
			prim := rs.Primary()
			setFP(t, prim, times(1), bson.D{{Key: "failCommands", Value: bson.A{"insert"}}, {Key: "errorCode", Value: tc.code}})
			t.Cleanup(prim.ClearFailPoints)
			_, err := coll.InsertOne(ctx, bson.D{{Key: "test", Value: 1}})
			if code := errCode(err); code != tc.code {
				t.Fatalf("insert: %v, want code %d", err, tc.code)
			}
			if tc.cleared && poolCleared(rec) == before {
				t.Error("no pool cleared")
			}
			if _, err := coll.InsertOne(ctx, bson.D{{Key: "test", Value: 1}}); err != nil {
				t.Fatalf("second insert: %v", err)
			}
			if !tc.cleared && poolCleared(rec) != before {
				t.Errorf("%d pools cleared, want none", poolCleared(rec)-before)
			}
		})
	}
}
