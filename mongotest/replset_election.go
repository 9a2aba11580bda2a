package mongotest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

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
