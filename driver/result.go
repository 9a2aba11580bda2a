package driver

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mongoscope/mongoscope/bson"
)

// ErrNoDocuments is what SingleResult reports when the operation matched
// no document (FindOne, FindOneAnd*).
var ErrNoDocuments = errors.New("driver: no documents in result")

// InsertOneResult is the outcome of InsertOne.
type InsertOneResult struct {
	// InsertedID is the document's _id: the one it had, or the ObjectID
	// the driver gave it.
	InsertedID any
	// Acknowledged is false for an unacknowledged write (w: 0).
	Acknowledged bool
}

// InsertManyResult is the outcome of InsertMany.
type InsertManyResult struct {
	// InsertedIDs are the documents' _ids, in the order given. After an
	// error, see BulkWriteException.PartialResult for what was inserted.
	InsertedIDs []any
	// Acknowledged is false for an unacknowledged write (w: 0).
	Acknowledged bool
}

// UpdateResult is the outcome of UpdateOne, UpdateMany and ReplaceOne.
type UpdateResult struct {
	MatchedCount  int64
	ModifiedCount int64
	UpsertedCount int64
	// UpsertedID is the _id of the document an upsert inserted, or nil.
	UpsertedID any
	// Acknowledged is false for an unacknowledged write (w: 0).
	Acknowledged bool
}

// DeleteResult is the outcome of DeleteOne and DeleteMany.
type DeleteResult struct {
	DeletedCount int64
	// Acknowledged is false for an unacknowledged write (w: 0).
	Acknowledged bool
}

// WriteError is one statement of a write that the server refused.
type WriteError struct {
	// Index is the statement's position among those the caller gave
	// (0 for a single-document write).
	Index    int
	Code     int32
	CodeName string
	Message  string
	// Details is the errInfo document (a validation failure's reasons).
	Details bson.Raw
}

func (e WriteError) Error() string {
	return fmt.Sprintf("write error at index %d: %s", e.Index, serverError(e.Code, e.CodeName, e.Message))
}

// WriteException is the failure of a single-statement write (InsertOne,
// UpdateOne, DeleteMany...): the write error, and the write concern error
// when the write was applied without the asked acknowledgement.
type WriteException struct {
	WriteErrors       []WriteError
	WriteConcernError *WriteConcernError
	// Labels are the reply's errorLabels.
	Labels []string
	// Raw is the server's reply.
	Raw bson.Raw
}

func (e *WriteException) Error() string {
	var parts []string
	for _, we := range e.WriteErrors {
		parts = append(parts, serverError(we.Code, we.CodeName, we.Message))
	}
	if e.WriteConcernError != nil {
		parts = append(parts, e.WriteConcernError.Error())
	}
	return strings.Join(parts, "; ") + labelsText(e.Labels)
}

// HasErrorLabel reports whether the reply carried label.
func (e *WriteException) HasErrorLabel(label string) bool { return hasLabel(e.Labels, label) }

// Unwrap returns the write concern error, so that errors.As finds it.
func (e *WriteException) Unwrap() error {
	if e.WriteConcernError != nil {
		return e.WriteConcernError
	}
	return nil
}

// BulkWriteException is the failure of a multi-statement write
// (InsertMany, BulkWrite): every refused statement with its index among
// those given, the write concern errors of the batches that had one, and
// what was done before the failure.
type BulkWriteException struct {
	WriteErrors []WriteError
	// WriteConcernErrors has one entry per batch whose reply carried a
	// write concern error.
	WriteConcernErrors []WriteConcernError
	Labels             []string
	// PartialResult is what the statements that succeeded did.
	PartialResult *BulkWriteResult
}

func (e *BulkWriteException) Error() string {
	var b strings.Builder
	b.WriteString("bulk write exception: ")
	for i, we := range e.WriteErrors {
		if i > 0 {
			b.WriteString("; ")
		}
		if i == 5 {
			fmt.Fprintf(&b, "and %d more write errors", len(e.WriteErrors)-5)
			break
		}
		b.WriteString(we.Error())
	}
	for i := range e.WriteConcernErrors {
		if i > 0 || len(e.WriteErrors) > 0 {
			b.WriteString("; ")
		}
		b.WriteString(e.WriteConcernErrors[i].Error())
	}
	b.WriteString(labelsText(e.Labels))
	return b.String()
}

// HasErrorLabel reports whether a reply carried label.
func (e *BulkWriteException) HasErrorLabel(label string) bool { return hasLabel(e.Labels, label) }

// Unwrap returns the write concern errors, so that errors.As finds them.
func (e *BulkWriteException) Unwrap() []error {
	out := make([]error, len(e.WriteConcernErrors))
	for i := range e.WriteConcernErrors {
		out[i] = &e.WriteConcernErrors[i]
	}
	return out
}

// BulkWriteResult is the outcome of BulkWrite (and the partial result of
// a failed InsertMany or BulkWrite).
type BulkWriteResult struct {
	InsertedCount int64
	MatchedCount  int64
	ModifiedCount int64
	DeletedCount  int64
	UpsertedCount int64
	// InsertedIDs maps the index of each inserted document's statement to
	// its _id.
	InsertedIDs map[int]any
	// UpsertedIDs maps the index of each upserting statement to the _id
	// of the document it inserted.
	UpsertedIDs map[int]any
	// Acknowledged is false for an unacknowledged write (w: 0).
	Acknowledged bool
}

// writeReply is the part of an insert, update or delete reply the
// results are made from.
type writeReply struct {
	n           int64
	haveN       bool
	nModified   int64
	upserted    []upserted
	writeErrors []WriteError
	wce         *WriteConcernError
	labels      []string
}

type upserted struct {
	index int
	id    bson.RawValue
}

// parseWriteReply reads a write command's reply; offset is added to the
// statement indexes (the batch's start among the caller's statements).
// What the results are made from must have its type: n and nModified are
// non-negative integers, each upserted entry has an index and an _id,
// each write error an index and a code, a write concern error a code,
// and errorLabels are strings. Anything else is a *ReplyError naming the
// field.
func parseWriteReply(body bson.Raw, offset int) (writeReply, error) {
	var r writeReply
	it := body.Iter()
	for it.Next() {
		v := it.Value()
		switch key := it.Key(); key {
		case "n", "nModified":
			n, ok := v.AsInt64OK()
			if !ok {
				return r, &ReplyError{Field: key, Reason: fmt.Sprintf("a %s, not an integer", v.Type)}
			}
			if n < 0 {
				return r, &ReplyError{Field: key, Reason: fmt.Sprintf("%d is negative", n)}
			}
			if key == "n" {
				r.n, r.haveN = n, true
			} else {
				r.nModified = n
			}
		case "upserted":
			err := eachEntry(v, "upserted", func(path string, d bson.Raw) error {
				idx, err := statementIndex(d, path, offset)
				if err != nil {
					return err
				}
				id, err := d.LookupErr("_id")
				if err != nil {
					return &ReplyError{Field: path + "._id", Reason: "missing"}
				}
				r.upserted = append(r.upserted, upserted{index: idx, id: id})
				return nil
			})
			if err != nil {
				return r, err
			}
		case "writeErrors":
			err := eachEntry(v, "writeErrors", func(path string, d bson.Raw) error {
				idx, err := statementIndex(d, path, offset)
				if err != nil {
					return err
				}
				we := WriteError{Index: idx}
				if we.Code, we.CodeName, we.Message, we.Details, err = errorFields(d, path); err != nil {
					return err
				}
				r.writeErrors = append(r.writeErrors, we)
				return nil
			})
			if err != nil {
				return r, err
			}
		case "writeConcernError":
			d, ok := v.DocumentOK()
			if !ok {
				return r, &ReplyError{Field: key, Reason: fmt.Sprintf("a %s, not a document", v.Type)}
			}
			w := &WriteConcernError{}
			var err error
			if w.Code, w.CodeName, w.Message, w.Details, err = errorFields(d, key); err != nil {
				return r, err
			}
			r.wce = w
		case "errorLabels":
			if err := eachEntry(v, key, nil); err != nil {
				return r, err
			}
			ai := v.Array().Iter()
			for ai.Next() {
				r.labels = append(r.labels, ai.Value().StringValue())
			}
		}
	}
	if err := it.Err(); err != nil {
		return r, &ReplyError{Field: "reply", Reason: err.Error()}
	}
	if r.wce != nil {
		r.wce.Labels = r.labels
	}
	return r, nil
}

// eachEntry walks the array v of a write reply (path is its field):
// with fn nil its elements must be strings (errorLabels), otherwise
// documents, which fn gets with their path.
func eachEntry(v bson.RawValue, path string, fn func(path string, d bson.Raw) error) error {
	arr, ok := v.ArrayOK()
	if !ok {
		return &ReplyError{Field: path, Reason: fmt.Sprintf("a %s, not an array", v.Type)}
	}
	ai := arr.Iter()
	for i := 0; ai.Next(); i++ {
		p := path + "." + strconv.Itoa(i)
		ev := ai.Value()
		if fn == nil {
			if ev.Type != bson.TypeString {
				return &ReplyError{Field: p, Reason: fmt.Sprintf("a %s, not a string", ev.Type)}
			}
			continue
		}
		d, ok := ev.DocumentOK()
		if !ok {
			return &ReplyError{Field: p, Reason: fmt.Sprintf("a %s, not a document", ev.Type)}
		}
		if err := fn(p, d); err != nil {
			return err
		}
	}
	if err := ai.Err(); err != nil {
		return &ReplyError{Field: path, Reason: err.Error()}
	}
	return nil
}

// statementIndex reads the index of an upserted entry or a write error:
// a statement's position in the batch, plus offset.
func statementIndex(d bson.Raw, path string, offset int) (int, error) {
	v, err := d.LookupErr("index")
	if err != nil {
		return 0, &ReplyError{Field: path + ".index", Reason: "missing"}
	}
	i, ok := v.AsInt64OK()
	if !ok {
		return 0, &ReplyError{Field: path + ".index", Reason: fmt.Sprintf("a %s, not an integer", v.Type)}
	}
	if i < 0 || i > math.MaxInt32 {
		return 0, &ReplyError{Field: path + ".index", Reason: fmt.Sprintf("%d is not a statement index", i)}
	}
	return int(i) + offset, nil
}

// errorFields reads the code (required, an int32), codeName and errmsg
// (strings) and errInfo (a document) of a write error or a write concern
// error.
func errorFields(d bson.Raw, path string) (code int32, codeName, msg string, info bson.Raw, err error) {
	haveCode := false
	it := d.Iter()
	for it.Next() {
		v := it.Value()
		var ok bool
		switch key := it.Key(); key {
		case "code":
			c, ok := v.AsInt64OK()
			if !ok || c < math.MinInt32 || c > math.MaxInt32 {
				return 0, "", "", nil, &ReplyError{Field: path + ".code", Reason: fmt.Sprintf("not a 32-bit integer (a %s)", v.Type)}
			}
			code, haveCode = int32(c), true
		case "codeName", "errmsg":
			var str string
			if str, ok = v.StringValueOK(); !ok {
				return 0, "", "", nil, &ReplyError{Field: path + "." + key, Reason: fmt.Sprintf("a %s, not a string", v.Type)}
			}
			if key == "codeName" {
				codeName = str
			} else {
				msg = str
			}
		case "errInfo":
			doc, ok := v.DocumentOK()
			if !ok {
				return 0, "", "", nil, &ReplyError{Field: path + ".errInfo", Reason: fmt.Sprintf("a %s, not a document", v.Type)}
			}
			info = append(bson.Raw(nil), doc...)
		}
	}
	if err := it.Err(); err != nil {
		return 0, "", "", nil, &ReplyError{Field: path, Reason: err.Error()}
	}
	if !haveCode {
		return 0, "", "", nil, &ReplyError{Field: path + ".code", Reason: "missing"}
	}
	return code, codeName, msg, info, nil
}

// checkWriteReply checks a write reply against its batch: sent statements
// starting at offset. The statement indexes must fall in the batch, once
// each; n is required; an insert cannot insert and refuse more documents
// than it sent; and an update
// cannot upsert more documents than it counts, or modify more than it matched.
func checkWriteReply(wr *writeReply, name string, offset, sent int) error {
	if !wr.haveN && len(wr.writeErrors) == 0 {
		// A reply with write errors and no n is taken as n: 0, as some
		// servers (FerretDB v1) answer a refused statement: the write
		// errors still reach the caller. Without write errors, the count
		// is the only result and its absence is an error.
		return &ReplyError{Field: "n", Reason: "missing"}
	}
	seen := make(map[int]bool, len(wr.writeErrors))
	for i, we := range wr.writeErrors {
		if we.Index < offset || we.Index >= offset+sent {
			return &ReplyError{Field: fmt.Sprintf("writeErrors.%d.index", i), Reason: fmt.Sprintf("%d is outside the batch of %d statements", we.Index-offset, sent)}
		}
		if seen[we.Index] {
			return &ReplyError{Field: fmt.Sprintf("writeErrors.%d.index", i), Reason: fmt.Sprintf("statement %d has a write error already", we.Index-offset)}
		}
		seen[we.Index] = true
	}
	for i, u := range wr.upserted {
		if u.index < offset || u.index >= offset+sent {
			return &ReplyError{Field: fmt.Sprintf("upserted.%d.index", i), Reason: fmt.Sprintf("%d is outside the batch of %d statements", u.index-offset, sent)}
		}
	}
	switch {
	case name == "insert" && wr.n+int64(len(wr.writeErrors)) > int64(sent):
		return &ReplyError{Field: "n", Reason: fmt.Sprintf("%d documents inserted and %d refused from a batch of %d", wr.n, len(wr.writeErrors), sent)}
	case int64(len(wr.upserted)) > wr.n:
		return &ReplyError{Field: "n", Reason: fmt.Sprintf("%d is less than the %d upserted documents", wr.n, len(wr.upserted))}
	case wr.nModified > wr.n-int64(len(wr.upserted)):
		return &ReplyError{Field: "nModified", Reason: fmt.Sprintf("%d is more than the %d documents matched", wr.nModified, wr.n-int64(len(wr.upserted)))}
	}
	return nil
}

// rawValueToAny decodes a single value into its natural Go type.
func rawValueToAny(v bson.RawValue) any {
	// The common _id types without the general decoder's setup.
	switch v.Type {
	case 0:
		return nil
	case bson.TypeObjectID:
		if id, ok := v.ObjectIDOK(); ok && len(v.Value) == 12 {
			return id
		}
	case bson.TypeInt32:
		if n, ok := v.Int32OK(); ok && len(v.Value) == 4 {
			return n
		}
	case bson.TypeInt64:
		if n, ok := v.Int64OK(); ok && len(v.Value) == 8 {
			return n
		}
	}
	var out any
	if err := bson.UnmarshalValue(v.Type, v.Value, &out); err != nil {
		return v
	}
	return out
}
