package topology

import (
	"fmt"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
	"github.com/mongoscope/mongoscope/mongotest"
)

// heartbeatPairs checks the SDAM monitoring specification's heartbeat
// guarantee on evs: per server, every ServerHeartbeatStarted is followed
// by exactly one ServerHeartbeatSucceeded or ServerHeartbeatFailed, before
// the next started event, on the same connection (a non-zero driver id)
// and with the same awaited flag; and TopologyClosed, when present, is
// the last event. It returns the pairs, started event first.
func heartbeatPairs(t *testing.T, evs []event.TopologyEvent) [][2]event.TopologyEvent {
	t.Helper()
	open := map[string]*event.ServerHeartbeatStarted{}
	var pairs [][2]event.TopologyEvent
	finish := func(f *event.HeartbeatFields, e event.TopologyEvent) {
		key := fmt.Sprintf("%s:%d", f.ServerHost, f.ServerPort)
		s := open[key]
		switch {
		case s == nil:
			t.Errorf("%T on connection %d of %s without a started event", e, f.DriverConnectionID, key)
		case s.DriverConnectionID != f.DriverConnectionID || s.Awaited != f.Awaited:
			t.Errorf("%s: started on connection %d (awaited %v), then %T on connection %d (awaited %v)",
				key, s.DriverConnectionID, s.Awaited, e, f.DriverConnectionID, f.Awaited)
		default:
			pairs = append(pairs, [2]event.TopologyEvent{s, e})
		}
		delete(open, key)
	}
	for i, e := range evs {
		switch e := e.(type) {
		case *event.ServerHeartbeatStarted:
			key := fmt.Sprintf("%s:%d", e.ServerHost, e.ServerPort)
			if e.DriverConnectionID == 0 {
				t.Errorf("%s: started event with driver connection id 0", key)
			}
			if s := open[key]; s != nil {
				t.Errorf("%s: started on connection %d without its succeeded or failed event", key, s.DriverConnectionID)
			}
			open[key] = e
		case *event.ServerHeartbeatSucceeded:
			finish(&e.HeartbeatFields, e)
		case *event.ServerHeartbeatFailed:
			finish(&e.HeartbeatFields, e)
		case *event.TopologyClosed:
			if i != len(evs)-1 {
				t.Errorf("TopologyClosed followed by %d events", len(evs)-1-i)
			}
		}
	}
	for key, s := range open {
		t.Errorf("%s: started on connection %d (awaited %v) never finished", key, s.DriverConnectionID, s.Awaited)
	}
	return pairs
}

// TestHeartbeatsPairedAcrossClose: a check that Close interrupts (an
// awaited hello the server holds, a dial whose handshake the server never
// answers) still publishes its failed event, before TopologyClosed, so
// every started event has its pair.
func TestHeartbeatsPairedAcrossClose(t *testing.T) {
	tests := []struct {
		name string
		mode MonitoringMode
		addr func(t *testing.T) string
		// awaited is the awaited flag of the check Close interrupts,
		// whose started event is then the last event.
		awaited bool
	}{
		{"awaited hello in progress", ModeStream, func(t *testing.T) string {
			srv := mongotest.NewServer(t, mongotest.Options{})
			scriptedHello(srv, time.Hour, true)
			return srv.Addr()
		}, true},
		{"dial in progress", ModePoll, silentServer, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &eventtest.Recorder{}
			topo := newTopology(t, Config{Seeds: []string{tt.addr(t)}, Mode: tt.mode, HeartbeatFrequency: 10 * time.Second,
				ConnectTimeout: 30 * time.Second, Events: event.NewDispatcher(rec)})
			deadline := time.Now().Add(5 * time.Second)
			for {
				evs := topologyEvents(rec)
				if s, ok := evs[len(evs)-1].(*event.ServerHeartbeatStarted); ok && s.Awaited == tt.awaited {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no check in progress: events %v", evs)
				}
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(50 * time.Millisecond) // into the read
			topo.Close()
			evs := topologyEvents(rec)
			pairs := heartbeatPairs(t, evs)
			if len(pairs) == 0 {
				t.Fatal("no heartbeat pairs")
			}
			if _, ok := pairs[len(pairs)-1][1].(*event.ServerHeartbeatFailed); !ok {
				t.Fatalf("the interrupted check ended with %T, want a failed event", pairs[len(pairs)-1][1])
			}
		})
	}
}

// TestAwaitedHeartbeats: in the streaming protocol the first check (the
// monitoring connection's handshake) is not awaited and every later one
// is; each awaited reply gets its own started event before it is read;
// the duration of an awaited heartbeat is the awaited wait; and awaited
// replies never update the round trip time. In the polling protocol no
// heartbeat is awaited.
func TestAwaitedHeartbeats(t *testing.T) {
	const wait = 200 * time.Millisecond
	for _, mode := range []MonitoringMode{ModeStream, ModePoll} {
		t.Run(string(mode), func(t *testing.T) {
			srv := mongotest.NewServer(t, mongotest.Options{})
			scriptedHello(srv, wait, true)
			rec := &eventtest.Recorder{}
			// A heartbeat longer than the test: the RTT monitor takes no
			// sample, and polling checks only once.
			topo := newTopology(t, Config{Seeds: []string{srv.Addr()}, Mode: mode, HeartbeatFrequency: time.Minute, Events: event.NewDispatcher(rec)})
			time.Sleep(5 * wait)
			rtt := topo.Description().Servers[0].RoundTripTime
			topo.Close()
			pairs := heartbeatPairs(t, topologyEvents(rec))
			awaited := 0
			for i, p := range pairs {
				ok, isOK := p[1].(*event.ServerHeartbeatSucceeded)
				if !isOK {
					if i < len(pairs)-1 {
						t.Fatalf("heartbeat %d failed: %v", i, p[1].(*event.ServerHeartbeatFailed).Failure)
					}
					continue // the one Close interrupted
				}
				want := mode == ModeStream && i > 0
				if ok.Awaited != want {
					t.Errorf("heartbeat %d awaited %v, want %v", i, ok.Awaited, want)
				}
				if ok.Awaited {
					awaited++
					if ok.Duration < wait*3/4 {
						t.Errorf("awaited heartbeat %d lasted %v, want the awaited wait (%v)", i, ok.Duration, wait)
					}
				}
			}
			if mode == ModeStream && awaited < 2 {
				t.Fatalf("%d awaited heartbeats in %v of %v waits", awaited, 5*wait, wait)
			}
			if rtt <= 0 || rtt >= wait/2 {
				t.Fatalf("RTT %v, want the handshake's, untouched by awaited replies of %v", rtt, wait)
			}
		})
	}
}

// TestRTTMonitorPublishesNoHeartbeats: the streaming protocol's RTT
// monitor runs hellos on its own connection, and none of them is a
// heartbeat event: every heartbeat is on the monitoring connection.
func TestRTTMonitorPublishesNoHeartbeats(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	rec := &eventtest.Recorder{}
	topo := newTopology(t, Config{Seeds: []string{srv.Addr()}, Mode: ModeStream, HeartbeatFrequency: 100 * time.Millisecond, Events: event.NewDispatcher(rec)})
	waitFor(t, topo, "a standalone", func(d description.TopologyDescription) bool {
		return d.Servers[0].Type == description.Standalone
	})
	time.Sleep(600 * time.Millisecond)
	topo.Close()
	helloConns := map[int64]bool{}
	for _, c := range srv.Commands() {
		if c.Name == "hello" || c.Name == "isMaster" {
			helloConns[c.ConnID] = true
		}
	}
	if len(helloConns) < 2 {
		t.Fatalf("hellos on %d connections, want the monitoring and the RTT connection", len(helloConns))
	}
	driverIDs, serverIDs := map[int64]bool{}, map[int64]bool{}
	for _, p := range heartbeatPairs(t, topologyEvents(rec)) {
		if s, ok := p[1].(*event.ServerHeartbeatSucceeded); ok {
			driverIDs[s.DriverConnectionID] = true
			serverIDs[*s.ServerConnectionID] = true
		}
	}
	if len(driverIDs) != 1 || len(serverIDs) != 1 {
		t.Fatalf("heartbeats on driver connections %v, server connections %v; want only the monitoring connection", driverIDs, serverIDs)
	}
}

// TestAwaitedCheckFailure: an awaited check that fails with a network
// error marks the server Unknown, clears its pool (interrupting in-use
// connections only when the error is a timeout) and retries at once on a
// new connection, without waiting heartbeatFrequency (Server Monitoring,
// "Network or command error during server check").
func TestAwaitedCheckFailure(t *testing.T) {
	const heartbeat = 600 * time.Millisecond
	tests := []struct {
		name string
		// fail makes the awaited hello in progress fail; nil lets it time
		// out (connectTimeout + heartbeatFrequency).
		fail      func(srv *mongotest.Server)
		interrupt bool
	}{
		{"timeout", nil, true},
		{"connection closed", func(srv *mongotest.Server) { srv.ResetConnections() }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := mongotest.NewServer(t, mongotest.Options{})
			scriptedHello(srv, time.Hour, true) // awaited hellos never answer
			// Topology and pool events in one sequence, each with the time
			// it arrived.
			rec := &eventtest.Recorder{Keep: func(e any) bool {
				_, topo := e.(event.TopologyEvent)
				_, pool := e.(event.PoolEvent)
				return topo || pool
			}}
			topo := newTopology(t, Config{Seeds: []string{srv.Addr()}, Mode: ModeStream, HeartbeatFrequency: heartbeat,
				ConnectTimeout: 100 * time.Millisecond, Events: event.NewDispatcher(rec)})
			find := func(from int, match func(any) bool) (int, time.Time) {
				recs := rec.Records()
				for i := from; i < len(recs); i++ {
					if match(recs[i].Event) {
						return i, recs[i].At
					}
				}
				return -1, time.Time{}
			}
			wait := func(what string, from int, match func(any) bool) (int, time.Time) {
				t.Helper()
				deadline := time.Now().Add(5 * time.Second)
				for {
					if i, at := find(from, match); i >= 0 {
						return i, at
					}
					if time.Now().After(deadline) {
						t.Fatalf("no %s", what)
					}
					time.Sleep(5 * time.Millisecond)
				}
			}
			awaitedStarted := func(e any) bool { s, ok := e.(*event.ServerHeartbeatStarted); return ok && s.Awaited }
			i, _ := wait("awaited heartbeat", 0, awaitedStarted)
			if tt.fail != nil {
				time.Sleep(50 * time.Millisecond)
				tt.fail(srv)
			}
			f, failedAt := wait("failed awaited heartbeat", i, func(e any) bool { s, ok := e.(*event.ServerHeartbeatFailed); return ok && s.Awaited })
			evs := rec.Events()
			failure := evs[f].(*event.ServerHeartbeatFailed)
			wait("the server marked Unknown", f, func(e any) bool {
				c, ok := e.(*event.ServerDescriptionChanged)
				return ok && c.New.Kind == "Unknown" && c.New.Error != nil
			})
			c, _ := wait("the pool cleared", f, func(e any) bool { _, ok := e.(*event.PoolCleared); return ok })
			evs = rec.Events()
			if got := evs[c].(*event.PoolCleared).InterruptInUseConnections; got != tt.interrupt {
				t.Errorf("pool cleared with interruptInUseConnections %v after %v, want %v", got, failure.Failure, tt.interrupt)
			}
			r, retriedAt := wait("the retry", f, func(e any) bool { _, ok := e.(*event.ServerHeartbeatStarted); return ok })
			evs = rec.Events()
			retry := evs[r].(*event.ServerHeartbeatStarted)
			if retry.Awaited || retry.DriverConnectionID == failure.DriverConnectionID {
				t.Errorf("retry on connection %d (awaited %v) after the failure on %d, want a new connection's handshake", retry.DriverConnectionID, retry.Awaited, failure.DriverConnectionID)
			}
			if d := retriedAt.Sub(failedAt); d > heartbeat/2 {
				t.Errorf("the retry began %v after the failure, want at once (heartbeatFrequency is %v)", d, heartbeat)
			}
			topo.Close()
			heartbeatPairs(t, topologyEvents(rec))
		})
	}
}
