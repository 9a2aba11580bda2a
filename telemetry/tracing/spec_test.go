package tracing_test

import (
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/internal/oteltest"
	"github.com/mongoscope/mongoscope/internal/spectest/unified"
	"github.com/mongoscope/mongoscope/internal/spectest/unified/mongotestdeploy"
	"github.com/mongoscope/mongoscope/telemetry/tracing"
)

// newRecorded returns an enabled Tracer over an in-memory recorder.
func newRecorded(queryMax int) (*tracing.Tracer, *oteltest.SpanRecorder) {
	rec := oteltest.NewSpanRecorder()
	tp := oteltest.NewTracerProvider(rec)
	on := true
	return tracing.New(tracing.Options{TracerProvider: tp, Enabled: &on, QueryTextMaxLength: &queryMax}), rec
}

// specHook is the unified runner's Tracing hook: a Tracer over an
// in-memory recorder, the command payload (db.query.text) on when the
// client asks for it.
func specHook(payload bool) (any, func() []*unified.Span) {
	n := 0
	if payload {
		n = 1 << 20
	}
	t, rec := newRecorded(n)
	return t, func() []*unified.Span { return spanTrees(rec.Ended()) }
}

// spanTrees turns the recorded spans into the runner's trees
// (oteltest.UnifiedSpans).
func spanTrees(ended []*oteltest.Span) []*unified.Span {
	rs := make([]oteltest.Recorded, len(ended))
	for i, s := range ended {
		rs[i] = s.Recorded()
	}
	return oteltest.UnifiedSpans(rs)
}

// transactionsIssue is the reason the transaction files are skipped until
// the transaction span exists.
const transactionsIssue = "transactions: issue 16 (the driver has no transactions yet)"

// TestSpecOpenTelemetry runs the OpenTelemetry specification's unified
// tests against mongotest, with spans from a Tracer over an in-memory
// recorder (internal/oteltest, on the OTel API: the library's module does
// not require the SDK; bench's TestTelemetryConfigs records through the
// SDK itself): the operation files on each topology mongotest
// plays (the runner would run a file without requirements on the first
// only), the transaction files once. Each suite logs its summary line
// (passed, failed, skipped with the reasons).
func TestSpecOpenTelemetry(t *testing.T) {
	for _, topo := range (mongotestdeploy.Provider{}).Topologies() {
		t.Run("operation/"+topo, func(t *testing.T) {
			r := &unified.Runner{Provider: mongotestdeploy.Provider{Only: []string{topo}}, Tracing: specHook}
			r.RunSuite(t, unified.Suite{Name: "open-telemetry/operation on " + topo, Dir: []string{"open-telemetry", "tests", "operation"}})
		})
	}
	// The transaction files need the transaction span, which comes with
	// the driver's transactions.
	t.Run("transaction", func(t *testing.T) {
		r := &unified.Runner{Provider: mongotestdeploy.Provider{}, Tracing: specHook,
			Skip: func(string, bson.Raw) string { return transactionsIssue }}
		r.RunSuite(t, unified.Suite{Name: "open-telemetry/transaction", Dir: []string{"open-telemetry", "tests", "transaction"}})
	})
}
