package session

import (
	"errors"
	"sync"
	"time"

	"github.com/mongoscope/mongoscope/bson"
)

// Timestamp is a BSON timestamp: seconds and increment.
type Timestamp struct{ T, I uint32 }

// After tells whether ts is later than o.
func (ts Timestamp) After(o Timestamp) bool { return ts.T > o.T || ts.T == o.T && ts.I > o.I }

// IsZero tells whether ts is the zero timestamp (no time).
func (ts Timestamp) IsZero() bool { return ts.T == 0 && ts.I == 0 }

// Client is an explicit session's state (the driver-sessions
// specification's ClientSession): the server session, taken from the
// pool at its first use and given back when the session ends, and the
// session's own cluster and operation times. It is safe for concurrent
// use, though a session is meant for one goroutine at a time.
type Client struct {
	// Pool is the client's server-session pool the server session comes
	// from and goes back to.
	Pool *Pool
	// Owner identifies the client the session belongs to.
	Owner any
	// Causal is the causalConsistency option: reads and writes carry
	// readConcern.afterClusterTime once the session has an operationTime.
	Causal bool
	// Snapshot is the snapshot option: reads carry readConcern {level:
	// "snapshot", atClusterTime} once the first read has told the time.
	Snapshot bool
	// Implicit marks the implicit session of one operation that sends
	// several commands (a bulk write's batches and kinds): its commands
	// share its server session, taken after the first checkout, and a
	// connection without sessions sends none instead of failing. It is
	// neither causally consistent nor a snapshot session.
	Implicit bool

	mu          sync.Mutex
	server      *Server
	timeout     *time.Duration // the latest session timeout its commands saw
	ended       bool
	holds       int // the open cursors that use server
	clock       Clock
	opTime      Timestamp
	snapshot    Timestamp
	hasSnapshot bool
}

// ErrEnded is the cause of using a session after EndSession.
var ErrEnded = errors.New("the session has ended (EndSession was called)")

// Server returns the session's server session, taking one from the pool
// at the first call (timeout is the deployment's session timeout, as for
// Pool.Get). It fails once the session has ended.
func (c *Client) Server(timeout *time.Duration) (*Server, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return nil, ErrEnded
	}
	if c.server == nil {
		c.server = c.Pool.Get(timeout)
	}
	if timeout != nil {
		// The latest known timeout: one taken before any command (ID on
		// a new client) had none, and End's return to the pool needs it
		// for the expiry check.
		c.timeout = timeout
	}
	return c.server, nil
}

// Ended tells whether End was called.
func (c *Client) Ended() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ended
}

// End ends the session: its server session, if it took one, goes back to
// the pool (a dirty one is discarded there), at once or, while cursors
// opened in the session are still open, when the last of them lets go of
// it (Unhold): until then their getMores and killCursors carry its lsid,
// which no other session may use meanwhile. Calling it again does nothing.
func (c *Client) End() {
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return
	}
	c.ended = true
	s, t := c.server, c.timeout
	if c.holds > 0 {
		s = nil
	} else {
		c.server = nil
	}
	c.mu.Unlock()
	if s != nil {
		c.Pool.Put(s, t)
	}
}

// Hold records that a cursor opened in the session keeps using its server
// session; Unhold, when the cursor is closed or exhausted, lets go of it.
func (c *Client) Hold() {
	c.mu.Lock()
	c.holds++
	c.mu.Unlock()
}

// Unhold lets go of what Hold took: once the session has ended and no
// cursor holds its server session, the server session goes back to the
// pool.
func (c *Client) Unhold() {
	c.mu.Lock()
	if c.holds > 0 {
		c.holds--
	}
	var s *Server
	t := c.timeout
	if c.ended && c.holds == 0 && c.server != nil {
		s, c.server = c.server, nil
	}
	c.mu.Unlock()
	if s != nil {
		c.Pool.Put(s, t)
	}
}

// SetSnapshotTime sets a snapshot session's atClusterTime before its first
// read (SessionOptions.SnapshotTime).
func (c *Client) SetSnapshotTime(ts Timestamp) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.snapshot, c.hasSnapshot = ts, true
}

// Dirty tells whether the session's server session was marked dirty by a
// network error.
func (c *Client) Dirty() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.server != nil && c.server.Dirty
}

// ClusterTime returns the session's $clusterTime document, or nil.
func (c *Client) ClusterTime() bson.Raw { return c.clock.Get() }

// AdvanceClusterTime advances the session's cluster time to doc, a
// $clusterTime document, when it is greater (malformed ones are ignored).
func (c *Client) AdvanceClusterTime(doc bson.Raw) { c.clock.Advance(doc) }

// OperationTime returns the session's operation time; ok is false before
// any.
func (c *Client) OperationTime() (ts Timestamp, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.opTime, !c.opTime.IsZero()
}

// AdvanceOperationTime advances the session's operation time to ts when ts
// is later; it is not validated (causal-consistency specification).
func (c *Client) AdvanceOperationTime(ts Timestamp) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ts.After(c.opTime) {
		c.opTime = ts
	}
}

// SnapshotTime returns the snapshot session's atClusterTime; ok is false
// before the first read recorded it.
func (c *Client) SnapshotTime() (ts Timestamp, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.snapshot, c.hasSnapshot
}

// Observe records what a reply tells the session: its operationTime, its
// $clusterTime and, in a snapshot session whose time is not yet known,
// the atClusterTime of the first read (cursor.atClusterTime, or
// atClusterTime for distinct).
func (c *Client) Observe(reply bson.Raw) {
	if reply == nil {
		return
	}
	if v, err := reply.LookupErr("$clusterTime"); err == nil && v.Type == bson.TypeEmbeddedDocument {
		c.clock.Advance(v.Document())
	}
	if ts, ok := timestampAt(reply, "operationTime"); ok {
		c.AdvanceOperationTime(ts)
	}
	if !c.Snapshot {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hasSnapshot {
		return
	}
	ts, ok := timestampAt(reply, "cursor", "atClusterTime")
	if !ok {
		ts, ok = timestampAt(reply, "atClusterTime")
	}
	if ok {
		c.snapshot, c.hasSnapshot = ts, true
	}
}

// timestampAt reads the timestamp at path in doc.
func timestampAt(doc bson.Raw, path ...string) (Timestamp, bool) {
	v, err := doc.LookupErr(path...)
	if err != nil || v.Type != bson.TypeTimestamp {
		return Timestamp{}, false
	}
	t, i, ok := v.TimestampOK()
	return Timestamp{t, i}, ok
}

// GreaterClusterTime returns the greater of two $clusterTime documents
// (either may be nil), compared by their clusterTime alone.
func GreaterClusterTime(a, b bson.Raw) bson.Raw {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	ta, oka := timestampAt(a, "clusterTime")
	tb, okb := timestampAt(b, "clusterTime")
	if !okb || oka && !tb.After(ta) {
		return a
	}
	return b
}

// ReadConcern returns the readConcern a command in the session sends, given
// rc, the operation's own (nil: none): in a snapshot session {level:
// "snapshot"} with atClusterTime once known; in a causally consistent
// session rc with afterClusterTime once the session has an operationTime;
// otherwise rc. clusterTimes says the deployment supports cluster times
// (afterClusterTime is not sent otherwise).
//
// Which commands get it is the caller's (operation.Op.Causal): reads that
// take a read concern and the write commands. The seed text of the
// causal-consistency specification (/work/shared/seeds, the rendered book)
// still says "causally consistent read operations" only; the Markdown
// specification (changelog 2026-05-04) and its causal-consistency-write-
// commands.json tests require afterClusterTime on the write commands too,
// which this follows. The seed's snapshot-sessions text likewise predates
// SessionOptions.snapshotTime, which the Markdown and snapshot-sessions.json
// have.
func (c *Client) ReadConcern(rc bson.Raw, clusterTimes bool) bson.Raw {
	c.mu.Lock()
	snap, hasSnap, op := c.snapshot, c.hasSnapshot, c.opTime
	c.mu.Unlock()
	switch {
	case c.Snapshot:
		st, b := bson.AppendDocumentStart(make([]byte, 0, 48))
		b = bson.AppendStringElement(b, "level", "snapshot")
		if hasSnap {
			b = bson.AppendTimestampElement(b, "atClusterTime", snap.T, snap.I)
		}
		b, _ = bson.AppendDocumentEnd(b, st)
		return b
	case c.Causal && clusterTimes && !op.IsZero():
		st, b := bson.AppendDocumentStart(make([]byte, 0, len(rc)+32))
		if rc != nil {
			it := rc.Iter()
			for it.Next() {
				if it.Key() != "afterClusterTime" {
					b = bson.AppendValueElement(b, it.Key(), it.Value())
				}
			}
		}
		b = bson.AppendTimestampElement(b, "afterClusterTime", op.T, op.I)
		b, _ = bson.AppendDocumentEnd(b, st)
		return b
	}
	return rc
}
