package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	ours "github.com/mongoscope/mongoscope/bson"
	ourevent "github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/mongotest"
	"github.com/prometheus/client_golang/prometheus"
	theirs "go.mongodb.org/mongo-driver/v2/bson"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// TestTelemetryConfigs wires the telemetry rows' six clients to an
// in-process mongotest with in-memory span exporters, runs three inserts
// and three finds through each, and checks that each configuration is what
// the table says: "telemetry off" logs nothing and its tracer is off; "all
// sinks on" records spans and metrics (once the sinks are merged: their
// stubs implement no monitor interface and are reported, not attached);
// the otelmongo stand-in records one client span per command with its
// attributes, and its histogram. Then each row's benchmark function runs a
// few iterations in every configuration.
func TestTelemetryConfigs(t *testing.T) {
	for _, k := range telemetryEnv {
		t.Setenv(k, "") // restored after the test
		os.Unsetenv(k)
	}
	srv, err := mongotest.Start(mongotest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var exps []*tracetest.InMemoryExporter
	var offLogs, onLogs bytes.Buffer
	c, err := connectTelemetry(ctx, srv.URI(), func() sdktrace.SpanExporter {
		e := tracetest.NewInMemoryExporter()
		exps = append(exps, e)
		return e
	}, &offLogs, &onLogs)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close(ctx)
	for _, n := range c.notes {
		t.Log("note:", n)
	}
	onExp, sampExp, peerExp := exps[0], exps[1], exps[2]
	onExp.Reset()
	sampExp.Reset()
	peerExp.Reset()

	const n = 3
	for cfg := 0; cfg < numConfigs; cfg++ {
		for i := 0; i < n; i++ {
			id := int32(1000*cfg + i)
			if cl := c.ours[cfg]; cl != nil {
				coll := cl.Database(crudDB).Collection(crudColl)
				if _, err := coll.InsertOne(ctx, ours.D{{Key: "_id", Value: id}, {Key: "x", Value: "y"}}); err != nil {
					t.Fatalf("%s: insert: %v", configNames[cfg], err)
				}
				if _, err := coll.FindOne(ctx, ours.D{{Key: "_id", Value: id}}).Raw(); err != nil {
					t.Fatalf("%s: findOne: %v", configNames[cfg], err)
				}
			} else {
				coll := c.theirs[cfg].Database(crudDB).Collection(crudColl)
				if _, err := coll.InsertOne(ctx, theirs.D{{Key: "_id", Value: id}, {Key: "x", Value: "y"}}); err != nil {
					t.Fatalf("%s: insert: %v", configNames[cfg], err)
				}
				if _, err := coll.FindOne(ctx, theirs.D{{Key: "_id", Value: id}}).Raw(); err != nil {
					t.Fatalf("%s: findOne: %v", configNames[cfg], err)
				}
			}
		}
	}

	// telemetry off: a disabled tracer, and a logging sink that drops all.
	if c.offTracer.Enabled() {
		t.Error("telemetry off: the tracer is enabled")
	}
	if offLogs.Len() != 0 {
		t.Errorf("telemetry off: %d bytes of log messages:\n%s", offLogs.Len(), offLogs.String())
	}

	// all sinks on.
	if err := c.onSinks.tp.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	if isStub(c.onTel.Tracer()) {
		t.Logf("all sinks on: %T is a stub; spans not checked", c.onTel.Tracer())
	} else if got := len(onExp.GetSpans()); got < 2*n {
		t.Errorf("all sinks on: %d spans for %d inserts and %d finds", got, n, n)
	}
	if isStub(c.onTel.Metrics()) {
		t.Logf("all sinks on: %T is a stub; metrics not checked", c.onTel.Metrics())
	} else if got := histogramSamples(t, c.onSinks.reg, ""); got < 2*n {
		t.Errorf("all sinks on: %d histogram samples for %d inserts and %d finds", got, n, n)
	}

	// all on, one trace in ten sampled: metrics for every operation, spans
	// for fewer (each operation's two, when its trace is sampled).
	if err := c.sampSinks.tp.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := histogramSamples(t, c.sampSinks.reg, ""); got < 2*n {
		t.Errorf("1 in 10 sampled: %d histogram samples for %d inserts and %d finds", got, n, n)
	}
	if got := len(sampExp.GetSpans()); got > len(onExp.GetSpans()) || got%2 != 0 {
		t.Errorf("1 in 10 sampled: %d spans (all on: %d); want fewer, two per sampled operation", got, len(onExp.GetSpans()))
	}

	// the otelmongo stand-in.
	if err := c.peerSinks.tp.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	names := map[string]int{}
	for _, s := range peerExp.GetSpans() {
		names[s.Name]++
		if s.SpanKind != trace.SpanKindClient {
			t.Errorf("stand-in span %s: kind %v", s.Name, s.SpanKind)
		}
		attrs := map[attribute.Key]attribute.Value{}
		for _, a := range s.Attributes {
			attrs[a.Key] = a.Value
		}
		if attrs["db.system"].AsString() != "mongodb" || attrs["db.name"].AsString() == "" || attrs["db.operation"].AsString() == "" {
			t.Errorf("stand-in span %s: attributes %v", s.Name, s.Attributes)
		}
		if p := strconv.Itoa(int(attrs["net.peer.port"].AsInt64())); !strings.Contains(srv.URI(), ":"+p) {
			t.Errorf("stand-in span %s: net.peer.port %s, server %s", s.Name, p, srv.URI())
		}
	}
	if names[crudColl+".insert"] != n || names[crudColl+".find"] != n {
		t.Errorf("stand-in spans: %v; want %d %s.insert and %d %s.find", names, n, crudColl, n, crudColl)
	}
	if got := histogramSamples(t, c.peerSinks.reg, "db_client_operation_duration_seconds"); got < 2*n {
		t.Errorf("stand-in: %d histogram samples for %d inserts and %d finds", got, n, n)
	}
	c.peerTracer.mu.Lock()
	if len(c.peerTracer.spans) != 0 {
		t.Errorf("stand-in: %d spans never ended", len(c.peerTracer.spans))
	}
	c.peerTracer.mu.Unlock()

	// Each row's benchmark function, a few iterations per configuration.
	docs, ok, err := loadSpecDocs()
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Log("the benchmarking data set was not found (set MONGODB_SPECS_DIR): the rows' functions are not run")
		return
	}
	bt := flag.Lookup("test.benchtime")
	was := bt.Value.String()
	if err := bt.Value.Set("20x"); err != nil {
		t.Fatal(err)
	}
	defer bt.Value.Set(was)
	setup := c.env(ctx, cfgNone, docs)
	for _, row := range telemetryRows {
		if crudSeeded(row) {
			if err := setup.seed(); err != nil {
				t.Fatal(err)
			}
		}
		for cfg := 0; cfg < numConfigs; cfg++ {
			if r := testing.Benchmark(c.configTask(ctx, cfg, docs, row)); r.N == 0 {
				t.Errorf("%s, %s: the benchmark failed", row, configNames[cfg])
			}
		}
	}
}

// isStub reports whether m implements no monitor interface of driver/event.
func isStub(m any) bool { return len(ourevent.NewDispatcher(m).Unused()) > 0 }

// histogramSamples gathers reg and adds up the sample counts of its
// histograms (of the family named name, or of all when name is "").
func histogramSamples(t *testing.T, reg *prometheus.Registry, name string) uint64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, f := range fams {
		if name != "" && f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if h := m.GetHistogram(); h != nil {
				n += h.GetSampleCount()
			}
		}
	}
	return n
}

func TestPeerAddress(t *testing.T) {
	for _, c := range []struct {
		id   string
		host string
		port int
	}{
		{"localhost:27017[-3]", "localhost", 27017},
		{"127.0.0.1:40001[-12]", "127.0.0.1", 40001},
		{"[::1]:27018[-1]", "::1", 27018},
		{"db.example.com", "db.example.com", 27017},
	} {
		if h, p := peerAddress(c.id); h != c.host || p != c.port {
			t.Errorf("peerAddress(%q) = %q, %d; want %q, %d", c.id, h, p, c.host, c.port)
		}
	}
}
