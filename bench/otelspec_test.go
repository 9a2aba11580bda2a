package main

import (
	"testing"

	"github.com/mongoscope/mongoscope/internal/oteltest"
	"github.com/mongoscope/mongoscope/internal/spectest/unified"
	"github.com/mongoscope/mongoscope/internal/spectest/unified/mongotestdeploy"
	"github.com/mongoscope/mongoscope/telemetry/tracing"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
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

// sdkSpanTrees turns the SDK's recorded spans into the runner's trees,
// through the same conversion telemetry/tracing's spec test uses.
func sdkSpanTrees(ended []sdktrace.ReadOnlySpan) []*unified.Span {
	rs := make([]oteltest.Recorded, len(ended))
	for i, s := range ended {
		r := oteltest.Recorded{Name: s.Name(), ID: s.SpanContext(), Parent: s.Parent(), Start: s.StartTime(), Attributes: s.Attributes()}
		for _, ev := range s.Events() {
			r.Events = append(r.Events, oteltest.Event{Name: ev.Name, Attributes: ev.Attributes, Time: ev.Time})
		}
		rs[i] = r
	}
	return oteltest.UnifiedSpans(rs)
}
