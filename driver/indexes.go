package driver

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/operation"
)

// IndexView manages a collection's indexes (the index-management
// specification's Index View API): createIndexes, listIndexes and
// dropIndexes.
type IndexView struct {
	coll *Collection
}

// Indexes returns the view of the collection's indexes.
func (coll *Collection) Indexes() IndexView { return IndexView{coll: coll} }

// IndexModel is one index to create.
type IndexModel struct {
	// Keys is the key pattern, an ordered document such as
	// bson.D{{"name", 1}, {"dob", -1}} or bson.D{{"loc", "2dsphere"}}. A
	// map with more than one key is refused (its order is random).
	Keys any
	// Options may be nil.
	Options *IndexOptions
}

// IndexOptions are an index's options. A nil field is left out of the
// index specification (the server's default applies).
type IndexOptions struct {
	// Name is the index's name; without one, the driver generates it
	// from the keys ("name_1_dob_-1").
	Name               *string
	Unique             *bool
	Sparse             *bool
	ExpireAfterSeconds *int32
	// PartialFilterExpression limits the index to the documents that
	// match it.
	PartialFilterExpression any
	Collation               any
	// Hidden keeps the index from the query planner (servers 4.4+).
	Hidden *bool
	// WildcardProjection picks the fields of a wildcard index.
	WildcardProjection any
	// Weights, DefaultLanguage, LanguageOverride and TextIndexVersion
	// are text index settings.
	Weights          any
	DefaultLanguage  *string
	LanguageOverride *string
	TextIndexVersion *int32
	// SphereVersion is a 2dsphere index's 2dsphereIndexVersion.
	SphereVersion *int32
	// Bits (1 to 32), Min and Max are 2d index settings.
	Bits     *int32
	Min, Max *float64
	// StorageEngine configures the storage engine for this index.
	StorageEngine any
	// Version is the index version (v).
	Version *int32
}

// CreateIndexesOptions are the options of CreateOne and CreateMany.
type CreateIndexesOptions struct {
	// CommitQuorum is how many data-bearing members must finish building
	// the indexes before the primary commits them: an integer, "majority",
	// "votingMembers" (the server's default) or a tag set name. Servers
	// before 4.4 misread it, so it is refused for them.
	CommitQuorum any
	// MaxTime bounds the command's run time on the server (maxTimeMS).
	MaxTime *time.Duration
	Comment any
}

// DropIndexesOptions are the options of DropOne, DropWithKey and DropAll.
type DropIndexesOptions struct {
	MaxTime *time.Duration
	Comment any
}

// ListIndexesOptions are the options of List and ListSpecifications.
type ListIndexesOptions struct {
	// BatchSize is the number of indexes per batch; must not be negative.
	BatchSize *int32
	// Comment is sent with listIndexes and with the cursor's getMores.
	Comment any
}

// IndexSpecification describes one index of a listIndexes reply.
type IndexSpecification struct {
	Name string
	// Namespace is "database.collection" (filled in by the driver, as
	// servers 4.4+ leave it out).
	Namespace    string
	KeysDocument bson.Raw
	Version      int32
	// The options below are nil when the index does not have them.
	ExpireAfterSeconds *int32
	Sparse             *bool
	Unique             *bool
	Hidden             *bool
	Clustered          *bool
	// Raw is the whole specification, with the options not lifted out.
	Raw bson.Raw
}

// indexSpecification decodes d, an index specification; ns fills in a
// missing namespace and path prefixes the fields in errors. The name and
// the key document are required. The options are taken as the server
// stored them: a boolean option may be a number (1), and an option of
// another type (a legacy index's string expireAfterSeconds) is left out
// rather than failing the whole listing.
func indexSpecification(d bson.Raw, ns, path string) (IndexSpecification, error) {
	d = append(bson.Raw(nil), d...)
	s := IndexSpecification{Namespace: ns, Raw: d}
	var ok bool
	if s.Name, ok = d.Lookup("name").StringValueOK(); !ok {
		return s, &ReplyError{Field: path + "name", Reason: "missing or not a string"}
	}
	if s.KeysDocument, ok = d.Lookup("key").DocumentOK(); !ok {
		return s, &ReplyError{Field: path + "key", Reason: "missing or not a document"}
	}
	if v, ok := d.Lookup("ns").StringValueOK(); ok {
		s.Namespace = v
	}
	if v, ok := d.Lookup("v").AsInt64OK(); ok {
		s.Version = int32(max(min(v, 1<<31-1), -1<<31))
	}
	if v, ok := d.Lookup("expireAfterSeconds").AsFloat64OK(); ok && v == v {
		s.ExpireAfterSeconds = Ptr(int32(max(min(v, 1<<31-1), -1<<31)))
	}
	for _, b := range []struct {
		key string
		dst **bool
	}{{"sparse", &s.Sparse}, {"unique", &s.Unique}, {"hidden", &s.Hidden}, {"clustered", &s.Clustered}} {
		v := d.Lookup(b.key)
		if t, ok := v.BooleanOK(); ok {
			*b.dst = Ptr(t)
		} else if f, ok := v.AsFloat64OK(); ok {
			*b.dst = Ptr(f != 0)
		}
	}
	return s, nil
}

// IndexName returns the name the driver gives an index with keys and no
// Name option: each key and its value joined with "_", as the
// index-management specification requires ({name: 1, dob: -1} is
// "name_1_dob_-1"). A value must be a number or a string ("2dsphere",
// "text", "hashed").
func IndexName(keys any) (string, error) {
	k, err := indexKeys("keys", keys)
	if err != nil {
		return "", err
	}
	return generateIndexName("keys", k)
}

// indexKeys encodes an index's key pattern.
func indexKeys(arg string, keys any) (bson.Raw, error) {
	if keys == nil {
		return nil, &ArgumentError{Argument: arg, Reason: "the index keys are nil"}
	}
	rv := reflect.ValueOf(keys)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	if rv.Kind() == reflect.Map && rv.Len() > 1 {
		return nil, &ArgumentError{Argument: arg, Reason: fmt.Sprintf("a %T has no key order; use a bson.D for an index on several keys", keys)}
	}
	k, err := marshalDoc(arg, keys)
	if err != nil {
		return nil, err
	}
	if len(k) <= 5 {
		return nil, &ArgumentError{Argument: arg, Reason: "the index keys document is empty"}
	}
	return k, nil
}

// generateIndexName implements IndexName on encoded keys
// (operation.IndexName); arg names the keys in errors.
func generateIndexName(arg string, keys bson.Raw) (string, error) {
	name, err := operation.IndexName(keys)
	if err != nil {
		if ke, ok := err.(*operation.IndexKeyError); ok {
			return "", &ArgumentError{Argument: arg + "." + ke.Key, Reason: ke.Error()}
		}
		return "", &ArgumentError{Argument: arg, Reason: err.Error(), Err: err}
	}
	return name, nil
}

// indexSpec encodes model as a createIndexes index specification, and
// returns the index's name.
func indexSpec(arg string, m IndexModel) (bson.Raw, string, error) {
	keys, err := indexKeys(arg+".Keys", m.Keys)
	if err != nil {
		return nil, "", err
	}
	o := m.Options
	if o == nil {
		o = &IndexOptions{}
	}
	oa := arg + ".Options."
	var name string
	if o.Name != nil {
		if name = *o.Name; name == "" {
			return nil, "", &ArgumentError{Argument: oa + "Name", Reason: "the index name is empty"}
		}
	} else if name, err = generateIndexName(arg+".Keys", keys); err != nil {
		return nil, "", err
	}
	if o.ExpireAfterSeconds != nil && *o.ExpireAfterSeconds < 0 {
		return nil, "", &ArgumentError{Argument: oa + "ExpireAfterSeconds", Reason: fmt.Sprintf("must not be negative, got %d", *o.ExpireAfterSeconds)}
	}
	if o.Bits != nil && (*o.Bits < 1 || *o.Bits > 32) {
		return nil, "", &ArgumentError{Argument: oa + "Bits", Reason: fmt.Sprintf("a 2d index's precision is from 1 to 32 bits, got %d", *o.Bits)}
	}
	var docs [5]bson.RawValue
	for i, x := range []struct {
		f string
		v any
	}{{"PartialFilterExpression", o.PartialFilterExpression}, {"Collation", o.Collation},
		{"WildcardProjection", o.WildcardProjection}, {"Weights", o.Weights}, {"StorageEngine", o.StorageEngine}} {
		if docs[i], err = marshalDocValue(oa+x.f, x.v); err != nil {
			return nil, "", err
		}
	}
	spec := operation.IndexSpec{Keys: keys, Name: name, Unique: o.Unique, Sparse: o.Sparse, ExpireAfterSeconds: o.ExpireAfterSeconds,
		PartialFilterExpression: docs[0], Collation: docs[1], Hidden: o.Hidden, WildcardProjection: docs[2], Weights: docs[3],
		DefaultLanguage: o.DefaultLanguage, LanguageOverride: o.LanguageOverride, TextIndexVersion: o.TextIndexVersion,
		SphereVersion: o.SphereVersion, Bits: o.Bits, Min: o.Min, Max: o.Max, StorageEngine: docs[4], Version: o.Version}
	return spec.Encode(), name, nil
}

// CreateOne creates one index and returns its name (the given or the
// generated one).
func (iv IndexView) CreateOne(ctx context.Context, model IndexModel, opts ...*CreateIndexesOptions) (string, error) {
	names, err := iv.create(ctx, []IndexModel{model}, "model", opts)
	if err != nil {
		return "", err
	}
	return names[0], nil
}

// CreateMany creates indexes in one createIndexes command and returns
// their names, in order. An index that already exists with the same
// options is not an error. An empty list is refused.
func (iv IndexView) CreateMany(ctx context.Context, models []IndexModel, opts ...*CreateIndexesOptions) ([]string, error) {
	if len(models) == 0 {
		return nil, &ArgumentError{Argument: "models", Reason: "CreateMany needs at least one index"}
	}
	return iv.create(ctx, models, "models", opts)
}

func (iv IndexView) create(ctx context.Context, models []IndexModel, arg string, opts []*CreateIndexesOptions) ([]string, error) {
	coll := iv.coll
	if err := coll.ready(); err != nil {
		return nil, err
	}
	specs := make([]bson.Raw, len(models))
	names := make([]string, len(models))
	for i, m := range models {
		a := arg
		if arg == "models" {
			a = indexArg(arg, i)
		}
		var err error
		if specs[i], names[i], err = indexSpec(a, m); err != nil {
			return nil, err
		}
	}
	o := mergeOpts(opts)
	cq, err := marshalValue("CreateIndexesOptions.CommitQuorum", o.CommitQuorum)
	if err != nil {
		return nil, err
	}
	switch cq.Type {
	case 0, bson.TypeInt32, bson.TypeInt64, bson.TypeString:
	default:
		return nil, &ArgumentError{Argument: "CreateIndexesOptions.CommitQuorum", Reason: fmt.Sprintf("the commit quorum is a %s: give an integer or a string", cq.Type)}
	}
	mt, err := maxTimeMS("CreateIndexesOptions.MaxTime", o.MaxTime)
	if err != nil {
		return nil, err
	}
	comment, err := marshalValue("CreateIndexesOptions.Comment", o.Comment)
	if err != nil {
		return nil, err
	}
	ci := operation.CreateIndexes{Collection: coll.name, Indexes: specs, CommitQuorum: cq, MaxTimeMS: mt, Comment: comment}
	op, err := coll.writeOp("createIndexes", ci.Command(), nil)
	if err != nil {
		return nil, err
	}
	if cq.Type != 0 {
		op.Check = func(l operation.ServerLimits) error {
			if err := operation.CheckCommitQuorum(l); err != nil {
				return &ArgumentError{Argument: "CreateIndexesOptions.CommitQuorum", Reason: err.Error()}
			}
			return nil
		}
	}
	res, err := coll.run(ctx, op)
	if err != nil {
		return nil, err
	}
	if err := checkCreateIndexesReply(res.Body); err != nil {
		return nil, &OperationError{Op: "createIndexes", Address: res.Address, Err: err}
	}
	return names, nil
}

// checkCreateIndexesReply checks a createIndexes reply
// (operation.CheckCreateIndexesReply); a garbled one is a *ReplyError.
func checkCreateIndexesReply(body bson.Raw) error {
	return publicError(operation.CheckCreateIndexesReply(body))
}

// DropOne drops the index called name. "*" (every index) is refused: use
// DropAll.
func (iv IndexView) DropOne(ctx context.Context, name string, opts ...*DropIndexesOptions) error {
	switch name {
	case "":
		return &ArgumentError{Argument: "name", Reason: "the index name is empty"}
	case "*":
		return &ArgumentError{Argument: "name", Reason: `"*" would drop every index; use DropAll`}
	}
	return iv.drop(ctx, operation.StringValue(name), opts)
}

// DropWithKey drops the index whose key pattern is keys.
func (iv IndexView) DropWithKey(ctx context.Context, keys any, opts ...*DropIndexesOptions) error {
	k, err := indexKeys("keys", keys)
	if err != nil {
		return err
	}
	return iv.drop(ctx, bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: k}, opts)
}

// DropAll drops every index of the collection but the _id index.
func (iv IndexView) DropAll(ctx context.Context, opts ...*DropIndexesOptions) error {
	return iv.drop(ctx, operation.StringValue("*"), opts)
}

func (iv IndexView) drop(ctx context.Context, index bson.RawValue, opts []*DropIndexesOptions) error {
	coll := iv.coll
	if err := coll.ready(); err != nil {
		return err
	}
	o := mergeOpts(opts)
	mt, err := maxTimeMS("DropIndexesOptions.MaxTime", o.MaxTime)
	if err != nil {
		return err
	}
	comment, err := marshalValue("DropIndexesOptions.Comment", o.Comment)
	if err != nil {
		return err
	}
	d := operation.DropIndexes{Collection: coll.name, Index: index, MaxTimeMS: mt, Comment: comment}
	op, err := coll.writeOp("dropIndexes", d.Command(), nil)
	if err != nil {
		return err
	}
	_, err = coll.run(ctx, op)
	return err
}

// List returns a cursor over the collection's index specifications, as
// the server gives them (servers 4.4+ leave out "ns"). It runs on the
// primary of a replica set.
func (iv IndexView) List(ctx context.Context, opts ...*ListIndexesOptions) (*Cursor, error) {
	coll := iv.coll
	if err := coll.ready(); err != nil {
		return nil, err
	}
	o := mergeOpts(opts)
	if o.BatchSize != nil && *o.BatchSize < 0 {
		return nil, &ArgumentError{Argument: "ListIndexesOptions.BatchSize", Reason: fmt.Sprintf("the batch size must not be negative, got %d", *o.BatchSize)}
	}
	comment, err := marshalValue("ListIndexesOptions.Comment", o.Comment)
	if err != nil {
		return nil, err
	}
	l := operation.ListIndexes{Collection: coll.name, BatchSize: o.BatchSize, Comment: comment}
	op := &operation.Op{Name: "listIndexes", DB: coll.db.name, Collection: coll.name, Command: l.Command(), Selector: primaryRead, Cursor: true, Retry: operation.RetryRead}
	res, err := coll.run(ctx, op)
	if err != nil {
		return nil, err
	}
	return coll.cursor(res, l.CursorOptions())
}

// ListSpecifications returns the collection's indexes, decoded.
func (iv IndexView) ListSpecifications(ctx context.Context, opts ...*ListIndexesOptions) ([]IndexSpecification, error) {
	cur, err := iv.List(ctx, opts...)
	if err != nil {
		return nil, err
	}
	defer cur.Close(ctx)
	specs := []IndexSpecification{}
	for i := 0; cur.Next(ctx); i++ {
		s, err := indexSpecification(cur.Current, iv.coll.Namespace(), fmt.Sprintf("index %d: ", i))
		if err != nil {
			return nil, malformed("listIndexes", "", err)
		}
		specs = append(specs, s)
	}
	return specs, cur.Err()
}

// ListNames returns the names of the collection's indexes.
func (iv IndexView) ListNames(ctx context.Context, opts ...*ListIndexesOptions) ([]string, error) {
	cur, err := iv.List(ctx, opts...)
	if err != nil {
		return nil, err
	}
	defer cur.Close(ctx)
	names := []string{}
	for i := 0; cur.Next(ctx); i++ {
		name, ok := cur.Current.Lookup("name").StringValueOK()
		if !ok {
			return nil, malformed("listIndexes", "", &ReplyError{Field: fmt.Sprintf("index %d: name", i), Reason: "missing or not a string"})
		}
		names = append(names, name)
	}
	return names, cur.Err()
}
