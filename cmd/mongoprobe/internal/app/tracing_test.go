package app

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

func TestTracerProviderOff(t *testing.T) {
	tp, err := newTracerProvider(context.Background(), noEnv)
	if err != nil || tp != nil {
		t.Errorf("without OTEL_EXPORTER_OTLP_ENDPOINT: %v %v", tp, err)
	}
}

// TestTracerProvider exports a span made by hand to a stand-in collector,
// without the probe engine.
func TestTracerProvider(t *testing.T) {
	var posts atomic.Int64
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == "POST" && req.URL.Path == "/v1/traces" {
			posts.Add(1)
		}
		io.Copy(io.Discard, req.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()
	for _, tc := range []struct{ serviceEnv, want string }{{"", "mongoprobe"}, {"probe-eu", "probe-eu"}} {
		env := map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": collector.URL + "/v1/traces", "OTEL_SERVICE_NAME": tc.serviceEnv}
		for k, v := range env {
			t.Setenv(k, v)
		}
		ctx := context.Background()
		tp, err := newTracerProvider(ctx, func(k string) string { return env[k] })
		if err != nil || tp == nil {
			t.Fatalf("newTracerProvider: %v", err)
		}
		_, span := tp.Tracer("test").Start(ctx, "round")
		span.End()
		before := posts.Load()
		if err := tp.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		if posts.Load() == before {
			t.Errorf("the collector received no POST /v1/traces")
		}
		// The resource, through a second provider's span.
		tp2, _ := newTracerProvider(ctx, func(k string) string { return env[k] })
		_, s2 := tp2.Tracer("test").Start(ctx, "x")
		s2.End()
		tp2.Shutdown(ctx)
		ro, ok := s2.(sdktrace.ReadOnlySpan)
		if !ok {
			t.Fatalf("%T is not an SDK span", s2)
		}
		if v, _ := ro.Resource().Set().Value(attribute.Key("service.name")); v.AsString() != tc.want {
			t.Errorf("service.name = %q, want %q", v.AsString(), tc.want)
		}
	}
}
