package probe

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Failover reports.
//
// A Failover is one primary change the cluster observed, from the SDAM
// events of the main client and the canary probes around it. It opens
// when the first SDAM event shows the last known primary gone (the
// "lost the writable primary" moment: Detected), or, for a change with
// no window without a primary (a new electionId on the same member, an
// immediate switch to another member), when the new primary is seen
// (Detected = NewPrimarySeen). A lost primary that comes back unchanged
// (same address, same electionId) was no primary change: the window is
// dropped, and no Failover is recorded.
//
// It stays open until it settles: the new primary has been seen AND a
// canary write succeeded that ended after that moment. A failover still
// open FailoverCap after Detected, or when another primary loss or change
// comes before it settled, or when the cluster is closed, is closed
// unsettled.
//
// While it is open, every round's results that ended at or after Detected
// count for it:
//
//   - write unavailability (WriteUnavailable) is measured on the canary
//     writes. Let D be Detected and P NewPrimarySeen. A write is hit
//     when it failed and ended at or after D, or when it succeeded having
//     started before P and ended after P (it was in flight, blocked in
//     server selection or retried onto the new primary, when the new
//     primary appeared). The window starts at the start of the first hit
//     write (WriteUnavailableFrom) and ends at the end of the first
//     successful write that ended after P (WriteUnavailableUntil; the
//     write that settles the failover, which is the first hit write
//     itself when that one succeeded). No hit write: no window (0). An
//     unsettled failover's window runs to its close, a lower bound;
//   - reads, per read preference: the read probes, the failed ones and
//     the longest latency;
//   - RetriesAbsorbed: the driver's retries of read and write probes
//     that succeeded;
//   - Errors: the failed read and write probes by error class (pings go
//     to each member directly and are not what an application sees).
//
// Its JSON form is MarshalJSON's: the tags below name the fields, but
// times are written in RFC 3339 with milliseconds and each duration twice
// (name_seconds, a number, and name, its text).
type Failover struct {
	Cluster    string `json:"cluster"`
	OldPrimary string `json:"old_primary"`
	// NewPrimary is "" when none was seen before the failover closed.
	NewPrimary string `json:"new_primary"`
	// Cause is what became of the old primary at Detected ("RSSecondary",
	// "Unknown: connection refused", ...), or "primary changed without a
	// window" for an immediate change.
	Cause          string    `json:"cause"`
	Detected       time.Time `json:"detected"`
	NewPrimarySeen time.Time `json:"new_primary_seen"` // zero when none was seen
	// NewPrimaryAfter is NewPrimarySeen - Detected.
	NewPrimaryAfter time.Duration `json:"new_primary_after"`

	WriteUnavailableFrom  time.Time     `json:"write_unavailable_from"`  // zero: no write was hit
	WriteUnavailableUntil time.Time     `json:"write_unavailable_until"` // zero: none succeeded after P
	WriteUnavailable      time.Duration `json:"write_unavailable"`
	Writes                int           `json:"writes"`
	WritesFailed          int           `json:"writes_failed"`

	// Reads is per read preference name.
	Reads           map[string]ReadImpact `json:"reads"`
	RetriesAbsorbed int                   `json:"retries_absorbed"`
	// Errors counts the failed read and write probes by class.
	Errors map[string]int `json:"errors"`

	// Open is true until the failover closes; Settled tells how.
	Open    bool `json:"open"`
	Settled bool `json:"settled"`
	// Closed is when it closed; End says why: "settled", "cap",
	// "superseded" (another loss or change came first) or "stopped".
	Closed time.Time `json:"closed"`
	End    string    `json:"end"`
}

// ReadImpact is what one read preference's canary reads saw during a
// failover.
type ReadImpact struct {
	Probes     int           `json:"probes"`
	Failed     int           `json:"failed"`
	MaxLatency time.Duration `json:"max_latency"`
}

// Failover defaults.
const (
	// DefaultFailoverCap is how long a failover may stay open before it
	// is closed unsettled.
	DefaultFailoverCap = 2 * time.Minute
	// FailoverHistory is how many closed failovers a Cluster keeps.
	FailoverHistory = 20
)

// FailoverBuckets are the failover histograms' bounds, in seconds.
var FailoverBuckets = []float64{0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 20, 30, 60, 120}

func init() {
	// Kept here rather than in metrics.go's list, beside their
	// definitions.
	MetricNames = append(MetricNames,
		"mongoprobe_failovers_total",
		"mongoprobe_failover_detection_to_primary_seconds",
		"mongoprobe_failover_write_unavailable_seconds",
		"mongoprobe_failover_read_errors_total",
	)
}

type failoverMetrics struct {
	total      *prometheus.CounterVec
	toPrimary  prometheus.Histogram
	writeUnav  prometheus.Histogram
	readErrors *prometheus.CounterVec
}

func newFailoverMetrics(readPrefs []ReadPreference) *failoverMetrics {
	m := &failoverMetrics{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mongoprobe_failovers_total", Help: "Failovers (primary changes) that closed, settled (a new primary and a canary write succeeded on it) or not.",
		}, []string{"settled"}),
		toPrimary: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "mongoprobe_failover_detection_to_primary_seconds", Help: "Time from the first SDAM event showing the old primary gone to the new primary in the driver's topology.",
			Buckets: FailoverBuckets,
		}),
		writeUnav: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "mongoprobe_failover_write_unavailable_seconds", Help: "Canary write unavailability per failover: from the first failed or blocked write to the first successful one on the new primary.",
			Buckets: FailoverBuckets,
		}),
		readErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mongoprobe_failover_read_errors_total", Help: "Canary reads that failed during failovers, by read preference.",
		}, []string{"read_preference"}),
	}
	m.total.WithLabelValues("true")
	m.total.WithLabelValues("false")
	for _, rp := range readPrefs {
		m.readErrors.WithLabelValues(rpName(rp))
	}
	return m
}

func (m *failoverMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.total, m.toPrimary, m.writeUnav, m.readErrors}
}

// failovers is a Cluster's failover state, guarded by Cluster.mu.
type failovers struct {
	m       *failoverMetrics
	cap     time.Duration
	open    *Failover
	history []Failover // closed ones, oldest first
}

func newFailovers(readPrefs []ReadPreference) *failovers {
	return &failovers{m: newFailoverMetrics(readPrefs), cap: DefaultFailoverCap}
}

// Failovers returns the last FailoverHistory closed failovers, oldest
// first, then the open one, if any (Open set). A failover open for longer
// than DefaultFailoverCap is closed first.
func (c *Cluster) Failovers() []Failover {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.expireFailoverLocked(time.Now())
	}
	out := make([]Failover, 0, len(c.fo.history)+1)
	for _, f := range c.fo.history {
		out = append(out, f.clone())
	}
	if c.fo.open != nil {
		out = append(out, c.fo.open.clone())
	}
	return out
}

func (f Failover) clone() Failover {
	f.Reads = maps.Clone(f.Reads)
	f.Errors = maps.Clone(f.Errors)
	return f
}

func (c *Cluster) openFailoverLocked(now time.Time, old, cause string) *Failover {
	f := &Failover{Cluster: c.s.Name, OldPrimary: old, Cause: cause, Detected: now, Open: true,
		Reads: map[string]ReadImpact{}, Errors: map[string]int{}}
	for _, rp := range c.s.ReadPreferences {
		f.Reads[rpName(rp)] = ReadImpact{}
	}
	c.fo.open = f
	return f
}

// primaryLostLocked: the SDAM event at now shows the last known primary
// old gone; mu is held.
func (c *Cluster) primaryLostLocked(now time.Time, old, cause string) {
	if old == "" {
		return
	}
	if c.fo.open != nil {
		c.closeFailoverLocked(now, "superseded")
	}
	c.openFailoverLocked(now, old, cause)
}

// primaryChangedLocked: the SDAM event at now shows a new primary (a new
// address or electionId) after old; mu is held.
func (c *Cluster) primaryChangedLocked(now time.Time, old, primary string) {
	f := c.fo.open
	if f != nil && !f.NewPrimarySeen.IsZero() {
		// A second change before the first settled.
		c.closeFailoverLocked(now, "superseded")
		f = nil
	}
	if f == nil {
		f = c.openFailoverLocked(now, old, "primary changed without a window")
	}
	f.NewPrimary = primary
	f.NewPrimarySeen = now
	f.NewPrimaryAfter = now.Sub(f.Detected)
}

// primaryBackLocked: a writable primary is known again at now; when it is
// the old one unchanged, the open failover, which has no new primary, is
// dropped; mu is held.
func (c *Cluster) primaryBackLocked(now time.Time, primary string) {
	if f := c.fo.open; f != nil && f.NewPrimarySeen.IsZero() {
		c.log.Info("the primary came back unchanged: no failover", "primary", primary, "without_primary", now.Sub(f.Detected))
		c.fo.open = nil
	}
}

// failoverRoundLocked counts a round's results for the open failover,
// which it may settle; mu is held.
func (c *Cluster) failoverRoundLocked(r Round) {
	f := c.fo.open
	if f == nil {
		return
	}
	results := slices.Clone(r.Results)
	sort.SliceStable(results, func(i, j int) bool {
		return results[i].Start.Add(results[i].Duration).Before(results[j].Start.Add(results[j].Duration))
	})
	settled := false
	for _, res := range results {
		end := res.Start.Add(res.Duration)
		if end.Before(f.Detected) || res.Probe == ProbePing {
			continue
		}
		if res.Err != nil {
			f.Errors[res.Class]++
		} else {
			f.RetriesAbsorbed += res.Retries
		}
		switch res.Probe {
		case ProbeRead:
			ri := f.Reads[res.Target]
			ri.Probes++
			if res.Err != nil {
				ri.Failed++
			}
			ri.MaxLatency = max(ri.MaxLatency, res.Duration)
			f.Reads[res.Target] = ri
		case ProbeWrite:
			if settled {
				continue
			}
			f.Writes++
			p := f.NewPrimarySeen
			if res.Err != nil {
				f.WritesFailed++
			}
			hit := res.Err != nil || (!p.IsZero() && res.Start.Before(p) && end.After(p))
			if hit && f.WriteUnavailableFrom.IsZero() {
				f.WriteUnavailableFrom = res.Start
			}
			if res.Err == nil && !p.IsZero() && end.After(p) {
				if !f.WriteUnavailableFrom.IsZero() {
					f.WriteUnavailableUntil = end
					f.WriteUnavailable = end.Sub(f.WriteUnavailableFrom)
				}
				settled = true
			}
		}
	}
	if settled {
		f.Settled = true
		c.closeFailoverLocked(time.Now(), "settled")
		return
	}
	c.expireFailoverLocked(time.Now())
}

// expireFailoverLocked closes the open failover unsettled once it is
// older than the cap; mu is held.
func (c *Cluster) expireFailoverLocked(now time.Time) {
	if f := c.fo.open; f != nil && now.Sub(f.Detected) >= c.fo.cap {
		c.closeFailoverLocked(now, "cap")
	}
}

// closeFailoverLocked closes the open failover: it goes to the history,
// the metrics and the log; mu is held.
func (c *Cluster) closeFailoverLocked(now time.Time, why string) {
	f := c.fo.open
	if f == nil {
		return
	}
	c.fo.open = nil
	f.Open = false
	f.Closed = now
	f.End = why
	if !f.Settled && !f.WriteUnavailableFrom.IsZero() {
		f.WriteUnavailable = now.Sub(f.WriteUnavailableFrom) // a lower bound
	}
	c.fo.history = append(c.fo.history, *f)
	if n := len(c.fo.history); n > FailoverHistory {
		c.fo.history = slices.Clone(c.fo.history[n-FailoverHistory:])
	}

	c.fo.m.total.WithLabelValues(boolText(f.Settled)).Inc()
	if !f.NewPrimarySeen.IsZero() {
		c.fo.m.toPrimary.Observe(f.NewPrimaryAfter.Seconds())
	}
	c.fo.m.writeUnav.Observe(f.WriteUnavailable.Seconds())
	var readsFailed, errs []any
	for _, name := range slices.Sorted(maps.Keys(f.Reads)) {
		ri := f.Reads[name]
		if ri.Failed > 0 {
			c.fo.m.readErrors.WithLabelValues(name).Add(float64(ri.Failed))
		}
		readsFailed = append(readsFailed, slog.Int(name, ri.Failed))
	}
	total := 0
	for _, class := range slices.Sorted(maps.Keys(f.Errors)) {
		errs = append(errs, slog.Int(class, f.Errors[class]))
		total += f.Errors[class]
	}
	errs = append([]any{slog.Int("total", total)}, errs...)
	level := slog.LevelInfo
	if !f.Settled {
		level = slog.LevelWarn
	}
	c.log.Log(context.Background(), level, "failover",
		"old", f.OldPrimary, "new", f.NewPrimary, "cause", f.Cause,
		"detected", f.Detected.UTC().Format(timeFormat),
		"new_primary_after", f.NewPrimaryAfter,
		"write_unavailable", f.WriteUnavailable,
		slog.Group("reads_failed", readsFailed...),
		"retries_absorbed", f.RetriesAbsorbed,
		slog.Group("errors", errs...),
		"settled", f.Settled, "end", f.End)
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// timeFormat is RFC 3339 with milliseconds.
const timeFormat = "2006-01-02T15:04:05.000Z07:00"

// MarshalJSON writes the failover with its times in RFC 3339 with
// milliseconds (UTC; null when zero) and each duration twice: in seconds
// (name_seconds, a number) and as text (name, "1.5s").
func (f Failover) MarshalJSON() ([]byte, error) {
	type read struct {
		Probes            int     `json:"probes"`
		Failed            int     `json:"failed"`
		MaxLatencySeconds float64 `json:"max_latency_seconds"`
		MaxLatency        string  `json:"max_latency"`
	}
	reads := map[string]read{}
	for k, r := range f.Reads {
		reads[k] = read{Probes: r.Probes, Failed: r.Failed, MaxLatencySeconds: r.MaxLatency.Seconds(), MaxLatency: r.MaxLatency.String()}
	}
	errs := f.Errors
	if errs == nil {
		errs = map[string]int{}
	}
	return json.Marshal(struct {
		Cluster                 string          `json:"cluster"`
		OldPrimary              string          `json:"old_primary"`
		NewPrimary              string          `json:"new_primary"`
		Cause                   string          `json:"cause"`
		Detected                *string         `json:"detected"`
		NewPrimarySeen          *string         `json:"new_primary_seen"`
		NewPrimaryAfterSeconds  float64         `json:"new_primary_after_seconds"`
		NewPrimaryAfter         string          `json:"new_primary_after"`
		WriteUnavailableFrom    *string         `json:"write_unavailable_from"`
		WriteUnavailableUntil   *string         `json:"write_unavailable_until"`
		WriteUnavailableSeconds float64         `json:"write_unavailable_seconds"`
		WriteUnavailable        string          `json:"write_unavailable"`
		Writes                  int             `json:"writes"`
		WritesFailed            int             `json:"writes_failed"`
		Reads                   map[string]read `json:"reads"`
		RetriesAbsorbed         int             `json:"retries_absorbed"`
		Errors                  map[string]int  `json:"errors"`
		Open                    bool            `json:"open"`
		Settled                 bool            `json:"settled"`
		Closed                  *string         `json:"closed"`
		End                     string          `json:"end"`
	}{
		f.Cluster, f.OldPrimary, f.NewPrimary, f.Cause,
		jsonTime(f.Detected), jsonTime(f.NewPrimarySeen),
		f.NewPrimaryAfter.Seconds(), f.NewPrimaryAfter.String(),
		jsonTime(f.WriteUnavailableFrom), jsonTime(f.WriteUnavailableUntil),
		f.WriteUnavailable.Seconds(), f.WriteUnavailable.String(),
		f.Writes, f.WritesFailed, reads, f.RetriesAbsorbed, errs,
		f.Open, f.Settled, jsonTime(f.Closed), f.End,
	})
}

func jsonTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(timeFormat)
	return &s
}
