package selection

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseMode(t *testing.T) {
	tests := []struct {
		in      string
		want    Mode
		wantErr bool
	}{
		{"primary", Primary, false},
		{"Primary", Primary, false},
		{"primaryPreferred", PrimaryPreferred, false},
		{"SECONDARY", Secondary, false},
		{"secondarypreferred", SecondaryPreferred, false},
		{"Nearest", Nearest, false},
		{"", 0, true},
		{"closest", 0, true},
		{"primary ", 0, true},
	}
	for _, tc := range tests {
		got, err := ParseMode(tc.in)
		if tc.wantErr {
			var e *Error
			if !errors.As(err, &e) || e.Field != "mode" || !strings.Contains(err.Error(), tc.in) {
				t.Errorf("ParseMode(%q) error %v, want *Error naming mode and the input", tc.in, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseMode(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if back, err := ParseMode(got.String()); err != nil || back != got {
			t.Errorf("ParseMode(%q.String()) = %v, %v", got, back, err)
		}
	}
}

func TestValidate(t *testing.T) {
	rs := Topology{Kind: ReplicaSetWithPrimary}
	tests := []struct {
		name      string
		rp        ReadPref
		top       Topology
		wantField string // "" means valid
	}{
		{"primary default", ReadPref{}, rs, ""},
		{"primary with empty tag set", ReadPref{TagSets: []TagSet{{}}}, rs, ""},
		{"primary with tags", ReadPref{TagSets: []TagSet{{"dc": "ny"}}}, rs, "tagSets"},
		{"primary with tags on sharded", ReadPref{TagSets: []TagSet{{}, {"dc": "ny"}}}, Topology{Kind: Sharded}, "tagSets"},
		{"primary with max staleness", ReadPref{MaxStaleness: 120 * time.Second}, rs, "maxStalenessSeconds"},
		{"primary with max staleness on single", ReadPref{MaxStaleness: 120 * time.Second}, Topology{Kind: Single}, "maxStalenessSeconds"},
		{"no max staleness (-1)", ReadPref{Mode: Nearest, MaxStaleness: -time.Second}, rs, ""},
		{"max staleness 90s", ReadPref{Mode: Secondary, MaxStaleness: 90 * time.Second}, rs, ""},
		{"max staleness 89s", ReadPref{Mode: Secondary, MaxStaleness: 89 * time.Second}, rs, "maxStalenessSeconds"},
		{"max staleness 89s, no primary", ReadPref{Mode: Secondary, MaxStaleness: 89 * time.Second}, Topology{Kind: ReplicaSetNoPrimary}, "maxStalenessSeconds"},
		{"max staleness small on sharded", ReadPref{Mode: Secondary, MaxStaleness: time.Second}, Topology{Kind: Sharded}, ""},
		{"max staleness small on unknown", ReadPref{Mode: Nearest, MaxStaleness: time.Second}, Topology{}, ""},
		{"below heartbeat plus idle write", ReadPref{Mode: Nearest, MaxStaleness: 129 * time.Second}, Topology{Kind: ReplicaSetWithPrimary, HeartbeatFrequency: 120 * time.Second}, "maxStalenessSeconds"},
		{"equal to heartbeat plus idle write", ReadPref{Mode: Nearest, MaxStaleness: 130 * time.Second}, Topology{Kind: ReplicaSetWithPrimary, HeartbeatFrequency: 120 * time.Second}, ""},
		{"unknown mode", ReadPref{Mode: Mode(9)}, rs, "mode"},
		{"negative mode", ReadPref{Mode: Mode(-1)}, Topology{Kind: Single}, "mode"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.rp.Validate(tc.top)
			if tc.wantField == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Field != tc.wantField {
				t.Fatalf("Validate error %v, want *Error for %s", err, tc.wantField)
			}
			if !strings.Contains(err.Error(), tc.wantField) {
				t.Errorf("message %q does not name %s", err, tc.wantField)
			}
			// Suitable refuses the same read preference.
			if _, err := Suitable(tc.top, Read(tc.rp)); !errors.As(err, &e) {
				t.Errorf("Suitable error %v, want *Error", err)
			}
		})
	}
}

// rsTopology is a replica set with a primary a, secondaries b (dc ny) and c
// (dc sf), and an arbiter, a ghost and an unknown member.
func rsTopology() Topology {
	now := time.Unix(1_700_000_000, 0)
	return Topology{Kind: ReplicaSetWithPrimary, Servers: []Server{
		{Addr: "a:1", Kind: RSPrimary, AvgRTT: 10 * time.Millisecond, Tags: map[string]string{"dc": "ny"}, LastUpdateTime: now, LastWriteDate: now},
		{Addr: "b:1", Kind: RSSecondary, AvgRTT: 5 * time.Millisecond, Tags: map[string]string{"dc": "ny", "rack": "1"}, LastUpdateTime: now, LastWriteDate: now.Add(-time.Second)},
		{Addr: "c:1", Kind: RSSecondary, AvgRTT: 30 * time.Millisecond, Tags: map[string]string{"dc": "sf"}, LastUpdateTime: now, LastWriteDate: now.Add(-200 * time.Second)},
		{Addr: "d:1", Kind: RSArbiter, AvgRTT: time.Millisecond},
		{Addr: "e:1", Kind: RSGhost, AvgRTT: time.Millisecond},
		{Addr: "f:1", Kind: Unknown},
	}}
}

func TestSuitable(t *testing.T) {
	rs := rsTopology()
	noPrimary := rsTopology()
	noPrimary.Kind = ReplicaSetNoPrimary
	noPrimary.Servers[0].Kind = Unknown
	tests := []struct {
		name string
		top  Topology
		sel  Selector
		want []string
	}{
		{"write on primary", rs, Write(), []string{"a:1"}},
		{"write without primary", noPrimary, Write(), nil},
		{"primary", rs, Read(ReadPref{}), []string{"a:1"}},
		{"secondary", rs, Read(ReadPref{Mode: Secondary}), []string{"b:1", "c:1"}},
		{"secondary, first matching tag set wins", rs, Read(ReadPref{Mode: Secondary, TagSets: []TagSet{{"dc": "tokyo"}, {"dc": "sf"}, {"dc": "ny"}}}), []string{"c:1"}},
		{"secondary, several tags", rs, Read(ReadPref{Mode: Secondary, TagSets: []TagSet{{"dc": "ny", "rack": "1"}}}), []string{"b:1"}},
		{"secondary, no tag set matches", rs, Read(ReadPref{Mode: Secondary, TagSets: []TagSet{{"dc": "tokyo"}}}), nil},
		{"secondary, empty tag set list", rs, Read(ReadPref{Mode: Secondary, TagSets: []TagSet{}}), []string{"b:1", "c:1"}},
		{"secondary, max staleness drops c", rs, Read(ReadPref{Mode: Secondary, MaxStaleness: 100 * time.Second}), []string{"b:1"}},
		{"staleness before tags", rs, Read(ReadPref{Mode: Secondary, MaxStaleness: 100 * time.Second, TagSets: []TagSet{{"dc": "sf"}, {}}}), []string{"b:1"}},
		{"secondaryPreferred falls back to primary", rs, Read(ReadPref{Mode: SecondaryPreferred, TagSets: []TagSet{{"dc": "tokyo"}}}), []string{"a:1"}},
		{"primaryPreferred takes the primary", rs, Read(ReadPref{Mode: PrimaryPreferred, TagSets: []TagSet{{"dc": "sf"}}}), []string{"a:1"}},
		{"primaryPreferred without primary", noPrimary, Read(ReadPref{Mode: PrimaryPreferred, TagSets: []TagSet{{"dc": "sf"}}}), []string{"c:1"}},
		{"nearest", rs, Read(ReadPref{Mode: Nearest, TagSets: []TagSet{{"dc": "ny"}}}), []string{"a:1", "b:1"}},
		{"nearest, staleness against freshest secondary", noPrimary, Read(ReadPref{Mode: Nearest, MaxStaleness: 150 * time.Second}), []string{"b:1"}},
		{"deprioritized skipped", rs, Selector{ReadPref: ReadPref{Mode: Nearest}, Deprioritized: []string{"b:1", "x:1"}}, []string{"a:1", "c:1"}},
		{"all deprioritized: used anyway", rs, Selector{Write: true, Deprioritized: []string{"a:1"}}, []string{"a:1"}},
		{"secondaryPreferred, secondaries deprioritized", rs, Selector{ReadPref: ReadPref{Mode: SecondaryPreferred}, Deprioritized: []string{"b:1", "c:1"}}, []string{"a:1"}},
		{"custom filter", rs, Selector{ReadPref: ReadPref{Mode: Nearest}, Filter: func(s []Server) []Server { return s[len(s)-1:] }}, []string{"c:1"}},
		{"custom filter returns none", rs, Selector{ReadPref: ReadPref{Mode: Nearest}, Filter: func([]Server) []Server { return nil }}, nil},
		{"unknown topology", Topology{Servers: []Server{{Addr: "a:1", Kind: Standalone}}}, Write(), nil},
		{"single ignores read preference", Topology{Kind: Single, Servers: []Server{{Addr: "a:1", Kind: RSSecondary}}}, Write(), []string{"a:1"}},
		{"single unknown server", Topology{Kind: Single, Servers: []Server{{Addr: "a:1", Kind: Unknown}}}, Read(ReadPref{Mode: Nearest}), nil},
		{"single possible primary", Topology{Kind: Single, Servers: []Server{{Addr: "a:1", Kind: PossiblePrimary}}}, Write(), nil},
		{"sharded skips unknown", Topology{Kind: Sharded, Servers: []Server{{Addr: "a:1", Kind: Mongos}, {Addr: "b:1", Kind: Unknown}}}, Read(ReadPref{Mode: Secondary}), []string{"a:1"}},
		{"load balanced", Topology{Kind: LoadBalanced, Servers: []Server{{Addr: "lb:1", Kind: LoadBalancer}}}, Write(), []string{"lb:1"}},
		{"bad topology kind", Topology{Kind: TopologyKind(42), Servers: []Server{{Addr: "a:1", Kind: Mongos}}}, Write(), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := slices.Clone(tc.top.Servers)
			got, err := Suitable(tc.top, tc.sel)
			if err != nil {
				t.Fatal(err)
			}
			if a := addrs(got); !slices.Equal(a, tc.want) && (len(a) != 0 || len(tc.want) != 0) {
				t.Errorf("Suitable = %v, want %v", a, tc.want)
			}
			for i := range before {
				if before[i].Addr != tc.top.Servers[i].Addr || before[i].Kind != tc.top.Servers[i].Kind {
					t.Fatalf("Suitable modified the topology")
				}
			}
		})
	}
}

// Dates from a server can be anything: staleness saturates rather than
// wrapping, so an absurdly old secondary is stale, never fresh.
func TestStalenessSaturates(t *testing.T) {
	top := Topology{Kind: ReplicaSetWithPrimary, Servers: []Server{
		{Addr: "p:1", Kind: RSPrimary, LastUpdateTime: time.Unix(0, 0), LastWriteDate: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Addr: "s:1", Kind: RSSecondary, LastUpdateTime: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), LastWriteDate: time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)},
	}}
	got, err := Suitable(top, Read(ReadPref{Mode: Secondary, MaxStaleness: 100 * time.Second}))
	if err != nil || len(got) != 0 {
		t.Fatalf("Suitable = %v, %v; want the absurd secondary to be stale", addrs(got), err)
	}
	tests := []struct{ a, b, add, sub time.Duration }{
		{math.MaxInt64, 1, math.MaxInt64, math.MaxInt64 - 1},
		{math.MinInt64, -1, math.MinInt64, math.MinInt64 + 1},
		{1, math.MinInt64, math.MinInt64 + 1, math.MaxInt64},
		{-1, math.MinInt64, math.MinInt64, math.MaxInt64},
		{5, 3, 8, 2},
	}
	for _, tc := range tests {
		if got := satAdd(tc.a, tc.b); got != tc.add {
			t.Errorf("satAdd(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.add)
		}
		if got := satSub(tc.a, tc.b); got != tc.sub {
			t.Errorf("satSub(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.sub)
		}
	}
}

func TestInWindow(t *testing.T) {
	servers := []Server{
		{Addr: "a", AvgRTT: 40 * time.Millisecond},
		{Addr: "b", AvgRTT: 10 * time.Millisecond},
		{Addr: "c", AvgRTT: 25 * time.Millisecond},
		{Addr: "d", AvgRTT: 26 * time.Millisecond},
	}
	tests := []struct {
		threshold time.Duration
		want      []string
	}{
		{0, []string{"b"}},
		{-time.Second, []string{"b"}},
		{15 * time.Millisecond, []string{"b", "c"}},
		{16 * time.Millisecond, []string{"b", "c", "d"}},
		{time.Duration(math.MaxInt64), []string{"a", "b", "c", "d"}},
	}
	for _, tc := range tests {
		before := slices.Clone(servers)
		got := InWindow(servers, tc.threshold)
		var a []string
		for _, s := range got {
			a = append(a, s.Addr) // keeps order
		}
		if !slices.Equal(a, tc.want) {
			t.Errorf("InWindow(%v) = %v, want %v", tc.threshold, a, tc.want)
		}
		if !slices.EqualFunc(before, servers, func(x, y Server) bool { return x.Addr == y.Addr }) {
			t.Fatal("InWindow modified its input")
		}
	}
	if got := InWindow(nil, time.Second); len(got) != 0 {
		t.Errorf("InWindow(nil) = %v", got)
	}
}

func TestPick(t *testing.T) {
	if got := Pick(nil, nil); got.Addr != "" {
		t.Errorf("Pick(nil) = %v, want the zero Server", got)
	}
	one := []Server{{Addr: "only"}}
	if got := Pick(one, nil); got.Addr != "only" {
		t.Errorf("Pick(one) = %v", got)
	}
	// Of two, the one with fewer operations always wins, whatever the draw.
	two := []Server{{Addr: "busy", OperationCount: 3}, {Addr: "idle", OperationCount: 2}}
	r := rand.New(rand.NewPCG(7, 7))
	for range 200 {
		if got := Pick(two, r); got.Addr != "idle" {
			t.Fatalf("Pick chose %s, want idle", got.Addr)
		}
		if got := Pick(two, nil); got.Addr != "idle" {
			t.Fatalf("Pick with the global source chose %s, want idle", got.Addr)
		}
	}
	// The busiest of many is never chosen; the others all are.
	many := []Server{{Addr: "a"}, {Addr: "b"}, {Addr: "c"}, {Addr: "d", OperationCount: 1}}
	seen := map[string]int{}
	for range 2000 {
		seen[Pick(many, r).Addr]++
	}
	if seen["d"] != 0 || seen["a"] == 0 || seen["b"] == 0 || seen["c"] == 0 {
		t.Errorf("choices %v: want a, b and c chosen and d never", seen)
	}
}

func TestNextAvgRTT(t *testing.T) {
	tests := []struct {
		prev, sample time.Duration
		first        bool
		want         time.Duration
	}{
		{0, 7 * time.Millisecond, true, 7 * time.Millisecond},
		{100 * time.Millisecond, 0, true, 0},
		{10 * time.Millisecond, 20 * time.Millisecond, false, 12 * time.Millisecond},
		{time.Duration(math.MaxInt64), time.Duration(math.MaxInt64), false, time.Duration(math.MaxInt64)},
	}
	for _, tc := range tests {
		got := NextAvgRTT(tc.prev, tc.sample, tc.first)
		// Float rounding at the extremes may move the result by a few ns.
		if d := got - tc.want; d > 1024 || d < -1024 {
			t.Errorf("NextAvgRTT(%v, %v, %v) = %v, want %v", tc.prev, tc.sample, tc.first, got, tc.want)
		}
	}
}

func TestStrings(t *testing.T) {
	tests := []struct{ got, want string }{
		{ServerKind(99).String(), "ServerKind(99)"},
		{RSSecondary.String(), "RSSecondary"},
		{TopologyKind(-1).String(), "TopologyKind(-1)"},
		{ReplicaSetNoPrimary.String(), "ReplicaSetNoPrimary"},
		{Mode(7).String(), "Mode(7)"},
		{ReadPref{}.String(), "{mode: primary}"},
		{ReadPref{Mode: SecondaryPreferred, TagSets: []TagSet{{"rack": "2", "dc": "ny"}, {}}, MaxStaleness: 120 * time.Second}.String(),
			`{mode: secondaryPreferred, tagSets: [{dc: "ny", rack: "2"}, {}], maxStalenessSeconds: 120}`},
		{Write().String(), "write"},
		{Selector{ReadPref: ReadPref{Mode: Nearest}, Deprioritized: []string{"a:1"}, Filter: func(s []Server) []Server { return s }}.String(),
			"read {mode: nearest} deprioritized [a:1] with custom selector"},
		{Topology{Kind: Sharded, Servers: []Server{{Addr: "a:1", Kind: Mongos, AvgRTT: time.Millisecond}, {Addr: "b:1", Err: errors.New("connection refused")}}}.String(),
			`Sharded [a:1 Mongos rtt=1ms, b:1 Unknown error="connection refused"]`},
		{Topology{CompatibilityErr: errors.New("wire version 3 is too old")}.String(), "Unknown [] incompatible: wire version 3 is too old"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("got %s, want %s", tc.got, tc.want)
		}
	}
	if ServerKind(99).Available() || ServerKind(-1).Available() || Unknown.Available() || PossiblePrimary.Available() || !RSGhost.Available() {
		t.Error("Available is wrong for out-of-range or unavailable kinds")
	}
	// A large topology's summary is capped.
	var big Topology
	for range 40 {
		big.Servers = append(big.Servers, Server{Addr: "m:1", Kind: Mongos})
	}
	if s := big.String(); !strings.HasSuffix(s, ", ... 24 more]") {
		t.Errorf("summary of 40 servers: %s", s)
	}
}
