package driver_test

import (
	"bytes"
	"runtime"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
)

// Batches of a megabyte or more are read into buffers that a cursor hands
// back when it moves to its next batch, closes or runs out, and that the
// next big reply reuses. No buffer may be reused while something still
// reads it: two cursors iterated in turn each see their own documents
// whole; a big FindOne result is the caller's for good; a cursor
// abandoned midway keeps its batch readable. Each document's padding is
// the letter of its _id, so a batch overwritten by another shows.
func TestCursorBigBatchesRecycled(t *testing.T) {
	const n = 6000
	srv := mongotest.NewServer(t, mongotest.Options{})
	c := dial(t, srv.URI(), nil)
	ctx := testCtx(t)
	coll := c.Database("db").Collection("c")
	letter := func(i int32) byte { return 'a' + byte(i%26) }
	docs := make([]any, n)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: int32(i)}, {Key: "pad", Value: strings.Repeat(string(letter(int32(i))), 1000)}}
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	big := c.Database("db").Collection("big")
	if _, err := big.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "pad", Value: strings.Repeat("z", 2<<20)}}); err != nil {
		t.Fatal(err)
	}
	one, err := big.FindOne(ctx, bson.D{}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	oneCopy := bytes.Clone(one)

	check := func(cur *driver.Cursor, want int32) {
		t.Helper()
		var got struct {
			ID  int32 `bson:"_id"`
			Pad string
		}
		if err := cur.Decode(&got); err != nil {
			t.Fatal(err)
		}
		if got.ID != want || len(got.Pad) != 1000 || strings.Count(got.Pad, string(letter(want))) != 1000 {
			t.Fatalf("document %d: _id %d, pad %.20q...", want, got.ID, got.Pad)
		}
	}
	bs := int32(1500)
	opts := &driver.FindOptions{BatchSize: &bs, Sort: bson.D{{Key: "_id", Value: 1}}} // batches of 1.5 MB
	a, err := coll.Find(ctx, bson.D{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := coll.Find(ctx, bson.D{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	// Three cursors in turn; the third is left midway with its batch in
	// hand, whose Current must stay whole while the others go on.
	mid, err := coll.Find(ctx, bson.D{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := int32(0); i < 2000; i++ {
		if !mid.Next(ctx) {
			t.Fatalf("third cursor ended at %d: %v", i, mid.Err())
		}
	}
	held := mid.Current
	heldCopy := bytes.Clone(held)
	for i := int32(0); i < n; i++ {
		for _, cur := range []*driver.Cursor{a, b} {
			if !cur.Next(ctx) {
				t.Fatalf("cursor ended at %d: %v", i, cur.Err())
			}
			check(cur, i)
		}
	}
	for _, cur := range []*driver.Cursor{a, b} {
		if cur.Next(ctx) || cur.Err() != nil {
			t.Fatalf("cursor goes on past %d documents: %v", n, cur.Err())
		}
	}
	if !bytes.Equal(held, heldCopy) {
		t.Fatal("the third cursor's Current changed while it did not move")
	}
	if err := mid.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(one, oneCopy) {
		t.Fatal("a FindOne result changed under later cursors")
	}

	// The buffers are reused: emptying the cursor again allocates far less
	// than the 6 MB its batches hold (the pool is not reliable under the
	// race detector, which drops some of what is put back).
	if raceEnabled {
		return
	}
	drain := func() uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		cur, err := coll.Find(ctx, bson.D{}, opts)
		if err != nil {
			t.Fatal(err)
		}
		for cur.Next(ctx) {
		}
		if err := cur.Err(); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	drain()
	best := drain()
	for range 2 {
		best = min(best, drain())
	}
	// The server is in this process: its own batches (6 MB built, with
	// no reuse) count too, so compare against what both sides would
	// allocate without reuse on ours.
	if best > 9<<20 {
		t.Fatalf("emptying a 6 MB cursor allocated %d bytes: big batch buffers are not reused", best)
	}
}
