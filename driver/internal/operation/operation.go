package operation

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/conn"
	"github.com/mongoscope/mongoscope/driver/internal/pool"
	"github.com/mongoscope/mongoscope/driver/internal/selection"
	"github.com/mongoscope/mongoscope/driver/internal/session"
	"github.com/mongoscope/mongoscope/driver/internal/topology"
	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
	"github.com/mongoscope/mongoscope/internal/wire"
)

// Executor runs operations against one topology.
type Executor struct {
	Topology *topology.Topology
	// Events receives the operation and command events (the topology
	// publishes selection, pool and SDAM events itself); nil sends none.
	Events *event.Dispatcher
	// Timeout is the client's timeoutMS: each operation whose context has
	// no earlier deadline gets this budget. 0 means none.
	Timeout time.Duration
	// Sessions is the client's server-session pool; nil sends no lsid.
	Sessions *session.Pool
	// Clock is the client's cluster time; nil sends no $clusterTime.
	Clock *session.Clock
	// ServerSelectionTimeout is the client's serverSelectionTimeoutMS.
	// With Timeout set, a checkout gets what is left of
	// min(serverSelectionTimeoutMS, timeoutMS) after selection, and the
	// pool's waitQueueTimeoutMS is ignored (CSOT); 0 leaves only Timeout.
	ServerSelectionTimeout time.Duration
	// TimeoutSet says the client's timeoutMS is set even though Timeout
	// is 0 (no limit): the deprecated timeouts are ignored (csot.go).
	TimeoutSet bool

	// RetryReads and RetryWrites are the client's retryReads and
	// retryWrites (both true by default).
	RetryReads, RetryWrites bool
	// Overload is the client backpressure retry policy (overload.go).
	Overload OverloadPolicy

	// stimeout is the last session timeout (sessionTimeout).
	stimeout atomic.Pointer[time.Duration]
}

// Op is one operation: one command, with what the executor adds to it.
// Command is built by the caller without "$db", "lsid", "$clusterTime",
// "readConcern", "writeConcern" or "$readPreference": the executor appends
// those that apply on the server it runs on.
type Op struct {
	Name       string // the operation's name in events, e.g. "find"
	DB         string
	Collection string // empty for database and client operations
	Command    bson.Raw
	Sequences  []wire.Sequence
	Selector   selection.Selector
	// ReadConcern is the encoded readConcern document; nil sends none.
	ReadConcern bson.Raw
	// WriteConcern is the encoded writeConcern document; nil sends none
	// (the server's default applies).
	WriteConcern bson.Raw
	// Unacknowledged sends the command with moreToCome and no session
	// (w:0): Run returns {ok:1} once the message is written.
	Unacknowledged bool
	// Cursor says the reply opens a cursor: when it is still open (a
	// cursor id other than 0), Execute keeps its server, its implicit
	// session and, behind a load balancer, its connection in the Result's
	// Binding until Release.
	Cursor bool
	// Binding runs the command on a cursor's server, session and pinned
	// connection (getMore, killCursors) instead of selecting one.
	Binding *Binding
	// NoSession sends no lsid even where sessions are supported.
	NoSession bool
	// Session is the explicit session the operation runs in (nil: an
	// implicit one, when the deployment supports sessions), or the
	// implicit session (session.Client.Implicit) the commands of one
	// multi-command operation share. Its server session is taken from
	// the pool at its first use; a reply advances its cluster and
	// operation times.
	Session *session.Client
	// Causal marks a command that takes readConcern.afterClusterTime in a
	// causally consistent explicit session: the reads that take a read
	// concern (find, aggregate, count, distinct) and the write commands
	// the read-write-concern specification lists; runCommand, getMore and
	// killCursors do not.
	Causal bool
	// Generic marks the generic runCommand (and runCursorCommand, and
	// Ping, a runCommand of ping): its document is the caller's, so no
	// read concern is added to it (read-write-concern), not even a
	// snapshot session's, which every other command that is not a
	// cursor's getMore or killCursors carries (snapshot-sessions, "Sending
	// readConcern to the server on all commands").
	Generic bool
	// Origin, set on a cursor's getMore and killCursors when operation
	// monitors are attached, is the context the OperationStarted hook of
	// the operation that opened the cursor returned (Result.Origin); it
	// goes into the event (event.OperationStarted.Origin).
	Origin context.Context
	// Batch, when set, holds a write's statements: each attempt sends as
	// many of them, from the start, as fit in one message under the
	// connection's limits (maxWriteBatchSize, maxBsonObjectSize,
	// maxMessageSizeBytes), and records how many in Batch.Sent.
	Batch *Batch
	// Retry says whether the operation is a retryable read or write (the
	// retryable-reads and retryable-writes specifications' lists); the
	// client's retryReads and retryWrites decide whether it is retried.
	Retry Retry
	// Kind is what the overload retry policy takes the operation for
	// (KindAuto: from Retry, Binding, Selector and WriteConcern).
	Kind Kind
	// Check, when set, is called with the selected server's limits
	// before anything is sent: an error it returns fails the operation,
	// with nothing sent (an option the server's version cannot take, e.g.
	// a hint on an unacknowledged write before 4.4, or a command over its
	// size limit).
	Check func(ServerLimits) error
	// Timeout is the timeoutMS the operation inherits from its
	// collection, database or session (nil: the client's); a context's
	// WithTimeout overrides it (csot.go).
	Timeout *time.Duration
	// Deadline, when set, bounds the operation as well: a cursor's
	// lifetime under timeoutMode CURSOR_LIFETIME.
	Deadline time.Time
	// NoMaxTime sends no maxTimeMS under timeoutMS (a cursor's command in
	// timeoutMode ITERATION, a tailable cursor's).
	NoMaxTime bool
	// KeepMaxTime keeps a maxTimeMS the command carries when timeoutMS is
	// 0 (RunCommand's document is not inspected).
	KeepMaxTime bool
	// CursorKind, MaxAwait and OutMerge describe the cursor an Op with
	// Cursor opens, for timeoutMode's refusals and defaults (csot.go).
	CursorKind CursorKind
	MaxAwait   time.Duration
	OutMerge   bool
}

// ServerLimits are what the server a command goes to said in its hello
// about what it accepts.
type ServerLimits struct {
	MaxWireVersion      int32
	MaxBSONObjectSize   int32 // 0 when the server did not say
	MaxMessageSizeBytes int32
	MaxWriteBatchSize   int32
}

// Batch is the run of statements (insert documents, update or delete
// statements) a write command carries in a kind-1 section.
type Batch struct {
	Identifier string // "documents", "updates" or "deletes"
	Docs       []bson.Raw
	// Slack is how much a statement may exceed maxBsonObjectSize: 0 for
	// inserted documents, 16 KiB for update and delete statements (the
	// CRUD specification's allowance for the statement's own fields).
	Slack int
	// Sent is the number of statements the last attempt sent.
	Sent int
}

// ErrTooLarge is the cause of a write whose statement is over the
// server's size limits; it is found before anything is sent.
var ErrTooLarge = wire.ErrTooLarge

// Binding is what a cursor keeps between its commands: its server, the
// implicit session its commands carry, and, in load-balanced mode, the
// connection it is pinned to.
type Binding struct {
	Address string
	Session *session.Server
	pinned  *pool.Pooled[*conn.Conn]
	pool    *pool.Pool[*conn.Conn]
	timeout *time.Duration // the session timeout when the session was taken
	// explicit is the explicit session Session belongs to (nil for an
	// implicit one): Release does not give it back to the pool, and the
	// cursor's replies advance its times.
	explicit *session.Client
	// held says the binding holds explicit (session.Client.Hold) until
	// Release.
	held bool
	// released makes Release act once, whether the cursor's owner or a
	// garbage-collection cleanup calls it (CleanupBinding).
	released atomic.Bool
	// wire is the maxWireVersion of the connection that opened the cursor.
	wire int32
}

// Pinned tells whether the binding holds a connection.
func (b *Binding) Pinned() bool { return b != nil && b.pinned != nil }

// Result is a successful (or write-concern-failed) command's outcome.
type Result struct {
	// Body is the reply, a copy the caller owns; {ok:1} for an
	// unacknowledged write.
	Body bson.Raw
	// Address is the server that ran the command.
	Address string
	// Binding is set for an Op with Cursor whose cursor stays open.
	Binding *Binding
	// Buf, set only for an Op with Cursor or a cursor's Binding (a
	// getMore), is the big buffer Body lies in
	// (a batch of a megabyte or more, read without a copy), which the
	// caller owns: once nothing reads Body or what was sliced from it, it
	// may hand it back with conn.RecycleBuffer so that the next big reply
	// reuses it. Dropping it instead is fine.
	Buf []byte
	// CursorTimeout, for an Op with Cursor, says how timeoutMS applies to
	// the cursor's getMores and killCursors.
	CursorTimeout CursorTimeout
	// Bounded: a positive timeoutMS bounded the operation, so a write
	// error in Body with code 50 (MaxTimeMSExpired) is its timeout (CSOT's
	// error transformations).
	Bounded bool
	// Origin, for an Op with Cursor whose cursor stays open and only when
	// operation monitors are attached, is the context the monitors'
	// OperationStarted returned: the cursor hands it to its getMores and
	// killCursors (Op.Origin). Only its values are for use; it may be
	// canceled long before the cursor is done.
	Origin context.Context
}

// OpContext is the context of one client operation whose own context
// cannot end early: only the client's Disconnect ends it (its Context is
// the cancelable one the client made for that). Execute tells it which
// connection the operation is using, so that Interrupt wakes that
// connection's I/O; the connection then needs no watch of its own on the
// context, which saves each operation that cost.
type OpContext struct {
	context.Context
	mu   sync.Mutex
	conn *conn.Conn
}

// opContextKey is the key an OpContext answers with itself, so that it is
// found under the contexts monitors wrap it in (an operation monitor's
// OperationStarted may return one).
type opContextKey struct{}

// Value answers opContextKey with o, and any other key as Context does.
func (o *OpContext) Value(key any) any {
	if _, ok := key.(opContextKey); ok {
		return o
	}
	return o.Context.Value(key)
}

// opContextOf returns the OpContext ctx ends with: ctx itself, or the one
// under the contexts that wrap it when they add no ending of their own
// (their Done is its Done). Otherwise nil: the connection must watch ctx.
func opContextOf(ctx context.Context) *OpContext {
	if oc, ok := ctx.(*OpContext); ok {
		return oc
	}
	oc, _ := ctx.Value(opContextKey{}).(*OpContext)
	if oc == nil || ctx.Done() != oc.Done() {
		return nil
	}
	return oc
}

// Interrupt wakes the I/O of the operation's connection, if it is using
// one. Call it after canceling Context.
func (o *OpContext) Interrupt() {
	o.mu.Lock()
	if o.conn != nil {
		o.conn.Wake()
	}
	o.mu.Unlock()
}

// use records the connection the operation is using (nil: none).
func (o *OpContext) use(c *conn.Conn) {
	o.mu.Lock()
	o.conn = c
	o.mu.Unlock()
}

// ErrSessionsNotSupported is the cause of an operation in an explicit
// session on a connection whose handshake reported no
// logicalSessionTimeoutMinutes (the driver-sessions specification).
var ErrSessionsNotSupported = errors.New("sessions are not supported by this deployment")

// ErrSnapshotNotSupported is the cause of an operation in a snapshot
// session on a server older than 5.0 (wire version 13), with the message
// the snapshot-sessions specification gives.
var ErrSnapshotNotSupported = errors.New("Snapshot reads require MongoDB 5.0 or later")

// ErrClientDisconnected is the cause with which the client cancels the
// contexts of the operations it interrupts when it disconnects (package
// driver exports it). An error such an interruption causes says nothing
// about the server, so SDAM's error handling does not see it.
var ErrClientDisconnected = errors.New("driver: client is disconnected")

// ids numbers operations process-wide; the ids tie an operation's
// selection and command events together.
var ids atomic.Int64

// NextID returns a new operation id.
func NextID() int64 { return ids.Add(1) }

// Error is what Run returns when an operation fails: the operation, and the
// cause, which errors.As reaches (*conn.CommandError,
// *selection.SelectionError, *pool.WaitQueueTimeoutError, ...).
type Error struct {
	Op      string
	Address string // the server, once one was selected
	Err     error
}

func (e *Error) Error() string {
	if e.Address == "" {
		return fmt.Sprintf("%s: %v", e.Op, e.Err)
	}
	return fmt.Sprintf("%s on %s: %v", e.Op, e.Address, e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// EventName is op's name in the operation events (event.OperationStarted,
// OperationFinished, OperationRetry): the name the OpenTelemetry
// specification gives the operation, so that spans, metrics and logs name
// it alike. That is the command's name (op.Name), except runCommand for a
// command the application wrote (op.Generic), dropCollection for drop and
// createCollection for create. Errors keep op.Name.
func EventName(op *Op) string {
	if op.Generic {
		return "runCommand"
	}
	switch op.Name {
	case "drop":
		return "dropCollection"
	case "create":
		return "createCollection"
	}
	return op.Name
}

// Run runs op and returns a copy of the reply body. A reply with a write
// concern error comes back with a *conn.WriteConcernError (wrapped in
// *Error) alongside the body.
func (x *Executor) Run(ctx context.Context, op *Op) (bson.Raw, error) {
	r, err := x.Execute(ctx, op)
	return r.Body, err
}

// Execute runs op: select a server (or use op.Binding's), check out a
// connection, add the session, cluster time, concerns and read preference
// to the command, send it, decode the reply and map the errors, publishing
// the operation, selection, pool and command events on the way. It is the
// one path every operation of the driver takes.
func (x *Executor) Execute(ctx context.Context, op *Op) (Result, error) {
	id := NextID()
	d := x.Events
	start := time.Now()
	var fin event.OperationFinished
	var origin context.Context // the monitors' context, for a cursor's later operations
	if d.Operation() {
		ctx = d.OperationStarted(ctx, &event.OperationStarted{Name: EventName(op), Database: op.DB, Collection: op.Collection, OperationID: id,
			Generic: op.Generic, Origin: op.Origin})
		origin = ctx
	}
	ctx, op, cancel, err := x.budget(ctx, op) // timeoutMS (csot.go)
	if cancel != nil {
		defer cancel()
	}
	if dl, ok := ctx.Deadline(); ok {
		fin.Timeout = dl.Sub(start)
	}
	var res Result
	if err == nil {
		res, err = x.run(ctx, op, id, &fin)
		err = timeoutError(ctx, err)
		if b := budgetOf(ctx); b != nil {
			if err == nil && op.Cursor {
				res.CursorTimeout = b.cursor
			}
			res.Bounded = b.on
		}
		if origin != nil && op.Cursor && res.Binding != nil {
			res.Origin = origin
		}
	} else {
		err = &Error{Op: op.Name, Err: err}
	}
	if d.Operation() {
		fin.Name, fin.Database, fin.Collection, fin.OperationID = EventName(op), op.DB, op.Collection, id
		fin.Duration = time.Since(start)
		fin.Err = err
		fin.TimeoutStage = timeoutStage(ctx, err)
		f := fin // escapes to the monitors; fin stays on the stack
		d.OperationFinished(ctx, &f)
	}
	return res, err
}

// attempt is one try: select, check out, send.
func (x *Executor) attempt(ctx context.Context, op *Op, id int64, fin *event.OperationFinished, st *attemptState) (Result, error) {
	var (
		addr string
		p    *pool.Pool[*conn.Conn]
		pc   *pool.Pooled[*conn.Conn]
		err  error
	)
	b := op.Binding
	switch {
	case b != nil && b.pinned != nil:
		addr, p, pc = b.Address, b.pool, b.pinned
		st.minRTT = bindingRTT(x.Topology.Description(), addr)
	case b != nil:
		s, ok := x.Topology.Server(b.Address)
		if !ok {
			return Result{}, &Error{Op: op.Name, Address: b.Address, Err: fmt.Errorf("the server %s is no longer part of the deployment", b.Address)}
		}
		addr, p = b.Address, s.Pool()
		st.minRTT = bindingRTT(x.Topology.Description(), addr)
		t1 := time.Now()
		pc, err = x.checkOut(ctx, p, t1)
		fin.CheckOut += time.Since(t1)
		if err != nil {
			return Result{}, &Error{Op: op.Name, Address: addr, Err: err}
		}
	default:
		t0 := time.Now()
		sel := op.Selector
		if len(st.deprioritized) > 0 {
			sel.Deprioritized = append(sel.Deprioritized[:len(sel.Deprioritized):len(sel.Deprioritized)], st.deprioritized...)
		}
		s, minRTT, err := x.Topology.SelectFor(ctx, sel, topology.Op{Name: op.Name, ID: id})
		st.minRTT = minRTT
		fin.Selection += time.Since(t0)
		if err != nil {
			st.selectFailed = true
			return Result{}, &Error{Op: op.Name, Err: err}
		}
		defer s.EndOperation()
		addr, p = s.Address(), s.Pool()
		st.selected = addr
		if st.retry == RetryWrite {
			// Whether the selected server takes retryable writes, by its
			// description, for an attempt that fails before its
			// connection's hello says (retryable-writes,
			// isRetryableWritesSupported).
			sd := s.Description()
			st.selectedSupports = sd.Type == description.LoadBalancer ||
				sd.Type != description.Standalone && sd.LogicalSessionTimeoutMinutes != nil && sd.MaxWireVersion >= 6
		}
		t1 := time.Now()
		pc, err = x.checkOut(ctx, p, t0)
		fin.CheckOut += time.Since(t1)
		if err != nil {
			// A failure to establish a connection was handed to SDAM by the
			// pool itself (topology.Config's OnDialError), before its events.
			return Result{}, &Error{Op: op.Name, Address: addr, Err: err}
		}
	}
	keep := false // the connection stays pinned to a cursor
	defer func() {
		if !keep && (b == nil || b.pinned == nil) {
			p.CheckIn(ctx, pc)
		}
	}()
	fin.Attempts++
	st.addr = addr
	c := pc.Conn()
	// An OpContext wakes the connection itself when it ends; the
	// connection is forgotten before it is checked in (deferred above).
	oc := opContextOf(ctx)
	watched := oc != nil
	if watched {
		oc.use(c)
		defer oc.use(nil)
	}
	hello := c.Hello()
	if op.Check != nil {
		if err := op.Check(ServerLimits{MaxWireVersion: hello.MaxWireVersion, MaxBSONObjectSize: hello.MaxBSONObjectSize,
			MaxMessageSizeBytes: hello.MaxMessageSizeBytes, MaxWriteBatchSize: hello.MaxWriteBatchSize}); err != nil {
			return Result{Address: addr}, &Error{Op: op.Name, Address: addr, Err: err}
		}
	}
	td := x.Topology.Description()

	// The session: the binding's, or an implicit one taken now that the
	// connection says whether the server supports sessions (the
	// driver-sessions specification asks for the check after checkout).
	var sess *session.Server
	var stimeout *time.Duration
	owned := false
	exp := op.Session // an explicit session, or a multi-command operation's implicit one
	if b != nil {
		exp = b.explicit
	}
	switch {
	case b != nil:
		sess, stimeout = b.Session, b.timeout
	case st.sess != nil:
		// A retry keeps the first attempt's session (and txnNumber), on a
		// connection that supports sessions; on one that does not it
		// sends none (driver-sessions), and run still puts it back.
		if hello.ServiceID != nil || hello.LogicalSessionTimeoutMinutes != nil {
			sess, stimeout = st.sess, st.stimeout
		}
	case op.Unacknowledged || op.NoSession || x.Sessions == nil:
		exp = nil
	case exp != nil && exp.Implicit:
		// The implicit session of a multi-command operation: used where
		// the connection supports sessions, ignored where it does not.
		switch {
		case hello.ServiceID != nil:
		case hello.LogicalSessionTimeoutMinutes != nil:
			stimeout = x.sessionTimeout(sessionMinutes(td, hello.LogicalSessionTimeoutMinutes))
		default:
			exp = nil
		}
		if exp != nil {
			var err error
			if sess, err = exp.Server(stimeout); err != nil {
				return Result{Address: addr}, &Error{Op: op.Name, Address: addr, Err: err}
			}
		}
	case exp != nil:
		// An explicit session takes its server session at its first use.
		if hello.ServiceID == nil {
			if hello.LogicalSessionTimeoutMinutes == nil {
				return Result{Address: addr}, &Error{Op: op.Name, Address: addr, Err: ErrSessionsNotSupported}
			}
			stimeout = x.sessionTimeout(sessionMinutes(td, hello.LogicalSessionTimeoutMinutes))
		}
		if exp.Snapshot && hello.MaxWireVersion < 13 {
			return Result{Address: addr}, &Error{Op: op.Name, Address: addr, Err: ErrSnapshotNotSupported}
		}
		var err error
		if sess, err = exp.Server(stimeout); err != nil {
			return Result{Address: addr}, &Error{Op: op.Name, Address: addr, Err: err}
		}
	case hello.ServiceID != nil:
		sess, owned = x.Sessions.Get(nil), true
	case hello.LogicalSessionTimeoutMinutes != nil:
		// The connection decides (driver-sessions, "How to Tell Whether a
		// Connection Supports Sessions"); the topology's value, null when
		// any data-bearing server has none, only sets the expiry.
		stimeout = x.sessionTimeout(sessionMinutes(td, hello.LogicalSessionTimeoutMinutes))
		sess, owned = x.Sessions.Get(stimeout), true
	}
	if owned {
		// The operation keeps it across its attempts (run puts it back).
		st.sess, st.stimeout, owned = sess, stimeout, false
	}
	st.supportsRetryWrites = sess != nil && hello.MaxWireVersion >= 6 && hello.LogicalSessionTimeoutMinutes != nil &&
		(hello.SetName != "" || hello.MsgIsDBGrid || hello.ServiceID != nil)
	if st.txn != 0 && !st.supportsRetryWrites {
		// A retry of a write sent with a txnNumber, on a server that does
		// not take retryable writes: retrying is not possible
		// (retryable-writes, "Executing Retryable Write Commands"), so
		// nothing is sent and run returns the previous attempt's error.
		// Sending it without the txnNumber could apply the write twice.
		return Result{Address: addr}, &Error{Op: op.Name, Address: addr, Err: errRetryNotSupported}
	}
	// A retryable write carries a txnNumber, unless its batch turns out
	// to hold a multi statement once split (below).
	withTxn := st.retry == RetryWrite && x.RetryWrites && !op.Unacknowledged && st.supportsRetryWrites
	st.sent, st.wire44, st.mongos = false, hello.MaxWireVersion >= 9, hello.MsgIsDBGrid
	// Replica sets and sharded clusters (behind a load balancer too) have
	// cluster times; a standalone has none, and refuses afterClusterTime:
	// neither goes to it, even a session's advanced by hand
	// (causal-consistency, tests 7 and 11).
	clusterTimes := hello.MaxWireVersion >= 6 && (hello.SetName != "" || hello.MsgIsDBGrid || hello.ServiceID != nil)
	var clusterTime bson.Raw
	if x.Clock != nil && clusterTimes {
		clusterTime = x.Clock.Get()
		if exp != nil {
			// The greater of the client's and the session's.
			clusterTime = session.GreaterClusterTime(clusterTime, exp.ClusterTime())
		}
	}
	rc := op.ReadConcern
	if exp != nil && b == nil && (op.Causal || exp.Snapshot && !op.Generic) {
		rc = exp.ReadConcern(rc, clusterTimes)
	}
	var rp bson.Raw
	if !op.Selector.Write && b == nil {
		rp = readPreferenceFor(op.Selector.ReadPref, td, addr)
		if rp != nil {
			if _, e := op.Command.LookupErr("$readPreference"); e == nil {
				rp = nil // RunCommand's caller gave one
			}
		}
	}
	cmd := op.Command
	var ebuf *[]byte
	if sess != nil || clusterTime != nil || rc != nil || op.WriteConcern != nil || rp != nil {
		// The extended copy only lives until the message is written (the
		// command event takes its own copy), so its buffer is pooled.
		ebuf = getCmdBuf()
		defer putCmdBuf(ebuf)
		cmd = extend((*ebuf)[:0], cmd, sess, clusterTime, rc, op.WriteConcern, rp)
		*ebuf = cmd
	}
	if sess != nil {
		sess.LastUse = time.Now()
	}
	seqs := op.Sequences
	if bt := op.Batch; bt != nil {
		l := wire.Limits{MaxBatchCount: int(hello.MaxWriteBatchSize), MaxMessageSize: int(hello.MaxMessageSizeBytes)}
		l.MaxDocumentSize = int(hello.MaxBSONObjectSize)
		if l.MaxDocumentSize <= 0 {
			l.MaxDocumentSize = wire.DefaultMaxDocumentSize
		}
		l.MaxDocumentSize += bt.Slack
		room := 0
		if withTxn {
			room = txnNumberSize
		}
		n, err := wire.SplitBatch(bt.Docs, len(cmd)+room+len(bt.Identifier)+64, l)
		if err != nil {
			return Result{Address: addr}, &Error{Op: op.Name, Address: addr, Err: err}
		}
		bt.Sent = n
		seqs = []wire.Sequence{{Identifier: bt.Identifier, Docs: bt.Docs[:n]}}
		if withTxn && st.txn == 0 && !batchRetryable(bt.Identifier, bt.Docs[:n]) {
			// Retryability is decided for each command of a bulk write
			// after the split, on the statements it carries
			// (retryable-writes, "Supported Write Operations"): one with
			// a multi statement gets no txnNumber and no retry.
			st.retry, withTxn = RetryNone, false
		}
	}
	if withTxn {
		// supportsRetryWrites needs a session, so cmd is the extended
		// copy in ebuf.
		if st.txn == 0 {
			sess.TxnNumber++
			st.txn = sess.TxnNumber
		}
		cmd = appendTxnNumber(cmd, st.txn)
		*ebuf = cmd
	}
	if cmd, err = maxTime(ctx, op, st.minRTT, cmd); err != nil {
		return Result{Address: addr}, &Error{Op: op.Name, Address: addr, Err: err}
	}
	req := conn.Request{DB: op.DB, Command: cmd, Sequences: seqs, MoreToCome: op.Unacknowledged, Watched: watched,
		LazyBody: op.Cursor || b != nil, NoSocketTimeout: budgetOf(ctx) != nil}
	st.sent = true
	r, err := c.MonitoredCommand(ctx, &req, x.Events, id)
	if err != nil && !errors.Is(context.Cause(ctx), ErrClientDisconnected) {
		x.Topology.HandleConnError(pc, addr, err, description.PhaseOperation)
		if pc.Interrupted() {
			err = &pool.PoolClearedError{Address: addr, Cause: err, Interrupted: true}
		}
	}
	if err != nil && sess != nil && isNetwork(err) {
		sess.Dirty = true
	}
	var body bson.Raw
	var bodyBuf []byte
	switch {
	case r != nil && req.LazyBody:
		// A cursor's reply (a command opening one, or a getMore).
		body, bodyBuf = r.DetachBuffer()
	case r != nil:
		body = r.Detach()
	case err == nil && op.Unacknowledged:
		body = okDoc
	}
	if err == nil && body != nil {
		// The connection takes only a document for a write concern error;
		// anything else would pass for a write that was acknowledged.
		if v, e := body.LookupErr("writeConcernError"); e == nil && v.Type != bson.TypeEmbeddedDocument {
			err = &ReplyError{Field: "writeConcernError", Reason: fmt.Sprintf("a %s, not a document", v.Type)}
		}
	}
	if x.Clock != nil || exp != nil {
		src := body
		if src == nil && err != nil {
			src = commandErrorReply(err)
		}
		if ct, e := src.LookupErr("$clusterTime"); e == nil && ct.Type == bson.TypeEmbeddedDocument && x.Clock != nil {
			x.Clock.Advance(ct.Document())
		}
		if exp != nil {
			// operationTime, $clusterTime and a snapshot's atClusterTime,
			// from a failed command's reply too.
			exp.Observe(src)
		}
	}
	res := Result{Body: body, Address: addr, Buf: bodyBuf}
	if op.Cursor && err == nil && cursorOpen(body) && b == nil {
		nb := &Binding{Address: addr, Session: sess, timeout: stimeout, wire: hello.MaxWireVersion, explicit: exp}
		if exp != nil && sess != nil {
			// The session's server session stays the cursor's even if the
			// session ends first.
			exp.Hold()
			nb.held = true
		}
		if hello.ServiceID != nil {
			// Load-balanced mode: the cursor lives on this connection,
			// which the pool counts as in use by a cursor.
			nb.pinned, nb.pool, keep = pc, p, true
			pc.Pin(pool.PinCursor)
		}
		res.Binding = nb
		if st.sess == sess {
			st.sess = nil // the cursor's now, until Release
		}
	}
	if r == nil && body == nil {
		return res, &Error{Op: op.Name, Address: addr, Err: err}
	}
	if err != nil {
		return res, &Error{Op: op.Name, Address: addr, Err: err}
	}
	return res, nil
}

// Release ends a cursor's binding: its implicit session goes back to the
// pool and a pinned connection is checked in (closed when an error hit it).
func (x *Executor) Release(ctx context.Context, b *Binding) {
	if b == nil || !b.released.CompareAndSwap(false, true) {
		return
	}
	if b.Session != nil && x.Sessions != nil && b.explicit == nil {
		x.Sessions.Put(b.Session, b.timeout)
	}
	// An explicit session's server session goes back when it ends (or
	// here, if it has ended and this was its last open cursor).
	if b.held {
		b.held = false
		b.explicit.Unhold()
	}
	b.Session = nil
	if b.pinned != nil {
		b.pool.CheckIn(ctx, b.pinned)
		b.pinned = nil
	}
}

// EndSessions sends endSessions for the pool's idle sessions, in batches
// of at most 10,000, to a server any read preference could use, as the
// driver-sessions specification asks when a client closes. It is
// best-effort: errors are ignored.
func (x *Executor) EndSessions(ctx context.Context) {
	if x.Sessions == nil {
		return
	}
	ids := x.Sessions.Drain()
	for len(ids) > 0 {
		n := min(len(ids), 10000)
		st, b := bson.AppendDocumentStart(nil)
		ast, b := bson.AppendArrayElementStart(b, "endSessions")
		for i, id := range ids[:n] {
			b = bson.AppendDocumentElement(b, bson.ArrayKey(i), id)
		}
		b, _ = bson.AppendDocumentEnd(b, ast)
		b, _ = bson.AppendDocumentEnd(b, st)
		ids = ids[n:]
		_, _ = x.Run(ctx, &Op{Name: "endSessions", DB: "admin", Command: b, NoSession: true,
			Selector: selection.Read(selection.ReadPref{Mode: selection.PrimaryPreferred})})
	}
}

var okDoc = func() bson.Raw {
	st, b := bson.AppendDocumentStart(nil)
	b = bson.AppendInt32Element(b, "ok", 1)
	b, _ = bson.AppendDocumentEnd(b, st)
	return b
}()

// cursorOpen tells whether a reply's cursor.id is other than 0.
func cursorOpen(body bson.Raw) bool {
	v, err := body.LookupErr("cursor", "id")
	if err != nil {
		return false
	}
	id, ok := v.AsInt64OK()
	return ok && id != 0
}

// isNetwork tells whether err is a network error (which makes a session
// dirty).
func isNetwork(err error) bool {
	var ne *conn.NetworkError
	return errors.As(err, &ne)
}

// commandErrorReply returns the server's reply held by err, a
// *conn.CommandError, or nil.
func commandErrorReply(err error) bson.Raw {
	var ce *conn.CommandError
	if errors.As(err, &ce) {
		return ce.Raw
	}
	return nil
}

// SessionTimeout returns the last session timeout the deployment reported
// (nil before any, or behind a load balancer), for an explicit session
// that takes its server session before its first command.
func (x *Executor) SessionTimeout() *time.Duration { return x.stimeout.Load() }

// sessionTimeout returns logicalSessionTimeoutMinutes as a duration, the
// same pointer while the value stays the same (the session pool and the
// cursors' bindings keep it).
func (x *Executor) sessionTimeout(minutes int64) *time.Duration {
	t := time.Duration(minutes) * time.Minute
	if p := x.stimeout.Load(); p != nil && *p == t {
		return p
	}
	p := &t
	x.stimeout.Store(p)
	return p
}

// sessionMinutes returns the session timeout the pool's expiry uses: the
// topology's logicalSessionTimeoutMinutes (the smallest among the
// data-bearing servers), or, when that is null because some server
// reports none, the connection's own, conn.
func sessionMinutes(td description.TopologyDescription, conn *int64) int64 {
	if td.LogicalSessionTimeoutMinutes != nil {
		return *td.LogicalSessionTimeoutMinutes
	}
	return *conn
}

// Pooled buffers for extended commands; those that grew past
// maxPooledCmd are dropped so one huge command does not pin memory.
const maxPooledCmd = 64 << 10

var cmdBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

func getCmdBuf() *[]byte { return cmdBufs.Get().(*[]byte) }

func putCmdBuf(b *[]byte) {
	if cap(*b) > maxPooledCmd {
		return
	}
	*b = (*b)[:0]
	cmdBufs.Put(b)
}

// extend appends to dst cmd with the fields the executor adds.
func extend(dst []byte, cmd bson.Raw, sess *session.Server, clusterTime, rc, wc, rp bson.Raw) bson.Raw {
	n := len(cmd) + 16
	if sess != nil {
		n += len(sess.LSID) + 6
	}
	n += len(clusterTime) + len(rc) + len(wc) + len(rp) + 64
	b := dst
	if cap(b)-len(b) < n {
		b = make([]byte, len(b), len(b)+n)
		copy(b, dst)
	}
	start := len(b)
	b = append(b, cmd[:len(cmd)-1]...)
	if rc != nil {
		b = bson.AppendDocumentElement(b, "readConcern", rc)
	}
	if wc != nil {
		b = bson.AppendDocumentElement(b, "writeConcern", wc)
	}
	if sess != nil {
		b = bson.AppendDocumentElement(b, "lsid", sess.LSID)
	}
	if clusterTime != nil {
		b = bson.AppendDocumentElement(b, "$clusterTime", clusterTime)
	}
	if rp != nil {
		b = bson.AppendDocumentElement(b, "$readPreference", rp)
	}
	b = append(b, 0)
	binary.LittleEndian.PutUint32(b[start:], uint32(len(b)-start))
	return b[start:]
}

// bindingRTT is the minRoundTripTime of a cursor's server for its getMore
// or killCursors, which select no server: the one in the current topology
// description (0 once the server is Unknown, which only turns off the
// short cut).
func bindingRTT(td description.TopologyDescription, addr string) time.Duration {
	sd, _ := td.Server(addr)
	return sd.MinRoundTripTime
}

// readPreferenceFor returns the $readPreference a read under rp needs on
// the server at addr (selection.ToSend), or nil.
func readPreferenceFor(rp selection.ReadPref, td description.TopologyDescription, addr string) bson.Raw {
	sd, ok := td.Server(addr)
	if !ok {
		return nil
	}
	send, ok := selection.ToSend(rp, td.Type, sd.Type)
	if !ok {
		return nil
	}
	return send.AppendDocument(nil)
}

// checkOut takes a connection from p for an operation whose selection
// started at selStart. Without timeoutMS, waitQueueTimeoutMS (the pool's
// own) and ctx bound the wait. With it, waitQueueTimeoutMS is ignored: the
// checkout, and the establishment of a new connection for it (handshake
// and authentication included), get the remaining
// computedServerSelectionTimeout, min(serverSelectionTimeoutMS, remaining
// timeoutMS) counted from the start of selection (CSOT, "Server
// Selection"); conn.ForOperation tells Dial so.
func (x *Executor) checkOut(ctx context.Context, p *pool.Pool[*conn.Conn], selStart time.Time) (*pool.Pooled[*conn.Conn], error) {
	if budgetOf(ctx) == nil {
		return p.CheckOut(ctx)
	}
	cctx := conn.ForOperation(ctx)
	if x.ServerSelectionTimeout > 0 {
		dl := selStart.Add(x.ServerSelectionTimeout)
		if cur, ok := ctx.Deadline(); !ok || dl.Before(cur) {
			var cancel context.CancelFunc
			cctx, cancel = context.WithDeadline(cctx, dl)
			defer cancel()
		}
	}
	pc, err := p.CheckOutWithin(cctx, 0)
	if dl, ok := cctx.Deadline(); err != nil && ok && !time.Now().Before(dl) {
		// The computedServerSelectionTimeout ran out: the checkout, or
		// the establishment of its connection, timed out. (The clock is
		// asked rather than cctx.Err(): a socket's deadline can fire
		// before the context's timer has marked it done.) That is a
		// timeout error, and final (run does not retry it), as a
		// selection that times out is: the prose test "server
		// selection timeout honored for connection handshake commands"
		// (timeoutMS 20, serverSelectionTimeoutMS 10, a handshake blocked
		// 15 ms) expects the operation to fail within 15 ms, which leaves
		// no room for a retry.
		stage := StageCheckout
		var de *pool.DialError
		if errors.As(err, &de) {
			stage = StageConnect
		}
		err = &TimeoutError{Stage: stage, Err: err}
	}
	return pc, err
}
