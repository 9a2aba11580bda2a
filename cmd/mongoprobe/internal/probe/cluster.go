package probe

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/driver/connstring"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/logging"
	"github.com/mongoscope/mongoscope/telemetry"
)

// Defaults for the Settings left at their zero value.
const (
	DefaultInterval   = 15 * time.Second
	DefaultTimeout    = 5 * time.Second
	DefaultDatabase   = "mongoprobe"
	DefaultCollection = "canary"
	DefaultCanaryKeys = 8
	// WriteTarget is the write probe's target label.
	WriteTarget = "primary"
)

const tracerName = "github.com/mongoscope/mongoscope/cmd/mongoprobe/internal/probe"

// Cluster probes one cluster. Its methods are safe for concurrent use.
type Cluster struct {
	s      Settings
	d      Deps
	log    *slog.Logger
	tracer trace.Tracer // nil without a TracerProvider

	reg *trackingRegisterer
	m   *clusterMetrics
	to  *timeoutTracker
	up  prometheus.Gauge

	// closeCtx ends when Close is called; every round's context ends with
	// it.
	closeCtx context.Context
	closeNow context.CancelFunc
	runs     sync.WaitGroup

	// roundMu serializes the rounds.
	roundMu sync.Mutex

	// clientMu guards the clients. It is never held while a topology
	// event is handled, so a round may hold it while it calls the driver.
	clientMu    sync.Mutex
	client      *driver.Client
	connectErr  error
	mainOpts    *driver.ClientOptions
	resolved    *connstring.ConnString
	members     map[string]*driver.Client // direct clients, by address
	pingTargets map[string]bool           // the ping targets of the last round
	readSeq     int
	writeSeq    int64

	// mu guards the state below; it is taken by the topology monitor, so
	// no driver call is ever made while it is held.
	mu             sync.Mutex
	closed         bool
	discovered     bool // the first round waited for the first checks (awaitDiscovery)
	topology       string
	servers        map[string]Member
	memberType     map[string]string
	primary        string
	knownPrimary   string // the last primary seen, kept while there is none
	knownElection  *bson.ObjectID
	writable       bool
	changes        int64
	noPrimarySince time.Time
	noPrimaryDone  time.Duration // the closed windows
	lastRound      *Round
	fo             *failovers // failover.go
}

// New registers the cluster's metrics (its up gauge at 0) and connects
// its client (which does not wait for the cluster). It fails only on
// settings it cannot use (no client options) or metrics the registerer
// refuses; a client that fails to connect is retried at every round,
// whose probes then fail with ClassClient.
func New(s Settings, d Deps) (*Cluster, error) {
	if s.Interval <= 0 {
		s.Interval = DefaultInterval
	}
	for _, t := range []*time.Duration{&s.PingTimeout, &s.ReadTimeout, &s.WriteTimeout} {
		if *t <= 0 {
			*t = DefaultTimeout
		}
	}
	if s.Database == "" {
		s.Database = DefaultDatabase
	}
	if s.Collection == "" {
		s.Collection = DefaultCollection
	}
	if s.CanaryKeys <= 0 {
		s.CanaryKeys = DefaultCanaryKeys
	}
	if len(s.ReadPreferences) == 0 {
		s.ReadPreferences = []ReadPreference{{Name: driver.Primary, Pref: driver.ReadPreference{Mode: driver.Primary}}}
	}
	if s.WriteConcern == nil {
		s.WriteConcern = driver.Majority()
	}
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("cluster", s.Name)
	base := d.Registerer
	if base == nil {
		base = prometheus.DefaultRegisterer
	}
	base = prometheus.WrapRegistererWith(prometheus.Labels{"cluster": s.Name}, base)
	up, err := registerUp(base)
	if err != nil {
		return nil, fmt.Errorf("mongoprobe: cluster %q: registering mongoprobe_up: %w", s.Name, err)
	}
	if s.Client == nil {
		return nil, fmt.Errorf("mongoprobe: cluster %q: no client options", s.Name)
	}
	c := &Cluster{
		s: s, d: d, log: log, up: up,
		reg:            &trackingRegisterer{r: base},
		m:              newClusterMetrics(),
		to:             newTimeoutTracker(),
		members:        map[string]*driver.Client{},
		servers:        map[string]Member{},
		memberType:     map[string]string{},
		topology:       "Unknown",
		noPrimarySince: time.Now(),
		fo:             newFailovers(s.ReadPreferences),
	}
	c.closeCtx, c.closeNow = context.WithCancel(context.Background())
	if d.TracerProvider != nil {
		c.tracer = d.TracerProvider.Tracer(tracerName)
	}
	for _, col := range append(append(append(c.m.collectors(), newWindowCollector(c)), c.fo.m.collectors()...), c.to.collectors()...) {
		if err := c.reg.Register(col); err != nil {
			c.reg.unregisterAll()
			return nil, fmt.Errorf("mongoprobe: cluster %q: registering metrics: %w", s.Name, err)
		}
	}
	tel, err := telemetry.New(telemetry.Options{
		Logger:         log,
		LogLevels:      driverLogLevels(log),
		TracerProvider: d.TracerProvider,
		NoTracing:      d.TracerProvider == nil,
		Registerer:     c.reg,
	})
	if err != nil {
		c.reg.unregisterAll()
		return nil, fmt.Errorf("mongoprobe: cluster %q: registering the driver's metrics: %w", s.Name, err)
	}
	opts := c.clientOptions()
	tel.Apply(opts)
	opts.Monitors = append(opts.Monitors, topoMonitor{c}, opMonitor{})
	c.clientMu.Lock()
	c.mainOpts = opts
	c.connectLocked(opts)
	c.clientMu.Unlock()
	return c, nil
}

// clientOptions copies the settings' client options, so that the
// monitors added to it are the cluster's alone.
func (c *Cluster) clientOptions() *driver.ClientOptions {
	o := *c.s.Client
	o.Monitors = slices.Clone(o.Monitors)
	return &o
}

// connectLocked connects the main client; clientMu is held.
func (c *Cluster) connectLocked(opts *driver.ClientOptions) {
	cl, err := driver.Connect(context.Background(), opts)
	if err != nil {
		c.connectErr = err
		c.log.Warn("connecting the client failed", "error", err.Error())
		return
	}
	c.client, c.connectErr = cl, nil
}

// Name returns the cluster's name.
func (c *Cluster) Name() string { return c.s.Name }

// Run runs a round every Interval, the first at once, until ctx ends or
// Close is called. A round that lasts longer than Interval delays the
// next one (ticks are dropped, never queued).
func (c *Cluster) Run(ctx context.Context) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.runs.Add(1)
	c.mu.Unlock()
	defer c.runs.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(c.closeCtx, cancel)
	defer stop()
	t := time.NewTicker(c.s.Interval)
	defer t.Stop()
	for ctx.Err() == nil {
		c.Round(ctx)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
}

// Round runs one round of every probe now, and records it; it is safe to
// call while Run runs. Rounds are serialized: a Round called while
// another runs waits for it to end, then runs its own. The probes of a
// round run concurrently, each under its own timeout. After Close, Round
// returns an empty round (not Up) at once.
func (c *Cluster) Round(ctx context.Context) Round {
	c.roundMu.Lock()
	defer c.roundMu.Unlock()
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return Round{Cluster: c.s.Name, Start: time.Now()}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(c.closeCtx, cancel)
	defer stop()

	c.awaitDiscovery(ctx)
	r := Round{Cluster: c.s.Name, Start: time.Now()}
	var span trace.Span
	if c.tracer != nil {
		ctx, span = c.tracer.Start(ctx, "mongoprobe.round", trace.WithAttributes(attribute.String("mongoprobe.cluster", c.s.Name)))
	}

	jobs := c.plan(ctx)
	results := make([]Result, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = c.run(ctx, j)
		}()
	}
	wg.Wait()
	r.Results = results
	r.Duration = time.Since(r.Start)
	for _, res := range results {
		if res.Err == nil && (res.Probe == ProbePing || res.Probe == ProbeRead) {
			r.Up = true
		}
	}
	if span != nil {
		span.SetAttributes(attribute.Bool("mongoprobe.up", r.Up), attribute.Bool("mongoprobe.ok", r.OK()))
		if !r.OK() {
			span.SetStatus(codes.Error, "some probes failed")
		}
		span.End()
	}
	c.record(r)
	if c.d.OnRound != nil {
		c.d.OnRound(r)
	}
	return r
}

// awaitDiscovery lets a new client finish its first check of the seeds
// before the first round, for at most the ping timeout: otherwise a round
// right after New (mongoprobe check, a first /probe) would ping only the
// seeds, not the members they name. Later rounds do not wait.
func (c *Cluster) awaitDiscovery(ctx context.Context) {
	c.mu.Lock()
	first := !c.discovered
	c.discovered = true
	c.mu.Unlock()
	if !first {
		return
	}
	deadline := time.NewTimer(c.s.PingTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		c.clientMu.Lock()
		client := c.client
		c.clientMu.Unlock()
		if client == nil {
			return
		}
		done := true
		for _, s := range client.Topology().Servers {
			if s.LastUpdate.IsZero() {
				done = false
			}
		}
		if done {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-deadline.C:
			return
		case <-tick.C:
		}
	}
}

// record stores the round and exports it.
func (c *Cluster) record(r Round) {
	for _, res := range r.Results {
		c.m.record(res)
		c.to.record(res)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return // the up gauge stays at 0
	}
	rc := r
	rc.Results = slices.Clone(r.Results)
	c.lastRound = &rc
	if r.Up {
		c.up.Set(1)
	} else {
		c.up.Set(0)
	}
	c.m.lastRound.Set(float64(time.Now().UnixNano()) / 1e9)
	c.failoverRoundLocked(r)
}

// job is one probe to run.
type job struct {
	probe, target string
	timeout       time.Duration
	do            func(ctx context.Context) error
	member        string // the member a ping addresses
	quiet         bool   // a failure is logged at DEBUG, not WARN (TimedRead)
}

// plan lists the round's probes: it brings the clients up to date (the
// main one connected, one direct client per member, those of the members
// that left closed) and makes one job per probe.
func (c *Cluster) plan(ctx context.Context) []job {
	c.clientMu.Lock()
	defer c.clientMu.Unlock()
	if c.client == nil {
		c.connectLocked(c.mainOpts)
	}
	var jobs []job
	if c.client == nil {
		err := c.connectErr
		fail := func(context.Context) error { return err }
		c.forgetPingTargetsLocked([]string{"client"})
		jobs = append(jobs, job{probe: ProbePing, target: "client", timeout: c.s.PingTimeout, do: fail})
		for _, rp := range c.s.ReadPreferences {
			jobs = append(jobs, job{probe: ProbeRead, target: rpName(rp), timeout: c.s.ReadTimeout, do: fail})
		}
		jobs = append(jobs, job{probe: ProbeWrite, target: WriteTarget, timeout: c.s.WriteTimeout, do: fail})
		return jobs
	}

	// The members: the topology's, else the seeds.
	snap := c.client.Topology()
	var addrs []string
	for _, s := range snap.Servers {
		addrs = append(addrs, s.Address)
	}
	c.refreshRTT(snap)
	if len(addrs) == 0 {
		if cs := c.resolveLocked(ctx); cs != nil {
			addrs = slices.Clone(cs.Hosts)
		}
	}
	c.forgetPingTargetsLocked(addrs)
	for _, addr := range addrs {
		mc, err := c.memberClientLocked(ctx, addr)
		var do func(ctx context.Context) error
		if err != nil {
			do = func(context.Context) error { return err }
		} else {
			do = mc.Ping
		}
		jobs = append(jobs, job{probe: ProbePing, target: addr, member: addr, timeout: c.s.PingTimeout, do: do})
	}

	db := c.client.Database(c.s.Database)
	for _, rp := range c.s.ReadPreferences {
		pref := rp.Pref
		coll := db.Collection(c.s.Collection, &driver.CollectionOptions{ReadPreference: &pref})
		key := canaryKey(c.readSeq % c.s.CanaryKeys)
		c.readSeq++
		jobs = append(jobs, job{probe: ProbeRead, target: rpName(rp), timeout: c.s.ReadTimeout, do: func(ctx context.Context) error {
			err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: key}}).Err()
			if errors.Is(err, driver.ErrNoDocuments) {
				return nil // the canary is not written yet: the read worked
			}
			return err
		}})
	}

	wcoll := db.Collection(c.s.Collection, &driver.CollectionOptions{WriteConcern: c.s.WriteConcern})
	c.writeSeq++
	seq := c.writeSeq
	key := canaryKey(int((seq - 1) % int64(c.s.CanaryKeys)))
	jobs = append(jobs, job{probe: ProbeWrite, target: WriteTarget, timeout: c.s.WriteTimeout, do: func(ctx context.Context) error {
		_, err := wcoll.UpdateOne(ctx, bson.D{{Key: "_id", Value: key}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "time", Value: time.Now().UTC()}, {Key: "seq", Value: seq}}}},
			&driver.UpdateOptions{Upsert: driver.Ptr(true)})
		return err
	}})
	return jobs
}

// forgetPingTargetsLocked makes addrs the ping targets: the clients of
// the members that left are closed and their series dropped; clientMu is
// held.
func (c *Cluster) forgetPingTargetsLocked(addrs []string) {
	for addr, mc := range c.members {
		if !slices.Contains(addrs, addr) {
			delete(c.members, addr)
			dctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = mc.Disconnect(dctx)
			cancel()
		}
	}
	for t := range c.pingTargets {
		if !slices.Contains(addrs, t) {
			c.m.deleteTarget(ProbePing, t)
		}
	}
	c.pingTargets = map[string]bool{}
	for _, a := range addrs {
		c.pingTargets[a] = true
	}
}

func canaryKey(i int) string { return "mongoprobe-" + strconv.Itoa(i) }

func rpName(rp ReadPreference) string {
	if rp.Name != "" {
		return rp.Name
	}
	if rp.Pref.Mode == "" {
		return driver.Primary
	}
	return rp.Pref.Mode
}

// resolveLocked resolves the settings' connection string once (SRV
// included); clientMu is held.
func (c *Cluster) resolveLocked(ctx context.Context) *connstring.ConnString {
	if c.resolved != nil {
		return c.resolved
	}
	rctx, cancel := context.WithTimeout(ctx, c.s.PingTimeout)
	defer cancel()
	cs, err := c.s.Client.Resolve(rctx)
	if err != nil {
		c.log.Warn("resolving the connection string failed", "error", err.Error())
		return nil
	}
	c.resolved = cs
	return cs
}

// memberClientLocked returns the direct client of one member, connecting
// it when needed; clientMu is held.
func (c *Cluster) memberClientLocked(ctx context.Context, addr string) (*driver.Client, error) {
	if mc := c.members[addr]; mc != nil {
		return mc, nil
	}
	cs := c.resolveLocked(ctx)
	if cs == nil {
		return nil, errors.New("mongoprobe: the connection string could not be resolved")
	}
	cp := *cs
	cp.Scheme = connstring.SchemeMongoDB
	cp.Hosts = []string{addr}
	cp.ReplicaSet = ""
	cp.SRVMaxHosts = nil
	cp.SRVServiceName = ""
	if cp.LoadBalanced != nil && *cp.LoadBalanced {
		cp.DirectConnection = nil // a load balancer is reached as it is
	} else {
		cp.LoadBalanced = nil
		cp.DirectConnection = driver.Ptr(true)
	}
	opts := &driver.ClientOptions{
		URI:        &cp,
		Dialer:     c.s.Client.Dialer,
		ServerAPI:  c.s.Client.ServerAPI,
		DriverInfo: c.s.Client.DriverInfo,
		Resolver:   c.s.Client.Resolver,
		SpinWait:   c.s.Client.SpinWait,
		Monitors:   []any{opMonitor{}},
	}
	if c.d.TracerProvider != nil {
		if tel, err := telemetry.New(telemetry.Options{TracerProvider: c.d.TracerProvider, NoLogs: true, NoMetrics: true}); err == nil {
			tel.Apply(opts)
		}
	}
	mc, err := driver.Connect(context.Background(), opts)
	if err != nil {
		return nil, err
	}
	c.members[addr] = mc
	return mc, nil
}

// run runs one probe and reports it.
func (c *Cluster) run(ctx context.Context, j job) Result {
	res := Result{Cluster: c.s.Name, Probe: j.probe, Target: j.target}
	var span trace.Span
	if c.tracer != nil {
		ctx, span = c.tracer.Start(ctx, "mongoprobe.probe "+j.probe+" "+j.target, trace.WithAttributes(
			attribute.String("mongoprobe.cluster", c.s.Name),
			attribute.String("mongoprobe.probe", j.probe),
			attribute.String("mongoprobe.target", j.target)))
	}
	a := &attempt{}
	octx := driver.WithTimeout(withAttempt(ctx, a), j.timeout)
	res.Start = time.Now()
	res.Timeout = budget(ctx, res.Start, j.timeout)
	err := safeDo(octx, j.do)
	res.Duration = time.Since(res.Start)
	a.mu.Lock()
	res.Member = a.member
	res.Retries = a.retries
	if a.attempts-1 > res.Retries {
		res.Retries = a.attempts - 1
	}
	stage := a.stage
	a.mu.Unlock()
	if err == nil && res.Member == "" && j.member != "" {
		res.Member = j.member
	}
	if err != nil {
		res.Err = err
		res.Class, res.Code, res.TimeoutStage = classify(err, stage)
		if res.Class == ClassTimeout {
			res.Overshoot = res.Duration - res.Timeout
		}
	}

	outcome := "success"
	if err != nil {
		outcome = "failure"
	}
	attrs := []any{"probe", j.probe, "target", j.target, "member", res.Member,
		"duration", res.Duration, "retries", res.Retries}
	if err != nil {
		attrs = append(attrs, "class", res.Class, "code", res.Code, "stage", res.TimeoutStage, "error", err.Error())
		if res.Class == ClassTimeout {
			attrs = append(attrs, "timeout", res.Timeout, "overshoot", res.Overshoot)
		}
		if j.quiet {
			c.log.Debug("probe failed", attrs...)
		} else {
			c.log.Warn("probe failed", attrs...)
		}
	} else {
		c.log.Debug("probe succeeded", attrs...)
	}
	if span != nil {
		span.SetAttributes(attribute.String("mongoprobe.outcome", outcome), attribute.String("mongoprobe.member", res.Member),
			attribute.Int("mongoprobe.retries", res.Retries))
		if err != nil {
			span.SetAttributes(attribute.String("mongoprobe.class", res.Class))
			if res.Code != 0 {
				span.SetAttributes(attribute.Int("mongoprobe.code", int(res.Code)))
			}
			if res.TimeoutStage != "" {
				span.SetAttributes(attribute.String("mongoprobe.timeout_stage", res.TimeoutStage))
			}
			span.RecordError(err)
			span.SetStatus(codes.Error, res.Class)
		}
		span.End()
	}
	return res
}

// safeDo runs a probe's operation, turning a panic into an error.
func safeDo(ctx context.Context, do func(context.Context) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("mongoprobe: the probe panicked: %v", p)
		}
	}()
	return do(ctx)
}

// notPrimaryCodes are the server's "not primary" and "node is
// recovering" codes.
var notPrimaryCodes = map[int32]bool{
	10107: true, // NotWritablePrimary
	13435: true, // NotPrimaryNoSecondaryOk
	13436: true, // NotPrimaryOrSecondary
	189:   true, // PrimarySteppedDown
	11602: true, // InterruptedDueToReplStateChange
}

// classify returns a failed probe's class, server code and timeout stage;
// stage is the one OperationFinished gave, if any.
func classify(err error, stage string) (class string, code int32, tstage string) {
	if driver.IsTimeout(err) || errors.Is(err, context.DeadlineExceeded) {
		if stage == "" {
			stage = event.TimeoutStageOther
			var te *driver.TimeoutError
			if errors.As(err, &te) {
				stage = timeoutStage(te.Stage)
			}
		}
		c, _ := serverCode(err)
		return ClassTimeout, c, stage
	}
	var ae *driver.AuthError
	if errors.As(err, &ae) && (ae.Err == nil || !driver.IsNetworkError(ae.Err)) {
		return ClassAuth, ae.Code, ""
	}
	if driver.IsNetworkError(err) {
		return ClassNetwork, 0, ""
	}
	if c, ok := serverCode(err); ok {
		if notPrimaryCodes[c] {
			return ClassNotPrimary, c, ""
		}
		return ClassServer, c, ""
	}
	return ClassClient, 0, ""
}

// serverCode finds the server's error code in err: a refused command's,
// a write error's, or a write concern error's.
func serverCode(err error) (int32, bool) {
	var ce *driver.CommandError
	if errors.As(err, &ce) {
		return ce.Code, true
	}
	var we *driver.WriteException
	if errors.As(err, &we) && we != nil {
		if len(we.WriteErrors) > 0 {
			return we.WriteErrors[0].Code, true
		}
		if we.WriteConcernError != nil {
			return we.WriteConcernError.Code, true
		}
	}
	var wce *driver.WriteConcernError
	if errors.As(err, &wce) && wce != nil {
		return wce.Code, true
	}
	return event.ServerErrorCode(err)
}

// timeoutStage maps a *driver.TimeoutError's stage to the event's
// constant, for an error OperationFinished did not describe.
func timeoutStage(s string) string {
	switch s {
	case "server selection":
		return event.TimeoutStageSelection
	case "connection checkout":
		return event.TimeoutStageCheckout
	case "connection establishment":
		return event.TimeoutStageConnect
	case "before sending the command":
		return event.TimeoutStageBeforeSend
	case "waiting for the server's reply":
		return event.TimeoutStageNetwork
	case "on the server (MaxTimeMSExpired)":
		return event.TimeoutStageServer
	case "retrying after a retryable error":
		return event.TimeoutStageRetry
	}
	return event.TimeoutStageOther
}

// refreshRTT takes the members' average RTT from a topology snapshot.
func (c *Cluster) refreshRTT(snap driver.TopologySnapshot) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	for _, s := range snap.Servers {
		m, ok := c.servers[s.Address]
		if !ok {
			continue
		}
		m.RTT = s.RoundTripTime
		c.servers[s.Address] = m
		c.m.memberRTT.WithLabelValues(s.Address).Set(s.RoundTripTime.Seconds())
	}
}

// topologyChanged takes a new topology description from the main
// client's monitor; the time is taken as the event arrives.
func (c *Cluster) topologyChanged(td event.TopologyDescription) {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.topology = td.Kind
	seen := map[string]bool{}
	primary := ""
	var election *bson.ObjectID
	writable := false
	for _, sd := range td.Servers {
		addr := sd.Address
		seen[addr] = true
		m := Member{Address: addr, Type: sd.Kind, RTT: sd.RoundTripTime}
		if sd.Error != nil {
			m.Error = sd.Error.Error()
		}
		if old, ok := c.servers[addr]; ok && m.RTT == 0 {
			m.RTT = old.RTT
		}
		c.servers[addr] = m
		up := 0.0
		if sd.Kind != "Unknown" && sd.Kind != "" {
			up = 1
		}
		c.m.memberUp.WithLabelValues(addr).Set(up)
		if old, ok := c.memberType[addr]; ok && old != sd.Kind {
			c.m.memberType.DeleteLabelValues(addr, old)
		}
		c.memberType[addr] = sd.Kind
		c.m.memberType.WithLabelValues(addr, sd.Kind).Set(1)
		if m.RTT > 0 {
			c.m.memberRTT.WithLabelValues(addr).Set(m.RTT.Seconds())
		}
		switch sd.Kind {
		case "RSPrimary", "Standalone":
			if primary == "" || (sd.ElectionID != nil && (election == nil || election.Compare(*sd.ElectionID) < 0)) {
				primary, election = addr, sd.ElectionID
			}
			writable = true
		case "Mongos", "LoadBalancer":
			writable = true
		}
	}
	for addr := range c.servers {
		if !seen[addr] {
			delete(c.servers, addr)
			delete(c.memberType, addr)
			c.m.deleteMember(addr)
		}
	}

	// A primary change: a new address, or a new election of the same one.
	if primary != "" {
		if c.knownPrimary != "" && (primary != c.knownPrimary ||
			(election != nil && c.knownElection != nil && *election != *c.knownElection)) {
			c.changes++
			c.m.primaryChanges.Inc()
			c.log.Info("primary changed", "old", c.knownPrimary, "new", primary,
				"old_election_id", oidString(c.knownElection), "new_election_id", oidString(election))
			c.primaryChangedLocked(now, c.knownPrimary, primary)
		}
		c.knownPrimary = primary
		if election != nil {
			c.knownElection = election
		}
	}
	if primary != c.primary {
		if c.primary != "" {
			c.m.primary.DeleteLabelValues(c.primary)
		}
		if primary != "" {
			c.m.primary.WithLabelValues(primary).Set(1)
		}
		c.primary = primary
	}

	// The window without a writable primary.
	switch {
	case c.writable && !writable:
		c.noPrimarySince = now
		c.log.Warn("lost the writable primary", "old", c.knownPrimary, "topology", td.Kind, "reason", c.lossReason(td))
		c.primaryLostLocked(now, c.knownPrimary, c.lossReason(td))
	case !c.writable && writable:
		w := now.Sub(c.noPrimarySince)
		c.noPrimaryDone += w
		c.noPrimarySince = time.Time{}
		c.log.Info("writable primary found", "primary", primary, "topology", td.Kind, "without_primary", w)
		c.primaryBackLocked(now, primary)
	}
	c.writable = writable
	if writable {
		c.m.writable.Set(1)
	} else {
		c.m.writable.Set(0)
	}
}

// driverLogLevels are the driver's log components for the main client:
// info (debug when the logger takes debug, for the command and connection
// messages), and no failover component, whose "Primary changed" messages
// the cluster's own ("lost the writable primary", "primary changed",
// "writable primary found") replace with the windows it measures.
func driverLogLevels(log *slog.Logger) map[logging.Component]logging.Level {
	l := logging.LevelInformational
	if log.Enabled(context.Background(), slog.LevelDebug) {
		l = logging.LevelDebug
	}
	return map[logging.Component]logging.Level{
		logging.ComponentCommand:         l,
		logging.ComponentConnection:      l,
		logging.ComponentTopology:        l,
		logging.ComponentServerSelection: l,
		logging.ComponentFailover:        logging.LevelOff,
	}
}

func oidString(o *bson.ObjectID) string {
	if o == nil {
		return ""
	}
	return o.Hex()
}

// lossReason says what became of the last known primary in td: its new
// type, and the error that made it Unknown.
func (c *Cluster) lossReason(td event.TopologyDescription) string {
	for _, sd := range td.Servers {
		if sd.Address == c.knownPrimary {
			if sd.Error != nil {
				return sd.Kind + ": " + sd.Error.Error()
			}
			return "now " + sd.Kind
		}
	}
	return "no longer a member"
}

// windowLocked returns the current window without a writable primary and
// the total, the current window included; mu is held.
func (c *Cluster) windowLocked(now time.Time) (cur, total time.Duration) {
	if !c.writable && !c.noPrimarySince.IsZero() {
		cur = now.Sub(c.noPrimarySince)
		if cur < 0 {
			cur = 0
		}
	}
	return cur, c.noPrimaryDone + cur
}

// Status returns the cluster's state now.
func (c *Cluster) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, total := c.windowLocked(time.Now())
	st := Status{
		Cluster:        c.s.Name,
		Topology:       c.topology,
		Primary:        c.primary,
		PrimaryChanges: c.changes,
		NoPrimaryTotal: total,
	}
	if !c.writable {
		st.NoPrimarySince = c.noPrimarySince
	}
	for _, m := range c.servers {
		st.Members = append(st.Members, m)
	}
	sort.Slice(st.Members, func(i, j int) bool { return st.Members[i].Address < st.Members[j].Address })
	if c.lastRound != nil {
		r := *c.lastRound
		r.Results = slices.Clone(r.Results)
		st.LastRound = &r
	}
	return st
}

// Ready tells whether a round has completed.
func (c *Cluster) Ready() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastRound != nil
}

// Close disconnects every client of the cluster and unregisters its
// metrics but the up gauge, which stays at 0; no goroutine is left. It
// ends Run and the round in progress (their operations fail at once),
// and waits for them. Calling it again does nothing.
func (c *Cluster) Close(ctx context.Context) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closeFailoverLocked(time.Now(), "stopped")
	c.closed = true
	c.up.Set(0)
	c.mu.Unlock()
	c.closeNow()
	c.runs.Wait()
	c.roundMu.Lock() // no round runs past this point
	defer c.roundMu.Unlock()

	c.clientMu.Lock()
	clients := make([]*driver.Client, 0, len(c.members)+1)
	if c.client != nil {
		clients = append(clients, c.client)
	}
	for _, mc := range c.members {
		clients = append(clients, mc)
	}
	c.client = nil
	c.members = map[string]*driver.Client{}
	c.clientMu.Unlock()

	var errs []error
	var wg sync.WaitGroup
	var emu sync.Mutex
	for _, cl := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := cl.Disconnect(ctx); err != nil {
				emu.Lock()
				errs = append(errs, err)
				emu.Unlock()
			}
		}()
	}
	wg.Wait()
	c.reg.unregisterAll()
	c.up.Set(0)
	return errors.Join(errs...)
}
