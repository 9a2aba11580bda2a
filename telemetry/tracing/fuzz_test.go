package tracing_test

import (
	"context"
	"errors"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/internal/oteltest"
	"github.com/mongoscope/mongoscope/telemetry/tracing"
)

// The command hooks never panic, whatever the command and reply bytes,
// and always end the span they start.
func FuzzCommandHooks(f *testing.F) {
	for _, d := range []bson.D{
		{{Key: "find", Value: "c"}, {Key: "lsid", Value: bson.D{{Key: "id", Value: bson.Binary{Subtype: 4, Data: make([]byte, 16)}}}}, {Key: "txnNumber", Value: int64(3)}},
		{{Key: "getMore", Value: int64(42)}, {Key: "collection", Value: "c"}},
		{{Key: "killCursors", Value: "c"}, {Key: "cursors", Value: bson.A{int64(42)}}},
		{{Key: "ok", Value: 0}, {Key: "code", Value: 89}},
		{{Key: "cursor", Value: bson.D{{Key: "id", Value: int64(7)}}}},
	} {
		b, _ := bson.Marshal(d)
		f.Add(b, "find", true)
		f.Add(b, "getMore", false)
	}
	f.Add([]byte{1, 2, 3}, "killCursors", false)
	ended := &oteltest.SpanRecorder{CountOnly: true}
	on, n := true, 16
	tr := tracing.New(tracing.Options{TracerProvider: oteltest.NewTracerProvider(ended), Enabled: &on, QueryTextMaxLength: &n})
	f.Fuzz(func(t *testing.T, doc []byte, name string, ok bool) {
		before := ended.Count()
		ctx := tr.CommandStarted(context.Background(), &event.CommandStarted{
			CommandFields: event.CommandFields{CommandName: name, ServerHost: name, ServerPort: len(doc) % 3},
			Command:       bson.Raw(doc)})
		if ok {
			tr.CommandSucceeded(ctx, &event.CommandSucceeded{Reply: bson.Raw(doc)})
		} else {
			tr.CommandFailed(ctx, &event.CommandFailed{Reply: bson.Raw(doc), Failure: errors.New("x")})
		}
		sensitive := event.IsSensitiveCommand(name, bson.Raw(doc))
		if got := ended.Count() - before; got != 1 && !sensitive || got != 0 && sensitive {
			t.Fatalf("%d spans ended for command %q (sensitive %v)", got, name, sensitive)
		}
	})
}
