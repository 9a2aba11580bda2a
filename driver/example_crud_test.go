package driver_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
)

// Order is the document type of the CRUD examples: a struct with bson
// tags, as package bson describes.
type Order struct {
	ID   int    `bson:"_id"`
	Item string `bson:"item"`
	Qty  int    `bson:"qty"`
}

// exampleOrders starts a server, connects to it, and returns the client
// and the shop.orders collection holding docs.
func exampleOrders(docs ...any) (*mongotest.Server, *driver.Client, *driver.Collection) {
	s := startServer(mongotest.Options{})
	client := connectTo(s.URI())
	orders := client.Database("shop").Collection("orders")
	if len(docs) > 0 {
		if _, err := orders.InsertMany(context.Background(), docs); err != nil {
			panic(err)
		}
	}
	return s, client, orders
}

// threeOrders are the documents most examples start from.
func threeOrders() []any {
	return []any{Order{ID: 1, Item: "tea", Qty: 3}, Order{ID: 2, Item: "cake", Qty: 1}, Order{ID: 3, Item: "jam", Qty: 5}}
}

// Database and Collection return handles: they send nothing, cost little,
// and are safe for concurrent use. A mistake in a name or an option is
// returned by the handle's first operation.
func ExampleDatabase_Collection() {
	s := startServer(mongotest.Options{})
	defer s.Close()
	uri := s.URI() // a program uses its deployment's URI, e.g. "mongodb://db1,db2,db3/?replicaSet=rs0"

	ctx := context.Background()
	opts := &driver.ClientOptions{}
	if err := opts.ApplyURI(uri); err != nil {
		panic(err)
	}
	client, err := driver.Connect(ctx, opts)
	if err != nil {
		panic(err)
	}
	defer client.Disconnect(ctx)

	orders := client.Database("shop").Collection("orders")
	fmt.Println(orders.Namespace())

	_, err = client.Database("shop").Collection("").InsertOne(ctx, Order{ID: 1})
	var ae *driver.ArgumentError
	fmt.Println(errors.As(err, &ae), ae.Argument)
	// Output:
	// shop.orders
	// true collection name
}

// InsertOne reports the document's _id: its own, or the ObjectID the
// driver gave it.
func ExampleCollection_InsertOne() {
	s, client, orders := exampleOrders()
	defer s.Close()
	defer client.Disconnect(context.Background())
	ctx := context.Background()

	res, err := orders.InsertOne(ctx, Order{ID: 1, Item: "tea", Qty: 3})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.InsertedID)

	res, err = orders.InsertOne(ctx, bson.D{{Key: "item", Value: "cake"}}) // no _id: the driver adds one
	if err != nil {
		panic(err)
	}
	_, generated := res.InsertedID.(bson.ObjectID)
	fmt.Println(generated)
	// Output:
	// 1
	// true
}

// InsertMany sends the documents in as few commands as the server's
// limits allow, and reports their _ids in order.
func ExampleCollection_InsertMany() {
	s, client, orders := exampleOrders()
	defer s.Close()
	defer client.Disconnect(context.Background())
	ctx := context.Background()

	res, err := orders.InsertMany(ctx, []any{
		Order{ID: 1, Item: "tea", Qty: 3},
		Order{ID: 2, Item: "cake", Qty: 1},
		Order{ID: 3, Item: "jam", Qty: 5},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.InsertedIDs)
	// Output: [1 2 3]
}

// Find returns a cursor; Next fetches the following batches with getMore
// as the loop needs them.
func ExampleCollection_Find() {
	s, client, orders := exampleOrders(threeOrders()...)
	defer s.Close()
	defer client.Disconnect(context.Background())
	ctx := context.Background()

	cur, err := orders.Find(ctx, bson.D{{Key: "qty", Value: bson.D{{Key: "$gte", Value: 1}}}}, &driver.FindOptions{
		Sort:       bson.D{{Key: "qty", Value: -1}},
		Projection: bson.D{{Key: "_id", Value: 0}},
		Skip:       driver.Ptr[int64](1),
		Limit:      driver.Ptr[int64](2),
		BatchSize:  driver.Ptr[int32](1), // documents per round trip
	})
	if err != nil {
		panic(err)
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		var o Order
		if err := cur.Decode(&o); err != nil {
			panic(err)
		}
		fmt.Println(o.Item, o.Qty)
	}
	if err := cur.Err(); err != nil {
		panic(err)
	}
	// Output:
	// tea 3
	// cake 1
}

// FindOne returns the first match; when nothing matches, its Err (and
// Decode) is ErrNoDocuments.
func ExampleCollection_FindOne() {
	s, client, orders := exampleOrders(threeOrders()...)
	defer s.Close()
	defer client.Disconnect(context.Background())
	ctx := context.Background()

	var o Order
	if err := orders.FindOne(ctx, bson.D{{Key: "item", Value: "tea"}}).Decode(&o); err != nil {
		panic(err)
	}
	fmt.Println(o)

	err := orders.FindOne(ctx, bson.D{{Key: "item", Value: "coffee"}}).Err()
	if errors.Is(err, driver.ErrNoDocuments) {
		fmt.Println("no coffee")
	}
	// Output:
	// {1 tea 3}
	// no coffee
}

// A cursor that is not read to the end holds resources on the server
// until it is closed.
func ExampleCursor_Close() {
	s, client, orders := exampleOrders(threeOrders()...)
	defer s.Close()
	defer client.Disconnect(context.Background())
	ctx := context.Background()

	cur, err := orders.Find(ctx, bson.D{}, &driver.FindOptions{BatchSize: driver.Ptr[int32](1)})
	if err != nil {
		panic(err)
	}
	fmt.Println(cur.ID() != 0) // open on the server: more batches to come
	if err := cur.Close(ctx); err != nil {
		panic(err)
	}
	fmt.Println(cur.ID())
	// Output:
	// true
	// 0
}

// All decodes the rest of a cursor into a []T and closes it.
func ExampleAll() {
	s, client, orders := exampleOrders(threeOrders()...)
	defer s.Close()
	defer client.Disconnect(context.Background())
	ctx := context.Background()

	cur, err := orders.Find(ctx, bson.D{}, &driver.FindOptions{Sort: bson.D{{Key: "item", Value: 1}}})
	if err != nil {
		panic(err)
	}
	all, err := driver.All[Order](ctx, cur) // the rest of the cursor as a []Order; closes it
	if err != nil {
		panic(err)
	}
	fmt.Println(all)
	// Output: [{2 cake 1} {3 jam 5} {1 tea 3}]
}

// Iter ranges over a cursor decoding each document as a T; leaving the
// loop early closes the cursor.
func ExampleIter() {
	s, client, orders := exampleOrders(threeOrders()...)
	defer s.Close()
	defer client.Disconnect(context.Background())
	ctx := context.Background()

	cur, err := orders.Find(ctx, bson.D{}, &driver.FindOptions{Sort: bson.D{{Key: "_id", Value: 1}}})
	if err != nil {
		panic(err)
	}
	for o, err := range driver.Iter[Order](ctx, cur) {
		if err != nil {
			panic(err)
		}
		fmt.Println(o.ID, o.Item)
		if o.Item == "cake" {
			break
		}
	}
	// Output:
	// 1 tea
	// 2 cake
}

// Decode turns a SingleResult into a T; it returns ErrNoDocuments when
// nothing matched.
func ExampleDecode() {
	s, client, orders := exampleOrders(threeOrders()...)
	defer s.Close()
	defer client.Disconnect(context.Background())
	ctx := context.Background()

	o, err := driver.Decode[Order](orders.FindOne(ctx, bson.D{{Key: "_id", Value: 3}}))
	fmt.Println(o, err)

	_, err = driver.Decode[Order](orders.FindOne(ctx, bson.D{{Key: "_id", Value: 4}}))
	fmt.Println(errors.Is(err, driver.ErrNoDocuments))
	// Output:
	// {3 jam 5} <nil>
	// true
}

// UpdateMany applies the update to every match; the result counts the
// documents matched and those actually changed.
func ExampleCollection_UpdateMany() {
	s, client, orders := exampleOrders(threeOrders()...)
	defer s.Close()
	defer client.Disconnect(context.Background())
	ctx := context.Background()

	res, err := orders.UpdateMany(ctx, bson.D{{Key: "qty", Value: bson.D{{Key: "$lt", Value: 5}}}},
		bson.D{{Key: "$inc", Value: bson.D{{Key: "qty", Value: 10}}}})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.MatchedCount, res.ModifiedCount)
	// Output: 2 2
}

// ReplaceOne replaces a whole document, keeping its _id.
func ExampleCollection_ReplaceOne() {
	s, client, orders := exampleOrders(threeOrders()...)
	defer s.Close()
	defer client.Disconnect(context.Background())
	ctx := context.Background()

	res, err := orders.ReplaceOne(ctx, bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "item", Value: "pie"}, {Key: "qty", Value: 2}})
	if err != nil {
		panic(err)
	}
	o, err := driver.Decode[Order](orders.FindOne(ctx, bson.D{{Key: "_id", Value: 2}}))
	fmt.Println(res.ModifiedCount, o, err)
	// Output: 1 {2 pie 2} <nil>
}

// DeleteOne removes the first match, DeleteMany every match.
func ExampleCollection_DeleteMany() {
	s, client, orders := exampleOrders(threeOrders()...)
	defer s.Close()
	defer client.Disconnect(context.Background())
	ctx := context.Background()

	one, err := orders.DeleteOne(ctx, bson.D{{Key: "item", Value: "tea"}})
	if err != nil {
		panic(err)
	}
	many, err := orders.DeleteMany(ctx, bson.D{{Key: "qty", Value: bson.D{{Key: "$gte", Value: 1}}}})
	if err != nil {
		panic(err)
	}
	fmt.Println(one.DeletedCount, many.DeletedCount)
	// Output: 1 2
}

// FindOneAndDelete removes a document and returns it; with Sort, the
// first in that order.
func ExampleCollection_FindOneAndDelete() {
	s, client, orders := exampleOrders(threeOrders()...)
	defer s.Close()
	defer client.Disconnect(context.Background())
	ctx := context.Background()

	biggest, err := driver.Decode[Order](orders.FindOneAndDelete(ctx, bson.D{},
		&driver.FindOneAndDeleteOptions{Sort: bson.D{{Key: "qty", Value: -1}}}))
	fmt.Println(biggest, err)

	err = orders.FindOneAndDelete(ctx, bson.D{{Key: "_id", Value: biggest.ID}}).Err()
	fmt.Println(errors.Is(err, driver.ErrNoDocuments))
	// Output:
	// {3 jam 5} <nil>
	// true
}

// A single write the server refused is a *WriteException inside the
// *OperationError; IsDuplicateKeyError recognizes a duplicate key.
func ExampleWriteException() {
	s, client, orders := exampleOrders(threeOrders()...)
	defer s.Close()
	defer client.Disconnect(context.Background())
	ctx := context.Background()

	_, err := orders.InsertOne(ctx, Order{ID: 1, Item: "scone"})
	var we *driver.WriteException
	if errors.As(err, &we) {
		fmt.Println(we.WriteErrors[0].Code)
	}
	fmt.Println(driver.IsDuplicateKeyError(err))
	// Output:
	// 11000
	// true
}

// A multi-document write reports each refused document with its index in
// a *BulkWriteException, with what was done in PartialResult. Unordered,
// every document is tried.
func ExampleBulkWriteException() {
	s, client, orders := exampleOrders(threeOrders()...)
	defer s.Close()
	defer client.Disconnect(context.Background())
	ctx := context.Background()

	_, err := orders.InsertMany(ctx, []any{Order{ID: 3}, Order{ID: 4}, Order{ID: 1}, Order{ID: 5}},
		&driver.InsertManyOptions{Ordered: driver.Ptr(false)})
	var bwe *driver.BulkWriteException
	if errors.As(err, &bwe) {
		for _, we := range bwe.WriteErrors {
			fmt.Println("index", we.Index, "code", we.Code)
		}
		fmt.Println("inserted", bwe.PartialResult.InsertedCount)
	}
	// Output:
	// index 0 code 11000
	// index 2 code 11000
	// inserted 2
}

// The context bounds an operation: when it runs out, IsTimeout is true.
func ExampleCollection_FindOne_timeout() {
	s, client, orders := exampleOrders(threeOrders()...)
	defer s.Close()
	defer client.Disconnect(context.Background())
	failNext(s, bson.D{{Key: "failCommands", Value: bson.A{"find"}}, {Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: 2000}})

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := orders.FindOne(ctx, bson.D{}).Err()
	fmt.Println(driver.IsTimeout(err), errors.Is(err, context.DeadlineExceeded))
	// Output: true true
}

// Read concern, write concern and read preference are set on the client
// (in code or the URI), and overridden per database, per collection and
// per operation.
func ExampleCollectionOptions() {
	s := startServer(mongotest.Options{})
	defer s.Close()
	ctx := context.Background()

	opts := &driver.ClientOptions{URIOptions: driver.URIOptions{
		W:                &driver.W{Tag: "majority"}, // or in the URI: ?w=majority&readConcernLevel=local
		ReadConcernLevel: driver.ReadConcernLocal,
	}}
	if err := opts.ApplyURI(s.URI()); err != nil {
		panic(err)
	}
	client, err := driver.Connect(ctx, opts)
	if err != nil {
		panic(err)
	}
	defer client.Disconnect(ctx)
	shop := client.Database("shop", &driver.DatabaseOptions{
		ReadConcern: &driver.ReadConcern{Level: driver.ReadConcernMajority},
	})
	orders := shop.Collection("orders", &driver.CollectionOptions{
		WriteConcern:   &driver.WriteConcern{W: &driver.W{Nodes: 1}, Journal: driver.Ptr(true)},
		ReadPreference: &driver.ReadPreference{Mode: driver.PrimaryPreferred},
	})
	audit := shop.Collection("audit") // the database's settings, and the client's below them

	if _, err := orders.InsertOne(ctx, Order{ID: 1, Item: "tea"}); err != nil {
		panic(err)
	}
	if _, err := audit.InsertOne(ctx, bson.D{{Key: "event", Value: "order 1"}}); err != nil {
		panic(err)
	}
	if err := orders.FindOne(ctx, bson.D{}).Err(); err != nil {
		panic(err)
	}
	// And for one operation.
	_, err = orders.InsertOne(ctx, Order{ID: 2, Item: "jam"}, &driver.InsertOneOptions{WriteConcern: driver.Majority()})
	if err != nil {
		panic(err)
	}
	// What the server received.
	field := func(doc bson.Raw, key string) string {
		if v, err := doc.LookupErr(key); err == nil {
			return v.String()
		}
		return "-"
	}
	for _, c := range s.Commands() {
		if c.Name == "insert" || c.Name == "find" {
			fmt.Println(c.Name, field(c.Body, c.Name), "writeConcern", field(c.Body, "writeConcern"), "readConcern", field(c.Body, "readConcern"))
		}
	}
	// Output:
	// insert "orders" writeConcern {"w":1,"j":true} readConcern -
	// insert "audit" writeConcern {"w":"majority"} readConcern -
	// find "orders" writeConcern - readConcern {"level":"majority"}
	// insert "orders" writeConcern {"w":"majority"} readConcern -
}
