package topology

import (
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
	"github.com/mongoscope/mongoscope/mongotest"
)

// TestLastServerRemoved: an update that removes the last server calls
// OnLastServerRemoved once, with the reply that got the server removed; an
// update that removes a server but leaves others, and Close, which also
// empties the topology, do not.
func TestLastServerRemoved(t *testing.T) {
	tests := []struct {
		name string
		// setup returns the seeds and the set name, and the type of the
		// last server removed ("" when no update empties the topology).
		setup func(t *testing.T) (seeds []string, setName, kind string)
	}{
		{"the one seed is in another set", func(t *testing.T) ([]string, string, string) {
			rs := mongotest.NewReplicaSet(t, 1, mongotest.ReplicaSetOptions{})
			return []string{rs.Members()[0].Addr()}, "not-" + rs.Name(), "RSPrimary"
		}},
		{"the one seed is a standalone, in a replica set", func(t *testing.T) ([]string, string, string) {
			s := mongotest.NewServer(t, mongotest.Options{})
			return []string{s.Addr()}, "rs", "Standalone"
		}},
		// The topology stays Unknown, and ends without servers, as a
		// closed one does.
		{"two standalone seeds", func(t *testing.T) ([]string, string, string) {
			a, b := mongotest.NewServer(t, mongotest.Options{}), mongotest.NewServer(t, mongotest.Options{})
			return []string{a.Addr(), b.Addr()}, "", "Standalone"
		}},
		{"one of two seeds removed", func(t *testing.T) ([]string, string, string) {
			rs := mongotest.NewReplicaSet(t, 1, mongotest.ReplicaSetOptions{})
			stray := mongotest.NewServer(t, mongotest.Options{})
			return []string{rs.Members()[0].Addr(), stray.Addr()}, rs.Name(), ""
		}},
		{"nothing removed", func(t *testing.T) ([]string, string, string) {
			s := mongotest.NewServer(t, mongotest.Options{})
			return []string{s.Addr()}, "", ""
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seeds, setName, kind := tt.setup(t)
			var (
				mu    sync.Mutex
				calls []LastServerRemoved
			)
			rec := &eventtest.Recorder{}
			topo := newTopology(t, Config{Seeds: seeds, SetName: setName, HeartbeatFrequency: 500 * time.Millisecond, Events: event.NewDispatcher(rec),
				OnLastServerRemoved: func(w LastServerRemoved) {
					mu.Lock()
					calls = append(calls, w)
					mu.Unlock()
				}})
			waitFor(t, topo, "every seed checked", func(d description.TopologyDescription) bool {
				for _, s := range d.Servers {
					if s.Type == description.Unknown {
						return false
					}
				}
				return true
			})
			time.Sleep(100 * time.Millisecond)
			topo.Close()
			mu.Lock()
			defer mu.Unlock()
			if kind == "" {
				if len(calls) != 0 {
					t.Fatalf("%d calls, want none: a server is left, and Close is no removal", len(calls))
				}
				return
			}
			if len(calls) != 1 {
				t.Fatalf("%d calls, want 1 (none for Close)", len(calls))
			}
			w := calls[0]
			if w.TopologyID != topo.ID() || len(w.Topology.Servers) != 0 || len(w.Removed) != 1 {
				t.Fatalf("call %+v", w)
			}
			r := w.Removed[0]
			seed := false
			for _, s := range seeds {
				seed = seed || r.Address == description.NormalizeAddress(s)
			}
			if !seed || r.Kind != kind {
				t.Fatalf("removed %s (%s), want a seed (%s)", r.Address, r.Kind, kind)
			}
		})
	}
}
