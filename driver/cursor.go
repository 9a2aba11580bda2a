package driver

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"runtime"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/operation"
)

// Cursor iterates over the documents a find, an aggregate or another
// cursor command returns, fetching batches with getMore from the server
// (and, in load-balanced mode, the connection) that opened it. A Cursor is
// not safe for concurrent use. Close it when done unless it was iterated
// to the end (Next returned false) or All emptied it.
//
//	cur, err := coll.Find(ctx, bson.D{{"qty", bson.D{{"$gt", 5}}}})
//	if err != nil { ... }
//	defer cur.Close(ctx)
//	for cur.Next(ctx) {
//		var item Item
//		if err := cur.Decode(&item); err != nil { ... }
//	}
//	if err := cur.Err(); err != nil { ... }
type Cursor struct {
	// Current is the document Next or TryNext last moved to. It is valid
	// until the next call to Next, TryNext or Close.
	Current bson.Raw

	client *Client
	oc     *operation.Cursor
	err    error
	// awaitData: an empty batch of a tailable cursor is not the end.
	tailable bool
	// failed is what Close still has to do for a cursor whose getMore
	// failed on a connection pinned to it (load-balanced mode): the
	// connection stays checked out until Close, as the load-balancers
	// specification asks. failAbandon: release without killCursors.
	failed, failAbandon bool
}

// newCursor wraps oc.
func newCursor(c *Client, oc *operation.Cursor, tailable bool) *Cursor {
	cur := &Cursor{client: c, oc: oc, tailable: tailable}
	if b := oc.CleanupBinding(); b != nil {
		// Dropped without Close, the cursor still gives its session back
		// (the server cursor stays until the server times it out).
		x := c.exec
		runtime.AddCleanup(cur, func(b *operation.Binding) { x.Release(context.Background(), b) }, b)
	}
	return cur
}

// ID returns the server's id for the cursor, 0 once the server has
// closed it.
func (c *Cursor) ID() int64 {
	if c.oc == nil {
		return 0
	}
	return c.oc.ID()
}

// RemainingBatchLength returns how many documents are left in the batch
// in hand: Next returns that many without asking the server.
func (c *Cursor) RemainingBatchLength() int {
	if c.oc == nil {
		return 0
	}
	return c.oc.Remaining()
}

// Err returns the error that stopped the iteration, if any.
func (c *Cursor) Err() error { return c.err }

// Next moves to the next document, fetching batches as needed, and
// reports whether there is one. It returns false at the end of the
// results, on an error (see Err), and, for a tailable cursor, when the
// cursor dies. A tailable cursor waits for new documents: Next blocks
// until one comes, the cursor dies, or ctx is done.
func (c *Cursor) Next(ctx context.Context) bool { return c.next(ctx, true) }

// TryNext is Next without waiting: for a tailable cursor, it returns
// false after one getMore that brought no document, with Err nil and
// the cursor still open (ID not 0), so the caller may try again later.
func (c *Cursor) TryNext(ctx context.Context) bool { return c.next(ctx, false) }

func (c *Cursor) next(ctx context.Context, wait bool) bool {
	if c.oc != nil && c.oc.RemainingOrZero() == 0 {
		if t := c.oc.IterationTimeout(); t > 0 {
			// timeoutMode ITERATION: the whole call, all its getMores,
			// gets timeoutMS (client-side operations timeout).
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, t)
			defer cancel()
		}
	}
	if c.err != nil || c.oc == nil {
		return false
	}
	for {
		d, ok, err := c.oc.Next()
		if err != nil {
			c.fail(ctx, err)
			return false
		}
		if ok {
			c.Current = d
			return true
		}
		if c.oc.ID() == 0 {
			c.Current = nil
			return false
		}
		if err := c.getMore(ctx); err != nil {
			c.fail(ctx, err)
			return false
		}
		if c.oc.Remaining() == 0 && c.tailable && !wait {
			return false
		}
	}
}

// getMore fetches the next batch as one client operation.
func (c *Cursor) getMore(ctx context.Context) error {
	opCtx, end, err := c.client.begin(ctx)
	if err != nil {
		return err
	}
	defer end()
	return c.client.publicError(ctx, opCtx, "getMore", c.oc.GetMore(opCtx))
}

// fail records err and ends the cursor: a cursor the server no longer
// has (CursorNotFound) or whose connection failed is only released; one
// the server may still hold is killed.
func (c *Cursor) fail(ctx context.Context, err error) {
	c.err = err
	c.Current = nil
	if c.oc == nil {
		return
	}
	var ce *CommandError
	var te *TimeoutError
	abandon := (errors.As(err, &ce) && ce.Code == 43) || (IsNetworkError(err) && !(errors.As(err, &te) && !c.tailable && !c.oc.Pinned()))
	if c.oc.Pinned() {
		// Load-balanced mode: the pinned connection is released by Close.
		c.failed, c.failAbandon = true, abandon
		return
	}
	if abandon {
		// A getMore of a non-tailable cursor that ran out of timeoutMS left
		// the cursor open on the server: it is killed, with a fresh budget
		// (unless its connection is pinned, and gone); a tailable one is
		// only released, as before.
		c.oc.Abandon(context.WithoutCancel(ctx))
		return
	}
	_ = c.closeServer(context.WithoutCancel(ctx))
}

// Decode decodes Current into v, as bson.Unmarshal does.
func (c *Cursor) Decode(v any) error {
	if c.Current == nil {
		return errors.New("driver: Cursor.Decode called without a current document (call Next first)")
	}
	return bson.Unmarshal(c.Current, v)
}

// All decodes every remaining document into results, which must point to
// a slice, and closes the cursor. The slice is reset first: All returns
// exactly the cursor's documents.
func (c *Cursor) All(ctx context.Context, results any) error {
	rv := reflect.ValueOf(results)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Slice {
		return &ArgumentError{Argument: "results", Reason: fmt.Sprintf("All needs a pointer to a slice, got %T", results)}
	}
	defer c.Close(ctx)
	sv := rv.Elem()
	sv.SetLen(0)
	et := sv.Type().Elem()
	for c.Next(ctx) {
		ev := reflect.New(et)
		if err := bson.Unmarshal(c.Current, ev.Interface()); err != nil {
			return err
		}
		sv.Set(reflect.Append(sv, ev.Elem()))
	}
	return c.err
}

// Close kills the cursor on the server if it is still open there and
// releases what it holds (its session and, in load-balanced mode, its
// connection). Closing twice is harmless.
func (c *Cursor) Close(ctx context.Context) error {
	if c.oc == nil {
		return nil
	}
	if c.failed && c.failAbandon {
		c.failed = false
		c.oc.Abandon(context.WithoutCancel(ctx))
		c.Current = nil
		return nil
	}
	c.failed = false
	err := c.closeServer(ctx)
	c.Current = nil
	return err
}

func (c *Cursor) closeServer(ctx context.Context) error {
	if c.oc.ID() == 0 {
		return c.oc.Close(ctx)
	}
	opCtx, end, err := c.client.begin(ctx)
	if err != nil {
		// The client is closing: its pools are going away with the
		// cursor's connection; release the session all the same.
		_ = c.oc.Close(context.Background())
		return nil
	}
	defer end()
	return c.client.publicError(ctx, opCtx, "killCursors", c.oc.Close(opCtx))
}

// Iter returns an iterator over the cursor's documents decoded as T, for
// a range loop. It closes the cursor when the loop ends; a decoding or
// server error is yielded with the zero T and ends the loop.
//
//	for item, err := range driver.Iter[Item](ctx, cur) {
//		if err != nil { ... }
//	}
func Iter[T any](ctx context.Context, c *Cursor) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		defer c.Close(ctx)
		for c.Next(ctx) {
			var v T
			if err := bson.Unmarshal(c.Current, &v); err != nil {
				yield(v, err)
				return
			}
			if !yield(v, nil) {
				return
			}
		}
		if c.err != nil {
			var zero T
			yield(zero, c.err)
		}
	}
}

// All decodes every remaining document of c as a T and closes c.
//
//	items, err := driver.All[Item](ctx, cur)
func All[T any](ctx context.Context, c *Cursor) ([]T, error) {
	defer c.Close(ctx)
	var out []T
	if n := c.RemainingBatchLength(); n > 0 {
		out = make([]T, 0, n)
	}
	for c.Next(ctx) {
		var v T
		if err := bson.Unmarshal(c.Current, &v); err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, c.err
}

// SingleResult is the outcome of an operation that returns one document
// (FindOne, FindOneAndUpdate, ...): the document, or ErrNoDocuments, or
// the operation's error.
type SingleResult struct {
	doc bson.Raw
	err error
}

// Err returns the operation's error: ErrNoDocuments when nothing matched.
func (r *SingleResult) Err() error { return r.err }

// Decode decodes the document into v; it returns Err when there is none.
func (r *SingleResult) Decode(v any) error {
	if r.err != nil {
		return r.err
	}
	return bson.Unmarshal(r.doc, v)
}

// Raw returns the document itself.
func (r *SingleResult) Raw() (bson.Raw, error) {
	if r.err != nil {
		return nil, r.err
	}
	return r.doc, nil
}

// Decode decodes a single result straight into a T.
//
//	item, err := driver.Decode[Item](coll.FindOne(ctx, filter))
func Decode[T any](r *SingleResult) (T, error) {
	var v T
	if r.err != nil {
		return v, r.err
	}
	err := bson.Unmarshal(r.doc, &v)
	return v, err
}
