package logging

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// Component is a log component of the logging specification.
type Component string

// The components, spelled as in the logging specification, and one of the
// driver's own, ComponentFailover, which the specification allows ("drivers
// MAY define additional language-specific components ... for any
// driver-specific messages"): it holds the informational "Primary changed"
// message and the warning "Last server removed from topology" (the SDAM
// specification's SHOULD), so that the specification's components carry
// exactly the specification's messages.
const (
	ComponentCommand         Component = "command"
	ComponentTopology        Component = "topology"
	ComponentServerSelection Component = "serverSelection"
	ComponentConnection      Component = "connection"
	ComponentFailover        Component = "failover"
)

// components lists every component with its environment variable, in the
// order of the compIndex values below.
var components = [...]struct {
	c   Component
	env string
}{
	{ComponentCommand, "MONGODB_LOG_COMMAND"},
	{ComponentTopology, "MONGODB_LOG_TOPOLOGY"},
	{ComponentServerSelection, "MONGODB_LOG_SERVER_SELECTION"},
	{ComponentConnection, "MONGODB_LOG_CONNECTION"},
	{ComponentFailover, "MONGODB_LOG_FAILOVER"},
}

const (
	compCommand = iota
	compTopology
	compSelection
	compConnection
	compFailover
	numComponents
)

// Level is a severity level of the logging specification.
type Level int

// The levels, from "nothing" to the finest. The zero Level is LevelOff.
const (
	LevelOff Level = iota
	LevelEmergency
	LevelAlert
	LevelCritical
	LevelError
	LevelWarning
	LevelNotice
	LevelInformational
	LevelDebug
	LevelTrace
)

var levelNames = [...]string{"off", "emergency", "alert", "critical", "error", "warn", "notice", "info", "debug", "trace"}

// String returns the level's name as the environment variables spell it.
func (l Level) String() string {
	if l < 0 || int(l) >= len(levelNames) {
		return "Level(" + strconv.Itoa(int(l)) + ")"
	}
	return levelNames[l]
}

// slogOff is above every level a Sink emits, so a component at LevelOff
// never passes the check.
const slogOff = slog.Level(math.MaxInt32)

// SlogLevel returns the slog level l maps to (see the package docs).
// LevelOff maps to a level above every other.
func (l Level) SlogLevel() slog.Level {
	switch l {
	case LevelEmergency:
		return slog.LevelError + 12
	case LevelAlert:
		return slog.LevelError + 8
	case LevelCritical:
		return slog.LevelError + 4
	case LevelError:
		return slog.LevelError
	case LevelWarning:
		return slog.LevelWarn
	case LevelNotice:
		return slog.LevelInfo + 2
	case LevelInformational:
		return slog.LevelInfo
	case LevelDebug:
		return slog.LevelDebug
	case LevelTrace:
		return slog.LevelDebug - 4
	}
	return slogOff
}

// LevelName returns the logging specification's name for a slog level, the
// name of the closest specification level at or below it in severity.
func LevelName(l slog.Level) string {
	for lv := LevelEmergency; lv <= LevelTrace; lv++ {
		if l >= lv.SlogLevel() {
			return lv.String()
		}
	}
	return LevelTrace.String()
}

// ParseLevel parses a level as the environment variables spell it, case
// insensitively; "warning" and "informational" are accepted too.
func ParseLevel(s string) (Level, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	switch v {
	case "warning":
		return LevelWarning, nil
	case "informational":
		return LevelInformational, nil
	}
	for i, n := range levelNames {
		if v == n {
			return Level(i), nil
		}
	}
	return LevelOff, &ConfigError{Setting: "level", Value: s, Reason: "not one of off, emergency, alert, critical, error, warn, notice, info, debug, trace"}
}

// ConfigError reports a bad setting: which one, the value and why.
type ConfigError struct {
	Setting string // the option or environment variable
	Value   string
	Reason  string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("logging: %s=%q: %s", e.Setting, e.Value, e.Reason)
}

// DefaultMaxDocumentLength is the specification's default cut-off, in bytes
// of Extended JSON.
const DefaultMaxDocumentLength = 1000

// Options configure a Sink. Every field is optional.
type Options struct {
	// Handler receives the messages. When nil, a JSON handler writes to
	// MONGODB_LOG_PATH ("stdout", "stderr" or a file opened for append),
	// or to stderr when that is unset or cannot be opened.
	Handler slog.Handler
	// Logger, when Handler is nil, supplies its handler instead. Its
	// attributes and groups apply to every message.
	Logger *slog.Logger
	// Levels sets a component's minimum level; it overrides the
	// environment for the components it names.
	//
	// When Levels is empty, no MONGODB_LOG_* variable sets a level, and
	// Handler or Logger is set, every component logs at informational
	// and above: naming a handler asks for the driver's messages, and
	// the informational ones (a server selection that has to wait, ...)
	// are those worth seeing by default. Debug and trace messages (every
	// command, every checkout) are asked for by name, in Levels or with
	// MONGODB_LOG_ALL=debug; the handler must then let them through too
	// (slog.Default() drops records below slog.LevelInfo, and New warns
	// when the handler would drop a level asked for).
	Levels map[Component]Level
	// MaxDocumentLength cuts Extended JSON documents to this many bytes;
	// 0 means MONGODB_LOG_MAX_DOCUMENT_LENGTH or, without it, 1000.
	MaxDocumentLength int
	// Getenv reads the environment; nil means os.Getenv. Tests replace it.
	Getenv func(string) string
	// Stdout and Stderr are where "stdout" and "stderr" (and the
	// fallback) write; nil means os.Stdout and os.Stderr.
	Stdout, Stderr io.Writer
}

// New returns a Sink for o. It fails only on bad settings in o itself
// (an unknown component, a level out of range, a negative length); bad
// environment values are reported as a warning message and replaced by
// their defaults, as the specification requires.
func New(o Options) (*Sink, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	s := &Sink{}
	var warnings []*ConfigError

	// Levels: the per-component variable beats MONGODB_LOG_ALL, and code
	// beats both.
	// With a handler named in code and no level set anywhere, the
	// default is informational (see Options.Levels); otherwise off.
	all := LevelOff
	envSet := false
	if v := getenv("MONGODB_LOG_ALL"); v != "" {
		l, err := ParseLevel(v)
		if err != nil {
			warnings = append(warnings, &ConfigError{Setting: "MONGODB_LOG_ALL", Value: v, Reason: err.(*ConfigError).Reason})
		} else {
			envSet = true
		}
		all = l
	}
	var envLevels [numComponents]Level
	for i, c := range components {
		l := all
		if v := getenv(c.env); v != "" {
			pl, err := ParseLevel(v)
			if err != nil {
				warnings = append(warnings, &ConfigError{Setting: c.env, Value: v, Reason: err.(*ConfigError).Reason})
			} else {
				l = pl
				envSet = true
			}
		}
		envLevels[i] = l
	}
	codeHandler := o.Handler != nil || o.Logger != nil
	for i := range components {
		l := envLevels[i]
		if !envSet && len(o.Levels) == 0 && codeHandler {
			l = LevelInformational
		}
		s.min[i] = l.SlogLevel()
	}
	for c, l := range o.Levels {
		i := componentIndex(c)
		if i < 0 {
			return nil, &ConfigError{Setting: "Levels", Value: string(c), Reason: "unknown component; want command, topology, serverSelection, connection or failover"}
		}
		if l < LevelOff || l > LevelTrace {
			return nil, &ConfigError{Setting: "Levels[" + string(c) + "]", Value: strconv.Itoa(int(l)), Reason: "level out of range"}
		}
		s.min[i] = l.SlogLevel()
	}

	switch {
	case o.MaxDocumentLength < 0:
		return nil, &ConfigError{Setting: "MaxDocumentLength", Value: strconv.Itoa(o.MaxDocumentLength), Reason: "must not be negative"}
	case o.MaxDocumentLength > 0:
		s.maxDoc = o.MaxDocumentLength
	default:
		s.maxDoc = DefaultMaxDocumentLength
		if v := getenv("MONGODB_LOG_MAX_DOCUMENT_LENGTH"); v != "" {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n <= 0 {
				warnings = append(warnings, &ConfigError{Setting: "MONGODB_LOG_MAX_DOCUMENT_LENGTH", Value: v, Reason: "not a positive integer; using 1000"})
			} else {
				s.maxDoc = n
			}
		}
	}

	s.handler = o.Handler
	if s.handler == nil && o.Logger != nil {
		s.handler = o.Logger.Handler()
	}
	if s.handler == nil {
		w, closer, warn := destination(getenv("MONGODB_LOG_PATH"), o.Stdout, o.Stderr)
		if warn != nil {
			warnings = append(warnings, warn)
		}
		s.closer = closer
		s.handler = slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.Level(math.MinInt32), ReplaceAttr: ReplaceLevelNames})
	}
	if w := s.filteredLevel(); w != nil {
		warnings = append(warnings, w)
	}
	for _, w := range warnings {
		s.warn(w)
	}
	return s, nil
}

// filteredLevel reports a level asked for that the handler drops: with
// MONGODB_LOG_ALL=debug and slog.Default(), for one, every debug message
// would vanish without a word.
func (s *Sink) filteredLevel() *ConfigError {
	finest := slogOff
	for _, l := range s.min {
		finest = min(finest, l)
	}
	if finest == slogOff || s.handler.Enabled(context.Background(), finest) {
		return nil
	}
	return &ConfigError{Setting: "level", Value: LevelName(finest),
		Reason: "the log handler drops records at this level, so these messages are lost; give the handler a lower level (slog.HandlerOptions.Level)"}
}

func componentIndex(c Component) int {
	for i, x := range components {
		if x.c == c {
			return i
		}
	}
	return -1
}

// destination resolves MONGODB_LOG_PATH. A path that cannot be opened falls
// back to stderr with a warning, never an error, as the specification says.
func destination(path string, stdout, stderr io.Writer) (io.Writer, io.Closer, *ConfigError) {
	if stdout == nil {
		stdout = os.Stdout
	}
	if stderr == nil {
		stderr = os.Stderr
	}
	switch strings.ToLower(path) {
	case "", "stderr":
		return stderr, nil, nil
	case "stdout":
		return stdout, nil, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return stderr, nil, &ConfigError{Setting: "MONGODB_LOG_PATH", Value: path, Reason: "cannot open for append (" + err.Error() + "); logging to stderr"}
	}
	return f, f, nil
}

// ReplaceLevelNames is a slog ReplaceAttr function that writes the
// specification's level names ("debug", "trace", "info", ...) instead of
// slog's, for handlers made outside this package.
func ReplaceLevelNames(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.LevelKey {
		if l, ok := a.Value.Any().(slog.Level); ok {
			return slog.String(slog.LevelKey, LevelName(l))
		}
	}
	return a
}

// warn reports a configuration problem through the handler, at warning
// level whatever the components' settings: the user asked for logging
// and should learn it is misconfigured.
func (s *Sink) warn(e *ConfigError) {
	ctx := context.Background()
	if !s.handler.Enabled(ctx, slog.LevelWarn) {
		return
	}
	r := slog.NewRecord(time.Now(), slog.LevelWarn, "Invalid logging configuration", 0)
	r.AddAttrs(slog.String("setting", e.Setting), slog.String("value", e.Value), slog.String("error", e.Reason))
	_ = s.handler.Handle(ctx, r)
}
