package operation

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/conn"
	"github.com/mongoscope/mongoscope/driver/internal/pool"
	"github.com/mongoscope/mongoscope/driver/internal/selection"
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
	// ServerSelectionTimeout is the client's serverSelectionTimeoutMS.
	// With Timeout set, a checkout gets what is left of
	// min(serverSelectionTimeoutMS, timeoutMS) after selection, and the
	// pool's waitQueueTimeoutMS is ignored (CSOT); 0 leaves only Timeout.
	ServerSelectionTimeout time.Duration
}

// Op is one operation: a single command for now.
type Op struct {
	Name       string // the operation's name in events, e.g. "ping"
	DB         string
	Collection string // empty for database and client operations
	Command    bson.Raw
	Sequences  []wire.Sequence
	Selector   selection.Selector
}

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

// Run runs op and returns a copy of the reply body. A reply with a write
// concern error comes back with a *conn.WriteConcernError (wrapped in
// *Error) alongside the body.
func (x *Executor) Run(ctx context.Context, op *Op) (bson.Raw, error) {
	id := NextID()
	d := x.Events
	start := time.Now()
	var fin event.OperationFinished
	if d.Operation() {
		ctx = d.OperationStarted(ctx, &event.OperationStarted{Name: op.Name, Database: op.DB, Collection: op.Collection, OperationID: id})
	}
	if x.Timeout > 0 {
		if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > x.Timeout {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, x.Timeout)
			defer cancel()
		}
	}
	if dl, ok := ctx.Deadline(); ok {
		fin.Timeout = dl.Sub(start)
	}
	body, err := x.attempt(ctx, op, id, &fin)
	if d.Operation() {
		fin.Name, fin.Database, fin.Collection, fin.OperationID = op.Name, op.DB, op.Collection, id
		fin.Duration = time.Since(start)
		fin.Err = err
		d.OperationFinished(ctx, &fin)
	}
	return body, err
}

// attempt is one try: select, check out, send.
func (x *Executor) attempt(ctx context.Context, op *Op, id int64, fin *event.OperationFinished) (bson.Raw, error) {
	t0 := time.Now()
	s, err := x.Topology.SelectFor(ctx, op.Selector, topology.Op{Name: op.Name, ID: id})
	fin.Selection += time.Since(t0)
	if err != nil {
		return nil, &Error{Op: op.Name, Err: err}
	}
	defer s.EndOperation()
	addr := s.Address()
	p := s.Pool()
	t1 := time.Now()
	pc, err := x.checkOut(ctx, p, t0)
	fin.CheckOut += time.Since(t1)
	if err != nil {
		// A failure to establish a connection was handed to SDAM by the
		// pool itself (topology.Config's OnDialError), before its events.
		return nil, &Error{Op: op.Name, Address: addr, Err: err}
	}
	defer p.CheckIn(ctx, pc)
	fin.Attempts++
	cmd := op.Command
	if !op.Selector.Write {
		cmd = withReadPreference(cmd, op.Selector.ReadPref, x.Topology.Description(), addr)
	}
	r, err := pc.Conn().MonitoredCommand(ctx, &conn.Request{DB: op.DB, Command: cmd, Sequences: op.Sequences}, x.Events, id)
	if err != nil && !errors.Is(context.Cause(ctx), ErrClientDisconnected) {
		x.Topology.HandleConnError(pc, addr, err, description.PhaseOperation)
		if pc.Interrupted() {
			err = &pool.PoolClearedError{Address: addr, Cause: err, Interrupted: true}
		}
	}
	if r == nil {
		return nil, &Error{Op: op.Name, Address: addr, Err: err}
	}
	body := append(bson.Raw(nil), r.Body...)
	r.Release()
	if err != nil {
		return body, &Error{Op: op.Name, Address: addr, Err: err}
	}
	return body, nil
}

// withReadPreference returns cmd with the $readPreference a read under rp
// needs on the server at addr (selection.ToSend): none for a primary read
// of a replica set or a mongos, primaryPreferred for any direct connection
// but a standalone, and so on. cmd is returned unchanged when none is
// needed or it already has one (a command given to RunCommand).
func withReadPreference(cmd bson.Raw, rp selection.ReadPref, td description.TopologyDescription, addr string) bson.Raw {
	sd, ok := td.Server(addr)
	if !ok || len(cmd) < 5 {
		return cmd
	}
	send, ok := selection.ToSend(rp, td.Type, sd.Type)
	if !ok {
		return cmd
	}
	if _, err := cmd.LookupErr("$readPreference"); err == nil {
		return cmd
	}
	b := make([]byte, 0, len(cmd)+64)
	b = append(b, cmd[:len(cmd)-1]...)
	b = bson.AppendDocumentElement(b, "$readPreference", send.AppendDocument(nil))
	b = append(b, 0)
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	return b
}

// checkOut takes a connection from p for an operation whose selection
// started at selStart. Without timeoutMS, waitQueueTimeoutMS (the pool's
// own) and ctx bound the wait. With it, waitQueueTimeoutMS is ignored: the
// checkout gets the remaining computedServerSelectionTimeout,
// min(serverSelectionTimeoutMS, remaining timeoutMS) counted from the start
// of selection (CSOT, "Server Selection"); ctx carries the timeoutMS part.
func (x *Executor) checkOut(ctx context.Context, p *pool.Pool[*conn.Conn], selStart time.Time) (*pool.Pooled[*conn.Conn], error) {
	if x.Timeout <= 0 {
		return p.CheckOut(ctx)
	}
	var wait time.Duration
	if x.ServerSelectionTimeout > 0 {
		// Selection used it all: a checkout that must wait times out.
		wait = max(x.ServerSelectionTimeout-time.Since(selStart), time.Nanosecond)
	}
	return p.CheckOutWithin(ctx, wait)
}
