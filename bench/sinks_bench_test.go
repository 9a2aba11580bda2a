package main

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
	"github.com/mongoscope/mongoscope/telemetry"
	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

type discardExporter struct{}

func (discardExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardExporter) Shutdown(context.Context) error                             { return nil }

// BenchmarkFindOneAllSinks (here because it uses the OTel SDK, which the
// library's module does not require) is findOne by _id with logs at info, spans
// through the OTel SDK (batch processor, discarding exporter) and
// Prometheus metrics, against an in-process server, each sink alone and
// all three; tracing-syncexport exports spans as they end (the SDK's
// simple processor) to show what the batch processor's goroutine, woken
// for every span, costs.
func BenchmarkFindOneAllSinks(b *testing.B) {
	for _, tc := range []struct {
		name string
		o    telemetry.Options
		none bool
		sync bool // spans exported as they end, without the batch processor's goroutine
	}{
		{"none", telemetry.Options{}, true, false},
		{"logs", telemetry.Options{NoTracing: true, NoMetrics: true}, false, false},
		{"metrics", telemetry.Options{NoTracing: true, NoLogs: true}, false, false},
		{"tracing", telemetry.Options{NoMetrics: true, NoLogs: true}, false, false},
		{"all", telemetry.Options{}, false, false},
		{"tracing-syncexport", telemetry.Options{NoMetrics: true, NoLogs: true}, false, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			srv, err := mongotest.Start(mongotest.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Close()
			tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discardExporter{}))
			if tc.sync {
				tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sdktrace.NewSimpleSpanProcessor(discardExporter{})))
			}
			defer tp.Shutdown(context.Background())
			opts := &driver.ClientOptions{}
			if err := opts.ApplyURI(srv.URI()); err != nil {
				b.Fatal(err)
			}
			if !tc.none {
				o := tc.o
				o.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
				o.TracerProvider = tp
				o.Registerer = prometheus.NewRegistry()
				tel, err := telemetry.New(o)
				if err != nil {
					b.Fatal(err)
				}
				tel.Apply(opts)
			}
			ctx := context.Background()
			c, err := driver.Connect(ctx, opts)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Disconnect(ctx)
			coll := c.Database("bench").Collection("c")
			if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "x", Value: "y"}}); err != nil {
				b.Fatal(err)
			}
			filter := bson.D{{Key: "_id", Value: 1}}
			var out bson.Raw
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := coll.FindOne(ctx, filter).Decode(&out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
