package driver_test

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
)

// exampleCollection connects to an in-process server and fills
// shop.items; a real program connects to its deployment instead.
func exampleCollection() (*driver.Collection, func()) {
	s := startServer(mongotest.Options{})
	opts := &driver.ClientOptions{}
	if err := opts.ApplyURI(s.URI()); err != nil {
		panic(err)
	}
	client, err := driver.Connect(context.Background(), opts)
	if err != nil {
		panic(err)
	}
	coll := client.Database("shop").Collection("items")
	_, err = coll.InsertMany(context.Background(), []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "tag", Value: "pen"}, {Key: "qty", Value: 5}},
		bson.D{{Key: "_id", Value: 2}, {Key: "tag", Value: "ink"}, {Key: "qty", Value: 12}},
		bson.D{{Key: "_id", Value: 3}, {Key: "tag", Value: "pen"}, {Key: "qty", Value: 7}},
	})
	if err != nil {
		panic(err)
	}
	return coll, func() { client.Disconnect(context.Background()); s.Close() }
}

// Aggregate takes the pipeline as a slice of stage documents; driver.All
// decodes the results into the type of your choice.
func ExampleCollection_Aggregate() {
	coll, done := exampleCollection()
	defer done()
	ctx := context.Background()

	cur, err := coll.Aggregate(ctx, bson.A{
		bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$tag"}, {Key: "total", Value: bson.D{{Key: "$sum", Value: "$qty"}}}}}},
		bson.D{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}},
	}, &driver.AggregateOptions{MaxTime: driver.Ptr(5 * time.Second)})
	if err != nil {
		panic(err)
	}
	type total struct {
		Tag   string `bson:"_id"`
		Total int    `bson:"total"`
	}
	totals, err := driver.All[total](ctx, cur)
	if err != nil {
		panic(err)
	}
	fmt.Println(totals)
	// Output: [{ink 12} {pen 12}]
}

// CountDocuments counts exactly what a filter matches;
// EstimatedDocumentCount reads the collection's metadata.
func ExampleCollection_CountDocuments() {
	coll, done := exampleCollection()
	defer done()
	ctx := context.Background()

	pens, err := coll.CountDocuments(ctx, bson.D{{Key: "tag", Value: "pen"}})
	if err != nil {
		panic(err)
	}
	all, err := coll.EstimatedDocumentCount(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(pens, "pens of", all)
	// Output: 2 pens of 3
}

// driver.Values decodes Distinct's values as a slice of one type.
func ExampleValues() {
	coll, done := exampleCollection()
	defer done()

	tags, err := driver.Values[string](coll.Distinct(context.Background(), "tag", bson.D{}))
	if err != nil {
		panic(err)
	}
	slices.Sort(tags)
	fmt.Println(tags)
	// Output: [ink pen]
}

// RunCursorCommand runs a command that opens a cursor; its options shape
// the getMores that fetch the later batches.
func ExampleDatabase_RunCursorCommand() {
	coll, done := exampleCollection()
	defer done()
	ctx := context.Background()

	cur, err := coll.Database().RunCursorCommand(ctx,
		bson.D{{Key: "find", Value: "items"}, {Key: "filter", Value: bson.D{{Key: "qty", Value: bson.D{{Key: "$gt", Value: 6}}}}}, {Key: "batchSize", Value: 1}},
		&driver.RunCursorCommandOptions{BatchSize: driver.Ptr[int32](10)})
	if err != nil {
		panic(err)
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		fmt.Println(cur.Current.Lookup("_id"))
	}
	if err := cur.Err(); err != nil {
		panic(err)
	}
	// Output:
	// 2
	// 3
}
