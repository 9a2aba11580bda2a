package driver

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/logging"
	"github.com/mongoscope/mongoscope/mongotest"
)

// readmeLogging is the logging part of the README's "Using the client"
// snippet; TestREADMELoggingSnippet checks the README still says it and
// runs it with a buffer in place of os.Stderr.
var readmeLogging = []string{
	"Logging: &logging.Options{",
	"Handler: slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}),",
	"Levels:  map[logging.Component]logging.Level{logging.ComponentCommand: logging.LevelDebug},",
}

type noopMonitor struct{}

func (noopMonitor) CommandStarted(ctx context.Context, _ *event.CommandStarted) context.Context {
	return ctx
}
func (noopMonitor) CommandSucceeded(context.Context, *event.CommandSucceeded) {}
func (noopMonitor) CommandFailed(context.Context, *event.CommandFailed)       {}

func TestREADMELoggingSnippet(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range readmeLogging {
		if !bytes.Contains(readme, []byte(line)) {
			t.Fatalf("the README no longer says %q: update this test with it", line)
		}
	}
	s := mongotest.NewServer(t, mongotest.Options{})

	// The snippet as written, but writing to buf.
	var buf bytes.Buffer
	myMonitor := noopMonitor{}
	opts := &ClientOptions{
		URIOptions: URIOptions{AppName: "billing"},
		Monitors:   []any{myMonitor},
		Logging: &logging.Options{
			Handler: slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}),
			Levels:  map[logging.Component]logging.Level{logging.ComponentCommand: logging.LevelDebug},
		},
	}
	if err := opts.ApplyURI(s.URI()); err != nil {
		t.Fatal(err)
	}
	ctx := ctxTimeout(t, 10*time.Second)
	client, err := Connect(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.RunCommand(ctx, "app", bson.D{{Key: "count", Value: "orders"}},
		&RunCommandOptions{ReadPreference: "secondaryPreferred"})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Disconnect(ctx); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`msg="Command started"`, `msg="Command succeeded"`, "commandName=count"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the README's logging setup did not log %s:\n%s", want, buf.String())
		}
	}
}

// TestLoggingDefaultLevel: the obvious setup, a logger and nothing else,
// shows the informational messages, e.g. a server selection that waits.
func TestLoggingDefaultLevel(t *testing.T) {
	var buf bytes.Buffer
	c := connect(t, "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=200&connectTimeoutMS=100", &ClientOptions{
		Logging: &logging.Options{Logger: slog.New(slog.NewTextHandler(&buf, nil)), Getenv: func(string) string { return "" }},
	})
	if err := c.Ping(context.Background()); err == nil {
		t.Fatal("Ping to nowhere succeeded")
	}
	c.Disconnect(context.Background())
	out := buf.String()
	if !strings.Contains(out, `msg="Waiting for suitable server to become available"`) {
		t.Errorf("a logger with no levels did not log the selection wait:\n%s", out)
	}
	if strings.Contains(out, "level=DEBUG") {
		t.Errorf("debug messages with the info default:\n%s", out)
	}
}
