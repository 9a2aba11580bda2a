package main

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// peerTracer stands in for otelmongo
// (go.opentelemetry.io/contrib/instrumentation/go.mongodb.org/mongo-driver/v2/mongo/otelmongo),
// the OpenTelemetry instrumentation of the official driver, which this
// machine's Go module proxy does not serve (every version answers 403
// "This module version is not available"). It is our own code, written
// from otelmongo's documented behaviour, not a copy of it:
//
//   - an event.CommandMonitor for the official driver;
//   - on Started, one client span per command, named "<collection>.<command>"
//     (or "<command>" when the command names no collection), started from
//     the event's context, with the semantic-convention attributes otelmongo
//     sets: db.system, db.name, db.operation, db.mongodb.collection,
//     net.peer.name, net.peer.port (parsed from the driver's connection id),
//     net.transport; no statement (otelmongo can add the command as
//     db.statement; the telemetry rows leave ours's db.query.text off too);
//   - the span kept in a map keyed by connection id and request id under a
//     mutex, as otelmongo does, and ended on Succeeded, or on Failed with an
//     error status;
//   - one command duration histogram, as otelmongo for v2 records through
//     the OTel metric API; here a Prometheus histogram with the same labels'
//     kind (operation, collection, server address and port, error type),
//     so that the cost compares with our Prometheus sink.
type peerTracer struct {
	tracer trace.Tracer
	hist   *prometheus.HistogramVec

	mu    sync.Mutex
	spans map[peerSpanKey]*peerSpan
}

type peerSpanKey struct {
	conn string
	req  int64
}

// peerSpan is a started span with the labels its duration will need.
type peerSpan struct {
	span                  trace.Span
	op, coll, host, portS string
}

// dbDurationBuckets are OpenTelemetry's recommended bounds for database
// client durations, in seconds (those telemetry/metrics defaults to).
var dbDurationBuckets = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10}

// newPeerTracer makes the stand-in's tracer from tp and registers its
// histogram on reg.
func newPeerTracer(tp trace.TracerProvider, reg prometheus.Registerer) (*peerTracer, error) {
	hist := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "db_client_operation_duration_seconds",
		Help:    "Duration of MongoDB commands sent by the official driver (the otelmongo stand-in).",
		Buckets: dbDurationBuckets,
	}, []string{"db_operation_name", "db_collection_name", "server_address", "server_port", "error_type"})
	if err := reg.Register(hist); err != nil {
		return nil, err
	}
	return &peerTracer{
		tracer: tp.Tracer("mongoscope/bench/otelmongo-stand-in"),
		hist:   hist,
		spans:  map[peerSpanKey]*peerSpan{},
	}, nil
}

// monitor returns the official driver's command monitor.
func (p *peerTracer) monitor() *event.CommandMonitor {
	return &event.CommandMonitor{Started: p.started, Succeeded: p.succeeded, Failed: p.failed}
}

func (p *peerTracer) started(ctx context.Context, e *event.CommandStartedEvent) {
	host, port := peerAddress(e.ConnectionID)
	coll := commandCollection(e.Command)
	attrs := make([]attribute.KeyValue, 0, 7)
	attrs = append(attrs,
		attribute.String("db.system", "mongodb"),
		attribute.String("db.name", e.DatabaseName),
		attribute.String("db.operation", e.CommandName),
		attribute.String("net.peer.name", host),
		attribute.Int("net.peer.port", port),
		attribute.String("net.transport", "ip_tcp"),
	)
	name := e.CommandName
	if coll != "" {
		name = coll + "." + name
		attrs = append(attrs, attribute.String("db.mongodb.collection", coll))
	}
	_, span := p.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	ps := &peerSpan{span: span, op: e.CommandName, coll: coll, host: host, portS: strconv.Itoa(port)}
	p.mu.Lock()
	p.spans[peerSpanKey{e.ConnectionID, e.RequestID}] = ps
	p.mu.Unlock()
}

// finish removes the command's span from the map, records its duration
// and returns it (nil if Started was not seen).
func (p *peerTracer) finish(e *event.CommandFinishedEvent, errType string) *peerSpan {
	k := peerSpanKey{e.ConnectionID, e.RequestID}
	p.mu.Lock()
	ps, ok := p.spans[k]
	if ok {
		delete(p.spans, k)
	}
	p.mu.Unlock()
	if !ok {
		return nil
	}
	p.hist.WithLabelValues(ps.op, ps.coll, ps.host, ps.portS, errType).Observe(e.Duration.Seconds())
	return ps
}

func (p *peerTracer) succeeded(_ context.Context, e *event.CommandSucceededEvent) {
	if ps := p.finish(&e.CommandFinishedEvent, ""); ps != nil {
		ps.span.End()
	}
}

func (p *peerTracer) failed(_ context.Context, e *event.CommandFailedEvent) {
	if ps := p.finish(&e.CommandFinishedEvent, "error"); ps != nil {
		ps.span.SetStatus(codes.Error, e.Failure.Error())
		ps.span.End()
	}
}

// peerAddress parses the official driver's connection id,
// "host:port[-n]", into the peer's host and port (27017 when absent).
func peerAddress(id string) (string, int) {
	if i := strings.LastIndex(id, "[-"); i >= 0 {
		id = id[:i]
	}
	host, portS, err := net.SplitHostPort(id)
	if err != nil {
		return id, 27017
	}
	port, err := strconv.Atoi(portS)
	if err != nil {
		return host, 27017
	}
	return host, port
}

// commandCollection is the collection a command names: its first
// element's value when that is a string (find, insert, update, delete,
// aggregate, ...), else "".
func commandCollection(cmd bson.Raw) string {
	el, err := cmd.IndexErr(0)
	if err != nil {
		return ""
	}
	s, ok := el.Value().StringValueOK()
	if !ok {
		return ""
	}
	return s
}
