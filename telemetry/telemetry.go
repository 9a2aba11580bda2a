// Package telemetry turns on the driver's three sinks with one call: the
// standardized log messages (driver/logging, on log/slog), OpenTelemetry
// spans (telemetry/tracing) and Prometheus metrics (telemetry/metrics). All
// three are fed by the same events of the same client, so they agree: a log
// message carries the trace_id and span_id of the span it belongs to, and a
// histogram's exemplar names the trace of a slow operation.
//
//	tel, err := telemetry.New(telemetry.Options{}) // slog.Default, the global TracerProvider, prometheus.DefaultRegisterer
//	if err != nil { ... }
//	opts := &driver.ClientOptions{}
//	opts.ApplyURI(uri)
//	tel.Apply(opts)
//	client, err := driver.Connect(ctx, opts)
//
// The driver never imports this package or the sinks: a program that does
// not use them does not build them. Of the three, only telemetry/metrics
// imports Prometheus's client, and none imports the OpenTelemetry SDK: the
// program chooses its TracerProvider (and exporter) itself.
package telemetry

import (
	"log/slog"
	"time"

	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/driver/logging"
	"github.com/mongoscope/mongoscope/telemetry/metrics"
	"github.com/mongoscope/mongoscope/telemetry/tracing"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Options configure the three sinks. The zero value turns all three on:
// log messages at info and above to slog.Default(), spans through the
// global TracerProvider, metrics on Prometheus's default registerer.
type Options struct {
	// Logger receives the driver's log messages; nil means slog.Default().
	Logger *slog.Logger
	// LogLevels sets a logging component's minimum level (the command
	// and connection messages are debug); nil logs every component at
	// info. MONGODB_LOG_* variables still set the components it leaves
	// out.
	LogLevels map[logging.Component]logging.Level

	// TracerProvider makes the spans; nil means otel.GetTracerProvider()
	// when New runs. Tracing is on: calling New is the application's
	// choice, which the specification lets override
	// OTEL_GO_INSTRUMENTATION_MONGODB_ENABLED.
	TracerProvider trace.TracerProvider
	// QueryTextMaxLength adds db.query.text (the command as relaxed
	// Extended JSON) to command spans, cut to this many bytes; 0 leaves
	// the choice to OTEL_GO_INSTRUMENTATION_MONGODB_QUERY_TEXT_MAX_LENGTH,
	// which is off when unset.
	QueryTextMaxLength int

	// Registerer takes the metrics; nil means Prometheus's
	// DefaultRegisterer.
	Registerer metrics.Registerer
	// Buckets are the duration histograms' bounds in seconds; nil means
	// OpenTelemetry's database buckets (metrics.DefaultBuckets).
	Buckets []float64
	// MaxNamespaces caps the distinct (database, collection) pairs of
	// the metrics' labels (metrics.Options.MaxNamespaces); 0 means 100.
	MaxNamespaces int
	// MeterProvider, when set, also receives the measurements as
	// OpenTelemetry metrics with the semantic conventions' names
	// (db.client.operation.duration, db.client.connection.*).
	MeterProvider metric.MeterProvider
	// ExemplarInterval is the least time between two exemplars of a
	// histogram series' bucket (metrics.Options.ExemplarInterval); 0
	// means 1s, a negative value turns exemplars off.
	ExemplarInterval time.Duration

	// NoLogs, NoTracing and NoMetrics turn a sink off.
	NoLogs, NoTracing, NoMetrics bool
}

// Telemetry holds the sinks New made, for one client: Apply it to that
// client's options.
type Telemetry struct {
	logging *logging.Options
	tracer  *tracing.Tracer
	metrics *metrics.Metrics
}

// New makes the sinks o asks for and registers the metrics. It fails only
// when the registerer refuses them (a second Telemetry on the same
// registerer: wrap it with prometheus.WrapRegistererWith and a label that
// tells the clients apart).
func New(o Options) (*Telemetry, error) {
	t := &Telemetry{}
	if !o.NoLogs {
		l := o.Logger
		if l == nil {
			l = slog.Default()
		}
		t.logging = &logging.Options{Logger: l, Levels: o.LogLevels}
	}
	if !o.NoTracing {
		on := true
		to := tracing.Options{TracerProvider: o.TracerProvider, Enabled: &on}
		if o.QueryTextMaxLength > 0 {
			n := o.QueryTextMaxLength
			to.QueryTextMaxLength = &n
		}
		t.tracer = tracing.New(to)
	}
	if !o.NoMetrics {
		t.metrics = metrics.New(metrics.Options{Buckets: o.Buckets, MaxNamespaces: o.MaxNamespaces, MeterProvider: o.MeterProvider,
			ExemplarInterval: o.ExemplarInterval})
		if err := t.metrics.Register(o.Registerer); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Apply adds the sinks to opts: the logging options, unless opts already
// has its own, and the tracing and metrics monitors, after any monitors
// opts holds.
func (t *Telemetry) Apply(opts *driver.ClientOptions) {
	if t.logging != nil && opts.Logging == nil {
		l := *t.logging
		opts.Logging = &l
	}
	if t.tracer != nil {
		opts.Monitors = append(opts.Monitors, t.tracer)
	}
	if t.metrics != nil {
		opts.Monitors = append(opts.Monitors, t.metrics)
	}
}

// Tracer returns the tracing sink, nil when off.
func (t *Telemetry) Tracer() *tracing.Tracer { return t.tracer }

// Metrics returns the metrics sink, nil when off.
func (t *Telemetry) Metrics() *metrics.Metrics { return t.metrics }
