package logging

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/driver/event"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// levelsOf returns each component's threshold.
func levelsOf(s *Sink) map[Component]slog.Level {
	out := map[Component]slog.Level{}
	for i, c := range components {
		out[c.c] = s.min[i]
	}
	return out
}

func TestLevelPrecedence(t *testing.T) {
	off, dbg, trc, wrn := LevelOff.SlogLevel(), LevelDebug.SlogLevel(), LevelTrace.SlogLevel(), LevelWarning.SlogLevel()
	tests := []struct {
		name   string
		env    map[string]string
		levels map[Component]Level
		want   map[Component]slog.Level
	}{
		{"a handler and nothing set is info", nil, nil, map[Component]slog.Level{ComponentCommand: slog.LevelInfo, ComponentTopology: slog.LevelInfo, ComponentServerSelection: slog.LevelInfo, ComponentConnection: slog.LevelInfo}},
		{"levels in code leave the rest off", nil, map[Component]Level{ComponentCommand: LevelDebug}, map[Component]slog.Level{ComponentCommand: dbg, ComponentTopology: off, ComponentServerSelection: off, ComponentConnection: off}},
		{"the environment leaves the rest off", map[string]string{"MONGODB_LOG_COMMAND": "debug"}, nil, map[Component]slog.Level{ComponentCommand: dbg, ComponentTopology: off, ComponentServerSelection: off, ComponentConnection: off}},
		{"all", map[string]string{"MONGODB_LOG_ALL": "debug"}, nil, map[Component]slog.Level{ComponentCommand: dbg, ComponentTopology: dbg, ComponentServerSelection: dbg, ComponentConnection: dbg}},
		{"component beats all", map[string]string{"MONGODB_LOG_ALL": "debug", "MONGODB_LOG_COMMAND": "OFF", "MONGODB_LOG_CONNECTION": "Trace"}, nil,
			map[Component]slog.Level{ComponentCommand: off, ComponentTopology: dbg, ComponentServerSelection: dbg, ComponentConnection: trc}},
		{"each variable", map[string]string{"MONGODB_LOG_COMMAND": "debug", "MONGODB_LOG_TOPOLOGY": "warn", "MONGODB_LOG_SERVER_SELECTION": "trace", "MONGODB_LOG_CONNECTION": "info"}, nil,
			map[Component]slog.Level{ComponentCommand: dbg, ComponentTopology: wrn, ComponentServerSelection: trc, ComponentConnection: slog.LevelInfo}},
		{"code beats env", map[string]string{"MONGODB_LOG_ALL": "debug", "MONGODB_LOG_TOPOLOGY": "trace"}, map[Component]Level{ComponentTopology: LevelOff, ComponentCommand: LevelError},
			map[Component]slog.Level{ComponentCommand: slog.LevelError, ComponentTopology: off, ComponentServerSelection: dbg, ComponentConnection: dbg}},
		{"bad component value keeps all", map[string]string{"MONGODB_LOG_ALL": "debug", "MONGODB_LOG_COMMAND": "loud"}, nil,
			map[Component]slog.Level{ComponentCommand: dbg, ComponentTopology: dbg, ComponentServerSelection: dbg, ComponentConnection: dbg}},
		{"bad all value is as if unset", map[string]string{"MONGODB_LOG_ALL": "loud"}, nil,
			map[Component]slog.Level{ComponentCommand: slog.LevelInfo, ComponentTopology: slog.LevelInfo, ComponentServerSelection: slog.LevelInfo, ComponentConnection: slog.LevelInfo}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := newSink(t, Options{Getenv: env(tt.env), Levels: tt.levels})
			got := levelsOf(s)
			for c, w := range tt.want {
				if got[c] != w {
					t.Errorf("%s: %v, want %v", c, got[c], w)
				}
			}
		})
	}
}

func TestFiltering(t *testing.T) {
	s, c := newSink(t, Options{Levels: map[Component]Level{ComponentConnection: LevelDebug, ComponentServerSelection: LevelInformational}})
	ctx := context.Background()
	s.PoolEvent(ctx, &event.PoolReady{Address: "h"})                               // on
	s.CommandStarted(ctx, &event.CommandStarted{CommandFields: cmdFields("ping")}) // command off
	s.TopologyEvent(ctx, &event.TopologyOpening{})                                 // topology off
	s.SelectionEvent(ctx, &event.ServerSelectionStarted{})                         // debug < info
	s.SelectionEvent(ctx, &event.ServerSelectionWaiting{})                         // info: on
	var got []string
	for _, m := range c.take() {
		got = append(got, m.Message)
	}
	want := []string{"Connection pool ready", "Waiting for suitable server to become available"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", got, want)
	}
	if !s.Enabled(ctx, ComponentConnection, LevelDebug) || s.Enabled(ctx, ComponentConnection, LevelTrace) || s.Enabled(ctx, "client", LevelError) || s.Enabled(ctx, ComponentConnection, LevelOff) {
		t.Error("Enabled disagrees with the levels")
	}
}

// TestHandlerLevelRespected checks that the handler's own threshold also
// filters: a sink at trace with an info-level handler logs no debug.
func TestHandlerLevelRespected(t *testing.T) {
	c := newCapture()
	c.min = slog.LevelInfo
	s, err := New(Options{Handler: c, Getenv: noEnv, Levels: allDebug()})
	if err != nil {
		t.Fatal(err)
	}
	c.take() // New's warning that debug is dropped (TestFilteredLevelWarning)
	s.PoolEvent(context.Background(), &event.PoolReady{Address: "h"})
	if got := c.take(); len(got) != 0 {
		t.Fatalf("got %+v", got)
	}
}

func TestOptionErrors(t *testing.T) {
	tests := []struct {
		name    string
		o       Options
		setting string
	}{
		{"unknown component", Options{Levels: map[Component]Level{"client": LevelDebug}}, "Levels"},
		{"level too high", Options{Levels: map[Component]Level{ComponentCommand: LevelTrace + 1}}, "Levels[command]"},
		{"level negative", Options{Levels: map[Component]Level{ComponentCommand: -1}}, "Levels[command]"},
		{"negative length", Options{MaxDocumentLength: -1}, "MaxDocumentLength"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.Getenv = noEnv
			tt.o.Handler = newCapture()
			_, err := New(tt.o)
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Setting != tt.setting {
				t.Fatalf("err = %v, want a ConfigError for %s", err, tt.setting)
			}
			if !strings.Contains(err.Error(), tt.setting) {
				t.Errorf("message %q does not name %s", err, tt.setting)
			}
		})
	}
}

func TestEnvWarnings(t *testing.T) {
	tests := []struct {
		name, key, value string
	}{
		{"level", "MONGODB_LOG_COMMAND", "verbose"},
		{"all", "MONGODB_LOG_ALL", "verbose"},
		{"length", "MONGODB_LOG_MAX_DOCUMENT_LENGTH", "-5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, c := newSink(t, Options{Getenv: env(map[string]string{tt.key: tt.value})})
			got := c.take()
			if len(got) != 1 || got[0].Level != slog.LevelWarn || got[0].Attrs["setting"] != tt.key || got[0].Attrs["value"] != tt.value {
				t.Fatalf("got %+v", got)
			}
		})
	}
}

func TestParseLevel(t *testing.T) {
	for l := LevelOff; l <= LevelTrace; l++ {
		got, err := ParseLevel(strings.ToUpper(l.String()))
		if err != nil || got != l {
			t.Errorf("ParseLevel(%q) = %v, %v", l, got, err)
		}
		if l != LevelOff && LevelName(l.SlogLevel()) != l.String() {
			t.Errorf("LevelName(%v) = %q", l.SlogLevel(), LevelName(l.SlogLevel()))
		}
	}
	for in, want := range map[string]Level{"warning": LevelWarning, "Informational": LevelInformational, " debug ": LevelDebug} {
		if got, err := ParseLevel(in); err != nil || got != want {
			t.Errorf("ParseLevel(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseLevel("verbose"); err == nil {
		t.Error("ParseLevel(verbose) succeeded")
	}
	if got := Level(42).String(); got != "Level(42)" {
		t.Errorf("String = %q", got)
	}
	// The mapping the package docs promise.
	want := map[Level]slog.Level{LevelTrace: -8, LevelDebug: slog.LevelDebug, LevelInformational: slog.LevelInfo, LevelNotice: 2, LevelWarning: slog.LevelWarn, LevelError: slog.LevelError, LevelCritical: 12, LevelAlert: 16, LevelEmergency: 20}
	for l, w := range want {
		if l.SlogLevel() != w {
			t.Errorf("%v.SlogLevel() = %v, want %v", l, l.SlogLevel(), w)
		}
	}
	if LevelName(-100) != "trace" || LevelName(100) != "emergency" || LevelName(slog.LevelInfo+1) != "info" {
		t.Error("LevelName between levels")
	}
}

func TestLogPath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "driver.log")
	if err := os.WriteFile(file, []byte("earlier line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		path       string
		wantOut    bool // in stdout
		wantErr    bool // in stderr
		wantFile   bool
		wantWarned bool
	}{
		{"unset is stderr", "", false, true, false, false},
		{"stdout", "STDOUT", true, false, false, false},
		{"stderr", "stderr", false, true, false, false},
		{"file appended", file, false, false, true, false},
		{"bad path falls back to stderr", filepath.Join(dir, "missing", "x.log"), false, true, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			s, err := New(Options{Stdout: &stdout, Stderr: &stderr, Getenv: env(map[string]string{"MONGODB_LOG_PATH": tt.path, "MONGODB_LOG_CONNECTION": "debug"})})
			if err != nil {
				t.Fatal(err)
			}
			s.PoolEvent(context.Background(), &event.PoolReady{Address: "h:1"})
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil { // a second Close is harmless
				t.Fatal(err)
			}
			const line = `"msg":"Connection pool ready"`
			if got := strings.Contains(stdout.String(), line); got != tt.wantOut {
				t.Errorf("stdout: %q", stdout.String())
			}
			if got := strings.Contains(stderr.String(), line); got != tt.wantErr {
				t.Errorf("stderr: %q", stderr.String())
			}
			if got := strings.Contains(stderr.String(), "Invalid logging configuration"); got != tt.wantWarned {
				t.Errorf("warning: %q", stderr.String())
			}
			if tt.wantFile {
				b, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				lines := strings.Split(strings.TrimSpace(string(b)), "\n")
				if len(lines) != 2 || lines[0] != "earlier line" {
					t.Fatalf("file: %q", b)
				}
				var m map[string]any
				if err := json.Unmarshal([]byte(lines[1]), &m); err != nil {
					t.Fatal(err)
				}
				if m["level"] != "debug" || m["component"] != "connection" || m["serverHost"] != "h" || m["serverPort"] != 1.0 {
					t.Errorf("record %v", m)
				}
			}
		})
	}
}

// TestDefaultLevels: without a handler in code (the environment's JSON
// handler) nothing set means off, as the specification's fallback says.
func TestDefaultLevelsWithoutHandler(t *testing.T) {
	var stderr bytes.Buffer
	s, err := New(Options{Getenv: noEnv, Stderr: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	for c, l := range levelsOf(s) {
		if l != LevelOff.SlogLevel() {
			t.Errorf("%s: %v, want off", c, l)
		}
	}
}

// TestFilteredLevelWarning: a level the handler drops is reported once,
// at warning level, naming the level.
func TestFilteredLevelWarning(t *testing.T) {
	for _, tt := range []struct {
		name    string
		handler slog.Level
		env     map[string]string
		levels  map[Component]Level
		warn    string // the level named, or "" for no warning
	}{
		{"env debug, info handler", slog.LevelInfo, map[string]string{"MONGODB_LOG_ALL": "debug"}, nil, "debug"},
		{"code trace, debug handler", slog.LevelDebug, nil, map[Component]Level{ComponentConnection: LevelTrace}, "trace"},
		{"default info, info handler", slog.LevelInfo, nil, nil, ""},
		{"debug handler, debug asked", slog.LevelDebug, map[string]string{"MONGODB_LOG_ALL": "debug"}, nil, ""},
		{"all off", slog.LevelError, map[string]string{"MONGODB_LOG_ALL": "off"}, nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newCapture()
			c.min = tt.handler
			if _, err := New(Options{Handler: c, Getenv: env(tt.env), Levels: tt.levels}); err != nil {
				t.Fatal(err)
			}
			got := c.take()
			if tt.warn == "" {
				if len(got) != 0 {
					t.Fatalf("unexpected messages %+v", got)
				}
				return
			}
			if len(got) != 1 || got[0].Level != slog.LevelWarn || got[0].Attrs["value"] != tt.warn {
				t.Fatalf("got %+v, want one warning naming %s", got, tt.warn)
			}
		})
	}
}
