package mongotest

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
	"github.com/mongoscope/mongoscope/mongotest/internal/query"
	"github.com/mongoscope/mongoscope/mongotest/internal/store"
)

const (
	codeCursorInUse     = 292
	codeQueryPlanKilled = 175
	// defaultFirstBatch is mongod's first-batch size when the command
	// gives none.
	defaultFirstBatch = 101
	// maxBatchBytes is mongod's cap on the documents of one batch.
	maxBatchBytes = MaxBSONObjectSize
	// defaultAwaitTime is how long an awaitData getMore waits without
	// maxTimeMS, as mongod.
	defaultAwaitTime = time.Second
)

// cursor is a server-side cursor: either a list of documents computed up
// front (sorted results, listCollections) or a resumable scan of a
// collection in natural order (which is what makes tailable cursors
// possible).
type cursor struct {
	id     int64
	ns     string // "db.coll", which getMore's collection must name
	inUse  bool   // checked out by a getMore
	docs   []bson.Raw
	pos    int
	scan   *scanState
	killed bool
}

// scanState resumes a collection scan after the last record it visited.
type scanState struct {
	c         *store.Collection
	m         *query.Matcher
	proj      *query.Projection
	last      store.RecordID
	skip      int64
	limit     int64 // documents still to return; 0 means no limit
	limited   bool
	tailable  bool
	awaitData bool
	// find's returnKey (what each result becomes) and showRecordId
	// (each result gets $recordId).
	keys         keyMode
	showRecordID bool
}

type cursorTable struct {
	mu sync.Mutex
	m  map[int64]*cursor
}

// add registers c under a new random id, as mongod's ids are.
func (t *cursorTable) add(c *cursor) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[int64]*cursor{}
	}
	for {
		id := rand.Int64()
		if id == 0 || t.m[id] != nil {
			continue
		}
		c.id = id
		t.m[id] = c
		return id
	}
}

// checkout takes cursor id for a getMore on namespace ns.
func (t *cursorTable) checkout(id int64, ns string) (*cursor, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.m[id]
	if c == nil {
		return nil, newError(mongoerr.CursorNotFound, "cursor id %d not found", id)
	}
	if c.ns != ns {
		return nil, newError(mongoerr.Unauthorized, "Requested getMore on namespace '%s', but cursor belongs to a different namespace %s", ns, c.ns)
	}
	if c.inUse {
		return nil, newError(codeCursorInUse, "cursor id %d is already in use", id)
	}
	c.inUse = true
	return c, nil
}

// checkin returns a cursor after a getMore; a finished one is removed.
func (t *cursorTable) checkin(c *cursor, finished bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c.inUse = false
	if finished || c.killed {
		delete(t.m, c.id)
	}
}

// kill removes cursor id of namespace ns and reports whether it existed.
// A cursor in use is removed when its getMore ends.
func (t *cursorTable) kill(id int64, ns string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.m[id]
	if c == nil || c.ns != ns {
		return false
	}
	if c.inUse {
		c.killed = true
		return true
	}
	delete(t.m, id)
	return true
}

// openCursors returns how many cursors are open.
func (t *cursorTable) openCursors() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

// batch collects one batch of documents under mongod's limits: n
// documents (0: no count limit) and maxBatchBytes, at least one document.
type batch struct {
	docs  []bson.Raw
	bytes int
	n     int64
}

func (b *batch) full() bool {
	return b.n > 0 && int64(len(b.docs)) >= b.n
}

// fits reports whether doc may join the batch.
func (b *batch) fits(doc bson.Raw) bool {
	return len(b.docs) == 0 || b.bytes+len(doc) <= maxBatchBytes
}

func (b *batch) add(doc bson.Raw) {
	b.docs = append(b.docs, doc)
	b.bytes += len(doc)
}

// next fills b from the cursor and reports whether the cursor is
// exhausted. A scan stops without looking further once the batch is full,
// as mongod's executor does, so a cursor whose last batch ended exactly at
// the end stays open until a getMore finds nothing more.
func (c *cursor) next(b *batch) (exhausted bool, err error) {
	if c.scan == nil {
		for c.pos < len(c.docs) && !b.full() {
			if !b.fits(c.docs[c.pos]) {
				return false, nil
			}
			b.add(c.docs[c.pos])
			c.docs[c.pos] = nil
			c.pos++
		}
		return c.pos >= len(c.docs), nil
	}
	return c.scan.next(b)
}

func (s *scanState) next(b *batch) (bool, error) {
	if s.limited && s.limit == 0 {
		return true, nil
	}
	if b.full() {
		return false, nil
	}
	if s.last != 0 && s.tailable && !s.c.RecordExists(s.last) {
		return true, newError(codeCappedPositionLow, "CollectionScan died due to position in capped collection being deleted. Last seen record id: RecordId(%d)", s.last)
	}
	reachedEnd := true
	var err error
	s.c.ScanAfter(s.last, func(id store.RecordID, doc bson.Raw) bool {
		if !s.m.Match(doc) {
			if err = s.m.Err(); err != nil {
				return false
			}
			s.last = id
			return true
		}
		if s.skip > 0 {
			s.skip--
			s.last = id
			return true
		}
		out := doc
		if s.proj != nil {
			if out, err = s.proj.Apply(nil, doc); err != nil {
				reachedEnd = false
				return false
			}
		}
		if s.keys != keyNone {
			out = s.keys.apply(out)
		}
		if s.showRecordID {
			out = appendRecordID(out, id)
		}
		if !b.fits(out) {
			reachedEnd = false
			return false
		}
		b.add(out)
		s.last = id
		if s.limited {
			s.limit--
			if s.limit == 0 {
				return false
			}
		}
		if b.full() {
			reachedEnd = false
			return false
		}
		return true
	})
	if err != nil {
		return true, err
	}
	if s.limited && s.limit == 0 {
		return true, nil
	}
	return reachedEnd && !s.tailable, nil
}

// appendCursorReply appends cursor: {<batchKey>: [...], id, ns}.
// cursorReplySize bounds the size of a reply holding appendCursorReply's
// cursor document, so that a 16 MB batch is built in one allocation
// rather than by doubling.
func cursorReplySize(docs []bson.Raw, ns string) int {
	size := 256 + len(ns) // room for appendOK's ok, labels and $clusterTime
	for _, d := range docs {
		size += len(d) + 8 // type byte, key of up to 6 digits, NUL
	}
	return size
}

func appendCursorReply(dst []byte, batchKey string, docs []bson.Raw, id int64, ns string) []byte {
	cs, dst := bson.AppendDocumentElementStart(dst, "cursor")
	as, dst := bson.AppendArrayElementStart(dst, batchKey)
	for i, d := range docs {
		dst = bson.AppendDocumentElement(dst, bson.ArrayKey(i), d)
	}
	dst, _ = bson.AppendDocumentEnd(dst, as)
	dst = bson.AppendInt64Element(dst, "id", id)
	dst = bson.AppendStringElement(dst, "ns", ns)
	dst, _ = bson.AppendDocumentEnd(dst, cs)
	return dst
}

// appendBatchReply is a whole find reply for a result that needs no
// cursor: {cursor: {firstBatch, id: 0, ns}}, built in one allocation.
func appendBatchReply(db, coll string, docs []bson.Raw) bson.Raw {
	size := 64 + len(db) + len(coll)
	for _, d := range docs {
		size += len(d) + 8
	}
	start, dst := bson.AppendDocumentStart(make([]byte, 0, size))
	cs, dst := bson.AppendDocumentElementStart(dst, "cursor")
	as, dst := bson.AppendArrayElementStart(dst, "firstBatch")
	for i, d := range docs {
		dst = bson.AppendDocumentElement(dst, bson.ArrayKey(i), d)
	}
	dst, _ = bson.AppendDocumentEnd(dst, as)
	dst = bson.AppendInt64Element(dst, "id", 0)
	// "ns" as db + "." + coll without building the string.
	dst = bson.AppendHeader(dst, bson.TypeString, "ns")
	n := len(db) + len(coll) + 2
	dst = append(dst, byte(n), byte(n>>8), byte(n>>16), byte(n>>24))
	dst = append(dst, db...)
	dst = append(dst, '.')
	dst = append(dst, coll...)
	dst = append(dst, 0)
	dst, _ = bson.AppendDocumentEnd(dst, cs)
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst
}

// firstBatch runs the first batch of c and registers it when it is not
// exhausted (and singleBatch is not set); it returns the reply.
func (s *Server) firstBatch(c *cursor, batchSize int64, single bool) (bson.Raw, error) {
	b := batch{n: batchSize}
	if batchSize == 0 && !single {
		// batchSize 0 asks for an empty first batch and a cursor.
		return s.replyWithCursor(c, nil, false)
	}
	exhausted, err := c.next(&b)
	if err != nil {
		return nil, err
	}
	return s.replyWithCursor(c, b.docs, exhausted || single)
}

func (s *Server) replyWithCursor(c *cursor, docs []bson.Raw, done bool) (bson.Raw, error) {
	var id int64
	if !done {
		id = s.cursors.add(c)
	}
	start, dst := bson.AppendDocumentStart(make([]byte, 0, cursorReplySize(docs, c.ns)))
	dst = appendCursorReply(dst, "firstBatch", docs, id, c.ns)
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst, nil
}

var getMoreArgs = fieldSet("collection", "batchSize", "term", "lastKnownCommittedOpTime", "includeQueryStatsMetrics")

func getMoreCmd(ctx context.Context, s *Server, r *Request) (bson.Raw, error) {
	if err := checkArgs(r, getMoreArgs); err != nil {
		return nil, err
	}
	idv := r.Body.Lookup("getMore")
	id, ok := idv.Int64OK()
	if !ok || idv.Type != bson.TypeInt64 {
		return nil, newError(mongoerr.TypeMismatch, "BSON field 'getMore.getMore' is the wrong type '%s', expected type 'long'", typeName(idv.Type))
	}
	cv, err := r.Body.LookupErr("collection")
	if err != nil {
		return nil, newError(40414, "BSON field 'getMore.collection' is missing but a required field")
	}
	coll, ok := cv.StringValueOK()
	if !ok {
		return nil, newError(mongoerr.TypeMismatch, "BSON field 'getMore.collection' is the wrong type '%s', expected type 'string'", typeName(cv.Type))
	}
	if coll == "" {
		return nil, newError(mongoerr.InvalidNamespace, "Invalid namespace specified '%s.'", r.DB)
	}
	batchSize, _, err := intArg(r.Body, "batchSize", "getMore")
	if err != nil {
		return nil, err
	}
	maxTime, hasMaxTime, err := intArg(r.Body, "maxTimeMS", "getMore")
	if err != nil {
		return nil, err
	}
	namespace := ns(r.DB, coll)
	c, err := s.cursors.checkout(id, namespace)
	if err != nil {
		return nil, err
	}
	if data, hit := s.failpointHit(FailGetMoreAfterCursorCheckout); hit {
		// mongod kills the cursor when a getMore fails.
		s.cursors.checkin(c, true)
		if b, ok := data.Lookup("closeConnection").BooleanOK(); ok && b {
			return nil, errClose("closed by the failGetMoreAfterCursorCheckout fail point")
		}
		code := int32(mongoerr.InternalError)
		if n, ok := data.Lookup("errorCode").AsInt64OK(); ok && n != 0 && n == int64(int32(n)) {
			code = int32(n)
		}
		return nil, newError(code, "Failing command via 'failGetMoreAfterCursorCheckout' failpoint")
	}
	if hasMaxTime && (c.scan == nil || !c.scan.awaitData) {
		// maxTimeMS on a getMore is only for awaitData cursors; mongod
		// refuses it otherwise.
		s.cursors.checkin(c, false)
		return nil, newError(mongoerr.BadValue, "cannot set maxTimeMS on getMore command for a non-awaitData cursor")
	}
	b := batch{n: batchSize}
	exhausted, err := c.next(&b)
	if err == nil && !exhausted && len(b.docs) == 0 && c.scan != nil && c.scan.awaitData {
		wait := defaultAwaitTime
		if hasMaxTime {
			wait = time.Duration(maxTime) * time.Millisecond
		}
		exhausted, err = s.awaitData(ctx, r, c, &b, wait)
	}
	if err != nil {
		s.cursors.checkin(c, true)
		return nil, err
	}
	s.cursors.checkin(c, exhausted)
	if exhausted {
		id = 0
	}
	cb := &cursorBatch{key: "nextBatch", docs: b.docs, id: id, ns: namespace}
	if r.scatterOK && b.bytes > maxKeptBuffer {
		// The connection writes the reply straight from the
		// documents (scatter.go).
		r.batch = cb
		return nil, nil
	}
	r.ownReply = true
	return cb.appendReply(), nil
}

// awaitData waits up to d for documents to reach a tailable cursor,
// waking on each change to its collection.
func (s *Server) awaitData(ctx context.Context, r *Request, c *cursor, b *batch, d time.Duration) (bool, error) {
	deadline := time.Now().Add(d)
	for {
		ch := c.scan.c.Watch()
		exhausted, err := c.next(b)
		if err != nil || exhausted || len(b.docs) > 0 {
			return exhausted, err
		}
		if cur := s.store.Collection(c.scan.c.Database(), c.scan.c.Name()); cur != c.scan.c {
			return true, newError(codeQueryPlanKilled, "collection dropped. UUID %x", c.scan.c.UUID().Data)
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false, nil
		}
		if err := r.Conn.waitFor(ctx, left, ch); err != nil {
			return true, err
		}
	}
}

var killCursorsArgs = fieldSet("cursors")

func killCursorsCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	if err := checkArgs(r, killCursorsArgs); err != nil {
		return nil, err
	}
	coll, ok := r.Body.Lookup("killCursors").StringValueOK()
	if !ok || coll == "" {
		return nil, newError(mongoerr.InvalidNamespace, "collection name has invalid type %s", typeName(r.Body.Lookup("killCursors").Type))
	}
	v, err := r.Body.LookupErr("cursors")
	if err != nil {
		return nil, newError(40414, "BSON field 'killCursors.cursors' is missing but a required field")
	}
	arr, ok := v.ArrayOK()
	if !ok {
		return nil, newError(mongoerr.TypeMismatch, "BSON field 'killCursors.cursors' is the wrong type '%s', expected type 'array'", typeName(v.Type))
	}
	var ids []int64
	it := arr.Iter()
	for it.Next() {
		id, ok := it.Value().Int64OK()
		if !ok || it.Value().Type != bson.TypeInt64 {
			return nil, newError(mongoerr.TypeMismatch, "BSON field 'killCursors.cursors.%d' is the wrong type '%s', expected type 'long'", len(ids), typeName(it.Value().Type))
		}
		ids = append(ids, id)
	}
	namespace := ns(r.DB, coll)
	var killed, notFound []int64
	for _, id := range ids {
		if s.cursors.kill(id, namespace) {
			killed = append(killed, id)
		} else {
			notFound = append(notFound, id)
		}
	}
	start, dst := bson.AppendDocumentStart(nil)
	dst = appendInt64s(dst, "cursorsKilled", killed)
	dst = appendInt64s(dst, "cursorsNotFound", notFound)
	dst = appendInt64s(dst, "cursorsAlive", nil)
	dst = appendInt64s(dst, "cursorsUnknown", nil)
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst, nil
}

func appendInt64s(dst []byte, key string, vals []int64) []byte {
	as, dst := bson.AppendArrayElementStart(dst, key)
	for i, v := range vals {
		dst = bson.AppendInt64Element(dst, bson.ArrayKey(i), v)
	}
	dst, _ = bson.AppendDocumentEnd(dst, as)
	return dst
}

// appendRecordID returns a copy of doc with $recordId added, as find's
// showRecordId does.
func appendRecordID(doc bson.Raw, id store.RecordID) bson.Raw {
	out := make([]byte, 0, len(doc)+16)
	out = append(out, doc[:len(doc)-1]...)
	out = bson.AppendInt64Element(out, "$recordId", int64(id))
	out = append(out, 0)
	n := len(out)
	out[0], out[1], out[2], out[3] = byte(n), byte(n>>8), byte(n>>16), byte(n>>24)
	return out
}
