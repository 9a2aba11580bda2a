package operation

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/mongoscope/mongoscope/bson"
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

	batch    bson.Raw // the current batch, a BSON array
	it       bson.RawIter
	left     int // documents left in batch
	returned int64
	// postBatchResumeToken is the last reply's, for change streams.
	postBatchResumeToken bson.Raw
	closed               bool
}

// CursorError is a reply whose cursor document is malformed.
type CursorError struct {
	Reason string
}

func (e *CursorError) Error() string { return "malformed cursor reply: " + e.Reason }

// NewCursor reads the cursor a command opened from its result: the first
// batch, the id and the namespace. It takes over res.Binding.
func NewCursor(x *Executor, db string, res Result, opts CursorOptions) (*Cursor, error) {
	c := &Cursor{x: x, db: db, opts: opts, binding: res.Binding}
	if err := c.load(res.Body, "firstBatch"); err != nil {
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

// load takes the cursor document of body: id, ns and the batch under key.
func (c *Cursor) load(body bson.Raw, key string) error {
	cv, err := body.LookupErr("cursor")
	if err != nil {
		return &CursorError{Reason: `the reply has no "cursor" document`}
	}
	cur, ok := cv.DocumentOK()
	if !ok {
		return &CursorError{Reason: `"cursor" is not a document`}
	}
	var batch bson.Raw
	var haveID, haveBatch bool
	it := cur.Iter()
	for it.Next() {
		v := it.Value()
		switch it.Key() {
		case "id":
			id, ok := v.AsInt64OK()
			if !ok {
				return &CursorError{Reason: fmt.Sprintf(`"cursor.id" is a %s, not a number`, v.Type)}
			}
			c.id, haveID = id, true
		case "ns":
			ns, ok := v.StringValueOK()
			if !ok {
				return &CursorError{Reason: `"cursor.ns" is not a string`}
			}
			if db, coll, ok := strings.Cut(ns, "."); ok {
				c.db, c.coll = db, coll
			}
		case key:
			a, ok := v.ArrayOK()
			if !ok {
				return &CursorError{Reason: fmt.Sprintf(`"cursor.%s" is not an array`, key)}
			}
			batch, haveBatch = a, true
		case "postBatchResumeToken":
			if d, ok := v.DocumentOK(); ok {
				c.postBatchResumeToken = d
			}
		}
	}
	if err := it.Err(); err != nil {
		return &CursorError{Reason: err.Error()}
	}
	if !haveID {
		return &CursorError{Reason: `"cursor.id" is missing`}
	}
	if !haveBatch {
		return &CursorError{Reason: fmt.Sprintf(`"cursor.%s" is missing`, key)}
	}
	c.setBatch(batch)
	return nil
}

func (c *Cursor) setBatch(batch bson.Raw) {
	c.batch = batch
	c.left = 0
	it := batch.Iter()
	for it.Next() {
		c.left++
	}
	c.it = batch.Iter()
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
		return nil, false, nil
	}
	if !c.it.Next() {
		c.left = 0
		if err := c.it.Err(); err != nil {
			return nil, false, &CursorError{Reason: err.Error()}
		}
		return nil, false, nil
	}
	c.left--
	c.returned++
	d, ok := c.it.Value().DocumentOK()
	if !ok {
		return nil, false, &CursorError{Reason: fmt.Sprintf("a batch element is a %s, not a document", c.it.Value().Type)}
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
	res, err := c.x.Execute(ctx, &Op{Name: "getMore", DB: c.db, Collection: c.coll, Command: cmd.Build(), Binding: c.binding})
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
	if err := c.load(res.Body, "nextBatch"); err != nil {
		return err
	}
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
		_, err = c.x.Execute(ctx, &Op{Name: "killCursors", DB: c.db, Collection: c.coll, Command: cmd.Build(), Binding: c.binding})
		c.id = 0
	}
	c.x.Release(ctx, c.binding)
	c.binding = nil
	c.left = 0
	return err
}

// Abandon releases the cursor's session and connection without killing
// it on the server, which no longer has it (or cannot be reached).
func (c *Cursor) Abandon(ctx context.Context) {
	c.closed, c.id, c.left = true, 0, 0
	c.x.Release(ctx, c.binding)
	c.binding = nil
}

func int64Value(v int64) bson.RawValue {
	return bson.RawValue{Type: bson.TypeInt64, Value: bson.AppendInt64(nil, v)}
}

// StringValue returns s as a RawValue.
func StringValue(s string) bson.RawValue {
	return bson.RawValue{Type: bson.TypeString, Value: bson.AppendString(nil, s)}
}
