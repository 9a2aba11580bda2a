package topology

import (
	"os"
	"strings"
	"time"

	"github.com/mongoscope/mongoscope/driver/connstring"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/conn"
)

// Defaults for Config fields left zero.
const (
	DefaultHeartbeatFrequency    = 10 * time.Second
	DefaultMinHeartbeatFrequency = 500 * time.Millisecond
	// DefaultRescanSRVInterval is rescanSRVIntervalMS when the resolver
	// gives no TTLs, as *net.Resolver does not: the Polling SRV Records
	// specification then requires a rescan every 60 seconds.
	DefaultRescanSRVInterval = 60 * time.Second
	// DefaultSRVServiceName is srvServiceName's default.
	DefaultSRVServiceName = "mongodb"
)

// NoTimeout as Config.ConnectTimeout is connectTimeoutMS=0: the monitors'
// connections and checks have no time limit.
const NoTimeout time.Duration = -1

// monitorTimeout is the connect timeout of the monitors; 0 means none.
func (c Config) monitorTimeout() time.Duration {
	return max(c.ConnectTimeout, 0)
}

// awaitTimeout bounds the wait for one awaited hello reply:
// connectTimeoutMS + heartbeatFrequencyMS, or none when connectTimeoutMS
// is 0 (Server Monitoring, "Socket timeout").
func (c Config) awaitTimeout() time.Duration {
	if c.ConnectTimeout <= 0 {
		return 0
	}
	return c.ConnectTimeout + c.HeartbeatFrequency
}

// lookupTimeout bounds one SRV rescan.
func (c Config) lookupTimeout() time.Duration {
	if c.ConnectTimeout <= 0 {
		return conn.DefaultConnectTimeout
	}
	return c.ConnectTimeout
}

// MonitoringMode is serverMonitoringMode: how monitors learn of changes.
type MonitoringMode string

// The serverMonitoringMode values of the Server Monitoring specification.
const (
	// ModeAuto streams unless the process runs in a FaaS environment.
	ModeAuto MonitoringMode = "auto"
	// ModeStream uses the awaitable hello with exhaust where the server
	// supports it, with a separate RTT monitor.
	ModeStream MonitoringMode = "stream"
	// ModePoll sends one hello every heartbeatFrequency.
	ModePoll MonitoringMode = "poll"
)

// PoolOptions are the CMAP settings every server's pool gets.
type PoolOptions struct {
	MinPoolSize      int
	MaxPoolSize      int
	MaxConnecting    int
	MaxIdleTime      time.Duration
	WaitQueueTimeout time.Duration
	// MaintainInterval is pool.Config.MaintainInterval.
	MaintainInterval time.Duration
}

// Config describes a Topology.
type Config struct {
	// Seeds, SetName, DirectConnection and LoadBalanced are the initial
	// topology settings (see description.Settings).
	Seeds            []string
	SetName          string
	DirectConnection bool
	LoadBalanced     bool

	// SRVHost is the host name of a mongodb+srv URI, without a port; ""
	// means the seeds did not come from SRV records. With it, Seeds are
	// the hosts the initial lookup chose (after srvMaxHosts) and, unless
	// the topology is load-balanced or starts as a replica set (SetName),
	// a goroutine rescans the SRV records while the topology is Unknown
	// or Sharded (Polling SRV Records for Mongos Discovery).
	SRVHost string
	// SRVServiceName is srvServiceName; "" means DefaultSRVServiceName.
	SRVServiceName string
	// SRVMaxHosts is srvMaxHosts: at most this many hosts after a rescan;
	// 0 means no limit.
	SRVMaxHosts int
	// Resolver answers the rescans' SRV queries; nil means
	// net.DefaultResolver.
	Resolver connstring.Resolver
	// RescanSRVInterval is rescanSRVIntervalMS; 0 means
	// DefaultRescanSRVInterval. Resolvers do not expose TTLs, so the
	// interval is fixed; tests shorten it. After a rescan that found no
	// usable record the next one waits HeartbeatFrequency instead, as the
	// specification requires.
	RescanSRVInterval time.Duration
	// OnSRVPollError, when set, receives what the specification says to
	// log: a rescan that left the host list unchanged (a DNS error, no
	// usable records) and each record a rescan skipped, as *SRVPollError.
	// It runs on the polling goroutine and must not call into the
	// Topology.
	OnSRVPollError func(error)
	// OnLastServerRemoved, when set, is told of each update of the
	// topology description that removed its last server, which the SDAM
	// specification says a client SHOULD warn about; closing the topology
	// is no such update. It runs after the update's events are published,
	// in their order, and must not call into the Topology.
	OnLastServerRemoved func(LastServerRemoved)

	// ConnConfig returns the configuration of a connection to one server
	// address, for monitors and pools alike (conn.Settings.Config is one).
	// It is required.
	ConnConfig func(address string) conn.Config
	// Spin is given to the pools' connections (conn.Config.Spin), never
	// to monitors'; nil turns polling for replies off.
	Spin *conn.Spinner

	// HeartbeatFrequency is heartbeatFrequencyMS; 0 means
	// DefaultHeartbeatFrequency. MinHeartbeatFrequency is the smallest
	// time between two checks of one server; 0 means
	// DefaultMinHeartbeatFrequency.
	HeartbeatFrequency    time.Duration
	MinHeartbeatFrequency time.Duration
	// ConnectTimeout is connectTimeoutMS as the monitors use it: it
	// bounds establishing a monitoring or RTT connection and each
	// non-awaited check, and with HeartbeatFrequency added, each awaited
	// reply. Monitors never use the connections' socketTimeoutMS (nor
	// timeoutMS), whatever ConnConfig says. 0 means
	// conn.DefaultConnectTimeout; NoTimeout (any negative value) is
	// connectTimeoutMS=0: no limit at all, awaited replies included. SRV
	// rescans are bounded by ConnectTimeout too, or by
	// conn.DefaultConnectTimeout under NoTimeout, since a DNS query
	// without any bound could stall polling forever.
	ConnectTimeout time.Duration
	// Mode is serverMonitoringMode; "" means ModeAuto.
	Mode MonitoringMode
	// Getenv reads the environment for FaaS detection; nil means os.Getenv.
	Getenv func(string) string

	// ServerSelectionTimeout and LocalThreshold go to selection.Options;
	// zero means the selection package's defaults.
	ServerSelectionTimeout time.Duration
	LocalThreshold         time.Duration

	Pool PoolOptions
	// Events receives SDAM, heartbeat and CMAP events; nil sends none.
	// A monitor may call the Topology's readers (Description, Server,
	// Current, OperationCount, RequestImmediateCheck) from any event: they
	// take no lock. It must not update the Topology (HandleError, or an
	// operation that may dial, fail or wait for a change) synchronously
	// from a topology event or from PoolReady and PoolCleared: those are
	// sent while the topology holds the locks that order its updates and
	// their events (see the package documentation).
	Events *event.Dispatcher
}

// ConfigError reports a Config field that cannot be used.
type ConfigError struct {
	Field  string
	Reason string
}

// Error names the field and the reason.
func (e *ConfigError) Error() string {
	return "topology: invalid " + e.Field + ": " + e.Reason
}

// withDefaults checks c and fills in the defaults.
func (c Config) withDefaults() (Config, error) {
	if c.ConnConfig == nil {
		return c, &ConfigError{Field: "ConnConfig", Reason: "is required"}
	}
	if c.HeartbeatFrequency < 0 {
		return c, &ConfigError{Field: "HeartbeatFrequency", Reason: "must not be negative"}
	}
	if c.MinHeartbeatFrequency < 0 {
		return c, &ConfigError{Field: "MinHeartbeatFrequency", Reason: "must not be negative"}
	}
	if err := c.checkSRV(); err != nil {
		return c, err
	}
	if c.SRVServiceName == "" {
		c.SRVServiceName = DefaultSRVServiceName
	}
	if c.RescanSRVInterval == 0 {
		c.RescanSRVInterval = DefaultRescanSRVInterval
	}
	if c.HeartbeatFrequency == 0 {
		c.HeartbeatFrequency = DefaultHeartbeatFrequency
	}
	if c.MinHeartbeatFrequency == 0 {
		c.MinHeartbeatFrequency = DefaultMinHeartbeatFrequency
	}
	switch {
	case c.ConnectTimeout == 0:
		c.ConnectTimeout = conn.DefaultConnectTimeout
	case c.ConnectTimeout < 0:
		c.ConnectTimeout = NoTimeout
	}
	if c.Getenv == nil {
		c.Getenv = os.Getenv
	}
	switch c.Mode {
	case "":
		c.Mode = ModeAuto
	case ModeAuto, ModeStream, ModePoll:
	default:
		return c, &ConfigError{Field: "Mode", Reason: "must be auto, stream or poll, not " + quote(string(c.Mode))}
	}
	return c, nil
}

// checkSRV checks the SRV polling settings: the options the URI Options
// specification allows only with mongodb+srv, and its conflicts.
func (c Config) checkSRV() error {
	switch {
	case c.RescanSRVInterval < 0:
		return &ConfigError{Field: "RescanSRVInterval", Reason: "must not be negative"}
	case c.SRVMaxHosts < 0:
		return &ConfigError{Field: "SRVMaxHosts", Reason: "must not be negative"}
	case c.SRVHost == "" && c.SRVServiceName != "":
		return &ConfigError{Field: "SRVServiceName", Reason: "requires SRVHost (a mongodb+srv URI)"}
	case c.SRVHost == "" && c.SRVMaxHosts != 0:
		return &ConfigError{Field: "SRVMaxHosts", Reason: "requires SRVHost (a mongodb+srv URI)"}
	case c.SRVMaxHosts > 0 && c.LoadBalanced:
		return &ConfigError{Field: "SRVMaxHosts", Reason: "cannot be used with load-balanced mode"}
	case c.SRVMaxHosts > 0 && c.SetName != "":
		return &ConfigError{Field: "SRVMaxHosts", Reason: "cannot be used with a replica set name"}
	case strings.ContainsAny(c.SRVHost, ":/"):
		return &ConfigError{Field: "SRVHost", Reason: "must be a host name without a port, not " + quote(c.SRVHost)}
	}
	return nil
}

// streaming resolves serverMonitoringMode: auto streams except in a FaaS
// environment, where a frozen process would leave a stream hanging.
func (c Config) streaming() bool {
	switch c.Mode {
	case ModeStream:
		return true
	case ModePoll:
		return false
	}
	return !InFaaS(c.Getenv)
}

// InFaaS reports whether the environment variables the handshake
// specification uses for FaaS detection name a function-as-a-service
// platform (AWS Lambda, Azure Functions, Google Cloud Functions, Vercel).
// getenv nil means os.Getenv.
func InFaaS(getenv func(string) string) bool {
	if getenv == nil {
		getenv = os.Getenv
	}
	if strings.HasPrefix(getenv("AWS_EXECUTION_ENV"), "AWS_Lambda_") || getenv("AWS_LAMBDA_RUNTIME_API") != "" {
		return true
	}
	for _, v := range []string{"FUNCTIONS_WORKER_RUNTIME", "K_SERVICE", "FUNCTION_NAME", "VERCEL"} {
		if getenv(v) != "" {
			return true
		}
	}
	return false
}

func quote(s string) string {
	if len(s) > 32 {
		s = s[:32] + "..."
	}
	return "\"" + s + "\""
}
