package driver

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/auth"
	"github.com/mongoscope/mongoscope/driver/internal/conn"
	"github.com/mongoscope/mongoscope/driver/internal/operation"
	"github.com/mongoscope/mongoscope/driver/internal/pool"
	"github.com/mongoscope/mongoscope/driver/internal/selection"
)

// ArgumentError is a mistake in the arguments of a call, found before
// anything was sent: Argument names the parameter or option ("cmd", "db",
// "ReadPreference") and Reason says what is wrong.
type ArgumentError struct {
	Argument string
	Reason   string
	// Err is the underlying error, when there is one (e.g. the BSON
	// encoder's).
	Err error
}

func (e *ArgumentError) Error() string {
	return "driver: invalid argument " + e.Argument + ": " + e.Reason
}

// Unwrap returns the underlying error.
func (e *ArgumentError) Unwrap() error { return e.Err }

// OperationError wraps every failure of an operation that got past its
// arguments: the operation's name, the server once one was selected, and
// the cause (a *CommandError, *WriteConcernError, *NetworkError,
// *HandshakeError, *SelectionError, *WaitQueueTimeoutError,
// *PoolClearedError, *ReplyError, a context error or ErrClientDisconnected).
type OperationError struct {
	Op      string // the command's name, e.g. "find"
	Address string // the server, once one was selected
	Err     error
}

func (e *OperationError) Error() string {
	if e.Address == "" {
		return e.Op + ": " + errString(e.Err)
	}
	return e.Op + " on " + e.Address + ": " + errString(e.Err)
}

// Unwrap returns the cause.
func (e *OperationError) Unwrap() error { return e.Err }

// CommandError is a reply with ok other than 1: the server ran the command
// and refused it. A failed authentication is not a CommandError (see
// AuthError), so that a CommandError always means "the server refused my
// command".
type CommandError struct {
	Code     int32
	CodeName string
	Message  string // the server's errmsg
	// Labels are the errorLabels, e.g. "TransientTransactionError".
	Labels []string
	// WriteConcernError is set when the reply also carried one.
	WriteConcernError *WriteConcernError
	// Raw is the whole reply, for fields this type does not lift out.
	Raw bson.Raw
}

func (e *CommandError) Error() string {
	return serverError(e.Code, e.CodeName, e.Message) + labelsText(e.Labels)
}

// HasErrorLabel reports whether the server attached label to the error.
func (e *CommandError) HasErrorLabel(label string) bool { return hasLabel(e.Labels, label) }

// WriteConcernError is a write that was applied without the requested
// acknowledgement: the reply comes back with it, from RunCommand, beside
// the error.
type WriteConcernError struct {
	Code     int32
	CodeName string
	Message  string
	Details  bson.Raw // errInfo
	Labels   []string // the reply's errorLabels
}

func (e *WriteConcernError) Error() string {
	return "write concern error: " + serverError(e.Code, e.CodeName, e.Message) + labelsText(e.Labels)
}

// HasErrorLabel reports whether the reply carried label.
func (e *WriteConcernError) HasErrorLabel(label string) bool { return hasLabel(e.Labels, label) }

// NetworkError is a failure to reach a server or to exchange a message
// with it; the connection was closed.
type NetworkError struct {
	// Op is the step that failed: "dial", "tls", "write", "read" or
	// "decode" (a reply that could not be parsed).
	Op           string
	Address      string
	ConnectionID int64 // the driver's id of the connection
	Err          error // the cause, e.g. a *net.OpError or context.Canceled
	// Labels are the error labels the driver attached: SystemOverloadedError
	// and RetryableError on a network error or timeout while connecting or
	// during the initial hello, which may be the server's overload (the
	// CMAP specification's backpressure).
	Labels  []string
	timeout bool
	shown   shown
}

// HasErrorLabel reports whether the driver attached label to the error.
func (e *NetworkError) HasErrorLabel(label string) bool { return hasLabel(e.Labels, label) }

func (e *NetworkError) Error() string {
	var b strings.Builder
	b.WriteString("network error")
	writeWhere(&b, e.ConnectionID, e.Address, e.shown)
	b.WriteString(": ")
	b.WriteString(e.Op)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	b.WriteString(labelsText(e.Labels))
	return b.String()
}

// Unwrap returns the cause.
func (e *NetworkError) Unwrap() error { return e.Err }

// Timeout reports whether a deadline ended the exchange: the context's,
// timeoutMS, connectTimeoutMS or socketTimeoutMS.
func (e *NetworkError) Timeout() bool { return e.timeout }

// HandshakeError is a connection that could not be established: the
// server refused the hello, or authentication failed (Err is then an
// *AuthError), or the network failed during either (Err is then a
// *NetworkError).
type HandshakeError struct {
	Address      string
	ConnectionID int64
	Stage        string // "hello" or "auth"
	// Code and CodeName are the server's refusal, when it refused (in
	// either stage); zero otherwise.
	Code     int32
	CodeName string
	Err      error
	shown    shown
}

func (e *HandshakeError) Error() string {
	var b strings.Builder
	b.WriteString("establishing connection")
	if e.ConnectionID != 0 {
		b.WriteString(" ")
		b.WriteString(strconv.FormatInt(e.ConnectionID, 10))
	}
	if e.Address != "" && e.shown&shownAddr == 0 {
		b.WriteString(" to ")
		b.WriteString(e.Address)
	}
	b.WriteString(": ")
	var ae *AuthError
	if !errors.As(e.Err, &ae) && e.Stage != "" {
		b.WriteString(e.Stage)
		b.WriteString(": ")
	}
	b.WriteString(errString(e.Err))
	return b.String()
}

// Unwrap returns the cause.
func (e *HandshakeError) Unwrap() error { return e.Err }

// AuthError is a failed authentication: the credential it was about
// (never its secret), what went wrong, and the server's refusal when the
// server refused (Code, CodeName, Message). It comes inside a
// *HandshakeError.
type AuthError struct {
	Mechanism string // e.g. "SCRAM-SHA-256"; empty for the default negotiation
	Username  string
	Source    string // the authentication database
	Reason    string
	Code      int32
	CodeName  string
	Message   string // the server's errmsg
	// Err is the cause when it was not the server's refusal, e.g. a
	// *NetworkError.
	Err error
}

func (e *AuthError) Error() string {
	var b strings.Builder
	b.WriteString("authentication failed: ")
	if e.Mechanism != "" {
		b.WriteString(e.Mechanism)
	} else {
		b.WriteString("default mechanism")
	}
	if e.Username != "" {
		b.WriteString(" for user ")
		b.WriteString(strconv.Quote(e.Username))
	}
	if e.Source != "" {
		b.WriteString(" on db ")
		b.WriteString(strconv.Quote(e.Source))
	}
	if e.Reason != "" && e.Reason != "authentication failed" {
		b.WriteString(": ")
		b.WriteString(e.Reason)
	}
	if e.Code != 0 || e.CodeName != "" || e.Message != "" {
		b.WriteString(": ")
		b.WriteString(serverError(e.Code, e.CodeName, e.Message))
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause, if it was not the server's refusal.
func (e *AuthError) Unwrap() error { return e.Err }

// SelectionError is a server selection that failed: no suitable server
// within the timeout, or an incompatible deployment. It shows the topology
// as last seen.
type SelectionError struct {
	Selector string        // what was asked for, e.g. "read {mode: secondary}" or "write"
	Topology string        // the topology as last seen
	TimedOut bool          // serverSelectionTimeoutMS or the context's deadline ran out
	Waited   time.Duration // how long selection took
	// Err is the cause: ErrServerSelectionTimeout, the context's error, or
	// the deployment's compatibility error.
	Err error
}

// ErrServerSelectionTimeout is the cause of a SelectionError that ran out
// of serverSelectionTimeoutMS (a context deadline gives
// context.DeadlineExceeded instead).
var ErrServerSelectionTimeout = selection.ErrTimeout

func (e *SelectionError) Error() string {
	what := "server selection failed"
	if e.TimedOut {
		what = "server selection timed out after " + e.Waited.Round(time.Millisecond).String()
	}
	return what + " for " + e.Selector + ": " + errString(e.Err) + "; topology: " + e.Topology
}

// Unwrap returns the cause.
func (e *SelectionError) Unwrap() error { return e.Err }

// Timeout reports whether selection ran out of time.
func (e *SelectionError) Timeout() bool { return e.TimedOut }

// WaitQueueTimeoutError is a checkout that waited too long for a pooled
// connection (or whose context was canceled while it waited); Pool shows
// the pool when the wait ended, to tell a small pool from a slow server.
type WaitQueueTimeoutError struct {
	Address string
	Waited  time.Duration
	Pool    PoolStats
	Err     error // context.DeadlineExceeded or context.Canceled
	// LoadBalanced is set behind a load balancer, where the message gives
	// what the load-balancers specification requires: maxPoolSize and the
	// connections in use by cursors, by transactions and by other
	// operations.
	LoadBalanced bool
	shown        shown
}

func (e *WaitQueueTimeoutError) Error() string {
	what := "timed out"
	if errors.Is(e.Err, context.Canceled) {
		what = "canceled"
	}
	s := e.Pool
	max := "unlimited"
	if s.Max > 0 {
		max = strconv.Itoa(s.Max)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s waiting for a connection", what)
	if e.shown&shownAddr == 0 {
		b.WriteString(" to ")
		b.WriteString(e.Address)
	}
	if e.LoadBalanced {
		fmt.Fprintf(&b, " after %s: %s", e.Waited.Round(time.Microsecond), pool.LoadBalancedStats(pool.Stats(s)))
		return b.String()
	}
	fmt.Fprintf(&b, " after %s: maxPoolSize %s, total %d, in use %d, idle %d, pending %d, waiting %d",
		e.Waited.Round(time.Microsecond), max, s.Total, s.InUse, s.Idle, s.PendingConnections, s.WaitCount)
	return b.String()
}

// Unwrap returns the context's error.
func (e *WaitQueueTimeoutError) Unwrap() error { return e.Err }

// Timeout reports whether the wait ran out of time rather than being
// canceled.
func (e *WaitQueueTimeoutError) Timeout() bool { return !errors.Is(e.Err, context.Canceled) }

// PoolClearedError is a checkout from a pool that an error had just
// cleared, or an operation whose connection a clear interrupted
// (Interrupted). It is retryable.
type PoolClearedError struct {
	Address     string
	Interrupted bool
	Cause       error // the error that cleared the pool, when known
	shown       shown
}

func (e *PoolClearedError) Error() string {
	if e.Interrupted {
		// The message the CMAP specification gives ("Interrupting a
		// Connection"), without the address when an outer error already
		// names it; the cause, the closed connection, adds nothing.
		if e.shown&shownAddr != 0 {
			return "connection interrupted due to server monitor timeout"
		}
		return "Connection to " + e.Address + " interrupted due to server monitor timeout"
	}
	var b strings.Builder
	b.WriteString("connection pool cleared")
	if e.shown&shownAddr == 0 {
		b.WriteString(" for ")
		b.WriteString(e.Address)
	}
	if e.Cause != nil {
		b.WriteString(" after: ")
		b.WriteString(e.Cause.Error())
	}
	return b.String()
}

// Unwrap returns the cause of the clear.
func (e *PoolClearedError) Unwrap() error { return e.Cause }

// Retryable reports that the operation may be retried.
func (e *PoolClearedError) Retryable() bool { return true }

// ReplyError is a server reply the driver cannot use: a field that is
// missing, of the wrong type, or with a value no server sends (a negative
// count, a write error without a code). Field is the field's path in the
// reply ("cursor.id", "writeErrors.2.code", "cursor.firstBatch.7") and
// Reason says what is wrong with it. It arrives inside an
// *OperationError, which names the command and the server.
type ReplyError struct {
	Field  string
	Reason string
}

func (e *ReplyError) Error() string {
	return "malformed server reply: " + e.Field + ": " + e.Reason
}

// replyError is a *ReplyError inside the *OperationError of op on addr.
func replyError(op, addr, field, reason string) error {
	return &OperationError{Op: op, Address: addr, Err: &ReplyError{Field: field, Reason: reason}}
}

// IsTimeout reports whether err is a timeout: the context's deadline or the
// client's timeoutMS ran out, or server selection, the wait for a
// connection, or a network read or write timed out.
func IsTimeout(err error) bool {
	// Every error in the chain is asked, not only the first that has a
	// Timeout method: an outer error may say false where its cause says
	// true. The walk stops at a *PoolClearedError: a checkout or an
	// operation that a clear ended is not a timeout (CMAP), even when a
	// timeout elsewhere caused the clear.
	for e := err; e != nil; e = errors.Unwrap(e) {
		if _, ok := e.(*PoolClearedError); ok {
			return false
		}
		if e == context.DeadlineExceeded {
			return true
		}
		// MaxTimeMSExpired (code 50) in a command or write concern error:
		// the server's side of a timeout (CSOT's error transformations).
		if ce, ok := e.(*CommandError); ok && (ce.Code == 50 || ce.WriteConcernError != nil && ce.WriteConcernError.Code == 50) {
			return true
		}
		if wce, ok := e.(*WriteConcernError); ok && wce.Code == 50 {
			return true
		}
		if t, ok := e.(interface{ Timeout() bool }); ok && t.Timeout() {
			return true
		}
		if m, ok := e.(interface{ Unwrap() []error }); ok {
			for _, inner := range m.Unwrap() {
				if IsTimeout(inner) {
					return true
				}
			}
			return false
		}
	}
	return false
}

// IsNetworkError reports whether err is, or was caused by, a network
// error: a server that could not be reached or stopped answering.
func IsNetworkError(err error) bool {
	var ne *NetworkError
	return errors.As(err, &ne)
}

// IsDuplicateKeyError reports whether err is a duplicate key error (codes
// 11000, 11001 and 12582, in a command error or a write concern error).
func IsDuplicateKeyError(err error) bool {
	dup := func(code int32) bool { return code == 11000 || code == 11001 || code == 12582 }
	var ce *CommandError
	if errors.As(err, &ce) && (dup(ce.Code) || (ce.WriteConcernError != nil && dup(ce.WriteConcernError.Code))) {
		return true
	}
	var wce *WriteConcernError
	if errors.As(err, &wce) && dup(wce.Code) {
		return true
	}
	var we *WriteException
	if errors.As(err, &we) {
		for _, e := range we.WriteErrors {
			if dup(e.Code) {
				return true
			}
		}
	}
	var bwe *BulkWriteException
	if errors.As(err, &bwe) {
		for _, e := range bwe.WriteErrors {
			if dup(e.Code) {
				return true
			}
		}
	}
	return false
}

// HasErrorLabel reports whether the server attached label (e.g.
// "TransientTransactionError", "RetryableWriteError") to err, through a
// CommandError or a WriteConcernError, or whether the driver attached it
// to a NetworkError (SystemOverloadedError and RetryableError on a failure
// to establish a connection that may be the server's overload).
func HasErrorLabel(err error, label string) bool {
	var ne *NetworkError
	if errors.As(err, &ne) && ne.HasErrorLabel(label) {
		return true
	}
	var ce *CommandError
	if errors.As(err, &ce) && ce.HasErrorLabel(label) {
		return true
	}
	var wce *WriteConcernError
	if errors.As(err, &wce) && wce.HasErrorLabel(label) {
		return true
	}
	var we *WriteException
	if errors.As(err, &we) && we.HasErrorLabel(label) {
		return true
	}
	var bwe *BulkWriteException
	return errors.As(err, &bwe) && bwe.HasErrorLabel(label)
}

func hasLabel(labels []string, label string) bool {
	for _, l := range labels {
		if l == label {
			return true
		}
	}
	return false
}

func labelsText(labels []string) string {
	if len(labels) == 0 {
		return ""
	}
	return " [labels " + strings.Join(labels, ", ") + "]"
}

// serverError renders a server's refusal: `(CodeName) message [code N]`
// reads awkwardly, so it is `server error N (CodeName): message`.
func serverError(code int32, codeName, msg string) string {
	var b strings.Builder
	b.WriteString("server error")
	if code != 0 || codeName != "" {
		b.WriteString(" ")
		b.WriteString(strconv.Itoa(int(code)))
		if codeName != "" {
			b.WriteString(" (")
			b.WriteString(codeName)
			b.WriteString(")")
		}
	}
	if msg != "" {
		b.WriteString(": ")
		b.WriteString(msg)
	}
	return b.String()
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// shown records which facts an enclosing error already states, so that
// the message says each once.
type shown uint8

const (
	shownAddr shown = 1 << iota
	shownConn
)

// writeWhere writes " on connection N to A" without the parts already
// shown.
func writeWhere(b *strings.Builder, connID int64, addr string, sh shown) {
	if connID != 0 && sh&shownConn == 0 {
		b.WriteString(" on connection ")
		b.WriteString(strconv.FormatInt(connID, 10))
	}
	if addr != "" && sh&shownAddr == 0 {
		b.WriteString(" to ")
		b.WriteString(addr)
	}
}

// publicError turns an error from the internal packages into the types
// above. The internal types stay internal: none of them is reachable from
// what a Client method returns.
func publicError(err error) error {
	return convert(err, "", 0)
}

// convert converts err; addr and connID are the address and the
// connection an enclosing error already states.
func convert(err error, addr string, connID int64) error {
	if err == nil {
		return nil
	}
	sh := func(a string, id int64) shown {
		var s shown
		if a != "" && a == addr {
			s |= shownAddr
		}
		if id != 0 && id == connID {
			s |= shownConn
		}
		return s
	}
	switch e := err.(type) {
	case *operation.Error:
		if se, ok := sessionError(e.Op, e.Err); ok {
			return se
		}
		return &OperationError{Op: e.Op, Address: e.Address, Err: convert(e.Err, e.Address, 0)}
	case *operation.RetryableWritesError:
		return &operation.RetryableWritesError{Err: convert(e.Err, addr, connID)}
	case *conn.CommandError:
		ce := &CommandError{Code: e.Code, CodeName: e.CodeName, Message: e.Message, Labels: e.Labels, Raw: e.Raw}
		if e.WriteConcernError != nil {
			ce.WriteConcernError = convert(e.WriteConcernError, addr, connID).(*WriteConcernError)
		}
		return ce
	case *conn.WriteConcernError:
		return &WriteConcernError{Code: e.Code, CodeName: e.CodeName, Message: e.Message, Details: e.Details, Labels: e.Labels}
	case *conn.NetworkError:
		return &NetworkError{Op: e.Op, Address: e.Address, ConnectionID: e.ConnID, Err: opaque(e.Err), Labels: e.Labels, timeout: e.Timeout(), shown: sh(e.Address, e.ConnID)}
	case *conn.HandshakeError:
		he := &HandshakeError{Address: e.Address, ConnectionID: e.ConnID, Stage: e.Stage, shown: sh(e.Address, e.ConnID)}
		if connID == 0 {
			connID = e.ConnID
		}
		if addr == "" {
			addr = e.Address
		}
		var ce *conn.CommandError
		var ae *auth.Error
		switch {
		case errors.As(e.Err, &ae):
			a := convert(ae, addr, connID).(*AuthError)
			he.Code, he.CodeName = a.Code, a.CodeName
			he.Err = a
		case errors.As(e.Err, &ce):
			// The hello refused: the code goes on the HandshakeError,
			// not through a CommandError.
			he.Code, he.CodeName = ce.Code, ce.CodeName
			he.Err = errors.New(serverError(ce.Code, ce.CodeName, ce.Message))
		default:
			he.Err = convert(e.Err, addr, connID)
		}
		return he
	case *auth.Error:
		a := &AuthError{Mechanism: e.Mechanism, Username: e.Username, Source: e.Source, Reason: e.Reason}
		var ce *conn.CommandError
		if errors.As(e.Err, &ce) {
			a.Code, a.CodeName, a.Message = ce.Code, ce.CodeName, ce.Message
		} else {
			a.Err = convert(e.Err, addr, connID)
		}
		return a
	case *pool.DialError:
		// The pool's layer adds only the connection id, which the
		// connection's errors carry too.
		inner := convert(e.Err, addr, 0)
		switch inner.(type) {
		case *NetworkError, *HandshakeError:
			return inner
		}
		return &HandshakeError{Address: e.Address, ConnectionID: e.ConnectionID, Err: inner, shown: sh(e.Address, 0)}
	case *pool.PoolClearedError:
		return &PoolClearedError{Address: e.Address, Interrupted: e.Interrupted, Cause: convert(e.Cause, e.Address, 0), shown: sh(e.Address, 0)}
	case *pool.WaitQueueTimeoutError:
		return &WaitQueueTimeoutError{Address: e.Address, Waited: e.Waited, Pool: PoolStats(e.Stats), Err: e.Err, LoadBalanced: e.LoadBalanced, shown: sh(e.Address, 0)}
	case *pool.PoolClosedError:
		return fmt.Errorf("%w: the pool for %s is closed", ErrClientDisconnected, e.Address)
	case *selection.SelectionError:
		return &SelectionError{Selector: e.Selector, Topology: e.Topology, TimedOut: e.TimedOut, Waited: e.Waited, Err: convert(e.Err, addr, connID)}
	case *selection.Error:
		return &ArgumentError{Argument: "ReadPreference", Reason: e.Field + ": " + e.Reason}
	case *operation.ArgError:
		return &ArgumentError{Argument: e.Argument, Reason: e.Reason}
	case *operation.TimeoutError:
		return &TimeoutError{Stage: e.Stage, Err: convert(e.Err, addr, connID)}
	case *operation.ReplyError:
		return &ReplyError{Field: e.Field, Reason: e.Reason}
	}
	return err
}

// opaque hides the internal packages' types in a cause that is passed on
// as it is (a network error's): each becomes a plain error with the same
// message, and what it wraps stays reachable (io.EOF, a *net.OpError, a
// context error).
func opaque(err error) error {
	if err == nil {
		return nil
	}
	typ := reflect.TypeOf(err)
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if !strings.Contains(typ.PkgPath(), "/internal/") {
		return err
	}
	return &causeError{msg: err.Error(), next: opaque(errors.Unwrap(err))}
}

type causeError struct {
	msg  string
	next error
}

func (e *causeError) Error() string { return e.msg }
func (e *causeError) Unwrap() error { return e.next }

// TimeoutError is an operation whose timeoutMS ran out (client-side
// operation timeout): Stage says where the budget ended ("server
// selection", "connection checkout", "connection establishment", "before
// sending the command" when what was left did not exceed the server's
// minimum round trip time, "waiting for the server's reply", "on the
// server (MaxTimeMSExpired)", or "retrying after a retryable error" when
// the budget ran out while an error was to be retried, Err then being the
// last error that came from the server), and Err is the error that
// happened there.
// errors.Is(err, context.DeadlineExceeded) and IsTimeout report true.
// Without timeoutMS the driver returns the legacy errors instead.
type TimeoutError struct {
	Stage string
	Err   error
}

func (e *TimeoutError) Error() string {
	return "timeoutMS expired during " + e.Stage + ": " + e.Err.Error()
}

// Unwrap returns the error that happened when the budget ran out.
func (e *TimeoutError) Unwrap() error { return e.Err }

// Is matches context.DeadlineExceeded.
func (e *TimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// Timeout reports true.
func (e *TimeoutError) Timeout() bool { return true }

// WithTimeout returns ctx carrying an operation-level timeoutMS for the
// operations given it: d overrides the client's, database's and
// collection's timeoutMS (0 means no limit; a negative d makes those
// operations fail with an *ArgumentError naming "timeoutMS"). A deadline
// ctx already has still applies: the earlier of the two wins.
func WithTimeout(ctx context.Context, d time.Duration) context.Context {
	return operation.WithTimeout(ctx, d)
}

// TimeoutMode says how timeoutMS applies to a cursor (the specification's
// timeoutMode): TimeoutCursorLifetime (the default of non-tailable
// cursors) bounds the opening command and every later getMore together;
// TimeoutIteration gives the opening command and each Next the whole of
// timeoutMS, and sends no maxTimeMS with them (the only mode of tailable
// cursors). It needs timeoutMS.
type TimeoutMode string

const (
	TimeoutCursorLifetime TimeoutMode = operation.ModeCursorLifetime
	TimeoutIteration      TimeoutMode = operation.ModeIteration
)

// WithTimeoutMode returns ctx carrying the timeoutMode of the cursors the
// operations given it open (Find, Aggregate, ListCollections,
// ListIndexes, RunCursorCommand). A mode without timeoutMS, CURSOR_LIFETIME
// on a tailable cursor, or ITERATION on an aggregate with $out or $merge
// is an *ArgumentError naming "timeoutMode".
func WithTimeoutMode(ctx context.Context, mode TimeoutMode) context.Context {
	return operation.WithTimeoutMode(ctx, string(mode))
}

// cursorKind is the operation package's name for t.
func cursorKind(t CursorType) operation.CursorKind {
	switch t {
	case Tailable:
		return operation.Tailable
	case TailableAwait:
		return operation.TailableAwait
	}
	return operation.NonTailable
}
