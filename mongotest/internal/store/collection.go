package store

import (
	"sort"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/collation"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// MaxDocumentSize is mongod's limit on a stored document: 16 MiB.
const MaxDocumentSize = 16 << 20

// RecordID identifies a document's position in natural order. IDs grow
// with each insert and never change, so a cursor can resume after the last
// record it returned (see ScanAfter).
type RecordID uint64

// record is one document slot. Its doc pointer is swapped atomically on
// replace and set to nil on delete, so scans running without the lock see
// either version, never a torn one.
type record struct {
	id   RecordID
	key  string // Key of the _id
	doc  atomic.Pointer[bson.Raw]
	init bson.Raw // first version; doc points here until replaced

	// History (history.go), guarded by the collection's lock: the
	// change numbers of r's insert and of its current content (its delete
	// when doc is nil), its older versions, and the change before which
	// versions were dropped.
	born, since, trimmed uint64
	old                  []version
}

// Collection holds one collection's documents and indexes.
type Collection struct {
	mu       sync.RWMutex
	db, name string
	uuid     bson.Binary
	opts     CollectionOptions
	limit    int64 // capped byte limit

	// recs holds records in natural order, deleted ones (doc == nil)
	// included until compaction. Its backing array is append-only: slots
	// below len are never rewritten, and compaction allocates a new array,
	// so a snapshot of the slice header stays valid without the lock.
	recs    []*record
	head    int // recs[:head] are all deleted
	ids     map[string]*record
	idColl  *collation.Collation // the default collation the _id index keys strings by; nil: bytes
	live    int
	dead    int
	bytes   int64
	nextID  RecordID
	indexes []*index
	dropped bool
	kept    int // deleted records the last compaction kept for history

	hist   *history    // the store's; nil for a copy made by At
	origin *Collection // the collection a copy made by At was made from

	version atomic.Uint64

	wakeMu sync.Mutex
	wake   chan struct{}
	gone   bool // dropped; guarded by wakeMu
}

var closedChan = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

var idIndexSpec = IndexSpec{Name: IDIndexName, Key: idKeyPattern, Version: 2}

var idKeyPattern = func() bson.Raw {
	start, b := bson.AppendDocumentStart(nil)
	b = bson.AppendInt32Element(b, "_id", 1)
	b, _ = bson.AppendDocumentEnd(b, start)
	return b
}()

func newUUID() bson.Binary {
	u := bson.NewUUID()
	return bson.Binary{Subtype: bson.SubtypeUUID, Data: u[:]}
}

func newCollection(db, name string, opts CollectionOptions) *Collection {
	c := &Collection{
		db:     db,
		name:   name,
		uuid:   newUUID(),
		opts:   opts,
		ids:    make(map[string]*record),
		nextID: 1,
	}
	if opts.Capped {
		c.limit = opts.sizeLimit()
	}
	if opts.Extra != nil {
		if v, err := opts.Extra.LookupErr("collation"); err == nil {
			c.idColl, _ = collation.Parse(v) // checked when the collection was created
		}
	}
	return c
}

// idKey is the _id index's key for id: under a default collation, strings
// key by their collation sort keys, so _ids it deems equal collide as in
// mongod.
func (c *Collection) idKey(id bson.RawValue) string {
	return Key(collateValue(id, c.idColl))
}

// Name returns the collection's name (without the database).
func (c *Collection) Name() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.name
}

// Database returns the name of the collection's database.
func (c *Collection) Database() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.db
}

// Namespace returns "db.collection".
func (c *Collection) Namespace() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.db + "." + c.name
}

// UUID returns the collection's UUID (binary subtype 4).
func (c *Collection) UUID() bson.Binary {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.uuid
}

// Options returns the options the collection was created with.
func (c *Collection) Options() CollectionOptions {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.opts
}

// Capped reports whether the collection is capped.
func (c *Collection) Capped() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.opts.Capped
}

// Count returns the number of documents.
func (c *Collection) Count() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.live
}

// Size returns the total size of the documents in bytes.
func (c *Collection) Size() int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.bytes
}

// Version increases on every change to the collection's documents,
// indexes or name.
func (c *Collection) Version() uint64 { return c.version.Load() }

// Watch returns a channel that is closed at the collection's next change
// (or when it is dropped; for a dropped collection it is closed already). To wait for new data without missing any, call
// Watch first, then look for data, then wait on the channel.
func (c *Collection) Watch() <-chan struct{} {
	c.wakeMu.Lock()
	defer c.wakeMu.Unlock()
	if c.gone {
		// A dropped collection never changes again: waiters return at once.
		return closedChan
	}
	if c.wake == nil {
		c.wake = make(chan struct{})
	}
	return c.wake
}

func (c *Collection) notify() {
	c.wakeMu.Lock()
	if c.wake != nil {
		close(c.wake)
		c.wake = nil
	}
	c.wakeMu.Unlock()
}

// changed records a change and wakes watchers; the caller holds c.mu
// (notify takes only wakeMu, which is never held while taking c.mu).
func (c *Collection) changed() {
	c.version.Add(1)
	c.notify()
}

func (c *Collection) markDropped() {
	c.mu.Lock()
	c.dropped = true
	c.wakeMu.Lock()
	c.gone = true
	c.wakeMu.Unlock()
	c.changed()
	c.mu.Unlock()
}

func (c *Collection) nsLocked() string { return c.db + "." + c.name }

// FindByID returns the document whose _id equals id (by index equality:
// 1, 1.0 and NumberLong(1) are the same _id). The returned bytes are shared
// and must not be modified. It does not allocate for _id values whose key
// fits 64 bytes and is not a document or array (ObjectIDs, numbers, short
// strings).
func (c *Collection) FindByID(id bson.RawValue) (bson.Raw, bool) {
	var buf [64]byte
	var k []byte
	ok := false
	if c.idColl == nil {
		k, ok = appendScalarKey(buf[:0], id)
	}
	if !ok {
		k = []byte(c.idKey(id))
	}
	c.mu.RLock()
	r := c.ids[string(k)]
	c.mu.RUnlock()
	if r == nil {
		return nil, false
	}
	d := r.doc.Load()
	if d == nil {
		return nil, false
	}
	return *d, true
}

// Scan calls fn with each document in natural order until fn returns
// false. It iterates over a snapshot of positions taken at the start:
// documents inserted later are not visited, deleted ones are skipped when
// reached, and a replaced one is seen in its current version. fn may call
// the collection's other methods, writes included.
func (c *Collection) Scan(fn func(doc bson.Raw) bool) {
	c.ScanAfter(0, func(_ RecordID, doc bson.Raw) bool { return fn(doc) })
}

// ScanAfter is Scan starting after record after (0 starts at the
// beginning), passing each document's RecordID so a cursor can resume.
func (c *Collection) ScanAfter(after RecordID, fn func(id RecordID, doc bson.Raw) bool) {
	c.mu.RLock()
	recs := c.recs[c.head:]
	c.mu.RUnlock()
	i := 0
	if after > 0 {
		i = sort.Search(len(recs), func(i int) bool { return recs[i].id > after })
	}
	for _, r := range recs[i:] {
		if d := r.doc.Load(); d != nil {
			if !fn(r.id, *d) {
				return
			}
		}
	}
}

// RecordExists reports whether record id still holds a document; a
// tailable cursor whose last record was evicted from a capped collection
// has lost its position.
func (c *Collection) RecordExists(id RecordID) bool {
	c.mu.RLock()
	recs := c.recs[c.head:]
	c.mu.RUnlock()
	i := sort.Search(len(recs), func(i int) bool { return recs[i].id >= id })
	return i < len(recs) && recs[i].id == id && recs[i].doc.Load() != nil
}

// Insert stores doc; see InsertWithID.
func (c *Collection) Insert(doc bson.Raw) error {
	_, err := c.InsertWithID(doc)
	return err
}

// InsertWithID stores a copy of doc and returns the stored document, which
// has _id as its first field (a new ObjectID when doc had none). Errors:
// DuplicateKey (11000) as a *DuplicateKeyError, BadValue (2) for an array,
// regex or undefined _id, DollarPrefixedFieldName (52) for an _id document
// with $-prefixed fields, CannotIndexParallelArrays (171), InvalidBSON (22)
// and BSONObjectTooLarge (10334).
func (c *Collection) InsertWithID(doc bson.Raw) (bson.Raw, error) {
	return c.insertPrepared(doc)
}

// PrepareInsert returns doc as InsertWithID would store it (_id first, a
// new ObjectID when it had none) without storing it, so a caller can
// check the stored form first; InsertWithID keeps that _id. Its errors are
// InsertWithID's, but for duplicate keys.
func PrepareInsert(doc bson.Raw) (bson.Raw, error) { return prepareInsert(doc) }

func (c *Collection) insertPrepared(doc bson.Raw) (bson.Raw, error) {
	stored, err := prepareInsert(doc)
	if err != nil {
		return nil, err
	}
	id := firstValue(stored)
	r := &record{key: c.idKey(id), init: stored}
	r.doc.Store(&r.init)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.insertLocked(r, id, stored); err != nil {
		return nil, err
	}
	return stored, nil
}

func (c *Collection) insertLocked(r *record, id bson.RawValue, stored bson.Raw) error {
	if c.dropped {
		return errDropped(c.nsLocked())
	}
	if c.opts.Timeseries {
		// No _id index: equal _ids are allowed, so the record gets a key
		// of its own that no _id can have (Key never starts with 0xff).
		r.key = "\xfftimeseries:" + strconv.FormatUint(uint64(c.nextID), 10)
	}
	if c.ids[r.key] != nil {
		return c.dupIDLocked(id)
	}
	if c.opts.Capped && int64(len(stored)) > c.limit {
		return mongoerr.New(mongoerr.BadValue, "document is larger than capped size %d > %d", len(stored), c.limit)
	}
	keys, err := c.checkKeysLocked(r, stored)
	if err != nil {
		return err
	}
	r.id = c.nextID
	c.nextID++
	c.changedLocked(r, nil, c.seqLocked())
	c.recs = append(c.recs, r)
	c.ids[r.key] = r
	c.addKeysLocked(r, keys)
	c.live++
	c.bytes += int64(len(stored))
	if c.opts.Capped {
		c.evictLocked()
	}
	c.changed()
	return nil
}

func (c *Collection) dupIDLocked(id bson.RawValue) error {
	start, kv := bson.AppendDocumentStart(nil)
	kv = bson.AppendValueElement(kv, "_id", id)
	kv, _ = bson.AppendDocumentEnd(kv, start)
	return newDuplicateKey(c.nsLocked(), IDIndexName, idKeyPattern, kv)
}

// checkKeysLocked computes doc's keys in every index that needs them and
// checks them against the unique indexes, ignoring entries owned by r
// itself (a replace keeps its own keys). The result has one entry per
// index, nil when the index needs no keys.
func (c *Collection) checkKeysLocked(r *record, doc bson.Raw) ([][]indexKey, error) {
	if len(c.indexes) == 0 {
		return nil, nil
	}
	all := make([][]indexKey, len(c.indexes))
	for i, ix := range c.indexes {
		if !ix.needsKeys() {
			continue
		}
		keys, skip, err := ix.keys(doc)
		if err != nil {
			return nil, err
		}
		if skip || ix.entries == nil {
			continue
		}
		for _, k := range keys {
			if owner := ix.entries[k.key]; owner != nil && owner != r {
				return nil, newDuplicateKey(c.nsLocked(), ix.spec.Name, ix.spec.Key, ix.keyValueDoc(k.vals))
			}
		}
		all[i] = keys
	}
	return all, nil
}

func (c *Collection) addKeysLocked(r *record, keys [][]indexKey) {
	for i, ks := range keys {
		for _, k := range ks {
			c.indexes[i].entries[k.key] = r
		}
	}
}

// removeKeysLocked drops r's entries for doc from the unique indexes.
func (c *Collection) removeKeysLocked(r *record, doc bson.Raw) {
	for _, ix := range c.indexes {
		if ix.entries == nil {
			continue
		}
		keys, _, _ := ix.keys(doc)
		for _, k := range keys {
			if ix.entries[k.key] == r {
				delete(ix.entries, k.key)
			}
		}
	}
}

// evictLocked removes the oldest documents of a capped collection until it
// is within its limits; the newest document always stays.
func (c *Collection) evictLocked() {
	for c.live > 1 && (c.bytes > c.limit || (c.opts.Max > 0 && int64(c.live) > c.opts.Max)) {
		for c.head < len(c.recs) && c.recs[c.head].doc.Load() == nil {
			c.head++
		}
		if c.head >= len(c.recs) {
			return
		}
		c.deleteLocked(c.recs[c.head])
	}
}

// deleteLocked removes r, which must be live.
func (c *Collection) deleteLocked(r *record) bson.Raw {
	doc := *r.doc.Load()
	c.removeKeysLocked(r, doc)
	delete(c.ids, r.key)
	c.changedLocked(r, doc, c.seqLocked())
	r.doc.Store(nil)
	c.live--
	c.dead++
	c.bytes -= int64(len(doc))
	c.compactLocked()
	return doc
}

// compactLocked drops deleted records from recs once they outnumber the
// live ones, into a new array so snapshots of the old one stay valid.
// A deleted record a snapshot read may still see (deleted after the
// history's floor) is kept, and not counted towards the next compaction.
func (c *Collection) compactLocked() {
	if n := c.dead - c.kept; n < 64 || n < c.live {
		return
	}
	keep := func(*record) bool { return false }
	if h := c.hist; h != nil && h.on.Load() {
		floor := h.floor.Load()
		keep = func(r *record) bool { return r.since > floor }
	}
	recs := make([]*record, 0, c.live+c.live/4+16)
	kept := 0
	for _, r := range c.recs[c.head:] {
		if r.doc.Load() != nil {
			recs = append(recs, r)
		} else if keep(r) {
			recs = append(recs, r)
			kept++
		}
	}
	c.recs, c.head, c.dead, c.kept = recs, 0, kept, kept
}

// Delete removes the document whose _id equals id and reports whether
// there was one.
func (c *Collection) Delete(id bson.RawValue) bool {
	_, ok := c.DeleteIf(id, nil)
	return ok
}

// DeleteIf removes the document whose _id equals id if pred (nil: always)
// accepts its current version, under the collection's lock, so a document
// changed since the caller matched it is not deleted by mistake. It
// returns the deleted document. pred must not call the collection.
func (c *Collection) DeleteIf(id bson.RawValue, pred func(doc bson.Raw) bool) (bson.Raw, bool) {
	k := c.idKey(id)
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.ids[k]
	if c.dropped || r == nil || (pred != nil && !pred(*r.doc.Load())) {
		return nil, false
	}
	doc := c.deleteLocked(r)
	c.changed()
	return doc, true
}

// Replace replaces the document whose _id equals id; see ReplaceDoc.
func (c *Collection) Replace(id bson.RawValue, newDoc bson.Raw) error {
	_, err := c.ReplaceDoc(id, newDoc)
	return err
}

// ReplaceDoc replaces the document whose _id equals id with a copy of
// newDoc, keeping its natural position, and returns the stored version.
// newDoc may omit _id (the old one is kept) but may not change it
// (ImmutableField, 66). Unique indexes are checked. When no document has
// that _id the error satisfies IsNotFound.
func (c *Collection) ReplaceDoc(id bson.RawValue, newDoc bson.Raw) (bson.Raw, error) {
	_, after, err := c.Modify(id, func(bson.Raw) (bson.Raw, error) { return newDoc, nil })
	return after, err
}

// Modify runs fn on the current version of the document whose _id equals
// id and stores what it returns, all under the collection's write lock, so
// concurrent updates of one document apply one after the other as in
// mongod. fn returning nil leaves the document unchanged. The stored
// document is a copy of fn's result with the _id first, checked as by
// ReplaceDoc. fn must not call the collection. It returns the versions
// before and after.
func (c *Collection) Modify(id bson.RawValue, fn func(current bson.Raw) (bson.Raw, error)) (before, after bson.Raw, err error) {
	k := c.idKey(id)
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.ids[k]
	if c.dropped {
		return nil, nil, errDropped(c.nsLocked())
	}
	if r == nil {
		return nil, nil, errNotFound(c.nsLocked(), id)
	}
	before = *r.doc.Load()
	newDoc, err := fn(before)
	if err != nil {
		return before, nil, err
	}
	if newDoc == nil {
		return before, before, nil
	}
	stored, err := prepareReplace(newDoc, firstValue(before))
	if err != nil {
		return before, nil, err
	}
	keys, err := c.checkKeysLocked(r, stored)
	if err != nil {
		return before, nil, err
	}
	c.removeKeysLocked(r, before)
	c.addKeysLocked(r, keys)
	c.changedLocked(r, before, c.seqLocked())
	r.doc.Store(&stored)
	c.bytes += int64(len(stored)) - int64(len(before))
	c.changed()
	return before, stored, nil
}

// firstValue returns the value of a stored document's first element, its
// _id.
func firstValue(doc bson.Raw) bson.RawValue {
	it := doc.Iter()
	if it.Next() {
		return it.Value()
	}
	return bson.RawValue{}
}

// checkID rejects _id values mongod refuses to store.
func checkID(v bson.RawValue) error {
	switch v.Type {
	case bson.TypeArray:
		return mongoerr.New(mongoerr.BadValue, "can't use an array for _id")
	case bson.TypeRegex:
		return mongoerr.New(mongoerr.BadValue, "can't use a regex for _id")
	case bson.TypeUndefined:
		return mongoerr.New(mongoerr.BadValue, "can't use a undefined for _id")
	case bson.TypeEmbeddedDocument:
		it := v.Document().Iter()
		for it.Next() {
			if k := it.KeyBytes(); len(k) > 0 && k[0] == '$' {
				return mongoerr.New(mongoerr.DollarPrefixedFieldName, "_id fields may not contain '$'-prefixed fields: %s is not valid for storage.", k)
			}
		}
	}
	return nil
}

// prepareInsert validates doc and returns the copy to store, _id first.
func prepareInsert(doc bson.Raw) (bson.Raw, error) {
	if err := doc.Validate(); err != nil {
		return nil, newError(codeInvalidBSON, "document to insert is not valid BSON: %v", err)
	}
	id, at := findID(doc)
	if at >= 0 {
		if err := checkID(id); err != nil {
			return nil, err
		}
	}
	var out []byte
	switch {
	case at == 0:
		out = append(make([]byte, 0, len(doc)), doc...)
	case at < 0:
		oid := bson.NewObjectID()
		out = rebuild(make([]byte, 0, len(doc)+17), bson.RawValue{Type: bson.TypeObjectID, Value: oid[:]}, doc, -1)
	default:
		out = rebuild(make([]byte, 0, len(doc)), id, doc, at)
	}
	if len(out) > MaxDocumentSize {
		return nil, newError(codeBSONObjectTooLarge, "object to insert too large. size in bytes: %d, max size: %d", len(out), MaxDocumentSize)
	}
	return out, nil
}

// prepareReplace validates a replacement for the document whose _id is
// oldID and returns the copy to store, with the old _id first.
func prepareReplace(doc bson.Raw, oldID bson.RawValue) (bson.Raw, error) {
	if err := doc.Validate(); err != nil {
		return nil, newError(codeInvalidBSON, "replacement document is not valid BSON: %v", err)
	}
	id, at := findID(doc)
	if at >= 0 && Key(id) != Key(oldID) {
		return nil, mongoerr.New(mongoerr.ImmutableField,
			"After applying the update, the (immutable) field '_id' was found to have been altered to _id: %s", formatValue(nil, id, 0))
	}
	out := rebuild(make([]byte, 0, len(doc)+len(oldID.Value)+5), oldID, doc, at)
	if len(out) > MaxDocumentSize {
		return nil, newError(codeBSONObjectTooLarge, "Resulting document after update is larger than %d", MaxDocumentSize)
	}
	return out, nil
}

// findID returns the first _id element of doc and its position, or -1.
func findID(doc bson.Raw) (bson.RawValue, int) {
	it := doc.Iter()
	for i := 0; it.Next(); i++ {
		if k := it.KeyBytes(); len(k) == 3 && string(k) == "_id" {
			return it.Value(), i
		}
	}
	return bson.RawValue{}, -1
}

// rebuild appends a document with id as its _id, first, followed by doc's
// elements except the one at position skip.
func rebuild(dst []byte, id bson.RawValue, doc bson.Raw, skip int) []byte {
	start, dst := bson.AppendDocumentStart(dst)
	dst = bson.AppendValueElement(dst, "_id", id)
	it := doc.Iter()
	for i := 0; it.Next(); i++ {
		if i != skip {
			dst = append(dst, it.Element()...)
		}
	}
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst
}
