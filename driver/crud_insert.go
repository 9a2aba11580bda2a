package driver

import (
	"context"
	"encoding/binary"
	"errors"
	"strconv"
	"sync/atomic"

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
	var raw bson.Raw
	var id bson.RawValue
	switch doc.(type) {
	case bson.Raw, []byte:
		// Sent as it is, unless it needs an _id.
		r, err := marshalDoc("document", doc)
		if err != nil {
			return nil, err
		}
		raw, id = ensureID(r)
	default:
		out, oid, err := appendInsertDoc(make([]byte, 0, insertSizeHint()), doc, -1)
		if err != nil {
			return nil, err
		}
		raw, id = out, oid
		noteInsertSize(len(raw))
	}
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
	coll, err := coll.override("InsertOneOptions", nil, o.WriteConcern, nil)
	if err != nil {
		return nil, err
	}
	comment, err := marshalValue("InsertOneOptions.Comment", o.Comment)
	if err != nil {
		return nil, err
	}
	ins := operation.Insert{Collection: coll.name, Ordered: true, BypassDocumentValidation: o.BypassDocumentValidation,
		Comment: comment, Documents: []bson.Raw{raw}}
	cmd, bt := ins.Command()
	op, err := coll.writeOp("insert", cmd, nil)
	if err != nil {
		return nil, err
	}
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
	ctx, cancel := coll.whole(ctx)
	defer cancel()
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
	raws, ids, err := marshalInserts(docs)
	if err != nil {
		return nil, err
	}
	comment, err := marshalValue("InsertManyOptions.Comment", o.Comment)
	if err != nil {
		return nil, err
	}
	ins := operation.Insert{Collection: coll.name, Ordered: ordered, BypassDocumentValidation: o.BypassDocumentValidation,
		Comment: comment, Documents: raws}
	cmd, bt := ins.Command()
	op, err := coll.writeOp("insert", cmd, nil)
	if err != nil {
		return nil, err
	}
	op.Batch = bt
	defer coll.db.client.shareImplicitSession(ctx, op)()
	bounded := false
	r, failure := ins.Run(ctx, op, boundedExec(coll.execWrite, &bounded))
	var bwe *BulkWriteException
	if len(r.WriteErrors) > 0 || len(r.WriteConcernErrors) > 0 {
		bwe = bulkWriteException(r.WriteErrors, r.WriteConcernErrors, r.Labels)
		// The partial result's ids are only worked out when something
		// failed.
		p := &BulkWriteResult{InsertedIDs: make(map[int]any, r.Sent), InsertedCount: r.Inserted, Acknowledged: !op.Unacknowledged}
		for i := 0; i < r.Sent; i++ {
			if r.WentIn(i) {
				p.InsertedIDs[i] = ids[i]
			}
		}
		bwe.PartialResult = p
	}
	if failure != nil {
		err := (*bulkFailure)(failure).err()
		err = tooLarge(err, indexArg("documents", failure.Index))
		if bwe != nil {
			return nil, errors.Join(&OperationError{Op: "insert", Address: failure.Address, Err: timeoutWriteErrors(bounded, bwe.WriteErrors, bwe)}, err)
		}
		return nil, err
	}
	if bwe != nil {
		return nil, &OperationError{Op: "insert", Err: timeoutWriteErrors(bounded, bwe.WriteErrors, bwe)}
	}
	return &InsertManyResult{InsertedIDs: ids, Acknowledged: !op.Unacknowledged}, nil
}

// runWrite runs a write command and reads its reply; a write concern
// error or write errors are in the writeReply, any other failure is the
// error.
func (coll *Collection) runWrite(ctx context.Context, op *operation.Op, offset int) (writeReply, string, error) {
	res, err := coll.execWrite(ctx, op)
	if err != nil {
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
	wr.bounded = res.Bounded
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
	return timeoutWriteErrors(wr.bounded, wr.writeErrors,
		&WriteException{WriteErrors: wr.writeErrors, WriteConcernError: wr.wce, Labels: wr.labels})
}

// timeoutWriteErrors returns err, the exception of a write, inside a
// *TimeoutError when a positive timeoutMS bounded the write and one of
// its write errors is MaxTimeMSExpired: CSOT's error transformations
// count code 50 in the writeErrors array as in a top-level error or a
// write concern error (those the executor transforms itself). Only the
// code is checked, as the specification requires.
func timeoutWriteErrors(bounded bool, wes []WriteError, err error) error {
	if !bounded {
		return err
	}
	for _, we := range wes {
		if we.Code == 50 {
			return &TimeoutError{Stage: operation.StageServerSide, Err: err}
		}
	}
	return err
}

// boundedExec wraps exec, recording in *bounded whether a positive
// timeoutMS bounded any of the commands of a multi-command write.
func boundedExec(exec func(context.Context, *operation.Op) (operation.Result, error), bounded *bool) func(context.Context, *operation.Op) (operation.Result, error) {
	return func(ctx context.Context, op *operation.Op) (operation.Result, error) {
		res, err := exec(ctx, op)
		*bounded = *bounded || res.Bounded
		return res, err
	}
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

// insertSize is the size of the last document InsertOne encoded: the
// next one's buffer starts that big, so a large document is encoded
// without growing its buffer step by step.
var insertSize atomic.Int64

func insertSizeHint() int { return min(int(insertSize.Load())+64, 64<<20) }

func noteInsertSize(n int) { insertSize.Store(int64(n)) }

// appendInsertDoc appends doc (a struct, a map, a bson.D, a bson.Raw...)
// to dst as a document to insert, with a new ObjectID _id first when it
// has none, and returns the extended buffer (the document is its bytes
// from len(dst)) and the _id's value, which aliases it. index is the
// document's place in InsertMany's slice (-1 for InsertOne), for the
// argument an *ArgumentError names.
func appendInsertDoc(dst []byte, doc any, index int) ([]byte, bson.RawValue, error) {
	arg := func() string {
		if index < 0 {
			return "document"
		}
		return indexArg("documents", index)
	}
	start := len(dst)
	var out []byte
	// has: whether doc has an _id, when that is known without scanning
	// the encoded document.
	has, known := false, false
	switch v := doc.(type) {
	case nil:
		return dst, bson.RawValue{}, &ArgumentError{Argument: arg(), Reason: "the document is nil"}
	case bson.Raw, []byte:
		r, err := marshalDoc(arg(), v)
		if err != nil {
			return dst, bson.RawValue{}, err
		}
		out = append(dst, r...)
	default:
		switch d := doc.(type) {
		case bson.D:
			known = true
			for _, e := range d {
				if e.Key == "_id" {
					has = true
					break
				}
			}
		case bson.M:
			_, has = d["_id"]
			known = true
		}
		o, err := bson.MarshalAppend(dst, doc)
		if err != nil {
			return dst, bson.RawValue{}, &ArgumentError{Argument: arg(), Reason: err.Error(), Err: err}
		}
		out = o
	}
	if has || !known {
		if id, err := bson.Raw(out[start:]).LookupErr("_id"); err == nil {
			return out, id, nil
		}
	}
	// Make room for the _id element after the length, in place.
	const idLen = 1 + 4 + 12 // type, "_id\x00", ObjectID
	n := len(out)
	out = append(out, make([]byte, idLen)...)
	copy(out[start+4+idLen:], out[start+4:n])
	bson.AppendObjectIDElement(out[start+4:start+4], "_id", bson.NewObjectID())
	binary.LittleEndian.PutUint32(out[start:], uint32(len(out)-start))
	id := bson.RawValue{Type: bson.TypeObjectID, Value: out[start+9 : start+idLen+4 : start+idLen+4]}
	return out, id, nil
}

// marshalInserts encodes InsertMany's documents into one buffer, each
// with an _id, and returns them with their _id values.
func marshalInserts(docs []any) ([]bson.Raw, []any, error) {
	var buf []byte
	ends := make([]int, len(docs))
	// The ids, as the elements of one BSON array, are decoded together.
	st, arr := bson.AppendDocumentStart(make([]byte, 0, 24*len(docs)+16))
	for i, d := range docs {
		out, id, err := appendInsertDoc(buf, d, i)
		if err != nil {
			return nil, nil, err
		}
		buf = out
		arr = append(arr, byte(id.Type))
		arr = strconv.AppendInt(arr, int64(i), 10)
		arr = append(arr, 0)
		arr = append(arr, id.Value...)
		if i == 0 && len(docs) > 1 {
			// Room for the rest, if they are about as big as the first.
			if want := len(buf)*len(docs) + len(buf)/8 + 64; cap(buf) < want {
				buf = append(make([]byte, 0, want), buf...)
			}
		}
		ends[i] = len(buf)
	}
	arr, _ = bson.AppendDocumentEnd(arr, st)
	raws := make([]bson.Raw, len(docs))
	prev := 0
	for i, e := range ends {
		// Not capped at e: the connection sees that the documents lie end
		// to end and writes them in one piece.
		raws[i] = bson.Raw(buf[prev:e])
		prev = e
	}
	var ids []any
	if err := bson.UnmarshalValue(bson.TypeArray, arr, &ids); err != nil || len(ids) != len(docs) {
		ids = make([]any, len(docs))
		for i, r := range raws {
			id, _ := r.LookupErr("_id")
			ids[i] = rawValueToAny(id)
		}
	}
	return raws, ids, nil
}
