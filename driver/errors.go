package driver

import (
	"context"
	"errors"

	"github.com/mongoscope/mongoscope/driver/internal/conn"
	"github.com/mongoscope/mongoscope/driver/internal/operation"
	"github.com/mongoscope/mongoscope/driver/internal/pool"
	"github.com/mongoscope/mongoscope/driver/internal/selection"
)

// The errors an operation can end with. Each is reached with errors.As from
// the error a Client method returns.
type (
	// OperationError wraps every failure of an operation: the operation's
	// name, the server once one was selected, and the cause.
	OperationError = operation.Error
	// CommandError is a reply with ok other than 1: the server ran the
	// command and refused it (code, codeName, errmsg, errorLabels).
	CommandError = conn.CommandError
	// WriteConcernError is a write that was applied without the requested
	// acknowledgement; the reply comes back with it.
	WriteConcernError = conn.WriteConcernError
	// NetworkError is a failure to reach a server or to exchange a message
	// with it; the connection was closed.
	NetworkError = conn.NetworkError
	// HandshakeError is a connection that could not be established: the
	// hello or the authentication failed.
	HandshakeError = conn.HandshakeError
	// SelectionError is a server selection that failed: no suitable
	// server within the timeout, an invalid read preference, or an
	// incompatible deployment. It shows the topology as last seen.
	SelectionError = selection.SelectionError
	// WaitQueueTimeoutError is a checkout that waited too long for a
	// pooled connection; it shows the pool's state.
	WaitQueueTimeoutError = pool.WaitQueueTimeoutError
	// PoolClearedError is a checkout from a pool that an error had just
	// cleared, or an operation whose connection a clear interrupted; it
	// is retryable.
	PoolClearedError = pool.PoolClearedError
)

// IsTimeout reports whether err is a timeout: the context's deadline or the
// client's timeoutMS ran out, or server selection, the wait for a
// connection, or a network read or write timed out.
func IsTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	// Every error in the chain is asked, not only the first that has a
	// Timeout method: an outer error may say false where its cause says
	// true.
	for e := err; e != nil; e = errors.Unwrap(e) {
		if t, ok := e.(interface{ Timeout() bool }); ok && t.Timeout() {
			return true
		}
	}
	return false
}
