package driver

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/mongotest"
)

// topologyRecorder keeps a client's SDAM events.
type topologyRecorder struct {
	mu  sync.Mutex
	evs []event.TopologyEvent
}

func (r *topologyRecorder) TopologyEvent(_ context.Context, e event.TopologyEvent) {
	r.mu.Lock()
	r.evs = append(r.evs, e)
	r.mu.Unlock()
}

func (r *topologyRecorder) events() []event.TopologyEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event.TopologyEvent(nil), r.evs...)
}

// descriptionChanges returns the ServerDescriptionChanged events for addr.
func (r *topologyRecorder) descriptionChanges(addr string) []*event.ServerDescriptionChanged {
	var out []*event.ServerDescriptionChanged
	for _, e := range r.events() {
		if c, ok := e.(*event.ServerDescriptionChanged); ok && c.Address == addr {
			out = append(out, c)
		}
	}
	return out
}

// waitUntil polls cond every 10ms until it holds or d passes.
func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestDeadMemberChangesOnce: a killed secondary fails every heartbeat, each
// time on a new connection whose number is in the error text. Server
// Description Equality must not see that as a change: one
// ServerDescriptionChanged (to Unknown), not one per heartbeat.
func TestDeadMemberChangesOnce(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{})
	rec := &topologyRecorder{}
	c := connect(t, rs.URI()+"&heartbeatFrequencyMS=500", &ClientOptions{Monitors: []any{rec}})
	if err := c.Ping(ctxTimeout(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	addr := strings.ToLower(rs.Members()[2].Addr())
	waitUntil(t, 10*time.Second, "the secondary's discovery", func() bool {
		cs := rec.descriptionChanges(addr)
		return len(cs) > 0 && cs[len(cs)-1].New.Kind == "RSSecondary"
	})
	before := len(rec.descriptionChanges(addr))
	if err := rs.Kill(2); err != nil {
		t.Fatal(err)
	}
	// Six heartbeats' worth; the failures are counted to be sure the
	// monitor kept checking.
	host, port := event.SplitAddress(addr)
	failures := func() int {
		n := 0
		for _, e := range rec.events() {
			if f, ok := e.(*event.ServerHeartbeatFailed); ok && f.ServerHost == host && f.ServerPort == port {
				n++
			}
		}
		return n
	}
	waitUntil(t, 10*time.Second, "three failed heartbeats", func() bool { return failures() >= 3 })
	time.Sleep(500 * time.Millisecond)
	changes := rec.descriptionChanges(addr)[before:]
	for _, ch := range changes {
		t.Logf("%s -> %s (%v)", ch.Previous.Kind, ch.New.Kind, ch.New.Error)
	}
	if len(changes) != 1 || changes[0].New.Kind != "Unknown" {
		t.Fatalf("%d ServerDescriptionChanged for the dead member over %d failed heartbeats, want 1 (to Unknown)", len(changes), failures())
	}
}
