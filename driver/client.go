package driver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/connstring"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/conn"
	"github.com/mongoscope/mongoscope/driver/internal/operation"
	"github.com/mongoscope/mongoscope/driver/internal/selection"
	"github.com/mongoscope/mongoscope/driver/internal/topology"
	"github.com/mongoscope/mongoscope/driver/logging"
)

// Defaults the client applies where the specifications leave them to the
// driver.
const (
	DefaultServerSelectionTimeout = 30 * time.Second
	DefaultLocalThreshold         = 15 * time.Millisecond
	DefaultMaxPoolSize            = 100
)

// ErrClientDisconnected is returned by the methods of a Client after
// Disconnect.
var ErrClientDisconnected = errors.New("driver: client is disconnected")

// Client is a connection to a MongoDB deployment: one monitor and one
// connection pool per server, kept current by SDAM. It is safe for
// concurrent use; make one per deployment and share it.
type Client struct {
	topo     *topology.Topology
	exec     *operation.Executor
	sink     *logging.Sink // the logging sink Connect made, closed by Disconnect
	readPref selection.ReadPref

	mu           sync.Mutex
	disconnected bool
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
	cs, err := opts.Resolve(ctx)
	if err != nil {
		return nil, err
	}
	settings, err := conn.NewSettings(cs, conn.Extra{})
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
	c := &Client{topo: topo, sink: sink, readPref: rp, exec: &operation.Executor{Topology: topo, Events: d}}
	if cs.Timeout != nil {
		c.exec.Timeout = *cs.Timeout
		c.exec.ServerSelectionTimeout = cfg.ServerSelectionTimeout
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
		cfg.ConnectTimeout = *cs.ConnectTimeout
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
		rp.MaxStaleness = *maxStaleness
	}
	return rp, nil
}

// Disconnect stops every monitor and closes every pool and connection,
// publishing ServerClosed and TopologyClosed; it returns once every
// goroutine the client started has ended. Operations still running fail.
// Calling it again returns ErrClientDisconnected. ctx is accepted for
// symmetry with Connect: closing does not wait on the network.
func (c *Client) Disconnect(ctx context.Context) error {
	c.mu.Lock()
	if c.disconnected {
		c.mu.Unlock()
		return ErrClientDisconnected
	}
	c.disconnected = true
	c.mu.Unlock()
	c.topo.Close()
	closeSink(c.sink)
	return nil
}

// RunCommandOptions are the options of RunCommand.
type RunCommandOptions struct {
	// ReadPreference chooses the server: "primary" (the default, whatever
	// the client's read preference, as the specifications require for
	// runCommand), "primaryPreferred", "secondary", "secondaryPreferred"
	// or "nearest".
	ReadPreference string
	// ReadPreferenceTags and MaxStaleness go with ReadPreference.
	ReadPreferenceTags []map[string]string
	MaxStaleness       *time.Duration
}

// RunCommand runs cmd, a document (bson.D, bson.Raw, a map or a struct)
// whose first key names the command, on database db, and returns the
// reply. The command must not contain "$db". A refusal by the server comes
// back as an error that errors.As turns into a *CommandError.
func (c *Client) RunCommand(ctx context.Context, db string, cmd any, opts ...*RunCommandOptions) (bson.Raw, error) {
	if err := c.live(); err != nil {
		return nil, err
	}
	if db == "" {
		return nil, &OptionError{Option: "db", Reason: "the database name is empty"}
	}
	raw, err := marshalCommand(cmd)
	if err != nil {
		return nil, err
	}
	sel := selection.Read(selection.ReadPref{Mode: selection.Primary})
	for _, o := range opts {
		if o == nil {
			continue
		}
		rp, err := readPref(o.ReadPreference, o.ReadPreferenceTags, o.MaxStaleness)
		if err != nil {
			return nil, err
		}
		sel = selection.Read(rp)
	}
	name := ""
	if it := raw.Iter(); it.Next() {
		name = it.Key()
	}
	return c.exec.Run(ctx, &operation.Op{Name: name, DB: db, Command: raw, Selector: sel})
}

// Ping runs the ping command on the admin database with the client's read
// preference: it succeeds once a suitable server answers.
func (c *Client) Ping(ctx context.Context) error {
	if err := c.live(); err != nil {
		return err
	}
	_, err := c.exec.Run(ctx, &operation.Op{Name: "ping", DB: "admin", Command: pingCommand, Selector: selection.Read(c.readPref)})
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
	var raw bson.Raw
	switch v := cmd.(type) {
	case nil:
		return nil, &OptionError{Option: "cmd", Reason: "the command is nil"}
	case bson.Raw:
		raw = v
	default:
		b, err := bson.Marshal(cmd)
		if err != nil {
			return nil, &OptionError{Option: "cmd", Reason: err.Error(), Err: err}
		}
		raw = b
	}
	if err := raw.Validate(); err != nil {
		return nil, &OptionError{Option: "cmd", Reason: err.Error(), Err: err}
	}
	it := raw.Iter()
	if !it.Next() {
		return nil, &OptionError{Option: "cmd", Reason: "the command document is empty"}
	}
	if _, err := raw.LookupErr("$db"); err == nil {
		return nil, &OptionError{Option: "cmd", Reason: `the command holds "$db"; pass the database as db`}
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
	State              string // "paused", "ready" or "closed"
	Max                int    // maxPoolSize; 0 means no limit
	Total              int    // open connections: idle, in use and being established
	Idle               int
	InUse              int
	PendingConnections int   // being established
	WaitCount          int   // checkouts waiting now
	Waited             int64 // checkouts that had to wait, since the pool was created
	WaitDuration       time.Duration
	CreatedTotal       int64
	ClosedTotal        int64
	Generation         uint64 // incremented by each clear
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
			LastUpdate: sd.LastUpdateTime, Error: sd.Error,
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
