package selection

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
)

func emptyReplicaSet() description.TopologyDescription {
	return description.TopologyDescription{Type: description.ReplicaSetNoPrimary, Servers: []description.ServerDescription{
		{Address: "a:1", Type: description.Unknown, Error: errors.New("dial tcp a:1: connection refused")},
		{Address: "b:1", Type: description.RSSecondary, RoundTripTime: time.Millisecond},
	}}
}

// Select returns at once when a server is suitable, and asks for no check.
func TestSelectImmediate(t *testing.T) {
	src := &fakeSource{top: rsTopology(), changed: make(chan struct{})}
	waits := 0
	got, err := Select(t.Context(), src, Read(ReadPref{Mode: Nearest}), Options{
		LocalThreshold: DefaultLocalThreshold, Timeout: time.Second,
		OnWait: func(description.TopologyDescription, time.Duration) { waits++ },
	})
	if err != nil || got.Address != "a:1" && got.Address != "b:1" {
		t.Fatalf("Select = %v, %v; want a:1 or b:1 (the window)", got.Address, err)
	}
	if waits != 0 || src.requestCount() != 0 {
		t.Errorf("waits %d, immediate checks %d; want none", waits, src.requestCount())
	}
}

// With no suitable server, Select requests a check, waits for the topology
// to change, tries again on each change and succeeds when a server appears.
func TestSelectWaitsForChange(t *testing.T) {
	src := &fakeSource{top: emptyReplicaSet(), changed: make(chan struct{})}
	var (
		mu       sync.Mutex
		waits    int
		lastLeft time.Duration
	)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// The first change does not help; the second brings a primary.
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			return // Select never asked for a check; the test fails below
		}
		src.set(emptyReplicaSet())
		time.Sleep(5 * time.Millisecond)
		top := rsTopology()
		src.set(top)
	}()
	var once sync.Once
	src.onRequest = func() { once.Do(func() { close(done) }) }
	start := time.Now()
	got, err := Select(t.Context(), src, Write(), Options{
		Timeout: 10 * time.Second,
		OnWait: func(_ description.TopologyDescription, left time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			waits++
			lastLeft = left
		},
	})
	wg.Wait()
	if err != nil || got.Address != "a:1" {
		t.Fatalf("Select = %q, %v; want the primary a:1", got.Address, err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("Select took %v", time.Since(start))
	}
	mu.Lock()
	defer mu.Unlock()
	if waits != 1 {
		t.Errorf("OnWait called %d times, want once per selection", waits)
	}
	if lastLeft <= 9*time.Second || lastLeft > 10*time.Second {
		t.Errorf("OnWait remaining %v, want just under 10s", lastLeft)
	}
	// One check per look at the topology: the first, and after each change.
	if n := src.requestCount(); n < 2 || n > 3 {
		t.Errorf("%d immediate checks, want 2 or 3 (one per unsuccessful look)", n)
	}
}

// While nothing changes, Select sleeps: one immediate-check request, no
// polling, until the timeout.
func TestSelectTimeoutNoBusyPolling(t *testing.T) {
	src := &fakeSource{top: emptyReplicaSet(), changed: make(chan struct{})}
	start := time.Now()
	_, err := Select(t.Context(), src, Write(), Options{Timeout: 50 * time.Millisecond})
	elapsed := time.Since(start)
	var se *SelectionError
	if !errors.As(err, &se) {
		t.Fatalf("error %T %v, want *SelectionError", err, err)
	}
	if !se.TimedOut || !se.Timeout() || !errors.Is(err, ErrTimeout) {
		t.Errorf("error %v: want a timeout wrapping ErrTimeout", err)
	}
	if elapsed < 50*time.Millisecond || se.Waited < 50*time.Millisecond {
		t.Errorf("returned after %v (Waited %v), before the 50ms timeout", elapsed, se.Waited)
	}
	if n := src.requestCount(); n != 1 {
		t.Errorf("%d immediate checks while the topology did not change, want 1", n)
	}
	msg := err.Error()
	for _, want := range []string{"timed out", "write", "ReplicaSetNoPrimary", "a:1 Unknown", "connection refused", "b:1 RSSecondary"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
}

func TestSelectContext(t *testing.T) {
	t.Run("deadline before timeout", func(t *testing.T) {
		src := &fakeSource{top: emptyReplicaSet(), changed: make(chan struct{})}
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		defer cancel()
		var left time.Duration
		_, err := Select(ctx, src, Write(), Options{Timeout: time.Hour, OnWait: func(_ description.TopologyDescription, l time.Duration) { left = l }})
		var se *SelectionError
		if !errors.As(err, &se) || !se.TimedOut || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("error %v, want a timed-out *SelectionError wrapping DeadlineExceeded", err)
		}
		if left <= 0 || left > 20*time.Millisecond {
			t.Errorf("OnWait remaining %v, want the context's, under 20ms", left)
		}
	})
	t.Run("cancelled while waiting", func(t *testing.T) {
		src := &fakeSource{top: emptyReplicaSet(), changed: make(chan struct{})}
		ctx, cancel := context.WithCancel(t.Context())
		src.onRequest = cancel
		var left time.Duration
		_, err := Select(ctx, src, Write(), Options{OnWait: func(_ description.TopologyDescription, l time.Duration) { left = l }})
		var se *SelectionError
		if !errors.As(err, &se) || se.TimedOut || !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v, want a *SelectionError wrapping Canceled, not a timeout", err)
		}
		if left != -1 {
			t.Errorf("OnWait remaining %v with no deadline, want -1", left)
		}
	})
	t.Run("already cancelled", func(t *testing.T) {
		src := &fakeSource{top: rsTopology(), changed: make(chan struct{})}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := Select(ctx, src, Write(), Options{}); !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v, want Canceled", err)
		}
	})
}

// Errors that waiting cannot fix come back at once, whatever the timeout.
func TestSelectFailsFast(t *testing.T) {
	incompatible := rsTopology()
	incompatible.CompatibilityErr = errors.New("server at a:1 reports wire version 2, but this driver requires at least 8")
	tests := []struct {
		name    string
		top     description.TopologyDescription
		sel     Selector
		wantErr func(error) bool
	}{
		{"incompatible topology", incompatible, Write(), func(err error) bool { return errors.Is(err, incompatible.CompatibilityErr) }},
		{"invalid read preference", rsTopology(), Read(ReadPref{Mode: Secondary, MaxStaleness: dur(time.Second)}), func(err error) bool {
			var e *Error
			return errors.As(err, &e) && e.Field == "maxStalenessSeconds"
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := &fakeSource{top: tc.top, changed: make(chan struct{})}
			start := time.Now()
			_, err := Select(t.Context(), src, tc.sel, Options{Timeout: time.Hour})
			var se *SelectionError
			if !errors.As(err, &se) || se.TimedOut || !tc.wantErr(err) {
				t.Fatalf("error %v, want an immediate *SelectionError with the cause", err)
			}
			if time.Since(start) > time.Second || src.requestCount() != 0 {
				t.Errorf("took %v with %d checks, want an immediate failure", time.Since(start), src.requestCount())
			}
		})
	}
}

// A selection error names addresses, kinds and errors, never server data
// beyond that: tag values and dates are left out of the summary.
func TestSelectionErrorSummary(t *testing.T) {
	top := description.TopologyDescription{Type: description.ReplicaSetWithPrimary, Servers: []description.ServerDescription{
		{Address: "a:1", Type: description.RSPrimary, Tags: map[string]string{"owner": "tag-value-not-for-logs"}, LastWriteDate: time.Unix(12345, 0)},
	}}
	src := &fakeSource{top: top, changed: make(chan struct{})}
	_, err := Select(t.Context(), src, Read(ReadPref{Mode: Secondary}), Options{Timeout: time.Millisecond})
	if err == nil {
		t.Fatal("Select succeeded without a secondary")
	}
	if msg := err.Error(); strings.Contains(msg, "tag-value-not-for-logs") || strings.Contains(msg, "12345") || !strings.Contains(msg, "a:1 RSPrimary") {
		t.Errorf("message %q: want addresses and kinds only", msg)
	}
}

// Select starts no goroutines and leaves its timer stopped.
func TestSelectNoGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	src := &fakeSource{top: emptyReplicaSet(), changed: make(chan struct{})}
	for range 20 {
		_, _ = Select(t.Context(), src, Write(), Options{Timeout: time.Millisecond})
		_, _ = Select(t.Context(), &fakeSource{top: rsTopology()}, Write(), Options{Timeout: time.Hour})
	}
	if after := runtime.NumGoroutine(); after > before {
		t.Errorf("goroutines %d before, %d after", before, after)
	}
}

// Each look at a changed topology starts again at step 2 of the Server
// Selection Algorithm: a topology that becomes incompatible, or a read
// preference that the new topology type makes invalid, fails the waiting
// selection at once rather than at the timeout.
func TestSelectRechecksAfterChange(t *testing.T) {
	incompatible := emptyReplicaSet()
	incompatible.CompatibilityErr = errors.New("server at a:1 requires wire version 99")
	tests := []struct {
		name    string
		sel     Selector
		before  description.TopologyDescription
		after   description.TopologyDescription
		wantErr func(error) bool
	}{
		{"becomes incompatible", Write(), emptyReplicaSet(), incompatible,
			func(err error) bool { return errors.Is(err, incompatible.CompatibilityErr) }},
		// 60s is fine while the type is Unknown; a replica set needs 90s.
		{"read preference invalid for the new type", Read(ReadPref{Mode: Secondary, MaxStaleness: dur(60 * time.Second)}),
			description.TopologyDescription{Servers: []description.ServerDescription{{Address: "a:1"}}}, emptyReplicaSet(),
			func(err error) bool {
				var e *Error
				return errors.As(err, &e) && e.Field == "maxStalenessSeconds"
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := &fakeSource{top: tc.before, changed: make(chan struct{})}
			var once sync.Once
			src.onRequest = func() { once.Do(func() { go src.set(tc.after) }) }
			start := time.Now()
			_, err := Select(t.Context(), src, tc.sel, Options{Timeout: 10 * time.Second})
			var se *SelectionError
			if !errors.As(err, &se) || se.TimedOut || !tc.wantErr(err) {
				t.Fatalf("error %v, want an immediate *SelectionError with the cause", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("failed after %v, want as soon as the topology changed", d)
			}
		})
	}
}

// A multi-threaded driver must not wait for discovery to finish: while
// members are still Unknown, a read that an already-known member can serve
// returns at once, without an immediate check.
func TestSelectDoesNotWaitForDiscovery(t *testing.T) {
	discovering := description.TopologyDescription{Type: description.ReplicaSetNoPrimary, Servers: []description.ServerDescription{
		{Address: "a:1", Type: description.Unknown},
		{Address: "b:1", Type: description.RSSecondary, RoundTripTime: time.Millisecond},
		{Address: "c:1", Type: description.Unknown},
	}}
	for _, mode := range []Mode{PrimaryPreferred, Secondary, SecondaryPreferred, Nearest} {
		t.Run(mode.String(), func(t *testing.T) {
			src := &fakeSource{top: discovering, changed: make(chan struct{})}
			got, err := Select(t.Context(), src, Read(ReadPref{Mode: mode}), Options{Timeout: 10 * time.Second})
			if err != nil || got.Address != "b:1" {
				t.Fatalf("Select = %v, %v; want b:1 at once", got, err)
			}
			if n := src.requestCount(); n != 0 {
				t.Errorf("%d immediate checks, want none", n)
			}
		})
	}
}

// Options.Closed ends a waiting selection with ErrSourceClosed, not a
// timeout.
func TestSelectSourceClosed(t *testing.T) {
	src := &fakeSource{top: emptyReplicaSet(), changed: make(chan struct{})}
	closed := make(chan struct{})
	var once sync.Once
	src.onRequest = func() { once.Do(func() { close(closed) }) }
	start := time.Now()
	_, err := Select(t.Context(), src, Write(), Options{Timeout: 10 * time.Second, Closed: closed})
	var se *SelectionError
	if !errors.As(err, &se) || se.TimedOut || !errors.Is(err, ErrSourceClosed) {
		t.Fatalf("error %v, want a *SelectionError wrapping ErrSourceClosed", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("returned after %v", d)
	}
}
