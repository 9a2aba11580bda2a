package driver

import (
	"context"
	"errors"
	"fmt"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/operation"
)

// WriteModel is one write of a BulkWrite: an InsertOneModel,
// UpdateOneModel, UpdateManyModel, ReplaceOneModel, DeleteOneModel or
// DeleteManyModel, as a value or a pointer. No other type implements it.
type WriteModel interface {
	writeModel()
}

// InsertOneModel inserts Document; one without an _id gets a new
// ObjectID, which BulkWriteResult.InsertedIDs reports.
type InsertOneModel struct {
	Document any
}

// UpdateOneModel updates the first document that matches Filter (in Sort
// order when given) with Update, a document of update operators or a
// pipeline, as UpdateOne does.
type UpdateOneModel struct {
	Filter       any
	Update       any
	ArrayFilters []any
	Collation    any
	Hint         any
	Upsert       *bool
	// Sort picks the document updated (servers 8.0+).
	Sort any
}

// UpdateManyModel updates every document that matches Filter, as
// UpdateMany does.
type UpdateManyModel struct {
	Filter       any
	Update       any
	ArrayFilters []any
	Collation    any
	Hint         any
	Upsert       *bool
}

// ReplaceOneModel replaces the first document that matches Filter with
// Replacement, as ReplaceOne does.
type ReplaceOneModel struct {
	Filter      any
	Replacement any
	Collation   any
	Hint        any
	Upsert      *bool
	// Sort picks the document replaced (servers 8.0+).
	Sort any
}

// DeleteOneModel deletes the first document that matches Filter.
type DeleteOneModel struct {
	Filter    any
	Collation any
	Hint      any
}

// DeleteManyModel deletes every document that matches Filter.
type DeleteManyModel struct {
	Filter    any
	Collation any
	Hint      any
}

func (InsertOneModel) writeModel()  {}
func (UpdateOneModel) writeModel()  {}
func (UpdateManyModel) writeModel() {}
func (ReplaceOneModel) writeModel() {}
func (DeleteOneModel) writeModel()  {}
func (DeleteManyModel) writeModel() {}

// BulkWriteOptions are the options of BulkWrite.
type BulkWriteOptions struct {
	// Ordered (the default, true) runs the writes in the order given and
	// stops at the first that fails; false runs them all, inserts,
	// updates and deletes each in their own commands, in no particular
	// order.
	Ordered                  *bool
	BypassDocumentValidation *bool
	Comment                  any
	// Let defines variables for the update and delete models' filters and
	// updates (servers 5.0+); inserts do not get it.
	Let any
	// WriteConcern overrides the collection's for this operation; nil
	// keeps the collection's.
	WriteConcern *WriteConcern
}

// BulkWrite runs models, in as few insert, update and delete commands as
// the server's limits (maxWriteBatchSize, maxMessageSizeBytes) allow:
// with Ordered (the default) each run of consecutive models of one kind
// goes together, in order, and the first failure stops the rest;
// unordered, all inserts, all updates and all deletes go together.
// Every model is checked before anything is sent: an empty models, a nil
// model or a bad argument is an *ArgumentError naming it ("models[3]",
// "models[3].Update"). Refused writes are reported together in a
// *BulkWriteException inside the *OperationError, each with its index in
// models, with what the others did in its PartialResult.
func (coll *Collection) BulkWrite(ctx context.Context, models []WriteModel, opts ...*BulkWriteOptions) (*BulkWriteResult, error) {
	if err := coll.ready(); err != nil {
		return nil, err
	}
	ctx, cancel := coll.whole(ctx)
	defer cancel()
	if len(models) == 0 {
		return nil, &ArgumentError{Argument: "models", Reason: "BulkWrite needs at least one write model"}
	}
	var o BulkWriteOptions
	for _, x := range opts {
		if x == nil {
			continue
		}
		setPtr(&o.Ordered, x.Ordered)
		setPtr(&o.BypassDocumentValidation, x.BypassDocumentValidation)
		setIf(&o.Comment, x.Comment)
		setIf(&o.Let, x.Let)
		setPtr(&o.WriteConcern, x.WriteConcern)
	}
	coll, err := coll.override("BulkWriteOptions", nil, o.WriteConcern, nil)
	if err != nil {
		return nil, err
	}
	ordered := o.Ordered == nil || *o.Ordered
	wc, err := writeCommandFields(coll.name, ordered, o.BypassDocumentValidation, o.Let, o.Comment, "BulkWriteOptions.")
	if err != nil {
		return nil, err
	}
	bw := operation.BulkWrite{WriteCommand: wc}
	ids := map[int]any{}
	hintArg := ""
	for i, m := range models {
		kind, raw, hint, err := encodeModel(m, indexArg("models", i))
		if err != nil {
			return nil, err
		}
		if kind == operation.InsertKind {
			var id bson.RawValue
			raw, id = ensureID(raw)
			ids[i] = rawValueToAny(id)
		}
		if hint != "" && hintArg == "" {
			hintArg = hint
		}
		bw.Add(kind, raw, i)
	}

	base := coll.writeBase()
	base.Retry = operation.RetryWrite // per batch, unless a statement is multi
	if hintArg != "" && base.Unacknowledged {
		// Checked on every command, the first one included, so that
		// nothing is sent when the server is too old.
		base.Check = unacknowledgedHintCheck(hintArg)
	}
	defer coll.db.client.shareImplicitSession(ctx, &base)()
	bounded := false
	r, failure := bw.Run(ctx, &base, boundedExec(coll.execWrite, &bounded))
	res := &BulkWriteResult{InsertedCount: r.Inserted, MatchedCount: r.Matched, ModifiedCount: r.Modified,
		DeletedCount: r.Deleted, UpsertedCount: r.Upserts, InsertedIDs: map[int]any{}, UpsertedIDs: map[int]any{},
		Acknowledged: r.Acknowledged}
	for _, i := range r.InsertedIndexes {
		res.InsertedIDs[i] = ids[i]
	}
	for _, u := range r.Upserted {
		res.UpsertedIDs[u.Index] = rawValueToAny(u.ID)
	}
	var bwe *BulkWriteException
	if len(r.WriteErrors) > 0 || len(r.WriteConcernErrors) > 0 {
		bwe = bulkWriteException(r.WriteErrors, r.WriteConcernErrors, r.Labels)
		bwe.PartialResult = res
	}
	if failure != nil {
		err := tooLarge((*bulkFailure)(failure).err(), indexArg("models", failure.Index))
		var ae *ArgumentError
		if bwe == nil && !errors.As(err, &ae) {
			// The bulk write failed on the way (a network or server
			// error, after its retry): what the earlier commands did is
			// reported, as with write errors.
			bwe = &BulkWriteException{Labels: r.Labels, PartialResult: res}
		}
		if bwe != nil {
			return nil, errors.Join(&OperationError{Op: "bulkWrite", Address: failure.Address, Err: timeoutWriteErrors(bounded, bwe.WriteErrors, bwe)}, err)
		}
		return nil, err
	}
	if !res.Acknowledged {
		return &BulkWriteResult{}, nil
	}
	if bwe != nil {
		return nil, &OperationError{Op: "bulkWrite", Err: timeoutWriteErrors(bounded, bwe.WriteErrors, bwe)}
	}
	return res, nil
}

// bulkWriteException makes the exception of a multi-statement write from
// what operation reports.
func bulkWriteException(wes []operation.WriteError, wces []operation.WriteConcernFailure, labels []string) *BulkWriteException {
	bwe := &BulkWriteException{Labels: labels}
	if len(wes) > 0 {
		bwe.WriteErrors = make([]WriteError, len(wes))
		for i, we := range wes {
			bwe.WriteErrors[i] = WriteError{Index: we.Index, Code: we.Code, CodeName: we.CodeName, Message: we.Message, Details: we.Details}
		}
	}
	for _, e := range wces {
		bwe.WriteConcernErrors = append(bwe.WriteConcernErrors,
			WriteConcernError{Code: e.Code, CodeName: e.CodeName, Message: e.Message, Details: e.Details, Labels: e.Labels})
	}
	return bwe
}

// bulkFailure is the error of a multi-command write that f stopped: the
// executor's, or a malformed reply's *ReplyError in an *OperationError.
type bulkFailure operation.BulkFailure

func (f *bulkFailure) err() error {
	if f.Reply {
		return &OperationError{Op: f.Op, Address: f.Address, Err: publicError(f.Err)}
	}
	return f.Err
}

// execWrite runs one command of a multi-command write for
// operation.BulkWrite: a write concern error comes back in the reply, to
// be read from it; any other failure is the error.
func (coll *Collection) execWrite(ctx context.Context, op *operation.Op) (operation.Result, error) {
	res, err := coll.run(ctx, op)
	if res.Body == nil || (err != nil && !isWriteConcernOnly(err)) {
		if err == nil {
			err = &OperationError{Op: op.Name, Address: res.Address, Err: errors.New("no reply")}
		}
		return res, err
	}
	return res, nil
}

// encodeModel checks and encodes one model; arg is "models[i]". hint
// names the model's hint, when it has one.
func encodeModel(m WriteModel, arg string) (kind operation.WriteKind, raw bson.Raw, hint string, err error) {
	nilModel := &ArgumentError{Argument: arg, Reason: "the write model is nil"}
	var us *updateStmt
	var ds *deleteStmt
	switch v := m.(type) {
	case nil:
		return 0, nil, "", nilModel
	case *InsertOneModel:
		if v == nil {
			return 0, nil, "", nilModel
		}
		return encodeModel(*v, arg)
	case InsertOneModel:
		raw, err = marshalDoc(arg+".Document", v.Document)
		return operation.InsertKind, raw, "", err
	case *UpdateOneModel:
		if v == nil {
			return 0, nil, "", nilModel
		}
		return encodeModel(*v, arg)
	case UpdateOneModel:
		us = &updateStmt{filter: v.Filter, doc: v.Update, docArg: arg + ".Update", arrayFilters: v.ArrayFilters,
			collation: v.Collation, hint: v.Hint, upsert: v.Upsert, sort: v.Sort}
	case *UpdateManyModel:
		if v == nil {
			return 0, nil, "", nilModel
		}
		return encodeModel(*v, arg)
	case UpdateManyModel:
		us = &updateStmt{filter: v.Filter, doc: v.Update, docArg: arg + ".Update", multi: true, arrayFilters: v.ArrayFilters,
			collation: v.Collation, hint: v.Hint, upsert: v.Upsert}
	case *ReplaceOneModel:
		if v == nil {
			return 0, nil, "", nilModel
		}
		return encodeModel(*v, arg)
	case ReplaceOneModel:
		us = &updateStmt{filter: v.Filter, doc: v.Replacement, docArg: arg + ".Replacement", replace: true,
			collation: v.Collation, hint: v.Hint, upsert: v.Upsert, sort: v.Sort}
	case *DeleteOneModel:
		if v == nil {
			return 0, nil, "", nilModel
		}
		return encodeModel(*v, arg)
	case DeleteOneModel:
		ds = &deleteStmt{filter: v.Filter, collation: v.Collation, hint: v.Hint}
	case *DeleteManyModel:
		if v == nil {
			return 0, nil, "", nilModel
		}
		return encodeModel(*v, arg)
	case DeleteManyModel:
		ds = &deleteStmt{filter: v.Filter, many: true, collation: v.Collation, hint: v.Hint}
	default:
		return 0, nil, "", &ArgumentError{Argument: arg, Reason: fmt.Sprintf("%T is not a write model", m)}
	}
	if us != nil {
		us.filterArg, us.optArg = arg+".Filter", arg+"."
		raw, err = us.encode()
		return operation.UpdateKind, raw, "", err // update hints need no check (see runUpdate)
	}
	ds.filterArg, ds.optArg = arg+".Filter", arg+"."
	raw, err = ds.encode()
	return operation.DeleteKind, raw, ds.hintArg(), err
}
