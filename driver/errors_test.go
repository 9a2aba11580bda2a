package driver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/auth"
	"github.com/mongoscope/mongoscope/driver/internal/conn"
	"github.com/mongoscope/mongoscope/driver/internal/operation"
	"github.com/mongoscope/mongoscope/driver/internal/pool"
	"github.com/mongoscope/mongoscope/driver/logging"
	"github.com/mongoscope/mongoscope/mongotest"
)

// chain lists every error reachable from err through Unwrap (both forms).
func chain(err error) []error {
	var out []error
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		out = append(out, e)
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		case interface{ Unwrap() []error }:
			for _, x := range u.Unwrap() {
				walk(x)
			}
		}
	}
	walk(err)
	return out
}

// checkPublic fails when an internal package's type is reachable from err:
// users cannot name it, and go doc would not show its fields.
func checkPublic(t *testing.T, err error) {
	t.Helper()
	for _, e := range chain(err) {
		typ := reflect.TypeOf(e)
		for typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		if strings.Contains(typ.PkgPath(), "/internal/") {
			t.Errorf("%T (an internal type) is reachable from %q", e, err)
		}
	}
}

func failPoint(t *testing.T, s *mongotest.Server, data bson.D) {
	t.Helper()
	err := s.SetFailPoint(bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: bson.D{{Key: "times", Value: 1}}}, {Key: "data", Value: data}})
	if err != nil {
		t.Fatal(err)
	}
}

func TestPublicErrorTypesAreDriverStructs(t *testing.T) {
	for _, v := range []any{ArgumentError{}, OperationError{}, CommandError{}, WriteConcernError{}, NetworkError{}, HandshakeError{}, AuthError{}, SelectionError{}, WaitQueueTimeoutError{}, PoolClearedError{}} {
		typ := reflect.TypeOf(v)
		if typ.Kind() != reflect.Struct || typ.PkgPath() != "github.com/mongoscope/mongoscope/driver" {
			t.Errorf("%v is not a struct type of package driver (an alias hides its fields from go doc)", typ)
		}
	}
}

// TestAuthErrorIsNoCommandError: an authentication failure keeps the
// server's code (on AuthError and HandshakeError) but is not a
// CommandError, and its message says each fact once.
func TestAuthErrorIsNoCommandError(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{Auth: true})
	if err := s.AddUser("admin", "ada", "right-Password-1"); err != nil {
		t.Fatal(err)
	}
	c := connect(t, strings.Replace(s.URI(), "mongodb://", "mongodb://ada:wrong-Password-2@", 1)+"?serverSelectionTimeoutMS=2000", nil)
	_, err := c.RunCommand(ctxTimeout(t, 10*time.Second), "admin", bson.D{{Key: "listDatabases", Value: 1}})
	if err == nil {
		t.Fatal("a wrong password authenticated")
	}
	checkPublic(t, err)
	var ce *CommandError
	if errors.As(err, &ce) {
		t.Errorf("an auth failure is a CommandError: %v", err)
	}
	var ae *AuthError
	if !errors.As(err, &ae) || ae.Code != 18 || ae.CodeName != "AuthenticationFailed" || ae.Username != "ada" || ae.Source != "admin" {
		t.Fatalf("AuthError = %+v (%v)", ae, err)
	}
	var he *HandshakeError
	if !errors.As(err, &he) || he.Stage != "auth" || he.Code != 18 || he.ConnectionID == 0 {
		t.Fatalf("HandshakeError = %+v", he)
	}
	addr := s.Addr()
	want := `^listDatabases on ` + regexp.QuoteMeta(addr) + `: establishing connection \d+: authentication failed: SCRAM-SHA-256 for user "ada" on db "admin": [^:]+: server error 18 \(AuthenticationFailed\): Authentication failed\.$`
	if !regexp.MustCompile(want).MatchString(err.Error()) {
		t.Errorf("message\n%s\ndoes not match\n%s", err, want)
	}
	msg := err.Error()
	if n := strings.Count(msg, addr); n != 1 {
		t.Errorf("the address appears %d times: %s", n, msg)
	}
	if n := strings.Count(msg, "connection"); n != 1 {
		t.Errorf("the connection appears %d times: %s", n, msg)
	}
	if strings.Contains(msg, "wrong-Password-2") {
		t.Fatalf("the password is in the error: %s", msg)
	}
	// The snapshot's error is a public type too.
	for _, sv := range c.Topology().Servers {
		checkPublic(t, sv.Error)
	}
}

func TestErrorHelpers(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{Topology: mongotest.Topology{Role: mongotest.RolePrimary, SetName: "rs0"}})
	c := connect(t, s.URI()+"?directConnection=true", nil)
	ctx := ctxTimeout(t, 10*time.Second)
	insert := bson.D{{Key: "insert", Value: "t"}, {Key: "documents", Value: bson.A{bson.D{{Key: "x", Value: 1}}}}}
	addr := s.Addr()

	// A refused command: CommandError, with its labels.
	failPoint(t, s, bson.D{{Key: "failCommands", Value: bson.A{"insert"}}, {Key: "errorCode", Value: 11000}, {Key: "errorLabels", Value: bson.A{"RetryableWriteError"}}})
	reply, err := c.RunCommand(ctx, "app", insert)
	checkPublic(t, err)
	var ce *CommandError
	if !errors.As(err, &ce) || ce.Code != 11000 || len(ce.Raw) == 0 {
		t.Fatalf("got %v, want a CommandError 11000", err)
	}
	if !IsDuplicateKeyError(err) || !HasErrorLabel(err, "RetryableWriteError") || HasErrorLabel(err, "TransientTransactionError") || IsNetworkError(err) || IsTimeout(err) {
		t.Errorf("helpers on %v: dup %v, label %v", err, IsDuplicateKeyError(err), HasErrorLabel(err, "RetryableWriteError"))
	}
	if code, _ := reply.Lookup("code").AsInt64OK(); code != 11000 {
		t.Errorf("the reply of a refused command is %v, want the server's", reply)
	}
	var oe *OperationError
	if !errors.As(err, &oe) || oe.Op != "insert" || oe.Address != addr {
		t.Errorf("OperationError = %+v", oe)
	}
	if want := "insert on " + addr + ": server error 11000 (DuplicateKey): "; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("message %q, want prefix %q", err, want)
	}

	// A write concern error: the reply and the error both come back.
	failPoint(t, s, bson.D{{Key: "failCommands", Value: bson.A{"insert"}}, {Key: "writeConcernError", Value: bson.D{{Key: "code", Value: 64}, {Key: "codeName", Value: "WriteConcernFailed"}, {Key: "errmsg", Value: "waiting for replication timed out"}}}})
	reply, err = c.RunCommand(ctx, "app", insert)
	checkPublic(t, err)
	var wce *WriteConcernError
	if !errors.As(err, &wce) || wce.Code != 64 {
		t.Fatalf("got %v, want a WriteConcernError", err)
	}
	if n, _ := reply.Lookup("n").AsInt64OK(); n != 1 {
		t.Errorf("the reply of the applied write is %v", reply)
	}

	// A closed connection: NetworkError, each fact once.
	failPoint(t, s, bson.D{{Key: "failCommands", Value: bson.A{"insert"}}, {Key: "closeConnection", Value: true}})
	reply, err = c.RunCommand(ctx, "app", insert)
	checkPublic(t, err)
	var ne *NetworkError
	if !errors.As(err, &ne) || !IsNetworkError(err) || ne.ConnectionID == 0 || ne.Address != addr {
		t.Fatalf("got %v, want a NetworkError", err)
	}
	if want := regexp.MustCompile(`^insert on ` + regexp.QuoteMeta(addr) + `: network error on connection \d+: read: `); !want.MatchString(err.Error()) {
		t.Errorf("message %q does not match %v", err, want)
	}
	if reply.String() != "{}" {
		t.Errorf("the reply of a failed RunCommand prints as %s, want {}", reply)
	}
}

func TestSelectionErrorIsPublic(t *testing.T) {
	c := connect(t, "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=200&connectTimeoutMS=100", nil)
	reply, err := c.RunCommand(context.Background(), "app", bson.D{{Key: "insert", Value: "t"}, {Key: "documents", Value: bson.A{bson.D{}}}})
	checkPublic(t, err)
	var se *SelectionError
	if !errors.As(err, &se) || !se.TimedOut || !errors.Is(err, ErrServerSelectionTimeout) || !IsTimeout(err) {
		t.Fatalf("got %v, want a timed-out SelectionError", err)
	}
	// A write is described as one, not as a primary read.
	if se.Selector != "write" {
		t.Errorf("an insert's selector is %q, want write", se.Selector)
	}
	if reply == nil || reply.String() != "{}" {
		t.Errorf("the reply of a failed RunCommand prints as %s, want {}", reply)
	}
	if _, err := c.RunCommand(context.Background(), "app", bson.D{{Key: "find", Value: "t"}}); err == nil || !strings.Contains(err.Error(), "read {mode: primary}") {
		t.Errorf("a find's selection error: %v", err)
	}
}

func TestTopologySnapshotString(t *testing.T) {
	snap := TopologySnapshot{
		Kind: "ReplicaSetWithPrimary", SetName: "rs0", Streaming: true,
		Servers: []ServerSnapshot{
			{Address: "db1:27017", Kind: "RSPrimary", SetName: "rs0", Tags: map[string]string{"region": "eu", "dc": "a"},
				RoundTripTime: 1234567 * time.Nanosecond, MinRoundTripTime: 901 * time.Microsecond, OperationCount: 1,
				Pool: PoolStats{State: "ready", Max: 100, Total: 3, InUse: 1, Idle: 2}},
			{Address: "db2:27017", Kind: "Unknown", Error: errors.New("network error on connection 7: dial: connection refused"),
				Pool: PoolStats{State: "paused"}},
		},
	}
	want := `ReplicaSetWithPrimary "rs0", streaming, 2 servers
  db1:27017 RSPrimary "rs0" {dc: "a", region: "eu"}, rtt 1.23ms (min 901µs), 1 operation, pool ready: 3 open (1 in use, 2 idle) of 100
  db2:27017 Unknown, error: network error on connection 7: dial: connection refused, 0 operations, pool paused: 0 open (0 in use, 0 idle)`
	if got := snap.String(); got != want {
		t.Errorf("String() =\n%s\nwant\n%s", got, want)
	}

	// A live one reads the same way.
	s := mongotest.NewServer(t, mongotest.Options{})
	c := connect(t, s.URI(), nil)
	if err := c.Ping(ctxTimeout(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	got := c.Topology().String()
	if !regexp.MustCompile(`^Single, (streaming|polling), 1 server\n  ` + regexp.QuoteMeta(s.Addr()) + ` Standalone, rtt [^,]+, 0 operations, pool ready: 1 open \(0 in use, 1 idle\) of 100$`).MatchString(got) {
		t.Errorf("live snapshot:\n%s", got)
	}
}

// TestHeartbeatFailureAgreesWithConnectionID: a heartbeat failure's text
// names no connection other than the message's driverConnectionId (the
// monitor's connection that failed to open has none yet: 0).
func TestHeartbeatFailureAgreesWithConnectionID(t *testing.T) {
	var buf safeBuffer
	c := connect(t, "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=300&connectTimeoutMS=100&heartbeatFrequencyMS=500", &ClientOptions{
		Logging: &logging.Options{Handler: slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}),
			Levels: map[logging.Component]logging.Level{logging.ComponentTopology: logging.LevelDebug}},
	})
	_ = c.Ping(context.Background())
	c.Disconnect(context.Background())
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not JSON: %s", line)
		}
		if m["msg"] != "Server heartbeat failed" {
			continue
		}
		n++
		failure, _ := m["failure"].(string)
		id, _ := m["driverConnectionId"].(float64)
		for _, sub := range regexp.MustCompile(`connection (\d+)`).FindAllStringSubmatch(failure, -1) {
			if sub[1] != strconv.Itoa(int(id)) {
				t.Errorf("driverConnectionId %v but the failure says %q", id, failure)
			}
		}
	}
	if n == 0 {
		t.Fatalf("no heartbeat failure logged:\n%s", buf.String())
	}
}

type safeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestConvertedMessages: each internal error becomes its public type, and
// the message states the address and the connection once.
func TestConvertedMessages(t *testing.T) {
	const a = "db1:27017"
	netErr := &conn.NetworkError{Op: "read", Address: a, ConnID: 3, Err: io.EOF}
	tests := []struct {
		name string
		in   error
		want string
		as   any
	}{
		{"network", &operation.Error{Op: "find", Address: a, Err: netErr},
			"find on db1:27017: network error on connection 3: read: EOF", new(*NetworkError)},
		{"wait queue", &operation.Error{Op: "find", Address: a, Err: &pool.WaitQueueTimeoutError{Address: a, Waited: time.Second, Stats: pool.Stats{Max: 1, Total: 1, InUse: 1, WaitCount: 2}, Err: context.DeadlineExceeded}},
			"find on db1:27017: timed out waiting for a connection after 1s: maxPoolSize 1, total 1, in use 1, idle 0, pending 0, waiting 2", new(*WaitQueueTimeoutError)},
		{"pool cleared", &operation.Error{Op: "find", Address: a, Err: &pool.PoolClearedError{Address: a, Cause: netErr}},
			"find on db1:27017: connection pool cleared after: network error on connection 3: read: EOF", new(*PoolClearedError)},
		{"interrupted by a clear", &operation.Error{Op: "find", Address: a, Err: &pool.PoolClearedError{Address: a, Interrupted: true}},
			"find on db1:27017: connection interrupted due to server monitor timeout", new(*PoolClearedError)},
		{"dial", &operation.Error{Op: "find", Address: a, Err: &pool.DialError{Address: a, ConnectionID: 4, Err: &conn.NetworkError{Op: "dial", Address: a, ConnID: 4, Err: errors.New("connection refused")}}},
			"find on db1:27017: network error on connection 4: dial: connection refused", new(*NetworkError)},
		{"hello refused", &operation.Error{Op: "find", Address: a, Err: &pool.DialError{Address: a, ConnectionID: 5, Err: &conn.HandshakeError{Address: a, ConnID: 5, Stage: "hello", Err: &conn.CommandError{Code: 8000, CodeName: "AtlasError", Message: "bad"}}}},
			"find on db1:27017: establishing connection 5: hello: server error 8000 (AtlasError): bad", new(*HandshakeError)},
		{"auth interrupted", &operation.Error{Op: "find", Address: a, Err: &pool.DialError{Address: a, ConnectionID: 3, Err: &conn.HandshakeError{Address: a, ConnID: 3, Stage: "auth",
			Err: &auth.Error{Mechanism: "SCRAM-SHA-1", Username: "u", Source: "admin", Reason: "authentication interrupted", Err: netErr}}}},
			`find on db1:27017: establishing connection 3: authentication failed: SCRAM-SHA-1 for user "u" on db "admin": authentication interrupted: network error: read: EOF`, new(*AuthError)},
		{"standalone handshake", &conn.HandshakeError{Address: a, ConnID: 6, Stage: "hello", Err: errors.New("no serviceId")},
			"establishing connection 6 to db1:27017: hello: no serviceId", new(*HandshakeError)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := publicError(tt.in)
			checkPublic(t, got)
			if got.Error() != tt.want {
				t.Errorf("message\n%s\nwant\n%s", got, tt.want)
			}
			if !errors.As(got, tt.as) {
				t.Errorf("errors.As(%T) failed on %v", tt.as, got)
			}
		})
	}
	if !errors.Is(publicError(&operation.Error{Op: "find", Address: a, Err: netErr}), io.EOF) {
		t.Error("a network error's cause is lost")
	}
}

// TestIsTimeoutStopsAtPoolClear: a checkout or operation ended by a pool
// clear is not a timeout (CMAP), even when a timeout caused the clear; a
// timeout around it, or in a joined error, still is.
func TestIsTimeoutStopsAtPoolClear(t *testing.T) {
	netTimeout := &NetworkError{Err: context.DeadlineExceeded}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"deadline", context.DeadlineExceeded, true},
		{"wrapped deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), true},
		{"clear caused by a timeout", &OperationError{Op: "find", Err: &PoolClearedError{Address: "a:1", Cause: netTimeout}}, false},
		{"interrupted by a clear", &PoolClearedError{Address: "a:1", Interrupted: true, Cause: context.DeadlineExceeded}, false},
		{"joined with a timeout", errors.Join(errors.New("x"), context.DeadlineExceeded), true},
		{"joined without", errors.Join(errors.New("x"), errors.New("y")), false},
		{"canceled", context.Canceled, false},
	}
	for _, tc := range tests {
		if got := IsTimeout(tc.err); got != tc.want {
			t.Errorf("%s: IsTimeout(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}
