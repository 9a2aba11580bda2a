// Package config reads mongoprobe's command line, environment and YAML
// configuration file into the probe engine's per-cluster settings and the
// command's global settings.
//
// Sources, in order of precedence:
//
//   - the --uri flag, else the MONGOPROBE_URI environment variable: one
//     cluster, named by --cluster.name ("default"), with the default
//     settings;
//   - --config.file: a YAML file listing several clusters (see the package's
//     Example below and Usage);
//   - neither: demo mode (an in-process simulated replica set), as --demo
//     forces.
//
// A URI (flag or environment) together with --config.file is an error:
// mongoprobe refuses to guess which one the operator meant, and a stray
// MONGOPROBE_URI left in a container's environment must not silently add a
// cluster to a file's list. Put the cluster in the file instead.
//
// A probe timeout longer than a scheduled cluster's interval is allowed (the rounds
// of a scheduled cluster never overlap: the next one waits) but is reported
// in Config.Warnings, which the command logs at WARN.
//
// Every error is a *Error naming the flag, environment variable or YAML
// path at fault. No error ever contains a URI's password: the driver's
// ApplyURI errors redact it, and this package never echoes a URI, nor a YAML
// value (the YAML parser's messages are stripped of the values they quote).
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/mongoscope/mongoscope/cmd/mongoprobe/internal/probe"
	"github.com/mongoscope/mongoscope/driver"
)

// The defaults of a cluster's settings.
const (
	DefaultInterval     = 5 * time.Second
	DefaultPingTimeout  = 1 * time.Second
	DefaultReadTimeout  = 2 * time.Second
	DefaultWriteTimeout = 5 * time.Second
	DefaultDatabase     = "mongoprobe"
	DefaultCollection   = "canary"
	DefaultCanaryKeys   = 8
	MaxCanaryKeys       = 1000
	DefaultClusterName  = "default"

	DefaultListenAddress     = "127.0.0.1:9417"
	DefaultDemoFaultInterval = 30 * time.Second
)

// The environment variables mongoprobe reads itself (the OTEL_* ones are
// read by the OpenTelemetry SDK).
const (
	EnvURI = "MONGOPROBE_URI"
)

// The commands.
const (
	CommandRun   = "run"
	CommandCheck = "check"
)

// Config is the command's whole configuration.
type Config struct {
	// Command is CommandRun (the default), CommandCheck or CommandDrill.
	Command string
	// Help and Version are set by --help and --version; the rest of the
	// configuration is then not checked.
	Help, Version bool

	ListenAddress string
	ListenRemote  bool
	LogLevel      slog.Level
	// LogFormat is "auto", "console", "logfmt" or "json".
	LogFormat string

	// Demo is set by --demo, or when neither a URI nor a configuration
	// file is given; Clusters is then empty (the demo makes its own).
	Demo              bool
	DemoFaultInterval time.Duration

	// ConfigFile is --config.file, "" when none.
	ConfigFile string
	// Clusters are the clusters to probe, in the configuration's order.
	Clusters []probe.Settings
	// Warnings are dubious but accepted settings, to be logged.
	Warnings []string
	// Drill is the drill command's settings (drill.go).
	Drill Drill
	// Timeouts is check --timeouts (see TimeoutCheck).
	Timeouts TimeoutCheck
}

// Error is an invalid setting.
type Error struct {
	// Setting is the flag ("--web.listen-address"), environment variable
	// ("MONGOPROBE_URI") or YAML path ("clusters[1].timeouts.read") at
	// fault.
	Setting string
	// File and Line locate a YAML setting, when known (Line 0: unknown).
	File string
	Line int
	Err  error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("invalid setting ")
	b.WriteString(e.Setting)
	if e.File != "" {
		b.WriteString(" (")
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ", line %d", e.Line)
		}
		b.WriteString(")")
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

func errorf(setting, format string, args ...any) *Error {
	return &Error{Setting: setting, Err: fmt.Errorf(format, args...)}
}

// ErrHelp is returned by Parse for --help (flag.ErrHelp).
var ErrHelp = flag.ErrHelp

type flags struct {
	fs                                      *flag.FlagSet
	listen                                  string
	remote, demo, version                   bool
	logLevel, logFormat, uri, file, cluster string
	faultInterval                           time.Duration
	drill                                   drillFlags
	timeouts                                timeoutFlags
}

func newFlags() *flags {
	f := &flags{fs: flag.NewFlagSet("mongoprobe", flag.ContinueOnError)}
	fs := f.fs
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.listen, "web.listen-address", DefaultListenAddress, "`address` to serve /metrics, /probe and the health endpoints on; a non-loopback address needs --web.listen-remote")
	fs.BoolVar(&f.remote, "web.listen-remote", false, "allow --web.listen-address to be a non-loopback address (\":9417\", \"0.0.0.0:9417\", a LAN IP): the endpoints have no authentication")
	fs.StringVar(&f.file, "config.file", "", "YAML configuration `file` listing the clusters to probe")
	fs.StringVar(&f.uri, "uri", "", "the MongoDB connection `string` of the one cluster to probe (overrides "+EnvURI+")")
	fs.StringVar(&f.cluster, "cluster.name", DefaultClusterName, "the cluster label (`name`) of the cluster given by --uri or "+EnvURI)
	fs.StringVar(&f.logLevel, "log.level", "info", "lowest `level` logged: debug, info, warn or error")
	fs.StringVar(&f.logFormat, "log.format", "auto", "log `format`: auto (console on a terminal, json otherwise), console, logfmt or json")
	fs.BoolVar(&f.demo, "demo", false, "probe an in-process simulated replica set that fails over now and then (the default with no URI and no configuration file)")
	fs.DurationVar(&f.faultInterval, "demo.fault-interval", DefaultDemoFaultInterval, "demo mode: `duration` between two injected faults (the first comes after the smaller of this and 20s)")
	fs.BoolVar(&f.version, "version", false, "print the version and exit")
	f.drill.register(fs)
	f.addTimeoutFlags()
	return f
}

// Parse reads the command line args (without the program's name) and the
// environment through getenv, and reads the configuration file if one is
// named. It returns ErrHelp for --help and -h, and otherwise a *Error.
func Parse(args []string, getenv func(string) string) (*Config, error) {
	f := newFlags()
	cfg := &Config{Command: CommandRun}
	if len(args) > 0 && isCommand(args[0]) {
		cfg.Command, args = args[0], args[1:]
	}
	if err := f.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, ErrHelp
		}
		return nil, flagError(err)
	}
	if rest := f.fs.Args(); len(rest) > 0 {
		if rest[0] == "help" {
			return nil, ErrHelp
		}
		if !isCommand(rest[0]) || cfg.Command != CommandRun || len(args) > 0 && isCommand(args[0]) {
			return nil, errorf("command", "unknown command or argument %s (the commands are run, check and drill; flags come before or after the command)", quoteArg(rest[0]))
		}
		cfg.Command = rest[0]
		if err := f.fs.Parse(rest[1:]); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, ErrHelp
			}
			return nil, flagError(err)
		}
		if more := f.fs.Args(); len(more) > 0 {
			return nil, errorf("command", "unexpected argument %s after the command %s", quoteArg(more[0]), cfg.Command)
		}
	}
	if f.version {
		cfg.Version = true
		return cfg, nil
	}

	if err := f.parseTimeouts(cfg); err != nil {
		return nil, err
	}
	cfg.ListenAddress, cfg.ListenRemote = f.listen, f.remote
	if err := checkListen(f.listen, f.remote); err != nil {
		return nil, err
	}
	lvl, err := parseLevel(f.logLevel)
	if err != nil {
		return nil, err
	}
	cfg.LogLevel = lvl
	switch f.logFormat {
	case "auto", "console", "logfmt", "json":
		cfg.LogFormat = f.logFormat
	default:
		return nil, errorf("--log.format", "%s is not a log format: use auto, console, logfmt or json", quoteShort(f.logFormat))
	}
	if f.faultInterval <= 0 {
		return nil, errorf("--demo.fault-interval", "must be positive, not %v", f.faultInterval)
	}
	cfg.DemoFaultInterval = f.faultInterval
	if strings.TrimSpace(f.cluster) == "" {
		return nil, errorf("--cluster.name", "must not be empty")
	}

	uri, uriSetting := f.uri, "--uri"
	if uri == "" {
		if v := getenv(EnvURI); v != "" {
			uri, uriSetting = v, EnvURI
		}
	}
	cfg.ConfigFile = f.file
	switch {
	case f.demo:
		if uri != "" || f.file != "" {
			s := uriSetting
			if uri == "" {
				s = "--config.file"
			}
			return nil, errorf("--demo", "demo mode probes a simulated replica set: it cannot be combined with %s", s)
		}
		cfg.Demo = true
	case uri != "" && f.file != "":
		return nil, errorf(uriSetting, "a URI cannot be combined with --config.file: list the cluster in the configuration file instead")
	case uri != "":
		s, err := ClusterFromURI(f.cluster, uri)
		if err != nil {
			var ce *Error
			if errors.As(err, &ce) && ce.Setting == "uri" {
				ce.Setting = uriSetting
			}
			return nil, err
		}
		cfg.Clusters = []probe.Settings{s}
	case f.file != "":
		data, err := os.ReadFile(f.file)
		if err != nil {
			return nil, &Error{Setting: "--config.file", Err: err}
		}
		clusters, warnings, err := parseFile(f.file, data)
		if err != nil {
			return nil, err
		}
		cfg.Clusters, cfg.Warnings = clusters, warnings
	default:
		cfg.Demo = true
	}
	if err := checkDrill(cfg, f); err != nil {
		return nil, err
	}
	return cfg, nil
}

func isCommand(s string) bool { return s == CommandRun || s == CommandCheck || s == CommandDrill }

// flagError turns the flag package's error into an *Error naming the flag,
// without the value it quotes.
func flagError(err error) error {
	msg := err.Error()
	setting := "flags"
	if m := flagNameRE.FindStringSubmatch(msg); m != nil {
		setting = "--" + m[1]
	}
	msg = strings.Replace(msg, "flag provided but not defined", "unknown flag", 1)
	msg = quotedRE.ReplaceAllString(msg, "")
	return &Error{Setting: setting, Err: errors.New(msg)}
}

var (
	flagNameRE = regexp.MustCompile(`(?:^|\s)-{1,2}([A-Za-z][A-Za-z0-9_.\-]*)`)
	quotedRE   = regexp.MustCompile(` "(?:[^"\\]|\\.)*"`)
)

// ClusterFromURI returns the default settings of a cluster with this name
// and URI. Its errors name the setting "uri".
func ClusterFromURI(name, uri string) (probe.Settings, error) {
	s := defaultSettings(name)
	opts, err := clientOptions(uri)
	if err != nil {
		return probe.Settings{}, &Error{Setting: "uri", Err: err}
	}
	s.Client = opts
	return s, nil
}

func defaultSettings(name string) probe.Settings {
	return probe.Settings{
		Name:            name,
		Interval:        DefaultInterval,
		PingTimeout:     DefaultPingTimeout,
		ReadTimeout:     DefaultReadTimeout,
		WriteTimeout:    DefaultWriteTimeout,
		Database:        DefaultDatabase,
		Collection:      DefaultCollection,
		CanaryKeys:      DefaultCanaryKeys,
		ReadPreferences: []probe.ReadPreference{{Name: "primary", Pref: driver.ReadPreference{Mode: "primary"}}},
		WriteConcern:    driver.Majority(),
		Scheduled:       true,
	}
}

// clientOptions parses and validates uri. Its errors never contain the
// password: the driver's errors redact it, and uri is never echoed.
func clientOptions(uri string) (*driver.ClientOptions, error) {
	opts := &driver.ClientOptions{}
	if err := opts.ApplyURI(uri); err != nil {
		return nil, err
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.URI != nil && opts.URI.W != nil && opts.URI.W.Tag == "" && opts.URI.W.Nodes == 0 {
		return nil, errors.New("w=0 is refused: a canary write must be acknowledged")
	}
	return opts, nil
}

// Redacted returns the cluster's URI with its secrets replaced by "xxxxx",
// or its hosts when it has no URI.
func Redacted(s probe.Settings) string {
	if s.Client == nil {
		return ""
	}
	if s.Client.URI != nil {
		return s.Client.URI.String()
	}
	return strings.Join(s.Client.Hosts, ",")
}

// Hosts returns the cluster's seed list.
func Hosts(s probe.Settings) []string {
	if s.Client == nil {
		return nil
	}
	if s.Client.URI != nil {
		return s.Client.URI.Hosts
	}
	return s.Client.Hosts
}

func checkListen(addr string, remote bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return errorf("--web.listen-address", "%s is not host:port (%v)", quoteShort(addr), unwrapAddrErr(err))
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		if _, lerr := net.LookupPort("tcp", port); lerr != nil {
			return errorf("--web.listen-address", "bad port %s", quoteShort(port))
		}
	}
	if remote || isLoopback(host) {
		return nil
	}
	return errorf("--web.listen-address", "%s is not a loopback address: the endpoints have no authentication, so listening beyond this host needs --web.listen-remote", quoteShort(addr))
}

func unwrapAddrErr(err error) string {
	var ae *net.AddrError
	if errors.As(err, &ae) {
		return ae.Err
	}
	return err.Error()
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func parseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, errorf("--log.level", "%s is not a level: use debug, info, warn or error", quoteShort(s))
}

// quoteShort quotes s, cut to 40 bytes.
func quoteShort(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return strconv.Quote(s)
}

// quoteArg quotes a command-line argument, unless it looks like a URI
// (which may hold a password).
func quoteArg(s string) string {
	if strings.Contains(s, "://") || strings.Contains(s, "@") {
		return "(a URI: pass it with --uri)"
	}
	return quoteShort(s)
}
