package fidelity

import (
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongoscope/mongoscope/mongotest"
)

// CRUD round trips through the official driver's collection API: the
// shapes of mongotest's replies must be what that driver decodes.
func TestCRUDRoundTrips(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	c := connect(t, s.URI())
	coll := c.Database("fidelity").Collection("orders")
	ctx := ctx(t)

	var docs []any
	for i := 0; i < 250; i++ {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "status", Value: []string{"open", "closed"}[i%2]}, {Key: "total", Value: float64(i) * 1.5}})
	}
	ins, err := coll.InsertMany(ctx, docs)
	if err != nil || len(ins.InsertedIDs) != 250 {
		t.Fatalf("InsertMany: %v, %v", ins, err)
	}
	one, err := coll.InsertOne(ctx, bson.D{{Key: "status", Value: "new"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := one.InsertedID.(bson.ObjectID); !ok {
		t.Errorf("InsertOne generated _id %T", one.InsertedID)
	}
	_, err = coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 3}})
	if !mongo.IsDuplicateKeyError(err) {
		t.Errorf("duplicate _id: %v", err)
	}

	var got struct {
		ID    int     `bson:"_id"`
		Total float64 `bson:"total"`
	}
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: 7}}).Decode(&got); err != nil || got.ID != 7 || got.Total != 10.5 {
		t.Errorf("FindOne: %+v, %v", got, err)
	}
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: -1}}).Err(); err != mongo.ErrNoDocuments {
		t.Errorf("FindOne of nothing: %v", err)
	}

	up, err := coll.UpdateMany(ctx, bson.D{{Key: "status", Value: "open"}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "total", Value: 1}}}})
	if err != nil || up.MatchedCount != 125 || up.ModifiedCount != 125 {
		t.Errorf("UpdateMany: %+v, %v", up, err)
	}
	ups, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1000}}, bson.D{{Key: "$set", Value: bson.D{{Key: "status", Value: "upserted"}}}}, options.UpdateOne().SetUpsert(true))
	if err != nil || ups.UpsertedID != int32(1000) && ups.UpsertedID != 1000 {
		t.Errorf("upsert: %+v, %v", ups, err)
	}
	n, err := coll.CountDocuments(ctx, bson.D{{Key: "status", Value: "closed"}})
	if err != nil || n != 125 {
		t.Errorf("CountDocuments: %d, %v", n, err)
	}
	vals, err := coll.Distinct(ctx, "status", bson.D{}).Raw()
	if err != nil {
		t.Errorf("Distinct: %v", err)
	} else if arr, _ := vals.Values(); len(arr) != 4 {
		t.Errorf("Distinct values %v", vals)
	}
	del, err := coll.DeleteMany(ctx, bson.D{{Key: "total", Value: bson.D{{Key: "$gt", Value: 300}}}})
	if err != nil || del.DeletedCount == 0 {
		t.Errorf("DeleteMany: %+v, %v", del, err)
	}
	var fam bson.M
	err = coll.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "$set", Value: bson.D{{Key: "seen", Value: true}}}},
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&fam)
	if err != nil || fam["seen"] != true {
		t.Errorf("FindOneAndUpdate: %v, %v", fam, err)
	}

	// A cursor over more than one batch: find with batchSize, getMore to the end.
	cur, err := coll.Find(ctx, bson.D{}, options.Find().SetBatchSize(17).SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	count, last := 0, -1
	for cur.Next(ctx) {
		var d struct {
			ID any `bson:"_id"`
		}
		if err := cur.Decode(&d); err != nil {
			t.Fatal(err)
		}
		if id, ok := d.ID.(int32); ok {
			if int(id) <= last {
				t.Errorf("sort order broken at %d after %d", id, last)
			}
			last = int(id)
		}
		count++
	}
	if err := cur.Err(); err != nil {
		t.Fatal(err)
	}
	_ = cur.Close(ctx)
	total, _ := coll.CountDocuments(ctx, bson.D{})
	if int64(count) != total {
		t.Errorf("cursor returned %d documents, the collection has %d", count, total)
	}
	getMores := 0
	for _, cmd := range s.Commands() {
		if cmd.Name == "getMore" {
			getMores++
		}
	}
	if getMores < int(total)/17 {
		t.Errorf("%d getMores for %d documents in batches of 17", getMores, total)
	}

	// Aggregation.
	agg, err := coll.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$match", Value: bson.D{{Key: "status", Value: bson.D{{Key: "$in", Value: bson.A{"open", "closed"}}}}}}},
		{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$status"}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}},
		{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var groups []struct {
		ID string `bson:"_id"`
		N  int    `bson:"n"`
	}
	if err := agg.All(ctx, &groups); err != nil || len(groups) != 2 || groups[0].ID != "closed" {
		t.Errorf("aggregate: %+v, %v", groups, err)
	}

	// Indexes and the catalog.
	name, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "status", Value: 1}, {Key: "total", Value: -1}}})
	if err != nil || name != "status_1_total_-1" {
		t.Errorf("CreateOne index: %q, %v", name, err)
	}
	specs, err := coll.Indexes().ListSpecifications(ctx)
	if err != nil || len(specs) != 2 {
		t.Errorf("ListSpecifications: %v, %v", specs, err)
	}
	names, err := c.Database("fidelity").ListCollectionNames(ctx, bson.D{})
	if err != nil || fmt.Sprint(names) != "[orders]" {
		t.Errorf("ListCollectionNames: %v, %v", names, err)
	}
	dbs, err := c.ListDatabaseNames(ctx, bson.D{{Key: "name", Value: "fidelity"}})
	if err != nil || len(dbs) != 1 {
		t.Errorf("ListDatabaseNames: %v, %v", dbs, err)
	}
	if err := coll.Drop(ctx); err != nil {
		t.Error(err)
	}
	_ = time.Second
}
