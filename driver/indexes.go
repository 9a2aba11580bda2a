package driver

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
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

// generateIndexName implements IndexName on encoded keys.
func generateIndexName(arg string, keys bson.Raw) (string, error) {
	var b strings.Builder
	it := keys.Iter()
	for it.Next() {
		if b.Len() > 0 {
			b.WriteByte('_')
		}
		b.WriteString(it.Key())
		b.WriteByte('_')
		v := it.Value()
		switch v.Type {
		case bson.TypeInt32:
			b.WriteString(strconv.FormatInt(int64(v.Int32()), 10))
		case bson.TypeInt64:
			b.WriteString(strconv.FormatInt(v.Int64(), 10))
		case bson.TypeDouble:
			b.WriteString(strconv.FormatFloat(v.Double(), 'f', -1, 64))
		case bson.TypeString:
			b.WriteString(v.StringValue())
		default:
			return "", &ArgumentError{Argument: arg + "." + it.Key(), Reason: fmt.Sprintf("an index key's value is a %s: give a number or a string, or set IndexOptions.Name", v.Type)}
		}
	}
	if err := it.Err(); err != nil {
		return "", &ArgumentError{Argument: arg, Reason: err.Error(), Err: err}
	}
	return b.String(), nil
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
	c := operation.NewCommand("key", bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: keys}, len(name)+64).
		Value("name", operation.StringValue(name)).
		Bool("unique", o.Unique).Bool("sparse", o.Sparse).Int32("expireAfterSeconds", o.ExpireAfterSeconds).
		Value("partialFilterExpression", docs[0]).Value("collation", docs[1]).Bool("hidden", o.Hidden).
		Value("wildcardProjection", docs[2]).Value("weights", docs[3])
	if o.DefaultLanguage != nil {
		c.Value("default_language", operation.StringValue(*o.DefaultLanguage))
	}
	if o.LanguageOverride != nil {
		c.Value("language_override", operation.StringValue(*o.LanguageOverride))
	}
	c.Int32("textIndexVersion", o.TextIndexVersion).Int32("2dsphereIndexVersion", o.SphereVersion).Int32("bits", o.Bits)
	if o.Min != nil {
		c.Value("min", doubleValue(*o.Min))
	}
	if o.Max != nil {
		c.Value("max", doubleValue(*o.Max))
	}
	c.Value("storageEngine", docs[4]).Int32("v", o.Version)
	return c.Build(), name, nil
}

func doubleValue(f float64) bson.RawValue {
	return bson.RawValue{Type: bson.TypeDouble, Value: bson.AppendDoubleElement(nil, "", f)[2:]}
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
	cmd := operation.NewCollectionCommand("createIndexes", coll.name, 64).Array("indexes", specs).
		Value("commitQuorum", cq).Int64("maxTimeMS", mt).Value("comment", comment).Build()
	op, err := coll.writeOp("createIndexes", cmd, nil)
	if err != nil {
		return nil, err
	}
	if cq.Type != 0 {
		// Servers 4.2.0-4.2.5 take commitQuorum without a word and misuse
		// it: the specification has drivers refuse it before 4.4.
		op.Check = func(l operation.ServerLimits) error {
			if l.MaxWireVersion < 9 {
				return &ArgumentError{Argument: "CreateIndexesOptions.CommitQuorum",
					Reason: fmt.Sprintf("commitQuorum needs MongoDB 4.4 or later (wire version 9); the server's wire version is %d", l.MaxWireVersion)}
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

// checkCreateIndexesReply checks the fields of a createIndexes reply that
// say what was done: numIndexesBefore and numIndexesAfter are
// non-negative integers, createdCollectionAutomatically a boolean, note a
// string, and a mongos's per-shard raw a document. The driver returns the
// names it sent, so it reads nothing else; the check keeps a garbled
// reply from passing for a success.
func checkCreateIndexesReply(body bson.Raw) error {
	it := body.Iter()
	for it.Next() {
		v := it.Value()
		var want string
		switch key := it.Key(); key {
		case "numIndexesBefore", "numIndexesAfter":
			if n, ok := v.AsInt64OK(); !ok || n < 0 {
				return &ReplyError{Field: key, Reason: fmt.Sprintf("not a non-negative integer (a %s)", v.Type)}
			}
		case "createdCollectionAutomatically":
			want = "a boolean"
			if v.Type == bson.TypeBoolean {
				continue
			}
		case "note":
			want = "a string"
			if v.Type == bson.TypeString {
				continue
			}
		case "raw":
			want = "a document"
			if v.Type == bson.TypeEmbeddedDocument {
				continue
			}
		}
		if want != "" {
			return &ReplyError{Field: it.Key(), Reason: fmt.Sprintf("a %s, not %s", v.Type, want)}
		}
	}
	if err := it.Err(); err != nil {
		return &ReplyError{Field: "reply", Reason: err.Error()}
	}
	return nil
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
	cmd := operation.NewCollectionCommand("dropIndexes", coll.name, 32).Value("index", index).
		Int64("maxTimeMS", mt).Value("comment", comment).Build()
	op, err := coll.writeOp("dropIndexes", cmd, nil)
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
	cmd := operation.NewCollectionCommand("listIndexes", coll.name, 32)
	co := operation.CursorOptions{Comment: comment}
	if o.BatchSize != nil {
		cmd.Doc("cursor", operation.BatchSizeDoc(*o.BatchSize))
		co.BatchSize = *o.BatchSize
	}
	cmd.Value("comment", comment)
	op := &operation.Op{Name: "listIndexes", DB: coll.db.name, Collection: coll.name, Command: cmd.Build(), Selector: primaryRead, Cursor: true}
	res, err := coll.run(ctx, op)
	if err != nil {
		return nil, err
	}
	return coll.cursor(res, co)
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
