package fidelity

import (
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"

	"github.com/mongoscope/mongoscope/mongotest"
)

// Views, $merge and capped collections through the official driver's
// API: CreateView, ListCollectionSpecifications, reads on the view, a
// write refused with the server's error, Aggregate with $merge, and a
// capped collection's options.
func TestViewsMergeCapped(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	c := connect(t, s.URI())
	db := c.Database("fidelity")
	ctx := ctx(t)
	src := db.Collection("src")
	var docs []any
	for i := 0; i < 10; i++ {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "even", Value: i%2 == 0}})
	}
	if _, err := src.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateView(ctx, "evens", "src", mongo.Pipeline{{{Key: "$match", Value: bson.D{{Key: "even", Value: true}}}}}); err != nil {
		t.Fatal(err)
	}
	specs, err := db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: "evens"}})
	if err != nil || len(specs) != 1 || specs[0].Type != "view" {
		t.Fatalf("ListCollectionSpecifications: %+v, %v", specs, err)
	}
	view := db.Collection("evens")
	if n, err := view.CountDocuments(ctx, bson.D{}); err != nil || n != 5 {
		t.Errorf("CountDocuments on the view: %d, %v", n, err)
	}
	if n, err := view.EstimatedDocumentCount(ctx); err != nil || n != 5 {
		t.Errorf("EstimatedDocumentCount on the view: %d, %v", n, err)
	}
	cur, err := view.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: 4}}}}, options.Find().SetBatchSize(1))
	if err != nil {
		t.Fatal(err)
	}
	var got []bson.M
	if err := cur.All(ctx, &got); err != nil || len(got) != 2 {
		t.Errorf("Find on the view: %v, %v", got, err)
	}
	_, err = view.InsertOne(ctx, bson.D{{Key: "_id", Value: 99}})
	var se mongo.ServerError
	if !errors.As(err, &se) || !se.HasErrorCode(166) {
		t.Errorf("insert into a view: %v", err)
	}

	cur, err = src.Aggregate(ctx, mongo.Pipeline{{{Key: "$merge", Value: bson.D{{Key: "into", Value: "merged"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if cur.Next(ctx) {
		t.Error("$merge returned documents")
	}
	cur.Close(ctx)
	if n, err := db.Collection("merged").CountDocuments(ctx, bson.D{}); err != nil || n != 10 {
		t.Errorf("$merge wrote %d, %v", n, err)
	}

	if err := db.CreateCollection(ctx, "log", options.CreateCollection().SetCapped(true).SetSizeInBytes(4096).SetMaxDocuments(2)); err != nil {
		t.Fatal(err)
	}
	logs := db.Collection("log")
	for i := 0; i < 3; i++ {
		if _, err := logs.InsertOne(ctx, bson.D{{Key: "_id", Value: i}}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := logs.CountDocuments(ctx, bson.D{}); err != nil || n != 2 {
		t.Errorf("capped collection holds %d, %v", n, err)
	}
	specs, err = db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: "log"}})
	if err != nil || len(specs) != 1 || !specs[0].Options.Lookup("capped").Boolean() {
		t.Errorf("capped options: %+v, %v", specs, err)
	}
}

// The driver sends an aggregate with $out to a secondary when the read
// preference says so (servers 5.0+); the write lands on the primary.
func TestOutWithSecondaryReadPreference(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{})
	c := connect(t, rs.URI())
	ctx := ctx(t)
	db := c.Database("fidelity")
	if _, err := db.Collection("src").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	sec := db.Collection("src", options.Collection().SetReadPreference(readpref.Secondary()))
	cur, err := sec.Aggregate(ctx, mongo.Pipeline{{{Key: "$out", Value: "out"}}})
	if err != nil {
		t.Fatal(err)
	}
	cur.Close(ctx)
	if n, err := db.Collection("out").CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Errorf("$out via a secondary wrote %d, %v", n, err)
	}
}
