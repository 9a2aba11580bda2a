package pool

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ConfigError reports a Config field that cannot be used.
type ConfigError struct {
	Field  string // the Config field, e.g. "MinPoolSize"
	Reason string
}

func (e *ConfigError) Error() string {
	return "pool: invalid " + e.Field + ": " + e.Reason
}

// PoolClosedError is returned by CheckOut when the pool is closed (the
// spec's PoolClosedError).
type PoolClosedError struct {
	Address string
}

func (e *PoolClosedError) Error() string {
	return "Attempted to check out a connection from closed connection pool for " + e.Address
}

// PoolClearedError is returned by CheckOut when the pool is paused, or was
// cleared while the caller waited (the spec's PoolClearedError). It is
// retryable and must not mark the server Unknown.
type PoolClearedError struct {
	Address string
	// Cause is the error that cleared the pool, when the clear gave one.
	Cause error
	// Interrupted is set on the error an operation gets when its
	// connection was closed by a clear with interruptInUseConnections.
	Interrupted bool
}

func (e *PoolClearedError) Error() string {
	switch {
	case e.Interrupted:
		return "Connection to " + e.Address + " interrupted due to server monitor timeout"
	case e.Cause != nil:
		return "Connection pool for " + e.Address + " was cleared because another operation failed with: " + e.Cause.Error()
	default:
		return "Connection pool for " + e.Address + " was cleared"
	}
}

// Unwrap returns the cause of the clear.
func (e *PoolClearedError) Unwrap() error { return e.Cause }

// Retryable reports that an operation that got this error may be retried.
func (e *PoolClearedError) Retryable() bool { return true }

// WaitQueueTimeoutError is returned by CheckOut when the wait for a
// connection ended before one came: the context's deadline or the pool's
// WaitQueueTimeout passed (the spec's WaitQueueTimeoutError), or the
// context was canceled (Err is then context.Canceled). The message carries
// the pool's state at that moment, to tell a small pool from a slow server.
type WaitQueueTimeoutError struct {
	Address string
	Waited  time.Duration // time spent in the wait queue
	Stats   Stats         // the pool when the wait ended
	Err     error         // context.DeadlineExceeded or context.Canceled
	// LoadBalanced gives the message the load-balancers specification
	// requires: the connections in use by cursors, by transactions and by
	// other operations.
	LoadBalanced bool
}

func (e *WaitQueueTimeoutError) Error() string {
	what := "Timed out while checking out a connection from connection pool"
	if errors.Is(e.Err, context.Canceled) {
		what = "Canceled while checking out a connection from connection pool"
	}
	s := e.Stats
	if e.LoadBalanced {
		return fmt.Sprintf("%s for %s after %s: %s", what, e.Address, e.Waited.Round(time.Microsecond), LoadBalancedStats(s))
	}
	return fmt.Sprintf("%s for %s after %s: maxPoolSize %s, total %d, in use %d, idle %d, pending %d, waiting %d",
		what, e.Address, e.Waited.Round(time.Microsecond), maxString(s.Max), s.Total, s.InUse, s.Idle, s.PendingConnections, s.WaitCount)
}

// LoadBalancedStats renders the statistics the load-balancers
// specification requires in a wait queue timeout: "maxPoolSize: n,
// connections in use by cursors: n, connections in use by transactions: n,
// connections in use by other operations: n".
func LoadBalancedStats(s Stats) string {
	return fmt.Sprintf("maxPoolSize: %s, connections in use by cursors: %d, connections in use by transactions: %d, connections in use by other operations: %d",
		maxString(s.Max), s.InUseByCursors, s.InUseByTransactions, s.InUse-s.InUseByCursors-s.InUseByTransactions)
}

func maxString(n int) string {
	if n == 0 {
		return "unlimited"
	}
	return strconv.Itoa(n)
}

// Unwrap returns the context's error, so errors.Is(err,
// context.DeadlineExceeded) holds for a timeout.
func (e *WaitQueueTimeoutError) Unwrap() error { return e.Err }

// Timeout reports whether the wait ran out of time rather than being
// canceled.
func (e *WaitQueueTimeoutError) Timeout() bool {
	return !errors.Is(e.Err, context.Canceled)
}

// DialError is returned by CheckOut when establishing a new connection
// failed; Err is the Dial function's error.
type DialError struct {
	Address      string
	ConnectionID int64
	Err          error
}

func (e *DialError) Error() string {
	return "pool: establishing connection " + strconv.FormatInt(e.ConnectionID, 10) + " to " + e.Address + ": " + e.Err.Error()
}

// Unwrap returns the Dial function's error.
func (e *DialError) Unwrap() error { return e.Err }

// CheckInError is returned by CheckIn for a connection the pool cannot take
// back: from another pool, or already checked in.
type CheckInError struct {
	Address      string
	ConnectionID int64
	Reason       string
}

func (e *CheckInError) Error() string {
	return "pool: cannot check in connection " + strconv.FormatInt(e.ConnectionID, 10) + " to " + e.Address + ": " + e.Reason
}
