package operation

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/conn"
	"github.com/mongoscope/mongoscope/driver/internal/pool"
	"github.com/mongoscope/mongoscope/driver/internal/selection"
)

// Client-side operation timeouts (the client-side-operations-timeout
// specification, "CSOT"). An operation's timeoutMS is, from the most
// specific down: the one its context carries (WithTimeout), the Op's own
// (inherited from its collection, database or session), the client's.
// Unset, the legacy timeouts apply; 0 means no limit (deprecated
// timeouts are still ignored); positive, it is one budget for the whole
// operation: selection, checkout, connection establishment, every attempt
// and batch. The budget is the context's deadline, so a caller's earlier
// deadline wins.

// timeoutKey marks a context with an operation-level timeoutMS.
type timeoutKey struct{}

// budgetKey carries the *budget of the running operation.
type budgetKey struct{}

// WithTimeout returns ctx carrying an operation-level timeoutMS (0: no
// limit), which overrides the ones the operation would inherit.
func WithTimeout(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, timeoutKey{}, d)
}

// TimeoutOf returns the operation-level timeoutMS ctx carries.
func TimeoutOf(ctx context.Context) (time.Duration, bool) {
	d, ok := ctx.Value(timeoutKey{}).(time.Duration)
	return d, ok
}

// modeKey marks a context with a cursor's timeoutMode.
type modeKey struct{}

// Cursor timeout modes (the specification's timeoutMode).
const (
	ModeCursorLifetime = "cursorLifetime"
	ModeIteration      = "iteration"
)

// WithTimeoutMode returns ctx carrying the timeoutMode of the cursors
// the operations given it open.
func WithTimeoutMode(ctx context.Context, mode string) context.Context {
	return context.WithValue(ctx, modeKey{}, mode)
}

// CursorKind is the kind of cursor an Op with Cursor opens.
type CursorKind uint8

const (
	NonTailable CursorKind = iota
	Tailable
	TailableAwait
)

// CursorTimeout is how timeoutMS goes on for a cursor after the command
// that opened it (Result.CursorTimeout, CursorOptions.Timeout).
type CursorTimeout struct {
	// Set: the opening operation ran under timeoutMS (Timeout, 0 for no
	// limit); killCursors gets it afresh.
	Set     bool
	Timeout time.Duration
	// Lifetime is the deadline of every getMore in timeoutMode
	// CURSOR_LIFETIME (zero otherwise, or with no limit).
	Lifetime time.Time
	// Iteration: each Next gets Timeout afresh (timeoutMode ITERATION,
	// the default of tailable cursors).
	Iteration bool
}

// ArgError is an operation refused before anything is sent because of
// an argument (package driver makes it an *ArgumentError).
type ArgError struct {
	Argument, Reason string
}

func (e *ArgError) Error() string { return e.Argument + ": " + e.Reason }

// budget is what timeoutMS means for one Execute.
type budget struct {
	cursor CursorTimeout
	// set: timeoutMS is set (0 included), so the deprecated timeouts
	// (socketTimeoutMS, waitQueueTimeoutMS, wTimeoutMS, maxTimeMS options)
	// are ignored.
	set bool
	// on: a positive timeoutMS (or a cursor's lifetime deadline) bounds
	// the operation: maxTimeMS is appended and retries go on until the
	// budget runs out.
	on bool
}

func budgetOf(ctx context.Context) *budget {
	b, _ := ctx.Value(budgetKey{}).(*budget)
	return b
}

// budget resolves op's timeoutMS and gives ctx its deadline. It returns
// the op to run (a copy without wtimeout when timeoutMS is set) and a
// cancel function, nil when none is needed.
func (x *Executor) budget(ctx context.Context, op *Op) (context.Context, *Op, context.CancelFunc, error) {
	t, set := x.Timeout, x.Timeout > 0 || x.TimeoutSet
	if op.Timeout != nil {
		t, set = *op.Timeout, true
	}
	if d, ok := TimeoutOf(ctx); ok {
		t, set = d, true
	}
	mode, hasMode := ctx.Value(modeKey{}).(string)
	if op.Cursor && op.Binding == nil && (hasMode || op.CursorKind != NonTailable || op.MaxAwait > 0) {
		if err := checkCursorTimeout(op, t, set, mode, hasMode); err != nil {
			return ctx, op, nil, err
		}
	}
	if !set {
		return ctx, op, nil, nil
	}
	b := &budget{set: true}
	if op.Cursor && op.Binding == nil {
		b.cursor = CursorTimeout{Set: true, Timeout: t, Iteration: mode == ModeIteration || op.CursorKind != NonTailable}
		if b.cursor.Iteration && op.CursorKind != TailableAwait {
			// ITERATION and tailable non-awaitData cursors: no maxTimeMS
			// on the command that opens them either.
			cp := *op
			cp.NoMaxTime = true
			op = &cp
		}
		if !b.cursor.Iteration && t > 0 {
			b.cursor.Lifetime = time.Now().Add(t)
		}
	}
	var cancel context.CancelFunc
	dl := op.Deadline
	if t > 0 {
		if d := time.Now().Add(t); dl.IsZero() || d.Before(dl) {
			dl = d
		}
	}
	if !dl.IsZero() {
		b.on = true
		if cur, ok := ctx.Deadline(); !ok || cur.After(dl) {
			ctx, cancel = context.WithDeadline(ctx, dl)
		}
	}
	ctx = context.WithValue(ctx, budgetKey{}, b)
	if op.WriteConcern != nil {
		if _, err := op.WriteConcern.LookupErr("wtimeout"); err == nil {
			// wTimeoutMS is deprecated: timeoutMS replaces it.
			cp := *op
			cp.WriteConcern = without(op.WriteConcern, "wtimeout")
			if len(cp.WriteConcern) <= 5 {
				cp.WriteConcern = nil // {} says nothing: the server's default
			}
			op = &cp
		}
	}
	return ctx, op, cancel, nil
}

// checkCursorTimeout applies the specification's refusals for a cursor:
// timeoutMode needs timeoutMS; tailable cursors take only ITERATION; an
// aggregate writing with $out or $merge cannot be ITERATION; and
// maxAwaitTimeMS must be below a positive timeoutMS.
func checkCursorTimeout(op *Op, t time.Duration, set bool, mode string, hasMode bool) error {
	switch {
	case hasMode && mode != ModeCursorLifetime && mode != ModeIteration:
		return &ArgError{Argument: "timeoutMode", Reason: fmt.Sprintf("unknown timeoutMode %q", mode)}
	case hasMode && !set:
		return &ArgError{Argument: "timeoutMode", Reason: "timeoutMode needs timeoutMS"}
	case mode == ModeCursorLifetime && op.CursorKind != NonTailable:
		return &ArgError{Argument: "timeoutMode", Reason: "a tailable cursor takes only timeoutMode ITERATION"}
	case mode == ModeIteration && op.OutMerge:
		return &ArgError{Argument: "timeoutMode", Reason: "an aggregate with $out or $merge cannot use timeoutMode ITERATION"}
	case op.MaxAwait > 0 && set && t > 0 && op.MaxAwait >= t:
		return &ArgError{Argument: "maxAwaitTimeMS", Reason: fmt.Sprintf("maxAwaitTimeMS %v must be less than timeoutMS %v", op.MaxAwait, t)}
	}
	return nil
}

// maxTime returns cmd as it is sent under the budget: with maxTimeMS set
// to the remaining time less rtt, the selected server's minRoundTripTime.
// When that leaves nothing, the command is not sent: the error is a
// *TimeoutError (the caller checks the connection back in).
//
// rtt is read during selection (topology.SelectFor), as the specification
// asks, not here: a monitor that resets the server between selection and
// here would otherwise turn the short cut off. The specification names
// the selection's TopologyDescription as the source; its
// minRoundTripTime is only refreshed when a check completes, so the RTT
// task's current minimum, read at the same moment, is taken when larger
// (the command-execution test "maxTimeMS value in the command is less
// than timeoutMS" needs the RTT task's samples within a second). The older seed (000) derived maxTimeMS
// from a 90th-percentile RTT; the current Markdown uses minRoundTripTime,
// as here.
func maxTime(ctx context.Context, op *Op, rtt time.Duration, cmd bson.Raw) (bson.Raw, error) {
	b := budgetOf(ctx)
	if b == nil {
		return cmd, nil
	}
	if !b.on {
		if b.set && op.Name != "getMore" && !op.KeepMaxTime {
			// timeoutMS: 0 ignores the deprecated maxTimeMS option.
			if _, err := cmd.LookupErr("maxTimeMS"); err == nil {
				return without(cmd, "maxTimeMS"), nil
			}
		}
		return cmd, nil
	}
	dl, ok := ctx.Deadline()
	if !ok {
		return cmd, nil
	}
	remaining := time.Until(dl)
	if remaining <= 0 || remaining <= rtt {
		return nil, &TimeoutError{Stage: StageBeforeSend, Err: fmt.Errorf("%v left, not more than the server's minimum round trip time %v: %w", remaining.Round(time.Microsecond), rtt, context.DeadlineExceeded)}
	}
	ms := max((remaining - rtt).Milliseconds(), 1)
	if op.Name == "getMore" {
		// A tailable awaitData cursor's getMore: min(maxAwaitTimeMS,
		// remaining - minRTT); the others send none. The seed (000)
		// sent maxAwaitTimeMS as it was; the Markdown (2024-01-29) caps
		// it, as here.
		v, err := cmd.LookupErr("maxTimeMS")
		if err != nil {
			return cmd, nil
		}
		if cur, ok := v.AsInt64OK(); ok && cur <= ms {
			return cmd, nil
		}
		return withInt64(without(cmd, "maxTimeMS"), "maxTimeMS", ms), nil
	}
	if op.NoMaxTime {
		return cmd, nil
	}
	// A maxTimeMS the driver put in the command (the deprecated option) is
	// replaced. RunCommand's document is not looked at: the specification
	// ("RunCommand") forbids checking it for maxTimeMS, and its
	// documentation says what a document with its own then gets.
	if !op.KeepMaxTime {
		if _, err := cmd.LookupErr("maxTimeMS"); err == nil {
			cmd = without(cmd, "maxTimeMS")
		}
	}
	return withInt64(cmd, "maxTimeMS", ms), nil
}

// without returns a copy of doc without its top-level field key.
func without(doc bson.Raw, key string) bson.Raw {
	st, b := bson.AppendDocumentStart(make([]byte, 0, len(doc)))
	it := doc.Iter()
	for it.Next() {
		e := it.Element()
		if e.Key() == key {
			continue
		}
		b = append(b, e...)
	}
	b, _ = bson.AppendDocumentEnd(b, st)
	return b
}

// withInt64 returns a copy of doc with key: n appended.
func withInt64(doc bson.Raw, key string, n int64) bson.Raw {
	b := make([]byte, 0, len(doc)+len(key)+10)
	b = append(b, doc[:len(doc)-1]...)
	b = bson.AppendInt64Element(b, key, n)
	b = append(b, 0)
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	return b
}

// retryAgain tells whether run may make another retry after n attempts:
// one retry without timeoutMS; with it, as many as fit in the budget (the
// specification's "Retryability": retry "as many times as possible before
// the timeout expires or a retry attempt returns a non-retryable error").
//
// timeoutMS: 0 is an infinite timeout, so a server that keeps answering
// with retryable errors is retried until an attempt succeeds or fails
// with an error that is not retryable. That is the specification's rule
// taken literally, and its retryability-timeoutMS tests require more than
// one retry under timeoutMS: 0. We keep it, rather than cap the retries,
// because what ends it is in the caller's hands: the context given to the
// operation (its deadline or cancellation ends the loop at the next
// attempt, see shouldRetry) and Disconnect (which cancels every
// operation). A retry that must select a server again is bounded by
// serverSelectionTimeoutMS, so a server that goes away ends the loop too.
// There is no backoff between these retries, as the specification's
// rationale says; overload errors have their own (overload.go).
func retryAgain(ctx context.Context, n int) bool {
	if n < 2 {
		return true
	}
	b := budgetOf(ctx)
	return b != nil && b.set && ctx.Err() == nil
}

// Stages of an operation where its timeoutMS budget can run out.
const (
	StageSelection  = "server selection"
	StageCheckout   = "connection checkout"
	StageConnect    = "connection establishment"
	StageBeforeSend = "before sending the command"
	StageServer     = "waiting for the server's reply"
	StageServerSide = "on the server (MaxTimeMSExpired)"
	// StageRetry: the budget ran out while a retryable error was to be
	// retried; the error is the last attempt's that reached the server.
	StageRetry = "retrying after a retryable error"
)

// TimeoutError is an operation whose timeoutMS budget ran out: Stage says
// where, Err is what failed there (a selection error, a checkout wait, a
// network timeout, the server's MaxTimeMSExpired). errors.Is matches it
// against context.DeadlineExceeded.
type TimeoutError struct {
	Stage string
	Err   error
}

func (e *TimeoutError) Error() string {
	return "timeoutMS expired during " + e.Stage + ": " + e.Err.Error()
}

func (e *TimeoutError) Unwrap() error { return e.Err }

// Is makes every TimeoutError a context.DeadlineExceeded.
func (e *TimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// Timeout reports true.
func (e *TimeoutError) Timeout() bool { return true }

// timeoutError turns an operation's error under a positive timeoutMS into
// a *TimeoutError when the budget ran out or the server said
// MaxTimeMSExpired (code 50, at the top level or in a write concern
// error); other errors pass as they are.
func timeoutError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	b := budgetOf(ctx)
	if b == nil || !b.on {
		return err
	}
	var te *TimeoutError
	if errors.As(err, &te) {
		return err
	}
	oe, ok := err.(*Error)
	if !ok {
		return err
	}
	stage := ""
	var ce *conn.CommandError
	var wce *conn.WriteConcernError
	var se *selection.SelectionError
	var wq *pool.WaitQueueTimeoutError
	var de *pool.DialError
	var ne *conn.NetworkError
	switch {
	case errors.As(err, &ce) && (ce.Code == 50 || ce.WriteConcernError != nil && ce.WriteConcernError.Code == 50):
		stage = StageServerSide
	case errors.As(err, &wce) && wce.Code == 50:
		stage = StageServerSide
	case ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.As(err, &se):
		stage = StageSelection
	case errors.As(err, &wq):
		stage = StageCheckout
	case errors.As(err, &de):
		stage = StageConnect
	case errors.As(err, &ne) && ne.Timeout():
		stage = StageServer
	case errors.Is(err, context.DeadlineExceeded):
		stage = StageServer
	default:
		return err
	}
	return &Error{Op: oe.Op, Address: oe.Address, Err: &TimeoutError{Stage: stage, Err: oe.Err}}
}

// eventStages maps the stages of a *TimeoutError to the event's
// TimeoutStage values.
var eventStages = map[string]string{
	StageSelection:  event.TimeoutStageSelection,
	StageCheckout:   event.TimeoutStageCheckout,
	StageConnect:    event.TimeoutStageConnect,
	StageBeforeSend: event.TimeoutStageBeforeSend,
	StageServer:     event.TimeoutStageNetwork,
	StageServerSide: event.TimeoutStageServer,
	StageRetry:      event.TimeoutStageRetry,
}

// timeoutStage returns OperationFinished.TimeoutStage for an operation's
// error: the stage of a *TimeoutError (timeoutMS), or, for an error of a
// context deadline that ran out without timeoutMS (ctx is the
// operation's), the step that was waiting; "" for any other error.
func timeoutStage(ctx context.Context, err error) string {
	if err == nil {
		return ""
	}
	var te *TimeoutError
	if errors.As(err, &te) {
		if s, ok := eventStages[te.Stage]; ok {
			return s
		}
		return event.TimeoutStageOther
	}
	if !errors.Is(err, context.DeadlineExceeded) && !(errors.Is(ctx.Err(), context.DeadlineExceeded) && isTimeout(err)) {
		return ""
	}
	var se *selection.SelectionError
	var wq *pool.WaitQueueTimeoutError
	var de *pool.DialError
	var ne *conn.NetworkError
	switch {
	case errors.As(err, &se):
		return event.TimeoutStageSelection
	case errors.As(err, &de):
		return event.TimeoutStageConnect
	case errors.As(err, &wq):
		return event.TimeoutStageCheckout
	case errors.As(err, &ne):
		return event.TimeoutStageNetwork
	}
	return event.TimeoutStageOther
}
