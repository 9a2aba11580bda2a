package driver_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
)

// TestInsertIDs checks the _id InsertOne and InsertMany report and store
// for every kind of document: an _id given anywhere in the document is
// kept where it is, a missing one is a new ObjectID put first.
func TestInsertIDs(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c := dial(t, srv.URI(), nil)
	ctx := testCtx(t)
	coll := c.Database("ids").Collection("docs")

	type withID struct {
		ID  string `bson:"_id"`
		Qty int    `bson:"qty"`
	}
	type noID struct {
		ID  string `bson:"_id,omitempty"`
		Qty int    `bson:"qty"`
	}
	raw := func(d bson.D) bson.Raw {
		b, err := bson.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name string
		doc  any
		id   any // nil: a new ObjectID
	}{
		{"D without _id", bson.D{{Key: "qty", Value: 1}}, nil},
		{"D with _id last", bson.D{{Key: "qty", Value: 2}, {Key: "_id", Value: int32(7)}}, int32(7)},
		{"M with _id", bson.M{"_id": "m", "qty": 3}, "m"},
		{"M without _id", bson.M{"qty": 4}, nil},
		{"struct with _id", withID{ID: "s", Qty: 5}, "s"},
		{"struct with omitted _id", noID{Qty: 6}, nil},
		{"Raw with int64 _id", raw(bson.D{{Key: "qty", Value: 7}, {Key: "_id", Value: int64(9)}}), int64(9)},
		{"Raw without _id", raw(bson.D{{Key: "qty", Value: 8}}), nil},
		{"empty D", bson.D{}, nil},
	}
	check := func(t *testing.T, got, want any) {
		t.Helper()
		if want == nil {
			if _, ok := got.(bson.ObjectID); !ok {
				t.Fatalf("id %v (%T), want a new ObjectID", got, got)
			}
		} else if got != want {
			t.Fatalf("id %v (%T), want %v (%T)", got, got, want, want)
		}
		doc, err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: got}}).Raw()
		if err != nil {
			t.Fatalf("stored document with _id %v: %v", got, err)
		}
		if first, _ := doc.Index(0); first.Key() != "_id" && want == nil {
			t.Fatalf("new _id is not first: %s", doc)
		}
	}
	for _, tc := range tests {
		t.Run("InsertOne/"+tc.name, func(t *testing.T) {
			if _, err := coll.DeleteMany(ctx, bson.D{}); err != nil {
				t.Fatal(err)
			}
			res, err := coll.InsertOne(ctx, tc.doc)
			if err != nil {
				t.Fatal(err)
			}
			check(t, res.InsertedID, tc.id)
		})
	}
	t.Run("InsertMany", func(t *testing.T) {
		if _, err := coll.DeleteMany(ctx, bson.D{}); err != nil {
			t.Fatal(err)
		}
		docs := make([]any, len(tests))
		for i, tc := range tests {
			docs[i] = tc.doc
		}
		res, err := coll.InsertMany(ctx, docs)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.InsertedIDs) != len(tests) {
			t.Fatalf("%d ids", len(res.InsertedIDs))
		}
		for i, tc := range tests {
			check(t, res.InsertedIDs[i], tc.id)
		}
		n, err := coll.CountDocuments(ctx, bson.D{})
		if err != nil || n != int64(len(tests)) {
			t.Fatalf("%d documents stored, %v", n, err)
		}
	})
	t.Run("InsertMany bad document", func(t *testing.T) {
		_, err := coll.InsertMany(ctx, []any{bson.D{}, bson.Raw{1, 2}})
		var ae *driver.ArgumentError
		if !errors.As(err, &ae) || ae.Argument != "documents[1]" {
			t.Fatalf("%v, want an ArgumentError on documents[1]", err)
		}
	})
}

// TestInsertLargeDocuments sends batches big enough to be written in place
// (the connection's vectored write), in one piece and in several, and
// reads every document back.
func TestInsertLargeDocuments(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c := dial(t, srv.URI(), nil)
	ctx := testCtx(t)
	coll := c.Database("ids").Collection("large")
	big := func(i int) bson.D {
		return bson.D{{Key: "n", Value: int32(i)}, {Key: "pad", Value: strings.Repeat(string(rune('a'+i%26)), 300<<10)}}
	}
	// Contiguous documents (InsertMany's own buffer), bson.Raw documents
	// from separate allocations, and InsertOne.
	var docs []any
	for i := 0; i < 4; i++ {
		docs = append(docs, big(i))
	}
	for i := 4; i < 7; i++ {
		raw, err := bson.Marshal(big(i))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, raw)
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(ctx, big(7)); err != nil {
		t.Fatal(err)
	}
	cur, err := coll.Find(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	type doc struct {
		N   int32  `bson:"n"`
		Pad string `bson:"pad"`
	}
	got, err := driver.All[doc](ctx, cur)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 8 {
		t.Fatalf("%d documents, want 8", len(got))
	}
	for _, d := range got {
		if want := big(int(d.N))[1].Value.(string); d.Pad != want {
			t.Fatalf("document %d came back different (%d bytes of pad)", d.N, len(d.Pad))
		}
	}
}
