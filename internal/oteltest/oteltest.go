// Package oteltest is an in-memory OpenTelemetry TracerProvider for the
// project's tests: it records the spans the tracing sink makes, on the
// OpenTelemetry API alone, so that the library's module never requires the
// OpenTelemetry SDK (which is for programs, in cmd/, and for bench/). It
// records what the tests read of a span (name, kind, parent, attributes,
// events, links, status, times, the tracer's scope), samples every trace
// or none, and records errors as the SDK does: an "exception" event with
// exception.type, exception.message and, when asked, exception.stacktrace.
package oteltest

import (
	"context"
	"math/rand/v2"
	"reflect"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
)

// SpanRecorder keeps the spans that ended, in the order they ended.
type SpanRecorder struct {
	// CountOnly, when set, makes the recorder count the spans that end
	// without keeping them (fuzzing and benchmarks).
	CountOnly bool

	mu    sync.Mutex
	ended []*Span
	n     atomic.Int64
}

// NewSpanRecorder returns an empty recorder.
func NewSpanRecorder() *SpanRecorder { return &SpanRecorder{} }

// Ended returns the spans that ended so far.
func (r *SpanRecorder) Ended() []*Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*Span(nil), r.ended...)
}

// Count returns how many spans ended.
func (r *SpanRecorder) Count() int64 { return r.n.Load() }

// Reset forgets the spans that ended.
func (r *SpanRecorder) Reset() {
	r.mu.Lock()
	r.ended = nil
	r.mu.Unlock()
	r.n.Store(0)
}

func (r *SpanRecorder) end(s *Span) {
	r.n.Add(1)
	if r.CountOnly {
		return
	}
	r.mu.Lock()
	r.ended = append(r.ended, s)
	r.mu.Unlock()
}

// An Option configures a TracerProvider.
type Option func(*TracerProvider)

// NeverSample makes every root span unsampled and not recording; a child
// follows its parent's sampling, as the SDK's ParentBased sampler does.
func NeverSample() Option { return func(p *TracerProvider) { p.never = true } }

// TracerProvider makes tracers whose spans end in its recorder.
type TracerProvider struct {
	embedded.TracerProvider
	rec   *SpanRecorder
	never bool
}

// NewTracerProvider returns a provider recording into rec.
func NewTracerProvider(rec *SpanRecorder, opts ...Option) *TracerProvider {
	p := &TracerProvider{rec: rec}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Shutdown does nothing; it is there so tests read as with the SDK.
func (p *TracerProvider) Shutdown(context.Context) error { return nil }

// Tracer implements trace.TracerProvider.
func (p *TracerProvider) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	c := trace.NewTracerConfig(opts...)
	return &tracer{p: p, scope: Scope{Name: name, Version: c.InstrumentationVersion()}}
}

// Scope is the name and version a tracer was asked for.
type Scope struct {
	Name, Version string
}

type tracer struct {
	embedded.Tracer
	p     *TracerProvider
	scope Scope
}

// Start implements trace.Tracer.
func (t *tracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	c := trace.NewSpanStartConfig(opts...)
	var parent trace.SpanContext
	if !c.NewRoot() {
		parent = trace.SpanContextFromContext(ctx)
	}
	var flags trace.TraceFlags
	tid := parent.TraceID()
	if parent.IsValid() {
		flags = parent.TraceFlags() & trace.FlagsSampled
	} else {
		tid = newTraceID()
		if !t.p.never {
			flags = trace.FlagsSampled
		}
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: newSpanID(), TraceFlags: flags})
	s := &Span{tracer: t, sc: sc, parent: parent, name: name, kind: c.SpanKind(), recording: sc.IsSampled()}
	if s.recording {
		s.start = c.Timestamp()
		if s.start.IsZero() {
			s.start = time.Now()
		}
		s.attrs = append(s.attrs, c.Attributes()...)
		s.links = append(s.links, c.Links()...)
	}
	return trace.ContextWithSpan(ctx, s), s
}

func newTraceID() (id trace.TraceID) {
	for id == (trace.TraceID{}) {
		a, b := rand.Uint64(), rand.Uint64()
		for i := 0; i < 8; i++ {
			id[i], id[8+i] = byte(a>>(8*i)), byte(b>>(8*i))
		}
	}
	return id
}

func newSpanID() (id trace.SpanID) {
	for id == (trace.SpanID{}) {
		a := rand.Uint64()
		for i := 0; i < 8; i++ {
			id[i] = byte(a >> (8 * i))
		}
	}
	return id
}

// Event is a span event.
type Event struct {
	Name       string
	Attributes []attribute.KeyValue
	Time       time.Time
}

// Status is a span's status.
type Status struct {
	Code        codes.Code
	Description string
}

// Span is a recorded span. It implements trace.Span for the code under
// test, and the read methods the tests use.
type Span struct {
	embedded.Span
	tracer *tracer

	mu        sync.Mutex
	sc        trace.SpanContext
	parent    trace.SpanContext
	name      string
	kind      trace.SpanKind
	recording bool
	ended     bool
	start     time.Time
	end       time.Time
	attrs     []attribute.KeyValue
	events    []Event
	links     []trace.Link
	status    Status
}

// End implements trace.Span.
func (s *Span) End(opts ...trace.SpanEndOption) {
	s.mu.Lock()
	if s.ended || !s.recording {
		s.ended = true
		s.mu.Unlock()
		return
	}
	s.ended = true
	c := trace.NewSpanEndConfig(opts...)
	s.end = c.Timestamp()
	if s.end.IsZero() {
		s.end = time.Now()
	}
	s.mu.Unlock()
	s.tracer.p.rec.end(s)
}

// AddEvent implements trace.Span.
func (s *Span) AddEvent(name string, opts ...trace.EventOption) {
	c := trace.NewEventConfig(opts...)
	s.addEvent(name, c)
}

func (s *Span) addEvent(name string, c trace.EventConfig, more ...attribute.KeyValue) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.recording || s.ended {
		return
	}
	t := c.Timestamp()
	if t.IsZero() {
		t = time.Now()
	}
	attrs := append(append([]attribute.KeyValue(nil), more...), c.Attributes()...)
	s.events = append(s.events, Event{Name: name, Attributes: attrs, Time: t})
}

// AddLink implements trace.Span.
func (s *Span) AddLink(l trace.Link) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.recording && !s.ended {
		s.links = append(s.links, l)
	}
}

// IsRecording implements trace.Span.
func (s *Span) IsRecording() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.recording && !s.ended
}

// RecordError implements trace.Span as the SDK does: an "exception" event
// with the error's type and message, and the stack when asked for.
func (s *Span) RecordError(err error, opts ...trace.EventOption) {
	if err == nil {
		return
	}
	c := trace.NewEventConfig(opts...)
	attrs := []attribute.KeyValue{
		attribute.String("exception.type", typeName(err)),
		attribute.String("exception.message", err.Error()),
	}
	if c.StackTrace() {
		attrs = append(attrs, attribute.String("exception.stacktrace", string(debug.Stack())))
	}
	s.addEvent("exception", c, attrs...)
}

func typeName(err error) string {
	t := reflect.TypeOf(err)
	if t.PkgPath() == "" && t.Name() == "" {
		return t.String()
	}
	if t.PkgPath() == "" {
		return t.Name()
	}
	return t.PkgPath() + "." + t.Name()
}

// SpanContext implements trace.Span.
func (s *Span) SpanContext() trace.SpanContext { return s.sc }

// SetStatus implements trace.Span: Error replaces Unset, Ok replaces
// both, and a description is kept only with Error.
func (s *Span) SetStatus(code codes.Code, description string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.recording || s.ended || code < s.status.Code {
		return
	}
	if code != codes.Error {
		description = ""
	}
	s.status = Status{Code: code, Description: description}
}

// SetName implements trace.Span.
func (s *Span) SetName(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.recording && !s.ended {
		s.name = name
	}
}

// SetAttributes implements trace.Span; a key set again replaces its value.
func (s *Span) SetAttributes(kv ...attribute.KeyValue) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.recording || s.ended {
		return
	}
next:
	for _, a := range kv {
		for i := range s.attrs {
			if s.attrs[i].Key == a.Key {
				s.attrs[i] = a
				continue next
			}
		}
		s.attrs = append(s.attrs, a)
	}
}

// TracerProvider implements trace.Span.
func (s *Span) TracerProvider() trace.TracerProvider { return s.tracer.p }

// Name returns the span's name.
func (s *Span) Name() string { s.mu.Lock(); defer s.mu.Unlock(); return s.name }

// SpanKind returns the span's kind.
func (s *Span) SpanKind() trace.SpanKind { return s.kind }

// Parent returns the parent's span context, invalid for a root span.
func (s *Span) Parent() trace.SpanContext { return s.parent }

// Attributes returns the span's attributes, each key once (the last value
// set).
func (s *Span) Attributes() []attribute.KeyValue {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]attribute.KeyValue, 0, len(s.attrs))
	seen := map[attribute.Key]int{}
	for _, a := range s.attrs {
		if i, ok := seen[a.Key]; ok {
			out[i] = a
			continue
		}
		seen[a.Key] = len(out)
		out = append(out, a)
	}
	return out
}

// Events returns the span's events.
func (s *Span) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Event(nil), s.events...)
}

// Links returns the span's links.
func (s *Span) Links() []trace.Link {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]trace.Link(nil), s.links...)
}

// Status returns the span's status.
func (s *Span) Status() Status { s.mu.Lock(); defer s.mu.Unlock(); return s.status }

// StartTime and EndTime return when the span started and ended.
func (s *Span) StartTime() time.Time { return s.start }

// EndTime returns when the span ended.
func (s *Span) EndTime() time.Time { s.mu.Lock(); defer s.mu.Unlock(); return s.end }

// InstrumentationScope returns the name and version of the tracer that
// made the span.
func (s *Span) InstrumentationScope() Scope { return s.tracer.scope }
