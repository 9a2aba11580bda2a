package unified

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
)

// The operations of collection entities: each maps its arguments onto
// the driver's call and its result onto the document the CRUD
// specification's tests expect. The known operations without a driver
// method yet (knownOps in ops.go) skip their test with "operation X not
// implemented".

func init() {
	register("collection", "insertOne", collectionInsertOne)
	register("collection", "insertMany", collectionInsertMany)
	register("collection", "find", collectionFind)
	register("collection", "findOne", collectionFindOne)
	register("collection", "createFindCursor", collectionCreateFindCursor)
	register("collection", "findOneAndUpdate", collectionFindOneAndUpdate)
	register("collection", "findOneAndReplace", collectionFindOneAndReplace)
	register("collection", "findOneAndDelete", collectionFindOneAndDelete)
	register("collection", "updateOne", collectionUpdate("updateOne"))
	register("collection", "updateMany", collectionUpdate("updateMany"))
	register("collection", "replaceOne", collectionReplaceOne)
	register("collection", "deleteOne", collectionDelete("deleteOne"))
	register("collection", "deleteMany", collectionDelete("deleteMany"))
	register("collection", "aggregate", collectionAggregate)
	register("collection", "countDocuments", collectionCountDocuments)
	register("collection", "estimatedDocumentCount", collectionEstimatedDocumentCount)
	register("collection", "distinct", collectionDistinct)
	register("collection", "bulkWrite", collectionBulkWrite)
}

// docResult marshals a result document; a root-level document.
func docResult(d bson.D) (result, error) {
	b, err := bson.Marshal(d)
	if err != nil {
		return result{}, err
	}
	return result{v: docValue(b)}, nil
}

func collectionInsertOne(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	c := obj.(*collectionEntity)
	a := newArgs(args)
	doc := a.doc("document", true)
	o := &driver.InsertOneOptions{WriteConcern: a.writeConcern(), BypassDocumentValidation: a.boolPtr("bypassDocumentValidation"), Comment: a.any("comment")}
	if err := a.done(); err != nil {
		return result{}, err
	}
	res, err := c.coll.InsertOne(ctx, doc, o)
	if err != nil {
		return result{}, err
	}
	if !res.Acknowledged {
		return docResult(bson.D{{Key: "acknowledged", Value: false}})
	}
	return docResult(bson.D{{Key: "insertedId", Value: res.InsertedID}})
}

func collectionInsertMany(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	c := obj.(*collectionEntity)
	a := newArgs(args)
	var docs []any
	if v := a.value("documents"); v.Type != bson.TypeArray {
		a.fail("documents", "documents is required and must be an array")
	} else {
		vals, err := v.Array().Values()
		if err != nil {
			return result{}, invalid("arguments.documents", err, "malformed documents")
		}
		for _, d := range vals {
			docs = append(docs, d.Document())
		}
	}
	o := &driver.InsertManyOptions{WriteConcern: a.writeConcern(), Ordered: a.boolPtr("ordered"), BypassDocumentValidation: a.boolPtr("bypassDocumentValidation"), Comment: a.any("comment")}
	if err := a.done(); err != nil {
		return result{}, err
	}
	res, err := c.coll.InsertMany(ctx, docs, o)
	if err != nil {
		var bwe *driver.BulkWriteException
		if errors.As(err, &bwe) && bwe.PartialResult != nil {
			r, _ := bulkResultDoc(bwe.PartialResult)
			return r, err
		}
		return result{}, err
	}
	if !res.Acknowledged {
		return docResult(bson.D{{Key: "acknowledged", Value: false}})
	}
	ids := bson.D{}
	for i, id := range res.InsertedIDs {
		ids = append(ids, bson.E{Key: strconv.Itoa(i), Value: id})
	}
	return docResult(bson.D{{Key: "insertedIds", Value: ids}})
}

// bulkResultDoc is a BulkWriteResult as the CRUD tests spell it.
func bulkResultDoc(r *driver.BulkWriteResult) (result, error) {
	ids := func(m map[int]any) bson.D {
		d := bson.D{}
		for i := 0; len(d) < len(m); i++ {
			if id, ok := m[i]; ok {
				d = append(d, bson.E{Key: strconv.Itoa(i), Value: id})
			}
		}
		return d
	}
	return docResult(bson.D{
		{Key: "deletedCount", Value: r.DeletedCount},
		{Key: "insertedCount", Value: r.InsertedCount},
		{Key: "insertedIds", Value: ids(r.InsertedIDs)},
		{Key: "matchedCount", Value: r.MatchedCount},
		{Key: "modifiedCount", Value: r.ModifiedCount},
		{Key: "upsertedCount", Value: r.UpsertedCount},
		{Key: "upsertedIds", Value: ids(r.UpsertedIDs)},
	})
}

// findOptions reads find's options (also createFindCursor's).
func findOptions(a *argSet) *driver.FindOptions {
	o := &driver.FindOptions{ReadConcern: a.readConcern(), ReadPreference: a.readPreference(),
		Sort: a.any("sort"), Projection: a.any("projection"), Skip: a.int64Ptr("skip"), Limit: a.int64Ptr("limit"),
		BatchSize: a.int32Ptr("batchSize"), Hint: a.any("hint"), Collation: a.any("collation"), Let: a.any("let"),
		Comment: a.any("comment"), MaxTime: a.msPtr("maxTimeMS"), AllowDiskUse: a.boolPtr("allowDiskUse"),
		AllowPartialResults: a.boolPtr("allowPartialResults"), NoCursorTimeout: a.boolPtr("noCursorTimeout"),
		MaxAwaitTime: a.msPtr("maxAwaitTimeMS"), Min: a.any("min"), Max: a.any("max"), ReturnKey: a.boolPtr("returnKey"),
		ShowRecordID: a.boolPtr("showRecordId"),
	}
	switch s := a.str("cursorType", false); s {
	case "", "nonTailable":
	case "tailable":
		o.CursorType = driver.Tailable
	case "tailableAwait":
		o.CursorType = driver.TailableAwait
	default:
		a.fail("cursorType", "unknown cursorType %q", s)
	}
	a.skipArgs("the driver has no such find option", "singleBatch", "oplogReplay", "maxScan", "snapshot", "modifiers", "max_scan")
	return o
}

func collectionFind(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	c := obj.(*collectionEntity)
	a := newArgs(args)
	filter := a.doc("filter", true)
	o := findOptions(a)
	if err := a.done(); err != nil {
		return result{}, err
	}
	cur, err := c.coll.Find(ctx, filter, o)
	if err != nil {
		return result{}, err
	}
	return drain(ctx, cur)
}

// drain iterates a cursor to its end: the documents as an array of
// root-level documents, or the error that stopped it.
func drain(ctx context.Context, cur *driver.Cursor) (result, error) {
	defer cur.Close(ctx)
	arr := bson.A{}
	for cur.Next(ctx) {
		arr = append(arr, append(bson.Raw(nil), cur.Current...))
	}
	if err := cur.Err(); err != nil {
		return result{}, err
	}
	b, err := bson.Marshal(bson.D{{Key: "v", Value: arr}})
	if err != nil {
		return result{}, err
	}
	return result{v: bson.Raw(b).Lookup("v"), top: TopRootElements}, nil
}

func collectionFindOne(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	c := obj.(*collectionEntity)
	a := newArgs(args)
	filter := a.doc("filter", true)
	o := &driver.FindOneOptions{ReadConcern: a.readConcern(), ReadPreference: a.readPreference(),
		Sort: a.any("sort"), Projection: a.any("projection"), Skip: a.int64Ptr("skip"), Hint: a.any("hint"),
		Collation: a.any("collation"), Let: a.any("let"), Comment: a.any("comment"), MaxTime: a.msPtr("maxTimeMS"),
		AllowPartialResults: a.boolPtr("allowPartialResults"), Min: a.any("min"), Max: a.any("max"),
		ReturnKey: a.boolPtr("returnKey"), ShowRecordID: a.boolPtr("showRecordId"),
	}
	if err := a.done(); err != nil {
		return result{}, err
	}
	raw, err := c.coll.FindOne(ctx, filter, o).Raw()
	if errors.Is(err, driver.ErrNoDocuments) {
		return result{v: bson.RawValue{Type: bson.TypeNull}}, nil
	}
	if err != nil {
		return result{}, err
	}
	return result{v: docValue(raw)}, nil
}

func collectionCreateFindCursor(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	c := obj.(*collectionEntity)
	a := newArgs(args)
	filter := a.doc("filter", true)
	o := findOptions(a)
	if err := a.done(); err != nil {
		return result{}, err
	}
	cur, err := c.coll.Find(ctx, filter, o)
	if err != nil {
		return result{}, err
	}
	return result{entity: newCursorEntity(cur)}, nil
}

// newCursorEntity wraps a driver cursor for the cursor operations.
func newCursorEntity(cur *driver.Cursor) *cursorEntity {
	return &cursorEntity{
		next: func(ctx context.Context) (bson.Raw, error) {
			if cur.Next(ctx) {
				return append(bson.Raw(nil), cur.Current...), nil
			}
			return nil, cur.Err()
		},
		tryNext: func(ctx context.Context) (bson.Raw, bool, error) {
			if cur.TryNext(ctx) {
				return append(bson.Raw(nil), cur.Current...), true, nil
			}
			return nil, false, cur.Err()
		},
		close: cur.Close,
	}
}

// update reads an update argument: a document of operators or a
// pipeline (an array of stages).
func (a *argSet) update(key string) any {
	v := a.value(key)
	switch v.Type {
	case bson.TypeEmbeddedDocument, bson.TypeArray:
		return goValue(v)
	case 0:
		a.fail(key, "%s is required", key)
	default:
		a.fail(key, "%s must be a document or a pipeline, got %s", key, show(v))
	}
	return nil
}

// array reads an optional array argument as a slice.
func (a *argSet) array(key string) []any {
	v := a.value(key)
	if v.IsZero() {
		return nil
	}
	arr, ok := goValue(v).(bson.A)
	if !ok {
		a.fail(key, "%s must be an array", key)
		return nil
	}
	return []any(arr)
}

func (a *argSet) returnDocument() driver.ReturnDocument {
	switch rd := a.str("returnDocument", false); rd {
	case "", "Before":
		return driver.Before
	case "After":
		return driver.After
	default:
		a.fail("returnDocument", "returnDocument must be Before or After, got %q", rd)
	}
	return driver.Before
}

// singleResult turns a *SingleResult into the operation's result: the
// document, or null when nothing matched.
func singleResult(r *driver.SingleResult) (result, error) {
	raw, err := r.Raw()
	if errors.Is(err, driver.ErrNoDocuments) {
		return result{v: bson.RawValue{Type: bson.TypeNull}}, nil
	}
	if errors.Is(err, driver.ErrUnacknowledgedWrite) {
		// The write was sent with w: 0: it succeeded with no document to
		// return, which the tests spell {$$unsetOrMatches: null}.
		return result{}, nil
	}
	if err != nil {
		return result{}, err
	}
	return result{v: docValue(raw)}, nil
}

func collectionFindOneAndUpdate(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	c := obj.(*collectionEntity)
	a := newArgs(args)
	filter := a.doc("filter", true)
	update := a.update("update")
	o := &driver.FindOneAndUpdateOptions{WriteConcern: a.writeConcern(),
		ArrayFilters: a.array("arrayFilters"), BypassDocumentValidation: a.boolPtr("bypassDocumentValidation"),
		Collation: a.any("collation"), Hint: a.any("hint"), Let: a.any("let"), Comment: a.any("comment"),
		MaxTime: a.msPtr("maxTimeMS"), Projection: a.any("projection"), ReturnDocument: a.returnDocument(),
		Sort: a.any("sort"), Upsert: a.boolPtr("upsert"),
	}
	if err := a.done(); err != nil {
		return result{}, err
	}
	return singleResult(c.coll.FindOneAndUpdate(ctx, filter, update, o))
}

func collectionFindOneAndReplace(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	c := obj.(*collectionEntity)
	a := newArgs(args)
	filter := a.doc("filter", true)
	repl := a.doc("replacement", true)
	o := &driver.FindOneAndReplaceOptions{WriteConcern: a.writeConcern(),
		BypassDocumentValidation: a.boolPtr("bypassDocumentValidation"), Collation: a.any("collation"),
		Hint: a.any("hint"), Let: a.any("let"), Comment: a.any("comment"), MaxTime: a.msPtr("maxTimeMS"),
		Projection: a.any("projection"), ReturnDocument: a.returnDocument(), Sort: a.any("sort"), Upsert: a.boolPtr("upsert"),
	}
	if err := a.done(); err != nil {
		return result{}, err
	}
	return singleResult(c.coll.FindOneAndReplace(ctx, filter, repl, o))
}

func collectionFindOneAndDelete(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	c := obj.(*collectionEntity)
	a := newArgs(args)
	filter := a.doc("filter", true)
	o := &driver.FindOneAndDeleteOptions{WriteConcern: a.writeConcern(),
		Collation: a.any("collation"), Hint: a.any("hint"), Let: a.any("let"), Comment: a.any("comment"),
		MaxTime: a.msPtr("maxTimeMS"), Projection: a.any("projection"), Sort: a.any("sort"),
	}
	if err := a.done(); err != nil {
		return result{}, err
	}
	return singleResult(c.coll.FindOneAndDelete(ctx, filter, o))
}

// updateResultDoc is an UpdateResult as the CRUD tests spell it.
func updateResultDoc(r *driver.UpdateResult) (result, error) {
	if !r.Acknowledged {
		return docResult(bson.D{{Key: "acknowledged", Value: false}})
	}
	d := bson.D{{Key: "matchedCount", Value: r.MatchedCount}, {Key: "modifiedCount", Value: r.ModifiedCount}, {Key: "upsertedCount", Value: r.UpsertedCount}}
	if r.UpsertedID != nil {
		d = append(d, bson.E{Key: "upsertedId", Value: r.UpsertedID})
	}
	return docResult(d)
}

func collectionUpdate(name string) opFunc {
	return func(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
		c := obj.(*collectionEntity)
		a := newArgs(args)
		filter := a.doc("filter", true)
		update := a.update("update")
		o := &driver.UpdateOptions{WriteConcern: a.writeConcern(),
			ArrayFilters: a.array("arrayFilters"), BypassDocumentValidation: a.boolPtr("bypassDocumentValidation"),
			Collation: a.any("collation"), Hint: a.any("hint"), Upsert: a.boolPtr("upsert"), Let: a.any("let"),
			Comment: a.any("comment"), Sort: a.any("sort"),
		}
		if err := a.done(); err != nil {
			return result{}, err
		}
		var r *driver.UpdateResult
		var err error
		if name == "updateOne" {
			r, err = c.coll.UpdateOne(ctx, filter, update, o)
		} else {
			r, err = c.coll.UpdateMany(ctx, filter, update, o)
		}
		if err != nil {
			return result{}, err
		}
		return updateResultDoc(r)
	}
}

func collectionReplaceOne(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	c := obj.(*collectionEntity)
	a := newArgs(args)
	filter := a.doc("filter", true)
	repl := a.doc("replacement", true)
	o := &driver.ReplaceOptions{WriteConcern: a.writeConcern(),
		BypassDocumentValidation: a.boolPtr("bypassDocumentValidation"), Collation: a.any("collation"),
		Hint: a.any("hint"), Upsert: a.boolPtr("upsert"), Let: a.any("let"), Comment: a.any("comment"), Sort: a.any("sort"),
	}
	if err := a.done(); err != nil {
		return result{}, err
	}
	r, err := c.coll.ReplaceOne(ctx, filter, repl, o)
	if err != nil {
		return result{}, err
	}
	return updateResultDoc(r)
}

func collectionDelete(name string) opFunc {
	return func(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
		c := obj.(*collectionEntity)
		a := newArgs(args)
		filter := a.doc("filter", true)
		o := &driver.DeleteOptions{WriteConcern: a.writeConcern(), Collation: a.any("collation"), Hint: a.any("hint"), Let: a.any("let"), Comment: a.any("comment")}
		if err := a.done(); err != nil {
			return result{}, err
		}
		var r *driver.DeleteResult
		var err error
		if name == "deleteOne" {
			r, err = c.coll.DeleteOne(ctx, filter, o)
		} else {
			r, err = c.coll.DeleteMany(ctx, filter, o)
		}
		if err != nil {
			return result{}, err
		}
		if !r.Acknowledged {
			return docResult(bson.D{{Key: "acknowledged", Value: false}})
		}
		return docResult(bson.D{{Key: "deletedCount", Value: r.DeletedCount}})
	}
}

// aggregateOptions reads aggregate's options (collection and database).
func aggregateOptions(a *argSet) *driver.AggregateOptions {
	return &driver.AggregateOptions{ReadConcern: a.readConcern(), ReadPreference: a.readPreference(), WriteConcern: a.writeConcern(),
		AllowDiskUse: a.boolPtr("allowDiskUse"), BatchSize: a.int32Ptr("batchSize"),
		BypassDocumentValidation: a.boolPtr("bypassDocumentValidation"), Collation: a.any("collation"),
		MaxTime: a.msPtr("maxTimeMS"), MaxAwaitTime: a.msPtr("maxAwaitTimeMS"), Comment: a.any("comment"),
		Hint: a.any("hint"), Let: a.any("let"),
	}
}

// pipeline reads the pipeline argument, an array of stages.
func (a *argSet) pipeline() any {
	v := a.value("pipeline")
	if v.Type != bson.TypeArray {
		a.fail("pipeline", "pipeline is required and must be an array")
		return nil
	}
	return goValue(v)
}

func collectionAggregate(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	c := obj.(*collectionEntity)
	a := newArgs(args)
	p := a.pipeline()
	o := aggregateOptions(a)
	if err := a.done(); err != nil {
		return result{}, err
	}
	cur, err := c.coll.Aggregate(ctx, p, o)
	if err != nil {
		return result{}, err
	}
	return drain(ctx, cur)
}

// int64Result is a count as a result value.
func int64Result(n int64) result {
	b, _ := bson.Marshal(bson.D{{Key: "v", Value: n}})
	return result{v: bson.Raw(b).Lookup("v")}
}

func collectionCountDocuments(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	c := obj.(*collectionEntity)
	a := newArgs(args)
	filter := a.doc("filter", true)
	o := &driver.CountOptions{ReadConcern: a.readConcern(), ReadPreference: a.readPreference(),
		Collation: a.any("collation"), Hint: a.any("hint"), Limit: a.int64Ptr("limit"), Skip: a.int64Ptr("skip"),
		MaxTime: a.msPtr("maxTimeMS"), Comment: a.any("comment"),
	}
	if err := a.done(); err != nil {
		return result{}, err
	}
	n, err := c.coll.CountDocuments(ctx, filter, o)
	if err != nil {
		return result{}, err
	}
	return int64Result(n), nil
}

func collectionEstimatedDocumentCount(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	c := obj.(*collectionEntity)
	a := newArgs(args)
	o := &driver.EstimatedDocumentCountOptions{ReadConcern: a.readConcern(), ReadPreference: a.readPreference(), MaxTime: a.msPtr("maxTimeMS"), Comment: a.any("comment")}
	if err := a.done(); err != nil {
		return result{}, err
	}
	n, err := c.coll.EstimatedDocumentCount(ctx, o)
	if err != nil {
		return result{}, err
	}
	return int64Result(n), nil
}

func collectionDistinct(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	c := obj.(*collectionEntity)
	a := newArgs(args)
	field := a.str("fieldName", true)
	filter := a.doc("filter", true)
	o := &driver.DistinctOptions{ReadConcern: a.readConcern(), ReadPreference: a.readPreference(), Collation: a.any("collation"), MaxTime: a.msPtr("maxTimeMS"), Comment: a.any("comment"), Hint: a.any("hint")}
	if err := a.done(); err != nil {
		return result{}, err
	}
	raw, err := c.coll.Distinct(ctx, field, filter, o).Raw()
	if err != nil {
		return result{}, err
	}
	// The values are not root-level documents: extra fields in one are a
	// mismatch.
	return result{v: bson.RawValue{Type: bson.TypeArray, Value: raw}, top: TopNested}, nil
}

// writeModel reads one bulkWrite request, {<kind>: {arguments}}.
func writeModel(i int, v bson.RawValue) (driver.WriteModel, error) {
	path := "arguments.requests." + strconv.Itoa(i)
	d, ok := v.DocumentOK()
	if !ok {
		return nil, invalid(path, nil, "a request is a document")
	}
	elems, err := d.Elements()
	if err != nil || len(elems) != 1 {
		return nil, invalid(path, err, "a request has exactly one key, its kind")
	}
	kind := elems[0].Key()
	args, ok := elems[0].Value().DocumentOK()
	if !ok {
		return nil, invalid(path, nil, "%s is not a document", kind)
	}
	a := newArgs(args)
	var m driver.WriteModel
	switch kind {
	case "insertOne":
		m = &driver.InsertOneModel{Document: a.doc("document", true)}
	case "updateOne":
		m = &driver.UpdateOneModel{Filter: a.doc("filter", true), Update: a.update("update"), ArrayFilters: a.array("arrayFilters"),
			Collation: a.any("collation"), Hint: a.any("hint"), Upsert: a.boolPtr("upsert"), Sort: a.any("sort")}
	case "updateMany":
		m = &driver.UpdateManyModel{Filter: a.doc("filter", true), Update: a.update("update"), ArrayFilters: a.array("arrayFilters"),
			Collation: a.any("collation"), Hint: a.any("hint"), Upsert: a.boolPtr("upsert")}
	case "replaceOne":
		m = &driver.ReplaceOneModel{Filter: a.doc("filter", true), Replacement: a.doc("replacement", true),
			Collation: a.any("collation"), Hint: a.any("hint"), Upsert: a.boolPtr("upsert"), Sort: a.any("sort")}
	case "deleteOne":
		m = &driver.DeleteOneModel{Filter: a.doc("filter", true), Collation: a.any("collation"), Hint: a.any("hint")}
	case "deleteMany":
		m = &driver.DeleteManyModel{Filter: a.doc("filter", true), Collation: a.any("collation"), Hint: a.any("hint")}
	default:
		return nil, invalid(path, nil, "unknown request kind %q", kind)
	}
	if err := a.done(); err != nil {
		var ie *InvalidTestError
		if errors.As(err, &ie) {
			return nil, fmt.Errorf("%s.%s: %w", path, kind, err)
		}
		return nil, err
	}
	return m, nil
}

func collectionBulkWrite(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	c := obj.(*collectionEntity)
	a := newArgs(args)
	var models []driver.WriteModel
	if v := a.value("requests"); v.Type != bson.TypeArray {
		a.fail("requests", "requests is required and must be an array")
	} else {
		vals, err := v.Array().Values()
		if err != nil {
			return result{}, invalid("arguments.requests", err, "malformed requests")
		}
		for i, rv := range vals {
			m, err := writeModel(i, rv)
			if err != nil {
				return result{}, err
			}
			models = append(models, m)
		}
	}
	o := &driver.BulkWriteOptions{WriteConcern: a.writeConcern(), Ordered: a.boolPtr("ordered"), BypassDocumentValidation: a.boolPtr("bypassDocumentValidation"),
		Comment: a.any("comment"), Let: a.any("let")}
	if err := a.done(); err != nil {
		return result{}, err
	}
	r, err := c.coll.BulkWrite(ctx, models, o)
	if err != nil {
		var bwe *driver.BulkWriteException
		if errors.As(err, &bwe) && bwe.PartialResult != nil {
			res, _ := bulkResultDoc(bwe.PartialResult)
			return res, err
		}
		return result{}, err
	}
	if !r.Acknowledged {
		return docResult(bson.D{{Key: "acknowledged", Value: false}})
	}
	return bulkResultDoc(r)
}
