package driver

import (
	"context"
	"math"
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
	// Prefer the client's Timeout.
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

// findCommand builds the find command; single asks for one batch of at
// most limit documents.
func (coll *Collection) findCommand(filter any, o *FindOptions, single bool, prefix string) (bson.Raw, error) {
	f, err := marshalDoc("filter", filter)
	if err != nil {
		return nil, err
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
			return nil, err
		}
	}
	if o.Skip != nil && *o.Skip < 0 {
		return nil, &ArgumentError{Argument: prefix + ".Skip", Reason: "skip must not be negative"}
	}
	if o.MaxTime != nil && *o.MaxTime < 0 {
		return nil, &ArgumentError{Argument: prefix + ".MaxTime", Reason: "maxTimeMS must not be negative"}
	}
	if o.CursorType != TailableAwait && o.MaxAwaitTime != nil {
		return nil, &ArgumentError{Argument: prefix + ".MaxAwaitTime", Reason: "maxAwaitTimeMS applies only to a TailableAwait cursor"}
	}
	cmd := operation.NewCollectionCommand("find", coll.name, len(f)+64).Doc("filter", f).
		Value("sort", vals[0]).Value("projection", vals[1]).Value("hint", vals[2]).Int64("skip", o.Skip)
	limit := o.Limit
	singleBatch := single
	if limit != nil && *limit < 0 {
		l := -*limit
		limit, singleBatch = &l, true
	}
	if limit != nil && *limit == 0 {
		limit = nil
	}
	cmd.Int64("limit", limit)
	var batchSize int32 // 0: none
	if o.BatchSize != nil {
		batchSize = *o.BatchSize
		if batchSize < 0 {
			// singleBatch = limit < 0 || batchSize < 0, and batchSize
			// = abs(batchSize) when no limit (the specification's
			// mapping, a MUST).
			singleBatch = true
			if batchSize == math.MinInt32 {
				batchSize = math.MaxInt32
			} else {
				batchSize = -batchSize
			}
		}
	}
	switch {
	case singleBatch && !single && limit != nil && *limit <= math.MaxInt32:
		// A negative limit: the find/getMore/killCursors specification's
		// mapping asks for the whole limit in the one batch.
		batchSize = int32(*limit)
	case !singleBatch && limit != nil && int64(batchSize) == *limit && batchSize < math.MaxInt32:
		// The CRUD specification: batchSize equal to limit would leave
		// an open cursor behind the full first batch; limit+1 closes it.
		batchSize++
	}
	if batchSize > 0 {
		cmd.Int32("batchSize", &batchSize)
	}
	cmd.True("singleBatch", singleBatch)
	cmd.Value("comment", vals[5])
	if o.MaxTime != nil && *o.MaxTime > 0 {
		ms := o.MaxTime.Milliseconds()
		cmd.Int64("maxTimeMS", &ms)
	}
	cmd.Value("max", vals[7]).Value("min", vals[6]).Bool("returnKey", o.ReturnKey).Bool("showRecordId", o.ShowRecordID)
	switch o.CursorType {
	case Tailable:
		cmd.True("tailable", true)
	case TailableAwait:
		cmd.True("tailable", true).True("awaitData", true)
	}
	cmd.Bool("noCursorTimeout", o.NoCursorTimeout).Bool("allowPartialResults", o.AllowPartialResults).
		Bool("allowDiskUse", o.AllowDiskUse).Value("collation", vals[3]).Value("let", vals[4])
	return cmd.Build(), nil
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
	cmd, err := coll.findCommand(filter, &o, false, "FindOptions")
	if err != nil {
		return nil, err
	}
	op := coll.readOp("find", cmd)
	op.Cursor = true
	res, err := coll.run(ctx, op)
	if err != nil {
		return nil, err
	}
	co := operation.CursorOptions{Tailable: o.CursorType != NonTailable}
	if o.BatchSize != nil && *o.BatchSize > 0 {
		co.BatchSize = *o.BatchSize
	}
	if o.Limit != nil && *o.Limit > 0 {
		co.Limit = *o.Limit
	}
	if o.MaxAwaitTime != nil && o.CursorType == TailableAwait {
		co.MaxAwaitTime = *o.MaxAwaitTime
	}
	co.Comment, _ = marshalValue("Comment", o.Comment)
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
	cmd, err := coll.findCommand(filter, &o, true, "FindOneOptions")
	if err != nil {
		return &SingleResult{err: err}
	}
	res, err := coll.run(ctx, coll.readOp("find", cmd))
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
