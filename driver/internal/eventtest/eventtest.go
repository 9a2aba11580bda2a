// Package eventtest is the one event recorder the driver's tests share: a
// monitor of every family of package event that keeps each event, with the
// context it came with, for a test to inspect or wait on.
package eventtest

import (
	"context"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
)

// Record is one event as received.
type Record struct {
	Ctx   context.Context
	Event any       // a pointer to one of package event's event types
	At    time.Time // when it arrived
}

// Recorder implements OperationMonitor, CommandMonitor, PoolMonitor,
// TopologyMonitor and SelectionMonitor. The zero value records every
// event; it is safe for concurrent use. Command events are copied with
// their documents, which the driver may reuse after the call.
type Recorder struct {
	// Start, when set, is called by OperationStarted and CommandStarted;
	// the context it returns is what the driver carries on.
	Start func(ctx context.Context, e any) context.Context
	// Keep, when set, filters what is recorded.
	Keep func(e any) bool

	mu      sync.Mutex
	records []Record
	changed chan struct{} // closed and replaced on every record
}

var (
	_ event.OperationMonitor = (*Recorder)(nil)
	_ event.CommandMonitor   = (*Recorder)(nil)
	_ event.PoolMonitor      = (*Recorder)(nil)
	_ event.TopologyMonitor  = (*Recorder)(nil)
	_ event.SelectionMonitor = (*Recorder)(nil)
)

func (r *Recorder) add(ctx context.Context, e any) {
	if r.Keep != nil && !r.Keep(e) {
		return
	}
	at := time.Now()
	r.mu.Lock()
	r.records = append(r.records, Record{Ctx: ctx, Event: e, At: at})
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
	r.mu.Unlock()
}

func (r *Recorder) start(ctx context.Context, e any) context.Context {
	if r.Start != nil {
		return r.Start(ctx, e)
	}
	return ctx
}

// OperationStarted records a copy of e.
func (r *Recorder) OperationStarted(ctx context.Context, e *event.OperationStarted) context.Context {
	c := *e
	r.add(ctx, &c)
	return r.start(ctx, e)
}

// OperationFinished records a copy of e.
func (r *Recorder) OperationFinished(ctx context.Context, e *event.OperationFinished) {
	c := *e
	r.add(ctx, &c)
}

// CommandStarted records a copy of e and its command.
func (r *Recorder) CommandStarted(ctx context.Context, e *event.CommandStarted) context.Context {
	c := *e
	c.Command = clone(e.Command)
	r.add(ctx, &c)
	return r.start(ctx, e)
}

// CommandSucceeded records a copy of e and its reply.
func (r *Recorder) CommandSucceeded(ctx context.Context, e *event.CommandSucceeded) {
	c := *e
	c.Reply = clone(e.Reply)
	r.add(ctx, &c)
}

// CommandFailed records a copy of e and its reply.
func (r *Recorder) CommandFailed(ctx context.Context, e *event.CommandFailed) {
	c := *e
	c.Reply = clone(e.Reply)
	r.add(ctx, &c)
}

// PoolEvent records e.
func (r *Recorder) PoolEvent(ctx context.Context, e event.PoolEvent) { r.add(ctx, e) }

// TopologyEvent records e.
func (r *Recorder) TopologyEvent(ctx context.Context, e event.TopologyEvent) { r.add(ctx, e) }

// SelectionEvent records e.
func (r *Recorder) SelectionEvent(ctx context.Context, e event.SelectionEvent) { r.add(ctx, e) }

func clone(b bson.Raw) bson.Raw {
	if b == nil {
		return nil
	}
	return append(bson.Raw(nil), b...)
}

// Records returns every record so far, oldest first.
func (r *Recorder) Records() []Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.records)
}

// Events returns every event so far, oldest first.
func (r *Recorder) Events() []any {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]any, len(r.records))
	for i, rec := range r.records {
		out[i] = rec.Event
	}
	return out
}

// Take returns the events so far and forgets them.
func (r *Recorder) Take() []any {
	r.mu.Lock()
	recs := r.records
	r.records = nil
	r.mu.Unlock()
	out := make([]any, len(recs))
	for i, rec := range recs {
		out[i] = rec.Event
	}
	return out
}

// Reset forgets every event.
func (r *Recorder) Reset() {
	r.mu.Lock()
	r.records = nil
	r.mu.Unlock()
}

// Names returns the type name of each event so far ("PoolCleared",
// "ServerDescriptionChanged", ...), oldest first.
func (r *Recorder) Names() []string {
	evs := r.Events()
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = Name(e)
	}
	return out
}

// Name is the type name of an event, without package or pointer.
func Name(e any) string {
	t := reflect.TypeOf(e)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "<nil>"
	}
	return t.Name()
}

// Of returns the recorded events of type T (a pointer type such as
// *event.PoolCleared), oldest first.
func Of[T any](r *Recorder) []T {
	var out []T
	for _, e := range r.Events() {
		if v, ok := e.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

// Only is a Keep filter for the events of type T, which may be one of
// package event's family interfaces (event.PoolEvent, event.TopologyEvent,
// ...): Keep: eventtest.Only[event.SelectionEvent].
func Only[T any](e any) bool { _, ok := e.(T); return ok }

// Count returns how many events of type T were recorded.
func Count[T any](r *Recorder) int { return len(Of[T](r)) }

// Wait waits until done holds for the events recorded so far, or timeout
// passes; it reports whether done held.
func (r *Recorder) Wait(timeout time.Duration, done func(evs []any) bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		evs := make([]any, len(r.records))
		for i, rec := range r.records {
			evs[i] = rec.Event
		}
		if r.changed == nil {
			r.changed = make(chan struct{})
		}
		ch := r.changed
		r.mu.Unlock()
		if done(evs) {
			return true
		}
		select {
		case <-ch:
		case <-deadline.C:
			return false
		}
	}
}

// WaitFor waits up to timeout for an event of type T that match accepts
// (nil accepts any) and returns the first such event.
func WaitFor[T any](r *Recorder, timeout time.Duration, match func(T) bool) (T, bool) {
	var found T
	ok := r.Wait(timeout, func(evs []any) bool {
		for _, e := range evs {
			if v, is := e.(T); is && (match == nil || match(v)) {
				found = v
				return true
			}
		}
		return false
	})
	return found, ok
}

// WaitCount waits up to timeout until at least n events of type T were
// recorded.
func WaitCount[T any](r *Recorder, n int, timeout time.Duration) bool {
	return r.Wait(timeout, func(evs []any) bool {
		c := 0
		for _, e := range evs {
			if _, is := e.(T); is {
				c++
			}
		}
		return c >= n
	})
}
