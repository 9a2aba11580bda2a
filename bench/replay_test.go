package main

import (
	"context"
	"testing"
	"time"

	ours "github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	theirs "go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestReplayFindMany runs one find-many, one findOne and one insertMany
// through each driver against the replay server: every one of the
// 10,000 documents arrives, through the recorded first batch and each
// recorded getMore.
func TestReplayFindMany(t *testing.T) {
	docs, ok, err := loadSpecDocs()
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Skip("the benchmarking specification's data/single_and_multi_document.tgz was not found (set MONGODB_SPECS_DIR)")
	}
	srv, err := startReplay(docs)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if len(srv.rec.batches) == 0 {
		t.Fatal("the recording has no getMore batch: the test would not exercise getMore")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	oo := &driver.ClientOptions{}
	if err := oo.ApplyURI(srv.URI()); err != nil {
		t.Fatal(err)
	}
	oc, err := driver.Connect(ctx, oo)
	if err != nil {
		t.Fatal(err)
	}
	defer oc.Disconnect(ctx)
	tc, err := mongo.Connect(options.Client().ApplyURI(srv.URI()))
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Disconnect(ctx)
	ocoll := oc.Database(crudDB).Collection(crudColl)
	tcoll := tc.Database(crudDB).Collection(crudColl)

	tests := []struct {
		name string
		find func() (ids []int32, err error)
	}{
		{"ours", func() ([]int32, error) {
			cur, err := ocoll.Find(ctx, ours.D{})
			if err != nil {
				return nil, err
			}
			var ids []int32
			for cur.Next(ctx) {
				ids = append(ids, cur.Current.Lookup("_id").Int32())
			}
			return ids, cur.Err()
		}},
		{"official", func() ([]int32, error) {
			cur, err := tcoll.Find(ctx, theirs.D{})
			if err != nil {
				return nil, err
			}
			var ids []int32
			for cur.Next(ctx) {
				ids = append(ids, cur.Current.Lookup("_id").Int32())
			}
			return ids, cur.Err()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for round := 0; round < 2; round++ { // a second cursor gets its own id
				ids, err := tt.find()
				if err != nil {
					t.Fatal(err)
				}
				if len(ids) != tweetCount {
					t.Fatalf("round %d: %d documents, want %d", round, len(ids), tweetCount)
				}
				for i, id := range ids {
					if id != int32(i+1) {
						t.Fatalf("round %d: document %d has _id %d, want %d", round, i, id, i+1)
					}
				}
			}
		})
	}
	srv.mu.Lock()
	left := len(srv.cursors)
	srv.mu.Unlock()
	if left != 0 {
		t.Errorf("%d cursors left open after emptying every cursor", left)
	}

	if raw, err := ocoll.FindOne(ctx, ours.D{{Key: "_id", Value: int32(1)}}).Raw(); err != nil || len(raw) < 1000 {
		t.Errorf("ours findOne: %v (%d bytes)", err, len(raw))
	}
	if raw, err := tcoll.FindOne(ctx, theirs.D{{Key: "_id", Value: int32(1)}}).Raw(); err != nil || len(raw) < 1000 {
		t.Errorf("official findOne: %v (%d bytes)", err, len(raw))
	}
	if _, err := ocoll.InsertMany(ctx, []any{docs.smallOurs, docs.smallOurs}); err != nil {
		t.Errorf("ours insertMany: %v", err)
	}
	if _, err := tcoll.InsertMany(ctx, []any{docs.smallTheirs, docs.smallTheirs}); err != nil {
		t.Errorf("official insertMany: %v", err)
	}
}
