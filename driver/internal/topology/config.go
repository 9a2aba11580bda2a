package topology

import (
	"os"
	"strings"
	"time"

	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/conn"
)

// Defaults for Config fields left zero.
const (
	DefaultHeartbeatFrequency    = 10 * time.Second
	DefaultMinHeartbeatFrequency = 500 * time.Millisecond
)

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
	// Seeds, SetName, DirectConnection, LoadBalanced and SRV are the
	// initial topology settings (see description.Settings).
	Seeds            []string
	SetName          string
	DirectConnection bool
	LoadBalanced     bool
	SRV              bool

	// ConnConfig returns the configuration of a connection to one server
	// address, for monitors and pools alike (conn.Settings.Config is one).
	// It is required.
	ConnConfig func(address string) conn.Config

	// HeartbeatFrequency is heartbeatFrequencyMS; 0 means
	// DefaultHeartbeatFrequency. MinHeartbeatFrequency is the smallest
	// time between two checks of one server; 0 means
	// DefaultMinHeartbeatFrequency.
	HeartbeatFrequency    time.Duration
	MinHeartbeatFrequency time.Duration
	// ConnectTimeout bounds establishing a monitoring connection and each
	// non-awaited check (connectTimeoutMS, the monitors' socket timeout);
	// 0 means conn.DefaultConnectTimeout.
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
	// Pool events of a clear or a ready pool are sent while the topology
	// is locked (the specification ties them to the description update),
	// so a monitor must not call back into the Topology synchronously.
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
	if c.ConnectTimeout < 0 {
		return c, &ConfigError{Field: "ConnectTimeout", Reason: "must not be negative"}
	}
	if c.HeartbeatFrequency == 0 {
		c.HeartbeatFrequency = DefaultHeartbeatFrequency
	}
	if c.MinHeartbeatFrequency == 0 {
		c.MinHeartbeatFrequency = DefaultMinHeartbeatFrequency
	}
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = conn.DefaultConnectTimeout
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
