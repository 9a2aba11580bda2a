package update

import (
	"strings"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// UpsertSeed builds the document an upsert starts from: the equality
// conditions of filter, at their dotted paths ({a: 1, "b.c": 2,
// $and: [{d: {$eq: 3}}]} gives {a: 1, b: {c: 2}, d: 3}). Other operators
// contribute nothing. An _id condition comes first. Two conditions on
// overlapping paths are NotSingleValueField, as in mongod.
func UpsertSeed(filter bson.Raw) (bson.Raw, error) {
	if err := filter.Validate(); err != nil && len(filter) > 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "filter is not a valid BSON document: %v", err)
	}
	var eqs []equality
	if len(filter) > 0 {
		if err := collectEqualities(filter, &eqs, 0); err != nil {
			return nil, err
		}
	}
	for i := range eqs {
		for j := i + 1; j < len(eqs); j++ {
			a, b := eqs[i].path, eqs[j].path
			n := min(len(a), len(b))
			if equalPrefix(a[:n], b[:n]) {
				return nil, mongoerr.New(mongoerr.NotSingleValueField,
					"cannot infer query fields to set, both paths '%s' and '%s' are matched", strings.Join(a, "."), strings.Join(b, "."))
			}
		}
	}
	root := newNode(emptyDoc)
	root.expand()
	// _id first, as mongod stores it.
	for pass := 0; pass < 2; pass++ {
		for _, e := range eqs {
			if (e.path[0] == "_id") != (pass == 0) {
				continue
			}
			if err := setPath(root, e.path, e.val); err != nil {
				return nil, err
			}
		}
	}
	start, b := bson.AppendDocumentStart(nil)
	b = root.appendFields(b)
	return bson.AppendDocumentEnd(b, start)
}

type equality struct {
	path []string
	val  bson.RawValue
}

func equalPrefix(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func collectEqualities(filter bson.Raw, out *[]equality, depth int) error {
	if depth > 100 {
		return mongoerr.New(mongoerr.BadValue, "filter nests $and too deeply")
	}
	it := filter.Iter()
	for it.Next() {
		k, v := it.Key(), it.Value()
		if k == "$and" {
			arr, ok := v.ArrayOK()
			if !ok {
				return mongoerr.New(mongoerr.BadValue, "$and must be an array")
			}
			ai := arr.Iter()
			for ai.Next() {
				d, ok := ai.Value().DocumentOK()
				if !ok {
					return mongoerr.New(mongoerr.BadValue, "$and argument's entries must be objects")
				}
				if err := collectEqualities(d, out, depth+1); err != nil {
					return err
				}
			}
			continue
		}
		if strings.HasPrefix(k, "$") {
			continue
		}
		val, ok := equalityValue(v)
		if !ok {
			continue
		}
		*out = append(*out, equality{path: strings.Split(k, "."), val: val})
	}
	return nil
}

// equalityValue returns the value a field condition pins the field to:
// a plain value, or the operand of $eq.
func equalityValue(v bson.RawValue) (bson.RawValue, bool) {
	switch v.Type {
	case bson.TypeRegex:
		return bson.RawValue{}, false
	case bson.TypeEmbeddedDocument:
		d := bson.Raw(v.Value)
		it := d.Iter()
		if !it.Next() || !strings.HasPrefix(it.Key(), "$") {
			return v, true
		}
		switch it.Key() {
		case "$ref", "$id", "$db":
			return v, true
		}
		eq, err := d.LookupErr("$eq")
		if err != nil || eq.Type == bson.TypeRegex {
			return bson.RawValue{}, false
		}
		return eq, true
	}
	return v, true
}

// setPath sets a dotted path in a document tree, creating documents on
// the way.
func setPath(n *mnode, path []string, v bson.RawValue) error {
	for i, c := range path {
		idx := n.field(c)
		if i == len(path)-1 {
			if idx >= 0 {
				n.setKid(idx, v)
			} else {
				n.add(c, 0, v)
			}
			return nil
		}
		if idx < 0 {
			idx = n.add(c, 0, emptyDoc)
		}
		child := n.kids[idx]
		if child.raw.Type != bson.TypeEmbeddedDocument && !child.expanded {
			return mongoerr.New(mongoerr.NotSingleValueField, "cannot infer query fields to set, path '%s' is matched twice", strings.Join(path[:i+1], "."))
		}
		child.expand()
		n = child
	}
	return nil
}
