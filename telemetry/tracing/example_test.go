package tracing_test

import (
	"context"
	"fmt"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/internal/oteltest"
	"github.com/mongoscope/mongoscope/mongotest"
	"github.com/mongoscope/mongoscope/telemetry/tracing"
)

// A Tracer is a monitor like any other. Here it records into an in-memory
// test provider; a program gives it its own TracerProvider (the OTel SDK's,
// with an exporter), or none to use the global one.
func ExampleNew() {
	s, err := mongotest.Start(mongotest.Options{})
	if err != nil {
		panic(err)
	}
	defer s.Close()

	rec := oteltest.NewSpanRecorder()
	on := true
	t := tracing.New(tracing.Options{
		TracerProvider: oteltest.NewTracerProvider(rec),
		Enabled:        &on, // or OTEL_GO_INSTRUMENTATION_MONGODB_ENABLED=true
	})

	ctx := context.Background()
	opts := &driver.ClientOptions{Monitors: []any{t}}
	if err := opts.ApplyURI(s.URI()); err != nil {
		panic(err)
	}
	client, err := driver.Connect(ctx, opts)
	if err != nil {
		panic(err)
	}
	defer client.Disconnect(ctx)

	orders := client.Database("shop").Collection("orders")
	if _, err := orders.InsertMany(ctx, []any{bson.D{{Key: "item", Value: "tea"}}}); err != nil {
		panic(err)
	}
	for _, sp := range rec.Ended() {
		fmt.Println(sp.Name())
	}
	// Output:
	// insert
	// insert shop.orders
}
