package conn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
	"github.com/mongoscope/mongoscope/driver/logging"
	"github.com/mongoscope/mongoscope/internal/wire"
	"github.com/mongoscope/mongoscope/mongotest"
)

func TestMonitoredCommand(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	c, err := Dial(context.Background(), Config{Address: s.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rec := &eventtest.Recorder{}
	d := event.NewDispatcher(rec)
	ctx := context.Background()

	// An insert with a document sequence: the started event shows the
	// documents folded in and $db; the reply is passed on.
	req := &Request{DB: "app", Command: doc(t, bson.D{{Key: "insert", Value: "people"}}),
		Sequences: []wire.Sequence{{Identifier: "documents", Docs: []bson.Raw{doc(t, bson.D{{Key: "_id", Value: int32(1)}}), doc(t, bson.D{{Key: "_id", Value: int32(2)}})}}}}
	r, err := c.MonitoredCommand(ctx, req, d, 42)
	if err != nil {
		t.Fatal(err)
	}
	r.Release()
	evs := rec.Take()
	if len(evs) != 2 {
		t.Fatalf("got %d events, want 2", len(evs))
	}
	st, ok := evs[0].(*event.CommandStarted)
	if !ok {
		t.Fatalf("first event %T", evs[0])
	}
	if st.CommandName != "insert" || st.DatabaseName != "app" || st.OperationID != 42 || st.ConnectionID != c.ID() || st.ServerPort == 0 || st.ServerConnectionID == nil {
		t.Errorf("started fields %+v", st.CommandFields)
	}
	if n, err := st.Command.LookupErr("documents"); err != nil || len(mustArray(t, n)) != 2 {
		t.Errorf("started command without its 2 documents: %v", st.Command)
	}
	if db, _ := st.Command.LookupErr("$db"); db.StringValue() != "app" {
		t.Errorf("started command without $db: %v", st.Command)
	}
	ok2, isOK := evs[1].(*event.CommandSucceeded)
	if !isOK || ok2.RequestID != st.RequestID {
		t.Fatalf("second event %T %+v", evs[1], evs[1])
	}
	if n, _ := ok2.Reply.LookupErr("n"); asInt(n) != 2 {
		t.Errorf("succeeded reply %v", ok2.Reply)
	}

	// A refusal: CommandFailed with the server's reply and the same error.
	_, err = c.MonitoredCommand(ctx, &Request{DB: "app", Command: doc(t, bson.D{{Key: "noSuchCommand", Value: int32(1)}})}, d, 43)
	var ce *CommandError
	if !errors.As(err, &ce) {
		t.Fatalf("got %v, want a CommandError", err)
	}
	evs = rec.Take()
	f, isF := evs[len(evs)-1].(*event.CommandFailed)
	if len(evs) != 2 || !isF || f.Failure != err || len(f.Reply) <= 5 {
		t.Fatalf("failed events %+v", evs)
	}

	// A sensitive command: command and reply are published empty, even
	// when it fails and the reply names the user.
	secret := "pw-Do-Not-Publish-7"
	_, err = c.MonitoredCommand(ctx, &Request{DB: "admin", Command: doc(t, bson.D{{Key: "createUser", Value: "eve"}, {Key: "pwd", Value: secret}, {Key: "roles", Value: bson.A{}}})}, d, 44)
	for _, e := range rec.Take() {
		switch e := e.(type) {
		case *event.CommandStarted:
			if len(e.Command) != 5 {
				t.Errorf("createUser published: %v", e.Command)
			}
		case *event.CommandSucceeded:
			if len(e.Reply) != 5 {
				t.Errorf("createUser reply published: %v", e.Reply)
			}
		case *event.CommandFailed:
			if len(e.Reply) != 5 && e.Reply != nil {
				t.Errorf("createUser reply published: %v", e.Reply)
			}
		}
		if strings.Contains(strings.ReplaceAll(strings.ToLower(stringOf(e)), " ", ""), strings.ToLower(secret)) {
			t.Errorf("secret in event %+v", e)
		}
	}
	_ = err

	// An unacknowledged write: CommandSucceeded with {ok: 1}.
	if _, err := c.MonitoredCommand(ctx, &Request{DB: "app", Command: doc(t, bson.D{{Key: "insert", Value: "people"}, {Key: "writeConcern", Value: bson.D{{Key: "w", Value: int32(0)}}}}),
		Sequences: []wire.Sequence{{Identifier: "documents", Docs: []bson.Raw{doc(t, bson.D{{Key: "_id", Value: int32(3)}})}}}, MoreToCome: true}, d, 45); err != nil {
		t.Fatal(err)
	}
	evs = rec.Take()
	if s, ok := evs[len(evs)-1].(*event.CommandSucceeded); len(evs) != 2 || !ok || asInt(s.Reply.Lookup("ok")) != 1 {
		t.Fatalf("unacknowledged write events %+v", evs)
	}

	// A network error: CommandFailed with no reply.
	s.CloseNextConnections(0)
	s.ResetConnections()
	_, err = c.MonitoredCommand(ctx, &Request{DB: "admin", Command: ping(t)}, d, 46)
	if err == nil {
		t.Fatal("ping on a reset connection succeeded")
	}
	evs = rec.Take()
	if f, ok := evs[len(evs)-1].(*event.CommandFailed); len(evs) != 2 || !ok || f.Reply != nil && len(f.Reply) != 0 {
		t.Fatalf("network error events %+v", evs)
	}
}

// TestMonitoredCommandUnmonitored: with no command monitor it is Command and
// allocates no event.
func TestMonitoredCommandUnmonitored(t *testing.T) {
	if raceEnabled {
		// The race detector's instrumentation moves values to the heap
		// differently on the two paths; the count is checked without it.
		t.Skip("allocation counts are not comparable under the race detector")
	}
	s := mongotest.NewServer(t, mongotest.Options{})
	c, err := Dial(context.Background(), Config{Address: s.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cmd := ping(t)
	var d *event.Dispatcher
	// AllocsPerRun counts the whole process, the in-process server
	// included, whose allocations per command can vary by one (a map
	// growing, a timer): the least of a few runs of each is compared.
	allocs, plain := 1e9, 1e9
	for i := 0; i < 3; i++ {
		allocs = min(allocs, testing.AllocsPerRun(50, func() {
			r, err := c.MonitoredCommand(context.Background(), &Request{DB: "admin", Command: cmd}, d, 1)
			if err != nil {
				t.Fatal(err)
			}
			r.Release()
		}))
		plain = min(plain, testing.AllocsPerRun(50, func() {
			r, err := c.Command(context.Background(), &Request{DB: "admin", Command: cmd})
			if err != nil {
				t.Fatal(err)
			}
			r.Release()
		}))
	}
	if allocs > plain {
		t.Errorf("unmonitored MonitoredCommand: %.0f allocs, Command %.0f", allocs, plain)
	}
}

func mustArray(t *testing.T, v bson.RawValue) []bson.RawValue {
	t.Helper()
	vals, err := v.Array().Values()
	if err != nil {
		t.Fatal(err)
	}
	return vals
}

func stringOf(e any) string {
	switch e := e.(type) {
	case *event.CommandStarted:
		return e.Command.String()
	case *event.CommandSucceeded:
		return e.Reply.String()
	case *event.CommandFailed:
		return e.Reply.String() + e.Failure.Error()
	}
	return ""
}

func asInt(v bson.RawValue) int64 { n, _ := v.AsInt64OK(); return n }

// TestUnacknowledgedWriteLogged: an unacknowledged write gets a "Command
// succeeded" message whose reply is {ok: 1}, like its event, and the same
// requestId as its "Command started".
func TestUnacknowledgedWriteLogged(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	c, err := Dial(context.Background(), Config{Address: s.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var buf bytes.Buffer
	sink, err := logging.New(logging.Options{Handler: slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}),
		Getenv: func(string) string { return "" }, Levels: map[logging.Component]logging.Level{logging.ComponentCommand: logging.LevelDebug}})
	if err != nil {
		t.Fatal(err)
	}
	req := &Request{DB: "app", Command: doc(t, bson.D{{Key: "insert", Value: "people"}, {Key: "writeConcern", Value: bson.D{{Key: "w", Value: int32(0)}}}}),
		Sequences: []wire.Sequence{{Identifier: "documents", Docs: []bson.Raw{doc(t, bson.D{{Key: "_id", Value: int32(1)}})}}}, MoreToCome: true}
	if _, err := c.MonitoredCommand(context.Background(), req, event.NewDispatcher(sink), 7); err != nil {
		t.Fatal(err)
	}
	var msgs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	if len(msgs) != 2 || msgs[1]["msg"] != "Command succeeded" || msgs[1]["reply"] != `{"ok":1}` || msgs[0]["requestId"] != msgs[1]["requestId"] {
		t.Fatalf("messages %v", msgs)
	}
}
