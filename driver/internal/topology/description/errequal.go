package description

import (
	"context"
	"errors"
	"reflect"
	"strconv"

	"github.com/mongoscope/mongoscope/driver/internal/conn"
)

// sameError is the error comparison of Server Description Equality. The
// specification marks the error field (=) but does not say how errors
// compare. Comparing messages would make a dead server's description
// change on every heartbeat: each failed check's message names a new
// connection number, and the first failure (the monitoring connection
// dropping: EOF) reads differently from the next ones (connection
// refused) although nothing changed for the application. So errors
// compare by kind:
//   - a network error is "network" or "network timeout", whatever the
//     operation, connection or cause;
//   - a server error is its code (its message when it has none);
//   - a handshake error is its stage and the kind of its cause;
//   - any other error compares by the types of its chain and the message
//     of its root cause (the error that wraps nothing), which leaves out
//     what wrappers add, such as addresses and numbers.
func sameError(a, b error) bool {
	ka, oka := errorKind(a)
	kb, okb := errorKind(b)
	if oka || okb {
		return oka && okb && ka == kb
	}
	return sameChain(a, b)
}

// errorKind returns the kind of a connection error, false for other
// errors.
func errorKind(err error) (string, bool) {
	if err == nil {
		return "", false
	}
	prefix := ""
	var he *conn.HandshakeError
	if errors.As(err, &he) {
		prefix = "handshake " + he.Stage + ": "
	}
	var ne *conn.NetworkError
	if errors.As(err, &ne) {
		if isTimeout(ne) {
			return prefix + "network timeout", true
		}
		return prefix + "network", true
	}
	var ce *conn.CommandError
	if errors.As(err, &ce) {
		if ce.Code == 0 {
			return prefix + "server error: " + ce.Message, true
		}
		return prefix + "server error " + strconv.Itoa(int(ce.Code)), true
	}
	return "", false
}

// isTimeout reports a network error caused by a deadline, however it was
// built (as the topology's error handling decides it).
func isTimeout(ne *conn.NetworkError) bool {
	var te interface{ Timeout() bool }
	return ne.Timeout() || errors.Is(ne.Err, context.DeadlineExceeded) || (errors.As(ne.Err, &te) && te.Timeout())
}

// sameChain compares two errors by the types along their chains and the
// messages of their root causes.
func sameChain(a, b error) bool {
	for {
		if a == nil || b == nil {
			return a == nil && b == nil
		}
		if reflect.TypeOf(a) != reflect.TypeOf(b) {
			return false
		}
		if ua, ok := a.(interface{ Unwrap() []error }); ok {
			as, bs := ua.Unwrap(), b.(interface{ Unwrap() []error }).Unwrap()
			if len(as) != len(bs) {
				return false
			}
			for i := range as {
				if !sameError(as[i], bs[i]) {
					return false
				}
			}
			return true
		}
		na, nb := errors.Unwrap(a), errors.Unwrap(b)
		if na == nil && nb == nil {
			return a.Error() == b.Error()
		}
		a, b = na, nb
	}
}
