// Command officialrunner starts a mongotest deployment, prints its URI on
// the first line of standard output and serves until it gets SIGINT or
// SIGTERM (or, with -stdin, until standard input closes). run.sh uses it to run the official
// Go driver's unified test runner against mongotest; see README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/mongoscope/mongoscope/mongotest"
)

func main() {
	topo := flag.String("topology", "replicaset", "the deployment: replicaset, single, sharded or loadbalanced")
	n := flag.Int("n", 3, "members of the replica set, mongoses of the sharded cluster, or services behind the load balancer")
	watchStdin := flag.Bool("stdin", false, "also stop when standard input closes")
	flag.Parse()

	uris, closeFn, err := start(*topo, *n)
	if err != nil {
		fmt.Fprintln(os.Stderr, "officialrunner:", err)
		os.Exit(1)
	}
	defer closeFn()
	for _, u := range uris {
		fmt.Println(u)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stdinClosed := make(chan struct{})
	if *watchStdin {
		// Ends with the process: nothing else waits for it.
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			close(stdinClosed)
		}()
	}
	select {
	case <-ctx.Done():
	case <-stdinClosed:
	}
}

// start starts the deployment and returns its URI, then any NAME=URI
// lines the runner needs as environment variables, and the function that
// closes it.
func start(topo string, n int) ([]string, func(), error) {
	switch topo {
	case "replicaset":
		rs, err := mongotest.StartReplicaSet(n, mongotest.ReplicaSetOptions{})
		if err != nil {
			return nil, nil, err
		}
		return []string{rs.URI()}, rs.Close, nil
	case "sharded":
		sc, err := mongotest.StartShardedCluster(n, mongotest.ShardedClusterOptions{})
		if err != nil {
			return nil, nil, err
		}
		return []string{sc.URI()}, sc.Close, nil
	case "single":
		s, err := mongotest.Start(mongotest.Options{})
		if err != nil {
			return nil, nil, err
		}
		return []string{s.URI()}, s.Close, nil
	case "loadbalanced":
		lb, err := mongotest.StartLoadBalancer(n, mongotest.LoadBalancerOptions{})
		if err != nil {
			return nil, nil, err
		}
		// A service reached directly is a load balancer in front of one
		// mongos, as the driver sees it; the front spreads over all.
		single := lb.Services()[0].URI()
		return []string{single, "SINGLE_MONGOS_LB_URI=" + single, "MULTI_MONGOS_LB_URI=" + lb.URI()}, lb.Close, nil
	}
	return nil, nil, fmt.Errorf("unknown -topology %q (want replicaset, single, sharded or loadbalanced)", topo)
}
