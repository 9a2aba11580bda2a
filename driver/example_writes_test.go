package driver_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
)

// exampleCollection connects to s and returns an empty collection.
func writesCollection(ctx context.Context, s *mongotest.Server) (*driver.Client, *driver.Collection) {
	opts := &driver.ClientOptions{}
	if err := opts.ApplyURI(s.URI()); err != nil {
		panic(err)
	}
	client, err := driver.Connect(ctx, opts)
	if err != nil {
		panic(err)
	}
	return client, client.Database("shop").Collection("items")
}

// An update is a document of update operators; with Upsert, a filter that
// matches nothing inserts a document, whose _id the result reports.
func ExampleCollection_UpdateOne() {
	s := startServer(mongotest.Options{})
	defer s.Close()
	ctx := context.Background()
	client, coll := writesCollection(ctx, s)
	defer client.Disconnect(ctx)

	res, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: "apple"}},
		bson.D{{Key: "$inc", Value: bson.D{{Key: "qty", Value: 5}}}},
		&driver.UpdateOptions{Upsert: driver.Ptr(true)})
	if err != nil {
		panic(err)
	}
	fmt.Println("matched", res.MatchedCount, "upserted", res.UpsertedID)

	// A document without operators would replace the document: refused.
	_, err = coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: "apple"}}, bson.D{{Key: "qty", Value: 1}})
	var ae *driver.ArgumentError
	fmt.Println(errors.As(err, &ae), ae.Argument)
	// Output:
	// matched 0 upserted apple
	// true update
}

// FindOneAndUpdate returns the document as it was, or with After as the
// update left it.
func ExampleCollection_FindOneAndUpdate() {
	s := startServer(mongotest.Options{})
	defer s.Close()
	ctx := context.Background()
	client, coll := writesCollection(ctx, s)
	defer client.Disconnect(ctx)

	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "orders"}, {Key: "seq", Value: 41}}); err != nil {
		panic(err)
	}
	var counter struct {
		Seq int `bson:"seq"`
	}
	err := coll.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: "orders"}},
		bson.D{{Key: "$inc", Value: bson.D{{Key: "seq", Value: 1}}}},
		&driver.FindOneAndUpdateOptions{ReturnDocument: driver.After}).Decode(&counter)
	if err != nil {
		panic(err)
	}
	fmt.Println("next order number:", counter.Seq)
	// Output: next order number: 42
}

// BulkWrite sends consecutive writes of one kind in one command; a failed
// write's index is its position in models.
func ExampleCollection_BulkWrite() {
	s := startServer(mongotest.Options{})
	defer s.Close()
	ctx := context.Background()
	client, coll := writesCollection(ctx, s)
	defer client.Disconnect(ctx)

	res, err := coll.BulkWrite(ctx, []driver.WriteModel{
		driver.InsertOneModel{Document: bson.D{{Key: "_id", Value: 1}, {Key: "qty", Value: 5}}},
		driver.InsertOneModel{Document: bson.D{{Key: "_id", Value: 2}, {Key: "qty", Value: 0}}},
		driver.UpdateManyModel{Filter: bson.D{}, Update: bson.D{{Key: "$inc", Value: bson.D{{Key: "qty", Value: 1}}}}},
		driver.DeleteOneModel{Filter: bson.D{{Key: "qty", Value: 1}}},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("inserted", res.InsertedCount, "modified", res.ModifiedCount, "deleted", res.DeletedCount)

	_, err = coll.BulkWrite(ctx, []driver.WriteModel{
		driver.InsertOneModel{Document: bson.D{{Key: "_id", Value: 3}}},
		driver.InsertOneModel{Document: bson.D{{Key: "_id", Value: 1}}},
	}, &driver.BulkWriteOptions{Ordered: driver.Ptr(false)})
	var bwe *driver.BulkWriteException
	if errors.As(err, &bwe) {
		fmt.Println("failed:", bwe.WriteErrors[0].Index, "code", bwe.WriteErrors[0].Code, "inserted:", bwe.PartialResult.InsertedCount)
	}
	// Output:
	// inserted 2 modified 2 deleted 1
	// failed: 1 code 11000 inserted: 1
}
