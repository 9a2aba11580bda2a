package topology

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/driver/event"
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
func feedTopology(t *testing.T, setName string, seeds ...string) (*Topology, *recorder) {
	t.Helper()
	rec := &recorder{}
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
	n := len(rec.events())
	feed(t, topo, "a:27017", json.RawMessage(`{"ok":1,"isWritablePrimary":false,"secondary":true,"setName":"rs","setVersion":1,
		"primary":"b:27017","hosts":["a:27017","b:27017"],"minWireVersion":0,"maxWireVersion":21}`))
	got := strings.Join(eventLines(rec.events()[n:]), "\n")
	want := "ServerDescriptionChanged a:27017 Unknown->RSSecondary\nTopologyDescriptionChanged Unknown->ReplicaSetNoPrimary"
	if got != want {
		t.Fatalf("events:\n%s\nwant:\n%s", got, want)
	}
	// The topology event still shows b as PossiblePrimary, and b's first
	// check is a change from it.
	n = len(rec.events())
	feed(t, topo, "b:27017", json.RawMessage(`{"ok":1,"isWritablePrimary":true,"setName":"rs","setVersion":1,
		"electionId":{"$oid":"000000000000000000000001"},"hosts":["a:27017","b:27017"],"minWireVersion":0,"maxWireVersion":21}`))
	got = strings.Join(eventLines(rec.events()[n:]), "\n")
	want = "ServerDescriptionChanged b:27017 PossiblePrimary->RSPrimary\nTopologyDescriptionChanged ReplicaSetNoPrimary->ReplicaSetWithPrimary"
	if got != want {
		t.Fatalf("events:\n%s\nwant:\n%s", got, want)
	}
}
