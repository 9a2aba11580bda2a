package selection

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
	"github.com/mongoscope/mongoscope/internal/spectest"
)

// specServer is a server description as the selection spec tests write it.
type specServer struct {
	Address        string            `json:"address"`
	Type           string            `json:"type"`
	AvgRTTMS       *float64          `json:"avg_rtt_ms"`
	Tags           map[string]string `json:"tags"`
	LastUpdateTime *int64            `json:"lastUpdateTime"`
	LastWrite      *struct {
		LastWriteDate specLong `json:"lastWriteDate"`
	} `json:"lastWrite"`
	MaxWireVersion int32 `json:"maxWireVersion"`
}

// specLong reads an int64 written as a plain number or {"$numberLong": "n"}.
type specLong int64

func (l *specLong) UnmarshalJSON(b []byte) error {
	var wrapped struct {
		N string `json:"$numberLong"`
	}
	if len(b) > 0 && b[0] == '{' {
		if err := json.Unmarshal(b, &wrapped); err != nil {
			return err
		}
		n, err := strconv.ParseInt(wrapped.N, 10, 64)
		*l = specLong(n)
		return err
	}
	var n int64
	err := json.Unmarshal(b, &n)
	*l = specLong(n)
	return err
}

type specTopology struct {
	Type    string       `json:"type"`
	Servers []specServer `json:"servers"`
}

type specReadPref struct {
	Mode                string              `json:"mode"`
	TagSets             []map[string]string `json:"tag_sets"`
	MaxStalenessSeconds *float64            `json:"maxStalenessSeconds"`
}

// selectionCase is one server_selection or max-staleness file.
type selectionCase struct {
	HeartbeatFrequencyMS *int64        `json:"heartbeatFrequencyMS"`
	Topology             specTopology  `json:"topology_description"`
	Operation            string        `json:"operation"`
	ReadPreference       *specReadPref `json:"read_preference"`
	Deprioritized        []specServer  `json:"deprioritized_servers"`
	Suitable             []specServer  `json:"suitable_servers"`
	InLatencyWindow      []specServer  `json:"in_latency_window"`
	Error                bool          `json:"error"`
}

func readSpecJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

var specServerTypes = map[string]description.ServerType{
	"Unknown": description.Unknown, "Standalone": description.Standalone, "Mongos": description.Mongos,
	"RSPrimary": description.RSPrimary, "RSSecondary": description.RSSecondary, "RSArbiter": description.RSArbiter,
	"RSOther": description.RSOther, "RSGhost": description.RSGhost, "LoadBalancer": description.LoadBalancer,
	"PossiblePrimary": description.PossiblePrimary,
}

var specTopologyTypes = map[string]description.TopologyType{
	"Unknown": description.TopologyUnknown, "Single": description.Single, "ReplicaSetNoPrimary": description.ReplicaSetNoPrimary,
	"ReplicaSetWithPrimary": description.ReplicaSetWithPrimary, "Sharded": description.Sharded, "LoadBalanced": description.LoadBalanced,
}

func msDuration(ms float64) time.Duration {
	return time.Duration(math.Round(ms * float64(time.Millisecond)))
}

func (st specTopology) topology(t *testing.T) description.TopologyDescription {
	t.Helper()
	tt, ok := specTopologyTypes[st.Type]
	if !ok {
		t.Fatalf("unknown topology type %q", st.Type)
	}
	top := description.TopologyDescription{Type: tt}
	for _, s := range st.Servers {
		top.Servers = append(top.Servers, s.server(t))
	}
	return top
}

func (s specServer) server(t *testing.T) description.ServerDescription {
	t.Helper()
	st, ok := specServerTypes[s.Type]
	if !ok {
		t.Fatalf("unknown server type %q", s.Type)
	}
	srv := description.ServerDescription{Address: s.Address, Type: st, Tags: s.Tags, MaxWireVersion: s.MaxWireVersion}
	if s.AvgRTTMS != nil {
		srv.RoundTripTime = msDuration(*s.AvgRTTMS)
	}
	if s.LastUpdateTime != nil {
		srv.LastUpdateTime = time.UnixMilli(*s.LastUpdateTime)
	}
	if s.LastWrite != nil {
		srv.LastWriteDate = time.UnixMilli(int64(s.LastWrite.LastWriteDate))
	}
	return srv
}

func (c selectionCase) selector(t *testing.T) Selector {
	t.Helper()
	var sel Selector
	switch c.Operation {
	case "", "read":
	case "write":
		sel.Write = true
	default:
		t.Fatalf("unknown operation %q", c.Operation)
	}
	if rp := c.ReadPreference; rp != nil {
		if rp.Mode != "" {
			m, err := ParseMode(rp.Mode)
			if err != nil {
				t.Fatal(err)
			}
			sel.ReadPref.Mode = m
		}
		for _, ts := range rp.TagSets {
			sel.ReadPref.TagSets = append(sel.ReadPref.TagSets, TagSet(ts))
		}
		if rp.MaxStalenessSeconds != nil {
			sel.ReadPref.MaxStaleness = dur(time.Duration(*rp.MaxStalenessSeconds * float64(time.Second)))
		}
	}
	for _, s := range c.Deprioritized {
		sel.Deprioritized = append(sel.Deprioritized, s.Address)
	}
	return sel
}

func (c selectionCase) heartbeat() time.Duration {
	if c.HeartbeatFrequencyMS == nil {
		return 0
	}
	return time.Duration(*c.HeartbeatFrequencyMS) * time.Millisecond
}

func addrs(servers []*description.ServerDescription) []string {
	out := make([]string, len(servers))
	for i, s := range servers {
		out[i] = s.Address
	}
	slices.Sort(out)
	return out
}

func specAddrs(servers []specServer) []string {
	out := make([]string, len(servers))
	for i, s := range servers {
		out[i] = s.Address
	}
	slices.Sort(out)
	return out
}

// runSelectionCase checks one file: the error, or the suitable servers and
// the latency window under the default localThresholdMS.
func runSelectionCase(t *testing.T, path string) {
	var c selectionCase
	readSpecJSON(t, path, &c)
	top := c.Topology.topology(t)
	sel := c.selector(t)
	suitable, err := Suitable(top, sel, c.heartbeat())
	if c.Error {
		if err == nil {
			t.Fatalf("Suitable succeeded with %v, want an error", addrs(suitable))
		}
		if _, ok := err.(*Error); !ok {
			t.Fatalf("error %T %v, want *Error", err, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("Suitable: %v", err)
	}
	if got, want := addrs(suitable), specAddrs(c.Suitable); !slices.Equal(got, want) {
		t.Errorf("suitable %v, want %v", got, want)
	}
	window := InWindow(suitable, DefaultLocalThreshold)
	if got, want := addrs(window), specAddrs(c.InLatencyWindow); !slices.Equal(got, want) {
		t.Errorf("in latency window %v, want %v", got, want)
	}
	// The selection loop must agree: it picks a server of the window, or
	// fails at once with the same validation error.
	src := &fakeSource{top: top, changed: make(chan struct{})}
	got, err := Select(t.Context(), src, sel, Options{LocalThreshold: DefaultLocalThreshold, HeartbeatFrequency: c.heartbeat(), Timeout: time.Millisecond})
	if len(window) > 0 {
		if err != nil {
			t.Fatalf("Select: %v", err)
		}
		if !contains(window, got) {
			t.Errorf("Select chose %s, not in the window %v", got.Address, addrs(window))
		}
	} else if err == nil {
		t.Errorf("Select chose %s, want a timeout", got.Address)
	}
}

func relName(root, path string) string {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return filepath.Base(path)
	}
	return strings.TrimSuffix(filepath.ToSlash(rel), ".json")
}

func runSelectionSuite(t *testing.T, suite string, dir ...string) {
	files := spectest.Files(t, "*.json", dir...)
	root, _ := spectest.Root()
	base := filepath.Join(append([]string{root}, dir...)...)
	tally := spectest.NewTally(suite)
	for _, path := range files {
		tally.Run(t, relName(base, path), func(t *testing.T) { runSelectionCase(t, path) })
	}
	tally.Log(t)
}

func TestSpecServerSelection(t *testing.T) {
	runSelectionSuite(t, "server-selection/server_selection", "server-selection", "tests", "server_selection")
}

func TestSpecMaxStaleness(t *testing.T) {
	runSelectionSuite(t, "max-staleness", "max-staleness", "tests")
}

// TestSpecInWindow runs the statistical tests: with the mocked operation
// counts fixed, `iterations` nearest reads must pick each server at its
// expected frequency, within the tolerance (exactly, for 0 and 1).
func TestSpecInWindow(t *testing.T) {
	tally := spectest.NewTally("server-selection/in_window")
	for _, path := range spectest.Files(t, "*.json", "server-selection", "tests", "in_window") {
		tally.Run(t, strings.TrimSuffix(filepath.Base(path), ".json"), func(t *testing.T) {
			var c struct {
				Topology specTopology `json:"topology_description"`
				Mocked   []struct {
					Address        string `json:"address"`
					OperationCount int64  `json:"operation_count"`
				} `json:"mocked_topology_state"`
				Iterations int `json:"iterations"`
				Outcome    struct {
					Tolerance float64            `json:"tolerance"`
					Expected  map[string]float64 `json:"expected_frequencies"`
				} `json:"outcome"`
			}
			readSpecJSON(t, path, &c)
			top := c.Topology.topology(t)
			ops := opCounts{}
			for _, m := range c.Mocked {
				if !slices.ContainsFunc(top.Servers, func(s description.ServerDescription) bool { return s.Address == m.Address }) {
					t.Fatalf("mocked state for %s, which is not in the topology", m.Address)
				}
				ops[m.Address] = m.OperationCount
			}
			src := &fakeSource{top: top, ops: ops, changed: make(chan struct{})}
			r := rand.New(rand.NewPCG(1, uint64(len(path))))
			counts := map[string]int{}
			for range c.Iterations {
				s, err := Select(t.Context(), src, Read(ReadPref{Mode: Nearest}), Options{LocalThreshold: DefaultLocalThreshold, Rand: r, Timeout: time.Second})
				if err != nil {
					t.Fatal(err)
				}
				counts[s.Address]++
			}
			for addr, want := range c.Outcome.Expected {
				got := float64(counts[addr]) / float64(c.Iterations)
				exact := want == 0 || want == 1
				if (exact && got != want) || math.Abs(got-want) > c.Outcome.Tolerance {
					t.Errorf("%s chosen at frequency %.4f, want %.4f ± %g", addr, got, want, c.Outcome.Tolerance)
				}
			}
			if len(counts) > len(c.Outcome.Expected) {
				t.Errorf("chose servers %v, expected only %v", counts, c.Outcome.Expected)
			}
			t.Log(fmt.Sprint(counts))
		})
	}
	tally.Log(t)
}
