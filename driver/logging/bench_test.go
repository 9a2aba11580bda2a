package logging

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
)

func benchEvents(tb testing.TB) (*event.CommandStarted, *event.CommandSucceeded, event.PoolEvent, event.TopologyEvent, event.SelectionEvent) {
	cmd, err := bson.ParseExtJSON([]byte(`{"find": "c", "filter": {"x": {"$gt": 5}}, "$db": "db"}`))
	if err != nil {
		tb.Fatal(err)
	}
	reply, err := bson.ParseExtJSON([]byte(`{"cursor": {"id": 0, "ns": "db.c", "firstBatch": [{"_id": 1}]}, "ok": 1}`))
	if err != nil {
		tb.Fatal(err)
	}
	f := cmdFields("find")
	return &event.CommandStarted{CommandFields: f, Command: cmd},
		&event.CommandSucceeded{CommandFields: f, Reply: reply, Duration: time.Millisecond},
		&event.ConnectionCheckedOut{Address: "h:27017", ConnectionID: 1, Duration: time.Millisecond},
		&event.ServerHeartbeatStarted{HeartbeatFields: event.HeartbeatFields{ServerHost: "h", ServerPort: 27017}},
		&event.ServerSelectionStarted{SelectionFields: event.SelectionFields{Selector: "primary", Topology: topoDesc}}
}

// offSink logs nothing: every component is off.
func offSink(tb testing.TB) *Sink {
	s, err := New(Options{Handler: slog.NewJSONHandler(io.Discard, nil), Getenv: noEnv})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// TestDisabledIsFree proves the package docs' cost claim: with a component
// off, no event allocates (no attribute built, nothing serialized).
func TestDisabledIsFree(t *testing.T) {
	s := offSink(t)
	started, succeeded, pe, te, se := benchEvents(t)
	ctx := context.Background()
	allocs := testing.AllocsPerRun(200, func() {
		s.CommandStarted(ctx, started)
		s.CommandSucceeded(ctx, succeeded)
		s.PoolEvent(ctx, pe)
		s.TopologyEvent(ctx, te)
		s.SelectionEvent(ctx, se)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per run with logging off", allocs)
	}
}

func BenchmarkDisabled(b *testing.B) {
	s := offSink(b)
	started, succeeded, pe, _, _ := benchEvents(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		s.CommandStarted(ctx, started)
		s.CommandSucceeded(ctx, succeeded)
		s.PoolEvent(ctx, pe)
	}
}

func BenchmarkEnabledJSON(b *testing.B) {
	s, err := New(Options{Handler: slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelDebug}), Getenv: noEnv, Levels: allDebug()})
	if err != nil {
		b.Fatal(err)
	}
	started, succeeded, pe, _, _ := benchEvents(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		s.CommandStarted(ctx, started)
		s.CommandSucceeded(ctx, succeeded)
		s.PoolEvent(ctx, pe)
	}
}

// FuzzDocument feeds arbitrary bytes as a command and a reply, at
// arbitrary cut-offs: the sink must not panic and must always log valid
// UTF-8 no longer than the limit plus the ellipsis.
func FuzzDocument(f *testing.F) {
	for _, ej := range []string{`{"ping": 1}`, `{"s": "日本語日本語"}`, `{"a": [1, 2, {"b": null}], "d": {"$date": "2020-01-01T00:00:00Z"}}`, `{"x": {"$binary": {"base64": "AAEC", "subType": "00"}}}`} {
		r, err := bson.ParseExtJSON([]byte(ej))
		if err != nil {
			f.Fatal(err)
		}
		f.Add([]byte(r), 5)
		f.Add([]byte(r), 1000)
	}
	f.Add([]byte{5, 0, 0, 0, 0}, 1)
	f.Add([]byte{0x10, 0, 0, 0, 2, 'x', 0}, 3)
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		if max < 1 || max > 1<<16 {
			max = 1 + (max&0x7fff+0x7fff)%0x7fff
		}
		c := newCapture()
		s, err := New(Options{Handler: c, Getenv: noEnv, Levels: allDebug(), MaxDocumentLength: max})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		f := cmdFields("find")
		s.CommandStarted(ctx, &event.CommandStarted{CommandFields: f, Command: data})
		s.CommandSucceeded(ctx, &event.CommandSucceeded{CommandFields: f, Reply: data})
		for _, m := range c.take() {
			for _, k := range []string{"command", "reply"} {
				v, ok := m.Attrs[k].(string)
				if !ok {
					continue
				}
				if !utf8ValidString(v) || len(v) > max+3 && v != "<malformed BSON document>" {
					t.Fatalf("%s = %q (max %d)", k, v, max)
				}
			}
		}
	})
}
