package driver

import (
	"context"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/mongotest"
)

// The prose tests of the SDAM specification (tests/README.md, "Prose
// Tests", and the test plan server-discovery-and-monitoring-tests.md)
// that need no CRUD, against mongotest through the public API.

// failHello is the failCommand fail point of the prose tests: every hello
// and legacy hello of the application appName fails with errorCode, times
// times.
func failHello(appName string, times int, data bson.D) bson.D {
	d := append(bson.D{
		{Key: "failCommands", Value: bson.A{"hello", "isMaster"}},
		{Key: "appName", Value: appName},
	}, data...)
	return bson.D{
		{Key: "configureFailPoint", Value: "failCommand"},
		{Key: "mode", Value: bson.D{{Key: "times", Value: int32(times)}}},
		{Key: "data", Value: d},
	}
}

// TestStreamingProtocolHeartbeatFrequency is Streaming protocol test 1:
// with heartbeatFrequencyMS=500 the client processes hello replies about
// every 500 ms.
func TestStreamingProtocolHeartbeatFrequency(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	rec := newSDAMRecorder()
	c := connect(t, s.URI(), &ClientOptions{URIOptions: URIOptions{HeartbeatFrequency: Ptr(500 * time.Millisecond), ServerMonitoringMode: "stream"}, Monitors: []any{rec}})
	if err := c.Ping(ctxTimeout(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	evs := rec.Events()
	before := count[*event.ServerHeartbeatSucceeded](evs)
	time.Sleep(2 * time.Second)
	evs = rec.Events()
	got := count[*event.ServerHeartbeatSucceeded](evs) - before
	if got < 3 || got > 6 {
		t.Fatalf("%d hello replies in 2 s with heartbeatFrequencyMS=500, want about 4", got)
	}
	if !c.Topology().Streaming {
		t.Fatal("the client is not streaming")
	}
}

// TestRTTContinuouslyUpdated is RTT test 1: in the streaming protocol the
// RTT monitor keeps measuring, so a server that becomes slow shows it in
// its RTT although its description does not change otherwise.
func TestRTTContinuouslyUpdated(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	rec := newSDAMRecorder()
	c := connect(t, s.URI(), &ClientOptions{URIOptions: URIOptions{HeartbeatFrequency: Ptr(500 * time.Millisecond), AppName: "streamingRttTest", ServerMonitoringMode: "stream"},
		Monitors: []any{rec}})
	if err := c.Ping(ctxTimeout(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	// Long enough for several heartbeats (the prose test sleeps 2 s).
	time.Sleep(time.Second)
	evs := rec.Events()
	changed := 0
	for _, e := range evs {
		if e, ok := e.(*event.ServerDescriptionChanged); ok && e.New.Kind != "Unknown" {
			changed++
			if e.New.RoundTripTime <= 0 {
				t.Errorf("ServerDescriptionChanged to %s with RTT %v", e.New.Kind, e.New.RoundTripTime)
			}
		}
	}
	if changed == 0 {
		t.Fatal("no ServerDescriptionChanged event")
	}
	if err := s.SetFailPoint(failHello("streamingRttTest", 1000, bson.D{
		{Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: int32(500)},
	})); err != nil {
		t.Fatal(err)
	}
	defer s.ClearFailPoints()
	deadline := time.Now().Add(10 * time.Second)
	for {
		rtt := c.Topology().Servers[0].RoundTripTime
		if rtt > 250*time.Millisecond {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("RTT still %v after 10 s of 500 ms hellos, want over 250 ms", rtt)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sharedLog is the shared array of Heartbeat test 1: the mock server and
// the event monitor append to it.
type sharedLog struct {
	mu  sync.Mutex
	log []string
}

func (l *sharedLog) add(s string) {
	l.mu.Lock()
	l.log = append(l.log, s)
	l.mu.Unlock()
}

func (l *sharedLog) TopologyEvent(_ context.Context, e event.TopologyEvent) {
	switch e.(type) {
	case *event.ServerHeartbeatStarted:
		l.add("serverHeartbeatStartedEvent")
	case *event.ServerHeartbeatFailed:
		l.add("serverHeartbeatFailedEvent")
	}
}

// TestHeartbeatStartedBeforeSocketCreated is Heartbeat test 1:
// ServerHeartbeatStartedEvent is emitted before the monitoring socket is
// created.
func TestHeartbeatStartedBeforeSocketCreated(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	events := &sharedLog{}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			events.add("client connected")
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer nc.Close()
				buf := make([]byte, 1024)
				if n, _ := nc.Read(buf); n > 0 {
					events.add("client hello received")
				}
			}()
		}
	}()
	defer wg.Wait()
	defer ln.Close()
	c := connect(t, "mongodb://"+ln.Addr().String(), &ClientOptions{URIOptions: URIOptions{ServerSelectionTimeout: Ptr(500 * time.Millisecond)}, Monitors: []any{events}})
	if err := c.Ping(ctxTimeout(t, 5*time.Second)); err == nil {
		t.Fatal("Ping succeeded against a server that hangs up")
	}
	c.Disconnect(context.Background())
	events.mu.Lock()
	got := slices.Clone(events.log)
	events.mu.Unlock()
	want := []string{"serverHeartbeatStartedEvent", "client connected", "client hello received", "serverHeartbeatFailedEvent"}
	if len(got) < 4 || !slices.Equal(got[:4], want) {
		t.Fatalf("events %q, want them to begin with %q", got, want)
	}
}

// TestMonitorsSleepAtLeastMinHeartbeatFrequencyBetweenChecks is the test
// plan's "Monitors sleep at least minHeartbeatFrequencyMS between checks":
// five failed checks, requested by a waiting selection, take 2 to 3.5 s.
func TestMonitorsSleepAtLeastMinHeartbeatFrequencyBetweenChecks(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	const app = "SDAMMinHeartbeatFrequencyTest"
	if err := s.SetFailPoint(failHello(app, 5, bson.D{{Key: "errorCode", Value: int32(1234)}})); err != nil {
		t.Fatal(err)
	}
	c := connect(t, s.URI(), &ClientOptions{URIOptions: URIOptions{DirectConnection: Ptr(true), AppName: app, ServerSelectionTimeout: Ptr(5 * time.Second)}})
	start := time.Now()
	if err := c.Ping(ctxTimeout(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 2*time.Second || d > 3500*time.Millisecond {
		t.Fatalf("ping took %v, want 2 s to 3.5 s (five failed checks 500 ms apart)", d)
	}
}

// TestConnectionPoolManagement is the test plan's "Connection Pool
// Management": the monitor marks the pool ready after its first successful
// check, clears it on a failed check, and marks it ready again after the
// next success.
func TestConnectionPoolManagement(t *testing.T) {
	for _, mode := range []string{"stream", "poll"} {
		t.Run(mode, func(t *testing.T) {
			s := mongotest.NewServer(t, mongotest.Options{})
			const app = "SDAMPoolManagementTest"
			rec := newSDAMRecorder()
			connect(t, s.URI(), &ClientOptions{URIOptions: URIOptions{DirectConnection: Ptr(true), AppName: app, HeartbeatFrequency: Ptr(500 * time.Millisecond), ServerMonitoringMode: mode},
				Monitors: []any{rec}})
			// after reports whether an event of type B follows one of
			// type A, from index from on; it returns the index past B.
			after := func(evs []any, from int, isA, isB func(any) bool) (int, bool) {
				seenA := false
				for i := from; i < len(evs); i++ {
					switch {
					case !seenA && isA(evs[i]):
						seenA = true
					case seenA && isB(evs[i]):
						return i + 1, true
					}
				}
				return 0, false
			}
			succeeded := func(e any) bool { _, ok := e.(*event.ServerHeartbeatSucceeded); return ok }
			failed := func(e any) bool { _, ok := e.(*event.ServerHeartbeatFailed); return ok }
			ready := func(e any) bool { _, ok := e.(*event.PoolReady); return ok }
			cleared := func(e any) bool { _, ok := e.(*event.PoolCleared); return ok }

			var mark int
			waitEvents(t, rec, 5*time.Second, "PoolReady after the first ServerHeartbeatSucceeded", func(evs []any) bool {
				var ok bool
				mark, ok = after(evs, 0, succeeded, ready)
				return ok
			})
			if evs := rec.Events(); slices.IndexFunc(evs, ready) < slices.IndexFunc(evs, succeeded) {
				t.Fatal("PoolReady before the first ServerHeartbeatSucceeded")
			}
			if err := s.SetFailPoint(failHello(app, 2, bson.D{{Key: "errorCode", Value: int32(1234)}})); err != nil {
				t.Fatal(err)
			}
			defer s.ClearFailPoints()
			waitEvents(t, rec, 5*time.Second, "ServerHeartbeatFailed then PoolCleared", func(evs []any) bool {
				var ok bool
				var m int
				if m, ok = after(evs, mark, failed, cleared); ok {
					mark = m
				}
				return ok
			})
			waitEvents(t, rec, 5*time.Second, "ServerHeartbeatSucceeded then PoolReady", func(evs []any) bool {
				_, ok := after(evs, mark, succeeded, ready)
				return ok
			})
		})
	}
}
