package selection

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"
)

// Source gives the selection loop the current topology and a way to wait
// for it to change. SDAM implements it.
type Source interface {
	// Current returns the topology now and a channel that is closed at the
	// next change after it.
	Current() (Topology, <-chan struct{})
	// RequestImmediateCheck asks the monitors to check their servers now.
	RequestImmediateCheck()
}

// Options tunes Select. The caller fills in the client's settings; the zero
// value means localThresholdMS 0 and no serverSelectionTimeoutMS.
type Options struct {
	// LocalThreshold is localThresholdMS ([DefaultLocalThreshold] unless
	// the user set it).
	LocalThreshold time.Duration
	// Timeout is serverSelectionTimeoutMS; zero or negative means selection
	// is bounded by the context alone.
	Timeout time.Duration
	// Rand drives the choice between two random servers; nil uses the
	// global source.
	Rand *rand.Rand
	// OnWait, if set, is called once per selection when no server is
	// suitable and selection starts waiting (the "Waiting for suitable
	// server to become available" message), with the time left; remaining
	// is negative when there is no deadline.
	OnWait func(t Topology, remaining time.Duration)
}

// Select chooses a server for sel. It looks at the current topology; when no
// server is suitable it requests an immediate check and blocks until the
// topology changes, serverSelectionTimeoutMS passes or ctx ends, whichever
// comes first. An invalid read preference or an incompatible topology fails
// at once. Every error is a *SelectionError.
//
// The caller increments the chosen server's operation count.
func Select(ctx context.Context, src Source, sel Selector, o Options) (Server, error) {
	start := time.Now()
	var timeout <-chan time.Time // made at the first wait: most selections never wait
	bufp := serverBufs.Get().(*[]Server)
	defer func() {
		b := *bufp
		clear(b[:cap(b)]) // drop references to tags and errors before pooling
		serverBufs.Put(bufp)
	}()
	waited := false
	for {
		t, changed := src.Current()
		fail := func(err error, timedOut bool) (Server, error) {
			return Server{}, &SelectionError{
				Selector: sel.String(),
				Topology: t.String(),
				TimedOut: timedOut,
				Waited:   time.Since(start),
				Err:      err,
			}
		}
		if err := ctx.Err(); err != nil {
			return fail(err, errors.Is(err, context.DeadlineExceeded))
		}
		if t.CompatibilityErr != nil {
			return fail(t.CompatibilityErr, false)
		}
		suitable, err := appendSuitable((*bufp)[:0], t, sel)
		if cap(suitable) <= maxPooledServers {
			*bufp = suitable[:0]
		}
		if err != nil {
			return fail(err, false)
		}
		if len(suitable) > 0 {
			// The window is filtered in place: it never grows past the
			// suitable list it reads from.
			window := appendInWindow(suitable[:0:len(suitable)], suitable, o.LocalThreshold)
			i, _ := pickIndex(window, o.Rand)
			return window[i], nil
		}
		if !waited {
			waited = true
			if o.Timeout > 0 {
				tm := time.NewTimer(o.Timeout - time.Since(start))
				defer tm.Stop()
				timeout = tm.C
			}
			if o.OnWait != nil {
				o.OnWait(t, remaining(ctx, start, o.Timeout))
			}
		}
		src.RequestImmediateCheck()
		select {
		case <-changed:
		case <-ctx.Done():
			err := ctx.Err()
			return fail(err, errors.Is(err, context.DeadlineExceeded))
		case <-timeout:
			return fail(ErrTimeout, true)
		}
	}
}

// serverBufs holds the scratch slices of suitable servers, so a selection
// allocates nothing in the common case. A slice that grew past
// maxPooledServers (a very large sharded cluster) is not kept.
var serverBufs = sync.Pool{New: func() any {
	s := make([]Server, 0, 8)
	return &s
}}

const maxPooledServers = 64

// remaining is the time left before the earlier of ctx's deadline and the
// selection timeout, or -1 when neither is set.
func remaining(ctx context.Context, start time.Time, timeout time.Duration) time.Duration {
	left := time.Duration(-1)
	if timeout > 0 {
		left = max(timeout-time.Since(start), 0)
	}
	if d, ok := ctx.Deadline(); ok {
		if l := max(time.Until(d), 0); left < 0 || l < left {
			left = l
		}
	}
	return left
}
