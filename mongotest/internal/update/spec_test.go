package update

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/agg"
	"github.com/mongoscope/mongoscope/mongotest/internal/collation"
	"github.com/mongoscope/mongoscope/mongotest/internal/crudspec"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
	"github.com/mongoscope/mongoscope/mongotest/internal/query"
)

// TestCRUDSpecUpdates evaluates the CRUD unified tests made only of
// updateOne, updateMany, replaceOne, findOneAndUpdate and
// findOneAndReplace operations (upserts and arrayFilters included) with
// this package and query: each operation's expectResult and the test's
// outcome are checked against the initialData. Pipeline-style updates run
// through the agg package.
func TestCRUDSpecUpdates(t *testing.T) {
	crudspec.Run(t, "crud/unified (update)", unevaluable, runUpdateCase)
}

var updateOps = map[string]bool{
	"updateOne": true, "updateMany": true, "replaceOne": true, "findOneAndUpdate": true, "findOneAndReplace": true,
}

var handledArgs = map[string]bool{
	"filter": true, "update": true, "replacement": true, "upsert": true, "arrayFilters": true,
	"sort": true, "returnDocument": true, "projection": true, "hint": true, "comment": true,
	"bypassDocumentValidation": true, "collation": true, "let": true,
}

func unevaluable(tc bson.Raw) string {
	if strings.HasPrefix(tc.Lookup("description").StringValue(), "Unacknowledged") {
		return "unacknowledged writes have no result to check"
	}
	if o, err := tc.LookupErr("outcome"); err == nil {
		if bytes.Contains(o.Value, []byte("$$")) {
			return "outcome uses $$ matching operators"
		}
		if vals, _ := o.Array().Values(); len(vals) != 1 {
			return "outcome names several collections"
		}
	}
	ops, _ := tc.Lookup("operations").ArrayOK()
	it := ops.Iter()
	for it.Next() {
		op := it.Value().Document()
		name := op.Lookup("name").StringValue()
		if !updateOps[name] {
			return "operation " + name + " is not an update"
		}
		if r, err := op.LookupErr("expectResult"); err == nil &&
			bytes.Count(r.Value, []byte("$$")) != bytes.Count(r.Value, []byte("$$unsetOrMatches")) {
			return "expectResult uses $$ matching operators"
		}
		if _, err := op.LookupErr("expectError"); err == nil {
			return "expects a server error"
		}
		args, _ := op.Lookup("arguments").DocumentOK()
		ai := args.Iter()
		for ai.Next() {
			if !handledArgs[ai.Key()] {
				return "argument " + ai.Key() + " needs more than the update engine"
			}
		}
		if u, err := args.LookupErr("update"); err == nil && u.Type == bson.TypeArray {
			if _, err := Compile(u, nil); err != nil {
				if me, ok := err.(*mongoerr.Error); ok && me.Code == mongoerr.NotImplemented {
					return "the pipeline needs what mongotest does not implement: " + me.Message
				}
			}
		}
	}
	return ""
}

func runUpdateCase(t *testing.T, tc bson.Raw, initial []bson.Raw) {
	docs := slices.Clone(initial)
	ops, _ := tc.Lookup("operations").ArrayOK()
	it := ops.Iter()
	for it.Next() {
		op := it.Value().Document()
		name := op.Lookup("name").StringValue()
		args, _ := op.Lookup("arguments").DocumentOK()
		filter := args.Lookup("filter").Document()
		var coll query.Collator
		if cv, err := args.LookupErr("collation"); err == nil {
			c, err := collation.Parse(cv)
			if err != nil {
				t.Fatalf("collation: %v", err)
			}
			if c != nil {
				coll = c
			}
		}
		let, _ := args.Lookup("let").DocumentOK()
		vars, err := agg.EvalLet(let, testNow)
		if err != nil {
			t.Fatalf("let: %v", err)
		}
		m, err := query.NewMatcherWith(filter, query.Options{Collator: coll, Expr: agg.ExprFilter(vars, testNow, coll)})
		if err != nil {
			t.Fatalf("filter: %v", err)
		}
		u := args.Lookup("update")
		if u.Type == 0 {
			u = args.Lookup("replacement")
		}
		var filters []bson.Raw
		if af, ok := args.Lookup("arrayFilters").ArrayOK(); ok {
			vals, _ := af.Values()
			for _, v := range vals {
				filters = append(filters, v.Document())
			}
		}
		up, err := CompileWith(u, filters, Options{Collation: coll, Let: let})
		if err != nil {
			t.Fatalf("Compile: %v", err)
		}
		var idx []int
		for i, d := range docs {
			if m.Match(d) {
				idx = append(idx, i)
			}
		}
		if s, ok := args.Lookup("sort").DocumentOK(); ok {
			so, err := query.NewSortWith(s, coll)
			if err != nil {
				t.Fatal(err)
			}
			slices.SortStableFunc(idx, func(a, b int) int { return so.Compare(docs[a], docs[b]) })
		}
		if name != "updateMany" {
			idx = idx[:min(1, len(idx))]
		}
		matched, modified := len(idx), 0
		var before, after bson.Raw
		var upsertedID bson.RawValue
		for _, i := range idx {
			out, changed, err := up.Apply(docs[i], false, testNow)
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if before == nil {
				before, after = docs[i], out
			}
			if changed {
				modified++
			}
			docs[i] = out
		}
		if len(idx) == 0 && args.Lookup("upsert").Boolean() {
			seed, err := UpsertSeed(filter)
			if err != nil {
				t.Fatal(err)
			}
			if up.IsReplacement() {
				seed = keepID(seed)
			}
			out, _, err := up.Apply(seed, true, testNow)
			if err != nil {
				t.Fatalf("upsert Apply: %v", err)
			}
			id, err := out.LookupErr("_id")
			if err != nil {
				t.Skip("upsert without an _id needs the store to generate one")
			}
			upsertedID = id
			docs = append(docs, out)
			after = out
		}
		want, hasWant := op.LookupErr("expectResult")
		if hasWant != nil {
			continue
		}
		switch name {
		case "findOneAndUpdate", "findOneAndReplace":
			res := before
			if args.Lookup("returnDocument").StringValue() == "After" {
				res = after
			}
			got := bson.RawValue{Type: bson.TypeNull}
			if res != nil {
				p, err := query.NewProjection(args.Lookup("projection").Document())
				if err != nil {
					t.Fatal(err)
				}
				b, err := p.Apply(nil, res)
				if err != nil {
					t.Fatal(err)
				}
				got = bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: b}
			}
			if !query.Equal(got, want) {
				t.Errorf("%s returned %s, want %s", name, got, want)
			}
		default:
			w := want.Document()
			check := func(field string, got int) {
				if v, err := w.LookupErr(field); err == nil {
					if d, ok := v.DocumentOK(); ok {
						v = d.Lookup("$$unsetOrMatches")
					}
					if n, _ := v.AsInt64OK(); n != int64(got) {
						t.Errorf("%s %s = %d, want %d", name, field, got, n)
					}
				}
			}
			check("matchedCount", matched)
			check("modifiedCount", modified)
			upserted := 0
			if upsertedID.Type != 0 {
				upserted = 1
			}
			check("upsertedCount", upserted)
			if v, err := w.LookupErr("upsertedId"); err == nil && !unsetOrMatches(v, upsertedID) {
				t.Errorf("%s upsertedId = %s, want %s", name, upsertedID, v)
			}
		}
	}
	if o, ok := tc.Lookup("outcome").ArrayOK(); ok {
		vals, _ := o.Values()
		want := vals[0].Document().Lookup("documents")
		wv, _ := want.Array().Values()
		if len(wv) != len(docs) {
			t.Fatalf("outcome has %d documents, want %d", len(docs), len(wv))
		}
		for i := range wv {
			g := bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: docs[i]}
			if !query.Equal(g, wv[i]) || !sameFieldOrder(docs[i], wv[i].Document()) {
				t.Errorf("outcome document %d = %s, want %s", i, docs[i], wv[i])
			}
		}
	}
}

// keepID reduces an upsert seed to its _id: a replacement upsert keeps
// only the query's _id, not its other equality fields.
func keepID(seed bson.Raw) bson.Raw {
	start, b := bson.AppendDocumentStart(nil)
	if id, err := seed.LookupErr("_id"); err == nil {
		b = bson.AppendValueElement(b, "_id", id)
	}
	b, _ = bson.AppendDocumentEnd(b, start)
	return b
}

func sameFieldOrder(a, b bson.Raw) bool {
	keys := func(d bson.Raw) string {
		var ks []string
		it := d.Iter()
		for it.Next() {
			ks = append(ks, it.Key())
		}
		return strings.Join(ks, ",")
	}
	return keys(a) == keys(b)
}

// unsetOrMatches compares as the unified format's {$$unsetOrMatches: x}:
// absent, or equal to x.
func unsetOrMatches(want, got bson.RawValue) bool {
	if d, ok := want.DocumentOK(); ok {
		if inner, err := d.LookupErr("$$unsetOrMatches"); err == nil {
			return got.Type == 0 || query.Equal(inner, got)
		}
	}
	return query.Equal(want, got)
}
