package mongotest

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
)

func TestStartAndClose(t *testing.T) {
	before := runtime.NumGoroutine()
	s, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.Addr(), "127.0.0.1:") || s.URI() != "mongodb://"+s.Addr()+"/" {
		t.Errorf("Addr %q URI %q", s.Addr(), s.URI())
	}
	// Connections in every state: idle, mid-command waiting (awaitable
	// hello, blocked fail point), and one that has sent half a message.
	var clients []*client
	for i := 0; i < 3; i++ {
		c := connect(t, s, clientOpts{})
		c.mustRun("admin", d("ping", 1))
		clients = append(clients, c)
	}
	pid, counter := s.TopologyVersion()
	clients[1].send("admin", d("hello", 1, "topologyVersion", d("processId", pid, "counter", counter), "maxAwaitTimeMS", int64(60000)), 0)
	if err := s.SetFailPoint(d("configureFailPoint", "failCommand", "mode", "alwaysOn",
		"data", d("failCommands", bson.A{"ping"}, "blockConnection", true, "blockTimeMS", 60000))); err != nil {
		t.Fatal(err)
	}
	clients[2].send("admin", d("ping", 1), 0)
	half := rawHeader(100, 1, 2013)
	clients[0].write(half[:10])
	if err := s.WaitForCommandN(ctxT(t), "ping", 4); err != nil {
		t.Fatal(err)
	}
	if n := s.NumConnections(); n != 3 {
		t.Errorf("NumConnections = %d", n)
	}
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return")
	}
	s.Close() // harmless
	for _, c := range clients {
		if !c.closed() {
			t.Error("a client connection is still open")
		}
	}
	waitGoroutines(t, before)
}

// WaitForCommandN is a test helper: wait until n commands named name have
// been logged.
func (s *Server) WaitForCommandN(ctx context.Context, name string, n int) error {
	for {
		count := 0
		for _, c := range s.Commands() {
			if c.Name == name {
				count++
			}
		}
		if count >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
}

func rawHeader(length, id, op int32) []byte {
	b := make([]byte, 16)
	put := func(off int, v int32) {
		b[off], b[off+1], b[off+2], b[off+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	put(0, length)
	put(4, id)
	put(12, op)
	return b
}

func TestOptionsErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"compressor", Options{Compressors: []string{"lz4"}}, `unknown compressor "lz4"`},
		{"noop compressor", Options{Compressors: []string{"noop"}}, `unknown compressor "noop"`},
		{"version", Options{Version: "eight"}, `Options.Version "eight"`},
		{"wire", Options{MaxWireVersion: -1}, "MaxWireVersion -1"},
		{"set name", Options{Topology: Topology{Role: RolePrimary}}, "SetName is required"},
		{"role", Options{Topology: Topology{Role: Role(42)}}, "Role 42"},
		{"listen", Options{Addr: "256.0.0.1:0"}, "listen on"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Start(tc.opts)
			if err == nil {
				s.Close()
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v, want %q", err, tc.want)
			}
		})
	}
}

func TestBasicCommands(t *testing.T) {
	s := NewServer(t, Options{Topology: Topology{Role: RolePrimary, SetName: "rs0"}})
	c := connect(t, s, clientOpts{})
	for _, tc := range []struct {
		cmd   bson.D
		check func(t *testing.T, r bson.Raw)
	}{
		{d("ping", 1), nil},
		{d("buildInfo", 1), func(t *testing.T, r bson.Raw) {
			if r.Lookup("version").StringValue() != "8.0.0" || r.Lookup("maxBsonObjectSize").Int32() != MaxBSONObjectSize {
				t.Error(r)
			}
			if v, _ := r.LookupErr("versionArray", "0"); v.Int32() != 8 {
				t.Error(r)
			}
		}},
		{d("buildinfo", 1), nil},
		{d("serverStatus", 1), func(t *testing.T, r bson.Raw) {
			if r.Lookup("process").StringValue() != "mongod" || r.Lookup("version").StringValue() != "8.0.0" {
				t.Error(r)
			}
			if cur := r.Lookup("connections", "current").Int32(); cur != 1 {
				t.Errorf("connections.current = %d", cur)
			}
			if n, _ := r.Lookup("opcounters", "command").AsInt64OK(); n < 3 {
				t.Errorf("opcounters.command = %d", n)
			}
			if _, err := r.LookupErr("uptime"); err != nil {
				t.Error(err)
			}
			if _, err := r.LookupErr("pid"); err != nil {
				t.Error(err)
			}
			if !strings.HasSuffix(r.Lookup("host").StringValue(), s.Addr()[strings.LastIndexByte(s.Addr(), ':'):]) {
				t.Error(r.Lookup("host"))
			}
		}},
		{d("endSessions", bson.A{d("id", bson.Binary{Subtype: 4, Data: make([]byte, 16)})}), nil},
		{d("killAllSessions", bson.A{}), nil},
		{d("whatsmyuri", 1), func(t *testing.T, r bson.Raw) {
			if r.Lookup("you").StringValue() != c.nc.LocalAddr().String() {
				t.Error(r)
			}
		}},
		{d("connectionStatus", 1), func(t *testing.T, r bson.Raw) {
			if arr, _ := r.Lookup("authInfo", "authenticatedUsers").ArrayOK(); len(arr) != 5 {
				t.Error(r)
			}
		}},
	} {
		t.Run(tc.cmd[0].Key, func(t *testing.T) {
			r := c.mustRun("admin", tc.cmd)
			if ok := r.Lookup("ok").Double(); ok != 1 {
				t.Errorf("ok = %v", ok)
			}
			// A replica-set member gossips the cluster time in every reply.
			if _, err := r.LookupErr("$clusterTime", "clusterTime"); err != nil {
				t.Errorf("no $clusterTime: %v", r)
			}
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
}

func TestCommandErrors(t *testing.T) {
	s := NewServer(t, Options{})
	c := connect(t, s, clientOpts{})
	for _, tc := range []struct {
		name string
		db   string
		cmd  any
		code int32
		msg  string
	}{
		{"unknown", "test", d("frobnicate", 1), 59, "no such command: 'frobnicate'"},
		{"case-sensitive", "test", d("PING", 1), 59, "no such command: 'PING'"},
		{"no $db", "", d("ping", 1), 40571, "OP_MSG requests require a $db argument"},
		{"$db type", "", d("ping", 1, "$db", 5), 14, "$db is of type"},
		{"bad db name", "a.b", d("ping", 1), 73, "Invalid database name: 'a.b'"},
		{"empty db name", "", d("ping", 1, "$db", ""), 73, "Invalid database name"},
		{"admin only", "test", d("configureFailPoint", "failCommand", "mode", "off"), 13, "may only be run against the admin database"},
		{"api version", "admin", d("ping", 1, "apiVersion", "2"), 322, `API version must be "1"`},
		{"endSessions type", "admin", d("endSessions", 1), 14, "endSessions must be an array"},
		{"unknown fail point", "admin", d("configureFailPoint", "nope", "mode", "off"), 2, "unknown fail point: nope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.run(tc.db, tc.cmd)
			ce := asCmdError(t, err)
			if ce.Code != tc.code || !strings.Contains(ce.Message, tc.msg) || ce.CodeName == "" {
				t.Errorf("got %v, want code %d and %q", ce, tc.code, tc.msg)
			}
		})
	}
	// The connection survives every one of them.
	c.mustRun("admin", d("ping", 1, "apiVersion", "1"))
}

func TestLegacyHelloNames(t *testing.T) {
	s := NewServer(t, Options{})
	c := connect(t, s, clientOpts{})
	for _, name := range []string{"isMaster", "ismaster"} {
		r := c.mustRun("admin", d(name, 1))
		if !r.Lookup("ismaster").Boolean() {
			t.Errorf("%s: %v", name, r)
		}
		if _, err := r.LookupErr("isWritablePrimary"); err == nil {
			t.Errorf("%s reply has isWritablePrimary", name)
		}
	}
	if _, err := c.run("admin", d("IsMaster", 1)); asCmdError(t, err).Code != 59 {
		t.Error(err)
	}
}

func TestCommandLog(t *testing.T) {
	s := NewServer(t, Options{})
	c1 := connect(t, s, clientOpts{})
	c2 := connect(t, s, clientOpts{})
	c1.mustRun("test", d("ping", 1, "comment", "one"))
	c2.mustRun("test", d("buildInfo", 1))
	cmds := s.Commands()
	var names []string
	for _, c := range cmds {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, ","); got != "hello,hello,ping,buildInfo" {
		t.Fatalf("commands %s", got)
	}
	if cmds[2].ConnID != c1.id || cmds[2].DB != "test" || cmds[2].Body.Lookup("comment").StringValue() != "one" {
		t.Errorf("%+v", cmds[2])
	}
	if on := s.CommandsOn(c2.id); len(on) != 2 || on[1].Name != "buildInfo" {
		t.Errorf("CommandsOn: %+v", on)
	}
	// The log keeps copies, not views of reused buffers.
	c1.mustRun("test", d("ping", 1, "comment", "two"))
	if s.Commands()[2].Body.Lookup("comment").StringValue() != "one" {
		t.Error("log entry changed")
	}

	got := make(chan Command, 1)
	go func() {
		c, _ := s.WaitForCommand(ctxT(t), "serverStatus")
		got <- c
	}()
	time.Sleep(20 * time.Millisecond)
	c2.mustRun("admin", d("serverStatus", 1))
	if c := <-got; c.Name != "serverStatus" || c.ConnID != c2.id {
		t.Errorf("WaitForCommand: %+v", c)
	}
	// Already logged: returns at once.
	if c, err := s.WaitForCommand(ctxT(t), "buildInfo"); err != nil || c.ConnID != c2.id {
		t.Errorf("%+v %v", c, err)
	}
	s.ClearCommands()
	if n := len(s.Commands()); n != 0 {
		t.Errorf("%d commands after ClearCommands", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := s.WaitForCommand(ctx, "buildInfo"); err != context.DeadlineExceeded {
		t.Errorf("WaitForCommand after clear: %v", err)
	}
}

func TestCommandLogLimit(t *testing.T) {
	s := NewServer(t, Options{CommandLogSize: 4})
	c := connect(t, s, clientOpts{})
	for i := 0; i < 20; i++ {
		c.mustRun("admin", d("ping", 1, "i", i))
	}
	cmds := s.Commands()
	if len(cmds) != 4 || cmds[3].Body.Lookup("i").Int32() != 19 || cmds[0].Body.Lookup("i").Int32() != 16 {
		t.Errorf("%d commands, last %v", len(cmds), cmds[len(cmds)-1].Body)
	}
	off := NewServer(t, Options{CommandLogSize: -1})
	connect(t, off, clientOpts{}).mustRun("admin", d("ping", 1))
	if n := len(off.Commands()); n != 0 {
		t.Errorf("log off kept %d", n)
	}
}

func TestLatency(t *testing.T) {
	s := NewServer(t, Options{})
	c := connect(t, s, clientOpts{})
	s.AddLatency(80 * time.Millisecond)
	start := time.Now()
	c.mustRun("admin", d("ping", 1))
	if el := time.Since(start); el < 80*time.Millisecond {
		t.Errorf("reply after %v with 80ms latency", el)
	}
	s.AddLatency(0)
	start = time.Now()
	c.mustRun("admin", d("ping", 1))
	if el := time.Since(start); el > 70*time.Millisecond {
		t.Errorf("reply after %v without latency", el)
	}
}

func TestResetAndCloseNext(t *testing.T) {
	s := NewServer(t, Options{})
	a := connect(t, s, clientOpts{})
	b := connect(t, s, clientOpts{})
	s.ResetConnections()
	for _, c := range []*client{a, b} {
		if !c.closed() {
			t.Error("connection survived ResetConnections")
		}
	}
	waitConnError(t, s, "closed by ResetConnections")
	connect(t, s, clientOpts{}).mustRun("admin", d("ping", 1))

	s.CloseNextConnections(2)
	for i := 0; i < 2; i++ {
		if _, err := connectErr(t, s, clientOpts{}); err == nil {
			t.Errorf("connection %d was not closed", i)
		}
	}
	connect(t, s, clientOpts{}).mustRun("admin", d("ping", 1))
	if e := waitConnError(t, s, "CloseNextConnections"); e.ConnID == 0 {
		t.Error(e)
	}
}

func TestHandleOverride(t *testing.T) {
	s := NewServer(t, Options{})
	s.Handle("ping", func(ctx context.Context, s *Server, r *Request) (bson.Raw, error) {
		return bson.Marshal(d("scripted", true, "db", r.DB))
	})
	s.Handle("custom", func(ctx context.Context, s *Server, r *Request) (bson.Raw, error) {
		return bson.Raw{1, 2, 3}, nil
	})
	c := connect(t, s, clientOpts{})
	r := c.mustRun("x", d("ping", 1))
	if !r.Lookup("scripted").Boolean() || r.Lookup("db").StringValue() != "x" || r.Lookup("ok").Double() != 1 {
		t.Error(r)
	}
	if _, err := c.run("x", d("custom", 1)); asCmdError(t, err).Code != 1 {
		t.Error(err)
	}
	s.Handle("ping", nil)
	if r := c.mustRun("x", d("ping", 1)); r.Lookup("scripted").Type != 0 {
		t.Error("override not removed")
	}
}

// Many clients at once: the race detector checks the shared state.
func TestConcurrentClients(t *testing.T) {
	s := NewServer(t, Options{})
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		c := connect(t, s, clientOpts{compressors: []string{"snappy"}})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				if _, err := c.run("admin", d("ping", 1)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	go func() {
		for i := 0; i < 10; i++ {
			s.SetTopology(Topology{})
			s.Commands()
		}
	}()
	wg.Wait()
}
