package pool

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/handshake"
)

// Conn is what the pool needs of a connection. The pool is generic over
// the connection type so that what CheckOut returns is the caller's own
// type (*conn.Conn in the driver, a fake in tests), with no type assertion
// and no interface boxing on the checkout path.
type Conn interface {
	// ID is the driver's id for the connection, the one given to Dial.
	ID() int64
	// Close closes the connection; it may be called from any goroutine,
	// also while another goroutine uses the connection (that is how an
	// in-use connection is interrupted).
	Close() error
	// Closed reports whether the connection closed itself after an error.
	Closed() bool
}

// In load-balanced mode the pool reads a connection's service id from the
// handshake reply (*conn.Conn has Hello) or from a ServiceID method (fakes).
type helloConn interface{ Hello() *handshake.Reply }
type serviceConn interface{ ServiceID() *bson.ObjectID }

// Defaults for Config fields left zero.
const (
	DefaultMaxConnecting    = 2
	DefaultMaintainInterval = 10 * time.Second
)

// Config describes a pool of connections of type C.
type Config[C Conn] struct {
	// Address is the server's address; it names the pool in events and
	// errors.
	Address string
	// MinPoolSize is the number of connections the pool keeps open while
	// ready, opening them in the background.
	MinPoolSize int
	// MaxPoolSize caps open connections (checked out, idle and being
	// established). 0 means no limit, as in the specification; the
	// client applies the default of 100 before it gets here.
	MaxPoolSize int
	// MaxConnecting caps connections being established at once; 0 means
	// DefaultMaxConnecting.
	MaxConnecting int
	// MaxIdleTime closes connections idle for longer; 0 means never.
	MaxIdleTime time.Duration
	// WaitQueueTimeout bounds the wait for a connection (the deprecated
	// waitQueueTimeoutMS), counted from the start of CheckOut, on top of
	// the context's deadline; 0 means only the context bounds it.
	WaitQueueTimeout time.Duration
	// MaintainInterval is the time between background runs (closing
	// perished idle connections, opening connections up to MinPoolSize);
	// 0 means DefaultMaintainInterval and a negative value means runs
	// happen only when something asks for one (Ready, Clear, a lost
	// connection below MinPoolSize).
	MaintainInterval time.Duration
	// Dial opens and establishes (handshake, authentication) connection
	// id. It must honour ctx: during CheckOut that is the caller's
	// context, during background population the pool's own, which Close
	// cancels.
	Dial func(ctx context.Context, id int64) (C, error)
	// Events receives the CMAP events; nil sends none.
	Events *event.Dispatcher
	// LoadBalanced keeps one generation per service id, as the load
	// balancer specification requires.
	LoadBalanced bool
	// OnPopulateError receives the errors of background population, which
	// SDAM handles as application errors before the handshake completed
	// (typically by marking the server Unknown and clearing the pool). It
	// runs on the pool's goroutine, before the ConnectionClosed event and
	// while the failed connection still counts toward the pool's size, so
	// no replacement starts before the pool is cleared. generation is the
	// one the connection was created in, which a clear since then has
	// made older than the pool's.
	OnPopulateError func(err error, generation uint64)
	// OnDialError receives the errors of establishing a connection for a
	// checkout, with the generation the connection was created in, so
	// SDAM can handle them (clearing the pool when the rules say so)
	// before the ConnectionClosed and ConnectionCheckOutFailed events, in
	// the order the CMAP logging tests expect. It runs on the goroutine
	// that checks out, while the failed connection still counts toward
	// the pool's size.
	OnDialError func(err error, generation uint64)
}

func (c *Config[C]) validate() error {
	switch {
	case c.Address == "":
		return &ConfigError{Field: "Address", Reason: "empty"}
	case c.Dial == nil:
		return &ConfigError{Field: "Dial", Reason: "nil"}
	case c.MinPoolSize < 0:
		return &ConfigError{Field: "MinPoolSize", Reason: "negative"}
	case c.MaxPoolSize < 0:
		return &ConfigError{Field: "MaxPoolSize", Reason: "negative"}
	case c.MaxPoolSize > 0 && c.MinPoolSize > c.MaxPoolSize:
		return &ConfigError{Field: "MinPoolSize", Reason: "greater than MaxPoolSize"}
	case c.MaxConnecting < 0:
		return &ConfigError{Field: "MaxConnecting", Reason: "negative"}
	case c.MaxIdleTime < 0:
		return &ConfigError{Field: "MaxIdleTime", Reason: "negative"}
	case c.WaitQueueTimeout < 0:
		return &ConfigError{Field: "WaitQueueTimeout", Reason: "negative"}
	}
	return nil
}

type poolState uint8

const (
	statePaused poolState = iota
	stateReady
	stateClosed
)

func (s poolState) String() string {
	switch s {
	case stateReady:
		return "ready"
	case stateClosed:
		return "closed"
	default:
		return "paused"
	}
}

type connState uint8

const (
	connPending    connState = iota // being established
	connIdle                        // available
	connInUse                       // checked out
	connCheckingIn                  // CheckIn is emitting ConnectionCheckedIn
	connGone                        // closed, no longer counted
)

// Pooled is a connection that belongs to a pool: CheckOut returns it,
// CheckIn takes it back.
type Pooled[C Conn] struct {
	pool      *Pool[C]
	conn      C
	dialed    bool // conn is set: the connection was established
	id        int64
	gen       uint64
	svc       bson.ObjectID
	hasSvc    bool
	bg        bool      // established by background population
	state     connState // guarded by pool.mu
	created   time.Time
	idleSince time.Time

	err         error   // set by MarkErrored, read by CheckIn; the holder's goroutine
	pin         PinKind // guarded by pool.mu; reset by CheckIn
	interrupted atomic.Bool
	// cancelDial ends the establishment of a pending connection that a
	// clear with interruptInUseConnections interrupts; guarded by pool.mu.
	cancelDial context.CancelFunc
}

// Conn returns the connection.
func (c *Pooled[C]) Conn() C { return c.conn }

// ID returns the connection's id, unique within the pool and in creation
// order from 1.
func (c *Pooled[C]) ID() int64 { return c.id }

// Generation returns the pool (or service) generation the connection
// belongs to.
func (c *Pooled[C]) Generation() uint64 { return c.gen }

// ServiceID returns the connection's service id in load-balanced mode, or
// nil.
func (c *Pooled[C]) ServiceID() *bson.ObjectID {
	if !c.hasSvc {
		return nil
	}
	return &c.svc
}

// MarkErrored records that the connection failed in a way that makes it
// unfit for reuse; CheckIn then closes it with reason "error". Call it
// before CheckIn, from the goroutine that holds the connection.
func (c *Pooled[C]) MarkErrored(err error) {
	if err == nil {
		err = errors.New("connection marked as errored")
	}
	c.err = err
}

// PinKind says what a checked-out connection is held for, beyond one
// operation: the load-balancers specification has the pool track
// connections pinned to cursors and to transactions, and report them in a
// wait queue timeout.
type PinKind uint8

const (
	PinNone        PinKind = iota // one operation
	PinCursor                     // a cursor's getMores and killCursors (load-balanced mode)
	PinTransaction                // a transaction's commands (load-balanced mode)
)

// Pin records what the checked-out connection is held for, until CheckIn.
// It does nothing on a connection that is not checked out.
func (c *Pooled[C]) Pin(kind PinKind) {
	p := c.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	if c.state != connInUse || c.pin == kind {
		return
	}
	p.unpinLocked(c)
	c.pin = kind
	switch kind {
	case PinCursor:
		p.pinnedCursors++
	case PinTransaction:
		p.pinnedTxns++
	}
}

func (p *Pool[C]) unpinLocked(c *Pooled[C]) {
	switch c.pin {
	case PinCursor:
		p.pinnedCursors--
	case PinTransaction:
		p.pinnedTxns--
	}
	c.pin = PinNone
}

// Interrupted reports whether a Clear with interruptInUseConnections closed
// the connection while it was checked out; the operation's error should
// then be a PoolClearedError with Interrupted set.
func (c *Pooled[C]) Interrupted() bool { return c.interrupted.Load() }

type grantKind uint8

const (
	grantNone   grantKind = iota
	grantConn             // an available connection, now in use
	grantCreate           // a reserved slot: establish c
	grantDead             // a perished connection, already forgotten: close it and retry
	grantErr              // the checkout fails
)

type grant[C Conn] struct {
	kind   grantKind
	c      *Pooled[C]
	close  event.CloseReason
	reason event.CheckOutFailReason
	err    error
}

type waiter[C Conn] struct {
	ch         chan grant[C] // capacity 1; sent to under pool.mu when dequeued
	prev, next *waiter[C]
	queued     bool
}

type service struct {
	gen   uint64
	count int
}

// Pool is the connection pool of one server. Its methods are safe for
// concurrent use.
type Pool[C Conn] struct {
	cfg      Config[C]
	ev       *event.Dispatcher
	bgCtx    context.Context
	bgCancel context.CancelFunc
	wg       sync.WaitGroup
	wake     chan struct{}
	waiters  sync.Pool
	waitNS   atomic.Int64

	// stateMu orders state changes (Ready, Clear, Close) with their
	// events, which go out without mu held so that a monitor may call
	// Stats (a user's monitor calling Client.Topology, say). A background
	// run takes it too, so that it starts no connection between a Ready
	// and its PoolReady.
	stateMu sync.Mutex

	mu            sync.Mutex
	state         poolState
	generation    uint64
	services      map[bson.ObjectID]*service
	idle          []*Pooled[C] // LIFO: the most recently used is reused first
	all           map[*Pooled[C]]struct{}
	total         int
	pending       int
	bgPending     int // pending connections of background population
	inUse         int
	pinnedCursors int // in use and pinned to a cursor
	pinnedTxns    int // in use and pinned to a transaction
	head, tail    *waiter[C]
	nwait         int
	nextID        int64
	createdTotal  int64
	closedTotal   int64
	waited        int64
	interruptUpTo uint64
	interrupt     bool
	clearCause    error
}

// New returns a paused pool and emits PoolCreated. It starts the pool's
// background goroutine, which Close stops.
func New[C Conn](cfg Config[C]) (*Pool[C], error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.MaxConnecting == 0 {
		cfg.MaxConnecting = DefaultMaxConnecting
	}
	if cfg.MaintainInterval == 0 {
		cfg.MaintainInterval = DefaultMaintainInterval
	}
	p := &Pool[C]{
		cfg:      cfg,
		ev:       cfg.Events,
		wake:     make(chan struct{}, 1),
		services: map[bson.ObjectID]*service{},
		all:      map[*Pooled[C]]struct{}{},
	}
	p.waiters.New = func() any { return &waiter[C]{ch: make(chan grant[C], 1)} }
	p.bgCtx, p.bgCancel = context.WithCancel(context.Background())
	if p.ev.Pool() {
		p.ev.PoolEvent(p.bgCtx, &event.PoolCreated{Address: cfg.Address, Options: event.PoolOptions{
			MaxPoolSize:      cfg.MaxPoolSize,
			MinPoolSize:      cfg.MinPoolSize,
			MaxConnecting:    cfg.MaxConnecting,
			MaxIdleTime:      cfg.MaxIdleTime,
			WaitQueueTimeout: cfg.WaitQueueTimeout,
		}})
	}
	p.wg.Add(1)
	go p.maintain()
	return p, nil
}

// Address returns the server address the pool connects to.
func (p *Pool[C]) Address() string { return p.cfg.Address }

// CheckOut returns a connection: an available one, or a new one it
// establishes when the limits allow, waiting its turn in a FIFO queue
// otherwise. The wait ends with a *WaitQueueTimeoutError when ctx is done
// or WaitQueueTimeout passes; a paused pool fails with *PoolClearedError,
// a closed one with *PoolClosedError, and a failed establishment with
// *DialError.
func (p *Pool[C]) CheckOut(ctx context.Context) (*Pooled[C], error) {
	return p.checkOut(ctx, p.cfg.WaitQueueTimeout)
}

// CheckOutWithin is CheckOut with wait in place of the pool's
// WaitQueueTimeout; 0 means only ctx bounds the wait. Under client-side
// operation timeouts (timeoutMS set) waitQueueTimeoutMS is ignored and a
// checkout gets what is left of the computed server selection timeout.
func (p *Pool[C]) CheckOutWithin(ctx context.Context, wait time.Duration) (*Pooled[C], error) {
	return p.checkOut(ctx, wait)
}

func (p *Pool[C]) checkOut(ctx context.Context, wait time.Duration) (*Pooled[C], error) {
	start := time.Now()
	if p.ev.Pool() {
		p.ev.PoolEvent(ctx, &event.ConnectionCheckOutStarted{Address: p.cfg.Address})
	}
	var timer *time.Timer
	for {
		g := p.acquire(ctx, start, wait, &timer)
		switch g.kind {
		case grantConn:
			stopTimer(timer)
			if p.ev.Pool() {
				p.ev.PoolEvent(ctx, &event.ConnectionCheckedOut{Address: p.cfg.Address, ConnectionID: g.c.id, Duration: time.Since(start)})
			}
			return g.c, nil
		case grantDead:
			p.closeConn(ctx, g.c, g.close, nil)
		case grantCreate:
			stopTimer(timer)
			return p.establish(ctx, g.c, start)
		default:
			stopTimer(timer)
			p.checkOutFailed(ctx, start, g.reason, g.err)
			return nil, g.err
		}
	}
}

func stopTimer(t *time.Timer) {
	if t != nil {
		t.Stop()
	}
}

func (p *Pool[C]) checkOutFailed(ctx context.Context, start time.Time, reason event.CheckOutFailReason, err error) {
	if p.ev.Pool() {
		p.ev.PoolEvent(ctx, &event.ConnectionCheckOutFailed{Address: p.cfg.Address, Reason: reason, Duration: time.Since(start), Err: err})
	}
}

// acquire returns the caller's grant: immediately when nobody waits and the
// pool can serve, else after waiting in the queue.
func (p *Pool[C]) acquire(ctx context.Context, start time.Time, wait time.Duration, timer **time.Timer) grant[C] {
	p.mu.Lock()
	if g, ok := p.unavailableLocked(); ok {
		p.mu.Unlock()
		return g
	}
	if p.head == nil {
		if g, ok := p.grantLocked(1); ok {
			p.mu.Unlock()
			return g
		}
	}
	w := p.waiters.Get().(*waiter[C])
	p.enqueueLocked(w)
	p.waited++
	p.mu.Unlock()

	waitStart := time.Now()
	var expired <-chan time.Time
	if wait > 0 {
		left := wait - waitStart.Sub(start)
		if *timer == nil {
			*timer = time.NewTimer(left)
		} else {
			(*timer).Reset(left)
		}
		expired = (*timer).C
	}
	var err error
	select {
	case g := <-w.ch:
		p.waitNS.Add(int64(time.Since(waitStart)))
		p.waiters.Put(w)
		return g
	case <-ctx.Done():
		err = ctx.Err()
	case <-expired:
		err = context.DeadlineExceeded
	}

	p.mu.Lock()
	var late grant[C]
	if w.queued {
		p.removeLocked(w)
	} else {
		// The grant was sent before the timeout was noticed: give it back.
		late = <-w.ch
		p.giveBackLocked(late)
	}
	waited := time.Since(waitStart)
	p.waitNS.Add(int64(waited))
	stats := p.statsLocked()
	p.mu.Unlock()
	p.waiters.Put(w)
	switch late.kind {
	case grantDead:
		p.closeConn(ctx, late.c, late.close, nil)
	case grantErr:
		return late
	}
	return grant[C]{kind: grantErr, reason: event.ReasonCheckOutTimeout,
		err: &WaitQueueTimeoutError{Address: p.cfg.Address, Waited: waited, Stats: stats, Err: err, LoadBalanced: p.cfg.LoadBalanced}}
}

// giveBackLocked undoes a grant its waiter no longer wants.
func (p *Pool[C]) giveBackLocked(g grant[C]) {
	switch g.kind {
	case grantConn:
		g.c.state = connIdle
		p.inUse--
		p.idle = append(p.idle, g.c)
	case grantCreate:
		p.forgetLocked(g.c)
		p.closedTotal-- // it never existed
		p.createdTotal--
	default:
		return
	}
	p.dispatchLocked()
}

func (p *Pool[C]) unavailableLocked() (grant[C], bool) {
	switch p.state {
	case stateClosed:
		return grant[C]{kind: grantErr, reason: event.ReasonCheckOutPoolClosed, err: &PoolClosedError{Address: p.cfg.Address}}, true
	case statePaused:
		return grant[C]{kind: grantErr, reason: event.ReasonCheckOutConnectionError, err: &PoolClearedError{Address: p.cfg.Address, Cause: p.clearCause}}, true
	}
	return grant[C]{}, false
}

// grantLocked serves one checkout if it can: an available connection (or a
// perished one to close), or a reserved slot for a new connection. demand
// is the number of checkouts waiting for a connection, this one included:
// while background population is establishing at least as many, they will
// be served by those instead of opening more than minPoolSize asks for.
func (p *Pool[C]) grantLocked(demand int) (grant[C], bool) {
	if n := len(p.idle); n > 0 {
		c := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		if reason := p.perishedLocked(c, time.Time{}); reason != "" {
			p.forgetLocked(c)
			return grant[C]{kind: grantDead, c: c, close: reason}, true
		}
		c.state = connInUse
		p.inUse++
		return grant[C]{kind: grantConn, c: c}, true
	}
	if p.canCreateLocked() && demand > p.bgPending {
		return grant[C]{kind: grantCreate, c: p.reserveLocked(false)}, true
	}
	return grant[C]{}, false
}

func (p *Pool[C]) canCreateLocked() bool {
	return (p.cfg.MaxPoolSize == 0 || p.total < p.cfg.MaxPoolSize) && p.pending < p.cfg.MaxConnecting
}

// dispatchLocked serves waiters, oldest first, for as long as it can.
func (p *Pool[C]) dispatchLocked() {
	for p.head != nil && p.state == stateReady {
		g, ok := p.grantLocked(p.nwait)
		if !ok {
			return
		}
		w := p.head
		p.removeLocked(w)
		w.ch <- g
	}
}

func (p *Pool[C]) enqueueLocked(w *waiter[C]) {
	w.queued = true
	w.prev, w.next = p.tail, nil
	if p.tail == nil {
		p.head = w
	} else {
		p.tail.next = w
	}
	p.tail = w
	p.nwait++
}

func (p *Pool[C]) removeLocked(w *waiter[C]) {
	if w.prev == nil {
		p.head = w.next
	} else {
		w.prev.next = w.next
	}
	if w.next == nil {
		p.tail = w.prev
	} else {
		w.next.prev = w.prev
	}
	w.prev, w.next, w.queued = nil, nil, false
	p.nwait--
}

// failWaitersLocked empties the wait queue, failing every waiter with err.
func (p *Pool[C]) failWaitersLocked(reason event.CheckOutFailReason, err error) {
	for p.head != nil {
		w := p.head
		p.removeLocked(w)
		w.ch <- grant[C]{kind: grantErr, reason: reason, err: err}
	}
}

func (p *Pool[C]) reserveLocked(bg bool) *Pooled[C] {
	p.nextID++
	c := &Pooled[C]{pool: p, id: p.nextID, gen: p.generation, state: connPending, bg: bg}
	p.total++
	p.pending++
	if bg {
		p.bgPending++
	}
	p.createdTotal++
	p.all[c] = struct{}{}
	return c
}

// forgetLocked removes c from the counts; the caller closes it. An idle c
// must already be out of p.idle.
func (p *Pool[C]) forgetLocked(c *Pooled[C]) {
	switch c.state {
	case connGone:
		return
	case connPending:
		p.pending--
		if c.bg {
			p.bgPending--
		}
	case connInUse, connCheckingIn:
		p.inUse--
		p.unpinLocked(c)
	}
	c.state = connGone
	p.total--
	p.closedTotal++
	delete(p.all, c)
	if c.hasSvc {
		if s := p.services[c.svc]; s != nil {
			if s.count--; s.count <= 0 {
				delete(p.services, c.svc)
			}
		}
	}
	if p.total < p.cfg.MinPoolSize && p.state == stateReady {
		p.signal()
	}
}

// perishedLocked says why c must not be reused, or "". A zero now means
// the time is read only if MaxIdleTime needs it.
func (p *Pool[C]) perishedLocked(c *Pooled[C], now time.Time) event.CloseReason {
	if p.staleLocked(c) {
		return event.ReasonStale
	}
	if p.cfg.MaxIdleTime > 0 && c.state == connIdle {
		if now.IsZero() {
			now = time.Now()
		}
		if now.Sub(c.idleSince) > p.cfg.MaxIdleTime {
			return event.ReasonIdle
		}
	}
	if c.dialed && c.conn.Closed() {
		return event.ReasonError
	}
	return ""
}

func (p *Pool[C]) staleLocked(c *Pooled[C]) bool {
	if p.cfg.LoadBalanced {
		s := p.services[c.svc]
		return c.hasSvc && s != nil && c.gen < s.gen
	}
	return c.gen < p.generation
}

// attachServiceLocked gives a load-balanced connection its service's
// generation once the handshake named the service.
func (p *Pool[C]) attachServiceLocked(c *Pooled[C]) {
	if !p.cfg.LoadBalanced {
		return
	}
	var id bson.ObjectID
	switch x := any(c.conn).(type) {
	case serviceConn:
		if s := x.ServiceID(); s != nil {
			id = *s
		}
	case helloConn:
		if h := x.Hello(); h != nil && h.ServiceID != nil {
			id = *h.ServiceID
		}
	}
	s := p.services[id]
	if s == nil {
		s = &service{}
		p.services[id] = s
	}
	s.count++
	c.svc, c.hasSvc, c.gen = id, true, s.gen
}

// establish dials the connection a checkout reserved.
func (p *Pool[C]) establish(ctx context.Context, c *Pooled[C], start time.Time) (*Pooled[C], error) {
	c.created = time.Now() // tConnectionCreated, which ConnectionReady's duration counts from
	if p.ev.Pool() {
		p.ev.PoolEvent(ctx, &event.ConnectionCreated{Address: p.cfg.Address, ConnectionID: c.id})
	}
	conn, err := p.dialInterruptible(ctx, c)
	interrupted := c.interrupted.Load()
	if err != nil && !interrupted && p.cfg.OnDialError != nil {
		p.cfg.OnDialError(err, c.gen)
	}
	if err == nil && !interrupted && p.ev.Pool() {
		// Establishment ends before ConnectionReady, and only then may
		// another connection take its maxConnecting slot.
		p.ev.PoolEvent(ctx, &event.ConnectionReady{Address: p.cfg.Address, ConnectionID: c.id, Duration: time.Since(c.created)})
	}
	p.mu.Lock()
	if interrupted {
		// A clear with interruptInUseConnections cut the establishment
		// short: the checkout fails retryable, as an interrupted
		// operation does.
		if err == nil {
			c.conn, c.dialed = conn, true
		}
		p.forgetLocked(c)
		p.dispatchLocked()
		perr := &PoolClearedError{Address: p.cfg.Address, Cause: p.clearCause, Interrupted: true}
		p.mu.Unlock()
		p.closeConn(ctx, c, event.ReasonStale, nil)
		p.checkOutFailed(ctx, start, event.ReasonCheckOutConnectionError, perr)
		return nil, perr
	}
	if err != nil {
		p.forgetLocked(c)
		p.dispatchLocked()
		p.mu.Unlock()
		derr := &DialError{Address: p.cfg.Address, ConnectionID: c.id, Err: err}
		p.closeConn(ctx, c, event.ReasonError, err)
		p.checkOutFailed(ctx, start, event.ReasonCheckOutConnectionError, derr)
		return nil, derr
	}
	c.conn, c.dialed = conn, true
	p.attachServiceLocked(c)
	if p.state == stateClosed {
		p.forgetLocked(c)
		p.mu.Unlock()
		p.closeConn(ctx, c, event.ReasonPoolClosed, nil)
		perr := &PoolClosedError{Address: p.cfg.Address}
		p.checkOutFailed(ctx, start, event.ReasonCheckOutPoolClosed, perr)
		return nil, perr
	}
	p.pending--
	p.inUse++
	c.state = connInUse
	p.dispatchLocked() // one fewer pending: a waiter may now establish
	p.mu.Unlock()
	if p.ev.Pool() {
		p.ev.PoolEvent(ctx, &event.ConnectionCheckedOut{Address: p.cfg.Address, ConnectionID: c.id, Duration: time.Since(start)})
	}
	return c, nil
}

func (p *Pool[C]) dial(ctx context.Context, id int64) (C, error) {
	conn, err := p.cfg.Dial(ctx, id)
	none := isNil(conn)
	if err == nil && none {
		err = errors.New("Dial returned neither a connection nor an error")
	}
	if err != nil && !none {
		conn.Close()
	}
	return conn, err
}

// dialInterruptible dials c with a context that a clear with
// interruptInUseConnections cancels (see runOnce); it allocates, but only
// when a connection is established.
func (p *Pool[C]) dialInterruptible(ctx context.Context, c *Pooled[C]) (C, error) {
	dctx, cancel := context.WithCancel(ctx)
	p.mu.Lock()
	c.cancelDial = cancel
	if c.interrupted.Load() {
		cancel()
	}
	p.mu.Unlock()
	conn, err := p.dial(dctx, c.id)
	cancel()
	return conn, err
}

// isNil reports whether the connection Dial returned is a nil interface or
// a nil pointer (C is a type parameter, so == nil does not compile). It
// runs once per dial, never on the checkout path.
func isNil(c any) bool {
	if c == nil {
		return true
	}
	v := reflect.ValueOf(c)
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan:
		return v.IsNil()
	}
	return false
}

// closeConn emits ConnectionClosed and closes c's connection; c is already
// out of the counts.
func (p *Pool[C]) closeConn(ctx context.Context, c *Pooled[C], reason event.CloseReason, err error) {
	if p.ev.Pool() {
		p.ev.PoolEvent(ctx, &event.ConnectionClosed{Address: p.cfg.Address, ConnectionID: c.id, Reason: reason, Err: err})
	}
	if c.dialed {
		c.conn.Close()
	}
}

// CheckIn gives a checked-out connection back. A perished connection (from
// before a clear, marked errored, or closed by an error) or any connection
// given to a closed pool is closed; others become available, going first to
// the oldest waiter.
func (p *Pool[C]) CheckIn(ctx context.Context, c *Pooled[C]) error {
	if c == nil {
		return &CheckInError{Address: p.cfg.Address, Reason: "nil connection"}
	}
	if c.pool != p {
		return &CheckInError{Address: p.cfg.Address, ConnectionID: c.id, Reason: "it belongs to the pool for " + c.pool.cfg.Address}
	}
	p.mu.Lock()
	if c.state != connInUse {
		p.mu.Unlock()
		return &CheckInError{Address: p.cfg.Address, ConnectionID: c.id, Reason: "it is not checked out"}
	}
	p.unpinLocked(c)
	if p.ev.Pool() {
		// The event must precede the connection's next checkout, which can
		// happen as soon as it is available: emit before that, unlocked.
		c.state = connCheckingIn
		p.mu.Unlock()
		p.ev.PoolEvent(ctx, &event.ConnectionCheckedIn{Address: p.cfg.Address, ConnectionID: c.id})
		p.mu.Lock() // connCheckingIn kept c out of everyone else's hands
	}
	var reason event.CloseReason
	switch {
	case p.state == stateClosed:
		reason = event.ReasonPoolClosed
	case c.err != nil:
		reason = event.ReasonError
	case c.conn.Closed() && !c.interrupted.Load():
		// Closed by an error of its own: that is why it goes, even if
		// the error also cleared the pool.
		reason = event.ReasonError
	case p.staleLocked(c):
		reason = event.ReasonStale
	case c.interrupted.Load():
		reason = event.ReasonError
	}
	if reason != "" {
		p.forgetLocked(c)
		p.dispatchLocked()
		p.mu.Unlock()
		p.closeConn(ctx, c, reason, c.err)
		return nil
	}
	c.state = connIdle
	p.inUse--
	if p.cfg.MaxIdleTime > 0 {
		c.idleSince = time.Now()
	}
	p.idle = append(p.idle, c)
	p.dispatchLocked()
	p.mu.Unlock()
	return nil
}

// Ready marks a paused pool ready: checkouts succeed again and background
// population resumes. It does nothing on a ready or closed pool.
func (p *Pool[C]) Ready() {
	p.stateMu.Lock()
	defer p.stateMu.Unlock()
	p.mu.Lock()
	if p.state != statePaused {
		p.mu.Unlock()
		return
	}
	p.state = stateReady
	p.clearCause = nil
	p.mu.Unlock()
	// stateMu keeps background runs from creating connections until
	// PoolReady is out.
	if p.ev.Pool() {
		p.ev.PoolEvent(p.bgCtx, &event.PoolReady{Address: p.cfg.Address})
	}
	p.signal()
}

// Clear marks the pool's connections stale. Outside load-balanced mode it
// also pauses the pool and fails every waiting checkout with
// *PoolClearedError (serviceID is ignored); with interruptInUse the
// background goroutine closes checked-out connections too, and cuts short
// the establishment of pending ones (their checkouts fail with an
// interrupted *PoolClearedError). In load-balanced
// mode it marks only serviceID's connections (every service's when nil) and
// neither pauses nor fails waiters.
func (p *Pool[C]) Clear(serviceID *bson.ObjectID, interruptInUse bool) {
	p.ClearWithCause(serviceID, interruptInUse, nil)
}

// ClearWithCause is Clear with the error that led to it, which
// PoolClearedError and PoolCleared report.
func (p *Pool[C]) ClearWithCause(serviceID *bson.ObjectID, interruptInUse bool, cause error) {
	p.stateMu.Lock()
	defer p.stateMu.Unlock()
	p.mu.Lock()
	if p.state == stateClosed {
		p.mu.Unlock()
		return
	}
	if p.cfg.LoadBalanced {
		if serviceID != nil {
			if s := p.services[*serviceID]; s != nil {
				s.gen++
			}
		} else {
			for _, s := range p.services {
				s.gen++
			}
		}
		p.mu.Unlock()
		if p.ev.Pool() {
			var sid *bson.ObjectID
			if serviceID != nil {
				id := *serviceID
				sid = &id
			}
			p.ev.PoolEvent(p.bgCtx, &event.PoolCleared{Address: p.cfg.Address, ServiceID: sid, InterruptInUseConnections: interruptInUse, Cause: cause})
		}
		p.signal()
		return
	}
	// The generation goes up even when the pool is already paused (the
	// specification's rationale): errors from connections of the older
	// generation, still being established, then no longer count.
	p.generation++
	if interruptInUse {
		p.interruptUpTo, p.interrupt = p.generation-1, true
	}
	wasPaused := p.state == statePaused
	p.state = statePaused
	p.clearCause = cause
	p.mu.Unlock()
	if wasPaused {
		// No event; the wait queue is already empty (a paused pool fails
		// checkouts at once).
		p.signal()
		return
	}
	if p.ev.Pool() {
		p.ev.PoolEvent(p.bgCtx, &event.PoolCleared{Address: p.cfg.Address, InterruptInUseConnections: interruptInUse, Cause: cause})
	}
	// After PoolCleared, so that no waiter's ConnectionCheckOutFailed
	// precedes it; paused, the pool granted the waiters nothing since.
	p.mu.Lock()
	p.failWaitersLocked(event.ReasonCheckOutConnectionError, &PoolClearedError{Address: p.cfg.Address, Cause: cause})
	p.mu.Unlock()
	p.signal() // close the stale idle connections now, not at the next interval
}

// Close closes the pool: available connections now, checked-out ones when
// they are checked in; waiting and later checkouts fail with
// *PoolClosedError. It waits for the pool's goroutines to stop. Calling it
// again does nothing.
func (p *Pool[C]) Close() {
	p.stateMu.Lock()
	p.mu.Lock()
	if p.state == stateClosed {
		p.mu.Unlock()
		p.stateMu.Unlock()
		return
	}
	p.state = stateClosed
	idle := p.idle
	p.idle = nil
	for _, c := range idle {
		p.forgetLocked(c)
	}
	p.failWaitersLocked(event.ReasonCheckOutPoolClosed, &PoolClosedError{Address: p.cfg.Address})
	p.mu.Unlock()
	// Released before waiting for the background goroutine, whose runs
	// take it; a closed pool changes state no more.
	p.stateMu.Unlock()
	for _, c := range idle {
		p.closeConn(p.bgCtx, c, event.ReasonPoolClosed, nil)
	}
	if p.ev.Pool() {
		p.ev.PoolEvent(p.bgCtx, &event.PoolClosed{Address: p.cfg.Address})
	}
	p.bgCancel()
	p.wg.Wait()
}

// signal asks the background goroutine for a run without blocking.
func (p *Pool[C]) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// ServiceGeneration returns the generation of serviceID's connections in
// load-balanced mode: the count of clears for that service (or for every
// service) while it had connections. It is the pool's generation outside
// load-balanced mode or for a nil serviceID.
func (p *Pool[C]) ServiceGeneration(serviceID *bson.ObjectID) uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.cfg.LoadBalanced || serviceID == nil {
		return p.generation
	}
	if s := p.services[*serviceID]; s != nil {
		return s.gen
	}
	return 0
}

// Stats is a snapshot of a pool, in the manner of database/sql.DBStats.
type Stats struct {
	State string // "paused", "ready" or "closed"
	Max   int    // MaxPoolSize; 0 means no limit
	Total int    // open connections: idle, in use and pending
	Idle  int    // available
	InUse int    // checked out
	// InUseByCursors and InUseByTransactions are the checked-out
	// connections pinned to cursors and to transactions (load-balanced
	// mode); the rest of InUse serve single operations.
	InUseByCursors      int
	InUseByTransactions int
	PendingConnections  int   // being established
	WaitCount           int   // checkouts waiting now
	Waited              int64 // checkouts that had to wait, since the pool was created
	WaitDuration        time.Duration
	CreatedTotal        int64 // connections created, since the pool was created
	ClosedTotal         int64 // connections closed (or failed to establish)
	Generation          uint64
}

// Stats returns a snapshot of the pool's state.
func (p *Pool[C]) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.statsLocked()
}

func (p *Pool[C]) statsLocked() Stats {
	return Stats{
		State:               p.state.String(),
		Max:                 p.cfg.MaxPoolSize,
		Total:               p.total,
		Idle:                len(p.idle),
		InUse:               p.inUse,
		InUseByCursors:      p.pinnedCursors,
		InUseByTransactions: p.pinnedTxns,
		PendingConnections:  p.pending,
		WaitCount:           p.nwait,
		Waited:              p.waited,
		WaitDuration:        time.Duration(p.waitNS.Load()),
		CreatedTotal:        p.createdTotal,
		ClosedTotal:         p.closedTotal,
		Generation:          p.generation,
	}
}
