package driver

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/operation"
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
// results are made from (operation.WriteReply), with the write errors and
// the write concern error as the driver reports them.
type writeReply struct {
	r           operation.WriteReply
	n           int64
	nModified   int64
	upserted    []operation.Upserted
	writeErrors []WriteError
	wce         *WriteConcernError
	labels      []string
	// bounded: a positive timeoutMS bounded the write (timeoutWriteErrors).
	bounded bool
}

// parseWriteReply reads a write command's reply
// (operation.ReadWriteReply); offset is added to the statement indexes. A
// malformed reply is a *ReplyError naming the field.
func parseWriteReply(body bson.Raw, offset int) (writeReply, error) {
	r, err := operation.ReadWriteReply(body, offset)
	if err != nil {
		return writeReply{}, publicError(err)
	}
	return newWriteReply(r), nil
}

// newWriteReply makes the driver's view of r.
func newWriteReply(r operation.WriteReply) writeReply {
	wr := writeReply{r: r, n: r.N, nModified: r.NModified, upserted: r.Upserted, labels: r.Labels}
	if len(r.WriteErrors) > 0 {
		wr.writeErrors = make([]WriteError, len(r.WriteErrors))
		for i, we := range r.WriteErrors {
			wr.writeErrors[i] = WriteError{Index: we.Index, Code: we.Code, CodeName: we.CodeName, Message: we.Message, Details: we.Details}
		}
	}
	if r.HaveWriteConcernError {
		e := &r.WriteConcernError
		wr.wce = &WriteConcernError{Code: e.Code, CodeName: e.CodeName, Message: e.Message, Details: e.Details, Labels: r.Labels}
	}
	return wr
}

// checkWriteReply checks a write reply against its batch
// (operation.WriteReply.Check): sent statements of the command name,
// starting at offset.
func checkWriteReply(wr *writeReply, name string, offset, sent int) error {
	return publicError(wr.r.Check(name, offset, sent))
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
