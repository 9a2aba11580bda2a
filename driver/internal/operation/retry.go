package operation

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/auth"
	"github.com/mongoscope/mongoscope/driver/internal/conn"
	"github.com/mongoscope/mongoscope/driver/internal/pool"
	"github.com/mongoscope/mongoscope/driver/internal/session"
	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
)

// Retry is how an operation may be retried.
type Retry uint8

const (
	// RetryNone: never retried (getMore, runCommand, multi-document
	// updates and deletes, admin commands).
	RetryNone Retry = iota
	// RetryRead: a retryable read (find, aggregate without $out/$merge,
	// distinct, count, listDatabases, listCollections, listIndexes).
	RetryRead
	// RetryWrite: a retryable write (insert, a single update, replace or
	// delete, findAndModify, a bulk write batch without multi statements),
	// sent with a txnNumber when the server supports retryable writes.
	RetryWrite
)

// attemptState is what an operation's attempts share: the implicit
// session (kept across a retry, with its txnNumber), the server the last
// attempt used, and the servers a retry avoids.
type attemptState struct {
	retry    Retry // op.Retry, or RetryNone for a batch with a multi statement
	sess     *session.Server
	stimeout *time.Duration
	txn      int64 // the retryable write's txnNumber, 0 until assigned
	// supportsRetryWrites: the last attempt's server takes retryable
	// writes (a replica set member, mongos or load balancer with sessions).
	supportsRetryWrites bool
	addr                string // the last attempt's server, "" before checkout
	// selected is the server the last attempt selected, "" when
	// selection failed: a retry avoids it (deprioritized) even when the
	// attempt failed in checkout, e.g. establishing a connection to a
	// server too loaded to accept one.
	selected string
	// selectedSupports: the selected server's description says it takes
	// retryable writes (set for a RetryWrite only).
	selectedSupports bool
	sent             bool // the last attempt's command was (being) sent
	wire44           bool // the last attempt's server is 4.4 or later (wire 9)
	mongos           bool // the last attempt's server is a mongos
	deprioritized    []string
	selectFailed     bool // the last attempt found no server
	// minRTT is the last attempt's server's minRoundTripTime, taken from
	// the topology description its selection used (maxTime).
	minRTT time.Duration
}

// run runs op's attempts, in one loop where the retry policies combine
// as the client backpressure specification's pseudocode says:
//
//   - a retryable read or write (the retryable-reads and retryable-writes
//     specifications: shouldRetry) is retried once;
//   - an error labelled SystemOverloadedError and RetryableError is
//     retried for any command (getMore, updateMany, runCommand, ...) when
//     retryReads (a read), retryWrites (a write) or both (runCommand)
//     allow it (retryableOverload);
//   - once an attempt fails with an overload error (SystemOverloadedError),
//     the operation's retries of any kind are capped at maxAdaptiveRetries,
//     and each retry after an overload error waits a backoff first
//     (backoff); a context that ends meanwhile ends the loop.
//
// A retry selects a server again: a mongos that failed is avoided, and so
// is a server that returned an overload error when enableOverloadRetargeting
// is on. A write keeps its session and txnNumber across retries, so the
// server applies it at most once. The error returned is the last one that
// shows the command was attempted (sent, without NoWritesPerformed, and not
// a write retried on a server that does not take retryable writes), or the
// first error when none does (retryable-writes "Determining the error to
// return", which the retryable-reads specification matches for reads).
func (x *Executor) run(ctx context.Context, op *Op, id int64, fin *event.OperationFinished) (Result, error) {
	// A write batch's retryability is decided by attempt, on the
	// statements the command carries once split.
	st := attemptState{retry: op.Retry}
	defer x.putSession(&st)
	// allowed is the number of retries the policies allow: one for the
	// retryable reads and writes, maxAdaptiveRetries after an overload
	// error.
	allowed := 1
	capped := false // an overload error came: allowed is maxAdaptiveRetries
	var out outcome
	for retries := 0; ; {
		st.sent, st.selectFailed, st.selected = false, false, ""
		res, err := x.attempt(ctx, op, id, fin, &st)
		err = x.labelNetworkError(op, err, &st)
		res, err = labelPre44(res, err, &st)
		if err == nil {
			return res, nil
		}
		// A retryable write (sent with a txnNumber) whose retry went to a
		// server that does not take retryable writes.
		unsupported := retries > 0 && st.txn != 0 && st.addr != "" && !st.supportsRetryWrites
		out.add(res, err, st.sent && !hasLabel(err, "NoWritesPerformed") && !unsupported)
		if unsupported {
			// A retryable write (sent with a txnNumber) whose retry's
			// server does not take retryable writes: nothing more is
			// retried.
			return out.res, noRetryableWrites(out.err, &st)
		}
		var te *TimeoutError
		if errors.As(err, &te) || !x.shouldRetry(ctx, op, &st, err) && !x.retryableOverload(ctx, op, err) {
			// A *TimeoutError is final: the budget, or the
			// computedServerSelectionTimeout (checkOut), ran out.
			return out.res, expiredWhileRetrying(ctx, &st, err, noRetryableWrites(out.err, &st))
		}
		overload := isOverload(err)
		if overload {
			allowed, capped = x.Overload.MaxRetries, true
		}
		retries++
		// Past the policies' count, a retryable error is retried again
		// only under a timeoutMS with budget left (retryAgain, csot.go),
		// unless an overload error came: then every retry, of any error,
		// stays within maxAdaptiveRetries (client backpressure,
		// "Interaction with Other Retry Policies").
		if retries > allowed && (capped || !retryAgain(ctx, retries+1)) {
			return out.res, expiredWhileRetrying(ctx, &st, err, noRetryableWrites(out.err, &st))
		}
		// A retry avoids the failed server on a sharded cluster always,
		// elsewhere only after an overload error with
		// enableOverloadRetargeting. (The retryable reads and writes texts
		// say "only if the error is labelled SystemOverloadedError" and
		// leave the option out; the client backpressure specification and
		// retryable-reads prose test 3.3 make it opt-in, default false,
		// which we follow. The seed retryable-reads text deprioritizes
		// nothing, and retries only once even under timeoutMS.)
		if st.selected != "" && (x.Topology.Description().Type == description.Sharded || overload && x.Overload.Retarget) {
			st.deprioritized = append(st.deprioritized, st.selected)
		}
		if d := x.Events; d.Retry() {
			d.OperationRetry(ctx, &event.OperationRetry{Name: EventName(op), Database: op.DB, Collection: op.Collection,
				OperationID: id, Attempt: retries, Err: err, Overload: overload})
		}
		st.addr = ""
		if overload && x.backoff(ctx, retries, err) != nil {
			return out.res, expiredWhileRetrying(ctx, &st, err, noRetryableWrites(out.err, &st))
		}
	}
}

// expiredWhileRetrying returns the error run ends with, ret, as a
// *TimeoutError when a positive timeoutMS ran out while the operation
// still had to be retried: the last attempt, last, failed with a
// retryable error, or a retry failed on the budget before its command was
// sent (selection, checkout, or too little time left for the server's
// round trip). ret is then the error of the last attempt that was sent,
// which by itself says nothing of the timeout; CSOT's "Retryability"
// requires a timeout error once the timeout expires. A non-retryable
// error that comes back as the budget happens to run out is returned as
// it is.
func expiredWhileRetrying(ctx context.Context, st *attemptState, last, ret error) error {
	b := budgetOf(ctx)
	if b == nil || !b.on || ret == nil {
		return ret
	}
	// The budget ran out, or what is left of it was too little to send
	// the retry (maxTime's short cut, a *TimeoutError before the
	// deadline).
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) && !isTimeout(last) {
		return ret
	}
	var te *TimeoutError
	if errors.As(timeoutError(ctx, ret), &te) {
		return ret // already a timeout error (Execute makes it one)
	}
	retryable := isOverload(last) || isTimeout(last)
	switch st.retry {
	case RetryRead:
		retryable = retryable || retryableReadError(last)
	case RetryWrite:
		retryable = retryable || retryableWriteError(last, st)
	}
	if !retryable {
		return ret
	}
	oe, ok := ret.(*Error)
	if !ok {
		return &TimeoutError{Stage: StageRetry, Err: ret}
	}
	return &Error{Op: oe.Op, Address: oe.Address, Err: &TimeoutError{Stage: StageRetry, Err: oe.Err}}
}

// isTimeout tells whether err is a timeout of the budget: a
// *TimeoutError, a context deadline or a network timeout.
func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne *conn.NetworkError
	return errors.As(err, &ne) && ne.Timeout()
}

// outcome is the error run returns, with the result that came with it.
type outcome struct {
	res Result
	err error
}

// add records an attempt's error: it replaces the one kept unless it
// shows no attempt and one was kept already.
func (o *outcome) add(res Result, err error, attempted bool) {
	if o.err == nil || attempted {
		o.res, o.err = res, err
	}
}

// putSession returns the operation's implicit session to the pool,
// unless a cursor took it.
func (x *Executor) putSession(st *attemptState) {
	if st.sess != nil {
		x.Sessions.Put(st.sess, st.stimeout)
		st.sess = nil
	}
}

// shouldRetry tells whether op's failed first attempt is retried.
func (x *Executor) shouldRetry(ctx context.Context, op *Op, st *attemptState, err error) bool {
	if op.Binding != nil || ctx.Err() != nil || errors.Is(err, ErrClientDisconnected) {
		return false
	}
	switch st.retry {
	case RetryWrite:
		if !x.RetryWrites || op.Unacknowledged {
			return false
		}
		// A write whose first server does not take retryable writes is
		// run as if retryWrites were off: never retried (only the
		// overload policy may retry it). That is the connection's hello
		// once the command was sent, the server's description before.
		if st.sent && !st.supportsRetryWrites || !st.sent && st.selected != "" && !st.selectedSupports {
			return false
		}
		return retryableWriteError(err, st)
	case RetryRead:
		// The seed text also required the selected server to support
		// retryable reads (maxWireVersion 6, MongoDB 3.6); the Markdown
		// specification dropped that check with the servers before 4.2.
		return x.RetryReads && retryableReadError(err)
	}
	return false
}

// retryableWriteCodes are the codes for which a driver adds the
// RetryableWriteError label to a server older than 4.4, which does not add
// it itself (retryable-writes specification).
var retryableWriteCodes = map[int32]bool{
	11600: true, 11602: true, 10107: true, 13435: true, 13436: true, 189: true, 91: true,
	7: true, 6: true, 89: true, 9001: true, 262: true,
}

// retryableReadCodes are the retryable-reads specification's codes. The
// older seed text (1.3.0) lists neither ExceededTimeLimit (262) nor
// ReadConcernMajorityNotAvailableYet (134), and does not count errors in
// the connection handshake; the Markdown specification, which we follow,
// has both codes and the handshake's errors (retryableReadError finds a
// code or a network error through the handshake's and authentication's
// wrapping).
var retryableReadCodes = map[int32]bool{
	11600: true, 11602: true, 10107: true, 13435: true, 13436: true, 189: true, 91: true,
	7: true, 6: true, 89: true, 9001: true, 134: true, 262: true,
}

// retryableWriteError: a network error, a cleared pool, or an error
// labelled RetryableWriteError (by the server from 4.4, by labelPre44
// before).
func retryableWriteError(err error, st *attemptState) bool {
	return isNetwork(err) || isPoolCleared(err) || hasLabel(err, "RetryableWriteError")
}

// labelPre44 adds RetryableWriteError to a retryable write's error from a
// server older than 4.4, which does not label errors itself, as the
// retryable-writes specification asks ("RetryableWriteError Labels"): for
// one of the retryable codes in the reply's top-level code (a mongod or a
// mongos), or in its writeConcernError.code from a mongod, never from a
// mongos (which retries internally and whose write concern error is not
// the driver's to retry), and never for writeErrors. A 4.4+ server's
// errors are left as they are. The label goes on copies of the error and,
// for a write concern error, of the reply, whose errorLabels the caller
// reads.
func labelPre44(res Result, err error, st *attemptState) (Result, error) {
	if err == nil || st.txn == 0 || !st.sent || st.wire44 || !st.supportsRetryWrites || hasLabel(err, "RetryableWriteError") {
		return res, err
	}
	var ce *conn.CommandError
	if errors.As(err, &ce) {
		wce := ce.WriteConcernError
		if retryableWriteCodes[ce.Code] || !st.mongos && wce != nil && retryableWriteCodes[wce.Code] {
			return res, withLabel(err, "RetryableWriteError")
		}
		return res, err
	}
	var wce *conn.WriteConcernError
	if errors.As(err, &wce) && !st.mongos && retryableWriteCodes[wce.Code] {
		res.Body = appendLabel(res.Body, "RetryableWriteError")
		return res, withLabel(err, "RetryableWriteError")
	}
	return res, err
}

// appendLabel returns a copy of the reply body with label added to its
// errorLabels; a body it cannot read is returned as it is.
func appendLabel(body bson.Raw, label string) bson.Raw {
	els, err := body.Elements()
	if err != nil {
		return body
	}
	var labels []string
	st, b := bson.AppendDocumentStart(make([]byte, 0, len(body)+len(label)+32))
	for _, e := range els {
		if e.Key() != "errorLabels" {
			b = append(b, e...)
			continue
		}
		arr, ok := e.Value().ArrayOK()
		if !ok {
			return body
		}
		vs, err := arr.Values()
		if err != nil {
			return body
		}
		for _, v := range vs {
			if l, ok := v.StringValueOK(); ok {
				labels = append(labels, l)
			}
		}
	}
	labels = append(labels, label)
	ast, b := bson.AppendArrayElementStart(b, "errorLabels")
	for i, l := range labels {
		b = bson.AppendStringElement(b, bson.ArrayKey(i), l)
	}
	b, _ = bson.AppendDocumentEnd(b, ast)
	b, _ = bson.AppendDocumentEnd(b, st)
	return b
}

// retryableReadError: a network error, a cleared pool, or one of the
// retryable-reads specification's codes.
func retryableReadError(err error) bool {
	if isNetwork(err) || isPoolCleared(err) {
		return true
	}
	var ce *conn.CommandError
	return errors.As(err, &ce) && retryableReadCodes[ce.Code]
}

func isPoolCleared(err error) bool {
	var pe *pool.PoolClearedError
	return errors.As(err, &pe)
}

// hasLabel tells whether err carries the error label, from the server
// (a command or write concern error) or the driver (a network error).
func hasLabel(err error, label string) bool {
	var ce *conn.CommandError
	if errors.As(err, &ce) && ce.HasLabel(label) {
		return true
	}
	var wce *conn.WriteConcernError
	if errors.As(err, &wce) {
		for _, l := range wce.Labels {
			if l == label {
				return true
			}
		}
	}
	var ne *conn.NetworkError
	return errors.As(err, &ne) && ne.HasLabel(label)
}

// appendTxnNumber returns cmd with txnNumber appended, in cmd's own
// buffer when it has room.
func appendTxnNumber(cmd bson.Raw, txn int64) bson.Raw {
	if len(cmd) < 5 {
		return cmd
	}
	b := append([]byte(cmd[:len(cmd)-1]), 0x12)
	b = append(b, "txnNumber"...)
	b = append(b, 0)
	b = bson.AppendInt64(b, txn)
	b = append(b, 0)
	n := uint32(len(b))
	b[0], b[1], b[2], b[3] = byte(n), byte(n>>8), byte(n>>16), byte(n>>24)
	return b
}

// txnNumberSize is the size of the txnNumber element appendTxnNumber
// adds: type, "txnNumber" and its NUL, an int64.
const txnNumberSize = 1 + len("txnNumber") + 1 + 8

// batchRetryable tells whether a command carrying the write statements
// stmts may be retried: not when an update statement is multi: true, or
// a delete statement has limit 0 (updateMany, deleteMany, and bulk
// writes holding them). Insert documents have neither field at the top
// level that matters: an inserted document named "multi" or "limit" is
// data, so only update and delete statements are read.
func batchRetryable(identifier string, stmts []bson.Raw) bool {
	switch identifier {
	case "updates":
		for _, d := range stmts {
			if m, ok := d.Lookup("multi").BooleanOK(); ok && m {
				return false
			}
		}
	case "deletes":
		for _, d := range stmts {
			if l, ok := d.Lookup("limit").AsInt64OK(); ok && l == 0 {
				return false
			}
		}
	}
	return true
}

// labelNetworkError adds RetryableWriteError to a retryable write's
// network error, with retryWrites on, as the retryable-writes
// specification asks ("RetryableWriteError Labels"; the label tells the
// application the write may be retried): one talking to a server that
// takes retryable writes, and, whatever the server, one establishing the
// connection (the handshake and authentication included) or a
// PoolClearedError at checkout, where nothing was sent. The error may be
// shared with other operations (a connection's failure hands the same
// error to each waiter), so the label goes on a copy: the returned error.
// A PoolClearedError carries no labels of its own; its cause, when the
// clear gave one, takes the label.
func (x *Executor) labelNetworkError(op *Op, err error, st *attemptState) error {
	if err == nil || st.retry != RetryWrite || !x.RetryWrites || op.Unacknowledged || hasLabel(err, "RetryableWriteError") {
		return err
	}
	if st.sent && !st.supportsRetryWrites {
		return err
	}
	if isNetwork(err) || !st.sent && isPoolCleared(err) {
		return withLabel(err, "RetryableWriteError")
	}
	return err
}

// withLabel returns err with label on a copy of its network, command or
// write concern error, copying the errors that wrap it (*Error,
// *pool.PoolClearedError, *pool.DialError, *conn.HandshakeError,
// *auth.Error); any other
// wrapping is returned as it is.
func withLabel(err error, label string) error {
	switch e := err.(type) {
	case *conn.NetworkError:
		cp := *e
		cp.Labels = append(e.Labels[:len(e.Labels):len(e.Labels)], label)
		return &cp
	case *conn.CommandError:
		cp := *e
		cp.Labels = append(e.Labels[:len(e.Labels):len(e.Labels)], label)
		return &cp
	case *conn.WriteConcernError:
		cp := *e
		cp.Labels = append(e.Labels[:len(e.Labels):len(e.Labels)], label)
		return &cp
	case *Error:
		cp := *e
		cp.Err = withLabel(e.Err, label)
		return &cp
	case *pool.DialError:
		cp := *e
		cp.Err = withLabel(e.Err, label)
		return &cp
	case *conn.HandshakeError:
		cp := *e
		cp.Err = withLabel(e.Err, label)
		return &cp
	case *auth.Error:
		cp := *e
		cp.Err = withLabel(e.Err, label)
		return &cp
	case *pool.PoolClearedError:
		cp := *e
		cp.Cause = withLabel(e.Cause, label)
		return &cp
	}
	return err
}

// errRetryNotSupported is the outcome of a retry that went unsent: its
// server does not take retryable writes. run returns the previous
// attempt's error in its place.
var errRetryNotSupported = errors.New("the server selected for the retry does not support retryable writes")

// ErrRetryableWritesNotSupported replaces the server's "Transaction
// numbers are only allowed on a replica set member or mongos" (code 20,
// IllegalOperation) on a retryable write, as the retryable-writes
// specification asks: the deployment's storage engine cannot retry writes.
var ErrRetryableWritesNotSupported = errors.New("this MongoDB deployment does not support retryable writes; please add retryWrites=false to your connection string")

// noRetryableWrites maps that error; others are returned as they are.
func noRetryableWrites(err error, st *attemptState) error {
	var ce *conn.CommandError
	if err == nil || st.txn == 0 || !errors.As(err, &ce) || ce.Code != 20 || !strings.HasPrefix(ce.Message, "Transaction numbers") {
		return err
	}
	var oe *Error
	if errors.As(err, &oe) {
		return &Error{Op: oe.Op, Address: oe.Address, Err: &RetryableWritesError{Err: ce}}
	}
	return &RetryableWritesError{Err: ce}
}

// RetryableWritesError is ErrRetryableWritesNotSupported with the
// server's error that told it.
type RetryableWritesError struct{ Err error }

func (e *RetryableWritesError) Error() string {
	return fmt.Sprintf("%v (%v)", ErrRetryableWritesNotSupported, e.Err)
}

// Unwrap gives both: errors.Is finds ErrRetryableWritesNotSupported and
// errors.As the server's error.
func (e *RetryableWritesError) Unwrap() []error {
	return []error{ErrRetryableWritesNotSupported, e.Err}
}
