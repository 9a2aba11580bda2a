package topology

import (
	"context"
	"errors"
	"github.com/mongoscope/mongoscope/driver/internal/auth"
	"github.com/mongoscope/mongoscope/driver/internal/conn"
	"github.com/mongoscope/mongoscope/driver/internal/handshake"
	"github.com/mongoscope/mongoscope/driver/internal/selection"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
	"github.com/mongoscope/mongoscope/mongotest"
)

func countEvents[T any](evs []event.TopologyEvent) int {
	n := 0
	for _, e := range evs {
		if _, ok := e.(T); ok {
			n++
		}
	}
	return n
}

// TestImmediateChecks shows that requested checks happen, but never more
// often than minHeartbeatFrequency, in the polling protocol.
func TestImmediateChecks(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	rec := &eventtest.Recorder{}
	topo := newTopology(t, Config{Seeds: []string{srv.Addr()}, Mode: ModePoll, HeartbeatFrequency: time.Hour, MinHeartbeatFrequency: 200 * time.Millisecond, Events: event.NewDispatcher(rec)})
	waitFor(t, topo, "a standalone", func(d description.TopologyDescription) bool {
		return d.Servers[0].Type == description.Standalone
	})
	before := eventtest.Count[*event.ServerHeartbeatSucceeded](rec)
	start := time.Now()
	for time.Since(start) < time.Second {
		topo.RequestImmediateCheck()
		time.Sleep(5 * time.Millisecond)
	}
	got := eventtest.Count[*event.ServerHeartbeatSucceeded](rec) - before
	// One second of requests allows about five checks 200ms apart.
	if got < 3 || got > 6 {
		t.Fatalf("%d checks in a second of requests with minHeartbeatFrequency 200ms, want 3 to 6", got)
	}
	topo.Close()
	for _, e := range topologyEvents(rec) {
		if e, ok := e.(*event.ServerHeartbeatStarted); ok && e.Awaited {
			t.Fatal("an awaited heartbeat in polling mode")
		}
	}
}

// TestRemovedServer: a seed that turns out not to belong to the set is
// removed, its monitor and pool stopped.
func TestRemovedServer(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 2, mongotest.ReplicaSetOptions{})
	stray := mongotest.NewServer(t, mongotest.Options{})
	rec := &eventtest.Recorder{}
	topo := newTopology(t, Config{Seeds: []string{rs.Members()[0].Addr(), stray.Addr()}, SetName: rs.Name(), HeartbeatFrequency: 500 * time.Millisecond, Events: event.NewDispatcher(rec)})
	strayAddr := description.NormalizeAddress(stray.Addr())
	waitFor(t, topo, "the stray seed removed", func(d description.TopologyDescription) bool {
		_, ok := d.Server(strayAddr)
		return !ok && d.Type == description.ReplicaSetWithPrimary
	})
	if _, ok := topo.Server(strayAddr); ok {
		t.Fatal("the removed server is still monitored")
	}
	closed := false
	for _, e := range topologyEvents(rec) {
		if e, ok := e.(*event.ServerClosed); ok && e.Address == strayAddr {
			closed = true
		}
	}
	if !closed {
		t.Fatal("no ServerClosed event for the removed server")
	}
	topo.Close()
	if g := settled(); len(g) > 0 {
		t.Fatalf("%d goroutines left after Close:\n%s", len(g), strings.Join(g, "\n\n"))
	}
}

// TestMonitorRetriesOnce: when a known server's check fails, the monitor
// marks it Unknown, clears its pool and retries at once; a second failure
// waits for the next heartbeat.
func TestMonitorRetriesOnce(t *testing.T) {
	for _, mode := range []MonitoringMode{ModeStream, ModePoll} {
		t.Run(string(mode), func(t *testing.T) {
			rs := mongotest.NewReplicaSet(t, 2, mongotest.ReplicaSetOptions{})
			rec := &eventtest.Recorder{}
			topo := newTopology(t, Config{Seeds: []string{rs.Members()[0].Addr()}, SetName: rs.Name(), Mode: mode, HeartbeatFrequency: 2 * time.Second, ConnectTimeout: time.Second, Events: event.NewDispatcher(rec)})
			secondary := description.NormalizeAddress(rs.Members()[1].Addr())
			waitFor(t, topo, "the secondary", func(d description.TopologyDescription) bool {
				s, ok := d.Server(secondary)
				return ok && s.Type == description.RSSecondary
			})
			srv, _ := topo.Server(secondary)
			gen := srv.Pool().Stats().Generation
			if err := rs.Kill(1); err != nil {
				t.Fatal(err)
			}
			d := waitFor(t, topo, "the secondary Unknown", func(d description.TopologyDescription) bool {
				s, ok := d.Server(secondary)
				return ok && s.Type == description.Unknown
			})
			if s, _ := d.Server(secondary); s.Error == nil {
				t.Fatal("Unknown server without an error")
			}
			// The Unknown description is published before the pool is
			// cleared (topology changes come first, as the SDAM unified
			// tests require), so the clear may land just after it.
			for deadline := time.Now().Add(time.Second); srv.Pool().Stats().Generation == gen; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the failed check did not clear the pool")
				}
			}
			// Within a second (half a heartbeat) there is the failure and
			// the one retry, and nothing more.
			time.Sleep(time.Second)
			failed := 0
			for _, e := range topologyEvents(rec) {
				if e, ok := e.(*event.ServerHeartbeatFailed); ok && e.ServerPort != 0 && strings.HasSuffix(secondary, ":"+strconv.Itoa(e.ServerPort)) {
					failed++
				}
			}
			if failed != 2 {
				t.Fatalf("%d failed heartbeats within a second of the kill, want 2 (the failure and one retry)", failed)
			}
		})
	}
}

// TestLoadBalanced: the one seed is a LoadBalancer at once, its pool is
// ready, no monitor runs, and an application network error clears only
// that service's connections without marking the server Unknown.
func TestLoadBalanced(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{Topology: mongotest.Topology{Role: mongotest.RoleLoadBalanced}})
	rec := &eventtest.Recorder{}
	topo := newTopology(t, Config{
		Seeds:        []string{srv.Addr()},
		LoadBalanced: true,
		ConnConfig: func(addr string) conn.Config {
			return conn.Config{Address: addr, Handshake: handshake.Options{LoadBalanced: true}}
		},
		Events: event.NewDispatcher(rec),
	})
	d := topo.Description()
	if d.Type != description.LoadBalanced || len(d.Servers) != 1 || d.Servers[0].Type != description.LoadBalancer {
		t.Fatalf("topology after Connect: %+v", d)
	}
	for _, g := range leaked() {
		if strings.Contains(g, "topology.(*monitor)") {
			t.Fatalf("a monitor runs in load-balanced mode:\n%s", g)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := topo.Select(ctx, selection.Write())
	if err != nil {
		t.Fatal(err)
	}
	defer s.EndOperation()
	pc, err := s.Pool().CheckOut(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if pc.ServiceID() == nil {
		t.Fatal("no service id on a load-balanced connection")
	}
	gen := s.Pool().Stats().Generation
	out := topo.HandleConnError(pc, s.Address(), &conn.NetworkError{Op: "read", Address: s.Address(), Err: io.ErrUnexpectedEOF}, description.PhaseOperation)
	if out.MarkUnknown || !out.ClearPool || out.ServiceID == nil || *out.ServiceID != *pc.ServiceID() {
		t.Fatalf("outcome %+v", out)
	}
	if err := s.Pool().CheckIn(ctx, pc); err != nil {
		t.Fatal(err)
	}
	if st := s.Pool().Stats(); st.State != "ready" {
		t.Fatalf("pool %q after a load-balanced clear, want ready (generation %d -> %d)", st.State, gen, st.Generation)
	}
	if topo.Description().Servers[0].Type != description.LoadBalancer {
		t.Fatal("the load balancer was marked Unknown")
	}
}

// TestMonitorsDoNotAuthenticate: with a wrong password the monitor still
// discovers the server (monitoring connections never authenticate), while
// an application connection fails authentication, which marks the server
// Unknown and clears its pool. The password appears in no error or event.
func TestMonitorsDoNotAuthenticate(t *testing.T) {
	const secret = "s3cr3t-Pa55word-xyzzy"
	srv := mongotest.NewServer(t, mongotest.Options{Auth: true})
	if err := srv.AddUser("admin", "app", "right-password"); err != nil {
		t.Fatal(err)
	}
	rec := &eventtest.Recorder{}
	topo := newTopology(t, Config{
		Seeds: []string{srv.Addr()},
		ConnConfig: func(addr string) conn.Config {
			return conn.Config{Address: addr, Credential: &auth.Credential{Username: "app", Password: secret, PasswordSet: true}}
		},
		Mode:               ModePoll,
		HeartbeatFrequency: 500 * time.Millisecond,
		Events:             event.NewDispatcher(rec),
	})
	waitFor(t, topo, "a standalone", func(d description.TopologyDescription) bool {
		return d.Servers[0].Type == description.Standalone
	})
	for _, c := range srv.Commands() {
		if c.Name == "saslStart" || c.Name == "authenticate" {
			t.Fatalf("a monitoring connection ran %s", c.Name)
		}
	}
	s, _ := topo.Server(srv.Addr())
	gen := s.Pool().Stats().Generation
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := s.Pool().CheckOut(ctx)
	if err == nil {
		t.Fatal("checkout with a wrong password succeeded")
	}
	// The pool handed the failure to SDAM (OnDialError) before its
	// events: the server is Unknown and the pool cleared already, and
	// handling the same error again is stale.
	if d := topo.Description().Servers[0]; d.Type != description.Unknown || d.Error == nil {
		t.Fatalf("after an auth failure the server is %v (%v), want Unknown", d.Type, d.Error)
	}
	if out := topo.HandleError(s.Address(), gen, err, description.PhaseOperation); !out.Stale {
		t.Fatalf("handling the error again: %+v, want stale", out)
	}
	if s.Pool().Stats().Generation == gen {
		t.Fatal("pool not cleared")
	}
	texts := []string{err.Error(), topo.Description().Servers[0].Error.Error()}
	for _, e := range topologyEvents(rec) {
		if c, ok := e.(*event.ServerDescriptionChanged); ok && c.New.Error != nil {
			texts = append(texts, c.New.Error.Error())
		}
	}
	for _, s := range texts {
		if strings.Contains(s, secret) {
			t.Fatalf("the password leaked: %s", s)
		}
	}
}

// TestCloseEndsSelection: a selection waiting for a server ends with
// ErrClosed when the topology closes, not at its timeout.
func TestCloseEndsSelection(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	addr := srv.Addr()
	srv.Close() // nothing listens there now
	topo := newTopology(t, Config{Seeds: []string{addr}, ServerSelectionTimeout: time.Minute, HeartbeatFrequency: 500 * time.Millisecond})
	done := make(chan error, 1)
	go func() {
		_, err := topo.Select(context.Background(), selection.Write())
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	topo.Close()
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("Select = %v, want ErrClosed", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("Select ended %v after Close", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Select still waiting 10s after Close")
	}
}
