package driver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/operation"
	"github.com/mongoscope/mongoscope/internal/wire"
)

// UpdateOptions are the options of UpdateOne and UpdateMany. A nil field
// is left out of the command (the server's default applies).
type UpdateOptions struct {
	// ArrayFilters pick the array elements an update applies to through
	// $[identifier]; each is a document.
	ArrayFilters []any
	// BypassDocumentValidation skips the collection's validator.
	BypassDocumentValidation *bool
	// Collation is a document such as bson.D{{"locale", "en"}}.
	Collation any
	// Hint is an index name or key document.
	Hint any
	// Upsert inserts a document when none matches the filter.
	Upsert *bool
	// Let defines variables the filter and update can use as $$name
	// (servers 5.0+).
	Let     any
	Comment any
	// Sort picks the document UpdateOne updates when the filter matches
	// several (servers 8.0+). UpdateMany refuses it.
	Sort any
	// WriteConcern overrides the collection's for this operation; nil
	// keeps the collection's.
	WriteConcern *WriteConcern
}

// ReplaceOptions are the options of ReplaceOne.
type ReplaceOptions struct {
	BypassDocumentValidation *bool
	Collation                any
	Hint                     any
	Upsert                   *bool
	Let                      any
	Comment                  any
	// Sort picks the document replaced when the filter matches several
	// (servers 8.0+).
	Sort any
	// WriteConcern overrides the collection's for this operation; nil
	// keeps the collection's.
	WriteConcern *WriteConcern
}

func mergeUpdate(opts []*UpdateOptions) UpdateOptions {
	var o UpdateOptions
	for _, x := range opts {
		if x == nil {
			continue
		}
		if x.ArrayFilters != nil {
			o.ArrayFilters = x.ArrayFilters
		}
		setPtr(&o.BypassDocumentValidation, x.BypassDocumentValidation)
		setIf(&o.Collation, x.Collation)
		setIf(&o.Hint, x.Hint)
		setPtr(&o.Upsert, x.Upsert)
		setIf(&o.Let, x.Let)
		setIf(&o.Comment, x.Comment)
		setIf(&o.Sort, x.Sort)
		setPtr(&o.WriteConcern, x.WriteConcern)
	}
	return o
}

// UpdateOne updates the first document that matches filter (the first in
// Sort order when given). update is a document of update operators
// (bson.D{{"$set", ...}}) or an aggregation pipeline (a slice of stages);
// a document without operators is refused, as is an empty one. A refused
// update is a *WriteException inside the *OperationError.
func (coll *Collection) UpdateOne(ctx context.Context, filter, update any, opts ...*UpdateOptions) (*UpdateResult, error) {
	return coll.updateWith(ctx, filter, update, false, mergeUpdate(opts))
}

// UpdateMany updates every document that matches filter; see UpdateOne.
// UpdateOptions.Sort does not apply and is refused.
func (coll *Collection) UpdateMany(ctx context.Context, filter, update any, opts ...*UpdateOptions) (*UpdateResult, error) {
	o := mergeUpdate(opts)
	if o.Sort != nil {
		return nil, &ArgumentError{Argument: "UpdateOptions.Sort", Reason: "UpdateMany updates every matching document; sort applies only to UpdateOne and ReplaceOne"}
	}
	return coll.updateWith(ctx, filter, update, true, o)
}

// ReplaceOne replaces the first document that matches filter (the first
// in Sort order when given) with replacement, a whole document: one whose
// first field is an update operator ($set...) is refused.
func (coll *Collection) ReplaceOne(ctx context.Context, filter, replacement any, opts ...*ReplaceOptions) (*UpdateResult, error) {
	if err := coll.ready(); err != nil {
		return nil, err
	}
	var o ReplaceOptions
	for _, x := range opts {
		if x == nil {
			continue
		}
		setPtr(&o.BypassDocumentValidation, x.BypassDocumentValidation)
		setIf(&o.Collation, x.Collation)
		setIf(&o.Hint, x.Hint)
		setPtr(&o.Upsert, x.Upsert)
		setIf(&o.Let, x.Let)
		setIf(&o.Comment, x.Comment)
		setIf(&o.Sort, x.Sort)
		setPtr(&o.WriteConcern, x.WriteConcern)
	}
	coll, err := coll.override("ReplaceOptions", nil, o.WriteConcern, nil)
	if err != nil {
		return nil, err
	}
	st := updateStmt{filterArg: "filter", docArg: "replacement", optArg: "ReplaceOptions.",
		filter: filter, doc: replacement, replace: true,
		collation: o.Collation, hint: o.Hint, sort: o.Sort, upsert: o.Upsert}
	return coll.runUpdate(ctx, &st, o.BypassDocumentValidation, o.Let, o.Comment, "ReplaceOptions.")
}

func (coll *Collection) updateWith(ctx context.Context, filter, update any, multi bool, o UpdateOptions) (*UpdateResult, error) {
	if err := coll.ready(); err != nil {
		return nil, err
	}
	coll, err := coll.override("UpdateOptions", nil, o.WriteConcern, nil)
	if err != nil {
		return nil, err
	}
	st := updateStmt{filterArg: "filter", docArg: "update", optArg: "UpdateOptions.",
		filter: filter, doc: update, multi: multi, arrayFilters: o.ArrayFilters,
		collation: o.Collation, hint: o.Hint, sort: o.Sort, upsert: o.Upsert}
	return coll.runUpdate(ctx, &st, o.BypassDocumentValidation, o.Let, o.Comment, "UpdateOptions.")
}

// runUpdate sends one update statement.
func (coll *Collection) runUpdate(ctx context.Context, st *updateStmt, bypass *bool, let, comment any, optArg string) (*UpdateResult, error) {
	raw, err := st.encode()
	if err != nil {
		return nil, err
	}
	wc, err := writeCommandFields(coll.name, true, bypass, let, comment, optArg)
	if err != nil {
		return nil, err
	}
	u := operation.Update{WriteCommand: wc, Statements: []bson.Raw{raw}}
	cmd, bt := u.Command()
	// No hint check: update takes a hint from 4.2, the oldest server
	// supported, so an unacknowledged update may carry one (the CRUD
	// specification raises the error for delete and findAndModify only).
	wr, ack, err := coll.runOne(ctx, "update", cmd, bt, st.docArg, "")
	if err != nil || !ack {
		if err == nil {
			return &UpdateResult{}, nil
		}
		return nil, err
	}
	res := &UpdateResult{Acknowledged: true, MatchedCount: wr.n - int64(len(wr.upserted)), ModifiedCount: wr.nModified,
		UpsertedCount: int64(len(wr.upserted))}
	if len(wr.upserted) > 0 {
		res.UpsertedID = rawValueToAny(wr.upserted[0].ID)
	}
	return res, nil
}

// updateStmt is one update or replacement, from UpdateOne, UpdateMany,
// ReplaceOne or a bulk write's model; the *Arg fields name its parts in
// errors.
type updateStmt struct {
	filterArg, docArg, optArg string
	filter, doc               any
	replace, multi            bool
	arrayFilters              []any
	collation, hint, sort     any
	upsert                    *bool
}

// encode checks and encodes every part of the statement before anything
// is sent; operation.UpdateStatement lays it out.
func (st *updateStmt) encode() (bson.Raw, error) {
	q, err := marshalDoc(st.filterArg, st.filter)
	if err != nil {
		return nil, err
	}
	var u bson.RawValue
	if st.replace {
		u, err = marshalReplacement(st.docArg, st.doc)
	} else {
		u, err = marshalUpdate(st.docArg, st.doc)
	}
	if err != nil {
		return nil, err
	}
	af, err := marshalDocArray(st.optArg+"ArrayFilters", st.arrayFilters)
	if err != nil {
		return nil, err
	}
	collation, err := marshalDocValue(st.optArg+"Collation", st.collation)
	if err != nil {
		return nil, err
	}
	hint, err := marshalHint(st.optArg+"Hint", st.hint)
	if err != nil {
		return nil, err
	}
	sort, err := marshalDocValue(st.optArg+"Sort", st.sort)
	if err != nil {
		return nil, err
	}
	s := operation.UpdateStatement{Filter: q, Update: u, Upsert: st.upsert, Multi: st.multi, ArrayFilters: af,
		Collation: collation, Hint: hint, Sort: sort}
	return s.Encode(), nil
}

// marshalUpdate encodes an update: a document whose first field is an
// update operator, or a pipeline (an array of stage documents). The CRUD
// specification has the driver check the first field only; the server
// refuses a document that mixes operators and fields.
func marshalUpdate(arg string, update any) (bson.RawValue, error) {
	var doc bson.Raw
	switch v := update.(type) {
	case nil:
		return bson.RawValue{}, &ArgumentError{Argument: arg, Reason: "the update is nil"}
	case bson.Raw, []byte:
		d, err := marshalDoc(arg, v)
		if err != nil {
			return bson.RawValue{}, err
		}
		doc = d
	default:
		t, b, err := bson.MarshalValue(update)
		if err != nil {
			return bson.RawValue{}, &ArgumentError{Argument: arg, Reason: err.Error(), Err: err}
		}
		switch t {
		case bson.TypeArray:
			p, err := marshalPipeline(arg, update)
			if err != nil {
				return bson.RawValue{}, err
			}
			return bson.RawValue{Type: bson.TypeArray, Value: p}, nil
		case bson.TypeEmbeddedDocument:
			doc = b
		default:
			return bson.RawValue{}, &ArgumentError{Argument: arg, Reason: fmt.Sprintf("the update is a %s, not a document of update operators or a pipeline", t)}
		}
	}
	it := doc.Iter()
	if !it.Next() {
		return bson.RawValue{}, &ArgumentError{Argument: arg, Reason: "the update document is empty; it needs update operators such as $set"}
	}
	if !strings.HasPrefix(it.Key(), "$") {
		return bson.RawValue{}, &ArgumentError{Argument: arg, Reason: fmt.Sprintf("the update document's first field %q is not an update operator such as $set (to replace a whole document, use ReplaceOne)", it.Key())}
	}
	return bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}, nil
}

// marshalReplacement encodes a replacement document, refusing one whose
// first field is an update operator.
func marshalReplacement(arg string, replacement any) (bson.RawValue, error) {
	doc, err := marshalDoc(arg, replacement)
	if err != nil {
		return bson.RawValue{}, err
	}
	it := doc.Iter()
	if it.Next() && strings.HasPrefix(it.Key(), "$") {
		return bson.RawValue{}, &ArgumentError{Argument: arg, Reason: fmt.Sprintf("the replacement's first field %q is an update operator (to update fields, use UpdateOne)", it.Key())}
	}
	return bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}, nil
}

// marshalDocArray encodes a slice of documents (arrayFilters) as an
// array; nil leaves it unset.
func marshalDocArray(arg string, docs []any) (bson.RawValue, error) {
	if docs == nil {
		return bson.RawValue{}, nil
	}
	st, b := bson.AppendDocumentStart(nil)
	for i, d := range docs {
		raw, err := marshalDoc(indexArg(arg, i), d)
		if err != nil {
			return bson.RawValue{}, err
		}
		b = bson.AppendDocumentElement(b, bson.ArrayKey(i), raw)
	}
	b, _ = bson.AppendDocumentEnd(b, st)
	return bson.RawValue{Type: bson.TypeArray, Value: b}, nil
}

// marshalHint encodes a hint: an index name or an index key document.
func marshalHint(arg string, hint any) (bson.RawValue, error) {
	v, err := marshalValue(arg, hint)
	if err != nil || v.Type == 0 {
		return v, err
	}
	if v.Type != bson.TypeString && v.Type != bson.TypeEmbeddedDocument {
		return bson.RawValue{}, &ArgumentError{Argument: arg, Reason: fmt.Sprintf("a hint is an index name or a key document, not a %s", v.Type)}
	}
	return v, nil
}

// writeCommandFields encodes the options of an insert, update or delete
// command (the statements go in the batch); optArg names them in errors.
func writeCommandFields(coll string, ordered bool, bypass *bool, let, comment any, optArg string) (operation.WriteCommand, error) {
	letV, err := marshalDocValue(optArg+"Let", let)
	if err != nil {
		return operation.WriteCommand{}, err
	}
	commentV, err := marshalValue(optArg+"Comment", comment)
	if err != nil {
		return operation.WriteCommand{}, err
	}
	return operation.WriteCommand{Collection: coll, Ordered: ordered, BypassDocumentValidation: bypass, Let: letV, Comment: commentV}, nil
}

// runOne sends a single-statement write. arg names the statement's
// document in a size error; hintArg, when not empty, names a delete's
// hint, which an unacknowledged write cannot carry to a server older than
// 4.4. ack is
// false for an unacknowledged write, whose reply says nothing.
func (coll *Collection) runOne(ctx context.Context, name string, cmd bson.Raw, bt *operation.Batch, arg, hintArg string) (writeReply, bool, error) {
	op, err := coll.writeOp(name, cmd, nil)
	if err != nil {
		return writeReply{}, false, err
	}
	op.Batch = bt
	if hintArg != "" && op.Unacknowledged {
		op.Check = unacknowledgedHintCheck(hintArg)
	}
	wr, addr, err := coll.runWrite(ctx, op, 0)
	if err != nil {
		return wr, false, tooLarge(err, arg)
	}
	if op.Unacknowledged {
		return wr, false, nil
	}
	if werr := wr.exception(); werr != nil {
		return wr, true, &OperationError{Op: name, Address: addr, Err: werr}
	}
	return wr, true, nil
}

// unacknowledgedHintCheck refuses, with an *ArgumentError naming arg, a
// hint on an unacknowledged delete or findAndModify to a server older
// than operation.CheckUnacknowledgedHint allows.
func unacknowledgedHintCheck(arg string) func(operation.ServerLimits) error {
	return func(l operation.ServerLimits) error {
		if err := operation.CheckUnacknowledgedHint(l); err != nil {
			return &ArgumentError{Argument: arg, Reason: err.Error()}
		}
		return nil
	}
}

// ErrDocumentTooLarge is the cause (in an *ArgumentError naming the
// argument) of a write whose document or statement is over the server's
// maxBsonObjectSize or maxMessageSizeBytes. Nothing was sent for it.
var ErrDocumentTooLarge = errors.New("driver: document over the server's size limit")

// tooLarge turns the executor's size error into an *ArgumentError naming
// arg; other errors pass through.
func tooLarge(err error, arg string) error {
	if err == nil || !errors.Is(err, operation.ErrTooLarge) {
		return err
	}
	reason := "over the server's size limits"
	var we *wire.Error
	if errors.As(err, &we) {
		// "document 0 is N bytes, over maxBsonObjectSize M": the index is
		// the batch's, not the caller's, so only the sizes are kept.
		if _, rest, ok := strings.Cut(we.Reason, " is "); ok {
			reason = rest
		}
	}
	return &ArgumentError{Argument: arg, Reason: reason, Err: ErrDocumentTooLarge}
}
