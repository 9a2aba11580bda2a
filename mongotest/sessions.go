package mongotest

import (
	"context"
	"crypto/sha256"
	"slices"
	"sync"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/agg"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// sessionCache is mongod's logical session cache, as far as
// $listLocalSessions shows it: each session id a command carried (lsid),
// the digest of the user who used it, and when it was last used.
// endSessions removes sessions.
type sessionCache struct {
	mu sync.Mutex
	m  map[[16]byte]sessionRecord
}

type sessionRecord struct {
	uid     [32]byte
	user    string // "user@db", or "" without authentication
	lastUse time.Time
}

// userDigest is mongod's session uid: the SHA-256 of "user@db", or of
// the empty string without authentication.
func userDigest(user string) [32]byte { return sha256.Sum256([]byte(user)) }

func connUser(c *Conn) string {
	if us := c.Users(); len(us) > 0 {
		return us[0].User + "@" + us[0].DB
	}
	return ""
}

// lsidOf returns the 16-byte UUID of a session document {id: UUID}.
func lsidOf(v bson.RawValue) ([16]byte, bool) {
	var id [16]byte
	d, ok := v.DocumentOK()
	if !ok {
		return id, false
	}
	b, ok := d.Lookup("id").BinaryOK()
	if !ok || b.Subtype != 4 || len(b.Data) != 16 {
		return id, false
	}
	copy(id[:], b.Data)
	return id, true
}

// sessionTimeout is logicalSessionTimeoutMinutes, as hello reports it: a
// session unused for longer has expired.
const sessionTimeout = 30 * time.Minute

// sessionTTL is how long an unused session lives on s (tests shorten it).
func (s *Server) sessionTTL() time.Duration {
	if s.sessionTimeout > 0 {
		return s.sessionTimeout
	}
	return sessionTimeout
}

// touchSession records the session r carries, if any.
func (s *Server) touchSession(c *Conn, r *Request) {
	v, err := r.Body.LookupErr("lsid")
	if err != nil {
		return
	}
	id, ok := lsidOf(v)
	if !ok {
		return
	}
	s.useSession(id, connUser(c))
}

// useSession marks session id used now by user. A session that had
// expired is a new one: its retryable-write record is forgotten, as
// mongod reaps the transaction records of expired sessions.
func (s *Server) useSession(id [16]byte, user string) {
	now := time.Now()
	s.sessions.mu.Lock()
	if s.sessions.m == nil {
		s.sessions.m = map[[16]byte]sessionRecord{}
	}
	prev, had := s.sessions.m[id]
	s.sessions.m[id] = sessionRecord{uid: userDigest(user), user: user, lastUse: now}
	s.sessions.mu.Unlock()
	if had && now.Sub(prev.lastUse) > s.sessionTTL() {
		s.retries.forget(string(id[:]))
	}
}

// refreshSessionsCmd is {refreshSessions: [{id}, ...]}: each session is
// marked used now, so it does not expire.
func refreshSessionsCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	v := r.Body.Lookup("refreshSessions")
	arr, ok := v.ArrayOK()
	if !ok {
		return nil, newError(mongoerr.TypeMismatch, "BSON field 'refreshSessions' is the wrong type '%s', expected type 'array'", typeName(v.Type))
	}
	user := connUser(r.Conn)
	it := arr.Iter()
	var ids [][16]byte
	for it.Next() {
		id, ok := lsidOf(it.Value())
		if !ok {
			return nil, newError(mongoerr.TypeMismatch, "each element of refreshSessions must be a session id {id: UUID}")
		}
		ids = append(ids, id)
	}
	for _, id := range ids {
		s.useSession(id, user)
	}
	return nil, nil
}

// endSessions forgets the sessions listed in ids.
func (s *Server) endSessions(ids bson.Raw) {
	it := ids.Iter()
	s.sessions.mu.Lock()
	defer s.sessions.mu.Unlock()
	for it.Next() {
		if id, ok := lsidOf(it.Value()); ok {
			delete(s.sessions.m, id)
		}
	}
}

// listLocalSessionsAggregate runs a pipeline that starts with
// $listLocalSessions: the sessions of the connection's user, of the users
// named in users, or, with allUsers, every session.
func (s *Server) listLocalSessionsAggregate(r *Request, stages []bson.Raw, batchSize int64) (bson.Raw, error) {
	opts, ok := stages[0].Lookup("$listLocalSessions").DocumentOK()
	if !ok {
		return nil, newError(mongoerr.TypeMismatch, "$listLocalSessions options must be specified in an object")
	}
	if err := checkSubArgs(opts, "$listLocalSessions", fieldSet("allUsers", "users")); err != nil {
		return nil, err
	}
	all, err := boolArg(opts, "allUsers", "$listLocalSessions")
	if err != nil {
		return nil, err
	}
	want := map[[32]byte]bool{userDigest(connUser(r.Conn)): true}
	if v, err := opts.LookupErr("users"); err == nil {
		if all {
			return nil, newError(mongoerr.FailedToParse, "$listLocalSessions with allUsers: true cannot specify users")
		}
		arr, ok := v.ArrayOK()
		if !ok {
			return nil, newError(mongoerr.TypeMismatch, "BSON field '$listLocalSessions.users' is the wrong type '%s', expected type 'array'", typeName(v.Type))
		}
		want = map[[32]byte]bool{}
		it := arr.Iter()
		for it.Next() {
			d, ok := it.Value().DocumentOK()
			u, uok := d.Lookup("user").StringValueOK()
			db, dok := d.Lookup("db").StringValueOK()
			if !ok || !uok || !dok {
				return nil, newError(mongoerr.TypeMismatch, "each element of $listLocalSessions.users must be {user, db}")
			}
			want[userDigest(u+"@"+db)] = true
		}
	}
	p, err := agg.Compile(stages[1:], agg.Options{DB: r.DB, Out: s.writeOut})
	if err != nil {
		return nil, err
	}
	if p.HasOut() {
		return nil, newError(mongoerr.NotImplemented, "mongotest does not support $out or $merge after $listLocalSessions")
	}
	type entry struct {
		id  [16]byte
		rec sessionRecord
	}
	var entries []entry
	expired := time.Now().Add(-s.sessionTTL())
	var gone [][16]byte
	s.sessions.mu.Lock()
	for id, rec := range s.sessions.m {
		if rec.lastUse.Before(expired) {
			delete(s.sessions.m, id)
			gone = append(gone, id)
			continue
		}
		if all || want[rec.uid] {
			entries = append(entries, entry{id, rec})
		}
	}
	s.sessions.mu.Unlock()
	for _, id := range gone {
		s.retries.forget(string(id[:]))
	}
	slices.SortFunc(entries, func(a, b entry) int { return a.rec.lastUse.Compare(b.rec.lastUse) })
	docs := make([]bson.Raw, 0, len(entries))
	for _, e := range entries {
		start, dst := bson.AppendDocumentStart(nil)
		is, d2 := bson.AppendDocumentElementStart(dst, "_id")
		d2 = bson.AppendBinaryElement(d2, "id", 4, e.id[:])
		d2 = bson.AppendBinaryElement(d2, "uid", 0, e.rec.uid[:])
		dst, _ = bson.AppendDocumentEnd(d2, is)
		dst = bson.AppendDateTimeElement(dst, "lastUse", e.rec.lastUse.UnixMilli())
		if e.rec.user != "" {
			us, d3 := bson.AppendDocumentElementStart(dst, "user")
			d3 = bson.AppendStringElement(d3, "name", e.rec.user)
			dst, _ = bson.AppendDocumentEnd(d3, us)
		}
		dst, _ = bson.AppendDocumentEnd(dst, start)
		docs = append(docs, dst)
	}
	out, err := p.Run(func(yield func(bson.Raw) bool) {
		for _, d := range docs {
			if !yield(d) {
				return
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return s.firstBatch(&cursor{ns: r.DB + ".$cmd.aggregate", docs: out}, batchSize, false)
}
