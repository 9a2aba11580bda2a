package driver_test

import (
	"context"
	"fmt"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
)

// Indexes are managed through the collection's IndexView. An index
// without a Name is named after its keys.
func ExampleIndexView() {
	s := startServer(mongotest.Options{})
	defer s.Close()
	client := connectTo(s.URI())
	defer client.Disconnect(context.Background())
	ctx := context.Background()
	people := client.Database("app").Collection("people")

	names, err := people.Indexes().CreateMany(ctx, []driver.IndexModel{
		{Keys: bson.D{{Key: "name", Value: 1}, {Key: "dob", Value: -1}}, Options: &driver.IndexOptions{Unique: driver.Ptr(true)}},
		{Keys: bson.D{{Key: "created", Value: 1}}, Options: &driver.IndexOptions{ExpireAfterSeconds: driver.Ptr[int32](3600)}},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(names)

	specs, err := people.Indexes().ListSpecifications(ctx)
	if err != nil {
		panic(err)
	}
	for _, ix := range specs {
		fmt.Println(ix.Name, ix.KeysDocument, ix.Unique != nil)
	}
	if err := people.Indexes().DropOne(ctx, "created_1"); err != nil {
		panic(err)
	}
	// Output:
	// [name_1_dob_-1 created_1]
	// _id_ {"_id":1} false
	// name_1_dob_-1 {"name":1,"dob":-1} true
	// created_1 {"created":1} false
}

// CreateCollection passes its options to the create command;
// ListCollectionNames and ListCollectionSpecifications enumerate the
// database's collections and views.
func ExampleDatabase_CreateCollection() {
	s := startServer(mongotest.Options{})
	defer s.Close()
	client := connectTo(s.URI())
	defer client.Disconnect(context.Background())
	ctx := context.Background()
	db := client.Database("app")

	err := db.CreateCollection(ctx, "events", &driver.CreateCollectionOptions{Capped: driver.Ptr(true), SizeInBytes: driver.Ptr[int64](1 << 20)})
	if err != nil {
		panic(err)
	}
	pipeline := bson.A{bson.D{{Key: "$project", Value: bson.D{{Key: "kind", Value: 1}}}}}
	if err := db.CreateView(ctx, "kinds", "events", pipeline); err != nil {
		panic(err)
	}
	capped, err := db.ListCollectionNames(ctx, bson.D{{Key: "options.capped", Value: true}})
	if err != nil {
		panic(err)
	}
	fmt.Println("capped:", capped)
	specs, err := db.ListCollectionSpecifications(ctx, bson.D{})
	if err != nil {
		panic(err)
	}
	for _, s := range specs {
		fmt.Println(s.Name, s.Type, s.ReadOnly)
	}
	// Output:
	// capped: [events]
	// events collection false
	// kinds view true
}
