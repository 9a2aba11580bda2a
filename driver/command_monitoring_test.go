package driver

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
	"github.com/mongoscope/mongoscope/driver/logging"
	"github.com/mongoscope/mongoscope/mongotest"
)

// Tests of the command logging and monitoring specification's rules that
// its own test files do not check, through driver.Connect and the public
// event and logging API.

// lastCommand returns the last started event rec recorded and its outcome
// (one of the two pointers is nil), or fails the test.
func lastCommand(t *testing.T, rec *eventtest.Recorder) (event.CommandStarted, *event.CommandSucceeded, *event.CommandFailed) {
	t.Helper()
	started := eventtest.Of[*event.CommandStarted](rec)
	if len(started) == 0 {
		t.Fatal("no CommandStarted event")
	}
	st := *started[len(started)-1]
	if ok := eventtest.Of[*event.CommandSucceeded](rec); len(ok) > 0 && ok[len(ok)-1].RequestID == st.RequestID {
		return st, ok[len(ok)-1], nil
	}
	if failed := eventtest.Of[*event.CommandFailed](rec); len(failed) > 0 && failed[len(failed)-1].RequestID == st.RequestID {
		return st, nil, failed[len(failed)-1]
	}
	t.Fatalf("no succeeded or failed event with request id %d", st.RequestID)
	return st, nil, nil
}

// logCapture collects the command component's log records as attribute maps.
type logCapture struct {
	mu   sync.Mutex
	recs []map[string]any
}

func (h *logCapture) Enabled(context.Context, slog.Level) bool { return true }
func (h *logCapture) Handle(_ context.Context, r slog.Record) error {
	m := map[string]any{"msg": r.Message}
	r.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.Any(); return true })
	h.mu.Lock()
	h.recs = append(h.recs, m)
	h.mu.Unlock()
	return nil
}
func (h *logCapture) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *logCapture) WithGroup(string) slog.Handler      { return h }

func (h *logCapture) commands() []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []map[string]any
	for _, m := range h.recs {
		if m["component"] == "command" {
			out = append(out, m)
		}
	}
	return out
}

func (h *logCapture) reset() { h.mu.Lock(); h.recs = nil; h.mu.Unlock() }

// monitoredClient connects to s with a command recorder and a command
// logger at debug level.
func monitoredClient(t *testing.T, uri string) (*Client, *eventtest.Recorder, *logCapture) {
	t.Helper()
	rec, logs := &eventtest.Recorder{}, &logCapture{}
	sink, err := logging.New(logging.Options{Handler: logs, Getenv: func(string) string { return "" },
		Levels: map[logging.Component]logging.Level{logging.ComponentCommand: logging.LevelDebug}})
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, uri, &ClientOptions{Monitors: []any{rec, sink}})
	return c, rec, logs
}

const cmSecret = "Pw-never-Published-913"

// TestCommandEventsRedacted: the Security rules. The producer sets
// Redacted on all three events of a sensitive command, the command and
// reply are empty documents, a server error keeps only code, codeName and
// errorLabels, and the logging sink follows the flag.
func TestCommandEventsRedacted(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	// createUser and updateUser are not built into mongotest: one
	// succeeds echoing a secret, the other fails with one in errmsg.
	s.Handle("createUser", func(context.Context, *mongotest.Server, *mongotest.Request) (bson.Raw, error) {
		return bson.Marshal(bson.D{{Key: "ok", Value: 1.0}, {Key: "note", Value: cmSecret}})
	})
	s.Handle("updateUser", func(context.Context, *mongotest.Server, *mongotest.Request) (bson.Raw, error) {
		return bson.Marshal(bson.D{{Key: "ok", Value: 0.0}, {Key: "code", Value: int32(18)}, {Key: "codeName", Value: "AuthenticationFailed"},
			{Key: "errmsg", Value: "bad password " + cmSecret}, {Key: "errorLabels", Value: bson.A{"SecretLabel"}}})
	})
	c, rec, logs := monitoredClient(t, s.URI())
	ctx := ctxTimeout(t, 10*time.Second)
	spec := bson.D{{Key: "mechanism", Value: "SCRAM-SHA-256"}, {Key: "payload", Value: bson.Binary{Data: []byte("n,,n=u,r=" + cmSecret)}}, {Key: "db", Value: "admin"}}
	tests := []struct {
		name     string
		cmd      bson.D
		redacted bool
	}{
		{"hello with speculativeAuthenticate", bson.D{{Key: "hello", Value: 1}, {Key: "speculativeAuthenticate", Value: spec}}, true},
		{"isMaster with speculativeAuthenticate", bson.D{{Key: "isMaster", Value: 1}, {Key: "speculativeAuthenticate", Value: spec}}, true},
		{"ismaster with speculativeAuthenticate", bson.D{{Key: "ismaster", Value: 1}, {Key: "speculativeAuthenticate", Value: spec}}, true},
		{"plain hello", bson.D{{Key: "hello", Value: 1}}, false},
		{"plain isMaster", bson.D{{Key: "isMaster", Value: 1}}, false},
		{"createUser", bson.D{{Key: "createUser", Value: "eve"}, {Key: "pwd", Value: cmSecret}, {Key: "roles", Value: bson.A{}}}, true},
		{"updateUser failing", bson.D{{Key: "updateUser", Value: "eve"}, {Key: "pwd", Value: cmSecret}}, true},
		{"saslStart", bson.D{{Key: "saslStart", Value: 1}, {Key: "mechanism", Value: "SCRAM-SHA-256"}, {Key: "payload", Value: bson.Binary{Data: []byte("n,,n=eve,r=" + cmSecret)}}}, true},
		{"saslContinue", bson.D{{Key: "saslContinue", Value: 1}, {Key: "conversationId", Value: 1}, {Key: "payload", Value: bson.Binary{Data: []byte(cmSecret)}}}, true},
		{"authenticate", bson.D{{Key: "authenticate", Value: 1}, {Key: "user", Value: "eve"}, {Key: "key", Value: cmSecret}}, true},
		{"getnonce", bson.D{{Key: "getnonce", Value: 1}, {Key: "x", Value: cmSecret}}, true},
		{"ping is not", bson.D{{Key: "ping", Value: 1}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec.Reset()
			logs.reset()
			_, runErr := c.RunCommand(ctx, "admin", tt.cmd)
			st, ok, failed := lastCommand(t, rec)
			if st.Redacted != tt.redacted {
				t.Errorf("CommandStarted.Redacted = %v, want %v", st.Redacted, tt.redacted)
			}
			if tt.redacted && len(st.Command) != 5 {
				t.Errorf("command published: %v", st.Command)
			}
			if !tt.redacted {
				if _, err := st.Command.LookupErr(st.CommandName); err != nil {
					t.Errorf("command not published: %v", st.Command)
				}
			}
			switch {
			case ok != nil:
				if ok.Redacted != tt.redacted || (tt.redacted && len(ok.Reply) != 5) || (!tt.redacted && len(ok.Reply) <= 5) {
					t.Errorf("CommandSucceeded.Redacted = %v, reply %v", ok.Redacted, ok.Reply)
				}
			case failed != nil:
				if runErr == nil {
					t.Errorf("CommandFailed but RunCommand succeeded")
				}
				if failed.Redacted != tt.redacted || (tt.redacted && failed.Reply != nil && len(failed.Reply) != 5) {
					t.Errorf("CommandFailed.Redacted = %v, reply %v", failed.Redacted, failed.Reply)
				}
			}
			var all strings.Builder
			fmt.Fprintf(&all, "%+v %+v %+v", st, ok, failed)
			if failed != nil {
				all.WriteString(failed.Failure.Error())
			}
			for _, m := range logs.commands() {
				fmt.Fprint(&all, m)
				if tt.redacted {
					for _, k := range []string{"command", "reply"} {
						if v, has := m[k]; has && v != "{}" {
							t.Errorf("log %s = %v, want {}", k, v)
						}
					}
					if v, has := m["failure"]; has && v != "" {
						t.Errorf("log failure = %v, want empty", v)
					}
				}
			}
			if tt.redacted && strings.Contains(all.String(), cmSecret) {
				t.Errorf("secret published: %s", all.String())
			}
			if tt.name == "updateUser failing" {
				if failed == nil {
					t.Fatal("updateUser did not fail")
				}
				// The failure keeps code, codeName and errorLabels only.
				msg := failed.Failure.Error()
				if !strings.Contains(msg, "18") || !strings.Contains(msg, "AuthenticationFailed") || !strings.Contains(msg, "SecretLabel") || strings.Contains(msg, "bad password") {
					t.Errorf("redacted failure %q", msg)
				}
				// The caller still gets the whole error.
				if runErr == nil || !strings.Contains(runErr.Error(), "bad password") {
					t.Errorf("RunCommand error %v lost the server's message", runErr)
				}
			}
		})
	}
}

// TestCommandEventFields: requestId, databaseName, commandName, durations
// and both connection ids, on every event and log message.
func TestCommandEventFields(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	c, rec, logs := monitoredClient(t, s.URI()+"?maxPoolSize=1")
	ctx := ctxTimeout(t, 10*time.Second)

	t.Run("commandName is the name as sent", func(t *testing.T) {
		for _, name := range []string{"hello", "isMaster", "ismaster"} {
			rec.Reset()
			if _, err := c.RunCommand(ctx, "admin", bson.D{{Key: name, Value: 1}}); err != nil {
				t.Fatal(err)
			}
			st, ok, _ := lastCommand(t, rec)
			if st.CommandName != name || ok == nil || ok.CommandName != name {
				t.Errorf("%s: started %q succeeded %+v", name, st.CommandName, ok)
			}
		}
	})

	t.Run("ids and databaseName match across started, succeeded and failed", func(t *testing.T) {
		for _, cmd := range []bson.D{{{Key: "ping", Value: 1}}, {{Key: "noSuchCommand", Value: 1}}} {
			rec.Reset()
			logs.reset()
			reply, err := c.RunCommand(ctx, "appdb", cmd)
			st, ok, failed := lastCommand(t, rec)
			var f event.CommandFields
			switch {
			case ok != nil && err == nil:
				f = ok.CommandFields
			case failed != nil && err != nil:
				f = failed.CommandFields
			default:
				t.Fatalf("%v: err %v, succeeded %v failed %v", cmd, err, ok, failed)
			}
			if f.RequestID != st.RequestID || f.OperationID != st.OperationID || f.OperationID == 0 {
				t.Errorf("request/operation ids: started %d/%d, outcome %d/%d", st.RequestID, st.OperationID, f.RequestID, f.OperationID)
			}
			if st.DatabaseName != "appdb" || f.DatabaseName != "appdb" {
				t.Errorf("databaseName: started %q, outcome %q", st.DatabaseName, f.DatabaseName)
			}
			var checkouts []int64
			for _, e := range eventtest.Of[*event.ConnectionCheckedOut](rec) {
				checkouts = append(checkouts, e.ConnectionID)
			}
			if len(checkouts) == 0 || st.ConnectionID != checkouts[len(checkouts)-1] || f.ConnectionID != st.ConnectionID {
				t.Errorf("driver connection id: started %d, outcome %d, CMAP checkouts %v", st.ConnectionID, f.ConnectionID, checkouts)
			}
			if st.ServerHost != "127.0.0.1" || st.ServerPort == 0 || f.ServerHost != st.ServerHost || f.ServerPort != st.ServerPort {
				t.Errorf("server address: started %s:%d, outcome %s:%d", st.ServerHost, st.ServerPort, f.ServerHost, f.ServerPort)
			}
			if st.ServerConnectionID == nil || f.ServerConnectionID == nil || *f.ServerConnectionID != *st.ServerConnectionID {
				t.Fatalf("server connection id: started %v, outcome %v", st.ServerConnectionID, f.ServerConnectionID)
			}
			if st.ServiceID != nil || f.ServiceID != nil {
				t.Errorf("serviceId outside load-balanced mode")
			}
			// The log messages carry the same values.
			msgs := logs.commands()
			if len(msgs) != 2 {
				t.Fatalf("%d command log messages, want 2", len(msgs))
			}
			for _, m := range msgs {
				if m["requestId"] != int64(st.RequestID) || m["operationId"] != st.OperationID || m["driverConnectionId"] != st.ConnectionID ||
					m["serverConnectionId"] != *st.ServerConnectionID || m["databaseName"] != "appdb" || m["commandName"] != st.CommandName {
					t.Errorf("log message %v does not match event %+v", m, st.CommandFields)
				}
				if _, has := m["serviceId"]; has {
					t.Errorf("log message has serviceId outside load-balanced mode: %v", m)
				}
			}
			_ = reply
		}
		// The server connection id is the server's own: hello on the same
		// (only) connection reports it.
		rec.Reset()
		reply, err := c.RunCommand(ctx, "admin", bson.D{{Key: "hello", Value: 1}})
		if err != nil {
			t.Fatal(err)
		}
		st, _, _ := lastCommand(t, rec)
		if id, _ := reply.Lookup("connectionId").AsInt64OK(); st.ServerConnectionID == nil || *st.ServerConnectionID != id {
			t.Errorf("serverConnectionId %v, hello says %d", st.ServerConnectionID, id)
		}
	})

	t.Run("duration covers the round trip", func(t *testing.T) {
		const lat = 60 * time.Millisecond
		s.AddLatency(lat)
		defer s.AddLatency(0)
		for _, cmd := range []bson.D{{{Key: "ping", Value: 1}}, {{Key: "noSuchCommand", Value: 1}}} {
			rec.Reset()
			logs.reset()
			_, _ = c.RunCommand(ctx, "admin", cmd)
			_, ok, failed := lastCommand(t, rec)
			d := time.Duration(0)
			if ok != nil {
				d = ok.Duration
			} else {
				d = failed.Duration
			}
			if d < lat {
				t.Errorf("%v: duration %v, shorter than the server's %v latency", cmd, d, lat)
			}
			for _, m := range logs.commands() {
				if ms, has := m["durationMS"]; has && ms.(float64) < float64(lat)/float64(time.Millisecond) {
					t.Errorf("log durationMS %v, want >= %v", ms, lat)
				}
			}
		}
	})
}

// TestCommandEventsWriteErrors: a reply with ok: 1 and writeErrors is a
// succeeded command, and a non-default write concern is published.
func TestCommandEventsWriteErrors(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	c, rec, _ := monitoredClient(t, s.URI())
	ctx := ctxTimeout(t, 10*time.Second)
	ins := bson.D{{Key: "insert", Value: "people"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}}},
		{Key: "writeConcern", Value: bson.D{{Key: "w", Value: "majority"}}}}
	if _, err := c.RunCommand(ctx, "app", ins); err != nil {
		t.Fatal(err)
	}
	rec.Reset()
	reply, err := c.RunCommand(ctx, "app", ins) // duplicate key
	if err != nil {
		t.Fatalf("duplicate insert: %v", err)
	}
	if _, werr := reply.LookupErr("writeErrors"); werr != nil {
		t.Fatalf("no writeErrors in %v", reply)
	}
	st, ok, failed := lastCommand(t, rec)
	if ok == nil || failed != nil {
		t.Fatalf("a reply with writeErrors gave CommandFailed %+v", failed)
	}
	if _, err := ok.Reply.LookupErr("writeErrors"); err != nil {
		t.Errorf("succeeded reply lost writeErrors: %v", ok.Reply)
	}
	wc, err := st.Command.LookupErr("writeConcern")
	if err != nil || !bytes.Contains(wc.Value, []byte("majority")) {
		t.Errorf("published command lost its writeConcern: %v", st.Command)
	}
}

// TestCommandEventsNetworkError: a failure to send or receive gives a
// CommandFailed event and a "Command failed" message carrying the error,
// and the error reaches the caller.
func TestCommandEventsNetworkError(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	c, rec, logs := monitoredClient(t, s.URI()+"?retryReads=false&retryWrites=false")
	ctx := ctxTimeout(t, 10*time.Second)
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.SetFailPoint(bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: bson.D{{Key: "times", Value: 1}}},
		{Key: "data", Value: bson.D{{Key: "failCommands", Value: bson.A{"ping"}}, {Key: "closeConnection", Value: true}}}}); err != nil {
		t.Fatal(err)
	}
	rec.Reset()
	logs.reset()
	_, err := c.RunCommand(ctx, "admin", bson.D{{Key: "ping", Value: 1}})
	if err == nil {
		t.Fatal("ping on a closed connection succeeded")
	}
	_, ok, failed := lastCommand(t, rec)
	if ok != nil || failed == nil || failed.Failure == nil || failed.Reply != nil {
		t.Fatalf("network error events: succeeded %+v failed %+v", ok, failed)
	}
	var sawFailed bool
	for _, m := range logs.commands() {
		if m["msg"] == "Command failed" {
			sawFailed = true
			if f, _ := m["failure"].(string); f == "" {
				t.Errorf("Command failed message without the failure: %v", m)
			}
		}
	}
	if !sawFailed {
		t.Errorf("no Command failed message: %v", logs.commands())
	}
}

// TestNoCommandEventsForHandshake: the handshake and authentication of a
// new connection and the monitors' heartbeats publish no command event and
// log no command message.
func TestNoCommandEventsForHandshake(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{Auth: true})
	if err := s.AddUser("admin", "ada", cmSecret); err != nil {
		t.Fatal(err)
	}
	uri := strings.Replace(s.URI(), "mongodb://", "mongodb://ada:"+cmSecret+"@", 1)
	c, rec, logs := monitoredClient(t, uri+"?heartbeatFrequencyMS=500")
	ctx := ctxTimeout(t, 10*time.Second)
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(600 * time.Millisecond) // let a heartbeat or two pass
	var names []string
	for _, e := range eventtest.Of[*event.CommandStarted](rec) {
		names = append(names, e.CommandName)
	}
	if len(names) != 1 || names[0] != "ping" {
		t.Errorf("command events %v, want only ping", names)
	}
	for _, m := range logs.commands() {
		if m["commandName"] != "ping" {
			t.Errorf("command message for %v", m["commandName"])
		}
	}
	if n := len(logs.commands()); n != 2 {
		t.Errorf("%d command messages, want 2 (ping started and succeeded)", n)
	}
}

// TestCommandEventsServiceID: in load-balanced mode every event and message
// carries the backend's serviceId, the one hello reported.
func TestCommandEventsServiceID(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{Topology: mongotest.Topology{Role: mongotest.RoleLoadBalanced}})
	c, rec, logs := monitoredClient(t, s.URI())
	ctx := ctxTimeout(t, 10*time.Second)
	reply, err := c.RunCommand(ctx, "admin", bson.D{{Key: "hello", Value: 1}, {Key: "loadBalanced", Value: true}})
	if err != nil {
		t.Fatal(err)
	}
	want, ok := reply.Lookup("serviceId").ObjectIDOK()
	if !ok {
		t.Fatalf("hello reply without serviceId: %v", reply)
	}
	_, _ = c.RunCommand(ctx, "admin", bson.D{{Key: "noSuchCommand", Value: 1}})
	var fields []event.CommandFields
	for _, e := range rec.Events() {
		switch e := e.(type) {
		case *event.CommandStarted:
			fields = append(fields, e.CommandFields)
		case *event.CommandSucceeded:
			fields = append(fields, e.CommandFields)
		case *event.CommandFailed:
			fields = append(fields, e.CommandFields)
		}
	}
	if len(fields) != 4 {
		t.Fatalf("%d events, want 4", len(fields))
	}
	for _, f := range fields {
		if f.ServiceID == nil || *f.ServiceID != want {
			t.Errorf("%s: serviceId %v, want %v", f.CommandName, f.ServiceID, want)
		}
	}
	msgs := logs.commands()
	if len(msgs) != 4 {
		t.Fatalf("%d messages, want 4", len(msgs))
	}
	for _, m := range msgs {
		if m["serviceId"] != want.Hex() {
			t.Errorf("%v: serviceId %v, want %s", m["msg"], m["serviceId"], want.Hex())
		}
	}
}
