package logging

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
)

// timeoutError stands for the driver's network errors, which say whether
// they are timeouts.
type timeoutError struct{ msg string }

func (e timeoutError) Error() string { return e.msg }
func (timeoutError) Timeout() bool   { return false }

// TestPrimaryChanged: one informational "Primary changed" message for each
// TopologyDescriptionChanged that changes the primary, naming the old and
// new primaries and why, and none for other changes or for closing.
func TestPrimaryChanged(t *testing.T) {
	id1, id2 := bson.ObjectID{11: 1}, bson.ObjectID{11: 2}
	sv := ptr(int64(1))
	srv := func(addr, kind string, mod ...func(*event.ServerDescription)) event.ServerDescription {
		s := event.ServerDescription{Address: addr, Kind: kind, SetName: "rs0"}
		for _, m := range mod {
			m(&s)
		}
		return s
	}
	elected := func(id bson.ObjectID) func(*event.ServerDescription) {
		return func(s *event.ServerDescription) { s.ElectionID, s.SetVersion = &id, sv }
	}
	failed := func(err error) func(*event.ServerDescription) {
		return func(s *event.ServerDescription) { s.Error = err }
	}
	topo := func(maxID *bson.ObjectID, servers ...event.ServerDescription) event.TopologyDescription {
		kind := "ReplicaSetNoPrimary"
		for _, s := range servers {
			if s.Kind == "RSPrimary" {
				kind = "ReplicaSetWithPrimary"
			}
		}
		return event.TopologyDescription{Kind: kind, SetName: "rs0", MaxElectionID: maxID, Servers: servers}
	}
	aPrimary := topo(&id1, srv("a:1", "RSPrimary", elected(id1)), srv("b:2", "RSSecondary"))
	for _, tc := range []struct {
		name          string
		prev, next    event.TopologyDescription
		from, to, why string // "" from: no message
	}{
		{"discovery", topo(nil, srv("a:1", "Unknown"), srv("b:2", "Unknown")), aPrimary,
			"none", "a:1", "discovered, electionId 000000000000000000000001, setVersion 1"},
		{"step-down", aPrimary, topo(&id1, srv("a:1", "RSSecondary"), srv("b:2", "RSSecondary")),
			"a:1", "none", "a:1 stepped down (now RSSecondary)"},
		{"unreachable", aPrimary, topo(&id1, srv("a:1", "Unknown", failed(timeoutError{"conn: read a:1: EOF"})), srv("b:2", "RSSecondary")),
			"a:1", "none", "a:1 unreachable: conn: read a:1: EOF"},
		{"state change error", aPrimary, topo(&id1, srv("a:1", "Unknown", failed(errors.New("server error 10107 (NotWritablePrimary)"))), srv("b:2", "RSSecondary")),
			"a:1", "none", "a:1 marked Unknown: server error 10107 (NotWritablePrimary)"},
		{"newer primary", aPrimary, topo(&id2, srv("a:1", "Unknown", failed(errors.New("primary marked stale due to discovery of newer primary"))), srv("b:2", "RSPrimary", elected(id2))),
			"a:1", "b:2", "a:1 replaced by a newer primary; elected, electionId 000000000000000000000002, setVersion 1"},
		{"election after step-down", topo(&id1, srv("a:1", "RSSecondary"), srv("b:2", "RSSecondary")), topo(&id2, srv("a:1", "RSSecondary"), srv("b:2", "RSPrimary", elected(id2))),
			"none", "b:2", "elected, electionId 000000000000000000000002, setVersion 1"},
		{"re-elected unseen", aPrimary, topo(&id2, srv("a:1", "RSPrimary", elected(id2)), srv("b:2", "RSSecondary")),
			"a:1", "a:1", "elected again, electionId 000000000000000000000002, setVersion 1"},
		{"removed", aPrimary, topo(&id1, srv("b:2", "RSSecondary")),
			"a:1", "none", "a:1 left the topology"},
		{"same primary", aPrimary, topo(&id1, srv("a:1", "RSPrimary", elected(id1)), srv("b:2", "Unknown")), "", "", ""},
		{"no primary either side", topo(nil, srv("a:1", "Unknown")), topo(nil, srv("a:1", "RSSecondary")), "", "", ""},
		{"closing", aPrimary, event.TopologyDescription{Kind: "Unknown"}, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Informational, in the driver's failover component: it
			// shows alone, and the topology component at debug (as
			// the specification's tests set it) adds nothing of it.
			s, c := newSink(t, Options{Levels: map[Component]Level{ComponentFailover: LevelInformational}})
			s.TopologyEvent(context.Background(), &event.TopologyDescriptionChanged{TopologyID: oid, Previous: tc.prev, New: tc.next})
			got := c.take()
			if tc.from == "" {
				if len(got) != 0 {
					t.Fatalf("logged %v, want nothing", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("logged %d messages, want 1: %v", len(got), got)
			}
			m := got[0]
			want := map[string]any{"component": "failover", "topologyId": oid.Hex(), "previousPrimary": tc.from, "newPrimary": tc.to, "reason": tc.why}
			if m.Level != slog.LevelInfo || m.Message != "Primary changed" || len(m.Attrs) != len(want) {
				t.Fatalf("got %+v", m)
			}
			for k, v := range want {
				if m.Attrs[k] != v {
					t.Errorf("%s = %q, want %q", k, m.Attrs[k], v)
				}
			}
		})
	}
	// Off below informational.
	s, c := newSink(t, Options{Levels: map[Component]Level{ComponentFailover: LevelNotice}})
	s.TopologyEvent(context.Background(), &event.TopologyDescriptionChanged{TopologyID: oid, Previous: topo(nil), New: aPrimary})
	if got := c.take(); len(got) != 0 {
		t.Errorf("logged at notice: %v", got)
	}
	// The topology component carries only the specification's messages.
	s, c = newSink(t, Options{Levels: map[Component]Level{ComponentTopology: LevelTrace}})
	s.TopologyEvent(context.Background(), &event.TopologyDescriptionChanged{TopologyID: oid, Previous: topo(nil), New: aPrimary})
	for _, m := range c.take() {
		if m.Message == "Primary changed" {
			t.Errorf("topology component logged %+v", m)
		}
	}
}
