// Package session holds the client's server sessions (the driver-sessions
// specification's server session pool) and its cluster clock ($clusterTime
// gossip).
//
// An operation without an explicit session, on a deployment that supports
// sessions, takes a server session from the pool after it has a
// connection, sends its lsid, and gives it back when the operation (or the
// cursor it opened) ends. An explicit session (Client) takes its server
// session at its first use and gives it back when it ends; it keeps its
// own cluster and operation times for causal consistency and snapshot
// reads.
package session

import (
	"sync"
	"time"

	"github.com/mongoscope/mongoscope/bson"
)

// Server is one server session: the lsid the server knows it by, when it
// was last used, and the transaction number of its retryable writes.
type Server struct {
	// LSID is the encoded {id: UUID} document sent as "lsid".
	LSID bson.Raw
	// ID is the session's UUID.
	ID bson.UUID
	// LastUse is when a command last carried the lsid.
	LastUse time.Time
	// TxnNumber is the last transaction number used with the session.
	TxnNumber int64
	// Dirty marks a session a network error hit during a command: the
	// server may still hold it busy, so it is discarded, not reused.
	Dirty bool
}

// newServer makes a server session with a random UUID.
func newServer() *Server {
	id := bson.NewUUID()
	st, b := bson.AppendDocumentStart(make([]byte, 0, 32))
	b = bson.AppendBinaryElement(b, "id", 4, id[:])
	b, _ = bson.AppendDocumentEnd(b, st)
	return &Server{LSID: b, ID: id}
}

// Pool is the client's server-session pool: last in, first out, so that the
// fewest sessions stay alive on the servers. A session about to expire on
// the server (less than a minute left of logicalSessionTimeoutMinutes) is
// never handed out again.
type Pool struct {
	mu       sync.Mutex
	sessions []*Server // most recently used last
	// now is the clock; tests replace it.
	now func() time.Time
	// created counts the sessions made, for tests and statistics.
	created int
	// inUse counts the sessions handed out and not yet returned.
	inUse int
}

// NewPool returns an empty pool.
func NewPool() *Pool { return &Pool{now: time.Now} }

// expiring tells whether s has less than a minute left before the server
// forgets it, given the deployment's timeout (nil: sessions do not expire,
// as behind a load balancer).
func (p *Pool) expiring(s *Server, timeout *time.Duration, now time.Time) bool {
	if timeout == nil {
		return false
	}
	return now.Sub(s.LastUse) > *timeout-time.Minute
}

// Get returns a session that has at least a minute left, discarding the
// stale ones it passes, or a new session.
func (p *Pool) Get(timeout *time.Duration) *Server {
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inUse++
	for len(p.sessions) > 0 {
		s := p.sessions[len(p.sessions)-1]
		p.sessions[len(p.sessions)-1] = nil
		p.sessions = p.sessions[:len(p.sessions)-1]
		if !p.expiring(s, timeout, now) {
			return s
		}
	}
	p.created++
	s := newServer()
	// A new session counts as used now: one taken ahead of its first
	// command (an explicit session's ID) is not stale when returned.
	s.LastUse = now
	return s
}

// Put returns s to the pool, unless it is dirty or about to expire. The
// least recently used sessions that are about to expire are dropped at the
// same time.
func (p *Pool) Put(s *Server, timeout *time.Duration) {
	if s == nil {
		return
	}
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inUse--
	n := 0
	for n < len(p.sessions) && p.expiring(p.sessions[n], timeout, now) {
		n++
	}
	if n > 0 {
		p.sessions = append(p.sessions[:0], p.sessions[n:]...)
	}
	if s.Dirty || p.expiring(s, timeout, now) {
		return
	}
	p.sessions = append(p.sessions, s)
}

// Drain empties the pool and returns the lsids it held, most recently used
// first, for endSessions.
func (p *Pool) Drain() []bson.Raw {
	p.mu.Lock()
	defer p.mu.Unlock()
	ids := make([]bson.Raw, 0, len(p.sessions))
	for i := len(p.sessions) - 1; i >= 0; i-- {
		ids = append(ids, p.sessions[i].LSID)
	}
	p.sessions = nil
	return ids
}

// Len returns the number of idle sessions in the pool.
func (p *Pool) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.sessions)
}

// InUse returns the number of sessions handed out and not returned.
func (p *Pool) InUse() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inUse
}

// Created returns the number of sessions the pool has made.
func (p *Pool) Created() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.created
}

// Clock is the client's cluster time: the greatest $clusterTime any server
// has sent, which every command to a server that supports it carries back
// (the gossip of the causal-consistency and sessions specifications).
// SDAM's monitoring hellos neither send nor feed it: the Markdown
// driver-sessions specification (changelog 2025-02-24, "Do not gossip on
// SDAM commands") forbids it, while the seed text (/work/shared/seeds, the
// rendered book) predates that rule and still says "all responses"; this
// follows the Markdown (prose test 20).
type Clock struct {
	mu   sync.Mutex
	doc  bson.Raw // the whole $clusterTime document, signature included
	t, i uint32
}

// Get returns the current $clusterTime document, or nil before any.
func (c *Clock) Get() bson.Raw {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.doc
}

// Advance keeps doc, a $clusterTime document, when its clusterTime is
// greater than the current one. A malformed document is ignored.
func (c *Clock) Advance(doc bson.Raw) {
	v, err := doc.LookupErr("clusterTime")
	if err != nil || v.Type != bson.TypeTimestamp {
		return
	}
	t, i, ok := v.TimestampOK()
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.doc != nil && (t < c.t || t == c.t && i <= c.i) {
		return
	}
	c.doc = append(bson.Raw(nil), doc...)
	c.t, c.i = t, i
}
