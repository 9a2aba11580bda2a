package query

import (
	"strings"

	"github.com/mongoscope/mongoscope/bson"
)

// elemPred tests one value a path reached. The zero RawValue (Type 0)
// stands for a missing field.
type elemPred interface {
	matchElem(v bson.RawValue) bool
}

// walker visits the values a dotted path reaches in a document the way
// mongod's matcher does: through embedded documents, into every document
// element of an array met on the way (arrays of arrays are not entered),
// by position when a component is an array index, and at the end of the
// path into the elements of a leaf array followed by the array itself
// (when expand is set). Where a path dead-ends it yields one missing value.
type walker struct {
	pred elemPred
	// keys is used instead of pred when sorting is set; held by value so
	// a sort needs no heap allocation.
	keys    sortKeyCollector
	sorting bool
	expand  bool
	n       int // values yielded so far, to tell whether an array gave any
}

func (w *walker) yield(v bson.RawValue) bool {
	w.n++
	if w.sorting {
		w.keys.add(v)
		return false
	}
	return w.pred.matchElem(v)
}

// doc walks path in doc and reports whether pred accepted a value.
func (w *walker) doc(doc bson.Raw, path []string) bool {
	v, ok := lookupField(doc, path[0])
	if !ok {
		return w.yield(bson.RawValue{})
	}
	return w.value(v, path[1:])
}

func (w *walker) value(v bson.RawValue, rest []string) bool {
	if len(rest) == 0 {
		if w.expand && v.Type == bson.TypeArray {
			it := bson.Raw(v.Value).Iter()
			for it.Next() {
				if w.yield(it.Value()) {
					return true
				}
			}
		}
		return w.yield(v)
	}
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		return w.doc(bson.Raw(v.Value), rest)
	case bson.TypeArray:
		return w.array(bson.Raw(v.Value), rest)
	}
	return w.yield(bson.RawValue{})
}

func (w *walker) array(arr bson.Raw, rest []string) bool {
	before := w.n
	idx, numeric := arrayIndex(rest[0])
	if numeric {
		if e, ok := arrayElem(arr, idx); ok {
			if w.value(e, rest[1:]) {
				return true
			}
		}
	}
	it := arr.Iter()
	for it.Next() {
		e := it.Value()
		if e.Type != bson.TypeEmbeddedDocument {
			continue
		}
		sub := bson.Raw(e.Value)
		if numeric {
			// An index component reaches elements by position; a document
			// element counts only when it really has such a field.
			if _, ok := lookupField(sub, rest[0]); !ok {
				continue
			}
		}
		if w.doc(sub, rest) {
			return true
		}
	}
	if w.n == before {
		return w.yield(bson.RawValue{})
	}
	return false
}

// lookupField returns the first top-level field named key, without
// allocating.
func lookupField(doc bson.Raw, key string) (bson.RawValue, bool) {
	it := doc.Iter()
	for it.Next() {
		if string(it.KeyBytes()) == key {
			return it.Value(), true
		}
	}
	return bson.RawValue{}, false
}

// arrayElem returns the element at position i, ignoring the keys.
func arrayElem(arr bson.Raw, i int) (bson.RawValue, bool) {
	it := arr.Iter()
	for n := 0; it.Next(); n++ {
		if n == i {
			return it.Value(), true
		}
	}
	return bson.RawValue{}, false
}

// arrayIndex reports whether s is an array index as mongod reads path
// components: decimal digits without a leading zero.
func arrayIndex(s string) (int, bool) {
	if s == "" || len(s) > 9 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func splitPath(p string) []string { return strings.Split(p, ".") }
