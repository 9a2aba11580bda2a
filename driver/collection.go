package driver

import (
	"context"
	"fmt"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/operation"
	"github.com/mongoscope/mongoscope/driver/internal/selection"
)

// Collection is a handle on one collection, with the read concern, write
// concern and read preference its operations use (its database's unless
// overridden). Making one sends nothing; it is safe for concurrent use.
type Collection struct {
	db   *Database
	name string
	c    concerns
	err  error
}

// CollectionOptions override the database's settings for one collection;
// a nil field keeps the database's.
type CollectionOptions struct {
	ReadConcern    *ReadConcern
	WriteConcern   *WriteConcern
	ReadPreference *ReadPreference
	// Timeout is the collection's timeoutMS (client-side operations
	// timeout); 0 means no limit, nil keeps the database's.
	Timeout *time.Duration
}

// Collection returns a handle on the collection called name. A mistake in
// the name or the options is returned by the collection's operations, as
// an *ArgumentError naming it.
func (db *Database) Collection(name string, opts ...*CollectionOptions) *Collection {
	coll := &Collection{db: db, name: name, c: db.c, err: db.err}
	if coll.err == nil {
		coll.err = checkCollectionName(name)
	}
	for _, o := range opts {
		if o == nil || coll.err != nil {
			continue
		}
		coll.c, coll.err = coll.c.with("CollectionOptions", o.ReadConcern, o.WriteConcern, o.ReadPreference)
		if coll.err == nil {
			coll.c, coll.err = coll.c.withTimeout("CollectionOptions.Timeout", o.Timeout)
		}
	}
	return coll
}

// Name returns the collection's name.
func (coll *Collection) Name() string { return coll.name }

// Database returns the collection's database.
func (coll *Collection) Database() *Database { return coll.db }

// Namespace returns "database.collection".
func (coll *Collection) Namespace() string { return coll.db.name + "." + coll.name }

// ready checks that the collection and the client can run an operation.
func (coll *Collection) ready() error {
	if coll.err != nil {
		return coll.err
	}
	return coll.db.client.live()
}

// override returns coll with an operation's own read concern, write
// concern and read preference in place of its own, or coll itself when
// the operation sets none. prefix names the options type in errors.
func (coll *Collection) override(prefix string, rc *ReadConcern, wc *WriteConcern, rp *ReadPreference) (*Collection, error) {
	if rc == nil && wc == nil && rp == nil {
		return coll, nil
	}
	c, err := coll.c.forOperation(prefix, rc, wc, rp)
	if err != nil {
		return nil, err
	}
	cp := *coll
	cp.c = c
	return &cp, nil
}

// readOp returns an Op for a read on the collection under its read
// preference and read concern.
func (coll *Collection) readOp(name string, cmd bson.Raw) *operation.Op {
	return &operation.Op{Name: name, DB: coll.db.name, Collection: coll.name, Command: cmd,
		Selector: selection.Read(coll.c.readPref), ReadConcern: coll.c.rc, Retry: operation.RetryRead, Causal: true}
}

// writeOp returns an Op for a write on the collection under its write
// concern (wc overrides it when not nil).
func (coll *Collection) writeOp(name string, cmd bson.Raw, wc *WriteConcern) (*operation.Op, error) {
	op := coll.writeBase()
	op.Name, op.Command = name, cmd
	switch name {
	case "insert", "update", "delete", "findAndModify":
		// Retryable unless a statement is multi (operation.Executor
		// checks the batch).
		op.Retry = operation.RetryWrite
	}
	if wc != nil {
		if err := wc.validate(); err != nil {
			return nil, err
		}
		op.WriteConcern, op.Unacknowledged = wc.encode(), !wc.Acknowledged()
	}
	return &op, nil
}

// writeBase is the Op of a write on the collection under its write
// concern, without its name and command (a multi-command write's
// commands are copies of it).
func (coll *Collection) writeBase() operation.Op {
	return operation.Op{DB: coll.db.name, Collection: coll.name,
		Selector: selection.Write(), WriteConcern: coll.c.wc, Unacknowledged: !coll.c.wcAck, Causal: true}
}

// marshalDoc encodes a document argument (a struct, a map, a bson.D, a
// bson.Raw...), refusing nil and what does not encode as a document, with
// an *ArgumentError naming arg.
func marshalDoc(arg string, doc any) (bson.Raw, error) {
	switch v := doc.(type) {
	case nil:
		return nil, &ArgumentError{Argument: arg, Reason: "the document is nil"}
	case bson.Raw:
		if v == nil {
			return nil, &ArgumentError{Argument: arg, Reason: "the document is nil"}
		}
		if err := v.Validate(); err != nil {
			return nil, &ArgumentError{Argument: arg, Reason: err.Error(), Err: err}
		}
		return v, nil
	case []byte:
		return marshalDoc(arg, bson.Raw(v))
	}
	b, err := bson.Marshal(doc)
	if err != nil {
		return nil, &ArgumentError{Argument: arg, Reason: err.Error(), Err: err}
	}
	return b, nil
}

// marshalValue encodes an option that may be any BSON value (a hint is a
// string or a document, a comment anything); nil leaves it unset.
func marshalValue(arg string, v any) (bson.RawValue, error) {
	if v == nil {
		return bson.RawValue{}, nil
	}
	if rv, ok := v.(bson.RawValue); ok {
		return rv, nil
	}
	if r, ok := v.(bson.Raw); ok {
		return bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: r}, nil
	}
	t, b, err := bson.MarshalValue(v)
	if err != nil {
		return bson.RawValue{}, &ArgumentError{Argument: arg, Reason: err.Error(), Err: err}
	}
	return bson.RawValue{Type: t, Value: b}, nil
}

// marshalDocValue encodes an option that must be a document (sort,
// projection, collation, let); nil leaves it unset.
func marshalDocValue(arg string, v any) (bson.RawValue, error) {
	if v == nil {
		return bson.RawValue{}, nil
	}
	d, err := marshalDoc(arg, v)
	if err != nil {
		return bson.RawValue{}, err
	}
	return bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: d}, nil
}

// marshalPipeline encodes an aggregation pipeline: a slice of stages
// (bson.A, []bson.D, []bson.M, []bson.Raw, bson.Raw array...). Each stage
// must be a document.
func marshalPipeline(arg string, pipeline any) (bson.Raw, error) {
	if pipeline == nil {
		return nil, &ArgumentError{Argument: arg, Reason: "the pipeline is nil"}
	}
	t, b, err := bson.MarshalValue(pipeline)
	if err != nil {
		return nil, &ArgumentError{Argument: arg, Reason: err.Error(), Err: err}
	}
	if t != bson.TypeArray {
		return nil, &ArgumentError{Argument: arg, Reason: fmt.Sprintf("the pipeline is a %s, not an array of stages", t)}
	}
	it := bson.Raw(b).Iter()
	for i := 0; it.Next(); i++ {
		if it.Value().Type != bson.TypeEmbeddedDocument {
			return nil, &ArgumentError{Argument: fmt.Sprintf("%s[%d]", arg, i), Reason: fmt.Sprintf("a stage is a %s, not a document", it.Value().Type)}
		}
	}
	return b, nil
}

// run runs op for the collection's client.
func (coll *Collection) run(ctx context.Context, op *operation.Op) (operation.Result, error) {
	if op.Timeout == nil {
		op.Timeout = coll.c.timeout
	}
	return coll.db.client.execute(ctx, op)
}

// whole bounds an operation made of several commands (the batches of
// InsertMany and BulkWrite) by one timeoutMS budget: each command's own
// budget cannot outlast ctx's deadline (the CSOT specification's
// "Batching").
func (coll *Collection) whole(ctx context.Context) (context.Context, context.CancelFunc) {
	t, ok := operation.TimeoutOf(ctx)
	switch {
	case ok:
	case coll.c.timeout != nil:
		t = *coll.c.timeout
	default:
		t = coll.db.client.exec.Timeout
	}
	if t <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, t)
}

// execute runs op for the database's client under the database's
// timeoutMS (unless op has one).
func (db *Database) execute(ctx context.Context, op *operation.Op) (operation.Result, error) {
	if op.Timeout == nil {
		op.Timeout = db.c.timeout
	}
	return db.client.execute(ctx, op)
}
