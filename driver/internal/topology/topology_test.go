package topology

import (
	"context"
	"errors"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/conn"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
	"github.com/mongoscope/mongoscope/driver/internal/selection"
	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
	"github.com/mongoscope/mongoscope/mongotest"
)

// topologyEvents returns the topology events rec has recorded, oldest
// first.
func topologyEvents(rec *eventtest.Recorder) []event.TopologyEvent {
	return eventtest.Of[event.TopologyEvent](rec)
}

func connConfig(addr string) conn.Config { return conn.Config{Address: addr} }

func newTopology(t *testing.T, cfg Config) *Topology {
	t.Helper()
	if cfg.ConnConfig == nil {
		cfg.ConnConfig = connConfig
	}
	topo, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := topo.Connect(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(topo.Close)
	return topo
}

// waitFor waits, on the topology's change notifications, until ok holds.
func waitFor(t *testing.T, topo *Topology, what string, ok func(description.TopologyDescription) bool) description.TopologyDescription {
	t.Helper()
	deadline := time.NewTimer(15 * time.Second)
	defer deadline.Stop()
	for {
		_, changed := topo.Current()
		d := topo.Description()
		if ok(d) {
			return d
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("timed out waiting for %s; topology: %+v", what, d)
		}
	}
}

func hasPrimary(addr string) func(description.TopologyDescription) bool {
	return func(d description.TopologyDescription) bool {
		if d.Type != description.ReplicaSetWithPrimary {
			return false
		}
		s, ok := d.Server(addr)
		return ok && s.Type == description.RSPrimary
	}
}

func TestConfig(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		field string
	}{
		{"no conn config", Config{Seeds: []string{"a"}}, "ConnConfig"},
		{"negative heartbeat", Config{Seeds: []string{"a"}, ConnConfig: connConfig, HeartbeatFrequency: -1}, "HeartbeatFrequency"},
		{"negative min heartbeat", Config{Seeds: []string{"a"}, ConnConfig: connConfig, MinHeartbeatFrequency: -1}, "MinHeartbeatFrequency"},
		{"bad mode", Config{Seeds: []string{"a"}, ConnConfig: connConfig, Mode: "sometimes"}, "Mode"},
		{"direct with two seeds", Config{Seeds: []string{"a", "b"}, ConnConfig: connConfig, DirectConnection: true}, "DirectConnection"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			var ce *ConfigError
			var de *description.ConfigError
			switch {
			case errors.As(err, &ce):
				if ce.Field != tt.field {
					t.Fatalf("field %q, want %q (%v)", ce.Field, tt.field, err)
				}
			case errors.As(err, &de):
				if de.Field != tt.field {
					t.Fatalf("field %q, want %q (%v)", de.Field, tt.field, err)
				}
			default:
				t.Fatalf("err = %v, want a config error for %s", err, tt.field)
			}
		})
	}

	topo, err := New(Config{Seeds: []string{"a"}, ConnConfig: connConfig})
	if err != nil {
		t.Fatal(err)
	}
	if topo.cfg.HeartbeatFrequency != DefaultHeartbeatFrequency || topo.cfg.MinHeartbeatFrequency != DefaultMinHeartbeatFrequency || topo.cfg.ConnectTimeout != conn.DefaultConnectTimeout {
		t.Fatalf("defaults not applied: %+v", topo.cfg)
	}
	topo.Close() // never connected: no events, no goroutines
	// A negative ConnectTimeout is connectTimeoutMS=0: no limit for the
	// monitors, while SRV rescans keep a bound.
	if nt, err := New(Config{Seeds: []string{"a"}, ConnConfig: connConfig, ConnectTimeout: -time.Second}); err != nil {
		t.Fatal(err)
	} else if nt.cfg.ConnectTimeout != NoTimeout || nt.cfg.monitorTimeout() != 0 || nt.cfg.awaitTimeout() != 0 || nt.cfg.lookupTimeout() != conn.DefaultConnectTimeout {
		t.Fatalf("NoTimeout resolved to connect %v, monitor %v, await %v, lookup %v", nt.cfg.ConnectTimeout, nt.cfg.monitorTimeout(), nt.cfg.awaitTimeout(), nt.cfg.lookupTimeout())
	}
	if topo.cfg.awaitTimeout() != conn.DefaultConnectTimeout+DefaultHeartbeatFrequency {
		t.Fatalf("await timeout %v, want connectTimeout + heartbeatFrequency", topo.cfg.awaitTimeout())
	}
	if err := topo.Connect(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Connect after Close = %v, want ErrClosed", err)
	}
}

func TestMonitoringMode(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	tests := []struct {
		mode   MonitoringMode
		getenv func(string) string
		stream bool
	}{
		{"", env(), true},
		{ModeAuto, env(), true},
		{ModeAuto, env("AWS_EXECUTION_ENV", "AWS_Lambda_java8"), false},
		{ModeAuto, env("AWS_EXECUTION_ENV", "EC2"), true},
		{ModeAuto, env("AWS_LAMBDA_RUNTIME_API", "127.0.0.1:9001"), false},
		{ModeAuto, env("FUNCTIONS_WORKER_RUNTIME", "node"), false},
		{ModeAuto, env("K_SERVICE", "svc"), false},
		{ModeAuto, env("FUNCTION_NAME", "fn"), false},
		{ModeAuto, env("VERCEL", "1"), false},
		{ModeStream, env("VERCEL", "1"), true},
		{ModePoll, env(), false},
	}
	for i, tt := range tests {
		topo, err := New(Config{Seeds: []string{"a"}, ConnConfig: connConfig, Mode: tt.mode, Getenv: tt.getenv})
		if err != nil {
			t.Fatal(err)
		}
		if topo.Streaming() != tt.stream {
			t.Errorf("case %d, mode %q: streaming = %v, want %v", i, tt.mode, topo.Streaming(), tt.stream)
		}
	}
}

func TestDiscoverStandalone(t *testing.T) {
	for _, mode := range []MonitoringMode{ModeStream, ModePoll} {
		t.Run(string(mode), func(t *testing.T) {
			srv := mongotest.NewServer(t, mongotest.Options{})
			rec := &eventtest.Recorder{}
			topo := newTopology(t, Config{Seeds: []string{srv.Addr()}, Mode: mode, HeartbeatFrequency: 500 * time.Millisecond, Events: event.NewDispatcher(rec)})
			d := waitFor(t, topo, "a standalone", func(d description.TopologyDescription) bool {
				return d.Type == description.Single && len(d.Servers) == 1 && d.Servers[0].Type == description.Standalone
			})
			if d.Servers[0].RoundTripTime <= 0 {
				t.Errorf("RTT = %v, want > 0", d.Servers[0].RoundTripTime)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			s, err := topo.Select(ctx, selection.Write())
			if err != nil {
				t.Fatal(err)
			}
			if s.Address() != description.NormalizeAddress(srv.Addr()) || s.OperationCount() != 1 {
				t.Fatalf("selected %s with %d operations", s.Address(), s.OperationCount())
			}
			if n := topo.OperationCount(s.Address()); n != 1 {
				t.Fatalf("OperationCount shows %d operations, want 1", n)
			}
			s.EndOperation()
			if got := s.Pool().Stats().State; got != "ready" {
				t.Fatalf("pool state %q, want ready", got)
			}
			pc, err := s.Pool().CheckOut(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Pool().CheckIn(ctx, pc); err != nil {
				t.Fatal(err)
			}
			// Wait for later heartbeats to see the protocol in use, and
			// for a second RTT sample (from the RTT monitor when
			// streaming, from the polls otherwise).
			time.Sleep(1200 * time.Millisecond)
			if min := topo.Description().Servers[0].MinRoundTripTime; min <= 0 {
				t.Errorf("MinRoundTripTime = %v after several heartbeats, want > 0", min)
			}
			topo.Close()
			var opening, closed, started, awaited int
			for _, e := range topologyEvents(rec) {
				switch e := e.(type) {
				case *event.TopologyOpening:
					opening++
				case *event.TopologyClosed:
					closed++
				case *event.ServerHeartbeatStarted:
					started++
					if e.Awaited {
						awaited++
					}
				}
			}
			if opening != 1 || closed != 1 || started == 0 {
				t.Fatalf("opening %d, closed %d, heartbeats %d", opening, closed, started)
			}
			if (awaited > 0) != (mode == ModeStream) {
				t.Fatalf("mode %s: %d of %d heartbeats awaited", mode, awaited, started)
			}
		})
	}
}

func TestDiscoverReplicaSet(t *testing.T) {
	for _, mode := range []MonitoringMode{ModeStream, ModePoll} {
		t.Run(string(mode), func(t *testing.T) {
			rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{})
			rec := &eventtest.Recorder{}
			seed := rs.Members()[1].Addr() // a secondary: discovery must find the rest
			topo := newTopology(t, Config{Seeds: []string{seed}, SetName: rs.Name(), Mode: mode, HeartbeatFrequency: 500 * time.Millisecond, Events: event.NewDispatcher(rec)})
			primary := description.NormalizeAddress(rs.Members()[0].Addr())
			d := waitFor(t, topo, "the primary", hasPrimary(primary))
			d = waitFor(t, topo, "three members", func(d description.TopologyDescription) bool {
				n := 0
				for _, s := range d.Servers {
					if s.Type == description.RSPrimary || s.Type == description.RSSecondary {
						n++
					}
				}
				return n == 3
			})
			if d.SetName != rs.Name() {
				t.Fatalf("set name %q", d.SetName)
			}
			for _, s := range d.Servers {
				srv, ok := topo.Server(s.Address)
				if !ok || srv.Pool().Stats().State != "ready" {
					t.Fatalf("server %s: monitored %v", s.Address, ok)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			s, err := topo.Select(ctx, selection.Read(selection.ReadPref{Mode: selection.Secondary}))
			if err != nil {
				t.Fatal(err)
			}
			if s.Address() == primary {
				t.Fatalf("secondary read selected the primary")
			}
			s.EndOperation()
			opening := 0
			for _, e := range topologyEvents(rec) {
				if _, ok := e.(*event.ServerOpening); ok {
					opening++
				}
			}
			if opening != 3 {
				t.Fatalf("%d ServerOpening events, want 3", opening)
			}
		})
	}
}

// failoverLag steps the primary down and returns the time from the
// election to the topology showing the new primary.
func failoverLag(t *testing.T, mode MonitoringMode, heartbeat time.Duration) time.Duration {
	t.Helper()
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{})
	topo := newTopology(t, Config{Seeds: []string{rs.Members()[0].Addr()}, SetName: rs.Name(), Mode: mode, HeartbeatFrequency: heartbeat})
	waitFor(t, topo, "the first primary", hasPrimary(description.NormalizeAddress(rs.Members()[0].Addr())))
	waitFor(t, topo, "three members", func(d description.TopologyDescription) bool {
		for _, s := range d.Servers {
			if s.Type != description.RSPrimary && s.Type != description.RSSecondary {
				return false
			}
		}
		return len(d.Servers) == 3
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	seq := rs.LastEvent()
	if err := rs.StepDown(ctx); err != nil {
		t.Fatal(err)
	}
	ev, err := rs.WaitFor(ctx, mongotest.EventElected, seq)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, topo, "the new primary", hasPrimary(description.NormalizeAddress(ev.Addr)))
	lag := time.Since(ev.Time)
	topo.Close()
	rs.Close()
	return lag
}

func measureFailover(t *testing.T, runs int) {
	for _, c := range []struct {
		mode      MonitoringMode
		heartbeat time.Duration
	}{{ModeStream, DefaultHeartbeatFrequency}, {ModePoll, 500 * time.Millisecond}} {
		lags := make([]time.Duration, runs)
		for i := range lags {
			lags[i] = failoverLag(t, c.mode, c.heartbeat)
		}
		slices.Sort(lags)
		t.Logf("failover detection, %s mode, heartbeat %v, %d runs: median %v, max %v", c.mode, c.heartbeat, runs, lags[runs/2], lags[runs-1])
		if c.mode == ModeStream && lags[runs/2] >= c.heartbeat {
			t.Errorf("streaming median %v is no better than a %v poll", lags[runs/2], c.heartbeat)
		}
		if c.mode == ModePoll && lags[runs-1] > 2*c.heartbeat+time.Second {
			t.Errorf("polling max %v exceeds two heartbeats", lags[runs-1])
		}
	}
}

func TestFailoverDetection(t *testing.T) {
	if testing.Short() {
		t.Skip("measures failovers for several seconds")
	}
	measureFailover(t, 5)
}

// TestFailoverDetectionLong is the 20-run measurement for the issue's
// note; set MONGOSCOPE_FAILOVER_RUNS=20 to run it.
func TestFailoverDetectionLong(t *testing.T) {
	runs, err := strconv.Atoi(os.Getenv("MONGOSCOPE_FAILOVER_RUNS"))
	if err != nil || runs < 1 {
		t.Skip("set MONGOSCOPE_FAILOVER_RUNS to a number of runs")
	}
	measureFailover(t, runs)
}

func TestApplicationErrors(t *testing.T) {
	tests := []struct {
		name    string
		err     func(t *testing.T, srv *mongotest.Server, c *conn.Conn) error
		stale   bool
		cleared bool
		unknown bool
	}{
		{"network error", func(t *testing.T, srv *mongotest.Server, c *conn.Conn) error {
			if err := srv.SetFailPoint(bson.D{{Key: "configureFailPoint", Value: "failCommand"},
				{Key: "mode", Value: bson.D{{Key: "times", Value: 1}}},
				{Key: "data", Value: bson.D{{Key: "failCommands", Value: bson.A{"ping"}}, {Key: "closeConnection", Value: true}}}}); err != nil {
				t.Fatal(err)
			}
			_, err := c.RunCommand(context.Background(), "admin", ping())
			var ne *conn.NetworkError
			if !errors.As(err, &ne) {
				t.Fatalf("ping got %v, want a network error", err)
			}
			return err
		}, false, true, true},
		{"shutdown in progress", func(t *testing.T, srv *mongotest.Server, c *conn.Conn) error {
			return &conn.CommandError{Code: 91, Message: "shutting down"}
		}, false, true, true},
		{"not writable primary", func(t *testing.T, srv *mongotest.Server, c *conn.Conn) error {
			return &conn.CommandError{Code: 10107, Message: "not primary"}
		}, false, false, true},
		{"ordinary command error", func(t *testing.T, srv *mongotest.Server, c *conn.Conn) error {
			return &conn.CommandError{Code: 2, Message: "bad value"}
		}, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := mongotest.NewServer(t, mongotest.Options{Topology: mongotest.Topology{Role: mongotest.RolePrimary, SetName: "rs0"}})
			rec := &eventtest.Recorder{}
			topo := newTopology(t, Config{Seeds: []string{srv.Addr()}, DirectConnection: true, Mode: ModeStream, HeartbeatFrequency: 500 * time.Millisecond, Events: event.NewDispatcher(rec)})
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
			gen := s.Pool().Stats().Generation
			mark := len(topologyEvents(rec))
			opErr := tt.err(t, srv, pc.Conn())
			out := topo.HandleConnError(pc, s.Address(), opErr, description.PhaseOperation)
			if got := s.Pool().Stats().Generation > gen; got != tt.cleared {
				t.Fatalf("pool cleared = %v, want %v (outcome %+v)", got, tt.cleared, out)
			}
			if out.MarkUnknown != tt.unknown {
				t.Fatalf("marked Unknown = %v, want %v", out.MarkUnknown, tt.unknown)
			}
			if tt.unknown {
				countUnknown := func() int {
					n := 0
					for _, e := range topologyEvents(rec)[mark:] {
						if c, ok := e.(*event.ServerDescriptionChanged); ok && c.New.Kind == "Unknown" {
							n++
						}
					}
					return n
				}
				if countUnknown() == 0 {
					t.Fatal("no ServerDescriptionChanged to Unknown")
				}
				// The monitor finds the server again.
				waitFor(t, topo, "rediscovery", func(d description.TopologyDescription) bool {
					return len(d.Servers) == 1 && d.Servers[0].Type == description.RSPrimary
				})
				// One clear only: the monitor check the application
				// cancelled reports nothing of its own.
				want := gen
				if tt.cleared {
					want++
				}
				if got := s.Pool().Stats().Generation; got != want {
					t.Fatalf("generation %d after rediscovery, want %d", got, want)
				}
				if n := countUnknown(); n != 1 {
					t.Fatalf("%d changes to Unknown, want 1", n)
				}
			}
			s.Pool().CheckIn(ctx, pc)
			// An error from the old generation is stale now.
			if tt.cleared {
				again := topo.HandleError(s.Address(), gen, &conn.CommandError{Code: 91}, description.PhaseOperation)
				if !again.Stale {
					t.Fatalf("error from generation %d after a clear: %+v, want stale", gen, again)
				}
			}
		})
	}
}

func ping() bson.Raw {
	start, dst := bson.AppendDocumentStart(nil)
	dst = bson.AppendInt32Element(dst, "ping", 1)
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst
}

// settled waits up to a second for goroutines that Close already released
// (wg.Done has run) to return, then lists those still running our code.
func settled() []string {
	deadline := time.Now().Add(time.Second)
	for {
		g := leaked()
		if len(g) == 0 || time.Now().After(deadline) {
			return g
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// leaked lists goroutines running this package's or the pool's code.
func leaked() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "topology.(*monitor)") || strings.Contains(g, "topology.(*Topology)") || strings.Contains(g, "pool.(*Pool[...])") {
			out = append(out, g)
		}
	}
	return out
}

func TestCloseLeavesNoGoroutines(t *testing.T) {
	for _, mode := range []MonitoringMode{ModeStream, ModePoll} {
		t.Run(string(mode), func(t *testing.T) {
			rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{})
			topo, err := New(Config{Seeds: []string{rs.Members()[0].Addr()}, SetName: rs.Name(), Mode: mode, ConnConfig: connConfig, HeartbeatFrequency: 200 * time.Millisecond, MinHeartbeatFrequency: 50 * time.Millisecond, Pool: PoolOptions{MinPoolSize: 2}})
			if err != nil {
				t.Fatal(err)
			}
			if err := topo.Connect(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, topo, "the primary", hasPrimary(description.NormalizeAddress(rs.Members()[0].Addr())))
			time.Sleep(500 * time.Millisecond) // let RTT monitors and population run
			running := strings.Join(leaked(), "\n")
			if !strings.Contains(running, "topology.(*monitor).run") || !strings.Contains(running, "pool.(*Pool[...])") {
				t.Fatal("no monitor or pool goroutines found while connected: the leak check would prove nothing")
			}
			if hasRTT := strings.Contains(running, "topology.(*monitor).runRTT"); hasRTT != (mode == ModeStream) {
				t.Fatalf("mode %s: RTT monitor running = %v", mode, hasRTT)
			}
			topo.Close()
			topo.Close()
			if g := settled(); len(g) > 0 {
				t.Fatalf("%d goroutines left after Close:\n%s", len(g), strings.Join(g, "\n\n"))
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			if _, err := topo.Select(ctx, selection.Write()); !errors.Is(err, ErrClosed) {
				t.Fatalf("Select after Close = %v, want ErrClosed", err)
			}
		})
	}
}

// topologyReader is a pool monitor that reads the topology through every
// reader method from inside PoolReady and PoolCleared, which the topology
// emits with its lock held, and notes what Description said of the server.
type topologyReader struct {
	topo *Topology
	mu   sync.Mutex
	seen []string
}

func (r *topologyReader) PoolEvent(_ context.Context, e event.PoolEvent) {
	var name string
	switch e.(type) {
	case *event.PoolReady:
		name = "Ready"
	case *event.PoolCleared:
		name = "Cleared"
	default:
		return
	}
	addr := e.PoolAddress()
	d := r.topo.Description()
	sd, _ := d.Server(addr)
	s, ok := r.topo.Server(addr)
	if ok {
		_ = s.Description()
		_ = s.Pool().Stats()
	}
	cur, _ := r.topo.Current()
	_ = cur
	_ = r.topo.OperationCount(addr)
	r.topo.RequestImmediateCheck()
	r.mu.Lock()
	r.seen = append(r.seen, name+":"+sd.Type.String())
	r.mu.Unlock()
}

// The topology's readers take no lock, so a monitor may call them from
// events the topology sends while it holds its own (a pool's PoolReady in
// an update, PoolCleared in the error rules) without deadlocking it. The
// pool is ready before the server is published as known (no selection
// finds a known server with a paused pool), and the clear is seen after
// the server was marked Unknown, as the error rules order them.
func TestReadersFromPoolEvents(t *testing.T) {
	const addr = "a.example.com:27017"
	r := &topologyReader{}
	topo, err := New(Config{Seeds: []string{addr}, ConnConfig: connConfig, Events: event.NewDispatcher(r)})
	if err != nil {
		t.Fatal(err)
	}
	r.topo = topo
	topo.noMonitors = true
	if err := topo.Connect(); err != nil {
		t.Fatal(err)
	}
	s, ok := topo.Server(addr)
	if !ok {
		t.Fatalf("no server %s", addr)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		topo.apply(s, description.ServerDescription{Address: addr, Type: description.Standalone, MaxWireVersion: description.MaxSupportedWireVersion, LastUpdateTime: time.Now()})
		topo.HandleError(addr, s.Pool().Stats().Generation, &conn.NetworkError{Op: "read", Address: addr, Err: errors.New("reset")}, description.PhaseOperation)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		buf := make([]byte, 1<<20)
		t.Log(string(buf[:runtime.Stack(buf, true)]))
		// The topology is stuck; closing it would hang too.
		t.Fatal("deadlock: a pool monitor reading the topology blocked it")
	}
	topo.Close()
	r.mu.Lock()
	got := strings.Join(r.seen, " ")
	r.mu.Unlock()
	if want := "Ready:Unknown Cleared:Unknown"; got != want {
		t.Errorf("the monitor saw %q, want %q", got, want)
	}
}
