package mongotest_test

import (
	"context"
	"fmt"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
)

// Two mongoses over one store: a write through one is read through the
// other. In a test, use NewShardedCluster, which closes the cluster when
// the test ends.
func ExampleStartShardedCluster() {
	sc, err := mongotest.StartShardedCluster(2, mongotest.ShardedClusterOptions{})
	if err != nil {
		panic(err)
	}
	defer sc.Close()
	ctx := context.Background()
	connect := func(uri string) *driver.Client {
		opts := &driver.ClientOptions{}
		if err := opts.ApplyURI(uri); err != nil {
			panic(err)
		}
		c, err := driver.Connect(ctx, opts)
		if err != nil {
			panic(err)
		}
		return c
	}
	first := connect(sc.Mongoses()[0].URI())
	defer first.Disconnect(ctx)
	second := connect(sc.Mongoses()[1].URI())
	defer second.Disconnect(ctx)

	insert := bson.D{{Key: "insert", Value: "orders"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}}}}
	if _, err := first.RunCommand(ctx, "shop", insert); err != nil {
		panic(err)
	}
	reply, err := second.RunCommand(ctx, "shop", bson.D{{Key: "count", Value: "orders"}})
	if err != nil {
		panic(err)
	}
	n, _ := reply.Lookup("n").AsInt64OK()
	fmt.Println("orders seen through the other mongos:", n)
	hello, err := second.RunCommand(ctx, "admin", bson.D{{Key: "hello", Value: 1}})
	if err != nil {
		panic(err)
	}
	fmt.Println("msg:", hello.Lookup("msg").StringValue())
	// Output:
	// orders seen through the other mongos: 1
	// msg: isdbgrid
}

// A load balancer in front of two services: each connection through it
// goes to the next service, whose hello carries its own serviceId. In a
// test, use NewLoadBalancer.
func ExampleStartLoadBalancer() {
	lb, err := mongotest.StartLoadBalancer(2, mongotest.LoadBalancerOptions{})
	if err != nil {
		panic(err)
	}
	defer lb.Close()
	ctx := context.Background()
	opts := &driver.ClientOptions{}
	if err := opts.ApplyURI(lb.URI()); err != nil {
		panic(err)
	}
	client, err := driver.Connect(ctx, opts)
	if err != nil {
		panic(err)
	}
	defer client.Disconnect(ctx)
	if _, err := client.RunCommand(ctx, "admin", bson.D{{Key: "ping", Value: 1}}); err != nil {
		panic(err)
	}
	fmt.Println("connections per service:", lb.Connections())
	// Output:
	// connections per service: [1 0]
}
