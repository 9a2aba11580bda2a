package mongotest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// StepDown steps the primary down, as replSetStepDown with its defaults:
// it waits (until ctx ends, at most 10 seconds) for another member to be
// electable, then the primary becomes a secondary that cannot be elected
// for 60 seconds, and after ElectionDelay another member is elected.
// Connections stay open, as mongod 4.2 and later keep them.
func (rs *ReplicaSet) StepDown(ctx context.Context) error {
	return rs.stepDownPrimary(ctx, defaultStepDownPeriod)
}

// StepDownFor is StepDown with the time the old primary may not be
// elected again set to freeze (replSetStepDown's stepDownSecs), so that
// a test can step primaries down in turn more often than once a minute.
func (rs *ReplicaSet) StepDownFor(ctx context.Context, freeze time.Duration) error {
	if freeze <= 0 {
		return errors.New("mongotest: StepDownFor needs a positive freeze")
	}
	return rs.stepDownPrimary(ctx, freeze)
}

// stepDownPrimary steps the current primary down for freeze.
func (rs *ReplicaSet) stepDownPrimary(ctx context.Context, freeze time.Duration) error {
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
	return rs.stepDown(ctx, m, freeze, defaultCatchUpPeriod, false, waitChan)
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
