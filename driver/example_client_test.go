package driver_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
)

// startServer starts an in-process server for the examples; a real
// program connects to its deployment's URI instead.
func startServer(o mongotest.Options) *mongotest.Server {
	s, err := mongotest.Start(o)
	if err != nil {
		panic(err)
	}
	return s
}

// Connect returns at once; the first operation waits for a suitable
// server. Disconnect waits for the operations in flight (until its context
// ends) and stops every goroutine the client started.
func ExampleConnect() {
	s := startServer(mongotest.Options{})
	defer s.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	opts := &driver.ClientOptions{URIOptions: driver.URIOptions{AppName: "example"}}
	if err := opts.ApplyURI(s.URI()); err != nil {
		panic(err)
	}
	client, err := driver.Connect(ctx, opts)
	if err != nil {
		panic(err)
	}
	defer client.Disconnect(ctx)

	if err := client.Ping(ctx); err != nil {
		fmt.Println("ping:", err)
		return
	}
	fmt.Println("connected to", client.Topology().Kind)
	// Output: connected to Single
}

// RunCommand takes a bson.D, whose order is kept: the command's name comes
// first, its options after it.
func ExampleClient_RunCommand() {
	s := startServer(mongotest.Options{})
	defer s.Close()
	ctx := context.Background()
	opts := &driver.ClientOptions{}
	if err := opts.ApplyURI(s.URI()); err != nil {
		panic(err)
	}
	client, err := driver.Connect(ctx, opts)
	if err != nil {
		panic(err)
	}
	defer client.Disconnect(ctx)

	_, err = client.RunCommand(ctx, "shop", bson.D{
		{Key: "insert", Value: "orders"},
		{Key: "documents", Value: bson.A{
			bson.D{{Key: "_id", Value: 1}, {Key: "item", Value: "tea"}},
			bson.D{{Key: "_id", Value: 2}, {Key: "item", Value: "cake"}},
		}},
	})
	if err != nil {
		panic(err)
	}
	reply, err := client.RunCommand(ctx, "shop", bson.D{
		{Key: "find", Value: "orders"},
		{Key: "filter", Value: bson.D{{Key: "item", Value: "cake"}}},
		{Key: "limit", Value: 1},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(reply.Lookup("cursor", "firstBatch"))

	// A map has no key order: with more than one key, RunCommand refuses
	// it before sending anything.
	_, err = client.RunCommand(ctx, "shop", bson.M{"find": "orders", "limit": 1})
	fmt.Println(err)
	// Output:
	// [{"_id":2,"item":"cake"}]
	// driver: invalid argument cmd: a bson.M with 2 keys has no key order; the command name must come first: use bson.D
}

// Topology is a snapshot of the client's view of the deployment; String
// renders it for people, and the fields are there for programs.
func ExampleClient_Topology() {
	rs, err := mongotest.StartReplicaSet(3, mongotest.ReplicaSetOptions{})
	if err != nil {
		panic(err)
	}
	defer rs.Close()
	ctx := context.Background()
	opts := &driver.ClientOptions{}
	if err := opts.ApplyURI(rs.URI()); err != nil {
		panic(err)
	}
	client, err := driver.Connect(ctx, opts)
	if err != nil {
		panic(err)
	}
	defer client.Disconnect(ctx)
	if err := client.Ping(ctx); err != nil {
		panic(err)
	}
	// Wait until every member has been checked once.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if !strings.Contains(client.Topology().String(), "Unknown") {
			break
		}
	}

	snap := client.Topology()
	fmt.Println(snap.Kind, snap.SetName, len(snap.Servers), "servers")
	kinds := map[string]int{}
	for _, srv := range snap.Servers {
		kinds[srv.Kind]++
	}
	fmt.Println(kinds)
	// fmt.Println(snap) prints, for example:
	//
	//	ReplicaSetWithPrimary "rs0", streaming, 3 servers
	//	  127.0.0.1:40001 RSPrimary "rs0", rtt 210µs (min 180µs), 0 operations, pool ready: 1 open (0 in use, 1 idle) of 100
	//	  ...

	// Output:
	// ReplicaSetWithPrimary rs0 3 servers
	// map[RSPrimary:1 RSSecondary:2]
}
