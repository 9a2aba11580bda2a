package probe

import (
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Buckets are the probe duration histogram's bounds, in seconds.
var Buckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// trackingRegisterer registers on the cluster's (labelled) registerer and
// remembers what it registered, so that Close can unregister it all.
type trackingRegisterer struct {
	r  prometheus.Registerer
	mu sync.Mutex
	cs []prometheus.Collector
}

func (t *trackingRegisterer) Register(c prometheus.Collector) error {
	if err := t.r.Register(c); err != nil {
		return err
	}
	t.mu.Lock()
	t.cs = append(t.cs, c)
	t.mu.Unlock()
	return nil
}

func (t *trackingRegisterer) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := t.Register(c); err != nil {
			panic(err)
		}
	}
}

func (t *trackingRegisterer) Unregister(c prometheus.Collector) bool {
	t.mu.Lock()
	for i, x := range t.cs {
		if x == c {
			t.cs = append(t.cs[:i], t.cs[i+1:]...)
			break
		}
	}
	t.mu.Unlock()
	return t.r.Unregister(c)
}

// unregisterAll unregisters every collector registered through t.
func (t *trackingRegisterer) unregisterAll() {
	t.mu.Lock()
	cs := t.cs
	t.cs = nil
	t.mu.Unlock()
	for _, c := range cs {
		t.r.Unregister(c)
	}
}

// clusterMetrics are one cluster's mongoprobe_* series.
type clusterMetrics struct {
	duration  *prometheus.HistogramVec
	total     *prometheus.CounterVec
	timeouts  *prometheus.CounterVec
	retries   *prometheus.CounterVec
	answers   *prometheus.CounterVec
	success   *prometheus.GaugeVec
	lastRound prometheus.Gauge

	memberUp   *prometheus.GaugeVec
	memberType *prometheus.GaugeVec
	memberRTT  *prometheus.GaugeVec

	primaryChanges prometheus.Counter
	writable       prometheus.Gauge
	primary        *prometheus.GaugeVec
}

func newClusterMetrics() *clusterMetrics {
	return &clusterMetrics{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "mongoprobe_probe_duration_seconds", Help: "Duration of the probes, timeouts and retries included.",
			Buckets: Buckets,
		}, []string{"probe", "target", "outcome"}),
		total: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mongoprobe_probes_total", Help: "Probes run, by outcome and error class (code: the server's error code for classes server and not_primary).",
		}, []string{"probe", "target", "outcome", "class", "code"}),
		timeouts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mongoprobe_probe_timeouts_total", Help: "Probes whose timeoutMS ran out, by the stage where it did.",
		}, []string{"probe", "target", "stage"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mongoprobe_probe_retries_total", Help: "Retries the driver made during the probes.",
		}, []string{"probe", "target"}),
		answers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mongoprobe_probe_answers_total", Help: "Probes by the member that answered their last attempt.",
		}, []string{"probe", "target", "member"}),
		success: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "mongoprobe_probe_success", Help: "1 when the probe's last run succeeded, else 0.",
		}, []string{"probe", "target"}),
		lastRound: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mongoprobe_last_round_timestamp_seconds", Help: "When the last round ended, in seconds since the epoch.",
		}),
		memberUp: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "mongoprobe_member_up", Help: "1 when the driver's monitor reaches the member (its type is not Unknown), else 0.",
		}, []string{"member"}),
		memberType: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "mongoprobe_member_type", Help: "1 for the member's current SDAM server type.",
		}, []string{"member", "type"}),
		memberRTT: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "mongoprobe_member_rtt_seconds", Help: "The member's round trip time as the driver's monitor measures it.",
		}, []string{"member"}),
		primaryChanges: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mongoprobe_primary_changes_total", Help: "Times a new primary (a new address or a new electionId) was seen after one was known.",
		}),
		writable: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mongoprobe_writable_primary", Help: "1 when the driver knows a writable server (primary, standalone, mongos), else 0.",
		}),
		primary: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "mongoprobe_primary", Help: "1 for the current primary.",
		}, []string{"member"}),
	}
}

func (m *clusterMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.duration, m.total, m.timeouts, m.retries, m.answers, m.success, m.lastRound,
		m.memberUp, m.memberType, m.memberRTT, m.primaryChanges, m.writable, m.primary}
}

// deleteTarget removes every series of one probe target.
func (m *clusterMetrics) deleteTarget(probe, target string) {
	l := prometheus.Labels{"probe": probe, "target": target}
	m.duration.DeletePartialMatch(l)
	m.total.DeletePartialMatch(l)
	m.timeouts.DeletePartialMatch(l)
	m.retries.DeletePartialMatch(l)
	m.answers.DeletePartialMatch(l)
	m.success.DeletePartialMatch(l)
}

// deleteMember removes every series of a member that left the topology.
func (m *clusterMetrics) deleteMember(addr string) {
	l := prometheus.Labels{"member": addr}
	m.memberUp.DeletePartialMatch(l)
	m.memberType.DeletePartialMatch(l)
	m.memberRTT.DeletePartialMatch(l)
	m.primary.DeletePartialMatch(l)
	m.answers.DeletePartialMatch(l)
}

// record adds one result to the metrics.
func (m *clusterMetrics) record(r Result) {
	outcome := "success"
	if r.Err != nil {
		outcome = "failure"
	}
	m.duration.WithLabelValues(r.Probe, r.Target, outcome).Observe(r.Duration.Seconds())
	code := ""
	if r.Err != nil && (r.Class == ClassServer || r.Class == ClassNotPrimary) && r.Code != 0 {
		code = strconv.Itoa(int(r.Code))
	}
	m.total.WithLabelValues(r.Probe, r.Target, outcome, r.Class, code).Inc()
	if r.Class == ClassTimeout {
		stage := r.TimeoutStage
		if stage == "" {
			stage = "other"
		}
		m.timeouts.WithLabelValues(r.Probe, r.Target, stage).Inc()
	}
	// The retries series exists from the first run on, so that a rate
	// over it is 0 rather than absent.
	m.retries.WithLabelValues(r.Probe, r.Target).Add(float64(r.Retries))
	if r.Member != "" {
		m.answers.WithLabelValues(r.Probe, r.Target, r.Member).Inc()
	}
	ok := 0.0
	if r.Err == nil {
		ok = 1
	}
	m.success.WithLabelValues(r.Probe, r.Target).Set(ok)
}

// windowCollector exports the no-writable-primary window, computed when
// scraped.
type windowCollector struct {
	c       *Cluster
	current *prometheus.Desc
	total   *prometheus.Desc
}

func newWindowCollector(c *Cluster) *windowCollector {
	return &windowCollector{
		c: c,
		current: prometheus.NewDesc("mongoprobe_no_writable_primary_seconds",
			"How long the cluster has been without a writable primary (0 while it has one).", nil, nil),
		total: prometheus.NewDesc("mongoprobe_no_writable_primary_seconds_total",
			"Total time without a writable primary since mongoprobe started watching the cluster.", nil, nil),
	}
}

func (w *windowCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- w.current
	ch <- w.total
}

func (w *windowCollector) Collect(ch chan<- prometheus.Metric) {
	now := time.Now()
	w.c.mu.Lock()
	cur, total := w.c.windowLocked(now)
	w.c.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(w.current, prometheus.GaugeValue, cur.Seconds())
	ch <- prometheus.MustNewConstMetric(w.total, prometheus.CounterValue, total.Seconds())
}

// registerUp registers the up gauge, or takes the one already registered
// under the same labels (a cluster of the same name closed before).
func registerUp(r prometheus.Registerer) (prometheus.Gauge, error) {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "mongoprobe_up", Help: "1 when some member answered the last round's ping or canary read, else 0."})
	if err := r.Register(g); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if old, ok := are.ExistingCollector.(prometheus.Gauge); ok {
				old.Set(0)
				return old, nil
			}
		}
		return nil, err
	}
	return g, nil
}

// roundCollector is RoundCollector's result.
type roundCollector struct {
	r        Round
	success  *prometheus.Desc
	duration *prometheus.Desc
	up       *prometheus.Desc
}

// RoundCollector exports one round in the blackbox exporter's style, for
// /probe?target=: mongoprobe_probe_success and
// mongoprobe_probe_duration_seconds (a gauge here) per probe and target,
// and mongoprobe_up.
func RoundCollector(r Round) prometheus.Collector {
	return &roundCollector{
		r:        r,
		success:  prometheus.NewDesc("mongoprobe_probe_success", "1 when the probe succeeded, else 0.", []string{"probe", "target"}, nil),
		duration: prometheus.NewDesc("mongoprobe_probe_duration_seconds", "How long the probe took.", []string{"probe", "target"}, nil),
		up:       prometheus.NewDesc("mongoprobe_up", "1 when some member answered a ping or a canary read, else 0.", nil, nil),
	}
}

func (rc *roundCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- rc.success
	ch <- rc.duration
	ch <- rc.up
}

func (rc *roundCollector) Collect(ch chan<- prometheus.Metric) {
	seen := map[[2]string]bool{}
	for _, res := range rc.r.Results {
		k := [2]string{res.Probe, res.Target}
		if seen[k] { // never a duplicate series, whatever the round holds
			continue
		}
		seen[k] = true
		ok := 0.0
		if res.Err == nil {
			ok = 1
		}
		ch <- prometheus.MustNewConstMetric(rc.success, prometheus.GaugeValue, ok, res.Probe, res.Target)
		ch <- prometheus.MustNewConstMetric(rc.duration, prometheus.GaugeValue, res.Duration.Seconds(), res.Probe, res.Target)
	}
	up := 0.0
	if rc.r.Up {
		up = 1
	}
	ch <- prometheus.MustNewConstMetric(rc.up, prometheus.GaugeValue, up)
}

// MetricNames are the metric families a Cluster exports (besides the
// driver's own, mongodb_driver_*), each labelled cluster: the README's
// table and the tests that scrape /metrics check against this list.
var MetricNames = []string{
	"mongoprobe_up",
	"mongoprobe_probe_duration_seconds",
	"mongoprobe_probes_total",
	"mongoprobe_probe_timeouts_total",
	"mongoprobe_probe_retries_total",
	"mongoprobe_probe_answers_total",
	"mongoprobe_probe_success",
	"mongoprobe_last_round_timestamp_seconds",
	"mongoprobe_member_up",
	"mongoprobe_member_type",
	"mongoprobe_member_rtt_seconds",
	"mongoprobe_primary_changes_total",
	"mongoprobe_writable_primary",
	"mongoprobe_primary",
	"mongoprobe_no_writable_primary_seconds",
	"mongoprobe_no_writable_primary_seconds_total",
	"mongoprobe_timeout_overshoot_seconds",
	"mongoprobe_timeout_side_total",
}
