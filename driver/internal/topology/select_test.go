package topology

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/selection"
	"github.com/mongoscope/mongoscope/mongotest"
)

type selectionRecorder struct {
	mu  sync.Mutex
	evs []event.SelectionEvent
}

func (r *selectionRecorder) SelectionEvent(_ context.Context, e event.SelectionEvent) {
	r.mu.Lock()
	r.evs = append(r.evs, e)
	r.mu.Unlock()
}

func (r *selectionRecorder) take() []event.SelectionEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.evs
	r.evs = nil
	return e
}

// TestSelectForEvents: a selection that must wait sends Started, Waiting
// once, then Succeeded or Failed, each naming the operation.
func TestSelectForEvents(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	rec := &selectionRecorder{}
	topo, err := New(Config{Seeds: []string{s.Addr()}, ConnConfig: connConfig, ServerSelectionTimeout: 300 * time.Millisecond, Events: event.NewDispatcher(rec)})
	if err != nil {
		t.Fatal(err)
	}
	if err := topo.Connect(); err != nil {
		t.Fatal(err)
	}
	defer topo.Close()

	// The server is not known yet: selection waits, then succeeds.
	srv, err := topo.SelectFor(context.Background(), selection.Write(), Op{Name: "insert", ID: 7})
	if err != nil {
		t.Fatal(err)
	}
	srv.EndOperation()
	evs := rec.take()
	if len(evs) < 2 {
		t.Fatalf("events %v", evs)
	}
	if _, ok := evs[0].(*event.ServerSelectionStarted); !ok {
		t.Errorf("first event %T", evs[0])
	}
	ok, isOK := evs[len(evs)-1].(*event.ServerSelectionSucceeded)
	if !isOK || ok.ServerPort == 0 || ok.Operation != "insert" || ok.OperationID != 7 {
		t.Errorf("last event %#v", evs[len(evs)-1])
	}
	if len(evs) > 3 {
		t.Errorf("%d events: Waiting must come at most once", len(evs))
	}

	// Nothing suitable: no server answers.
	none, err := New(Config{Seeds: []string{"127.0.0.1:1"}, ConnConfig: connConfig, ServerSelectionTimeout: 200 * time.Millisecond, Events: event.NewDispatcher(rec)})
	if err != nil {
		t.Fatal(err)
	}
	if err := none.Connect(); err != nil {
		t.Fatal(err)
	}
	defer none.Close()
	rec.take()
	_, err = none.SelectFor(context.Background(), selection.Write(), Op{Name: "find", ID: 8})
	if err == nil {
		t.Fatal("selected a server that does not exist")
	}
	evs = rec.take()
	var kinds []string
	for _, e := range evs {
		switch e.(type) {
		case *event.ServerSelectionStarted:
			kinds = append(kinds, "started")
		case *event.ServerSelectionWaiting:
			kinds = append(kinds, "waiting")
		case *event.ServerSelectionFailed:
			kinds = append(kinds, "failed")
		case *event.ServerSelectionSucceeded:
			kinds = append(kinds, "succeeded")
		}
	}
	if len(kinds) != 3 || kinds[0] != "started" || kinds[1] != "waiting" || kinds[2] != "failed" {
		t.Fatalf("events %v, want started waiting failed", kinds)
	}
	f := evs[2].(*event.ServerSelectionFailed)
	if f.Failure != err || f.Operation != "find" || f.Selector == "" || len(f.Topology.Servers) != 1 {
		t.Errorf("failed event %+v", f)
	}
}
