package driver

// Connection pool (CMAP) behaviour seen through the public API, for rules
// that no CMAP spec test file covers.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/mongotest"
)

// topologyReader is a PoolMonitor that reads the client's topology snapshot
// (pool statistics included) from inside every pool event.
type topologyReader struct {
	client atomic.Pointer[Client]
	mu     sync.Mutex
	seen   []string
}

func (r *topologyReader) PoolEvent(_ context.Context, e event.PoolEvent) {
	c := r.client.Load()
	if c == nil {
		return
	}
	snap := c.Topology()
	var state string
	if len(snap.Servers) > 0 {
		state = snap.Servers[0].Pool.State
	}
	var name string
	switch e.(type) {
	case *event.PoolCleared:
		name = "Cleared"
	case *event.PoolReady:
		name = "Ready"
	default:
		return
	}
	r.mu.Lock()
	r.seen = append(r.seen, name+":"+state)
	r.mu.Unlock()
}

func (r *topologyReader) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

// A monitor may call Client.Topology from a pool event. PoolReady and
// PoolCleared used to be emitted with the pool's lock held, which
// Client.Topology takes for the pool's statistics: the monitor deadlocked
// the pool, and with it the client. The topology still sends them with its
// own lock held, which Client.Topology no longer takes.
func TestPoolMonitorMayReadTopology(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	r := &topologyReader{}
	o := &ClientOptions{Monitors: []any{r}}
	if err := o.ApplyURI(s.URI() + "?heartbeatFrequencyMS=500"); err != nil {
		t.Fatal(err)
	}
	c, err := Connect(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	r.client.Store(c)
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.Ping(ctx); err != nil {
			done <- err
			return
		}
		// A network error clears the pool; the next check marks it ready.
		if err := s.SetFailPoint(bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: bson.D{{Key: "times", Value: 1}}},
			{Key: "data", Value: bson.D{{Key: "failCommands", Value: bson.A{"ping"}}, {Key: "closeConnection", Value: true}}}}); err != nil {
			done <- err
			return
		}
		if err := c.Ping(ctx); err == nil {
			done <- errors.New("ping through closeConnection succeeded")
			return
		}
		for ctx.Err() == nil && poolOf(c, c.Topology().Servers[0].Address).State != "ready" {
			time.Sleep(10 * time.Millisecond)
		}
		done <- c.Ping(ctx)
		return
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(15 * time.Second):
		buf := make([]byte, 1<<20)
		t.Log(string(buf[:runtime.Stack(buf, true)]))
		// The client is stuck; disconnecting would hang too.
		t.Fatal("deadlock: a pool monitor calling Client.Topology blocked the client")
	}
	c.Disconnect(context.Background())
	got := strings.Join(r.take(), " ")
	if !strings.Contains(got, "Cleared:paused") || !strings.Contains(got, "Ready:ready") {
		t.Fatalf("the monitor saw %q, want a clear (pool paused) and a ready (pool ready)", got)
	}
}

// CSOT: "If timeoutMS is set, drivers MUST use min(serverSelectionTimeoutMS,
// remaining timeoutMS) ... as the timeout for server selection and
// connection checkout"; without it, "honoring ... waitQueueTimeoutMS for
// connection checkout". The only connection is busy for 600ms; a second
// operation waits for it as long as the rules allow.
func TestCheckOutTimeoutPrecedence(t *testing.T) {
	tests := []struct {
		name    string
		options string
		ok      bool          // the second operation gets the connection
		min     time.Duration // it fails no sooner than this
		max     time.Duration // nor later than this
	}{
		{"waitQueueTimeoutMS alone", "waitQueueTimeoutMS=100", false, 80 * time.Millisecond, 450 * time.Millisecond},
		{"timeoutMS wins over waitQueueTimeoutMS", "waitQueueTimeoutMS=100&timeoutMS=5000", true, 0, 0},
		{"timeoutMS bounded by serverSelectionTimeoutMS", "waitQueueTimeoutMS=5000&timeoutMS=5000&serverSelectionTimeoutMS=200", false, 150 * time.Millisecond, 500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mongotest.NewServer(t, mongotest.Options{})
			c := connect(t, s.URI()+"?maxPoolSize=1&"+tt.options, nil)
			ctx := ctxTimeout(t, 10*time.Second)
			if err := c.Ping(ctx); err != nil {
				t.Fatal(err)
			}
			s.SetFailPoint(bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: bson.D{{Key: "times", Value: 1}}},
				{Key: "data", Value: bson.D{{Key: "failCommands", Value: bson.A{"ping"}}, {Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: 600}}}})
			busy := make(chan error, 1)
			go func() { busy <- c.Ping(context.Background()) }()
			addr := c.Topology().Servers[0].Address
			for poolOf(c, addr).InUse != 1 {
				time.Sleep(time.Millisecond)
			}
			start := time.Now()
			err := c.Ping(context.Background())
			took := time.Since(start)
			if berr := <-busy; berr != nil {
				t.Fatalf("the operation holding the connection failed: %v", berr)
			}
			if tt.ok {
				if err != nil {
					t.Fatalf("second ping = %v after %v, want it to wait for the connection", err, took)
				}
				return
			}
			var we *WaitQueueTimeoutError
			if !errors.As(err, &we) || !IsTimeout(err) {
				t.Fatalf("second ping = %v (%T), want a WaitQueueTimeoutError", err, err)
			}
			if took < tt.min || took > tt.max {
				t.Fatalf("the checkout timed out after %v, want between %v and %v", took, tt.min, tt.max)
			}
		})
	}
}

// "Any operations that have their Connections interrupted in this way MUST
// fail with a retryable error. If possible, the error SHOULD be a
// PoolClearedError with the following message: Connection to <pool
// address> interrupted due to server monitor timeout". A server check that
// times out clears the pool interrupting in-use connections; the operation
// blocked on one fails at once, not when its command would have returned.
func TestInterruptedOperationFailsRetryable(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	c := connect(t, s.URI()+"?serverMonitoringMode=poll&heartbeatFrequencyMS=500&connectTimeoutMS=300", nil)
	ctx := ctxTimeout(t, 10*time.Second)
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	// Block the operation's ping and the monitor's next check for 5s.
	if err := s.SetFailPoint(bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "alwaysOn"},
		{Key: "data", Value: bson.D{{Key: "failCommands", Value: bson.A{"ping", "hello", "isMaster"}}, {Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: 5000}}}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.SetFailPoint(bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "off"}})
	})
	start := time.Now()
	err := c.Ping(ctx)
	took := time.Since(start)
	var pc *PoolClearedError
	if !errors.As(err, &pc) || !pc.Interrupted || !pc.Retryable() {
		t.Fatalf("ping on an interrupted connection = %v (%T) after %v, want a retryable PoolClearedError", err, err, took)
	}
	// The CMAP specification's message, with the address said once (by
	// the operation error around it).
	if want := "ping on " + pc.Address + ": connection interrupted due to server monitor timeout"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if want := "Connection to " + pc.Address + " interrupted due to server monitor timeout"; (&PoolClearedError{Address: pc.Address, Interrupted: true}).Error() != want {
		t.Errorf("a PoolClearedError on its own does not say %q", want)
	}
	if took > 4*time.Second {
		t.Errorf("the interrupted operation took %v: it ran until its command returned", took)
	}
}

// reentrantMonitor reads the client's topology, and renders it, from inside
// every event of its kind ("pool", "topology" or "selection"), counting
// the events it read it from by type.
type reentrantMonitor struct {
	kind   string
	client atomic.Pointer[Client]
	mu     sync.Mutex
	read   map[string]int
}

func (r *reentrantMonitor) visit(e any) {
	c := r.client.Load()
	if c == nil {
		// An event of Connect itself, before the client exists.
		return
	}
	snap := c.Topology()
	_ = snap.String()
	_ = c.Topology().String()
	name := strings.TrimPrefix(fmt.Sprintf("%T", e), "*event.")
	r.mu.Lock()
	r.read[name]++
	r.mu.Unlock()
}

func (r *reentrantMonitor) counts() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.read)
}

type poolReentrant struct{ *reentrantMonitor }

func (m poolReentrant) PoolEvent(_ context.Context, e event.PoolEvent) { m.visit(e) }

type topologyReentrant struct{ *reentrantMonitor }

func (m topologyReentrant) TopologyEvent(_ context.Context, e event.TopologyEvent) { m.visit(e) }

type selectionReentrant struct{ *reentrantMonitor }

func (m selectionReentrant) SelectionEvent(_ context.Context, e event.SelectionEvent) { m.visit(e) }

// A pool, topology or selection monitor may call Client.Topology (and
// render it) from inside any event: during discovery, a failover and a pool
// clear. The topology used to publish PoolReady and PoolCleared with its
// lock held, which Client.Topology took too. A deadlock fails the test
// after 10s instead of hanging it.
func TestMonitorsMayReadTopology(t *testing.T) {
	tests := []struct {
		kind string
		// want are event types the monitor must have read the topology
		// from.
		want []string
	}{
		{"pool", []string{"PoolReady", "PoolCleared", "ConnectionCreated", "ConnectionCheckedOut", "ConnectionClosed"}},
		{"topology", []string{"ServerDescriptionChanged", "TopologyDescriptionChanged", "ServerHeartbeatSucceeded"}},
		{"selection", []string{"ServerSelectionStarted", "ServerSelectionSucceeded", "ServerSelectionFailed"}},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{ElectionDelay: 100 * time.Millisecond})
			// Discovery comes after Connect returns, so the monitor
			// reads the topology from its events.
			for _, m := range rs.Members() {
				m.AddLatency(20 * time.Millisecond)
			}
			r := &reentrantMonitor{kind: tt.kind, read: map[string]int{}}
			var mon any
			switch tt.kind {
			case "pool":
				mon = poolReentrant{r}
			case "topology":
				mon = topologyReentrant{r}
			case "selection":
				mon = selectionReentrant{r}
			}
			o := &ClientOptions{Monitors: []any{mon}}
			if err := o.ApplyURI(rs.URI() + "&heartbeatFrequencyMS=500&serverSelectionTimeoutMS=5000"); err != nil {
				t.Fatal(err)
			}
			c, err := Connect(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			r.client.Store(c)
			done := make(chan error, 1)
			go func() { done <- reentrantScenario(rs, c) }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				buf := make([]byte, 1<<20)
				t.Log(string(buf[:runtime.Stack(buf, true)]))
				// The client is stuck; disconnecting would hang too.
				t.Fatalf("deadlock: a %s monitor calling Client.Topology blocked the client", tt.kind)
			}
			c.Disconnect(context.Background())
			got := r.counts()
			for _, name := range tt.want {
				if got[name] == 0 {
					t.Errorf("the %s monitor read the topology from no %s event; it did from %v", tt.kind, name, got)
				}
			}
		})
	}
}

// reentrantScenario discovers the replica set, fails over to another
// primary and has the new primary's pool cleared by a network error.
func reentrantScenario(rs *mongotest.ReplicaSet, c *Client) error {
	ctx, cancel := context.WithTimeout(context.Background(), 9*time.Second)
	defer cancel()
	if err := c.Ping(ctx); err != nil {
		return fmt.Errorf("first ping: %w", err)
	}
	primaryReady := func(addr string) error {
		for ctx.Err() == nil {
			for _, s := range c.Topology().Servers {
				if s.Address == addr && s.Kind == "RSPrimary" && s.Pool.State == "ready" {
					return nil
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
		return fmt.Errorf("%s is not a known primary with a ready pool: %v", addr, c.Topology())
	}
	if err := primaryReady(strings.ToLower(rs.Primary().Addr())); err != nil {
		return err
	}
	if err := rs.StepDown(ctx); err != nil {
		return fmt.Errorf("step down: %w", err)
	}
	p, err := rs.WaitForPrimary(ctx)
	if err != nil {
		return err
	}
	if err := primaryReady(strings.ToLower(p.Addr())); err != nil {
		return err
	}
	if err := c.Ping(ctx); err != nil {
		return fmt.Errorf("ping after the failover: %w", err)
	}
	// A network error clears the pool; the next check marks it ready.
	if err := p.SetFailPoint(bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: bson.D{{Key: "times", Value: 1}}},
		{Key: "data", Value: bson.D{{Key: "failCommands", Value: bson.A{"ping"}}, {Key: "closeConnection", Value: true}}}}); err != nil {
		return err
	}
	if err := c.Ping(ctx); err == nil {
		return errors.New("ping through closeConnection succeeded")
	}
	if err := primaryReady(strings.ToLower(p.Addr())); err != nil {
		return err
	}
	if err := c.Ping(ctx); err != nil {
		return fmt.Errorf("ping after the clear: %w", err)
	}
	// A selection that fails.
	sctx, scancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer scancel()
	_, err = c.RunCommand(sctx, "admin", bson.D{{Key: "ping", Value: 1}}, &RunCommandOptions{ReadPreference: "secondary", ReadPreferenceTags: []map[string]string{{"dc": "nosuch"}}})
	if err == nil {
		return errors.New("a selection for a tag no member has succeeded")
	}
	return nil
}
