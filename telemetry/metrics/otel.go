package metrics

import (
	"context"
	"time"

	"github.com/mongoscope/mongoscope/driver/event"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// scope is the instrumentation scope of the OpenTelemetry instruments.
const scope = "github.com/mongoscope/mongoscope/telemetry/metrics"

// otelInstruments are the OpenTelemetry instruments, named as the
// semantic conventions for database client metrics name them.
type otelInstruments struct {
	opDuration metric.Float64Histogram   // db.client.operation.duration
	connCount  metric.Int64UpDownCounter // db.client.connection.count
	idleMin    metric.Int64UpDownCounter // db.client.connection.idle.min
	connMax    metric.Int64UpDownCounter // db.client.connection.max
	pending    metric.Int64UpDownCounter // db.client.connection.pending_requests
	timeouts   metric.Int64Counter       // db.client.connection.timeouts
	createTime metric.Float64Histogram   // db.client.connection.create_time
	waitTime   metric.Float64Histogram   // db.client.connection.wait_time
	useTime    metric.Float64Histogram   // db.client.connection.use_time
}

// newOTel makes the instruments from mp; an instrument the provider
// refuses is left out (nil), never a panic.
func newOTel(mp metric.MeterProvider, buckets []float64) *otelInstruments {
	mt := mp.Meter(scope)
	hist := func(name, desc string) metric.Float64Histogram {
		h, err := mt.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc), metric.WithExplicitBucketBoundaries(buckets...))
		if err != nil {
			return nil
		}
		return h
	}
	updown := func(name, unit, desc string) metric.Int64UpDownCounter {
		c, err := mt.Int64UpDownCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		if err != nil {
			return nil
		}
		return c
	}
	o := &otelInstruments{
		opDuration: hist("db.client.operation.duration", "Duration of database client operations."),
		connCount:  updown("db.client.connection.count", "{connection}", "The number of connections that are currently in the state described by the state attribute."),
		idleMin:    updown("db.client.connection.idle.min", "{connection}", "The minimum number of idle open connections allowed."),
		connMax:    updown("db.client.connection.max", "{connection}", "The maximum number of open connections allowed."),
		pending:    updown("db.client.connection.pending_requests", "{request}", "The number of current pending requests for an open connection."),
		createTime: hist("db.client.connection.create_time", "The time it took to create a new connection."),
		waitTime:   hist("db.client.connection.wait_time", "The time it took to obtain an open connection from the pool."),
		useTime:    hist("db.client.connection.use_time", "The time between borrowing a connection and returning it to the pool."),
	}
	if c, err := mt.Int64Counter("db.client.connection.timeouts", metric.WithUnit("{timeout}"),
		metric.WithDescription("The number of connection timeouts that have occurred trying to obtain a connection from the pool.")); err == nil {
		o.timeouts = c
	}
	return o
}

var (
	attrSystem = attribute.String("db.system.name", "mongodb")
	attrIdle   = attribute.String("db.client.connection.state", "idle")
	attrUsed   = attribute.String("db.client.connection.state", "used")
)

func poolAttr(addr string) attribute.KeyValue {
	return attribute.String("db.client.connection.pool.name", addr)
}

// operation records db.client.operation.duration.
func (o *otelInstruments) operation(ctx context.Context, name string, n *ns, code string, failed bool, d time.Duration, err error) {
	if o.opDuration == nil {
		return
	}
	attrs := make([]attribute.KeyValue, 0, 6)
	attrs = append(attrs, attrSystem, attribute.String("db.operation.name", name))
	if n.db != "" {
		attrs = append(attrs, attribute.String("db.namespace", n.db))
	}
	if n.coll != "" {
		attrs = append(attrs, attribute.String("db.collection.name", n.coll))
	}
	if failed {
		attrs = append(attrs, attribute.String("error.type", code))
		if _, ok := event.ServerErrorCode(err); ok {
			attrs = append(attrs, attribute.String("db.response.status_code", code))
		}
	}
	o.opDuration.Record(otelCtx(ctx), d.Seconds(), metric.WithAttributes(attrs...))
}

// poolChanged adds the differences between two states of the pool at
// addr to the connection counts.
func (o *otelInstruments) poolChanged(ctx context.Context, addr string, before, after poolState) {
	ctx = otelCtx(ctx)
	pool := poolAttr(addr)
	add := func(c metric.Int64UpDownCounter, delta int, attrs ...attribute.KeyValue) {
		if c != nil && delta != 0 {
			c.Add(ctx, int64(delta), metric.WithAttributes(attrs...))
		}
	}
	add(o.connCount, after.idle-before.idle, pool, attrIdle)
	add(o.connCount, after.inUse-before.inUse, pool, attrUsed)
	add(o.pending, after.waiting-before.waiting, pool)
	add(o.idleMin, after.min-before.min, pool)
	add(o.connMax, after.max-before.max, pool)
}

func (o *otelInstruments) record(ctx context.Context, h metric.Float64Histogram, addr string, d time.Duration) {
	if h != nil {
		h.Record(otelCtx(ctx), d.Seconds(), metric.WithAttributes(poolAttr(addr)))
	}
}

func (o *otelInstruments) timeout(ctx context.Context, addr string) {
	if o.timeouts != nil {
		o.timeouts.Add(otelCtx(ctx), 1, metric.WithAttributes(poolAttr(addr)))
	}
}

func otelCtx(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}
