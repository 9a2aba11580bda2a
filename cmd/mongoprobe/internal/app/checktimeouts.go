package app

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mongoscope/mongoscope/cmd/mongoprobe/internal/config"
	"github.com/mongoscope/mongoscope/cmd/mongoprobe/internal/demo"
	"github.com/mongoscope/mongoscope/cmd/mongoprobe/internal/probe"
	"github.com/mongoscope/mongoscope/driver/event"
)

// stageOrder is the order of the STAGES column.
var stageOrder = []string{
	event.TimeoutStageSelection, event.TimeoutStageCheckout, event.TimeoutStageConnect,
	event.TimeoutStageBeforeSend, event.TimeoutStageNetwork, event.TimeoutStageServer,
	event.TimeoutStageRetry, event.TimeoutStageOther,
}

// checkTimeouts is check --timeouts: on each cluster, one warm-up read
// under the cluster's read timeout, then tc.Count reads under each budget,
// one at a time, with the cluster's first read preference; a table per
// budget; 0 when every timeout's overshoot stayed under tc.MaxOvershoot and
// no read failed otherwise. In the demo (d not nil), the primary's finds
// are blocked for demo.SlowFindBlock after the warm-up.
func checkTimeouts(ctx context.Context, tc config.TimeoutCheck, settings []probe.Settings, clusters []*probe.Cluster, d *demo.Demo, out io.Writer) int {
	code := ExitOK
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	for i, c := range clusters {
		s := settings[i]
		db, coll := tc.Database, tc.Collection
		if db == "" {
			db, coll = s.Database, s.Collection
		}
		pref := probe.ReadPreference{}
		if len(s.ReadPreferences) > 0 {
			pref = s.ReadPreferences[0]
		}
		prefName := pref.Name
		if prefName == "" {
			prefName = pref.Pref.Mode
		}
		if prefName == "" {
			prefName = "primary"
		}
		read := probe.TimedRead{Database: db, Collection: coll, Filter: tc.Filter, Pref: pref.Pref}
		fmt.Fprintf(out, "cluster %s: findOne %s on %s.%s, read preference %s, %d read(s) per budget, one at a time\n",
			s.Name, tc.FilterJSON, db, coll, prefName, tc.Count)

		warm := read
		warm.Budget, warm.Target = s.ReadTimeout, "warm-up"
		if res := c.TimedRead(ctx, warm); res.Err != nil {
			fmt.Fprintf(out, "  the warm-up read (timeout %v) failed: %s\n\n", s.ReadTimeout, describeError(res))
			code = ExitFailed
			continue
		}
		if d != nil {
			undo, err := d.BlockFinds(demo.SlowFindBlock)
			if err != nil {
				fmt.Fprintf(out, "  demo: cannot block the finds: %v\n\n", err)
				code = ExitFailed
				continue
			}
			defer undo()
			fmt.Fprintf(out, "  demo (a SIMULATION): a fail point blocks every find on the primary for %v\n", demo.SlowFindBlock)
		}

		fmt.Fprintln(tw, "  BUDGET\tRUNS\tOK\tTIMED OUT\tERRORS\tSTAGES\tOVERSHOOT P50\tP99\tMAX\tSERVER-FIRST")
		var over, failed int
		var worst time.Duration
		var firstErr string
		for _, b := range tc.Budgets {
			var results []probe.Result
			ok, errs := 0, 0
			for range tc.Count {
				if ctx.Err() != nil {
					break
				}
				r := read
				r.Budget = b
				res := c.TimedRead(ctx, r)
				results = append(results, res)
				switch {
				case res.Err == nil:
					ok++
				case res.Class == probe.ClassTimeout:
					if res.Overshoot >= tc.MaxOvershoot {
						over++
					}
					if res.Overshoot > worst {
						worst = res.Overshoot
					}
				default:
					errs++
					if firstErr == "" {
						firstErr = describeError(res)
					}
				}
			}
			failed += errs
			sum := probe.SummarizeTimeouts(results)
			p50, p99, mx, sf := "-", "-", "-", "-"
			if sum.Timeouts > 0 {
				p50, p99, mx = fmtOvershoot(sum.OvershootP50), fmtOvershoot(sum.OvershootP99), fmtOvershoot(sum.OvershootMax)
				sf = fmt.Sprintf("%d (%.0f%%)", sum.ServerFirst, 100*sum.ServerFirstRatio)
			}
			fmt.Fprintf(tw, "  %v\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", b, len(results), ok, sum.Timeouts, errs, stages(sum.ByStage), p50, p99, mx, sf)
		}
		tw.Flush()
		switch {
		case ctx.Err() != nil:
			fmt.Fprintf(out, "  interrupted\n\n")
			code = ExitFailed
		case over > 0 || failed > 0:
			if over > 0 {
				fmt.Fprintf(out, "  FAILED: %d timeout(s) overshot their timeoutMS by %v or more (the worst by %v)\n", over, tc.MaxOvershoot, fmtOvershoot(worst))
			}
			if failed > 0 {
				fmt.Fprintf(out, "  FAILED: %d read(s) failed other than by a timeout, the first: %s\n", failed, firstErr)
			}
			fmt.Fprintln(out)
			code = ExitFailed
		default:
			fmt.Fprintf(out, "  every timeout's overshoot stayed under %v\n\n", tc.MaxOvershoot)
		}
	}
	return code
}

// stages writes the timeouts by stage, "network=3 server=1", or "-".
func stages(by map[string]int64) string {
	var parts []string
	for _, st := range stageOrder {
		if n := by[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", st, n))
		}
	}
	for st, n := range by { // a stage this table does not know yet
		if n > 0 && !strings.Contains(strings.Join(stageOrder, " "), st) {
			parts = append(parts, fmt.Sprintf("%s=%d", st, n))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

// fmtOvershoot writes an overshoot to the 10µs, with its sign.
func fmtOvershoot(d time.Duration) string {
	d = d.Round(10 * time.Microsecond)
	if d > 0 {
		return "+" + d.String()
	}
	return d.String()
}
