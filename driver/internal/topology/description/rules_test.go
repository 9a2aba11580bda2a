package description

import (
	"strings"
	"testing"
	"time"
)

// The rules of server-discovery-and-monitoring.md that no test file of the
// specification's shared copy exercises (found by reading the TopologyType
// table and the update subroutines rule by rule, and by running the spec
// files' replies through Apply to see which cells they reach). Each case
// is one rule, named after the spec's words.

// step is one check outcome: a hello reply for addr, or "" for a failed
// check.
type step struct {
	addr, hello string
}

func TestTopologyRules(t *testing.T) {
	const (
		rsHosts = `"setName":"rs","hosts":["a:27017","b:27017"],"minWireVersion":0,"maxWireVersion":21`
		pre60   = `"setName":"rs","hosts":["a:27017","b:27017"],"minWireVersion":0,"maxWireVersion":13`
	)
	for _, tc := range []struct {
		rule     string
		settings Settings
		steps    []step
		wantType TopologyType
		// want maps each remaining server to its type; servers not listed
		// must be absent.
		want     map[string]ServerType
		errorOf  string // a server whose Error must contain errorSub
		errorSub string
		compat   string // a substring of CompatibilityErr, "" for none
	}{
		{
			rule:     "updateUnknownWithStandalone: with several seeds the standalone is removed and the type stays Unknown",
			settings: Settings{Seeds: []string{"a", "b"}},
			steps:    []step{{"a:27017", `{"ok":1,"isWritablePrimary":true,"maxWireVersion":21}`}},
			wantType: TopologyUnknown, want: map[string]ServerType{"b:27017": Unknown},
		},
		{
			rule:     "TopologyType Unknown x RSArbiter: set ReplicaSetNoPrimary, record setName, updateRSWithoutPrimary adds its hosts",
			settings: Settings{Seeds: []string{"a"}},
			steps:    []step{{"a:27017", `{"ok":1,"arbiterOnly":true,` + rsHosts + `}`}},
			wantType: ReplicaSetNoPrimary, want: map[string]ServerType{"a:27017": RSArbiter, "b:27017": Unknown},
		},
		{
			rule:     "TopologyType Sharded x Standalone: remove",
			settings: Settings{Seeds: []string{"a", "b"}},
			steps: []step{{"a:27017", `{"ok":1,"msg":"isdbgrid","maxWireVersion":21}`},
				{"b:27017", `{"ok":1,"isWritablePrimary":true,"maxWireVersion":21}`}},
			wantType: Sharded, want: map[string]ServerType{"a:27017": Mongos},
		},
		{
			rule:     "TopologyType Sharded x RSSecondary: remove",
			settings: Settings{Seeds: []string{"a", "b"}},
			steps: []step{{"a:27017", `{"ok":1,"msg":"isdbgrid","maxWireVersion":21}`},
				{"b:27017", `{"ok":1,"secondary":true,` + rsHosts + `}`}},
			wantType: Sharded, want: map[string]ServerType{"a:27017": Mongos},
		},
		{
			rule:     "TopologyType Sharded x RSGhost: remove",
			settings: Settings{Seeds: []string{"a", "b"}},
			steps: []step{{"a:27017", `{"ok":1,"msg":"isdbgrid","maxWireVersion":21}`},
				{"b:27017", `{"ok":1,"isreplicaset":true,"maxWireVersion":21}`}},
			wantType: Sharded, want: map[string]ServerType{"a:27017": Mongos},
		},
		{
			rule:     "TopologyType Sharded x RSArbiter and RSOther: remove",
			settings: Settings{Seeds: []string{"a", "b", "c"}},
			steps: []step{{"a:27017", `{"ok":1,"msg":"isdbgrid","maxWireVersion":21}`},
				{"b:27017", `{"ok":1,"arbiterOnly":true,` + rsHosts + `}`},
				{"c:27017", `{"ok":1,"hidden":true,` + rsHosts + `}`}},
			wantType: Sharded, want: map[string]ServerType{"a:27017": Mongos},
		},
		{
			rule:     "TopologyType ReplicaSetNoPrimary x Unknown: no-op, the server is kept",
			settings: Settings{Seeds: []string{"a", "b"}, SetName: "rs"},
			steps:    []step{{"a:27017", `{"ok":1,"secondary":true,` + rsHosts + `}`}, {"b:27017", ""}},
			wantType: ReplicaSetNoPrimary, want: map[string]ServerType{"a:27017": RSSecondary, "b:27017": Unknown},
		},
		{
			rule:     "TopologyType ReplicaSetNoPrimary x RSArbiter: updateRSWithoutPrimary adds hosts, passives and arbiters",
			settings: Settings{Seeds: []string{"a"}, SetName: "rs"},
			steps:    []step{{"a:27017", `{"ok":1,"arbiterOnly":true,"setName":"rs","hosts":["b:27017"],"passives":["c:27017"],"arbiters":["a:27017"],"maxWireVersion":21}`}},
			wantType: ReplicaSetNoPrimary, want: map[string]ServerType{"a:27017": RSArbiter, "b:27017": Unknown, "c:27017": Unknown},
		},
		{
			rule:     "updateRSWithoutPrimary removes no server for being absent from a member's hosts",
			settings: Settings{Seeds: []string{"a", "z"}, SetName: "rs"},
			steps:    []step{{"a:27017", `{"ok":1,"secondary":true,` + rsHosts + `}`}},
			wantType: ReplicaSetNoPrimary, want: map[string]ServerType{"a:27017": RSSecondary, "b:27017": Unknown, "z:27017": Unknown},
		},
		{
			rule:     "TopologyType ReplicaSetWithPrimary x Unknown: a failed secondary (or ok:0) is kept, checkIfHasPrimary keeps the primary",
			settings: Settings{Seeds: []string{"a", "b"}, SetName: "rs"},
			steps: []step{{"a:27017", `{"ok":1,"isWritablePrimary":true,"setVersion":1,"electionId":{"$oid":"000000000000000000000001"},` + rsHosts + `}`},
				{"b:27017", `{"ok":1,"secondary":true,` + rsHosts + `}`}, {"b:27017", ""}},
			wantType: ReplicaSetWithPrimary, want: map[string]ServerType{"a:27017": RSPrimary, "b:27017": Unknown},
		},
		{
			rule:     "updateRSWithPrimaryFromMember: a member whose me differs from its address is removed, checkIfHasPrimary",
			settings: Settings{Seeds: []string{"a", "b"}, SetName: "rs"},
			steps: []step{{"a:27017", `{"ok":1,"isWritablePrimary":true,"setVersion":1,"electionId":{"$oid":"000000000000000000000001"},"setName":"rs","hosts":["a:27017","b:27017"],"maxWireVersion":21}`},
				{"b:27017", `{"ok":1,"secondary":true,"me":"c:27017",` + rsHosts + `}`}},
			wantType: ReplicaSetWithPrimary, want: map[string]ServerType{"a:27017": RSPrimary},
		},
		{
			rule:     "updateRSWithPrimaryFromMember: had this member been the primary? The type becomes ReplicaSetNoPrimary and the primary it names PossiblePrimary",
			settings: Settings{Seeds: []string{"a", "b"}, SetName: "rs"},
			steps: []step{{"a:27017", `{"ok":1,"isWritablePrimary":true,"setVersion":1,"electionId":{"$oid":"000000000000000000000001"},` + rsHosts + `}`},
				{"a:27017", `{"ok":1,"secondary":true,"primary":"b:27017",` + rsHosts + `}`}},
			wantType: ReplicaSetNoPrimary, want: map[string]ServerType{"a:27017": RSSecondary, "b:27017": PossiblePrimary},
		},
		{
			rule:     "updateRSWithPrimaryFromMember: the primary becomes a secondary with another setName: removed, ReplicaSetNoPrimary",
			settings: Settings{Seeds: []string{"a", "b"}, SetName: "rs"},
			steps: []step{{"a:27017", `{"ok":1,"isWritablePrimary":true,"setVersion":1,"electionId":{"$oid":"000000000000000000000001"},` + rsHosts + `}`},
				{"a:27017", `{"ok":1,"secondary":true,"setName":"wrong","hosts":["a:27017","b:27017"],"maxWireVersion":21}`}},
			wantType: ReplicaSetNoPrimary, want: map[string]ServerType{"b:27017": Unknown},
		},
		{
			rule:     "TopologyType ReplicaSetWithPrimary x RSGhost: the primary becomes a ghost, is kept, checkIfHasPrimary gives ReplicaSetNoPrimary",
			settings: Settings{Seeds: []string{"a"}, SetName: "rs"},
			steps: []step{{"a:27017", `{"ok":1,"isWritablePrimary":true,"setVersion":1,"electionId":{"$oid":"000000000000000000000001"},"setName":"rs","hosts":["a:27017"],"maxWireVersion":21}`},
				{"a:27017", `{"ok":1,"isreplicaset":true,"maxWireVersion":21}`}},
			wantType: ReplicaSetNoPrimary, want: map[string]ServerType{"a:27017": RSGhost},
		},
		{
			rule:     "updateRSFromPrimary: a server missing from the primary's hosts is removed (member removed by reconfig)",
			settings: Settings{Seeds: []string{"a", "b"}, SetName: "rs"},
			steps: []step{{"a:27017", `{"ok":1,"isWritablePrimary":true,"setVersion":1,"electionId":{"$oid":"000000000000000000000001"},` + rsHosts + `}`},
				{"b:27017", `{"ok":1,"secondary":true,` + rsHosts + `}`},
				{"a:27017", `{"ok":1,"isWritablePrimary":true,"setVersion":2,"electionId":{"$oid":"000000000000000000000001"},"setName":"rs","hosts":["a:27017"],"maxWireVersion":21}`}},
			wantType: ReplicaSetWithPrimary, want: map[string]ServerType{"a:27017": RSPrimary},
		},
		{
			rule:     "updateRSFromPrimary before 6.0: a new primary with a greater setVersion and the same electionId wins; the old one is marked Unknown (newer primary)",
			settings: Settings{Seeds: []string{"a", "b"}, SetName: "rs"},
			steps: []step{{"a:27017", `{"ok":1,"isWritablePrimary":true,"setVersion":1,"electionId":{"$oid":"000000000000000000000001"},` + pre60 + `}`},
				{"b:27017", `{"ok":1,"isWritablePrimary":true,"setVersion":2,"electionId":{"$oid":"000000000000000000000001"},` + pre60 + `}`}},
			wantType: ReplicaSetWithPrimary, want: map[string]ServerType{"a:27017": Unknown, "b:27017": RSPrimary},
			errorOf: "a:27017", errorSub: "primary marked stale due to discovery of newer primary",
		},
		{
			rule:     "updateRSFromPrimary from 6.0: without electionIds a setVersion below maxSetVersion is stale",
			settings: Settings{Seeds: []string{"a", "b"}, SetName: "rs"},
			steps: []step{{"a:27017", `{"ok":1,"isWritablePrimary":true,"setVersion":2,` + rsHosts + `}`},
				{"b:27017", `{"ok":1,"isWritablePrimary":true,"setVersion":1,` + rsHosts + `}`}},
			wantType: ReplicaSetWithPrimary, want: map[string]ServerType{"a:27017": RSPrimary, "b:27017": Unknown},
			errorOf: "b:27017", errorSub: "primary marked stale due to electionId/setVersion mismatch, (electionId: null, setVersion: 1) is stale compared to (electionId: null, setVersion: 2)",
		},
		{
			rule:     "updateRSFromPrimary before 6.0: maxSetVersion is recorded even from a primary without electionId, making an older (electionId, setVersion) stale",
			settings: Settings{Seeds: []string{"a", "b"}, SetName: "rs"},
			steps: []step{{"a:27017", `{"ok":1,"isWritablePrimary":true,"setVersion":1,"electionId":{"$oid":"000000000000000000000001"},` + pre60 + `}`},
				{"b:27017", `{"ok":1,"isWritablePrimary":true,"setVersion":2,` + pre60 + `}`},
				{"a:27017", `{"ok":1,"isWritablePrimary":true,"setVersion":1,"electionId":{"$oid":"000000000000000000000001"},` + pre60 + `}`}},
			wantType: ReplicaSetWithPrimary, want: map[string]ServerType{"a:27017": Unknown, "b:27017": RSPrimary},
			errorOf: "a:27017", errorSub: "primary marked stale due to electionId/setVersion mismatch, (electionId: 000000000000000000000001, setVersion: 1) is stale compared to (electionId: 000000000000000000000001, setVersion: 2)",
		},
		{
			rule:     "Checking wire protocol compatibility in a sharded topology: a mongos reporting maxWireVersion 0 (too old) makes it incompatible",
			settings: Settings{Seeds: []string{"a", "b"}},
			steps: []step{{"a:27017", `{"ok":1,"msg":"isdbgrid","maxWireVersion":21}`},
				{"b:27017", `{"ok":1,"msg":"isdbgrid"}`}},
			wantType: Sharded, want: map[string]ServerType{"a:27017": Mongos, "b:27017": Mongos},
			compat: "Server at b:27017 reports wire version 0, but this version of mongoscope requires at least 8 (MongoDB 4.2).",
		},
		{
			rule:     "Initial servers: seed hostnames are lower-cased (upper-case URI seeds, then mongoses)",
			settings: Settings{Seeds: []string{"A", "B:27017"}},
			steps: []step{{"a:27017", `{"ok":1,"msg":"isdbgrid","maxWireVersion":21}`},
				{"b:27017", `{"ok":1,"msg":"isdbgrid","maxWireVersion":21}`}},
			wantType: Sharded, want: map[string]ServerType{"a:27017": Mongos, "b:27017": Mongos},
		},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			td := mustNew(t, tc.settings)
			for _, st := range tc.steps {
				sd := UnknownServer(st.addr, ErrNoReply)
				if st.hello != "" {
					sd = NewServer(st.addr, reply(t, st.hello), time.Millisecond, time.Time{})
				}
				td, _ = td.Apply(sd)
			}
			if td.Type != tc.wantType {
				t.Errorf("topology %s, want %s", td.Type, tc.wantType)
			}
			if len(td.Servers) != len(tc.want) {
				t.Errorf("servers %s, want %v", addrs(td), tc.want)
			}
			for addr, typ := range tc.want {
				if s, ok := td.Server(addr); !ok || s.Type != typ {
					t.Errorf("%s: %v (present %v), want %s", addr, s.Type, ok, typ)
				}
			}
			if tc.errorOf != "" {
				s, _ := td.Server(tc.errorOf)
				if !strings.Contains(errorText(s.Error), tc.errorSub) {
					t.Errorf("%s error %q, want it to contain %q", tc.errorOf, errorText(s.Error), tc.errorSub)
				}
			}
			if got := errorText(td.CompatibilityErr); got != tc.compat {
				t.Errorf("compatibility error %q, want %q", got, tc.compat)
			}
		})
	}
}
