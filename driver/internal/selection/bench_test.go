package selection

import (
	"math/rand/v2"
	"testing"
	"time"
)

// sevenMembers is a replica set of a primary and six secondaries in two
// data centres, all fresh enough for a maxStalenessSeconds of 120.
func sevenMembers() Topology {
	now := time.Unix(1_700_000_000, 0)
	top := Topology{Kind: ReplicaSetWithPrimary, HeartbeatFrequency: 10 * time.Second}
	dcs := []string{"ny", "sf"}
	for i := range 7 {
		s := Server{
			Addr:           string(rune('a'+i)) + ".example.com:27017",
			Kind:           RSSecondary,
			AvgRTT:         time.Duration(2+i) * time.Millisecond,
			Tags:           map[string]string{"dc": dcs[i%2], "rack": string(rune('1' + i))},
			LastUpdateTime: now,
			LastWriteDate:  now.Add(-time.Duration(i) * time.Second),
			OperationCount: int64(i % 3),
		}
		if i == 0 {
			s.Kind = RSPrimary
		}
		top.Servers = append(top.Servers, s)
	}
	return top
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
			MaxStaleness: 120 * time.Second,
		})},
		{"7members/nearest", Read(ReadPref{Mode: Nearest})},
		{"7members/write", Write()},
	}
	src := &fakeSource{top: sevenMembers(), changed: make(chan struct{})}
	for _, bc := range benches {
		b.Run(bc.name, func(b *testing.B) {
			o := Options{LocalThreshold: DefaultLocalThreshold, Timeout: 30 * time.Second, Rand: rand.New(rand.NewPCG(1, 2))}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Select(b.Context(), src, bc.sel, o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
