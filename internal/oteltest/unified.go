package oteltest

import (
	"sort"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/internal/spectest/unified"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Recorded is what the unified runner's tracing hook needs of an ended
// span, whichever recorder kept it (this package's, or the SDK's in
// bench/).
type Recorded struct {
	Name       string
	ID, Parent trace.SpanContext
	Start      time.Time
	Attributes []attribute.KeyValue
	Events     []Event
}

// Recorded returns s as the hook needs it.
func (s *Span) Recorded() Recorded {
	return Recorded{Name: s.Name(), ID: s.SpanContext(), Parent: s.Parent(), Start: s.StartTime(), Attributes: s.Attributes(), Events: s.Events()}
}

// UnifiedSpans turns ended spans into the runner's trees: a span whose
// parent was not recorded is a root; siblings are in start order. The
// attributes of a span's "exception" event are added to its own, since
// the specification's tests expect them there while OTel-Go records them
// on the event.
func UnifiedSpans(ended []Recorded) []*unified.Span {
	sorted := append([]Recorded(nil), ended...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Start.Before(sorted[j].Start) })
	byID := map[trace.SpanID]*unified.Span{}
	for _, s := range sorted {
		u := &unified.Span{Name: s.Name}
		add := func(kv attribute.KeyValue) {
			u.Attributes = append(u.Attributes, bson.E{Key: string(kv.Key), Value: attrValue(kv.Value)})
		}
		for _, kv := range s.Attributes {
			add(kv)
		}
		for _, ev := range s.Events {
			if ev.Name == "exception" {
				for _, kv := range ev.Attributes {
					add(kv)
				}
			}
		}
		byID[s.ID.SpanID()] = u
	}
	var roots []*unified.Span
	for _, s := range sorted {
		u := byID[s.ID.SpanID()]
		if p, ok := byID[s.Parent.SpanID()]; ok && s.Parent.IsValid() {
			p.Nested = append(p.Nested, u)
			continue
		}
		roots = append(roots, u)
	}
	return roots
}

func attrValue(v attribute.Value) any {
	switch v.Type() {
	case attribute.STRING:
		return v.AsString()
	case attribute.INT64:
		return v.AsInt64()
	case attribute.FLOAT64:
		return v.AsFloat64()
	case attribute.BOOL:
		return v.AsBool()
	}
	return v.Emit()
}
