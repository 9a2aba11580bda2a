package metrics

import (
	"context"
	"errors"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/metric"
)

// DefaultBuckets are the bucket bounds, in seconds, OpenTelemetry's
// semantic conventions recommend for database client durations
// (db.client.operation.duration).
var DefaultBuckets = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10}

// DefaultMaxNamespaces is the number of distinct (database, collection)
// pairs the labels keep when Options.MaxNamespaces is 0.
const DefaultMaxNamespaces = 100

// Options configure Metrics.
type Options struct {
	// Buckets are the duration histograms' bucket bounds in seconds; nil
	// (or empty) means DefaultBuckets, OpenTelemetry's bucket bounds for
	// database client durations. They are sorted, and NaN and repeated
	// bounds are dropped.
	Buckets []float64
	// MaxNamespaces caps the distinct (database, collection) pairs that
	// the database and collection labels take: the first MaxNamespaces
	// pairs seen keep their names, every later pair is counted under
	// database="_other", collection="_other". 0 means
	// DefaultMaxNamespaces; a negative value keeps none (every pair is
	// "_other").
	MaxNamespaces int
	// MeterProvider, when set, receives the same measurements as
	// OpenTelemetry metrics, under the names of the semantic conventions
	// for database clients (see the package documentation).
	MeterProvider metric.MeterProvider
	// ExemplarInterval is the least time between two exemplars of the
	// same histogram series and bucket: an observation made under a
	// sampled span carries its trace id only when its bucket took none
	// in the last ExemplarInterval. A bucket holds only its latest
	// exemplar, which Prometheus reads at each scrape (every 15 to 60
	// seconds), so a dashboard shows as many, and the other observations
	// skip the exemplar's cost. 0 means DefaultExemplarInterval (1s); a negative
	// value turns exemplars off.
	ExemplarInterval time.Duration
}

// The values of the outcome label.
const (
	OutcomeSuccess = "success"
	OutcomeFailure = "failure"
	// OutcomeCanceled is the outcome of a server check the client
	// stopped itself (heartbeats only).
	OutcomeCanceled = "canceled"
)

const ns0 = "mongodb_driver"

// Metrics is a prometheus.Collector of the driver's metrics. Give it to a
// client in driver.ClientOptions.Monitors and register it. It implements
// every monitor interface of package event; its methods are safe for
// concurrent use, start no goroutine and ignore events they cannot use.
//
// A Metrics keeps the state of the pools and servers of its client (the
// connections by state, the servers' types and round trip times) keyed by
// server address; give each client its own Metrics (registered with
// prometheus.WrapRegistererWith and a label of yours to tell them apart)
// rather than one to several clients of the same servers.
type Metrics struct {
	opDuration   *histogram
	cmdDuration  *histogram
	retries      *prometheus.CounterVec
	timeouts     *prometheus.CounterVec
	checkout     *histogram
	checkoutFail *prometheus.CounterVec
	connCreate   *histogram
	connUse      *histogram
	connClosed   *prometheus.CounterVec
	poolClears   *prometheus.CounterVec
	selection    *histogram
	heartbeat    *histogram
	topoChanges  prometheus.Counter

	poolConns, poolMin, poolMax, poolWaiting, serverRTT, serverType *prometheus.Desc

	otel *otelInstruments // nil without Options.MeterProvider

	exemplarEvery int64 // nanoseconds; <= 0: no exemplars

	names   *interner
	servers *interner
	ns      *namespaces
	codes   codes

	mu       sync.Mutex
	pools    map[string]*poolState
	conns    map[connKey]connState
	topology map[string]*serverState
}

// poolState is what the gauges of one pool show.
type poolState struct {
	pending, idle, inUse int // connections being established, available, checked out
	waiting              int // checkouts in progress
	min, max             int
}

type connKey struct {
	addr string
	id   int64
}

type connState struct {
	ready bool
	out   int64 // when it was checked out (monotonicNow, > 0); 0 while in the pool
}

// serverState is what the gauges of one server show.
type serverState struct {
	topology bson.ObjectID
	kind     string
	rtt      float64 // seconds; < 0 until known
}

// New returns Metrics for o.
func New(o Options) *Metrics {
	buckets := cleanBuckets(o.Buckets)
	maxNS := o.MaxNamespaces
	switch {
	case maxNS == 0:
		maxNS = DefaultMaxNamespaces
	case maxNS < 0:
		maxNS = 0
	}
	hist := func(name, help string, labels ...string) *histogram {
		return &histogram{
			vec:    prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns0, Name: name, Help: help, Buckets: buckets}, labels),
			bounds: buckets,
		}
	}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns0, Name: name, Help: help}, labels)
	}
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(ns0+"_"+name, help, labels, nil)
	}
	m := &Metrics{
		opDuration: hist("operation_duration_seconds", "Duration of driver operations, from before server selection to the end of the last attempt.",
			"operation", "database", "collection", "outcome", "error_code"),
		cmdDuration: hist("command_duration_seconds", "Duration of the commands sent to servers, from sending to the reply.",
			"command", "database", "collection", "server", "outcome", "error_code"),
		retries:  counter("operation_retries_total", "Retries of operations, by the error of the attempt that failed.", "operation", "error_code"),
		timeouts: counter("operation_timeouts_total", "Operations whose time budget (timeoutMS or the context's deadline) ran out, by the stage it ran out in.", "operation", "stage"),
		checkout: hist("pool_checkout_duration_seconds", "Time spent checking out a connection from a pool.", "server", "outcome"),
		checkoutFail: counter("pool_checkout_failures_total", "Failed checkouts, by CMAP reason (poolClosed, timeout, connectionError).",
			"server", "reason"),
		connCreate: hist("connection_create_duration_seconds", "Time to establish a connection: dial, TLS, handshake and authentication.", "server"),
		connUse:    hist("connection_use_duration_seconds", "Time a connection stays checked out of its pool.", "server"),
		connClosed: counter("connections_closed_total", "Connections closed by pools, by CMAP reason (stale, idle, error, poolClosed).", "server", "reason"),
		poolClears: counter("pool_clears_total", "Times a pool was cleared.", "server"),
		selection:  hist("server_selection_duration_seconds", "Duration of server selection.", "outcome"),
		heartbeat: hist("server_heartbeat_duration_seconds", "Duration of server monitoring checks (hello); an awaited check waits for a change up to maxAwaitTimeMS.",
			"server", "awaited", "outcome"),
		topoChanges: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns0, Name: "topology_changes_total", Help: "Changes of the topology description."}),

		poolConns:   desc("pool_connections", "Connections of a pool, by state: pending (being established), idle (available), in_use (checked out).", "server", "state"),
		poolMin:     desc("pool_min_connections", "A pool's minPoolSize.", "server"),
		poolMax:     desc("pool_max_connections", "A pool's maxPoolSize; 0 means no limit.", "server"),
		poolWaiting: desc("pool_pending_checkouts", "Checkouts of a pool in progress, waiting for a connection.", "server"),
		serverRTT:   desc("server_rtt_seconds", "A server's average round trip time.", "server"),
		serverType:  desc("server_type", "A server's type, as SDAM names it: 1 for its current type.", "server", "type"),

		names:    newInterner(maxNames),
		servers:  newInterner(maxServers),
		ns:       newNamespaces(maxNS),
		codes:    codes{m: make(map[int32]string)},
		pools:    make(map[string]*poolState),
		conns:    make(map[connKey]connState),
		topology: make(map[string]*serverState),
	}
	switch {
	case o.ExemplarInterval == 0:
		m.exemplarEvery = int64(DefaultExemplarInterval)
	case o.ExemplarInterval > 0:
		m.exemplarEvery = int64(o.ExemplarInterval)
	}
	if o.MeterProvider != nil {
		m.otel = newOTel(o.MeterProvider, buckets)
	}
	return m
}

// cleanBuckets returns a copy of the bounds (DefaultBuckets when there
// are none), sorted, without NaN or repeats, which would make
// client_golang panic at the first observation.
func cleanBuckets(b []float64) []float64 {
	if len(b) == 0 {
		b = DefaultBuckets
	}
	out := make([]float64, 0, len(b)) // a copy: the caller's slice may change
	for _, v := range b {
		if v == v { // not NaN
			out = append(out, v)
		}
	}
	sort.Float64s(out)
	out = slices.Compact(out)
	if len(out) == 0 { // only NaN
		return []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10}
	}
	return out
}

func (m *Metrics) vecs() []prometheus.Collector {
	return []prometheus.Collector{m.opDuration.vec, m.cmdDuration.vec, m.retries, m.timeouts, m.checkout.vec, m.checkoutFail,
		m.connCreate.vec, m.connUse.vec, m.connClosed, m.poolClears, m.selection.vec, m.heartbeat.vec, m.topoChanges}
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range m.vecs() {
		c.Describe(ch)
	}
	for _, d := range []*prometheus.Desc{m.poolConns, m.poolMin, m.poolMax, m.poolWaiting, m.serverRTT, m.serverType} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	for _, c := range m.vecs() {
		c.Collect(ch)
	}
	var out []prometheus.Metric
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		if g, err := prometheus.NewConstMetric(d, prometheus.GaugeValue, v, labels...); err == nil {
			out = append(out, g)
		}
	}
	m.mu.Lock()
	for addr, p := range m.pools {
		gauge(m.poolConns, float64(p.pending), addr, "pending")
		gauge(m.poolConns, float64(p.idle), addr, "idle")
		gauge(m.poolConns, float64(p.inUse), addr, "in_use")
		gauge(m.poolWaiting, float64(p.waiting), addr)
		gauge(m.poolMin, float64(p.min), addr)
		gauge(m.poolMax, float64(p.max), addr)
	}
	for addr, s := range m.topology {
		if s.kind != "" {
			gauge(m.serverType, 1, addr, s.kind)
		}
		if s.rtt >= 0 {
			gauge(m.serverRTT, s.rtt, addr)
		}
	}
	m.mu.Unlock()
	for _, g := range out { // sent without the lock: a slow reader does not hold up events
		ch <- g
	}
}

func inc(vec *prometheus.CounterVec, labels ...string) {
	if c, err := vec.GetMetricWithLabelValues(labels...); err == nil {
		c.Inc()
	}
}

func outcome(failed bool) string {
	if failed {
		return OutcomeFailure
	}
	return OutcomeSuccess
}

// OperationStarted implements event.OperationMonitor.
func (m *Metrics) OperationStarted(ctx context.Context, _ *event.OperationStarted) context.Context {
	return ctx
}

// OperationFinished implements event.OperationMonitor.
func (m *Metrics) OperationFinished(ctx context.Context, e *event.OperationFinished) {
	if e == nil {
		return
	}
	name := m.names.str(e.Name)
	n := m.ns.getString(e.Database, e.Collection)
	code := m.errorCode(e.Err)
	m.observe(ctx, m.opDuration, e.Duration, name, n.db, n.coll, outcome(e.Err != nil), code)
	if m.otel != nil {
		m.otel.operation(ctx, name, n, code, e.Err != nil, e.Duration, e.Err)
	}
	if e.TimeoutStage != "" {
		inc(m.timeouts, name, timeoutStage(e.TimeoutStage))
	}
}

// timeoutStage keeps the stage label to the values package event defines.
func timeoutStage(s string) string {
	switch s {
	case event.TimeoutStageSelection, event.TimeoutStageCheckout, event.TimeoutStageConnect, event.TimeoutStageBeforeSend,
		event.TimeoutStageNetwork, event.TimeoutStageServer, event.TimeoutStageRetry:
		return s
	}
	return event.TimeoutStageOther
}

// OperationRetry implements event.RetryMonitor.
func (m *Metrics) OperationRetry(_ context.Context, e *event.OperationRetry) {
	if e == nil {
		return
	}
	inc(m.retries, m.names.str(e.Name), m.failureCode(e.Err))
}

// nsKey carries a command's database and collection labels from
// CommandStarted to its end event.
type nsKey struct{}

// nsCtx is the context CommandStarted returns: its parent with the
// command's labels under nsKey. It is context.WithValue's valueCtx
// without the boxed key and value: 32 bytes instead of 48, and the end
// event finds the labels without walking the chain when nsCtx is the
// outermost context.
type nsCtx struct {
	context.Context
	n *ns
}

func (c *nsCtx) Value(key any) any {
	if _, ok := key.(nsKey); ok {
		return c.n
	}
	return c.Context.Value(key)
}

// CommandStarted implements event.CommandMonitor. It reads the collection
// from the command (it is not in the end events) and hands it to the end
// event in the returned context.
func (m *Metrics) CommandStarted(ctx context.Context, e *event.CommandStarted) context.Context {
	if e == nil {
		return ctx
	}
	if ctx == nil {
		ctx = context.Background()
	}
	var coll []byte
	if !e.Redacted {
		coll = collectionOf(e.CommandName, e.Command)
	}
	return &nsCtx{ctx, m.ns.get(e.DatabaseName, coll)}
}

func (m *Metrics) command(ctx context.Context, f *event.CommandFields, d time.Duration, failed bool, code string) {
	var n *ns
	if ctx != nil {
		if c, ok := ctx.(*nsCtx); ok {
			n = c.n
		} else {
			n, _ = ctx.Value(nsKey{}).(*ns)
		}
	}
	if n == nil {
		n = m.ns.getString(f.DatabaseName, "")
	}
	m.observe(ctx, m.cmdDuration, d, m.names.str(f.CommandName), n.db, n.coll, m.address(f.ServerHost, f.ServerPort), outcome(failed), code)
}

// CommandSucceeded implements event.CommandMonitor.
func (m *Metrics) CommandSucceeded(ctx context.Context, e *event.CommandSucceeded) {
	if e == nil {
		return
	}
	m.command(ctx, &e.CommandFields, e.Duration, false, "")
}

// CommandFailed implements event.CommandMonitor.
func (m *Metrics) CommandFailed(ctx context.Context, e *event.CommandFailed) {
	if e == nil {
		return
	}
	m.command(ctx, &e.CommandFields, e.Duration, true, m.failureCode(e.Failure))
}

// SelectionEvent implements event.SelectionMonitor.
func (m *Metrics) SelectionEvent(ctx context.Context, e event.SelectionEvent) {
	switch e := e.(type) {
	case *event.ServerSelectionSucceeded:
		if e != nil {
			m.observe(ctx, m.selection, e.Duration, OutcomeSuccess)
		}
	case *event.ServerSelectionFailed:
		if e != nil {
			m.observe(ctx, m.selection, e.Duration, OutcomeFailure)
		}
	}
}

// PoolEvent implements event.PoolMonitor.
func (m *Metrics) PoolEvent(ctx context.Context, e event.PoolEvent) {
	switch e := e.(type) {
	case *event.PoolCreated:
		if e == nil {
			return
		}
		m.pool(ctx, e.Address, true, func(p *poolState) *poolState {
			m.forgetConns(e.Address)
			return &poolState{min: e.Options.MinPoolSize, max: e.Options.MaxPoolSize}
		})
	case *event.PoolCleared:
		if e != nil {
			inc(m.poolClears, m.servers.str(e.Address))
		}
	case *event.PoolClosed:
		if e == nil {
			return
		}
		m.pool(ctx, e.Address, true, func(p *poolState) *poolState {
			m.forgetConns(e.Address)
			return nil
		})
	case *event.ConnectionCreated:
		if e == nil {
			return
		}
		m.pool(ctx, e.Address, false, func(p *poolState) *poolState {
			if p != nil {
				m.conns[connKey{e.Address, e.ConnectionID}] = connState{}
				p.pending++
			}
			return p
		})
	case *event.ConnectionReady:
		if e == nil {
			return
		}
		addr := m.servers.str(e.Address)
		m.observe(ctx, m.connCreate, e.Duration, addr)
		if m.otel != nil {
			m.otel.record(ctx, m.otel.createTime, addr, e.Duration)
		}
		m.pool(ctx, e.Address, false, func(p *poolState) *poolState {
			k := connKey{e.Address, e.ConnectionID}
			if c, ok := m.conns[k]; ok && !c.ready {
				p.pending--
				p.idle++
				c.ready = true
				m.conns[k] = c
			}
			return p
		})
	case *event.ConnectionClosed:
		if e == nil {
			return
		}
		reason := string(e.Reason)
		switch e.Reason {
		case event.ReasonStale, event.ReasonIdle, event.ReasonError, event.ReasonPoolClosed:
		default:
			reason = "other"
		}
		inc(m.connClosed, m.servers.str(e.Address), reason)
		m.pool(ctx, e.Address, false, func(p *poolState) *poolState {
			k := connKey{e.Address, e.ConnectionID}
			if c, ok := m.conns[k]; ok {
				switch {
				case c.out != 0:
					p.inUse--
				case c.ready:
					p.idle--
				default:
					p.pending--
				}
				delete(m.conns, k)
			}
			return p
		})
	case *event.ConnectionCheckOutStarted:
		if e == nil {
			return
		}
		m.pool(ctx, e.Address, false, func(p *poolState) *poolState {
			if p != nil {
				p.waiting++
			}
			return p
		})
	case *event.ConnectionCheckOutFailed:
		if e == nil {
			return
		}
		reason := string(e.Reason)
		switch e.Reason {
		case event.ReasonCheckOutPoolClosed, event.ReasonCheckOutTimeout, event.ReasonCheckOutConnectionError:
		default:
			reason = "other"
		}
		addr := m.servers.str(e.Address)
		m.observe(ctx, m.checkout, e.Duration, addr, OutcomeFailure)
		inc(m.checkoutFail, addr, reason)
		if m.otel != nil {
			m.otel.record(ctx, m.otel.waitTime, addr, e.Duration)
			if e.Reason == event.ReasonCheckOutTimeout {
				m.otel.timeout(ctx, addr)
			}
		}
		m.pool(ctx, e.Address, false, func(p *poolState) *poolState {
			if p != nil && p.waiting > 0 {
				p.waiting--
			}
			return p
		})
	case *event.ConnectionCheckedOut:
		if e == nil {
			return
		}
		addr := m.servers.str(e.Address)
		m.observe(ctx, m.checkout, e.Duration, addr, OutcomeSuccess)
		if m.otel != nil {
			m.otel.record(ctx, m.otel.waitTime, addr, e.Duration)
		}
		now := monotonicNow()
		m.pool(ctx, e.Address, false, func(p *poolState) *poolState {
			if p == nil {
				return nil
			}
			if p.waiting > 0 {
				p.waiting--
			}
			k := connKey{e.Address, e.ConnectionID}
			if c, ok := m.conns[k]; ok && c.out == 0 {
				if c.ready {
					p.idle--
				} else {
					p.pending-- // checked out without a ConnectionReady seen
				}
				p.inUse++
				c.ready, c.out = true, now
				m.conns[k] = c
			}
			return p
		})
	case *event.ConnectionCheckedIn:
		if e == nil {
			return
		}
		var used time.Duration
		m.pool(ctx, e.Address, false, func(p *poolState) *poolState {
			k := connKey{e.Address, e.ConnectionID}
			if c, ok := m.conns[k]; ok && c.out != 0 {
				used = time.Duration(monotonicNow() - c.out)
				p.inUse--
				p.idle++
				c.out = 0
				m.conns[k] = c
			}
			return p
		})
		if used > 0 {
			addr := m.servers.str(e.Address)
			m.observe(ctx, m.connUse, used, addr)
			if m.otel != nil {
				m.otel.record(ctx, m.otel.useTime, addr, used)
			}
		}
	}
}

// pool runs f with the lock held on the state of the pool at addr (a nil
// state when the pool is unknown; f returns it, or, when replace is set,
// its replacement, nil removing it), then hands the change to the OpenTelemetry counts.
// A connection known in m.conns always has its pool's state.
func (m *Metrics) pool(ctx context.Context, addr string, replace bool, f func(p *poolState) *poolState) {
	m.mu.Lock()
	p := m.pools[addr]
	var before, after poolState
	if p != nil {
		before = *p
	}
	p = f(p)
	if replace {
		if p == nil {
			delete(m.pools, addr)
		} else {
			m.pools[addr] = p
		}
	}
	if p != nil {
		after = *p
	}
	m.mu.Unlock()
	if m.otel != nil && before != after {
		m.otel.poolChanged(ctx, m.servers.str(addr), before, after)
	}
}

// forgetConns drops the connections of the pool at addr; m.mu is held.
func (m *Metrics) forgetConns(addr string) {
	for k := range m.conns {
		if k.addr == addr {
			delete(m.conns, k)
		}
	}
}

// rttWeight is the weight of a new sample in the average round trip time,
// as SDAM's moving average has it.
const rttWeight = 0.2

// TopologyEvent implements event.TopologyMonitor.
func (m *Metrics) TopologyEvent(ctx context.Context, e event.TopologyEvent) {
	switch e := e.(type) {
	case *event.ServerOpening:
		if e == nil {
			return
		}
		m.mu.Lock()
		if _, ok := m.topology[e.Address]; !ok {
			m.topology[e.Address] = &serverState{topology: e.TopologyID, kind: "Unknown", rtt: -1}
		}
		m.mu.Unlock()
	case *event.ServerClosed:
		if e == nil {
			return
		}
		m.mu.Lock()
		delete(m.topology, e.Address)
		m.mu.Unlock()
	case *event.ServerDescriptionChanged:
		if e == nil {
			return
		}
		m.mu.Lock()
		s := m.topology[e.Address]
		if s == nil {
			s = &serverState{topology: e.TopologyID, rtt: -1}
			m.topology[e.Address] = s
		}
		s.kind = e.New.Kind
		if s.kind == "" {
			s.kind = "Unknown"
		}
		if e.New.RoundTripTime > 0 {
			s.rtt = e.New.RoundTripTime.Seconds()
		}
		m.mu.Unlock()
	case *event.TopologyDescriptionChanged:
		if e == nil {
			return
		}
		m.topoChanges.Inc()
		// A server no longer in the topology loses its gauges, even if its
		// ServerClosed is not seen.
		m.mu.Lock()
		for addr, s := range m.topology {
			if s.topology == e.TopologyID && !hasServer(e.New.Servers, addr) {
				delete(m.topology, addr)
			}
		}
		m.mu.Unlock()
	case *event.TopologyClosed:
		if e == nil {
			return
		}
		m.mu.Lock()
		for addr, s := range m.topology {
			if s.topology == e.TopologyID {
				delete(m.topology, addr)
			}
		}
		m.mu.Unlock()
	case *event.ServerHeartbeatSucceeded:
		if e == nil {
			return
		}
		addr := m.address(e.ServerHost, e.ServerPort)
		m.observe(ctx, m.heartbeat, e.Duration, addr, awaited(e.Awaited), OutcomeSuccess)
		if !e.Awaited {
			m.mu.Lock()
			if s := m.topology[addr]; s != nil {
				if v := e.Duration.Seconds(); s.rtt < 0 {
					s.rtt = v
				} else {
					s.rtt = rttWeight*v + (1-rttWeight)*s.rtt
				}
			}
			m.mu.Unlock()
		}
	case *event.ServerHeartbeatFailed:
		if e == nil {
			return
		}
		outcome := OutcomeFailure
		if errors.Is(e.Failure, context.Canceled) {
			// The client stopped the check (Disconnect, or a pool clear
			// that cancels a streaming check): the server did not fail it.
			outcome = OutcomeCanceled
		}
		m.observe(ctx, m.heartbeat, e.Duration, m.address(e.ServerHost, e.ServerPort), awaited(e.Awaited), outcome)
	}
}

func awaited(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func hasServer(servers []event.ServerDescription, addr string) bool {
	for i := range servers {
		if servers[i].Address == addr {
			return true
		}
	}
	return false
}
