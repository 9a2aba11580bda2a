package driver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/connstring"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/conn"
	"github.com/mongoscope/mongoscope/driver/internal/handshake"
	"github.com/mongoscope/mongoscope/driver/internal/operation"
	"github.com/mongoscope/mongoscope/driver/internal/selection"
	"github.com/mongoscope/mongoscope/driver/internal/session"
	"github.com/mongoscope/mongoscope/driver/internal/topology"
	"github.com/mongoscope/mongoscope/driver/logging"
)

// Defaults the client applies where the specifications leave them to the
// driver.
const (
	DefaultServerSelectionTimeout = 30 * time.Second
	DefaultLocalThreshold         = 15 * time.Millisecond
	DefaultMaxPoolSize            = 100
	// DefaultSpinWait is ClientOptions.SpinWait's default.
	DefaultSpinWait = conn.DefaultSpinWait
)

// ErrClientDisconnected is returned by the methods of a Client after
// Disconnect.
var ErrClientDisconnected = operation.ErrClientDisconnected

// ErrRetryableWritesNotSupported is in the chain of a retryable write's
// error when the server said "Transaction numbers are only allowed on a
// replica set member or mongos" (a storage engine without retryable
// writes): add retryWrites=false to the connection string.
var ErrRetryableWritesNotSupported = operation.ErrRetryableWritesNotSupported

// Client is a connection to a MongoDB deployment: one monitor and one
// connection pool per server, kept current by SDAM. It is safe for
// concurrent use; make one per deployment and share it.
type Client struct {
	topo     *topology.Topology
	exec     *operation.Executor
	sink     *logging.Sink // the logging sink Connect made, closed by Disconnect
	readPref selection.ReadPref
	// base is what databases inherit: the URI's read concern, write
	// concern and read preference.
	base     concerns
	sessions *session.Pool
	clock    *session.Clock
	meta     *conn.SharedMetadata // the handshake metadata new connections send

	// stop is canceled, with ErrClientDisconnected as its cause, when
	// Disconnect gives up waiting for the operations in flight: each
	// operation's context follows it.
	stop     context.Context
	stopNow  context.CancelCauseFunc
	mu       sync.Mutex
	inFlight int
	drained  chan struct{} // closed when inFlight drops to 0 after Disconnect began
	// disconnected is set when Disconnect begins: new operations are
	// refused from then on.
	disconnected bool
	// ops holds the cancel functions of the operations in flight, by
	// slot (nil in a free slot), for Disconnect to interrupt them;
	// freeOps are the free slots. Registering here costs an operation
	// far less than a context.AfterFunc on stop.
	ops     []opEntry
	freeOps []int
}

// opEntry is an operation in flight: what cancels its context and, when
// its own context cannot end early, the OpContext whose connection must
// be woken too.
type opEntry struct {
	cancel context.CancelCauseFunc
	oc     *operation.OpContext
}

// Connect resolves opts (including the mongodb+srv DNS lookups, bounded by
// ctx), starts monitoring the deployment, and returns at once: it does not
// wait for any server. The first operation waits, up to the server
// selection timeout, for a suitable server.
//
// Events go to every value in opts.Monitors that implements one of the
// monitor interfaces of package event, and to a standardized-logging sink
// (package driver/logging) when opts.Logging is set or a MONGODB_LOG_*
// variable asks for log messages.
func Connect(ctx context.Context, opts *ClientOptions) (*Client, error) {
	if opts == nil {
		return nil, &OptionError{Option: "opts", Reason: "no client options"}
	}
	cs, warnings, err := opts.resolve(ctx)
	if err != nil {
		return nil, err
	}
	extra, err := opts.connExtra()
	if err != nil {
		return nil, err
	}
	settings, err := conn.NewSettings(cs, extra)
	if err != nil {
		return nil, err
	}
	monitors := append([]any(nil), opts.Monitors...)
	var sink *logging.Sink
	if lo := opts.Logging; lo != nil || loggingRequested(os.Getenv, os.Environ()) {
		var o logging.Options
		if lo != nil {
			o = *lo
		}
		if sink, err = logging.New(o); err != nil {
			return nil, &OptionError{Option: "Logging", Reason: err.Error(), Err: err}
		}
		monitors = append(monitors, sink)
		logWarnings(ctx, sink, warnings)
	}
	d := event.NewDispatcher(monitors...)
	if unused := d.Unused(); len(unused) > 0 {
		closeSink(sink)
		return nil, &OptionError{Option: "Monitors", Reason: fmt.Sprintf("%T implements no monitor interface of package event", unused[0])}
	}
	rp, err := readPrefOf(cs)
	if err != nil {
		closeSink(sink)
		return nil, err
	}
	cfg := topologyConfig(cs, settings, d)
	spin := DefaultSpinWait
	if opts.SpinWait != nil {
		spin = *opts.SpinWait
	}
	cfg.Spin = conn.NewSpinner(spin)
	if sink != nil {
		cfg.OnLastServerRemoved = func(w topology.LastServerRemoved) {
			sink.LastServerRemoved(context.Background(), w.TopologyID, w.Topology, w.Removed)
		}
	}
	if cs.Scheme == connstring.SchemeSRV && opts.URI != nil && len(opts.URI.Hosts) == 1 {
		// The seeds came from SRV records: mongos discovery keeps polling
		// them (the topology decides whether the deployment allows it).
		cfg.SRVHost = opts.URI.Hosts[0]
		cfg.SRVServiceName = cs.SRVServiceName
		cfg.SRVMaxHosts = deref(cs.SRVMaxHosts)
		cfg.Resolver = opts.Resolver
	}
	topo, err := topology.New(cfg)
	if err != nil {
		closeSink(sink)
		return nil, &OptionError{Option: "topology", Reason: err.Error(), Err: err}
	}
	if err := topo.Connect(); err != nil {
		topo.Close()
		closeSink(sink)
		return nil, err
	}
	base, err := baseConcerns(cs, rp)
	if err != nil {
		topo.Close()
		closeSink(sink)
		return nil, err
	}
	sessions, clock := session.NewPool(), &session.Clock{}
	c := &Client{meta: settings.Metadata(), topo: topo, sink: sink, readPref: rp, base: base, sessions: sessions, clock: clock,
		exec: &operation.Executor{Topology: topo, Events: d, Sessions: sessions, Clock: clock}, drained: make(chan struct{})}
	c.stop, c.stopNow = context.WithCancelCause(context.Background())
	// retryReads and retryWrites default to true.
	c.exec.RetryReads = cs.RetryReads == nil || *cs.RetryReads
	c.exec.RetryWrites = cs.RetryWrites == nil || *cs.RetryWrites
	c.exec.ServerSelectionTimeout = cfg.ServerSelectionTimeout
	// Client backpressure: maxAdaptiveRetries defaults to 2,
	// enableOverloadRetargeting to false.
	c.exec.Overload.MaxRetries = 2
	if cs.MaxAdaptiveRetries != nil {
		c.exec.Overload.MaxRetries = *cs.MaxAdaptiveRetries
	}
	c.exec.Overload.Retarget = cs.EnableOverloadRetargeting != nil && *cs.EnableOverloadRetargeting
	if cs.Timeout != nil {
		c.exec.Timeout, c.exec.TimeoutSet = *cs.Timeout, true
	}
	return c, nil
}

func closeSink(s *logging.Sink) {
	if s != nil {
		s.Close()
	}
}

// loggingRequested tells whether the environment turns on any log
// component (MONGODB_LOG_ALL or MONGODB_LOG_<COMPONENT>); the path and the
// document length alone do not.
func loggingRequested(getenv func(string) string, environ []string) bool {
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "MONGODB_LOG_") || k == "MONGODB_LOG_PATH" || k == "MONGODB_LOG_MAX_DOCUMENT_LENGTH" {
			continue
		}
		if v != "" && getenv(k) != "" && !strings.EqualFold(v, "off") {
			return true
		}
	}
	return false
}

// topologyConfig turns the resolved options into the topology's settings,
// with the client's defaults.
func topologyConfig(cs *connstring.ConnString, s *conn.Settings, d *event.Dispatcher) topology.Config {
	cfg := topology.Config{
		Seeds:                  cs.Hosts,
		SetName:                cs.ReplicaSet,
		DirectConnection:       deref(cs.DirectConnection),
		LoadBalanced:           deref(cs.LoadBalanced),
		ConnConfig:             s.Config,
		Mode:                   topology.MonitoringMode(strings.ToLower(cs.ServerMonitoringMode)),
		ServerSelectionTimeout: DefaultServerSelectionTimeout,
		LocalThreshold:         DefaultLocalThreshold,
		Events:                 d,
	}
	if cs.HeartbeatFrequency != nil {
		cfg.HeartbeatFrequency = *cs.HeartbeatFrequency
	}
	if cs.ConnectTimeout != nil {
		// connectTimeoutMS=0 means no limit, for the monitors too; the
		// topology takes zero for its default.
		cfg.ConnectTimeout = *cs.ConnectTimeout
		if cfg.ConnectTimeout == 0 {
			cfg.ConnectTimeout = topology.NoTimeout
		}
	}
	if cs.ServerSelectionTimeout != nil {
		cfg.ServerSelectionTimeout = *cs.ServerSelectionTimeout
	}
	if cs.LocalThreshold != nil {
		// The topology takes zero for its default; a window of one
		// nanosecond is localThresholdMS=0: only the fastest servers.
		cfg.LocalThreshold = max(*cs.LocalThreshold, time.Nanosecond)
	}
	cfg.Pool.MaxPoolSize = DefaultMaxPoolSize
	if cs.MaxPoolSize != nil {
		cfg.Pool.MaxPoolSize = *cs.MaxPoolSize
	}
	cfg.Pool.MinPoolSize = deref(cs.MinPoolSize)
	cfg.Pool.MaxConnecting = deref(cs.MaxConnecting)
	cfg.Pool.MaxIdleTime = deref(cs.MaxIdleTime)
	cfg.Pool.WaitQueueTimeout = deref(cs.WaitQueueTimeout)
	return cfg
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// readPrefOf is the client's default read preference.
func readPrefOf(cs *connstring.ConnString) (selection.ReadPref, error) {
	return readPref(cs.ReadPreference, cs.ReadPreferenceTags, cs.MaxStaleness)
}

func readPref(mode string, tags []map[string]string, maxStaleness *time.Duration) (selection.ReadPref, error) {
	var rp selection.ReadPref
	if mode != "" {
		m, err := selection.ParseMode(mode)
		if err != nil {
			return rp, &OptionError{Option: "readPreference", Reason: err.Error(), Err: err}
		}
		rp.Mode = m
	}
	for _, t := range tags {
		rp.TagSets = append(rp.TagSets, selection.TagSet(t))
	}
	if maxStaleness != nil {
		d := *maxStaleness // a copy: the caller may reuse its variable
		rp.MaxStaleness = &d
	}
	// What does not depend on the deployment fails here, naming the
	// option, rather than at every selection.
	if err := rp.Validate(); err != nil {
		oe := &OptionError{Option: "readPreference", Field: "ReadPreference", Value: rp.String(), Reason: err.Error(), Err: err}
		var se *selection.Error
		if errors.As(err, &se) {
			oe.Reason = se.Reason
			switch se.Field {
			case "tagSets":
				oe.Option, oe.Field = "readPreferenceTags", "ReadPreferenceTags"
			case "maxStalenessSeconds":
				oe.Option, oe.Field, oe.Value = "maxStalenessSeconds", "MaxStaleness", rp.MaxStaleness.String()
			}
		}
		return rp, oe
	}
	return rp, nil
}

// Disconnect closes the client, in three steps:
//
//  1. New operations are refused at once with ErrClientDisconnected.
//  2. The operations already running are given until ctx is done to
//     finish. When ctx ends first, they are interrupted: their server
//     selection, connection checkout or network exchange stops, and each
//     fails promptly with an error for which errors.Is(err,
//     ErrClientDisconnected) holds. Disconnect then returns ctx's error
//     (as http.Server.Shutdown does), after finishing the close.
//  3. Every monitor, pool and connection is closed, publishing
//     ServerClosed and TopologyClosed, and once every goroutine the client
//     started has ended, the logging sink is closed: no operation and no
//     monitor publishes after that.
//
// Pass context.Background() to wait for the operations however long they
// take, or a context that is already canceled to interrupt them at once.
// Calling Disconnect again returns ErrClientDisconnected.
func (c *Client) Disconnect(ctx context.Context) error {
	c.mu.Lock()
	if c.disconnected {
		c.mu.Unlock()
		return ErrClientDisconnected
	}
	c.disconnected = true
	if c.inFlight == 0 {
		close(c.drained)
	}
	c.mu.Unlock()
	var err error
	select {
	case <-c.drained:
	default:
		select {
		case <-c.drained:
		case <-ctx.Done():
			// Every operation's context follows c.stop: canceling it
			// wakes each one wherever it waits.
			c.stopNow(ErrClientDisconnected)
			c.interruptOps()
			<-c.drained
			err = fmt.Errorf("driver: Disconnect interrupted the operations in progress: %w", context.Cause(ctx))
		}
	}
	c.stopNow(ErrClientDisconnected)
	c.endSessions()
	c.topo.Close()
	closeSink(c.sink)
	return err
}

// AppendMetadata adds a library's name, version and platform to the
// handshake metadata of the connections the client opens from now on (the
// handshake specification's appendMetadata, for a library that wraps a
// client it was given): each non-empty field is appended to the driver's
// after a '|'. Connections already open keep what they sent; none is
// opened or closed for this. Appending the same DriverInfo again changes
// nothing. A field that contains '|' is an *ArgumentError.
func (c *Client) AppendMetadata(info DriverInfo) error {
	if err := c.live(); err != nil {
		return err
	}
	if err := c.meta.AppendDriverInfo(handshake.DriverInfo{Name: info.Name, Version: info.Version, Platform: info.Platform}); err != nil {
		reason := err.Error()
		var he *handshake.Error
		if errors.As(err, &he) {
			reason = he.Reason
		}
		return &ArgumentError{Argument: "DriverInfo", Reason: reason, Err: err}
	}
	return nil
}

// endSessions tells the servers to forget the client's idle sessions
// (endSessions, as the driver-sessions specification asks of a closing
// client), when a server that could take it is known now: a down
// deployment does not hold up Disconnect.
func (c *Client) endSessions() {
	if c.sessions.Len() == 0 {
		return
	}
	td := c.topo.Description()
	known := false
	for _, s := range td.Servers {
		if s.Type.IsDataBearing() {
			known = true
			break
		}
	}
	if !known {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c.exec.EndSessions(ctx)
}

// baseConcerns reads the URI's read concern, write concern and read
// preference.
func baseConcerns(cs *connstring.ConnString, rp selection.ReadPref) (concerns, error) {
	var rc *ReadConcern
	if cs.ReadConcernLevel != "" {
		rc = &ReadConcern{Level: cs.ReadConcernLevel}
	}
	var wc *WriteConcern
	if cs.W != nil || cs.Journal != nil || cs.WTimeout != nil {
		wc = &WriteConcern{W: cs.W, Journal: cs.Journal}
		if cs.WTimeout != nil {
			wc.WTimeout = *cs.WTimeout
		}
	}
	c, err := concerns{wcAck: true, readPref: rp}.with("URI", rc, wc, nil)
	if err != nil {
		return c, &OptionError{Option: "w", Reason: err.Error(), Err: err}
	}
	return c, nil
}

// begin registers an operation: it fails once Disconnect has begun, and
// otherwise returns the operation's context, which Disconnect can
// interrupt, and the function that ends the operation.
func (c *Client) begin(ctx context.Context) (context.Context, func(), error) {
	opCtx, slot, err := c.beginOp(ctx)
	if err != nil {
		return nil, nil, err
	}
	return opCtx, func() { c.endOp(slot) }, nil
}

// beginOp is begin for a caller that ends the operation with
// endOp(slot) itself, without the closure.
func (c *Client) beginOp(ctx context.Context) (context.Context, int, error) {
	c.mu.Lock()
	if c.disconnected {
		c.mu.Unlock()
		return nil, 0, ErrClientDisconnected
	}
	c.inFlight++
	var e opEntry
	var opCtx context.Context
	opCtx, e.cancel = context.WithCancelCause(ctx)
	if ctx.Done() == nil {
		// Only Disconnect can end it: it wakes the connection itself.
		e.oc = &operation.OpContext{Context: opCtx}
		opCtx = e.oc
	}
	var slot int
	if n := len(c.freeOps); n > 0 {
		slot = c.freeOps[n-1]
		c.freeOps = c.freeOps[:n-1]
		c.ops[slot] = e
	} else {
		slot = len(c.ops)
		c.ops = append(c.ops, e)
	}
	c.mu.Unlock()
	return opCtx, slot, nil
}

// endOp ends the operation begun in slot.
func (c *Client) endOp(slot int) {
	c.mu.Lock()
	cancel := c.ops[slot].cancel
	c.ops[slot] = opEntry{}
	c.freeOps = append(c.freeOps, slot)
	c.inFlight--
	if c.inFlight == 0 && c.disconnected {
		close(c.drained)
	}
	c.mu.Unlock()
	cancel(nil)
}

// interruptOps cancels the context of every operation in flight, with
// ErrClientDisconnected as the cause, and wakes the connections of those
// that watch for it themselves (OpContext).
func (c *Client) interruptOps() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.ops {
		if e.cancel != nil {
			e.cancel(ErrClientDisconnected)
		}
		if e.oc != nil {
			e.oc.Interrupt()
		}
	}
}

// run runs op as one client operation and returns the driver's public
// errors.
func (c *Client) run(ctx context.Context, op *operation.Op) (bson.Raw, error) {
	r, err := c.execute(ctx, op)
	return r.Body, err
}

// execute runs op as one client operation (Disconnect waits for it, and
// interrupts it) and returns the driver's public errors.
func (c *Client) execute(ctx context.Context, op *operation.Op) (operation.Result, error) {
	if d, ok := operation.TimeoutOf(ctx); ok && d < 0 {
		return operation.Result{}, &ArgumentError{Argument: "timeoutMS", Reason: fmt.Sprintf("timeoutMS must not be negative, got %v", d)}
	}
	if err := c.withSession(ctx, op); err != nil {
		return operation.Result{}, err
	}
	opCtx, slot, err := c.beginOp(ctx)
	if err != nil {
		return operation.Result{}, err
	}
	defer c.endOp(slot)
	res, err := c.exec.Execute(opCtx, op)
	return res, c.publicError(ctx, opCtx, op.Name, err)
}

// publicError converts an operation's error; an operation that Disconnect
// interrupted fails with that as its reason rather than the I/O error it
// caused.
func (c *Client) publicError(ctx, opCtx context.Context, name string, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() == nil && errors.Is(context.Cause(opCtx), ErrClientDisconnected) {
		var oe *operation.Error
		addr := ""
		if errors.As(err, &oe) {
			addr = oe.Address
		}
		return &OperationError{Op: name, Address: addr, Err: errInterrupted}
	}
	return publicError(err)
}

// errInterrupted is the cause of an operation that Disconnect interrupted.
var errInterrupted = fmt.Errorf("interrupted: %w", ErrClientDisconnected)

// RunCommandOptions are the options of RunCommand.
type RunCommandOptions struct {
	// ReadPreference chooses the server: "primary" (the default, whatever
	// the client's read preference, as the specifications require for
	// runCommand), "primaryPreferred", "secondary", "secondaryPreferred"
	// or "nearest".
	ReadPreference string
	// ReadPreferenceTags are tag sets tried in order; not allowed with
	// mode primary.
	ReadPreferenceTags []map[string]string
	// MaxStaleness (maxStalenessSeconds) excludes secondaries staler than
	// this: a whole number of seconds, at least 90s (and at least
	// heartbeatFrequencyMS + 10s) on a replica set. nil or a negative value
	// means no maximum; 0 is refused, as the max-staleness specification
	// requires. Not allowed with mode primary.
	MaxStaleness *time.Duration
}

// RunCommand runs cmd, a document whose first key names the command, on
// database db, and returns the reply. cmd is a bson.D, a bson.Raw, a
// struct, or a map with a single key: the order of a map's keys is
// random, so a command with options must be a bson.D (or a struct), and a
// map with more than one key is refused. The command must not contain
// "$db".
//
// Without a ReadPreference the command goes to the primary (the
// specifications require it for runCommand, whatever the client's read
// preference).
//
// A mistake in the arguments is an *ArgumentError, returned before
// anything is sent. A refusal by the server is an *OperationError whose
// cause errors.As turns into a *CommandError; RunCommand then returns the
// server's reply too, and for a write concern error the reply of the
// applied write. Any other failure returns an empty document, never nil,
// as the reply.
func (c *Client) RunCommand(ctx context.Context, db string, cmd any, opts ...*RunCommandOptions) (bson.Raw, error) {
	if err := c.live(); err != nil {
		return emptyDoc, err
	}
	if db == "" {
		return emptyDoc, &ArgumentError{Argument: "db", Reason: "the database name is empty"}
	}
	raw, err := marshalCommand(cmd)
	if err != nil {
		return emptyDoc, err
	}
	name := ""
	if it := raw.Iter(); it.Next() {
		name = it.Key()
	}
	sel := selection.Read(selection.ReadPref{Mode: selection.Primary})
	if writeCommands[name] {
		// The same servers as a primary read, described as what it is.
		sel = selection.Write()
	}
	for _, o := range opts {
		if o == nil {
			continue
		}
		rp, err := readPref(o.ReadPreference, o.ReadPreferenceTags, o.MaxStaleness)
		if err != nil {
			var oe *OptionError
			if errors.As(err, &oe) {
				// Named by the RunCommandOptions field at fault.
				field := oe.Field
				if field == "" {
					field = "ReadPreference"
				}
				return emptyDoc, &ArgumentError{Argument: field, Reason: oe.Reason, Err: oe.Err}
			}
			return emptyDoc, err
		}
		sel = selection.Read(rp)
	}
	body, err := c.run(ctx, &operation.Op{Name: name, DB: db, Command: raw, Selector: sel, KeepMaxTime: true, Kind: operation.KindCommand, Generic: true})
	if len(body) == 0 {
		body = emptyDoc
		var ce *CommandError
		if errors.As(err, &ce) && len(ce.Raw) > 0 {
			body = ce.Raw
		}
	}
	return body, err
}

// writeCommands are the commands RunCommand describes as writes in its
// selection events and errors; they select the same servers as a primary
// read.
var writeCommands = map[string]bool{
	"insert": true, "update": true, "delete": true, "findAndModify": true,
	"create": true, "drop": true, "createIndexes": true, "dropIndexes": true,
	"dropDatabase": true, "renameCollection": true, "collMod": true,
}

// emptyDoc is the reply of a RunCommand that got none: a valid, empty
// document, which prints as {}.
var emptyDoc = bson.Raw{5, 0, 0, 0, 0}

// Ping runs the ping command on the admin database with the client's read
// preference: it succeeds once a suitable server answers.
func (c *Client) Ping(ctx context.Context) error {
	if err := c.live(); err != nil {
		return err
	}
	_, err := c.run(ctx, &operation.Op{Name: "ping", DB: "admin", Command: pingCommand, Selector: selection.Read(c.readPref), Generic: true})
	return err
}

var pingCommand = func() bson.Raw {
	st, b := bson.AppendDocumentStart(nil)
	b = bson.AppendInt32Element(b, "ping", 1)
	b, _ = bson.AppendDocumentEnd(b, st)
	return b
}()

func (c *Client) live() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.disconnected {
		return ErrClientDisconnected
	}
	return nil
}

// marshalCommand encodes cmd and checks it is a usable command document.
func marshalCommand(cmd any) (bson.Raw, error) {
	bad := func(reason string, err error) (bson.Raw, error) {
		return nil, &ArgumentError{Argument: "cmd", Reason: reason, Err: err}
	}
	var raw bson.Raw
	switch v := cmd.(type) {
	case nil:
		return bad("the command is nil", nil)
	case bson.Raw:
		raw = v
	default:
		rv := reflect.ValueOf(cmd)
		if rv.Kind() == reflect.Pointer && !rv.IsNil() {
			rv = rv.Elem()
		}
		if rv.Kind() == reflect.Map && rv.Len() > 1 {
			// Go visits a map's keys in random order, and the command's
			// name must come first: the server would take an option for
			// the command now and then.
			return bad(fmt.Sprintf("a %T with %d keys has no key order; the command name must come first: use bson.D", cmd, rv.Len()), nil)
		}
		b, err := bson.Marshal(cmd)
		if err != nil {
			return bad(err.Error(), err)
		}
		raw = b
	}
	if err := raw.Validate(); err != nil {
		return bad(err.Error(), err)
	}
	it := raw.Iter()
	if !it.Next() {
		return bad("the command document is empty", nil)
	}
	if _, err := raw.LookupErr("$db"); err == nil {
		return bad(`the command holds "$db"; pass the database as db`, nil)
	}
	return raw, nil
}

// ServerSnapshot is one server as the client sees it now.
type ServerSnapshot struct {
	Address string
	// Kind is the server type: "Standalone", "Mongos", "RSPrimary",
	// "RSSecondary", "RSArbiter", "RSOther", "RSGhost", "LoadBalancer" or
	// "Unknown".
	Kind    string
	SetName string
	Tags    map[string]string
	// RoundTripTime is the average RTT; MinRoundTripTime the minimum of
	// the last ten samples (zero until there are two).
	RoundTripTime    time.Duration
	MinRoundTripTime time.Duration
	LastUpdate       time.Time
	// Error is why the server is Unknown, when it is.
	Error error
	// OperationCount is the number of operations in progress on it.
	OperationCount int64
	Pool           PoolStats
}

// TopologySnapshot is the client's view of the deployment at one moment,
// for people and tools; nothing in it changes afterwards.
type TopologySnapshot struct {
	// Kind is "Single", "ReplicaSetNoPrimary", "ReplicaSetWithPrimary",
	// "Sharded", "LoadBalanced" or "Unknown".
	Kind    string
	SetName string
	Servers []ServerSnapshot // sorted by address
	// Streaming tells whether the monitors use the streaming protocol.
	Streaming bool
	// CompatibilityError is set when a server's wire versions do not
	// overlap the driver's.
	CompatibilityError error
}

// PoolStats is a snapshot of one server's connection pool, in the manner
// of database/sql.DBStats.
type PoolStats struct {
	State string // "paused", "ready" or "closed"
	Max   int    // maxPoolSize; 0 means no limit
	Total int    // open connections: idle, in use and being established
	Idle  int
	InUse int
	// InUseByCursors and InUseByTransactions are the checked-out
	// connections pinned to cursors and to transactions (load-balanced
	// mode); the rest of InUse serve single operations.
	InUseByCursors      int
	InUseByTransactions int
	PendingConnections  int   // being established
	WaitCount           int   // checkouts waiting now
	Waited              int64 // checkouts that had to wait, since the pool was created
	WaitDuration        time.Duration
	CreatedTotal        int64
	ClosedTotal         int64
	Generation          uint64 // incremented by each clear
}

// Topology returns a snapshot of the deployment: every server's
// description and pool.
func (c *Client) Topology() TopologySnapshot {
	td := c.topo.Description()
	out := TopologySnapshot{Kind: td.Type.String(), SetName: td.SetName, Streaming: c.topo.Streaming(), CompatibilityError: td.CompatibilityErr}
	for _, sd := range td.Servers {
		s := ServerSnapshot{
			Address: sd.Address, Kind: sd.Type.String(), SetName: sd.SetName, Tags: sd.Tags,
			RoundTripTime: sd.RoundTripTime, MinRoundTripTime: sd.MinRoundTripTime,
			LastUpdate: sd.LastUpdateTime, Error: publicError(sd.Error),
		}
		if srv, ok := c.topo.Server(sd.Address); ok {
			s.OperationCount = srv.OperationCount()
			st := srv.Pool().Stats()
			s.Pool = PoolStats(st)
		}
		out.Servers = append(out.Servers, s)
	}
	sort.Slice(out.Servers, func(i, j int) bool { return out.Servers[i].Address < out.Servers[j].Address })
	return out
}

// String renders the snapshot for people: a first line with the
// topology's kind, set name and monitoring mode, then one line per server
// (see ServerSnapshot.String), indented. For example:
//
//	ReplicaSetWithPrimary "rs0", streaming, 2 servers
//	  db1:27017 RSPrimary "rs0", rtt 1.23ms (min 901µs), 1 operation, pool ready: 3 open (1 in use, 2 idle) of 100
//	  db2:27017 Unknown, error: network error on connection 7: dial: connection refused, 0 operations, pool paused: 0 open (0 in use, 0 idle)
func (t TopologySnapshot) String() string {
	var b strings.Builder
	b.WriteString(t.Kind)
	if t.SetName != "" {
		b.WriteString(" ")
		b.WriteString(strconv.Quote(t.SetName))
	}
	if t.Streaming {
		b.WriteString(", streaming")
	} else {
		b.WriteString(", polling")
	}
	switch len(t.Servers) {
	case 1:
		b.WriteString(", 1 server")
	default:
		fmt.Fprintf(&b, ", %d servers", len(t.Servers))
	}
	if t.CompatibilityError != nil {
		b.WriteString(", incompatible: ")
		b.WriteString(t.CompatibilityError.Error())
	}
	for _, s := range t.Servers {
		b.WriteString("\n  ")
		b.WriteString(s.String())
	}
	return b.String()
}

// String renders the server on one line: address, kind, set name and
// tags when it has them, round-trip times, operations in progress and the
// pool, or the error that made it Unknown.
func (s ServerSnapshot) String() string {
	var b strings.Builder
	b.WriteString(s.Address)
	b.WriteString(" ")
	b.WriteString(s.Kind)
	if s.SetName != "" {
		b.WriteString(" ")
		b.WriteString(strconv.Quote(s.SetName))
	}
	if len(s.Tags) > 0 {
		keys := make([]string, 0, len(s.Tags))
		for k := range s.Tags {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString(" {")
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s: %q", k, s.Tags[k])
		}
		b.WriteString("}")
	}
	if s.Error != nil {
		b.WriteString(", error: ")
		b.WriteString(s.Error.Error())
	}
	if s.RoundTripTime > 0 {
		fmt.Fprintf(&b, ", rtt %s", roundDuration(s.RoundTripTime))
		if s.MinRoundTripTime > 0 {
			fmt.Fprintf(&b, " (min %s)", roundDuration(s.MinRoundTripTime))
		}
	}
	if s.OperationCount == 1 {
		b.WriteString(", 1 operation")
	} else {
		fmt.Fprintf(&b, ", %d operations", s.OperationCount)
	}
	p := s.Pool
	if p.State != "" {
		fmt.Fprintf(&b, ", pool %s: %d open (%d in use, %d idle", p.State, p.Total, p.InUse, p.Idle)
		if p.PendingConnections > 0 {
			fmt.Fprintf(&b, ", %d pending", p.PendingConnections)
		}
		b.WriteString(")")
		if p.Max > 0 {
			fmt.Fprintf(&b, " of %d", p.Max)
		}
		if p.WaitCount > 0 {
			fmt.Fprintf(&b, ", %d waiting", p.WaitCount)
		}
	}
	return b.String()
}

// roundDuration keeps three significant figures or so: 1.234ms, 12.3ms,
// 150µs.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= 10*time.Millisecond:
		return d.Round(100 * time.Microsecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	default:
		return d.Round(time.Microsecond)
	}
}
