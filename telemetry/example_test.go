package telemetry_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/internal/oteltest"
	"github.com/mongoscope/mongoscope/mongotest"
	"github.com/mongoscope/mongoscope/telemetry"
	"github.com/prometheus/client_golang/prometheus"
)

// One call turns on logs, spans and metrics for a client. A real program
// passes its own TracerProvider (with an exporter) or sets the global one,
// serves the registry on /metrics, and logs to its own handler; here spans
// go to an in-memory test provider (in a program: the OTel SDK's
// TracerProvider with an exporter) and the registry is printed.
func Example() {
	srv, err := mongotest.Start(mongotest.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	spans := oteltest.NewSpanRecorder()
	tp := oteltest.NewTracerProvider(spans)
	reg := prometheus.NewRegistry()
	tel, err := telemetry.New(telemetry.Options{
		Logger:         slog.New(slog.NewJSONHandler(io.Discard, nil)),
		TracerProvider: tp,
		Registerer:     reg,
	})
	if err != nil {
		panic(err)
	}
	opts := &driver.ClientOptions{}
	if err := opts.ApplyURI(srv.URI()); err != nil {
		panic(err)
	}
	tel.Apply(opts)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, err := driver.Connect(ctx, opts)
	if err != nil {
		panic(err)
	}
	orders := client.Database("shop").Collection("orders")
	if _, err := orders.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "total", Value: 42}}); err != nil {
		panic(err)
	}
	var doc bson.D
	if err := orders.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Decode(&doc); err != nil {
		panic(err)
	}
	if err := orders.FindOne(ctx, bson.D{{Key: "_id", Value: 2}}).Err(); err != driver.ErrNoDocuments {
		panic(err)
	}
	if err := client.Disconnect(ctx); err != nil {
		panic(err)
	}

	// The spans: one per operation, with one child per command sent
	// (Disconnect ends the client's sessions with endSessions).
	children := map[string][]string{}
	var roots []string
	for _, s := range spans.Ended() {
		if s.Parent().IsValid() {
			children[s.Parent().SpanID().String()] = append(children[s.Parent().SpanID().String()], s.Name())
		}
	}
	for _, s := range spans.Ended() {
		if !s.Parent().IsValid() {
			roots = append(roots, fmt.Sprintf("%s (%s) -> %s", s.Name(), s.SpanKind(), strings.Join(children[s.SpanContext().SpanID().String()], ", ")))
		}
	}
	for _, r := range roots {
		fmt.Println("span:", r)
	}

	// The operation counts from the duration histogram.
	mfs, err := reg.Gather()
	if err != nil {
		panic(err)
	}
	var lines []string
	for _, mf := range mfs {
		if mf.GetName() != "mongodb_driver_operation_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			lines = append(lines, fmt.Sprintf("%s_count{%s} %d", mf.GetName(), strings.Join(ls, ","), m.GetHistogram().GetSampleCount()))
		}
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// span: insert shop.orders (client) -> insert
	// span: find shop.orders (client) -> find
	// span: find shop.orders (client) -> find
	// span: endSessions admin (client) -> endSessions
	// mongodb_driver_operation_duration_seconds_count{collection="",database="admin",error_code="",operation="endSessions",outcome="success"} 1
	// mongodb_driver_operation_duration_seconds_count{collection="orders",database="shop",error_code="",operation="find",outcome="success"} 2
	// mongodb_driver_operation_duration_seconds_count{collection="orders",database="shop",error_code="",operation="insert",outcome="success"} 1
}
