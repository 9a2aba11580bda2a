package topology

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/driver/connstring"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
	"github.com/mongoscope/mongoscope/internal/spectest"
)

// eventLine names an event, its address and, for a description change,
// the server types it goes between.
func eventLine(e event.TopologyEvent) string {
	switch e := e.(type) {
	case *event.TopologyOpening:
		return "TopologyOpening"
	case *event.TopologyClosed:
		return "TopologyClosed"
	case *event.ServerOpening:
		return "ServerOpening " + e.Address
	case *event.ServerClosed:
		return "ServerClosed " + e.Address
	case *event.ServerDescriptionChanged:
		return "ServerDescriptionChanged " + e.Address + " " + e.Previous.Kind + "->" + e.New.Kind
	case *event.TopologyDescriptionChanged:
		return "TopologyDescriptionChanged " + e.Previous.Kind + "->" + e.New.Kind
	}
	return fmt.Sprintf("%T", e)
}

func eventLines(evs []event.TopologyEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = eventLine(e)
	}
	return out
}

// feedTopology returns a connected, unmonitored topology over seeds and its
// event recorder.
func feedTopology(t *testing.T, setName string, seeds ...string) (*Topology, *eventtest.Recorder) {
	t.Helper()
	rec := &eventtest.Recorder{}
	topo, err := New(Config{Seeds: seeds, SetName: setName, ConnConfig: connConfig, Events: event.NewDispatcher(rec)})
	if err != nil {
		t.Fatal(err)
	}
	topo.noMonitors = true
	if err := topo.Connect(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(topo.Close)
	return topo, rec
}

// TestEventsSecondaryNamesUncheckedPrimary: a secondary's hello names as
// its primary a seed not checked yet. The SDAM monitoring rules publish
// ServerDescriptionChanged only when a description changed under Server
// Description Equality; the seed turning PossiblePrimary (a type
// "synonymous with Unknown") is no change, so only the secondary's change
// and the topology's are published.
func TestEventsSecondaryNamesUncheckedPrimary(t *testing.T) {
	topo, rec := feedTopology(t, "", "a", "b")
	n := len(topologyEvents(rec))
	feed(t, topo, "a:27017", json.RawMessage(`{"ok":1,"isWritablePrimary":false,"secondary":true,"setName":"rs","setVersion":1,
		"primary":"b:27017","hosts":["a:27017","b:27017"],"minWireVersion":0,"maxWireVersion":21}`))
	got := strings.Join(eventLines(topologyEvents(rec)[n:]), "\n")
	want := "ServerDescriptionChanged a:27017 Unknown->RSSecondary\nTopologyDescriptionChanged Unknown->ReplicaSetNoPrimary"
	if got != want {
		t.Fatalf("events:\n%s\nwant:\n%s", got, want)
	}
	// The topology event still shows b as PossiblePrimary, and b's first
	// check is a change from it.
	n = len(topologyEvents(rec))
	feed(t, topo, "b:27017", json.RawMessage(`{"ok":1,"isWritablePrimary":true,"setName":"rs","setVersion":1,
		"electionId":{"$oid":"000000000000000000000001"},"hosts":["a:27017","b:27017"],"minWireVersion":0,"maxWireVersion":21}`))
	got = strings.Join(eventLines(topologyEvents(rec)[n:]), "\n")
	want = "ServerDescriptionChanged b:27017 PossiblePrimary->RSPrimary\nTopologyDescriptionChanged ReplicaSetNoPrimary->ReplicaSetWithPrimary"
	if got != want {
		t.Fatalf("events:\n%s\nwant:\n%s", got, want)
	}
}

// checkChangesShow fails the test for a description change event whose
// previous and new descriptions read the same: the logged strings must
// show what changed.
func checkChangesShow(t *testing.T, evs []event.TopologyEvent) {
	t.Helper()
	for _, e := range evs {
		switch e := e.(type) {
		case *event.TopologyDescriptionChanged:
			if p, n := e.Previous.String(), e.New.String(); p == n {
				t.Errorf("TopologyDescriptionChanged with identical strings: %s", p)
			}
		case *event.ServerDescriptionChanged:
			if p, n := e.Previous.String(), e.New.String(); p == n {
				t.Errorf("ServerDescriptionChanged with identical strings: %s", p)
			}
		}
	}
}

// TestSpecChangeStrings feeds the hello replies of every SDAM spec suite
// (single, rs, sharded, load-balanced, errors, monitoring) to a topology
// and checks that no TopologyDescriptionChanged or
// ServerDescriptionChanged event has previous and new descriptions that
// read the same: an event is published only for a change under Server
// Description Equality, and the strings show every field it compares.
func TestSpecChangeStrings(t *testing.T) {
	events := 0
	for _, suite := range []string{"single", "rs", "sharded", "load-balanced", "errors", "monitoring"} {
		for _, path := range spectest.Files(t, "*.json", "server-discovery-and-monitoring", "tests", suite) {
			t.Run(suite+"/"+strings.TrimSuffix(filepath.Base(path), ".json"), func(t *testing.T) {
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				var f struct {
					URI    string `json:"uri"`
					Phases []struct {
						Responses []json.RawMessage `json:"responses"`
					} `json:"phases"`
				}
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
					t.Skipf("configuration refused (%v): the suite checks that, not events", err)
				}
				topo.noMonitors = true
				if err := topo.Connect(); err != nil {
					t.Fatal(err)
				}
				for i, phase := range f.Phases {
					for _, r := range phase.Responses {
						var pair []json.RawMessage
						var addr string
						if err := json.Unmarshal(r, &pair); err != nil || len(pair) != 2 || json.Unmarshal(pair[0], &addr) != nil {
							t.Fatalf("phase %d: bad response %s", i, r)
						}
						feed(t, topo, addr, pair[1])
					}
				}
				topo.Close()
				evs := topologyEvents(rec)
				events += len(evs)
				checkChangesShow(t, evs)
			})
		}
	}
	t.Logf("%d events checked", events)
}

// TestEventsCarryElectionState: the descriptions events carry hold the
// primary a member names, setVersion, electionId and topologyVersion (and
// the topology's maxima), and are the event's own: a monitor changing
// them changes nothing in the topology.
func TestEventsCarryElectionState(t *testing.T) {
	topo, rec := feedTopology(t, "rs", "a", "b")
	n := len(topologyEvents(rec))
	feed(t, topo, "a:27017", json.RawMessage(`{"ok":1,"isWritablePrimary":true,"setName":"rs","setVersion":3,"primary":"a:27017",
		"electionId":{"$oid":"7fffffff0000000000000002"},"hosts":["a:27017","b:27017"],"minWireVersion":0,"maxWireVersion":21,
		"topologyVersion":{"processId":{"$oid":"000000000000000000000009"},"counter":{"$numberLong":"5"}}}`))
	var sdc *event.ServerDescriptionChanged
	var tdc *event.TopologyDescriptionChanged
	for _, e := range topologyEvents(rec)[n:] {
		switch e := e.(type) {
		case *event.ServerDescriptionChanged:
			sdc = e
		case *event.TopologyDescriptionChanged:
			tdc = e
		}
	}
	if sdc == nil || tdc == nil {
		t.Fatalf("events: %v", eventLines(topologyEvents(rec)[n:]))
	}
	s := sdc.New
	if s.Primary != "a:27017" || s.SetVersion == nil || *s.SetVersion != 3 || s.ElectionID == nil || s.ElectionID.Hex() != "7fffffff0000000000000002" ||
		s.TopologyVersion == nil || s.TopologyVersion.Counter != 5 || s.TopologyVersion.ProcessID.Hex() != "000000000000000000000009" ||
		len(s.Hosts) != 2 || s.MaxWireVersion != 21 {
		t.Errorf("ServerDescriptionChanged.New = %+v", s)
	}
	if tdc.New.MaxElectionID == nil || tdc.New.MaxElectionID.Hex() != "7fffffff0000000000000002" || tdc.New.MaxSetVersion == nil || *tdc.New.MaxSetVersion != 3 {
		t.Errorf("TopologyDescriptionChanged.New = %s", tdc.New)
	}
	for _, want := range []string{"primary: a:27017", "setVersion: 3", "electionId: 7fffffff0000000000000002", "topologyVersion: {processId: 000000000000000000000009, counter: 5}", "maxElectionId: 7fffffff0000000000000002"} {
		if !strings.Contains(tdc.New.String(), want) {
			t.Errorf("logged description lacks %q: %s", want, tdc.New)
		}
	}
	s.Hosts[0] = "changed:1"
	*s.SetVersion = 99
	tdc.New.Servers[0].Hosts[1] = "changed:2"
	d, _ := topo.Description().Server("a:27017")
	if d.Hosts[0] != "a:27017" || d.Hosts[1] != "b:27017" || *d.SetVersion != 3 {
		t.Errorf("a monitor's change reached the topology: %+v", d)
	}
}

// TestEventsClose: closing the client removes every server and sets the
// type Unknown, publishing ServerClosed for each server and the
// TopologyDescriptionChanged to an empty Unknown topology before
// TopologyClosed, which is the last event (SDAM, "Client closing"; SDAM
// logging and monitoring, Events API).
func TestEventsClose(t *testing.T) {
	topo, rec := feedTopology(t, "rs", "a", "b")
	feed(t, topo, "a:27017", json.RawMessage(`{"ok":1,"isWritablePrimary":true,"setName":"rs","setVersion":1,
		"electionId":{"$oid":"000000000000000000000001"},"hosts":["a:27017","b:27017"],"minWireVersion":0,"maxWireVersion":21}`))
	n := len(topologyEvents(rec))
	topo.Close()
	feed(t, topo, "b:27017", json.RawMessage(`{"ok":1,"secondary":true,"setName":"rs","hosts":["a:27017","b:27017"],"maxWireVersion":21}`))
	evs := topologyEvents(rec)[n:]
	got := strings.Join(eventLines(evs), "\n")
	want := "ServerClosed a:27017\nServerClosed b:27017\nTopologyDescriptionChanged ReplicaSetWithPrimary->Unknown\nTopologyClosed"
	if got != want {
		t.Fatalf("events:\n%s\nwant:\n%s", got, want)
	}
	if tdc := evs[2].(*event.TopologyDescriptionChanged); len(tdc.New.Servers) != 0 || tdc.New.SetName != "" {
		t.Errorf("closed topology %s, want Unknown with no servers", tdc.New)
	}
	checkChangesShow(t, evs)
}

// TestNewPrimaryKeepsOldPool: a newer primary marks the old one Unknown
// ("primary marked stale due to discovery of newer primary"), publishing a
// ServerDescriptionChanged for both, but the client MUST NOT clear the old
// primary's pool (SDAM, updateRSFromPrimary).
func TestNewPrimaryKeepsOldPool(t *testing.T) {
	topo, rec := feedTopology(t, "rs", "a", "b")
	feed(t, topo, "a:27017", json.RawMessage(`{"ok":1,"isWritablePrimary":true,"setName":"rs","setVersion":1,
		"electionId":{"$oid":"000000000000000000000001"},"hosts":["a:27017","b:27017"],"minWireVersion":0,"maxWireVersion":21}`))
	a, _ := topo.Server("a:27017")
	gen := a.Pool().Stats().Generation
	n := len(topologyEvents(rec))
	feed(t, topo, "b:27017", json.RawMessage(`{"ok":1,"isWritablePrimary":true,"setName":"rs","setVersion":1,
		"electionId":{"$oid":"000000000000000000000002"},"hosts":["a:27017","b:27017"],"minWireVersion":0,"maxWireVersion":21}`))
	got := strings.Join(eventLines(topologyEvents(rec)[n:]), "\n")
	want := "ServerDescriptionChanged a:27017 RSPrimary->Unknown\nServerDescriptionChanged b:27017 Unknown->RSPrimary\nTopologyDescriptionChanged ReplicaSetWithPrimary->ReplicaSetWithPrimary"
	if got != want {
		t.Fatalf("events:\n%s\nwant:\n%s", got, want)
	}
	if g := a.Pool().Stats().Generation; g != gen {
		t.Errorf("old primary's pool cleared: generation %d -> %d", gen, g)
	}
	d, _ := topo.Description().Server("a:27017")
	if !strings.Contains(fmt.Sprint(d.Error), "primary marked stale due to discovery of newer primary") {
		t.Errorf("old primary's error %v", d.Error)
	}
}

// TestRemovedServerIgnored: a server the primary's host list removed is
// closed (ServerClosed), and a check of it that completes afterwards is
// ignored (SDAM, "remove": "this server's hello or legacy hello outcome
// MUST be ignored").
func TestRemovedServerIgnored(t *testing.T) {
	topo, rec := feedTopology(t, "rs", "a", "b")
	b, _ := topo.Server("b:27017")
	n := len(topologyEvents(rec))
	feed(t, topo, "a:27017", json.RawMessage(`{"ok":1,"isWritablePrimary":true,"setName":"rs","setVersion":1,
		"electionId":{"$oid":"000000000000000000000001"},"hosts":["a:27017"],"minWireVersion":0,"maxWireVersion":21}`))
	got := strings.Join(eventLines(topologyEvents(rec)[n:]), "\n")
	want := "ServerDescriptionChanged a:27017 Unknown->RSPrimary\nServerClosed b:27017\nTopologyDescriptionChanged ReplicaSetNoPrimary->ReplicaSetWithPrimary"
	if got != want {
		t.Fatalf("events:\n%s\nwant:\n%s", got, want)
	}
	n = len(topologyEvents(rec))
	before := topo.Description()
	// The removed server's monitor reports late.
	topo.apply(b, description.ServerDescription{Address: "b:27017", Type: description.RSSecondary, SetName: "rs",
		Hosts: []string{"a:27017", "b:27017"}, MaxWireVersion: 21})
	if evs := topologyEvents(rec)[n:]; len(evs) != 0 {
		t.Errorf("a removed server's outcome published %v", eventLines(evs))
	}
	if d := topo.Description(); !d.Equal(before) {
		t.Errorf("a removed server's outcome changed the topology: %+v", d)
	}
}
