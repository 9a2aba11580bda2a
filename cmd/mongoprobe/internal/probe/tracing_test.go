package probe

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/codes"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/internal/oteltest"
	"github.com/mongoscope/mongoscope/mongotest"
)

func TestTracing(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{})
	rec := oteltest.NewSpanRecorder()
	e := newCluster(t, rs.URI()+"&retryReads=false", nil, Deps{TracerProvider: oteltest.NewTracerProvider(rec)})
	waitPrimary(t, e.c)
	failPoint(t, rs.Primary(), bson.D{{Key: "failCommands", Value: bson.A{"find"}}, {Key: "errorCode", Value: 2}}, 1)
	e.c.Round(context.Background())

	var round *oteltest.Span
	byName := map[string]*oteltest.Span{}
	for _, s := range rec.Ended() {
		byName[s.Name()] = s
		if s.Name() == "mongoprobe.round" {
			round = s
		}
	}
	if round == nil {
		t.Fatalf("no round span among %d", len(byName))
	}
	if round.Status().Code != codes.Error {
		t.Errorf("round status %+v", round.Status())
	}
	var probes, driverSpans int
	for _, s := range rec.Ended() {
		if strings.HasPrefix(s.Name(), "mongoprobe.probe ") {
			probes++
			if s.Parent().SpanID() != round.SpanContext().SpanID() {
				t.Errorf("%s is not the round's child", s.Name())
			}
			continue
		}
		if s.Name() == "mongoprobe.round" {
			continue
		}
		// a driver span: it nests under a probe span (or a driver span)
		if !s.Parent().IsValid() || s.Parent().TraceID() != round.SpanContext().TraceID() {
			t.Errorf("driver span %s is outside the round's trace", s.Name())
		}
		driverSpans++
	}
	if probes != 3+1+1 || driverSpans == 0 {
		t.Errorf("%d probe spans, %d driver spans", probes, driverSpans)
	}
	read := byName["mongoprobe.probe read primary"]
	if read == nil || read.Status().Code != codes.Error {
		t.Fatalf("read span: %+v", read)
	}
	attrs := map[string]string{}
	for _, kv := range read.Attributes() {
		attrs[string(kv.Key)] = kv.Value.Emit()
	}
	if attrs["mongoprobe.outcome"] != "failure" || attrs["mongoprobe.class"] != ClassServer || attrs["mongoprobe.probe"] != ProbeRead || attrs["mongoprobe.target"] != "primary" {
		t.Errorf("read span attributes %v", attrs)
	}
	if w := byName["mongoprobe.probe write primary"]; w == nil || w.Status().Code == codes.Error {
		t.Errorf("write span: %+v", w)
	}
}
