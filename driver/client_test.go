package driver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
	"github.com/mongoscope/mongoscope/driver/logging"
	"github.com/mongoscope/mongoscope/mongotest"
)

// connect connects to uri with the given options and disconnects at the
// end of the test.
func connect(t *testing.T, uri string, o *ClientOptions) *Client {
	t.Helper()
	if o == nil {
		o = &ClientOptions{}
	}
	if err := o.ApplyURI(uri); err != nil {
		t.Fatal(err)
	}
	c, err := Connect(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Disconnect(context.Background()) })
	return c
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestClientRunCommand(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	c := connect(t, s.URI(), nil)
	ctx := ctxTimeout(t, 10*time.Second)
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	reply, err := c.RunCommand(ctx, "app", bson.D{{Key: "insert", Value: "people"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}, {Key: "name", Value: "Ada"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := reply.Lookup("n").AsInt64OK(); n != 1 {
		t.Fatalf("insert reply %v", reply)
	}
	reply, err = c.RunCommand(ctx, "app", bson.D{{Key: "find", Value: "people"}, {Key: "filter", Value: bson.D{{Key: "_id", Value: 1}}}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(reply.String(), "Ada") {
		t.Fatalf("find reply %v", reply)
	}

	// A refusal is a CommandError.
	_, err = c.RunCommand(ctx, "app", bson.D{{Key: "noSuchCommand", Value: 1}})
	var ce *CommandError
	if !errors.As(err, &ce) || ce.Code != 59 {
		t.Fatalf("unknown command: %v", err)
	}

	// Mistakes in the call are refused before anything is sent, as
	// ArgumentErrors naming the argument.
	for _, tc := range []struct {
		name, db string
		cmd      any
		opts     *RunCommandOptions
		arg      string
	}{
		{"nil command", "app", nil, nil, "cmd"},
		{"empty command", "app", bson.D{}, nil, "cmd"},
		{"malformed raw", "app", bson.Raw{1, 2, 3}, nil, "cmd"},
		{"$db in the command", "app", bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "x"}}, nil, "cmd"},
		{"multi-key bson.M", "app", bson.M{"find": "people", "limit": 1}, nil, "cmd"},
		{"multi-key map", "app", map[string]any{"find": "people", "limit": 1}, nil, "cmd"},
		{"pointer to a multi-key map", "app", &map[string]int{"count": 1, "limit": 1}, nil, "cmd"},
		{"empty database", "", bson.D{{Key: "ping", Value: 1}}, nil, "db"},
		{"bad read preference mode", "app", bson.D{{Key: "ping", Value: 1}}, &RunCommandOptions{ReadPreference: "sometimes"}, "ReadPreference"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var args []*RunCommandOptions
			if tc.opts != nil {
				args = append(args, tc.opts)
			}
			_, err := c.RunCommand(ctx, tc.db, tc.cmd, args...)
			var ae *ArgumentError
			if !errors.As(err, &ae) || ae.Argument != tc.arg {
				t.Fatalf("RunCommand = %v, want an ArgumentError on %s", err, tc.arg)
			}
			var oe *OptionError
			if errors.As(err, &oe) {
				t.Errorf("a mistake in a call is an OptionError: %v", err)
			}
			if strings.Contains(tc.name, "multi-key") && !strings.Contains(err.Error(), "use bson.D") {
				t.Errorf("the error does not say to use bson.D: %v", err)
			}
		})
	}
	// A map with one key has no order to lose.
	if _, err := c.RunCommand(ctx, "app", bson.M{"ping": 1}); err != nil {
		t.Errorf("single-key bson.M: %v", err)
	}

	snap := c.Topology()
	if snap.Kind != "Single" || len(snap.Servers) != 1 || snap.Servers[0].Kind != "Standalone" {
		t.Fatalf("snapshot %+v", snap)
	}
	if p := snap.Servers[0].Pool; p.State != "ready" || p.Total < 1 || p.Max != DefaultMaxPoolSize || p.CreatedTotal < 1 {
		t.Errorf("pool stats %+v", p)
	}
	if err := c.Disconnect(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := c.Disconnect(context.Background()); !errors.Is(err, ErrClientDisconnected) {
		t.Fatalf("second Disconnect = %v", err)
	}
	if err := c.Ping(ctx); !errors.Is(err, ErrClientDisconnected) {
		t.Fatalf("Ping after Disconnect = %v", err)
	}
}

// driverGoroutines lists goroutines running the driver's or the logging
// sink's code (not the test's, not mongotest's).
func driverGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "mongoscope/driver/internal/") || strings.Contains(g, "mongoscope/telemetry/") {
			out = append(out, g)
		}
	}
	return out
}

func TestDisconnectLeavesNoGoroutines(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{})
	for _, mode := range []string{"stream", "poll"} {
		t.Run(mode, func(t *testing.T) {
			var logs bytes.Buffer
			o := &ClientOptions{
				Logging:    &logging.Options{Handler: slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.Level(-100)}), Levels: map[logging.Component]logging.Level{logging.ComponentTopology: logging.LevelDebug}},
				URIOptions: URIOptions{MinPoolSize: Ptr(2)},
			}
			if err := o.ApplyURI(rs.URI() + "&serverMonitoringMode=" + mode + "&heartbeatFrequencyMS=500"); err != nil {
				t.Fatal(err)
			}
			c, err := Connect(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			ctx := ctxTimeout(t, 10*time.Second)
			for i := 0; i < 20; i++ {
				if _, err := c.RunCommand(ctx, "admin", bson.D{{Key: "ping", Value: 1}}, &RunCommandOptions{ReadPreference: "nearest"}); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(300 * time.Millisecond) // pools populate, RTT monitors start
			if g := driverGoroutines(); len(g) < 3 {
				t.Fatalf("only %d driver goroutines while connected: the check would prove nothing", len(g))
			}
			if err := c.Disconnect(context.Background()); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(time.Second)
			for {
				g := driverGoroutines()
				if len(g) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%d goroutines left after Disconnect:\n%s", len(g), strings.Join(g, "\n\n"))
				}
				time.Sleep(10 * time.Millisecond)
			}
			if !strings.Contains(logs.String(), "Stopped topology monitoring") {
				t.Errorf("no topology-closed log message:\n%s", logs.String())
			}
		})
	}
}

type ctxKey struct{}

// fanOut describes the records TestMonitorsFanOut compares: the event, its
// operation or command name, and after "@" the value its context carried.
// Pool, selection and topology events other than those named are left out.
func fanOut(recs []eventtest.Record) []string {
	var out []string
	for _, r := range recs {
		var s string
		switch e := r.Event.(type) {
		case *event.OperationStarted:
			s = "OperationStarted:" + e.Name
		case *event.OperationFinished:
			s = "OperationFinished:" + e.Name
		case *event.CommandStarted:
			s = "CommandStarted:" + e.CommandName
		case *event.CommandSucceeded:
			s = "CommandSucceeded:" + e.CommandName
		case *event.CommandFailed:
			s = "CommandFailed:" + e.CommandName
		case *event.ConnectionCheckOutStarted:
			s = "CheckOutStarted"
		case *event.ConnectionCheckedOut:
			s = "CheckedOut"
		case *event.ConnectionCheckedIn:
			s = "CheckedIn"
		case *event.ServerSelectionStarted:
			s = "SelectionStarted"
		case *event.ServerSelectionSucceeded:
			s = "SelectionSucceeded"
		case *event.ServerSelectionWaiting:
			s = "SelectionWaiting"
		case *event.ServerSelectionFailed:
			s = "SelectionFailed"
		case *event.TopologyOpening:
			s = "TopologyOpening"
		case *event.TopologyClosed:
			s = "TopologyClosed"
		default:
			continue
		}
		if v, _ := r.Ctx.Value(ctxKey{}).(string); v != "" {
			s += "@" + v
		}
		out = append(out, s)
	}
	return out
}

func TestMonitorsFanOut(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	// The first monitor's context reaches every later event.
	first := &eventtest.Recorder{Start: func(ctx context.Context, e any) context.Context {
		if _, ok := e.(*event.OperationStarted); ok {
			return context.WithValue(ctx, ctxKey{}, "op")
		}
		return ctx
	}}
	second := &eventtest.Recorder{}
	monitors := []struct {
		name string
		rec  *eventtest.Recorder
	}{{"first", first}, {"second", second}}
	o := &ClientOptions{Monitors: []any{first, second}}
	if err := o.ApplyURI(s.URI()); err != nil {
		t.Fatal(err)
	}
	c, err := Connect(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxTimeout(t, 10*time.Second)
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	first.Reset()
	second.Reset()
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	// The first monitor's OperationStarted returns a context every later
	// hook sees, the second monitor's OperationStarted included.
	want := []string{"OperationStarted:runCommand", "SelectionStarted@op", "SelectionSucceeded@op", "CheckOutStarted@op", "CheckedOut@op",
		"CommandStarted:ping@op", "CommandSucceeded:ping@op", "CheckedIn@op", "OperationFinished:runCommand@op"}
	for _, m := range monitors {
		if got := fanOut(m.rec.Records()); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s monitor got\n%v\nwant\n%v", m.name, got, want)
		}
		want[0] += "@op"
		m.rec.Reset()
	}
	c.Disconnect(context.Background())
	for _, m := range monitors {
		if got := fanOut(m.rec.Records()); len(got) == 0 || got[len(got)-1] != "TopologyClosed" {
			t.Errorf("%s monitor: Disconnect ended with %v", m.name, got)
		}
	}

	// A value that monitors nothing is a mistake worth reporting.
	o = &ClientOptions{Monitors: []any{42}}
	o.ApplyURI(s.URI())
	if _, err := Connect(context.Background(), o); err == nil || !strings.Contains(err.Error(), "int") {
		t.Fatalf("Connect with a non-monitor = %v", err)
	}
}

// TestErrorsClearThePool shows, on a replica set, which errors on the
// primary clear its pool and mark it Unknown, as SDAM's error handling
// requires for a 4.2+ server (maxWireVersion 8 and up).
func TestErrorsClearThePool(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{ElectionDelay: -1})
	rec := &eventtest.Recorder{}
	o := &ClientOptions{Monitors: []any{rec}}
	c := connect(t, rs.URI()+"&heartbeatFrequencyMS=500", o)
	ctx := ctxTimeout(t, 30*time.Second)
	primary := rs.Primary()
	cases := []struct {
		name    string
		data    bson.D
		cleared bool
		timeout bool // run the insert with a 100ms deadline
	}{
		{"network error", bson.D{{Key: "closeConnection", Value: true}}, true, false},
		{"ShutdownInProgress (91)", bson.D{{Key: "errorCode", Value: 91}}, true, false},
		{"InterruptedAtShutdown (11600)", bson.D{{Key: "errorCode", Value: 11600}}, true, false},
		// The reply's topologyVersion is the server's current one: the
		// error is stale and changes nothing.
		{"NotWritablePrimary (10107) with the current topologyVersion", bson.D{{Key: "errorCode", Value: 10107}}, false, false},
		{"BadValue (2): nothing", bson.D{{Key: "errorCode", Value: 2}}, false, false},
		// A timeout after the handshake closes that connection only.
		{"network timeout", bson.D{{Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: 600}}, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// A healthy start: the primary is known and its pool ready.
			waitPrimary(t, c, primary.Addr())
			if err := c.Ping(ctx); err != nil {
				t.Fatal(err)
			}
			before := poolOf(c, primary.Addr()).Generation
			rec.Reset()
			data := append(bson.D{{Key: "failCommands", Value: bson.A{"insert"}}}, tc.data...)
			if err := primary.SetFailPoint(bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: bson.D{{Key: "times", Value: 1}}}, {Key: "data", Value: data}}); err != nil {
				t.Fatal(err)
			}
			opCtx := ctx
			if tc.timeout {
				opCtx = ctxTimeout(t, 100*time.Millisecond)
			}
			_, err := c.RunCommand(opCtx, "app", bson.D{{Key: "insert", Value: "t"}, {Key: "documents", Value: bson.A{bson.D{{Key: "x", Value: 1}}}}})
			if err == nil {
				t.Fatal("the fail point did not fire")
			}
			if tc.timeout != IsTimeout(err) {
				t.Errorf("IsTimeout(%v) = %v", err, !tc.timeout)
			}
			after := poolOf(c, primary.Addr()).Generation
			cleared := clearedAddrs(rec)
			if got := after > before; got != tc.cleared {
				t.Errorf("generation %d -> %d: cleared = %v, want %v (error %v)", before, after, got, tc.cleared, err)
			}
			if got := len(cleared) > 0; got != tc.cleared {
				t.Errorf("PoolCleared events %v, want cleared = %v", cleared, tc.cleared)
			}
		})
	}
}

// clearedAddrs lists the addresses of the PoolCleared events rec recorded.
func clearedAddrs(rec *eventtest.Recorder) []string {
	var out []string
	for _, e := range eventtest.Of[*event.PoolCleared](rec) {
		out = append(out, e.Address)
	}
	return out
}

func poolOf(c *Client, addr string) PoolStats {
	for _, s := range c.Topology().Servers {
		if s.Address == addr {
			return s.Pool
		}
	}
	return PoolStats{}
}

func waitPrimary(t *testing.T, c *Client, addr string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, s := range c.Topology().Servers {
			if s.Address == addr && s.Kind == "RSPrimary" && s.Pool.State == "ready" {
				return
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%s is not a known primary with a ready pool: %+v", addr, c.Topology())
}

func TestClientTimeouts(t *testing.T) {
	// Nothing listens: selection fails after serverSelectionTimeoutMS.
	c := connect(t, "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=300&connectTimeoutMS=200", nil)
	start := time.Now()
	err := c.Ping(context.Background())
	if err == nil || time.Since(start) > 5*time.Second || time.Since(start) < 250*time.Millisecond {
		t.Fatalf("Ping to nowhere: %v after %v", err, time.Since(start))
	}
	var se *SelectionError
	if !errors.As(err, &se) {
		t.Fatalf("got %T %v, want a SelectionError", err, err)
	}

	// timeoutMS bounds the whole operation, below the selection timeout.
	s := mongotest.NewServer(t, mongotest.Options{})
	c = connect(t, s.URI()+"?timeoutMS=200", nil)
	if err := c.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.SetFailPoint(bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: bson.D{{Key: "times", Value: 1}}},
		{Key: "data", Value: bson.D{{Key: "failCommands", Value: bson.A{"ping"}}, {Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: 2000}}}})
	start = time.Now()
	err = c.Ping(context.Background())
	if err == nil || time.Since(start) > 1500*time.Millisecond {
		t.Fatalf("blocked ping with timeoutMS=200: %v after %v", err, time.Since(start))
	}
	if !IsTimeout(err) {
		t.Errorf("IsTimeout(%v) = false", err)
	}
}

func TestClientLogging(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{Auth: true})
	const password = "Tr0ub4dor-and-3"
	if err := s.AddUser("admin", "ada", password); err != nil {
		t.Fatal(err)
	}
	uri := strings.Replace(s.URI(), "mongodb://", "mongodb://ada:"+password+"@", 1)

	// In code: a handler and levels; the environment says nothing.
	var buf bytes.Buffer
	levels := map[logging.Component]logging.Level{}
	for _, comp := range []logging.Component{logging.ComponentCommand, logging.ComponentConnection, logging.ComponentServerSelection, logging.ComponentTopology} {
		levels[comp] = logging.LevelTrace
	}
	c := connect(t, uri, &ClientOptions{Logging: &logging.Options{Handler: slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.Level(-100)}), Levels: levels}})
	ctx := ctxTimeout(t, 10*time.Second)
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RunCommand(ctx, "admin", bson.D{{Key: "createUser", Value: "eve"}, {Key: "pwd", Value: password}, {Key: "roles", Value: bson.A{}}}); err != nil {
		t.Logf("createUser: %v", err)
	}
	c.Disconnect(context.Background())
	out := buf.String()
	for _, msg := range []string{"Command started", "Command succeeded", "Server selection started", "Server selection succeeded", "Connection checked out", "Connection checked in", "Starting topology monitoring", "Stopped topology monitoring"} {
		if !strings.Contains(out, `"msg":"`+msg+`"`) {
			t.Errorf("no %q message", msg)
		}
	}
	if strings.Contains(out, password) {
		t.Fatalf("the password reached the log:\n%s", out)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not JSON: %s", line)
		}
		if m["commandName"] == "createUser" && m["command"] != nil && m["command"] != "{}" {
			t.Errorf("createUser logged: %s", line)
		}
	}
}

func TestClientLoggingFromEnvironment(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	path := filepath.Join(t.TempDir(), "driver.log")
	t.Setenv("MONGODB_LOG_COMMAND", "debug")
	t.Setenv("MONGODB_LOG_PATH", path)
	c := connect(t, s.URI(), nil)
	if err := c.Ping(ctxTimeout(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	c.Disconnect(context.Background())
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"msg":"Command succeeded"`) || strings.Contains(string(b), "Connection checked out") {
		t.Fatalf("environment logging wrote:\n%s", b)
	}

	// Code overrides the environment: commands off.
	var buf bytes.Buffer
	c = connect(t, s.URI(), &ClientOptions{Logging: &logging.Options{Handler: slog.NewJSONHandler(&buf, nil), Levels: map[logging.Component]logging.Level{logging.ComponentCommand: logging.LevelOff}}})
	if err := c.Ping(ctxTimeout(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "Command") {
		t.Fatalf("commands logged although code turned them off:\n%s", buf.String())
	}
}

// TestAuthFailure: a refused credential fails the operation with a
// HandshakeError that names no secret, and SDAM marks the server Unknown.
func TestAuthFailure(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{Auth: true})
	if err := s.AddUser("admin", "ada", "right-Password-1"); err != nil {
		t.Fatal(err)
	}
	const wrong = "wrong-Password-2"
	rec := &eventtest.Recorder{}
	c := connect(t, strings.Replace(s.URI(), "mongodb://", "mongodb://ada:"+wrong+"@", 1)+"?serverSelectionTimeoutMS=2000", &ClientOptions{Monitors: []any{rec}})
	err := c.Ping(ctxTimeout(t, 10*time.Second))
	var he *HandshakeError
	if !errors.As(err, &he) {
		t.Fatalf("got %T %v, want a HandshakeError", err, err)
	}
	if strings.Contains(err.Error(), wrong) {
		t.Fatalf("the password is in the error: %v", err)
	}
	snap := c.Topology()
	if snap.Servers[0].Kind != "Unknown" || snap.Servers[0].Error == nil {
		t.Errorf("after an auth failure the server is %+v", snap.Servers[0])
	}
	if eventtest.Count[*event.PoolCleared](rec) == 0 {
		t.Error("an auth failure did not clear the pool")
	}
}
