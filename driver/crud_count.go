package driver

import (
	"context"
	"fmt"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/operation"
)

// CountOptions are the options of CountDocuments. A nil field is left out
// of the command.
type CountOptions struct {
	// Collation is a document such as bson.D{{"locale", "en"}}.
	Collation any
	// Hint is an index name or key document.
	Hint any
	// Limit is the most documents counted; 0 means no limit. It must not
	// be negative.
	Limit *int64
	// Skip is how many matching documents are passed over before
	// counting; it must not be negative.
	Skip *int64
	// MaxTime bounds the command's run time on the server (maxTimeMS).
	// Prefer the client's Timeout.
	MaxTime *time.Duration
	Comment any
	// ReadConcern and ReadPreference override the collection's for this
	// operation; nil keeps the collection's.
	ReadConcern    *ReadConcern
	ReadPreference *ReadPreference
}

// EstimatedDocumentCountOptions are the options of EstimatedDocumentCount.
type EstimatedDocumentCountOptions struct {
	// MaxTime bounds the command's run time on the server (maxTimeMS).
	// Prefer the client's Timeout.
	MaxTime *time.Duration
	Comment any
	// ReadConcern and ReadPreference override the collection's for this
	// operation; nil keeps the collection's.
	ReadConcern    *ReadConcern
	ReadPreference *ReadPreference
}

// CountDocuments counts the documents that match filter (bson.D{} for
// all of them; nil is refused) by running the aggregation
//
//	[{$match: filter}, {$skip: skip}, {$limit: limit}, {$group: {_id: 1, n: {$sum: 1}}}]
//
// so it is exact, and scans what filter selects. As filter is a $match
// stage, the query operators $match does not allow ($where, $near,
// $nearSphere, ...) are refused by the server: use $expr, $geoWithin with
// $center or $centerSphere instead.
func (coll *Collection) CountDocuments(ctx context.Context, filter any, opts ...*CountOptions) (int64, error) {
	if err := coll.ready(); err != nil {
		return 0, err
	}
	var o CountOptions
	for _, x := range opts {
		if x == nil {
			continue
		}
		setIf(&o.Collation, x.Collation)
		setIf(&o.Hint, x.Hint)
		setPtr(&o.Limit, x.Limit)
		setPtr(&o.Skip, x.Skip)
		setPtr(&o.MaxTime, x.MaxTime)
		setIf(&o.Comment, x.Comment)
		setPtr(&o.ReadConcern, x.ReadConcern)
		setPtr(&o.ReadPreference, x.ReadPreference)
	}
	coll, err := coll.override("CountOptions", o.ReadConcern, nil, o.ReadPreference)
	if err != nil {
		return 0, err
	}
	f, err := marshalDoc("filter", filter)
	if err != nil {
		return 0, err
	}
	if o.Skip != nil && *o.Skip < 0 {
		return 0, &ArgumentError{Argument: "CountOptions.Skip", Reason: fmt.Sprintf("skip must not be negative, got %d", *o.Skip)}
	}
	if o.Limit != nil && *o.Limit < 0 {
		return 0, &ArgumentError{Argument: "CountOptions.Limit", Reason: fmt.Sprintf("limit must not be negative, got %d", *o.Limit)}
	}
	if o.MaxTime != nil && *o.MaxTime < 0 {
		return 0, &ArgumentError{Argument: "CountOptions.MaxTime", Reason: "maxTimeMS must not be negative"}
	}
	collation, err := marshalDocValue("CountOptions.Collation", o.Collation)
	if err != nil {
		return 0, err
	}
	hint, err := marshalValue("CountOptions.Hint", o.Hint)
	if err != nil {
		return 0, err
	}
	comment, err := marshalValue("CountOptions.Comment", o.Comment)
	if err != nil {
		return 0, err
	}

	// The pipeline, as the CRUD specification writes it.
	ast, p := bson.AppendDocumentStart(make([]byte, 0, len(f)+128))
	i := 0
	stage := func(appendStage func([]byte) []byte) {
		sst, b := bson.AppendDocumentElementStart(p, bson.ArrayKey(i))
		b = appendStage(b)
		p, _ = bson.AppendDocumentEnd(b, sst)
		i++
	}
	stage(func(b []byte) []byte { return bson.AppendDocumentElement(b, "$match", f) })
	if o.Skip != nil && *o.Skip > 0 {
		stage(func(b []byte) []byte { return bson.AppendInt64Element(b, "$skip", *o.Skip) })
	}
	if o.Limit != nil && *o.Limit > 0 {
		stage(func(b []byte) []byte { return bson.AppendInt64Element(b, "$limit", *o.Limit) })
	}
	stage(func(b []byte) []byte { return bson.AppendDocumentElement(b, "$group", countGroup) })
	p, _ = bson.AppendDocumentEnd(p, ast)

	cmd := operation.NewCollectionCommand("aggregate", coll.name, len(p)+64).
		Value("pipeline", bson.RawValue{Type: bson.TypeArray, Value: p}).Doc("cursor", emptyDoc).
		Value("collation", collation)
	if o.MaxTime != nil && *o.MaxTime > 0 {
		ms := o.MaxTime.Milliseconds()
		cmd.Int64("maxTimeMS", &ms)
	}
	cmd.Value("comment", comment).Value("hint", hint)
	res, err := coll.run(ctx, coll.readOp("aggregate", cmd.Build()))
	if err != nil {
		return 0, err
	}
	d, ok, err := operation.FirstDocument(res.Body)
	if err != nil {
		return 0, &OperationError{Op: "aggregate", Address: res.Address, Err: publicError(err)}
	}
	if !ok {
		// Nothing matched: $group returns no document at all.
		return 0, nil
	}
	return countField(d, "aggregate", res.Address)
}

// countGroup is {_id: 1, n: {$sum: 1}}.
var countGroup = func() bson.Raw {
	st, b := bson.AppendDocumentStart(nil)
	b = bson.AppendInt32Element(b, "_id", 1)
	sst, b := bson.AppendDocumentElementStart(b, "n")
	b = bson.AppendInt32Element(b, "$sum", 1)
	b, _ = bson.AppendDocumentEnd(b, sst)
	b, _ = bson.AppendDocumentEnd(b, st)
	return b
}()

// countField reads the n of a count reply or of countDocuments' $group.
func countField(d bson.Raw, op, addr string) (int64, error) {
	field := "n"
	if op == "aggregate" {
		field = "cursor.firstBatch.0.n"
	}
	v, err := d.LookupErr("n")
	if err != nil {
		return 0, replyError(op, addr, field, "missing")
	}
	n, ok := v.AsInt64OK()
	if !ok {
		return 0, replyError(op, addr, field, fmt.Sprintf("a %s, not an integer", v.Type))
	}
	if n < 0 {
		return 0, replyError(op, addr, field, fmt.Sprintf("%d is negative", n))
	}
	return n, nil
}

// EstimatedDocumentCount returns the number of documents in the
// collection from its metadata, with the count command: it is fast and
// reads no documents, but on a sharded cluster it may count orphaned
// documents and documents of a chunk being migrated (see "Count:
// Behavior" in the server's manual,
// https://www.mongodb.com/docs/manual/reference/command/count/#behavior).
// Use CountDocuments for an exact count.
//
// MongoDB 5.0.0-5.0.8 and 5.1.0-5.3.1 left count out of version 1 of the
// Stable API: with ServerAPI Strict on those servers, upgrade to 5.0.9 or
// 5.3.2, or leave Strict off.
func (coll *Collection) EstimatedDocumentCount(ctx context.Context, opts ...*EstimatedDocumentCountOptions) (int64, error) {
	if err := coll.ready(); err != nil {
		return 0, err
	}
	var o EstimatedDocumentCountOptions
	for _, x := range opts {
		if x == nil {
			continue
		}
		setPtr(&o.MaxTime, x.MaxTime)
		setIf(&o.Comment, x.Comment)
		setPtr(&o.ReadConcern, x.ReadConcern)
		setPtr(&o.ReadPreference, x.ReadPreference)
	}
	coll, err := coll.override("EstimatedDocumentCountOptions", o.ReadConcern, nil, o.ReadPreference)
	if err != nil {
		return 0, err
	}
	if o.MaxTime != nil && *o.MaxTime < 0 {
		return 0, &ArgumentError{Argument: "EstimatedDocumentCountOptions.MaxTime", Reason: "maxTimeMS must not be negative"}
	}
	comment, err := marshalValue("EstimatedDocumentCountOptions.Comment", o.Comment)
	if err != nil {
		return 0, err
	}
	cmd := operation.NewCollectionCommand("count", coll.name, 32)
	if o.MaxTime != nil && *o.MaxTime > 0 {
		ms := o.MaxTime.Milliseconds()
		cmd.Int64("maxTimeMS", &ms)
	}
	cmd.Value("comment", comment)
	res, err := coll.run(ctx, coll.readOp("count", cmd.Build()))
	if err != nil {
		return 0, err
	}
	return countField(res.Body, "count", res.Address)
}
