package telemetry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/driver/logging"
	"github.com/mongoscope/mongoscope/internal/oteltest"
	"github.com/mongoscope/mongoscope/mongotest"
	"github.com/mongoscope/mongoscope/telemetry"
	"github.com/mongoscope/mongoscope/telemetry/metrics"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// TestSinksAgree runs operations with the three sinks on and checks that
// they describe the same thing: every command log message carries the
// trace and span ids of a recorded command span, and the operation
// histogram's exemplar names a recorded trace.
func TestSinksAgree(t *testing.T) {
	srv, err := mongotest.Start(mongotest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	rec := oteltest.NewSpanRecorder()
	tp := oteltest.NewTracerProvider(rec)
	defer tp.Shutdown(context.Background())
	reg := prometheus.NewRegistry()
	var logs bytes.Buffer
	tel, err := telemetry.New(telemetry.Options{
		Logger:         slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		LogLevels:      map[logging.Component]logging.Level{logging.ComponentCommand: logging.LevelDebug},
		TracerProvider: tp,
		Registerer:     reg,
	})
	if err != nil {
		t.Fatal(err)
	}
	opts := &driver.ClientOptions{}
	if err := opts.ApplyURI(srv.URI()); err != nil {
		t.Fatal(err)
	}
	tel.Apply(opts)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client, err := driver.Connect(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	coll := client.Database("agree").Collection("c")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := client.Disconnect(ctx); err != nil {
		t.Fatal(err)
	}

	// Spans by span id; command spans are those whose parent is an
	// operation span of this client.
	spans := map[string]*oteltest.Span{}
	traces := map[string]bool{}
	for _, s := range rec.Ended() {
		spans[s.SpanContext().SpanID().String()] = s
		traces[s.SpanContext().TraceID().String()] = true
	}
	if len(spans) == 0 {
		t.Fatal("no spans recorded")
	}

	// Logs: each command message carries a recorded span's ids.
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if m["component"] != "command" {
			continue
		}
		name, _ := m["commandName"].(string)
		if name == "endSessions" {
			continue // sent by Disconnect, outside any operation
		}
		n++
		sid, _ := m["span_id"].(string)
		s, ok := spans[sid]
		if !ok {
			t.Errorf("command log %q (%s) names span %q, which was not recorded", m["msg"], name, sid)
			continue
		}
		if m["trace_id"] != s.SpanContext().TraceID().String() {
			t.Errorf("command log %q: trace_id %v, the span's is %s", m["msg"], m["trace_id"], s.SpanContext().TraceID())
		}
		if s.Name() != name {
			t.Errorf("command log for %s names span %q", name, s.Name())
		}
	}
	if n < 4 {
		t.Errorf("%d command log messages, want the started and succeeded of insert and find", n)
	}

	// Metrics: the operation histogram's exemplars name recorded traces.
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	ex := 0
	for _, mf := range mfs {
		if mf.GetType() != dto.MetricType_HISTOGRAM {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, b := range m.GetHistogram().GetBucket() {
				e := b.GetExemplar()
				if e == nil {
					continue
				}
				for _, l := range e.GetLabel() {
					if l.GetName() == "trace_id" {
						ex++
						if !traces[l.GetValue()] {
							t.Errorf("%s: exemplar trace_id %s is not a recorded trace", mf.GetName(), l.GetValue())
						}
					}
				}
			}
		}
	}
	if ex == 0 {
		t.Error("no histogram carries a trace_id exemplar")
	}
}

func TestOptions(t *testing.T) {
	reg := prometheus.NewRegistry()
	all, err := telemetry.New(telemetry.Options{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	if all.Tracer() == nil || !all.Tracer().Enabled() || all.Metrics() == nil {
		t.Fatalf("the zero Options must turn every sink on: tracer %v metrics %v", all.Tracer(), all.Metrics())
	}
	var opts driver.ClientOptions
	all.Apply(&opts)
	if opts.Logging == nil || len(opts.Monitors) != 2 {
		t.Fatalf("Apply set Logging %v and %d monitors, want logging and 2", opts.Logging, len(opts.Monitors))
	}

	// A second Telemetry on the same registerer is refused, not merged.
	if _, err := telemetry.New(telemetry.Options{Registerer: reg}); err == nil {
		t.Error("a second Telemetry on one registerer was accepted")
	}

	// Each sink can be left out; the application's own logging options win.
	none, err := telemetry.New(telemetry.Options{NoLogs: true, NoTracing: true, NoMetrics: true})
	if err != nil {
		t.Fatal(err)
	}
	mine := &logging.Options{Logger: slog.Default()}
	opts = driver.ClientOptions{Logging: mine}
	none.Apply(&opts)
	if opts.Logging != mine || len(opts.Monitors) != 0 || none.Tracer() != nil || none.Metrics() != nil {
		t.Errorf("with every sink off Apply changed the options: logging %p (mine %p), %d monitors", opts.Logging, mine, len(opts.Monitors))
	}
	logsOnly, err := telemetry.New(telemetry.Options{NoTracing: true, NoMetrics: true})
	if err != nil {
		t.Fatal(err)
	}
	opts = driver.ClientOptions{Logging: mine}
	logsOnly.Apply(&opts)
	if opts.Logging != mine {
		t.Error("Apply replaced the application's own logging options")
	}

	// ExemplarInterval reaches the metrics sink; 0 is its default.
	if d := all.Metrics().ExemplarInterval(); d != metrics.DefaultExemplarInterval {
		t.Errorf("default ExemplarInterval %v, want %v", d, metrics.DefaultExemplarInterval)
	}
	for _, want := range []time.Duration{5 * time.Second, -1} {
		tel, err := telemetry.New(telemetry.Options{Registerer: prometheus.NewRegistry(), ExemplarInterval: want})
		if err != nil {
			t.Fatal(err)
		}
		if d := tel.Metrics().ExemplarInterval(); d != want {
			t.Errorf("ExemplarInterval %v gave %v", want, d)
		}
	}

	// QueryTextMaxLength 0 leaves db.query.text to the environment.
	t.Setenv("OTEL_GO_INSTRUMENTATION_MONGODB_QUERY_TEXT_MAX_LENGTH", "64")
	env, err := telemetry.New(telemetry.Options{NoMetrics: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := env.Tracer().QueryTextMaxLength(); n != 64 {
		t.Errorf("QueryTextMaxLength 0 with the variable at 64 gave %d", n)
	}
	set, err := telemetry.New(telemetry.Options{NoMetrics: true, QueryTextMaxLength: 10})
	if err != nil {
		t.Fatal(err)
	}
	if n := set.Tracer().QueryTextMaxLength(); n != 10 {
		t.Errorf("QueryTextMaxLength 10 gave %d", n)
	}
	// Tracing is on even when the environment says off: calling New is
	// the application's explicit choice.
	t.Setenv("OTEL_GO_INSTRUMENTATION_MONGODB_ENABLED", "false")
	on, err := telemetry.New(telemetry.Options{NoMetrics: true})
	if err != nil {
		t.Fatal(err)
	}
	if !on.Tracer().Enabled() {
		t.Error("the environment turned off the tracing New was asked for")
	}
}
