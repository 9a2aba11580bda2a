package driver

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/operation"
	"github.com/mongoscope/mongoscope/driver/internal/session"
)

// SessionOptions are the options of StartSession. The zero value (like
// nil) starts a causally consistent session.
type SessionOptions struct {
	// CausalConsistency makes the session's reads see its own earlier
	// writes and reads (readConcern.afterClusterTime): true by default,
	// false by default in a snapshot session. Causally consistent
	// operations are not causally consistent with unacknowledged writes,
	// which get no operationTime back.
	CausalConsistency *bool
	// Snapshot makes every read in the session read from the same
	// snapshot (readConcern {level: "snapshot", atClusterTime}), the one
	// the first read saw, or SnapshotTime when set. It needs MongoDB 5.0
	// or later, and cannot be combined with CausalConsistency true.
	Snapshot *bool
	// SnapshotTime is the snapshot a snapshot session reads from, instead
	// of the one its first read sees (e.g. another snapshot session's
	// SnapshotTime). Only with Snapshot.
	SnapshotTime *bson.Timestamp
	// DefaultReadConcern, DefaultWriteConcern and DefaultReadPreference are
	// the defaults of the session's transactions (the driver-sessions
	// specification's defaultTransactionOptions). The driver has no
	// transactions yet: they are checked and kept, and change nothing
	// else, as the specification says of operations outside a
	// transaction.
	DefaultReadConcern    *ReadConcern
	DefaultWriteConcern   *WriteConcern
	DefaultReadPreference *ReadPreference
	// DefaultTimeout is the session's defaultTimeoutMS (client-side
	// operations timeout): the timeoutMS of its commitTransaction,
	// abortTransaction, withTransaction and endSession; nil inherits the
	// client's, 0 means no limit, negative is an *ArgumentError. The
	// driver has no transactions yet, so it is checked and kept.
	DefaultTimeout *time.Duration
}

// Session is an explicit client session: the operations whose context
// carries it (NewSessionContext) run in it, with its logical session id
// (lsid) and, when causally consistent, each read after the session's
// last operation. A Session is for one goroutine at a time; end it with
// EndSession, which gives its server session back to the client for
// reuse.
type Session struct {
	client *Client
	s      *session.Client
	opts   SessionOptions
}

// Errors of the misuse of a session, found before anything is sent; an
// operation's error wraps them (errors.Is).
var (
	// ErrSessionEnded: the session was used after EndSession.
	ErrSessionEnded = errors.New("driver: the session has ended (EndSession was called)")
	// ErrSessionOtherClient: the session was started by another client.
	ErrSessionOtherClient = errors.New("driver: the session belongs to another client")
	// ErrSessionUnacknowledged: an unacknowledged write (w: 0) in an
	// explicit session, which the driver-sessions specification forbids.
	ErrSessionUnacknowledged = errors.New("driver: an unacknowledged write (w: 0) cannot run in an explicit session")
	// ErrSessionsNotSupported: the server the operation's connection
	// reached does not support sessions (its handshake reported no
	// logicalSessionTimeoutMinutes). It is reported at the session's use,
	// never by StartSession.
	ErrSessionsNotSupported = errors.New("driver: sessions are not supported by this deployment")
	// ErrSnapshotNotSupported: a snapshot session's operation on a server
	// older than MongoDB 5.0.
	ErrSnapshotNotSupported = errors.New("driver: Snapshot reads require MongoDB 5.0 or later")
	// ErrNoSnapshotTime: SnapshotTime in a session that has none.
	ErrNoSnapshotTime = errors.New("driver: the session has no snapshot time")
)

// SessionError is the misuse of a session in an operation (Op), found
// before anything is sent; Err is one of the ErrSession... errors.
type SessionError struct {
	Op  string
	Err error
}

func (e *SessionError) Error() string { return fmt.Sprintf("%s: %v", e.Op, e.Err) }

// Unwrap returns the cause.
func (e *SessionError) Unwrap() error { return e.Err }

// StartSession starts an explicit session. It sends nothing: the session
// takes a server session from the client's pool at its first operation.
// Snapshot together with CausalConsistency true is an *ArgumentError.
func (c *Client) StartSession(opts *SessionOptions) (*Session, error) {
	if err := c.live(); err != nil {
		return nil, err
	}
	// A deep copy: the caller's pointers cannot change the session later.
	o := opts.clone()
	snapshot := o.Snapshot != nil && *o.Snapshot
	causal := !snapshot
	if o.CausalConsistency != nil {
		if *o.CausalConsistency && snapshot {
			return nil, &ArgumentError{Argument: "SessionOptions.CausalConsistency",
				Reason: "a session cannot be both causally consistent and a snapshot session"}
		}
		causal = *o.CausalConsistency
	}
	if o.DefaultTimeout != nil && *o.DefaultTimeout < 0 {
		return nil, &ArgumentError{Argument: "SessionOptions.DefaultTimeout", Reason: fmt.Sprintf("defaultTimeoutMS must not be negative, got %v", *o.DefaultTimeout)}
	}
	if o.SnapshotTime != nil && !snapshot {
		return nil, &ArgumentError{Argument: "SessionOptions.SnapshotTime", Reason: "only a snapshot session (Snapshot: true) takes a snapshot time"}
	}
	if _, err := (concerns{}).with("SessionOptions", o.DefaultReadConcern, o.DefaultWriteConcern, o.DefaultReadPreference); err != nil {
		return nil, err
	}
	s := &session.Client{Pool: c.sessions, Owner: c, Causal: causal, Snapshot: snapshot}
	if o.SnapshotTime != nil {
		s.SetSnapshotTime(session.Timestamp{T: o.SnapshotTime.T, I: o.SnapshotTime.I})
	}
	return &Session{client: c, s: s, opts: o}, nil
}

// EndSession ends the session: its server session goes back to the
// client's pool (one that a network error hit is discarded instead), and
// any later use of the session fails with ErrSessionEnded. Ending a session
// twice is harmless. Cursors opened in the session should be closed first:
// a cursor still open keeps the server session (no other session gets it
// meanwhile), its next getMore fails with ErrSessionEnded, and closing it
// kills it on the server and gives the server session back.
func (s *Session) EndSession(ctx context.Context) { s.s.End() }

// ID returns a copy of the session's logical session id, the lsid
// document {id: UUID} its commands carry. It takes the session's server
// session from the pool if no operation has yet; nil once the session has
// ended without one.
// A pooled server session may have as little as a minute left before the
// server forgets it: a session whose first operation comes more than a
// minute after its ID risks errors from the server session having gone
// stale (its later operations each keep it alive).
func (s *Session) ID() bson.Raw {
	srv, err := s.s.Server(s.client.exec.SessionTimeout())
	if err != nil {
		return nil
	}
	return append(bson.Raw(nil), srv.LSID...) // the caller's copy
}

// Client returns the client that started the session.
func (s *Session) Client() *Client { return s.client }

// Options returns a copy of the options the session was started with
// (changing it changes nothing in the session).
func (s *Session) Options() SessionOptions { return s.opts.clone() }

// clone returns a deep copy of o (the zero value for nil), so that the
// options of a session cannot change after StartSession.
func (o *SessionOptions) clone() SessionOptions {
	if o == nil {
		return SessionOptions{}
	}
	c := SessionOptions{
		CausalConsistency: clonePtr(o.CausalConsistency), Snapshot: clonePtr(o.Snapshot),
		SnapshotTime: clonePtr(o.SnapshotTime), DefaultReadConcern: clonePtr(o.DefaultReadConcern),
		DefaultTimeout: clonePtr(o.DefaultTimeout),
	}
	if wc := o.DefaultWriteConcern; wc != nil {
		c.DefaultWriteConcern = &WriteConcern{W: clonePtr(wc.W), Journal: clonePtr(wc.Journal), WTimeout: wc.WTimeout}
	}
	if rp := o.DefaultReadPreference; rp != nil {
		c.DefaultReadPreference = &ReadPreference{Mode: rp.Mode, MaxStaleness: clonePtr(rp.MaxStaleness)}
		if rp.Tags != nil {
			c.DefaultReadPreference.Tags = make([]map[string]string, len(rp.Tags))
			for i, m := range rp.Tags {
				c.DefaultReadPreference.Tags[i] = maps.Clone(m)
			}
		}
	}
	return c
}

// clonePtr returns a pointer to a copy of *p, or nil.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// CausalConsistency tells whether the session is causally consistent.
func (s *Session) CausalConsistency() bool { return s.s.Causal }

// Snapshot tells whether the session is a snapshot session.
func (s *Session) Snapshot() bool { return s.s.Snapshot }

// ClusterTime returns the session's cluster time, the greatest
// $clusterTime document its operations saw or AdvanceClusterTime gave, or
// nil before any. It is a copy.
func (s *Session) ClusterTime() bson.Raw {
	if ct := s.s.ClusterTime(); ct != nil {
		return append(bson.Raw(nil), ct...) // the caller's copy
	}
	return nil
}

// AdvanceClusterTime advances the session's cluster time to ct, a
// $clusterTime document ({clusterTime: Timestamp, signature: {...}}) such
// as another session's ClusterTime, when it is greater. It is an
// *ArgumentError when ct has no timestamp clusterTime. The client's own
// cluster time is not changed.
func (s *Session) AdvanceClusterTime(ct bson.Raw) error {
	v, err := ct.LookupErr("clusterTime")
	if err != nil || v.Type != bson.TypeTimestamp {
		return &ArgumentError{Argument: "clusterTime", Reason: "not a $clusterTime document with a timestamp clusterTime"}
	}
	s.s.AdvanceClusterTime(ct)
	return nil
}

// OperationTime returns the operationTime of the session's last
// operation (or what AdvanceOperationTime gave); nil before any, and
// always on a standalone server, which reports none.
func (s *Session) OperationTime() *bson.Timestamp {
	ts, ok := s.s.OperationTime()
	if !ok {
		return nil
	}
	return &bson.Timestamp{T: ts.T, I: ts.I}
}

// AdvanceOperationTime advances the session's operation time to ts when ts
// is later; it is not validated (the causal-consistency specification).
func (s *Session) AdvanceOperationTime(ts bson.Timestamp) {
	s.s.AdvanceOperationTime(session.Timestamp{T: ts.T, I: ts.I})
}

// SnapshotTime returns the snapshot a snapshot session reads from: the
// atClusterTime its first read saw, or SessionOptions.SnapshotTime. It is
// a *SessionError (ErrNoSnapshotTime) in a session that is not a snapshot
// session, and before a snapshot session's first read.
func (s *Session) SnapshotTime() (bson.Timestamp, error) {
	if !s.s.Snapshot {
		return bson.Timestamp{}, &SessionError{Op: "SnapshotTime", Err: fmt.Errorf("%w: not a snapshot session", ErrNoSnapshotTime)}
	}
	ts, ok := s.s.SnapshotTime()
	if !ok {
		return bson.Timestamp{}, &SessionError{Op: "SnapshotTime", Err: fmt.Errorf("%w yet: no read has run in the session", ErrNoSnapshotTime)}
	}
	return bson.Timestamp{T: ts.T, I: ts.I}, nil
}

// Dirty tells whether a network error hit a command of the session, so
// that its server session is discarded rather than reused when the session
// ends.
func (s *Session) Dirty() bool { return s.s.Dirty() }

// sessionKey is the context key of the session.
type sessionKey struct{}

// NewSessionContext returns a copy of ctx that carries sess: each
// operation run with it (or a context derived from it) runs in sess. A nil
// sess returns ctx.
func NewSessionContext(ctx context.Context, sess *Session) context.Context {
	if sess == nil {
		return ctx
	}
	return context.WithValue(ctx, sessionKey{}, sess)
}

// SessionFromContext returns the session ctx carries, or nil.
func SessionFromContext(ctx context.Context) *Session {
	s, _ := ctx.Value(sessionKey{}).(*Session)
	return s
}

// UseSession starts a session with default options, calls fn with a
// context that carries it, and ends the session when fn returns, giving
// back fn's error.
func (c *Client) UseSession(ctx context.Context, fn func(ctx context.Context) error) error {
	return c.UseSessionWithOptions(ctx, nil, fn)
}

// UseSessionWithOptions is UseSession with the session's options.
func (c *Client) UseSessionWithOptions(ctx context.Context, opts *SessionOptions, fn func(ctx context.Context) error) error {
	s, err := c.StartSession(opts)
	if err != nil {
		return err
	}
	defer s.EndSession(ctx)
	return fn(NewSessionContext(ctx, s))
}

// withSession puts the session of ctx, if any, on op, after checking that
// it can run there: an error is a *SessionError, before anything is sent.
func (c *Client) withSession(ctx context.Context, op *operation.Op) error {
	if op.Session != nil || op.Binding != nil {
		return nil
	}
	s := SessionFromContext(ctx)
	if s == nil {
		return nil
	}
	switch {
	case s.client != c:
		return &SessionError{Op: op.Name, Err: ErrSessionOtherClient}
	case s.s.Ended():
		return &SessionError{Op: op.Name, Err: ErrSessionEnded}
	case op.Unacknowledged || op.NoSession && op.WriteConcern != nil:
		// (NoSession with a write concern: an aggregate writing under w: 0.)
		return &SessionError{Op: op.Name, Err: ErrSessionUnacknowledged}
	}
	op.Session = s.s
	return nil
}

// shareImplicitSession gives op, the base of a write that sends several
// commands, one implicit session for all of them, when ctx carries no
// explicit session: the driver-sessions specification runs an operation
// without a session "as if a new ClientSession was started just for this
// one operation", a dirty one included until it ends. An unacknowledged
// write takes none. end ends it (its server session goes back to the
// pool, or is discarded when dirty).
func (c *Client) shareImplicitSession(ctx context.Context, op *operation.Op) (end func()) {
	if SessionFromContext(ctx) != nil || op.Session != nil || op.Unacknowledged || op.NoSession {
		return func() {}
	}
	s := &session.Client{Pool: c.sessions, Owner: c, Implicit: true}
	op.Session = s
	return s.End
}

// sessionError converts the executor's session errors.
func sessionError(op string, err error) (error, bool) {
	switch err {
	case session.ErrEnded:
		return &SessionError{Op: op, Err: ErrSessionEnded}, true
	case operation.ErrSessionsNotSupported:
		return &SessionError{Op: op, Err: ErrSessionsNotSupported}, true
	case operation.ErrSnapshotNotSupported:
		return &SessionError{Op: op, Err: ErrSnapshotNotSupported}, true
	}
	return nil, false
}
