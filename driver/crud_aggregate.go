package driver

import (
	"context"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/operation"
	"github.com/mongoscope/mongoscope/driver/internal/selection"
)

// AggregateOptions are the options of Aggregate. A nil field is left out
// of the command (the server's default applies).
type AggregateOptions struct {
	// AllowDiskUse lets stages write temporary files.
	AllowDiskUse *bool
	// BatchSize is the number of documents per batch, for the aggregate
	// command (cursor.batchSize, where 0 asks for an empty first batch)
	// and its getMores. It must not be negative. It is not sent for a
	// pipeline that ends in $out or $merge, which a batch size of 0 would
	// stop from running.
	BatchSize *int32
	// BypassDocumentValidation lets $out and $merge write documents the
	// target's validator refuses; sent whenever set, false included.
	BypassDocumentValidation *bool
	// Collation is a document such as bson.D{{"locale", "en"}}.
	Collation any
	// MaxTime bounds the command's run time on the server (maxTimeMS).
	// Deprecated by timeoutMS (the client-side operations timeout
	// specification): ignored when a timeoutMS applies; prefer Timeout.
	MaxTime *time.Duration
	// MaxAwaitTime is each getMore's wait for new documents on a
	// tailable awaitData cursor, the kind a $changeStream pipeline
	// opens; it is refused for any other pipeline, whose getMores the
	// server would refuse.
	MaxAwaitTime *time.Duration
	// Comment is any value, also sent with each getMore.
	Comment any
	// Hint is an index name or key document.
	Hint any
	// Let defines variables the pipeline can use as $$name (servers 5.0+).
	Let any
	// ReadConcern, WriteConcern (for $out and $merge) and ReadPreference
	// override the collection's or database's for this operation; nil
	// keeps theirs.
	ReadConcern    *ReadConcern
	WriteConcern   *WriteConcern
	ReadPreference *ReadPreference
}

// mergeAggregate folds opts into one, later fields winning.
func mergeAggregate(opts []*AggregateOptions) AggregateOptions {
	var o AggregateOptions
	for _, x := range opts {
		if x == nil {
			continue
		}
		setPtr(&o.AllowDiskUse, x.AllowDiskUse)
		setPtr(&o.BatchSize, x.BatchSize)
		setPtr(&o.BypassDocumentValidation, x.BypassDocumentValidation)
		setIf(&o.Collation, x.Collation)
		setPtr(&o.MaxTime, x.MaxTime)
		setPtr(&o.MaxAwaitTime, x.MaxAwaitTime)
		setIf(&o.Comment, x.Comment)
		setIf(&o.Hint, x.Hint)
		setIf(&o.Let, x.Let)
		setPtr(&o.ReadConcern, x.ReadConcern)
		setPtr(&o.WriteConcern, x.WriteConcern)
		setPtr(&o.ReadPreference, x.ReadPreference)
	}
	return o
}

// aggregateCommand checks and encodes an aggregate's parts on target (the
// collection's name, or 1 for a database aggregation); operation.Aggregate
// lays out the command and its cursor's options.
func aggregateCommand(target bson.RawValue, pipeline any, o *AggregateOptions) (operation.Aggregate, error) {
	p, err := marshalPipeline("pipeline", pipeline)
	if err != nil {
		return operation.Aggregate{}, err
	}
	a := operation.Aggregate{Target: target, Pipeline: p, BatchSize: o.BatchSize, AllowDiskUse: o.AllowDiskUse,
		BypassDocumentValidation: o.BypassDocumentValidation, MaxTime: o.MaxTime}
	if o.BatchSize != nil && *o.BatchSize < 0 {
		return a, &ArgumentError{Argument: "AggregateOptions.BatchSize", Reason: "the batch size must not be negative"}
	}
	if o.MaxTime != nil && *o.MaxTime < 0 {
		return a, &ArgumentError{Argument: "AggregateOptions.MaxTime", Reason: "maxTimeMS must not be negative"}
	}
	if o.MaxAwaitTime != nil {
		if *o.MaxAwaitTime < 0 {
			return a, &ArgumentError{Argument: "AggregateOptions.MaxAwaitTime", Reason: "maxAwaitTimeMS must not be negative"}
		}
		if !a.Shape().ChangeStream {
			return a, &ArgumentError{Argument: "AggregateOptions.MaxAwaitTime",
				Reason: "maxAwaitTimeMS applies only to a tailable awaitData cursor; this pipeline opens an ordinary one, whose getMores the server refuses maxTimeMS for"}
		}
	}
	var vals [4]bson.RawValue
	for i, x := range []struct {
		arg string
		v   any
		doc bool
	}{{"AggregateOptions.Collation", o.Collation, true}, {"AggregateOptions.Comment", o.Comment, false},
		{"AggregateOptions.Hint", o.Hint, false}, {"AggregateOptions.Let", o.Let, true}} {
		if x.v == nil {
			continue
		}
		if x.doc {
			vals[i], err = marshalDocValue(x.arg, x.v)
		} else {
			vals[i], err = marshalValue(x.arg, x.v)
		}
		if err != nil {
			return a, err
		}
	}
	a.Collation, a.Comment, a.Hint, a.Let = vals[0], vals[1], vals[2], vals[3]
	return a, nil
}

// aggregateOp returns the Op of an aggregate under c's concerns. A pipeline
// that writes ($out, $merge) carries the write concern too (the read
// concern stays: the server supports it there), and goes where the CRUD
// specification's "Read preferences and server selection" says.
func aggregateOp(client *Client, c concerns, db, coll string, cmd bson.Raw, shape operation.PipelineShape) *operation.Op {
	op := &operation.Op{Name: "aggregate", DB: db, Collection: coll, Command: cmd, Cursor: true,
		Selector: selection.Read(c.readPref), ReadConcern: c.rc, Retry: operation.RetryRead, Causal: true}
	if shape.Write {
		op.OutMerge = true
		op.Retry = operation.RetryNone // $out and $merge are not retryable reads
		op.Kind = operation.KindWrite  // but writes for the overload retry policy
		// An unacknowledged write concern is sent as it is, but the reply
		// is awaited: it carries the cursor.
		op.WriteConcern = c.wc
		op.Selector = selection.Read(operation.WriteStageReadPref(client.exec.Topology.Description(), c.readPref))
		// The driver-sessions specification: no session ID, under any
		// circumstances, with an unacknowledged write.
		op.NoSession = !c.wcAck
	}
	return op
}

// Aggregate runs an aggregation pipeline on the collection and returns a
// cursor over its results. pipeline is a slice of stage documents
// (bson.A, []bson.D, mongo-style []any...); nil and a stage that is not a
// document are refused before anything is sent.
//
// A pipeline that ends in $out or $merge writes: it is sent with the
// collection's write concern as well as its read concern, and its
// cursor returns no documents (read the target collection with Find).
// Under a read preference other than primary it may run on a secondary
// when every server is 5.0 or newer; otherwise it runs on the primary.
func (coll *Collection) Aggregate(ctx context.Context, pipeline any, opts ...*AggregateOptions) (*Cursor, error) {
	if err := coll.ready(); err != nil {
		return nil, err
	}
	o := mergeAggregate(opts)
	a, err := aggregateCommand(operation.StringValue(coll.name), pipeline, &o)
	if err != nil {
		return nil, err
	}
	cmd := a.Command()
	c, err := coll.c.forOperation("AggregateOptions", o.ReadConcern, o.WriteConcern, o.ReadPreference)
	if err != nil {
		return nil, err
	}
	res, err := coll.run(ctx, aggregateOp(coll.db.client, c, coll.db.name, coll.name, cmd, a.Shape()))
	if err != nil {
		return nil, err
	}
	return coll.cursor(res, a.CursorOptions(o.MaxAwaitTime))
}

// Aggregate runs a pipeline that needs no collection ({aggregate: 1}),
// whose first stage is one such as $currentOp (on the admin database),
// $listLocalSessions or $documents, under the database's read concern,
// write concern and read preference. See Collection.Aggregate.
func (db *Database) Aggregate(ctx context.Context, pipeline any, opts ...*AggregateOptions) (*Cursor, error) {
	if err := db.ready(); err != nil {
		return nil, err
	}
	o := mergeAggregate(opts)
	one := bson.RawValue{Type: bson.TypeInt32, Value: bson.AppendInt32(nil, 1)}
	a, err := aggregateCommand(one, pipeline, &o)
	if err != nil {
		return nil, err
	}
	cmd := a.Command()
	c, err := db.c.forOperation("AggregateOptions", o.ReadConcern, o.WriteConcern, o.ReadPreference)
	if err != nil {
		return nil, err
	}
	res, err := db.execute(ctx, aggregateOp(db.client, c, db.name, "", cmd, a.Shape()))
	if err != nil {
		return nil, err
	}
	return db.cursor(res, a.CursorOptions(o.MaxAwaitTime))
}

// ready checks that the database and the client can run an operation.
func (db *Database) ready() error {
	if db.err != nil {
		return db.err
	}
	return db.client.live()
}

// cursor makes the Cursor of a database command's result; the reply's ns
// names the cursor's collection.
func (db *Database) cursor(res operation.Result, co operation.CursorOptions) (*Cursor, error) {
	c := db.client
	oc, err := operation.NewCursor(c.exec, db.name, res, co)
	if err != nil {
		return nil, &OperationError{Op: "cursor", Address: res.Address, Err: publicError(err)}
	}
	return newCursor(c, oc, co.Tailable), nil
}
