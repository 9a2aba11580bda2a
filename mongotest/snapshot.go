package mongotest

import (
	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
	"github.com/mongoscope/mongoscope/mongotest/internal/store"
)

// Snapshot reads: readConcern {level: "snapshot"} with or without
// atClusterTime, outside transactions, as mongod 5.0 and later serve them
// on replica-set members (and mongos). The store numbers every change and
// keeps older versions of documents for a bounded window
// (internal/store/history.go); each write command marks the store with its
// cluster time. A snapshot read runs on a copy of each collection it reads
// as of its time, so a cursor's getMore keeps reading at that time.

// snapRead is the point in time a snapshot read reads at.
type snapRead struct {
	ts    bson.Timestamp
	seq   uint64 // the store's write sequence number at ts
	reply bool   // the request had no atClusterTime: the reply names ts
}

// snapshotCommands take readConcern level snapshot outside transactions
// (getMore continues a snapshot cursor at its time).
var snapshotCommands = map[string]bool{"find": true, "aggregate": true, "distinct": true, "getMore": true}

func clusterTimeKey(ts bson.Timestamp) uint64 { return uint64(ts.T)<<32 | uint64(ts.I) }

// startSnapshotRead checks a request's snapshot readConcern and sets the
// time it reads at in r.snap.
func (s *Server) startSnapshotRead(r *Request, readConcern bson.RawValue) error {
	rc, ok := readConcern.DocumentOK()
	if !ok {
		return nil
	}
	level, _ := rc.Lookup("level").StringValueOK()
	at, atErr := rc.LookupErr("atClusterTime")
	if atErr == nil {
		if _, err := rc.LookupErr("afterClusterTime"); err == nil {
			return newError(mongoerr.InvalidOptions, "Specifying a timestamp for readConcern snapshot in a causally consistent session is not allowed: both atClusterTime and afterClusterTime were given")
		}
		if level != "snapshot" {
			return newError(mongoerr.InvalidOptions, "readConcern atClusterTime is only valid with readConcern level snapshot")
		}
	}
	if level != "snapshot" {
		return nil
	}
	if !s.gossips() {
		return newError(mongoerr.NotAReplicaSet, "node needs to be a replica set member to use readConcern: snapshot")
	}
	if !snapshotCommands[r.Name] || (r.Name == "aggregate" && writes(r)) {
		return newError(mongoerr.InvalidOptions, "Command %s does not support readConcern level snapshot outside transactions", r.Name)
	}
	if r.Name == "getMore" {
		return nil // the cursor reads at its own time
	}
	if name, ok := r.Body.Lookup(r.Name).StringValueOK(); ok && s.store.View(r.DB, name) != nil {
		return newError(mongoerr.NotImplemented, "mongotest does not support readConcern level snapshot on a view (%s.%s)", r.DB, name)
	}
	now := s.clock.now()
	if atErr != nil {
		now = s.clock.markNow(s.store)
	}
	sn := &snapRead{ts: now, reply: atErr != nil}
	if atErr == nil {
		t, i, ok := at.TimestampOK()
		if !ok {
			return newError(mongoerr.TypeMismatch, "BSON field 'readConcern.atClusterTime' is the wrong type '%s', expected type 'timestamp'", typeName(at.Type))
		}
		sn.ts = bson.Timestamp{T: t, I: i}
		if clusterTimeKey(sn.ts) > clusterTimeKey(now) {
			return newError(mongoerr.InvalidOptions, "readConcern atClusterTime value must not be greater than the current clusterTime. Requested clusterTime: Timestamp(%d, %d); current clusterTime: Timestamp(%d, %d)", t, i, now.T, now.I)
		}
	}
	seq, err := s.store.SeqAt(clusterTimeKey(sn.ts))
	if err != nil {
		return err
	}
	sn.seq = seq
	r.snap = sn
	return nil
}

// of returns c as the snapshot read sees it.
func (sn *snapRead) of(c *store.Collection) (*store.Collection, error) {
	if sn == nil || c == nil {
		return c, nil
	}
	if c.Capped() {
		return nil, newError(mongoerr.SnapshotUnavailable, "Reading from capped collections with readConcern snapshot is not supported")
	}
	return c.At(sn.seq, clusterTimeKey(sn.ts))
}

// readCollection is s.store.Collection(db, name) as r reads it: at its
// snapshot's time for a snapshot read.
func (s *Server) readCollection(r *Request, db, name string) (*store.Collection, error) {
	c := s.store.Collection(db, name)
	if r == nil {
		return c, nil
	}
	return r.snap.of(c)
}

// withAtClusterTime adds the snapshot's time to a snapshot read's reply
// when the request did not name one: in the cursor document for find and
// aggregate, at the top level for distinct, as mongod does.
func withAtClusterTime(r *Request, reply bson.Raw) bson.Raw {
	if r.snap == nil || !r.snap.reply || reply == nil {
		return reply
	}
	start, dst := bson.AppendDocumentStart(make([]byte, 0, len(reply)+32))
	it := reply.Iter()
	for it.Next() {
		k := it.Key()
		v := it.Value()
		if k == "cursor" && r.Name != "distinct" {
			if cur, ok := v.DocumentOK(); ok {
				cs, cb := bson.AppendDocumentElementStart(dst, "cursor")
				cit := cur.Iter()
				for cit.Next() {
					cb = bson.AppendValueElement(cb, cit.Key(), cit.Value())
				}
				cb = bson.AppendTimestampElement(cb, "atClusterTime", r.snap.ts.T, r.snap.ts.I)
				dst, _ = bson.AppendDocumentEnd(cb, cs)
				continue
			}
		}
		dst = bson.AppendValueElement(dst, k, v)
	}
	if r.Name == "distinct" {
		dst = bson.AppendTimestampElement(dst, "atClusterTime", r.snap.ts.T, r.snap.ts.I)
	}
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst
}
