package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/telemetry/metrics"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func registry(t *testing.T, m *metrics.Metrics) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewRegistry()
	if err := reg.Register(m); err != nil {
		t.Fatal(err)
	}
	return reg
}

// TestNoPanics: nil events, typed nil events, events with nil fields and
// end events without their start are ignored or counted, never a panic.
func TestNoPanics(t *testing.T) {
	m := metrics.New(metrics.Options{})
	reg := registry(t, m)
	ctx := context.Background()
	var nilCtx context.Context // a nil context must not panic either

	m.OperationFinished(ctx, nil)
	m.OperationRetry(ctx, nil)
	m.CommandStarted(ctx, nil)
	m.CommandSucceeded(ctx, nil)
	m.CommandFailed(ctx, nil)
	m.PoolEvent(ctx, nil)
	m.TopologyEvent(ctx, nil)
	m.SelectionEvent(ctx, nil)
	for _, e := range []event.PoolEvent{(*event.PoolCreated)(nil), (*event.PoolReady)(nil), (*event.PoolCleared)(nil), (*event.PoolClosed)(nil),
		(*event.ConnectionCreated)(nil), (*event.ConnectionReady)(nil), (*event.ConnectionClosed)(nil), (*event.ConnectionCheckOutStarted)(nil),
		(*event.ConnectionCheckOutFailed)(nil), (*event.ConnectionCheckedOut)(nil), (*event.ConnectionCheckedIn)(nil)} {
		m.PoolEvent(ctx, e)
	}
	for _, e := range []event.TopologyEvent{(*event.ServerOpening)(nil), (*event.ServerClosed)(nil), (*event.ServerDescriptionChanged)(nil),
		(*event.TopologyOpening)(nil), (*event.TopologyClosed)(nil), (*event.TopologyDescriptionChanged)(nil),
		(*event.ServerHeartbeatStarted)(nil), (*event.ServerHeartbeatSucceeded)(nil), (*event.ServerHeartbeatFailed)(nil)} {
		m.TopologyEvent(ctx, e)
	}
	for _, e := range []event.SelectionEvent{(*event.ServerSelectionStarted)(nil), (*event.ServerSelectionWaiting)(nil),
		(*event.ServerSelectionSucceeded)(nil), (*event.ServerSelectionFailed)(nil)} {
		m.SelectionEvent(ctx, e)
	}

	// Events with empty fields, out of order, with a nil context, with
	// malformed commands and names that are not UTF-8.
	m.OperationFinished(nilCtx, &event.OperationFinished{Err: errors.New("x"), TimeoutStage: "somewhere"})
	m.OperationRetry(nilCtx, &event.OperationRetry{})
	c := m.CommandStarted(nilCtx, &event.CommandStarted{Command: bson.Raw{1, 2, 3, 4, 5, 6, 7}})
	m.CommandSucceeded(c, &event.CommandSucceeded{CommandFields: event.CommandFields{CommandName: "\xff\xfe", DatabaseName: "\xff"}})
	m.CommandFailed(nilCtx, &event.CommandFailed{})
	m.PoolEvent(ctx, &event.ConnectionCheckedIn{Address: "h:1", ConnectionID: 9})
	m.PoolEvent(ctx, &event.ConnectionClosed{Address: "h:1", ConnectionID: 9, Reason: "weird"})
	m.PoolEvent(ctx, &event.ConnectionCheckOutFailed{Address: "h:1", Reason: "weird"})
	m.PoolEvent(ctx, &event.ConnectionCheckedOut{Address: "h:1"})
	m.TopologyEvent(ctx, &event.ServerDescriptionChanged{Address: "h:1"})
	m.TopologyEvent(ctx, &event.ServerHeartbeatSucceeded{})
	m.TopologyEvent(ctx, &event.ServerHeartbeatFailed{})
	m.SelectionEvent(ctx, &event.ServerSelectionFailed{})
	if _, err := reg.Gather(); err != nil {
		t.Fatal(err)
	}
}

// TestServerGaugesFollowTopology: a server's type gauge has one series,
// for its current type; a server that leaves the topology, and a closed
// pool, lose their gauges.
func TestServerGaugesFollowTopology(t *testing.T) {
	m := metrics.New(metrics.Options{})
	reg := registry(t, m)
	ctx := context.Background()
	id := bson.ObjectID{1}
	a, b := "a:27017", "b:27017"
	for _, addr := range []string{a, b} {
		m.TopologyEvent(ctx, &event.ServerOpening{TopologyID: id, Address: addr})
		m.PoolEvent(ctx, &event.PoolCreated{Address: addr, Options: event.PoolOptions{MinPoolSize: 2, MaxPoolSize: 10}})
		m.TopologyEvent(ctx, &event.ServerDescriptionChanged{TopologyID: id, Address: addr,
			Previous: event.ServerDescription{Address: addr, Kind: "Unknown"},
			New:      event.ServerDescription{Address: addr, Kind: "RSSecondary", RoundTripTime: 3 * time.Millisecond}})
	}
	f := gather(t, reg)
	if v := value(f, "mongodb_driver_server_type", L{"server": a, "type": "RSSecondary"}); v != 1 {
		t.Fatalf("type gauge %v", v)
	}
	if v := value(f, "mongodb_driver_server_type", L{"server": a, "type": "Unknown"}); v != 0 {
		t.Fatalf("the old type is still there: %v", v)
	}
	if v := value(f, "mongodb_driver_server_rtt_seconds", L{"server": a}); v != 0.003 {
		t.Fatalf("rtt %v", v)
	}
	if v := value(f, "mongodb_driver_pool_min_connections", L{"server": a}); v != 2 {
		t.Fatalf("min %v", v)
	}
	// A non-awaited heartbeat moves the average.
	m.TopologyEvent(ctx, &event.ServerHeartbeatSucceeded{HeartbeatFields: event.HeartbeatFields{TopologyID: id, ServerHost: "a", ServerPort: 27017},
		Duration: 13 * time.Millisecond})
	if v := value(gather(t, reg), "mongodb_driver_server_rtt_seconds", L{"server": a}); v < 0.0049 || v > 0.0051 {
		t.Fatalf("rtt after a 13ms heartbeat %v, want 0.005", v)
	}
	// b leaves the topology; its pool closes.
	m.TopologyEvent(ctx, &event.TopologyDescriptionChanged{TopologyID: id, New: event.TopologyDescription{Servers: []event.ServerDescription{{Address: a}}}})
	m.PoolEvent(ctx, &event.PoolClosed{Address: b})
	f = gather(t, reg)
	for _, name := range []string{"mongodb_driver_server_type", "mongodb_driver_server_rtt_seconds", "mongodb_driver_pool_connections",
		"mongodb_driver_pool_min_connections", "mongodb_driver_pool_max_connections", "mongodb_driver_pool_pending_checkouts"} {
		if n := len(series(f, name, L{"server": b})); n != 0 {
			t.Errorf("%s: %d series left for the removed server", name, n)
		}
		if n := len(series(f, name, L{"server": a})); n == 0 {
			t.Errorf("%s: the remaining server lost its series", name)
		}
	}
	// Another topology's change does not touch a's gauges; its closing does.
	m.TopologyEvent(ctx, &event.TopologyDescriptionChanged{TopologyID: bson.ObjectID{2}})
	if v := value(gather(t, reg), "mongodb_driver_server_type", L{"server": a}); v != 1 {
		t.Fatalf("another topology removed a: %v", v)
	}
	m.TopologyEvent(ctx, &event.TopologyClosed{TopologyID: id})
	if n := len(series(gather(t, reg), "mongodb_driver_server_type", L{})); n != 0 {
		t.Fatalf("%d type series after the topology closed", n)
	}
}

// TestConnectionStates follows one connection through the pool's states.
func TestConnectionStates(t *testing.T) {
	m := metrics.New(metrics.Options{})
	reg := registry(t, m)
	ctx := context.Background()
	const a = "a:27017"
	state := func(want map[string]float64) {
		t.Helper()
		f := gather(t, reg)
		for s, v := range want {
			if got := value(f, "mongodb_driver_pool_connections", L{"server": a, "state": s}); got != v {
				t.Errorf("%s = %v, want %v", s, got, v)
			}
		}
	}
	m.PoolEvent(ctx, &event.PoolCreated{Address: a})
	state(map[string]float64{"pending": 0, "idle": 0, "in_use": 0})
	m.PoolEvent(ctx, &event.ConnectionCheckOutStarted{Address: a})
	if v := value(gather(t, reg), "mongodb_driver_pool_pending_checkouts", L{"server": a}); v != 1 {
		t.Errorf("pending checkouts %v", v)
	}
	m.PoolEvent(ctx, &event.ConnectionCreated{Address: a, ConnectionID: 1})
	state(map[string]float64{"pending": 1, "idle": 0, "in_use": 0})
	m.PoolEvent(ctx, &event.ConnectionReady{Address: a, ConnectionID: 1, Duration: time.Millisecond})
	m.PoolEvent(ctx, &event.ConnectionCheckedOut{Address: a, ConnectionID: 1})
	state(map[string]float64{"pending": 0, "idle": 0, "in_use": 1})
	if v := value(gather(t, reg), "mongodb_driver_pool_pending_checkouts", L{"server": a}); v != 0 {
		t.Errorf("pending checkouts %v", v)
	}
	time.Sleep(2 * time.Millisecond)
	m.PoolEvent(ctx, &event.ConnectionCheckedIn{Address: a, ConnectionID: 1})
	state(map[string]float64{"pending": 0, "idle": 1, "in_use": 0})
	f := gather(t, reg)
	if v := value(f, "mongodb_driver_connection_use_duration_seconds", L{"server": a}); v != 1 {
		t.Errorf("use duration count %v", v)
	}
	for _, m := range f["mongodb_driver_connection_use_duration_seconds"].GetMetric() {
		if s := m.GetHistogram().GetSampleSum(); s < 0.002 {
			t.Errorf("use duration %v, want at least 2ms", s)
		}
	}
	m.PoolEvent(ctx, &event.ConnectionClosed{Address: a, ConnectionID: 1, Reason: event.ReasonIdle})
	state(map[string]float64{"pending": 0, "idle": 0, "in_use": 0})
	if v := value(gather(t, reg), "mongodb_driver_connections_closed_total", L{"server": a, "reason": "idle"}); v != 1 {
		t.Errorf("closed %v", v)
	}
}

// TestAllocations measures the allocations per event once the label
// values have been seen, and fails if they grow.
func TestAllocations(t *testing.T) {
	m := metrics.New(metrics.Options{})
	ctx := context.Background()
	b, err := bson.Marshal(bson.D{{Key: "find", Value: "coll"}, {Key: "filter", Value: bson.D{}}})
	if err != nil {
		t.Fatal(err)
	}
	cmd := bson.Raw(b)
	fields := event.CommandFields{CommandName: "find", DatabaseName: "db", ServerHost: "localhost", ServerPort: 27017, ConnectionID: 3}
	start := &event.CommandStarted{CommandFields: fields, Command: cmd}
	ok := &event.CommandSucceeded{CommandFields: fields, Duration: time.Millisecond}
	op := &event.OperationFinished{Name: "find", Database: "db", Collection: "coll", Duration: time.Millisecond}
	out := &event.ConnectionCheckedOut{Address: "localhost:27017", ConnectionID: 1, Duration: time.Microsecond}
	in := &event.ConnectionCheckedIn{Address: "localhost:27017", ConnectionID: 1}
	m.PoolEvent(ctx, &event.PoolCreated{Address: "localhost:27017"})
	m.PoolEvent(ctx, &event.ConnectionCreated{Address: "localhost:27017", ConnectionID: 1})
	m.PoolEvent(ctx, &event.ConnectionReady{Address: "localhost:27017", ConnectionID: 1})
	for _, tc := range []struct {
		name string
		max  float64
		run  func()
	}{
		{"command started+succeeded", 1, func() { m.CommandSucceeded(m.CommandStarted(ctx, start), ok) }},
		{"operation finished", 0, func() { m.OperationFinished(ctx, op) }},
		{"checked out+in", 0, func() { m.PoolEvent(ctx, out); m.PoolEvent(ctx, in) }},
	} {
		tc.run()
		n := testing.AllocsPerRun(200, tc.run)
		t.Logf("%s: %v allocations", tc.name, n)
		if n > tc.max {
			t.Errorf("%s: %v allocations, want at most %v", tc.name, n, tc.max)
		}
	}
}

// series returns the series of family name that match labels.
func series(fams map[string]*dto.MetricFamily, name string, labels map[string]string) []*dto.Metric {
	var out []*dto.Metric
	for _, m := range fams[name].GetMetric() {
		if matches(m, labels) {
			out = append(out, m)
		}
	}
	return out
}

// TestConcurrentEvents sends events from several goroutines while the
// registry is gathered (run with -race); the pool ends balanced.
func TestConcurrentEvents(t *testing.T) {
	m := metrics.New(metrics.Options{})
	reg := registry(t, m)
	ctx := context.Background()
	const a = "a:27017"
	m.PoolEvent(ctx, &event.PoolCreated{Address: a})
	done := make(chan struct{})
	for g := 0; g < 4; g++ {
		go func(g int) {
			defer func() { done <- struct{}{} }()
			for i := 0; i < 200; i++ {
				id := int64(g*1000 + i)
				m.PoolEvent(ctx, &event.ConnectionCheckOutStarted{Address: a})
				m.PoolEvent(ctx, &event.ConnectionCreated{Address: a, ConnectionID: id})
				m.PoolEvent(ctx, &event.ConnectionReady{Address: a, ConnectionID: id})
				m.PoolEvent(ctx, &event.ConnectionCheckedOut{Address: a, ConnectionID: id})
				c := m.CommandStarted(ctx, &event.CommandStarted{CommandFields: event.CommandFields{CommandName: "ping", DatabaseName: "admin"}})
				m.CommandSucceeded(c, &event.CommandSucceeded{CommandFields: event.CommandFields{CommandName: "ping", DatabaseName: "admin"}})
				m.OperationFinished(ctx, &event.OperationFinished{Name: "ping", Database: "admin"})
				m.PoolEvent(ctx, &event.ConnectionCheckedIn{Address: a, ConnectionID: id})
				m.PoolEvent(ctx, &event.ConnectionClosed{Address: a, ConnectionID: id, Reason: event.ReasonIdle})
			}
		}(g)
	}
	for n := 0; n < 4; {
		select {
		case <-done:
			n++
		default:
			if _, err := reg.Gather(); err != nil {
				t.Fatal(err)
			}
		}
	}
	f := gather(t, reg)
	for _, s := range []string{"pending", "idle", "in_use"} {
		if v := value(f, "mongodb_driver_pool_connections", L{"server": a, "state": s}); v != 0 {
			t.Errorf("%s = %v after every connection closed", s, v)
		}
	}
	if v := value(f, "mongodb_driver_connections_closed_total", L{"server": a}); v != 800 {
		t.Errorf("closed %v, want 800", v)
	}
}

// TestBuckets: the default buckets are OpenTelemetry's; unsorted,
// repeated or NaN bounds are cleaned up rather than making an observation
// panic.
func TestBuckets(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want []float64
	}{
		{nil, metrics.DefaultBuckets},
		{[]float64{}, metrics.DefaultBuckets},
		{[]float64{0.5, 0.1, 0.5, math.NaN(), 2}, []float64{0.1, 0.5, 2}},
		{[]float64{math.Inf(1), 1}, []float64{1, math.Inf(1)}},
	} {
		m := metrics.New(metrics.Options{Buckets: tc.in})
		reg := registry(t, m)
		m.OperationFinished(context.Background(), &event.OperationFinished{Name: "find", Duration: 300 * time.Millisecond})
		f := gather(t, reg)
		var got []float64
		for _, b := range f["mongodb_driver_operation_duration_seconds"].GetMetric()[0].GetHistogram().GetBucket() {
			got = append(got, b.GetUpperBound())
		}
		want := tc.want
		if !math.IsInf(want[len(want)-1], 1) {
			want = append(append([]float64(nil), want...), math.Inf(1))
		}
		// client_golang may leave the +Inf bucket implicit.
		if len(got) == len(want)-1 {
			got = append(got, math.Inf(1))
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("buckets %v: got %v, want %v", tc.in, got, want)
		}
	}
}

// TestSelectionAndHeartbeatLabels: selection durations by outcome,
// heartbeats by awaited and outcome, topology changes counted.
func TestSelectionAndHeartbeatLabels(t *testing.T) {
	m := metrics.New(metrics.Options{})
	reg := registry(t, m)
	ctx := context.Background()
	m.SelectionEvent(ctx, &event.ServerSelectionSucceeded{Duration: time.Millisecond})
	m.SelectionEvent(ctx, &event.ServerSelectionFailed{Duration: 2 * time.Second, Failure: context.DeadlineExceeded})
	m.SelectionEvent(ctx, &event.ServerSelectionStarted{})
	hb := event.HeartbeatFields{ServerHost: "::1", ServerPort: 27017, Awaited: true}
	m.TopologyEvent(ctx, &event.ServerHeartbeatSucceeded{HeartbeatFields: hb, Duration: time.Second})
	hb.Awaited = false
	m.TopologyEvent(ctx, &event.ServerHeartbeatFailed{HeartbeatFields: hb, Duration: time.Millisecond, Failure: errors.New("x")})
	m.TopologyEvent(ctx, &event.ServerHeartbeatFailed{HeartbeatFields: hb, Duration: time.Millisecond, Failure: fmt.Errorf("read: %w", context.Canceled)})
	m.TopologyEvent(ctx, &event.TopologyDescriptionChanged{})
	m.TopologyEvent(ctx, &event.TopologyDescriptionChanged{})
	f := gather(t, reg)
	for _, c := range []check{
		exactly(1, "mongodb_driver_server_selection_duration_seconds", L{"outcome": "success"}),
		exactly(1, "mongodb_driver_server_selection_duration_seconds", L{"outcome": "failure"}),
		exactly(1, "mongodb_driver_server_heartbeat_duration_seconds", L{"server": "[::1]:27017", "awaited": "true", "outcome": "success"}),
		exactly(1, "mongodb_driver_server_heartbeat_duration_seconds", L{"server": "[::1]:27017", "awaited": "false", "outcome": "failure"}),
		exactly(1, "mongodb_driver_server_heartbeat_duration_seconds", L{"server": "[::1]:27017", "awaited": "false", "outcome": "canceled"}),
		exactly(2, "mongodb_driver_topology_changes_total", L{}),
	} {
		if got := value(f, c.name, c.labels); got != c.exact {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.exact)
		}
	}
}
