package mongotest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/store"
)

// MaxMongoses bounds the mongoses of a ShardedCluster and the services
// behind a LoadBalancer, so a typo cannot open thousands of ports.
const MaxMongoses = 64

// shardName is the one shard listShards reports: every router of a
// ShardedCluster or LoadBalancer serves one shared store, which plays a
// replica-set shard without an address of its own.
const shardName = "shard0"

// ShardedClusterOptions configure a simulated sharded cluster.
type ShardedClusterOptions struct {
	// Options are every mongos's server options (authentication,
	// compressors, wire version...). Addr and Topology must be left zero:
	// each mongos listens on its own loopback port in the mongos role.
	Options Options
}

// ShardedCluster is a simulated sharded cluster: n mongos routers on
// loopback ports over one shared store, so a write through one mongos is
// seen at once through every other, as with one shard behind them. Each
// mongos has its own connections, cursors and fail points, as real mongos
// processes do. Its methods are safe for concurrent use.
type ShardedCluster struct {
	r *routers
}

// NewShardedCluster starts n mongoses for the test and closes them when
// the test ends. It fails the test if the cluster cannot start.
func NewShardedCluster(t testing.TB, n int, opts ShardedClusterOptions) *ShardedCluster {
	t.Helper()
	c, err := StartShardedCluster(n, opts)
	if err != nil {
		t.Fatalf("mongotest: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// StartShardedCluster starts n mongoses outside of a test; the caller must
// Close the cluster.
func StartShardedCluster(n int, opts ShardedClusterOptions) (*ShardedCluster, error) {
	r, err := startRouters("ShardedClusterOptions", n, opts.Options, RoleMongos)
	if err != nil {
		return nil, err
	}
	return &ShardedCluster{r: r}, nil
}

// Mongoses returns the mongos servers, in the order URI lists them.
func (c *ShardedCluster) Mongoses() []*Server { return c.r.servers() }

// AddUser adds a user to every mongos, as a user created through one is
// stored on the config servers that every mongos reads. See
// Server.AddUser.
func (c *ShardedCluster) AddUser(db, username, password string, mechanisms ...string) error {
	return c.r.addUser(db, username, password, mechanisms...)
}

// Close closes every mongos and waits for their goroutines. It is safe to
// call more than once.
func (c *ShardedCluster) Close() { c.r.close() }

// URI returns a connection string listing every mongos:
// "mongodb://h1,h2/".
func (c *ShardedCluster) URI() string {
	hosts := make([]string, len(c.r.srvs))
	for i, s := range c.r.srvs {
		hosts[i] = s.Addr()
	}
	return "mongodb://" + strings.Join(hosts, ",") + "/"
}

// routers are mongos servers over one store: a ShardedCluster's mongoses
// or a LoadBalancer's services.
type routers struct {
	store *store.Store
	srvs  []*Server

	// opMu serializes AddUser and Close.
	opMu   sync.Mutex
	closed bool
}

// startRouters starts n servers in role over one new store; field names
// the options struct in errors.
func startRouters(field string, n int, o Options, role Role) (*routers, error) {
	if n < 1 || n > MaxMongoses {
		return nil, fmt.Errorf("mongotest: %s: 1 to %d mongoses, not %d", field, MaxMongoses, n)
	}
	if o.Addr != "" {
		return nil, fmt.Errorf("mongotest: %s.Options.Addr must be empty: each mongos listens on its own loopback port", field)
	}
	if o.Topology.Role != RoleStandalone || o.Topology.SetName != "" {
		return nil, fmt.Errorf("mongotest: %s.Options.Topology must be empty: the deployment gives each mongos its role", field)
	}
	r := &routers{store: store.New()}
	o.Topology = Topology{Role: role}
	for i := 0; i < n; i++ {
		srv, err := newServerWithStore(o, r.store)
		if err == nil {
			err = srv.listen()
		}
		if err != nil {
			for _, s := range r.srvs {
				s.Close()
			}
			return nil, fmt.Errorf("mongotest: start mongos %d: %w", i, err)
		}
		r.srvs = append(r.srvs, srv)
	}
	return r, nil
}

func (r *routers) servers() []*Server { return append([]*Server(nil), r.srvs...) }

// addUser adds a user to every router.
func (r *routers) addUser(db, username, password string, mechanisms ...string) error {
	r.opMu.Lock()
	defer r.opMu.Unlock()
	if r.closed {
		return errors.New("mongotest: the deployment is closed")
	}
	for _, s := range r.srvs {
		if err := s.AddUser(db, username, password, mechanisms...); err != nil {
			return err
		}
	}
	return nil
}

// close closes every router and waits for their goroutines.
func (r *routers) close() {
	r.opMu.Lock()
	defer r.opMu.Unlock()
	r.closed = true
	for _, s := range r.srvs {
		s.Close()
	}
}

// isRouter tells whether the server plays a mongos.
func (r Role) isRouter() bool { return r == RoleMongos || r == RoleLoadBalanced }

// isdbgridCmd is mongos's {isdbgrid: 1}: how a shell tells a mongos from a
// mongod (on which the command does not exist).
func isdbgridCmd(_ context.Context, s *Server, _ *Request) (bson.Raw, error) {
	start, dst := bson.AppendDocumentStart(nil)
	dst = bson.AppendInt32Element(dst, "isdbgrid", 1)
	dst = bson.AppendStringElement(dst, "hostname", s.hostname())
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst, nil
}

// listShardsCmd is mongos's {listShards: 1}: the one shard, the shared
// store, described as a replica-set shard ("name/host") as mongod's
// config.shards documents are. It has no address of its own, so the host
// part is the shard's name.
func listShardsCmd(_ context.Context, s *Server, _ *Request) (bson.Raw, error) {
	ts := s.clock.now()
	start, dst := bson.AppendDocumentStart(nil)
	as, dst := bson.AppendArrayElementStart(dst, "shards")
	ds, dst := bson.AppendDocumentElementStart(dst, "0")
	dst = bson.AppendStringElement(dst, "_id", shardName)
	dst = bson.AppendStringElement(dst, "host", shardName+"/"+shardName+".mongotest.invalid:27018")
	dst = bson.AppendInt32Element(dst, "state", 1)
	dst = bson.AppendTimestampElement(dst, "topologyTime", ts.T, ts.I)
	dst = bson.AppendInt64Element(dst, "replSetConfigVersion", -1)
	dst, _ = bson.AppendDocumentEnd(dst, ds)
	dst, _ = bson.AppendDocumentEnd(dst, as)
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst, nil
}
