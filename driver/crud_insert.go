package driver

import (
	"context"
	"encoding/binary"
	"errors"
	"strconv"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/operation"
)

// InsertOneOptions are the options of InsertOne.
type InsertOneOptions struct {
	// BypassDocumentValidation skips the collection's validator.
	BypassDocumentValidation *bool
	// Comment is attached to the command, for the server's logs and
	// profiler.
	Comment any
	// WriteConcern overrides the collection's for this operation; nil
	// keeps the collection's.
	WriteConcern *WriteConcern
}

// InsertManyOptions are the options of InsertMany.
type InsertManyOptions struct {
	// Ordered (the default, true) stops at the first failed document;
	// false tries every document.
	Ordered                  *bool
	BypassDocumentValidation *bool
	Comment                  any
	// WriteConcern overrides the collection's for this operation; nil
	// keeps the collection's.
	WriteConcern *WriteConcern
}

// InsertOne inserts doc (a struct, a map, a bson.D, a bson.Raw...). A
// document without an _id gets a new ObjectID, which the result reports.
// A refused document is a *WriteException inside the *OperationError.
func (coll *Collection) InsertOne(ctx context.Context, doc any, opts ...*InsertOneOptions) (*InsertOneResult, error) {
	if err := coll.ready(); err != nil {
		return nil, err
	}
	raw, err := marshalDoc("document", doc)
	if err != nil {
		return nil, err
	}
	raw, id := ensureID(raw)
	var o InsertOneOptions
	for _, x := range opts {
		if x != nil {
			if x.BypassDocumentValidation != nil {
				o.BypassDocumentValidation = x.BypassDocumentValidation
			}
			if x.Comment != nil {
				o.Comment = x.Comment
			}
			setPtr(&o.WriteConcern, x.WriteConcern)
		}
	}
	coll, err = coll.override("InsertOneOptions", nil, o.WriteConcern, nil)
	if err != nil {
		return nil, err
	}
	comment, err := marshalValue("InsertOneOptions.Comment", o.Comment)
	if err != nil {
		return nil, err
	}
	cmd := operation.NewCollectionCommand("insert", coll.name, 32).
		True("ordered", true).Bool("bypassDocumentValidation", o.BypassDocumentValidation).Value("comment", comment).Build()
	op, err := coll.writeOp("insert", cmd, nil)
	if err != nil {
		return nil, err
	}
	bt := &operation.Batch{Identifier: "documents", Docs: []bson.Raw{raw}}
	op.Batch = bt
	wr, addr, err := coll.runWrite(ctx, op, 0)
	if err != nil {
		return nil, tooLarge(err, "document")
	}
	res := &InsertOneResult{InsertedID: rawValueToAny(id), Acknowledged: !op.Unacknowledged}
	if werr := wr.exception(); werr != nil {
		return nil, &OperationError{Op: "insert", Address: addr, Err: werr}
	}
	return res, nil
}

// InsertMany inserts docs, a slice of documents, in as few commands as the
// server's limits allow (maxWriteBatchSize, maxMessageSizeBytes). An empty
// slice is refused. Failed documents are reported together in a
// *BulkWriteException inside the *OperationError, each with its index in
// docs; with Ordered (the default) the first failure stops the rest.
func (coll *Collection) InsertMany(ctx context.Context, docs []any, opts ...*InsertManyOptions) (*InsertManyResult, error) {
	if err := coll.ready(); err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return nil, &ArgumentError{Argument: "documents", Reason: "InsertMany needs at least one document"}
	}
	var o InsertManyOptions
	for _, x := range opts {
		if x != nil {
			if x.Ordered != nil {
				o.Ordered = x.Ordered
			}
			if x.BypassDocumentValidation != nil {
				o.BypassDocumentValidation = x.BypassDocumentValidation
			}
			if x.Comment != nil {
				o.Comment = x.Comment
			}
			setPtr(&o.WriteConcern, x.WriteConcern)
		}
	}
	coll, err := coll.override("InsertManyOptions", nil, o.WriteConcern, nil)
	if err != nil {
		return nil, err
	}
	ordered := o.Ordered == nil || *o.Ordered
	raws := make([]bson.Raw, len(docs))
	ids := make([]any, len(docs))
	for i, d := range docs {
		raw, err := marshalDoc(indexArg("documents", i), d)
		if err != nil {
			return nil, err
		}
		var id bson.RawValue
		raws[i], id = ensureID(raw)
		ids[i] = rawValueToAny(id)
	}
	comment, err := marshalValue("InsertManyOptions.Comment", o.Comment)
	if err != nil {
		return nil, err
	}
	cmd := operation.NewCollectionCommand("insert", coll.name, 32).
		Bool("ordered", &ordered).Bool("bypassDocumentValidation", o.BypassDocumentValidation).Value("comment", comment).Build()
	op, err := coll.writeOp("insert", cmd, nil)
	if err != nil {
		return nil, err
	}
	bt := &operation.Batch{Identifier: "documents"}
	op.Batch = bt
	var bwe BulkWriteException
	partial := &BulkWriteResult{InsertedIDs: map[int]any{}, Acknowledged: !op.Unacknowledged}
	failed := map[int]bool{}
	for off := 0; off < len(raws); {
		bt.Docs, bt.Sent = raws[off:], 0
		wr, addr, err := coll.runWrite(ctx, op, off)
		if err != nil {
			err = tooLarge(err, indexArg("documents", off))
			if len(bwe.WriteErrors) > 0 || len(bwe.WriteConcernErrors) > 0 {
				bwe.PartialResult = partial
				return nil, errors.Join(&OperationError{Op: "insert", Address: addr, Err: &bwe}, err)
			}
			return nil, err
		}
		partial.InsertedCount += wr.n
		for _, we := range wr.writeErrors {
			failed[we.Index] = true
		}
		for i := off; i < off+bt.Sent; i++ {
			if !failed[i] && !(ordered && len(wr.writeErrors) > 0 && i > wr.writeErrors[0].Index) {
				partial.InsertedIDs[i] = ids[i]
			}
		}
		bwe.WriteErrors = append(bwe.WriteErrors, wr.writeErrors...)
		if wr.wce != nil {
			bwe.WriteConcernErrors = append(bwe.WriteConcernErrors, *wr.wce)
		}
		bwe.Labels = append(bwe.Labels, wr.labels...)
		if ordered && len(wr.writeErrors) > 0 {
			break
		}
		off += bt.Sent
		if bt.Sent == 0 {
			break
		}
	}
	if len(bwe.WriteErrors) > 0 || len(bwe.WriteConcernErrors) > 0 {
		bwe.PartialResult = partial
		return nil, &OperationError{Op: "insert", Err: &bwe}
	}
	return &InsertManyResult{InsertedIDs: ids, Acknowledged: !op.Unacknowledged}, nil
}

// runWrite runs a write command and reads its reply; a write concern
// error or write errors are in the writeReply, any other failure is the
// error.
func (coll *Collection) runWrite(ctx context.Context, op *operation.Op, offset int) (writeReply, string, error) {
	res, err := coll.run(ctx, op)
	if res.Body == nil || (err != nil && !isWriteConcernOnly(err)) {
		if err == nil {
			err = &OperationError{Op: op.Name, Address: res.Address, Err: errors.New("no reply")}
		}
		return writeReply{}, res.Address, err
	}
	if op.Unacknowledged {
		return writeReply{}, res.Address, nil
	}
	wr, perr := parseWriteReply(res.Body, offset)
	if perr == nil && op.Batch != nil {
		perr = checkWriteReply(&wr, op.Name, offset, op.Batch.Sent)
	}
	if perr != nil {
		return writeReply{}, res.Address, &OperationError{Op: op.Name, Address: res.Address, Err: perr}
	}
	return wr, res.Address, nil
}

// isWriteConcernOnly tells whether err is only a write concern error (the
// write was applied; the reply says what happened).
func isWriteConcernOnly(err error) bool {
	var wce *WriteConcernError
	var ce *CommandError
	return errors.As(err, &wce) && !errors.As(err, &ce)
}

// exception returns the single-write failure the reply holds, or nil.
func (wr *writeReply) exception() error {
	if len(wr.writeErrors) == 0 && wr.wce == nil {
		return nil
	}
	return &WriteException{WriteErrors: wr.writeErrors, WriteConcernError: wr.wce, Labels: wr.labels}
}

// ensureID returns doc with an _id, putting a new ObjectID first when it
// has none, and the _id's value.
func ensureID(doc bson.Raw) (bson.Raw, bson.RawValue) {
	if v, err := doc.LookupErr("_id"); err == nil {
		return doc, v
	}
	id := bson.NewObjectID()
	b := make([]byte, 0, len(doc)+17)
	b = append(b, 0, 0, 0, 0)
	b = bson.AppendObjectIDElement(b, "_id", id)
	b = append(b, doc[4:]...)
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	return b, bson.RawValue{Type: bson.TypeObjectID, Value: b[9:21]}
}

func indexArg(arg string, i int) string {
	return arg + "[" + strconv.Itoa(i) + "]"
}
