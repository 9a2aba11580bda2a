package topology

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/driver/internal/selection"
	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
)

// rs7 returns a connected, unmonitored Topology of a primary and six
// secondaries with the RTTs of the selection package's rs7 benchmark (1ms
// for the primary; 2, 4, 8, 16, 24 and 40ms for the secondaries), fed
// descriptions as monitors would.
func rs7(tb testing.TB) *Topology {
	tb.Helper()
	rtts := []time.Duration{1, 2, 4, 8, 16, 24, 40}
	hosts := make([]string, len(rtts))
	for i := range rtts {
		hosts[i] = fmt.Sprintf("rs%d.example.com:27017", i)
	}
	topo, err := New(Config{Seeds: hosts, SetName: "rs", ConnConfig: connConfig})
	if err != nil {
		tb.Fatal(err)
	}
	topo.noMonitors = true
	if err := topo.Connect(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(topo.Close)
	now := time.Now()
	for i, rtt := range rtts {
		sd := description.ServerDescription{
			Address:        hosts[i],
			Type:           description.RSSecondary,
			RoundTripTime:  rtt * time.Millisecond,
			LastUpdateTime: now,
			LastWriteDate:  now,
			MinWireVersion: 0,
			MaxWireVersion: description.MaxSupportedWireVersion,
			Me:             hosts[i],
			Hosts:          hosts,
			SetName:        "rs",
		}
		if i == 0 {
			sd.Type = description.RSPrimary
			v := int64(1)
			sd.SetVersion = &v
		}
		s, ok := topo.Server(hosts[i])
		if !ok {
			tb.Fatalf("no server %s", hosts[i])
		}
		topo.apply(s, sd)
	}
	if d := topo.Description(); d.Type != description.ReplicaSetWithPrimary {
		tb.Fatalf("topology %v, want ReplicaSetWithPrimary", d.Type)
	}
	return topo
}

// BenchmarkTopologySelect is a whole selection through the Topology: the
// snapshot of the description, the selection itself, the lookup of the
// chosen server and its operation count.
func BenchmarkTopologySelect(b *testing.B) {
	topo := rs7(b)
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		sel  selection.Selector
	}{
		{"rs7/secondaryPreferred", selection.Read(selection.ReadPref{Mode: selection.SecondaryPreferred})},
		{"rs7/write", selection.Write()},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s, err := topo.Select(ctx, bc.sel)
				if err != nil {
					b.Fatal(err)
				}
				s.EndOperation()
			}
		})
	}
}
