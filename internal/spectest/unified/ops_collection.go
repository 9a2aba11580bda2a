package unified

import (
	"context"
	"errors"
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
	register("collection", "findOneAndUpdate", collectionFindOneAndModify("findOneAndUpdate"))
	register("collection", "findOneAndReplace", collectionFindOneAndModify("findOneAndReplace"))
	register("collection", "findOneAndDelete", collectionFindOneAndModify("findOneAndDelete"))
}

// collectionFindOneAndModify reads the arguments of findOneAndUpdate,
// findOneAndReplace and findOneAndDelete, so a malformed one fails the
// test; the driver has no FindOneAnd* methods yet, so a well-formed one
// skips it.
func collectionFindOneAndModify(name string) opFunc {
	return func(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
		a := newArgs(args)
		a.doc("filter", true)
		switch name {
		case "findOneAndUpdate":
			if v := a.value("update"); v.Type != bson.TypeEmbeddedDocument && v.Type != bson.TypeArray {
				a.fail("update", "update is required: a document or a pipeline")
			}
			a.any("arrayFilters")
		case "findOneAndReplace":
			a.doc("replacement", true)
		}
		if name != "findOneAndDelete" {
			a.boolPtr("upsert")
			a.boolPtr("bypassDocumentValidation")
			switch rd := a.str("returnDocument", false); rd {
			case "", "Before", "After":
			default:
				a.fail("returnDocument", "returnDocument must be Before or After, got %q", rd)
			}
		}
		a.any("sort")
		a.any("projection")
		a.any("hint")
		a.any("collation")
		a.any("let")
		a.any("comment")
		a.int64Ptr("maxTimeMS")
		if err := a.done(); err != nil {
			return result{}, err
		}
		return result{}, skipf("operation %s not implemented", name)
	}
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
	o := &driver.InsertOneOptions{BypassDocumentValidation: a.boolPtr("bypassDocumentValidation"), Comment: a.any("comment")}
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
	o := &driver.InsertManyOptions{Ordered: a.boolPtr("ordered"), BypassDocumentValidation: a.boolPtr("bypassDocumentValidation"), Comment: a.any("comment")}
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
	o := &driver.FindOptions{
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
	o := &driver.FindOneOptions{
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
