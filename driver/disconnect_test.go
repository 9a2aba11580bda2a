package driver

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
	"github.com/mongoscope/mongoscope/driver/logging"
	"github.com/mongoscope/mongoscope/mongotest"
)

// closedHandler records log messages and flags any that arrives after
// closed is set.
type closedHandler struct {
	mu     sync.Mutex
	msgs   []string
	closed bool
	late   []string
}

func (h *closedHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *closedHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		h.late = append(h.late, r.Message)
	}
	h.msgs = append(h.msgs, r.Message)
	return nil
}
func (h *closedHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *closedHandler) WithGroup(string) slog.Handler      { return h }

func (h *closedHandler) close() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	return append([]string(nil), h.msgs...)
}

func (h *closedHandler) lateMessages() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.late...)
}

// findEndMonitor records, when a find's end is published, whether
// Disconnect had already returned then.
type findEndMonitor struct {
	disconnected *atomic.Bool
	mu           sync.Mutex
	ended, late  bool
}

func (m *findEndMonitor) CommandStarted(ctx context.Context, _ *event.CommandStarted) context.Context {
	return ctx
}
func (m *findEndMonitor) CommandSucceeded(_ context.Context, e *event.CommandSucceeded) {
	m.end(e.CommandName)
}
func (m *findEndMonitor) CommandFailed(_ context.Context, e *event.CommandFailed) {
	m.end(e.CommandName)
}
func (m *findEndMonitor) end(name string) {
	if name != "find" {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ended = true
	m.late = m.late || m.disconnected.Load()
}
func (m *findEndMonitor) result() (ended, late bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ended, m.late
}

// TestDisconnectWithOperationInFlight covers both ways Disconnect ends
// with a find running, held by a fail point: the find finishes within
// Disconnect's context, or the context ends first and the find is
// interrupted with ErrClientDisconnected. Either way new operations are
// refused at once, the find's messages are logged before Disconnect
// returns and none after, and no goroutine is left.
// wrappingMonitor returns the operation's context wrapped, as a tracing
// sink does: the client must still interrupt the operation's I/O.
type wrappingMonitor struct{}

type wrappedCtx struct{ context.Context }

func (wrappingMonitor) OperationStarted(ctx context.Context, _ *event.OperationStarted) context.Context {
	return wrappedCtx{ctx}
}

func (wrappingMonitor) OperationFinished(context.Context, *event.OperationFinished) {}

func TestDisconnectWithOperationInFlight(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	for _, tc := range []struct {
		name      string
		block     time.Duration // how long the server holds the find
		wait      time.Duration // Disconnect's context
		interrupt bool
		wrap      bool // an operation monitor wraps the operation's context
	}{
		{"finishes within ctx", 300 * time.Millisecond, 10 * time.Second, false, false},
		{"ctx expires", 3 * time.Second, 200 * time.Millisecond, true, false},
		{"ctx expires, context wrapped by a monitor", 3 * time.Second, 200 * time.Millisecond, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &closedHandler{}
			rec := &eventtest.Recorder{}
			var disconnected atomic.Bool
			// findEnd notes whether Disconnect had returned when the
			// find's own end was published. The caller's goroutine sees the
			// find end only after the client has let the operation go, so
			// Disconnect may rightly return before the caller looks.
			findEnd := &findEndMonitor{disconnected: &disconnected}
			monitors := []any{rec, findEnd}
			if tc.wrap {
				monitors = append(monitors, wrappingMonitor{})
			}
			o := &ClientOptions{
				Monitors: monitors,
				Logging:  &logging.Options{Handler: h, Levels: map[logging.Component]logging.Level{logging.ComponentCommand: logging.LevelDebug, logging.ComponentTopology: logging.LevelDebug}},
			}
			if err := o.ApplyURI(s.URI()); err != nil {
				t.Fatal(err)
			}
			c, err := Connect(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Ping(ctxTimeout(t, 10*time.Second)); err != nil {
				t.Fatal(err)
			}
			failPoint(t, s, bson.D{{Key: "failCommands", Value: bson.A{"find"}}, {Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: tc.block.Milliseconds()}})

			type result struct {
				err  error
				took time.Duration
			}
			done := make(chan result, 1)
			go func() {
				start := time.Now()
				_, err := c.RunCommand(context.Background(), "app", bson.D{{Key: "find", Value: "t"}})
				done <- result{err, time.Since(start)}
			}()
			if _, ok := eventtest.WaitFor(rec, 10*time.Second, func(e *event.CommandStarted) bool { return e.CommandName == "find" }); !ok {
				t.Fatal("the find never started")
			}

			derr := make(chan error, 1)
			dstart := time.Now()
			go func() {
				err := c.Disconnect(ctxTimeout(t, tc.wait))
				disconnected.Store(true)
				derr <- err
			}()
			// New operations are refused at once, while Disconnect waits.
			deadline := time.Now().Add(5 * time.Second)
			for {
				c.mu.Lock()
				begun := c.disconnected
				c.mu.Unlock()
				if begun || time.Now().After(deadline) {
					break
				}
				time.Sleep(time.Millisecond)
			}
			if err := c.Ping(context.Background()); !errors.Is(err, ErrClientDisconnected) {
				t.Errorf("Ping during Disconnect = %v, want ErrClientDisconnected", err)
			}

			r := <-done
			if ended, late := findEnd.result(); !ended {
				t.Error("the find's end was never published")
			} else if late {
				t.Error("Disconnect returned before the find ended")
			}
			err = <-derr
			took := time.Since(dstart)
			if tc.interrupt {
				if !errors.Is(r.err, ErrClientDisconnected) {
					t.Errorf("interrupted find = %v, want ErrClientDisconnected", r.err)
				}
				var oe *OperationError
				if !errors.As(r.err, &oe) || oe.Op != "find" || !strings.Contains(r.err.Error(), "interrupted") {
					t.Errorf("interrupted find's error %q is not clear", r.err)
				}
				if r.took > 2*time.Second || took > 2*time.Second {
					t.Errorf("the find took %v and Disconnect %v: the interruption is not prompt", r.took, took)
				}
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("Disconnect = %v, want its context's error", err)
				}
			} else {
				if r.err != nil {
					t.Errorf("find = %v, want success: Disconnect should wait for it", r.err)
				}
				if err != nil {
					t.Errorf("Disconnect = %v", err)
				}
			}

			msgs := h.close()
			joined := strings.Join(msgs, "\n")
			for _, want := range []string{"Command started", "Stopped topology monitoring"} {
				if !strings.Contains(joined, want) {
					t.Errorf("no %q message before Disconnect returned:\n%s", want, joined)
				}
			}
			if !strings.Contains(joined, "Command succeeded") && !strings.Contains(joined, "Command failed") {
				t.Errorf("the find's outcome was not logged before Disconnect returned:\n%s", joined)
			}
			deadline = time.Now().Add(2 * time.Second)
			for len(driverGoroutines()) > 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if g := driverGoroutines(); len(g) > 0 {
				t.Errorf("%d goroutines left after Disconnect:\n%s", len(g), strings.Join(g, "\n\n"))
			}
			time.Sleep(100 * time.Millisecond)
			if late := h.lateMessages(); len(late) > 0 {
				t.Errorf("messages logged after Disconnect returned: %v", late)
			}
		})
	}
}

// TestDisconnectWithNothingRunning returns at once, whatever the context.
func TestDisconnectWithNothingRunning(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	c := connect(t, s.URI(), nil)
	if err := c.Ping(ctxTimeout(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Disconnect(ctx); err != nil {
		t.Fatalf("Disconnect with nothing running and a canceled context = %v", err)
	}
}
