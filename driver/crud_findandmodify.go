package driver

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/operation"
)

// ReturnDocument says which version of the document FindOneAndUpdate and
// FindOneAndReplace return.
type ReturnDocument int

// The ReturnDocument values.
const (
	// Before returns the document as it was before the change (the
	// default); nil for an upsert's insert.
	Before ReturnDocument = iota
	// After returns the document as the change left it.
	After
)

// FindOneAndUpdateOptions are the options of FindOneAndUpdate. A nil
// field is left out of the command.
type FindOneAndUpdateOptions struct {
	ArrayFilters             []any
	BypassDocumentValidation *bool
	Collation                any
	// Hint is an index name or key document (servers 4.4+).
	Hint any
	Let  any
	// Comment is attached to the command (servers 4.4+).
	Comment any
	// MaxTime bounds the command's run time on the server (maxTimeMS);
	// must not be negative. Deprecated by timeoutMS (the client-side
	// operations timeout specification): ignored when a timeoutMS
	// applies; prefer Timeout.
	MaxTime *time.Duration
	// Projection picks the fields of the returned document.
	Projection     any
	ReturnDocument ReturnDocument
	// Sort picks the document changed when the filter matches several.
	Sort   any
	Upsert *bool
	// WriteConcern overrides the collection's for this operation; nil
	// keeps the collection's.
	WriteConcern *WriteConcern
}

// FindOneAndReplaceOptions are the options of FindOneAndReplace.
type FindOneAndReplaceOptions struct {
	BypassDocumentValidation *bool
	Collation                any
	Hint                     any
	Let                      any
	Comment                  any
	MaxTime                  *time.Duration
	Projection               any
	ReturnDocument           ReturnDocument
	Sort                     any
	Upsert                   *bool
	// WriteConcern overrides the collection's for this operation; nil
	// keeps the collection's.
	WriteConcern *WriteConcern
}

// FindOneAndDeleteOptions are the options of FindOneAndDelete.
type FindOneAndDeleteOptions struct {
	Collation  any
	Hint       any
	Let        any
	Comment    any
	MaxTime    *time.Duration
	Projection any
	Sort       any
	// WriteConcern overrides the collection's for this operation; nil
	// keeps the collection's.
	WriteConcern *WriteConcern
}

// ErrUnacknowledgedWrite is the Err of the SingleResult of a
// FindOneAnd... under an unacknowledged write concern (w: 0): the command
// was sent, and no document comes back.
var ErrUnacknowledgedWrite = errors.New("driver: the write is unacknowledged (w: 0), so there is no document to return")

// famSpec is what the three FindOneAnd... methods have in common.
type famSpec struct {
	optArg               string
	remove, replace      bool
	doc                  any
	docArg               string
	arrayFilters         []any
	bypass               *bool
	collation, hint, let any
	comment, projection  any
	sort                 any
	maxTime              *time.Duration
	returnDoc            ReturnDocument
	upsert               *bool
	wc                   *WriteConcern
}

// FindOneAndUpdate updates the first document that matches filter (in
// Sort order when given) and returns it as it was before (or, with
// ReturnDocument After, as it is after) the update. update is a document
// of update operators or a pipeline, as for UpdateOne. When nothing
// matched (and no upsert happened), the result's Err is ErrNoDocuments; a
// write concern error is a *WriteException inside the *OperationError.
func (coll *Collection) FindOneAndUpdate(ctx context.Context, filter, update any, opts ...*FindOneAndUpdateOptions) *SingleResult {
	s := famSpec{optArg: "FindOneAndUpdateOptions.", doc: update, docArg: "update"}
	for _, x := range opts {
		if x == nil {
			continue
		}
		if x.ArrayFilters != nil {
			s.arrayFilters = x.ArrayFilters
		}
		setPtr(&s.bypass, x.BypassDocumentValidation)
		setIf(&s.collation, x.Collation)
		setIf(&s.hint, x.Hint)
		setIf(&s.let, x.Let)
		setIf(&s.comment, x.Comment)
		setPtr(&s.maxTime, x.MaxTime)
		setIf(&s.projection, x.Projection)
		if x.ReturnDocument != Before {
			s.returnDoc = x.ReturnDocument
		}
		setIf(&s.sort, x.Sort)
		setPtr(&s.upsert, x.Upsert)
		setPtr(&s.wc, x.WriteConcern)
	}
	return coll.findAndModify(ctx, filter, &s)
}

// FindOneAndReplace replaces the first document that matches filter with
// replacement (a whole document; one whose first field is an update
// operator is refused) and returns it as it was before or, with
// ReturnDocument After, the replacement; see FindOneAndUpdate.
func (coll *Collection) FindOneAndReplace(ctx context.Context, filter, replacement any, opts ...*FindOneAndReplaceOptions) *SingleResult {
	s := famSpec{optArg: "FindOneAndReplaceOptions.", doc: replacement, docArg: "replacement", replace: true}
	for _, x := range opts {
		if x == nil {
			continue
		}
		setPtr(&s.bypass, x.BypassDocumentValidation)
		setIf(&s.collation, x.Collation)
		setIf(&s.hint, x.Hint)
		setIf(&s.let, x.Let)
		setIf(&s.comment, x.Comment)
		setPtr(&s.maxTime, x.MaxTime)
		setIf(&s.projection, x.Projection)
		if x.ReturnDocument != Before {
			s.returnDoc = x.ReturnDocument
		}
		setIf(&s.sort, x.Sort)
		setPtr(&s.upsert, x.Upsert)
		setPtr(&s.wc, x.WriteConcern)
	}
	return coll.findAndModify(ctx, filter, &s)
}

// FindOneAndDelete deletes the first document that matches filter (in
// Sort order when given) and returns it; see FindOneAndUpdate.
func (coll *Collection) FindOneAndDelete(ctx context.Context, filter any, opts ...*FindOneAndDeleteOptions) *SingleResult {
	s := famSpec{optArg: "FindOneAndDeleteOptions.", remove: true}
	for _, x := range opts {
		if x == nil {
			continue
		}
		setIf(&s.collation, x.Collation)
		setIf(&s.hint, x.Hint)
		setIf(&s.let, x.Let)
		setIf(&s.comment, x.Comment)
		setPtr(&s.maxTime, x.MaxTime)
		setIf(&s.projection, x.Projection)
		setIf(&s.sort, x.Sort)
		setPtr(&s.wc, x.WriteConcern)
	}
	return coll.findAndModify(ctx, filter, &s)
}

// famCommand checks and encodes the findAndModify command's parts;
// operation.FindAndModify lays them out.
func (coll *Collection) famCommand(filter any, s *famSpec) (operation.FindAndModify, error) {
	q, err := marshalDoc("filter", filter)
	if err != nil {
		return operation.FindAndModify{}, err
	}
	var u bson.RawValue
	switch {
	case s.remove:
	case s.replace:
		u, err = marshalReplacement(s.docArg, s.doc)
	default:
		u, err = marshalUpdate(s.docArg, s.doc)
	}
	if err != nil {
		return operation.FindAndModify{}, err
	}
	if s.maxTime != nil && *s.maxTime < 0 {
		return operation.FindAndModify{}, &ArgumentError{Argument: s.optArg + "MaxTime", Reason: "maxTimeMS must not be negative"}
	}
	f := operation.FindAndModify{Collection: coll.name, Query: q, Remove: s.remove, Update: u, New: s.returnDoc == After,
		Upsert: s.upsert, BypassDocumentValidation: s.bypass, MaxTime: s.maxTime}
	var vals [4]bson.RawValue
	for i, x := range []struct {
		name string
		v    any
	}{{"Sort", s.sort}, {"Projection", s.projection}, {"Collation", s.collation}, {"Let", s.let}} {
		if vals[i], err = marshalDocValue(s.optArg+x.name, x.v); err != nil {
			return operation.FindAndModify{}, err
		}
	}
	f.Sort, f.Fields, f.Collation, f.Let = vals[0], vals[1], vals[2], vals[3]
	if f.Hint, err = marshalHint(s.optArg+"Hint", s.hint); err != nil {
		return operation.FindAndModify{}, err
	}
	if f.Comment, err = marshalValue(s.optArg+"Comment", s.comment); err != nil {
		return operation.FindAndModify{}, err
	}
	if f.ArrayFilters, err = marshalDocArray(s.optArg+"ArrayFilters", s.arrayFilters); err != nil {
		return operation.FindAndModify{}, err
	}
	return f, nil
}

func (coll *Collection) findAndModify(ctx context.Context, filter any, s *famSpec) *SingleResult {
	if err := coll.ready(); err != nil {
		return &SingleResult{err: err}
	}
	coll, err := coll.override(strings.TrimSuffix(s.optArg, "."), nil, s.wc, nil)
	if err != nil {
		return &SingleResult{err: err}
	}
	f, err := coll.famCommand(filter, s)
	if err != nil {
		return &SingleResult{err: err}
	}
	cmd := f.Command()
	op, err := coll.writeOp("findAndModify", cmd, nil)
	if err != nil {
		return &SingleResult{err: err}
	}
	hintCheck := func(operation.ServerLimits) error { return nil }
	if s.hint != nil && op.Unacknowledged {
		hintCheck = unacknowledgedHintCheck(s.optArg + "Hint")
	}
	op.Check = func(l operation.ServerLimits) error {
		if !s.remove {
			if err := operation.CheckFindAndModifySize(cmd, l); err != nil {
				return &ArgumentError{Argument: s.docArg, Err: ErrDocumentTooLarge, Reason: err.Error()}
			}
		}
		return hintCheck(l)
	}
	res, err := coll.run(ctx, op)
	if err != nil {
		if res.Body != nil && isWriteConcernOnly(err) {
			// The change was made; the write concern was not satisfied.
			wr, perr := parseWriteReply(res.Body, 0)
			if perr != nil {
				return &SingleResult{err: &OperationError{Op: "findAndModify", Address: res.Address, Err: perr}}
			}
			return &SingleResult{err: &OperationError{Op: "findAndModify", Address: res.Address,
				Err: &WriteException{WriteConcernError: wr.wce, Labels: wr.labels, Raw: res.Body}}}
		}
		return &SingleResult{err: err}
	}
	if op.Unacknowledged {
		return &SingleResult{err: ErrUnacknowledgedWrite}
	}
	d, found, err := parseFindAndModifyReply(res.Body)
	if err != nil {
		return &SingleResult{err: &OperationError{Op: "findAndModify", Address: res.Address, Err: err}}
	}
	if !found {
		return &SingleResult{err: ErrNoDocuments}
	}
	return &SingleResult{doc: d}
}

// parseFindAndModifyReply reads a findAndModify reply
// (operation.ReadFindAndModifyReply); a malformed one is a *ReplyError.
func parseFindAndModifyReply(body bson.Raw) (doc bson.Raw, found bool, err error) {
	doc, found, err = operation.ReadFindAndModifyReply(body)
	return doc, found, publicError(err)
}
