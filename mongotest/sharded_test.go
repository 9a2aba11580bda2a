package mongotest

import (
	"runtime"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

func TestShardedCluster(t *testing.T) {
	sc := NewShardedCluster(t, 2, ShardedClusterOptions{})
	ms := sc.Mongoses()
	if len(ms) != 2 {
		t.Fatalf("%d mongoses, want 2", len(ms))
	}
	want := "mongodb://" + ms[0].Addr() + "," + ms[1].Addr() + "/"
	if got := sc.URI(); got != want {
		t.Errorf("URI %q, want %q", got, want)
	}
	c0 := connect(t, ms[0], clientOpts{})
	c1 := connect(t, ms[1], clientOpts{})
	standalone := connect(t, NewServer(t, Options{}), clientOpts{})
	lsid := d("id", bson.Binary{Subtype: bson.SubtypeUUID, Data: make([]byte, 16)})

	// Cursor of a find on mongos 0, for the getMore rows.
	c0.mustRun("db", d("insert", "cur", "documents", bson.A{d("_id", 1), d("_id", 2), d("_id", 3)}))
	cur := cursorID(t, c0.mustRun("db", d("find", "cur", "batchSize", 1)))

	for _, tc := range []struct {
		name    string
		c       *client
		db      string
		cmd     bson.D
		code    int32 // 0: must succeed
		check   func(t *testing.T, r bson.Raw)
		fixture func(t *testing.T)
	}{
		{name: "hello is a mongos's", c: c1, db: "admin", cmd: d("hello", 1), check: func(t *testing.T, r bson.Raw) {
			if msg, _ := r.Lookup("msg").StringValueOK(); msg != "isdbgrid" {
				t.Errorf("msg %q, want isdbgrid", msg)
			}
			if w, _ := r.Lookup("isWritablePrimary").BooleanOK(); !w {
				t.Error("isWritablePrimary is not true")
			}
			for _, k := range []string{"setName", "hosts", "serviceId", "secondary", "readOnly"} {
				if _, err := r.LookupErr(k); err == nil {
					t.Errorf("a mongos's hello has %s", k)
				}
			}
			if _, err := r.LookupErr("$clusterTime"); err != nil {
				t.Error("no $clusterTime")
			}
		}},
		{name: "a write through one mongos", c: c0, db: "db", cmd: d("insert", "shared", "documents", bson.A{d("_id", 1, "x", "a")})},
		{name: "is read through the other", c: c1, db: "db", cmd: d("find", "shared"), check: func(t *testing.T, r bson.Raw) {
			docs, _ := r.Lookup("cursor", "firstBatch").Array().Values()
			if len(docs) != 1 || docs[0].Document().Lookup("x").StringValue() != "a" {
				t.Errorf("firstBatch %v, want the document written through mongos 0", docs)
			}
		}},
		{name: "isdbgrid", c: c1, db: "admin", cmd: d("isdbgrid", 1), check: func(t *testing.T, r bson.Raw) {
			if v, _ := r.Lookup("isdbgrid").AsInt64OK(); v != 1 {
				t.Errorf("isdbgrid %v, want 1", r.Lookup("isdbgrid"))
			}
			if _, ok := r.Lookup("hostname").StringValueOK(); !ok {
				t.Error("no hostname")
			}
		}},
		{name: "isdbgrid does not exist on mongod", c: standalone, db: "admin", cmd: d("isdbgrid", 1), code: mongoerr.CommandNotFound},
		{name: "listShards", c: c0, db: "admin", cmd: d("listShards", 1), check: func(t *testing.T, r bson.Raw) {
			shards, _ := r.Lookup("shards").Array().Values()
			if len(shards) != 1 {
				t.Fatalf("shards %v, want one", shards)
			}
			host := shards[0].Document().Lookup("host").StringValue()
			if !strings.HasPrefix(host, shards[0].Document().Lookup("_id").StringValue()+"/") {
				t.Errorf("host %q is not a replica-set shard's name/hosts", host)
			}
		}},
		{name: "listShards runs on admin only", c: c0, db: "db", cmd: d("listShards", 1), code: mongoerr.Unauthorized},
		{name: "listShards does not exist on mongod", c: standalone, db: "admin", cmd: d("listShards", 1), code: mongoerr.CommandNotFound},
		{name: "replSetGetStatus does not exist on mongos", c: c0, db: "admin", cmd: d("replSetGetStatus", 1), code: mongoerr.CommandNotFound},
		{name: "replSetStepDown does not exist on mongos", c: c0, db: "admin", cmd: d("replSetStepDown", 1), code: mongoerr.CommandNotFound},
		{name: "listCommands lists mongos's commands", c: c0, db: "admin", cmd: d("listCommands", 1), check: func(t *testing.T, r bson.Raw) {
			cmds := r.Lookup("commands").Document()
			for name, want := range map[string]bool{"isdbgrid": true, "listShards": true, "find": true, "replSetGetStatus": false} {
				if _, err := cmds.LookupErr(name); (err == nil) != want {
					t.Errorf("%s listed=%v, want %v", name, err == nil, want)
				}
			}
		}},
		{name: "serverStatus says mongos", c: c1, db: "admin", cmd: d("serverStatus", 1), check: func(t *testing.T, r bson.Raw) {
			if p := r.Lookup("process").StringValue(); p != "mongos" {
				t.Errorf("process %q, want mongos", p)
			}
		}},
		{name: "a retryable write is accepted", c: c0, db: "db", cmd: d("insert", "retry", "documents", bson.A{d("_id", 1)}, "lsid", lsid, "txnNumber", int64(1))},
		{name: "its retry through the other mongos is not applied twice", c: c1, db: "db", cmd: d("insert", "retry", "documents", bson.A{d("_id", 1)}, "lsid", lsid, "txnNumber", int64(1)), check: func(t *testing.T, r bson.Raw) {
			if n, _ := r.Lookup("n").AsInt64OK(); n != 1 {
				t.Errorf("n %d, want 1 (the first attempt's reply)", n)
			}
			if _, err := r.LookupErr("writeErrors"); err == nil {
				t.Errorf("the retry was applied again: %v", r)
			}
		}},
		{name: "a cursor belongs to its mongos", c: c1, db: "db", cmd: d("getMore", cur, "collection", "cur"), code: mongoerr.CursorNotFound},
		{name: "and goes on there", c: c0, db: "db", cmd: d("getMore", cur, "collection", "cur")},
		{name: "a fail point is per mongos", c: c1, db: "db", cmd: d("ping", 1), fixture: func(t *testing.T) {
			c0.mustRun("admin", d("configureFailPoint", "failCommand", "mode", "alwaysOn", "data", d("failCommands", bson.A{"ping"}, "errorCode", 2)))
		}},
		{name: "and applies on its own", c: c0, db: "db", cmd: d("ping", 1), code: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.fixture != nil {
				tc.fixture(t)
			}
			r, err := tc.c.run(tc.db, tc.cmd)
			if tc.code != 0 {
				if err == nil {
					t.Fatalf("succeeded: %v", r)
				}
				if ce := asCmdError(t, err); ce.Code != tc.code {
					t.Fatalf("code %d (%s), want %d", ce.Code, ce.Message, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
}

func TestShardedClusterOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		opts ShardedClusterOptions
		want string
	}{
		{"no mongos", 0, ShardedClusterOptions{}, "1 to 64 mongoses, not 0"},
		{"too many", MaxMongoses + 1, ShardedClusterOptions{}, "not 65"},
		{"an address", 2, ShardedClusterOptions{Options: Options{Addr: "127.0.0.1:0"}}, "Options.Addr must be empty"},
		{"a topology", 2, ShardedClusterOptions{Options: Options{Topology: Topology{Role: RolePrimary, SetName: "rs"}}}, "Options.Topology must be empty"},
		{"a bad version", 2, ShardedClusterOptions{Options: Options{Version: "x"}}, "start mongos 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := StartShardedCluster(tc.n, tc.opts)
			if err == nil {
				sc.Close()
				t.Fatal("started")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestShardedClusterCloseLeavesNoGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	sc, err := StartShardedCluster(3, ShardedClusterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range sc.Mongoses() {
		connect(t, m, clientOpts{}).mustRun("admin", d("ping", 1))
	}
	sc.Close()
	sc.Close()
	waitGoroutines(t, before)
}

func TestLoadBalancer(t *testing.T) {
	lb := NewLoadBalancer(t, 3, LoadBalancerOptions{})
	if want := "mongodb://" + lb.Addr() + "/?loadBalanced=true"; lb.URI() != want {
		t.Errorf("URI %q, want %q", lb.URI(), want)
	}
	svcs := lb.Services()
	// Six connections through the front: round robin puts two on each
	// service, and each handshake reports its service's serviceId.
	seen := map[bson.ObjectID]int{}
	var clients []*client
	for i := 0; i < 6; i++ {
		c := connect(t, svcs[0], clientOpts{addr: lb.Addr(), loadBalanced: true})
		id, ok := c.hello.Lookup("serviceId").ObjectIDOK()
		if !ok {
			t.Fatalf("hello through the load balancer has no serviceId: %v", c.hello)
		}
		seen[id]++
		clients = append(clients, c)
	}
	if len(seen) != 3 {
		t.Errorf("serviceIds %v, want 3 distinct ones", seen)
	}
	for id, n := range seen {
		if n != 2 {
			t.Errorf("serviceId %s got %d connections, want 2", id.Hex(), n)
		}
	}
	if got := lb.Connections(); len(got) != 3 || got[0] != 2 || got[1] != 2 || got[2] != 2 {
		t.Errorf("Connections %v, want [2 2 2]", got)
	}
	for i, s := range svcs {
		if s.NumConnections() != 2 {
			t.Errorf("service %d has %d connections, want 2", i, s.NumConnections())
		}
	}

	// Data is shared: written through the first connection's service,
	// read through the second's.
	clients[0].mustRun("db", d("insert", "c", "documents", bson.A{d("_id", 7)}))
	r := clients[1].mustRun("db", d("count", "c"))
	if n, _ := r.Lookup("n").AsInt64OK(); n != 1 {
		t.Errorf("count through another service %d, want 1", n)
	}

	// A handshake without loadBalanced is refused by the service.
	if _, err := connectErr(t, svcs[0], clientOpts{addr: lb.Addr()}); err == nil {
		t.Error("a hello without loadBalanced:true succeeded")
	}
}

func TestLoadBalancerCloseLeavesNoGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	lb, err := StartLoadBalancer(2, LoadBalancerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		connect(t, lb.Services()[0], clientOpts{addr: lb.Addr(), loadBalanced: true}).mustRun("admin", d("ping", 1))
	}
	lb.Close()
	lb.Close()
	waitGoroutines(t, before)
	if _, err := StartLoadBalancer(0, LoadBalancerOptions{}); err == nil {
		t.Error("a load balancer with no service started")
	}
}
