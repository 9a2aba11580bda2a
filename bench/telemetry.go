package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"text/tabwriter"

	"github.com/mongoscope/mongoscope/driver"
	ourevent "github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/logging"
	"github.com/mongoscope/mongoscope/telemetry"
	"github.com/mongoscope/mongoscope/telemetry/tracing"
	"github.com/prometheus/client_golang/prometheus"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The telemetry rows: what observability costs. Four of the CRUD rows
// (findOne by _id and insertOne of a small document, on 1 and on 16
// goroutines) are run by six clients against one mongotest server in a
// child process, in rounds: each round runs every configuration once,
// starting with a different one each round, so that the machine's drift
// falls on all of them alike. Each cell is the median run; each ratio is
// the median of the rounds' own ratios (two configurations measured
// within seconds of each other).

// telemetryPrefix starts the telemetry rows' names: -run telemetry selects
// them alone.
const telemetryPrefix = "telemetry "

// telemetryRows are the CRUD rows (crudTasks' names) the table repeats.
var telemetryRows = []string{
	"findOne by _id",
	"insertOne small doc",
	fmt.Sprintf("findOne by _id, %d goroutines", parallelism),
	fmt.Sprintf("insertOne small doc, %d goroutines", parallelism),
}

// The configurations, in the table's order.
const (
	cfgNone      = iota // mongoscope, no monitor, no logging
	cfgOff              // mongoscope, observability present but off
	cfgOn               // mongoscope, telemetry.New with every sink on
	cfgOnSampled        // the same, with one trace in ten sampled
	cfgPeerOtel         // official driver with the otelmongo stand-in
	cfgPeerPlain        // official driver, no monitor
	numConfigs
)

var configNames = [numConfigs]string{
	cfgNone:      "no monitors",
	cfgOff:       "telemetry off",
	cfgOn:        "all sinks on",
	cfgOnSampled: "all on, 1 in 10 sampled",
	cfgPeerOtel:  "official + otelmongo stand-in",
	cfgPeerPlain: "official, no monitor",
}

// telemetryEnv are the variables that would change what a configuration
// is: tracing's switch and query text length, and the MONGODB_LOG_*
// variables, which would give "no monitors" a logging sink. The section
// unsets them.
var telemetryEnv = []string{
	"OTEL_GO_INSTRUMENTATION_MONGODB_ENABLED",
	"OTEL_GO_INSTRUMENTATION_MONGODB_QUERY_TEXT_MAX_LENGTH",
	"MONGODB_LOG_ALL", "MONGODB_LOG_COMMAND", "MONGODB_LOG_TOPOLOGY",
	"MONGODB_LOG_SERVER_SELECTION", "MONGODB_LOG_CONNECTION", "MONGODB_LOG_FAILOVER",
	"MONGODB_LOG_PATH", "MONGODB_LOG_MAX_DOCUMENT_LENGTH",
}

// unsetTelemetryEnv unsets telemetryEnv and returns the names that were set.
func unsetTelemetryEnv() []string {
	var was []string
	for _, k := range telemetryEnv {
		if _, ok := os.LookupEnv(k); ok {
			was = append(was, k)
			os.Unsetenv(k)
		}
	}
	return was
}

// countingExporter is the SpanExporter of the benchmark: it discards the
// spans and counts them (so the table can show spans per operation, and
// that the batch processor dropped none).
type countingExporter struct{ n atomic.Int64 }

func (e *countingExporter) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.n.Add(int64(len(spans)))
	return nil
}

func (e *countingExporter) Shutdown(context.Context) error { return nil }

// sinks are one configuration's span pipeline and metrics registry: the
// OTel SDK's TracerProvider sampling every span, with a batch span
// processor over exp, and a fresh Prometheus registry.
type sinks struct {
	tp  *sdktrace.TracerProvider
	reg *prometheus.Registry
}

func newSinks(exp sdktrace.SpanExporter) *sinks {
	return newSampledSinks(exp, sdktrace.AlwaysSample())
}

// newSampledSinks is newSinks with another sampler.
func newSampledSinks(exp sdktrace.SpanExporter, sampler sdktrace.Sampler) *sinks {
	return &sinks{
		tp:  sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler), sdktrace.WithBatcher(exp)),
		reg: prometheus.NewRegistry(),
	}
}

// telemetryClients are the six configurations' clients. The setup
// client (the official driver, no monitor) seeds and empties the
// collection for all.
type telemetryClients struct {
	ours       [numConfigs]*driver.Client // cfgNone, cfgOff, cfgOn
	theirs     [numConfigs]*mongo.Client  // cfgPeerOtel, cfgPeerPlain
	offTracer  *tracing.Tracer            // cfgOff's disabled tracer
	onTel      *telemetry.Telemetry       // cfgOn's sinks
	onSinks    *sinks                     // cfgOn's span pipeline and registry
	sampSinks  *sinks                     // cfgOnSampled's
	peerSinks  *sinks                     // cfgPeerOtel's
	peerTracer *peerTracer
	// notes say what a configuration could not attach (the sinks'
	// stubs, before they are merged).
	notes []string
}

// attachable drops from ms the values that implement no monitor interface
// of package driver/event (Connect refuses them) and describes them in a
// note: the telemetry sinks are stubs until their code is merged.
func attachable(cfg int, ms []any) ([]any, []string) {
	var keep []any
	var notes []string
	for _, m := range ms {
		if len(ourevent.NewDispatcher(m).Unused()) > 0 {
			notes = append(notes, fmt.Sprintf("%s: %T implements no monitor interface of driver/event in this build (a stub): not attached", configNames[cfg], m))
			continue
		}
		keep = append(keep, m)
	}
	return keep, notes
}

// offLogging is "telemetry off"'s logging: a sink with a handler, every
// component at LevelOff, so the driver's logging sink is a monitor that
// gets every event and drops it at its level check.
func offLogging(w io.Writer) *logging.Options {
	return &logging.Options{
		Handler: slog.NewJSONHandler(w, nil),
		Levels: map[logging.Component]logging.Level{
			logging.ComponentCommand:         logging.LevelOff,
			logging.ComponentTopology:        logging.LevelOff,
			logging.ComponentServerSelection: logging.LevelOff,
			logging.ComponentConnection:      logging.LevelOff,
			logging.ComponentFailover:        logging.LevelOff,
		},
	}
}

// connectTelemetry connects the six clients to uri. The span exporters
// come from exp (one per TracerProvider); offLogs and onLogs receive the
// "telemetry off" and "all sinks on" log messages.
func connectTelemetry(ctx context.Context, uri string, exp func() sdktrace.SpanExporter, offLogs, onLogs io.Writer) (*telemetryClients, error) {
	c := &telemetryClients{}
	ok := false
	defer func() {
		if !ok {
			c.close(ctx)
		}
	}()
	connectOurs := func(cfg int, edit func(*driver.ClientOptions)) error {
		o := &driver.ClientOptions{}
		if err := o.ApplyURI(uri); err != nil {
			return err
		}
		edit(o)
		var notes []string
		o.Monitors, notes = attachable(cfg, o.Monitors)
		c.notes = append(c.notes, notes...)
		cl, err := driver.Connect(ctx, o)
		if err != nil {
			return fmt.Errorf("%s: %w", configNames[cfg], err)
		}
		c.ours[cfg] = cl
		return cl.Ping(ctx)
	}
	if err := connectOurs(cfgNone, func(*driver.ClientOptions) {}); err != nil {
		return nil, err
	}
	// Tracing's Enabled nil means OTEL_GO_INSTRUMENTATION_MONGODB_ENABLED,
	// which the section has unset: the tracer is off.
	c.offTracer = tracing.New(tracing.Options{})
	if err := connectOurs(cfgOff, func(o *driver.ClientOptions) {
		o.Monitors = append(o.Monitors, c.offTracer)
		o.Logging = offLogging(offLogs)
	}); err != nil {
		return nil, err
	}
	c.onSinks = newSinks(exp())
	tel, err := telemetry.New(telemetry.Options{
		Logger:         slog.New(slog.NewJSONHandler(onLogs, nil)),
		TracerProvider: c.onSinks.tp,
		Registerer:     c.onSinks.reg,
	})
	if err != nil {
		return nil, err
	}
	c.onTel = tel
	if err := connectOurs(cfgOn, tel.Apply); err != nil {
		return nil, err
	}

	// The same sinks with a production sampler: one trace in ten
	// (ParentBased(TraceIDRatioBased(0.1))), the others' spans not
	// recorded; logs and metrics as for cfgOn.
	c.sampSinks = newSampledSinks(exp(), sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.1)))
	samp, err := telemetry.New(telemetry.Options{
		Logger:         slog.New(slog.NewJSONHandler(onLogs, nil)),
		TracerProvider: c.sampSinks.tp,
		Registerer:     c.sampSinks.reg,
	})
	if err != nil {
		return nil, err
	}
	if err := connectOurs(cfgOnSampled, samp.Apply); err != nil {
		return nil, err
	}

	c.peerSinks = newSinks(exp())
	if c.peerTracer, err = newPeerTracer(c.peerSinks.tp, c.peerSinks.reg); err != nil {
		return nil, err
	}
	for _, x := range []struct {
		cfg  int
		opts *options.ClientOptions
	}{
		{cfgPeerOtel, options.Client().ApplyURI(uri).SetMonitor(c.peerTracer.monitor())},
		{cfgPeerPlain, options.Client().ApplyURI(uri)},
	} {
		cl, err := mongo.Connect(x.opts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", configNames[x.cfg], err)
		}
		c.theirs[x.cfg] = cl
		if err := cl.Ping(ctx, nil); err != nil {
			return nil, err
		}
	}
	ok = true
	return c, nil
}

func (c *telemetryClients) close(ctx context.Context) {
	for _, cl := range c.ours {
		if cl != nil {
			cl.Disconnect(ctx)
		}
	}
	for _, cl := range c.theirs {
		if cl != nil {
			cl.Disconnect(ctx)
		}
	}
	for _, s := range []*sinks{c.onSinks, c.sampSinks, c.peerSinks} {
		if s != nil {
			s.tp.Shutdown(ctx)
		}
	}
}

// env returns the crudEnv whose crudTasks side runs cfg's client: ours
// for our configurations, theirs for the official ones. The insert rows
// empty the collection (untimed) through the env's official client: the
// setup client for our configurations, the configuration's own client for
// the official ones (for the stand-in, a drop and a create with their
// spans every 10,000 inserts).
func (c *telemetryClients) env(ctx context.Context, cfg int, docs *specDocs) *crudEnv {
	e := &crudEnv{ctx: ctx, docs: docs, theirs: c.theirs[cfgPeerPlain].Database(crudDB).Collection(crudColl)}
	if cl := c.ours[cfg]; cl != nil {
		e.ours = cl.Database(crudDB).Collection(crudColl)
	} else {
		e.theirs = c.theirs[cfg].Database(crudDB).Collection(crudColl)
	}
	return e
}

// configTask returns cfg's side of the CRUD row named name.
func (c *telemetryClients) configTask(ctx context.Context, cfg int, docs *specDocs, name string) func(b *testing.B) {
	for _, t := range crudTasks(c.env(ctx, cfg, docs)) {
		if t.name == name {
			if c.ours[cfg] != nil {
				return t.ours
			}
			return t.theirs
		}
	}
	panic("no CRUD row " + name)
}

// runTelemetry prints the telemetry tables for the rows sel matches and
// tells whether it printed anything.
func runTelemetry(sel *regexp.Regexp, count int, after bool) bool {
	var rows []string
	for _, r := range telemetryRows {
		if sel.MatchString(telemetryPrefix + r) {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 || count <= 0 {
		return false
	}
	if after {
		fmt.Println()
	}
	docs, ok, err := loadSpecDocs()
	if err != nil {
		fail(err)
	}
	if !ok {
		fmt.Println("telemetry rows skipped: the benchmarking specification's data/single_and_multi_document.tgz was not found (set MONGODB_SPECS_DIR)")
		return true
	}
	unset := unsetTelemetryEnv()
	srv, err := startServerProcess("1")
	if err != nil {
		fail(err)
	}
	defer srv.stop()
	ctx := context.Background()
	var exporters []*countingExporter
	clients, err := connectTelemetry(ctx, srv.uri, func() sdktrace.SpanExporter {
		e := &countingExporter{}
		exporters = append(exporters, e)
		return e
	}, io.Discard, io.Discard)
	if err != nil {
		fail(err)
	}
	defer clients.close(ctx)
	onExp, sampExp, peerExp := exporters[0], exporters[1], exporters[2]
	setup := &crudEnv{ctx: ctx, docs: docs, theirs: clients.theirs[cfgPeerPlain].Database(crudDB).Collection(crudColl)}

	fmt.Printf("Telemetry overhead: the same operations through six clients, in %d interleaved rounds (median run; ratios are medians of each round's ratio, [min, max] over rounds).\n", count)
	fmt.Println("The official driver's otelmongo row is a stand-in written for this bench (a CommandMonitor with otelmongo's spans plus a duration histogram):\notelmongo for mongo-driver/v2 is not served by this machine's Go module proxy. See the notes below the tables.")
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "task\tconfiguration\tops/s\tallocs/op\tB/op\tclient CPU µs/op\tspans/op\t")
	type verdict struct {
		row                           string
		offCost, onCost, onVsPeer     []float64 // per round
		sampCost                      []float64 // per round: 1-in-10 sampled vs off
		offCPU, onCPU                 []float64 // per round, nil when unknown
		offAllocs, onAllocs, peerAllc int64
	}
	var verdicts []verdict
	for _, row := range rows {
		if crudSeeded(row) {
			if err := setup.seed(); err != nil {
				fail(err)
			}
		}
		var fs [numConfigs]func(b *testing.B)
		var ops [numConfigs]atomic.Int64
		for cfg := range fs {
			f := clients.configTask(ctx, cfg, docs, row)
			fs[cfg] = func(b *testing.B) { f(b); ops[cfg].Add(int64(b.N)) }
		}
		warmUp(fs[:]...)
		for i := range ops {
			ops[i].Store(0)
		}
		spans0 := [numConfigs]int64{cfgOn: flushCount(ctx, clients.onSinks, onExp), cfgOnSampled: flushCount(ctx, clients.sampSinks, sampExp), cfgPeerOtel: flushCount(ctx, clients.peerSinks, peerExp)}
		var runs [numConfigs][]crudResult
		for round := 0; round < count; round++ {
			for k := 0; k < numConfigs; k++ {
				cfg := (round + k) % numConfigs
				runs[cfg] = append(runs[cfg], measureCRUD(fs[cfg], srv))
			}
		}
		spans1 := [numConfigs]int64{cfgOn: flushCount(ctx, clients.onSinks, onExp), cfgOnSampled: flushCount(ctx, clients.sampSinks, sampExp), cfgPeerOtel: flushCount(ctx, clients.peerSinks, peerExp)}
		var med [numConfigs]crudResult
		for cfg := range runs {
			med[cfg] = medianCRUD(append([]crudResult(nil), runs[cfg]...))
		}
		for cfg := 0; cfg < numConfigs; cfg++ {
			name := ""
			if cfg == 0 {
				name = telemetryPrefix + row
			}
			spans := "-"
			if cfg == cfgOn || cfg == cfgOnSampled || cfg == cfgPeerOtel {
				if n := ops[cfg].Load(); n > 0 {
					spans = fmt.Sprintf("%.2f", float64(spans1[cfg]-spans0[cfg])/float64(n))
				}
			}
			cpu := "-"
			if med[cfg].cliNs >= 0 {
				cpu = fmt.Sprintf("%.1f", med[cfg].cliNs/1e3)
			}
			fmt.Fprintf(tw, "%s\t%s\t%.0f\t%d\t%d\t%s\t%s\t\n", name, configNames[cfg], 1e9/med[cfg].nsop, med[cfg].allocs, med[cfg].bytesB, cpu, spans)
		}
		// cost of a over b in one round: the throughput a loses, 1 - ops_a/ops_b.
		perRound := func(a, b int) []float64 {
			var out []float64
			for i := range runs[a] {
				out = append(out, 1-runs[b][i].nsop/runs[a][i].nsop)
			}
			return out
		}
		speedup := func(a, b int) []float64 {
			var out []float64
			for i := range runs[a] {
				out = append(out, runs[b][i].nsop/runs[a][i].nsop)
			}
			return out
		}
		// extra client CPU of a over b in one round: cpu_a/cpu_b - 1.
		cpuCost := func(a, b int) []float64 {
			var out []float64
			for i := range runs[a] {
				if runs[a][i].cliNs <= 0 || runs[b][i].cliNs <= 0 {
					return nil
				}
				out = append(out, runs[a][i].cliNs/runs[b][i].cliNs-1)
			}
			return out
		}
		verdicts = append(verdicts, verdict{row: row,
			offCost: perRound(cfgOff, cfgNone), onCost: perRound(cfgOn, cfgOff), onVsPeer: speedup(cfgOn, cfgPeerOtel),
			sampCost: perRound(cfgOnSampled, cfgOff),
			offCPU:   cpuCost(cfgOff, cfgNone), onCPU: cpuCost(cfgOn, cfgOff),
			offAllocs: med[cfgOff].allocs - med[cfgNone].allocs, onAllocs: med[cfgOn].allocs, peerAllc: med[cfgPeerOtel].allocs})
	}
	tw.Flush()

	fmt.Println()
	tw = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "task\toff vs no monitors: cost ≤ 1%\t\tall on vs off: cost ≤ 10%\t\tall on vs official+otel: ops/s ratio > 1\t\tallocs/op ours < official+otel\t\tclient CPU/op: off vs none, on vs off\t1 in 10 sampled vs off (not a target)\t")
	passMiss := func(ok bool) string {
		if ok {
			return "PASS"
		}
		return "MISS"
	}
	pct := func(xs []float64) (string, float64) {
		m, lo, hi := medianSpread(xs)
		return fmt.Sprintf("%+.1f%% [%+.1f, %+.1f]", 100*m, 100*lo, 100*hi), m
	}
	for _, v := range verdicts {
		offS, off := pct(v.offCost)
		onS, on := pct(v.onCost)
		r, lo, hi := medianSpread(v.onVsPeer)
		cpu := "-"
		if v.offCPU != nil && v.onCPU != nil {
			a, _, _ := medianSpread(v.offCPU)
			b, _, _ := medianSpread(v.onCPU)
			cpu = fmt.Sprintf("%+.1f%%, %+.1f%%", 100*a, 100*b)
		}
		sampS, _ := pct(v.sampCost)
		fmt.Fprintf(tw, "%s\t%s (%+d allocs)\t%s\t%s\t%s\t%.2fx [%.2f, %.2f]\t%s\t%d vs %d\t%s\t%s\t%s\t\n", telemetryPrefix+v.row,
			offS, v.offAllocs, passMiss(off <= 0.01),
			onS, passMiss(on <= 0.10),
			r, lo, hi, passMiss(r > 1),
			v.onAllocs, v.peerAllc, passMiss(v.onAllocs < v.peerAllc), cpu, sampS)
	}
	tw.Flush()
	fmt.Print(telemetryNotes)
	if len(unset) > 0 {
		fmt.Printf("Unset for this section: %s.\n", strings.Join(unset, ", "))
	}
	for _, n := range clients.notes {
		fmt.Println("NOTE:", n)
	}
	return true
}

// flushCount flushes s's spans to its exporter and returns how many the
// exporter has seen.
func flushCount(ctx context.Context, s *sinks, e *countingExporter) int64 {
	if err := s.tp.ForceFlush(ctx); err != nil {
		fail(err)
	}
	return e.n.Load()
}

// medianSpread returns the median, the least and the greatest of xs.
func medianSpread(xs []float64) (med, lo, hi float64) {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n == 0 {
		return 0, 0, 0
	}
	med = s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return med, s[0], s[n-1]
}

const telemetryNotes = `
The configurations (one client each, default options otherwise, one
mongotest server in a child process, the seeded tweets for findOne):
  no monitors     mongoscope; ClientOptions.Monitors empty, Logging nil (and
                  no MONGODB_LOG_* variable): no event is built.
  telemetry off   mongoscope with the observability present but switched off:
                  Monitors holds tracing.New(tracing.Options{}), which is
                  disabled (Enabled nil and OTEL_GO_INSTRUMENTATION_MONGODB_ENABLED
                  unset, the specification's default); Logging is a sink
                  with a JSON handler to io.Discard and every component
                  (command, topology, serverSelection, connection, failover)
                  at LevelOff. No span, no metric, no log message is made.
  all sinks on    telemetry.New(Options{Logger: slog JSON handler at info to
                  io.Discard, TracerProvider: the OTel SDK's, AlwaysSample,
                  batch span processor over an exporter that counts and
                  discards, Registerer: a fresh prometheus.NewRegistry()}),
                  then Apply: logs at info (the default when a logger is
                  given), spans, metrics; no db.query.text.
  all on, 1 in 10 sampled
                  the same with the sampler production tracing usually
                  has, ParentBased(TraceIDRatioBased(0.1)): nine
                  operations in ten make spans that are not recorded
                  (the tracing sink then skips their attributes); logs
                  and metrics as above. Informative, not one of the
                  issue's four configurations.
  official + otelmongo stand-in
                  go.mongodb.org/mongo-driver/v2 with a CommandMonitor of
                  ours standing in for otelmongo, which this machine's Go
                  module proxy does not serve (403 for every version): one
                  client span per command ("<coll>.<cmd>", otelmongo's
                  db.system, db.name, db.operation, db.mongodb.collection,
                  net.peer.* attributes, no statement), kept in a map by
                  connection and request id under a mutex, ended on
                  Succeeded/Failed; plus a Prometheus duration histogram on
                  a fresh registry. Same SDK pipeline as "all sinks on".
  official, no monitor
                  the official driver as in the CRUD table, for reference.
Costs are throughput lost: 1 - ops/s(config) / ops/s(baseline), negative
when the config ran faster (noise). spans/op counts the spans exported per
operation over the row's measured runs (our sinks make an operation span
and its command spans; the stand-in one span per command). "client
CPU/op" is this process's CPU time per operation, extra over the baseline
(median of the rounds' ratios; not a target): the drivers' own work, less
exposed than wall time to the server and other processes, but it includes
the client's polling on the single-goroutine rows (see the CRUD notes).
The targets are printed PASS/MISS; a MISS does not fail the run. The cores
are shared with the server and anything else running: the ≤1% target is
within the noise unless the [min, max] spread over rounds is narrow; raise
-telemetrycount for more rounds.
`
