package unified

import (
	"context"
	"errors"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
)

// The operations of database entities.

func init() {
	register("database", "runCommand", databaseRunCommand)
	register("database", "aggregate", databaseAggregate)
	register("database", "runCursorCommand", databaseCursorCommand(false))
	register("database", "createCommandCursor", databaseCursorCommand(true))
	register("database", "createCollection", databaseCreateCollection)
	register("database", "dropCollection", databaseDropCollection)
	register("database", "listCollections", databaseListCollections)
	register("database", "listCollectionNames", databaseListCollectionNames)
	register("database", "listCollectionObjects", databaseListCollectionObjects)
	register("database", "dropDatabase", databaseDrop)
	register("database", "modifyCollection", databaseModifyCollection)
}

func databaseCreateCollection(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	db := obj.(*databaseEntity)
	a := newArgs(args)
	name := a.str("collection", true)
	o := &driver.CreateCollectionOptions{
		Capped: a.boolPtr("capped"), SizeInBytes: a.int64Ptr("size"), MaxDocuments: a.int64Ptr("max"),
		Validator: a.any("validator"), Collation: a.any("collation"), ClusteredIndex: a.any("clusteredIndex"),
		ExpireAfterSeconds: a.int64Ptr("expireAfterSeconds"), ChangeStreamPreAndPostImages: a.any("changeStreamPreAndPostImages"),
		StorageEngine: a.any("storageEngine"), IndexOptionDefaults: a.any("indexOptionDefaults"), Pipeline: a.any("pipeline"),
		Comment: a.any("comment"),
	}
	if s := a.str("validationLevel", false); s != "" {
		o.ValidationLevel = &s
	}
	if s := a.str("validationAction", false); s != "" {
		o.ValidationAction = &s
	}
	if s := a.str("viewOn", false); s != "" {
		o.ViewOn = &s
	}
	if ts := a.doc("timeseries", false); ts != nil {
		o.TimeSeries = timeSeriesOf(a, ts)
	}
	a.skipArgs("the driver has no client-side encryption (encryptedFields)", "encryptedFields")
	if err := a.done(); err != nil {
		return result{}, err
	}
	if err := db.db.CreateCollection(ctx, name, o); err != nil {
		return result{}, err
	}
	// createCollection returns the collection, which saveResultAsEntity
	// keeps as a collection entity.
	return result{entity: &collectionEntity{db: db, name: name, coll: db.db.Collection(name)}}, nil
}

func timeSeriesOf(a *argSet, ts bson.Raw) *driver.TimeSeriesOptions {
	t := newArgs(ts)
	o := &driver.TimeSeriesOptions{TimeField: t.str("timeField", true)}
	if s := t.str("metaField", false); s != "" {
		o.MetaField = &s
	}
	if s := t.str("granularity", false); s != "" {
		o.Granularity = &s
	}
	if n := t.int64Ptr("bucketMaxSpanSeconds"); n != nil {
		d := time.Duration(*n) * time.Second
		o.BucketMaxSpan = &d
	}
	if n := t.int64Ptr("bucketRoundingSeconds"); n != nil {
		d := time.Duration(*n) * time.Second
		o.BucketRounding = &d
	}
	a.setErr(t.done())
	return o
}

func databaseDropCollection(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	db := obj.(*databaseEntity)
	a := newArgs(args)
	name := a.str("collection", true)
	a.skipArgs("the driver has no client-side encryption (encryptedFields)", "encryptedFields")
	if err := a.done(); err != nil {
		return result{}, err
	}
	return result{}, db.db.Collection(name).Drop(ctx)
}

// databaseModifyCollection runs Database.ModifyCollection (collMod).
func databaseModifyCollection(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	db := obj.(*databaseEntity)
	a := newArgs(args)
	name := a.str("collection", true)
	o := &driver.ModifyCollectionOptions{ExpireAfterSeconds: a.int64Ptr("expireAfterSeconds"), Comment: a.any("comment")}
	if v := a.doc("validator", false); v != nil {
		o.Validator = v
	}
	if v := a.doc("changeStreamPreAndPostImages", false); v != nil {
		o.ChangeStreamPreAndPostImages = v
	}
	if a.has("validationLevel") {
		s := a.str("validationLevel", true)
		o.ValidationLevel = &s
	}
	if a.has("validationAction") {
		s := a.str("validationAction", true)
		o.ValidationAction = &s
	}
	if err := a.done(); err != nil {
		return result{}, err
	}
	return result{}, db.db.ModifyCollection(ctx, name, o)
}

func listCollectionsOptions(a *argSet) *driver.ListCollectionsOptions {
	return &driver.ListCollectionsOptions{BatchSize: a.int32Ptr("batchSize"), NameOnly: a.boolPtr("nameOnly"),
		AuthorizedCollections: a.boolPtr("authorizedCollections"), Comment: a.any("comment")}
}

func databaseListCollections(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	db := obj.(*databaseEntity)
	filter, o, err := listCollectionsArgs(args)
	if err != nil {
		return result{}, err
	}
	cur, err := db.db.ListCollections(ctx, filter, o)
	if err != nil {
		return result{}, err
	}
	return drain(ctx, cur)
}

func databaseListCollectionNames(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	db := obj.(*databaseEntity)
	filter, o, err := listCollectionsArgs(args)
	if err != nil {
		return result{}, err
	}
	names, err := db.db.ListCollectionNames(ctx, filter, o)
	if err != nil {
		return result{}, err
	}
	arr := bson.A{}
	for _, n := range names {
		arr = append(arr, n)
	}
	return arrayResult(arr, TopNested)
}

func databaseDrop(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	db := obj.(*databaseEntity)
	if err := newArgs(args).done(); err != nil {
		return result{}, err
	}
	return result{}, db.db.Drop(ctx)
}

// databaseRunCommand is the generic command runner, Database.RunCommand.
// It inherits no read preference (the server selection specification's
// rule for runCommand); one may be given.
func databaseRunCommand(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	db := obj.(*databaseEntity)
	a := newArgs(args)
	cmd := a.doc("command", true)
	name := a.str("commandName", true)
	if cmd != nil && name != "" && firstKey(cmd) != name {
		a.fail("commandName", "commandName %q is not the command's first key %q", name, firstKey(cmd))
	}
	var opts []*driver.RunCommandOptions
	if v := a.value("readPreference"); !v.IsZero() {
		o, err := runCommandReadPref(v)
		if err != nil {
			return result{}, err
		}
		opts = append(opts, o)
	}
	if err := a.done(); err != nil {
		return result{}, err
	}
	reply, err := db.db.RunCommand(ctx, cmd, opts...).Raw()
	var ce *driver.CommandError
	if err != nil && errors.As(err, &ce) {
		return result{v: docValue(ce.Raw)}, err
	}
	return result{v: docValue(reply)}, err
}

func databaseAggregate(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	db := obj.(*databaseEntity)
	a := newArgs(args)
	p := a.pipeline()
	o := aggregateOptions(a)
	if err := a.done(); err != nil {
		return result{}, err
	}
	cur, err := db.db.Aggregate(ctx, p, o)
	if err != nil {
		return result{}, err
	}
	return drain(ctx, cur)
}

// databaseCursorCommand is runCursorCommand (iterated to the end) or
// createCommandCursor (saved as a cursor entity).
func databaseCursorCommand(keep bool) opFunc {
	return func(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
		db := obj.(*databaseEntity)
		a := newArgs(args)
		cmd := a.doc("command", true)
		// createCommandCursor's commandName may be left out (the CSOT
		// runCursorCommand.json does): the command's first key names it.
		name := a.str("commandName", !keep)
		if cmd != nil && name != "" && firstKey(cmd) != name {
			a.fail("commandName", "commandName %q is not the command's first key %q", name, firstKey(cmd))
		}
		o := &driver.RunCursorCommandOptions{BatchSize: a.int32Ptr("batchSize"), MaxAwaitTime: a.msPtr("maxTimeMS"), Comment: a.any("comment")}
		if v := a.value("readPreference"); !v.IsZero() {
			rp, err := runCommandReadPref(v)
			if err != nil {
				return result{}, err
			}
			o.ReadPreference, o.ReadPreferenceTags, o.MaxStaleness = rp.ReadPreference, rp.ReadPreferenceTags, rp.MaxStaleness
		}
		switch ct := a.str("cursorType", false); ct {
		case "", "nonTailable":
		case "tailable":
			o.CursorType = driver.Tailable
		case "tailableAwait":
			o.CursorType = driver.TailableAwait
		default:
			a.fail("cursorType", "unknown cursorType %q", ct)
		}
		if err := a.done(); err != nil {
			return result{}, err
		}
		cur, err := db.db.RunCursorCommand(ctx, cmd, o)
		if err != nil {
			return result{}, err
		}
		if keep {
			return result{entity: newCursorEntity(cur)}, nil
		}
		return drain(ctx, cur)
	}
}

// runCommandReadPref reads a readPreference argument (Common Options).
func runCommandReadPref(v bson.RawValue) (*driver.RunCommandOptions, error) {
	d, ok := v.DocumentOK()
	if !ok {
		return nil, invalid("arguments.readPreference", nil, "readPreference must be a document")
	}
	if err := checkKeys(d, "mode", "tagSets", "maxStalenessSeconds", "hedge"); err != nil {
		return nil, invalid("arguments.readPreference", err, "malformed readPreference")
	}
	if !d.Lookup("hedge").IsZero() {
		return nil, skipf("readPreference.hedge: the driver does not support hedged reads (removed from the server in 8.0)")
	}
	mode, ok := d.Lookup("mode").StringValueOK()
	if !ok {
		return nil, invalid("arguments.readPreference.mode", nil, "mode is required")
	}
	o := &driver.RunCommandOptions{ReadPreference: mode}
	if arr, ok := d.Lookup("tagSets").ArrayOK(); ok {
		vals, err := arr.Values()
		if err != nil {
			return nil, err
		}
		for _, ts := range vals {
			tags := map[string]string{}
			elems, _ := ts.Document().Elements()
			for _, e := range elems {
				tags[e.Key()] = e.Value().StringValue()
			}
			o.ReadPreferenceTags = append(o.ReadPreferenceTags, tags)
		}
	}
	if n, ok := d.Lookup("maxStalenessSeconds").AsInt64OK(); ok {
		o.MaxStaleness = driver.Ptr(time.Duration(n) * time.Second)
	}
	return o, nil
}

// databaseListCollectionObjects runs ListCollectionSpecifications, the
// driver's listCollections returning objects; its result is each
// specification's name and type.
func databaseListCollectionObjects(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	db := obj.(*databaseEntity)
	filter, o, err := listCollectionsArgs(args)
	if err != nil {
		return result{}, err
	}
	specs, err := db.db.ListCollectionSpecifications(ctx, filter, o)
	if err != nil {
		return result{}, err
	}
	arr := bson.A{}
	for _, s := range specs {
		arr = append(arr, bson.D{{Key: "name", Value: s.Name}, {Key: "type", Value: s.Type}})
	}
	return arrayResult(arr, TopRootElements)
}

// listCollectionsArgs reads listCollections' filter (an empty document
// when absent) and options.
func listCollectionsArgs(args bson.Raw) (bson.Raw, *driver.ListCollectionsOptions, error) {
	a := newArgs(args)
	filter := a.doc("filter", false)
	o := listCollectionsOptions(a)
	if err := a.done(); err != nil {
		return nil, nil, err
	}
	if filter == nil {
		filter = bson.Raw{5, 0, 0, 0, 0}
	}
	return filter, o, nil
}
