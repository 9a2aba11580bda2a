package driver_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
)

// The collection and index management flows of the interop suite
// (interop_ferretdb_test.go), against mongotest and FerretDB v1.
var interopAdminFlows = []interopFlow{
	{name: "CreateCollection ListCollections Drop", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		db := env.db
		if err := db.CreateCollection(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if err := db.CreateCollection(ctx, "b", &driver.CreateCollectionOptions{Capped: driver.Ptr(true), SizeInBytes: driver.Ptr[int64](1 << 20)}); err != nil {
			t.Fatal(err)
		}
		names, err := db.ListCollectionNames(ctx, bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(names)
		if fmt.Sprint(names) != "[a b]" {
			t.Fatalf("ListCollectionNames: %v", names)
		}
		specs, err := db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: "b"}})
		if err != nil || len(specs) != 1 {
			t.Fatalf("ListCollectionSpecifications(b): %v, %v", specs, err)
		}
		capped, _ := specs[0].Options.Lookup("capped").BooleanOK()
		if specs[0].Name != "b" || specs[0].Type != "collection" || !capped {
			t.Fatalf("b: %+v (options %s)", specs[0], specs[0].Options)
		}
		// Creating it again with other options is NamespaceExists (48).
		err = db.CreateCollection(ctx, "a", &driver.CreateCollectionOptions{Capped: driver.Ptr(true), SizeInBytes: driver.Ptr[int64](4096)})
		var ce *driver.CommandError
		if !errors.As(err, &ce) || ce.Code != 48 {
			t.Fatalf("creating a again as a capped collection: %v; want NamespaceExists (48)", err)
		}
		if err := db.Collection("a").Drop(ctx); err != nil {
			t.Fatal(err)
		}
		if err := db.Collection("never_made").Drop(ctx); err != nil {
			t.Fatalf("dropping a collection that does not exist: %v", err)
		}
		names, err = db.ListCollectionNames(ctx, bson.D{})
		if err != nil || fmt.Sprint(names) != "[b]" {
			t.Fatalf("after Drop(a): %v, %v", names, err)
		}
		dbs, err := env.client.ListDatabaseNames(ctx, bson.D{{Key: "name", Value: db.Name()}})
		if err != nil || len(dbs) != 1 || dbs[0] != db.Name() {
			t.Fatalf("ListDatabaseNames(%s): %v, %v", db.Name(), dbs, err)
		}
		if err := db.Drop(ctx); err != nil {
			t.Fatal(err)
		}
		names, err = db.ListCollectionNames(ctx, bson.D{})
		if err != nil || len(names) != 0 {
			t.Fatalf("after the database's Drop: %v, %v", names, err)
		}
		return fmt.Sprintf("created [a b]; again: %d %s; after drops %v", ce.Code, ce.CodeName, names)
	}},
	{name: "CreateCollection again with the same options", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		// Since MongoDB 7.0 (SERVER-60064) create succeeds when the
		// collection exists with identical options, as mongos always did.
		opts := &driver.CreateCollectionOptions{Capped: driver.Ptr(true), SizeInBytes: driver.Ptr[int64](1 << 20)}
		if err := env.db.CreateCollection(ctx, "a", opts); err != nil {
			t.Fatal(err)
		}
		if err := env.db.CreateCollection(ctx, "a", opts); err != nil {
			t.Fatalf("creating a again with the same options: %v; want success, as from mongod 7.0+", err)
		}
		return "ok"
	},
		ferretSkip: "FerretDB v1 answers NamespaceExists (48) to a create with the options the collection already has, as mongod did before 7.0, while its buildInfo says 7.0"},
	{name: "Rename", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		interopSeed(t, ctx, env.coll, 3)
		if err := env.coll.Rename(ctx, "renamed"); err != nil {
			t.Fatal(err)
		}
		got := interopIDs(interopFindAll(t, ctx, env.db.Collection("renamed"), bson.D{}, &driver.FindOptions{Sort: bson.D{{Key: "_id", Value: 1}}}))
		if fmt.Sprint(got) != "[1 2 3]" {
			t.Fatalf("the renamed collection holds %v", got)
		}
		interopSeed(t, ctx, env.db.Collection("other"), 1)
		err := env.db.Collection("renamed").Rename(ctx, "other")
		var ce *driver.CommandError
		if !errors.As(err, &ce) || ce.Code != 48 {
			t.Fatalf("renaming onto an existing collection: %v; want NamespaceExists (48)", err)
		}
		return fmt.Sprintf("%v; onto an existing one: %d %s", got, ce.Code, ce.CodeName)
	}},
	{name: "Rename with DropTarget", ferretSkip: `FerretDB v1 does not implement renameCollection's dropTarget: server error 238 (NotImplemented): renameCollection: support for field "dropTarget" with non-default value true is not implemented yet`,
		run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
			interopSeed(t, ctx, env.coll, 3)
			interopSeed(t, ctx, env.db.Collection("other"), 1)
			if err := env.coll.Rename(ctx, "other", &driver.RenameOptions{DropTarget: driver.Ptr(true)}); err != nil {
				t.Fatalf("with DropTarget: %v", err)
			}
			got := interopIDs(interopFindAll(t, ctx, env.db.Collection("other"), bson.D{}, &driver.FindOptions{Sort: bson.D{{Key: "_id", Value: 1}}}))
			if fmt.Sprint(got) != "[1 2 3]" {
				t.Fatalf("after the rename with DropTarget: %v", got)
			}
			return fmt.Sprint(got)
		}},
	{name: "Indexes create list drop", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		iv := env.coll.Indexes()
		name, err := iv.CreateOne(ctx, driver.IndexModel{Keys: bson.D{{Key: "qty", Value: 1}}})
		if err != nil || name != "qty_1" {
			t.Fatalf("CreateOne: %q, %v", name, err)
		}
		many, err := iv.CreateMany(ctx, []driver.IndexModel{
			{Keys: bson.D{{Key: "tag", Value: 1}}, Options: &driver.IndexOptions{Unique: driver.Ptr(true), Name: driver.Ptr("tag_unique")}},
			{Keys: bson.D{{Key: "qty", Value: -1}, {Key: "tag", Value: 1}}},
		})
		if err != nil || fmt.Sprint(many) != "[tag_unique qty_-1_tag_1]" {
			t.Fatalf("CreateMany: %v, %v", many, err)
		}
		names, err := iv.ListNames(ctx)
		slices.Sort(names)
		if err != nil || fmt.Sprint(names) != "[_id_ qty_-1_tag_1 qty_1 tag_unique]" {
			t.Fatalf("ListNames: %v, %v", names, err)
		}
		specs, err := iv.ListSpecifications(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var unique []string
		for _, s := range specs {
			if s.Unique != nil && *s.Unique {
				unique = append(unique, s.Name)
			}
			if s.Namespace != env.coll.Namespace() {
				t.Errorf("index %s: namespace %q", s.Name, s.Namespace)
			}
		}
		if fmt.Sprint(unique) != "[tag_unique]" {
			t.Fatalf("unique indexes %v", unique)
		}
		if _, err := env.coll.InsertOne(ctx, item{ID: 1, Tag: "x"}); err != nil {
			t.Fatal(err)
		}
		if _, err := env.coll.InsertOne(ctx, item{ID: 2, Tag: "x"}); !driver.IsDuplicateKeyError(err) {
			t.Fatalf("an insert breaking tag_unique: %v", err)
		}
		if err := iv.DropOne(ctx, "qty_1"); err != nil {
			t.Fatal(err)
		}
		if err := iv.DropWithKey(ctx, bson.D{{Key: "qty", Value: -1}, {Key: "tag", Value: 1}}); err != nil {
			t.Fatal(err)
		}
		err = iv.DropOne(ctx, "no_such_index")
		var ce *driver.CommandError
		if !errors.As(err, &ce) || ce.Code != 27 {
			t.Fatalf("dropping an index that does not exist: %v; want IndexNotFound (27)", err)
		}
		if err := iv.DropAll(ctx); err != nil {
			t.Fatal(err)
		}
		names, err = iv.ListNames(ctx)
		if err != nil || fmt.Sprint(names) != "[_id_]" {
			t.Fatalf("after DropAll: %v, %v", names, err)
		}
		return fmt.Sprintf("created %s %v; missing index: %d %s; left %v", name, many, ce.Code, ce.CodeName, names)
	}},
	{name: "CreateView and read through it", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		interopSeed(t, ctx, env.coll, 6)
		err := env.db.CreateView(ctx, "evens", env.coll.Name(), bson.A{
			bson.D{{Key: "$match", Value: bson.D{{Key: "tag", Value: "even"}}}},
			bson.D{{Key: "$project", Value: bson.D{{Key: "tag", Value: 0}}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		got := interopFindAll(t, ctx, env.db.Collection("evens"), bson.D{{Key: "qty", Value: bson.D{{Key: "$gt", Value: 20}}}}, &driver.FindOptions{Sort: bson.D{{Key: "_id", Value: -1}}})
		if fmt.Sprint(got) != "[{6 60 } {4 40 }]" {
			t.Fatalf("find on the view: %v", got)
		}
		specs, err := env.db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: "evens"}})
		if err != nil || len(specs) != 1 || specs[0].Type != "view" || !specs[0].ReadOnly {
			t.Fatalf("the view's specification: %+v, %v", specs, err)
		}
		_, err = env.db.Collection("evens").InsertOne(ctx, item{ID: 100})
		var ce *driver.CommandError
		if !errors.As(err, &ce) || ce.Code != 166 {
			t.Fatalf("an insert into the view: %v; want CommandNotSupportedOnView (166)", err)
		}
		return fmt.Sprintf("%v; insert: %d %s", got, ce.Code, ce.CodeName)
	}, ferretSkip: `FerretDB v1 has no views: server error 238 (NotImplemented): create: support for field "viewOn" with value items is not implemented yet`},
	{name: "validator refuses a document", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		err := env.db.CreateCollection(ctx, "checked", &driver.CreateCollectionOptions{
			Validator: bson.D{{Key: "qty", Value: bson.D{{Key: "$gte", Value: 0}}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		checked := env.db.Collection("checked")
		if _, err := checked.InsertOne(ctx, item{ID: 1, Qty: 5}); err != nil {
			t.Fatal(err)
		}
		_, err = checked.InsertOne(ctx, item{ID: 2, Qty: -5})
		var we *driver.WriteException
		if !errors.As(err, &we) || len(we.WriteErrors) != 1 || we.WriteErrors[0].Code != 121 || we.WriteErrors[0].Details == nil {
			t.Fatalf("an invalid document: %v; want DocumentValidationFailure (121) with errInfo", err)
		}
		if _, err := checked.InsertOne(ctx, item{ID: 3, Qty: -5}, &driver.InsertOneOptions{BypassDocumentValidation: driver.Ptr(true)}); err != nil {
			t.Fatalf("with BypassDocumentValidation: %v", err)
		}
		return fmt.Sprintf("write error %d", we.WriteErrors[0].Code)
	}, ferretSkip: `FerretDB v1 has no collection validators: server error 238 (NotImplemented): create: support for field "validator" ... is not implemented yet`},
	{name: "ModifyCollection sets a validator", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		interopSeed(t, ctx, env.coll, 2)
		err := env.db.ModifyCollection(ctx, env.coll.Name(), &driver.ModifyCollectionOptions{
			Validator: bson.D{{Key: "qty", Value: bson.D{{Key: "$gte", Value: 0}}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		_, err = env.coll.InsertOne(ctx, item{ID: 3, Qty: -1})
		var we *driver.WriteException
		if !errors.As(err, &we) || len(we.WriteErrors) != 1 || we.WriteErrors[0].Code != 121 {
			t.Fatalf("an insert the new validator refuses: %v; want DocumentValidationFailure (121)", err)
		}
		var ae *driver.ArgumentError
		if err := env.db.ModifyCollection(ctx, env.coll.Name(), nil); !errors.As(err, &ae) {
			t.Fatalf("ModifyCollection without settings: %v; want an ArgumentError", err)
		}
		return fmt.Sprintf("write error %d; %s", we.WriteErrors[0].Code, ae.Argument)
	}, ferretSkip: "FerretDB v1 has no collMod: server error 238 (NotImplemented): `collMod` command is not implemented yet"},
}

func TestInteropAdmin(t *testing.T) { runInteropFlows(t, interopAdminFlows) }
