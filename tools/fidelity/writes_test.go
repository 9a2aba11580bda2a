package fidelity

import (
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongoscope/mongoscope/mongotest"
)

// Pipeline-style updates, the 8.0 sort option of UpdateOne and
// ReplaceOne, and document validation through the official driver.
func TestUpdatePipelineSortAndValidation(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	c := connect(t, s.URI())
	ctx := ctx(t)
	coll := c.Database("fidelity").Collection("w")
	docs := []any{bson.D{{Key: "_id", Value: 1}, {Key: "x", Value: 11}}, bson.D{{Key: "_id", Value: 2}, {Key: "x", Value: 22}}, bson.D{{Key: "_id", Value: 3}, {Key: "x", Value: 33}}}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	pipe := mongo.Pipeline{{{Key: "$set", Value: bson.D{{Key: "y", Value: bson.D{{Key: "$add", Value: bson.A{"$x", 1}}}}}}}}
	res, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, pipe)
	if err != nil || res.ModifiedCount != 1 {
		t.Fatalf("pipeline UpdateOne: %+v, %v", res, err)
	}
	var got struct {
		Y int32 `bson:"y"`
	}
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Decode(&got); err != nil || got.Y != 12 {
		t.Errorf("after pipeline: %+v, %v", got, err)
	}
	gt1 := bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: 1}}}}
	if _, err := coll.UpdateOne(ctx, gt1, bson.D{{Key: "$set", Value: bson.D{{Key: "last", Value: true}}}}, options.UpdateOne().SetSort(bson.D{{Key: "_id", Value: -1}})); err != nil {
		t.Fatal(err)
	}
	if n, _ := coll.CountDocuments(ctx, bson.D{{Key: "_id", Value: 3}, {Key: "last", Value: true}}); n != 1 {
		t.Error("UpdateOne with sort did not update the last document in sort order")
	}
	if _, err := coll.ReplaceOne(ctx, gt1, bson.D{{Key: "r", Value: 1}}, options.Replace().SetSort(bson.D{{Key: "x", Value: 1}})); err != nil {
		t.Fatal(err)
	}
	if n, _ := coll.CountDocuments(ctx, bson.D{{Key: "_id", Value: 2}, {Key: "r", Value: 1}}); n != 1 {
		t.Error("ReplaceOne with sort did not replace the first document in sort order")
	}

	db := c.Database("fidelity")
	if err := db.CreateCollection(ctx, "v", options.CreateCollection().SetValidator(bson.D{{Key: "x", Value: bson.D{{Key: "$type", Value: "string"}}}})); err != nil {
		t.Fatal(err)
	}
	v := db.Collection("v")
	_, err = v.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "x", Value: 1}})
	var we mongo.WriteException
	if !errors.As(err, &we) || len(we.WriteErrors) != 1 || we.WriteErrors[0].Code != 121 ||
		we.WriteErrors[0].Details.Lookup("failingDocumentId").AsInt64() != 1 {
		t.Fatalf("invalid insert: %v", err)
	}
	if _, err := v.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "x", Value: 1}}, options.InsertOne().SetBypassDocumentValidation(true)); err != nil {
		t.Fatalf("bypassing insert: %v", err)
	}
	err = v.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 2}}}}).Err()
	var ce mongo.CommandError
	if !errors.As(err, &ce) || ce.Code != 121 {
		t.Fatalf("invalid findOneAndUpdate: %v", err)
	}
	if _, ok := ce.Raw.Lookup("errInfo", "details").DocumentOK(); !ok {
		t.Errorf("findOneAndUpdate error has no errInfo.details: %s", ce.Raw)
	}
}
