package topology

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/conn"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
	"github.com/mongoscope/mongoscope/driver/internal/handshake"
	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
	"github.com/mongoscope/mongoscope/mongotest"
)

// deadlineDialer records the deadline of every dial's context and every
// deadline set on the connections it opens, to show which timeouts the
// monitors use.
type deadlineDialer struct {
	mu    sync.Mutex
	dials []time.Duration // 0: no deadline
	sets  []time.Duration // deadline minus the time it was set; 0: none
}

func (d *deadlineDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var left time.Duration
	if dl, ok := ctx.Deadline(); ok {
		left = time.Until(dl)
	}
	d.mu.Lock()
	d.dials = append(d.dials, left)
	d.mu.Unlock()
	nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &deadlineConn{Conn: nc, d: d}, nil
}

type deadlineConn struct {
	net.Conn
	d *deadlineDialer
}

// wakeUp is the past deadline conn sets to interrupt I/O on cancellation.
var wakeUp = time.Unix(1, 0)

func (c *deadlineConn) SetDeadline(t time.Time) error {
	if !t.Equal(wakeUp) {
		var left time.Duration
		if !t.IsZero() {
			left = max(time.Until(t), time.Nanosecond)
		}
		c.d.mu.Lock()
		c.d.sets = append(c.d.sets, left)
		c.d.mu.Unlock()
	}
	return c.Conn.SetDeadline(t)
}

func (d *deadlineDialer) snapshot() (dials, sets []time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]time.Duration(nil), d.dials...), append([]time.Duration(nil), d.sets...)
}

// TestMonitorTimeouts: monitoring and RTT connections connect within
// connectTimeoutMS and read awaited replies within connectTimeoutMS +
// heartbeatFrequencyMS; the connections' socketTimeoutMS never applies to
// them, and connectTimeoutMS=0 (NoTimeout) leaves them without any limit.
func TestMonitorTimeouts(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	const socketTimeout = 50 * time.Millisecond
	for _, mode := range []MonitoringMode{ModeStream, ModePoll} {
		for _, tc := range []struct {
			name    string
			connect time.Duration
		}{{"connectTimeout 1s", time.Second}, {"connectTimeout 0", NoTimeout}} {
			t.Run(string(mode)+"/"+tc.name, func(t *testing.T) {
				d := &deadlineDialer{}
				rec := &eventtest.Recorder{}
				cc := func(addr string) conn.Config {
					return conn.Config{Address: addr, SocketTimeout: socketTimeout, Dialer: d}
				}
				topo := newTopology(t, Config{Seeds: []string{srv.Addr()}, ConnConfig: cc, Mode: mode,
					HeartbeatFrequency: 300 * time.Millisecond, ConnectTimeout: tc.connect, Events: event.NewDispatcher(rec)})
				// Long enough for awaited hellos that outlast the socket
				// timeout, and for the RTT connection.
				time.Sleep(900 * time.Millisecond)
				// The check Close interrupts fails, as it must (every
				// started heartbeat has its pair): count those before.
				evs := topologyEvents(rec)
				topo.Close()
				if n := countEvents[*event.ServerHeartbeatFailed](evs); n > 0 {
					t.Fatalf("%d heartbeats failed", n)
				}
				if n := countEvents[*event.ServerHeartbeatSucceeded](evs); n < 2 {
					t.Fatalf("%d heartbeats succeeded, want at least 2", n)
				}
				dials, sets := d.snapshot()
				if mode == ModeStream && len(dials) < 2 {
					t.Fatalf("%d dials, want the monitoring and the RTT connection", len(dials))
				}
				for _, left := range dials {
					if tc.connect == NoTimeout && left != 0 {
						t.Errorf("dial with a deadline %v away, want none", left)
					}
					if tc.connect > 0 && (left <= 0 || left > tc.connect) {
						t.Errorf("dial with a deadline %v away, want at most %v", left, tc.connect)
					}
				}
				for _, left := range sets {
					if tc.connect == NoTimeout && left != 0 {
						t.Errorf("read or write deadline %v away, want none", left)
					}
					if tc.connect > 0 && left != 0 && left < tc.connect/2 {
						t.Errorf("read or write deadline %v away: socketTimeout (%v), not connectTimeout", left, socketTimeout)
					}
				}
			})
		}
	}
}

// silentServer accepts connections and never answers, until the test
// ends.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return ln.Addr().String()
}

// heartbeatRests returns the time between each failed check's end and the
// start of the next check, and the number of checks started.
func heartbeatRests(rec *eventtest.Recorder) (rests []time.Duration, started int) {
	var end time.Time
	for _, r := range rec.Records() {
		switch r.Event.(type) {
		case *event.ServerHeartbeatStarted:
			started++
			if !end.IsZero() {
				rests = append(rests, r.At.Sub(end))
			}
		case *event.ServerHeartbeatFailed, *event.ServerHeartbeatSucceeded:
			end = r.At
		}
	}
	return rests, started
}

// TestHeartbeatFrequencyCountsFromCheckEnd: heartbeatFrequencyMS is the
// time from the end of one check to the start of the next. Against a
// server that never answers, each check lasts connectTimeout; the monitor
// must still rest a full heartbeatFrequency after it, not start the next
// check heartbeatFrequency after the last one started.
func TestHeartbeatFrequencyCountsFromCheckEnd(t *testing.T) {
	addr := silentServer(t)
	const (
		connect   = 400 * time.Millisecond
		heartbeat = 500 * time.Millisecond
	)
	for _, mode := range []MonitoringMode{ModeStream, ModePoll} {
		t.Run(string(mode), func(t *testing.T) {
			rec := &eventtest.Recorder{}
			topo := newTopology(t, Config{Seeds: []string{addr}, Mode: mode, HeartbeatFrequency: heartbeat,
				ConnectTimeout: connect, Events: event.NewDispatcher(rec)})
			time.Sleep(2 * time.Second)
			topo.Close()
			rests, started := heartbeatRests(rec)
			if len(rests) == 0 {
				t.Fatal("no second check")
			}
			for _, d := range rests {
				if d < heartbeat*9/10 {
					t.Errorf("a check started %v after the last one ended, want heartbeatFrequency %v", d, heartbeat)
				}
			}
			// Checks start at 0, 0.9 s and 1.8 s at the earliest.
			if started > 3 {
				t.Errorf("%d checks in 2 s, want at most 3", started)
			}
		})
	}
}

// TestMinHeartbeatFrequencyCountsFromCheckEnd: a requested check waits
// until minHeartbeatFrequency after the end of the previous check.
func TestMinHeartbeatFrequencyCountsFromCheckEnd(t *testing.T) {
	addr := silentServer(t)
	const (
		connect = 300 * time.Millisecond
		minFreq = 400 * time.Millisecond
	)
	rec := &eventtest.Recorder{}
	topo := newTopology(t, Config{Seeds: []string{addr}, Mode: ModePoll, HeartbeatFrequency: time.Hour,
		MinHeartbeatFrequency: minFreq, ConnectTimeout: connect, Events: event.NewDispatcher(rec)})
	stop := time.Now().Add(1800 * time.Millisecond)
	for time.Now().Before(stop) {
		topo.RequestImmediateCheck()
		time.Sleep(10 * time.Millisecond)
	}
	topo.Close()
	rests, started := heartbeatRests(rec)
	if len(rests) < 2 {
		t.Fatalf("%d checks in 1.8 s of requests, want at least 3", started)
	}
	for _, d := range rests {
		if d < minFreq*9/10 {
			t.Errorf("a requested check started %v after the last one ended, want minHeartbeatFrequency %v", d, minFreq)
		}
	}
}

// scriptedHello answers hello and legacy hello as a standalone that
// supports the awaitable hello but never streams: an awaitable request
// waits wait, then gets a reply without moreToCome. helloOK false answers
// as a server that does not know the hello command's helloOk.
func scriptedHello(srv *mongotest.Server, wait time.Duration, helloOK bool) {
	pid := bson.NewObjectID()
	h := func(ctx context.Context, _ *mongotest.Server, r *mongotest.Request) (bson.Raw, error) {
		if _, err := r.Body.LookupErr("maxAwaitTimeMS"); err == nil {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		st, b := bson.AppendDocumentStart(nil)
		b = bson.AppendBooleanElement(b, "isWritablePrimary", true)
		b = bson.AppendBooleanElement(b, "ismaster", true)
		if helloOK {
			b = bson.AppendBooleanElement(b, "helloOk", true)
		}
		ts, b := bson.AppendDocumentElementStart(b, "topologyVersion")
		b = bson.AppendObjectIDElement(b, "processId", pid)
		b = bson.AppendInt64Element(b, "counter", 0)
		b, _ = bson.AppendDocumentEnd(b, ts)
		b = bson.AppendInt32Element(b, "maxBsonObjectSize", 16<<20)
		b = bson.AppendInt32Element(b, "maxMessageSizeBytes", 48000000)
		b = bson.AppendInt32Element(b, "maxWriteBatchSize", 100000)
		b = bson.AppendInt32Element(b, "minWireVersion", 0)
		b = bson.AppendInt32Element(b, "maxWireVersion", 21)
		b = bson.AppendInt32Element(b, "logicalSessionTimeoutMinutes", 30)
		b, _ = bson.AppendDocumentEnd(b, st)
		return b, nil
	}
	srv.Handle("hello", h)
	srv.Handle("isMaster", h)
}

// TestAwaitedReplyWithoutMoreToCome: when the server ends a stream, an
// awaited reply without moreToCome, the monitor sends the next awaitable
// hello at once instead of sleeping heartbeatFrequency.
func TestAwaitedReplyWithoutMoreToCome(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	scriptedHello(srv, 50*time.Millisecond, true)
	rec := &eventtest.Recorder{}
	topo := newTopology(t, Config{Seeds: []string{srv.Addr()}, Mode: ModeStream, HeartbeatFrequency: 5 * time.Second,
		Events: event.NewDispatcher(rec)})
	time.Sleep(time.Second)
	before := topologyEvents(rec) // the check Close interrupts fails
	topo.Close()
	awaited := 0
	for _, e := range topologyEvents(rec) {
		if e, ok := e.(*event.ServerHeartbeatSucceeded); ok && e.Awaited {
			awaited++
		}
	}
	// One every 50 ms or so; a monitor that slept heartbeatFrequency
	// after each would have one.
	if awaited < 5 {
		t.Fatalf("%d awaited replies in a second, each taking 50 ms; want the next awaitable hello at once after each", awaited)
	}
	if n := countEvents[*event.ServerHeartbeatFailed](before); n > 0 {
		t.Fatalf("%d heartbeats failed", n)
	}
}

// TestMonitoringHelloWithStableAPI: with a declared Stable API the
// monitoring and RTT hellos are the hello command, never legacy hello,
// even when the server does not announce helloOk, and carry apiVersion
// (and apiStrict, apiDeprecationErrors when set), as every command must
// under the Stable API; they carry no handshake arguments.
func TestMonitoringHelloWithStableAPI(t *testing.T) {
	yes := true
	for _, tc := range []struct {
		name     string
		scripted bool // a server that does not answer helloOk
		api      *handshake.ServerAPI
	}{
		{"helloOk server", false, &handshake.ServerAPI{Version: "1"}},
		{"no helloOk", true, &handshake.ServerAPI{Version: "1", Strict: &yes, DeprecationErrors: &yes}},
		{"no API declared", true, nil},
	} {
		for _, mode := range []MonitoringMode{ModeStream, ModePoll} {
			t.Run(tc.name+"/"+string(mode), func(t *testing.T) {
				srv := mongotest.NewServer(t, mongotest.Options{})
				if tc.scripted {
					scriptedHello(srv, 100*time.Millisecond, false)
				}
				rec := &eventtest.Recorder{}
				cc := func(addr string) conn.Config {
					return conn.Config{Address: addr, Handshake: handshake.Options{ServerAPI: tc.api}}
				}
				topo := newTopology(t, Config{Seeds: []string{srv.Addr()}, ConnConfig: cc, Mode: mode,
					HeartbeatFrequency: 200 * time.Millisecond, Events: event.NewDispatcher(rec)})
				time.Sleep(700 * time.Millisecond)
				before := topologyEvents(rec) // the check Close interrupts fails
				topo.Close()
				if n := countEvents[*event.ServerHeartbeatFailed](before); n > 0 {
					t.Fatalf("%d heartbeats failed", n)
				}
				seen := map[int64]bool{}
				checks := 0
				for _, c := range srv.Commands() {
					first := !seen[c.ConnID]
					seen[c.ConnID] = true
					if first {
						continue // the handshake
					}
					checks++
					want := "hello"
					if tc.api == nil && tc.scripted {
						want = "isMaster"
					}
					if c.Name != want {
						t.Errorf("monitoring command %s, want %s: %v", c.Name, want, c.Body)
					}
					v, err := c.Body.LookupErr("apiVersion")
					switch {
					case tc.api == nil && err == nil:
						t.Errorf("apiVersion without a declared API: %v", c.Body)
					case tc.api != nil && v.StringValue() != tc.api.Version:
						t.Errorf("monitoring hello without apiVersion %q: %v", tc.api.Version, c.Body)
					}
					if tc.api != nil && tc.api.Strict != nil {
						if b, ok := c.Body.Lookup("apiStrict").BooleanOK(); !ok || !b {
							t.Errorf("monitoring hello without apiStrict: %v", c.Body)
						}
						if b, ok := c.Body.Lookup("apiDeprecationErrors").BooleanOK(); !ok || !b {
							t.Errorf("monitoring hello without apiDeprecationErrors: %v", c.Body)
						}
					}
					for _, arg := range []string{"client", "compression", "speculativeAuthenticate", "saslSupportedMechs"} {
						if _, err := c.Body.LookupErr(arg); err == nil {
							t.Errorf("monitoring hello carries the handshake argument %s: %v", arg, c.Body)
						}
					}
				}
				if checks < 2 {
					t.Fatalf("%d monitoring hellos after the handshakes, want at least 2", checks)
				}
			})
		}
	}
}

// TestApplicationHandshakeUpdatesTopology: the hello reply of an
// application connection's handshake updates the server's description as
// a check would (Server Monitoring, "Clients update the topology from each
// handshake"), unless the pool was cleared while the connection was being
// established.
func TestApplicationHandshakeUpdatesTopology(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	rec := &eventtest.Recorder{}
	// Polling once an hour: only the handshake can bring news.
	topo := newTopology(t, Config{Seeds: []string{srv.Addr()}, Mode: ModePoll, HeartbeatFrequency: time.Hour, Events: event.NewDispatcher(rec)})
	addr := description.NormalizeAddress(srv.Addr())
	waitFor(t, topo, "a standalone", func(d description.TopologyDescription) bool {
		return d.Servers[0].Type == description.Standalone
	})
	// The server becomes a mongos.
	if err := srv.SetTopology(mongotest.Topology{Role: mongotest.RoleMongos}); err != nil {
		t.Fatal(err)
	}
	s, _ := topo.Server(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pc, err := s.Pool().CheckOut(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.Pool().CheckIn(ctx, pc)
	sd, _ := topo.Description().Server(addr)
	if sd.Type != description.Mongos {
		t.Fatalf("after an application handshake the server is %v, want the handshake's Mongos", sd.Type)
	}
	if n := eventtest.Count[*event.ServerHeartbeatStarted](rec); n != 1 {
		t.Fatalf("%d heartbeats, want only the first check's: a handshake is no heartbeat", n)
	}

	// A reply from before a clear is dropped: the connection was dialled
	// under an older generation.
	gen := s.Pool().Stats().Generation
	hello := &handshake.Reply{IsWritablePrimary: true, MaxWireVersion: 21} // a standalone again
	s.pool.Clear(nil, false)
	topo.handshakeSucceeded(s, gen, hello)
	if sd, _ := topo.Description().Server(addr); sd.Type != description.Mongos {
		t.Fatalf("a handshake from before a clear changed the description to %v", sd.Type)
	}
	topo.handshakeSucceeded(s, gen+1, hello)
	if sd, _ := topo.Description().Server(addr); sd.Type != description.Standalone {
		t.Fatalf("a current handshake did not change the description: %v", sd.Type)
	}
}
