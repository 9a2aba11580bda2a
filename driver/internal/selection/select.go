package selection

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
)

// Source gives the selection loop the current topology and a way to wait
// for it to change. SDAM implements it.
type Source interface {
	// Current returns the topology description now and a channel that is
	// closed at the next change after it. The description is a value
	// nobody modifies: selection reads it in place.
	Current() (description.TopologyDescription, <-chan struct{})
	// RequestImmediateCheck asks the monitors to check their servers now.
	RequestImmediateCheck()
	// OperationCounter gives the servers' operation counts, for the choice
	// between two servers of the latency window.
	OperationCounter
}

// Options tunes Select. The caller fills in the client's settings; the zero
// value means localThresholdMS 0, the default heartbeatFrequencyMS and no
// serverSelectionTimeoutMS.
type Options struct {
	// LocalThreshold is localThresholdMS ([DefaultLocalThreshold] unless
	// the user set it).
	LocalThreshold time.Duration
	// Timeout is serverSelectionTimeoutMS; zero or negative means selection
	// is bounded by the context alone.
	Timeout time.Duration
	// HeartbeatFrequency is heartbeatFrequencyMS, which maxStalenessSeconds
	// depends on; zero means [DefaultHeartbeatFrequency].
	HeartbeatFrequency time.Duration
	// Closed, if set, is closed when the source shuts down: a waiting
	// selection then fails with ErrSourceClosed.
	Closed <-chan struct{}
	// Rand drives the choice between two random servers; nil uses the
	// global source.
	Rand *rand.Rand
	// OnWait, if set, is called once per selection when no server is
	// suitable and selection starts waiting (the "Waiting for suitable
	// server to become available" message), with the time left; remaining
	// is negative when there is no deadline.
	OnWait func(t description.TopologyDescription, remaining time.Duration)
}

// Select chooses a server for sel. It looks at the current topology; when no
// server is suitable it requests an immediate check and blocks until the
// topology changes, serverSelectionTimeoutMS passes, ctx ends or the source
// closes, whichever comes first. An invalid read preference or an
// incompatible topology fails at once. Every error is a *SelectionError.
//
// The result points into the description Current returned, which must not
// be modified. The caller increments the chosen server's operation count.
func Select(ctx context.Context, src Source, sel Selector, o Options) (*description.ServerDescription, error) {
	start := time.Now()
	var timeout <-chan time.Time // made at the first wait: most selections never wait
	bufp := serverBufs.Get().(*[]*description.ServerDescription)
	defer func() {
		b := *bufp
		clear(b[:cap(b)]) // drop references to the topology before pooling
		serverBufs.Put(bufp)
	}()
	waited := false
	for {
		t, changed := src.Current()
		fail := func(err error, timedOut bool) (*description.ServerDescription, error) {
			return nil, &SelectionError{
				Selector: sel.String(),
				Topology: Summary(t),
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
		suitable, err := appendSuitable((*bufp)[:0], &t, sel, o.HeartbeatFrequency)
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
			i, _ := pickIndex(window, src, o.Rand)
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
		case <-o.Closed:
			return fail(ErrSourceClosed, false)
		}
	}
}

// serverBufs holds the scratch slices of suitable servers, so a selection
// allocates nothing in the common case. A slice that grew past
// maxPooledServers (a very large sharded cluster) is not kept.
var serverBufs = sync.Pool{New: func() any {
	s := make([]*description.ServerDescription, 0, 8)
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
