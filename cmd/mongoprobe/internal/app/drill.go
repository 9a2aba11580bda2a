package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/cmd/mongoprobe/internal/config"
	"github.com/mongoscope/mongoscope/cmd/mongoprobe/internal/demo"
	"github.com/mongoscope/mongoscope/cmd/mongoprobe/internal/probe"
	"github.com/mongoscope/mongoscope/driver"
)

// DrillInterval is the drill's time between two rounds.
const DrillInterval = 500 * time.Millisecond

// The step-down the drill asks for.
const (
	drillStepDownSecs  = 60
	drillCatchUpSecs   = 10
	drillStepDownLimit = drillCatchUpSecs*time.Second + 20*time.Second
)

// drill runs mongoprobe drill --step-down: it probes the cluster every
// DrillInterval, steps its primary down through the driver, waits for the
// failover that follows to settle (or cfg.Drill.Timeout), and prints its
// report. It returns ExitOK when the failover settled.
func drill(ctx context.Context, cfg *config.Config, deps probe.Deps, stdout, stderr io.Writer, logger *slog.Logger) int {
	var s probe.Settings
	found := false
	for _, cs := range cfg.Clusters {
		if cfg.Drill.Cluster == "" || cs.Name == cfg.Drill.Cluster {
			s, found = cs, true
			break
		}
	}
	if !found || cfg.Demo && cfg.Drill.Cluster != "" && cfg.Drill.Cluster != demo.ClusterName {
		fmt.Fprintf(stderr, "mongoprobe: invalid setting --cluster: no configured cluster is named %s (the demo's cluster is %q)\n", shortQuote(cfg.Drill.Cluster), demo.ClusterName)
		return ExitConfig
	}
	s.Interval = DrillInterval
	s.Scheduled = true
	log := logger.With("cluster", s.Name, "component", "drill")

	c, err := probe.New(s, deps)
	if err != nil {
		log.Error("cannot start probing the cluster", "error", err)
		return ExitFailed
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c.Close(cctx)
	}()
	ctx, cancel := context.WithTimeout(ctx, cfg.Drill.Timeout)
	defer cancel()
	runDone := make(chan struct{})
	go func() { defer close(runDone); c.Run(ctx) }()
	defer func() { cancel(); <-runDone }()

	// A primary, and a first round: the canary's baseline.
	// (A sharded or load-balanced cluster has no primary to step down.)
	poll(ctx, func() bool {
		st := c.Status()
		return c.Ready() && (st.Primary != "" || st.Topology == "Sharded" || st.Topology == "LoadBalanced")
	})
	if st := c.Status(); st.Primary == "" {
		fmt.Fprintf(stdout, "failover drill on cluster %q: FAILED\n  no primary found (topology %s): nothing to step down\n", s.Name, st.Topology)
		return ExitFailed
	}
	old := c.Status().Primary

	opts := *s.Client
	opts.Monitors = nil
	client, err := driver.Connect(ctx, &opts)
	if err != nil {
		fmt.Fprintf(stdout, "failover drill on cluster %q: FAILED\n  connecting: %v\n", s.Name, err)
		return ExitFailed
	}
	defer func() {
		dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer dcancel()
		client.Disconnect(dctx)
	}()
	log.Warn("drill: stepping the primary down", "primary", old, "step_down_secs", drillStepDownSecs, "secondary_catch_up_period_secs", drillCatchUpSecs)
	sent := time.Now()
	sctx, scancel := context.WithTimeout(ctx, drillStepDownLimit)
	_, err = client.RunCommand(sctx, "admin", bson.D{
		{Key: "replSetStepDown", Value: drillStepDownSecs},
		{Key: "secondaryCatchUpPeriodSecs", Value: drillCatchUpSecs},
	})
	scancel()
	switch {
	case err != nil && driver.IsNetworkError(err):
		// Servers before 4.2 close every connection as they step down.
		log.Info("drill: the step-down's connection was closed, as old servers do; waiting for a new primary", "error", err.Error())
	case err != nil:
		fmt.Fprintf(stdout, "failover drill on cluster %q: FAILED\n  replSetStepDown on %s: %v\n", s.Name, old, err)
		return ExitFailed
	}

	// The failover: the first one detected after the command was sent.
	var f *probe.Failover
	mine := func() *probe.Failover {
		for _, x := range c.Failovers() {
			if !x.Detected.Before(sent) {
				return &x
			}
		}
		return nil
	}
	poll(ctx, func() bool { f = mine(); return f != nil && !f.Open })
	if f == nil {
		f = mine()
	}
	if f == nil {
		fmt.Fprintf(stdout, "failover drill on cluster %q: FAILED\n  step-down sent to %s at %s; no primary change seen within %v\n",
			s.Name, old, sent.UTC().Format(reportTime), cfg.Drill.Timeout)
		return ExitFailed
	}
	writeReport(stdout, *f, sent, cfg.Drill.Timeout)
	if f.Settled {
		return ExitOK
	}
	return ExitFailed
}

// poll calls ok every 50ms until it is true (true) or ctx ends (false).
func poll(ctx context.Context, ok func() bool) bool {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for !ok() {
		select {
		case <-ctx.Done():
			return ok()
		case <-t.C:
		}
	}
	return true
}

const reportTime = "15:04:05.000Z07:00"

// writeReport prints a failover as a human-readable block.
func writeReport(w io.Writer, f probe.Failover, sent time.Time, timeout time.Duration) {
	state := "SETTLED"
	switch {
	case f.Open:
		state = fmt.Sprintf("NOT SETTLED within %v", timeout)
	case !f.Settled:
		state = "NOT SETTLED (" + f.End + ")"
	}
	at := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format(reportTime)
	}
	orNone := func(s string) string {
		if s == "" {
			return "(none seen)"
		}
		return s
	}
	var b strings.Builder
	fmt.Fprintf(&b, "failover drill on cluster %q: %s\n", f.Cluster, state)
	row := func(k, format string, args ...any) { fmt.Fprintf(&b, "  %-19s %s\n", k, fmt.Sprintf(format, args...)) }
	row("old primary", "%s", f.OldPrimary)
	row("new primary", "%s", orNone(f.NewPrimary))
	row("step-down sent", "%s", at(sent))
	row("detected", "%s (%v after the step-down was sent; %s)", at(f.Detected), f.Detected.Sub(sent).Round(time.Millisecond), f.Cause)
	if f.NewPrimarySeen.IsZero() {
		row("new primary seen", "-")
	} else {
		row("new primary seen", "%s (%v after detection)", at(f.NewPrimarySeen), f.NewPrimaryAfter.Round(time.Millisecond))
	}
	wu := f.WriteUnavailable.Round(time.Millisecond).String()
	if !f.Settled && !f.WriteUnavailableFrom.IsZero() {
		wu = "at least " + wu
	}
	row("write unavailable", "%s (from %s until %s; %d of %d canary writes failed)", wu, at(f.WriteUnavailableFrom), at(f.WriteUnavailableUntil), f.WritesFailed, f.Writes)
	for i, name := range slices.Sorted(maps.Keys(f.Reads)) {
		r := f.Reads[name]
		k := ""
		if i == 0 {
			k = "reads"
		}
		row(k, "%s: %d of %d failed, max latency %v", name, r.Failed, r.Probes, r.MaxLatency.Round(100*time.Microsecond))
	}
	row("retries absorbed", "%d", f.RetriesAbsorbed)
	var errs []string
	for _, class := range slices.Sorted(maps.Keys(f.Errors)) {
		errs = append(errs, fmt.Sprintf("%s %d", class, f.Errors[class]))
	}
	if len(errs) == 0 {
		errs = []string{"none"}
	}
	row("errors", "%s", strings.Join(errs, ", "))
	if !f.Open {
		row("closed", "%s (%s)", at(f.Closed), f.End)
	}
	io.WriteString(w, b.String())
}
