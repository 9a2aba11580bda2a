package driver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/operation"
	"github.com/mongoscope/mongoscope/driver/internal/selection"
)

// This file holds the enumerate-databases, enumerate-collections and
// collection management operations: listDatabases, listCollections,
// create, drop, dropDatabase and renameCollection.

// ListDatabasesOptions are the options of ListDatabases and
// ListDatabaseNames. A nil field is left out of the command.
type ListDatabasesOptions struct {
	// NameOnly asks the server for the names alone (ListDatabaseNames
	// always sets it), which is cheaper: SizeOnDisk and Empty are then
	// zero.
	NameOnly *bool
	// AuthorizedDatabases limits the list to the databases the user may
	// use (see the listDatabases command).
	AuthorizedDatabases *bool
	// Comment is attached to the command, for the server's logs and
	// profiler.
	Comment any
}

// ListDatabasesResult is the outcome of ListDatabases.
type ListDatabasesResult struct {
	Databases []DatabaseSpecification
	// TotalSize is the sum of the listed databases' sizes on disk, in
	// bytes (0 with NameOnly).
	TotalSize int64
}

// DatabaseSpecification describes one database of a listDatabases reply.
type DatabaseSpecification struct {
	Name       string
	SizeOnDisk int64
	Empty      bool
}

// primaryRead selects as the enumerate-databases and enumerate-collections
// specifications require: the primary of a replica set, whatever server a
// direct connection goes to.
var primaryRead = selection.Read(selection.ReadPref{Mode: selection.Primary})

// mergeOpts folds opts into one: each field set (non-zero) in a later
// value wins. The options types of this file have only exported fields.
func mergeOpts[T any](opts []*T) T {
	var o T
	dst := reflect.ValueOf(&o).Elem()
	for _, x := range opts {
		if x == nil {
			continue
		}
		src := reflect.ValueOf(x).Elem()
		for i := 0; i < src.NumField(); i++ {
			if f := src.Field(i); !f.IsZero() {
				dst.Field(i).Set(f)
			}
		}
	}
	return o
}

// maxTimeMS returns a MaxTime option in milliseconds, refusing a negative
// one; nil when unset or 0.
func maxTimeMS(arg string, d *time.Duration) (*int64, error) {
	if d == nil || *d == 0 {
		return nil, nil
	}
	if *d < 0 {
		return nil, &ArgumentError{Argument: arg, Reason: fmt.Sprintf("maxTimeMS must not be negative, got %v", *d)}
	}
	ms := max(d.Milliseconds(), 1)
	return &ms, nil
}

// dbWriteOp returns an Op for a command that changes db's catalog, under
// its write concern.
func dbWriteOp(db *Database, name, coll string, cmd bson.Raw) *operation.Op {
	return &operation.Op{Name: name, DB: db.name, Collection: coll, Command: cmd,
		Selector: selection.Write(), WriteConcern: db.c.wc, Unacknowledged: !db.c.wcAck, Causal: true}
}

// malformed is the error of a reply that lacks what the operation reads;
// err is a *ReplyError.
func malformed(op, addr string, err error) error {
	return &OperationError{Op: op, Address: addr, Err: err}
}

func (c *Client) listDatabases(ctx context.Context, filter any, o ListDatabasesOptions) (bson.Raw, string, error) {
	if err := c.live(); err != nil {
		return nil, "", err
	}
	f, err := marshalDoc("filter", filter)
	if err != nil {
		return nil, "", err
	}
	comment, err := marshalValue("ListDatabasesOptions.Comment", o.Comment)
	if err != nil {
		return nil, "", err
	}
	l := operation.ListDatabases{Filter: f, NameOnly: o.NameOnly, AuthorizedDatabases: o.AuthorizedDatabases, Comment: comment}
	res, err := c.execute(ctx, &operation.Op{Name: "listDatabases", DB: "admin", Command: l.Command(), Selector: primaryRead, Retry: operation.RetryRead})
	if err != nil {
		return nil, res.Address, err
	}
	return res.Body, res.Address, nil
}

// ListDatabases lists the deployment's databases that match filter, a
// document on the fields name, sizeOnDisk, empty and shards (bson.D{}
// lists them all; nil is refused). It runs on the primary of a replica
// set.
func (c *Client) ListDatabases(ctx context.Context, filter any, opts ...*ListDatabasesOptions) (ListDatabasesResult, error) {
	body, addr, err := c.listDatabases(ctx, filter, mergeOpts(opts))
	if err != nil {
		return ListDatabasesResult{}, err
	}
	r, err := parseListDatabases(body)
	if err != nil {
		return ListDatabasesResult{}, malformed("listDatabases", addr, err)
	}
	return r, nil
}

// parseListDatabases reads a listDatabases reply
// (operation.ReadListDatabases); a malformed one is a *ReplyError.
func parseListDatabases(body bson.Raw) (ListDatabasesResult, error) {
	dbs, total, err := operation.ReadListDatabases(body)
	if err != nil {
		return ListDatabasesResult{}, publicError(err)
	}
	r := ListDatabasesResult{TotalSize: total}
	if dbs != nil {
		r.Databases = make([]DatabaseSpecification, len(dbs))
		for i, d := range dbs {
			r.Databases[i] = DatabaseSpecification{Name: d.Name, SizeOnDisk: d.SizeOnDisk, Empty: d.Empty}
		}
	}
	return r, nil
}

// ListDatabaseNames lists the names of the databases that match filter
// (see ListDatabases), asking the server for names only.
func (c *Client) ListDatabaseNames(ctx context.Context, filter any, opts ...*ListDatabasesOptions) ([]string, error) {
	o := mergeOpts(opts)
	o.NameOnly = Ptr(true)
	body, addr, err := c.listDatabases(ctx, filter, o)
	if err != nil {
		return nil, err
	}
	names, err := operation.ReadDatabaseNames(body)
	if err != nil {
		return nil, malformed("listDatabases", addr, publicError(err))
	}
	return names, nil
}

// eachOf calls fn with each document of body's array key
// (operation.EachOf); a malformed reply is a *ReplyError.
func eachOf(body bson.Raw, key string, fn func(path string, d bson.Raw) error) error {
	return publicError(operation.EachOf(body, key, fn))
}

// ListCollectionsOptions are the options of ListCollections,
// ListCollectionNames and ListCollectionSpecifications.
type ListCollectionsOptions struct {
	// BatchSize is the number of collections per batch; must not be
	// negative.
	BatchSize *int32
	// NameOnly asks for the name and type of each collection alone. The
	// server applies it before the filter, so a filter on anything but
	// name then matches nothing. ListCollectionNames sets it when the
	// filter is on name only.
	NameOnly *bool
	// AuthorizedCollections, with NameOnly, limits the list to the
	// collections the user may use.
	AuthorizedCollections *bool
	// Comment is attached to the listCollections command (the server
	// keeps it for the cursor's getMores).
	Comment any
}

// listCollections runs listCollections and returns its cursor.
func listCollections(ctx context.Context, db *Database, filter any, o ListCollectionsOptions) (*Cursor, error) {
	if err := db.ready(); err != nil {
		return nil, err
	}
	f, err := marshalDoc("filter", filter)
	if err != nil {
		return nil, err
	}
	if o.BatchSize != nil && *o.BatchSize < 0 {
		return nil, &ArgumentError{Argument: "ListCollectionsOptions.BatchSize", Reason: fmt.Sprintf("the batch size must not be negative, got %d", *o.BatchSize)}
	}
	comment, err := marshalValue("ListCollectionsOptions.Comment", o.Comment)
	if err != nil {
		return nil, err
	}
	l := operation.ListCollections{Filter: f, NameOnly: o.NameOnly, AuthorizedCollections: o.AuthorizedCollections,
		BatchSize: o.BatchSize, Comment: comment}
	res, err := db.execute(ctx, &operation.Op{Name: "listCollections", DB: db.name, Command: l.Command(), Selector: primaryRead, Cursor: true, Retry: operation.RetryRead})
	if err != nil {
		return nil, err
	}
	return db.cursor(res, l.CursorOptions())
}

// ListCollections returns a cursor over the descriptions of the
// database's collections and views that match filter (bson.D{} for all;
// nil is refused): documents with name, type, options, info and idIndex,
// as the server gives them. It runs on the primary of a replica set.
func (db *Database) ListCollections(ctx context.Context, filter any, opts ...*ListCollectionsOptions) (*Cursor, error) {
	return listCollections(ctx, db, filter, mergeOpts(opts))
}

// ListCollectionNames returns the names of the collections and views that
// match filter. It asks the server for names only (nameOnly) when the
// filter is on the name alone, as the enumerate-collections specification
// requires.
func (db *Database) ListCollectionNames(ctx context.Context, filter any, opts ...*ListCollectionsOptions) ([]string, error) {
	o := mergeOpts(opts)
	if o.NameOnly == nil {
		if f, err := marshalDoc("filter", filter); err == nil && operation.NameOnlyFilter(f) {
			o.NameOnly = Ptr(true)
		}
	}
	cur, err := listCollections(ctx, db, filter, o)
	if err != nil {
		return nil, err
	}
	defer cur.Close(ctx)
	names := []string{}
	for i := 0; cur.Next(ctx); i++ {
		name, ok := cur.Current.Lookup("name").StringValueOK()
		if !ok {
			return nil, malformed("listCollections", "", &ReplyError{Field: fmt.Sprintf("collection %d: name", i), Reason: "missing or not a string"})
		}
		names = append(names, name)
	}
	return names, cur.Err()
}

// CollectionSpecification describes one collection or view of a
// listCollections reply.
type CollectionSpecification struct {
	Name string
	// Type is "collection", "view" or "timeseries".
	Type string
	// ReadOnly is set for views, and for every collection when the
	// server runs read-only.
	ReadOnly bool
	// UUID is the collection's id (nil for views).
	UUID *bson.Binary
	// Options are the options the collection was created with (capped,
	// validator, viewOn...), as the server reports them.
	Options bson.Raw
	// IDIndex is the _id index (nil for views and, with NameOnly, for
	// all).
	IDIndex *IndexSpecification
}

// ListCollectionSpecifications returns the descriptions of the
// collections and views that match filter, decoded.
func (db *Database) ListCollectionSpecifications(ctx context.Context, filter any, opts ...*ListCollectionsOptions) ([]CollectionSpecification, error) {
	cur, err := listCollections(ctx, db, filter, mergeOpts(opts))
	if err != nil {
		return nil, err
	}
	defer cur.Close(ctx)
	specs := []CollectionSpecification{}
	for i := 0; cur.Next(ctx); i++ {
		s, err := collectionSpecification(cur.Current, db.name, fmt.Sprintf("collection %d: ", i))
		if err != nil {
			return nil, malformed("listCollections", "", err)
		}
		specs = append(specs, s)
	}
	return specs, cur.Err()
}

// collectionSpecification decodes d, a listCollections document of
// database db; path prefixes the fields in errors. The name is required;
// the other fields, when there, must have their types.
func collectionSpecification(d bson.Raw, db, path string) (CollectionSpecification, error) {
	var s CollectionSpecification
	var ok bool
	if s.Name, ok = d.Lookup("name").StringValueOK(); !ok {
		return s, &ReplyError{Field: path + "name", Reason: "missing or not a string"}
	}
	wrong := func(field string, v bson.RawValue, want string) error {
		return &ReplyError{Field: path + field, Reason: fmt.Sprintf("a %s, not %s", v.Type, want)}
	}
	if v, err := d.LookupErr("type"); err == nil {
		if s.Type, ok = v.StringValueOK(); !ok {
			return s, wrong("type", v, "a string")
		}
	}
	if v, err := d.LookupErr("options"); err == nil {
		o, ok := v.DocumentOK()
		if !ok {
			return s, wrong("options", v, "a document")
		}
		s.Options = append(bson.Raw(nil), o...)
	}
	if v, err := d.LookupErr("info"); err == nil {
		info, ok := v.DocumentOK()
		if !ok {
			return s, wrong("info", v, "a document")
		}
		if v, err := info.LookupErr("readOnly"); err == nil {
			if s.ReadOnly, ok = v.BooleanOK(); !ok {
				return s, wrong("info.readOnly", v, "a boolean")
			}
		}
		if v, err := info.LookupErr("uuid"); err == nil {
			u, ok := v.BinaryOK()
			if !ok {
				return s, wrong("info.uuid", v, "a binary")
			}
			u.Data = append([]byte(nil), u.Data...)
			s.UUID = &u
		}
	}
	if v, err := d.LookupErr("idIndex"); err == nil {
		ix, ok := v.DocumentOK()
		if !ok {
			return s, wrong("idIndex", v, "a document")
		}
		spec, err := indexSpecification(ix, db+"."+s.Name, path+"idIndex.")
		if err != nil {
			return s, err
		}
		s.IDIndex = &spec
	}
	return s, nil
}

// CreateCollectionOptions are the options of CreateCollection; each is
// passed to the create command as given (the server validates them). A
// nil field is left out.
type CreateCollectionOptions struct {
	// Capped makes a capped collection of at most SizeInBytes bytes and,
	// optionally, MaxDocuments documents.
	Capped       *bool
	SizeInBytes  *int64
	MaxDocuments *int64
	// Validator is a query document every inserted or updated document
	// must match; ValidationLevel ("off", "strict", "moderate") and
	// ValidationAction ("error", "warn", "errorAndLog") say how it
	// applies.
	Validator        any
	ValidationLevel  *string
	ValidationAction *string
	// Collation is the collection's default collation, a document such
	// as bson.D{{"locale", "fr"}}.
	Collation any
	// ClusteredIndex makes a clustered collection, e.g.
	// bson.D{{"key", bson.D{{"_id", 1}}}, {"unique", true}} (servers
	// 5.3+).
	ClusteredIndex any
	// TimeSeries makes a time series collection (servers 5.0+).
	TimeSeries *TimeSeriesOptions
	// ExpireAfterSeconds removes the documents of a time series or
	// clustered collection that much after their time; must not be
	// negative.
	ExpireAfterSeconds *int64
	// ChangeStreamPreAndPostImages, e.g. bson.D{{"enabled", true}}
	// (servers 6.0+).
	ChangeStreamPreAndPostImages any
	// StorageEngine and IndexOptionDefaults are storage engine
	// settings, documents.
	StorageEngine       any
	IndexOptionDefaults any
	// ViewOn and Pipeline make a view (see CreateView).
	ViewOn   *string
	Pipeline any
	Comment  any
}

// TimeSeriesOptions describe a time series collection.
type TimeSeriesOptions struct {
	// TimeField is the field holding each document's time (required).
	TimeField string
	// MetaField is the field holding the metadata that identifies a
	// series.
	MetaField *string
	// Granularity is "seconds", "minutes" or "hours".
	Granularity *string
	// BucketMaxSpan and BucketRounding (whole seconds, servers 6.3+)
	// replace Granularity; the server wants both, equal.
	BucketMaxSpan  *time.Duration
	BucketRounding *time.Duration
}

// encode checks the options and returns the timeseries document.
func (ts *TimeSeriesOptions) encode() (bson.Raw, error) {
	if ts.TimeField == "" {
		return nil, &ArgumentError{Argument: "CreateCollectionOptions.TimeSeries.TimeField", Reason: "a time series collection needs a time field"}
	}
	t := operation.TimeSeries{TimeField: ts.TimeField, MetaField: ts.MetaField, Granularity: ts.Granularity}
	for _, x := range []struct {
		arg string
		d   *time.Duration
		dst **int32
	}{{"BucketMaxSpan", ts.BucketMaxSpan, &t.BucketMaxSpanSeconds}, {"BucketRounding", ts.BucketRounding, &t.BucketRoundingSeconds}} {
		if x.d == nil {
			continue
		}
		d := *x.d
		if d <= 0 || d%time.Second != 0 || d/time.Second > math.MaxInt32 {
			return nil, &ArgumentError{Argument: "CreateCollectionOptions.TimeSeries." + x.arg, Reason: fmt.Sprintf("%v is not a positive whole number of seconds", d)}
		}
		*x.dst = Ptr(int32(d / time.Second))
	}
	return t.Encode(), nil
}

// CreateCollection creates the collection called name, with options.
// When it exists already, the server's answer is returned as it is
// (NamespaceExists, 48, unless the server accepts identical options).
func (db *Database) CreateCollection(ctx context.Context, name string, opts ...*CreateCollectionOptions) error {
	if err := db.ready(); err != nil {
		return err
	}
	if err := checkCollectionName(name); err != nil {
		return err
	}
	o := mergeOpts(opts)
	const arg = "CreateCollectionOptions."
	if o.SizeInBytes != nil && *o.SizeInBytes < 0 {
		return &ArgumentError{Argument: arg + "SizeInBytes", Reason: fmt.Sprintf("the size must not be negative, got %d", *o.SizeInBytes)}
	}
	if o.MaxDocuments != nil && *o.MaxDocuments < 0 {
		return &ArgumentError{Argument: arg + "MaxDocuments", Reason: fmt.Sprintf("the maximum must not be negative, got %d", *o.MaxDocuments)}
	}
	if o.ExpireAfterSeconds != nil && *o.ExpireAfterSeconds < 0 {
		return &ArgumentError{Argument: arg + "ExpireAfterSeconds", Reason: fmt.Sprintf("must not be negative, got %d", *o.ExpireAfterSeconds)}
	}
	if o.Pipeline != nil && o.ViewOn == nil {
		return &ArgumentError{Argument: arg + "Pipeline", Reason: "a pipeline makes a view: set ViewOn too (or use CreateView)"}
	}
	var docs [7]bson.RawValue
	for i, x := range []struct {
		f string
		v any
	}{{"Validator", o.Validator}, {"Collation", o.Collation}, {"ClusteredIndex", o.ClusteredIndex},
		{"ChangeStreamPreAndPostImages", o.ChangeStreamPreAndPostImages}, {"StorageEngine", o.StorageEngine},
		{"IndexOptionDefaults", o.IndexOptionDefaults}} {
		var err error
		if docs[i], err = marshalDocValue(arg+x.f, x.v); err != nil {
			return err
		}
	}
	var ts bson.Raw
	if o.TimeSeries != nil {
		var err error
		if ts, err = o.TimeSeries.encode(); err != nil {
			return err
		}
	}
	var pipeline bson.Raw
	if o.Pipeline != nil {
		var err error
		if pipeline, err = marshalPipeline(arg+"Pipeline", o.Pipeline); err != nil {
			return err
		}
	}
	comment, err := marshalValue(arg+"Comment", o.Comment)
	if err != nil {
		return err
	}
	c := operation.Create{Name: name, Capped: o.Capped, Size: o.SizeInBytes, Max: o.MaxDocuments, ViewOn: o.ViewOn,
		Pipeline: pipeline, Validator: docs[0], ValidationLevel: o.ValidationLevel, ValidationAction: o.ValidationAction,
		Collation: docs[1], ClusteredIndex: docs[2], TimeSeries: ts, ExpireAfterSeconds: o.ExpireAfterSeconds,
		ChangeStreamPreAndPostImages: docs[3], StorageEngine: docs[4], IndexOptionDefaults: docs[5], Comment: comment}
	_, err = db.execute(ctx, dbWriteOp(db, "create", name, c.Command()))
	return err
}

// CreateViewOptions are the options of CreateView.
type CreateViewOptions struct {
	// Collation is the view's default collation.
	Collation any
	Comment   any
}

// CreateView creates a view called viewName of the collection (or view)
// viewOn through pipeline, an aggregation pipeline (nil or empty shows
// viewOn as it is).
func (db *Database) CreateView(ctx context.Context, viewName, viewOn string, pipeline any, opts ...*CreateViewOptions) error {
	if err := db.ready(); err != nil {
		return err
	}
	if err := checkCollectionName(viewName); err != nil {
		return err
	}
	if err := checkCollectionName(viewOn); err != nil {
		ae := err.(*ArgumentError)
		ae.Argument = "viewOn"
		return ae
	}
	if pipeline == nil {
		pipeline = bson.A{}
	}
	p, err := marshalPipeline("pipeline", pipeline)
	if err != nil {
		return err
	}
	o := mergeOpts(opts)
	collation, err := marshalDocValue("CreateViewOptions.Collation", o.Collation)
	if err != nil {
		return err
	}
	comment, err := marshalValue("CreateViewOptions.Comment", o.Comment)
	if err != nil {
		return err
	}
	c := operation.Create{Name: viewName, ViewOn: &viewOn, Pipeline: p, Collation: collation, Comment: comment}
	_, err = db.execute(ctx, dbWriteOp(db, "create", viewName, c.Command()))
	return err
}

// Drop drops the database, with all its collections and views. Dropping
// a database that does not exist is not an error.
func (db *Database) Drop(ctx context.Context) error {
	if err := db.ready(); err != nil {
		return err
	}
	_, err := db.execute(ctx, dbWriteOp(db, "dropDatabase", "", operation.DropDatabaseCommand()))
	return err
}

// codeNamespaceNotFound is the server's NamespaceNotFound.
const codeNamespaceNotFound = 26

// isNamespaceNotFound tells whether err is the server's NamespaceNotFound
// (older servers' "ns not found").
func isNamespaceNotFound(err error) bool {
	var ce *CommandError
	return errors.As(err, &ce) && (ce.Code == codeNamespaceNotFound || ce.Code == 0 && ce.Message == "ns not found")
}

// Drop drops the collection (or view) with its indexes. Dropping one
// that does not exist is not an error, as with servers 7.0 and later.
func (coll *Collection) Drop(ctx context.Context) error {
	if err := coll.ready(); err != nil {
		return err
	}
	op, err := coll.writeOp("drop", operation.DropCommand(coll.name), nil)
	if err != nil {
		return err
	}
	if _, err := coll.run(ctx, op); err != nil && !isNamespaceNotFound(err) {
		return err
	}
	return nil
}

// RenameOptions are the options of Rename.
type RenameOptions struct {
	// DropTarget drops an existing collection called the new name first;
	// without it, renaming onto an existing collection fails.
	DropTarget *bool
	Comment    any
}

// Rename renames the collection to newName in the same database (the
// renameCollection command, run on the admin database). The Collection
// keeps its old name: get the new one with Database().Collection(newName).
func (coll *Collection) Rename(ctx context.Context, newName string, opts ...*RenameOptions) error {
	if err := coll.ready(); err != nil {
		return err
	}
	if err := checkCollectionName(newName); err != nil {
		ae := err.(*ArgumentError)
		ae.Argument = "newName"
		return ae
	}
	o := mergeOpts(opts)
	comment, err := marshalValue("RenameOptions.Comment", o.Comment)
	if err != nil {
		return err
	}
	r := operation.Rename{From: coll.Namespace(), To: coll.db.name + "." + newName, DropTarget: o.DropTarget, Comment: comment}
	op, err := coll.writeOp("renameCollection", r.Command(), nil)
	if err != nil {
		return err
	}
	op.DB = "admin"
	op.Causal = false // not among the commands that take afterClusterTime
	_, err = coll.run(ctx, op)
	return err
}
