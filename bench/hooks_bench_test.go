package main

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/telemetry/tracing"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// endCounter is a span processor that counts the spans that end, keeping
// none.
type endCounter struct{ n atomic.Int64 }

func (c *endCounter) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (c *endCounter) OnEnd(sdktrace.ReadOnlySpan)                     { c.n.Add(1) }
func (c *endCounter) Shutdown(context.Context) error                  { return nil }
func (c *endCounter) ForceFlush(context.Context) error                { return nil }

// BenchmarkOperationHooks (the tracing sink's, here because it measures
// the OTel SDK, which the library's module does not require) measures the hooks of one find (operation,
// selection, checkout, command) with tracing off, on, and on with the
// query text, and on under a sampler that samples nothing.
func BenchmarkOperationHooks(b *testing.B) {
	cmd, _ := bson.Marshal(bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "x", Value: 1}}},
		{Key: "lsid", Value: bson.D{{Key: "id", Value: bson.Binary{Subtype: 4, Data: make([]byte, 16)}}}}, {Key: "$db", Value: "d"}})
	reply, _ := bson.Marshal(bson.D{{Key: "cursor", Value: bson.D{{Key: "id", Value: int64(0)}, {Key: "ns", Value: "d.c"}}}, {Key: "ok", Value: 1}})
	sid := int64(9)
	for _, bc := range []struct {
		name    string
		on      bool
		textMax int
		never   bool
	}{{"off", false, 0, false}, {"on", true, 0, false}, {"on+text", true, 1000, false}, {"on+unsampled", true, 1000, true}} {
		b.Run(bc.name, func(b *testing.B) {
			var ended endCounter
			on, n := bc.on, bc.textMax
			opts := []sdktrace.TracerProviderOption{sdktrace.WithSpanProcessor(&ended)}
			if bc.never {
				opts = append(opts, sdktrace.WithSampler(sdktrace.NeverSample()))
			}
			tr := tracing.New(tracing.Options{TracerProvider: sdktrace.NewTracerProvider(opts...), Enabled: &on, QueryTextMaxLength: &n})
			os := &event.OperationStarted{Name: "find", Database: "d", Collection: "c"}
			of := &event.OperationFinished{Name: "find", Database: "d", Collection: "c", Attempts: 1}
			sel := &event.ServerSelectionSucceeded{ServerHost: "h", ServerPort: 27017}
			co := &event.ConnectionCheckedOut{Address: "h:27017", ConnectionID: 1}
			f := event.CommandFields{CommandName: "find", DatabaseName: "d", ServerHost: "h", ServerPort: 27017, ConnectionID: 1, ServerConnectionID: &sid}
			cs := &event.CommandStarted{CommandFields: f, Command: cmd}
			ok := &event.CommandSucceeded{CommandFields: f, Reply: reply}
			ctx := context.Background()
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				octx := tr.OperationStarted(ctx, os)
				tr.SelectionEvent(octx, &event.ServerSelectionStarted{})
				tr.SelectionEvent(octx, sel)
				tr.PoolEvent(octx, co)
				cctx := tr.CommandStarted(octx, cs)
				tr.CommandSucceeded(cctx, ok)
				tr.OperationFinished(octx, of)
			}
		})
	}
}
