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
	topo := flag.String("topology", "replicaset", "the deployment: replicaset, single or sharded")
	n := flag.Int("n", 3, "members of the replica set, or mongoses of the sharded cluster")
	watchStdin := flag.Bool("stdin", false, "also stop when standard input closes")
	flag.Parse()

	uri, closeFn, err := start(*topo, *n)
	if err != nil {
		fmt.Fprintln(os.Stderr, "officialrunner:", err)
		os.Exit(1)
	}
	defer closeFn()
	fmt.Println(uri)

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

// start starts the deployment and returns its URI and the function that
// closes it.
func start(topo string, n int) (string, func(), error) {
	switch topo {
	case "replicaset":
		rs, err := mongotest.StartReplicaSet(n, mongotest.ReplicaSetOptions{})
		if err != nil {
			return "", nil, err
		}
		return rs.URI(), rs.Close, nil
	case "sharded":
		sc, err := mongotest.StartShardedCluster(n, mongotest.ShardedClusterOptions{})
		if err != nil {
			return "", nil, err
		}
		return sc.URI(), sc.Close, nil
	case "single":
		s, err := mongotest.Start(mongotest.Options{})
		if err != nil {
			return "", nil, err
		}
		return s.URI(), s.Close, nil
	}
	return "", nil, fmt.Errorf("unknown -topology %q (want replicaset, single or sharded)", topo)
}
