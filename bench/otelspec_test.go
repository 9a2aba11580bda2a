package main

import (
	"sort"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/internal/spectest/unified"
	"github.com/mongoscope/mongoscope/internal/spectest/unified/mongotestdeploy"
	"github.com/mongoscope/mongoscope/telemetry/tracing"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// TestSpecOpenTelemetrySDK runs the OpenTelemetry specification's
// operation tests on a mongotest replica set with the spans recorded by
// the OTel SDK itself (its in-memory SpanRecorder). telemetry/tracing runs
// the whole suite on every topology over an in-memory provider of the
// project's (internal/oteltest), since the library's module does not
// require the SDK; this module may, so here the spans are the SDK's,
// exception events and attribute limits included.
func TestSpecOpenTelemetrySDK(t *testing.T) {
	hook := func(payload bool) (any, func() []*unified.Span) {
		n := 0
		if payload {
			n = 1 << 20
		}
		rec := tracetest.NewSpanRecorder()
		on := true
		tr := tracing.New(tracing.Options{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)), Enabled: &on, QueryTextMaxLength: &n})
		return tr, func() []*unified.Span { return sdkSpanTrees(rec.Ended()) }
	}
	r := &unified.Runner{Provider: mongotestdeploy.Provider{Only: []string{"replicaset"}}, Tracing: hook}
	r.RunSuite(t, unified.Suite{Name: "open-telemetry/operation on replicaset, OTel SDK", Dir: []string{"open-telemetry", "tests", "operation"}})
}

// sdkSpanTrees turns the SDK's recorded spans into the runner's trees, as
// telemetry/tracing's spec test does with its own: a span whose parent was
// not recorded is a root, siblings are in start order, and the attributes
// of the "exception" event count as the span's.
func sdkSpanTrees(ended []sdktrace.ReadOnlySpan) []*unified.Span {
	sorted := append([]sdktrace.ReadOnlySpan(nil), ended...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].StartTime().Before(sorted[j].StartTime()) })
	byID := map[trace.SpanID]*unified.Span{}
	for _, s := range sorted {
		u := &unified.Span{Name: s.Name()}
		add := func(kv attribute.KeyValue) {
			var v any
			switch kv.Value.Type() {
			case attribute.STRING:
				v = kv.Value.AsString()
			case attribute.INT64:
				v = kv.Value.AsInt64()
			case attribute.FLOAT64:
				v = kv.Value.AsFloat64()
			case attribute.BOOL:
				v = kv.Value.AsBool()
			default:
				v = kv.Value.Emit()
			}
			u.Attributes = append(u.Attributes, bson.E{Key: string(kv.Key), Value: v})
		}
		for _, kv := range s.Attributes() {
			add(kv)
		}
		for _, ev := range s.Events() {
			if ev.Name == "exception" {
				for _, kv := range ev.Attributes {
					add(kv)
				}
			}
		}
		byID[s.SpanContext().SpanID()] = u
	}
	var roots []*unified.Span
	for _, s := range sorted {
		u := byID[s.SpanContext().SpanID()]
		if p, ok := byID[s.Parent().SpanID()]; ok && s.Parent().IsValid() {
			p.Nested = append(p.Nested, u)
			continue
		}
		roots = append(roots, u)
	}
	return roots
}
