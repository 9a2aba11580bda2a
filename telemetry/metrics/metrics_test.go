package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
	"github.com/mongoscope/mongoscope/telemetry/metrics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"go.opentelemetry.io/otel/trace"
)

// allFamilies are the metric families the package documents.
var allFamilies = []string{
	"mongodb_driver_operation_duration_seconds",
	"mongodb_driver_command_duration_seconds",
	"mongodb_driver_operation_retries_total",
	"mongodb_driver_operation_timeouts_total",
	"mongodb_driver_pool_connections",
	"mongodb_driver_pool_min_connections",
	"mongodb_driver_pool_max_connections",
	"mongodb_driver_pool_pending_checkouts",
	"mongodb_driver_pool_checkout_duration_seconds",
	"mongodb_driver_pool_checkout_failures_total",
	"mongodb_driver_pool_clears_total",
	"mongodb_driver_connection_create_duration_seconds",
	"mongodb_driver_connection_use_duration_seconds",
	"mongodb_driver_connections_closed_total",
	"mongodb_driver_server_selection_duration_seconds",
	"mongodb_driver_server_heartbeat_duration_seconds",
	"mongodb_driver_server_rtt_seconds",
	"mongodb_driver_server_type",
	"mongodb_driver_topology_changes_total",
}

// allowedLabels are the only label names a series may have.
var allowedLabels = map[string]bool{
	"operation": true, "database": true, "collection": true, "outcome": true, "error_code": true,
	"command": true, "server": true, "stage": true, "reason": true, "state": true, "awaited": true, "type": true,
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

type env struct {
	srv    *mongotest.Server
	m      *metrics.Metrics
	reg    *prometheus.Registry
	client *driver.Client
}

// setup starts a server, a Metrics registered on a new registry and a
// client (query is appended to the URI) that sends its events there.
func setup(t *testing.T, o metrics.Options, srvOpts mongotest.Options, userinfo, query string) *env {
	t.Helper()
	srv := mongotest.NewServer(t, srvOpts)
	m := metrics.New(o)
	reg := prometheus.NewRegistry()
	if err := reg.Register(m); err != nil {
		t.Fatal(err)
	}
	opts := &driver.ClientOptions{Monitors: []any{m}}
	if err := opts.ApplyURI("mongodb://" + userinfo + srv.Addr() + "/" + query); err != nil {
		t.Fatal(err)
	}
	c, err := driver.Connect(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Disconnect(context.Background()) })
	return &env{srv: srv, m: m, reg: reg, client: c}
}

func (e *env) failPoint(t *testing.T, times int, data bson.D) {
	t.Helper()
	if err := e.srv.SetFailPoint(bson.D{{Key: "configureFailPoint", Value: "failCommand"},
		{Key: "mode", Value: bson.D{{Key: "times", Value: times}}}, {Key: "data", Value: data}}); err != nil {
		t.Fatal(err)
	}
}

func gather(t *testing.T, reg *prometheus.Registry) map[string]*dto.MetricFamily {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]*dto.MetricFamily, len(fams))
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

// matches reports whether m has every label of want (name=value).
func matches(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok {
			if v != l.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(want)
}

// value sums, over the series of family name that match labels, the
// counter or gauge values, or the histograms' sample counts.
func value(fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return 0
	}
	sum := 0.0
	for _, m := range f.GetMetric() {
		if !matches(m, labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Histogram != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return sum
}

type L = map[string]string

// waitFor polls the registry until cond holds.
func waitFor(t *testing.T, reg *prometheus.Registry, what string, cond func(map[string]*dto.MetricFamily) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if cond(gather(t, reg)) {
			return
		}
		if time.Now().After(deadline) {
			f := gather(t, reg)
			for _, n := range []string{"mongodb_driver_server_type", "mongodb_driver_pool_clears_total", "mongodb_driver_connections_closed_total", "mongodb_driver_operation_duration_seconds"} {
				for _, m := range f[n].GetMetric() {
					t.Logf("%s %v", n, m)
				}
			}
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// workload runs successes, a failure, a retry, a timeout, a closed
// connection, a pool clear and a failed checkout, checking after each
// step that the metrics it should move moved.
func workload(t *testing.T, e *env) {
	ctx := testCtx(t)
	coll := e.client.Database("db").Collection("coll")
	addr := e.srv.Addr()
	delta := func(step string, run func(), checks ...check) {
		t.Helper()
		before := gather(t, e.reg)
		run()
		after := gather(t, e.reg)
		for _, c := range checks {
			got := value(after, c.name, c.labels) - value(before, c.name, c.labels)
			if c.min > 0 && got < c.min || c.min == 0 && got != c.exact {
				t.Errorf("%s: %s%v moved by %v, want %v", step, c.name, c.labels, got, c)
			}
		}
	}

	delta("insert", func() {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "secret", Value: "document-value-xyzzy"}}); err != nil {
			t.Fatal(err)
		}
	},
		exactly(1, "mongodb_driver_operation_duration_seconds", L{"operation": "insert", "database": "db", "collection": "coll", "outcome": "success", "error_code": ""}),
		exactly(1, "mongodb_driver_command_duration_seconds", L{"command": "insert", "database": "db", "collection": "coll", "server": addr, "outcome": "success", "error_code": ""}),
		exactly(1, "mongodb_driver_server_selection_duration_seconds", L{"outcome": "success"}),
		exactly(1, "mongodb_driver_pool_checkout_duration_seconds", L{"server": addr, "outcome": "success"}),
		exactly(1, "mongodb_driver_connection_use_duration_seconds", L{"server": addr}),
	)
	delta("find", func() {
		if err := coll.FindOne(ctx, bson.D{{Key: "secret", Value: "document-value-xyzzy"}}).Err(); err != nil {
			t.Fatal(err)
		}
	},
		exactly(1, "mongodb_driver_operation_duration_seconds", L{"operation": "find", "collection": "coll", "outcome": "success"}),
		exactly(1, "mongodb_driver_command_duration_seconds", L{"command": "find", "collection": "coll", "outcome": "success"}),
		exactly(0, "mongodb_driver_operation_retries_total", L{}),
	)
	delta("server error", func() {
		e.failPoint(t, 1, bson.D{{Key: "failCommands", Value: bson.A{"find"}}, {Key: "errorCode", Value: 2}})
		if err := coll.FindOne(ctx, bson.D{}).Err(); err == nil {
			t.Fatal("want the fail point's error")
		}
	},
		exactly(1, "mongodb_driver_operation_duration_seconds", L{"operation": "find", "outcome": "failure", "error_code": "2"}),
		exactly(1, "mongodb_driver_command_duration_seconds", L{"command": "find", "collection": "coll", "outcome": "failure", "error_code": "2"}),
		exactly(0, "mongodb_driver_operation_retries_total", L{}),
	)
	delta("retry", func() {
		e.failPoint(t, 1, bson.D{{Key: "failCommands", Value: bson.A{"find"}}, {Key: "errorCode", Value: 7}})
		if err := coll.FindOne(ctx, bson.D{}).Err(); err != nil {
			t.Fatal(err)
		}
	},
		exactly(1, "mongodb_driver_operation_retries_total", L{"operation": "find", "error_code": "7"}),
		exactly(1, "mongodb_driver_operation_duration_seconds", L{"operation": "find", "outcome": "success"}),
		exactly(1, "mongodb_driver_command_duration_seconds", L{"command": "find", "outcome": "failure", "error_code": "7"}),
		exactly(1, "mongodb_driver_command_duration_seconds", L{"command": "find", "outcome": "success"}),
		exactly(2, "mongodb_driver_server_selection_duration_seconds", L{"outcome": "success"}),
	)
	delta("timeout", func() {
		e.failPoint(t, 1, bson.D{{Key: "failCommands", Value: bson.A{"find"}}, {Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: 300}})
		err := coll.FindOne(driver.WithTimeout(ctx, 50*time.Millisecond), bson.D{}).Err()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want a timeout", err)
		}
		// A timed-out connection is closed: a timeout does not clear the
		// pool (CSOT), but the connection goes.
		waitFor(t, e.reg, "the timed-out connection's close", func(f map[string]*dto.MetricFamily) bool {
			return value(f, "mongodb_driver_connections_closed_total", L{"reason": "error"}) >= 1
		})
	},
		exactly(1, "mongodb_driver_operation_timeouts_total", L{"operation": "find", "stage": "network"}),
		exactly(1, "mongodb_driver_operation_duration_seconds", L{"operation": "find", "outcome": "failure", "error_code": "timeout"}),
		atLeast(1, "mongodb_driver_connections_closed_total", L{"server": addr, "reason": "error"}),
	)
	delta("pool clear", func() {
		e.failPoint(t, 1, bson.D{{Key: "failCommands", Value: bson.A{"insert"}}, {Key: "closeConnection", Value: true}})
		// A network error on a retryable write clears the pool; the
		// retry on a standalone (no retryable writes) is not made.
		coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}})
		if v := value(gather(t, e.reg), "mongodb_driver_server_type", L{"server": addr, "type": "Unknown"}); v != 1 {
			t.Errorf("server type Unknown = %v after the network error, want 1", v)
		}
		// The next operation's selection waits for the server to be
		// checked again.
		if err := coll.FindOne(ctx, bson.D{}).Err(); err != nil {
			t.Fatal(err)
		}
	},
		exactly(1, "mongodb_driver_pool_clears_total", L{"server": addr}),
		atLeast(1, "mongodb_driver_operation_duration_seconds", L{"operation": "insert", "outcome": "failure", "error_code": "network"}),
		atLeast(1, "mongodb_driver_connections_closed_total", L{"server": addr}),
		atLeast(1, "mongodb_driver_topology_changes_total", L{}),
	)

	// maxPoolSize=1: while an insert holds the only connection, a find
	// waits (pending checkouts 1, in use 1), then times out in checkout.
	delta("checkout timeout", func() {
		e.failPoint(t, 1, bson.D{{Key: "failCommands", Value: bson.A{"insert"}}, {Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: 400}})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 3}})
		}()
		waitFor(t, e.reg, "the blocked insert", func(f map[string]*dto.MetricFamily) bool {
			return value(f, "mongodb_driver_pool_connections", L{"server": addr, "state": "in_use"}) == 1
		})
		done := make(chan error, 1)
		go func() { done <- coll.FindOne(driver.WithTimeout(ctx, 150*time.Millisecond), bson.D{}).Err() }()
		waitFor(t, e.reg, "the waiting find", func(f map[string]*dto.MetricFamily) bool {
			return value(f, "mongodb_driver_pool_pending_checkouts", L{"server": addr}) == 1
		})
		if err := <-done; !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("find: got %v, want a timeout", err)
		}
		wg.Wait()
		f := gather(t, e.reg)
		if v := value(f, "mongodb_driver_pool_pending_checkouts", L{"server": addr}); v != 0 {
			t.Errorf("pending checkouts %v after the wait, want 0", v)
		}
		if v := value(f, "mongodb_driver_pool_connections", L{"server": addr, "state": "in_use"}); v != 0 {
			t.Errorf("in use %v after the insert, want 0", v)
		}
		if v := value(f, "mongodb_driver_pool_connections", L{"server": addr, "state": "idle"}); v != 1 {
			t.Errorf("idle %v after the insert, want 1", v)
		}
	},
		exactly(1, "mongodb_driver_pool_checkout_failures_total", L{"server": addr, "reason": "timeout"}),
		exactly(1, "mongodb_driver_pool_checkout_duration_seconds", L{"server": addr, "outcome": "failure"}),
		exactly(1, "mongodb_driver_operation_timeouts_total", L{"operation": "find", "stage": "checkout"}),
	)
}

type check struct {
	name   string
	labels map[string]string
	exact  float64
	min    float64
}

func (c check) String() string {
	if c.min > 0 {
		return fmt.Sprintf("at least %v", c.min)
	}
	return fmt.Sprint(c.exact)
}

func exactly(n float64, name string, labels map[string]string) check {
	return check{name: name, labels: labels, exact: n}
}

func atLeast(n float64, name string, labels map[string]string) check {
	return check{name: name, labels: labels, min: n}
}

// TestEveryMetric runs a workload with successes, failures, a retry,
// timeouts, a pool clear, closed connections and a failed checkout against
// an authenticated server, checks that each step moved what it should
// (workload), that every documented family is then exposed with only the
// documented label names, and that no label value holds the URI, the
// credentials, a document's value or a connection id.
func TestEveryMetric(t *testing.T) {
	const user, pass = "metricsuser", "s3cr3t-pa55word"
	e := setup(t, metrics.Options{}, mongotest.Options{Auth: true}, user+":"+pass+"@", "?maxPoolSize=1&minPoolSize=0&authSource=admin")
	if err := e.srv.AddUser("admin", user, pass); err != nil {
		t.Fatal(err)
	}
	workload(t, e)
	// A user management command names the user where other commands
	// name a collection.
	if err := e.client.Database("admin").RunCommand(testCtx(t), bson.D{{Key: "usersInfo", Value: user}}).Err(); err != nil {
		t.Fatal(err)
	}

	fams := gather(t, e.reg)
	for _, name := range allFamilies {
		if f := fams[name]; f == nil || len(f.GetMetric()) == 0 {
			t.Errorf("%s is missing", name)
		}
	}
	addr := e.srv.Addr()
	for _, c := range []check{
		exactly(1, "mongodb_driver_pool_max_connections", L{"server": addr}),
		exactly(0, "mongodb_driver_pool_min_connections", L{"server": addr}),
		exactly(1, "mongodb_driver_server_type", L{"server": addr, "type": "Standalone"}),
		exactly(1, "mongodb_driver_server_type", L{"server": addr}), // one type at a time
		atLeast(1, "mongodb_driver_connection_create_duration_seconds", L{"server": addr}),
		atLeast(1, "mongodb_driver_server_heartbeat_duration_seconds", L{"server": addr, "outcome": "success"}),
	} {
		got := value(fams, c.name, c.labels)
		if c.min > 0 && got < c.min || c.min == 0 && got != c.exact {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c)
		}
	}
	if v := value(fams, "mongodb_driver_server_rtt_seconds", L{"server": addr}); v <= 0 || v > 5 {
		t.Errorf("rtt %v", v)
	}

	// Prometheus's naming conventions (units, _total, help texts).
	problems, err := testutil.GatherAndLint(e.reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}

	forbidden := []string{pass, user, "mongodb://", "@", "xyzzy", "document-value"}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if !allowedLabels[l.GetName()] {
					t.Errorf("%s has label %s", name, l.GetName())
				}
				for _, bad := range forbidden {
					if strings.Contains(l.GetValue(), bad) {
						t.Errorf("%s{%s=%q} holds %q", name, l.GetName(), l.GetValue(), bad)
					}
				}
				// Only error codes are numbers; a connection id would be one.
				if l.GetName() != "error_code" && l.GetValue() != "" && strings.Trim(l.GetValue(), "0123456789") == "" {
					t.Errorf("%s{%s=%q} is a number", name, l.GetName(), l.GetValue())
				}
			}
		}
	}
}

// TestCardinalityBounded: operations on 1,000 collections leave at most
// MaxNamespaces distinct (database, collection) pairs in the labels, plus
// "_other".
func TestCardinalityBounded(t *testing.T) {
	const capNS = 50
	e := setup(t, metrics.Options{MaxNamespaces: capNS}, mongotest.Options{}, "", "")
	ctx := testCtx(t)
	db := e.client.Database("many")
	for i := 0; i < 1000; i++ {
		if _, err := db.Collection(fmt.Sprintf("c%04d", i)).InsertOne(ctx, bson.D{{Key: "i", Value: i}}); err != nil {
			t.Fatal(err)
		}
	}
	fams := gather(t, e.reg)
	for _, name := range []string{"mongodb_driver_operation_duration_seconds", "mongodb_driver_command_duration_seconds"} {
		f := fams[name]
		pairs := map[string]bool{}
		for _, m := range f.GetMetric() {
			var db, coll string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "database":
					db = l.GetValue()
				case "collection":
					coll = l.GetValue()
				}
			}
			pairs[db+"."+coll] = true
		}
		if len(f.GetMetric()) > capNS+5 || len(pairs) > capNS+1 {
			keys := make([]string, 0, len(pairs))
			for k := range pairs {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			t.Errorf("%s: %d series, %d namespaces (cap %d): %v", name, len(f.GetMetric()), len(pairs), capNS, keys)
		}
		if !pairs[metrics.Other+"."+metrics.Other] {
			t.Errorf("%s: no _other namespace", name)
		}
	}
	if v := value(fams, "mongodb_driver_operation_duration_seconds", L{"operation": "insert", "database": "_other"}); v < 1000-capNS {
		t.Errorf("_other counted %v inserts, want at least %d", v, 1000-capNS)
	}
}

// TestExemplars: histograms take the trace id of a sampled span in the
// operation's context as an exemplar; an unsampled span gives none; a
// second operation within ExemplarInterval does not replace the first's
// exemplars; a negative ExemplarInterval gives none.
func TestExemplars(t *testing.T) {
	e := setup(t, metrics.Options{ExemplarInterval: time.Hour}, mongotest.Options{}, "", "")
	coll := e.client.Database("db").Collection("coll")
	tid := trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8}})
	ctx := testCtx(t)

	// Unsampled first: no exemplar.
	if _, err := coll.InsertOne(trace.ContextWithSpanContext(ctx, sc), bson.D{}); err != nil {
		t.Fatal(err)
	}
	if n := exemplars(gather(t, e.reg), "mongodb_driver_operation_duration_seconds", tid.String()); n != 0 {
		t.Fatalf("%d exemplars from an unsampled span", n)
	}
	sctx := trace.ContextWithSpanContext(ctx, sc.WithTraceFlags(trace.FlagsSampled))
	if err := coll.FindOne(sctx, bson.D{}).Err(); err != nil {
		t.Fatal(err)
	}
	histograms := []string{
		"mongodb_driver_operation_duration_seconds",
		"mongodb_driver_command_duration_seconds",
		"mongodb_driver_server_selection_duration_seconds",
		"mongodb_driver_pool_checkout_duration_seconds",
	}
	fams := gather(t, e.reg)
	for _, name := range histograms {
		if n := exemplars(fams, name, tid.String()); n == 0 {
			t.Errorf("%s: no exemplar with the trace id", name)
		}
	}

	// A second sampled trace within the interval: the exemplars stay.
	tid2 := trace.TraceID{2, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	sc2 := sc.WithTraceID(tid2).WithTraceFlags(trace.FlagsSampled)
	for i := 0; i < 3; i++ {
		if err := coll.FindOne(trace.ContextWithSpanContext(ctx, sc2), bson.D{}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	fams = gather(t, e.reg)
	for _, name := range histograms {
		if n := exemplars(fams, name, tid.String()); n == 0 {
			t.Errorf("%s: the first trace's exemplar was replaced within the interval", name)
		}
	}
	// ExemplarInterval < 0: no exemplars.
	off := setup(t, metrics.Options{ExemplarInterval: -1}, mongotest.Options{}, "", "")
	if err := off.client.Database("db").Collection("coll").FindOne(sctx, bson.D{}).Err(); err != nil && !errors.Is(err, driver.ErrNoDocuments) {
		t.Fatal(err)
	}
	fams = gather(t, off.reg)
	for _, name := range histograms {
		if n := exemplars(fams, name, tid.String()); n != 0 {
			t.Errorf("%s: %d exemplars with ExemplarInterval < 0", name, n)
		}
	}
}

// exemplars counts the buckets of family name whose exemplar has
// trace_id=tid.
func exemplars(fams map[string]*dto.MetricFamily, name, tid string) int {
	n := 0
	for _, m := range fams[name].GetMetric() {
		for _, b := range m.GetHistogram().GetBucket() {
			for _, l := range b.GetExemplar().GetLabel() {
				if l.GetName() == "trace_id" && l.GetValue() == tid {
					n++
				}
			}
		}
	}
	return n
}
