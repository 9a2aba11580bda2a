package operation

import (
	"context"

	"github.com/mongoscope/mongoscope/bson"
)

// Insert is an insert command with its documents, each with its _id.
type Insert struct {
	Collection               string
	Ordered                  bool
	BypassDocumentValidation *bool
	Comment                  bson.RawValue
	Documents                []bson.Raw
}

// Command returns the command and the Batch of its documents.
func (ins *Insert) Command() (bson.Raw, *Batch) {
	cmd := NewCollectionCommand("insert", ins.Collection, 32).Bool("ordered", &ins.Ordered).
		Bool("bypassDocumentValidation", ins.BypassDocumentValidation).Value("comment", ins.Comment).Build()
	return cmd, &Batch{Identifier: "documents", Docs: ins.Documents}
}

// InsertResult is what the batches of an insert did; indexes are the
// documents'.
type InsertResult struct {
	Inserted int64
	// Sent is how many documents, from the first, were sent.
	Sent int
	// FirstError is, for an ordered insert, the first refused document,
	// after which none went in; -1 otherwise.
	FirstError int
	// Failed are the refused documents (nil when none).
	Failed             map[int]bool
	WriteErrors        []WriteError
	WriteConcernErrors []WriteConcernFailure
	Labels             []string
}

// WentIn tells whether document i was inserted.
func (r *InsertResult) WentIn(i int) bool {
	return i < r.Sent && !r.Failed[i] && !(r.FirstError >= 0 && i > r.FirstError)
}

// Run sends the documents in as many commands as the server's limits
// need, through exec, op being the command's Op (from Command, with its
// Batch); each reply is read and checked. An ordered insert stops at the
// first refused document. It returns what was done and, when an error
// stopped it, the failure (Index is the first document of the batch that
// failed).
func (ins *Insert) Run(ctx context.Context, op *Op, exec WriteExecutor) (InsertResult, *BulkFailure) {
	r := InsertResult{FirstError: -1}
	bt := op.Batch
	docs := ins.Documents
	for off := 0; off < len(docs); {
		bt.Docs, bt.Sent = docs[off:], 0
		res, err := exec(ctx, op)
		if err != nil {
			return r, &BulkFailure{Err: err, Op: op.Name, Index: off, Address: res.Address}
		}
		var wr WriteReply
		if !op.Unacknowledged {
			if wr, err = ReadWriteReply(res.Body, off); err == nil {
				err = wr.Check(op.Name, off, bt.Sent)
			}
			if err != nil {
				return r, &BulkFailure{Err: err, Reply: true, Op: op.Name, Index: off, Address: res.Address}
			}
		}
		r.Inserted += wr.N
		for _, we := range wr.WriteErrors {
			if r.Failed == nil {
				r.Failed = map[int]bool{}
			}
			r.Failed[we.Index] = true
		}
		if ins.Ordered && len(wr.WriteErrors) > 0 {
			r.FirstError = wr.WriteErrors[0].Index
		}
		r.Sent = off + bt.Sent
		r.WriteErrors = append(r.WriteErrors, wr.WriteErrors...)
		if wr.HaveWriteConcernError {
			r.WriteConcernErrors = append(r.WriteConcernErrors, WriteConcernFailure{ServerError: wr.WriteConcernError, Labels: wr.Labels})
		}
		r.Labels = append(r.Labels, wr.Labels...)
		if ins.Ordered && len(wr.WriteErrors) > 0 {
			break
		}
		off += bt.Sent
		if bt.Sent == 0 {
			break
		}
	}
	return r, nil
}
