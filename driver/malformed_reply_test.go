package driver_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
)

// TestMalformedReplies scripts mongotest to answer each command the CRUD
// API sends with a malformed reply (wrong types, missing fields, batch
// elements that are not documents, impossible counts, nested garbage),
// and checks that every public operation returns a *driver.ReplyError
// naming the field, without panicking or hanging, and leaves no
// connection checked out and no session taken, on a standalone server and
// behind a load balancer (where a cursor pins its connection).
func TestMalformedReplies(t *testing.T) {
	type reply = bson.D
	e := func(k string, v any) bson.E { return bson.E{Key: k, Value: v} }
	cursor := func(id int64, key string, batch any) reply {
		return reply{e("cursor", reply{e("id", id), e("ns", "shop.items"), e(key, batch)})}
	}
	doc := reply{e("_id", 1)}
	openFind := cursor(77, "firstBatch", bson.A{doc})
	writeErr := func(fields ...bson.E) reply { return reply{e("n", 0), e("writeErrors", bson.A{reply(fields)})} }

	type op = func(ctx context.Context, c *driver.Client) error
	coll := func(c *driver.Client) *driver.Collection { return c.Database("shop").Collection("items") }
	all := func(cur *driver.Cursor, err error) error {
		if err != nil {
			return err
		}
		// Bounded, so that a cursor the driver wrongly keeps open fails
		// the test rather than hanging it.
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_, err = driver.All[bson.Raw](ctx, cur)
		return err
	}
	find := func(ctx context.Context, c *driver.Client) error { return all(coll(c).Find(ctx, bson.D{})) }
	findOne := func(ctx context.Context, c *driver.Client) error { return coll(c).FindOne(ctx, bson.D{}).Err() }
	insertOne := func(ctx context.Context, c *driver.Client) error { _, err := coll(c).InsertOne(ctx, doc); return err }
	insertMany := func(ctx context.Context, c *driver.Client) error {
		_, err := coll(c).InsertMany(ctx, []any{reply{e("_id", 1)}, reply{e("_id", 2)}})
		return err
	}
	upd := reply{e("$set", reply{e("a", 1)})}
	updateOne := func(ctx context.Context, c *driver.Client) error {
		_, err := coll(c).UpdateOne(ctx, bson.D{}, upd)
		return err
	}
	updateMany := func(ctx context.Context, c *driver.Client) error {
		_, err := coll(c).UpdateMany(ctx, bson.D{}, upd)
		return err
	}
	replaceOne := func(ctx context.Context, c *driver.Client) error {
		_, err := coll(c).ReplaceOne(ctx, bson.D{}, doc)
		return err
	}
	deleteOne := func(ctx context.Context, c *driver.Client) error {
		_, err := coll(c).DeleteOne(ctx, bson.D{})
		return err
	}
	deleteMany := func(ctx context.Context, c *driver.Client) error {
		_, err := coll(c).DeleteMany(ctx, bson.D{})
		return err
	}
	bulk := func(models ...driver.WriteModel) op {
		return func(ctx context.Context, c *driver.Client) error {
			_, err := coll(c).BulkWrite(ctx, models)
			return err
		}
	}
	fou := func(ctx context.Context, c *driver.Client) error {
		return coll(c).FindOneAndUpdate(ctx, bson.D{}, upd).Err()
	}
	for_ := func(ctx context.Context, c *driver.Client) error {
		return coll(c).FindOneAndReplace(ctx, bson.D{}, doc).Err()
	}
	fod := func(ctx context.Context, c *driver.Client) error {
		return coll(c).FindOneAndDelete(ctx, bson.D{}).Err()
	}
	aggregate := func(ctx context.Context, c *driver.Client) error { return all(coll(c).Aggregate(ctx, bson.A{})) }
	dbAggregate := func(ctx context.Context, c *driver.Client) error {
		return all(c.Database("admin").Aggregate(ctx, bson.A{reply{e("$currentOp", reply{})}}))
	}
	runCursor := func(ctx context.Context, c *driver.Client) error {
		return all(c.Database("shop").RunCursorCommand(ctx, bson.D{{Key: "find", Value: "items"}}))
	}
	countDocs := func(ctx context.Context, c *driver.Client) error {
		_, err := coll(c).CountDocuments(ctx, bson.D{})
		return err
	}
	estimated := func(ctx context.Context, c *driver.Client) error {
		_, err := coll(c).EstimatedDocumentCount(ctx)
		return err
	}
	distinct := func(ctx context.Context, c *driver.Client) error { return coll(c).Distinct(ctx, "a", bson.D{}).Err() }
	listColls := func(ctx context.Context, c *driver.Client) error {
		return all(c.Database("shop").ListCollections(ctx, bson.D{}))
	}
	listCollNames := func(ctx context.Context, c *driver.Client) error {
		_, err := c.Database("shop").ListCollectionNames(ctx, bson.D{})
		return err
	}
	listCollSpecs := func(ctx context.Context, c *driver.Client) error {
		_, err := c.Database("shop").ListCollectionSpecifications(ctx, bson.D{})
		return err
	}
	listIndexes := func(ctx context.Context, c *driver.Client) error { return all(coll(c).Indexes().List(ctx)) }
	listIndexNames := func(ctx context.Context, c *driver.Client) error {
		_, err := coll(c).Indexes().ListNames(ctx)
		return err
	}
	listIndexSpecs := func(ctx context.Context, c *driver.Client) error {
		_, err := coll(c).Indexes().ListSpecifications(ctx)
		return err
	}
	listDBs := func(ctx context.Context, c *driver.Client) error {
		_, err := c.ListDatabases(ctx, bson.D{})
		return err
	}
	listDBNames := func(ctx context.Context, c *driver.Client) error {
		_, err := c.ListDatabaseNames(ctx, bson.D{})
		return err
	}
	createIndex := func(ctx context.Context, c *driver.Client) error {
		_, err := coll(c).Indexes().CreateOne(ctx, driver.IndexModel{Keys: reply{e("a", 1)}})
		return err
	}
	createIndexes := func(ctx context.Context, c *driver.Client) error {
		_, err := coll(c).Indexes().CreateMany(ctx, []driver.IndexModel{{Keys: reply{e("a", 1)}}, {Keys: reply{e("b", 1)}}})
		return err
	}

	tests := []struct {
		name    string
		replies map[string]reply // command -> reply (the server adds ok:1)
		run     op
		field   string // the ReplyError's Field
	}{
		// find and getMore
		{"find without cursor", map[string]reply{"find": {e("n", 1)}}, find, "cursor"},
		{"find cursor a string", map[string]reply{"find": {e("cursor", "x")}}, find, "cursor"},
		{"find cursor id a string", map[string]reply{"find": {e("cursor", reply{e("id", "77"), e("firstBatch", bson.A{})})}}, find, "cursor.id"},
		{"find cursor id missing", map[string]reply{"find": {e("cursor", reply{e("ns", "shop.items"), e("firstBatch", bson.A{})})}}, find, "cursor.id"},
		{"find ns not a namespace", map[string]reply{"find": {e("cursor", reply{e("id", int64(0)), e("ns", "items"), e("firstBatch", bson.A{})})}}, find, "cursor.ns"},
		{"find firstBatch a document", map[string]reply{"find": cursor(0, "firstBatch", doc)}, find, "cursor.firstBatch"},
		{"find batch element a number", map[string]reply{"find": cursor(0, "firstBatch", bson.A{doc, 42})}, find, "cursor.firstBatch.1"},
		{"find open cursor, batch element a string", map[string]reply{"find": cursor(77, "firstBatch", bson.A{"x"})}, find, "cursor.firstBatch.0"},
		{"findOne batch element null", map[string]reply{"find": cursor(0, "firstBatch", bson.A{nil})}, findOne, "cursor.firstBatch.0"},
		{"findOne firstBatch missing", map[string]reply{"find": cursor(0, "nextBatch", bson.A{doc})}, findOne, "cursor.firstBatch"},
		{"getMore nextBatch missing", map[string]reply{"find": openFind, "getMore": cursor(77, "firstBatch", bson.A{doc})}, find, "cursor.nextBatch"},
		{"getMore nextBatch element an array", map[string]reply{"find": openFind, "getMore": cursor(0, "nextBatch", bson.A{bson.A{1}})}, find, "cursor.nextBatch.0"},
		{"getMore another cursor id", map[string]reply{"find": openFind, "getMore": cursor(78, "nextBatch", bson.A{doc})}, find, "cursor.id"},
		{"getMore cursor id a double", map[string]reply{"find": openFind, "getMore": {e("cursor", reply{e("id", 0.5), e("nextBatch", bson.A{})})}}, find, "cursor.id"},
		{"getMore postBatchResumeToken a number", map[string]reply{"find": openFind,
			"getMore": {e("cursor", reply{e("id", int64(0)), e("nextBatch", bson.A{}), e("postBatchResumeToken", 3)})}}, find, "cursor.postBatchResumeToken"},

		// insert, update, delete and bulk writes
		{"insertOne n missing", map[string]reply{"insert": {}}, insertOne, "n"},
		{"insertOne n a string", map[string]reply{"insert": {e("n", "1")}}, insertOne, "n"},
		{"insertOne n negative", map[string]reply{"insert": {e("n", -1)}}, insertOne, "n"},
		{"insertOne n huge", map[string]reply{"insert": {e("n", int64(1)<<62)}}, insertOne, "n"},
		{"insertOne write error without code", map[string]reply{"insert": writeErr(e("index", 0), e("errmsg", "boom"))}, insertOne, "writeErrors.0.code"},
		{"insertOne write error without index", map[string]reply{"insert": writeErr(e("code", 11000))}, insertOne, "writeErrors.0.index"},
		{"insertOne writeErrors element a string", map[string]reply{"insert": {e("n", 0), e("writeErrors", bson.A{"dup"})}}, insertOne, "writeErrors.0"},
		{"insertMany write error index outside", map[string]reply{"insert": writeErr(e("index", 9), e("code", 11000))}, insertMany, "writeErrors.0.index"},
		{"insertMany write error index negative", map[string]reply{"insert": writeErr(e("index", -1), e("code", 11000))}, insertMany, "writeErrors.0.index"},
		{"insertMany n counts a refused document", map[string]reply{"insert": {e("n", 2), e("writeErrors", bson.A{reply{e("index", 1), e("code", 11000)}})}}, insertMany, "n"},
		{"insertMany writeConcernError without code", map[string]reply{"insert": {e("n", 2), e("writeConcernError", reply{e("errmsg", "x")})}}, insertMany, "writeConcernError.code"},
		{"insertMany errorLabels nested garbage", map[string]reply{"insert": {e("n", 2), e("errorLabels", bson.A{reply{e("a", bson.A{1})}})}}, insertMany, "errorLabels.0"},
		{"updateOne nModified a string", map[string]reply{"update": {e("n", 1), e("nModified", "1")}}, updateOne, "nModified"},
		{"updateOne upserted without _id", map[string]reply{"update": {e("n", 1), e("nModified", 0), e("upserted", bson.A{reply{e("index", 0)}})}}, updateOne, "upserted.0._id"},
		{"updateMany n a fraction", map[string]reply{"update": {e("n", 1.5), e("nModified", 1)}}, updateMany, "n"},
		{"updateMany more upserted than n", map[string]reply{"update": {e("n", 0), e("nModified", 0), e("upserted", bson.A{reply{e("index", 0), e("_id", 1)}})}}, updateMany, "n"},
		{"replaceOne nModified over n", map[string]reply{"update": {e("n", 1), e("nModified", 5)}}, replaceOne, "nModified"},
		{"deleteOne n a document", map[string]reply{"delete": {e("n", reply{e("n", 1)})}}, deleteOne, "n"},
		{"deleteMany writeErrors a number", map[string]reply{"delete": {e("n", 0), e("writeErrors", 3)}}, deleteMany, "writeErrors"},
		{"bulk insert n over sent", map[string]reply{"insert": {e("n", 5)}}, bulk(driver.InsertOneModel{Document: doc}), "n"},
		{"bulk update upserted index outside", map[string]reply{"update": {e("n", 1), e("nModified", 0), e("upserted", bson.A{reply{e("index", 3), e("_id", 1)}})}},
			bulk(driver.UpdateOneModel{Filter: bson.D{}, Update: upd, Upsert: driver.Ptr(true)}), "upserted.0.index"},
		{"bulk delete write error code a string", map[string]reply{"delete": writeErr(e("index", 0), e("code", "E11000"))},
			bulk(driver.DeleteOneModel{Filter: bson.D{}}, driver.DeleteManyModel{Filter: bson.D{}}), "writeErrors.0.code"},
		{"bulk second batch malformed", map[string]reply{"insert": {e("n", 1)}, "delete": {e("n", "x")}},
			bulk(driver.InsertOneModel{Document: doc}, driver.DeleteOneModel{Filter: bson.D{}}), "n"},

		// findAndModify
		{"findOneAndUpdate value missing", map[string]reply{"findAndModify": {e("lastErrorObject", reply{e("n", 0)})}}, fou, "value"},
		{"findOneAndUpdate value a string", map[string]reply{"findAndModify": {e("value", "doc")}}, fou, "value"},
		{"findOneAndReplace lastErrorObject an array", map[string]reply{"findAndModify": {e("lastErrorObject", bson.A{}), e("value", doc)}}, for_, "lastErrorObject"},
		{"findOneAndUpdate writeConcernError a string", map[string]reply{"findAndModify": {e("value", doc), e("writeConcernError", "timeout")}}, fou, "writeConcernError"},
		{"createIndexes writeConcernError an array", map[string]reply{"createIndexes": {e("numIndexesAfter", 2), e("writeConcernError", bson.A{64})}}, createIndex, "writeConcernError"},
		{"deleteMany writeConcernError a number", map[string]reply{"delete": {e("n", 1), e("writeConcernError", 64)}}, deleteMany, "writeConcernError"},
		{"findOneAndDelete lastErrorObject.n negative", map[string]reply{"findAndModify": {e("lastErrorObject", reply{e("n", -2)}), e("value", doc)}}, fod, "lastErrorObject.n"},

		// aggregate, count, distinct
		{"aggregate batch element a number", map[string]reply{"aggregate": cursor(0, "firstBatch", bson.A{1})}, aggregate, "cursor.firstBatch.0"},
		{"database aggregate cursor id missing", map[string]reply{"aggregate": {e("cursor", reply{e("firstBatch", bson.A{})})}}, dbAggregate, "cursor.id"},
		{"runCursorCommand ns a number", map[string]reply{"find": {e("cursor", reply{e("id", int64(0)), e("ns", 5), e("firstBatch", bson.A{})})}}, runCursor, "cursor.ns"},
		{"runCursorCommand getMore batch element a string", map[string]reply{"find": openFind, "getMore": cursor(0, "nextBatch", bson.A{doc, "x"})}, runCursor, "cursor.nextBatch.1"},
		{"countDocuments n missing", map[string]reply{"aggregate": cursor(0, "firstBatch", bson.A{reply{e("_id", 1)}})}, countDocs, "cursor.firstBatch.0.n"},
		{"countDocuments n negative", map[string]reply{"aggregate": cursor(0, "firstBatch", bson.A{reply{e("_id", 1), e("n", -4)}})}, countDocs, "cursor.firstBatch.0.n"},
		{"countDocuments batch element a string", map[string]reply{"aggregate": cursor(0, "firstBatch", bson.A{"n"})}, countDocs, "cursor.firstBatch.0"},
		{"estimatedDocumentCount n a string", map[string]reply{"count": {e("n", "10")}}, estimated, "n"},
		{"estimatedDocumentCount n negative", map[string]reply{"count": {e("n", int64(-1)<<40)}}, estimated, "n"},
		{"estimatedDocumentCount n missing", map[string]reply{"count": {}}, estimated, "n"},
		{"distinct values missing", map[string]reply{"distinct": {}}, distinct, "values"},
		{"distinct values a document", map[string]reply{"distinct": {e("values", reply{e("0", 1)})}}, distinct, "values"},

		// listCollections, listIndexes, listDatabases, createIndexes
		{"listCollections batch element a boolean", map[string]reply{"listCollections": cursor(0, "firstBatch", bson.A{true})}, listColls, "cursor.firstBatch.0"},
		{"listCollectionNames name missing", map[string]reply{"listCollections": cursor(0, "firstBatch", bson.A{reply{e("type", "collection")}})}, listCollNames, "collection 0: name"},
		{"listCollectionSpecifications info.uuid a string", map[string]reply{"listCollections": cursor(0, "firstBatch",
			bson.A{reply{e("name", "items"), e("type", "collection"), e("info", reply{e("uuid", "x")})}})}, listCollSpecs, "collection 0: info.uuid"},
		{"listCollectionSpecifications idIndex key missing", map[string]reply{"listCollections": cursor(0, "firstBatch",
			bson.A{reply{e("name", "items"), e("idIndex", reply{e("name", "_id_")})}})}, listCollSpecs, "collection 0: idIndex.key"},
		{"listIndexes cursor id a string", map[string]reply{"listIndexes": {e("cursor", reply{e("id", "0"), e("firstBatch", bson.A{})})}}, listIndexes, "cursor.id"},
		{"listIndexNames name a number", map[string]reply{"listIndexes": cursor(0, "firstBatch", bson.A{reply{e("name", 1), e("key", reply{e("a", 1)})}})}, listIndexNames, "index 0: name"},
		{"listIndexSpecifications key a string", map[string]reply{"listIndexes": cursor(0, "firstBatch", bson.A{reply{e("name", "a_1"), e("key", "a")}})}, listIndexSpecs, "index 0: key"},
		{"listDatabases databases missing", map[string]reply{"listDatabases": {e("totalSize", 0)}}, listDBs, "databases"},
		{"listDatabases sizeOnDisk negative", map[string]reply{"listDatabases": {e("databases", bson.A{reply{e("name", "a"), e("sizeOnDisk", -1)}})}}, listDBs, "databases.0.sizeOnDisk"},
		{"listDatabases totalSize a string", map[string]reply{"listDatabases": {e("databases", bson.A{}), e("totalSize", "big")}}, listDBs, "totalSize"},
		{"listDatabaseNames element a string", map[string]reply{"listDatabases": {e("databases", bson.A{"admin"})}}, listDBNames, "databases.0"},
		{"createIndexes numIndexesAfter negative", map[string]reply{"createIndexes": {e("numIndexesBefore", 1), e("numIndexesAfter", -1)}}, createIndex, "numIndexesAfter"},
		{"createIndexes note a document", map[string]reply{"createIndexes": {e("note", reply{e("x", bson.A{reply{}})})}}, createIndexes, "note"},
	}

	for _, dep := range []string{"standalone", "load balancer"} {
		t.Run(dep, func(t *testing.T) {
			var servers []*mongotest.Server
			var uri string
			if dep == "standalone" {
				srv := mongotest.NewServer(t, mongotest.Options{})
				servers, uri = []*mongotest.Server{srv}, srv.URI()
			} else {
				lb := mongotest.NewLoadBalancer(t, 1, mongotest.LoadBalancerOptions{})
				servers, uri = lb.Services(), lb.URI()
			}
			c := dial(t, uri, nil)
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					for name, r := range tc.replies {
						b, err := bson.Marshal(r)
						if err != nil {
							t.Fatal(err)
						}
						for _, s := range servers {
							s.Handle(name, func(context.Context, *mongotest.Server, *mongotest.Request) (bson.Raw, error) { return b, nil })
						}
					}
					defer func() {
						for name := range tc.replies {
							for _, s := range servers {
								s.Handle(name, nil)
							}
						}
					}()
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					defer cancel()
					start := time.Now()
					err := tc.run(ctx, c)
					if time.Since(start) > 4*time.Second {
						t.Errorf("the operation took %v", time.Since(start))
					}
					var re *driver.ReplyError
					if !errors.As(err, &re) {
						t.Fatalf("error %v (%T), want a *driver.ReplyError", err, err)
					}
					if re.Field != tc.field || re.Reason == "" {
						t.Errorf("ReplyError on %q (%s), want the field %q", re.Field, re.Reason, tc.field)
					}
					var oe *driver.OperationError
					if !errors.As(err, &oe) {
						t.Errorf("%v is not inside an *OperationError", err)
					}
					for _, s := range c.Topology().Servers {
						if s.Pool.InUse != 0 {
							t.Errorf("%s: %d connections still checked out", s.Address, s.Pool.InUse)
						}
					}
					if n := driver.SessionsInUse(c); n != 0 {
						t.Errorf("%d sessions still taken", n)
					}
				})
			}
		})
	}
}
