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
	// Deprecated by timeoutMS (the client-side operations timeout
	// specification): ignored when a timeoutMS applies; prefer Timeout.
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
	// Deprecated by timeoutMS (the client-side operations timeout
	// specification): ignored when a timeoutMS applies; prefer Timeout.
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
	cd := operation.CountDocuments{Collection: coll.name, Filter: f, Skip: o.Skip, Limit: o.Limit, MaxTime: o.MaxTime}
	if cd.Collation, err = marshalDocValue("CountOptions.Collation", o.Collation); err != nil {
		return 0, err
	}
	if cd.Hint, err = marshalValue("CountOptions.Hint", o.Hint); err != nil {
		return 0, err
	}
	if cd.Comment, err = marshalValue("CountOptions.Comment", o.Comment); err != nil {
		return 0, err
	}
	res, err := coll.run(ctx, coll.readOp("aggregate", cd.Command()))
	if err != nil {
		return 0, err
	}
	n, err := operation.ReadCountDocuments(res.Body)
	if err != nil {
		return 0, &OperationError{Op: "aggregate", Address: res.Address, Err: publicError(err)}
	}
	return n, nil
}

// countField reads the n of a count reply (op "count") or of
// countDocuments' $group document (op "aggregate"); a malformed one is a
// *ReplyError in an *OperationError.
func countField(d bson.Raw, op, addr string) (int64, error) {
	path := "n"
	if op == "aggregate" {
		path = "cursor.firstBatch.0.n"
	}
	n, err := operation.CountField(d, path)
	if err != nil {
		return 0, &OperationError{Op: op, Address: addr, Err: publicError(err)}
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
	c := operation.Count{Collection: coll.name, MaxTime: o.MaxTime, Comment: comment}
	res, err := coll.run(ctx, coll.readOp("count", c.Command()))
	if err != nil {
		return 0, err
	}
	return countField(res.Body, "count", res.Address)
}
