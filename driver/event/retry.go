package event

import (
	"context"
	"errors"
)

// RetryMonitor receives an event each time the driver retries a failed
// attempt of an operation: a retryable read or write, a retry under
// timeoutMS, or a retry after an overload error (client backpressure). It
// is optional and separate from OperationMonitor, so monitors written
// before it keep compiling; a value given to the client may implement it
// alone or besides the other interfaces.
type RetryMonitor interface {
	// OperationRetry runs after an attempt failed and the driver decided
	// to retry it, before the retry selects a server (and, after an
	// overload error, before its backoff: a context that ends during the
	// backoff ends the operation without the retry). ctx is the
	// operation's.
	OperationRetry(ctx context.Context, e *OperationRetry)
}

// OperationRetry describes a retry of an operation, an extension of ours.
type OperationRetry struct {
	Name        string // the operation, e.g. "find"
	Database    string
	Collection  string // empty for database and client operations
	OperationID int64  // as in OperationStarted and the command events
	// Attempt is the number of the attempt that failed, 1 for the first;
	// the retry is attempt Attempt+1.
	Attempt int
	// Err is the failed attempt's error: a server error (ServerErrorCode
	// finds its code), a network error, a cleared pool...
	Err error
	// Overload tells whether Err was an overload error
	// (SystemOverloadedError), after which the retry waits a backoff.
	Overload bool
}

// The stages of OperationFinished.TimeoutStage: where an operation's time
// budget (timeoutMS, or the context's deadline) ran out.
const (
	TimeoutStageSelection  = "selection"   // server selection
	TimeoutStageCheckout   = "checkout"    // waiting for a pooled connection
	TimeoutStageConnect    = "connect"     // establishing a connection (handshake, authentication)
	TimeoutStageBeforeSend = "before_send" // too little time left to send the command
	TimeoutStageNetwork    = "network"     // waiting for the server's reply
	TimeoutStageServer     = "server"      // the server's MaxTimeMSExpired (maxTimeMS ran out there)
	TimeoutStageRetry      = "retry"       // ran out while a retryable error was to be retried
	TimeoutStageOther      = "other"       // a deadline ran out somewhere else
)

// ServerErrorCode returns the server's error code that err carries: the
// code of a command's reply with ok: 0 (or, failing that, of its write
// concern error), or of a write concern error alone. It looks through the
// chain of err (errors.As) for a value with a method ServerErrorCode()
// int32, which the driver's server errors have, so a sink can read the
// code of an event's error without knowing the driver's error types.
func ServerErrorCode(err error) (int32, bool) {
	var c interface{ ServerErrorCode() int32 }
	if err == nil || !errors.As(err, &c) {
		return 0, false
	}
	return c.ServerErrorCode(), true
}

// IsNetworkError reports whether err is, or was caused by, a failure to
// reach a server or to exchange a message with it (a value in its chain
// has a method NetworkError() bool that returns true, as the driver's
// network errors do). A network timeout is a network error too.
func IsNetworkError(err error) bool {
	var n interface{ NetworkError() bool }
	return err != nil && errors.As(err, &n) && n.NetworkError()
}
