package eventtest

import (
	"context"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
)

type key struct{}

func TestRecorder(t *testing.T) {
	r := &Recorder{Start: func(ctx context.Context, e any) context.Context { return context.WithValue(ctx, key{}, Name(e)) }}
	d := event.NewDispatcher(r)
	if len(d.Unused()) != 0 || !d.Operation() || !d.Command() || !d.Pool() || !d.Topology() || !d.Selection() {
		t.Fatal("the recorder does not implement every monitor interface")
	}
	ctx := context.Background()
	octx := r.OperationStarted(ctx, &event.OperationStarted{Name: "find"})
	if octx.Value(key{}) != "OperationStarted" {
		t.Error("Start's context not returned")
	}
	cmd := bson.Raw{5, 0, 0, 0, 0}
	r.CommandStarted(ctx, &event.CommandStarted{Command: cmd})
	cmd[4] = 9 // the driver may reuse its buffer
	r.PoolEvent(ctx, &event.PoolCleared{Address: "a:1"})
	r.PoolEvent(ctx, &event.PoolCleared{Address: "b:1"})

	if got := Of[*event.CommandStarted](r)[0].Command[4]; got != 0 {
		t.Errorf("command not copied: %d", got)
	}
	if n := Count[*event.PoolCleared](r); n != 2 {
		t.Errorf("Count = %d", n)
	}
	if names := r.Names(); len(names) != 4 || names[0] != "OperationStarted" || names[3] != "PoolCleared" {
		t.Errorf("Names = %v", names)
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		r.TopologyEvent(ctx, &event.TopologyClosed{})
	}()
	if _, ok := WaitFor[*event.TopologyClosed](r, 5*time.Second, nil); !ok {
		t.Error("WaitFor missed a later event")
	}
	if _, ok := WaitFor[*event.PoolCleared](r, 10*time.Millisecond, func(e *event.PoolCleared) bool { return e.Address == "c:1" }); ok {
		t.Error("WaitFor matched nothing and said ok")
	}
	if !WaitCount[*event.PoolCleared](r, 2, time.Second) || WaitCount[*event.PoolCleared](r, 3, 10*time.Millisecond) {
		t.Error("WaitCount")
	}
	if len(r.Take()) != 5 || len(r.Events()) != 0 {
		t.Error("Take did not empty the recorder")
	}
	k := &Recorder{Keep: func(e any) bool { _, ok := e.(*event.PoolCleared); return ok }}
	k.PoolEvent(ctx, &event.PoolReady{})
	k.PoolEvent(ctx, &event.PoolCleared{})
	if len(k.Events()) != 1 {
		t.Error("Keep ignored")
	}

	// Only keeps one family; each record has its context and arrival time.
	before := time.Now()
	f := &Recorder{Keep: Only[event.TopologyEvent]}
	f.PoolEvent(ctx, &event.PoolReady{})
	f.TopologyEvent(context.WithValue(ctx, key{}, "t"), &event.TopologyClosed{})
	f.SelectionEvent(ctx, &event.ServerSelectionStarted{})
	recs := f.Records()
	if len(recs) != 1 || Name(recs[0].Event) != "TopologyClosed" {
		t.Fatalf("Only[event.TopologyEvent] kept %v", f.Names())
	}
	if recs[0].Ctx.Value(key{}) != "t" || recs[0].At.Before(before) || recs[0].At.After(time.Now()) {
		t.Errorf("record %+v: wrong context or arrival time", recs[0])
	}
}
