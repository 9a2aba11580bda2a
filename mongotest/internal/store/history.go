package store

import (
	"sort"
	"sync"
	"sync/atomic"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// Snapshot reads: every change to a document takes the next number of the
// store's write sequence; the caller (the server) marks the sequence with
// a cluster time after each write command (MarkTime), and a read at a
// cluster time reads at the sequence number its mark carries (SeqAt,
// Collection.At). Once history is on (EnableHistory), a record keeps its
// older versions and a deleted record stays in natural order for a while.
//
// Memory is bounded: the store keeps the last maxMarks marks; versions
// and deleted records older than the oldest mark are dropped, and a
// record keeps at most maxVersions older versions. A read older than what
// is kept fails with SnapshotTooOld (239), as mongod's does past its
// history window.

const (
	maxMarks    = 4096
	maxVersions = 16
)

// version is a document's content before the change numbered until.
type version struct {
	until uint64
	doc   bson.Raw
}

type mark struct{ t, seq uint64 }

type history struct {
	on  atomic.Bool
	seq atomic.Uint64

	mu    sync.Mutex
	marks []mark // by time, oldest first
	floor atomic.Uint64
}

// next numbers one change.
func (h *history) next() uint64 { return h.seq.Add(1) }

// EnableHistory starts keeping history; t is the current cluster time
// (see MarkTime), the oldest a snapshot read can ask for. Later calls do
// nothing.
func (s *Store) EnableHistory(t uint64) {
	h := &s.hist
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.on.Load() {
		return
	}
	seq := h.seq.Load()
	h.floor.Store(seq)
	h.marks = append(h.marks[:0], mark{t, seq})
	h.on.Store(true)
}

// HistoryOn reports whether EnableHistory was called.
func (s *Store) HistoryOn() bool { return s.hist.on.Load() }

// MarkTime records that the store's state as of now is its state at
// cluster time t. Times must be marked in nondecreasing order; marking
// the latest time again (changes made outside write commands) moves its
// mark, and a mark that would add nothing is not kept.
func (s *Store) MarkTime(t uint64) {
	h := &s.hist
	if !h.on.Load() {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	seq := h.seq.Load()
	if n := len(h.marks); n > 0 {
		last := &h.marks[n-1]
		if last.seq == seq {
			return
		}
		if last.t == t {
			last.seq = seq
			return
		}
	}
	h.marks = append(h.marks, mark{t, seq})
	if len(h.marks) > maxMarks {
		h.marks = append(h.marks[:0:0], h.marks[len(h.marks)-maxMarks/2:]...)
		h.floor.Store(h.marks[0].seq)
	}
}

// SeqAt returns the write sequence number a read at cluster time t reads
// at: that of the latest mark at or before t. A time older than the
// oldest mark kept fails with SnapshotTooOld.
func (s *Store) SeqAt(t uint64) (uint64, error) {
	h := &s.hist
	h.mu.Lock()
	defer h.mu.Unlock()
	i := sort.Search(len(h.marks), func(i int) bool { return h.marks[i].t > t }) - 1
	if !h.on.Load() || i < 0 {
		return 0, errTooOld(t)
	}
	return h.marks[i].seq, nil
}

func errTooOld(t uint64) error {
	return mongoerr.New(mongoerr.SnapshotTooOld, "Read timestamp Timestamp(%d, %d) is older than the oldest available timestamp.", t>>32, uint32(t))
}

// changedLocked records a change numbered seq to r, whose content was
// before (nil: r is new); c.mu is held for writing.
func (c *Collection) changedLocked(r *record, before bson.Raw, seq uint64) {
	h := c.hist
	if before == nil {
		r.born, r.since = seq, seq
		return
	}
	if h == nil || !h.on.Load() {
		r.since, r.trimmed = seq, seq
		return
	}
	floor := h.floor.Load()
	r.old = append(r.old, version{until: seq, doc: before})
	drop := 0
	for drop < len(r.old) && (r.old[drop].until <= floor || len(r.old)-drop > maxVersions) {
		r.trimmed = r.old[drop].until
		drop++
	}
	if drop > 0 {
		r.old = append(r.old[:0:0], r.old[drop:]...)
	}
	r.since = seq
}

// seqLocked numbers a change to c.
func (c *Collection) seqLocked() uint64 {
	if c.hist == nil {
		return 0
	}
	return c.hist.next()
}

// at returns r's content as of seq (nil: none); c.mu is held.
func (r *record) at(seq uint64, t uint64) (bson.Raw, error) {
	if r.born > seq {
		return nil, nil
	}
	if r.since <= seq {
		if d := r.doc.Load(); d != nil {
			return *d, nil
		}
		return nil, nil
	}
	if seq < r.trimmed {
		return nil, errTooOld(t)
	}
	for _, v := range r.old {
		if seq < v.until {
			return v.doc, nil
		}
	}
	return nil, nil
}

// At returns a read-only copy of c as it was at write sequence number seq
// (from SeqAt(t)): documents changed since are in their version at seq,
// those deleted since are present, those inserted since absent. Writes to
// the copy fail as on a dropped collection. Indexes are shared with c (for
// listing and hints). The copy costs one pointer per document.
func (c *Collection) At(seq, t uint64) (*Collection, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	f := &Collection{db: c.db, name: c.name, uuid: c.uuid, opts: c.opts, limit: c.limit,
		ids: make(map[string]*record), idColl: c.idColl, nextID: c.nextID, indexes: c.indexes,
		dropped: true, origin: c}
	for _, r := range c.recs[c.head:] {
		doc, err := r.at(seq, t)
		if err != nil {
			return nil, err
		}
		if doc == nil {
			continue
		}
		nr := &record{id: r.id, key: r.key, init: doc}
		nr.doc.Store(&nr.init)
		f.recs = append(f.recs, nr)
		f.ids[r.key] = nr
		f.live++
		f.bytes += int64(len(doc))
	}
	return f, nil
}

// Origin returns the collection a copy made by At was made from, or c.
func (c *Collection) Origin() *Collection {
	if c.origin != nil {
		return c.origin
	}
	return c
}
