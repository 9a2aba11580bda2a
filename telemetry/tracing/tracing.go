// Package tracing is the driver's OpenTelemetry tracing sink: spans for
// operations and commands, as the MongoDB OpenTelemetry specification
// describes, fed by the driver's events (package driver/event). It uses the
// OpenTelemetry API only; the driver never imports it.
package tracing

import (
	"go.opentelemetry.io/otel/trace"
)

// Options configure a Tracer.
type Options struct {
	// TracerProvider makes the tracer; nil means the global one
	// (otel.GetTracerProvider), looked up when New runs.
	TracerProvider trace.TracerProvider
	// Enabled turns tracing on or off for the client the Tracer is given
	// to; nil means OTEL_GO_INSTRUMENTATION_MONGODB_ENABLED ("1", "true",
	// "yes"), and off when that is unset, as the specification asks.
	Enabled *bool
	// QueryTextMaxLength is the length db.query.text is cut to; 0 leaves
	// the attribute out. nil means
	// OTEL_GO_INSTRUMENTATION_MONGODB_QUERY_TEXT_MAX_LENGTH, or 0.
	QueryTextMaxLength *int
}

// A Tracer turns driver events into spans. Give it to a client in
// driver.ClientOptions.Monitors.
type Tracer struct {
	enabled bool
}

// New returns a Tracer for o.
func New(o Options) *Tracer {
	return &Tracer{enabled: o.Enabled != nil && *o.Enabled}
}

// Enabled reports whether the Tracer makes spans. A disabled Tracer need
// not be attached to a client at all.
func (t *Tracer) Enabled() bool { return t != nil && t.enabled }
