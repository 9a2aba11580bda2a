package oteltest

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

func TestRecordsAsTheSDKDoes(t *testing.T) {
	rec := NewSpanRecorder()
	tp := NewTracerProvider(rec)
	tr := tp.Tracer("lib", trace.WithInstrumentationVersion("1.2"))
	ctx, parent := tr.Start(context.Background(), "op", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attribute.String("a", "1")))
	_, child := tr.Start(ctx, "cmd")
	child.SetAttributes(attribute.String("b", "2"), attribute.String("a", "x"))
	child.AddEvent("e", trace.WithAttributes(attribute.Int("n", 3)))
	child.RecordError(errors.New("boom"), trace.WithStackTrace(true))
	child.SetStatus(codes.Error, "boom")
	child.SetStatus(codes.Unset, "") // does not replace Error
	child.End()
	parent.End()
	parent.End() // a second End records nothing
	got := rec.Ended()
	if len(got) != 2 || got[0].Name() != "cmd" || got[1].Name() != "op" {
		t.Fatalf("ended %d spans", len(got))
	}
	c, p := got[0], got[1]
	if c.Parent().SpanID() != p.SpanContext().SpanID() || c.SpanContext().TraceID() != p.SpanContext().TraceID() || p.Parent().IsValid() {
		t.Error("parenting is wrong")
	}
	if p.SpanKind() != trace.SpanKindClient || p.InstrumentationScope() != (Scope{"lib", "1.2"}) {
		t.Errorf("kind %v scope %v", p.SpanKind(), p.InstrumentationScope())
	}
	if a := c.Attributes(); len(a) != 2 || a[1].Key != "a" || a[1].Value.AsString() != "x" {
		t.Errorf("child attributes %v", a)
	}
	ev := c.Events()
	if len(ev) != 2 || ev[1].Name != "exception" || len(ev[1].Attributes) != 3 {
		t.Fatalf("events %v", ev)
	}
	if c.Status().Code != codes.Error || c.Status().Description != "boom" {
		t.Errorf("status %v", c.Status())
	}
	if c.EndTime().Before(c.StartTime()) {
		t.Error("ended before it started")
	}
}

func TestNeverSample(t *testing.T) {
	rec := NewSpanRecorder()
	tp := NewTracerProvider(rec, NeverSample())
	ctx, s := tp.Tracer("x").Start(context.Background(), "op")
	_, c := tp.Tracer("x").Start(ctx, "cmd")
	if s.IsRecording() || c.IsRecording() || !c.SpanContext().IsValid() || c.SpanContext().TraceID() != s.SpanContext().TraceID() {
		t.Fatal("an unsampled trace records, or its child is not in it")
	}
	c.End()
	s.End()
	if len(rec.Ended()) != 0 || rec.Count() != 0 {
		t.Error("unsampled spans were recorded")
	}
}
