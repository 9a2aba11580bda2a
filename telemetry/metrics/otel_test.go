package metrics_test

import (
	"context"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/mongotest"
	"github.com/mongoscope/mongoscope/telemetry/metrics"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// otelRec records what the fake OpenTelemetry instruments receive: per
// instrument and attribute set, the count of measurements and their sum.
type otelRec struct {
	mu    sync.Mutex
	count map[string]int
	sum   map[string]float64
}

func newOtelRec() *otelRec { return &otelRec{count: map[string]int{}, sum: map[string]float64{}} }

func (r *otelRec) add(name string, attrs attribute.Set, v float64) {
	var kv []string
	for _, a := range attrs.ToSlice() {
		kv = append(kv, string(a.Key)+"="+a.Value.Emit())
	}
	sort.Strings(kv)
	k := name + "{" + strings.Join(kv, ",") + "}"
	r.mu.Lock()
	r.count[k]++
	r.sum[k] += v
	r.mu.Unlock()
}

// find sums over the series of name whose attributes include every one
// of want ("key=value"): the number of measurements and their sum.
func (r *otelRec) find(name string, want ...string) (n int, sum float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, c := range r.count {
		if !strings.HasPrefix(k, name+"{") {
			continue
		}
		ok := true
		for _, w := range want {
			if !strings.Contains(k, w) {
				ok = false
			}
		}
		if ok {
			n += c
			sum += r.sum[k]
		}
	}
	return n, sum
}

type fakeProvider struct {
	noop.MeterProvider
	rec *otelRec
}

func (p fakeProvider) Meter(string, ...metric.MeterOption) metric.Meter { return fakeMeter{rec: p.rec} }

type fakeMeter struct {
	noop.Meter
	rec *otelRec
}

func (m fakeMeter) Float64Histogram(name string, _ ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	return fakeHist{name: name, rec: m.rec}, nil
}

func (m fakeMeter) Int64UpDownCounter(name string, _ ...metric.Int64UpDownCounterOption) (metric.Int64UpDownCounter, error) {
	return fakeUpDown{name: name, rec: m.rec}, nil
}

func (m fakeMeter) Int64Counter(name string, _ ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	return fakeCounter{name: name, rec: m.rec}, nil
}

type fakeHist struct {
	noop.Float64Histogram
	name string
	rec  *otelRec
}

func (h fakeHist) Record(_ context.Context, v float64, opts ...metric.RecordOption) {
	h.rec.add(h.name, metric.NewRecordConfig(opts).Attributes(), v)
}

type fakeUpDown struct {
	noop.Int64UpDownCounter
	name string
	rec  *otelRec
}

func (c fakeUpDown) Add(_ context.Context, v int64, opts ...metric.AddOption) {
	c.rec.add(c.name, metric.NewAddConfig(opts).Attributes(), float64(v))
}

type fakeCounter struct {
	noop.Int64Counter
	name string
	rec  *otelRec
}

func (c fakeCounter) Add(_ context.Context, v int64, opts ...metric.AddOption) {
	c.rec.add(c.name, metric.NewAddConfig(opts).Attributes(), float64(v))
}

// TestOpenTelemetryMetrics: with a MeterProvider, operations and pools
// are also measured under the semantic conventions' names and attributes.
func TestOpenTelemetryMetrics(t *testing.T) {
	rec := newOtelRec()
	e := setup(t, metrics.Options{MeterProvider: fakeProvider{rec: rec}}, mongotest.Options{}, "", "?maxPoolSize=5&minPoolSize=1")
	ctx := testCtx(t)
	coll := e.client.Database("db").Collection("coll")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	e.failPoint(t, 1, bson.D{{Key: "failCommands", Value: bson.A{"find"}}, {Key: "errorCode", Value: 2}})
	if err := coll.FindOne(ctx, bson.D{}).Err(); err == nil {
		t.Fatal("want the fail point's error")
	}
	pool := "db.client.connection.pool.name=" + e.srv.Addr()
	if n, _ := rec.find("db.client.operation.duration", "db.operation.name=insert", "db.namespace=db", "db.collection.name=coll", "db.system.name=mongodb"); n != 1 {
		t.Errorf("insert durations: %d", n)
	}
	if n, _ := rec.find("db.client.operation.duration", "db.operation.name=find", "error.type=2", "db.response.status_code=2"); n != 1 {
		t.Errorf("failed find durations: %d", n)
	}
	for _, name := range []string{"db.client.connection.wait_time", "db.client.connection.use_time", "db.client.connection.create_time"} {
		if n, _ := rec.find(name, pool); n == 0 {
			t.Errorf("%s: nothing recorded", name)
		}
	}
	if _, v := rec.find("db.client.connection.max", pool); v != 5 {
		t.Errorf("max %v", v)
	}
	if _, v := rec.find("db.client.connection.idle.min", pool); v != 1 {
		t.Errorf("idle.min %v", v)
	}
	if _, v := rec.find("db.client.connection.count", pool, "state=used"); v != 0 {
		t.Errorf("used %v after the operations", v)
	}
	if _, v := rec.find("db.client.connection.count", pool, "state=idle"); v < 1 {
		t.Errorf("idle %v after the operations", v)
	}
	if _, v := rec.find("db.client.connection.pending_requests", pool); v != 0 {
		t.Errorf("pending requests %v", v)
	}

	// A checkout timeout, and a pool that closes: its counts go to 0.
	m := metrics.New(metrics.Options{MeterProvider: fakeProvider{rec: rec}})
	bg := context.Background()
	m.PoolEvent(bg, &event.PoolCreated{Address: "x:1", Options: event.PoolOptions{MaxPoolSize: 3}})
	m.PoolEvent(bg, &event.ConnectionCreated{Address: "x:1", ConnectionID: 1})
	m.PoolEvent(bg, &event.ConnectionReady{Address: "x:1", ConnectionID: 1})
	m.PoolEvent(bg, &event.ConnectionCheckOutFailed{Address: "x:1", Reason: event.ReasonCheckOutTimeout})
	if n, _ := rec.find("db.client.connection.timeouts", "pool.name=x:1"); n != 1 {
		t.Errorf("timeouts %d", n)
	}
	if _, v := rec.find("db.client.connection.count", "pool.name=x:1", "state=idle"); v != 1 {
		t.Errorf("idle %v", v)
	}
	m.PoolEvent(bg, &event.PoolClosed{Address: "x:1"})
	for _, name := range []string{"db.client.connection.count", "db.client.connection.max"} {
		if _, v := rec.find(name, "pool.name=x:1"); v != 0 {
			t.Errorf("%s = %v after the pool closed", name, v)
		}
	}
}
