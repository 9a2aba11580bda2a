package driver_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
)

// connectTo connects a client to uri and disconnects it at the end of the
// test.
func dial(t *testing.T, uri string, o *driver.ClientOptions) *driver.Client {
	t.Helper()
	if o == nil {
		o = &driver.ClientOptions{}
	}
	if err := o.ApplyURI(uri); err != nil {
		t.Fatal(err)
	}
	c, err := driver.Connect(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Disconnect(context.Background()) })
	return c
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

type item struct {
	ID  int    `bson:"_id"`
	Qty int    `bson:"qty"`
	Tag string `bson:"tag,omitempty"`
}

func TestInsertFindRoundTrip(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c := dial(t, srv.URI(), nil)
	ctx := testCtx(t)
	coll := c.Database("shop").Collection("items")

	r1, err := coll.InsertOne(ctx, bson.D{{Key: "qty", Value: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r1.InsertedID.(bson.ObjectID); !ok || !r1.Acknowledged {
		t.Fatalf("InsertOne result %+v: want a generated ObjectID", r1)
	}
	var docs []any
	for i := 1; i <= 25; i++ {
		docs = append(docs, item{ID: i, Qty: i * 10})
	}
	rm, err := coll.InsertMany(ctx, docs)
	if err != nil {
		t.Fatal(err)
	}
	if len(rm.InsertedIDs) != 25 || rm.InsertedIDs[24] != int32(25) {
		t.Fatalf("InsertMany ids %v", rm.InsertedIDs)
	}

	// A cursor over several batches.
	cur, err := coll.Find(ctx, bson.D{{Key: "qty", Value: bson.D{{Key: "$gte", Value: 10}}}}, &driver.FindOptions{BatchSize: driver.Ptr[int32](4), Sort: bson.D{{Key: "_id", Value: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if cur.ID() == 0 || cur.RemainingBatchLength() != 4 {
		t.Fatalf("first batch: id %d remaining %d", cur.ID(), cur.RemainingBatchLength())
	}
	got, err := driver.All[item](ctx, cur)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 25 || got[0].ID != 1 || got[24].Qty != 250 {
		t.Fatalf("All: %d items, %+v", len(got), got)
	}
	if cur.ID() != 0 {
		t.Fatalf("cursor still open after All: %d", cur.ID())
	}

	// FindOne, generics and ErrNoDocuments.
	it, err := driver.Decode[item](coll.FindOne(ctx, bson.D{{Key: "_id", Value: 7}}))
	if err != nil || it.Qty != 70 {
		t.Fatalf("FindOne: %+v, %v", it, err)
	}
	err = coll.FindOne(ctx, bson.D{{Key: "_id", Value: 700}}).Err()
	if !errors.Is(err, driver.ErrNoDocuments) {
		t.Fatalf("FindOne of nothing: %v", err)
	}

	// Limit with getMore does not overshoot; Iter closes the cursor.
	cur, err = coll.Find(ctx, bson.D{{Key: "qty", Value: bson.D{{Key: "$gte", Value: 10}}}}, &driver.FindOptions{BatchSize: driver.Ptr[int32](3), Limit: driver.Ptr[int64](7)})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, err := range driver.Iter[item](ctx, cur) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 7 {
		t.Fatalf("limit 7 gave %d", n)
	}

	// A duplicate key is a write error with its index.
	_, err = coll.InsertMany(ctx, []any{item{ID: 100}, item{ID: 5}, item{ID: 101}}, &driver.InsertManyOptions{Ordered: driver.Ptr(false)})
	var bwe *driver.BulkWriteException
	if !errors.As(err, &bwe) || len(bwe.WriteErrors) != 1 || bwe.WriteErrors[0].Index != 1 || bwe.WriteErrors[0].Code != 11000 {
		t.Fatalf("unordered InsertMany with a duplicate: %v", err)
	}
	if bwe.PartialResult.InsertedCount != 2 || !driver.IsDuplicateKeyError(err) {
		t.Fatalf("partial result %+v, IsDuplicateKeyError %v", bwe.PartialResult, driver.IsDuplicateKeyError(err))
	}
}
