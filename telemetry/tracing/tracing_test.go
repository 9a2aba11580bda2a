package tracing_test

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/logging"
	"github.com/mongoscope/mongoscope/internal/oteltest"
	"github.com/mongoscope/mongoscope/mongotest"
	"github.com/mongoscope/mongoscope/telemetry/tracing"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

func startServer(t *testing.T, o mongotest.Options) *mongotest.Server {
	t.Helper()
	s, err := mongotest.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func connect(t *testing.T, uri string, monitors ...any) *driver.Client {
	t.Helper()
	o := &driver.ClientOptions{Monitors: monitors}
	if err := o.ApplyURI(uri); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := driver.Connect(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Disconnect(context.Background()) })
	return c
}

func attr(s *oteltest.Span, key string) (attribute.Value, bool) {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func named(spans []*oteltest.Span, name string) []*oteltest.Span {
	var out []*oteltest.Span
	for _, s := range spans {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

func one(t *testing.T, spans []*oteltest.Span, name string) *oteltest.Span {
	t.Helper()
	got := named(spans, name)
	if len(got) != 1 {
		t.Fatalf("%d spans named %q; want 1; all: %v", len(got), name, spanNames(spans))
	}
	return got[0]
}

func spanNames(spans []*oteltest.Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name())
	}
	return out
}

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestOptionsAndEnvironment(t *testing.T) {
	on, off, n, neg := true, false, 5, -3
	tests := []struct {
		name    string
		o       tracing.Options
		enabled bool
		max     int
	}{
		{"default off", tracing.Options{Getenv: envOf(nil)}, false, 0},
		{"env 1", tracing.Options{Getenv: envOf(map[string]string{tracing.EnvEnabled: "1"})}, true, 0},
		{"env TRUE", tracing.Options{Getenv: envOf(map[string]string{tracing.EnvEnabled: "TRUE"})}, true, 0},
		{"env Yes", tracing.Options{Getenv: envOf(map[string]string{tracing.EnvEnabled: "Yes"})}, true, 0},
		{"env false", tracing.Options{Getenv: envOf(map[string]string{tracing.EnvEnabled: "false"})}, false, 0},
		{"env on is not a yes", tracing.Options{Getenv: envOf(map[string]string{tracing.EnvEnabled: "on"})}, false, 0},
		{"option beats env", tracing.Options{Enabled: &off, Getenv: envOf(map[string]string{tracing.EnvEnabled: "true"})}, false, 0},
		{"option on", tracing.Options{Enabled: &on, Getenv: envOf(nil)}, true, 0},
		{"length env", tracing.Options{Enabled: &on, Getenv: envOf(map[string]string{tracing.EnvQueryTextMaxLength: "1024"})}, true, 1024},
		{"length env bad", tracing.Options{Enabled: &on, Getenv: envOf(map[string]string{tracing.EnvQueryTextMaxLength: "lots"})}, true, 0},
		{"length env negative", tracing.Options{Enabled: &on, Getenv: envOf(map[string]string{tracing.EnvQueryTextMaxLength: "-4"})}, true, 0},
		{"length option beats env", tracing.Options{Enabled: &on, QueryTextMaxLength: &n, Getenv: envOf(map[string]string{tracing.EnvQueryTextMaxLength: "1024"})}, true, 5},
		{"length option negative", tracing.Options{Enabled: &on, QueryTextMaxLength: &neg, Getenv: envOf(nil)}, true, 0},
	}
	for _, tt := range tests {
		tr := tracing.New(tt.o)
		if tr.Enabled() != tt.enabled || tr.QueryTextMaxLength() != tt.max {
			t.Errorf("%s: Enabled %v, QueryTextMaxLength %d; want %v, %d", tt.name, tr.Enabled(), tr.QueryTextMaxLength(), tt.enabled, tt.max)
		}
	}
	var nilTracer *tracing.Tracer
	if nilTracer.Enabled() || nilTracer.QueryTextMaxLength() != 0 {
		t.Error("a nil Tracer claims to trace")
	}
}

// findOnce runs one find on a new client with tracer attached and returns
// what the recorder got.
func findOnce(t *testing.T, s *mongotest.Server, tr *tracing.Tracer, rec *oteltest.SpanRecorder) []*oteltest.Span {
	t.Helper()
	c := connect(t, s.URI(), tr)
	ctx := context.Background()
	cur, err := c.Database("prose").Collection("c").Find(ctx, bson.D{{Key: "x", Value: 1}})
	if err != nil {
		t.Fatal(err)
	}
	_ = cur.Close(ctx)
	return rec.Ended()
}

// Prose test 1: tracing is turned on and off by
// OTEL_GO_INSTRUMENTATION_MONGODB_ENABLED when the client does not say.
func TestProse1EnabledByEnvironment(t *testing.T) {
	s := startServer(t, mongotest.Options{})
	for _, tc := range []struct {
		env   string
		spans bool
	}{{"false", false}, {"true", true}} {
		t.Setenv(tracing.EnvEnabled, tc.env)
		rec := oteltest.NewSpanRecorder()
		tr := tracing.New(tracing.Options{TracerProvider: oteltest.NewTracerProvider(rec)})
		spans := findOnce(t, s, tr, rec)
		if got := len(named(spans, "find prose.c")) == 1 && len(named(spans, "find")) == 1; got != tc.spans {
			t.Errorf("%s=%s: spans %v; want find spans: %v", tracing.EnvEnabled, tc.env, spanNames(spans), tc.spans)
		}
		if !tc.spans && len(spans) != 0 {
			t.Errorf("%s=%s: %d spans; want none", tracing.EnvEnabled, tc.env, len(spans))
		}
	}
}

// Prose test 2: db.query.text is added when
// OTEL_GO_INSTRUMENTATION_MONGODB_QUERY_TEXT_MAX_LENGTH is a positive
// integer, and left out once it is unset.
func TestProse2QueryTextByEnvironment(t *testing.T) {
	s := startServer(t, mongotest.Options{})
	t.Setenv(tracing.EnvEnabled, "true")
	t.Setenv(tracing.EnvQueryTextMaxLength, "1024")
	for _, want := range []bool{true, false} {
		rec := oteltest.NewSpanRecorder()
		tr := tracing.New(tracing.Options{TracerProvider: oteltest.NewTracerProvider(rec)})
		cmd := one(t, findOnce(t, s, tr, rec), "find")
		v, ok := attr(cmd, "db.query.text")
		if ok != want {
			t.Fatalf("query text limit set %v: db.query.text present %v", want, ok)
		}
		if ok {
			doc, err := bson.ParseExtJSON([]byte(v.AsString()))
			if err != nil {
				t.Fatalf("db.query.text %q: %v", v.AsString(), err)
			}
			if doc.Lookup("find").StringValue() != "c" || doc.Lookup("filter", "x").IsZero() {
				t.Errorf("db.query.text %s lacks the command", doc)
			}
			for _, k := range []string{"lsid", "$db", "$clusterTime", "signature"} {
				if !doc.Lookup(k).IsZero() {
					t.Errorf("db.query.text has %s: %s", k, doc)
				}
			}
		}
		// Step 6: unset it for the next client.
		t.Setenv(tracing.EnvQueryTextMaxLength, "")
	}
}

func TestQueryTextTruncated(t *testing.T) {
	s := startServer(t, mongotest.Options{})
	tr, rec := newRecorded(12)
	cmd := one(t, findOnce(t, s, tr, rec), "find")
	v, _ := attr(cmd, "db.query.text")
	if got := v.AsString(); got != `{"find":"c",...` {
		t.Errorf("db.query.text cut to 12 = %q", got)
	}
}

// The command spans of a find carry the specification's attributes.
func TestCommandAttributes(t *testing.T) {
	s := startServer(t, mongotest.Options{})
	tr, rec := newRecorded(0)
	spans := findOnce(t, s, tr, rec)
	op := one(t, spans, "find prose.c")
	cmd := one(t, spans, "find")
	if cmd.Parent().SpanID() != op.SpanContext().SpanID() {
		t.Error("the command span is not the operation span's child")
	}
	if op.SpanKind() != trace.SpanKindClient || cmd.SpanKind() != trace.SpanKindClient {
		t.Error("a span is not of kind client")
	}
	if _, ok := attr(cmd, "db.query.text"); ok {
		t.Error("db.query.text with no query text length")
	}
	for key, want := range map[string]any{
		"db.system.name": "mongodb", "db.namespace": "prose", "db.collection.name": "c", "db.command.name": "find",
		"db.query.summary": "find prose.c", "network.transport": "tcp", "server.address": "127.0.0.1",
	} {
		if v, ok := attr(cmd, key); !ok || v.AsInterface() != want {
			t.Errorf("%s = %v; want %v", key, v.AsInterface(), want)
		}
	}
	for _, key := range []string{"server.port", "db.mongodb.driver_connection_id", "db.mongodb.server_connection_id"} {
		if v, ok := attr(cmd, key); !ok || v.Type() != attribute.INT64 {
			t.Errorf("%s = %v; want an int64", key, v.AsInterface())
		}
	}
	lsid, ok := attr(cmd, "db.mongodb.lsid")
	if !ok || len(lsid.AsString()) != 36 || strings.Count(lsid.AsString(), "-") != 4 {
		t.Errorf("db.mongodb.lsid = %q; want a UUID", lsid.AsString())
	}
	if sc := op.InstrumentationScope(); sc.Name != driver.DriverName || sc.Version != driver.DriverVersion() {
		t.Errorf("instrumentation scope %q %q; want %q %q", sc.Name, sc.Version, driver.DriverName, driver.DriverVersion())
	}
}

// The operation span gets the span events and attributes beyond the
// specification.
func TestSpanEventsAndTotals(t *testing.T) {
	s := startServer(t, mongotest.Options{})
	tr, rec := newRecorded(0)
	op := one(t, findOnce(t, s, tr, rec), "find prose.c")
	events := map[string]oteltest.Event{}
	for _, e := range op.Events() {
		events[e.Name] = e
	}
	sel, ok := events[tracing.EventServerSelected]
	if !ok {
		t.Fatalf("no %q event: %v", tracing.EventServerSelected, op.Events())
	}
	co, ok := events[tracing.EventCheckedOut]
	if !ok {
		t.Fatalf("no %q event: %v", tracing.EventCheckedOut, op.Events())
	}
	if !sel.Time.Before(co.Time) && !sel.Time.Equal(co.Time) {
		t.Error("the checkout came before the selection")
	}
	keys := func(e oteltest.Event) map[string]bool {
		m := map[string]bool{}
		for _, kv := range e.Attributes {
			m[string(kv.Key)] = true
		}
		return m
	}
	if k := keys(sel); !k["server.address"] || !k["server.port"] || !k[tracing.AttrWait] {
		t.Errorf("server selected event attributes %v", sel.Attributes)
	}
	if k := keys(co); !k["db.mongodb.driver_connection_id"] || !k[tracing.AttrWait] || !k["server.port"] {
		t.Errorf("connection checked out event attributes %v", co.Attributes)
	}
	// Both events name the server the same way: a host, and a port.
	for _, e := range []oteltest.Event{sel, co} {
		for _, kv := range e.Attributes {
			if kv.Key == "server.address" && strings.Contains(kv.Value.AsString(), ":") {
				t.Errorf("%s: server.address %q holds a port", e.Name, kv.Value.AsString())
			}
		}
	}
	for _, key := range []string{tracing.AttrSelectionDuration, tracing.AttrCheckoutDuration} {
		if v, ok := attr(op, key); !ok || v.Type() != attribute.FLOAT64 || v.AsFloat64() < 0 {
			t.Errorf("%s = %v", key, v.AsInterface())
		}
	}
	if v, ok := attr(op, tracing.AttrAttempts); !ok || v.AsInt64() != 1 {
		t.Errorf("%s = %v; want 1", tracing.AttrAttempts, v.AsInterface())
	}
	if _, ok := attr(op, tracing.AttrTimeout); ok {
		t.Errorf("%s with no time budget", tracing.AttrTimeout)
	}
	// With a deadline, the budget is reported.
	c := connect(t, s.URI(), tr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Database("prose").Collection("d").InsertMany(ctx, []any{bson.D{{Key: "x", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	ins := one(t, rec.Ended(), "insert prose.d")
	if v, ok := attr(ins, tracing.AttrTimeout); !ok || v.AsFloat64() <= 0 || v.AsFloat64() > 30 {
		t.Errorf("%s = %v; want the 30 s budget", tracing.AttrTimeout, v.AsInterface())
	}
}

func failPoint(t *testing.T, s *mongotest.Server, cmd string, code int32, labels ...string) {
	t.Helper()
	data := bson.D{{Key: "failCommands", Value: bson.A{cmd}}, {Key: "errorCode", Value: code}}
	if len(labels) > 0 {
		a := bson.A{}
		for _, l := range labels {
			a = append(a, l)
		}
		data = append(data, bson.E{Key: "errorLabels", Value: a})
	}
	if err := s.SetFailPoint(bson.D{{Key: "configureFailPoint", Value: "failCommand"},
		{Key: "mode", Value: bson.D{{Key: "times", Value: 1}}}, {Key: "data", Value: data}}); err != nil {
		t.Fatal(err)
	}
}

func hasException(s *oteltest.Span) bool {
	for _, e := range s.Events() {
		if e.Name != "exception" {
			continue
		}
		var msg, stack bool
		for _, kv := range e.Attributes {
			msg = msg || kv.Key == "exception.message" && kv.Value.AsString() != ""
			stack = stack || kv.Key == "exception.stacktrace" && kv.Value.AsString() != ""
		}
		return msg && stack
	}
	return false
}

// A retried command gets one span per attempt, siblings under the
// operation's span; the failed one records its error and code.
func TestRetriesAreSiblings(t *testing.T) {
	s := startServer(t, mongotest.Options{})
	tr, rec := newRecorded(0)
	c := connect(t, s.URI(), tr)
	coll := c.Database("prose").Collection("c")
	failPoint(t, s, "find", 89)
	cur, err := coll.Find(context.Background(), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	_ = cur.Close(context.Background())
	spans := rec.Ended()
	op := one(t, spans, "find prose.c")
	cmds := named(spans, "find")
	if len(cmds) != 2 {
		t.Fatalf("%d find command spans; want 2 (one retry)", len(cmds))
	}
	for _, cs := range cmds {
		if cs.Parent().SpanID() != op.SpanContext().SpanID() {
			t.Error("an attempt's span is not the operation span's child")
		}
	}
	first, second := cmds[0], cmds[1]
	if first.StartTime().After(second.StartTime()) {
		first, second = second, first
	}
	if code, _ := attr(first, "db.response.status_code"); code.AsString() != "89" || first.Status().Code != codes.Error || !hasException(first) {
		t.Errorf("failed attempt: status_code %q, status %v, exception %v", code.AsString(), first.Status(), hasException(first))
	}
	if _, ok := attr(second, "db.response.status_code"); ok || second.Status().Code == codes.Error {
		t.Error("the successful retry is marked failed")
	}
	if v, _ := attr(op, tracing.AttrAttempts); v.AsInt64() != 2 {
		t.Errorf("%s = %v; want 2", tracing.AttrAttempts, v.AsInterface())
	}
	if op.Status().Code == codes.Error {
		t.Error("the operation that succeeded on retry is marked failed")
	}
}

// An operation that fails records the exception on its own span.
func TestOperationError(t *testing.T) {
	s := startServer(t, mongotest.Options{})
	tr, rec := newRecorded(0)
	c := connect(t, s.URI(), tr)
	failPoint(t, s, "insert", 2) // BadValue: not retryable
	_, err := c.Database("prose").Collection("c").InsertMany(context.Background(), []any{bson.D{{Key: "x", Value: 1}}})
	if err == nil {
		t.Fatal("insert succeeded despite the fail point")
	}
	spans := rec.Ended()
	op := one(t, spans, "insert prose.c")
	cmd := one(t, spans, "insert")
	if op.Status().Code != codes.Error || !hasException(op) {
		t.Errorf("operation span: status %v, exception %v", op.Status(), hasException(op))
	}
	if cmd.Status().Code != codes.Error || !hasException(cmd) {
		t.Errorf("command span: status %v, exception %v", cmd.Status(), hasException(cmd))
	}
	if code, _ := attr(cmd, "db.response.status_code"); code.AsString() != "2" {
		t.Errorf("db.response.status_code = %q; want \"2\"", code.AsString())
	}
}

// A cursor's getMore and killCursors are parented to the operation that
// opened the cursor, and linked to the span current where they run.
func TestGetMoreParentedToFind(t *testing.T) {
	s := startServer(t, mongotest.Options{})
	tr, rec := newRecorded(0)
	tp := oteltest.NewTracerProvider(rec)
	app := tp.Tracer("app")
	c := connect(t, s.URI(), tr)
	coll := c.Database("prose").Collection("cur")
	ctx := context.Background()
	var docs []any
	for i := 0; i < 7; i++ {
		docs = append(docs, bson.D{{Key: "_id", Value: i}})
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	bs := int32(2)
	cur, err := coll.Find(ctx, bson.D{}, &driver.FindOptions{BatchSize: &bs})
	if err != nil {
		t.Fatal(err)
	}
	// Iterate under a span of the application's: the getMores are made
	// there, but belong to the find.
	ictx, iter := app.Start(ctx, "iterate")
	for i := 0; i < 3; i++ {
		if !cur.Next(ictx) {
			t.Fatal(cur.Err())
		}
	}
	if err := cur.Close(ictx); err != nil {
		t.Fatal(err)
	}
	iter.End()
	spans := rec.Ended()
	find := one(t, spans, "find prose.cur")
	findCmd := one(t, spans, "find")
	if id, ok := attr(findCmd, "db.mongodb.cursor_id"); !ok || id.AsInt64() == 0 {
		t.Error("the find command span has no cursor id")
	}
	for _, name := range []string{"getMore prose.cur", "killCursors prose.cur"} {
		op := one(t, spans, name)
		if op.Parent().SpanID() != find.SpanContext().SpanID() || op.SpanContext().TraceID() != find.SpanContext().TraceID() {
			t.Errorf("%s is not the find operation span's child", name)
		}
		links := op.Links()
		if len(links) != 1 || links[0].SpanContext.SpanID() != iter.SpanContext().SpanID() {
			t.Errorf("%s links %v; want the iterating span", name, links)
		}
		cmdName, _, _ := strings.Cut(name, " ")
		cmd := one(t, spans, cmdName)
		if cmd.Parent().SpanID() != op.SpanContext().SpanID() {
			t.Errorf("the %s command span is not under its operation span", cmdName)
		}
		if id, ok := attr(cmd, "db.mongodb.cursor_id"); !ok || id.AsInt64() == 0 {
			t.Errorf("the %s command span has no cursor id", cmdName)
		}
	}
}

// Authentication commands make no span, and no span or span event holds
// the credentials or the SASL exchange.
func TestSensitiveCommandsHaveNoSpan(t *testing.T) {
	const user, password = "tracer-user", "Sekrit-pencil-99"
	s := startServer(t, mongotest.Options{Auth: true})
	if err := s.AddUser("admin", user, password); err != nil {
		t.Fatal(err)
	}
	tr, rec := newRecorded(1 << 20)
	uri := "mongodb://" + user + ":" + password + "@" + s.Addr() + "/?authSource=admin"
	c := connect(t, uri, tr)
	if _, err := c.Database("prose").Collection("c").InsertMany(context.Background(), []any{bson.D{{Key: "x", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RunCommand(context.Background(), "admin", bson.D{{Key: "saslStart", Value: 1}, {Key: "mechanism", Value: "SCRAM-SHA-256"}, {Key: "payload", Value: []byte("n,,n=" + user + ",r=abc")}}); err == nil {
		t.Log("saslStart by hand succeeded")
	}
	spans := rec.Ended()
	if len(named(spans, "insert")) != 1 {
		t.Fatalf("spans %v; want the insert's", spanNames(spans))
	}
	for _, sp := range spans {
		name := strings.ToLower(sp.Name())
		if strings.Contains(name, "sasl") || strings.Contains(name, "authenticate") {
			t.Errorf("a span for a sensitive command: %q", sp.Name())
		}
		var texts []string
		for _, kv := range sp.Attributes() {
			texts = append(texts, kv.Value.Emit())
		}
		for _, e := range sp.Events() {
			texts = append(texts, e.Name)
			for _, kv := range e.Attributes {
				texts = append(texts, kv.Value.Emit())
			}
		}
		for _, txt := range texts {
			if strings.Contains(txt, password) || strings.Contains(strings.ToLower(txt), "sasl") || strings.Contains(txt, "n="+user) {
				t.Errorf("span %q holds credential text: %q", sp.Name(), txt)
			}
		}
	}
}

// A disabled Tracer, attached, makes no spans and allocates nothing.
func TestDisabledTracerIsFree(t *testing.T) {
	rec := oteltest.NewSpanRecorder()
	off := false
	tr := tracing.New(tracing.Options{TracerProvider: oteltest.NewTracerProvider(rec), Enabled: &off})
	s := startServer(t, mongotest.Options{})
	findOnce(t, s, tr, rec)
	if n := len(rec.Ended()); n != 0 {
		t.Fatalf("a disabled Tracer made %d spans", n)
	}
	ctx := context.Background()
	os := &event.OperationStarted{Name: "find", Database: "d", Collection: "c"}
	of := &event.OperationFinished{Name: "find", Err: errors.New("x")}
	cs := &event.CommandStarted{CommandFields: event.CommandFields{CommandName: "find"}, Command: bson.Raw{5, 0, 0, 0, 0}}
	cok := &event.CommandSucceeded{}
	cf := &event.CommandFailed{Failure: errors.New("x")}
	var pe event.PoolEvent = &event.ConnectionCheckedOut{Address: "h:1"}
	var se event.SelectionEvent = &event.ServerSelectionSucceeded{ServerHost: "h"}
	allocs := testing.AllocsPerRun(1000, func() {
		c := tr.OperationStarted(ctx, os)
		c = tr.CommandStarted(c, cs)
		tr.CommandSucceeded(c, cok)
		tr.CommandFailed(c, cf)
		tr.PoolEvent(c, pe)
		tr.SelectionEvent(c, se)
		tr.OperationFinished(c, of)
	})
	if allocs != 0 {
		t.Errorf("a disabled Tracer allocates %v times per event set", allocs)
	}
	// It asks for no event family, so the driver builds no event for it;
	// an enabled one asks for the four it uses.
	if f := tr.EventFamilies(); f != 0 {
		t.Errorf("a disabled Tracer asks for event families %b", f)
	}
	if d := event.NewDispatcher(tr); d.Operation() || d.Command() || d.Pool() || d.Selection() || d.Topology() || len(d.Unused()) != 0 {
		t.Error("a dispatcher holding only a disabled Tracer has a family on, or refuses it")
	}
	on := true
	want := event.FamilyOperation | event.FamilyCommand | event.FamilySelection | event.FamilyPool
	if f := tracing.New(tracing.Options{Enabled: &on}).EventFamilies(); f != want {
		t.Errorf("an enabled Tracer asks for %b, want %b", f, want)
	}
}

// The hooks take any input without panicking: empty and malformed
// commands, nil events, contexts the Tracer never saw.
func TestHooksTakeAnyInput(t *testing.T) {
	tr, rec := newRecorded(10)
	ctx := context.Background()
	for _, cmd := range []bson.Raw{nil, {}, {1, 2, 3}, {5, 0, 0, 0, 0}, {12, 0, 0, 0, 2, 'a', 0, 9, 0, 0, 0, 0}} {
		c := tr.CommandStarted(ctx, &event.CommandStarted{CommandFields: event.CommandFields{CommandName: "getMore"}, Command: cmd})
		tr.CommandSucceeded(c, &event.CommandSucceeded{Reply: cmd})
		c = tr.CommandStarted(ctx, &event.CommandStarted{CommandFields: event.CommandFields{CommandName: "killCursors"}, Command: cmd})
		tr.CommandFailed(c, &event.CommandFailed{Reply: cmd})
	}
	tr.CommandStarted(ctx, nil)
	tr.CommandSucceeded(ctx, nil)
	tr.CommandFailed(ctx, nil)
	tr.OperationStarted(ctx, nil)
	tr.OperationFinished(ctx, nil)
	tr.OperationFinished(ctx, &event.OperationFinished{})
	tr.PoolEvent(ctx, nil)
	tr.SelectionEvent(ctx, nil)
	tr.OperationStarted(ctx, &event.OperationStarted{Name: "getMore", Origin: context.Background()})
	if len(rec.Ended()) != 10 {
		t.Errorf("%d spans ended; want the 10 commands'", len(rec.Ended()))
	}
}

// A server reached over a Unix domain socket is network.transport "unix"
// with no port.
func TestUnixSocketTransport(t *testing.T) {
	tr, rec := newRecorded(0)
	ctx := context.Background()
	cmd, _ := bson.Marshal(bson.D{{Key: "ping", Value: 1}})
	for _, host := range []string{"/tmp/mongodb-27017.sock", "db.example.com"} {
		port := 0
		if !strings.HasSuffix(host, ".sock") {
			port = 27017
		}
		c := tr.CommandStarted(ctx, &event.CommandStarted{CommandFields: event.CommandFields{CommandName: "ping", DatabaseName: "admin", ServerHost: host, ServerPort: port}, Command: cmd})
		tr.CommandSucceeded(c, &event.CommandSucceeded{})
	}
	spans := rec.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans; want 2", len(spans))
	}
	for i, want := range []string{"unix", "tcp"} {
		v, _ := attr(spans[i], "network.transport")
		_, hasPort := attr(spans[i], "server.port")
		if v.AsString() != want || hasPort != (want == "tcp") {
			t.Errorf("span %d: network.transport %q, server.port present %v; want %q", i, v.AsString(), hasPort, want)
		}
	}
}

// Two Tracers on one client each make their own, whole, spans.
func TestTwoTracers(t *testing.T) {
	s := startServer(t, mongotest.Options{})
	t1, r1 := newRecorded(0)
	t2, r2 := newRecorded(0)
	c := connect(t, s.URI(), t1, t2)
	if _, err := c.Database("prose").Collection("c").InsertMany(context.Background(), []any{bson.D{{Key: "x", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	for i, rec := range []*oteltest.SpanRecorder{r1, r2} {
		spans := rec.Ended()
		op, cmd := one(t, spans, "insert prose.c"), one(t, spans, "insert")
		if cmd.Parent().SpanID() != op.SpanContext().SpanID() {
			t.Errorf("tracer %d: the command span is not under its operation span", i+1)
		}
		if len(op.Events()) < 2 {
			t.Errorf("tracer %d: operation span events %v", i+1, op.Events())
		}
	}
}

// captureHandler keeps the span_id of each command log message.
type captureHandler struct {
	mu  sync.Mutex
	ids map[string][]string // message -> span ids
}

func (h *captureHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *captureHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *captureHandler) WithGroup(string) slog.Handler            { return h }
func (h *captureHandler) Handle(_ context.Context, r slog.Record) error {
	var comp, span string
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "component":
			comp = a.Value.String()
		case "span_id":
			span = a.Value.String()
		}
		return true
	})
	if comp == "command" {
		h.mu.Lock()
		h.ids[r.Message] = append(h.ids[r.Message], span)
		h.mu.Unlock()
	}
	return nil
}

// The log sink's command messages name the command's span: the logs and
// the spans of one client agree.
func TestCommandLogsNameTheCommandSpan(t *testing.T) {
	s := startServer(t, mongotest.Options{})
	tr, rec := newRecorded(0)
	h := &captureHandler{ids: map[string][]string{}}
	o := &driver.ClientOptions{Monitors: []any{tr}, Logging: &logging.Options{Handler: h,
		Levels: map[logging.Component]logging.Level{logging.ComponentCommand: logging.LevelDebug}, Getenv: envOf(nil)}}
	if err := o.ApplyURI(s.URI()); err != nil {
		t.Fatal(err)
	}
	c, err := driver.Connect(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Disconnect(context.Background())
	if _, err := c.Database("prose").Collection("c").InsertMany(context.Background(), []any{bson.D{{Key: "x", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	want := one(t, rec.Ended(), "insert").SpanContext().SpanID().String()
	for _, msg := range []string{"Command started", "Command succeeded"} {
		if ids := h.ids[msg]; len(ids) != 1 || ids[0] != want {
			t.Errorf("%q span ids %v; want [%s]", msg, ids, want)
		}
	}
}

// An operation the driver runs inside another nests under it, while two
// Tracers handed the same operation both start under the caller's span.
func TestParentResolution(t *testing.T) {
	t1, rec := newRecorded(0)
	t2, _ := newRecorded(0)
	tp := oteltest.NewTracerProvider(rec)
	ctx, app := tp.Tracer("app").Start(context.Background(), "app")
	outer := &event.OperationStarted{Name: "find", Database: "d", Collection: "c"}
	octx := t1.OperationStarted(ctx, outer)
	octx = t2.OperationStarted(octx, outer) // t2 on the same client
	inner := &event.OperationStarted{Name: "killCursors", Database: "d", Collection: "c"}
	ictx := t1.OperationStarted(octx, inner)
	t1.OperationFinished(ictx, &event.OperationFinished{})
	t2.OperationFinished(octx, &event.OperationFinished{})
	t1.OperationFinished(octx, &event.OperationFinished{})
	app.End()
	spans := rec.Ended()
	find := one(t, spans, "find d.c")
	if find.Parent().SpanID() != app.SpanContext().SpanID() {
		t.Error("the operation span is not under the caller's span")
	}
	if in := one(t, spans, "killCursors d.c"); in.Parent().SpanID() != find.SpanContext().SpanID() {
		t.Error("an operation run inside another is not its child")
	}
	// Typed nil events are ignored.
	t1.SelectionEvent(octx, (*event.ServerSelectionSucceeded)(nil))
	t1.SelectionEvent(octx, (*event.ServerSelectionStarted)(nil))
	t1.PoolEvent(octx, (*event.ConnectionCheckedOut)(nil))
	t1.PoolEvent(octx, (*event.ConnectionCheckOutFailed)(nil))
}

// Operations get the specification's names: a command the application
// wrote is runCommand, on its database and no collection, even when it
// names one.
func TestOperationNames(t *testing.T) {
	s := startServer(t, mongotest.Options{})
	tr, rec := newRecorded(0)
	c := connect(t, s.URI(), tr)
	ctx := context.Background()
	if _, err := c.RunCommand(ctx, "prose", bson.D{{Key: "count", Value: "c"}}); err != nil {
		t.Fatal(err)
	}
	db := c.Database("prose")
	if err := db.CreateCollection(ctx, "made"); err != nil {
		t.Fatal(err)
	}
	if err := db.Collection("made").Drop(ctx); err != nil {
		t.Fatal(err)
	}
	spans := rec.Ended()
	rc := one(t, spans, "runCommand prose")
	if v, _ := attr(rc, "db.operation.name"); v.AsString() != "runCommand" {
		t.Errorf("db.operation.name = %q", v.AsString())
	}
	if _, ok := attr(rc, "db.collection.name"); ok {
		t.Error("runCommand has a db.collection.name")
	}
	if cmd := one(t, spans, "count"); cmd.Parent().SpanID() != rc.SpanContext().SpanID() {
		t.Error("the count command is not under runCommand")
	} else if v, _ := attr(cmd, "db.collection.name"); v.AsString() != "c" {
		t.Errorf("the count command's db.collection.name = %q", v.AsString())
	}
	one(t, spans, "createCollection prose.made")
	one(t, spans, "dropCollection prose.made")
}

// Under a sampler that samples nothing, the hooks build no attribute,
// event or query text (they allocate little beyond what the SDK needs for
// its non-recording spans), yet the spans still propagate: the command
// span is current in the context the driver carries on, under the
// operation's, and the SDK makes children of it, non-recording, in the
// same trace.
func TestUnsampledSpansCostLittle(t *testing.T) {
	rec := oteltest.NewSpanRecorder()
	tp := oteltest.NewTracerProvider(rec, oteltest.NeverSample())
	on, text := true, 1000
	tr := tracing.New(tracing.Options{TracerProvider: tp, Enabled: &on, QueryTextMaxLength: &text})
	cmd, _ := bson.Marshal(bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "x", Value: 1}}},
		{Key: "lsid", Value: bson.D{{Key: "id", Value: bson.Binary{Subtype: 4, Data: make([]byte, 16)}}}}, {Key: "$db", Value: "d"}})
	reply, _ := bson.Marshal(bson.D{{Key: "cursor", Value: bson.D{{Key: "id", Value: int64(7)}, {Key: "ns", Value: "d.c"}}}, {Key: "ok", Value: 1}})
	failed, _ := bson.Marshal(bson.D{{Key: "ok", Value: 0}, {Key: "code", Value: 11000}})
	sid := int64(9)
	os := &event.OperationStarted{Name: "find", Database: "d", Collection: "c"}
	of := &event.OperationFinished{Name: "find", Database: "d", Collection: "c", Attempts: 1, Timeout: time.Second, Err: errors.New("x")}
	f := event.CommandFields{CommandName: "find", DatabaseName: "d", ServerHost: "h", ServerPort: 27017, ConnectionID: 1, ServerConnectionID: &sid}
	cs := &event.CommandStarted{CommandFields: f, Command: cmd}
	ok := &event.CommandSucceeded{CommandFields: f, Reply: reply}
	cf := &event.CommandFailed{CommandFields: f, Reply: failed, Failure: errors.New("x")}
	var sst, sel, sfail event.SelectionEvent = &event.ServerSelectionStarted{}, &event.ServerSelectionSucceeded{ServerHost: "h", ServerPort: 27017}, &event.ServerSelectionFailed{}
	var co, cof event.PoolEvent = &event.ConnectionCheckedOut{Address: "h:27017", ConnectionID: 1}, &event.ConnectionCheckOutFailed{Address: "h:27017"}
	ctx := context.Background()
	run := func() {
		octx := tr.OperationStarted(ctx, os)
		tr.SelectionEvent(octx, sst)
		tr.SelectionEvent(octx, sfail)
		tr.SelectionEvent(octx, sst)
		tr.SelectionEvent(octx, sel)
		tr.PoolEvent(octx, cof)
		tr.PoolEvent(octx, co)
		tr.CommandSucceeded(tr.CommandStarted(octx, cs), ok)
		tr.CommandFailed(tr.CommandStarted(octx, cs), cf)
		tr.OperationFinished(octx, of)
	}
	// The provider's share: for each span, its start configuration, the
	// non-recording span and the context holding it; ours: one state per
	// span and the start attributes' option of each command. (14 with the
	// OTel SDK v1.38.0, 9 of them the SDK's; bench's BenchmarkOperationHooks
	// measures the SDK.)
	const limit = 16
	allocs := testing.AllocsPerRun(200, run)
	if allocs > limit {
		t.Errorf("unsampled hooks allocate %v times per operation of two commands; want at most %d", allocs, limit)
	}
	t.Logf("unsampled hooks: %v allocations per operation of two commands", allocs)
	if n := len(rec.Ended()); n != 0 {
		t.Errorf("%d spans recorded under a sampler that samples nothing", n)
	}

	octx := tr.OperationStarted(ctx, os)
	op := trace.SpanFromContext(octx)
	cctx := tr.CommandStarted(octx, cs)
	cmdSpan := trace.SpanFromContext(cctx)
	if op.IsRecording() || cmdSpan.IsRecording() {
		t.Fatal("spans record under a sampler that samples nothing")
	}
	osc, csc := op.SpanContext(), cmdSpan.SpanContext()
	if !osc.IsValid() || !csc.IsValid() || csc.SpanID() == osc.SpanID() || csc.TraceID() != osc.TraceID() {
		t.Fatalf("the command span %v is not a span of its operation's %v trace", csc, osc)
	}
	_, child := tp.Tracer("app").Start(cctx, "child")
	if child.IsRecording() || !child.SpanContext().IsValid() || child.SpanContext().TraceID() != osc.TraceID() || child.SpanContext().SpanID() == csc.SpanID() {
		t.Errorf("a child of the command span: recording %v, span context %v", child.IsRecording(), child.SpanContext())
	}
	child.End()
	tr.CommandSucceeded(cctx, ok)
	tr.OperationFinished(octx, of)
}

// Past the names the Tracer keeps built (a few hundred), operation and
// command spans are named and attributed as before.
func TestManyNamespaces(t *testing.T) {
	tr, rec := newRecorded(0)
	ctx := context.Background()
	const n = 600
	for i := 0; i < n; i++ {
		coll := "c" + strconv.Itoa(i)
		cmd, _ := bson.Marshal(bson.D{{Key: "find", Value: coll}, {Key: "$db", Value: "d"}})
		octx := tr.OperationStarted(ctx, &event.OperationStarted{Name: "find", Database: "d", Collection: coll})
		f := event.CommandFields{CommandName: "find", DatabaseName: "d", ServerHost: "h", ServerPort: 27017 + i%3}
		tr.CommandSucceeded(tr.CommandStarted(octx, &event.CommandStarted{CommandFields: f, Command: cmd}), &event.CommandSucceeded{CommandFields: f})
		tr.OperationFinished(octx, &event.OperationFinished{Name: "find"})
	}
	spans := rec.Ended()
	if len(spans) != 2*n {
		t.Fatalf("%d spans, want %d", len(spans), 2*n)
	}
	for i := 0; i < n; i++ {
		coll := "c" + strconv.Itoa(i)
		cmd, op := spans[2*i], spans[2*i+1]
		if op.Name() != "find d."+coll || cmd.Name() != "find" {
			t.Fatalf("spans %q and %q for %s", op.Name(), cmd.Name(), coll)
		}
		if v, _ := attr(op, "db.operation.summary"); v.AsString() != "find d."+coll {
			t.Errorf("operation summary %q", v.AsString())
		}
		if v, _ := attr(cmd, "db.query.summary"); v.AsString() != "find d."+coll {
			t.Errorf("command summary %q", v.AsString())
		}
		if v, _ := attr(cmd, "server.port"); v.AsInt64() != int64(27017+i%3) {
			t.Errorf("command server.port %d", v.AsInt64())
		}
	}
}
