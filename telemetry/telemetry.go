// Package telemetry turns on the driver's three sinks at once: the
// standardized logs (driver/logging), OpenTelemetry spans
// (telemetry/tracing) and Prometheus metrics (telemetry/metrics), all fed by
// the same events, so that they agree with each other.
package telemetry

import (
	"log/slog"

	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/driver/logging"
	"github.com/mongoscope/mongoscope/telemetry/metrics"
	"github.com/mongoscope/mongoscope/telemetry/tracing"
	"go.opentelemetry.io/otel/trace"
)

// Options configure the three sinks. The zero value turns all three on,
// with slog.Default, the global TracerProvider and Prometheus's default
// registerer.
type Options struct {
	// Logger receives the driver's log messages at info and above; nil
	// means slog.Default().
	Logger *slog.Logger
	// LogLevels sets a logging component's minimum level (command and
	// connection messages are debug); nil logs every component at info.
	// MONGODB_LOG_* variables still apply to the components it leaves out.
	LogLevels map[logging.Component]logging.Level
	// TracerProvider makes the spans; nil means the global one.
	TracerProvider trace.TracerProvider
	// Registerer takes the metrics; nil means prometheus.DefaultRegisterer.
	Registerer metrics.Registerer
	// QueryTextMaxLength adds db.query.text to command spans, cut to this
	// length; 0 leaves it out.
	QueryTextMaxLength int
	// Buckets are the histograms' bounds in seconds; nil means OTel's
	// database buckets.
	Buckets []float64
	// MaxNamespaces caps the distinct (database, collection) pairs of
	// the metrics' labels (metrics.Options.MaxNamespaces): 0 means 100.
	MaxNamespaces int
	// NoLogs, NoTracing and NoMetrics turn a sink off.
	NoLogs, NoTracing, NoMetrics bool
}

// Telemetry holds the sinks New made.
type Telemetry struct {
	logging *logging.Options
	tracer  *tracing.Tracer
	metrics *metrics.Metrics
}

// New makes the sinks o asks for and registers the metrics.
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
		n := o.QueryTextMaxLength
		t.tracer = tracing.New(tracing.Options{TracerProvider: o.TracerProvider, Enabled: &on, QueryTextMaxLength: &n})
	}
	if !o.NoMetrics {
		t.metrics = metrics.New(metrics.Options{Buckets: o.Buckets, MaxNamespaces: o.MaxNamespaces})
		if err := t.metrics.Register(o.Registerer); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Apply adds the sinks to opts: the logging options (unless opts already
// has its own) and the monitors.
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
