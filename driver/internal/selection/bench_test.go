package selection

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
)

// sevenMembers is a replica set of a primary and six secondaries in two
// data centres, all fresh enough for a maxStalenessSeconds of 120, with
// their operation counts.
func sevenMembers() (description.TopologyDescription, opCounts) {
	now := time.Unix(1_700_000_000, 0)
	top := description.TopologyDescription{Type: description.ReplicaSetWithPrimary}
	ops := opCounts{}
	dcs := []string{"ny", "sf"}
	for i := range 7 {
		s := description.ServerDescription{
			Address:        string(rune('a'+i)) + ".example.com:27017",
			Type:           description.RSSecondary,
			RoundTripTime:  time.Duration(2+i) * time.Millisecond,
			Tags:           map[string]string{"dc": dcs[i%2], "rack": string(rune('1' + i))},
			LastUpdateTime: now,
			LastWriteDate:  now.Add(-time.Duration(i) * time.Second),
		}
		if i == 0 {
			s.Type = description.RSPrimary
		}
		top.Servers = append(top.Servers, s)
		ops[s.Address] = int64(i % 3)
	}
	return top, ops
}

func BenchmarkSelect(b *testing.B) {
	benches := []struct {
		name string
		sel  Selector
	}{
		{"7members/primary", Read(ReadPref{})},
		{"7members/secondaryPreferred+tags+maxStaleness", Read(ReadPref{
			Mode:         SecondaryPreferred,
			TagSets:      []TagSet{{"dc": "tokyo"}, {"dc": "sf"}, {}},
			MaxStaleness: dur(120 * time.Second),
		})},
		{"7members/nearest", Read(ReadPref{Mode: Nearest})},
		{"7members/write", Write()},
	}
	top, ops := sevenMembers()
	src := &fakeSource{top: top, ops: ops, changed: make(chan struct{})}
	for _, bc := range benches {
		b.Run(bc.name, func(b *testing.B) {
			o := Options{LocalThreshold: DefaultLocalThreshold, Timeout: 30 * time.Second, HeartbeatFrequency: 10 * time.Second, Rand: rand.New(rand.NewPCG(1, 2))}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Select(b.Context(), src, bc.sel, o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// rs7RTTs are the average RTTs of a primary and six secondaries. make bench
// (bench/) gives the official driver the same replica set: for a
// secondaryPreferred read the 15ms window over the secondaries (lowest 2ms)
// keeps four of the six, and two of those four are drawn at random.
var rs7RTTs = []time.Duration{
	1 * time.Millisecond,
	2 * time.Millisecond, 4 * time.Millisecond, 8 * time.Millisecond,
	16 * time.Millisecond, 24 * time.Millisecond, 40 * time.Millisecond,
}

func rs7() (description.TopologyDescription, opCounts) {
	top := description.TopologyDescription{Type: description.ReplicaSetWithPrimary}
	ops := opCounts{}
	for i, rtt := range rs7RTTs {
		s := description.ServerDescription{Address: fmt.Sprintf("rs%d.example.com:27017", i), Type: description.RSSecondary, RoundTripTime: rtt}
		if i == 0 {
			s.Type = description.RSPrimary
		}
		top.Servers = append(top.Servers, s)
		ops[s.Address] = int64(i % 3)
	}
	return top, ops
}

// BenchmarkSelectRS7 is a secondaryPreferred read on rs7 with the default
// 15ms localThresholdMS: Select is the whole selection (snapshot, suitable
// servers, window, the choice between two by operation count);
// SuitableInWindow is the filtering alone, returned as new slices, which is
// what the official driver's read selector does.
func BenchmarkSelectRS7(b *testing.B) {
	top, ops := rs7()
	sel := Read(ReadPref{Mode: SecondaryPreferred})
	b.Run("Select", func(b *testing.B) {
		src := &fakeSource{top: top, ops: ops, changed: make(chan struct{})}
		o := Options{LocalThreshold: DefaultLocalThreshold, Timeout: DefaultTimeout}
		b.ReportAllocs()
		for b.Loop() {
			s, err := Select(b.Context(), src, sel, o)
			if err != nil {
				b.Fatal(err)
			}
			if s.Type != description.RSSecondary || s.RoundTripTime > rs7RTTs[1]+DefaultLocalThreshold {
				b.Fatalf("selected %s %s, outside the window of the secondaries", s.Address, s.Type)
			}
		}
	})
	b.Run("SuitableInWindow", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			suitable, err := Suitable(top, sel, 0)
			if err != nil {
				b.Fatal(err)
			}
			if w := InWindow(suitable, DefaultLocalThreshold); len(w) != 4 {
				b.Fatalf("window has %d servers, want 4", len(w))
			}
		}
	})
}
