// Command bench measures mongoscope against the official Go driver
// (go.mongodb.org/mongo-driver/v2) in the same run, on the same inputs, and
// prints two tables: BSON throughput, then the connection pool and server
// selection in ns/op. It is its own module so the library's go.mod never
// requires the official driver. Our pool and selection live under
// driver/internal, which this module may not import, so their side of the
// second table is our benchmarks run with go test in the repository root.
//
// Usage (from the repository root): make bench, or
//
//	cd bench && go run . [-count 3] [-benchtime 1s] [-run regexp] [-crudcount 5] [-telemetrycount 7] [-cpuprofile file]
//
// The telemetry overhead table (telemetry.go), printed after the CRUD
// tables, has rows named "telemetry ...": -run telemetry runs it alone.
package main

import (
	"archive/tar"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/mongoscope/mongoscope/mongotest"
)

// task is one row of the table: the same work done by both drivers.
type task struct {
	name   string
	bytes  int64 // bytes processed per operation, for MB/s
	ours   func(b *testing.B)
	theirs func(b *testing.B)
}

// result is the median of several runs of one side of a task.
type result struct {
	mbps   float64
	nsop   float64
	allocs int64
}

func main() {
	serveIfChild()
	count := flag.Int("count", 3, "runs per benchmark; the table shows the median")
	benchtime := flag.Duration("benchtime", time.Second, "target duration of each run")
	run := flag.String("run", ".", "regexp selecting tasks by name")
	crudCount := flag.Int("crudcount", 5, "runs per CRUD row (the CRUD rows go through the network and a server, so they are noisier)")
	telemetryCount := flag.Int("telemetrycount", 7, "interleaved rounds per telemetry row (each round runs every configuration once; 0 skips them)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run (both drivers) to this file")
	failoverFor := flag.Duration("failover", 60*time.Second, "how long each failover row runs (0 skips them)")
	stepEvery := flag.Duration("stepdown", 10*time.Second, "how often the failover rows step the primary down")
	csotRuns := flag.Int("csotruns", 200, "finds per CSOT accuracy row and driver (0 skips them)")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail(err)
		}
		defer pprof.StopCPUProfile()
	}
	testing.Init()
	if err := flag.Set("test.benchtime", benchtime.String()); err != nil {
		fail(err)
	}
	sel, err := regexp.Compile(*run)
	if err != nil {
		fail(err)
	}

	data, err := loadExtendedBSON()
	if err != nil {
		fail(err)
	}
	var tasks []task
	tasks = append(tasks, bsonTasks(data)...)
	tasks = append(tasks, structTasks()...)

	fmt.Printf("mongoscope vs go.mongodb.org/mongo-driver/v2 %s — %s/%s, %d CPUs, %s, median of %d runs of %s\n\n",
		officialVersion(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), *count, *benchtime)
	var matched []task
	for _, t := range tasks {
		if sel.MatchString(t.name) {
			matched = append(matched, t)
		}
	}
	if len(matched) > 0 {
		tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "task\tours MB/s\ttheirs MB/s\tratio\tours allocs/op\ttheirs allocs/op\t")
		for _, t := range matched {
			o := measure(t.ours, t.bytes, *count)
			th := measure(t.theirs, t.bytes, *count)
			fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.2fx\t%d\t%d\t\n", t.name, o.mbps, th.mbps, o.mbps/th.mbps, o.allocs, th.allocs)
		}
		tw.Flush()
		fmt.Println(`
"validate Raw" does not do equal work on both sides: ours checks the whole
document (nested documents and arrays, UTF-8, booleans, every length); the
official Raw.Validate checks only the top level's element framing and accepts,
for example, a nested boolean byte of 7 or invalid UTF-8 in any string.`)
	}
	crud := runCRUDTasks(sel, *crudCount, len(matched) > 0)
	tel := runTelemetry(sel, *telemetryCount, len(matched) > 0 || crud)
	runDriverTasks(sel, *count, *benchtime, len(matched) > 0 || crud || tel)
	runCSOT(sel, *csotRuns, true)
	runFailover(sel, *failoverFor, *stepEvery, true)
}

// runDriverTasks prints the second table, the pool and server selection,
// for the rows sel matches.
func runDriverTasks(sel *regexp.Regexp, count int, benchtime time.Duration, after bool) {
	if !sel.MatchString(rowPool) && !sel.MatchString(rowSelect) && !sel.MatchString(rowFilter) {
		return // no server, no official client
	}
	root, err := repoRoot()
	if err != nil {
		fail(err)
	}
	srv, err := mongotest.Start(mongotest.Options{})
	if err != nil {
		fail(err)
	}
	defer srv.Close()
	tasks, err := driverTasks(srv)
	if err != nil {
		fail(err)
	}
	var matched []driverTask
	for _, t := range tasks {
		if sel.MatchString(t.name) {
			matched = append(matched, t)
		}
	}
	if after {
		fmt.Println()
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "task\tours ns/op\ttheirs ns/op\tratio\tours allocs/op\ttheirs allocs/op\t")
	for _, t := range matched {
		o, err := goBench(root, t.pkg, t.bench, count, benchtime)
		if err != nil {
			fail(err)
		}
		th := measure(t.theirs, 0, count)
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.2fx\t%d\t%d\t\n", t.name, o.nsop, th.nsop, th.nsop/o.nsop, o.allocs, th.allocs)
	}
	tw.Flush()
	fmt.Println(driverNotes)
}

func measure(f func(b *testing.B), size int64, count int) result {
	var rs []result
	for i := 0; i < count; i++ {
		r := testing.Benchmark(func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(size)
			f(b)
		})
		if r.N == 0 {
			fail(fmt.Errorf("benchmark failed (see output above)"))
		}
		ns := float64(r.T.Nanoseconds()) / float64(r.N)
		rs = append(rs, result{mbps: float64(size) / ns * 1e3, nsop: ns, allocs: r.AllocsPerOp()})
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].nsop < rs[j].nsop })
	return rs[len(rs)/2]
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}

// specsDir finds the specifications as the tests do.
func specsDir() (string, error) {
	if d := os.Getenv("MONGODB_SPECS_DIR"); d != "" {
		return d, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		cand := filepath.Join(dir, "..", "shared", "specifications")
		if st, err := os.Stat(cand); err == nil && st.IsDir() {
			return cand, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("specifications not found: set MONGODB_SPECS_DIR")
		}
	}
}

// loadExtendedBSON unpacks the benchmarking spec's extended_bson.tgz in
// memory (it is never written into the repository) and returns its files by
// base name without extension: flat_bson, deep_bson, full_bson.
func loadExtendedBSON() (map[string][]byte, error) {
	dir, err := specsDir()
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(dir, "benchmarking", "data", "extended_bson.tgz"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	out := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg || !strings.HasSuffix(h.Name, ".json") {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		out[strings.TrimSuffix(filepath.Base(h.Name), ".json")] = b
	}
	for _, k := range []string{"flat_bson", "deep_bson", "full_bson"} {
		if _, ok := out[k]; !ok {
			return nil, fmt.Errorf("extended_bson.tgz has no %s.json", k)
		}
	}
	return out, nil
}
