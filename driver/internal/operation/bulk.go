package operation

import (
	"context"

	"github.com/mongoscope/mongoscope/bson"
)

// WriteKind is the command a bulk write's statement goes into.
type WriteKind int

// The WriteKinds.
const (
	InsertKind WriteKind = iota
	UpdateKind
	DeleteKind
)

var writeKinds = [...]struct {
	name, identifier string
	slack            int
}{
	InsertKind: {"insert", "documents", 0},
	UpdateKind: {"update", "updates", StatementSlack},
	DeleteKind: {"delete", "deletes", StatementSlack},
}

// BulkWrite runs a bulk write's statements in as few insert, update and
// delete commands as the server's limits allow: ordered, each run of
// consecutive statements of one kind goes together, in order, and the
// first failure stops the rest; unordered, all inserts, all updates and
// all deletes go together. Add the statements, then Run.
type BulkWrite struct {
	// WriteCommand holds the commands' options: an insert gets no Let
	// and a delete no BypassDocumentValidation.
	WriteCommand

	groups []*bulkGroup
	byKind [3]*bulkGroup
}

// bulkGroup is the statements of one kind that go in one run of commands
// (split by the server's limits); idx maps each to its caller's index.
type bulkGroup struct {
	kind  WriteKind
	stmts []bson.Raw
	idx   []int
}

// Add adds the encoded statement stmt of the given kind; index is its
// place among the caller's statements, which results and errors report.
func (b *BulkWrite) Add(kind WriteKind, stmt bson.Raw, index int) {
	var g *bulkGroup
	switch {
	case b.Ordered && len(b.groups) > 0 && b.groups[len(b.groups)-1].kind == kind:
		g = b.groups[len(b.groups)-1]
	case !b.Ordered && b.byKind[kind] != nil:
		g = b.byKind[kind]
	default:
		g = &bulkGroup{kind: kind}
		b.groups = append(b.groups, g)
		b.byKind[kind] = g
	}
	g.stmts = append(g.stmts, stmt)
	g.idx = append(g.idx, index)
}

// BulkResult is what a bulk write did; indexes are the caller's.
type BulkResult struct {
	Acknowledged bool
	Inserted     int64
	Matched      int64
	Modified     int64
	Deleted      int64
	Upserts      int64
	// InsertedIndexes are the inserts that went in.
	InsertedIndexes []int
	// Upserted are the documents updates inserted.
	Upserted           []Upserted
	WriteErrors        []WriteError
	WriteConcernErrors []WriteConcernFailure
	Labels             []string
}

// WriteConcernFailure is a write concern error with the errorLabels of
// its reply.
type WriteConcernFailure struct {
	ServerError
	Labels []string
}

// BulkFailure is the error that stopped a bulk write.
type BulkFailure struct {
	// Err is the executor's error or, when Reply, the *ReplyError of a
	// malformed reply.
	Err   error
	Reply bool
	// Op is the command's name; Index is the caller's index of the first
	// statement of the batch that failed; Address is the server's.
	Op      string
	Index   int
	Address string
}

// WriteExecutor runs one command of a multi-command write. It returns a
// reply whose writeConcernError is to be read from its body with a nil
// error; any other error stops the write.
type WriteExecutor func(ctx context.Context, op *Op) (Result, error)

// Run sends the statements, each command on a copy of base (its DB,
// Collection, Selector, concerns and Check) through exec, one batch after
// another, reading each reply. It returns what was done and, when an
// error stopped it, the failure.
func (b *BulkWrite) Run(ctx context.Context, base *Op, exec WriteExecutor) (BulkResult, *BulkFailure) {
	var res BulkResult
	for _, g := range b.groups {
		wc := b.WriteCommand
		if g.kind == DeleteKind {
			wc.BypassDocumentValidation = nil
		}
		if g.kind == InsertKind {
			wc.Let = bson.RawValue{}
		}
		k := writeKinds[g.kind]
		op := new(Op)
		*op = *base
		op.Name, op.Command = k.name, wc.Build(k.name)
		bt := &Batch{Identifier: k.identifier, Slack: k.slack}
		op.Batch = bt
		res.Acknowledged = !op.Unacknowledged
		for off := 0; off < len(g.stmts); {
			bt.Docs, bt.Sent = g.stmts[off:], 0
			r, err := exec(ctx, op)
			if err != nil {
				return res, &BulkFailure{Err: err, Op: k.name, Index: g.idx[off], Address: r.Address}
			}
			if op.Unacknowledged {
				off += max(bt.Sent, 1)
				continue
			}
			wr, err := ReadWriteReply(r.Body, off)
			if err == nil {
				err = wr.Check(k.name, off, bt.Sent)
			}
			if err != nil {
				return res, &BulkFailure{Err: err, Reply: true, Op: k.name, Index: g.idx[off], Address: r.Address}
			}
			if b.merge(&res, g, &wr, off, bt.Sent) {
				return res, nil
			}
			if bt.Sent == 0 {
				break
			}
			off += bt.Sent
		}
	}
	return res, nil
}

// merge adds the reply wr of the batch of g's statements from off to
// res, and tells whether an ordered write stops there.
func (b *BulkWrite) merge(res *BulkResult, g *bulkGroup, wr *WriteReply, off, sent int) (stop bool) {
	failed := map[int]bool{}
	first := -1 // the first failed statement's batch position
	for k := range wr.WriteErrors {
		we := &wr.WriteErrors[k]
		if we.Index >= off && we.Index < off+sent {
			failed[we.Index] = true
			if first < 0 || we.Index < first {
				first = we.Index
			}
			we.Index = g.idx[we.Index]
		}
	}
	switch g.kind {
	case InsertKind:
		res.Inserted += wr.N
		for k := off; k < off+sent; k++ {
			if !failed[k] && !(b.Ordered && len(wr.WriteErrors) > 0 && k > first) {
				res.InsertedIndexes = append(res.InsertedIndexes, g.idx[k])
			}
		}
	case UpdateKind:
		res.Matched += wr.N - int64(len(wr.Upserted))
		res.Modified += wr.NModified
		res.Upserts += int64(len(wr.Upserted))
		for _, u := range wr.Upserted {
			if u.Index >= off && u.Index < off+sent {
				res.Upserted = append(res.Upserted, Upserted{Index: g.idx[u.Index], ID: u.ID})
			}
		}
	case DeleteKind:
		res.Deleted += wr.N
	}
	res.WriteErrors = append(res.WriteErrors, wr.WriteErrors...)
	if wr.HaveWriteConcernError {
		res.WriteConcernErrors = append(res.WriteConcernErrors, WriteConcernFailure{ServerError: wr.WriteConcernError, Labels: wr.Labels})
	}
	res.Labels = append(res.Labels, wr.Labels...)
	return b.Ordered && len(wr.WriteErrors) > 0
}
