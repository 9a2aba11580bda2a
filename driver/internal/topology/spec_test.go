package topology

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/mongoscope/mongoscope/driver/internal/conn"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/connstring"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
	"github.com/mongoscope/mongoscope/driver/internal/handshake"
	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
	"github.com/mongoscope/mongoscope/internal/spectest"
)

type specMonitoringFile struct {
	Description string `json:"description"`
	URI         string `json:"uri"`
	Phases      []struct {
		Responses []json.RawMessage `json:"responses"`
		Outcome   struct {
			Events []map[string]json.RawMessage `json:"events"`
		} `json:"outcome"`
	} `json:"phases"`
}

type specServer struct {
	Address string `json:"address"`
	Type    string `json:"type"`
}

type specTopology struct {
	TopologyType string       `json:"topologyType"`
	Servers      []specServer `json:"servers"`
}

type specEvent struct {
	Address             string          `json:"address"`
	PreviousDescription json.RawMessage `json:"previousDescription"`
	NewDescription      json.RawMessage `json:"newDescription"`
}

// TestSpecMonitoring runs the SDAM monitoring tests through a Topology
// whose servers are fed the tests' hello replies instead of monitored,
// and compares the events it publishes: their kinds and order, addresses,
// and the server and topology types in each description.
func TestSpecMonitoring(t *testing.T) {
	files := spectest.Files(t, "*.json", "server-discovery-and-monitoring", "tests", "monitoring")
	passed := 0
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".json"), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var f specMonitoringFile
			if err := json.Unmarshal(data, &f); err != nil {
				t.Fatal(err)
			}
			cs, err := connstring.Parse(f.URI)
			if err != nil {
				t.Fatal(err)
			}
			rec := &eventtest.Recorder{}
			topo, err := New(Config{
				Seeds:            cs.Hosts,
				SetName:          cs.ReplicaSet,
				DirectConnection: cs.DirectConnection != nil && *cs.DirectConnection,
				LoadBalanced:     cs.LoadBalanced != nil && *cs.LoadBalanced,
				ConnConfig:       connConfig,
				Events:           event.NewDispatcher(rec),
			})
			if err != nil {
				t.Fatal(err)
			}
			topo.noMonitors = true
			if err := topo.Connect(); err != nil {
				t.Fatal(err)
			}
			defer topo.Close()
			seen := 0
			for i, phase := range f.Phases {
				for _, r := range phase.Responses {
					var pair []json.RawMessage
					if err := json.Unmarshal(r, &pair); err != nil || len(pair) != 2 {
						t.Fatalf("phase %d: bad response %s", i, r)
					}
					var addr string
					if err := json.Unmarshal(pair[0], &addr); err != nil {
						t.Fatal(err)
					}
					feed(t, topo, addr, pair[1])
				}
				got := topologyEvents(rec)[seen:]
				seen += len(got)
				compareEvents(t, i, phase.Outcome.Events, got)
			}
			passed++
		})
	}
	t.Logf("sdam monitoring: %d passed, 0 skipped", passed)
}

// feed applies one hello reply to addr, as its monitor would.
func feed(t *testing.T, topo *Topology, addr string, reply json.RawMessage) {
	t.Helper()
	addr = description.NormalizeAddress(addr)
	s, ok := topo.Server(addr)
	if !ok {
		return // removed earlier in the phase; Apply would ignore it too
	}
	raw, err := bson.ParseExtJSON(reply)
	if err != nil {
		t.Fatal(err)
	}
	var sd description.ServerDescription
	if ok, _ := raw.Lookup("ok").AsFloat64OK(); ok != 1 {
		sd = description.UnknownServer(addr, fmt.Errorf("check failed"))
	} else {
		h, err := handshake.ParseReply(raw)
		if err != nil {
			t.Fatal(err)
		}
		sd = description.NewServer(addr, &h, 0, time.Now())
	}
	topo.apply(s, sd)
}

func compareEvents(t *testing.T, phase int, want []map[string]json.RawMessage, got []event.TopologyEvent) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("phase %d: %d events, want %d: %s", phase, len(got), len(want), describe(got))
	}
	for i, w := range want {
		for kind, body := range w {
			var e specEvent
			if err := json.Unmarshal(body, &e); err != nil {
				t.Fatal(err)
			}
			ok := false
			switch g := got[i].(type) {
			case *event.TopologyOpening:
				ok = kind == "topology_opening_event"
			case *event.ServerOpening:
				ok = kind == "server_opening_event" && g.Address == e.Address
			case *event.ServerClosed:
				ok = kind == "server_closed_event" && g.Address == e.Address
			case *event.ServerDescriptionChanged:
				var prev, next specServer
				json.Unmarshal(e.PreviousDescription, &prev)
				json.Unmarshal(e.NewDescription, &next)
				ok = kind == "server_description_changed_event" && g.Address == e.Address &&
					g.Previous.Kind == prev.Type && g.New.Kind == next.Type
			case *event.TopologyDescriptionChanged:
				var prev, next specTopology
				json.Unmarshal(e.PreviousDescription, &prev)
				json.Unmarshal(e.NewDescription, &next)
				ok = kind == "topology_description_changed_event" && sameTopology(g.Previous, prev) && sameTopology(g.New, next)
			}
			if !ok {
				t.Fatalf("phase %d event %d: got %s, want %s %s", phase, i, describe(got[i:i+1]), kind, body)
			}
		}
	}
}

func sameTopology(g event.TopologyDescription, w specTopology) bool {
	if g.Kind != w.TopologyType || len(g.Servers) != len(w.Servers) {
		return false
	}
	for i, s := range w.Servers {
		if g.Servers[i].Address != s.Address || g.Servers[i].Kind != s.Type {
			return false
		}
	}
	return true
}

func describe(evs []event.TopologyEvent) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "%T%+v; ", e, e)
	}
	return b.String()
}

type specErrorsFile struct {
	Description string `json:"description"`
	URI         string `json:"uri"`
	Phases      []struct {
		Description       string            `json:"description"`
		Responses         []json.RawMessage `json:"responses"`
		ApplicationErrors []struct {
			Address        string          `json:"address"`
			When           string          `json:"when"`
			MaxWireVersion int32           `json:"maxWireVersion"`
			Type           string          `json:"type"`
			Generation     *uint64         `json:"generation"`
			Response       json.RawMessage `json:"response"`
		} `json:"applicationErrors"`
		Outcome struct {
			TopologyType string `json:"topologyType"`
			Servers      map[string]struct {
				Type string `json:"type"`
				Pool *struct {
					Generation uint64 `json:"generation"`
				} `json:"pool"`
			} `json:"servers"`
		} `json:"outcome"`
	} `json:"phases"`
}

// TestSpecErrors runs the SDAM error handling tests through a Topology with
// real (unconnected) pools: the hello replies are fed as its monitors would
// feed them, and the application errors go through HandleError, so the
// conversion of connection errors, the outcome and the pool clears are all
// checked against the expected server types and pool generations.
func TestSpecErrors(t *testing.T) {
	files := spectest.Files(t, "*.json", "server-discovery-and-monitoring", "tests", "errors")
	passed := 0
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".json"), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var f specErrorsFile
			if err := json.Unmarshal(data, &f); err != nil {
				t.Fatal(err)
			}
			cs, err := connstring.Parse(f.URI)
			if err != nil {
				t.Fatal(err)
			}
			topo, err := New(Config{
				Seeds:            cs.Hosts,
				SetName:          cs.ReplicaSet,
				DirectConnection: cs.DirectConnection != nil && *cs.DirectConnection,
				LoadBalanced:     cs.LoadBalanced != nil && *cs.LoadBalanced,
				ConnConfig:       connConfig,
				Pool:             PoolOptions{MaintainInterval: -1},
			})
			if err != nil {
				t.Fatal(err)
			}
			topo.noMonitors = true
			if err := topo.Connect(); err != nil {
				t.Fatal(err)
			}
			defer topo.Close()
			for i, phase := range f.Phases {
				for _, r := range phase.Responses {
					var pair []json.RawMessage
					var addr string
					if err := json.Unmarshal(r, &pair); err != nil || len(pair) != 2 || json.Unmarshal(pair[0], &addr) != nil {
						t.Fatalf("phase %d: bad response %s", i, r)
					}
					feed(t, topo, addr, pair[1])
				}
				for _, ae := range phase.ApplicationErrors {
					s, ok := topo.Server(ae.Address)
					if !ok {
						t.Fatalf("phase %d: no server %s", i, ae.Address)
					}
					gen := s.Pool().Stats().Generation
					if ae.Generation != nil {
						gen = *ae.Generation
					}
					var opErr error
					// Before the handshake completes, conn.Dial labels a
					// network error or timeout for backpressure.
					var labels []string
					if ae.When == "beforeHandshakeCompletes" {
						labels = []string{conn.LabelSystemOverloaded, conn.LabelRetryable}
					}
					switch ae.Type {
					case "network":
						opErr = &conn.NetworkError{Op: "read", Address: s.Address(), Err: io.ErrUnexpectedEOF, Labels: labels}
					case "timeout":
						opErr = &conn.NetworkError{Op: "read", Address: s.Address(), Err: context.DeadlineExceeded, Labels: labels}
					case "command":
						raw, err := bson.ParseExtJSON(ae.Response)
						if err != nil {
							t.Fatal(err)
						}
						opErr = conn.ReplyError(raw)
						if opErr == nil {
							// ok:1 with writeErrors: nothing reaches error
							// handling, which is what the test expects.
							continue
						}
					default:
						t.Fatalf("phase %d: error type %q", i, ae.Type)
					}
					phaseOf := description.PhaseOperation
					if ae.When == "beforeHandshakeCompletes" {
						phaseOf = description.PhaseHandshake
					}
					topo.handleFor(ae.Address, gen, nil, ae.MaxWireVersion, opErr, phaseOf)
				}
				d := topo.Description()
				if d.Type.String() != phase.Outcome.TopologyType {
					t.Fatalf("phase %d (%s): topology %s, want %s", i, phase.Description, d.Type, phase.Outcome.TopologyType)
				}
				for addr, want := range phase.Outcome.Servers {
					sd, ok := d.Server(addr)
					if !ok || sd.Type.String() != want.Type {
						t.Fatalf("phase %d (%s): server %s is %v (present %v), want %s", i, phase.Description, addr, sd.Type, ok, want.Type)
					}
					if want.Pool != nil {
						s, _ := topo.Server(addr)
						if g := s.Pool().Stats().Generation; g != want.Pool.Generation {
							t.Fatalf("phase %d (%s): %s pool generation %d, want %d", i, phase.Description, addr, g, want.Pool.Generation)
						}
					}
				}
			}
			passed++
		})
	}
	t.Logf("sdam errors: %d passed, 0 skipped", passed)
}
