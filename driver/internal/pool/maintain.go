package pool

import (
	"time"

	"github.com/mongoscope/mongoscope/driver/event"
)

// maintain is the pool's background goroutine: a run at each interval or
// when signalled, until Close.
func (p *Pool[C]) maintain() {
	defer p.wg.Done()
	var tick <-chan time.Time
	if p.cfg.MaintainInterval > 0 {
		t := time.NewTicker(p.cfg.MaintainInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-p.bgCtx.Done():
			return
		case <-tick:
		case <-p.wake:
		}
		p.runOnce()
	}
}

// runOnce closes perished idle connections, interrupts in-use ones after a
// clear that asked for it, and starts establishing connections up to
// MinPoolSize within MaxConnecting. It does what it can now and returns;
// it never waits for a slot.
func (p *Pool[C]) runOnce() {
	type closing struct {
		c      *Pooled[C]
		reason event.CloseReason
	}
	var dead []closing
	var interrupt, spawn []*Pooled[C]

	p.stateMu.Lock() // see Pool.stateMu
	p.mu.Lock()
	if p.state == stateClosed {
		p.mu.Unlock()
		p.stateMu.Unlock()
		return
	}
	now := time.Now()
	kept := p.idle[:0]
	for _, c := range p.idle {
		if reason := p.perishedLocked(c, now); reason != "" {
			p.forgetLocked(c)
			dead = append(dead, closing{c, reason})
			continue
		}
		kept = append(kept, c)
	}
	clear(p.idle[len(kept):])
	p.idle = kept
	if p.interrupt {
		p.interrupt = false
		for c := range p.all {
			if c.gen > p.interruptUpTo || c.interrupted.Load() {
				continue
			}
			switch c.state {
			case connInUse, connCheckingIn:
				c.interrupted.Store(true)
				interrupt = append(interrupt, c)
			case connPending:
				// Being established: its dial is canceled (or will be as
				// soon as it starts) and the connection closed.
				c.interrupted.Store(true)
				if c.cancelDial != nil {
					c.cancelDial()
				}
			}
		}
	}
	for p.state == stateReady && p.total < p.cfg.MinPoolSize && p.canCreateLocked() {
		spawn = append(spawn, p.reserveLocked(true))
	}
	if len(dead) > 0 {
		p.dispatchLocked()
	}
	p.wg.Add(len(spawn))
	p.mu.Unlock()
	p.stateMu.Unlock()

	for _, d := range dead {
		p.closeConn(p.bgCtx, d.c, d.reason, nil)
	}
	for _, c := range interrupt {
		// Closing the socket makes the operation using it fail; CheckIn
		// then closes it as stale.
		c.conn.Close()
	}
	for _, c := range spawn {
		go p.populate(c)
	}
}

// populate establishes one connection for MinPoolSize and makes it
// available.
func (p *Pool[C]) populate(c *Pooled[C]) {
	defer p.wg.Done()
	ctx := p.bgCtx
	c.created = time.Now()
	if p.ev.Pool() {
		p.ev.PoolEvent(ctx, &event.ConnectionCreated{Address: p.cfg.Address, ConnectionID: c.id})
	}
	conn, err := p.dialInterruptible(ctx, c)
	if c.interrupted.Load() {
		// A clear with interruptInUseConnections cut the establishment
		// short: no SDAM error handling, the clear was that already.
		p.mu.Lock()
		if err == nil {
			c.conn, c.dialed = conn, true
		}
		reason := event.ReasonStale
		if p.state == stateClosed {
			reason = event.ReasonPoolClosed
		}
		p.forgetLocked(c)
		p.dispatchLocked()
		p.mu.Unlock()
		p.closeConn(ctx, c, reason, nil)
		return
	}
	if err == nil && p.ev.Pool() {
		// Ready goes out before the connection is available and before its
		// maxConnecting slot is free, so nothing that follows from either
		// can be observed first.
		p.ev.PoolEvent(ctx, &event.ConnectionReady{Address: p.cfg.Address, ConnectionID: c.id, Duration: time.Since(c.created)})
	}
	if err != nil {
		// The failed connection keeps its place (and its maxConnecting
		// slot) until OnPopulateError has cleared the pool: given back
		// earlier, the next run could start a replacement between the
		// failure and the clear.
		p.mu.Lock()
		closed := p.state == stateClosed
		p.mu.Unlock()
		if !closed && p.cfg.OnPopulateError != nil {
			p.cfg.OnPopulateError(err, c.gen)
		}
		p.mu.Lock()
		closed = p.state == stateClosed
		p.forgetLocked(c)
		p.dispatchLocked()
		p.mu.Unlock()
		if closed {
			p.closeConn(ctx, c, event.ReasonPoolClosed, nil)
			return
		}
		p.closeConn(ctx, c, event.ReasonError, err)
		return
	}
	p.mu.Lock()
	c.conn, c.dialed = conn, true
	p.attachServiceLocked(c)
	if p.state == stateClosed {
		p.forgetLocked(c)
		p.mu.Unlock()
		p.closeConn(ctx, c, event.ReasonPoolClosed, nil)
		return
	}
	p.pending--
	p.bgPending--
	c.state = connIdle
	c.idleSince = time.Now()
	p.idle = append(p.idle, c)
	p.dispatchLocked()
	more := p.state == stateReady && p.total < p.cfg.MinPoolSize
	p.mu.Unlock()
	if more {
		p.signal()
	}
}
