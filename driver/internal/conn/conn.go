package conn

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/auth"
	"github.com/mongoscope/mongoscope/driver/internal/handshake"
	"github.com/mongoscope/mongoscope/internal/wire"
)

// Dialer opens the byte stream; *net.Dialer is one.
type Dialer interface {
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// Config describes how to open one connection. The zero value of each
// field is a usable default, except Address.
type Config struct {
	// Address is "host:port", "[ipv6]:port" or the path of a Unix domain
	// socket (it ends in ".sock").
	Address string
	// ConnectTimeout bounds dialling, the TLS handshake, the MongoDB
	// handshake and authentication together (connectTimeoutMS); under
	// timeoutMS only dialling and the TLS handshake (Timeout,
	// ForOperation). 0 means only the context bounds them.
	ConnectTimeout time.Duration
	// SocketTimeout bounds each read and write, the handshake's and
	// authentication's commands included (socketTimeoutMS); 0 means only
	// the context bounds them. Under timeoutMS it is ignored (Timeout,
	// ForOperation).
	SocketTimeout time.Duration
	// Timeout is the client's timeoutMS and TimeoutSet whether it is set.
	// A connection established outside an operation (a pool's minPoolSize
	// maintenance) then bounds each handshake and authentication command
	// by Timeout afresh (0: no limit) in place of socketTimeoutMS, and
	// connectTimeoutMS bounds only the socket's establishment (TCP and
	// TLS): the client-side operations timeout specification's
	// "Background Connection Pooling".
	Timeout    time.Duration
	TimeoutSet bool
	// KeepAlive is the TCP keepalive idle time; 0 means two minutes, the
	// value the specifications recommend, and negative turns it off.
	KeepAlive time.Duration
	// Dialer replaces the standard dialer, e.g. for a SOCKS5 proxy.
	Dialer Dialer
	// TLS, when set, wraps the stream; it should come from
	// tlsconfig.ForHost so its server name matches Address.
	TLS *tls.Config

	// Handshake holds the appname, compressors, loadBalanced and server
	// API; Metadata is the client document built once per client by
	// handshake.Metadata (nil builds it here).
	Handshake handshake.Options
	Metadata  bson.Raw
	// Shared, when set, holds the client's current metadata, which
	// Settings.AppendDriverInfo may change after the client started: a
	// new connection takes it instead of Metadata.
	Shared *SharedMetadata
	// Credential, when set, authenticates the connection.
	Credential *auth.Credential
	// ZlibLevel is zlibCompressionLevel, -1 through 9; used only when
	// zlib is negotiated. The zero value means level 0 (no compression
	// but zlib framing), so callers should pass -1 for the default.
	ZlibLevel int

	// Spin, when set, lets an exchange that is the only one of its client
	// waiting for a reply poll for it briefly before parking (Spinner).
	// The pool's connections share the client's; monitors have none.
	Spin *Spinner

	// ID is the driver's id for this connection, unique within its pool;
	// 0 takes the next value of a process-wide counter.
	ID int64
	// RequestID, when set, supplies message request ids; tests use it to
	// make the bytes on the wire predictable.
	RequestID func() int32
}

var (
	connIDs    atomic.Int64
	requestIDs atomic.Int32
)

func nextRequestID() int32 { return requestIDs.Add(1) }

// NextID takes the next value of the process-wide connection id counter,
// the one Dial uses when Config.ID is 0. A caller that must name the
// connection before dialling it (the server monitor, whose heartbeat
// started event precedes the socket) takes its id here and passes it in
// Config.ID.
func NextID() int64 { return connIDs.Add(1) }

// Conn is one established, handshaken connection. It carries one request
// at a time: the caller (the pool) owns it exclusively between check-out
// and check-in. Close may be called from any goroutine.
type Conn struct {
	cfg     Config
	id      int64
	addr    string
	nc      net.Conn
	br      *bufio.Reader
	hello   handshake.Reply
	comp    wire.Compressor
	maxSize int
	reqID   func() int32

	// lazyBody makes the next reply's decode check only the body's
	// framing (Request.LazyBody).
	lazyBody bool
	// streaming is set while the server is sending moreToCome replies
	// that answer an earlier exhaust request.
	streaming bool
	// expect is the request id the next reply must answer.
	expect int32
	// dlSet tells whether the stream may have a deadline set; when false
	// it has none and clearing it is skipped.
	dlSet bool
	// watched is set during an exchange whose context watch is armed
	// (watch): reads and writes then register none of their own.
	watched bool
	// wake sets a past deadline on the stream (wakeFunc).
	wake func()
	// woken is set by Wake.
	woken atomic.Bool
	// poll peeks at the socket for Spinner (pollReadable); pollFailed is
	// set when the socket cannot be polled.
	poll       *poller
	pollFailed bool
	// establishing is how the handshake's commands are bounded while Dial
	// runs; estDone once it returned.
	establishing establishMode

	closeOnce sync.Once
	closed    atomic.Bool
	closeErr  error
}

// ID returns the driver's id for the connection.
func (c *Conn) ID() int64 { return c.id }

// Address returns the address the connection was opened to.
func (c *Conn) Address() string { return c.addr }

// Hello returns the server's reply to the handshake.
func (c *Conn) Hello() *handshake.Reply { return &c.hello }

// Compressor returns the compressor negotiated in the handshake, or
// wire.CompressorNoop.
func (c *Conn) Compressor() wire.Compressor { return c.comp }

// Streaming reports whether the server has more replies coming for an
// exhaust request: the next call must be Receive, not Send.
func (c *Conn) Streaming() bool { return c.streaming }

// Closed reports whether the connection is closed.
func (c *Conn) Closed() bool { return c.closed.Load() }

// Close closes the connection. It is safe to call more than once and from
// any goroutine; a read or write in progress fails with ErrClosed.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		c.closeErr = c.nc.Close()
	})
	return c.closeErr
}

// fail closes the connection and wraps err as a NetworkError.
func (c *Conn) fail(op string, err error) error {
	_ = c.Close()
	var ne *NetworkError
	if errors.As(err, &ne) {
		return err
	}
	return &NetworkError{Op: op, Address: c.addr, ConnID: c.id, Err: err, timeout: isTimeout(err)}
}

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

// operationKey marks the context of a checkout under timeoutMS.
type operationKey struct{}

// ForOperation marks ctx as that of an operation under timeoutMS that
// checks out a connection: ctx's deadline is then the remaining
// computedServerSelectionTimeout, min(serverSelectionTimeoutMS, remaining
// timeoutMS). Dial bounds the socket's establishment (TCP, TLS) by
// min(connectTimeoutMS, ctx) and every handshake and authentication
// command by ctx alone, without socketTimeoutMS (the client-side
// operations timeout specification's "Server Selection").
func ForOperation(ctx context.Context) context.Context {
	return context.WithValue(ctx, operationKey{}, true)
}

// establishMode is what bounds the commands of a connection's handshake
// and authentication.
type establishMode uint8

const (
	estDone       establishMode = iota // established: Commands are an operation's
	estLegacy                          // no timeoutMS: connectTimeoutMS for it all, socketTimeoutMS per command
	estOperation                       // ForOperation: the context's deadline
	estBackground                      // client timeoutMS outside an operation: Timeout afresh per command
)

// Dial opens, handshakes and authenticates a connection to cfg.Address.
// Without timeoutMS, cfg.ConnectTimeout bounds the whole establishment and
// cfg.SocketTimeout each of its commands, as ctx does. With it, see
// ForOperation and Config.Timeout. On any failure nothing is left open.
func Dial(ctx context.Context, cfg Config) (*Conn, error) {
	if cfg.Address == "" {
		return nil, &NetworkError{Op: "dial", Err: errors.New("no address")}
	}
	mode := estLegacy
	switch {
	case ctx.Value(operationKey{}) != nil:
		mode = estOperation
	case cfg.TimeoutSet:
		mode = estBackground
	}
	// sctx bounds the socket's establishment; in legacy mode the
	// handshake's too.
	sctx := ctx
	if cfg.ConnectTimeout > 0 {
		var cancel context.CancelFunc
		sctx, cancel = context.WithTimeout(ctx, cfg.ConnectTimeout)
		defer cancel()
	}
	if mode == estLegacy {
		// Without timeoutMS the specification names connectTimeoutMS
		// for the socket and socketTimeoutMS for the handshake's
		// commands. connectTimeoutMS bounds those commands as well, as it
		// always has here: socketTimeoutMS defaults to no limit, and a
		// server that accepts connections but never answers its hello
		// would otherwise hold a checkout and a maxConnecting slot for
		// ever.
		ctx = sctx
	}
	id := cfg.ID
	if id == 0 {
		id = NextID()
	}
	network := "tcp"
	if strings.HasSuffix(cfg.Address, ".sock") {
		network = "unix"
	}
	d := cfg.Dialer
	if d == nil {
		nd := &net.Dialer{}
		switch {
		case cfg.KeepAlive < 0:
			nd.KeepAlive = -1
		default:
			idle := cfg.KeepAlive
			if idle == 0 {
				idle = 2 * time.Minute
			}
			nd.KeepAliveConfig = net.KeepAliveConfig{Enable: true, Idle: idle, Interval: 10 * time.Second, Count: 9}
		}
		d = nd
	}
	nc, err := d.DialContext(sctx, network, cfg.Address)
	if err != nil {
		return nil, overloaded(&NetworkError{Op: "dial", Address: cfg.Address, ConnID: id, Err: err, timeout: isTimeout(err)})
	}
	if cfg.TLS != nil {
		tc := tls.Client(nc, cfg.TLS)
		if err := tc.HandshakeContext(sctx); err != nil {
			_ = nc.Close()
			return nil, overloaded(&NetworkError{Op: "tls", Address: cfg.Address, ConnID: id, Err: err, timeout: isTimeout(err)})
		}
		nc = tc
	}
	c := &Conn{
		cfg:     cfg,
		id:      id,
		addr:    cfg.Address,
		nc:      nc,
		br:      bufio.NewReaderSize(nc, 16<<10),
		maxSize: wire.DefaultMaxMessageSize,
		reqID:   cfg.RequestID,
	}
	if c.reqID == nil {
		c.reqID = nextRequestID
	}
	c.establishing = mode
	err = c.handshake(ctx)
	c.establishing = estDone
	if err != nil {
		_ = c.Close()
		// A network error during the hello comes bare (during
		// authentication it is inside a *HandshakeError, and gets no
		// label).
		if ne, ok := err.(*NetworkError); ok {
			err = overloaded(ne)
		}
		return nil, err
	}
	return c, nil
}

// overloaded adds the backpressure labels (SystemOverloadedError,
// RetryableError) to a network error or timeout while connecting or during
// the initial hello, as CMAP's "backpressure-enabled" rule requires, so that
// SDAM leaves the pool alone: a server too busy to accept connections is not
// a server gone. Errors that never come from overload get none: a failed
// DNS lookup, and a TLS handshake that failed for a reason other than I/O
// (a certificate that does not verify, a name that does not match, an
// alert from the server).
func overloaded(ne *NetworkError) *NetworkError {
	if !overloadSign(ne) {
		return ne
	}
	ne.Labels = append(ne.Labels, LabelSystemOverloaded, LabelRetryable)
	return ne
}

func overloadSign(ne *NetworkError) bool {
	err := ne.Err
	var dns *net.DNSError
	if errors.As(err, &dns) && !dns.IsTimeout {
		return false
	}
	if ne.Op != "tls" {
		return true
	}
	// TLS: only an I/O failure (the peer closed, a reset, a timeout) may
	// be the server's overload.
	if ne.timeout || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return true
	}
	// crypto/tls reports alerts as *net.OpError too ("remote error",
	// "local error"): a refusal, not I/O.
	var op *net.OpError
	return errors.As(err, &op) && op.Op != "remote error" && op.Op != "local error"
}

// deadline arms the stream's deadline for one exchange: the earlier of the
// context's deadline and the socket timeout. A context that can be
// cancelled without a deadline interrupts the I/O through stop; within a
// watched exchange (watch) the exchange's stop does that instead.
func (c *Conn) deadline(ctx context.Context, socketTimeout time.Duration) (stop func() bool, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dl, has := ctx.Deadline()
	if socketTimeout > 0 {
		if s := time.Now().Add(socketTimeout); !has || s.Before(dl) {
			dl, has = s, true
		}
	}
	if c.woken.Load() {
		// Wake set a past deadline, perhaps after the last exchange's
		// I/O ended: it must be replaced.
		c.woken.Store(false)
		c.dlSet = true
	}
	// Clearing a deadline that is already clear costs a timer update
	// per read and write for nothing.
	if has || c.dlSet {
		if has {
			err = c.nc.SetDeadline(dl)
		} else {
			err = c.nc.SetDeadline(time.Time{})
		}
		if err != nil {
			return nil, err
		}
		c.dlSet = has
	}
	if c.watched {
		// The exchange's watch was registered before this deadline was
		// set: a cancellation in between was overwritten, so look again.
		// One after this point wakes the I/O.
		return nil, ctx.Err()
	}
	if ctx.Done() == nil {
		return nil, nil
	}
	return context.AfterFunc(ctx, c.wakeFunc()), nil
}

// wakeFunc returns the function that wakes a blocked read or write by
// setting a deadline in the past.
func (c *Conn) wakeFunc() func() {
	if c.wake == nil {
		c.wake = func() { _ = c.nc.SetDeadline(time.Unix(1, 0)) }
	}
	return c.wake
}

// stopped ends a watch; when the watch fired, the stream's deadline is in
// the past, so the next exchange must set it again.
func (c *Conn) stopped(stop func() bool) {
	if stop != nil && !stop() {
		c.dlSet = true
	}
}

// watch arms the interruption of a whole exchange (a request and its
// reply) by ctx at once, instead of once per read and per write; unwatch
// ends it.
func (c *Conn) watch(ctx context.Context) (stop func() bool) {
	if ctx.Done() == nil || ctx.Err() != nil {
		return nil // nothing to watch, or deadline reports the error
	}
	c.watched = true
	return context.AfterFunc(ctx, c.wakeFunc())
}

// unwatch ends the watch armed by watch.
func (c *Conn) unwatch(stop func() bool) {
	c.watched = false
	c.stopped(stop)
}

// unwatchExternal ends an exchange whose caller watched its context
// (Request.Watched): if the caller woke the connection, its deadline is in
// the past and the next exchange must set it again.
func (c *Conn) unwatchExternal() {
	c.watched = false
	if c.woken.Load() {
		c.woken.Store(false)
		c.dlSet = true
	}
}

// Wake interrupts the read or write in progress, or the next one of the
// exchange, by setting a deadline in the past: for the caller of a
// Request with Watched set, once the exchange's context has ended. It may
// be called from any goroutine, but only while the exchange is running.
func (c *Conn) Wake() {
	c.woken.Store(true)
	_ = c.nc.SetDeadline(time.Unix(1, 0))
}

// ioErr turns an I/O error into the error the caller sees: the context's
// own error when the context ended the exchange, so callers can tell a
// cancellation from a server that stopped answering.
func ioErr(ctx context.Context, err error) error {
	cerr := ctx.Err()
	if cerr == nil && isTimeout(err) {
		// The stream's deadline is the context's, and it can fire a moment
		// before the context's own timer marks the context done.
		if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
			cerr = context.DeadlineExceeded
		}
	}
	if cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%w (%v)", cerr, err)
	}
	return err
}
