package driver

import (
	"context"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/operation"
)

// DistinctOptions are the options of Distinct. A nil field is left out of
// the command.
type DistinctOptions struct {
	// Collation is a document such as bson.D{{"locale", "en"}}.
	Collation any
	// MaxTime bounds the command's run time on the server (maxTimeMS).
	// Deprecated by timeoutMS (the client-side operations timeout
	// specification): ignored when a timeoutMS applies; prefer Timeout.
	MaxTime *time.Duration
	Comment any
	// Hint is an index name or key document (servers 7.1+).
	Hint any
	// ReadConcern and ReadPreference override the collection's for this
	// operation; nil keeps the collection's.
	ReadConcern    *ReadConcern
	ReadPreference *ReadPreference
}

// DistinctResult is the outcome of Distinct: the values, or the
// operation's error.
type DistinctResult struct {
	values bson.Raw // the reply's values array
	err    error
}

// Err returns the operation's error.
func (r *DistinctResult) Err() error { return r.err }

// Raw returns the values as the server sent them, a BSON array.
func (r *DistinctResult) Raw() (bson.Raw, error) {
	if r.err != nil {
		return nil, r.err
	}
	return r.values, nil
}

// Decode decodes the values into v, a pointer to a slice ([]any,
// []string, []int64...), as bson.UnmarshalValue does; it returns Err when
// the operation failed.
func (r *DistinctResult) Decode(v any) error {
	if r.err != nil {
		return r.err
	}
	return bson.UnmarshalValue(bson.TypeArray, r.values, v)
}

// Values decodes a distinct result's values straight into a []T.
//
//	tags, err := driver.Values[string](coll.Distinct(ctx, "tag", bson.D{}))
func Values[T any](r *DistinctResult) ([]T, error) {
	var out []T
	if r.err != nil {
		return nil, r.err
	}
	err := bson.UnmarshalValue(bson.TypeArray, r.values, &out)
	return out, err
}

// Distinct returns the distinct values of field (a dotted path; an
// array's elements count one by one) among the documents that match
// filter (bson.D{} for all; nil is refused). The values come in one
// reply, which must fit in the server's 16 MiB document limit; use an
// Aggregate with $group for more.
func (coll *Collection) Distinct(ctx context.Context, field string, filter any, opts ...*DistinctOptions) *DistinctResult {
	if err := coll.ready(); err != nil {
		return &DistinctResult{err: err}
	}
	var o DistinctOptions
	for _, x := range opts {
		if x == nil {
			continue
		}
		setIf(&o.Collation, x.Collation)
		setPtr(&o.MaxTime, x.MaxTime)
		setIf(&o.Comment, x.Comment)
		setIf(&o.Hint, x.Hint)
		setPtr(&o.ReadConcern, x.ReadConcern)
		setPtr(&o.ReadPreference, x.ReadPreference)
	}
	coll, err := coll.override("DistinctOptions", o.ReadConcern, nil, o.ReadPreference)
	if err != nil {
		return &DistinctResult{err: err}
	}
	f, err := marshalDoc("filter", filter)
	if err != nil {
		return &DistinctResult{err: err}
	}
	if o.MaxTime != nil && *o.MaxTime < 0 {
		return &DistinctResult{err: &ArgumentError{Argument: "DistinctOptions.MaxTime", Reason: "maxTimeMS must not be negative"}}
	}
	d := operation.Distinct{Collection: coll.name, Key: field, Query: f, MaxTime: o.MaxTime}
	var vals [3]bson.RawValue
	for i, x := range []struct {
		arg string
		v   any
		doc bool
	}{{"DistinctOptions.Collation", o.Collation, true}, {"DistinctOptions.Comment", o.Comment, false}, {"DistinctOptions.Hint", o.Hint, false}} {
		if x.v == nil {
			continue
		}
		if x.doc {
			vals[i], err = marshalDocValue(x.arg, x.v)
		} else {
			vals[i], err = marshalValue(x.arg, x.v)
		}
		if err != nil {
			return &DistinctResult{err: err}
		}
	}
	d.Collation, d.Comment, d.Hint = vals[0], vals[1], vals[2]
	res, err := coll.run(ctx, coll.readOp("distinct", d.Command()))
	if err != nil {
		return &DistinctResult{err: err}
	}
	values, err := distinctValues(res.Body)
	if err != nil {
		return &DistinctResult{err: &OperationError{Op: "distinct", Address: res.Address, Err: err}}
	}
	return &DistinctResult{values: values}
}

// distinctValues reads the values array of a distinct reply
// (operation.ReadDistinct); a malformed one is a *ReplyError.
func distinctValues(body bson.Raw) (bson.Raw, error) {
	v, err := operation.ReadDistinct(body)
	return v, publicError(err)
}
