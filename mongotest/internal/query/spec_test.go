package query

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/collation"
	"github.com/mongoscope/mongoscope/mongotest/internal/crudspec"
)

// TestCRUDSpecQueries evaluates the CRUD unified tests whose operations
// only read or delete (find, findOne, count, countDocuments, distinct,
// deleteOne, deleteMany, findOneAndDelete) with this package alone: the
// collection is the test's initialData, and each operation's expectResult
// and the test's outcome are checked.
func TestCRUDSpecQueries(t *testing.T) {
	crudspec.Run(t, "crud/unified (query)", unevaluable, runQueryCase)
}

var queryOps = map[string]bool{
	"find": true, "findOne": true, "count": true, "countDocuments": true, "distinct": true,
	"deleteOne": true, "deleteMany": true, "findOneAndDelete": true,
}

var ignoredArgs = map[string]bool{
	"filter": true, "sort": true, "skip": true, "limit": true, "projection": true,
	"batchSize": true, "comment": true, "hint": true, "fieldName": true, "collation": true,
}

// unevaluable says why a test cannot be run with this package alone, or
// returns "".
func unevaluable(tc bson.Raw) string {
	if o, err := tc.LookupErr("outcome"); err == nil && bytes.Contains(o.Value, []byte("$$")) {
		return "outcome uses $$ matching operators"
	}
	ops, _ := tc.Lookup("operations").ArrayOK()
	it := ops.Iter()
	for it.Next() {
		op := it.Value().Document()
		name := op.Lookup("name").StringValue()
		if !queryOps[name] {
			return "operation " + name + " is not a read or delete"
		}
		if !strings.HasPrefix(op.Lookup("object").StringValue(), "collection") {
			return "operation on a non-collection object"
		}
		if r, err := op.LookupErr("expectResult"); err == nil && bytes.Contains(r.Value, []byte("$$")) {
			return "expectResult uses $$ matching operators"
		}
		if _, err := op.LookupErr("expectError"); err == nil {
			return "expects a server error"
		}
		args, _ := op.Lookup("arguments").DocumentOK()
		ai := args.Iter()
		for ai.Next() {
			if !ignoredArgs[ai.Key()] {
				return "argument " + ai.Key() + " needs more than the query engine"
			}
		}
	}
	if o, ok := tc.Lookup("outcome").ArrayOK(); ok {
		if vals, _ := o.Values(); len(vals) != 1 {
			return "outcome names several collections"
		}
	}
	return ""
}

func runQueryCase(t *testing.T, tc bson.Raw, initial []bson.Raw) {
	docs := slices.Clone(initial)
	ops, _ := tc.Lookup("operations").ArrayOK()
	it := ops.Iter()
	for it.Next() {
		op := it.Value().Document()
		name := op.Lookup("name").StringValue()
		args, _ := op.Lookup("arguments").DocumentOK()
		var coll Collator
		if cv, err := args.LookupErr("collation"); err == nil {
			c, err := collation.Parse(cv)
			if err != nil {
				t.Fatalf("%s collation: %v", name, err)
			}
			if c != nil {
				coll = c
			}
		}
		m, err := NewMatcherWith(args.Lookup("filter").Document(), Options{Collator: coll})
		if err != nil {
			t.Fatalf("%s filter: %v", name, err)
		}
		var idx []int
		for i, d := range docs {
			if m.Match(d) {
				idx = append(idx, i)
			}
		}
		if s, ok := args.Lookup("sort").DocumentOK(); ok {
			so, err := NewSortWith(s, coll)
			if err != nil {
				t.Fatal(err)
			}
			slices.SortStableFunc(idx, func(a, b int) int { return so.Compare(docs[a], docs[b]) })
		}
		if n, ok := args.Lookup("skip").AsInt64OK(); ok {
			idx = idx[min(int(n), len(idx)):]
		}
		if n, ok := args.Lookup("limit").AsInt64OK(); ok && n != 0 {
			if n < 0 {
				n = -n
			}
			idx = idx[:min(int(n), len(idx))]
		}
		proj, err := NewProjection(args.Lookup("projection").Document())
		if err != nil {
			t.Fatal(err)
		}
		project := func(i int) bson.RawValue {
			out, err := proj.Apply(nil, docs[i])
			if err != nil {
				t.Fatal(err)
			}
			return bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: out}
		}
		want, hasWant := op.LookupErr("expectResult")
		var got bson.RawValue
		switch name {
		case "find":
			got = arrayOf(idx, project)
		case "findOne", "findOneAndDelete":
			got = bson.RawValue{Type: bson.TypeNull}
			if len(idx) > 0 {
				got = project(idx[0])
			}
			if name == "findOneAndDelete" && len(idx) > 0 {
				docs = slices.Delete(docs, idx[0], idx[0]+1)
			}
		case "count", "countDocuments":
			got = bson.RawValue{Type: bson.TypeInt64, Value: bson.AppendInt64(nil, int64(len(idx)))}
		case "distinct":
			got = distinct(docs, idx, args.Lookup("fieldName").StringValue(), coll)
			if hasWant == nil {
				want = sortedArray(want)
				got = sortedArray(got)
			}
		case "deleteOne", "deleteMany":
			if name == "deleteOne" {
				idx = idx[:min(1, len(idx))]
			}
			for i := len(idx) - 1; i >= 0; i-- {
				docs = slices.Delete(docs, idx[i], idx[i]+1)
			}
			got = bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: bson.AppendInt32Element(
				mustStart(), "deletedCount", int32(len(idx)))}
			got.Value, _ = bson.AppendDocumentEnd(got.Value, 0)
			if hasWant == nil {
				if dc, err := want.Document().LookupErr("deletedCount"); err == nil && !Equal(dc, got.Document().Lookup("deletedCount")) {
					t.Errorf("%s deletedCount = %d, want %s", name, len(idx), dc)
				}
			}
			continue
		}
		if hasWant == nil && !resultMatches(got, want) {
			t.Errorf("%s result = %s, want %s", name, got, want)
		}
	}
	if o, ok := tc.Lookup("outcome").ArrayOK(); ok {
		vals, _ := o.Values()
		want := vals[0].Document().Lookup("documents")
		var idx []int
		for i := range docs {
			idx = append(idx, i)
		}
		got := arrayOf(idx, func(i int) bson.RawValue {
			return bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: docs[i]}
		})
		if !Equal(got, want) {
			t.Errorf("outcome = %s, want %s", got, want)
		}
	}
}

func mustStart() []byte {
	_, b := bson.AppendDocumentStart(nil)
	return b
}

func arrayOf(idx []int, f func(int) bson.RawValue) bson.RawValue {
	start, b := bson.AppendDocumentStart(nil)
	for n, i := range idx {
		b = bson.AppendValueElement(b, bson.ArrayKey(n), f(i))
	}
	b, _ = bson.AppendDocumentEnd(b, start)
	return bson.RawValue{Type: bson.TypeArray, Value: b}
}

// distinct collects the values fieldName reaches in the matching
// documents, array elements flattened, without duplicates.
func distinct(coll []bson.Raw, idx []int, field string, collator Collator) bson.RawValue {
	var vals []bson.RawValue
	c := &collectPred{}
	for _, i := range idx {
		c.vals = c.vals[:0]
		w := walker{pred: c, expand: true}
		w.doc(coll[i], splitPath(field))
		for _, v := range c.vals {
			if v.Type == typeMissing || v.Type == bson.TypeArray {
				continue
			}
			if !slices.ContainsFunc(vals, func(x bson.RawValue) bool { return CompareWith(x, v, collator) == 0 }) {
				vals = append(vals, v)
			}
		}
	}
	return arrayOf(seq(len(vals)), func(i int) bson.RawValue { return vals[i] })
}

type collectPred struct{ vals []bson.RawValue }

func (c *collectPred) matchElem(v bson.RawValue) bool { c.vals = append(c.vals, v); return false }

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func sortedArray(v bson.RawValue) bson.RawValue {
	vals, _ := v.Array().Values()
	slices.SortFunc(vals, Compare)
	return arrayOf(seq(len(vals)), func(i int) bson.RawValue { return vals[i] })
}

// resultMatches compares an operation's result with expectResult as the
// unified format does: root-level documents (the result itself, or each
// document of a result array) may hold fields the expectation omits.
func resultMatches(got, want bson.RawValue) bool {
	switch {
	case want.Type == bson.TypeArray && got.Type == bson.TypeArray:
		g, _ := got.Array().Values()
		w, _ := want.Array().Values()
		if len(g) != len(w) {
			return false
		}
		for i := range w {
			if !rootDocMatches(g[i], w[i]) {
				return false
			}
		}
		return true
	case want.Type == bson.TypeEmbeddedDocument:
		return rootDocMatches(got, want)
	}
	return Equal(got, want)
}

func rootDocMatches(got, want bson.RawValue) bool {
	if want.Type != bson.TypeEmbeddedDocument || got.Type != bson.TypeEmbeddedDocument {
		return Equal(got, want)
	}
	it := want.Document().Iter()
	for it.Next() {
		g, err := got.Document().LookupErr(it.Key())
		if err != nil || !Equal(g, it.Value()) {
			return false
		}
	}
	return true
}
