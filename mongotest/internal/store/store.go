package store

import (
	"math"
	"slices"
	"sync"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// Store is the catalog: databases and their collections. A database exists
// while it holds at least one collection, as in mongod.
//
// Lock order: Store.mu before any Collection.mu; a Collection never takes
// the Store's lock.
type Store struct {
	mu    sync.RWMutex
	dbs   map[string]map[string]*Collection
	views map[string]map[string]*View
	hist  history // snapshot reads' history (history.go)
}

// New returns an empty store.
func New() *Store {
	return &Store{dbs: make(map[string]map[string]*Collection)}
}

// DatabaseInfo is one entry of listDatabases.
type DatabaseInfo struct {
	Name string
	// SizeOnDisk approximates mongod's figure: document bytes plus 4 KiB
	// per collection and per index.
	SizeOnDisk int64
	// Empty is always false: a database without collections does not exist.
	Empty bool
}

// fixedOverhead is what each collection and index adds to SizeOnDisk.
const fixedOverhead = 4096

// ListDatabases returns the databases sorted by name.
func (s *Store) ListDatabases() []DatabaseInfo {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]DatabaseInfo, 0, len(s.dbs))
	for name, colls := range s.dbs {
		var size int64
		for _, c := range colls {
			c.mu.RLock()
			size += c.bytes + fixedOverhead*int64(2+len(c.indexes))
			c.mu.RUnlock()
		}
		out = append(out, DatabaseInfo{Name: name, SizeOnDisk: size})
	}
	slices.SortFunc(out, func(a, b DatabaseInfo) int { return cmpString(a.Name, b.Name) })
	return out
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// DropDatabase drops db and all its collections; it reports whether db
// existed.
func (s *Store) DropDatabase(db string) bool {
	s.mu.Lock()
	colls, ok := s.dbs[db]
	delete(s.dbs, db)
	if s.views[db] != nil {
		ok = true
		delete(s.views, db)
	}
	s.mu.Unlock()
	for _, c := range colls {
		c.markDropped()
	}
	return ok
}

// CollectionOptions are the options of create that the store implements.
type CollectionOptions struct {
	// Capped collections keep at most Size bytes and, when Max > 0, at
	// most Max documents, evicting the oldest on insert. Size and Max are
	// ignored (and not listed) unless Capped is set.
	Capped bool
	Size   int64
	Max    int64
	// ClusteredIndex, when not empty, makes the collection clustered on
	// _id: its _id index is named so, listed with clustered:true, and
	// listCollections lists no idIndex.
	ClusteredIndex string
	// Timeseries makes a time-series collection: listed with type
	// "timeseries", without a UUID or an _id index, and _id values need
	// not be unique. Its options (timeField...) are in Extra.
	Timeseries bool
	// Extra holds further option fields (validator, for example) that the
	// command handler accepted; they are listed by listCollections as given
	// and have no effect here.
	Extra bson.Raw
}

// maxCappedSize is mongod's limit on a capped collection's size: 1 PB.
const maxCappedSize = 1 << 50

func (o CollectionOptions) validate() error {
	if o.Extra != nil {
		if err := o.Extra.Validate(); err != nil {
			return newError(codeInvalidBSON, "collection options are not valid BSON: %v", err)
		}
	}
	if !o.Capped {
		return nil
	}
	switch {
	case o.Size <= 0:
		return mongoerr.New(mongoerr.InvalidOptions, "the 'size' field is required when 'capped' is true")
	case o.Size > maxCappedSize:
		return mongoerr.New(mongoerr.InvalidOptions, "The 'size' field for capped collections must be less than or equal to 1PB")
	case o.Max >= 1<<31:
		return mongoerr.New(mongoerr.InvalidOptions, "The 'max' field for capped collections must be less than 2^31")
	}
	return nil
}

// sizeLimit is the byte limit mongod enforces for a capped collection of
// the requested size: at least 4096, rounded up to a multiple of 256.
func (o CollectionOptions) sizeLimit() int64 {
	if o.Size < 4096 {
		return 4096
	}
	return (o.Size + 255) &^ 255
}

// Raw returns the options document listCollections shows.
func (o CollectionOptions) Raw() bson.Raw {
	start, b := bson.AppendDocumentStart(nil)
	if o.Capped {
		b = bson.AppendBooleanElement(b, "capped", true)
		b = appendNumber(b, "size", o.Size)
		if o.Max > 0 {
			b = appendNumber(b, "max", o.Max)
		}
	}
	if o.ClusteredIndex != "" {
		cs, c := bson.AppendDocumentElementStart(b, "clusteredIndex")
		c = bson.AppendInt32Element(c, "v", 2)
		c = bson.AppendDocumentElement(c, "key", idKeyPattern)
		c = bson.AppendStringElement(c, "name", o.ClusteredIndex)
		c = bson.AppendBooleanElement(c, "unique", true)
		b, _ = bson.AppendDocumentEnd(c, cs)
	}
	if o.Extra != nil {
		it := o.Extra.Iter()
		for it.Next() {
			b = append(b, it.Element()...)
		}
	}
	b, _ = bson.AppendDocumentEnd(b, start)
	return b
}

// appendNumber appends n as an int32 when it fits and an int64 otherwise,
// as mongod writes numeric options.
func appendNumber(b []byte, key string, n int64) []byte {
	if n >= math.MinInt32 && n <= math.MaxInt32 {
		return bson.AppendInt32Element(b, key, int32(n))
	}
	return bson.AppendInt64Element(b, key, n)
}

// CollectionInfo is one entry of listCollections.
type CollectionInfo struct {
	Name     string
	Type     string // "collection" or "view"
	Options  bson.Raw
	ReadOnly bool
	UUID     bson.Binary
	IDIndex  bson.Raw
}

// Raw returns the entry as listCollections shows it:
// {name, type, options, info: {readOnly, uuid}, idIndex}.
func (ci CollectionInfo) Raw() bson.Raw {
	start, b := bson.AppendDocumentStart(nil)
	b = bson.AppendStringElement(b, "name", ci.Name)
	b = bson.AppendStringElement(b, "type", ci.Type)
	b = bson.AppendDocumentElement(b, "options", ci.Options)
	is, b := bson.AppendDocumentElementStart(b, "info")
	b = bson.AppendBooleanElement(b, "readOnly", ci.ReadOnly)
	if ci.Type == "view" || ci.Type == "timeseries" {
		// A view has no UUID and no _id index; nor has a time-series
		// collection, a view on its buckets in mongod.
		b, _ = bson.AppendDocumentEnd(b, is)
		b, _ = bson.AppendDocumentEnd(b, start)
		return b
	}
	b = bson.AppendBinaryElement(b, "uuid", ci.UUID.Subtype, ci.UUID.Data)
	b, _ = bson.AppendDocumentEnd(b, is)
	if ci.IDIndex != nil {
		b = bson.AppendDocumentElement(b, "idIndex", ci.IDIndex)
	}
	b, _ = bson.AppendDocumentEnd(b, start)
	return b
}

// ListCollections returns db's collections sorted by name.
func (s *Store) ListCollections(db string) []CollectionInfo {
	s.mu.RLock()
	colls := make([]*Collection, 0, len(s.dbs[db]))
	for _, c := range s.dbs[db] {
		colls = append(colls, c)
	}
	out := make([]CollectionInfo, 0, len(colls)+len(s.views[db]))
	for _, v := range s.views[db] {
		out = append(out, viewInfo(v))
	}
	s.mu.RUnlock()
	for _, c := range colls {
		c.mu.RLock()
		ci := CollectionInfo{
			Name:    c.name,
			Type:    "collection",
			Options: c.opts.Raw(),
			UUID:    c.uuid,
		}
		switch {
		case c.opts.Timeseries:
			ci.Type = "timeseries"
		case c.opts.ClusteredIndex == "":
			// A clustered collection lists its cluster key in its
			// options instead.
			ci.IDIndex = c.idSpecLocked().Raw()
		}
		out = append(out, ci)
		c.mu.RUnlock()
	}
	slices.SortFunc(out, func(a, b CollectionInfo) int { return cmpString(a.Name, b.Name) })
	return out
}

// CreateCollection creates db.name, failing with NamespaceExists (48) when
// it exists and InvalidNamespace (73) or InvalidOptions (72) on bad input.
func (s *Store) CreateCollection(db, name string, opts CollectionOptions) error {
	if err := ValidateCollectionName(db, name); err != nil {
		return err
	}
	if err := opts.validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dbs[db][name] != nil {
		return mongoerr.New(mongoerr.NamespaceExists, "Collection %s.%s already exists.", db, name)
	}
	if s.views[db][name] != nil {
		return mongoerr.New(mongoerr.NamespaceExists, "Namespace already exists")
	}
	s.addLocked(newCollection(db, name, opts))
	return nil
}

func (s *Store) addLocked(c *Collection) {
	c.hist = &s.hist
	colls := s.dbs[c.db]
	if colls == nil {
		colls = make(map[string]*Collection)
		s.dbs[c.db] = colls
	}
	colls[c.name] = c
}

// Collection returns db.name, or nil when it does not exist.
func (s *Store) Collection(db, name string) *Collection {
	s.mu.RLock()
	c := s.dbs[db][name]
	s.mu.RUnlock()
	return c
}

// CollectionOrCreate returns db.name, creating it with default options
// when absent, as an insert or createIndexes does implicitly. A view of
// that name fails with CommandNotSupportedOnView (166).
func (s *Store) CollectionOrCreate(db, name string) (*Collection, error) {
	if c := s.Collection(db, name); c != nil {
		return c, nil
	}
	if err := ValidateCollectionName(db, name); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.dbs[db][name]; c != nil {
		return c, nil
	}
	if s.views[db][name] != nil {
		return nil, ErrIsView(db, name)
	}
	c := newCollection(db, name, CollectionOptions{})
	s.addLocked(c)
	return c, nil
}

// DropCollection drops db.name and reports whether it existed. Writes
// through a *Collection kept from before fail with NamespaceNotFound.
func (s *Store) DropCollection(db, name string) bool {
	s.mu.Lock()
	c := s.dbs[db][name]
	if c != nil {
		s.removeLocked(db, name)
	}
	s.mu.Unlock()
	if c != nil {
		c.markDropped()
	}
	return c != nil
}

func (s *Store) removeLocked(db, name string) {
	colls := s.dbs[db]
	delete(colls, name)
	if len(colls) == 0 {
		delete(s.dbs, db)
	}
}

// RenameCollection renames fromDB.from to toDB.to, keeping documents,
// indexes and options. It fails with NamespaceNotFound (26) when the
// source does not exist, NamespaceExists (48) when the target does and
// dropTarget is false, IllegalOperation (20) when both are the same, and
// InvalidNamespace (73) for a bad target name. A rename across databases
// gives the collection a new UUID, as mongod's copy does.
func (s *Store) RenameCollection(fromDB, from, toDB, to string, dropTarget bool) error {
	if err := ValidateCollectionName(toDB, to); err != nil {
		return err
	}
	s.mu.Lock()
	src := s.dbs[fromDB][from]
	if src == nil && s.views[fromDB][from] != nil {
		s.mu.Unlock()
		e := mongoerr.New(codeCommandNotSupportedOnView, "cannot rename view: %s.%s", fromDB, from)
		e.CodeName = "CommandNotSupportedOnView"
		return e
	}
	if src == nil {
		s.mu.Unlock()
		return mongoerr.New(mongoerr.NamespaceNotFound, "Source collection %s.%s does not exist", fromDB, from)
	}
	if fromDB == toDB && from == to {
		s.mu.Unlock()
		return mongoerr.New(mongoerr.IllegalOperation, "Can't rename a collection to itself")
	}
	if s.views[toDB][to] != nil {
		s.mu.Unlock()
		return mongoerr.New(mongoerr.NamespaceExists, "a view already exists with that name: %s.%s", toDB, to)
	}
	target := s.dbs[toDB][to]
	if target != nil && !dropTarget {
		s.mu.Unlock()
		return mongoerr.New(mongoerr.NamespaceExists, "target namespace exists")
	}
	if target != nil {
		s.removeLocked(toDB, to)
	}
	s.removeLocked(fromDB, from)
	src.mu.Lock()
	src.db, src.name = toDB, to
	if fromDB != toDB {
		src.uuid = newUUID()
	}
	src.changed()
	src.mu.Unlock()
	s.addLocked(src)
	s.mu.Unlock()
	if target != nil {
		target.markDropped()
	}
	return nil
}
