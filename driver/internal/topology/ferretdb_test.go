package topology

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/connstring"
	"github.com/mongoscope/mongoscope/driver/internal/conn"
	"github.com/mongoscope/mongoscope/driver/internal/selection"
	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
)

// Against FerretDB v1, a real third-party server that make test starts
// (MONGOSCOPE_FERRETDB_URI; MONGOSCOPE_REQUIRE_FERRETDB=1 turns a missing
// server into a failure): single-server discovery, then the pool under 64
// goroutines that each check out a connection, run a command and check it
// back in.
func TestFerretDBDiscoveryAndPool(t *testing.T) {
	uri := os.Getenv("MONGOSCOPE_FERRETDB_URI")
	if uri == "" {
		if os.Getenv("MONGOSCOPE_REQUIRE_FERRETDB") == "1" {
			t.Fatal("MONGOSCOPE_FERRETDB_URI is not set but MONGOSCOPE_REQUIRE_FERRETDB=1")
		}
		t.Skip("MONGOSCOPE_FERRETDB_URI is not set; make test starts FerretDB and sets it")
	}
	cs, err := connstring.Parse(uri)
	if err != nil {
		t.Fatal(err)
	}
	const maxPool = 8
	topo := newTopology(t, Config{Seeds: cs.Hosts, Pool: PoolOptions{MaxPoolSize: maxPool}})
	d := waitFor(t, topo, "FerretDB discovered as a standalone", func(d description.TopologyDescription) bool {
		return len(d.Servers) == 1 && d.Servers[0].Type == description.Standalone
	})
	if d.Type != description.Single || d.Servers[0].MaxWireVersion < conn.MinWireVersion {
		t.Fatalf("topology %+v", d)
	}

	ping, _ := bson.Marshal(bson.D{{Key: "ping", Value: int32(1)}})
	const workers, rounds = 64, 20
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				err := func() error {
					defer cancel()
					s, err := topo.Select(ctx, selection.Write())
					if err != nil {
						return err
					}
					defer s.EndOperation()
					pc, err := s.Pool().CheckOut(ctx)
					if err != nil {
						return err
					}
					defer s.Pool().CheckIn(ctx, pc)
					r, err := pc.Conn().Command(ctx, &conn.Request{DB: "admin", Command: ping})
					if err != nil {
						pc.MarkErrored(err)
						return err
					}
					r.Release()
					return nil
				}()
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st := topo.Description().Servers[0]
	s, _ := topo.Server(st.Address)
	stats := s.Pool().Stats()
	t.Logf("pool after %d checkouts by %d goroutines: %+v", workers*rounds, workers, stats)
	if stats.Total > maxPool || stats.CreatedTotal > maxPool || stats.InUse != 0 || stats.WaitCount != 0 {
		t.Errorf("pool stats %+v: want at most %d connections, none in use or waiting", stats, maxPool)
	}
	if stats.Waited == 0 {
		t.Error("64 goroutines never waited for 8 connections; the test did not contend")
	}
}
