package mongotest

import (
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/internal/wire"
)

func strs(r bson.Raw, key string) []string {
	arr, ok := r.Lookup(key).ArrayOK()
	if !ok {
		return nil
	}
	vals, _ := arr.Values()
	out := []string{}
	for _, v := range vals {
		out = append(out, v.StringValue())
	}
	return out
}

func TestHelloRoles(t *testing.T) {
	members := Topology{SetName: "rs0", Hosts: []string{"a:1", "b:2"}, Passives: []string{"c:3"}, Arbiters: []string{"d:4"},
		Primary: "a:1", Tags: map[string]string{"dc": "east", "az": "1"}, SetVersion: 7, Term: 3}
	with := func(role Role, me string) Topology {
		t := members.clone()
		t.Role, t.Me = role, me
		return t
	}
	type want map[string]any // field -> value; nil means absent
	for _, tc := range []struct {
		name string
		topo Topology
		lb   bool
		want want
	}{
		{"standalone", Topology{}, false, want{
			"isWritablePrimary": true, "setName": nil, "msg": nil, "hosts": nil, "lastWrite": nil, "electionId": nil,
			"$clusterTime": nil, "serviceId": nil, "secondary": nil,
		}},
		{"primary", with(RolePrimary, "a:1"), false, want{
			"isWritablePrimary": true, "secondary": false, "setName": "rs0", "setVersion": int32(7), "primary": "a:1", "me": "a:1",
			"hosts": "a:1,b:2", "passives": "c:3", "arbiters": "d:4", "tags.dc": "east", "tags.az": "1",
			"electionId": "7fffffff0000000000000003", "lastWrite.opTime.t": int64(3), "hidden": nil, "arbiterOnly": nil,
		}},
		{"secondary", with(RoleSecondary, "b:2"), false, want{
			"isWritablePrimary": false, "secondary": true, "primary": "a:1", "me": "b:2", "electionId": nil, "passive": nil,
			"lastWrite.lastWriteDate": "set",
		}},
		{"passive secondary", func() Topology { t := with(RoleSecondary, "c:3"); t.Passive = true; return t }(), false, want{
			"secondary": true, "passive": true, "hidden": nil,
		}},
		{"arbiter", with(RoleArbiter, "d:4"), false, want{
			"isWritablePrimary": false, "secondary": false, "arbiterOnly": true, "lastWrite": nil, "me": "d:4",
		}},
		{"hidden", with(RoleHidden, "e:5"), false, want{
			"isWritablePrimary": false, "secondary": true, "hidden": true, "passive": true, "me": "e:5",
		}},
		{"alone primary", Topology{Role: RolePrimary, SetName: "solo"}, false, want{
			"hosts": "self", "primary": "self", "me": "self", "electionId": "7fffffff0000000000000001", "setVersion": int32(1),
		}},
		{"mongos", Topology{Role: RoleMongos}, false, want{
			"isWritablePrimary": true, "msg": "isdbgrid", "setName": nil, "serviceId": nil, "$clusterTime.clusterTime": "set",
		}},
		{"load-balanced", Topology{Role: RoleLoadBalanced}, true, want{
			"isWritablePrimary": true, "msg": "isdbgrid", "serviceId": "set",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewServer(t, Options{Topology: tc.topo, MaxWireVersion: 21})
			c := connect(t, s, clientOpts{loadBalanced: tc.lb})
			r := c.hello
			for key, v := range tc.want {
				got, err := r.LookupPath(key)
				switch v := v.(type) {
				case nil:
					if err == nil {
						t.Errorf("%s = %v, want absent", key, got)
					}
					continue
				case string:
					if err != nil {
						t.Errorf("%s absent", key)
						continue
					}
					v = strings.ReplaceAll(v, "self", s.Addr())
					switch {
					case v == "set":
					case got.Type == bson.TypeArray:
						if g := strings.Join(strs(r, key), ","); g != v {
							t.Errorf("%s = %s, want %s", key, g, v)
						}
					case got.Type == bson.TypeObjectID:
						if g := got.ObjectID().Hex(); g != v {
							t.Errorf("%s = %s, want %s", key, g, v)
						}
					case got.StringValue() != v:
						t.Errorf("%s = %v, want %s", key, got, v)
					}
				case bool:
					if b, ok := got.BooleanOK(); !ok || b != v {
						t.Errorf("%s = %v, want %v", key, got, v)
					}
				case int32:
					if n, ok := got.Int32OK(); !ok || n != v {
						t.Errorf("%s = %v, want %v", key, got, v)
					}
				case int64:
					if n, ok := got.Int64OK(); !ok || n != v {
						t.Errorf("%s = %v, want %v", key, got, v)
					}
				}
			}
			// Fields every role has.
			pid, counter := s.TopologyVersion()
			if got := r.Lookup("topologyVersion", "processId").ObjectID(); got != pid {
				t.Errorf("processId %v", got)
			}
			if got := r.Lookup("topologyVersion", "counter").Int64(); got != counter {
				t.Errorf("counter %v", got)
			}
			for key, v := range map[string]int32{"maxBsonObjectSize": MaxBSONObjectSize, "maxMessageSizeBytes": MaxMessageSizeBytes,
				"maxWriteBatchSize": MaxWriteBatchSize, "logicalSessionTimeoutMinutes": 30, "minWireVersion": 0, "maxWireVersion": 21} {
				if got := r.Lookup(key).Int32(); got != v {
					t.Errorf("%s = %d, want %d", key, got, v)
				}
			}
			if r.Lookup("connectionId").Int64() != c.id || c.id == 0 {
				t.Errorf("connectionId %v", r.Lookup("connectionId"))
			}
			if lt := r.Lookup("localTime").DateTime(); time.Since(time.UnixMilli(lt)) > time.Minute {
				t.Errorf("localTime %v", lt)
			}
			if !r.Lookup("helloOk").Boolean() || r.Lookup("readOnly").Boolean() {
				t.Error(r)
			}
			if tc.topo.Role.replicaSet() && tc.topo.Role != RoleArbiter {
				lwd := r.Lookup("lastWrite", "lastWriteDate").DateTime()
				if time.Since(time.UnixMilli(lwd)) > 2*time.Second {
					t.Errorf("lastWriteDate %v", lwd)
				}
			}
		})
	}
}

func TestHelloLastWriteLag(t *testing.T) {
	past := time.Now().Add(-90 * time.Second).Truncate(time.Second)
	s := NewServer(t, Options{Topology: Topology{Role: RoleSecondary, SetName: "rs", LastWrite: past}})
	r := connect(t, s, clientOpts{}).hello
	if got := r.Lookup("lastWrite", "lastWriteDate").DateTime(); got != past.UnixMilli() {
		t.Errorf("lastWriteDate %v, want %v", time.UnixMilli(got), past)
	}
	if ts, _ := r.Lookup("lastWrite", "opTime", "ts").Timestamp(); int64(ts) != past.Unix() {
		t.Errorf("opTime.ts %d", ts)
	}
}

func TestLoadBalancedRequiresFlag(t *testing.T) {
	s := NewServer(t, Options{Topology: Topology{Role: RoleLoadBalanced}})
	if !strings.HasSuffix(s.URI(), "/?loadBalanced=true") {
		t.Error(s.URI())
	}
	_, err := connectErr(t, s, clientOpts{})
	if ce := asCmdError(t, err); ce.Code != 2 || !strings.Contains(ce.Message, "loadBalanced:true") {
		t.Error(ce)
	}
	c := connect(t, s, clientOpts{loadBalanced: true})
	// Later hellos need not repeat it (a pinned connection's hello).
	r := c.mustRun("admin", d("hello", 1))
	if r.Lookup("serviceId").Type != 0 {
		t.Error("serviceId without loadBalanced")
	}
}

func TestClientMetadataOnlyOnce(t *testing.T) {
	s := NewServer(t, Options{})
	c := connect(t, s, clientOpts{appName: "app1"})
	_, err := c.run("admin", d("hello", 1, "client", d("application", d("name", "app2"))))
	if ce := asCmdError(t, err); ce.Code != 186 || ce.CodeName != "ClientMetadataCannotBeMutated" {
		t.Error(ce)
	}
	s.mu.Lock()
	var sc *Conn
	for _, x := range s.conns {
		sc = x
	}
	s.mu.Unlock()
	if sc.AppName() != "app1" || sc.ClientMetadata().Lookup("driver", "name").StringValue() != "mongotest-test" {
		t.Errorf("%q %v", sc.AppName(), sc.ClientMetadata())
	}
}

func TestCompressionNegotiation(t *testing.T) {
	for _, tc := range []struct {
		server, client []string
		want           string
	}{
		{nil, []string{"zstd", "snappy", "zlib"}, "zstd,snappy,zlib"},
		{nil, []string{"zlib", "lz4", "zlib", "noop"}, "zlib"},
		{[]string{"snappy"}, []string{"zstd", "snappy"}, "snappy"},
		{[]string{}, []string{"zstd"}, ""},
		{nil, nil, ""},
	} {
		s := NewServer(t, Options{Compressors: tc.server})
		c := connect(t, s, clientOpts{compressors: tc.client})
		if got := strings.Join(strs(c.hello, "compression"), ","); got != tc.want {
			t.Errorf("server %v client %v: %q, want %q", tc.server, tc.client, got, tc.want)
		}
		if tc.want == "" && c.hello.Lookup("compression").Type != 0 {
			t.Error("empty compression field sent")
		}
	}
}

// awaitHello builds an awaitable hello.
func awaitHello(s *Server, maxAwait int64) bson.D {
	pid, counter := s.TopologyVersion()
	return d("hello", 1, "topologyVersion", d("processId", pid, "counter", counter), "maxAwaitTimeMS", maxAwait)
}

func TestAwaitableHello(t *testing.T) {
	s := NewServer(t, Options{Topology: Topology{Role: RolePrimary, SetName: "rs"}})
	c := connect(t, s, clientOpts{})

	// Nothing changes: the reply comes after maxAwaitTimeMS.
	start := time.Now()
	r := c.mustRun("admin", awaitHello(s, 150))
	if el := time.Since(start); el < 150*time.Millisecond {
		t.Errorf("answered after %v", el)
	}
	if r.Lookup("topologyVersion", "counter").Int64() != 0 {
		t.Error(r)
	}

	// A change answers at once, with the new state.
	go func() {
		time.Sleep(50 * time.Millisecond)
		s.SetTopology(Topology{Role: RoleSecondary, SetName: "rs"})
	}()
	start = time.Now()
	r = c.mustRun("admin", awaitHello(s, 10000))
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("answered after %v", el)
	}
	if r.Lookup("topologyVersion", "counter").Int64() != 1 || !r.Lookup("secondary").Boolean() {
		t.Error(r)
	}

	// An old counter or another process's id: at once.
	for _, tv := range []bson.D{
		d("processId", bson.NewObjectID(), "counter", int64(1)),
		d("processId", s.processID, "counter", int64(0)),
	} {
		start = time.Now()
		c.mustRun("admin", d("hello", 1, "topologyVersion", tv, "maxAwaitTimeMS", int64(10000)))
		if el := time.Since(start); el > time.Second {
			t.Errorf("%v: answered after %v", tv, el)
		}
	}
	for _, tc := range []struct {
		cmd  bson.D
		want string
	}{
		{d("hello", 1, "maxAwaitTimeMS", 10), "sent together"},
		{d("hello", 1, "topologyVersion", d("processId", s.processID, "counter", int64(1))), "sent together"},
		{d("hello", 1, "topologyVersion", d("processId", s.processID, "counter", int64(1)), "maxAwaitTimeMS", -1), "non-negative"},
		{d("hello", 1, "topologyVersion", d("processId", s.processID, "counter", int64(9)), "maxAwaitTimeMS", 1), "newer than"},
		{d("hello", 1, "topologyVersion", 3, "maxAwaitTimeMS", 1), "expected an object"},
		{d("hello", 1, "topologyVersion", d("counter", int64(9)), "maxAwaitTimeMS", 1), "processId"},
		{d("hello", 1, "topologyVersion", d("processId", s.processID), "maxAwaitTimeMS", 1), "counter"},
		{d("hello", 1, "topologyVersion", d("processId", s.processID), "maxAwaitTimeMS", "x"), "maxAwaitTimeMS"},
	} {
		if _, err := c.run("admin", tc.cmd); !strings.Contains(asCmdError(t, err).Message, tc.want) {
			t.Errorf("%v: %v, want %q", tc.cmd, err, tc.want)
		}
	}
}

func TestExhaustHello(t *testing.T) {
	s := NewServer(t, Options{Topology: Topology{Role: RolePrimary, SetName: "rs"}})
	c := connect(t, s, clientOpts{compressors: []string{"zstd"}})
	id := c.send("admin", awaitHello(s, 100), wire.ExhaustAllowed)
	prev := id
	// Replies come every maxAwaitTimeMS, then at once on each change.
	for i := 0; i < 5; i++ {
		if i >= 2 {
			s.SetTopology(Topology{Role: RolePrimary, SetName: "rs", SetVersion: int64(i)})
		}
		start := time.Now()
		r, err := c.recv()
		if err != nil {
			t.Fatal(err)
		}
		if r.Flags&wire.MoreToCome == 0 || r.Header.ResponseTo != prev {
			t.Fatalf("reply %d: flags %v responseTo %d, want moreToCome and %d", i, r.Flags, r.Header.ResponseTo, prev)
		}
		if r.compressed {
			t.Error("a hello reply was compressed")
		}
		prev = r.Header.RequestID
		counter := r.Body.Lookup("topologyVersion", "counter").Int64()
		if i >= 2 {
			if counter != int64(i-1) || r.Body.Lookup("setVersion").Int32() != int32(i) {
				t.Errorf("reply %d: counter %d, %v", i, counter, r.Body.Lookup("setVersion"))
			}
			if el := time.Since(start); el > 90*time.Millisecond {
				t.Logf("reply %d after %v (timer may have won)", i, el)
			}
		} else if counter != 0 {
			t.Errorf("reply %d: counter %d", i, counter)
		}
	}
	// A fail point on hello ends the stream with an error, without
	// moreToCome, as mongod runs each streamed hello as a command.
	if err := s.SetFailPoint(d("configureFailPoint", "failCommand", "mode", d("times", 1),
		"data", d("failCommands", bson.A{"hello"}, "errorCode", 91))); err != nil {
		t.Fatal(err)
	}
	for {
		r, err := c.recv()
		if err != nil {
			t.Fatal(err)
		}
		if r.Flags&wire.MoreToCome == 0 {
			if ce := asCmdError(t, replyError(r.Body)); ce.Code != 91 {
				t.Error(ce)
			}
			if r.Body.Lookup("topologyVersion").Type != 0 {
				t.Error("ShutdownInProgress with a topologyVersion outside quiesce mode")
			}
			break
		}
	}
	// The connection is usable again.
	c.mustRun("admin", d("ping", 1))

	// Hanging up mid-stream ends the server's goroutines for it.
	c2 := connect(t, s, clientOpts{})
	c2.send("admin", awaitHello(s, 60000), wire.ExhaustAllowed)
	for s.NumConnections() != 2 {
		time.Sleep(time.Millisecond)
	}
	c2.nc.Close()
	deadline := time.Now().Add(3 * time.Second)
	for s.NumConnections() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the server kept the streaming connection")
		}
		time.Sleep(time.Millisecond)
	}
	if errs := s.ConnectionErrors(); len(errs) != 0 {
		t.Errorf("a client hanging up was recorded: %v", errs)
	}
}

func TestExhaustNotAwaitable(t *testing.T) {
	// exhaustAllowed on a plain hello or another command: one reply,
	// without moreToCome.
	s := NewServer(t, Options{})
	c := connect(t, s, clientOpts{})
	for _, cmd := range []bson.D{d("hello", 1), d("ping", 1)} {
		c.send("admin", cmd, wire.ExhaustAllowed)
		r, err := c.recv()
		if err != nil {
			t.Fatal(err)
		}
		if r.Flags&wire.MoreToCome != 0 {
			t.Errorf("%v: moreToCome", cmd)
		}
	}
}
