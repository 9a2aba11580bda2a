package event_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
)

type ctxKey string

// recorder implements every monitor interface and records what it saw.
// It is not eventtest.Recorder on purpose: it tests the dispatcher itself,
// so several named recorders share one log to show the fan-out order
// across monitors, and each reads back the context its own hook returned.
type recorder struct {
	name string
	log  *[]string
}

func (r recorder) add(s string) { *r.log = append(*r.log, r.name+":"+s) }

func (r recorder) OperationStarted(ctx context.Context, e *event.OperationStarted) context.Context {
	r.add("opStarted " + e.Name)
	return context.WithValue(ctx, ctxKey(r.name), e.Name)
}
func (r recorder) OperationFinished(ctx context.Context, e *event.OperationFinished) {
	v, _ := ctx.Value(ctxKey(r.name)).(string)
	r.add("opFinished " + v)
}
func (r recorder) CommandStarted(ctx context.Context, e *event.CommandStarted) context.Context {
	r.add("cmdStarted " + e.CommandName)
	return context.WithValue(ctx, ctxKey(r.name+"cmd"), e.CommandName)
}
func (r recorder) CommandSucceeded(ctx context.Context, e *event.CommandSucceeded) {
	v, _ := ctx.Value(ctxKey(r.name + "cmd")).(string)
	r.add("cmdSucceeded " + v)
}
func (r recorder) CommandFailed(ctx context.Context, e *event.CommandFailed) {
	r.add("cmdFailed " + e.Failure.Error())
}
func (r recorder) PoolEvent(ctx context.Context, e event.PoolEvent) {
	r.add("pool " + reflect.TypeOf(e).Elem().Name() + " " + e.PoolAddress())
}
func (r recorder) TopologyEvent(ctx context.Context, e event.TopologyEvent) {
	r.add("topology " + reflect.TypeOf(e).Elem().Name())
}
func (r recorder) SelectionEvent(ctx context.Context, e event.SelectionEvent) {
	r.add("selection " + reflect.TypeOf(e).Elem().Name() + " " + e.Selection().Operation)
}

// poolOnly implements PoolMonitor alone.
type poolOnly struct{ n *int }

func (p poolOnly) PoolEvent(context.Context, event.PoolEvent) { *p.n++ }

func TestDispatcherFansOutInOrder(t *testing.T) {
	var log []string
	d := event.NewDispatcher(recorder{"a", &log}, nil, recorder{"b", &log})
	ctx := context.Background()

	octx := d.OperationStarted(ctx, &event.OperationStarted{Name: "find"})
	cctx := d.CommandStarted(octx, &event.CommandStarted{CommandFields: event.CommandFields{CommandName: "find"}})
	d.CommandSucceeded(cctx, &event.CommandSucceeded{})
	d.CommandFailed(octx, &event.CommandFailed{Failure: errors.New("boom")})
	d.PoolEvent(ctx, &event.ConnectionCheckedOut{Address: "h:1"})
	d.TopologyEvent(ctx, &event.ServerHeartbeatStarted{})
	d.SelectionEvent(ctx, &event.ServerSelectionWaiting{SelectionFields: event.SelectionFields{Operation: "insert"}})
	d.OperationFinished(octx, &event.OperationFinished{})

	want := []string{
		"a:opStarted find", "b:opStarted find",
		"a:cmdStarted find", "b:cmdStarted find",
		"a:cmdSucceeded find", "b:cmdSucceeded find",
		"a:cmdFailed boom", "b:cmdFailed boom",
		"a:pool ConnectionCheckedOut h:1", "b:pool ConnectionCheckedOut h:1",
		"a:topology ServerHeartbeatStarted", "b:topology ServerHeartbeatStarted",
		"a:selection ServerSelectionWaiting insert", "b:selection ServerSelectionWaiting insert",
		"a:opFinished find", "b:opFinished find",
	}
	if !reflect.DeepEqual(log, want) {
		t.Fatalf("got\n%q\nwant\n%q", log, want)
	}
}

func TestDispatcherChecks(t *testing.T) {
	var n int
	var log []string
	type checks struct{ op, cmd, pool, topo, sel bool }
	tests := []struct {
		name   string
		d      *event.Dispatcher
		want   checks
		unused int
	}{
		{"nil", nil, checks{}, 0},
		{"zero", &event.Dispatcher{}, checks{}, 0},
		{"none", event.NewDispatcher(), checks{}, 0},
		{"pool only", event.NewDispatcher(poolOnly{&n}), checks{pool: true}, 0},
		{"all", event.NewDispatcher(recorder{"a", &log}), checks{true, true, true, true, true}, 0},
		{"not a monitor", event.NewDispatcher(42, "x", poolOnly{&n}), checks{pool: true}, 2},
		{"nested", event.NewDispatcher(event.NewDispatcher(poolOnly{&n}), (*event.Dispatcher)(nil)), checks{pool: true}, 0},
		{"nested empty", event.NewDispatcher(event.NewDispatcher()), checks{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := checks{tt.d.Operation(), tt.d.Command(), tt.d.Pool(), tt.d.Topology(), tt.d.Selection()}
			if got != tt.want {
				t.Errorf("checks = %+v, want %+v", got, tt.want)
			}
			if len(tt.d.Unused()) != tt.unused {
				t.Errorf("Unused() = %v, want %d values", tt.d.Unused(), tt.unused)
			}
		})
	}
}

func TestNilDispatcherIsSafe(t *testing.T) {
	var d *event.Dispatcher
	ctx := context.WithValue(context.Background(), ctxKey("k"), "v")
	if got := d.OperationStarted(ctx, &event.OperationStarted{}); got != ctx {
		t.Error("OperationStarted on nil changed the context")
	}
	if got := d.CommandStarted(ctx, &event.CommandStarted{}); got != ctx {
		t.Error("CommandStarted on nil changed the context")
	}
	d.OperationFinished(ctx, &event.OperationFinished{})
	d.CommandSucceeded(ctx, &event.CommandSucceeded{})
	d.CommandFailed(ctx, &event.CommandFailed{})
	d.PoolEvent(ctx, &event.PoolReady{})
	d.TopologyEvent(ctx, &event.TopologyOpening{})
	d.SelectionEvent(ctx, &event.ServerSelectionStarted{})
}

func TestEventInterfaces(t *testing.T) {
	pool := []event.PoolEvent{
		&event.PoolCreated{Address: "a"}, &event.PoolReady{Address: "a"}, &event.PoolCleared{Address: "a"},
		&event.PoolClosed{Address: "a"}, &event.ConnectionCreated{Address: "a"}, &event.ConnectionReady{Address: "a"},
		&event.ConnectionClosed{Address: "a"}, &event.ConnectionCheckOutStarted{Address: "a"},
		&event.ConnectionCheckOutFailed{Address: "a"}, &event.ConnectionCheckedOut{Address: "a"},
		&event.ConnectionCheckedIn{Address: "a"},
	}
	for _, e := range pool {
		if e.PoolAddress() != "a" {
			t.Errorf("%T.PoolAddress() = %q", e, e.PoolAddress())
		}
	}
	id := bson.ObjectID{1}
	hb := event.HeartbeatFields{TopologyID: id}
	topo := []event.TopologyEvent{
		&event.ServerOpening{TopologyID: id}, &event.ServerClosed{TopologyID: id},
		&event.ServerDescriptionChanged{TopologyID: id}, &event.TopologyOpening{TopologyID: id},
		&event.TopologyClosed{TopologyID: id}, &event.TopologyDescriptionChanged{TopologyID: id},
		&event.ServerHeartbeatStarted{HeartbeatFields: hb}, &event.ServerHeartbeatSucceeded{HeartbeatFields: hb},
		&event.ServerHeartbeatFailed{HeartbeatFields: hb},
	}
	for _, e := range topo {
		if e.Topology() != id {
			t.Errorf("%T.Topology() = %v", e, e.Topology())
		}
	}
	f := event.SelectionFields{OperationID: 7}
	sel := []event.SelectionEvent{
		&event.ServerSelectionStarted{SelectionFields: f}, &event.ServerSelectionWaiting{SelectionFields: f},
		&event.ServerSelectionSucceeded{SelectionFields: f}, &event.ServerSelectionFailed{SelectionFields: f},
	}
	for _, e := range sel {
		if e.Selection().OperationID != 7 {
			t.Errorf("%T.Selection().OperationID = %d", e, e.Selection().OperationID)
		}
	}
}

func TestTopologyDescriptionString(t *testing.T) {
	tests := []struct {
		d    event.TopologyDescription
		want string
	}{
		{event.TopologyDescription{Kind: "Unknown"}, "{type: Unknown, servers: []}"},
		{event.TopologyDescription{Kind: "ReplicaSetWithPrimary", SetName: "rs0", Servers: []event.ServerDescription{
			{Address: "a:1", Kind: "RSPrimary", RoundTripTime: 1500000},
			{Address: "b:2", Kind: "Unknown", Error: errors.New(`refused "x"`)},
		}}, `{type: ReplicaSetWithPrimary, setName: rs0, servers: [{address: a:1, type: RSPrimary, rtt: 1.5ms}, {address: b:2, type: Unknown, error: "refused \"x\""}]}`},
	}
	for _, tt := range tests {
		if got := tt.d.String(); got != tt.want {
			t.Errorf("String() =\n%s\nwant\n%s", got, tt.want)
		}
	}
}

// emitCheckedIn is the pattern the pool uses: check, then build the event.
func emitCheckedIn(ctx context.Context, d *event.Dispatcher, addr string, id int64) {
	if d.Pool() {
		d.PoolEvent(ctx, &event.ConnectionCheckedIn{Address: addr, ConnectionID: id})
	}
}

func TestNoMonitorAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	for _, d := range []*event.Dispatcher{nil, event.NewDispatcher(), event.NewDispatcher(42)} {
		if n := testing.AllocsPerRun(100, func() { emitCheckedIn(ctx, d, "h:27017", 1) }); n != 0 {
			t.Errorf("emit with no pool monitor: %v allocs, want 0", n)
		}
	}
	var count int
	d := event.NewDispatcher(poolOnly{&count})
	emitCheckedIn(ctx, d, "h:27017", 1)
	if count != 1 {
		t.Errorf("monitor saw %d events, want 1", count)
	}
}

func BenchmarkNoMonitor(b *testing.B) {
	ctx := context.Background()
	d := event.NewDispatcher()
	b.ReportAllocs()
	for b.Loop() {
		emitCheckedIn(ctx, d, "h:27017", 1)
	}
}

func BenchmarkPoolMonitor(b *testing.B) {
	ctx := context.Background()
	var n int
	d := event.NewDispatcher(poolOnly{&n})
	b.ReportAllocs()
	for b.Loop() {
		emitCheckedIn(ctx, d, "h:27017", 1)
	}
}

// filtered is a recorder that asks for some families only.
type filtered struct {
	recorder
	want event.Family
}

func (f filtered) EventFamilies() event.Family { return f.want }

func TestDispatcherFamilyFilter(t *testing.T) {
	var log []string
	off := filtered{recorder{"off", &log}, 0}
	cmd := filtered{recorder{"cmd", &log}, event.FamilyCommand | event.FamilySelection}
	d := event.NewDispatcher(off, cmd)
	if u := d.Unused(); len(u) != 0 {
		t.Fatalf("a monitor that filters every family out is still a monitor; Unused = %v", u)
	}
	if d.Operation() || d.Pool() || d.Topology() {
		t.Errorf("families nobody asked for are on: operation %v pool %v topology %v", d.Operation(), d.Pool(), d.Topology())
	}
	if !d.Command() || !d.Selection() {
		t.Errorf("command %v selection %v, want both on", d.Command(), d.Selection())
	}
	ctx := context.Background()
	ctx = d.CommandStarted(ctx, &event.CommandStarted{CommandFields: event.CommandFields{CommandName: "find"}})
	d.CommandSucceeded(ctx, &event.CommandSucceeded{})
	d.OperationStarted(ctx, &event.OperationStarted{Name: "find"})
	want := []string{"cmd:cmdStarted find", "cmd:cmdSucceeded find"}
	if !reflect.DeepEqual(log, want) {
		t.Errorf("log = %q, want %q", log, want)
	}
	if d := event.NewDispatcher(off); d.Operation() || d.Command() || d.Pool() || d.Topology() || d.Selection() {
		t.Error("a dispatcher whose only monitor takes no family reports one on")
	}
}
