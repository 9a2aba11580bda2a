package driver

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
	"github.com/mongoscope/mongoscope/driver/logging"
	"github.com/mongoscope/mongoscope/mongotest"
)

// descriptionChanges returns the ServerDescriptionChanged events for addr.
func descriptionChanges(r *eventtest.Recorder, addr string) []*event.ServerDescriptionChanged {
	var out []*event.ServerDescriptionChanged
	for _, c := range eventtest.Of[*event.ServerDescriptionChanged](r) {
		if c.Address == addr {
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
	rec := &eventtest.Recorder{Keep: eventtest.Only[event.TopologyEvent]}
	c := connect(t, rs.URI()+"&heartbeatFrequencyMS=500", &ClientOptions{Monitors: []any{rec}})
	if err := c.Ping(ctxTimeout(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	addr := strings.ToLower(rs.Members()[2].Addr())
	waitUntil(t, 10*time.Second, "the secondary's discovery", func() bool {
		cs := descriptionChanges(rec, addr)
		return len(cs) > 0 && cs[len(cs)-1].New.Kind == "RSSecondary"
	})
	before := len(descriptionChanges(rec, addr))
	if err := rs.Kill(2); err != nil {
		t.Fatal(err)
	}
	// Six heartbeats' worth; the failures are counted to be sure the
	// monitor kept checking.
	host, port := event.SplitAddress(addr)
	failures := func() int {
		n := 0
		for _, e := range rec.Events() {
			if f, ok := e.(*event.ServerHeartbeatFailed); ok && f.ServerHost == host && f.ServerPort == port {
				n++
			}
		}
		return n
	}
	waitUntil(t, 10*time.Second, "three failed heartbeats", func() bool { return failures() >= 3 })
	time.Sleep(500 * time.Millisecond)
	changes := descriptionChanges(rec, addr)[before:]
	for _, ch := range changes {
		t.Logf("%s -> %s (%v)", ch.Previous.Kind, ch.New.Kind, ch.New.Error)
	}
	if len(changes) != 1 || changes[0].New.Kind != "Unknown" {
		t.Fatalf("%d ServerDescriptionChanged for the dead member over %d failed heartbeats, want 1 (to Unknown)", len(changes), failures())
	}
}

// jsonLog is a concurrency-safe JSON log buffer.
type jsonLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *jsonLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// messages returns the logged records with message msg.
func (l *jsonLog) messages(t *testing.T, msg string) []map[string]any {
	l.mu.Lock()
	data := l.buf.String()
	l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(data), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not JSON: %s", line)
		}
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// TestFailoverLog: a step-down and then a killed primary, as the topology
// log shows them. Each change of the primary gets one informational
// "Primary changed" line naming the old and new primaries and why, and no
// "Topology description changed" message has identical previous and new
// descriptions.
func TestFailoverLog(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{})
	log := &jsonLog{}
	levels := map[logging.Component]logging.Level{logging.ComponentTopology: logging.LevelDebug, logging.ComponentFailover: logging.LevelInformational}
	o := &ClientOptions{Logging: &logging.Options{Handler: slog.NewJSONHandler(log, &slog.HandlerOptions{Level: slog.Level(-100)}), Levels: levels}}
	c := connect(t, rs.URI()+"&heartbeatFrequencyMS=500", o)
	ctx := ctxTimeout(t, 20*time.Second)
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	addr := func(s *mongotest.Server) string { return strings.ToLower(s.Addr()) }
	// changedTo waits for a "Primary changed" line whose newPrimary is
	// addr and returns every such line so far.
	changedTo := func(addr string) []map[string]any {
		t.Helper()
		var lines []map[string]any
		waitUntil(t, 10*time.Second, "a Primary changed line to "+addr, func() bool {
			lines = log.messages(t, "Primary changed")
			for _, m := range lines {
				if m["newPrimary"] == addr {
					return true
				}
			}
			return false
		})
		return lines
	}
	first := addr(rs.Primary())
	changedTo(first)

	if err := rs.StepDown(ctx); err != nil {
		t.Fatal(err)
	}
	p, err := rs.WaitForPrimary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	second := addr(p)
	changedTo(second)

	killed := -1
	for i, m := range rs.Members() {
		if addr(m) == second {
			killed = i
		}
	}
	if err := rs.Kill(killed); err != nil {
		t.Fatal(err)
	}
	p, err = rs.WaitForPrimary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	third := addr(p)
	lines := changedTo(third)

	// The step-down of the first primary and the loss of the second are
	// each told once, with the reason.
	var steppedDown, lost int
	for _, m := range lines {
		t.Logf("Primary changed: %v -> %v: %v", m["previousPrimary"], m["newPrimary"], m["reason"])
		if m["level"] != "INFO" || m["component"] != "failover" {
			t.Errorf("level %v component %v, want INFO failover", m["level"], m["component"])
		}
		reason, _ := m["reason"].(string)
		switch {
		case m["previousPrimary"] == first && (strings.Contains(reason, first+" stepped down") || strings.Contains(reason, first+" replaced by a newer primary")):
			steppedDown++
		case m["previousPrimary"] == second && (strings.Contains(reason, second+" unreachable: ") || strings.Contains(reason, second+" replaced by a newer primary")):
			lost++
		}
	}
	if steppedDown != 1 || lost != 1 {
		t.Errorf("%d lines for %s stepping down, %d for %s lost; want 1 each", steppedDown, first, lost, second)
	}
	// The new primaries are named with their electionId.
	for _, m := range lines {
		if m["newPrimary"] != "none" && !strings.Contains(m["reason"].(string), "electionId ") {
			t.Errorf("no electionId for the new primary: %v", m)
		}
	}

	c.Disconnect(context.Background())
	changes := log.messages(t, "Topology description changed")
	if len(changes) < 4 {
		t.Fatalf("%d Topology description changed messages", len(changes))
	}
	for _, m := range changes {
		if m["previousDescription"] == m["newDescription"] {
			t.Errorf("identical descriptions logged: %v", m["newDescription"])
		}
	}
}
