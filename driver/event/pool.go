package event

import (
	"context"
	"time"

	"github.com/mongoscope/mongoscope/bson"
)

// PoolMonitor receives the connection pool (CMAP) events. Checkout events
// carry the context of the operation that checks out, so a monitor can put a
// checkout wait on the operation's trace; events from the pool's own
// background work carry a background context.
type PoolMonitor interface {
	PoolEvent(ctx context.Context, e PoolEvent)
}

// PoolEvent is one of the CMAP event types of this package: *PoolCreated,
// *PoolReady, *PoolCleared, *PoolClosed, *ConnectionCreated,
// *ConnectionReady, *ConnectionClosed, *ConnectionCheckOutStarted,
// *ConnectionCheckOutFailed, *ConnectionCheckedOut or *ConnectionCheckedIn.
type PoolEvent interface {
	// PoolAddress is the address of the server the pool connects to.
	PoolAddress() string
	poolEvent()
}

// PoolOptions are a pool's settings, as reported by PoolCreated.
type PoolOptions struct {
	MaxPoolSize   int // 0 means no limit
	MinPoolSize   int
	MaxConnecting int           // connections established at once
	MaxIdleTime   time.Duration // 0 means no limit
	// WaitQueueTimeout bounds the wait for a connection when set
	// (waitQueueTimeoutMS); 0 means only the operation's context does.
	WaitQueueTimeout time.Duration
}

// PoolCreated is sent when a pool is created; it starts paused.
type PoolCreated struct {
	Address string
	Options PoolOptions
}

// PoolReady is sent when a paused pool is marked ready.
type PoolReady struct {
	Address string
}

// PoolCleared is sent when a pool is cleared: its generation (or, in
// load-balanced mode, ServiceID's generation) went up.
type PoolCleared struct {
	Address   string
	ServiceID *bson.ObjectID // load-balanced mode only
	// InterruptInUseConnections tells whether checked-out connections were
	// closed too.
	InterruptInUseConnections bool
	Cause                     error // the error that led to the clear, when known
}

// PoolClosed is sent when a pool is closed.
type PoolClosed struct {
	Address string
}

// ConnectionCreated is sent when the pool starts creating a connection,
// before any I/O.
type ConnectionCreated struct {
	Address      string
	ConnectionID int64
}

// ConnectionReady is sent when a connection finished its handshake and
// authentication.
type ConnectionReady struct {
	Address      string
	ConnectionID int64
	Duration     time.Duration // since ConnectionCreated
}

// CloseReason says why the pool closed a connection.
type CloseReason string

// The reasons of ConnectionClosed, spelled as in the CMAP specification.
const (
	ReasonStale      CloseReason = "stale"      // the pool was cleared after it was created
	ReasonIdle       CloseReason = "idle"       // it was available for longer than maxIdleTimeMS
	ReasonError      CloseReason = "error"      // it failed, or failed to establish
	ReasonPoolClosed CloseReason = "poolClosed" // the pool was closed
)

// ConnectionClosed is sent when the pool closes a connection.
type ConnectionClosed struct {
	Address      string
	ConnectionID int64
	Reason       CloseReason
	Err          error // with ReasonError, the error when known
}

// ConnectionCheckOutStarted is sent when an operation starts checking out a
// connection.
type ConnectionCheckOutStarted struct {
	Address string
}

// CheckOutFailReason says why a checkout failed.
type CheckOutFailReason string

// The reasons of ConnectionCheckOutFailed, spelled as in the CMAP
// specification.
const (
	ReasonCheckOutPoolClosed      CheckOutFailReason = "poolClosed"      // the pool is closed
	ReasonCheckOutTimeout         CheckOutFailReason = "timeout"         // the wait outlasted the time budget
	ReasonCheckOutConnectionError CheckOutFailReason = "connectionError" // establishing failed, or the pool is paused
)

// ConnectionCheckOutFailed is sent when a checkout fails.
type ConnectionCheckOutFailed struct {
	Address  string
	Reason   CheckOutFailReason
	Duration time.Duration // since ConnectionCheckOutStarted
	Err      error
}

// ConnectionCheckedOut is sent when a checkout succeeds.
type ConnectionCheckedOut struct {
	Address      string
	ConnectionID int64
	Duration     time.Duration // since ConnectionCheckOutStarted
}

// ConnectionCheckedIn is sent when a connection is given back to the pool.
type ConnectionCheckedIn struct {
	Address      string
	ConnectionID int64
}

// PoolAddress implements PoolEvent.
func (e *PoolCreated) PoolAddress() string { return e.Address }

// PoolAddress implements PoolEvent.
func (e *PoolReady) PoolAddress() string { return e.Address }

// PoolAddress implements PoolEvent.
func (e *PoolCleared) PoolAddress() string { return e.Address }

// PoolAddress implements PoolEvent.
func (e *PoolClosed) PoolAddress() string { return e.Address }

// PoolAddress implements PoolEvent.
func (e *ConnectionCreated) PoolAddress() string { return e.Address }

// PoolAddress implements PoolEvent.
func (e *ConnectionReady) PoolAddress() string { return e.Address }

// PoolAddress implements PoolEvent.
func (e *ConnectionClosed) PoolAddress() string { return e.Address }

// PoolAddress implements PoolEvent.
func (e *ConnectionCheckOutStarted) PoolAddress() string { return e.Address }

// PoolAddress implements PoolEvent.
func (e *ConnectionCheckOutFailed) PoolAddress() string { return e.Address }

// PoolAddress implements PoolEvent.
func (e *ConnectionCheckedOut) PoolAddress() string { return e.Address }

// PoolAddress implements PoolEvent.
func (e *ConnectionCheckedIn) PoolAddress() string { return e.Address }

func (*PoolCreated) poolEvent()               {}
func (*PoolReady) poolEvent()                 {}
func (*PoolCleared) poolEvent()               {}
func (*PoolClosed) poolEvent()                {}
func (*ConnectionCreated) poolEvent()         {}
func (*ConnectionReady) poolEvent()           {}
func (*ConnectionClosed) poolEvent()          {}
func (*ConnectionCheckOutStarted) poolEvent() {}
func (*ConnectionCheckOutFailed) poolEvent()  {}
func (*ConnectionCheckedOut) poolEvent()      {}
func (*ConnectionCheckedIn) poolEvent()       {}
