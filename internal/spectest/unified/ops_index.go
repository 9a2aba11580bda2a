package unified

import (
	"context"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
)

// The index operations of collection entities: the Index View API and
// the search index API of the index-management specification, and drop.

func init() {
	register("collection", "drop", collectionDrop)
	register("collection", "createIndex", collectionCreateIndex)
	register("collection", "dropIndex", collectionDropIndex)
	register("collection", "dropIndexes", collectionDropIndexes)
	register("collection", "listIndexes", collectionListIndexes)
	register("collection", "listIndexNames", collectionListIndexNames)
	register("collection", "createSearchIndex", collectionCreateSearchIndexes(false))
	register("collection", "createSearchIndexes", collectionCreateSearchIndexes(true))
	register("collection", "dropSearchIndex", collectionDropSearchIndex)
	register("collection", "updateSearchIndex", collectionUpdateSearchIndex)
	register("collection", "listSearchIndexes", collectionListSearchIndexes)
}

func collectionDrop(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	c := obj.(*collectionEntity)
	a := newArgs(args)
	a.skipArgs("the driver has no client-side encryption (encryptedFields)", "encryptedFields")
	if err := a.done(); err != nil {
		return result{}, err
	}
	return result{}, c.coll.Drop(ctx)
}

// indexOptionsOf reads the index options given beside the keys.
func indexOptionsOf(a *argSet) *driver.IndexOptions {
	o := &driver.IndexOptions{
		Unique: a.boolPtr("unique"), Sparse: a.boolPtr("sparse"), ExpireAfterSeconds: a.int32Ptr("expireAfterSeconds"),
		PartialFilterExpression: a.any("partialFilterExpression"), Collation: a.any("collation"), Hidden: a.boolPtr("hidden"),
		WildcardProjection: a.any("wildcardProjection"), Weights: a.any("weights"), TextIndexVersion: a.int32Ptr("textIndexVersion"),
		SphereVersion: a.int32Ptr("2dsphereIndexVersion"), Bits: a.int32Ptr("bits"), StorageEngine: a.any("storageEngine"),
		Version: a.int32Ptr("version"),
	}
	if s := a.str("name", false); s != "" {
		o.Name = &s
	}
	if s := a.str("default_language", false); s != "" {
		o.DefaultLanguage = &s
	}
	if s := a.str("language_override", false); s != "" {
		o.LanguageOverride = &s
	}
	for _, k := range []string{"min", "max"} {
		v := a.value(k)
		if v.IsZero() {
			continue
		}
		f, ok := v.AsFloat64OK()
		if !ok {
			a.fail(k, "%s must be a number", k)
			continue
		}
		if k == "min" {
			o.Min = &f
		} else {
			o.Max = &f
		}
	}
	return o
}

func collectionCreateIndex(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	c := obj.(*collectionEntity)
	a := newArgs(args)
	keys := a.doc("keys", true)
	io := indexOptionsOf(a)
	o := &driver.CreateIndexesOptions{CommitQuorum: a.any("commitQuorum"), MaxTime: a.msPtr("maxTimeMS"), Comment: a.any("comment")}
	if err := a.done(); err != nil {
		return result{}, err
	}
	name, err := c.coll.Indexes().CreateOne(ctx, driver.IndexModel{Keys: keys, Options: io}, o)
	if err != nil {
		return result{}, err
	}
	b, _ := bson.Marshal(bson.D{{Key: "v", Value: name}})
	return result{v: bson.Raw(b).Lookup("v")}, nil
}

func collectionDropIndex(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	c := obj.(*collectionEntity)
	a := newArgs(args)
	name := a.str("name", true)
	o := &driver.DropIndexesOptions{MaxTime: a.msPtr("maxTimeMS"), Comment: a.any("comment")}
	if err := a.done(); err != nil {
		return result{}, err
	}
	return result{}, c.coll.Indexes().DropOne(ctx, name, o)
}

func collectionDropIndexes(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	c := obj.(*collectionEntity)
	a := newArgs(args)
	o := &driver.DropIndexesOptions{MaxTime: a.msPtr("maxTimeMS"), Comment: a.any("comment")}
	if err := a.done(); err != nil {
		return result{}, err
	}
	return result{}, c.coll.Indexes().DropAll(ctx, o)
}

func collectionListIndexes(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	c := obj.(*collectionEntity)
	a := newArgs(args)
	o := &driver.ListIndexesOptions{BatchSize: a.int32Ptr("batchSize"), Comment: a.any("comment")}
	if err := a.done(); err != nil {
		return result{}, err
	}
	cur, err := c.coll.Indexes().List(ctx, o)
	if err != nil {
		return result{}, err
	}
	return drain(ctx, cur)
}

func collectionListIndexNames(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	c := obj.(*collectionEntity)
	a := newArgs(args)
	o := &driver.ListIndexesOptions{BatchSize: a.int32Ptr("batchSize"), Comment: a.any("comment")}
	if err := a.done(); err != nil {
		return result{}, err
	}
	names, err := c.coll.Indexes().ListNames(ctx, o)
	if err != nil {
		return result{}, err
	}
	arr := bson.A{}
	for _, n := range names {
		arr = append(arr, n)
	}
	return arrayResult(arr, TopNested)
}

// searchIndexModel reads one {definition, name?, type?} model.
func searchIndexModel(a *argSet, d bson.Raw) driver.SearchIndexModel {
	m := newArgs(d)
	model := driver.SearchIndexModel{Definition: m.doc("definition", true), Options: &driver.SearchIndexOptions{}}
	if s := m.str("name", false); s != "" {
		model.Options.Name = &s
	}
	if s := m.str("type", false); s != "" {
		model.Options.Type = &s
	}
	a.setErr(m.done())
	return model
}

func collectionCreateSearchIndexes(many bool) opFunc {
	return func(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
		c := obj.(*collectionEntity)
		a := newArgs(args)
		var models []driver.SearchIndexModel
		if many {
			for _, v := range a.array("models") {
				d, ok := v.(bson.Raw)
				if !ok {
					a.fail("models", "each model must be a document")
					continue
				}
				models = append(models, searchIndexModel(a, d))
			}
		} else if d := a.doc("model", true); d != nil {
			models = append(models, searchIndexModel(a, d))
		}
		if err := a.done(); err != nil {
			return result{}, err
		}
		var names []string
		var err error
		if many {
			names, err = c.coll.SearchIndexes().CreateMany(ctx, models)
		} else {
			var name string
			name, err = c.coll.SearchIndexes().CreateOne(ctx, models[0])
			names = []string{name}
		}
		if err != nil {
			return result{}, err
		}
		if !many {
			b, _ := bson.Marshal(bson.D{{Key: "v", Value: names[0]}})
			return result{v: bson.Raw(b).Lookup("v")}, nil
		}
		arr := bson.A{}
		for _, n := range names {
			arr = append(arr, n)
		}
		return arrayResult(arr, TopNested)
	}
}

func collectionDropSearchIndex(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	c := obj.(*collectionEntity)
	a := newArgs(args)
	name := a.str("name", true)
	if err := a.done(); err != nil {
		return result{}, err
	}
	return result{}, c.coll.SearchIndexes().DropOne(ctx, name)
}

func collectionUpdateSearchIndex(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	c := obj.(*collectionEntity)
	a := newArgs(args)
	name := a.str("name", true)
	def := a.doc("definition", true)
	if err := a.done(); err != nil {
		return result{}, err
	}
	return result{}, c.coll.SearchIndexes().UpdateOne(ctx, name, def)
}

func collectionListSearchIndexes(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	c := obj.(*collectionEntity)
	a := newArgs(args)
	so := &driver.ListSearchIndexesOptions{}
	if s := a.str("name", false); s != "" {
		so.Name = &s
	}
	var ao *driver.AggregateOptions
	if d := a.doc("aggregationOptions", false); d != nil {
		agg := newArgs(d)
		ao = aggregateOptions(agg)
		a.setErr(agg.done())
	}
	if err := a.done(); err != nil {
		return result{}, err
	}
	var opts []*driver.AggregateOptions
	if ao != nil {
		opts = append(opts, ao)
	}
	cur, err := c.coll.SearchIndexes().List(ctx, so, opts...)
	if err != nil {
		return result{}, err
	}
	return drain(ctx, cur)
}
