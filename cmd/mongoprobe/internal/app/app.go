// Package app is the mongoprobe command: it reads the configuration, then
// either checks every cluster once (check) or probes them on schedule and
// serves /metrics, /probe, /-/healthy and /-/ready (run).
package app

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mongoscope/mongoscope/cmd/internal/console"
	"github.com/mongoscope/mongoscope/cmd/mongoprobe/internal/config"
	"github.com/mongoscope/mongoscope/cmd/mongoprobe/internal/demo"
	"github.com/mongoscope/mongoscope/cmd/mongoprobe/internal/probe"
	"github.com/mongoscope/mongoscope/driver"
)

// Version is mongoprobe's version; the build may set it with -ldflags
// "-X github.com/mongoscope/mongoscope/cmd/mongoprobe/internal/app.Version=v1.2.3".
var Version = ""

func version() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// The exit codes.
const (
	ExitOK     = 0
	ExitFailed = 1 // a failed check, or a runtime error
	ExitConfig = 2 // a configuration error
)

// Main runs the command with args (without the program's name), the
// environment through getenv, and returns its exit code.
func Main(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	return run(ctx, args, getenv, stdout, stderr, nil)
}

// run is Main; listening, when set, is called with the HTTP server's
// address once it listens (for tests).
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, listening func(string)) int {
	cfg, err := config.Parse(args, getenv)
	if errors.Is(err, config.ErrHelp) {
		config.Usage(stdout)
		return ExitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "mongoprobe: %v\nRun 'mongoprobe --help' for the flags and the configuration file's format.\n", err)
		return ExitConfig
	}
	if cfg.Version {
		fmt.Fprintf(stdout, "mongoprobe %s (mongoscope driver %s, %s)\n", version(), driver.DriverVersion(), runtime.Version())
		return ExitOK
	}
	logger := newLogger(cfg, stderr)
	for _, w := range cfg.Warnings {
		logger.Warn(w)
	}

	var d *demo.Demo
	if cfg.Demo {
		if d, err = demo.Start(); err != nil {
			logger.Error("cannot start the demo", "error", err)
			return ExitFailed
		}
		defer d.Close()
		s, err := d.Settings()
		if err != nil {
			logger.Error("the demo's settings", "error", err)
			return ExitFailed
		}
		cfg.Clusters = []probe.Settings{s}
	}

	tp, err := newTracerProvider(ctx, getenv)
	if err != nil {
		logger.Error("cannot set up the OTLP trace exporter", "error", err)
		return ExitFailed
	}
	if tp != nil {
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := tp.Shutdown(sctx); err != nil {
				logger.Warn("flushing the spans", "error", err)
			}
		}()
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	buildInfo := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "mongoprobe_build_info",
		Help: "mongoprobe's build: its version, the mongoscope driver's and Go's; always 1.",
	}, []string{"version", "driver_version", "goversion"})
	buildInfo.WithLabelValues(version(), driver.DriverVersion(), runtime.Version()).Set(1)
	reg.MustRegister(buildInfo)

	deps := probe.Deps{Logger: logger, Registerer: reg}
	if tp != nil {
		deps.TracerProvider = tp
	}
	if cfg.Command == config.CommandDrill {
		return drill(ctx, cfg, deps, stdout, stderr, logger) // drill.go
	}
	var clusters []*probe.Cluster
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, c := range clusters {
			if err := c.Close(cctx); err != nil {
				logger.Warn("closing a cluster", "cluster", c.Name(), "error", err)
			}
		}
	}()
	for _, s := range cfg.Clusters {
		c, err := probe.New(s, deps)
		if err != nil {
			logger.Error("cannot start probing a cluster", "cluster", s.Name, "error", err)
			return ExitFailed
		}
		clusters = append(clusters, c)
	}

	if cfg.Command == config.CommandCheck && cfg.Timeouts.Enabled {
		return checkTimeouts(ctx, cfg.Timeouts, cfg.Clusters, clusters, d, stdout)
	}
	if cfg.Command == config.CommandCheck {
		return check(ctx, cfg.Clusters, clusters, stdout)
	}

	ln, err := net.Listen("tcp", cfg.ListenAddress)
	if err != nil {
		logger.Error("cannot listen", "address", cfg.ListenAddress, "error", err)
		return ExitFailed
	}
	addr := ln.Addr().String()
	for _, s := range cfg.Clusters {
		logger.Info("probing a cluster", "cluster", s.Name, "hosts", strings.Join(config.Hosts(s), ","), "interval", s.Interval, "scheduled", s.Scheduled)
	}
	var names []string
	for _, s := range cfg.Clusters {
		names = append(names, s.Name)
	}
	logger.Info("serving", "metrics", "http://"+addr+"/metrics", "probe", "http://"+addr+"/probe?target="+names[0], "ready", "http://"+addr+"/-/ready")

	var wg sync.WaitGroup
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	if d != nil {
		d.Banner(stderr, addr)
		logger.Info("demo mode: this is a SIMULATION, an in-process mongotest replica set, not a real MongoDB",
			"members", strings.Join(d.Addrs(), ","), "metrics", "http://"+addr+"/metrics", "probe", "http://"+addr+"/probe?target=demo",
			"ready", "http://"+addr+"/-/ready", "real_cluster", "--uri, MONGOPROBE_URI or --config.file")
		sched := demo.NewScheduler(d.RS, logger, cfg.DemoFaultInterval)
		wg.Add(1)
		go func() { defer wg.Done(); sched.Run(runCtx) }()
	}
	var scheduled []*probe.Cluster
	for i, c := range clusters {
		if cfg.Clusters[i].Scheduled {
			scheduled = append(scheduled, c)
			wg.Add(1)
			go func() { defer wg.Done(); c.Run(runCtx) }()
		}
	}

	byName := map[string]*probe.Cluster{}
	for i, c := range clusters {
		byName[cfg.Clusters[i].Name] = c
	}
	srv := &http.Server{
		Handler:           newHandler(reg, byName, scheduled, logger),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return runCtx },
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	if listening != nil {
		listening(addr)
	}

	code := ExitOK
	select {
	case <-ctx.Done():
		logger.Info("shutting down")
	case err := <-serveErr:
		logger.Error("the HTTP server stopped", "error", err)
		code = ExitFailed
	}
	stop()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	wg.Wait()
	return code
}

// durationText writes durations as Go durations ("2.0004s"), as the
// console handler does, not as the JSON and logfmt handlers' nanoseconds.
func durationText(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		a.Value = slog.StringValue(a.Value.Duration().String())
	}
	return a
}

// newLogger returns the command's logger: tint on a terminal (auto,
// console), logfmt, or JSON.
func newLogger(cfg *config.Config, w io.Writer) *slog.Logger {
	format := cfg.LogFormat
	if format == "auto" {
		format = "json"
		if isTerminal(w) {
			format = "console"
		}
	}
	opts := &slog.HandlerOptions{Level: cfg.LogLevel, ReplaceAttr: durationText}
	switch format {
	case "console":
		return slog.New(console.Handler(w, &console.Options{Level: cfg.LogLevel}))
	case "logfmt":
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func newHandler(reg *prometheus.Registry, byName map[string]*probe.Cluster, scheduled []*probe.Cluster, logger *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		EnableOpenMetrics: true,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}))
	mux.HandleFunc("/-/healthy", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "Healthy")
	})
	mux.HandleFunc("/-/ready", func(w http.ResponseWriter, r *http.Request) {
		var waiting []string
		for _, c := range scheduled {
			if !c.Ready() {
				waiting = append(waiting, c.Name())
			}
		}
		if len(waiting) > 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "Not ready: waiting for the first round of %d cluster(s)\n", len(waiting))
			return
		}
		fmt.Fprintln(w, "Ready")
	})
	mux.HandleFunc("/api/failovers", failoversHandler(byName))
	mux.HandleFunc("/probe", func(w http.ResponseWriter, r *http.Request) {
		target := r.URL.Query().Get("target")
		if target == "" {
			http.Error(w, "missing target: /probe?target=<cluster name>", http.StatusBadRequest)
			return
		}
		c, ok := byName[target]
		if !ok {
			http.Error(w, "unknown target "+shortQuote(target)+": the target must be the name of a configured cluster", http.StatusBadRequest)
			return
		}
		ctx := r.Context()
		if v := r.Header.Get("X-Prometheus-Scrape-Timeout-Seconds"); v != "" {
			if secs, err := strconv.ParseFloat(v, 64); err == nil && secs > 0 {
				timeout := time.Duration(secs * float64(time.Second))
				// Leave the scrape a moment to carry the answer back,
				// as the blackbox exporter does.
				if timeout > time.Second {
					timeout -= 500 * time.Millisecond
				}
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
		}
		round := c.Round(ctx)
		preg := prometheus.NewRegistry()
		if col := probe.RoundCollector(round); col != nil {
			if err := preg.Register(col); err != nil {
				http.Error(w, "registering the round's metrics: "+err.Error(), http.StatusInternalServerError)
				return
			}
		}
		promhttp.HandlerFor(preg, promhttp.HandlerOpts{EnableOpenMetrics: true}).ServeHTTP(w, r)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		var names []string
		for n := range byName {
			names = append(names, n)
		}
		sort.Strings(names)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!DOCTYPE html>\n<html><head><title>mongoprobe</title></head><body>\n<h1>mongoprobe</h1>\n<ul>\n")
		fmt.Fprint(w, "<li><a href=\"/metrics\">/metrics</a>: the probes' metrics</li>\n")
		for _, n := range names {
			u := "/probe?target=" + url.QueryEscape(n)
			fmt.Fprintf(w, "<li><a href=\"%s\">%s</a>: one round on cluster %s now</li>\n", html.EscapeString(u), html.EscapeString(u), html.EscapeString(n))
		}
		fmt.Fprint(w, "<li><a href=\"/api/failovers\">/api/failovers</a>: the failovers observed, as JSON</li>\n")
		fmt.Fprint(w, "<li><a href=\"/-/healthy\">/-/healthy</a> and <a href=\"/-/ready\">/-/ready</a></li>\n</ul>\n</body></html>\n")
	})
	return mux
}

// shortQuote quotes s, cut to 32 bytes.
func shortQuote(s string) string {
	if len(s) > 32 {
		s = s[:32] + "..."
	}
	return strconv.Quote(s)
}

// check runs one round on every cluster, prints a table, and returns 0 when
// every probe succeeded (an empty round fails).
func check(ctx context.Context, settings []probe.Settings, clusters []*probe.Cluster, out io.Writer) int {
	rounds := make([]probe.Round, len(clusters))
	var wg sync.WaitGroup
	for i, c := range clusters {
		wg.Add(1)
		go func() { defer wg.Done(); rounds[i] = c.Round(ctx) }()
	}
	wg.Wait()
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CLUSTER\tPROBE\tTARGET\tOUTCOME\tLATENCY\tMEMBER\tRETRIES\tERROR")
	code := ExitOK
	for i, r := range rounds {
		name := settings[i].Name
		if len(r.Results) == 0 {
			fmt.Fprintf(tw, "%s\t-\t-\tFAILED\t-\t-\t-\tno probe ran (the round gave no results)\n", name)
			code = ExitFailed
			continue
		}
		if !r.OK() {
			code = ExitFailed
		}
		for _, res := range r.Results {
			outcome, errText := "ok", "-"
			if res.Err != nil {
				outcome = "FAILED"
				errText = describeError(res)
			}
			member := res.Member
			if member == "" {
				member = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", name, res.Probe, res.Target, outcome,
				res.Duration.Round(100*time.Microsecond), member, res.Retries, errText)
		}
	}
	tw.Flush()
	if code == ExitOK {
		fmt.Fprintln(out, "\nevery probe succeeded")
	} else {
		fmt.Fprintln(out, "\nsome probes failed")
	}
	return code
}

func describeError(r probe.Result) string {
	parts := []string{}
	if r.Class != "" {
		parts = append(parts, "class="+r.Class)
	}
	if r.TimeoutStage != "" {
		parts = append(parts, "stage="+r.TimeoutStage)
	}
	if r.Code != 0 {
		parts = append(parts, "code="+strconv.Itoa(int(r.Code)))
	}
	msg := r.Err.Error()
	if len(msg) > 120 {
		msg = msg[:120] + "..."
	}
	parts = append(parts, msg)
	return strings.Join(parts, " ")
}
