package metrics_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/telemetry/metrics"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
)

// findOneEvents are the events of one findOne through a pool with one
// established connection.
type findOneEvents struct {
	os  *event.OperationStarted
	of  *event.OperationFinished
	ss  *event.ServerSelectionStarted
	sel *event.ServerSelectionSucceeded
	cos *event.ConnectionCheckOutStarted
	co  *event.ConnectionCheckedOut
	ci  *event.ConnectionCheckedIn
	cs  *event.CommandStarted
	ok  *event.CommandSucceeded
}

func newFindOneEvents(tb testing.TB, m *metrics.Metrics) *findOneEvents {
	tb.Helper()
	cmd, err := bson.Marshal(bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "x", Value: 1}}}, {Key: "limit", Value: 1},
		{Key: "lsid", Value: bson.D{{Key: "id", Value: bson.Binary{Subtype: 4, Data: make([]byte, 16)}}}}, {Key: "$db", Value: "d"}})
	if err != nil {
		tb.Fatal(err)
	}
	reply, err := bson.Marshal(bson.D{{Key: "cursor", Value: bson.D{{Key: "id", Value: int64(0)}, {Key: "ns", Value: "d.c"}}}, {Key: "ok", Value: 1}})
	if err != nil {
		tb.Fatal(err)
	}
	const addr = "h:27017"
	ctx := context.Background()
	m.PoolEvent(ctx, &event.PoolCreated{Address: addr})
	m.PoolEvent(ctx, &event.ConnectionCreated{Address: addr, ConnectionID: 1})
	m.PoolEvent(ctx, &event.ConnectionReady{Address: addr, ConnectionID: 1, Duration: 3 * time.Millisecond})
	f := event.CommandFields{CommandName: "find", DatabaseName: "d", ServerHost: "h", ServerPort: 27017, ConnectionID: 1}
	return &findOneEvents{
		os:  &event.OperationStarted{Name: "find", Database: "d", Collection: "c"},
		of:  &event.OperationFinished{Name: "find", Database: "d", Collection: "c", Attempts: 1, Duration: 400 * time.Microsecond},
		ss:  &event.ServerSelectionStarted{},
		sel: &event.ServerSelectionSucceeded{ServerHost: "h", ServerPort: 27017, Duration: 20 * time.Microsecond},
		cos: &event.ConnectionCheckOutStarted{Address: addr},
		co:  &event.ConnectionCheckedOut{Address: addr, ConnectionID: 1, Duration: 10 * time.Microsecond},
		ci:  &event.ConnectionCheckedIn{Address: addr, ConnectionID: 1},
		cs:  &event.CommandStarted{CommandFields: f, Command: cmd},
		ok:  &event.CommandSucceeded{CommandFields: f, Reply: reply, Duration: 300 * time.Microsecond},
	}
}

// run sends the events of one findOne to m, in the driver's order.
func (e *findOneEvents) run(ctx context.Context, m *metrics.Metrics) {
	octx := m.OperationStarted(ctx, e.os)
	m.SelectionEvent(octx, e.ss)
	m.SelectionEvent(octx, e.sel)
	m.PoolEvent(octx, e.cos)
	m.PoolEvent(octx, e.co)
	cctx := m.CommandStarted(octx, e.cs)
	m.CommandSucceeded(cctx, e.ok)
	m.PoolEvent(octx, e.ci)
	m.OperationFinished(octx, e.of)
}

func sampledCtx() context.Context {
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		SpanID:     trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8},
		TraceFlags: trace.FlagsSampled,
	})
	return trace.ContextWithSpanContext(context.Background(), sc)
}

// BenchmarkFindOneEvents measures the metrics sink's handling of the
// events of one findOne, without a span in the context and with a sampled
// one (whose trace id the histograms may take as an exemplar).
func BenchmarkFindOneEvents(b *testing.B) {
	for _, bc := range []struct {
		name string
		ctx  context.Context
	}{{"nospan", context.Background()}, {"sampled", sampledCtx()}} {
		b.Run(bc.name, func(b *testing.B) {
			m := metrics.New(metrics.Options{})
			e := newFindOneEvents(b, m)
			e.run(bc.ctx, m) // the label values seen once
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				e.run(bc.ctx, m)
			}
		})
	}
}

func traceCtx(tid trace.TraceID) context.Context {
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8}, TraceFlags: trace.FlagsSampled})
	return trace.ContextWithSpanContext(context.Background(), sc)
}

// exemplarIDs returns the trace ids of the exemplars of the histograms,
// by family.
func exemplarIDs(t *testing.T, reg *prometheus.Registry) map[string]map[string]int {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]int{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, b := range m.GetHistogram().GetBucket() {
				for _, l := range b.GetExemplar().GetLabel() {
					if l.GetName() == "trace_id" {
						if out[mf.GetName()] == nil {
							out[mf.GetName()] = map[string]int{}
						}
						out[mf.GetName()][l.GetValue()]++
					}
				}
			}
		}
	}
	return out
}

// TestExemplarInterval: the first sampled observation of a series' bucket
// takes an exemplar; another within ExemplarInterval does not replace it;
// past the interval one does.
func TestExemplarInterval(t *testing.T) {
	tid1 := trace.TraceID{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}
	tid2 := trace.TraceID{2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}
	histograms := []string{
		"mongodb_driver_operation_duration_seconds",
		"mongodb_driver_command_duration_seconds",
		"mongodb_driver_server_selection_duration_seconds",
		"mongodb_driver_pool_checkout_duration_seconds",
		"mongodb_driver_connection_use_duration_seconds",
	}

	m := metrics.New(metrics.Options{ExemplarInterval: time.Hour})
	reg := registry(t, m)
	e := newFindOneEvents(t, m)
	e.run(context.Background(), m) // no span: no exemplar, no slot taken
	e.run(traceCtx(tid1), m)
	e.run(traceCtx(tid2), m)
	ids := exemplarIDs(t, reg)
	for _, name := range histograms {
		if ids[name][tid1.String()] == 0 || ids[name][tid2.String()] != 0 {
			t.Errorf("%s: exemplars %v, want trace %s's only", name, ids[name], tid1)
		}
	}

	short := metrics.New(metrics.Options{ExemplarInterval: time.Nanosecond})
	reg = registry(t, short)
	e = newFindOneEvents(t, short)
	e.run(traceCtx(tid1), short)
	time.Sleep(time.Millisecond)
	e.run(traceCtx(tid2), short)
	ids = exemplarIDs(t, reg)
	for _, name := range histograms {
		if ids[name][tid2.String()] == 0 || ids[name][tid1.String()] != 0 {
			t.Errorf("interval 1ns: %s: exemplars %v, want trace %s's only", name, ids[name], tid2)
		}
	}

	off := metrics.New(metrics.Options{ExemplarInterval: -1})
	reg = registry(t, off)
	e = newFindOneEvents(t, off)
	e.run(traceCtx(tid1), off)
	if ids := exemplarIDs(t, reg); len(ids) != 0 {
		t.Errorf("ExemplarInterval < 0: exemplars %v", ids)
	}
}

// TestFindOneAllocs: once a findOne's label values are known and its
// buckets took their exemplars, its events allocate at most the context
// CommandStarted returns, with a sampled span or without.
func TestFindOneAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage counters")
	}
	m := metrics.New(metrics.Options{ExemplarInterval: time.Hour})
	e := newFindOneEvents(t, m)
	for _, ctx := range []context.Context{context.Background(), sampledCtx()} {
		e.run(ctx, m)
		if n := testing.AllocsPerRun(100, func() { e.run(ctx, m) }); n > maxFindOneAllocs {
			t.Errorf("span %v: %v allocations per findOne, want <= %d", trace.SpanContextFromContext(ctx).IsSampled(), n, maxFindOneAllocs)
		}
	}
}

// maxFindOneAllocs is the allocations of a findOne's events: the context
// that carries the command's collection.
const maxFindOneAllocs = 1

// TestConcurrentObservations: findOnes on several goroutines, with and
// without sampled spans, are all counted (run with -race for the observer
// cache and the exemplar slots).
func TestConcurrentObservations(t *testing.T) {
	m := metrics.New(metrics.Options{ExemplarInterval: time.Microsecond})
	reg := registry(t, m)
	e := newFindOneEvents(t, m)
	const workers, each = 4, 200
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		ctx := context.Background()
		if w%2 == 0 {
			ctx = traceCtx(trace.TraceID{byte(w + 1), 1})
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				e.run(ctx, m)
			}
		}()
	}
	wg.Wait()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "mongodb_driver_operation_duration_seconds" {
			continue
		}
		if len(mf.GetMetric()) != 1 || mf.GetMetric()[0].GetHistogram().GetSampleCount() != workers*each {
			t.Errorf("operation histogram: %v", mf.GetMetric())
		}
	}
	if len(exemplarIDs(t, reg)) == 0 {
		t.Error("no exemplars")
	}
}

// TestCommandContext: the collection CommandStarted reads reaches the end
// event through the returned context, also when another monitor wraps it
// (a context.WithCancel on it starts no goroutine and is canceled with it).
func TestCommandContext(t *testing.T) {
	type otherKey struct{}
	m := metrics.New(metrics.Options{})
	reg := registry(t, m)
	e := newFindOneEvents(t, m)
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), otherKey{}, "v"))
	cctx := m.CommandStarted(parent, e.cs)
	if cctx.Value(otherKey{}) != "v" {
		t.Error("the command context lost its parent's values")
	}
	child, cancelChild := context.WithCancel(cctx)
	defer cancelChild()
	cancel()
	select {
	case <-child.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("canceling the parent did not cancel a child of the command context")
	}
	m.CommandSucceeded(context.WithValue(cctx, otherKey{}, "w"), e.ok)
	m.CommandSucceeded(cctx, e.ok)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, mf := range mfs {
		if mf.GetName() != "mongodb_driver_command_duration_seconds" {
			continue
		}
		for _, mt := range mf.GetMetric() {
			for _, l := range mt.GetLabel() {
				if l.GetName() == "collection" {
					found = l.GetValue() == "c" && mt.GetHistogram().GetSampleCount() == 2
				}
			}
		}
	}
	if !found {
		t.Error(`no command series with collection="c" and 2 observations`)
	}
}

// BenchmarkFindOneEventsParallel is BenchmarkFindOneEvents/sampled on
// GOMAXPROCS goroutines: the cost of the sink's shared state under
// contention.
func BenchmarkFindOneEventsParallel(b *testing.B) {
	m := metrics.New(metrics.Options{})
	e := newFindOneEvents(b, m)
	ctx := sampledCtx()
	e.run(ctx, m)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			e.run(ctx, m)
		}
	})
}
