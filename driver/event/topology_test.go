package event_test

import (
	"errors"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
)

func ptr[T any](v T) *T { return &v }

// TestServerDescriptionString: the logged form shows the primary a member
// names, setVersion, electionId and topologyVersion, and every other field
// of Server Description Equality, leaving zero values out.
func TestServerDescriptionString(t *testing.T) {
	var pid, eid bson.ObjectID
	pid[11], eid[11] = 0xaa, 7
	full := event.ServerDescription{
		Address: "b:2", Kind: "RSSecondary", SetName: "rs0", RoundTripTime: 1500000,
		Primary: "a:1", SetVersion: ptr(int64(3)), ElectionID: &eid,
		TopologyVersion: &event.TopologyVersion{ProcessID: pid, Counter: 4},
		Me:              "b2:2", Hosts: []string{"a:1", "b:2"}, Passives: []string{"p:3"}, Arbiters: []string{"q:4"},
		Tags: map[string]string{"z": "1", "dc": "east"}, MinWireVersion: 8, MaxWireVersion: 25,
		LogicalSessionTimeoutMinutes: ptr(int64(30)), IsCryptd: true, Error: errors.New("x"),
	}
	for _, tc := range []struct {
		name string
		s    event.ServerDescription
		want string
	}{
		{"unknown", event.ServerDescription{Address: "a:1", Kind: "Unknown"}, "{address: a:1, type: Unknown}"},
		{"me equal to address", event.ServerDescription{Address: "a:1", Kind: "Standalone", Me: "a:1"}, "{address: a:1, type: Standalone}"},
		{"everything", full, `{address: b:2, type: RSSecondary, rtt: 1.5ms, setName: rs0, primary: a:1, setVersion: 3, ` +
			`electionId: 000000000000000000000007, topologyVersion: {processId: 0000000000000000000000aa, counter: 4}, me: b2:2, ` +
			`hosts: [a:1, b:2], passives: [p:3], arbiters: [q:4], tags: {dc: east, z: 1}, wireVersions: 8-25, ` +
			`logicalSessionTimeoutMinutes: 30, iscryptd: true, error: "x"}`},
	} {
		if got := tc.s.String(); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
	// In a topology of the same set, a member's setName is the topology's
	// and is left out; a ghost's is not.
	ghost := event.ServerDescription{Address: "g:1", Kind: "RSGhost", SetName: "rs0"}
	td := event.TopologyDescription{Kind: "ReplicaSetNoPrimary", SetName: "rs0", MaxElectionID: &eid, MaxSetVersion: ptr(int64(3)),
		LogicalSessionTimeoutMinutes: ptr(int64(30)), CompatibilityError: errors.New("too old"),
		Servers: []event.ServerDescription{{Address: "a:1", Kind: "RSSecondary", SetName: "rs0"}, ghost}}
	want := `{type: ReplicaSetNoPrimary, setName: rs0, maxElectionId: 000000000000000000000007, maxSetVersion: 3, ` +
		`logicalSessionTimeoutMinutes: 30, compatibilityError: "too old", servers: [{address: a:1, type: RSSecondary}, {address: g:1, type: RSGhost, setName: rs0}]}`
	if got := td.String(); got != want {
		t.Errorf("topology:\n got %s\nwant %s", got, want)
	}
	if p, ok := td.Primary(); ok {
		t.Errorf("Primary() = %v with no RSPrimary", p)
	}
	td.Servers[0].Kind = "RSPrimary"
	if p, ok := td.Primary(); !ok || p.Address != "a:1" {
		t.Errorf("Primary() = %v, %v", p, ok)
	}
}

// TestDescriptionStringsShowEveryChange: a change in any one field that
// Server Description Equality compares shows in the string, so a
// TopologyDescriptionChanged message never logs two identical
// descriptions.
func TestDescriptionStringsShowEveryChange(t *testing.T) {
	var id bson.ObjectID
	id[11] = 1
	base := event.ServerDescription{Address: "a:1", Kind: "RSSecondary", SetName: "rs0", Primary: "b:2", SetVersion: ptr(int64(1)),
		ElectionID: &id, TopologyVersion: &event.TopologyVersion{Counter: 1}, Me: "a:1", Hosts: []string{"a:1", "b:2"},
		Tags: map[string]string{"dc": "east"}, MaxWireVersion: 21, LogicalSessionTimeoutMinutes: ptr(int64(30))}
	for name, mut := range map[string]func(*event.ServerDescription){
		"type":            func(s *event.ServerDescription) { s.Kind = "RSOther" },
		"setName":         func(s *event.ServerDescription) { s.SetName = "other" },
		"primary":         func(s *event.ServerDescription) { s.Primary = "" },
		"setVersion":      func(s *event.ServerDescription) { s.SetVersion = ptr(int64(2)) },
		"no setVersion":   func(s *event.ServerDescription) { s.SetVersion = nil },
		"electionId":      func(s *event.ServerDescription) { s.ElectionID = nil },
		"topologyVersion": func(s *event.ServerDescription) { s.TopologyVersion = &event.TopologyVersion{Counter: 2} },
		"me":              func(s *event.ServerDescription) { s.Me = "x:1" },
		"hosts":           func(s *event.ServerDescription) { s.Hosts = []string{"a:1"} },
		"passives":        func(s *event.ServerDescription) { s.Passives = []string{"p:1"} },
		"arbiters":        func(s *event.ServerDescription) { s.Arbiters = []string{"q:1"} },
		"tags":            func(s *event.ServerDescription) { s.Tags = map[string]string{"dc": "west"} },
		"minWire":         func(s *event.ServerDescription) { s.MinWireVersion = 6 },
		"maxWire":         func(s *event.ServerDescription) { s.MaxWireVersion = 25 },
		"lstm":            func(s *event.ServerDescription) { s.LogicalSessionTimeoutMinutes = nil },
		"iscryptd":        func(s *event.ServerDescription) { s.IsCryptd = true },
		"error":           func(s *event.ServerDescription) { s.Error = errors.New("e") },
	} {
		m := base
		mut(&m)
		before := event.TopologyDescription{Kind: "ReplicaSetNoPrimary", SetName: "rs0", Servers: []event.ServerDescription{base}}
		after := event.TopologyDescription{Kind: "ReplicaSetNoPrimary", SetName: "rs0", Servers: []event.ServerDescription{m}}
		if before.String() == after.String() {
			t.Errorf("%s: a change that the strings do not show: %s", name, after)
		}
	}
	for name, after := range map[string]event.TopologyDescription{
		"maxElectionId": {Kind: "ReplicaSetNoPrimary", MaxElectionID: &id},
		"maxSetVersion": {Kind: "ReplicaSetNoPrimary", MaxSetVersion: ptr(int64(1))},
		"lstm":          {Kind: "ReplicaSetNoPrimary", LogicalSessionTimeoutMinutes: ptr(int64(1))},
		"compatibility": {Kind: "ReplicaSetNoPrimary", CompatibilityError: errors.New("x")},
	} {
		if (event.TopologyDescription{Kind: "ReplicaSetNoPrimary"}).String() == after.String() {
			t.Errorf("%s: a change that the strings do not show", name)
		}
	}
}
