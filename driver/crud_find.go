package driver

import (
	"context"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/operation"
)

// CursorType says whether a find cursor stays open at the end of a capped
// collection.
type CursorType int

// The cursor types.
const (
	// NonTailable is an ordinary cursor (the default).
	NonTailable CursorType = iota
	// Tailable stays open at the end of a capped collection.
	Tailable
	// TailableAwait is Tailable, and each getMore waits on the server up
	// to MaxAwaitTime for new documents.
	TailableAwait
)

// FindOptions are the options of Find. A nil field is left out of the
// command (the server's default applies).
type FindOptions struct {
	// Sort orders the results: a document such as bson.D{{"qty", -1}}.
	Sort any
	// Projection picks the fields returned.
	Projection any
	Skip       *int64
	// Limit caps the number of documents. A negative limit asks for a
	// single batch of at most -Limit documents.
	Limit *int64
	// BatchSize is the number of documents per batch. A negative batch
	// size asks for a single batch (the find/getMore/killCursors
	// specification's mapping of the legacy convention).
	BatchSize *int32
	// Hint is an index name or key document.
	Hint any
	// Collation is a document such as bson.D{{"locale", "en"}, {"strength", 2}}.
	Collation any
	// Let defines variables the filter can use as $$name (servers 5.0+).
	Let     any
	Comment any
	// MaxTime bounds the command's run time on the server (maxTimeMS).
	// Deprecated by timeoutMS (the client-side operations timeout
	// specification): ignored when a timeoutMS applies; prefer Timeout.
	MaxTime             *time.Duration
	AllowDiskUse        *bool
	AllowPartialResults *bool
	NoCursorTimeout     *bool
	CursorType          CursorType
	// MaxAwaitTime is each getMore's wait on a TailableAwait cursor.
	MaxAwaitTime *time.Duration
	Min, Max     any
	ReturnKey    *bool
	ShowRecordID *bool
	// ReadConcern and ReadPreference override the collection's for this
	// operation; nil keeps the collection's.
	ReadConcern    *ReadConcern
	ReadPreference *ReadPreference
}

// FindOneOptions are the options of FindOne.
type FindOneOptions struct {
	Sort                any
	Projection          any
	Skip                *int64
	Hint                any
	Collation           any
	Let                 any
	Comment             any
	MaxTime             *time.Duration
	AllowPartialResults *bool
	// AllowDiskUse lets the server write temporary files for a large sort
	// (servers 4.4+).
	AllowDiskUse *bool
	Min, Max     any
	ReturnKey    *bool
	ShowRecordID *bool
	// ReadConcern and ReadPreference override the collection's for this
	// operation; nil keeps the collection's.
	ReadConcern    *ReadConcern
	ReadPreference *ReadPreference
}

// mergeFind folds opts into one, later fields winning.
func mergeFind(opts []*FindOptions) FindOptions {
	var o FindOptions
	for _, x := range opts {
		if x == nil {
			continue
		}
		setIf(&o.Sort, x.Sort)
		setIf(&o.Projection, x.Projection)
		setPtr(&o.Skip, x.Skip)
		setPtr(&o.Limit, x.Limit)
		setPtr(&o.BatchSize, x.BatchSize)
		setIf(&o.Hint, x.Hint)
		setIf(&o.Collation, x.Collation)
		setIf(&o.Let, x.Let)
		setIf(&o.Comment, x.Comment)
		setPtr(&o.MaxTime, x.MaxTime)
		setPtr(&o.AllowDiskUse, x.AllowDiskUse)
		setPtr(&o.AllowPartialResults, x.AllowPartialResults)
		setPtr(&o.NoCursorTimeout, x.NoCursorTimeout)
		if x.CursorType != NonTailable {
			o.CursorType = x.CursorType
		}
		setPtr(&o.MaxAwaitTime, x.MaxAwaitTime)
		setIf(&o.Min, x.Min)
		setIf(&o.Max, x.Max)
		setPtr(&o.ReturnKey, x.ReturnKey)
		setPtr(&o.ShowRecordID, x.ShowRecordID)
		setPtr(&o.ReadConcern, x.ReadConcern)
		setPtr(&o.ReadPreference, x.ReadPreference)
	}
	return o
}

func setIf(dst *any, v any) {
	if v != nil {
		*dst = v
	}
}

func setPtr[T any](dst **T, v *T) {
	if v != nil {
		*dst = v
	}
}

// findCommand checks and encodes the find command's parts; single asks
// for one batch of at most limit documents. operation.Find lays out the
// command and its cursor's options.
func (coll *Collection) findCommand(filter any, o *FindOptions, single bool, prefix string) (operation.Find, error) {
	f, err := marshalDoc("filter", filter)
	if err != nil {
		return operation.Find{}, err
	}
	var vals [9]bson.RawValue
	for i, x := range []struct {
		arg string
		v   any
		doc bool
	}{{"Sort", o.Sort, true}, {"Projection", o.Projection, true}, {"Hint", o.Hint, false}, {"Collation", o.Collation, true},
		{"Let", o.Let, true}, {"Comment", o.Comment, false}, {"Min", o.Min, true}, {"Max", o.Max, true}} {
		if x.v == nil {
			continue
		}
		if x.doc {
			vals[i], err = marshalDocValue(prefix+"."+x.arg, x.v)
		} else {
			vals[i], err = marshalValue(prefix+"."+x.arg, x.v)
		}
		if err != nil {
			return operation.Find{}, err
		}
	}
	if o.Skip != nil && *o.Skip < 0 {
		return operation.Find{}, &ArgumentError{Argument: prefix + ".Skip", Reason: "skip must not be negative"}
	}
	if o.MaxTime != nil && *o.MaxTime < 0 {
		return operation.Find{}, &ArgumentError{Argument: prefix + ".MaxTime", Reason: "maxTimeMS must not be negative"}
	}
	if o.CursorType != TailableAwait && o.MaxAwaitTime != nil {
		return operation.Find{}, &ArgumentError{Argument: prefix + ".MaxAwaitTime", Reason: "maxAwaitTimeMS applies only to a TailableAwait cursor"}
	}
	return operation.Find{Collection: coll.name, Filter: f, Sort: vals[0], Projection: vals[1], Hint: vals[2],
		Skip: o.Skip, Limit: o.Limit, BatchSize: o.BatchSize, Single: single, Comment: vals[5], MaxTime: o.MaxTime,
		Max: vals[7], Min: vals[6], ReturnKey: o.ReturnKey, ShowRecordID: o.ShowRecordID,
		Tailable: o.CursorType == Tailable || o.CursorType == TailableAwait, AwaitData: o.CursorType == TailableAwait,
		NoCursorTimeout: o.NoCursorTimeout, AllowPartialResults: o.AllowPartialResults, AllowDiskUse: o.AllowDiskUse,
		Collation: vals[3], Let: vals[4], MaxAwaitTime: o.MaxAwaitTime}, nil
}

// Find runs a query and returns a cursor over the matching documents.
// filter is a document (bson.D{} matches everything); nil is refused.
func (coll *Collection) Find(ctx context.Context, filter any, opts ...*FindOptions) (*Cursor, error) {
	if err := coll.ready(); err != nil {
		return nil, err
	}
	o := mergeFind(opts)
	coll, err := coll.override("FindOptions", o.ReadConcern, nil, o.ReadPreference)
	if err != nil {
		return nil, err
	}
	f, err := coll.findCommand(filter, &o, false, "FindOptions")
	if err != nil {
		return nil, err
	}
	op := coll.readOp("find", f.Command())
	op.Cursor = true
	op.CursorKind, op.MaxAwait = cursorKind(o.CursorType), deref(o.MaxAwaitTime)
	res, err := coll.run(ctx, op)
	if err != nil {
		return nil, err
	}
	co := f.CursorOptions()
	// Any CursorType but NonTailable keeps the cursor open on an empty
	// batch, as it always has (an unknown one sends no tailable flag).
	co.Tailable = o.CursorType != NonTailable
	return coll.cursor(res, co)
}

// cursor makes the Cursor of a command's result.
func (coll *Collection) cursor(res operation.Result, co operation.CursorOptions) (*Cursor, error) {
	c := coll.db.client
	oc, err := operation.NewCursor(c.exec, coll.db.name, res, co)
	if err != nil {
		return nil, &OperationError{Op: "cursor", Address: res.Address, Err: publicError(err)}
	}
	return newCursor(c, oc, co.Tailable), nil
}

// limitOne is FindOne's limit; findCommand only reads it.
var limitOne = int64(1)

// FindOne returns the first document that matches filter (in Sort order
// when given), or a SingleResult whose Err is ErrNoDocuments.
func (coll *Collection) FindOne(ctx context.Context, filter any, opts ...*FindOneOptions) *SingleResult {
	if err := coll.ready(); err != nil {
		return &SingleResult{err: err}
	}
	var o FindOptions
	for _, x := range opts {
		if x == nil {
			continue
		}
		mo := mergeFind([]*FindOptions{&o, {Sort: x.Sort, Projection: x.Projection, Skip: x.Skip, Hint: x.Hint, Collation: x.Collation,
			Let: x.Let, Comment: x.Comment, MaxTime: x.MaxTime, AllowPartialResults: x.AllowPartialResults, AllowDiskUse: x.AllowDiskUse, Min: x.Min, Max: x.Max,
			ReturnKey: x.ReturnKey, ShowRecordID: x.ShowRecordID, ReadConcern: x.ReadConcern, ReadPreference: x.ReadPreference}})
		o = mo
	}
	o.Limit = &limitOne
	coll, err := coll.override("FindOneOptions", o.ReadConcern, nil, o.ReadPreference)
	if err != nil {
		return &SingleResult{err: err}
	}
	f, err := coll.findCommand(filter, &o, true, "FindOneOptions")
	if err != nil {
		return &SingleResult{err: err}
	}
	res, err := coll.run(ctx, coll.readOp("find", f.Command()))
	if err != nil {
		return &SingleResult{err: err}
	}
	d, ok, err := operation.FirstDocument(res.Body)
	if err != nil {
		return &SingleResult{err: &OperationError{Op: "find", Address: res.Address, Err: publicError(err)}}
	}
	if !ok {
		return &SingleResult{err: ErrNoDocuments}
	}
	return &SingleResult{doc: d}
}
