package mongotest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/internal/wire"
	"github.com/mongoscope/mongoscope/mongotest/internal/store"
)

// Server limits, reported in hello and enforced on reads.
const (
	MaxBSONObjectSize   = 16 * 1024 * 1024
	MaxMessageSizeBytes = 48_000_000
	MaxWriteBatchSize   = 100_000
	// DefaultMaxWireVersion is maxWireVersion when Options leave it zero:
	// 25, MongoDB 8.0.
	DefaultMaxWireVersion = 25
	// DefaultVersion is the version buildInfo and serverStatus report.
	DefaultVersion = "8.0.0"
	// LogicalSessionTimeoutMinutes is what hello reports, as mongod's default.
	LogicalSessionTimeoutMinutes = 30
	// DefaultCommandLogSize is how many commands the log keeps when
	// Options.CommandLogSize is zero.
	DefaultCommandLogSize = 100_000
)

// Options configure a Server. The zero value is a standalone mongod with
// every compressor and no authentication.
type Options struct {
	// Addr is the address to listen on; "" means "127.0.0.1:0", a free
	// loopback port.
	Addr string
	// Topology is the role and replica-set view the server starts with;
	// SetTopology changes it later.
	Topology Topology
	// MaxWireVersion is hello's maxWireVersion; 0 means
	// DefaultMaxWireVersion.
	MaxWireVersion int32
	// NoSessions leaves logicalSessionTimeoutMinutes out of hello, as a
	// server that does not support sessions does: drivers then send no
	// lsid (the sessions specification's tests of that case).
	NoSessions bool
	// Version is the server version buildInfo reports, "major.minor.patch";
	// "" means DefaultVersion.
	Version string
	// Compressors are the compressors the server enables, by handshake
	// name; nil means snappy, zlib and zstd. An empty non-nil slice
	// enables none.
	Compressors []string
	// Auth requires authentication: until a connection has authenticated,
	// every command except the handshake and authentication ones fails
	// with Unauthorized (13). Users are added with AddUser.
	Auth bool
	// CommandLogSize caps how many commands Commands keeps (the oldest are
	// dropped); 0 means DefaultCommandLogSize and a negative value turns
	// the log off.
	CommandLogSize int
}

// Server is an in-process MongoDB server listening on a loopback port.
// Its methods are safe for concurrent use.
type Server struct {
	opts        Options
	ln          net.Listener
	addr        string
	processID   bson.ObjectID
	serviceID   bson.ObjectID
	started     time.Time
	version     string
	compressors []wire.Compressor
	maxWire     int32
	noSessions  bool

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu         sync.Mutex
	conns      map[int64]*Conn
	closed     bool
	closeNext  int
	connErrors []ConnectionError
	handlers   map[string]command

	nextConnID   atomic.Int64
	totalCreated atomic.Int64
	latency      atomic.Int64 // nanoseconds added before every reply
	requestIDs   atomic.Int32
	// scatterWrites counts replies written as pieces (scatter.go), for
	// the tests.
	scatterWrites atomic.Int64
	opIDs         atomic.Int32 // $currentOp's opid

	topo     topologyState
	clock    *clusterClock // shared over the store
	users    userStore
	params   paramStore
	sessions sessionCache
	fps      failPoints
	ingress  ingressLimiter
	log      commandLog
	ops      opCounters

	// store holds the databases; replica-set members share one.
	store   *store.Store
	cursors cursorTable
	// retries remembers retryable writes' replies; shared by every
	// server over the same store, as mongod replicates its transaction
	// table.
	retries *retryTable
	// sessionTimeout, when set, replaces logicalSessionTimeoutMinutes
	// for expiring sessions (tests).
	sessionTimeout time.Duration
}

// ConnectionError records why the server closed a client connection: a
// malformed message, an unsupported opcode, a fail point or a reset.
type ConnectionError struct {
	ConnID int64
	Time   time.Time
	Reason string
}

// NewServer starts a server for the test and closes it when the test ends.
// It fails the test if the server cannot start.
func NewServer(t testing.TB, opts Options) *Server {
	t.Helper()
	s, err := Start(opts)
	if err != nil {
		t.Fatalf("mongotest: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// Start starts a server outside of a test; the caller must Close it.
func Start(opts Options) (*Server, error) {
	s, err := newServer(opts)
	if err != nil {
		return nil, err
	}
	if err := s.listen(); err != nil {
		return nil, err
	}
	return s, nil
}

// listen starts accepting connections on Options.Addr; on failure the
// server is cancelled and must not be used.
func (s *Server) listen() error {
	addr := s.opts.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		s.cancel()
		return fmt.Errorf("mongotest: listen on %s: %w", addr, err)
	}
	s.ln = ln
	s.addr = ln.Addr().String()
	s.wg.Add(1)
	go s.accept()
	return nil
}

// newServer builds a server without a listener; tests and benchmarks that
// feed connections directly use it.
func newServer(opts Options) (*Server, error) {
	return newServerWithStore(opts, store.New())
}

// newServerWithStore builds a server without a listener over st, which
// other servers (a replica set's members) may share.
func newServerWithStore(opts Options, st *store.Store) (*Server, error) {
	if st == nil {
		return nil, errors.New("mongotest: newServerWithStore needs a store")
	}
	sh := sharedFor(st)
	s := &Server{
		store:      st,
		retries:    &sh.retries,
		clock:      &sh.clock,
		opts:       opts,
		processID:  bson.NewObjectID(),
		serviceID:  bson.NewObjectID(),
		started:    time.Now(),
		version:    opts.Version,
		maxWire:    opts.MaxWireVersion,
		noSessions: opts.NoSessions,
		conns:      map[int64]*Conn{},
		addr:       "127.0.0.1:0",
	}
	if s.version == "" {
		s.version = DefaultVersion
	}
	if _, err := parseVersion(s.version); err != nil {
		return nil, err
	}
	if s.maxWire == 0 {
		s.maxWire = DefaultMaxWireVersion
	}
	if s.maxWire < 0 {
		return nil, fmt.Errorf("mongotest: Options.MaxWireVersion %d is negative", s.maxWire)
	}
	names := opts.Compressors
	if names == nil {
		names = []string{"snappy", "zlib", "zstd"}
	}
	for _, n := range names {
		c, ok := wire.CompressorByName(n)
		if !ok || c == wire.CompressorNoop {
			return nil, fmt.Errorf("mongotest: Options.Compressors: unknown compressor %q (want snappy, zlib or zstd)", n)
		}
		s.compressors = append(s.compressors, c)
	}
	if err := opts.Topology.validate(); err != nil {
		return nil, err
	}
	s.topo.t = opts.Topology.clone()
	s.topo.changed = make(chan struct{})
	s.log.limit = opts.CommandLogSize
	if s.log.limit == 0 {
		s.log.limit = DefaultCommandLogSize
	}
	s.log.wake = make(chan struct{})
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// Addr returns the "host:port" the server listens on.
func (s *Server) Addr() string { return s.addr }

// URI returns a connection string for the server, "mongodb://host:port/".
// In the load-balanced role it carries loadBalanced=true, since the server
// refuses handshakes without it.
func (s *Server) URI() string {
	if s.Topology().Role == RoleLoadBalanced {
		return "mongodb://" + s.addr + "/?loadBalanced=true"
	}
	return "mongodb://" + s.addr + "/"
}

// Close stops the listener, closes every client connection and waits for
// every goroutine the server started. It is safe to call more than once.
func (s *Server) Close() {
	s.mu.Lock()
	already := s.closed
	s.closed = true
	conns := make([]*Conn, 0, len(s.conns))
	for _, c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	if !already {
		if s.ln != nil {
			s.ln.Close()
		}
		for _, c := range conns {
			c.close("")
		}
		s.cancel()
	}
	s.wg.Wait()
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			if s.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			// Temporary failures (too many open files) should not end
			// the server; back off briefly and go on.
			select {
			case <-time.After(5 * time.Millisecond):
				continue
			case <-s.ctx.Done():
				return
			}
		}
		s.serve(nc)
	}
}

// serve registers nc as a new client connection and starts its goroutines.
func (s *Server) serve(nc net.Conn) *Conn {
	c := newConn(s, nc)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		nc.Close()
		return nil
	}
	drop := s.closeNext > 0
	if drop {
		s.closeNext--
	}
	s.conns[c.id] = c
	s.mu.Unlock()
	s.totalCreated.Add(1)
	if drop {
		c.close("closed by CloseNextConnections")
		s.forget(c)
		return nil
	}
	s.wg.Add(1)
	go c.handleLoop()
	return c
}

func (s *Server) forget(c *Conn) {
	s.mu.Lock()
	delete(s.conns, c.id)
	s.mu.Unlock()
}

func (s *Server) recordConnError(id int64, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Bounded like the command log, so a long demo cannot grow it forever.
	if len(s.connErrors) >= 10_000 {
		s.connErrors = append(s.connErrors[:0], s.connErrors[1:]...)
	}
	s.connErrors = append(s.connErrors, ConnectionError{ConnID: id, Time: time.Now(), Reason: reason})
}

// ConnectionErrors returns why the server closed connections, oldest first:
// malformed or unsupported messages, fail points, resets. Clients hanging
// up are not recorded.
func (s *Server) ConnectionErrors() []ConnectionError {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ConnectionError(nil), s.connErrors...)
}

// AddLatency delays every reply by d from now on, on top of the time the
// command takes; 0 removes the delay. Replies already being written are not
// affected.
func (s *Server) AddLatency(d time.Duration) {
	if d < 0 {
		d = 0
	}
	s.latency.Store(int64(d))
}

// ResetConnections closes every open client connection, as a network
// failure would; the server keeps accepting new ones.
func (s *Server) ResetConnections() {
	s.mu.Lock()
	conns := make([]*Conn, 0, len(s.conns))
	for _, c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.close("closed by ResetConnections")
	}
}

// CloseNextConnections makes the server close the next n connections it
// accepts right away, before reading anything from them.
func (s *Server) CloseNextConnections(n int) {
	if n < 0 {
		n = 0
	}
	s.mu.Lock()
	s.closeNext = n
	s.mu.Unlock()
}

// NumConnections returns how many client connections are open.
func (s *Server) NumConnections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// Handle makes the server answer the command name with h instead of its
// built-in handler (or instead of CommandNotFound): a test can script any
// reply. Authentication and fail points still apply. A nil h removes the
// override.
func (s *Server) Handle(name string, h HandlerFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h == nil {
		delete(s.handlers, name)
		return
	}
	if s.handlers == nil {
		s.handlers = map[string]command{}
	}
	// An override keeps the built-in's rules (a hello runs before
	// authentication).
	s.handlers[name] = command{h: h, flags: commands[name].flags | cmdUser}
}

// HandleUnchecked is Handle for a handler whose replies are sent without
// being validated, so that a test can see how a client copes with
// malformed BSON inside a reply. The reply's top-level elements must
// still be well framed: the server copies them into its own reply.
func (s *Server) HandleUnchecked(name string, h HandlerFunc) {
	s.Handle(name, h)
	if h == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.handlers[name]
	c.flags |= cmdUnchecked
	s.handlers[name] = c
}

func (s *Server) lookup(name string) (command, bool) {
	s.mu.Lock()
	c, ok := s.handlers[name]
	s.mu.Unlock()
	if ok {
		return c, true
	}
	c, ok = commands[name]
	return c, ok
}

// hostname is serverStatus's host: the machine's name and the port, as
// mongod reports it.
func (s *Server) hostname() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		h = "localhost"
	}
	if i := strings.LastIndexByte(s.addr, ':'); i >= 0 {
		return h + s.addr[i:]
	}
	return h
}
