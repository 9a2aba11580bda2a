package store

import (
	"math"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/collation"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// CreateIndexes creates the indexes in specs that do not exist yet and
// returns how many it created; a spec equal to an existing index (same
// name, key pattern and options) is a no-op, as in mongod. Either all new
// indexes are created or none: a name reused with another key pattern
// fails with IndexKeySpecsConflict (86), with other options or a key
// pattern reused under another name with IndexOptionsConflict (85), and a
// unique index over existing duplicates with DuplicateKey (11000).
func (c *Collection) CreateIndexes(specs []IndexSpec) (created int, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped {
		return 0, errDropped(c.nsLocked())
	}
	var pending []*index
	for _, s := range specs {
		ix, err := compileIndex(s)
		if err != nil {
			return 0, err
		}
		existing := make([]IndexSpec, 0, 1+len(c.indexes)+len(pending))
		existing = append(existing, c.idSpecsLocked()...)
		for _, e := range c.indexes {
			existing = append(existing, e.spec)
		}
		for _, e := range pending {
			existing = append(existing, e.spec)
		}
		exists, err := conflict(ix.spec, ix.identity, existing)
		if err != nil {
			return 0, err
		}
		if !exists {
			pending = append(pending, ix)
		}
	}
	if len(pending) == 0 {
		return 0, nil
	}
	if n := 1 + len(c.indexes) + len(pending); n > maxIndexes {
		return 0, newError(codeCannotCreateIndex, "add index fails, too many indexes for %s: %d (the limit is %d)", c.nsLocked(), n, maxIndexes)
	}
	// Build over the existing documents before publishing anything.
	for _, ix := range pending {
		if !ix.needsKeys() {
			continue
		}
		for _, r := range c.recs[c.head:] {
			d := r.doc.Load()
			if d == nil {
				continue
			}
			keys, skip, err := ix.keys(*d)
			if err != nil {
				return 0, err
			}
			if skip || ix.entries == nil {
				continue
			}
			for _, k := range keys {
				if owner := ix.entries[k.key]; owner != nil && owner != r {
					return 0, newDuplicateKey(c.nsLocked(), ix.spec.Name, ix.spec.Key, ix.keyValueDoc(k.vals))
				}
				ix.entries[k.key] = r
			}
		}
	}
	c.indexes = append(c.indexes, pending...)
	c.changed()
	return len(pending), nil
}

// compileIndex checks a spec and prepares its index.
func compileIndex(s IndexSpec) (*index, error) {
	fields, err := parseKeyPattern(s.Key)
	if err != nil {
		return nil, err
	}
	switch {
	case s.Name == "":
		return nil, newError(codeCannotCreateIndex, "The index name cannot be empty")
	case s.Name == "*":
		return nil, mongoerr.New(mongoerr.BadValue, "The index name '*' is not valid.")
	case s.Sparse && s.PartialFilterExpression != nil:
		return nil, newError(codeCannotCreateIndex, "cannot mix \"partialFilterExpression\" and \"sparse\" options")
	case s.Unique && s.PartialFilterExpression != nil && s.PartialFilter == nil:
		return nil, mongoerr.New(mongoerr.NotImplemented, "unique index %s with a partialFilterExpression needs a filter from the query engine", s.Name)
	}
	if s.Version == 0 {
		s.Version = 2
	}
	// Own copies: the spec usually points into a request buffer.
	s.Key = append(bson.Raw(nil), s.Key...)
	if s.PartialFilterExpression != nil {
		s.PartialFilterExpression = append(bson.Raw(nil), s.PartialFilterExpression...)
	}
	if s.Collation != nil {
		s.Collation = append(bson.Raw(nil), s.Collation...)
	}
	if s.ExpireAfterSeconds != nil {
		n := *s.ExpireAfterSeconds
		s.ExpireAfterSeconds = &n
	}
	ix := &index{spec: s, fields: fields, identity: docKey(s.Key)}
	if s.Collation != nil {
		if ix.coll, err = collation.Parse(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: s.Collation}); err != nil {
			return nil, err
		}
	}
	if s.Unique {
		ix.entries = make(map[string]*record)
	}
	return ix, nil
}

// conflict compares a requested index with the existing ones: exists is
// true when an identical index exists.
func conflict(s IndexSpec, identity string, existing []IndexSpec) (exists bool, err error) {
	for _, e := range existing {
		sameKey := docKey(e.Key) == identity
		switch {
		case e.Name == s.Name && sameKey && sameOptions(e, s):
			return true, nil
		case e.Name == s.Name && !sameKey:
			return false, mongoerr.New(mongoerr.IndexKeySpecsConflict,
				"An existing index has the same name as the requested index. When index names are not specified, they are auto generated and can cause conflicts. Please refer to our documentation. Requested index: %s, existing index: %s",
				formatDoc(nil, s.Raw(), 0), formatDoc(nil, e.Raw(), 0))
		case e.Name == s.Name:
			return false, mongoerr.New(mongoerr.IndexOptionsConflict,
				"An equivalent index already exists with the same name but different options. Requested index: %s, existing index: %s",
				formatDoc(nil, s.Raw(), 0), formatDoc(nil, e.Raw(), 0))
		case sameKey && samePartial(e, s) && string(e.Collation) == string(s.Collation):
			return false, mongoerr.New(mongoerr.IndexOptionsConflict, "Index already exists with a different name: %s", e.Name)
		}
	}
	return false, nil
}

// DropIndex drops the index called name; "*" drops every index but _id_.
// Dropping _id_ fails with InvalidOptions (72), an unknown name with
// IndexNotFound (27).
func (c *Collection) DropIndex(name string) error {
	return c.DropIndexes(name)
}

// DropIndexes drops the named indexes, all or none: if one cannot be
// dropped, none is.
func (c *Collection) DropIndexes(names ...string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped {
		return errDropped(c.nsLocked())
	}
	drop := make(map[string]bool, len(names))
	for _, n := range names {
		switch {
		case n == "*":
			for _, ix := range c.indexes {
				drop[ix.spec.Name] = true
			}
		case c.opts.ClusteredIndex != "" && n == c.opts.ClusteredIndex:
			return errDropClustered
		case n == IDIndexName:
			return mongoerr.New(mongoerr.InvalidOptions, "cannot drop _id index")
		case c.findIndexLocked(n) < 0:
			return mongoerr.New(mongoerr.IndexNotFound, "index not found with name [%s]", n)
		default:
			drop[n] = true
		}
	}
	c.removeIndexesLocked(drop)
	return nil
}

// DropIndexByKey drops the index with key pattern key, as dropIndexes does
// when given a pattern instead of a name.
func (c *Collection) DropIndexByKey(key bson.Raw) error {
	identity := docKey(key)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped {
		return errDropped(c.nsLocked())
	}
	if identity == docKey(idKeyPattern) {
		if c.opts.ClusteredIndex != "" {
			return errDropClustered
		}
		return mongoerr.New(mongoerr.InvalidOptions, "cannot drop _id index")
	}
	for _, ix := range c.indexes {
		if ix.identity == identity {
			c.removeIndexesLocked(map[string]bool{ix.spec.Name: true})
			return nil
		}
	}
	return mongoerr.New(mongoerr.IndexNotFound, "can't find index with key: %s", formatDoc(nil, key, 0))
}

func (c *Collection) findIndexLocked(name string) int {
	for i, ix := range c.indexes {
		if ix.spec.Name == name {
			return i
		}
	}
	return -1
}

func (c *Collection) removeIndexesLocked(drop map[string]bool) {
	if len(drop) == 0 {
		return
	}
	kept := make([]*index, 0, len(c.indexes))
	for _, ix := range c.indexes {
		if !drop[ix.spec.Name] {
			kept = append(kept, ix)
		}
	}
	c.indexes = kept
	c.changed()
}

// ListIndexes returns the indexes, _id_ first, then in creation order.
func (c *Collection) ListIndexes() []IndexSpec {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]IndexSpec, 0, 1+len(c.indexes))
	out = append(out, c.idSpecsLocked()...)
	for _, ix := range c.indexes {
		out = append(out, ix.spec)
	}
	return out
}

// NumIndexes returns the number of indexes, _id_ included, as
// createIndexes reports numIndexesBefore and numIndexesAfter.
func (c *Collection) NumIndexes() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.idSpecsLocked()) + len(c.indexes)
}

// errDropClustered is mongod's refusal to drop a clustered collection's
// cluster key, by name or by key pattern.
var errDropClustered = mongoerr.New(5979800, "It is illegal to drop the clusteredIndex")

// idSpecsLocked returns the collection's _id index: the default one, a
// clustered collection's cluster key, or none for a time-series
// collection.
func (c *Collection) idSpecsLocked() []IndexSpec {
	switch {
	case c.opts.Timeseries:
		return nil
	case c.opts.ClusteredIndex != "":
		return []IndexSpec{{Name: c.opts.ClusteredIndex, Key: idKeyPattern, Version: 2, Unique: true, Clustered: true}}
	}
	return []IndexSpec{c.idSpecLocked()}
}

// ModifyIndex changes an index's hidden flag and/or TTL, as collMod's
// index option does, and returns the spec as it was before. The _id index
// cannot be hidden (BadValue); changing expireAfterSeconds of an index that
// has none fails with InvalidOptions; an unknown name with IndexNotFound.
func (c *Collection) ModifyIndex(name string, hidden *bool, expireAfterSeconds *int64) (IndexSpec, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped {
		return IndexSpec{}, errDropped(c.nsLocked())
	}
	if name == IDIndexName {
		if hidden != nil && *hidden {
			return IndexSpec{}, mongoerr.New(mongoerr.BadValue, "can't hide _id index")
		}
		if expireAfterSeconds != nil {
			return IndexSpec{}, mongoerr.New(mongoerr.InvalidOptions, "no expireAfterSeconds field to update")
		}
		return c.idSpecLocked(), nil
	}
	i := c.findIndexLocked(name)
	if i < 0 {
		return IndexSpec{}, mongoerr.New(mongoerr.IndexNotFound, "cannot find index %s for ns %s", name, c.nsLocked())
	}
	ix := c.indexes[i]
	old := ix.spec
	if expireAfterSeconds != nil {
		if old.ExpireAfterSeconds == nil {
			return IndexSpec{}, mongoerr.New(mongoerr.InvalidOptions, "no expireAfterSeconds field to update")
		}
		if n := *expireAfterSeconds; n < 0 || n > math.MaxInt32 {
			return IndexSpec{}, mongoerr.New(mongoerr.InvalidOptions, "TTL index 'expireAfterSeconds' option must be within an acceptable range, try 0-%d", math.MaxInt32)
		}
	}
	// A new index value, not a change in place: ListIndexes results handed
	// out earlier keep what they showed.
	spec := old
	if hidden != nil {
		spec.Hidden = *hidden
	}
	if expireAfterSeconds != nil {
		n := *expireAfterSeconds
		spec.ExpireAfterSeconds = &n
	}
	c.indexes[i] = &index{spec: spec, fields: ix.fields, identity: ix.identity, entries: ix.entries}
	c.changed()
	return old, nil
}

// SetExtraOptions replaces the extra collection options listCollections
// shows (CollectionOptions.Extra), as collMod does for a validator.
func (c *Collection) SetExtraOptions(extra bson.Raw) error {
	if extra != nil {
		if err := extra.Validate(); err != nil {
			return newError(codeInvalidBSON, "collection options are not valid BSON: %v", err)
		}
		extra = append(bson.Raw(nil), extra...)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped {
		return errDropped(c.nsLocked())
	}
	c.opts.Extra = extra
	c.changed()
	return nil
}

// idSpecLocked is the _id index: its collation is the collection's
// default collation.
func (c *Collection) idSpecLocked() IndexSpec {
	s := idIndexSpec
	if c.opts.Extra != nil {
		if v, err := c.opts.Extra.LookupErr("collation"); err == nil && v.Type == bson.TypeEmbeddedDocument {
			s.Collation = v.Document()
		}
	}
	return s
}
