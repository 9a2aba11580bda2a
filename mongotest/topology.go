package mongotest

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/internal/wire"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
	"github.com/mongoscope/mongoscope/mongotest/internal/store"
)

// Role is the part a server plays, which decides its hello reply.
type Role int

// The roles a server can play.
const (
	// RoleStandalone is a mongod outside any replica set.
	RoleStandalone Role = iota
	// RolePrimary is a replica-set primary.
	RolePrimary
	// RoleSecondary is a replica-set secondary.
	RoleSecondary
	// RoleArbiter is a replica-set arbiter: no data, no authentication.
	RoleArbiter
	// RoleHidden is a hidden secondary (priority 0): it is in no host list.
	RoleHidden
	// RoleMongos is a mongos router.
	RoleMongos
	// RoleLoadBalanced is a mongos behind a load balancer: hello carries a
	// serviceId, and the first hello must carry loadBalanced:true.
	RoleLoadBalanced
)

var roleNames = [...]string{"standalone", "primary", "secondary", "arbiter", "hidden", "mongos", "load-balanced"}

// String returns the role's name ("primary").
func (r Role) String() string {
	if r >= 0 && int(r) < len(roleNames) {
		return roleNames[r]
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// replicaSet tells whether the role is a replica-set member's.
func (r Role) replicaSet() bool {
	return r == RolePrimary || r == RoleSecondary || r == RoleArbiter || r == RoleHidden
}

// Topology is what a server's hello says about its place in a deployment.
// Fields that do not apply to the role are ignored.
type Topology struct {
	Role Role
	// SetName is the replica set's name; required for replica-set roles.
	SetName string
	// Hosts, Passives and Arbiters are the members' "host:port" lists.
	// When all three are empty, the server lists only itself, in the list
	// its role belongs to (none for a hidden member).
	Hosts, Passives, Arbiters []string
	// Primary is the primary's address; for RolePrimary "" means Me.
	Primary string
	// Me is this member's address; "" means the server's own address.
	Me string
	// Tags are the member's tags.
	Tags map[string]string
	// Passive marks a priority-0 secondary (hidden members always are).
	Passive bool
	// SetVersion is the replica-set config version; 0 means 1.
	SetVersion int64
	// Term is the election term, lastWrite.opTime.t; 0 means 1.
	Term int64
	// ElectionID is the primary's electionId; zero means the one mongod
	// derives from Term (0x7fffffff then the term).
	ElectionID bson.ObjectID
	// LastWrite is lastWrite.lastWriteDate; zero means now, as for a
	// member that is fully caught up. A lagging secondary sets it back.
	LastWrite time.Time
	// Lag, when LastWrite is zero, makes lastWriteDate trail now by that
	// much: a secondary that keeps replicating, late by Lag.
	Lag time.Duration
}

func (t Topology) validate() error {
	if t.Role < RoleStandalone || t.Role > RoleLoadBalanced {
		return fmt.Errorf("mongotest: Topology.Role %d is not a known role", int(t.Role))
	}
	if t.Role.replicaSet() && t.SetName == "" {
		return fmt.Errorf("mongotest: Topology.SetName is required for the %s role", t.Role)
	}
	if t.SetVersion < 0 || t.Term < 0 || t.Lag < 0 {
		return fmt.Errorf("mongotest: Topology.SetVersion, Term and Lag must not be negative")
	}
	return nil
}

func (t Topology) clone() Topology {
	t.Hosts = append([]string(nil), t.Hosts...)
	t.Passives = append([]string(nil), t.Passives...)
	t.Arbiters = append([]string(nil), t.Arbiters...)
	if t.Tags != nil {
		m := make(map[string]string, len(t.Tags))
		for k, v := range t.Tags {
			m[k] = v
		}
		t.Tags = m
	}
	return t
}

// topologyState holds the topology and its version; changed is closed and
// replaced on every change, waking every awaitable hello.
type topologyState struct {
	mu      sync.Mutex
	t       Topology
	counter int64
	changed chan struct{}
	// member is the server's place in a ReplicaSet, or nil; the
	// replSet* commands need it.
	member *rsMember
}

// Topology returns a copy of the server's current topology.
func (s *Server) Topology() Topology {
	s.topo.mu.Lock()
	defer s.topo.mu.Unlock()
	return s.topo.t.clone()
}

// SetTopology changes the role or replica-set view and increments the
// topologyVersion counter, which answers every waiting awaitable hello at
// once, as mongod does on a state change.
func (s *Server) SetTopology(t Topology) error {
	if err := t.validate(); err != nil {
		return err
	}
	s.topo.mu.Lock()
	s.topo.t = t.clone()
	s.topo.counter++
	close(s.topo.changed)
	s.topo.changed = make(chan struct{})
	s.topo.mu.Unlock()
	return nil
}

// TopologyVersion returns hello's topologyVersion: the processId (new for
// each server) and the counter, which SetTopology increments.
func (s *Server) TopologyVersion() (processID bson.ObjectID, counter int64) {
	s.topo.mu.Lock()
	defer s.topo.mu.Unlock()
	return s.processID, s.topo.counter
}

func (s *Server) topologySnapshot() (Topology, int64, <-chan struct{}) {
	s.topo.mu.Lock()
	defer s.topo.mu.Unlock()
	return s.topo.t, s.topo.counter, s.topo.changed
}

// isReplicaSetMember tells whether the server plays a replica-set member.
func (s *Server) isReplicaSetMember() bool {
	switch s.Topology().Role {
	case RolePrimary, RoleSecondary, RoleArbiter, RoleHidden:
		return true
	}
	return false
}

func (s *Server) appendTopologyVersion(dst []byte, key string) []byte {
	_, counter := s.TopologyVersion()
	return appendTV(dst, key, s.processID, counter)
}

func appendTV(dst []byte, key string, pid bson.ObjectID, counter int64) []byte {
	start, dst := bson.AppendDocumentElementStart(dst, key)
	dst = bson.AppendObjectIDElement(dst, "processId", pid)
	dst = bson.AppendInt64Element(dst, "counter", counter)
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst
}

// clusterClock is the cluster time a replica set or mongos gossips.
type clusterClock struct {
	mu sync.Mutex
	ts bson.Timestamp
}

// now returns the current cluster time, starting it on first use.
func (c *clusterClock) now() bson.Timestamp {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ts.T == 0 {
		c.ts = bson.Timestamp{T: uint32(time.Now().Unix()), I: 1}
	}
	return c.ts
}

// tickMark advances the cluster time, as a write does, marks the store's
// history with it (snapshot reads at that time see the write) and returns
// it.
func (c *clusterClock) tickMark(st *store.Store) bson.Timestamp {
	c.mu.Lock()
	defer c.mu.Unlock()
	ts := c.tickLocked()
	st.MarkTime(clusterTimeKey(ts))
	return ts
}

// markNow marks the store's history with the current cluster time, so a
// snapshot read at that time sees every change made so far, and returns
// the time.
func (c *clusterClock) markNow(st *store.Store) bson.Timestamp {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ts.T == 0 {
		c.ts = bson.Timestamp{T: uint32(time.Now().Unix()), I: 1}
	}
	st.MarkTime(clusterTimeKey(c.ts))
	return c.ts
}

// enableHistory starts the store's history at the current cluster time.
func (c *clusterClock) enableHistory(st *store.Store) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ts.T == 0 {
		c.ts = bson.Timestamp{T: uint32(time.Now().Unix()), I: 1}
	}
	st.EnableHistory(clusterTimeKey(c.ts))
}

func (c *clusterClock) tickLocked() bson.Timestamp {
	sec := uint32(time.Now().Unix())
	if sec > c.ts.T {
		c.ts = bson.Timestamp{T: sec, I: 1}
	} else {
		c.ts.I++
	}
	return c.ts
}

// appendClusterTime adds $clusterTime and operationTime, which replica-set
// members and mongos put in every reply. The signature is the zero one an
// unauthenticated deployment without keys sends.
func (s *Server) appendClusterTime(dst []byte) []byte {
	return s.appendClusterTimeAt(dst, bson.Timestamp{})
}

// appendClusterTimeAt is appendClusterTime with the operation's own time
// (a write's) as operationTime; the zero time means the current time.
func (s *Server) appendClusterTimeAt(dst []byte, op bson.Timestamp) []byte {
	t, _, _ := s.topologySnapshot()
	if !t.Role.replicaSet() && t.Role != RoleMongos && t.Role != RoleLoadBalanced {
		return dst
	}
	ts := s.clock.now()
	start, dst := bson.AppendDocumentElementStart(dst, "$clusterTime")
	dst = bson.AppendTimestampElement(dst, "clusterTime", ts.T, ts.I)
	sig, dst := bson.AppendDocumentElementStart(dst, "signature")
	dst = bson.AppendBinaryElement(dst, "hash", bson.SubtypeGeneric, make([]byte, 20))
	dst = bson.AppendInt64Element(dst, "keyId", 0)
	dst, _ = bson.AppendDocumentEnd(dst, sig)
	dst, _ = bson.AppendDocumentEnd(dst, start)
	if op.T != 0 {
		ts = op
	}
	return bson.AppendTimestampElement(dst, "operationTime", ts.T, ts.I)
}

// helloCmd answers hello and legacy hello, waiting first when the request
// is awaitable (topologyVersion and maxAwaitTimeMS).
func helloCmd(ctx context.Context, s *Server, r *Request) (bson.Raw, error) {
	c := r.Conn
	body := r.Body
	topo, counter, changed := s.topologySnapshot()
	if topo.Role == RoleLoadBalanced && r.firstHello {
		if lb, _ := body.Lookup("loadBalanced").BooleanOK(); !lb {
			return nil, newError(mongoerr.BadValue, "this server is behind a load balancer: the first hello must carry loadBalanced:true")
		}
	}
	tvVal, tvErr := body.LookupErr("topologyVersion")
	maxAwait, hasAwait, err := int64Field(body, "maxAwaitTimeMS")
	if err != nil {
		return nil, err
	}
	awaitable := tvErr == nil || hasAwait
	if awaitable {
		if tvErr != nil || !hasAwait {
			return nil, newError(mongoerr.BadValue, "topologyVersion and maxAwaitTimeMS must be sent together")
		}
		if maxAwait < 0 {
			return nil, newError(mongoerr.BadValue, "maxAwaitTimeMS must be a non-negative integer, not %d", maxAwait)
		}
		tv, ok := tvVal.DocumentOK()
		if !ok {
			return nil, newError(mongoerr.TypeMismatch, "topologyVersion is of type %s, expected an object", tvVal.Type)
		}
		pid, ok := tv.Lookup("processId").ObjectIDOK()
		if !ok {
			return nil, newError(mongoerr.TypeMismatch, "topologyVersion.processId must be an ObjectId")
		}
		clientCounter, ok := tv.Lookup("counter").AsInt64OK()
		if !ok {
			return nil, newError(mongoerr.TypeMismatch, "topologyVersion.counter must be a number")
		}
		if r.streaming {
			// Follow-ups of an exhaust stream wait on what the last
			// reply reported, not on what the request said.
			pid, clientCounter = s.processID, r.helloTV
		}
		if pid == s.processID {
			if clientCounter > counter {
				return nil, newError(mongoerr.BadValue, "topologyVersion.counter %d is newer than the server's %d", clientCounter, counter)
			}
			if clientCounter == counter {
				if err := c.waitFor(ctx, time.Duration(maxAwait)*time.Millisecond, changed); err != nil {
					return nil, err
				}
				topo, counter, _ = s.topologySnapshot()
			}
		}
		r.helloTV = counter
		r.more = true
	}
	return s.appendHello(nil, r, topo, counter), nil
}

// takeHandshake records the client metadata of the connection's first
// hello and reports whether this is the first; later hellos may not send
// metadata again, as mongod enforces.
func (c *Conn) takeHandshake(body bson.Raw) (bool, error) {
	md, hasMD := body.Lookup("client").DocumentOK()
	c.mu.Lock()
	defer c.mu.Unlock()
	first := !c.helloSeen
	if hasMD && !first {
		return false, newError(186, "The client metadata document may only be sent in the first hello")
	}
	c.helloSeen = true
	if hasMD {
		c.metadata = append(bson.Raw(nil), md...)
		c.appName, _ = md.Lookup("application", "name").StringValueOK()
	}
	return first, nil
}

// appendHello builds the hello reply document for topo.
func (s *Server) appendHello(dst []byte, r *Request, topo Topology, counter int64) bson.Raw {
	c := r.Conn
	me := topo.Me
	if me == "" {
		me = s.addr
	}
	writable := "isWritablePrimary"
	if r.Name != "hello" {
		writable = "ismaster"
	}
	start, dst := bson.AppendDocumentStart(dst)
	switch {
	case topo.Role == RoleMongos || topo.Role == RoleLoadBalanced:
		dst = bson.AppendBooleanElement(dst, writable, true)
		dst = bson.AppendStringElement(dst, "msg", "isdbgrid")
		dst = appendTV(dst, "topologyVersion", s.processID, counter)
	case topo.Role.replicaSet():
		dst = appendTV(dst, "topologyVersion", s.processID, counter)
		dst = s.appendMembers(dst, topo, me, writable)
	default:
		dst = bson.AppendBooleanElement(dst, writable, true)
		dst = appendTV(dst, "topologyVersion", s.processID, counter)
	}
	dst = bson.AppendInt32Element(dst, "maxBsonObjectSize", MaxBSONObjectSize)
	dst = bson.AppendInt32Element(dst, "maxMessageSizeBytes", MaxMessageSizeBytes)
	dst = bson.AppendInt32Element(dst, "maxWriteBatchSize", MaxWriteBatchSize)
	dst = bson.AppendDateTimeElement(dst, "localTime", time.Now().UnixMilli())
	if !s.noSessions {
		dst = bson.AppendInt32Element(dst, "logicalSessionTimeoutMinutes", LogicalSessionTimeoutMinutes)
	}
	dst = bson.AppendInt64Element(dst, "connectionId", c.id)
	dst = bson.AppendInt32Element(dst, "minWireVersion", 0)
	dst = bson.AppendInt32Element(dst, "maxWireVersion", s.maxWire)
	if !topo.Role.isRouter() {
		// mongos's hello has no readOnly.
		dst = bson.AppendBooleanElement(dst, "readOnly", false)
	}
	if topo.Role == RoleLoadBalanced {
		if lb, _ := r.Body.Lookup("loadBalanced").BooleanOK(); lb {
			dst = bson.AppendObjectIDElement(dst, "serviceId", s.serviceID)
		}
	}
	if ok, _ := r.Body.Lookup("helloOk").BooleanOK(); ok {
		dst = bson.AppendBooleanElement(dst, "helloOk", true)
	}
	dst = s.appendCompression(dst, r.Body)
	if topo.Role != RoleArbiter {
		dst = s.appendSaslSupportedMechs(dst, r.Body)
		dst = c.appendSpeculativeAuth(dst, r.DB, r.Body)
	}
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return bson.Raw(dst[start:])
}

// appendMembers appends a replica-set member's view: host lists, set name
// and version, its state, the primary, itself, electionId and lastWrite.
func (s *Server) appendMembers(dst []byte, topo Topology, me, writable string) []byte {
	hosts, passives, arbiters := topo.Hosts, topo.Passives, topo.Arbiters
	if len(hosts)+len(passives)+len(arbiters) == 0 {
		switch {
		case topo.Role == RoleArbiter:
			arbiters = []string{me}
		case topo.Role == RoleHidden:
		case topo.Passive:
			passives = []string{me}
		default:
			hosts = []string{me}
		}
	}
	dst = appendStrings(dst, "hosts", hosts)
	if len(passives) > 0 {
		dst = appendStrings(dst, "passives", passives)
	}
	if len(arbiters) > 0 {
		dst = appendStrings(dst, "arbiters", arbiters)
	}
	dst = bson.AppendStringElement(dst, "setName", topo.SetName)
	setVersion := topo.SetVersion
	if setVersion == 0 {
		setVersion = 1
	}
	dst = bson.AppendInt32Element(dst, "setVersion", int32(setVersion))
	primary := topo.Primary
	if topo.Role == RolePrimary && primary == "" {
		primary = me
	}
	dst = bson.AppendBooleanElement(dst, writable, topo.Role == RolePrimary)
	dst = bson.AppendBooleanElement(dst, "secondary", topo.Role == RoleSecondary || topo.Role == RoleHidden)
	if primary != "" {
		dst = bson.AppendStringElement(dst, "primary", primary)
	}
	if topo.Role == RoleHidden || (topo.Role == RoleSecondary && topo.Passive) {
		dst = bson.AppendBooleanElement(dst, "passive", true)
	}
	if topo.Role == RoleHidden {
		dst = bson.AppendBooleanElement(dst, "hidden", true)
	}
	if topo.Role == RoleArbiter {
		dst = bson.AppendBooleanElement(dst, "arbiterOnly", true)
	}
	if len(topo.Tags) > 0 {
		keys := make([]string, 0, len(topo.Tags))
		for k := range topo.Tags {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		ts, d := bson.AppendDocumentElementStart(dst, "tags")
		for _, k := range keys {
			d = bson.AppendStringElement(d, k, topo.Tags[k])
		}
		dst, _ = bson.AppendDocumentEnd(d, ts)
	}
	dst = bson.AppendStringElement(dst, "me", me)
	term := topo.Term
	if term == 0 {
		term = 1
	}
	if topo.Role == RolePrimary {
		id := topo.ElectionID
		if id.IsZero() {
			binary.BigEndian.PutUint32(id[:4], 0x7fffffff)
			binary.BigEndian.PutUint64(id[4:], uint64(term))
		}
		dst = bson.AppendObjectIDElement(dst, "electionId", id)
	}
	if topo.Role != RoleArbiter {
		lw := topo.LastWrite
		if lw.IsZero() {
			lw = time.Now().Add(-topo.Lag)
		}
		ts := bson.Timestamp{T: uint32(lw.Unix()), I: 1}
		if now := s.clock.now(); now.T == ts.T {
			ts = now
		}
		start, d := bson.AppendDocumentElementStart(dst, "lastWrite")
		d = appendOpTime(d, "opTime", ts, term)
		d = bson.AppendDateTimeElement(d, "lastWriteDate", lw.Truncate(time.Second).UnixMilli())
		d = appendOpTime(d, "majorityOpTime", ts, term)
		d = bson.AppendDateTimeElement(d, "majorityWriteDate", lw.Truncate(time.Second).UnixMilli())
		dst, _ = bson.AppendDocumentEnd(d, start)
	}
	return dst
}

func appendOpTime(dst []byte, key string, ts bson.Timestamp, term int64) []byte {
	start, dst := bson.AppendDocumentElementStart(dst, key)
	dst = bson.AppendTimestampElement(dst, "ts", ts.T, ts.I)
	dst = bson.AppendInt64Element(dst, "t", term)
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst
}

func appendStrings(dst []byte, key string, vals []string) []byte {
	start, dst := bson.AppendArrayElementStart(dst, key)
	for i, v := range vals {
		dst = bson.AppendStringElement(dst, bson.ArrayKey(i), v)
	}
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst
}

// appendCompression answers the client's compression list with the
// compressors the server also enables, in the client's order.
func (s *Server) appendCompression(dst []byte, body bson.Raw) []byte {
	arr, ok := body.Lookup("compression").ArrayOK()
	if !ok {
		return dst
	}
	var names []string
	it := arr.Iter()
	for it.Next() {
		name, ok := it.Value().StringValueOK()
		if !ok {
			continue
		}
		if comp, ok := wire.CompressorByName(name); ok && comp != wire.CompressorNoop && s.compressorEnabled(comp) {
			dup := false
			for _, n := range names {
				dup = dup || n == name
			}
			if !dup {
				names = append(names, name)
			}
		}
	}
	if len(names) == 0 {
		return dst
	}
	return appendStrings(dst, "compression", names)
}
