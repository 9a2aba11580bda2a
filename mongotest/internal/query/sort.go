package query

import (
	"strings"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// Sort is a compiled sort specification such as {a: 1, "b.c": -1}. It is
// safe for concurrent use.
type Sort struct {
	keys []sortKey
	coll Collator
}

type sortKey struct {
	path []string
	desc bool
}

// NewSort compiles a sort specification. Each value must be 1 or -1 (in
// any numeric type); {$meta: ...} returns NotImplemented.
func NewSort(spec bson.Raw) (*Sort, error) { return NewSortWith(spec, nil) }

// NewSortWith is NewSort with strings ordered by coll (nil: by bytes).
func NewSortWith(spec bson.Raw, coll Collator) (*Sort, error) {
	s := &Sort{coll: coll}
	if len(spec) == 0 {
		return s, nil
	}
	if err := spec.Validate(); err != nil {
		return nil, mongoerr.New(mongoerr.BadValue, "sort is not a valid BSON document: %v", err)
	}
	it := spec.Iter()
	for it.Next() {
		key, v := it.Key(), it.Value()
		if key == "" || strings.HasPrefix(key, "$") || strings.Contains(key, "..") ||
			strings.HasPrefix(key, ".") || strings.HasSuffix(key, ".") {
			return nil, mongoerr.New(mongoerr.BadValue, "invalid sort key %q", key)
		}
		if d, ok := v.DocumentOK(); ok {
			if _, err := d.LookupErr("$meta"); err == nil {
				return nil, mongoerr.New(mongoerr.NotImplemented, "mongotest does not support $meta sort on field %s", key)
			}
		}
		n, ok := integral(v)
		if !ok || (n != 1 && n != -1) {
			return nil, mongoerr.New(mongoerr.BadValue, "$sort key ordering must be 1 (for ascending) or -1 (for descending)")
		}
		s.keys = append(s.keys, sortKey{path: splitPath(key), desc: n == -1})
	}
	return s, nil
}

// Empty reports whether the sort has no keys, so results keep their
// natural order.
func (s *Sort) Empty() bool { return len(s.keys) == 0 }

// Compare orders documents a and b by the sort keys. A path that reaches
// an array sorts by its least element ascending and its greatest element
// descending; an empty array sorts below null; a missing field sorts as
// null. It returns -1, 0 or 1.
func (s *Sort) Compare(a, b bson.Raw) int {
	for _, k := range s.keys {
		ka := sortKeyOf(a, k, s.coll)
		kb := sortKeyOf(b, k, s.coll)
		c := CompareWith(ka, kb, s.coll)
		if k.desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// sortKeyOf extracts one document's key for one sort path.
func sortKeyOf(doc bson.Raw, k sortKey, coll Collator) bson.RawValue {
	w := walker{keys: sortKeyCollector{desc: k.desc, coll: coll}, sorting: true}
	w.doc(doc, k.path)
	return w.keys.best
}

// sortKeyCollector keeps the least (or greatest) value a path reached.
type sortKeyCollector struct {
	coll Collator
	desc bool
	have bool
	best bson.RawValue
}

func (c *sortKeyCollector) add(v bson.RawValue) {
	switch v.Type {
	case typeMissing:
		c.consider(bson.RawValue{Type: bson.TypeNull})
	case bson.TypeArray:
		it := bson.Raw(v.Value).Iter()
		empty := true
		for it.Next() {
			empty = false
			c.consider(it.Value())
		}
		if empty {
			// mongod sorts an empty array below null, as undefined.
			c.consider(bson.RawValue{Type: bson.TypeUndefined})
		}
	default:
		c.consider(v)
	}
}

func (c *sortKeyCollector) consider(v bson.RawValue) {
	if !c.have {
		c.best, c.have = v, true
		return
	}
	cmp := CompareWith(v, c.best, c.coll)
	if (c.desc && cmp > 0) || (!c.desc && cmp < 0) {
		c.best = v
	}
}
