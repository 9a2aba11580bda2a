package probe

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/driver/event"
)

// How well the probes' timeouts hold.
//
// A probe that timed out (Class ClassTimeout) has an overshoot: the time
// it returned minus its budget (Result.Duration - Result.Timeout). It is
// negative when the driver gave up before the budget ran out (stage
// before_send: what was left did not exceed the server's minimum round
// trip time), and a few hundred microseconds on a loopback network when
// the driver's deadline held.
//
// The side of a timeout says which deadline fired first: "server" when
// the server's MaxTimeMSExpired (code 50) arrived before the client-side
// deadline (stage server: the maxTimeMS the driver sent ran out there),
// "client" for every other stage (selection, checkout, connect,
// before_send, network, retry, other).

// The sides of a timeout (mongoprobe_timeout_side_total's side label).
const (
	SideServer = "server" // the server's MaxTimeMSExpired came first (stage server)
	SideClient = "client" // a client-side deadline ran out first (every other stage)
)

// OvershootBuckets are the overshoot histogram's bounds, in seconds: from
// 10ms early to 1s late, finer around 0.
var OvershootBuckets = []float64{-0.01, -0.005, -0.001, 0, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1}

// TimeoutWindow is how many of the last timeouts a Cluster keeps for the
// overshoot percentiles of its TimeoutSummary.
const TimeoutWindow = 256

// TimeoutSide returns the side of a timeout stage: SideServer for
// event.TimeoutStageServer, SideClient for any other.
func TimeoutSide(stage string) string {
	if stage == event.TimeoutStageServer {
		return SideServer
	}
	return SideClient
}

// TimeoutSummary describes the timeouts of a cluster's probes (or of any
// set of results, SummarizeTimeouts).
type TimeoutSummary struct {
	// Timeouts counts the probes that timed out; ByStage splits them by
	// stage (event.TimeoutStage*).
	Timeouts int64
	ByStage  map[string]int64
	// ServerFirst and ClientFirst split Timeouts by side;
	// ServerFirstRatio is ServerFirst/Timeouts (0 without timeouts).
	ServerFirst, ClientFirst int64
	ServerFirstRatio         float64
	// Window is how many overshoots the percentiles are over: the last
	// TimeoutWindow timeouts at most. With none, the percentiles are 0.
	Window                                   int
	OvershootP50, OvershootP99, OvershootMax time.Duration
}

// SummarizeTimeouts summarizes the timeouts among results (every one of
// them is in the percentiles).
func SummarizeTimeouts(results []Result) TimeoutSummary {
	s := TimeoutSummary{ByStage: map[string]int64{}}
	var over []time.Duration
	for _, r := range results {
		if r.Class != ClassTimeout {
			continue
		}
		s.add(r)
		over = append(over, r.Overshoot)
	}
	s.setPercentiles(over)
	return s
}

func (s *TimeoutSummary) add(r Result) {
	stage := r.TimeoutStage
	if stage == "" {
		stage = event.TimeoutStageOther
	}
	s.Timeouts++
	s.ByStage[stage]++
	if TimeoutSide(stage) == SideServer {
		s.ServerFirst++
	} else {
		s.ClientFirst++
	}
	s.ServerFirstRatio = float64(s.ServerFirst) / float64(s.Timeouts)
}

// setPercentiles sets the overshoot percentiles (nearest rank) of over,
// which it sorts.
func (s *TimeoutSummary) setPercentiles(over []time.Duration) {
	s.Window = len(over)
	if len(over) == 0 {
		return
	}
	slices.Sort(over)
	s.OvershootP50 = percentile(over, 50)
	s.OvershootP99 = percentile(over, 99)
	s.OvershootMax = over[len(over)-1]
}

// percentile is the nearest-rank percentile p of sorted, not empty.
func percentile(sorted []time.Duration, p int) time.Duration {
	rank := (p*len(sorted) + 99) / 100 // ceil(p/100 * n)
	if rank < 1 {
		rank = 1
	}
	return sorted[rank-1]
}

// timeoutTracker keeps a cluster's timeout metrics and summary.
type timeoutTracker struct {
	overshoot *prometheus.HistogramVec
	side      *prometheus.CounterVec

	mu   sync.Mutex
	sum  TimeoutSummary
	ring []time.Duration // the last TimeoutWindow overshoots
	next int
}

// newTimeoutTracker returns a tracker whose side series exist at 0 for
// every probe, so that a rate over them is 0 rather than absent.
func newTimeoutTracker() *timeoutTracker {
	t := &timeoutTracker{
		overshoot: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mongoprobe_timeout_overshoot_seconds",
			Help:    "For the probes that timed out: the time they returned minus their timeoutMS (negative when the driver gave up early).",
			Buckets: OvershootBuckets,
		}, []string{"probe", "stage"}),
		side: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mongoprobe_timeout_side_total",
			Help: "Probes that timed out, by the deadline that fired first: server (the server's MaxTimeMSExpired, stage server) or client (every other stage).",
		}, []string{"probe", "side"}),
		sum: TimeoutSummary{ByStage: map[string]int64{}},
	}
	for _, p := range []string{ProbePing, ProbeRead, ProbeWrite} {
		t.side.WithLabelValues(p, SideServer)
		t.side.WithLabelValues(p, SideClient)
	}
	return t
}

func (t *timeoutTracker) collectors() []prometheus.Collector {
	return []prometheus.Collector{t.overshoot, t.side}
}

// record adds a result to the metrics and the summary when it is a
// timeout.
func (t *timeoutTracker) record(r Result) {
	if r.Class != ClassTimeout {
		return
	}
	stage := r.TimeoutStage
	if stage == "" {
		stage = event.TimeoutStageOther
	}
	t.overshoot.WithLabelValues(r.Probe, stage).Observe(r.Overshoot.Seconds())
	t.side.WithLabelValues(r.Probe, TimeoutSide(stage)).Inc()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sum.add(r)
	if len(t.ring) < TimeoutWindow {
		t.ring = append(t.ring, r.Overshoot)
	} else {
		t.ring[t.next] = r.Overshoot
		t.next = (t.next + 1) % TimeoutWindow
	}
}

func (t *timeoutTracker) summary() TimeoutSummary {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.sum
	s.ByStage = make(map[string]int64, len(t.sum.ByStage))
	for k, v := range t.sum.ByStage {
		s.ByStage[k] = v
	}
	s.setPercentiles(slices.Clone(t.ring))
	return s
}

// Timeouts returns the summary of the timeouts of the cluster's probes
// since it started (the percentiles over the last TimeoutWindow).
func (c *Cluster) Timeouts() TimeoutSummary { return c.to.summary() }

// budget is the time a probe started at start had: its timeout, or less
// when ctx's deadline comes earlier.
func budget(ctx context.Context, start time.Time, timeout time.Duration) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		if left := d.Sub(start); left < timeout {
			return max(left, 0)
		}
	}
	return timeout
}

// TimedRead is one read of (*Cluster).TimedRead.
type TimedRead struct {
	// Database and Collection name the collection; "" means the
	// cluster's canary.
	Database, Collection string
	// Filter is findOne's filter (a bson.D, bson.Raw...); nil means {}.
	Filter any
	// Pref is the read preference; the zero value means primary.
	Pref driver.ReadPreference
	// Budget is the read's timeoutMS; it must be positive.
	Budget time.Duration
	// Target labels the result (Result.Target); "" means the budget.
	Target string
}

// TimedRead runs one findOne through the cluster's client under a
// timeoutMS of r.Budget, the way the read probe runs (so its Result has
// the same Class, TimeoutStage, Timeout and Overshoot), for mongoprobe
// check --timeouts. It is recorded nowhere: neither in the metrics nor
// in Timeouts, and its failure is logged at DEBUG only. A missing
// document is a success.
func (c *Cluster) TimedRead(ctx context.Context, r TimedRead) Result {
	target := r.Target
	if target == "" {
		target = r.Budget.String()
	}
	j := job{probe: ProbeRead, target: target, timeout: r.Budget, quiet: true}
	if r.Budget <= 0 {
		j.timeout = time.Nanosecond
		j.do = func(context.Context) error { return errors.New("mongoprobe: a timed read needs a positive budget") }
		return c.run(ctx, j)
	}
	c.clientMu.Lock()
	if c.client == nil && !c.isClosed() {
		c.connectLocked(c.mainOpts)
	}
	client, cerr := c.client, c.connectErr
	c.clientMu.Unlock()
	if client == nil {
		if cerr == nil {
			cerr = errors.New("mongoprobe: the cluster is closed")
		}
		j.do = func(context.Context) error { return cerr }
		return c.run(ctx, j)
	}
	dbName, collName := r.Database, r.Collection
	if dbName == "" {
		dbName = c.s.Database
	}
	if collName == "" {
		collName = c.s.Collection
	}
	filter := r.Filter
	if filter == nil {
		filter = struct{}{}
	}
	pref := r.Pref
	coll := client.Database(dbName).Collection(collName, &driver.CollectionOptions{ReadPreference: &pref})
	j.do = func(ctx context.Context) error {
		err := coll.FindOne(ctx, filter).Err()
		if errors.Is(err, driver.ErrNoDocuments) {
			return nil
		}
		return err
	}
	return c.run(ctx, j)
}

func (c *Cluster) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}
