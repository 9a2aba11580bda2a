package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/mongoscope/mongoscope/mongotest"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	maddress "go.mongodb.org/mongo-driver/v2/mongo/address"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/description"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/session"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"
)

// driverTask is a row of the second table. Our side cannot run in this
// process: the pool and selection live under driver/internal, which Go's
// internal rule keeps out of this module, so ours is a benchmark of those
// packages run with go test in the repository root.
type driverTask struct {
	name string
	// pkg and bench name our benchmark: the package path relative to the
	// repository root and the full benchmark name, sub-benchmark included,
	// without the -GOMAXPROCS suffix.
	pkg, bench string
	// theirs is nil when the official driver has no way to do the same
	// work through its exported API.
	theirs func(b *testing.B)
}

// Constants shared with our benchmarks (driver/internal/pool and
// driver/internal/selection bench_test.go): change them together.
const (
	contenders     = 64  // goroutines checking out at once
	maxPoolSize    = 100 // the pool's limit, the drivers' default
	localThreshold = 15 * time.Millisecond
)

// The rows of the second table.
const (
	rowPool   = "pool checkout+checkin, 64 goroutines"
	rowSelect = "select rs7 secondaryPreferred"
	rowFilter = "select rs7 filter+window"
)

// rs7RTTs are the average RTTs of the primary and six secondaries of the
// selection rows (rs7RTTs in driver/internal/selection/bench_test.go).
var rs7RTTs = []time.Duration{
	1 * time.Millisecond,
	2 * time.Millisecond, 4 * time.Millisecond, 8 * time.Millisecond,
	16 * time.Millisecond, 24 * time.Millisecond, 40 * time.Millisecond,
}

// driverTasks builds the pool and selection rows; srv is the in-process
// server the official pool connects to.
func driverTasks(srv *mongotest.Server) ([]driverTask, error) {
	sel, err := officialReadSelector(srv.URI())
	if err != nil {
		return nil, err
	}
	topo := officialRS7()
	if got, err := sel.SelectServer(topo, topo.Servers); err != nil || len(got) != 4 {
		return nil, fmt.Errorf("official read selector on rs7: %d servers, %v; want the 4 secondaries in the window", len(got), err)
	}
	selectRS7 := func(b *testing.B) {
		for b.Loop() {
			if _, err := sel.SelectServer(topo, topo.Servers); err != nil {
				b.Fatal(err)
			}
		}
	}
	return []driverTask{
		{
			name:   rowPool,
			pkg:    "./driver/internal/pool",
			bench:  "BenchmarkCheckOutCheckIn64Real",
			theirs: officialPool(srv.Addr()),
		},
		{
			name:   rowSelect,
			pkg:    "./driver/internal/selection",
			bench:  "BenchmarkSelectRS7/Select",
			theirs: selectRS7,
		},
		{
			name:   rowFilter,
			pkg:    "./driver/internal/selection",
			bench:  "BenchmarkSelectRS7/SuitableInWindow",
			theirs: selectRS7,
		},
	}, nil
}

const driverNotes = `
ratio is theirs ns/op divided by ours: above 1 means ours is faster, as in the
MB/s table.

pool: both sides check out and check in on 64 goroutines (b.SetParallelism,
b.RunParallel) from a ready pool with maxPoolSize 100 that was warmed with 64
real connections (TCP + handshake to an in-process mongotest server), so the
timed loop does no I/O. Ours: pool.CheckOut + pool.CheckIn of
driver/internal/pool on *conn.Conn (BenchmarkCheckOutCheckIn64Real, run with
go test). Theirs: topology.Server.Connection + Close of x/mongo/driver/topology,
configured by topology.NewConfig from the client options as their client does;
that path also counts the server's operation count (our caller does that, not
the pool) and wraps the connection in an mnet.Connection. Their server
monitor runs (it cannot be turned off through the exported API) with a 1h
heartbeat; ours has none.

select: a secondaryPreferred read on a replica set of a primary (1ms) and six
secondaries (2, 4, 8, 16, 24, 40ms) with localThresholdMS 15, so the window
keeps four secondaries. Theirs, on both rows: the read selector their
Collection builds (ReadPref then Latency in a Composite, taken from a
Collection by reflection because the serverselector package is internal),
applied to the topology description; it returns the window as new slices.
Their Topology.SelectServer then picks two of the window at random and
compares operation counts, which needs live servers and is not measured.
Ours, "secondaryPreferred": the whole of selection.Select (topology snapshot,
validation, suitable servers, window, the choice of two by operation count).
Ours, "filter+window": selection.Suitable then InWindow, which return new
slices as theirs does: the same work as their selector.`

// officialRS7 is the selection rows' replica set as the official driver
// describes it.
func officialRS7() description.Topology {
	t := description.Topology{Kind: description.TopologyKindReplicaSetWithPrimary, SetName: "rs"}
	for i, rtt := range rs7RTTs {
		s := description.Server{
			Addr:              maddress.Address(fmt.Sprintf("rs%d.example.com:27017", i)),
			Kind:              description.ServerKindRSSecondary,
			AverageRTT:        rtt,
			AverageRTTSet:     true,
			HeartbeatInterval: 10 * time.Second,
			SetName:           "rs",
			WireVersion:       &description.VersionRange{Min: 0, Max: 25},
		}
		if i == 0 {
			s.Kind = description.ServerKindRSPrimary
		}
		t.Servers = append(t.Servers, s)
	}
	return t
}

// officialReadSelector returns the selector the official driver uses for a
// read on a Collection with read preference secondaryPreferred and
// localThresholdMS 15. The serverselector package is internal to their
// module, so it is taken from the Collection's unexported readSelector field.
func officialReadSelector(uri string) (description.ServerSelector, error) {
	c, err := mongo.Connect(options.Client().ApplyURI(uri).SetLocalThreshold(localThreshold))
	if err != nil {
		return nil, err
	}
	defer c.Disconnect(context.Background())
	coll := c.Database("bench").Collection("rs7", options.Collection().SetReadPreference(readpref.SecondaryPreferred()))
	f := reflect.ValueOf(coll).Elem().FieldByName("readSelector")
	if !f.IsValid() {
		return nil, fmt.Errorf("mongo.Collection has no readSelector field in this version of the official driver")
	}
	sel, ok := reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Interface().(description.ServerSelector)
	if !ok || sel == nil {
		return nil, fmt.Errorf("mongo.Collection.readSelector is %s, not a description.ServerSelector", f.Type())
	}
	return sel, nil
}

// officialPool measures the official driver's pool of one server.
func officialPool(addr string) func(b *testing.B) {
	return func(b *testing.B) {
		opts := options.Client().ApplyURI("mongodb://" + addr + "/").
			SetMaxPoolSize(maxPoolSize).
			SetHeartbeatInterval(time.Hour)
		cfg, err := topology.NewConfig(opts, &session.ClusterClock{})
		if err != nil {
			b.Fatal(err)
		}
		srv := topology.NewServer(maddress.Address(addr), bson.NewObjectID(), cfg.ConnectTimeout, cfg.ServerOpts...)
		if err := srv.Connect(nil); err != nil {
			b.Fatal(err)
		}
		defer srv.Disconnect(context.Background())
		ctx := context.Background()
		// Warm the pool as ours is warmed: 64 connections at once.
		held := make([]interface{ Close() error }, 0, contenders)
		for range contenders {
			c, err := srv.Connection(ctx)
			if err != nil {
				b.Fatal(err)
			}
			held = append(held, c)
		}
		for _, c := range held {
			if err := c.Close(); err != nil {
				b.Fatal(err)
			}
		}
		b.SetParallelism(max(1, contenders/runtime.GOMAXPROCS(0)))
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				c, err := srv.Connection(ctx)
				if err != nil {
					b.Error(err)
					return
				}
				if err := c.Close(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
}

// repoRoot is the library's module root, the parent of bench/.
func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil &&
			bytes.HasPrefix(b, []byte("module github.com/mongoscope/mongoscope\n")) {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("the mongoscope module root was not found above %s", wd)
		}
	}
}

// goBench runs one of our benchmarks count times with go test in root and
// returns the median run.
func goBench(root, pkg, name string, count int, benchtime time.Duration) (result, error) {
	// Anchor every level of the name: -bench splits the pattern on '/'.
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	cmd := exec.Command("go", "test", "-run", "^$", "-bench", strings.Join(parts, "/"),
		"-benchmem", "-count", strconv.Itoa(count), "-benchtime", benchtime.String(), pkg)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return result{}, fmt.Errorf("go test -bench %s %s: %v\n%s", name, pkg, err, out)
	}
	var rs []result
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || trimProcs(f[0]) != name {
			continue
		}
		r, ok := parseBenchLine(f)
		if !ok {
			return result{}, fmt.Errorf("go test -bench %s: cannot read %q", name, sc.Text())
		}
		rs = append(rs, r)
	}
	if len(rs) == 0 {
		return result{}, fmt.Errorf("go test -bench %s %s printed no result:\n%s", name, pkg, out)
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].nsop < rs[j].nsop })
	return rs[len(rs)/2], nil
}

// trimProcs drops the -GOMAXPROCS suffix go test adds to a benchmark name.
func trimProcs(name string) string {
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		if _, err := strconv.Atoi(name[i+1:]); err == nil {
			return name[:i]
		}
	}
	return name
}

// parseBenchLine reads ns/op and allocs/op from the fields of a result line.
func parseBenchLine(f []string) (result, bool) {
	var r result
	var haveNs, haveAllocs bool
	for i := 1; i < len(f); i++ {
		switch f[i] {
		case "ns/op":
			v, err := strconv.ParseFloat(f[i-1], 64)
			if err != nil {
				return r, false
			}
			r.nsop, haveNs = v, true
		case "allocs/op":
			v, err := strconv.ParseInt(f[i-1], 10, 64)
			if err != nil {
				return r, false
			}
			r.allocs, haveAllocs = v, true
		}
	}
	return r, haveNs && haveAllocs
}
