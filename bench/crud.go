package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"text/tabwriter"
	"time"

	ours "github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
	theirs "go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// The CRUD rows: the benchmarking specification's single- and
// multi-document driver tasks, plus findOne and insertOne on many
// goroutines, run by both drivers against one mongotest server that lives
// in a child process, so that the allocations counted here are the
// drivers' alone.

const (
	crudDB      = "perftest"
	crudColl    = "corpus"
	tweetCount  = 10000 // documents of the find rows, and small documents per bulk insert
	largeCount  = 10    // large documents per bulk insert
	parallelism = 16    // goroutines of the concurrent rows
)

// crudTask is one row of the CRUD table. bytes is the dataset size of one
// operation as the specification counts it (the source file's size times
// the documents the operation handles).
type crudTask struct {
	name   string
	bytes  int64
	ours   func(b *testing.B)
	theirs func(b *testing.B)
}

// crudResult is the median run of one side of a CRUD row.
type crudResult struct {
	nsop           float64
	allocs, bytesB int64
	// srvNs is the server process's CPU time per operation, or -1 when
	// it cannot be read.
	srvNs float64
	// cliNs is this process's CPU time per operation: the driver's, with
	// both clients' background work (monitors), which is small.
	cliNs float64
}

// serveEnv makes the bench binary a mongotest server for its parent
// (startServerProcess): it prints the URI and serves until stdin closes.
const serveEnv = "MONGOSCOPE_BENCH_SERVE"

// serveIfChild runs the child's side of startServerProcess and exits:
// serveEnv=1 serves mongotest, serveEnv=replay the replay server.
func serveIfChild() {
	mode := os.Getenv(serveEnv)
	if mode == "" {
		return
	}
	var uri string
	var closeFn func()
	switch mode {
	case "1":
		srv, err := mongotest.Start(mongotest.Options{CommandLogSize: -1})
		if err != nil {
			fail(err)
		}
		uri, closeFn = srv.URI(), srv.Close
	case serveReplay:
		docs, ok, err := loadSpecDocs()
		if err != nil {
			fail(err)
		}
		if !ok {
			fail(errors.New("replay server: the benchmarking data set was not found"))
		}
		srv, err := startReplay(docs)
		if err != nil {
			fail(err)
		}
		uri, closeFn = srv.URI(), srv.Close
	default:
		fail(fmt.Errorf("%s=%q: want 1 or %s", serveEnv, mode, serveReplay))
	}
	fmt.Println(uri)
	_, _ = io.Copy(io.Discard, os.Stdin)
	closeFn()
	os.Exit(0)
}

// serveReplay is serveEnv's value for a replay server child.
const serveReplay = "replay"

// serverProcess is a mongotest or replay server in a child process.
type serverProcess struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	uri   string
}

func startServerProcess(mode string) (*serverProcess, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), serveEnv+"="+mode)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = stdin.Close()
		_ = cmd.Wait()
		return nil, fmt.Errorf("%s server process: %w", mode, err)
	}
	return &serverProcess{cmd: cmd, stdin: stdin, uri: strings.TrimSpace(line)}, nil
}

// stop closes the child's stdin, which ends it, and waits for it.
func (p *serverProcess) stop() {
	_ = p.stdin.Close()
	_ = p.cmd.Wait()
}

// specDocs are the single_and_multi_document data set's documents: the
// source files' sizes, and each as both drivers' bson.D.
type specDocs struct {
	tweetSize, smallSize, largeSize int64
	tweetOurs, smallOurs, largeOurs ours.D
	tweetTheirs                     theirs.D
	smallTheirs, largeTheirs        theirs.D
}

// loadSpecDocs reads the data set from the specifications at run time; ok
// is false when the file is absent.
func loadSpecDocs() (*specDocs, bool, error) {
	dir, err := specsDir()
	if err != nil {
		return nil, false, nil
	}
	f, err := os.Open(filepath.Join(dir, "benchmarking", "data", "single_and_multi_document.tgz"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, false, err
	}
	tr := tar.NewReader(zr)
	files := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, false, err
		}
		if h.Typeflag != tar.TypeReg || !strings.HasSuffix(h.Name, ".json") {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, false, err
		}
		files[filepath.Base(h.Name)] = b
	}
	d := &specDocs{}
	for _, x := range []struct {
		file   string
		size   *int64
		ours   *ours.D
		theirs *theirs.D
	}{
		{"tweet.json", &d.tweetSize, &d.tweetOurs, &d.tweetTheirs},
		{"small_doc.json", &d.smallSize, &d.smallOurs, &d.smallTheirs},
		{"large_doc.json", &d.largeSize, &d.largeOurs, &d.largeTheirs},
	} {
		js, ok := files[x.file]
		if !ok {
			return nil, false, fmt.Errorf("single_and_multi_document.tgz has no %s", x.file)
		}
		*x.size = int64(len(js))
		if err := theirs.UnmarshalExtJSON(js, false, x.theirs); err != nil {
			return nil, false, fmt.Errorf("%s: official UnmarshalExtJSON: %w", x.file, err)
		}
		raw, err := ours.ParseExtJSON(js)
		if err != nil {
			return nil, false, fmt.Errorf("%s: ParseExtJSON: %w", x.file, err)
		}
		if err := ours.Unmarshal(raw, x.ours); err != nil {
			return nil, false, fmt.Errorf("%s: %w", x.file, err)
		}
	}
	return d, true, nil
}

// crudEnv is what the rows share: one server, one client of each driver
// (made once, as an application would), and a setup client.
type crudEnv struct {
	ctx    context.Context
	ours   *driver.Collection
	theirs *mongo.Collection
	docs   *specDocs
}

// reset drops the corpus collection and creates it empty (the
// specification's "before task" of the insert rows). The official
// driver does it for both sides: the setup is not measured.
func (e *crudEnv) reset(b *testing.B) {
	if err := e.theirs.Drop(e.ctx); err != nil {
		b.Fatal(err)
	}
	if err := e.theirs.Database().CreateCollection(e.ctx, crudColl); err != nil {
		b.Fatal(err)
	}
}

// seed fills the corpus with tweetCount tweets with _id 1..tweetCount,
// the find rows' data.
func (e *crudEnv) seed() error {
	if err := e.theirs.Drop(e.ctx); err != nil {
		return err
	}
	docs := make([]any, tweetCount)
	for i := range docs {
		d := append(theirs.D{{Key: "_id", Value: int32(i + 1)}}, e.docs.tweetTheirs...)
		docs[i] = d
	}
	_, err := e.theirs.InsertMany(e.ctx, docs)
	return err
}

func crudTasks(e *crudEnv) []crudTask {
	d := e.docs
	ctx := e.ctx
	findOneOurs := func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			raw, err := e.ours.FindOne(ctx, ours.D{{Key: "_id", Value: int32(i%tweetCount + 1)}}).Raw()
			if err != nil || len(raw) < 1000 {
				b.Fatal(err)
			}
		}
	}
	findOneTheirs := func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			raw, err := e.theirs.FindOne(ctx, theirs.D{{Key: "_id", Value: int32(i%tweetCount + 1)}}).Raw()
			if err != nil || len(raw) < 1000 {
				b.Fatal(err)
			}
		}
	}
	// insertOnes inserts doc b.N times, emptying the collection every
	// `every` inserts with the timer stopped.
	insertOnes := func(every int, insert func() error) func(b *testing.B) {
		return func(b *testing.B) {
			e.reset(b)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if i > 0 && i%every == 0 {
					b.StopTimer()
					e.reset(b)
					b.StartTimer()
				}
				if err := insert(); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	insertOneOurs := func(doc ours.D) func() error {
		return func() error { _, err := e.ours.InsertOne(ctx, doc); return err }
	}
	insertOneTheirs := func(doc theirs.D) func() error {
		return func() error { _, err := e.theirs.InsertOne(ctx, doc); return err }
	}
	// bulk inserts n copies of a document per operation into an empty
	// collection.
	bulk := func(insert func() error) func(b *testing.B) {
		return func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				e.reset(b)
				b.StartTimer()
				if err := insert(); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	copiesOurs := func(doc ours.D, n int) []any {
		docs := make([]any, n)
		for i := range docs {
			docs[i] = doc
		}
		return docs
	}
	copiesTheirs := func(doc theirs.D, n int) []any {
		docs := make([]any, n)
		for i := range docs {
			docs[i] = doc
		}
		return docs
	}
	parallel := func(b *testing.B, f func(i int) error) {
		b.SetParallelism(max(1, parallelism/runtime.GOMAXPROCS(0)))
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				if err := f(i); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	return []crudTask{
		{name: "findOne by _id", bytes: d.tweetSize, ours: findOneOurs, theirs: findOneTheirs},
		{name: "insertOne small doc", bytes: d.smallSize,
			ours:   insertOnes(tweetCount, insertOneOurs(d.smallOurs)),
			theirs: insertOnes(tweetCount, insertOneTheirs(d.smallTheirs))},
		{name: "insertOne large doc", bytes: d.largeSize,
			ours:   insertOnes(largeCount, insertOneOurs(d.largeOurs)),
			theirs: insertOnes(largeCount, insertOneTheirs(d.largeTheirs))},
		{name: "find 10,000 and empty the cursor", bytes: tweetCount * d.tweetSize,
			ours: func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					cur, err := e.ours.Find(ctx, ours.D{})
					if err != nil {
						b.Fatal(err)
					}
					n := 0
					for cur.Next(ctx) {
						n++
					}
					if cur.Err() != nil || n != tweetCount {
						b.Fatalf("%d documents, %v", n, cur.Err())
					}
				}
			},
			theirs: func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					cur, err := e.theirs.Find(ctx, theirs.D{})
					if err != nil {
						b.Fatal(err)
					}
					n := 0
					for cur.Next(ctx) {
						n++
					}
					if cur.Err() != nil || n != tweetCount {
						b.Fatalf("%d documents, %v", n, cur.Err())
					}
				}
			}},
		{name: "insertMany 10,000 small docs", bytes: tweetCount * d.smallSize,
			ours: bulk(func() error {
				_, err := e.ours.InsertMany(ctx, copiesOurs(d.smallOurs, tweetCount))
				return err
			}),
			theirs: bulk(func() error {
				_, err := e.theirs.InsertMany(ctx, copiesTheirs(d.smallTheirs, tweetCount))
				return err
			})},
		{name: "insertMany 10 large docs", bytes: largeCount * d.largeSize,
			ours: bulk(func() error {
				_, err := e.ours.InsertMany(ctx, copiesOurs(d.largeOurs, largeCount))
				return err
			}),
			theirs: bulk(func() error {
				_, err := e.theirs.InsertMany(ctx, copiesTheirs(d.largeTheirs, largeCount))
				return err
			})},
		{name: fmt.Sprintf("findOne by _id, %d goroutines", parallelism), bytes: d.tweetSize,
			ours: func(b *testing.B) {
				parallel(b, func(i int) error {
					_, err := e.ours.FindOne(ctx, ours.D{{Key: "_id", Value: int32(i%tweetCount + 1)}}).Raw()
					return err
				})
			},
			theirs: func(b *testing.B) {
				parallel(b, func(i int) error {
					_, err := e.theirs.FindOne(ctx, theirs.D{{Key: "_id", Value: int32(i%tweetCount + 1)}}).Raw()
					return err
				})
			}},
		{name: fmt.Sprintf("insertOne small doc, %d goroutines", parallelism), bytes: d.smallSize,
			ours: func(b *testing.B) {
				e.reset(b)
				b.ResetTimer()
				parallel(b, func(int) error { _, err := e.ours.InsertOne(ctx, d.smallOurs); return err })
			},
			theirs: func(b *testing.B) {
				e.reset(b)
				b.ResetTimer()
				parallel(b, func(int) error { _, err := e.theirs.InsertOne(ctx, d.smallTheirs); return err })
			}},
	}
}

// crudSeeded names the rows that read the seeded tweets; the others empty
// the collection, so the seed is redone before each of these.
func crudSeeded(name string) bool { return strings.HasPrefix(name, "find") }

// replaySuffix names the rows run against the replay server.
const replaySuffix = " (replay server)"

// replayRows are the rows also run against the replay server: those where
// mongotest's own time or its collection lock bounds the ratio.
var replayRows = map[string]bool{
	"find 10,000 and empty the cursor":                             true,
	"findOne by _id":                                               true,
	"insertOne small doc":                                          true,
	"insertMany 10,000 small docs":                                 true,
	fmt.Sprintf("findOne by _id, %d goroutines", parallelism):      true,
	fmt.Sprintf("insertOne small doc, %d goroutines", parallelism): true,
}

// replayCount caps the runs per replay row.
const replayCount = 3

// replayTasks are crudTasks' replay rows, renamed.
func replayTasks(e *crudEnv) []crudTask {
	var out []crudTask
	for _, t := range crudTasks(e) {
		if replayRows[t.name] {
			t.name += replaySuffix
			out = append(out, t)
		}
	}
	return out
}

// runCRUDTasks prints the CRUD table for the rows sel matches and tells
// whether it printed anything: the rows against mongotest, then the rows
// against the replay server.
func runCRUDTasks(sel *regexp.Regexp, count int, after bool) bool {
	docs, ok, err := loadSpecDocs()
	if err != nil {
		fail(err)
	}
	probe := &crudEnv{docs: &specDocs{}}
	matches := func(ts []crudTask) bool {
		for _, t := range ts {
			if sel.MatchString(t.name) {
				return true
			}
		}
		return false
	}
	onMongotest, onReplay := matches(crudTasks(probe)), matches(replayTasks(probe))
	if !onMongotest && !onReplay {
		return false
	}
	if after {
		fmt.Println()
	}
	if !ok {
		fmt.Println("CRUD rows skipped: the benchmarking specification's data/single_and_multi_document.tgz was not found (set MONGODB_SPECS_DIR)")
		return true
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "task\tours ops/s\ttheirs ops/s\tratio\tours MB/s\ttheirs MB/s\tours allocs/op\ttheirs allocs/op\tours B/op\ttheirs B/op\tserver share ours/theirs\tclient CPU µs/op ours/theirs\t")
	if onMongotest {
		runCRUDRows(tw, sel, count, docs, "1", crudTasks)
	}
	if onReplay {
		// The replay server adds little noise of its own; three runs
		// keep the whole of make bench near seven minutes.
		runCRUDRows(tw, sel, min(count, replayCount), docs, serveReplay, replayTasks)
	}
	tw.Flush()
	fmt.Println(crudNotes)
	fmt.Println(replayNotes)
	return true
}

// runCRUDRows starts a server process of the given mode, connects one
// client of each driver, and writes the rows of tasks that sel matches
// to tw. The replay server's data needs no seeding.
func runCRUDRows(tw io.Writer, sel *regexp.Regexp, count int, docs *specDocs, mode string, tasks func(*crudEnv) []crudTask) {
	srv, err := startServerProcess(mode)
	if err != nil {
		fail(err)
	}
	defer srv.stop()
	ctx := context.Background()
	oo := &driver.ClientOptions{}
	if err := oo.ApplyURI(srv.uri); err != nil {
		fail(err)
	}
	oc, err := driver.Connect(ctx, oo)
	if err != nil {
		fail(err)
	}
	defer oc.Disconnect(ctx)
	tc, err := mongo.Connect(options.Client().ApplyURI(srv.uri))
	if err != nil {
		fail(err)
	}
	defer tc.Disconnect(ctx)
	e := &crudEnv{ctx: ctx, docs: docs,
		ours:   oc.Database(crudDB).Collection(crudColl),
		theirs: tc.Database(crudDB).Collection(crudColl)}
	if err := oc.Ping(ctx); err != nil {
		fail(err)
	}
	if err := tc.Ping(ctx, nil); err != nil {
		fail(err)
	}
	for _, t := range tasks(e) {
		if !sel.MatchString(t.name) {
			continue
		}
		if mode != serveReplay && crudSeeded(t.name) {
			if err := e.seed(); err != nil {
				fail(err)
			}
		}
		o, th := measurePair(t.ours, t.theirs, count, srv)
		ops := func(r crudResult) float64 { return 1e9 / r.nsop }
		mbps := func(r crudResult) float64 { return float64(t.bytes) / r.nsop * 1e3 }
		share := func(r crudResult) string {
			if r.srvNs < 0 {
				return "-"
			}
			return fmt.Sprintf("%.0f%%", 100*r.srvNs/r.nsop)
		}
		cpu := func(r crudResult) string {
			if r.cliNs < 0 {
				return "-"
			}
			return fmt.Sprintf("%.0f", r.cliNs/1e3)
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.2fx\t%.1f\t%.1f\t%d\t%d\t%d\t%d\t%s / %s\t%s / %s\t\n", t.name,
			ops(o), ops(th), th.nsop/o.nsop, mbps(o), mbps(th), o.allocs, th.allocs, o.bytesB, th.bytesB, share(o), share(th), cpu(o), cpu(th))
	}
}

// measurePair runs both sides count times each, alternating which goes
// first, and returns each side's median run.
func measurePair(oursF, theirsF func(b *testing.B), count int, srv *serverProcess) (crudResult, crudResult) {
	warmUp(oursF, theirsF)
	var o, th []crudResult
	for i := 0; i < count; i++ {
		if i%2 == 0 {
			o = append(o, measureCRUD(oursF, srv))
			th = append(th, measureCRUD(theirsF, srv))
		} else {
			th = append(th, measureCRUD(theirsF, srv))
			o = append(o, measureCRUD(oursF, srv))
		}
	}
	return medianCRUD(o), medianCRUD(th)
}

// warmUp runs each side briefly, untimed, so that neither pays for what
// the previous row left behind (the server's heap after seeding, the
// drivers' pools and caches) in its first measured run.
func warmUp(fs ...func(b *testing.B)) {
	f := flag.Lookup("test.benchtime")
	if f == nil {
		return
	}
	was := f.Value.String()
	if err := f.Value.Set("200ms"); err != nil {
		return
	}
	defer f.Value.Set(was)
	for _, fn := range fs {
		testing.Benchmark(fn)
	}
}

func measureCRUD(f func(b *testing.B), srv *serverProcess) crudResult {
	runtime.GC()
	srvNs, cliNs := -1.0, -1.0
	r := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		t0, ok0 := srv.cpu()
		c0, okc0 := selfCPU()
		f(b)
		// The last run, the one testing.Benchmark reports, sets them.
		if t1, ok1 := srv.cpu(); ok0 && ok1 {
			srvNs = float64(t1-t0) / float64(b.N)
		}
		if c1, okc1 := selfCPU(); okc0 && okc1 {
			cliNs = float64(c1-c0) / float64(b.N)
		}
	})
	if r.N == 0 {
		fail(fmt.Errorf("benchmark failed (see output above)"))
	}
	return crudResult{nsop: float64(r.T.Nanoseconds()) / float64(r.N), allocs: r.AllocsPerOp(), bytesB: r.AllocedBytesPerOp(), srvNs: srvNs, cliNs: cliNs}
}

// selfCPU returns this process's CPU time (user and system) so far.
func selfCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}

// cpu returns the server process's CPU time (user and system) so far,
// from /proc; ok is false where there is none.
func (p *serverProcess) cpu() (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0, false
	}
	// The fields after the command name, which is in parentheses:
	// utime and stime are the 14th and 15th fields of the line, in
	// clock ticks (USER_HZ, 100 on Linux).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(ut+st) * 10 * time.Millisecond, true
}

func medianCRUD(rs []crudResult) crudResult {
	sort.Slice(rs, func(i, j int) bool { return rs[i].nsop < rs[j].nsop })
	return rs[len(rs)/2]
}

const crudNotes = `
ratio is ours ops/s divided by theirs: above 1 means ours is faster. Each
side is the median of -crudcount runs (5 by default).

CRUD rows: the benchmarking specification's single- and multi-document
tasks on its data set (tweet.json, small_doc.json, large_doc.json, read from
the specifications at run time), one operation per row unit: one findOne or
insertOne; one find that empties a cursor over the 10,000 seeded tweets;
one insertMany of 10,000 small or 10 large documents into an emptied
collection. MB/s is the specification's: the source files' size times the
documents an operation handles, divided by its time. Documents are each
driver's bson.D built from the same JSON; findOne reads the raw document
(decoding is the BSON table's subject); inserts let the driver add the _id.
Both drivers run with default options against one standalone mongotest
server in a child process (so allocations are the drivers' own), one client
each; the runs alternate which driver goes first. The collection is emptied
between insert runs with the timer stopped, by the official driver for both
sides. The server's own time is shared: the ratio, not the absolute rate,
is what compares the drivers. "server share" is the server process's CPU
time per operation as a part of the operation's wall time (over 100% when
the server works on several goroutines at once); the machine's cores are
shared by the client, the server and anything else running.

"client CPU" is the benchmark process's CPU time per operation while one
driver runs: that driver's work, with both clients' monitors (little). On
the single-goroutine rows ours includes polling for the reply: an
operation that is the client's only one waiting polls its socket for up
to ClientOptions.SpinWait (50 µs by default) before parking, which spends
CPU to save the wake-up of an idle CPU; on the rows with 16 goroutines it
seldom polls.

Where the server share of theirs is s, no client
can be more than 1/s times faster than theirs on that row.`
