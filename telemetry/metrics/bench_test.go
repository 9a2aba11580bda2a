package metrics_test

import (
	"context"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/telemetry/metrics"
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
