package fidelity

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"

	"github.com/mongoscope/mongoscope/mongotest"
)

// A step-down in the replica-set simulator: the official driver finds the
// new primary through its monitoring and a retryable write succeeds.
func TestStepDownFailover(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{ElectionDelay: 100 * time.Millisecond})
	c := connect(t, rs.URI(), options.Client().SetRetryWrites(true).SetHeartbeatInterval(500*time.Millisecond))
	coll := c.Database("fidelity").Collection("failover")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	old := rs.Primary()
	if err := rs.StepDown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}}); err != nil {
		t.Fatalf("insert after the step-down: %v", err)
	}
	now, err := rs.WaitForPrimary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if now == old {
		t.Error("the old primary was elected again; the test proves nothing")
	}
	if err := c.Ping(ctx, readpref.Primary()); err != nil {
		t.Fatal(err)
	}
	n, err := coll.CountDocuments(ctx, bson.D{})
	if err != nil || n != 2 {
		t.Errorf("count after failover: %d, %v", n, err)
	}
	// The write went to the new primary.
	wrote := false
	for _, cmd := range now.Commands() {
		if cmd.Name == "insert" {
			wrote = true
		}
	}
	if !wrote {
		t.Error("the new primary never saw the insert")
	}
}
