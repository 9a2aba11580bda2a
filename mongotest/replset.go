package mongotest

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

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
