package topology

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/conn"
	"github.com/mongoscope/mongoscope/driver/internal/pool"
	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
)

// ErrClosed is returned by Select and Connect on a closed Topology.
var ErrClosed = errors.New("topology: closed")

// Topology is one client's view of its deployment, kept current by a
// monitor per server. Its methods are safe for concurrent use.
type Topology struct {
	cfg       Config
	id        bson.ObjectID
	streaming bool

	// publishMu is held across an update and the publication of its
	// events, so events come out in the order of the updates without
	// holding mu while monitors run.
	publishMu sync.Mutex

	// snap is what readers see: the description, the channel its next
	// change closes and the servers, published by every update under mu.
	// Readers (Description, Server, Current, OperationCount) never lock,
	// so an event monitor may read the topology from any callback, even
	// one the topology runs with mu held (a pool's PoolReady and
	// PoolCleared).
	snap atomic.Pointer[snapshot]

	// mu serializes updates; desc, changed and servers are the writers'
	// copy, read and changed under mu only.
	mu      sync.Mutex
	desc    description.TopologyDescription
	changed chan struct{}
	servers map[string]*Server
	// serversChanged says servers differs from snap's map.
	serversChanged bool
	connected      bool
	closed         bool
	// removedServers holds servers an update removed, to stop once mu
	// is released.
	removedServers []*Server
	// bg counts goroutines stopping removed servers.
	bg sync.WaitGroup
	// closing is cancelled by Close, to end selections waiting for a
	// change that will never come.
	closing context.Context
	stop    context.CancelFunc
	// noMonitors leaves servers unmonitored, for tests that feed
	// descriptions themselves.
	noMonitors bool
}

// snapshot is one published state of the topology. Nothing modifies it
// once stored: a new state is a new snapshot (the servers map is copied
// when it changes and shared otherwise).
type snapshot struct {
	desc    description.TopologyDescription
	changed <-chan struct{}
	servers map[string]*Server
	// ev is desc as the events carry it, made by the first selection event
	// that needs it and shared by every later one until the next publish
	// (eventDescription).
	ev atomic.Pointer[event.TopologyDescription]
}

// eventDescription returns the current description as the selection
// events carry it. It is converted once per published description, not
// once per event: the events share it, and monitors only read it.
func (t *Topology) eventDescription() event.TopologyDescription {
	sn := t.snap.Load()
	if p := sn.ev.Load(); p != nil {
		return *p
	}
	ev := eventTopology(sn.desc)
	sn.ev.Store(&ev)
	return ev
}

// publishLocked stores the writers' state as the readers' snapshot; t.mu
// is held. It comes before changed is closed, so a woken selection finds
// the new description.
func (t *Topology) publishLocked() {
	servers := t.servers
	if old := t.snap.Load(); old != nil && !t.serversChanged {
		servers = old.servers
	} else {
		servers = maps.Clone(servers)
	}
	t.serversChanged = false
	t.snap.Store(&snapshot{desc: t.desc, changed: t.changed, servers: servers})
}

// Server is one server of the topology: its pool and its operation count.
type Server struct {
	topo    *Topology
	addr    string
	pool    *pool.Pool[*conn.Conn]
	ops     atomic.Int64
	rtt     description.RTT
	monitor *monitor // nil in load-balanced mode
}

// New checks cfg and returns a Topology that does nothing until Connect.
func New(cfg Config) (*Topology, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	desc, err := description.New(description.Settings{
		Seeds:            cfg.Seeds,
		SetName:          cfg.SetName,
		DirectConnection: cfg.DirectConnection,
		LoadBalanced:     cfg.LoadBalanced,
		SRV:              cfg.SRVHost != "",
	})
	if err != nil {
		return nil, err
	}
	closing, stop := context.WithCancel(context.Background())
	t := &Topology{
		closing:   closing,
		stop:      stop,
		cfg:       cfg,
		id:        bson.NewObjectID(),
		streaming: cfg.streaming(),
		desc:      desc,
		changed:   make(chan struct{}),
		servers:   make(map[string]*Server),
	}
	t.publishLocked()
	return t, nil
}

// ID is the topology's id, carried by its events.
func (t *Topology) ID() bson.ObjectID { return t.id }

// Streaming reports whether the monitors use the streaming protocol
// (serverMonitoringMode resolved).
func (t *Topology) Streaming() bool { return t.streaming }

// Connect emits TopologyOpening and starts a pool and a monitor for every
// seed. In load-balanced mode the one seed is a LoadBalancer at once and
// its pool is ready; no monitor runs.
func (t *Topology) Connect() error {
	t.publishMu.Lock()
	defer t.publishMu.Unlock()
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return ErrClosed
	}
	if t.connected {
		t.mu.Unlock()
		return nil
	}
	t.connected = true
	prev := t.desc
	var evs []event.TopologyEvent
	evs = append(evs, &event.TopologyOpening{TopologyID: t.id})
	// The initial description is an Unknown topology with no servers, as
	// the monitoring specification's first TopologyDescriptionChanged
	// event shows.
	evs = append(evs, &event.TopologyDescriptionChanged{
		TopologyID: t.id,
		Previous:   eventTopology(description.TopologyDescription{}),
		New:        eventTopology(prev),
	})
	var started []*Server
	for _, sd := range prev.Servers {
		s, err := t.newServer(sd.Address)
		if err != nil {
			t.mu.Unlock()
			t.stopServers(started)
			return err
		}
		started = append(started, s)
		evs = append(evs, &event.ServerOpening{TopologyID: t.id, Address: sd.Address})
	}
	t.publishLocked()
	if t.cfg.LoadBalanced && len(prev.Servers) == 1 {
		evs = append(evs, t.applyLocked(description.LoadBalancerServer(prev.Servers[0].Address))...)
	}
	if t.cfg.SRVHost != "" && !t.cfg.LoadBalanced && srvPollable(t.desc.Type) {
		// Added under mu, before Close can set closed and wait.
		t.bg.Add(1)
		go t.pollSRV()
	}
	t.mu.Unlock()
	t.publish(evs)
	for _, s := range started {
		if s.monitor != nil {
			s.monitor.start()
		}
	}
	return nil
}

// newServer makes the pool and monitor of addr and registers them; t.mu
// is held.
func (t *Topology) newServer(addr string) (*Server, error) {
	s := &Server{topo: t, addr: addr}
	po := t.cfg.Pool
	p, err := pool.New(pool.Config[*conn.Conn]{
		Address:          addr,
		MinPoolSize:      po.MinPoolSize,
		MaxPoolSize:      po.MaxPoolSize,
		MaxConnecting:    po.MaxConnecting,
		MaxIdleTime:      po.MaxIdleTime,
		WaitQueueTimeout: po.WaitQueueTimeout,
		MaintainInterval: po.MaintainInterval,
		Events:           t.cfg.Events,
		LoadBalanced:     t.cfg.LoadBalanced,
		Dial: func(ctx context.Context, id int64) (*conn.Conn, error) {
			cc := t.cfg.ConnConfig(addr)
			cc.ID = id
			cc.Spin = t.cfg.Spin
			gen := s.pool.Stats().Generation
			c, err := conn.Dial(ctx, cc)
			if err != nil {
				return nil, err
			}
			t.handshakeSucceeded(s, gen, c.Hello())
			return c, nil
		},
		OnPopulateError: func(err error, generation uint64) {
			t.HandleError(addr, generation, err, description.PhaseHandshake)
		},
		OnDialError: func(err error, generation uint64) {
			t.HandleError(addr, generation, err, description.PhaseHandshake)
		},
	})
	if err != nil {
		return nil, err
	}
	s.pool = p
	if !t.cfg.LoadBalanced && !t.noMonitors {
		s.monitor = newMonitor(t, s)
	}
	t.servers[addr] = s
	t.serversChanged = true
	return s, nil
}

// stopServers stops monitors and closes pools; t.mu must not be held,
// since a monitor may be waiting for it.
func (t *Topology) stopServers(ss []*Server) {
	for _, s := range ss {
		if s.monitor != nil {
			s.monitor.stop()
		}
		s.pool.Close()
	}
}

// Close stops every monitor and closes every pool, emitting ServerClosed
// for each server and then TopologyClosed. It waits for every goroutine
// the topology started. Calling it again does nothing.
func (t *Topology) Close() {
	t.publishMu.Lock()
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		t.publishMu.Unlock()
		return
	}
	t.closed = true
	t.stop()
	connected := t.connected
	var ss []*Server
	for _, sd := range t.desc.Servers {
		if s := t.servers[sd.Address]; s != nil {
			ss = append(ss, s)
		}
	}
	t.servers = map[string]*Server{}
	t.serversChanged = true
	// A closed topology is Unknown with no servers (SDAM, "Client
	// closing"); the change is published before TopologyClosed.
	prev := t.desc
	t.desc = description.TopologyDescription{Type: description.TopologyUnknown}
	old := t.changed
	t.changed = make(chan struct{})
	t.publishLocked()
	close(old)
	t.mu.Unlock()
	t.publishMu.Unlock()
	// Monitors may be waiting for publishMu; they find the topology
	// closed and return, so neither lock is held while they stop.
	t.stopServers(ss)
	t.bg.Wait()
	if !connected {
		return
	}
	evs := make([]event.TopologyEvent, 0, len(ss)+2)
	for _, s := range ss {
		evs = append(evs, &event.ServerClosed{TopologyID: t.id, Address: s.addr})
	}
	evs = append(evs, &event.TopologyDescriptionChanged{TopologyID: t.id, Previous: eventTopology(prev), New: eventTopology(t.Description())},
		&event.TopologyClosed{TopologyID: t.id})
	t.publishMu.Lock()
	t.publish(evs)
	t.publishMu.Unlock()
}

// Description returns a snapshot of the topology description. It is a
// value nobody modifies, so the caller may keep it. It takes no lock: an
// event monitor may call it from any callback.
func (t *Topology) Description() description.TopologyDescription {
	return t.snap.Load().desc
}

// Server returns the server at addr, if the topology monitors it. It
// takes no lock, like Description.
func (t *Topology) Server(addr string) (*Server, bool) {
	s, ok := t.snap.Load().servers[description.NormalizeAddress(addr)]
	return s, ok
}

// apply folds sd, from the monitor of s, into the topology and publishes
// what changed. A monitor whose server was removed (and perhaps added
// again with a new monitor) no longer speaks for the address.
func (t *Topology) apply(s *Server, sd description.ServerDescription) {
	t.publishMu.Lock()
	defer t.publishMu.Unlock()
	t.mu.Lock()
	if t.closed || t.servers[sd.Address] != s {
		t.mu.Unlock()
		return
	}
	evs := t.applyLocked(sd)
	removed := t.takeRemoved()
	t.mu.Unlock()
	t.finishApply(evs, removed)
	t.lastServerRemoved(evs, sd)
}

// finishApply publishes, starts the monitors of new servers and stops
// removed ones; publishMu is held, mu is not. Removed servers stop on a
// goroutine Close waits for, since the monitor that reported the change
// may be one of them.
func (t *Topology) finishApply(evs []event.TopologyEvent, removed []*Server) {
	t.publish(evs)
	t.mu.Lock()
	start := make([]*monitor, 0, len(t.servers))
	for _, s := range t.servers {
		if s.monitor != nil {
			start = append(start, s.monitor)
		}
	}
	t.mu.Unlock()
	for _, m := range start {
		m.start()
	}
	for _, s := range removed {
		if s.monitor != nil {
			s.monitor.halt()
		}
		t.bg.Add(1)
		go func() {
			defer t.bg.Done()
			t.stopServers([]*Server{s})
		}()
	}
}

// applyLocked applies sd with t.mu held and returns the events to publish.
// Servers to remove are parked in t.removed for takeRemoved.
func (t *Topology) applyLocked(sd description.ServerDescription) []event.TopologyEvent {
	prev := t.desc
	next, ch := prev.Apply(sd)
	if ch.Ignored {
		return nil
	}
	t.desc = next
	// Every successful check marks the pool ready before the update is
	// published (commitLocked), so no selection finds the server known
	// with its pool still paused. PoolReady reaches the monitors with
	// t.mu held; they can still read the topology, which takes no lock.
	if s := t.servers[sd.Address]; s != nil && poolReady(sd.Type, next.Type) {
		s.pool.Ready()
	}
	return t.commitLocked(prev, next, ch)
}

// commitLocked acts on ch, the changes from prev to next (already t.desc):
// it registers added servers, parks removed ones for takeRemoved, requests
// checks, wakes selections and returns the events to publish; t.mu is
// held.
func (t *Topology) commitLocked(prev, next description.TopologyDescription, ch description.Changes) []event.TopologyEvent {
	var evs []event.TopologyEvent
	for _, c := range ch.Servers {
		evs = append(evs, &event.ServerDescriptionChanged{
			TopologyID: t.id,
			Address:    c.New.Address,
			Previous:   eventServer(c.Old),
			New:        eventServer(c.New),
		})
	}
	for _, addr := range ch.Removed {
		if s := t.servers[addr]; s != nil {
			delete(t.servers, addr)
			t.serversChanged = true
			t.removedServers = append(t.removedServers, s)
			evs = append(evs, &event.ServerClosed{TopologyID: t.id, Address: addr})
		}
	}
	for _, addr := range ch.Added {
		if _, ok := t.servers[addr]; ok {
			continue
		}
		if _, err := t.newServer(addr); err != nil {
			// pool.New fails only on a bad Config, which the seeds'
			// pools would have refused already.
			continue
		}
		evs = append(evs, &event.ServerOpening{TopologyID: t.id, Address: addr})
	}
	for _, addr := range ch.CheckNow {
		if s := t.servers[addr]; s != nil && s.monitor != nil {
			s.monitor.requestCheck()
		}
	}
	if ch.TopologyChanged {
		evs = append(evs, &event.TopologyDescriptionChanged{
			TopologyID: t.id,
			Previous:   eventTopology(prev),
			New:        eventTopology(next),
		})
	}
	// Publish, then wake selection waiters: even an RTT-only change may
	// matter to them.
	old := t.changed
	t.changed = make(chan struct{})
	t.publishLocked()
	close(old)
	return evs
}

func (t *Topology) takeRemoved() []*Server {
	r := t.removedServers
	t.removedServers = nil
	return r
}

func (t *Topology) publish(evs []event.TopologyEvent) {
	d := t.cfg.Events
	if d == nil || !d.Topology() {
		return
	}
	for _, e := range evs {
		d.TopologyEvent(context.Background(), e)
	}
}

// eventServer copies s for an event. The slices and the map are cloned:
// a monitor may keep or modify what it is given, while s's are shared with
// the topology description.
func eventServer(s description.ServerDescription) event.ServerDescription {
	out := event.ServerDescription{
		Address:                      s.Address,
		Kind:                         s.Type.String(),
		SetName:                      s.SetName,
		RoundTripTime:                s.RoundTripTime,
		Error:                        s.Error,
		Primary:                      s.Primary,
		SetVersion:                   clonePtr(s.SetVersion),
		ElectionID:                   clonePtr(s.ElectionID),
		Me:                           s.Me,
		Hosts:                        slices.Clone(s.Hosts),
		Passives:                     slices.Clone(s.Passives),
		Arbiters:                     slices.Clone(s.Arbiters),
		Tags:                         maps.Clone(s.Tags),
		MinWireVersion:               s.MinWireVersion,
		MaxWireVersion:               s.MaxWireVersion,
		LogicalSessionTimeoutMinutes: clonePtr(s.LogicalSessionTimeoutMinutes),
		IsCryptd:                     s.IsCryptd,
	}
	if tv := s.TopologyVersion; tv != nil {
		out.TopologyVersion = &event.TopologyVersion{ProcessID: tv.ProcessID, Counter: tv.Counter}
	}
	return out
}

func eventTopology(t description.TopologyDescription) event.TopologyDescription {
	out := event.TopologyDescription{
		Kind:                         t.Type.String(),
		SetName:                      t.SetName,
		MaxElectionID:                clonePtr(t.MaxElectionID),
		MaxSetVersion:                clonePtr(t.MaxSetVersion),
		CompatibilityError:           t.CompatibilityErr,
		LogicalSessionTimeoutMinutes: clonePtr(t.LogicalSessionTimeoutMinutes),
	}
	if len(t.Servers) > 0 {
		out.Servers = make([]event.ServerDescription, len(t.Servers))
		for i, s := range t.Servers {
			out.Servers[i] = eventServer(s)
		}
	}
	return out
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// Address returns the server's address.
func (s *Server) Address() string { return s.addr }

// Pool returns the server's connection pool.
func (s *Server) Pool() *pool.Pool[*conn.Conn] { return s.pool }

// MinRTT is the smallest of the server's last 10 round trip times (0
// while there are fewer than 2 samples): the minRoundTripTime that
// client-side operation timeouts take off maxTimeMS.
func (s *Server) MinRTT() time.Duration { return s.rtt.Min() }

// EndOperation ends one operation that Select counted on s.
func (s *Server) EndOperation() { s.ops.Add(-1) }

// OperationCount returns the number of operations in progress on s.
func (s *Server) OperationCount() int64 { return s.ops.Load() }

// Description returns s's current description (Unknown once s left the
// topology).
func (s *Server) Description() description.ServerDescription {
	d, ok := s.topo.Description().Server(s.addr)
	if !ok {
		return description.UnknownServer(s.addr, nil)
	}
	return d
}

// poolReady reports whether a server of type st in a topology of type tt
// gets a ready pool: the SDAM specification's data-bearing types (and the
// load balancer), or any known server of a direct connection.
func poolReady(st description.ServerType, tt description.TopologyType) bool {
	switch st {
	case description.Mongos, description.RSPrimary, description.RSSecondary, description.Standalone, description.LoadBalancer:
		return true
	case description.Unknown:
		return false
	}
	return tt == description.Single
}

// Spinner returns the Spinner the pools' connections share (Config.Spin).
func (t *Topology) Spinner() *conn.Spinner { return t.cfg.Spin }
