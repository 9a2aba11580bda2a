package mongotest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
	"github.com/mongoscope/mongoscope/mongotest/internal/store"
)

// DefaultElectionDelay is how long a replica set goes without a primary
// when ReplicaSetOptions.ElectionDelay is zero: long enough for a driver to
// see the set without a primary, short enough for tests.
const DefaultElectionDelay = 50 * time.Millisecond

// MaxReplicaSetMembers is the largest replica set mongod allows.
const MaxReplicaSetMembers = 50

// mongod's replSetStepDown defaults.
const (
	defaultStepDownPeriod = 60 * time.Second
	defaultCatchUpPeriod  = 10 * time.Second
)

// Error codes of the replSet* commands that mongoerr does not name.
const (
	codeNoReplicationEnabled = 76
	codeNotSecondary         = 135
)

// ReplicaSetOptions configure a simulated replica set.
type ReplicaSetOptions struct {
	// Name is the replica set's name (hello's setName); "" means "rs0".
	Name string
	// Options are every member's server options (authentication,
	// compressors, wire version...). Addr and Topology must be left zero:
	// each member listens on its own loopback port and the set decides
	// its role.
	Options Options
	// ElectionDelay is how long the set stays without a primary after it
	// loses one (a step-down, a killed or partitioned primary) before
	// another member is elected. Zero means DefaultElectionDelay; a
	// negative value elects at once.
	ElectionDelay time.Duration
	// Tags are the members' tags, by member index; it may be shorter than
	// the set.
	Tags []map[string]string
	// Hidden, Arbiters and Passives list member indexes that are hidden
	// (priority 0, in no host list), arbiters (no data), or passive
	// (priority 0, listed in passives). Member 0 starts as the primary,
	// so it may be none of these.
	Hidden, Arbiters, Passives []int
}

// EventKind is what happened to a replica set.
type EventKind int

// The events a ReplicaSet records.
const (
	// EventElected: a member became primary (Term is its new term).
	EventElected EventKind = iota + 1
	// EventSteppedDown: the primary became a secondary.
	EventSteppedDown
	// EventKilled: a member's server stopped (Kill).
	EventKilled
	// EventRestarted: a killed member came back as a secondary (Restart).
	EventRestarted
	// EventPartitioned: a member became unreachable (Partition).
	EventPartitioned
	// EventHealed: a partitioned member became reachable again (Heal).
	EventHealed
)

var eventNames = [...]string{"", "elected", "stepped down", "killed", "restarted", "partitioned", "healed"}

// String returns the kind's name ("elected").
func (k EventKind) String() string {
	if k > 0 && int(k) < len(eventNames) {
		return eventNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// ReplicaSetEvent is one change of a replica set.
type ReplicaSetEvent struct {
	// Seq numbers the set's events from 1, in order.
	Seq  int64
	Kind EventKind
	// Member is the index of the member concerned; Addr its address.
	Member int
	Addr   string
	// Term is the set's election term after the event.
	Term int64
	Time time.Time
}

// maxEvents bounds the event history, so a long demo cannot grow it
// forever.
const maxEvents = 10_000

type memberKind uint8

const (
	kindData memberKind = iota
	kindPassive
	kindHidden
	kindArbiter
)

// rsMember is one member's state; guarded by its set's mu.
type rsMember struct {
	rs   *ReplicaSet
	idx  int
	kind memberKind
	tags map[string]string
	addr string
	srv  *Server

	started     time.Time
	killed      bool
	partitioned bool
	frozenUntil time.Time
	lag         time.Duration
	electedAt   time.Time
}

// ReplicaSet is a simulated replica set: N in-process servers on loopback
// ports that share one store (a write on the primary is at once on every
// member), agree on one configuration, hold elections, and can be
// stepped down, killed, restarted, partitioned and made to lag. Its
// methods are safe for concurrent use.
type ReplicaSet struct {
	name  string
	opts  Options
	delay time.Duration
	// store holds the data every member serves, as replication would.
	store *store.Store

	// opMu serializes the operations that start or stop servers, which
	// must run without mu held (a closing server waits for handlers that
	// may need mu).
	opMu sync.Mutex

	mu      sync.Mutex
	members []*rsMember
	primary int // index, or -1 while there is none
	term    int64
	electAt time.Time // the next election attempt; zero when none is due
	closed  bool
	events  []ReplicaSetEvent
	seq     int64
	changed chan struct{} // closed and replaced on every change

	kick chan struct{}
	done chan struct{}
	wg   sync.WaitGroup
}

// NewReplicaSet starts an n-member replica set for the test and closes it
// when the test ends. Member 0 starts as the primary. It fails the test if
// the set cannot start.
func NewReplicaSet(t testing.TB, n int, opts ReplicaSetOptions) *ReplicaSet {
	t.Helper()
	rs, err := StartReplicaSet(n, opts)
	if err != nil {
		t.Fatalf("mongotest: %v", err)
	}
	t.Cleanup(rs.Close)
	return rs
}

// StartReplicaSet starts an n-member replica set outside of a test; the
// caller must Close it. Member 0 starts as the primary, in term 1.
func StartReplicaSet(n int, opts ReplicaSetOptions) (*ReplicaSet, error) {
	kinds, err := opts.validate(n)
	if err != nil {
		return nil, err
	}
	rs := &ReplicaSet{
		name:    opts.Name,
		opts:    opts.Options,
		delay:   opts.ElectionDelay,
		store:   store.New(),
		primary: -1,
		changed: make(chan struct{}),
		kick:    make(chan struct{}, 1),
		done:    make(chan struct{}),
	}
	if rs.name == "" {
		rs.name = "rs0"
	}
	if rs.delay == 0 {
		rs.delay = DefaultElectionDelay
	}
	for i := 0; i < n; i++ {
		m := &rsMember{rs: rs, idx: i, kind: kinds[i]}
		if i < len(opts.Tags) && len(opts.Tags[i]) > 0 {
			m.tags = make(map[string]string, len(opts.Tags[i]))
			for k, v := range opts.Tags[i] {
				m.tags[k] = v
			}
		}
		srv, err := rs.startMember(m, "")
		if err != nil {
			for _, m := range rs.members {
				m.srv.Close()
			}
			return nil, fmt.Errorf("mongotest: start replica-set member %d: %w", i, err)
		}
		m.srv, m.addr, m.started = srv, srv.Addr(), time.Now()
		rs.members = append(rs.members, m)
	}
	rs.mu.Lock()
	rs.becomePrimary(rs.members[0], time.Now())
	rs.publish()
	rs.mu.Unlock()
	rs.wg.Add(1)
	go rs.loop()
	return rs, nil
}

func (o ReplicaSetOptions) validate(n int) ([]memberKind, error) {
	if n < 1 || n > MaxReplicaSetMembers {
		return nil, fmt.Errorf("mongotest: a replica set has 1 to %d members, not %d", MaxReplicaSetMembers, n)
	}
	if o.Options.Addr != "" {
		return nil, errors.New("mongotest: ReplicaSetOptions.Options.Addr must be empty: each member listens on its own loopback port")
	}
	if o.Options.Topology.Role != RoleStandalone || o.Options.Topology.SetName != "" {
		return nil, errors.New("mongotest: ReplicaSetOptions.Options.Topology must be empty: the replica set gives each member its role")
	}
	if len(o.Tags) > n {
		return nil, fmt.Errorf("mongotest: ReplicaSetOptions.Tags has %d entries for %d members", len(o.Tags), n)
	}
	kinds := make([]memberKind, n)
	set := func(field string, idx []int, k memberKind) error {
		for _, i := range idx {
			switch {
			case i < 0 || i >= n:
				return fmt.Errorf("mongotest: ReplicaSetOptions.%s: member %d is out of range [0, %d)", field, i, n)
			case i == 0:
				return fmt.Errorf("mongotest: ReplicaSetOptions.%s: member 0 starts as the primary", field)
			case kinds[i] != kindData:
				return fmt.Errorf("mongotest: ReplicaSetOptions.%s: member %d has another role already", field, i)
			}
			kinds[i] = k
		}
		return nil
	}
	if err := set("Hidden", o.Hidden, kindHidden); err != nil {
		return nil, err
	}
	if err := set("Arbiters", o.Arbiters, kindArbiter); err != nil {
		return nil, err
	}
	if err := set("Passives", o.Passives, kindPassive); err != nil {
		return nil, err
	}
	return kinds, nil
}

// startMember starts m's server on addr ("" for a free port), as a
// secondary until the set publishes its view.
func (rs *ReplicaSet) startMember(m *rsMember, addr string) (*Server, error) {
	o := rs.opts
	o.Addr = addr
	o.Topology = Topology{Role: m.role(-1), SetName: rs.name, Tags: m.tags, Passive: m.kind == kindPassive}
	srv, err := newServerWithStore(o, rs.store)
	if err != nil {
		return nil, err
	}
	// Linked before it listens, so no command finds it outside the set.
	srv.topo.member = m
	if err := srv.listen(); err != nil {
		return nil, err
	}
	return srv, nil
}

// role is the member's role when primary is the primary's index.
func (m *rsMember) role(primary int) Role {
	switch {
	case m.idx == primary:
		return RolePrimary
	case m.kind == kindHidden:
		return RoleHidden
	case m.kind == kindArbiter:
		return RoleArbiter
	}
	return RoleSecondary
}

// up tells whether the other members (and clients) can reach the member.
func (m *rsMember) up() bool { return !m.killed && !m.partitioned }

// electable tells whether the member can win an election at now.
func (m *rsMember) electable(now time.Time) bool {
	return m.up() && m.kind == kindData && !now.Before(m.frozenUntil)
}

// Members returns the members' servers, by index. A killed member's entry
// is its closed server until Restart replaces it.
func (rs *ReplicaSet) Members() []*Server {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	out := make([]*Server, len(rs.members))
	for i, m := range rs.members {
		out[i] = m.srv
	}
	return out
}

// Primary returns the primary's server, or nil while the set has none (during
// an election, or when no majority of the members is reachable).
func (rs *ReplicaSet) Primary() *Server {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.primary < 0 {
		return nil
	}
	return rs.members[rs.primary].srv
}

// Name returns the replica set's name.
func (rs *ReplicaSet) Name() string { return rs.name }

// Term returns the current election term; each election increments it,
// and with it the primary's electionId.
func (rs *ReplicaSet) Term() int64 {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.term
}

// URI returns a connection string listing every member but the hidden
// ones, with replicaSet set: "mongodb://h1,h2,h3/?replicaSet=rs0".
func (rs *ReplicaSet) URI() string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	var hosts []string
	for _, m := range rs.members {
		if m.kind != kindHidden {
			hosts = append(hosts, m.addr)
		}
	}
	return "mongodb://" + strings.Join(hosts, ",") + "/?replicaSet=" + url.QueryEscape(rs.name)
}

// AddUser adds a user to every member, as a user created on the primary
// replicates; restarted members keep them. See Server.AddUser.
func (rs *ReplicaSet) AddUser(db, username, password string, mechanisms ...string) error {
	rs.opMu.Lock()
	defer rs.opMu.Unlock()
	for _, srv := range rs.Members() {
		if err := srv.AddUser(db, username, password, mechanisms...); err != nil {
			return err
		}
	}
	return nil
}

// member returns member i, or an error naming the bad index or a closed
// set. rs.mu must be held.
func (rs *ReplicaSet) member(i int) (*rsMember, error) {
	if rs.closed {
		return nil, errors.New("mongotest: the replica set is closed")
	}
	if i < 0 || i >= len(rs.members) {
		return nil, fmt.Errorf("mongotest: member %d is out of range [0, %d)", i, len(rs.members))
	}
	return rs.members[i], nil
}

// StepDown steps the primary down, as replSetStepDown with its defaults:
// it waits (until ctx ends, at most 10 seconds) for another member to be
// electable, then the primary becomes a secondary that cannot be elected
// for 60 seconds, and after ElectionDelay another member is elected.
// Connections stay open, as mongod 4.2 and later keep them.
func (rs *ReplicaSet) StepDown(ctx context.Context) error {
	rs.mu.Lock()
	if rs.closed || rs.primary < 0 {
		closed := rs.closed
		rs.mu.Unlock()
		if closed {
			return errors.New("mongotest: the replica set is closed")
		}
		return errors.New("mongotest: the replica set has no primary to step down")
	}
	m := rs.members[rs.primary]
	rs.mu.Unlock()
	return rs.stepDown(ctx, m, defaultStepDownPeriod, defaultCatchUpPeriod, false, waitChan)
}

// waitChan waits for d, ch or ctx, as Conn.waitFor does for a handler.
func waitChan(ctx context.Context, d time.Duration, ch <-chan struct{}) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stepDown steps m down once another member is electable (at once with
// force), waiting at most catchUp; m then may not be elected for freeze.
func (rs *ReplicaSet) stepDown(ctx context.Context, m *rsMember, freeze, catchUp time.Duration, force bool,
	wait func(context.Context, time.Duration, <-chan struct{}) error) error {
	deadline := time.Now().Add(catchUp)
	for {
		rs.mu.Lock()
		if rs.closed {
			rs.mu.Unlock()
			return newError(mongoerr.ShutdownInProgress, "the replica set is shutting down")
		}
		if rs.primary != m.idx {
			rs.mu.Unlock()
			return newError(mongoerr.NotWritablePrimary, "not primary so can't step down")
		}
		now := time.Now()
		if force || rs.electableOther(m, now) {
			rs.primary = -1
			m.frozenUntil = now.Add(freeze)
			rs.emit(EventSteppedDown, m, now)
			rs.settle(now)
			rs.mu.Unlock()
			return nil
		}
		ch := rs.changed
		rs.mu.Unlock()
		if !now.Before(deadline) {
			return newError(mongoerr.ExceededTimeLimit,
				"No electable secondaries caught up as of %s. Please use the replSetStepDown command with the argument {force: true} to force node to step down.",
				now.UTC().Format(time.RFC3339))
		}
		if err := wait(ctx, deadline.Sub(now), ch); err != nil {
			return err
		}
	}
}

// electableOther tells whether a member other than m could win an election.
func (rs *ReplicaSet) electableOther(m *rsMember, now time.Time) bool {
	if !rs.majority() {
		return false
	}
	for _, o := range rs.members {
		if o != m && o.electable(now) {
			return true
		}
	}
	return false
}

// majority tells whether most members can reach each other; without that
// no member can be (or stay) primary. Every member votes.
func (rs *ReplicaSet) majority() bool {
	up := 0
	for _, m := range rs.members {
		if m.up() {
			up++
		}
	}
	return up*2 > len(rs.members)
}

// Elect makes member i the primary at once, in a new term (its electionId
// increases; setVersion stays), whatever the election delay or a freeze
// on it. The old primary, if any, becomes a secondary. Member i must be up
// and reachable, may not be hidden, passive or an arbiter, and a majority
// of the members must be reachable. Electing the primary does nothing.
func (rs *ReplicaSet) Elect(i int) error {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	m, err := rs.member(i)
	if err != nil {
		return err
	}
	switch {
	case m.killed:
		return fmt.Errorf("mongotest: member %d is killed and cannot be elected", i)
	case m.partitioned:
		return fmt.Errorf("mongotest: member %d is partitioned and cannot be elected", i)
	case m.kind != kindData:
		return fmt.Errorf("mongotest: member %d is %s and cannot be elected", i, m.kindName())
	case !rs.majority():
		return fmt.Errorf("mongotest: member %d cannot be elected: most members are unreachable", i)
	case rs.primary == i:
		return nil
	}
	now := time.Now()
	if rs.primary >= 0 {
		old := rs.members[rs.primary]
		rs.primary = -1
		rs.emit(EventSteppedDown, old, now)
	}
	rs.electAt = time.Time{}
	rs.becomePrimary(m, now)
	rs.publish()
	return nil
}

func (m *rsMember) kindName() string {
	switch m.kind {
	case kindHidden:
		return "hidden"
	case kindPassive:
		return "passive (priority 0)"
	case kindArbiter:
		return "an arbiter"
	}
	return "a data-bearing member"
}

// Kill stops member i's server: it stops listening and drops every
// connection. A killed primary leaves the set without one until the
// election, ElectionDelay later.
func (rs *ReplicaSet) Kill(i int) error {
	rs.opMu.Lock()
	defer rs.opMu.Unlock()
	rs.mu.Lock()
	m, err := rs.member(i)
	if err == nil && m.killed {
		err = fmt.Errorf("mongotest: member %d is already killed", i)
	}
	if err != nil {
		rs.mu.Unlock()
		return err
	}
	m.killed = true
	srv := m.srv
	now := time.Now()
	if rs.primary == i {
		rs.primary = -1
	}
	rs.emit(EventKilled, m, now)
	rs.settle(now)
	rs.mu.Unlock()
	// Closed without mu: the server waits for its handlers, and the
	// replSet* handlers take mu.
	srv.Close()
	return nil
}

// Restart brings killed member i back on the same port, as a secondary
// with a new process (a new topologyVersion.processId), the set's data and
// users, and no fail points.
func (rs *ReplicaSet) Restart(i int) error {
	rs.opMu.Lock()
	defer rs.opMu.Unlock()
	rs.mu.Lock()
	m, err := rs.member(i)
	if err == nil && !m.killed {
		err = fmt.Errorf("mongotest: member %d is running, not killed", i)
	}
	if err != nil {
		rs.mu.Unlock()
		return err
	}
	old, addr, partitioned := m.srv, m.addr, m.partitioned
	rs.mu.Unlock()
	srv, err := rs.startMember(m, addr)
	if err != nil {
		return fmt.Errorf("mongotest: restart member %d: %w", i, err)
	}
	srv.users.copyFrom(&old.users)
	if partitioned {
		srv.CloseNextConnections(math.MaxInt)
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	now := time.Now()
	m.srv, m.killed, m.started, m.frozenUntil = srv, false, now, time.Time{}
	rs.emit(EventRestarted, m, now)
	rs.settle(now)
	return nil
}

// copyFrom copies every user of src, credentials (salted keys) included.
func (u *userStore) copyFrom(src *userStore) {
	src.mu.Lock()
	users := make(map[UserRef]*user, len(src.users))
	for k, v := range src.users {
		users[k] = v
	}
	src.mu.Unlock()
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.users == nil {
		u.users = map[UserRef]*user{}
	}
	for k, v := range users {
		u.users[k] = v
	}
}

// Partition cuts member i off from the clients and the other members: its
// connections are closed and new ones are closed as soon as they are
// accepted (each is recorded in its ConnectionErrors, which Partition and
// CloseNextConnections share), though it keeps its port. A partitioned
// primary steps down; so does a primary left without a majority.
func (rs *ReplicaSet) Partition(i int) error {
	rs.opMu.Lock()
	defer rs.opMu.Unlock()
	rs.mu.Lock()
	m, err := rs.member(i)
	if err == nil && m.partitioned {
		err = fmt.Errorf("mongotest: member %d is already partitioned", i)
	}
	srv := m.srvOrNil()
	rs.mu.Unlock()
	if err != nil {
		return err
	}
	// Cut first, so no client sees the new state from the far side.
	srv.CloseNextConnections(math.MaxInt)
	srv.ResetConnections()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	now := time.Now()
	m.partitioned = true
	if rs.primary == i {
		rs.primary = -1
		rs.emit(EventSteppedDown, m, now)
	}
	rs.emit(EventPartitioned, m, now)
	rs.settle(now)
	return nil
}

func (m *rsMember) srvOrNil() *Server {
	if m == nil {
		return nil
	}
	return m.srv
}

// Heal reconnects partitioned member i: it accepts connections again and
// rejoins as a secondary, which may then be elected.
func (rs *ReplicaSet) Heal(i int) error {
	rs.opMu.Lock()
	defer rs.opMu.Unlock()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	m, err := rs.member(i)
	if err == nil && !m.partitioned {
		err = fmt.Errorf("mongotest: member %d is not partitioned", i)
	}
	if err != nil {
		return err
	}
	now := time.Now()
	m.partitioned = false
	m.srv.CloseNextConnections(0)
	rs.emit(EventHealed, m, now)
	rs.settle(now)
	return nil
}

// SetLag makes member i's lastWrite (opTime and lastWriteDate, in hello
// and replSetGetStatus) trail the primary's by d, as a lagging secondary's
// does; 0 removes the lag. Waiting awaitable hellos answer at once so a
// driver sees the new staleness. A member elected primary reports no lag.
func (rs *ReplicaSet) SetLag(i int, d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("mongotest: SetLag: negative lag %v", d)
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	m, err := rs.member(i)
	if err != nil {
		return err
	}
	if m.kind == kindArbiter {
		return fmt.Errorf("mongotest: member %d is an arbiter, which holds no data to lag", i)
	}
	m.lag = d
	rs.publish()
	return nil
}

// Events returns every event so far, oldest first (at most the last
// 10,000). Member 0's first election is event 1.
func (rs *ReplicaSet) Events() []ReplicaSetEvent {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return append([]ReplicaSetEvent(nil), rs.events...)
}

// LastEvent returns the Seq of the latest event, for WaitFor.
func (rs *ReplicaSet) LastEvent() int64 {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.seq
}

// WaitFor returns the first event of kind whose Seq is greater than
// after, waiting for it until ctx ends or the set closes. Take after from
// LastEvent before triggering a change, so the event cannot be missed:
//
//	seq := rs.LastEvent()
//	rs.StepDown(ctx)
//	ev, err := rs.WaitFor(ctx, mongotest.EventElected, seq)
func (rs *ReplicaSet) WaitFor(ctx context.Context, kind EventKind, after int64) (ReplicaSetEvent, error) {
	for {
		rs.mu.Lock()
		for _, e := range rs.events {
			if e.Seq > after && e.Kind == kind {
				rs.mu.Unlock()
				return e, nil
			}
		}
		closed, ch := rs.closed, rs.changed
		rs.mu.Unlock()
		if closed {
			return ReplicaSetEvent{}, fmt.Errorf("mongotest: waiting for %q: the replica set is closed", kind)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ReplicaSetEvent{}, fmt.Errorf("mongotest: waiting for %q: %w", kind, ctx.Err())
		}
	}
}

// WaitForPrimary returns the primary's server, waiting for an election
// until ctx ends or the set closes.
func (rs *ReplicaSet) WaitForPrimary(ctx context.Context) (*Server, error) {
	for {
		rs.mu.Lock()
		if rs.primary >= 0 && !rs.closed {
			srv := rs.members[rs.primary].srv
			rs.mu.Unlock()
			return srv, nil
		}
		closed, ch := rs.closed, rs.changed
		rs.mu.Unlock()
		if closed {
			return nil, errors.New("mongotest: waiting for a primary: the replica set is closed")
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, fmt.Errorf("mongotest: waiting for a primary: %w", ctx.Err())
		}
	}
}

// Close stops every member and the election goroutine, and waits for
// them. It is safe to call more than once.
func (rs *ReplicaSet) Close() {
	rs.opMu.Lock()
	defer rs.opMu.Unlock()
	rs.mu.Lock()
	if rs.closed {
		rs.mu.Unlock()
		return
	}
	rs.closed = true
	close(rs.done)
	rs.notify()
	srvs := make([]*Server, len(rs.members))
	for i, m := range rs.members {
		srvs[i] = m.srv
	}
	rs.mu.Unlock()
	rs.wg.Wait()
	for _, srv := range srvs {
		srv.Close()
	}
}

// loop runs the elections that settle schedules, each when it is due.
func (rs *ReplicaSet) loop() {
	defer rs.wg.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		rs.mu.Lock()
		at := rs.electAt
		rs.mu.Unlock()
		var due <-chan time.Time
		timer.Stop()
		if !at.IsZero() {
			timer.Reset(time.Until(at))
			due = timer.C
		}
		select {
		case <-rs.done:
			return
		case <-rs.kick:
		case <-due:
			rs.mu.Lock()
			if now := time.Now(); !rs.closed && !rs.electAt.IsZero() && !now.Before(rs.electAt) {
				rs.elect(now)
			}
			rs.mu.Unlock()
		}
	}
}

// settle restores the set's rules after a change, then publishes: a
// primary without a majority steps down, and a set without a primary
// schedules an election. rs.mu must be held.
func (rs *ReplicaSet) settle(now time.Time) {
	if rs.primary >= 0 && !rs.majority() {
		p := rs.members[rs.primary]
		rs.primary = -1
		rs.emit(EventSteppedDown, p, now)
	}
	if rs.primary < 0 {
		switch {
		case rs.delay < 0:
			rs.elect(now)
			return
		case rs.electAt.IsZero() || rs.electAt.After(now.Add(rs.delay)):
			// A change may make a member electable before a frozen
			// one thaws.
			rs.electAt = now.Add(rs.delay)
			select {
			case rs.kick <- struct{}{}:
			default:
			}
		}
	}
	rs.publish()
}

// elect runs an election: the electable member with the least lag (then
// the lowest index) wins. Without one, it retries when a freeze ends, or
// after the next change. rs.mu must be held.
func (rs *ReplicaSet) elect(now time.Time) {
	rs.electAt = time.Time{}
	if rs.primary >= 0 || rs.closed {
		return
	}
	var best *rsMember
	var thaw time.Time
	if rs.majority() {
		for _, m := range rs.members {
			switch {
			case m.electable(now):
				if best == nil || m.lag < best.lag {
					best = m
				}
			case m.up() && m.kind == kindData && (thaw.IsZero() || m.frozenUntil.Before(thaw)):
				thaw = m.frozenUntil
			}
		}
	}
	if best == nil {
		rs.electAt = thaw
		if !thaw.IsZero() {
			select {
			case rs.kick <- struct{}{}:
			default:
			}
		}
		rs.publish()
		return
	}
	rs.becomePrimary(best, now)
	rs.publish()
}

// becomePrimary makes m primary in a new term. rs.mu must be held.
func (rs *ReplicaSet) becomePrimary(m *rsMember, now time.Time) {
	rs.term++
	rs.primary = m.idx
	m.electedAt = now
	m.frozenUntil = time.Time{}
	rs.emit(EventElected, m, now)
}

// emit records an event. rs.mu must be held; publish wakes the waiters.
func (rs *ReplicaSet) emit(kind EventKind, m *rsMember, now time.Time) {
	rs.seq++
	if len(rs.events) >= maxEvents {
		rs.events = append(rs.events[:0], rs.events[1:]...)
	}
	rs.events = append(rs.events, ReplicaSetEvent{Seq: rs.seq, Kind: kind, Member: m.idx, Addr: m.addr, Term: rs.term, Time: now})
}

// notify wakes everything waiting on a change. rs.mu must be held.
func (rs *ReplicaSet) notify() {
	close(rs.changed)
	rs.changed = make(chan struct{})
}

// publish gives every running member the set's current view. A member
// whose view changed gets a new topologyVersion, which answers its waiting
// awaitable hellos at once. rs.mu must be held.
func (rs *ReplicaSet) publish() {
	var hosts, passives, arbiters []string
	for _, m := range rs.members {
		switch m.kind {
		case kindData:
			hosts = append(hosts, m.addr)
		case kindPassive:
			passives = append(passives, m.addr)
		case kindArbiter:
			arbiters = append(arbiters, m.addr)
		}
	}
	primary := ""
	if rs.primary >= 0 {
		primary = rs.members[rs.primary].addr
	}
	for _, m := range rs.members {
		if m.killed {
			continue
		}
		t := Topology{
			Role: m.role(rs.primary), SetName: rs.name, Hosts: hosts, Passives: passives, Arbiters: arbiters,
			Primary: primary, Me: m.addr, Tags: m.tags, Passive: m.kind == kindPassive,
			SetVersion: 1, Term: rs.term,
		}
		if m.idx != rs.primary {
			t.Lag = m.lag
		}
		if m.partitioned {
			// Cut off, it knows of no primary.
			t.Primary = ""
		}
		if !sameTopology(m.srv.Topology(), t) {
			// The view is built valid; SetTopology only fails on an
			// invalid one.
			_ = m.srv.SetTopology(t)
		}
	}
	rs.notify()
}

func sameTopology(a, b Topology) bool {
	if a.Role != b.Role || a.SetName != b.SetName || a.Primary != b.Primary || a.Me != b.Me ||
		a.Passive != b.Passive || a.SetVersion != b.SetVersion || a.Term != b.Term ||
		!a.ElectionID.IsZero() || !b.ElectionID.IsZero() || !a.LastWrite.Equal(b.LastWrite) || a.Lag != b.Lag {
		return false
	}
	if !slices.Equal(a.Hosts, b.Hosts) || !slices.Equal(a.Passives, b.Passives) || !slices.Equal(a.Arbiters, b.Arbiters) {
		return false
	}
	if len(a.Tags) != len(b.Tags) {
		return false
	}
	for k, v := range a.Tags {
		if w, ok := b.Tags[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// replicaMember returns the server's place in a ReplicaSet, or the error
// mongod gives outside a replica set.
func (s *Server) replicaMember() (*rsMember, error) {
	s.topo.mu.Lock()
	m := s.topo.member
	s.topo.mu.Unlock()
	if m == nil {
		e := newError(codeNoReplicationEnabled, "not running with --replSet")
		e.CodeName = "NoReplicationEnabled"
		return nil, e
	}
	return m, nil
}

// replSetStepDownCmd: {replSetStepDown: secs, secondaryCatchUpPeriodSecs,
// force}. The connection stays open, as in mongod 4.2 and later.
func replSetStepDownCmd(ctx context.Context, s *Server, r *Request) (bson.Raw, error) {
	m, err := s.replicaMember()
	if err != nil {
		return nil, err
	}
	secs, _, err := int64Field(r.Body, r.Name)
	if err != nil {
		return nil, err
	}
	if secs == 0 {
		secs = int64(defaultStepDownPeriod / time.Second)
	}
	force, err := optionalBool(r.Body, "force")
	if err != nil {
		return nil, err
	}
	catchUp, has, err := int64Field(r.Body, "secondaryCatchUpPeriodSecs")
	if err != nil {
		return nil, err
	}
	if !has {
		catchUp = int64(defaultCatchUpPeriod / time.Second)
		if force {
			catchUp = 0
		}
	}
	const maxSecs = 1 << 31 // keeps the durations from overflowing
	switch {
	case secs < 0 || secs > maxSecs:
		return nil, newError(mongoerr.BadValue, "stepdown period must be a positive integer below %d, not %d", maxSecs, secs)
	case catchUp < 0:
		return nil, newError(mongoerr.BadValue, "secondaryCatchUpPeriodSecs must be a non-negative integer, not %d", catchUp)
	case catchUp > secs:
		return nil, newError(mongoerr.BadValue, "stepdown period must be longer than secondaryCatchUpPeriodSecs")
	}
	return nil, m.rs.stepDown(ctx, m, time.Duration(secs)*time.Second, time.Duration(catchUp)*time.Second, force, r.Conn.waitFor)
}

func optionalBool(doc bson.Raw, key string) (bool, error) {
	v, err := doc.LookupErr(key)
	if err != nil {
		return false, nil
	}
	if b, ok := v.BooleanOK(); ok {
		return b, nil
	}
	if n, ok := v.AsFloat64OK(); ok {
		return n != 0, nil
	}
	return false, newError(mongoerr.TypeMismatch, "%s is of type %s, expected a boolean", key, v.Type)
}

// replSetFreezeCmd: {replSetFreeze: secs}; the member may not be elected
// for secs seconds, and 0 unfreezes it (ending a step-down's wait too).
func replSetFreezeCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	m, err := s.replicaMember()
	if err != nil {
		return nil, err
	}
	secs, _, err := int64Field(r.Body, r.Name)
	if err != nil {
		return nil, err
	}
	if secs < 0 || secs > 1<<31 {
		return nil, newError(mongoerr.BadValue, "replSetFreeze takes a number of seconds from 0 to %d, not %d", int64(1<<31), secs)
	}
	rs := m.rs
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.closed {
		return nil, newError(mongoerr.ShutdownInProgress, "the replica set is shutting down")
	}
	if rs.primary == m.idx {
		e := newError(codeNotSecondary, "cannot freeze node when primary or running for election. state: Primary")
		e.CodeName = "NotSecondary"
		return nil, e
	}
	now := time.Now()
	start, dst := bson.AppendDocumentStart(nil)
	switch secs {
	case 0:
		m.frozenUntil = time.Time{}
		dst = bson.AppendStringElement(dst, "info", "unfreezing")
	case 1:
		dst = bson.AppendStringElement(dst, "warning", "you really want to freeze for only 1 second?")
		fallthrough
	default:
		m.frozenUntil = now.Add(time.Duration(secs) * time.Second)
	}
	dst, _ = bson.AppendDocumentEnd(dst, start)
	// A thawed member may now win a pending election.
	rs.settle(now)
	return bson.Raw(dst), nil
}

var stateNames = map[int32]string{1: "PRIMARY", 2: "SECONDARY", 7: "ARBITER", 8: "(not reachable/healthy)"}

// replSetGetStatusCmd answers with the set as the member sees it: every
// member's health, state and optime, and the primary's election time.
func replSetGetStatusCmd(_ context.Context, s *Server, _ *Request) (bson.Raw, error) {
	me, err := s.replicaMember()
	if err != nil {
		return nil, err
	}
	rs := me.rs
	rs.mu.Lock()
	defer rs.mu.Unlock()
	now := time.Now()
	start, dst := bson.AppendDocumentStart(nil)
	dst = bson.AppendStringElement(dst, "set", rs.name)
	dst = bson.AppendDateTimeElement(dst, "date", now.UnixMilli())
	dst = bson.AppendInt32Element(dst, "myState", rs.state(me))
	dst = bson.AppendInt64Element(dst, "term", rs.term)
	dst = bson.AppendInt64Element(dst, "heartbeatIntervalMillis", 2000)
	n := int32(len(rs.members))
	dst = bson.AppendInt32Element(dst, "majorityVoteCount", n/2+1)
	dst = bson.AppendInt32Element(dst, "writeMajorityCount", n/2+1)
	dst = bson.AppendInt32Element(dst, "votingMembersCount", n)
	as, dst := bson.AppendArrayElementStart(dst, "members")
	for i, m := range rs.members {
		ms, d := bson.AppendDocumentElementStart(dst, bson.ArrayKey(i))
		d = bson.AppendInt32Element(d, "_id", int32(i))
		d = bson.AppendStringElement(d, "name", m.addr)
		state := rs.state(m)
		health := 1.0
		if state == 8 {
			health = 0
		}
		d = bson.AppendDoubleElement(d, "health", health)
		d = bson.AppendInt32Element(d, "state", state)
		d = bson.AppendStringElement(d, "stateStr", stateNames[state])
		uptime := int64(0)
		if state != 8 {
			uptime = int64(now.Sub(m.started) / time.Second)
		}
		d = bson.AppendInt64Element(d, "uptime", uptime)
		ts, date, term := bson.Timestamp{}, time.Unix(0, 0), int64(-1)
		if state != 8 && m.kind != kindArbiter {
			lag := m.lag
			if state == 1 {
				lag = 0
			}
			date = now.Add(-lag).Truncate(time.Second)
			ts, term = bson.Timestamp{T: uint32(date.Unix()), I: 1}, rs.term
		}
		d = appendOpTime(d, "optime", ts, term)
		d = bson.AppendDateTimeElement(d, "optimeDate", date.UnixMilli())
		if state == 1 {
			d = bson.AppendTimestampElement(d, "electionTime", uint32(m.electedAt.Unix()), 1)
			d = bson.AppendDateTimeElement(d, "electionDate", m.electedAt.Truncate(time.Second).UnixMilli())
		}
		d = bson.AppendInt64Element(d, "configVersion", 1)
		d = bson.AppendInt64Element(d, "configTerm", rs.term)
		if m == me {
			d = bson.AppendBooleanElement(d, "self", true)
		}
		dst, _ = bson.AppendDocumentEnd(d, ms)
	}
	dst, _ = bson.AppendDocumentEnd(dst, as)
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return bson.Raw(dst), nil
}

// state is replSetGetStatus's member state. rs.mu must be held.
func (rs *ReplicaSet) state(m *rsMember) int32 {
	switch {
	case !m.up():
		return 8
	case m.idx == rs.primary:
		return 1
	case m.kind == kindArbiter:
		return 7
	}
	return 2
}
