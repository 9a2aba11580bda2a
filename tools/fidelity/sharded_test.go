package fidelity

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongoscope/mongoscope/mongotest"
)

// The official driver sees two mongoses as a sharded cluster, spreads
// its operations over both (useMultipleMongoses), and a write through one
// mongos is read through the other, as over one shard.
func TestShardedClusterTwoMongoses(t *testing.T) {
	sc := mongotest.NewShardedCluster(t, 2, mongotest.ShardedClusterOptions{})
	c := connect(t, sc.URI(), options.Client().SetRetryWrites(true))
	coll := c.Database("db").Collection("c")
	// Insert until each mongos has had some of the writes: the driver
	// selects both once it knows both, and its first checks of the two
	// seeds may end at different times, so a fixed number of writes could
	// all go to the one known first.
	inserts := func(m *mongotest.Server) int {
		n := 0
		for _, cmd := range m.Commands() {
			if cmd.Name == "insert" {
				n++
			}
		}
		return n
	}
	total := 0
	deadline := time.Now().Add(10 * time.Second)
	for ; total < 20 || inserts(sc.Mongoses()[0]) == 0 || inserts(sc.Mongoses()[1]) == 0; total++ {
		if time.Now().After(deadline) {
			for i, m := range sc.Mongoses() {
				if inserts(m) == 0 {
					t.Fatalf("mongos %d received none of %d inserts in 10 s: the driver did not use it", i, total)
				}
			}
		}
		if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: total}}); err != nil {
			t.Fatal(err)
		}
	}
	// A client on each mongos alone sees every document.
	for i, m := range sc.Mongoses() {
		one := connect(t, m.URI())
		n, err := one.Database("db").Collection("c").CountDocuments(ctx(t), bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		if n != int64(total) {
			t.Errorf("count through mongos %d: %d, want %d", i, n, total)
		}
	}
	var shards bson.M
	if err := c.Database("admin").RunCommand(ctx(t), bson.D{{Key: "listShards", Value: 1}}).Decode(&shards); err != nil {
		t.Fatal(err)
	}
	if arr, ok := shards["shards"].(bson.A); !ok || len(arr) != 1 {
		t.Errorf("listShards: %v", shards)
	}
}

// A session's retryable write and its causally consistent read work
// through a sharded cluster, and the topology is Sharded.
func TestShardedClusterSessions(t *testing.T) {
	sc := mongotest.NewShardedCluster(t, 2, mongotest.ShardedClusterOptions{})
	var kind string
	mon := &event.ServerMonitor{TopologyDescriptionChanged: func(e *event.TopologyDescriptionChangedEvent) {
		kind = e.NewDescription.Kind
	}}
	c := connect(t, sc.URI(), options.Client().SetServerMonitor(mon))
	coll := c.Database("db").Collection("s")
	err := c.UseSessionWithOptions(ctx(t), options.Session().SetCausalConsistency(true), func(sctx context.Context) error {
		if _, err := coll.InsertOne(sctx, bson.D{{Key: "x", Value: 1}}); err != nil {
			return err
		}
		return coll.FindOne(sctx, bson.D{{Key: "x", Value: 1}}).Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if kind != "Sharded" {
		t.Errorf("topology kind %q, want Sharded", kind)
	}
}

// With loadBalanced=true the driver pins each connection to the service
// behind it. In load-balanced mode a client opens no monitoring
// connection, so two clients doing one operation each open the load
// balancer's first and second connections, which land on the two
// services: distinct serviceIds, one shared store.
func TestLoadBalancerServices(t *testing.T) {
	lb := mongotest.NewLoadBalancer(t, 2, mongotest.LoadBalancerOptions{})
	var mu sync.Mutex
	services := map[int]map[bson.ObjectID]bool{}
	client := func(i int) *mongo.Client {
		services[i] = map[bson.ObjectID]bool{}
		mon := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
			if e.ServiceID != nil {
				mu.Lock()
				services[i][*e.ServiceID] = true
				mu.Unlock()
			}
		}}
		return connect(t, lb.URI(), options.Client().SetMonitor(mon))
	}
	a, b := client(0), client(1)
	if _, err := a.Database("db").Collection("lb").InsertOne(ctx(t), bson.D{{Key: "x", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	n, err := b.Database("db").Collection("lb").CountDocuments(ctx(t), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("count through the other service: %d, want 1", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(services[0]) != 1 || len(services[1]) != 1 {
		t.Fatalf("serviceIds seen: %v, want one per client", services)
	}
	for id := range services[0] {
		if services[1][id] {
			t.Errorf("both clients' connections went to service %s, want distinct services", id.Hex())
		}
	}
	if got := lb.Connections(); got[0] != 1 || got[1] != 1 {
		t.Errorf("connections per service %v, want [1 1]", got)
	}
}
