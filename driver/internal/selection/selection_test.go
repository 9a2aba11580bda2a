package selection

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
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
	rs := description.ReplicaSetWithPrimary
	tests := []struct {
		name      string
		rp        ReadPref
		tt        description.TopologyType
		heartbeat time.Duration
		wantField string // "" means valid
		static    bool   // Validate, without a topology, refuses it too
	}{
		{"primary default", ReadPref{}, rs, 0, "", false},
		{"primary with empty tag set", ReadPref{TagSets: []TagSet{{}}}, rs, 0, "", false},
		{"primary with tags", ReadPref{TagSets: []TagSet{{"dc": "ny"}}}, rs, 0, "tagSets", true},
		{"primary with tags on sharded", ReadPref{TagSets: []TagSet{{}, {"dc": "ny"}}}, description.Sharded, 0, "tagSets", true},
		{"primary with max staleness", ReadPref{MaxStaleness: dur(120 * time.Second)}, rs, 0, "maxStalenessSeconds", true},
		{"primary with max staleness on single", ReadPref{MaxStaleness: dur(120 * time.Second)}, description.Single, 0, "maxStalenessSeconds", true},
		// -1 means "no maximum", so it is allowed even with mode primary.
		{"primary with no max staleness (-1)", ReadPref{MaxStaleness: dur(NoMaxStaleness)}, rs, 0, "", false},
		{"no max staleness (-1)", ReadPref{Mode: Nearest, MaxStaleness: dur(NoMaxStaleness)}, rs, 0, "", false},
		{"no max staleness (nil)", ReadPref{Mode: Nearest}, rs, 0, "", false},
		// Zero is neither "no maximum" nor a positive number of seconds.
		{"max staleness 0", ReadPref{Mode: Secondary, MaxStaleness: dur(0)}, rs, 0, "maxStalenessSeconds", true},
		{"max staleness 0 on sharded", ReadPref{Mode: Nearest, MaxStaleness: dur(0)}, description.Sharded, 0, "maxStalenessSeconds", true},
		{"max staleness 0 on unknown", ReadPref{Mode: SecondaryPreferred, MaxStaleness: dur(0)}, description.TopologyUnknown, 0, "maxStalenessSeconds", true},
		{"max staleness 0 with primary", ReadPref{MaxStaleness: dur(0)}, description.Single, 0, "maxStalenessSeconds", true},
		{"max staleness not whole seconds", ReadPref{Mode: Secondary, MaxStaleness: dur(90*time.Second + time.Millisecond)}, rs, 0, "maxStalenessSeconds", true},
		{"max staleness 90s", ReadPref{Mode: Secondary, MaxStaleness: dur(90 * time.Second)}, rs, 0, "", false},
		{"max staleness 89s", ReadPref{Mode: Secondary, MaxStaleness: dur(89 * time.Second)}, rs, 0, "maxStalenessSeconds", false},
		{"max staleness 89s, no primary", ReadPref{Mode: Secondary, MaxStaleness: dur(89 * time.Second)}, description.ReplicaSetNoPrimary, 0, "maxStalenessSeconds", false},
		{"max staleness small on sharded", ReadPref{Mode: Secondary, MaxStaleness: dur(time.Second)}, description.Sharded, 0, "", false},
		{"max staleness small on unknown", ReadPref{Mode: Nearest, MaxStaleness: dur(time.Second)}, description.TopologyUnknown, 0, "", false},
		{"max staleness small on load balanced", ReadPref{Mode: Nearest, MaxStaleness: dur(time.Second)}, description.LoadBalanced, 0, "", false},
		// max(90s, heartbeatFrequencyMS + idleWritePeriodMS): the second
		// term decides once the heartbeat passes 80s.
		{"90s under heartbeat 81s plus idle write", ReadPref{Mode: Nearest, MaxStaleness: dur(90 * time.Second)}, rs, 81 * time.Second, "maxStalenessSeconds", false},
		{"91s with heartbeat 81s plus idle write", ReadPref{Mode: Nearest, MaxStaleness: dur(91 * time.Second)}, rs, 81 * time.Second, "", false},
		{"90s with heartbeat 80s plus idle write", ReadPref{Mode: Nearest, MaxStaleness: dur(90 * time.Second)}, rs, 80 * time.Second, "", false},
		{"below heartbeat plus idle write", ReadPref{Mode: Nearest, MaxStaleness: dur(129 * time.Second)}, rs, 120 * time.Second, "maxStalenessSeconds", false},
		{"equal to heartbeat plus idle write", ReadPref{Mode: Nearest, MaxStaleness: dur(130 * time.Second)}, rs, 120 * time.Second, "", false},
		{"heartbeat 500ms still needs 90s", ReadPref{Mode: Nearest, MaxStaleness: dur(89 * time.Second)}, rs, 500 * time.Millisecond, "maxStalenessSeconds", false},
		{"unknown mode", ReadPref{Mode: Mode(9)}, rs, 0, "mode", true},
		{"negative mode", ReadPref{Mode: Mode(-1)}, description.Single, 0, "mode", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.rp.ValidateFor(tc.tt, tc.heartbeat)
			staticErr := tc.rp.Validate()
			if tc.wantField == "" {
				if err != nil || staticErr != nil {
					t.Fatalf("ValidateFor: %v; Validate: %v", err, staticErr)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Field != tc.wantField {
				t.Fatalf("ValidateFor error %v, want *Error for %s", err, tc.wantField)
			}
			if !strings.Contains(err.Error(), tc.wantField) {
				t.Errorf("message %q does not name %s", err, tc.wantField)
			}
			if (staticErr != nil) != tc.static {
				t.Errorf("Validate without a topology: %v; want an error: %v", staticErr, tc.static)
			}
			// Suitable refuses the same read preference.
			if _, err := Suitable(description.TopologyDescription{Type: tc.tt}, Read(tc.rp), tc.heartbeat); !errors.As(err, &e) {
				t.Errorf("Suitable error %v, want *Error", err)
			}
		})
	}
}

// rsTopology is a replica set with a primary a, secondaries b (dc ny) and c
// (dc sf), and an arbiter, a ghost and an unknown member.
func rsTopology() description.TopologyDescription {
	now := time.Unix(1_700_000_000, 0)
	return description.TopologyDescription{Type: description.ReplicaSetWithPrimary, Servers: []description.ServerDescription{
		{Address: "a:1", Type: description.RSPrimary, RoundTripTime: 10 * time.Millisecond, Tags: map[string]string{"dc": "ny"}, LastUpdateTime: now, LastWriteDate: now},
		{Address: "b:1", Type: description.RSSecondary, RoundTripTime: 5 * time.Millisecond, Tags: map[string]string{"dc": "ny", "rack": "1"}, LastUpdateTime: now, LastWriteDate: now.Add(-time.Second)},
		{Address: "c:1", Type: description.RSSecondary, RoundTripTime: 30 * time.Millisecond, Tags: map[string]string{"dc": "sf"}, LastUpdateTime: now, LastWriteDate: now.Add(-200 * time.Second)},
		{Address: "d:1", Type: description.RSArbiter, RoundTripTime: time.Millisecond},
		{Address: "e:1", Type: description.RSGhost, RoundTripTime: time.Millisecond},
		{Address: "f:1", Type: description.Unknown},
	}}
}

func servers(tt description.TopologyType, ss ...description.ServerDescription) description.TopologyDescription {
	return description.TopologyDescription{Type: tt, Servers: ss}
}

func TestSuitable(t *testing.T) {
	rs := rsTopology()
	noPrimary := rsTopology()
	noPrimary.Type = description.ReplicaSetNoPrimary
	noPrimary.Servers = slices.Clone(noPrimary.Servers)
	noPrimary.Servers[0].Type = description.Unknown
	mongos := func(addr string) description.ServerDescription {
		return description.ServerDescription{Address: addr, Type: description.Mongos}
	}
	sharded := servers(description.Sharded, mongos("m1:1"), mongos("m2:1"), mongos("m3:1"))
	keepOnly := func(addr string) func([]*description.ServerDescription) []*description.ServerDescription {
		return func(ss []*description.ServerDescription) []*description.ServerDescription {
			return slices.DeleteFunc(ss, func(s *description.ServerDescription) bool { return s.Address != addr })
		}
	}
	tests := []struct {
		name string
		top  description.TopologyDescription
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
		{"secondary, max staleness drops c", rs, Read(ReadPref{Mode: Secondary, MaxStaleness: dur(100 * time.Second)}), []string{"b:1"}},
		{"secondary, no max staleness (-1) keeps c", rs, Read(ReadPref{Mode: Secondary, MaxStaleness: dur(NoMaxStaleness)}), []string{"b:1", "c:1"}},
		{"staleness before tags", rs, Read(ReadPref{Mode: Secondary, MaxStaleness: dur(100 * time.Second), TagSets: []TagSet{{"dc": "sf"}, {}}}), []string{"b:1"}},
		{"secondaryPreferred falls back to primary", rs, Read(ReadPref{Mode: SecondaryPreferred, TagSets: []TagSet{{"dc": "tokyo"}}}), []string{"a:1"}},
		{"primaryPreferred takes the primary", rs, Read(ReadPref{Mode: PrimaryPreferred, TagSets: []TagSet{{"dc": "sf"}}}), []string{"a:1"}},
		{"primaryPreferred without primary", noPrimary, Read(ReadPref{Mode: PrimaryPreferred, TagSets: []TagSet{{"dc": "sf"}}}), []string{"c:1"}},
		{"nearest", rs, Read(ReadPref{Mode: Nearest, TagSets: []TagSet{{"dc": "ny"}}}), []string{"a:1", "b:1"}},
		{"nearest, staleness against freshest secondary", noPrimary, Read(ReadPref{Mode: Nearest, MaxStaleness: dur(150 * time.Second)}), []string{"b:1"}},
		{"deprioritized skipped", rs, Selector{ReadPref: ReadPref{Mode: Nearest}, Deprioritized: []string{"b:1", "x:1"}}, []string{"a:1", "c:1"}},
		{"all deprioritized: used anyway", rs, Selector{Write: true, Deprioritized: []string{"a:1"}}, []string{"a:1"}},
		{"secondaryPreferred, secondaries deprioritized", rs, Selector{ReadPref: ReadPref{Mode: SecondaryPreferred}, Deprioritized: []string{"b:1", "c:1"}}, []string{"a:1"}},
		{"custom filter", rs, Selector{ReadPref: ReadPref{Mode: Nearest}, Filter: func(s []*description.ServerDescription) []*description.ServerDescription { return s[len(s)-1:] }}, []string{"c:1"}},
		{"custom filter returns none", rs, Selector{ReadPref: ReadPref{Mode: Nearest}, Filter: func([]*description.ServerDescription) []*description.ServerDescription { return nil }}, nil},
		// The application's selector runs after the deprioritized
		// fallback (Server Selection Algorithm, steps 3 and 4): it sees the
		// deprioritized servers only when nothing else was suitable, and
		// emptying the list does not bring them back.
		{"custom filter after deprioritized, others kept", sharded, Selector{Write: true, Deprioritized: []string{"m1:1"}, Filter: keepOnly("m1:1")}, nil},
		{"custom filter after deprioritized, all deprioritized", sharded, Selector{Write: true, Deprioritized: []string{"m1:1", "m2:1", "m3:1"}, Filter: keepOnly("m1:1")}, []string{"m1:1"}},
		{"sharded, deprioritized mongos skipped", sharded, Selector{ReadPref: ReadPref{Mode: Secondary}, Deprioritized: []string{"m2:1"}}, []string{"m1:1", "m3:1"}},
		{"load balanced, deprioritized used anyway", servers(description.LoadBalanced, description.ServerDescription{Address: "lb:1", Type: description.LoadBalancer}), Selector{Write: true, Deprioritized: []string{"lb:1"}}, []string{"lb:1"}},
		{"unknown topology", servers(description.TopologyUnknown, description.ServerDescription{Address: "a:1", Type: description.Standalone}), Write(), nil},
		{"single ignores read preference", servers(description.Single, description.ServerDescription{Address: "a:1", Type: description.RSSecondary}), Write(), []string{"a:1"}},
		{"single ignores tags and staleness", servers(description.Single, description.ServerDescription{Address: "a:1", Type: description.RSArbiter}), Read(ReadPref{Mode: Secondary, TagSets: []TagSet{{"dc": "tokyo"}}, MaxStaleness: dur(time.Second)}), []string{"a:1"}},
		{"single unknown server", servers(description.Single, description.ServerDescription{Address: "a:1", Type: description.Unknown}), Read(ReadPref{Mode: Nearest}), nil},
		{"single possible primary", servers(description.Single, description.ServerDescription{Address: "a:1", Type: description.PossiblePrimary}), Write(), nil},
		{"sharded skips unknown", servers(description.Sharded, mongos("a:1"), description.ServerDescription{Address: "b:1", Type: description.Unknown}), Read(ReadPref{Mode: Secondary}), []string{"a:1"}},
		{"sharded ignores tags and staleness", servers(description.Sharded, mongos("a:1")), Read(ReadPref{Mode: Secondary, TagSets: []TagSet{{"dc": "tokyo"}}, MaxStaleness: dur(time.Second)}), []string{"a:1"}},
		{"load balanced", servers(description.LoadBalanced, description.ServerDescription{Address: "lb:1", Type: description.LoadBalancer}), Write(), []string{"lb:1"}},
		{"bad topology type", servers(description.TopologyType(42), mongos("a:1")), Write(), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := slices.Clone(tc.top.Servers)
			got, err := Suitable(tc.top, tc.sel, 0)
			if err != nil {
				t.Fatal(err)
			}
			if a := addrs(got); !slices.Equal(a, tc.want) && (len(a) != 0 || len(tc.want) != 0) {
				t.Errorf("Suitable = %v, want %v", a, tc.want)
			}
			for _, s := range got {
				if !inTopology(tc.top, s) {
					t.Errorf("Suitable returned %s, which does not point into the topology", s.Address)
				}
			}
			for i := range before {
				if before[i].Address != tc.top.Servers[i].Address || before[i].Type != tc.top.Servers[i].Type {
					t.Fatalf("Suitable modified the topology")
				}
			}
		})
	}
}

// Dates from a server can be anything: staleness saturates rather than
// wrapping, so an absurdly old secondary is stale, never fresh.
func TestStalenessSaturates(t *testing.T) {
	top := servers(description.ReplicaSetWithPrimary,
		description.ServerDescription{Address: "p:1", Type: description.RSPrimary, LastUpdateTime: time.Unix(0, 0), LastWriteDate: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)},
		description.ServerDescription{Address: "s:1", Type: description.RSSecondary, LastUpdateTime: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), LastWriteDate: time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)},
	)
	got, err := Suitable(top, Read(ReadPref{Mode: Secondary, MaxStaleness: dur(100 * time.Second)}), 0)
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

// TestStalenessSpecExamples checks the estimate against the worked examples
// of the Max Staleness specification, which no JSON test carries (their
// staleness is below the 90s a replica set read may ask for, so only the
// estimate itself can be checked). Times are seconds past midnight.
func TestStalenessSpecExamples(t *testing.T) {
	at := func(sec float64) time.Time {
		return time.Date(2016, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(sec * float64(time.Second)))
	}
	member := func(addr string, st description.ServerType, lastUpdate, lastWrite float64) description.ServerDescription {
		return description.ServerDescription{Address: addr, Type: st, LastUpdateTime: at(lastUpdate), LastWriteDate: at(lastWrite)}
	}
	tests := []struct {
		name      string
		top       description.TopologyDescription
		heartbeat time.Duration
		want      map[string]time.Duration
	}{
		// "Estimating Staleness: Example With a Primary and Continuous
		// Writes": the primary's clock is 50s ahead of the client's.
		{"with primary, both checked at 60", servers(description.ReplicaSetWithPrimary,
			member("p", description.RSPrimary, 60, 10), member("s", description.RSSecondary, 60, 0)),
			10 * time.Second, map[string]time.Duration{"p": 0, "s": 20 * time.Second}},
		{"with primary, S checked again at 70", servers(description.ReplicaSetWithPrimary,
			member("p", description.RSPrimary, 60, 10), member("s", description.RSSecondary, 70, 5)),
			10 * time.Second, map[string]time.Duration{"s": 25 * time.Second}},
		{"with primary, P checked again at 80", servers(description.ReplicaSetWithPrimary,
			member("p", description.RSPrimary, 80, 30), member("s", description.RSSecondary, 70, 5)),
			10 * time.Second, map[string]time.Duration{"s": 25 * time.Second}},
		// "Example With No Primary": SMax is S1.
		{"no primary", servers(description.ReplicaSetNoPrimary,
			member("s1", description.RSSecondary, 0, 20), member("s2", description.RSSecondary, 0, 5)),
			10 * time.Second, map[string]time.Duration{"s1": 10 * time.Second, "s2": 25 * time.Second}},
		// "Example of Worst-Case Accuracy With Idle Replica Set".
		{"idle replica set", servers(description.ReplicaSetWithPrimary,
			member("p", description.RSPrimary, 60, 60), member("s", description.RSSecondary, 60, 50)),
			500 * time.Millisecond, map[string]time.Duration{"s": 10500 * time.Millisecond}},
		// Only secondaries can be SMax: a newer lastWriteDate on another
		// member type anchors nothing.
		{"no primary, SMax among secondaries only", servers(description.ReplicaSetNoPrimary,
			member("o", description.RSOther, 0, 100), member("u", description.Unknown, 0, 100), member("s1", description.RSSecondary, 0, 20), member("s2", description.RSSecondary, 0, 5)),
			10 * time.Second, map[string]time.Duration{"s1": 10 * time.Second, "s2": 25 * time.Second}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := newStaleness(&tc.top, tc.heartbeat)
			for i := range tc.top.Servers {
				s := &tc.top.Servers[i]
				want, ok := tc.want[s.Address]
				if !ok {
					continue
				}
				if got := st.of(s); got != want {
					t.Errorf("staleness of %s = %v, want %v", s.Address, got, want)
				}
			}
		})
	}
}

// TestStalenessWithAndWithoutPrimary: the same secondaries are measured
// against the primary in ReplicaSetWithPrimary and against the freshest
// secondary in ReplicaSetNoPrimary, and a secondary whose staleness equals
// maxStalenessSeconds is still eligible.
func TestStalenessWithAndWithoutPrimary(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	primary := description.ServerDescription{Address: "p:1", Type: description.RSPrimary, LastUpdateTime: now, LastWriteDate: now}
	s1 := description.ServerDescription{Address: "s1:1", Type: description.RSSecondary, LastUpdateTime: now, LastWriteDate: now.Add(-95 * time.Second)}
	s2 := description.ServerDescription{Address: "s2:1", Type: description.RSSecondary, LastUpdateTime: now, LastWriteDate: now.Add(-50 * time.Second)}
	tests := []struct {
		name         string
		top          description.TopologyDescription
		maxStaleness time.Duration
		want         []string
	}{
		// s1: 95s behind the primary + 10s heartbeat = 105s.
		{"with primary", servers(description.ReplicaSetWithPrimary, primary, s1, s2), 100 * time.Second, []string{"s2:1"}},
		{"with primary, at the limit", servers(description.ReplicaSetWithPrimary, primary, s1, s2), 105 * time.Second, []string{"s1:1", "s2:1"}},
		// Without the primary, s1 is 45s behind s2 (SMax): 55s.
		{"without primary", servers(description.ReplicaSetNoPrimary, s1, s2), 100 * time.Second, []string{"s1:1", "s2:1"}},
		// The primary's own staleness is zero, however old its dates.
		{"nearest keeps the primary", servers(description.ReplicaSetWithPrimary,
			description.ServerDescription{Address: "p:1", Type: description.RSPrimary, LastUpdateTime: now, LastWriteDate: now.Add(-time.Hour)}, s1),
			100 * time.Second, []string{"p:1", "s1:1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mode := Secondary
			if strings.HasPrefix(tc.name, "nearest") {
				mode = Nearest
			}
			got, err := Suitable(tc.top, Read(ReadPref{Mode: mode, MaxStaleness: dur(tc.maxStaleness)}), 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if a := addrs(got); !slices.Equal(a, tc.want) {
				t.Errorf("eligible %v, want %v", a, tc.want)
			}
		})
	}
}

func TestInWindow(t *testing.T) {
	all := []description.ServerDescription{
		{Address: "a", RoundTripTime: 40 * time.Millisecond},
		{Address: "b", RoundTripTime: 10 * time.Millisecond},
		{Address: "c", RoundTripTime: 25 * time.Millisecond},
		{Address: "d", RoundTripTime: 26 * time.Millisecond},
	}
	ptrs := make([]*description.ServerDescription, len(all))
	for i := range all {
		ptrs[i] = &all[i]
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
		before := slices.Clone(ptrs)
		got := InWindow(ptrs, tc.threshold)
		var a []string
		for _, s := range got {
			a = append(a, s.Address) // keeps order
		}
		if !slices.Equal(a, tc.want) {
			t.Errorf("InWindow(%v) = %v, want %v", tc.threshold, a, tc.want)
		}
		if !slices.Equal(before, ptrs) {
			t.Fatal("InWindow modified its input")
		}
	}
	if got := InWindow(nil, time.Second); len(got) != 0 {
		t.Errorf("InWindow(nil) = %v", got)
	}
}

// panicCounter fails the test if the choice consults operation counts.
type panicCounter struct{ t *testing.T }

func (c panicCounter) OperationCount(addr string) int64 {
	c.t.Errorf("OperationCount(%s) consulted for a window of one", addr)
	return 0
}

func TestPick(t *testing.T) {
	if got := Pick(nil, opCounts{}, nil); got != nil {
		t.Errorf("Pick(nil) = %v, want nil", got)
	}
	ptrs := func(ss ...description.ServerDescription) []*description.ServerDescription {
		out := make([]*description.ServerDescription, len(ss))
		for i := range ss {
			out[i] = &ss[i]
		}
		return out
	}
	// A window of one is chosen without looking at operation counts.
	one := ptrs(description.ServerDescription{Address: "only"})
	if got := Pick(one, panicCounter{t}, nil); got.Address != "only" {
		t.Errorf("Pick(one) = %v", got.Address)
	}
	// Of two, the one with fewer operations always wins, whatever the draw.
	two := ptrs(description.ServerDescription{Address: "busy"}, description.ServerDescription{Address: "idle"})
	ops := opCounts{"busy": 3, "idle": 2}
	r := rand.New(rand.NewPCG(7, 7))
	for range 200 {
		if got := Pick(two, ops, r); got.Address != "idle" {
			t.Fatalf("Pick chose %s, want idle", got.Address)
		}
		if got := Pick(two, ops, nil); got.Address != "idle" {
			t.Fatalf("Pick with the global source chose %s, want idle", got.Address)
		}
	}
	// The busiest of many is never chosen; the others all are.
	many := ptrs(description.ServerDescription{Address: "a"}, description.ServerDescription{Address: "b"}, description.ServerDescription{Address: "c"}, description.ServerDescription{Address: "d"})
	ops = opCounts{"d": 1}
	seen := map[string]int{}
	for range 2000 {
		seen[Pick(many, ops, r).Address]++
	}
	if seen["d"] != 0 || seen["a"] == 0 || seen["b"] == 0 || seen["c"] == 0 {
		t.Errorf("choices %v: want a, b and c chosen and d never", seen)
	}
}

func TestStrings(t *testing.T) {
	tests := []struct{ got, want string }{
		{Mode(7).String(), "Mode(7)"},
		{ReadPref{}.String(), "{mode: primary}"},
		{ReadPref{Mode: SecondaryPreferred, TagSets: []TagSet{{"rack": "2", "dc": "ny"}, {}}, MaxStaleness: dur(120 * time.Second)}.String(),
			`{mode: secondaryPreferred, tagSets: [{dc: "ny", rack: "2"}, {}], maxStalenessSeconds: 120}`},
		{ReadPref{Mode: Secondary, MaxStaleness: dur(NoMaxStaleness)}.String(), "{mode: secondary}"},
		{ReadPref{Mode: Secondary, MaxStaleness: dur(0)}.String(), "{mode: secondary, maxStalenessSeconds: 0}"},
		{Write().String(), "write"},
		{Selector{ReadPref: ReadPref{Mode: SecondaryPreferred}}.String(), "read {mode: secondaryPreferred}"},
		{Selector{ReadPref: ReadPref{Mode: Secondary, MaxStaleness: dur(NoMaxStaleness)}}.String(), "read {mode: secondary}"},
		{Selector{ReadPref: ReadPref{Mode: Secondary, MaxStaleness: dur(90 * time.Second)}}.String(), "read {mode: secondary, maxStalenessSeconds: 90}"},
		{Selector{ReadPref: ReadPref{Mode: Nearest, TagSets: []TagSet{{"dc": "ny"}}}}.String(), `read {mode: nearest, tagSets: [{dc: "ny"}]}`},
		{Selector{ReadPref: ReadPref{Mode: Mode(9)}}.String(), "read {mode: Mode(9)}"},
		{Selector{ReadPref: ReadPref{Mode: Nearest}, Deprioritized: []string{"a:1"}, Filter: func(s []*description.ServerDescription) []*description.ServerDescription { return s }}.String(),
			"read {mode: nearest} deprioritized [a:1] with custom selector"},
		{Summary(servers(description.Sharded, description.ServerDescription{Address: "a:1", Type: description.Mongos, RoundTripTime: time.Millisecond}, description.ServerDescription{Address: "b:1", Error: errors.New("connection refused")})),
			`Sharded [a:1 Mongos rtt=1ms, b:1 Unknown error="connection refused"]`},
		{Summary(description.TopologyDescription{CompatibilityErr: errors.New("wire version 3 is too old")}), "Unknown [] incompatible: wire version 3 is too old"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("got %s, want %s", tc.got, tc.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = Selector{ReadPref: ReadPref{Mode: Nearest}}.String() }); n != 0 {
		t.Errorf("a plain read selector's text allocates %v times", n)
	}
	if available(description.ServerType(99)) || available(description.Unknown) || available(description.PossiblePrimary) || !available(description.RSGhost) {
		t.Error("available is wrong for out-of-range or unavailable types")
	}
	// A large topology's summary is capped.
	var big description.TopologyDescription
	for range 40 {
		big.Servers = append(big.Servers, description.ServerDescription{Address: "m:1", Type: description.Mongos})
	}
	if s := Summary(big); !strings.HasSuffix(s, ", ... 24 more]") {
		t.Errorf("summary of 40 servers: %s", s)
	}
}
