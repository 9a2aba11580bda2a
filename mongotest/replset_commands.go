package mongotest

import (
	"context"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

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
