package operation

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/mongoscope/mongoscope/driver/internal/conn"
)

// Kind is what the client backpressure specification's overload retry
// policy takes an operation for: a read is retried for overload only with
// retryReads, a write only with retryWrites, and runCommand only with both.
type Kind uint8

const (
	// KindAuto: from the Op itself: a cursor's command (getMore) and a
	// RetryRead are reads, a RetryWrite, an Op selecting a writable server
	// or carrying a write concern is a write; anything else is a read.
	KindAuto Kind = iota
	KindRead
	KindWrite
	// KindCommand is runCommand (and runCursorCommand), which the driver
	// does not inspect: retried for overload only with both retryReads
	// and retryWrites, and taken for a write when choosing which error to
	// return.
	KindCommand
)

// OverloadPolicy is the client backpressure specification's overload
// retry policy: an error labelled both SystemOverloadedError and
// RetryableError is retried, for every command the executor runs, up to
// MaxRetries times in all, after a backoff of
// jitter × min(10 s, base × 2^attempt), where base is the error's
// baseBackoffMS when positive and 100 ms otherwise. Commands the executor
// does not run (monitoring, RTT, the handshake and authentication) never
// take this path.
type OverloadPolicy struct {
	// MaxRetries is maxAdaptiveRetries (the client's default is 2): once
	// an attempt fails with an overload error, it caps the operation's
	// retries of any kind. 0 retries nothing after an overload error.
	MaxRetries int
	// Retarget is enableOverloadRetargeting: a retry after an overload
	// error avoids the server that returned it, in any topology (a
	// mongos that failed is avoided anyway).
	Retarget bool
	// Jitter returns the jitter, in [0, 1]; nil draws it uniformly.
	Jitter func() float64
	// Sleep waits d or until ctx ends, returning ctx's error then; nil
	// uses a timer.
	Sleep func(ctx context.Context, d time.Duration) error
}

// The specification's constants.
const (
	baseBackoff = 100 * time.Millisecond
	maxBackoff  = 10 * time.Second
)

// kind returns op's Kind, resolving KindAuto.
func (op *Op) kind() Kind {
	switch {
	case op.Kind != KindAuto:
		return op.Kind
	case op.Binding != nil:
		return KindRead
	case op.Retry == RetryRead:
		return KindRead
	case op.Retry == RetryWrite, op.Selector.Write, op.WriteConcern != nil:
		return KindWrite
	}
	return KindRead
}

// isOverload tells whether err is an overload error (SystemOverloadedError).
func isOverload(err error) bool { return hasLabel(err, conn.LabelSystemOverloaded) }

// retryableOverload tells whether err is a retryable overload error
// (SystemOverloadedError and RetryableError) that op may retry under the
// client's retryReads and retryWrites.
func (x *Executor) retryableOverload(ctx context.Context, op *Op, err error) bool {
	if ctx.Err() != nil || errors.Is(err, ErrClientDisconnected) {
		return false
	}
	if !isOverload(err) || !hasLabel(err, conn.LabelRetryable) {
		return false
	}
	switch op.kind() {
	case KindWrite:
		return x.RetryWrites
	case KindCommand:
		return x.RetryReads && x.RetryWrites
	}
	return x.RetryReads
}

// backoffFor returns the backoff before retry number attempt (1 for the
// first retry) after the overload error err.
func (x *Executor) backoffFor(attempt int, err error) time.Duration {
	base := baseBackoff
	if ms := baseBackoffMS(err); ms > 0 {
		// The server's value is capped at MAX_BACKOFF before it becomes a
		// Duration: a huge or infinite one would overflow int64
		// nanoseconds and come out negative, which meant no backoff.
		if ms >= float64(maxBackoff/time.Millisecond) {
			base = maxBackoff
		} else {
			base = time.Duration(ms * float64(time.Millisecond))
		}
	}
	d := maxBackoff
	if attempt < 32 && base < maxBackoff>>attempt {
		d = base << attempt
	}
	j := 0.0
	if x.Overload.Jitter != nil {
		j = min(max(x.Overload.Jitter(), 0), 1)
	} else {
		j = rand.Float64()
	}
	return time.Duration(j * float64(d))
}

// backoff waits before retry number attempt after the overload error
// err. It returns an error, without waiting, when ctx's deadline comes
// before the backoff ends, and when ctx ends during it.
func (x *Executor) backoff(ctx context.Context, attempt int, err error) error {
	d := x.backoffFor(attempt, err)
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
		return context.DeadlineExceeded
	}
	if x.Overload.Sleep != nil {
		return x.Overload.Sleep(ctx, d)
	}
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// baseBackoffMS is the positive baseBackoffMS of the server's error
// reply, or 0.
func baseBackoffMS(err error) float64 {
	var ce *conn.CommandError
	if !errors.As(err, &ce) || ce.Raw == nil {
		return 0
	}
	v, e := ce.Raw.LookupErr("baseBackoffMS")
	if e != nil {
		return 0
	}
	if f, ok := v.AsFloat64OK(); ok && f > 0 {
		return f
	}
	return 0
}
