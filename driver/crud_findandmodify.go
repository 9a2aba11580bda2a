package driver

import (
	"context"
	"errors"
	"fmt"
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
	// must not be negative. Prefer the client's Timeout.
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

// famCommand builds the findAndModify command.
func (coll *Collection) famCommand(filter any, s *famSpec) (bson.Raw, error) {
	q, err := marshalDoc("filter", filter)
	if err != nil {
		return nil, err
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
		return nil, err
	}
	if s.maxTime != nil && *s.maxTime < 0 {
		return nil, &ArgumentError{Argument: s.optArg + "MaxTime", Reason: "maxTimeMS must not be negative"}
	}
	var vals [6]bson.RawValue
	for i, x := range []struct {
		name string
		v    any
	}{{"Sort", s.sort}, {"Projection", s.projection}, {"Collation", s.collation}, {"Let", s.let}} {
		if vals[i], err = marshalDocValue(s.optArg+x.name, x.v); err != nil {
			return nil, err
		}
	}
	if vals[4], err = marshalHint(s.optArg+"Hint", s.hint); err != nil {
		return nil, err
	}
	if vals[5], err = marshalValue(s.optArg+"Comment", s.comment); err != nil {
		return nil, err
	}
	af, err := marshalDocArray(s.optArg+"ArrayFilters", s.arrayFilters)
	if err != nil {
		return nil, err
	}
	cmd := operation.NewCollectionCommand("findAndModify", coll.name, len(q)+len(u.Value)+64).Doc("query", q).Value("sort", vals[0])
	if s.remove {
		cmd.True("remove", true)
	} else {
		cmd.Value("update", u).True("new", s.returnDoc == After)
	}
	cmd.Value("fields", vals[1]).Bool("upsert", s.upsert).Bool("bypassDocumentValidation", s.bypass)
	if s.maxTime != nil && *s.maxTime > 0 {
		ms := s.maxTime.Milliseconds()
		cmd.Int64("maxTimeMS", &ms)
	}
	cmd.Value("collation", vals[2]).Value("arrayFilters", af).Value("hint", vals[4]).Value("let", vals[3]).Value("comment", vals[5])
	return cmd.Build(), nil
}

func (coll *Collection) findAndModify(ctx context.Context, filter any, s *famSpec) *SingleResult {
	if err := coll.ready(); err != nil {
		return &SingleResult{err: err}
	}
	coll, err := coll.override(strings.TrimSuffix(s.optArg, "."), nil, s.wc, nil)
	if err != nil {
		return &SingleResult{err: err}
	}
	cmd, err := coll.famCommand(filter, s)
	if err != nil {
		return &SingleResult{err: err}
	}
	op, err := coll.writeOp("findAndModify", cmd, nil)
	if err != nil {
		return &SingleResult{err: err}
	}
	hintCheck := func(operation.ServerLimits) error { return nil }
	if s.hint != nil && op.Unacknowledged {
		hintCheck = unacknowledgedHintCheck(s.optArg + "Hint")
	}
	op.Check = func(l operation.ServerLimits) error {
		// The document goes in the command itself, which the server takes
		// up to maxBsonObjectSize plus the same 16 KiB allowance as an
		// update statement.
		maxSize := int(l.MaxBSONObjectSize)
		if maxSize <= 0 {
			maxSize = 16 << 20
		}
		if !s.remove && len(cmd) > maxSize+statementSlack {
			return &ArgumentError{Argument: s.docArg, Err: ErrDocumentTooLarge,
				Reason: fmt.Sprintf("the command is %d bytes, over maxBsonObjectSize %d and the 16 KiB allowance", len(cmd), maxSize)}
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

// parseFindAndModifyReply reads a findAndModify reply: value, which the
// server always sends, is the document or null (no document); the
// lastErrorObject, when there, must be a document whose n is a
// non-negative integer and whose updatedExisting is a boolean.
func parseFindAndModifyReply(body bson.Raw) (doc bson.Raw, found bool, err error) {
	if v, err := body.LookupErr("lastErrorObject"); err == nil {
		leo, ok := v.DocumentOK()
		if !ok {
			return nil, false, &ReplyError{Field: "lastErrorObject", Reason: fmt.Sprintf("a %s, not a document", v.Type)}
		}
		if n, err := leo.LookupErr("n"); err == nil {
			if i, ok := n.AsInt64OK(); !ok || i < 0 {
				return nil, false, &ReplyError{Field: "lastErrorObject.n", Reason: fmt.Sprintf("not a non-negative integer (a %s)", n.Type)}
			}
		}
		if u, err := leo.LookupErr("updatedExisting"); err == nil && u.Type != bson.TypeBoolean {
			return nil, false, &ReplyError{Field: "lastErrorObject.updatedExisting", Reason: fmt.Sprintf("a %s, not a boolean", u.Type)}
		}
	}
	v, err := body.LookupErr("value")
	if err != nil {
		return nil, false, &ReplyError{Field: "value", Reason: "missing"}
	}
	if v.Type == bson.TypeNull {
		return nil, false, nil
	}
	d, ok := v.DocumentOK()
	if !ok {
		return nil, false, &ReplyError{Field: "value", Reason: fmt.Sprintf("a %s, not a document or null", v.Type)}
	}
	return d, true, nil
}
