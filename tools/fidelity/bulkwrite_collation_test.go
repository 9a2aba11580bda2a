package fidelity

import (
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongoscope/mongoscope/mongotest"
)

// The official driver's client-level BulkWrite against mongotest's
// bulkWrite command: verbose results across namespaces, and a duplicate
// key as a ClientBulkWriteException with its partial result.
func TestClientBulkWrite(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	c := connect(t, s.URI())
	ctx := ctx(t)
	writes := []mongo.ClientBulkWrite{
		{Database: "db0", Collection: "a", Model: mongo.NewClientInsertOneModel().SetDocument(bson.D{{Key: "_id", Value: 1}, {Key: "x", Value: "ping"}})},
		{Database: "db1", Collection: "b", Model: mongo.NewClientInsertOneModel().SetDocument(bson.D{{Key: "_id", Value: 1}})},
		{Database: "db0", Collection: "a", Model: mongo.NewClientUpdateOneModel().SetFilter(bson.D{{Key: "x", Value: "PING"}}).
			SetUpdate(bson.D{{Key: "$set", Value: bson.D{{Key: "y", Value: 1}}}}).SetCollation(&options.Collation{Locale: "en", Strength: 2})},
		{Database: "db0", Collection: "a", Model: mongo.NewClientUpdateOneModel().SetFilter(bson.D{{Key: "_id", Value: 2}}).
			SetUpdate(bson.D{{Key: "$set", Value: bson.D{{Key: "y", Value: 2}}}}).SetUpsert(true)},
		{Database: "db1", Collection: "b", Model: mongo.NewClientDeleteManyModel().SetFilter(bson.D{})},
	}
	res, err := c.BulkWrite(ctx, writes, options.ClientBulkWrite().SetVerboseResults(true))
	if err != nil {
		t.Fatal(err)
	}
	if res.InsertedCount != 2 || res.MatchedCount != 1 || res.ModifiedCount != 1 || res.UpsertedCount != 1 || res.DeletedCount != 1 {
		t.Errorf("counts %+v", res)
	}
	if ur := res.UpdateResults[3]; ur.UpsertedID != int32(2) || ur.MatchedCount != 1 {
		t.Errorf("upsert result %+v", ur)
	}
	if ir := res.InsertResults[1]; ir.InsertedID != int32(1) && ir.InsertedID != 1 {
		t.Errorf("insert result %+v", ir)
	}
	if dr := res.DeleteResults[4]; dr.DeletedCount != 1 {
		t.Errorf("delete result %+v", dr)
	}

	_, err = c.BulkWrite(ctx, []mongo.ClientBulkWrite{
		{Database: "db0", Collection: "a", Model: mongo.NewClientInsertOneModel().SetDocument(bson.D{{Key: "_id", Value: 3}})},
		{Database: "db0", Collection: "a", Model: mongo.NewClientInsertOneModel().SetDocument(bson.D{{Key: "_id", Value: 1}})},
	}, options.ClientBulkWrite().SetVerboseResults(true))
	var bwe mongo.ClientBulkWriteException
	if !errors.As(err, &bwe) {
		t.Fatalf("duplicate key: %T %v", err, err)
	}
	if we, ok := bwe.WriteErrors[1]; !ok || we.Code != 11000 {
		t.Errorf("write errors %+v", bwe.WriteErrors)
	}
	if bwe.PartialResult == nil || bwe.PartialResult.InsertedCount != 1 {
		t.Errorf("partial result %+v", bwe.PartialResult)
	}
}

// Collation and let through the official driver's collection API.
func TestCollationAndLet(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	c := connect(t, s.URI())
	ctx := ctx(t)
	coll := c.Database("db").Collection("names")
	if _, err := coll.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 1}, {Key: "n", Value: "Émile"}}, bson.D{{Key: "_id", Value: 2}, {Key: "n", Value: "emile"}}, bson.D{{Key: "_id", Value: 3}, {Key: "n", Value: "zed"}}}); err != nil {
		t.Fatal(err)
	}
	n, err := coll.CountDocuments(ctx, bson.D{{Key: "n", Value: "EMILE"}}, options.Count().SetCollation(&options.Collation{Locale: "fr", Strength: 1}))
	if err != nil || n != 2 {
		t.Errorf("CountDocuments with collation: %d, %v", n, err)
	}
	var got []bson.M
	cur, err := coll.Find(ctx, bson.D{{Key: "$expr", Value: bson.D{{Key: "$gt", Value: bson.A{"$_id", "$$min"}}}}},
		options.Find().SetLet(bson.D{{Key: "min", Value: 1}}).SetSort(bson.D{{Key: "n", Value: 1}}).SetCollation(&options.Collation{Locale: "en"}))
	if err != nil {
		t.Fatal(err)
	}
	if err := cur.All(ctx, &got); err != nil || len(got) != 2 || got[0]["n"] != "emile" {
		t.Errorf("Find with let and collation: %v, %v", got, err)
	}
	name, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "n", Value: 1}}, Options: options.Index().SetCollation(&options.Collation{Locale: "fr"})})
	if err != nil || name != "n_1" {
		t.Fatalf("CreateOne: %q, %v", name, err)
	}
	specs, err := coll.Indexes().ListSpecifications(ctx)
	if err != nil || len(specs) != 2 {
		t.Fatalf("ListSpecifications: %v, %v", specs, err)
	}
}
