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

// writeKind is the command a model goes into.
type writeKind int

const (
	kindInsert writeKind = iota
	kindUpdate
	kindDelete
)

var kindCommand = [...]struct{ name, identifier string }{
	kindInsert: {"insert", "documents"},
	kindUpdate: {"update", "updates"},
	kindDelete: {"delete", "deletes"},
}

// bulkGroup is the statements of one kind that go in one run of commands
// (split by the server's limits); idx maps each to its model's index.
type bulkGroup struct {
	kind  writeKind
	stmts []bson.Raw
	idx   []int
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

	var groups []*bulkGroup
	var byKind [3]*bulkGroup
	ids := map[int]any{}
	hintArg := ""
	for i, m := range models {
		kind, raw, hint, err := encodeModel(m, indexArg("models", i))
		if err != nil {
			return nil, err
		}
		if kind == kindInsert {
			var id bson.RawValue
			raw, id = ensureID(raw)
			ids[i] = rawValueToAny(id)
		}
		if hint != "" && hintArg == "" {
			hintArg = hint
		}
		var g *bulkGroup
		switch {
		case ordered && len(groups) > 0 && groups[len(groups)-1].kind == kind:
			g = groups[len(groups)-1]
		case !ordered && byKind[kind] != nil:
			g = byKind[kind]
		default:
			g = &bulkGroup{kind: kind}
			groups = append(groups, g)
			byKind[kind] = g
		}
		g.stmts = append(g.stmts, raw)
		g.idx = append(g.idx, i)
	}
	cmds := make([]bson.Raw, len(groups))
	for i, g := range groups {
		var bypass *bool
		var let any
		if g.kind != kindDelete {
			bypass = o.BypassDocumentValidation
		}
		if g.kind != kindInsert {
			let = o.Let
		}
		wc, err := writeCommandFields(coll.name, ordered, bypass, let, o.Comment, "BulkWriteOptions.")
		if err != nil {
			return nil, err
		}
		cmds[i] = wc.Build(kindCommand[g.kind].name)
	}

	var bwe BulkWriteException
	res := &BulkWriteResult{InsertedIDs: map[int]any{}, UpsertedIDs: map[int]any{}}
	stopped := false
	for gi, g := range groups {
		if stopped {
			break
		}
		op, err := coll.writeOp(kindCommand[g.kind].name, cmds[gi], nil)
		if err != nil {
			return nil, err
		}
		res.Acknowledged = !op.Unacknowledged
		if hintArg != "" && op.Unacknowledged {
			// Checked on every command, the first one included, so that
			// nothing is sent when the server is too old.
			op.Check = unacknowledgedHintCheck(hintArg)
		}
		bt := &operation.Batch{Identifier: kindCommand[g.kind].identifier}
		if g.kind != kindInsert {
			bt.Slack = operation.StatementSlack
		}
		op.Batch = bt
		for off := 0; off < len(g.stmts); {
			bt.Docs, bt.Sent = g.stmts[off:], 0
			wr, addr, err := coll.runWrite(ctx, op, off)
			if err != nil {
				err = tooLarge(err, indexArg("models", g.idx[off]))
				if len(bwe.WriteErrors) > 0 || len(bwe.WriteConcernErrors) > 0 {
					bwe.PartialResult = res
					return nil, errors.Join(&OperationError{Op: "bulkWrite", Address: addr, Err: &bwe}, err)
				}
				return nil, err
			}
			if op.Unacknowledged {
				off += max(bt.Sent, 1)
				continue
			}
			failed := map[int]bool{}
			for k := range wr.writeErrors {
				we := &wr.writeErrors[k]
				if we.Index >= off && we.Index < off+bt.Sent {
					failed[we.Index] = true
					we.Index = g.idx[we.Index]
				}
			}
			switch g.kind {
			case kindInsert:
				res.InsertedCount += wr.n
				for k := off; k < off+bt.Sent; k++ {
					if !failed[k] && !(ordered && len(wr.writeErrors) > 0 && k > firstFailed(failed)) {
						res.InsertedIDs[g.idx[k]] = ids[g.idx[k]]
					}
				}
			case kindUpdate:
				res.MatchedCount += wr.n - int64(len(wr.upserted))
				res.ModifiedCount += wr.nModified
				res.UpsertedCount += int64(len(wr.upserted))
				for _, u := range wr.upserted {
					if u.index >= off && u.index < off+bt.Sent {
						res.UpsertedIDs[g.idx[u.index]] = rawValueToAny(u.id)
					}
				}
			case kindDelete:
				res.DeletedCount += wr.n
			}
			bwe.WriteErrors = append(bwe.WriteErrors, wr.writeErrors...)
			if wr.wce != nil {
				bwe.WriteConcernErrors = append(bwe.WriteConcernErrors, *wr.wce)
			}
			bwe.Labels = append(bwe.Labels, wr.labels...)
			if ordered && len(wr.writeErrors) > 0 {
				stopped = true
				break
			}
			if bt.Sent == 0 {
				break
			}
			off += bt.Sent
		}
	}
	if !res.Acknowledged {
		return &BulkWriteResult{}, nil
	}
	if len(bwe.WriteErrors) > 0 || len(bwe.WriteConcernErrors) > 0 {
		bwe.PartialResult = res
		return nil, &OperationError{Op: "bulkWrite", Err: &bwe}
	}
	return res, nil
}

// firstFailed returns the smallest batch position in failed.
func firstFailed(failed map[int]bool) int {
	first := -1
	for k := range failed {
		if first < 0 || k < first {
			first = k
		}
	}
	return first
}

// encodeModel checks and encodes one model; arg is "models[i]". hint
// names the model's hint, when it has one.
func encodeModel(m WriteModel, arg string) (kind writeKind, raw bson.Raw, hint string, err error) {
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
		return kindInsert, raw, "", err
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
		return kindUpdate, raw, "", err // update hints need no check (see runUpdate)
	}
	ds.filterArg, ds.optArg = arg+".Filter", arg+"."
	raw, err = ds.encode()
	return kindDelete, raw, ds.hintArg(), err
}
