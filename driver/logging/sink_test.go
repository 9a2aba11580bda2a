package logging

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"go.opentelemetry.io/otel/trace"
)

// msg is one captured record: its level, message and attributes.
type msg struct {
	Level   slog.Level
	Message string
	Attrs   map[string]any
}

// capture is a slog.Handler that keeps what it receives.
type capture struct {
	mu   sync.Mutex
	msgs []msg
	min  slog.Level
}

func newCapture() *capture { return &capture{min: slog.Level(-1 << 20)} }

func (c *capture) Enabled(_ context.Context, l slog.Level) bool { return l >= c.min }
func (c *capture) Handle(_ context.Context, r slog.Record) error {
	m := msg{Level: r.Level, Message: r.Message, Attrs: map[string]any{}}
	r.Attrs(func(a slog.Attr) bool { m.Attrs[a.Key] = a.Value.Any(); return true })
	c.mu.Lock()
	c.msgs = append(c.msgs, m)
	c.mu.Unlock()
	return nil
}
func (c *capture) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *capture) WithGroup(string) slog.Handler      { return c }

func (c *capture) take() []msg {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.msgs
	c.msgs = nil
	return m
}

func noEnv(string) string { return "" }

func allDebug() map[Component]Level {
	return map[Component]Level{ComponentCommand: LevelDebug, ComponentTopology: LevelDebug, ComponentServerSelection: LevelDebug, ComponentConnection: LevelDebug}
}

func newSink(t testing.TB, o Options) (*Sink, *capture) {
	t.Helper()
	c := newCapture()
	o.Handler = c
	if o.Getenv == nil {
		o.Getenv = noEnv
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

func ptr[T any](v T) *T { return &v }

func doc(t testing.TB, ej string) bson.Raw {
	t.Helper()
	r, err := bson.ParseExtJSON([]byte(ej))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var (
	oid       = bson.ObjectID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	topoDesc  = event.TopologyDescription{Kind: "ReplicaSetWithPrimary", SetName: "rs0", Servers: []event.ServerDescription{{Address: "a:27017", Kind: "RSPrimary"}}}
	noPrimary = event.TopologyDescription{Kind: "ReplicaSetNoPrimary", SetName: "rs0", Servers: []event.ServerDescription{{Address: "a:27017", Kind: "RSSecondary", SetName: "rs0"}}}
)

func cmdFields(name string) event.CommandFields {
	return event.CommandFields{CommandName: name, DatabaseName: "db", RequestID: 7, OperationID: 3, ServerHost: "h", ServerPort: 27017, ConnectionID: 4, ServerConnectionID: ptr(int64(99)), ServiceID: &oid}
}

// TestMessages sends one event of each kind and checks the message text,
// level, component and every field with its value.
func TestMessages(t *testing.T) {
	ping := func(t *testing.T) bson.Raw { return doc(t, `{"ping": 1, "$db": "db"}`) }
	commandAttrs := map[string]any{"commandName": "ping", "databaseName": "db", "requestId": int64(7), "operationId": int64(3), "driverConnectionId": int64(4), "serverHost": "h", "serverPort": int64(27017), "serverConnectionId": int64(99), "serviceId": oid.Hex()}
	with := func(base map[string]any, kv ...any) map[string]any {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	pool := map[string]any{"serverHost": "h", "serverPort": int64(27017)}
	topo := map[string]any{"topologyId": oid.Hex()}
	hb := event.HeartbeatFields{TopologyID: oid, ServerHost: "h", ServerPort: 27018, DriverConnectionID: 2, ServerConnectionID: ptr(int64(5)), Awaited: true}
	hbAttrs := with(topo, "serverHost", "h", "serverPort", int64(27018), "driverConnectionId", int64(2), "serverConnectionId", int64(5), "awaited", true)
	sel := event.SelectionFields{Selector: "primary", OperationID: 11, Operation: "find", Topology: topoDesc}
	selAttrs := map[string]any{"selector": "primary", "operationId": int64(11), "operation": "find", "topologyDescription": topoDesc.String()}

	tests := []struct {
		name  string
		send  func(t *testing.T, s *Sink)
		level slog.Level
		comp  Component
		text  string
		attrs map[string]any
	}{
		{"command started", func(t *testing.T, s *Sink) {
			s.CommandStarted(context.Background(), &event.CommandStarted{CommandFields: cmdFields("ping"), Command: ping(t)})
		}, slog.LevelDebug, ComponentCommand, "Command started", with(commandAttrs, "command", `{"ping":1,"$db":"db"}`)},
		{"command succeeded", func(t *testing.T, s *Sink) {
			s.CommandSucceeded(context.Background(), &event.CommandSucceeded{CommandFields: cmdFields("ping"), Duration: 1500 * time.Microsecond, Reply: doc(t, `{"ok": 1.0}`)})
		}, slog.LevelDebug, ComponentCommand, "Command succeeded", with(commandAttrs, "durationMS", 1.5, "reply", `{"ok":1.0}`)},
		{"command failed", func(t *testing.T, s *Sink) {
			s.CommandFailed(context.Background(), &event.CommandFailed{CommandFields: cmdFields("ping"), Duration: 2 * time.Millisecond, Failure: errors.New("boom")})
		}, slog.LevelDebug, ComponentCommand, "Command failed", with(commandAttrs, "durationMS", 2.0, "failure", "boom")},
		{"pool created", func(t *testing.T, s *Sink) {
			s.PoolEvent(context.Background(), &event.PoolCreated{Address: "h:27017", Options: event.PoolOptions{MaxPoolSize: 5, MinPoolSize: 1, MaxConnecting: 2, MaxIdleTime: 10 * time.Second, WaitQueueTimeout: time.Second}})
		}, slog.LevelDebug, ComponentConnection, "Connection pool created", with(pool, "maxIdleTimeMS", int64(10000), "minPoolSize", int64(1), "maxPoolSize", int64(5), "maxConnecting", int64(2), "waitQueueTimeoutMS", int64(1000))},
		{"pool ready", func(t *testing.T, s *Sink) { s.PoolEvent(context.Background(), &event.PoolReady{Address: "h"}) },
			slog.LevelDebug, ComponentConnection, "Connection pool ready", pool},
		{"pool cleared", func(t *testing.T, s *Sink) {
			s.PoolEvent(context.Background(), &event.PoolCleared{Address: "h:27017", ServiceID: &oid})
		}, slog.LevelDebug, ComponentConnection, "Connection pool cleared", with(pool, "serviceId", oid.Hex())},
		{"pool closed", func(t *testing.T, s *Sink) { s.PoolEvent(context.Background(), &event.PoolClosed{Address: "h:27017"}) },
			slog.LevelDebug, ComponentConnection, "Connection pool closed", pool},
		{"connection created", func(t *testing.T, s *Sink) {
			s.PoolEvent(context.Background(), &event.ConnectionCreated{Address: "h:27017", ConnectionID: 3})
		}, slog.LevelDebug, ComponentConnection, "Connection created", with(pool, "driverConnectionId", int64(3))},
		{"connection ready", func(t *testing.T, s *Sink) {
			s.PoolEvent(context.Background(), &event.ConnectionReady{Address: "h:27017", ConnectionID: 3, Duration: 3 * time.Millisecond})
		}, slog.LevelDebug, ComponentConnection, "Connection ready", with(pool, "driverConnectionId", int64(3), "durationMS", 3.0)},
		{"connection closed stale", func(t *testing.T, s *Sink) {
			s.PoolEvent(context.Background(), &event.ConnectionClosed{Address: "h:27017", ConnectionID: 3, Reason: event.ReasonStale})
		}, slog.LevelDebug, ComponentConnection, "Connection closed", with(pool, "driverConnectionId", int64(3), "reason", "Connection became stale because the pool was cleared")},
		{"connection closed idle", func(t *testing.T, s *Sink) {
			s.PoolEvent(context.Background(), &event.ConnectionClosed{Address: "h:27017", ConnectionID: 3, Reason: event.ReasonIdle})
		}, slog.LevelDebug, ComponentConnection, "Connection closed", with(pool, "driverConnectionId", int64(3), "reason", "Connection has been available but unused for longer than the configured max idle time")},
		{"connection closed error", func(t *testing.T, s *Sink) {
			s.PoolEvent(context.Background(), &event.ConnectionClosed{Address: "h:27017", ConnectionID: 3, Reason: event.ReasonError, Err: errors.New("reset")})
		}, slog.LevelDebug, ComponentConnection, "Connection closed", with(pool, "driverConnectionId", int64(3), "reason", "An error occurred while using the connection", "error", "reset")},
		{"connection closed pool closed", func(t *testing.T, s *Sink) {
			s.PoolEvent(context.Background(), &event.ConnectionClosed{Address: "h:27017", ConnectionID: 3, Reason: event.ReasonPoolClosed})
		}, slog.LevelDebug, ComponentConnection, "Connection closed", with(pool, "driverConnectionId", int64(3), "reason", "Connection pool was closed")},
		{"checkout started", func(t *testing.T, s *Sink) {
			s.PoolEvent(context.Background(), &event.ConnectionCheckOutStarted{Address: "h:27017"})
		}, slog.LevelDebug, ComponentConnection, "Connection checkout started", pool},
		{"checkout failed timeout", func(t *testing.T, s *Sink) {
			s.PoolEvent(context.Background(), &event.ConnectionCheckOutFailed{Address: "h:27017", Reason: event.ReasonCheckOutTimeout, Duration: time.Millisecond})
		}, slog.LevelDebug, ComponentConnection, "Connection checkout failed", with(pool, "reason", "Wait queue timeout elapsed without a connection becoming available", "durationMS", 1.0)},
		{"checkout failed connection error", func(t *testing.T, s *Sink) {
			s.PoolEvent(context.Background(), &event.ConnectionCheckOutFailed{Address: "h:27017", Reason: event.ReasonCheckOutConnectionError, Err: errors.New("refused"), Duration: time.Millisecond})
		}, slog.LevelDebug, ComponentConnection, "Connection checkout failed", with(pool, "reason", "An error occurred while trying to establish a new connection", "error", "refused", "durationMS", 1.0)},
		{"checkout failed pool closed", func(t *testing.T, s *Sink) {
			s.PoolEvent(context.Background(), &event.ConnectionCheckOutFailed{Address: "h:27017", Reason: event.ReasonCheckOutPoolClosed})
		}, slog.LevelDebug, ComponentConnection, "Connection checkout failed", with(pool, "reason", "Connection pool was closed", "durationMS", 0.0)},
		{"checked out", func(t *testing.T, s *Sink) {
			s.PoolEvent(context.Background(), &event.ConnectionCheckedOut{Address: "h:27017", ConnectionID: 8, Duration: time.Millisecond})
		}, slog.LevelDebug, ComponentConnection, "Connection checked out", with(pool, "driverConnectionId", int64(8), "durationMS", 1.0)},
		{"checked in", func(t *testing.T, s *Sink) {
			s.PoolEvent(context.Background(), &event.ConnectionCheckedIn{Address: "h:27017", ConnectionID: 8})
		}, slog.LevelDebug, ComponentConnection, "Connection checked in", with(pool, "driverConnectionId", int64(8))},
		{"unix socket has no port", func(t *testing.T, s *Sink) {
			s.PoolEvent(context.Background(), &event.PoolReady{Address: "/tmp/mongodb-27017.sock"})
		}, slog.LevelDebug, ComponentConnection, "Connection pool ready", map[string]any{"serverHost": "/tmp/mongodb-27017.sock"}},
		{"topology opening", func(t *testing.T, s *Sink) {
			s.TopologyEvent(context.Background(), &event.TopologyOpening{TopologyID: oid})
		},
			slog.LevelDebug, ComponentTopology, "Starting topology monitoring", topo},
		{"topology closed", func(t *testing.T, s *Sink) {
			s.TopologyEvent(context.Background(), &event.TopologyClosed{TopologyID: oid})
		},
			slog.LevelDebug, ComponentTopology, "Stopped topology monitoring", topo},
		{"server opening", func(t *testing.T, s *Sink) {
			s.TopologyEvent(context.Background(), &event.ServerOpening{TopologyID: oid, Address: "h:27017"})
		}, slog.LevelDebug, ComponentTopology, "Starting server monitoring", with(topo, "serverHost", "h", "serverPort", int64(27017))},
		{"server closed", func(t *testing.T, s *Sink) {
			s.TopologyEvent(context.Background(), &event.ServerClosed{TopologyID: oid, Address: "[::1]:27019"})
		}, slog.LevelDebug, ComponentTopology, "Stopped server monitoring", with(topo, "serverHost", "::1", "serverPort", int64(27019))},
		// A change that leaves the primary alone: one that changes it also
		// logs "Primary changed" (TestPrimaryChanged).
		{"topology changed", func(t *testing.T, s *Sink) {
			s.TopologyEvent(context.Background(), &event.TopologyDescriptionChanged{TopologyID: oid, Previous: event.TopologyDescription{Kind: "Unknown"}, New: noPrimary})
		}, slog.LevelDebug, ComponentTopology, "Topology description changed", with(topo, "previousDescription", event.TopologyDescription{Kind: "Unknown"}.String(), "newDescription", noPrimary.String())},
		{"heartbeat started", func(t *testing.T, s *Sink) {
			s.TopologyEvent(context.Background(), &event.ServerHeartbeatStarted{HeartbeatFields: hb})
		}, slog.LevelDebug, ComponentTopology, "Server heartbeat started", hbAttrs},
		{"heartbeat succeeded", func(t *testing.T, s *Sink) {
			s.TopologyEvent(context.Background(), &event.ServerHeartbeatSucceeded{HeartbeatFields: hb, Duration: time.Millisecond, Reply: doc(t, `{"ok": 1, "isWritablePrimary": true}`)})
		}, slog.LevelDebug, ComponentTopology, "Server heartbeat succeeded", with(hbAttrs, "durationMS", 1.0, "reply", `{"ok":1,"isWritablePrimary":true}`)},
		{"heartbeat failed", func(t *testing.T, s *Sink) {
			s.TopologyEvent(context.Background(), &event.ServerHeartbeatFailed{HeartbeatFields: hb, Duration: time.Millisecond, Failure: errors.New("eof")})
		}, slog.LevelDebug, ComponentTopology, "Server heartbeat failed", with(hbAttrs, "durationMS", 1.0, "failure", "eof")},
		{"selection started", func(t *testing.T, s *Sink) {
			s.SelectionEvent(context.Background(), &event.ServerSelectionStarted{SelectionFields: sel})
		}, slog.LevelDebug, ComponentServerSelection, "Server selection started", selAttrs},
		{"selection succeeded", func(t *testing.T, s *Sink) {
			s.SelectionEvent(context.Background(), &event.ServerSelectionSucceeded{SelectionFields: sel, ServerHost: "a", ServerPort: 27017})
		}, slog.LevelDebug, ComponentServerSelection, "Server selection succeeded", with(selAttrs, "serverHost", "a", "serverPort", int64(27017))},
		{"selection failed", func(t *testing.T, s *Sink) {
			s.SelectionEvent(context.Background(), &event.ServerSelectionFailed{SelectionFields: sel, Failure: errors.New("timed out")})
		}, slog.LevelDebug, ComponentServerSelection, "Server selection failed", with(selAttrs, "failure", "timed out")},
		{"selection waiting", func(t *testing.T, s *Sink) {
			s.SelectionEvent(context.Background(), &event.ServerSelectionWaiting{SelectionFields: sel, RemainingTime: 29 * time.Second})
		}, slog.LevelInfo, ComponentServerSelection, "Waiting for suitable server to become available", with(selAttrs, "remainingTimeMS", int64(29000))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := newSink(t, Options{Levels: allDebug()})
			tt.send(t, s)
			got := c.take()
			if len(got) != 1 {
				t.Fatalf("got %d messages, want 1: %+v", len(got), got)
			}
			m := got[0]
			if m.Message != tt.text || m.Level != tt.level {
				t.Errorf("got %q at %v, want %q at %v", m.Message, m.Level, tt.text, tt.level)
			}
			want := with(tt.attrs, "component", string(tt.comp))
			for k, v := range want {
				if m.Attrs[k] != v {
					t.Errorf("%s = %#v, want %#v", k, m.Attrs[k], v)
				}
			}
			for k := range m.Attrs {
				if _, ok := want[k]; !ok {
					t.Errorf("unexpected field %s = %#v", k, m.Attrs[k])
				}
			}
		})
	}
}

// TestNoServerDescriptionChangedMessage checks the SDAM message the
// specification leaves out on purpose.
func TestNoServerDescriptionChangedMessage(t *testing.T) {
	s, c := newSink(t, Options{Levels: allDebug()})
	s.TopologyEvent(context.Background(), &event.ServerDescriptionChanged{TopologyID: oid, Address: "h"})
	if got := c.take(); len(got) != 0 {
		t.Fatalf("got %+v", got)
	}
}

func TestOptionalCommandFieldsOmitted(t *testing.T) {
	s, c := newSink(t, Options{Levels: allDebug()})
	s.CommandStarted(context.Background(), &event.CommandStarted{CommandFields: event.CommandFields{CommandName: "ping", DatabaseName: "db", ServerHost: "h", ServerPort: 27017}, Command: doc(t, `{"ping":1}`)})
	m := c.take()[0]
	for _, k := range []string{"operationId", "serverConnectionId", "serviceId"} {
		if _, ok := m.Attrs[k]; ok {
			t.Errorf("%s present: %v", k, m.Attrs[k])
		}
	}
}

func TestTraceCorrelation(t *testing.T) {
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:     trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
		TraceFlags: trace.FlagsSampled,
	})
	tests := []struct {
		name          string
		ctx           context.Context
		trace, spanID any
	}{
		{"span", trace.ContextWithSpanContext(context.Background(), sc), "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"},
		{"no span", context.Background(), nil, nil},
		{"invalid span", trace.ContextWithSpanContext(context.Background(), trace.SpanContext{}), nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := newSink(t, Options{Levels: allDebug()})
			s.PoolEvent(tt.ctx, &event.ConnectionCheckOutStarted{Address: "h"})
			s.CommandStarted(tt.ctx, &event.CommandStarted{CommandFields: cmdFields("ping"), Command: doc(t, `{"ping":1}`)})
			for _, m := range c.take() {
				if m.Attrs["trace_id"] != tt.trace || m.Attrs["span_id"] != tt.spanID {
					t.Errorf("%s: trace_id=%v span_id=%v", m.Message, m.Attrs["trace_id"], m.Attrs["span_id"])
				}
			}
		})
	}
}

func TestRedaction(t *testing.T) {
	const secret = "hunter2-SuperSecretPassword"
	payload := bson.Binary{Subtype: 0, Data: []byte("n,,n=user,r=" + secret)}
	saslStart := bson.D{{Key: "saslStart", Value: int32(1)}, {Key: "mechanism", Value: "SCRAM-SHA-256"}, {Key: "payload", Value: payload}, {Key: "pwd", Value: secret}}
	raw, err := bson.Marshal(saslStart)
	if err != nil {
		t.Fatal(err)
	}
	helloSpec := doc(t, `{"hello": 1, "speculativeAuthenticate": {"saslStart": 1, "pwd": "`+secret+`"}}`)
	tests := []struct {
		name    string
		cmdName string
		cmd     bson.Raw
		reply   bson.Raw
	}{
		{"saslStart", "saslStart", raw, doc(t, `{"ok": 1, "payload": "`+secret+`"}`)},
		{"saslContinue", "saslContinue", raw, doc(t, `{"ok": 1, "payload": "`+secret+`"}`)},
		{"authenticate", "authenticate", raw, nil},
		{"createUser", "createUser", doc(t, `{"createUser": "u", "pwd": "`+secret+`"}`), nil},
		{"updateUser", "updateUser", doc(t, `{"updateUser": "u", "pwd": "`+secret+`"}`), nil},
		{"getnonce", "getnonce", doc(t, `{"getnonce": "`+secret+`"}`), nil},
		{"copydb", "copydb", doc(t, `{"copydb": "`+secret+`"}`), nil},
		{"copydbgetnonce", "copydbgetnonce", doc(t, `{"copydbgetnonce": "`+secret+`"}`), nil},
		{"copydbsaslstart", "copydbsaslstart", doc(t, `{"copydbsaslstart": "`+secret+`"}`), nil},
		{"hello speculative", "hello", helloSpec, doc(t, `{"ok": 1, "speculativeAuthenticate": {"payload": "`+secret+`"}}`)},
		{"isMaster speculative", "isMaster", helloSpec, doc(t, `{"ok": 1, "speculativeAuthenticate": {"payload": "`+secret+`"}}`)},
		{"hello already redacted", "hello", nil, doc(t, `{"ok": 1, "speculativeAuthenticate": {"payload": "`+secret+`"}}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			s, err := New(Options{Handler: slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}), Getenv: noEnv, Levels: allDebug()})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			f := cmdFields(tt.cmdName)
			// The producer flags a hello with speculativeAuthenticate (its
			// name alone does not tell); the other commands are sensitive
			// by name, which the sink also checks.
			f.Redacted = tt.cmdName == "hello" || tt.cmdName == "isMaster"
			s.CommandStarted(ctx, &event.CommandStarted{CommandFields: f, Command: tt.cmd})
			s.CommandSucceeded(ctx, &event.CommandSucceeded{CommandFields: f, Reply: tt.reply})
			// A server's refusal (it has a reply) is redacted.
			s.CommandFailed(ctx, &event.CommandFailed{CommandFields: f, Reply: doc(t, `{"ok": 0, "errmsg": "`+secret+`"}`), Failure: errors.New("auth failed for " + secret)})
			out := buf.String()
			if strings.Contains(out, secret) || strings.Contains(out, "hunter2") {
				t.Fatalf("credential leaked: %s", out)
			}
			var n int
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				var m map[string]any
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					t.Fatal(err)
				}
				for _, k := range []string{"command", "reply"} {
					if v, ok := m[k]; ok && v != "{}" {
						t.Errorf("%s = %v, want {}", k, v)
					}
				}
				if v, ok := m["failure"]; ok && v != "" {
					t.Errorf("failure = %v, want empty", v)
				}
				n++
			}
			if n != 3 {
				t.Fatalf("got %d lines", n)
			}
		})
	}
}

// TestNetworkErrorNotRedacted: a network error on a sensitive command has
// no reply and holds nothing of the command; the specification requires it
// logged as it is ("network error in response to saslStart is not
// redacted").
func TestNetworkErrorNotRedacted(t *testing.T) {
	s, c := newSink(t, Options{Levels: allDebug()})
	f := cmdFields("saslStart")
	f.Redacted = true
	s.CommandFailed(context.Background(), &event.CommandFailed{CommandFields: f, Failure: errors.New("connection reset by peer")})
	if got := c.take()[0].Attrs["failure"]; got != "connection reset by peer" {
		t.Fatalf("failure = %q", got)
	}
}

// TestCommandMessageUnixSocket: a command on a Unix socket logs its path as
// serverHost and no serverPort; the default port 27017 is logged.
func TestCommandMessageUnixSocket(t *testing.T) {
	s, c := newSink(t, Options{Levels: allDebug()})
	for _, tt := range []struct {
		host string
		port int
	}{{"/tmp/mongodb-27017.sock", 0}, {"localhost", 27017}} {
		f := event.CommandFields{CommandName: "ping", DatabaseName: "db", ServerHost: tt.host, ServerPort: tt.port}
		s.CommandStarted(context.Background(), &event.CommandStarted{CommandFields: f, Command: doc(t, `{"ping":1}`)})
		m := c.take()[0]
		port, has := m.Attrs["serverPort"]
		if m.Attrs["serverHost"] != tt.host || has != (tt.port != 0) || (has && port != int64(tt.port)) {
			t.Errorf("%s:%d logged as serverHost %v serverPort %v", tt.host, tt.port, m.Attrs["serverHost"], port)
		}
	}
}

// TestHelloWithoutSpeculativeAuthIsLogged checks that redaction is not
// over-eager: an ordinary hello is shown.
func TestHelloWithoutSpeculativeAuthIsLogged(t *testing.T) {
	s, c := newSink(t, Options{Levels: allDebug()})
	s.CommandStarted(context.Background(), &event.CommandStarted{CommandFields: cmdFields("hello"), Command: doc(t, `{"hello": 1}`)})
	if got := c.take()[0].Attrs["command"]; got != `{"hello":1}` {
		t.Fatalf("command = %v", got)
	}
}

// TestRedactedFlag: the sink follows the producer's Redacted flag, which
// alone knows that a hello reply belongs to a speculativeAuthenticate
// exchange; the reply here holds nothing that names it sensitive.
func TestRedactedFlag(t *testing.T) {
	const secret = "nonce-Secret-77"
	for _, redact := range []bool{true, false} {
		t.Run(fmt.Sprint("Redacted=", redact), func(t *testing.T) {
			s, c := newSink(t, Options{Levels: allDebug()})
			ctx := context.Background()
			f := cmdFields("hello")
			f.Redacted = redact
			cmd, reply := doc(t, `{"hello": 1, "x": "`+secret+`"}`), doc(t, `{"ok": 0, "payload": "`+secret+`"}`)
			if redact {
				cmd = doc(t, `{}`)
			}
			s.CommandStarted(ctx, &event.CommandStarted{CommandFields: f, Command: cmd})
			s.CommandSucceeded(ctx, &event.CommandSucceeded{CommandFields: f, Reply: reply})
			s.CommandFailed(ctx, &event.CommandFailed{CommandFields: f, Reply: reply, Failure: errors.New("failed: " + secret)})
			for _, m := range c.take() {
				for _, k := range []string{"command", "reply", "failure"} {
					v, ok := m.Attrs[k]
					if !ok {
						continue
					}
					if leaked := strings.Contains(fmt.Sprint(v), secret); leaked == redact {
						t.Errorf("%s: %s = %v", m.Message, k, v)
					}
				}
			}
		})
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"abcdef", 10, "abcdef"},
		{"abcdef", 6, "abcdef"},
		{"abcdef", 3, "abc..."},
		{"abcdef", 0, "..."},
		{"aé", 2, "a..."},   // é is 2 bytes; cutting inside it backs up
		{"aé", 3, "aé"},     // exactly fits
		{"a€b", 3, "a..."},  // € is 3 bytes
		{"a€b", 4, "a€..."}, // cut after €
		{"😀x", 1, "..."},    // 4-byte rune cut anywhere inside
		{"😀x", 4, "😀..."},   // exactly after it
		{"ab😀", 5, "ab..."}, // inside the rune
		{"日本語", 7, "日本..."}, // mid third rune
	}
	for _, tt := range tests {
		got := truncate(tt.in, tt.max)
		if got != tt.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
		if !utf8ValidString(got) {
			t.Errorf("truncate(%q, %d) = %q is not valid UTF-8", tt.in, tt.max, got)
		}
	}
}

func TestDocumentTruncation(t *testing.T) {
	big := `{"insert": "c", "documents": [{"s": "` + strings.Repeat("é", 2000) + `"}]}`
	tests := []struct {
		name   string
		maxDoc int
		env    string
		limit  int
	}{
		{"default", 0, "", 1000},
		{"option", 20, "", 20},
		{"env", 0, "51", 51},
		{"option beats env", 30, "51", 30},
		{"bad env falls back", 0, "lots", 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := newSink(t, Options{Levels: allDebug(), MaxDocumentLength: tt.maxDoc, Getenv: func(k string) string {
				if k == "MONGODB_LOG_MAX_DOCUMENT_LENGTH" {
					return tt.env
				}
				return ""
			}})
			c.take() // a warning for a bad value
			s.CommandStarted(context.Background(), &event.CommandStarted{CommandFields: cmdFields("insert"), Command: doc(t, big)})
			got := c.take()[0].Attrs["command"].(string)
			if !strings.HasSuffix(got, "...") {
				t.Fatalf("no ellipsis: %q", got)
			}
			body := strings.TrimSuffix(got, "...")
			if len(body) > tt.limit || len(body) < tt.limit-3 {
				t.Errorf("len %d, want about %d", len(body), tt.limit)
			}
			if !utf8ValidString(body) || !strings.HasPrefix(body, `{"insert":"c"`[:min(len(body), 13)]) {
				t.Errorf("bad body %q", body)
			}
		})
	}
}

// TestFailureTruncation: the logging prose test 2's last step and test 3
// for failures: a failure's text is cut to the maximum document length
// like a document, at a UTF-8 boundary, with the ellipsis.
func TestFailureTruncation(t *testing.T) {
	s, c := newSink(t, Options{Levels: allDebug(), MaxDocumentLength: 5})
	for _, tt := range []struct{ msg, want string }{
		{"no such command: notARealCommand", "no su..."},
		{"ééééé", "éé..."},
		{"abc", "abc"},
	} {
		s.CommandFailed(context.Background(), &event.CommandFailed{CommandFields: cmdFields("notARealCommand"), Failure: errors.New(tt.msg)})
		if got := c.take()[0].Attrs["failure"]; got != tt.want {
			t.Errorf("failure %q logged as %q, want %q", tt.msg, got, tt.want)
		}
	}
}

func TestMalformedDocument(t *testing.T) {
	s, c := newSink(t, Options{Levels: allDebug()})
	s.CommandStarted(context.Background(), &event.CommandStarted{CommandFields: cmdFields("find"), Command: bson.Raw{0x10, 0, 0, 0, 2, 'x', 0}})
	if got := c.take()[0].Attrs["command"]; got != "<malformed BSON document>" {
		t.Fatalf("command = %v", got)
	}
}

func utf8ValidString(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// TestDispatcher checks that a Sink receives every family through
// event.NewDispatcher, and that concurrent logging is safe.
func TestDispatcher(t *testing.T) {
	s, c := newSink(t, Options{Levels: allDebug()})
	d := event.NewDispatcher(s)
	if len(d.Unused()) != 0 || !d.Command() || !d.Pool() || !d.Topology() || !d.Selection() {
		t.Fatal("sink not attached to every family")
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := cmdFields("ping")
			f.ConnectionID = int64(i)
			ctx := d.CommandStarted(ctx, &event.CommandStarted{CommandFields: f, Command: doc(t, `{"ping": 1}`)})
			d.CommandSucceeded(ctx, &event.CommandSucceeded{CommandFields: f})
			d.PoolEvent(ctx, &event.ConnectionCheckedIn{Address: "h", ConnectionID: int64(i)})
			d.TopologyEvent(ctx, &event.TopologyOpening{})
			d.SelectionEvent(ctx, &event.ServerSelectionStarted{})
		}()
	}
	wg.Wait()
	if got := len(c.take()); got != 8*5 {
		t.Fatalf("got %d messages, want 40", got)
	}
}

func TestLoggerOption(t *testing.T) {
	c := newCapture()
	s, err := New(Options{Logger: slog.New(c), Getenv: noEnv, Levels: allDebug()})
	if err != nil {
		t.Fatal(err)
	}
	s.PoolEvent(context.Background(), &event.PoolClosed{Address: "h"})
	if got := c.take(); len(got) != 1 || got[0].Message != "Connection pool closed" {
		t.Fatalf("got %+v", got)
	}
}

// Warn reaches the handler at WARN even when every component is off,
// and respects the handler's own level.
func TestSinkWarn(t *testing.T) {
	for _, handlerLevel := range []slog.Level{slog.LevelDebug, slog.LevelError} {
		var buf bytes.Buffer
		s, err := New(Options{Handler: slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: handlerLevel}), Getenv: func(string) string { return "" }})
		if err != nil {
			t.Fatal(err)
		}
		s.Warn(context.Background(), "unsupported option \"maxPolSize\" ignored", slog.String("option", "maxPolSize"))
		got := buf.String()
		if handlerLevel == slog.LevelError {
			if got != "" {
				t.Errorf("handler at ERROR got %s", got)
			}
			continue
		}
		if !strings.Contains(got, `"level":"WARN"`) || !strings.Contains(got, `"option":"maxPolSize"`) || !strings.Contains(got, `maxPolSize`) {
			t.Errorf("record = %s", got)
		}
	}
}

// TestEventFamilies checks that a Sink takes only the event families of the
// components it logs, so a component turned off costs the driver nothing.
func TestEventFamilies(t *testing.T) {
	off := map[Component]Level{ComponentCommand: LevelOff, ComponentTopology: LevelOff, ComponentServerSelection: LevelOff, ComponentConnection: LevelOff, ComponentFailover: LevelOff}
	for _, tc := range []struct {
		name   string
		levels map[Component]Level
		env    map[string]string
		want   event.Family
	}{
		{"every component off", off, nil, 0},
		{"a handler in code and no level: info, where only the waiting and failover messages exist", nil, nil, event.FamilyTopology | event.FamilySelection},
		{"everything at debug", allDebug(), nil, event.FamilyCommand | event.FamilyPool | event.FamilyTopology | event.FamilySelection},
		{"command at info makes no message", map[Component]Level{ComponentCommand: LevelInformational, ComponentTopology: LevelOff, ComponentServerSelection: LevelOff, ComponentConnection: LevelOff, ComponentFailover: LevelOff}, nil, 0},
		{"command only", map[Component]Level{ComponentCommand: LevelDebug, ComponentTopology: LevelOff, ComponentServerSelection: LevelOff, ComponentConnection: LevelOff, ComponentFailover: LevelOff}, nil, event.FamilyCommand},
		{"failover alone needs topology events", map[Component]Level{ComponentCommand: LevelOff, ComponentTopology: LevelOff, ComponentServerSelection: LevelOff, ComponentConnection: LevelOff, ComponentFailover: LevelInformational}, nil, event.FamilyTopology},
		{"environment turns connection on", map[Component]Level{ComponentCommand: LevelOff, ComponentTopology: LevelOff, ComponentServerSelection: LevelOff, ComponentFailover: LevelOff}, map[string]string{"MONGODB_LOG_CONNECTION": "debug"}, event.FamilyPool},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newSink(t, Options{Levels: tc.levels, Getenv: func(k string) string { return tc.env[k] }})
			if got := s.EventFamilies(); got != tc.want {
				t.Errorf("EventFamilies() = %b, want %b", got, tc.want)
			}
		})
	}
}
