package mongotest

import (
	"encoding/hex"
	"runtime"
	"sync"
	"weak"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
	"github.com/mongoscope/mongoscope/mongotest/internal/store"
)

// Retryable writes: mongod remembers, per session, the statements of the
// newest txnNumber that committed, so a retry skips them and reports them
// as done; a retry never applies a statement twice. mongotest keeps the
// same per-statement record, in memory, for every server over one store
// (a replica set's members), as mongod replicates it with the oplog.

// maxRetrySessions bounds the table; mongod expires idle sessions after
// logicalSessionTimeoutMinutes instead.
const maxRetrySessions = 10_000

type retryTable struct {
	mu       sync.Mutex
	sessions map[string]*retrySession
}

// retrySession is one logical session's retryable-write state. Its mutex
// is held while a write of the session runs, as mongod checks a session
// out for the duration of a command.
type retrySession struct {
	mu   sync.Mutex
	txn  int64
	busy int // holders and waiters; a busy session is never evicted
	// stmts are the committed statements of txn, by statement index.
	stmts map[int]stmtResult
	// reply is a whole recorded reply (findAndModify), nil when none.
	reply bson.Raw
}

// stmtResult is what one committed statement contributed to its reply.
type stmtResult struct {
	n, nModified int64
	upserted     bson.RawValue // the upserted _id, or the zero value
}

// storeShared is the state every server built over one store shares, as
// a replica set's members share it through replication: the
// retryable-write table and the cluster clock.
type storeShared struct {
	retries retryTable
	clock   clusterClock
}

var (
	sharedMu sync.Mutex
	shared   = map[weak.Pointer[store.Store]]*storeShared{}
)

// sharedFor returns the shared state of st, shared by every server built
// over it. The entry goes away with the store.
func sharedFor(st *store.Store) *storeShared {
	key := weak.Make(st)
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if t := shared[key]; t != nil {
		return t
	}
	t := &storeShared{retries: retryTable{sessions: map[string]*retrySession{}}}
	shared[key] = t
	runtime.AddCleanup(st, func(k weak.Pointer[store.Store]) {
		sharedMu.Lock()
		delete(shared, k)
		sharedMu.Unlock()
	}, key)
	return t
}

// retryable is a retryable write in progress: the session, checked out.
type retryable struct {
	t    *retryTable
	sess *retrySession
	txn  int64
}

// beginRetryable checks a write's session out when it carries lsid and
// txnNumber, and returns nil for any other write. The caller must call
// end. Transactions (startTransaction, autocommit) are refused by the
// argument check before this runs.
func (s *Server) beginRetryable(r *Request) (*retryable, error) {
	tv, err := r.Body.LookupErr("txnNumber")
	if err != nil {
		return nil, nil
	}
	txn, ok := tv.Int64OK()
	if !ok {
		return nil, newError(mongoerr.TypeMismatch, "BSON field 'txnNumber' is the wrong type '%s', expected type 'long'", typeName(tv.Type))
	}
	if txn < 0 {
		return nil, newError(mongoerr.BadValue, "TxnNumber cannot be negative")
	}
	lsid, ok := r.Body.Lookup("lsid").DocumentOK()
	if !ok {
		return nil, newError(mongoerr.InvalidOptions, "Transaction number requires a session ID to also be specified")
	}
	id, ok := lsid.Lookup("id").BinaryOK()
	if !ok {
		return nil, newError(mongoerr.TypeMismatch, "lsid.id must be binary data (a UUID)")
	}
	switch s.role() {
	case RoleStandalone:
		return nil, newError(mongoerr.IllegalOperation, "Transaction numbers are only allowed on a replica set member or mongos")
	}
	key := string(id.Data)
	t := s.retries
	t.mu.Lock()
	sess := t.sessions[key]
	if sess == nil {
		if len(t.sessions) >= maxRetrySessions {
			t.evictLocked()
		}
		sess = &retrySession{txn: -1}
		t.sessions[key] = sess
	}
	sess.busy++
	t.mu.Unlock()
	sess.mu.Lock()
	rt := &retryable{t: t, sess: sess, txn: txn}
	switch {
	case txn < sess.txn:
		err := newError(mongoerr.TransactionTooOld, "Retryable write with txnNumber %d is prohibited on session %s because a newer retryable write with txnNumber %d has already started on this session.", txn, hex.EncodeToString(id.Data), sess.txn)
		rt.end()
		return nil, err
	case txn > sess.txn:
		sess.txn, sess.stmts, sess.reply = txn, map[int]stmtResult{}, nil
	}
	return rt, nil
}

// forget drops the record of session key, unless a write of it is running.
func (t *retryTable) forget(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if sess := t.sessions[key]; sess != nil && sess.busy == 0 {
		delete(t.sessions, key)
	}
}

// evictLocked drops one idle session to make room.
func (t *retryTable) evictLocked() {
	for k, s := range t.sessions {
		if s.busy == 0 {
			delete(t.sessions, k)
			return
		}
	}
}

// end checks the session back in.
func (rt *retryable) end() {
	if rt == nil {
		return
	}
	rt.sess.mu.Unlock()
	rt.t.mu.Lock()
	rt.sess.busy--
	rt.t.mu.Unlock()
}

// done returns the recorded result of statement i, if it committed before.
func (rt *retryable) done(i int) (stmtResult, bool) {
	if rt == nil {
		return stmtResult{}, false
	}
	res, ok := rt.sess.stmts[i]
	return res, ok
}

// record remembers that statement i committed with res.
func (rt *retryable) record(i int, res stmtResult) {
	if rt == nil {
		return
	}
	if res.upserted.Type != 0 {
		res.upserted = valueCopy(res.upserted)
	}
	rt.sess.stmts[i] = res
}

// txnWriteFault is what the onPrimaryTransactionalWrite fail point asks
// for after a write: close the connection (data.closeConnection, true
// unless given false) and/or fail the write so it is not reflected
// (data.failBeforeCommitExceptionCode).
type txnWriteFault struct {
	close    bool
	failCode int32
}

// txnWriteFault evaluates onPrimaryTransactionalWrite for a retryable
// write that has just written, as mongod does when the write commits; nil
// means carry on.
func (s *Server) txnWriteFault(rt *retryable) *txnWriteFault {
	if rt == nil {
		return nil
	}
	data, hit := s.failpointHit(OnPrimaryTransactionalWrite)
	if !hit {
		return nil
	}
	f := &txnWriteFault{close: true}
	if v, err := data.LookupErr("closeConnection"); err == nil {
		if b, ok := v.BooleanOK(); ok {
			f.close = b
		}
	}
	if v, err := data.LookupErr("failBeforeCommitExceptionCode"); err == nil {
		if n, ok := v.AsInt64OK(); ok && n == int64(int32(n)) && n != 0 {
			f.failCode = int32(n)
		}
	}
	return f
}

// outcome is the error a fault ends the command with: closing the
// connection, or the fail point's error code.
func (f *txnWriteFault) outcome() error {
	if f.close {
		return errClose("closed by the onPrimaryTransactionalWrite fail point")
	}
	return newError(f.failCode, "Failing write due to the onPrimaryTransactionalWrite fail point. The write must not be reflected.")
}
