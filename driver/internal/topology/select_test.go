package topology

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
	"github.com/mongoscope/mongoscope/driver/internal/selection"
	"github.com/mongoscope/mongoscope/mongotest"
)

// TestSelectForEvents: a selection that must wait sends Started, Waiting
// once, then Succeeded or Failed, each naming the operation.
func TestSelectForEvents(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	rec := &eventtest.Recorder{Keep: eventtest.Only[event.SelectionEvent]}
	topo, err := New(Config{Seeds: []string{s.Addr()}, ConnConfig: connConfig, ServerSelectionTimeout: 300 * time.Millisecond, Events: event.NewDispatcher(rec)})
	if err != nil {
		t.Fatal(err)
	}
	if err := topo.Connect(); err != nil {
		t.Fatal(err)
	}
	defer topo.Close()

	// The server is not known yet: selection waits, then succeeds.
	srv, minRTT, err := topo.SelectFor(context.Background(), selection.Write(), Op{Name: "insert", ID: 7})
	if err != nil {
		t.Fatal(err)
	}
	if sd, _ := topo.Description().Server(srv.Address()); minRTT < sd.MinRoundTripTime || minRTT < srv.MinRTT() {
		t.Errorf("SelectFor's minRTT %v, below the description's minRoundTripTime %v or the RTT task's %v", minRTT, sd.MinRoundTripTime, srv.MinRTT())
	}
	srv.EndOperation()
	evs := rec.Take()
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
	rec.Take()
	_, _, err = none.SelectFor(context.Background(), selection.Write(), Op{Name: "find", ID: 8})
	if err == nil {
		t.Fatal("selected a server that does not exist")
	}
	evs = rec.Take()
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

// TestOperationCountDoesNotWake: selection increments the chosen server's
// operationCount and EndOperation decrements it, and neither wakes
// selections waiting for a topology change (Server Selection spec,
// operationCount). Current shows the description itself, and
// OperationCount the count.
func TestOperationCountDoesNotWake(t *testing.T) {
	topo := rs7(t)
	before, changed := topo.Current()
	s, err := topo.Select(context.Background(), selection.Write())
	if err != nil {
		t.Fatal(err)
	}
	if s.Address() != "rs0.example.com:27017" {
		t.Fatalf("write selected %s, want the primary", s.Address())
	}
	if n := topo.OperationCount(s.Address()); n != 1 {
		t.Errorf("OperationCount after Select = %d, want 1", n)
	}
	s.EndOperation()
	if n := topo.OperationCount(s.Address()); n != 0 {
		t.Errorf("OperationCount after EndOperation = %d, want 0", n)
	}
	select {
	case <-changed:
		t.Fatal("counting an operation woke selections waiting for a topology change")
	default:
	}
	if after, _ := topo.Current(); !after.Equal(before) || len(after.Servers) != 7 || &after.Servers[0] != &before.Servers[0] {
		t.Error("Current changed or copied the description")
	}
	if n := topo.OperationCount("nowhere:1"); n != 0 {
		t.Errorf("OperationCount of an unknown address = %d", n)
	}
}

// TestSelectEndsOnClose: Close ends a selection that is waiting for a
// suitable server with ErrClosed, well before serverSelectionTimeoutMS.
func TestSelectEndsOnClose(t *testing.T) {
	topo, err := New(Config{Seeds: []string{"a.example.com:27017"}, SetName: "rs", ConnConfig: connConfig, ServerSelectionTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	topo.noMonitors = true
	if err := topo.Connect(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := topo.Select(context.Background(), selection.Write())
		done <- err
	}()
	time.Sleep(20 * time.Millisecond) // let it start waiting; either way it must end
	topo.Close()
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("Select = %v, want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Select still waiting 5s after Close")
	}
}
