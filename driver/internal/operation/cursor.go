package operation

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/conn"
	"github.com/mongoscope/mongoscope/driver/internal/session"
)

// CursorOptions are what the getMore commands of a cursor carry.
type CursorOptions struct {
	// BatchSize is each getMore's batchSize; 0 leaves it to the server.
	BatchSize int32
	// MaxAwaitTime is each getMore's maxTimeMS on a tailable awaitData
	// cursor; 0 sends none.
	MaxAwaitTime time.Duration
	// Comment is sent with each getMore to servers from 4.4 (wire
	// version 9), and left out before.
	Comment bson.RawValue
	// Limit is the total number of documents the cursor returns (find's
	// limit); 0 is no limit. getMore's batchSize never asks for more.
	Limit int64
	// Tailable marks a tailable cursor, which stays open when a batch
	// comes back empty.
	Tailable bool
	// Timeout is how the opening operation's timeoutMS goes on (NewCursor
	// takes it from the Result).
	Timeout CursorTimeout
}

// Cursor is a server cursor: the batch in hand, and what it takes to get
// the next one (getMore on the cursor's server, with its session and, in
// load-balanced mode, its pinned connection) or to kill it.
type Cursor struct {
	x       *Executor
	db      string
	coll    string
	id      int64
	opts    CursorOptions
	binding *Binding
	// origin is the opening operation's monitor context (Result.Origin),
	// nil when no operation monitor is attached.
	origin context.Context

	batch bson.Raw // the current batch, a BSON array
	// buf is the big reply buffer batch lies in (Result.Buf), handed back
	// when the next batch replaces it or the cursor closes: the documents
	// Next returned are valid until then, as Cursor.Current says.
	buf      []byte
	it       bson.RawIter
	left     int // documents left in batch
	returned int64
	// postBatchResumeToken is the last reply's, for change streams.
	postBatchResumeToken bson.Raw
	closed               bool
}

// ReplyError is a reply that lacks what the operation reads, or has it
// with the wrong type or an impossible value: Field is the path in the
// reply ("cursor.id", "cursor.firstBatch.3").
type ReplyError struct {
	Field  string
	Reason string
}

func (e *ReplyError) Error() string { return "malformed server reply: " + e.Field + ": " + e.Reason }

// NewCursor reads the cursor a command opened from its result: the first
// batch, the id and the namespace. It takes over res.Binding.
func NewCursor(x *Executor, db string, res Result, opts CursorOptions) (*Cursor, error) {
	c := &Cursor{x: x, db: db, opts: opts, binding: res.Binding, buf: res.Buf, origin: res.Origin}
	if res.CursorTimeout.Set {
		c.opts.Timeout = res.CursorTimeout
	}
	if err := c.load(res.Body, "firstBatch", false); err != nil {
		x.Release(context.Background(), c.binding)
		c.binding = nil
		return nil, err
	}
	if c.id == 0 {
		x.Release(context.Background(), c.binding)
		c.binding = nil
	}
	return c, nil
}

// FirstDocument reads the first document of a cursor reply's firstBatch
// (FindOne, countDocuments' $group), checking the cursor document as
// NewCursor does; ok is false when the batch is empty.
func FirstDocument(body bson.Raw) (doc bson.Raw, ok bool, err error) {
	var c Cursor
	if err := c.load(body, "firstBatch", false); err != nil {
		return nil, false, err
	}
	return c.Next()
}

// load takes the cursor document of body: id, ns and the batch under key
// (every element of which must be a document). Nothing changes unless the
// whole cursor document is sound. A getMore's reply must carry the
// cursor's id, or 0.
func (c *Cursor) load(body bson.Raw, key string, getMore bool) error {
	cv, err := body.LookupErr("cursor")
	if err != nil {
		return &ReplyError{Field: "cursor", Reason: "missing"}
	}
	cur, ok := cv.DocumentOK()
	if !ok {
		return &ReplyError{Field: "cursor", Reason: fmt.Sprintf("a %s, not a document", cv.Type)}
	}
	var (
		batch         bson.Raw
		id            int64
		db, coll      = c.db, c.coll
		pbrt          bson.Raw
		n             int // documents in batch
		haveID, haveB bool
	)
	it := cur.Iter()
	for it.Next() {
		v := it.Value()
		switch it.Key() {
		case "id":
			if id, ok = v.AsInt64OK(); !ok {
				return &ReplyError{Field: "cursor.id", Reason: fmt.Sprintf("a %s, not an integer", v.Type)}
			}
			haveID = true
		case "ns":
			ns, ok := v.StringValueOK()
			if !ok {
				return &ReplyError{Field: "cursor.ns", Reason: fmt.Sprintf("a %s, not a string", v.Type)}
			}
			d, cl, ok := strings.Cut(ns, ".")
			if !ok || d == "" || cl == "" {
				return &ReplyError{Field: "cursor.ns", Reason: fmt.Sprintf("%q is not a namespace (database.collection)", ns)}
			}
			db, coll = d, cl
		case key:
			a, ok := v.ArrayOK()
			if !ok {
				return &ReplyError{Field: "cursor." + key, Reason: fmt.Sprintf("a %s, not an array", v.Type)}
			}
			bi := a.Iter()
			for n = 0; bi.Next(); n++ {
				if t := bi.Value().Type; t != bson.TypeEmbeddedDocument {
					return &ReplyError{Field: fmt.Sprintf("cursor.%s.%d", key, n), Reason: fmt.Sprintf("a %s, not a document", t)}
				}
			}
			if err := bi.Err(); err != nil {
				return &ReplyError{Field: "cursor." + key, Reason: err.Error()}
			}
			batch, haveB = a, true
		case "postBatchResumeToken":
			d, ok := v.DocumentOK()
			if !ok {
				return &ReplyError{Field: "cursor.postBatchResumeToken", Reason: fmt.Sprintf("a %s, not a document", v.Type)}
			}
			pbrt = d
		}
	}
	if err := it.Err(); err != nil {
		return &ReplyError{Field: "cursor", Reason: err.Error()}
	}
	if !haveID {
		return &ReplyError{Field: "cursor.id", Reason: "missing"}
	}
	if !haveB {
		return &ReplyError{Field: "cursor." + key, Reason: "missing"}
	}
	if getMore && id != 0 && id != c.id {
		return &ReplyError{Field: "cursor.id", Reason: fmt.Sprintf("%d is not the cursor's id %d", id, c.id)}
	}
	c.id, c.db, c.coll = id, db, coll
	if pbrt != nil {
		// A copy: the batch's buffer may be recycled while the token is
		// still the cursor's latest.
		c.postBatchResumeToken = append(c.postBatchResumeToken[:0:0], pbrt...)
	}
	c.batch, c.left, c.it = batch, n, batch.Iter()
	return nil
}

// ID returns the cursor id; 0 once the server has closed the cursor.
func (c *Cursor) ID() int64 { return c.id }

// Namespace returns the cursor's database and collection.
func (c *Cursor) Namespace() (db, coll string) { return c.db, c.coll }

// Remaining returns the number of documents left in the current batch.
func (c *Cursor) Remaining() int { return c.left }

// PostBatchResumeToken returns the last reply's postBatchResumeToken.
func (c *Cursor) PostBatchResumeToken() bson.Raw { return c.postBatchResumeToken }

// Next returns the next document of the current batch, and false when the
// batch is used up. A document that is not a document is an error.
func (c *Cursor) Next() (bson.Raw, bool, error) {
	if c.left == 0 {
		if c.id == 0 {
			// The caller moved past the last document: nothing reads
			// the batch any more.
			c.recycle()
		}
		return nil, false, nil
	}
	if !c.it.Next() {
		c.left = 0
		if err := c.it.Err(); err != nil {
			return nil, false, &ReplyError{Field: "cursor batch", Reason: err.Error()}
		}
		return nil, false, nil
	}
	c.left--
	c.returned++
	d, ok := c.it.Value().DocumentOK()
	if !ok {
		return nil, false, &ReplyError{Field: "cursor batch", Reason: fmt.Sprintf("an element is a %s, not a document", c.it.Value().Type)}
	}
	return d, true, nil
}

// Exhausted tells whether the server has no more documents for the
// cursor (and the batch is used up).
func (c *Cursor) Exhausted() bool { return c.id == 0 && c.left == 0 }

// GetMore fetches the next batch. The server closing the cursor sets the
// id to 0.
func (c *Cursor) GetMore(ctx context.Context) error {
	if c.id == 0 {
		return nil
	}
	if c.closed {
		return errors.New("the cursor is closed")
	}
	cmd := NewCommand("getMore", int64Value(c.id), 64).String("collection", c.coll)
	bs := c.opts.BatchSize
	if c.opts.Limit > 0 {
		// A rest past int32 (a limit over 2^31) leaves batchSize as it is:
		// truncating it would ask for a wrong, possibly tiny, batch.
		if rest := c.opts.Limit - c.returned; rest > 0 && rest <= math.MaxInt32 && (bs == 0 || int64(bs) > rest) {
			bs = int32(rest)
		}
	}
	if bs > 0 {
		cmd.Int32("batchSize", &bs)
	}
	if c.opts.MaxAwaitTime > 0 {
		ms := c.opts.MaxAwaitTime.Milliseconds()
		cmd.Int64("maxTimeMS", &ms)
	}
	if c.binding == nil || c.binding.wire >= 9 {
		// The CRUD specification: no comment on getMore before 4.4.
		cmd.Value("comment", c.opts.Comment)
	}
	if b := c.binding; b != nil && b.explicit != nil && b.explicit.Ended() {
		// An operation in an ended session (driver-sessions, endSession);
		// Close still kills the cursor with the session's lsid.
		return &Error{Op: "getMore", Address: b.Address, Err: session.ErrEnded}
	}
	op := &Op{Name: "getMore", DB: c.db, Collection: c.coll, Command: cmd.Build(), Binding: c.binding, Origin: c.origin}
	if ct := c.opts.Timeout; ct.Set {
		// CURSOR_LIFETIME: the rest of the cursor's budget; ITERATION: the
		// whole of it again (the driver bounds a tailable Next as a whole).
		op.Timeout = &ct.Timeout
		if !ct.Lifetime.IsZero() {
			op.Timeout, op.Deadline = &noLimit, ct.Lifetime
		}
	}
	res, err := c.x.Execute(ctx, op)
	if err != nil {
		if isNetwork(err) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			// The connection is gone or in an unknown state: a pinned
			// one must not serve another getMore.
			if c.binding != nil && c.binding.pinned != nil {
				c.binding.pinned.MarkErrored(err)
			}
		}
		return err
	}
	if err := c.load(res.Body, "nextBatch", true); err != nil {
		conn.RecycleBuffer(res.Buf)
		return &Error{Op: "getMore", Address: res.Address, Err: err}
	}
	// The previous batch is gone: its buffer can serve the next reply.
	conn.RecycleBuffer(c.buf)
	c.buf = res.Buf
	if c.id == 0 {
		c.x.Release(ctx, c.binding)
		c.binding = nil
	}
	return nil
}

// Close kills the cursor on the server if it is still open there, and
// releases its session and connection. It is safe to call twice.
func (c *Cursor) Close(ctx context.Context) error {
	if c.closed {
		return nil
	}
	c.closed = true
	var err error
	if c.id != 0 {
		cmd := NewCollectionCommand("killCursors", c.coll, 16)
		st, b := bson.AppendArrayElementStart(cmd.b, "cursors")
		b = bson.AppendInt64Element(b, "0", c.id)
		cmd.b, _ = bson.AppendDocumentEnd(b, st)
		op := &Op{Name: "killCursors", DB: c.db, Collection: c.coll, Command: cmd.Build(), Binding: c.binding, Origin: c.origin}
		if ct := c.opts.Timeout; ct.Set {
			op.Timeout = &ct.Timeout // refreshed for close, whatever the mode
		}
		_, err = c.x.Execute(ctx, op)
		c.id = 0
	}
	c.x.Release(ctx, c.binding)
	c.binding = nil
	c.left = 0
	c.recycle()
	return err
}

// recycle hands the current batch's big buffer back (Result.Buf); the
// batch is then gone.
func (c *Cursor) recycle() {
	if c.buf != nil {
		conn.RecycleBuffer(c.buf)
		c.buf, c.batch, c.it, c.left = nil, nil, bson.RawIter{}, 0
	}
}

// Abandon releases the cursor's session and connection without killing
// it on the server, which no longer has it (or cannot be reached).
func (c *Cursor) Abandon(ctx context.Context) {
	c.closed, c.id, c.left = true, 0, 0
	c.x.Release(ctx, c.binding)
	c.binding = nil
	c.recycle()
}

func int64Value(v int64) bson.RawValue {
	return bson.RawValue{Type: bson.TypeInt64, Value: bson.AppendInt64(nil, v)}
}

// StringValue returns s as a RawValue.
func StringValue(s string) bson.RawValue {
	return bson.RawValue{Type: bson.TypeString, Value: bson.AppendString(nil, s)}
}

// noLimit is timeoutMS 0.
var noLimit time.Duration

// IterationTimeout is the timeoutMS each Next of a cursor in timeoutMode
// ITERATION gets afresh (0: none).
func (c *Cursor) IterationTimeout() time.Duration {
	if c.opts.Timeout.Iteration {
		return c.opts.Timeout.Timeout
	}
	return 0
}

// RemainingOrZero is Remaining on a cursor that may be nil.
func (c *Cursor) RemainingOrZero() int {
	if c == nil {
		return 0
	}
	return c.left
}

// Pinned tells whether the cursor holds a pinned connection.
func (c *Cursor) Pinned() bool { return c.binding.Pinned() }

// CleanupBinding returns the binding to release if the cursor is dropped
// without Close or exhaustion (its owner registers Executor.Release as a
// runtime cleanup): its session then goes back to the pool, as the
// driver-sessions specification asks of runtimes with finalizers. It is
// nil when the cursor holds nothing, or holds a pinned connection, which
// only Close checks in (it must not go back with a cursor open on it).
func (c *Cursor) CleanupBinding() *Binding {
	if c.binding == nil || c.binding.pinned != nil {
		return nil
	}
	return c.binding
}
