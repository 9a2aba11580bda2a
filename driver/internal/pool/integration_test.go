package pool

import (
	"context"
	"fmt"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/connstring"
	"github.com/mongoscope/mongoscope/driver/internal/conn"
	"github.com/mongoscope/mongoscope/internal/spectest"
	"github.com/mongoscope/mongoscope/mongotest"
)

// TestCMAPSpecMongotest runs the integration-style cmap-format files as the
// spec's integration runner does, against one mongotest server: each
// file's failPoint is sent as a configureFailPoint command on the admin
// database and turned off afterwards, and the pool's connections are real
// ones (conn.Dial, with the file's appName in the handshake, which is
// where the fail point blocks or fails them).
func TestCMAPSpecMongotest(t *testing.T) {
	checkNoGoroutines(t, "pool.(*Pool[...])", "mongotest.(*Server)", "mongotest.(*Conn)")
	s := mongotest.NewServer(t, mongotest.Options{})
	admin := dialAdmin(t, s)
	version := serverVersion(t, admin)
	tally := spectest.NewTally("cmap-format (mongotest)")
	for _, f := range readCMAPFiles(t) {
		if f.test.Style != "integration" {
			continue
		}
		if reason := unmetRunOn(t, f.test.RunOn, version); reason != "" {
			tally.Skip(t, f.name, reason)
			continue
		}
		tally.Run(t, f.name, func(t *testing.T) { runCMAPIntegration(t, s, admin, &f.test) })
	}
	tally.Log(t)
}

// runCMAPIntegration runs one integration file against s.
func runCMAPIntegration(t *testing.T, s *mongotest.Server, admin *conn.Conn, tc *cmapTest) {
	appName, _ := tc.PoolOptions["appName"].(string)
	settings := clientSettings(t, s, appName)
	if tc.FailPoint != nil {
		cmd, err := bson.ParseExtJSON(tc.FailPoint)
		if err != nil {
			t.Fatalf("failPoint: %v", err)
		}
		name, ok := cmd.Lookup("configureFailPoint").StringValueOK()
		if !ok {
			t.Fatalf("failPoint without a configureFailPoint name: %s", tc.FailPoint)
		}
		before := configureFailPoint(t, admin, cmd)
		t.Cleanup(func() {
			// The spec's runner turns the fail point off after the test;
			// the reply counts how often it fired, which proves it
			// reached the pool's handshakes (the appName matched).
			off := marshal(t, bson.D{{Key: "configureFailPoint", Value: name}, {Key: "mode", Value: "off"}})
			if fired := configureFailPoint(t, admin, off) - before; fired == 0 {
				t.Errorf("the %s fail point never fired for appName %q", name, appName)
			}
		})
	}
	addr := s.Addr()
	runCMAPTest(t, tc, func(ctx context.Context, id int64) (*conn.Conn, error) {
		cc := settings.Config(addr)
		cc.ID = id
		return conn.Dial(ctx, cc)
	})
	// Every connection the pool opened is closed: only the admin
	// connection is left on the server.
	for i := 0; s.NumConnections() != 1; i++ {
		if i > 500 {
			t.Fatalf("%d connections still open on the server after 5s, want only the admin one", s.NumConnections())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// clientSettings builds the connection settings a client of s with appName
// would use, from a connection string as a user would write it.
func clientSettings(t *testing.T, s *mongotest.Server, appName string) *conn.Settings {
	t.Helper()
	uri := s.URI()
	if appName != "" {
		uri += "?appName=" + url.QueryEscape(appName)
	}
	cs, err := connstring.Parse(uri)
	if err != nil {
		t.Fatal(err)
	}
	settings, err := conn.NewSettings(cs, conn.Extra{})
	if err != nil {
		t.Fatal(err)
	}
	return settings
}

// dialAdmin opens the runner's own connection, with an appName of its own
// so that no fail point of the files touches it.
func dialAdmin(t *testing.T, s *mongotest.Server) *conn.Conn {
	t.Helper()
	cc := clientSettings(t, s, "cmap-format-runner").Config(s.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := conn.Dial(ctx, cc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func marshal(t *testing.T, d bson.D) bson.Raw {
	t.Helper()
	b, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// configureFailPoint runs cmd on the admin database and returns the
// reply's count: how often the fail point had fired before.
func configureFailPoint(t *testing.T, admin *conn.Conn, cmd bson.Raw) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reply, err := admin.RunCommand(ctx, "admin", cmd)
	if err != nil {
		t.Fatalf("configureFailPoint %s: %v", cmd, err)
	}
	n, ok := reply.Lookup("count").AsInt64OK()
	if !ok {
		t.Fatalf("configureFailPoint reply without a count: %s", reply)
	}
	return n
}

// serverVersion asks the server for its version, as runOn compares it.
func serverVersion(t *testing.T, admin *conn.Conn) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reply, err := admin.RunCommand(ctx, "admin", marshal(t, bson.D{{Key: "buildInfo", Value: int32(1)}}))
	if err != nil {
		t.Fatal(err)
	}
	v, ok := reply.Lookup("version").StringValueOK()
	if !ok {
		t.Fatalf("buildInfo without a version: %s", reply)
	}
	return v
}

// unmetRunOn returns why none of the runOn requirements holds for a
// standalone server of version, or "" when one does (or there are none).
func unmetRunOn(t *testing.T, runOn []map[string]any, version string) string {
	t.Helper()
	if len(runOn) == 0 {
		return ""
	}
	var reasons []string
	for _, req := range runOn {
		reason := ""
		for k, v := range req {
			s, _ := v.(string)
			switch k {
			case "minServerVersion":
				if compareVersions(t, version, s) < 0 {
					reason = "needs server " + s + " or later"
				}
			case "maxServerVersion":
				if compareVersions(t, version, s) > 0 {
					reason = "needs server " + s + " or earlier"
				}
			case "topology":
				list, _ := v.([]any)
				if !containsAny(list, "single") {
					reason = fmt.Sprintf("needs topology %v, mongotest is a standalone", list)
				}
			default:
				t.Fatalf("unknown runOn requirement %q", k)
			}
		}
		if reason == "" {
			return ""
		}
		reasons = append(reasons, reason)
	}
	return strings.Join(reasons, " or ")
}

func containsAny(list []any, want string) bool {
	for _, v := range list {
		if v == want {
			return true
		}
	}
	return false
}

// compareVersions compares dotted versions numerically; missing parts
// count as zero ("4.4" equals "4.4.0").
func compareVersions(t *testing.T, a, b string) int {
	t.Helper()
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := range max(len(pa), len(pb)) {
		var x, y int
		var err error
		if i < len(pa) {
			if x, err = strconv.Atoi(pa[i]); err != nil {
				t.Fatalf("version %q: %v", a, err)
			}
		}
		if i < len(pb) {
			if y, err = strconv.Atoi(pb[i]); err != nil {
				t.Fatalf("version %q: %v", b, err)
			}
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

func TestCompareVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"8.0.0", "4.4.0", 1},
		{"4.4.0", "4.9.0", -1},
		{"4.4", "4.4.0", 0},
		{"4.10.0", "4.9.0", 1},
		{"8.0.0", "8.0.0", 0},
	} {
		if got := compareVersions(t, tc.a, tc.b); got != tc.want {
			t.Errorf("compareVersions(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestUnmetRunOn(t *testing.T) {
	for _, tc := range []struct {
		runOn []map[string]any
		met   bool
	}{
		{nil, true},
		{[]map[string]any{{"minServerVersion": "4.4.0"}}, true},
		{[]map[string]any{{"minServerVersion": "9.0"}}, false},
		{[]map[string]any{{"maxServerVersion": "7.0"}}, false},
		{[]map[string]any{{"minServerVersion": "9.0"}, {"minServerVersion": "4.9.0"}}, true},
		{[]map[string]any{{"topology": []any{"replicaset", "sharded"}}}, false},
		{[]map[string]any{{"topology": []any{"single"}, "minServerVersion": "4.0"}}, true},
	} {
		if got := unmetRunOn(t, tc.runOn, "8.0.0"); (got == "") != tc.met {
			t.Errorf("runOn %v: %q, want met=%v", tc.runOn, got, tc.met)
		}
	}
}

// checkNoGoroutines fails t if, shortly after the test and its cleanups,
// a goroutine running in one of the named frames is left. Register it
// first so it runs last.
func checkNoGoroutines(t *testing.T, frames ...string) {
	t.Helper()
	t.Cleanup(func() {
		var stacks string
		for range 200 {
			buf := make([]byte, 1<<20)
			stacks = string(buf[:runtime.Stack(buf, true)])
			left := false
			for _, f := range frames {
				left = left || strings.Contains(stacks, f)
			}
			if !left {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Errorf("goroutines left running:\n%s", stacks)
	})
}
