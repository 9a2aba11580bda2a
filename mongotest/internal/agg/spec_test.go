package agg

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/internal/spectest"
	"github.com/mongoscope/mongoscope/internal/spectest/unified"
	"github.com/mongoscope/mongoscope/mongotest/internal/collation"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
	"github.com/mongoscope/mongoscope/mongotest/internal/query"
)

// TestCRUDSpecAggregate evaluates the CRUD unified tests' collection
// aggregate operations with this package alone: the collection holds the
// test's initialData, the pipeline runs over it, and each operation's
// expectResult and the test's outcome (what $out wrote) are checked.
// Command-level options that do not change results (batchSize, comment,
// allowDiskUse, rawData, maxTimeMS) are ignored here; the server's
// command handler is tested for those.
func TestCRUDSpecAggregate(t *testing.T) {
	tally := spectest.NewTally("crud/unified aggregate*")
	for _, path := range spectest.Files(t, "aggregate*.json", "crud", "tests", "unified") {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		file, err := bson.ParseExtJSON(data)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		base := filepath.Base(path)
		colls := collectionEntities(file)
		initial := initialData(file)
		fileReason := requirementsReason(file)
		tests, _ := file.Lookup("tests").ArrayOK()
		it := tests.Iter()
		for it.Next() {
			tc := it.Value().Document()
			name := base + "/" + tc.Lookup("description").StringValue()
			reason := fileReason
			if reason == "" {
				reason = requirementsReason(tc)
			}
			if reason == "" {
				reason = unevaluable(tc, colls)
			}
			if reason != "" {
				tally.Skip(t, name, reason)
				continue
			}
			tally.Run(t, name, func(t *testing.T) { runSpecCase(t, tc, colls, initial) })
		}
	}
	tally.Log(t)
	if tally.Passed == 0 {
		t.Error("no aggregate spec case was evaluated")
	}
}

// collectionEntities maps collection entity ids to "db.coll".
func collectionEntities(file bson.Raw) map[string]string {
	dbs := map[string]string{}
	colls := map[string]string{}
	ents, _ := file.Lookup("createEntities").ArrayOK()
	for _, e := range arrayValues(docValue(ents)) {
		d := e.Document()
		if db, ok := d.Lookup("database").DocumentOK(); ok {
			dbs[db.Lookup("id").StringValue()] = db.Lookup("databaseName").StringValue()
		}
	}
	for _, e := range arrayValues(docValue(ents)) {
		if c, ok := e.Document().Lookup("collection").DocumentOK(); ok {
			colls[c.Lookup("id").StringValue()] = dbs[c.Lookup("database").StringValue()] + "." + c.Lookup("collectionName").StringValue()
		}
	}
	return colls
}

// initialData maps "db.coll" to its documents.
func initialData(file bson.Raw) map[string][]bson.Raw {
	out := map[string][]bson.Raw{}
	arr, _ := file.Lookup("initialData").ArrayOK()
	for _, v := range arrayValues(docValue(arr)) {
		d := v.Document()
		ns := d.Lookup("databaseName").StringValue() + "." + d.Lookup("collectionName").StringValue()
		docs := []bson.Raw{}
		for _, x := range arrayValues(d.Lookup("documents")) {
			docs = append(docs, x.Document())
		}
		out[ns] = docs
	}
	return out
}

// requirementsReason skips cases written for servers older than the one
// mongotest plays (they expect old servers' errors or behaviour).
func requirementsReason(doc bson.Raw) string {
	reqs, ok := doc.Lookup("runOnRequirements").ArrayOK()
	if !ok {
		return ""
	}
	for _, r := range arrayValues(docValue(reqs)) {
		if max := r.Document().Lookup("maxServerVersion").StringValue(); max != "" && max < "7" {
			return "needs a server at most " + max
		}
	}
	return ""
}

// unevaluable names why a case cannot be checked by this package alone.
func unevaluable(tc bson.Raw, colls map[string]string) string {
	ops, _ := tc.Lookup("operations").ArrayOK()
	for _, v := range arrayValues(docValue(ops)) {
		op := v.Document()
		if op.Lookup("name").StringValue() != "aggregate" {
			return "operation " + op.Lookup("name").StringValue() + " is not an aggregate"
		}
		if _, ok := colls[op.Lookup("object").StringValue()]; !ok {
			return "database-level aggregate"
		}
		args := op.Lookup("arguments").Document()
		if _, err := op.LookupErr("expectError"); err == nil {
			return "expects a server error"
		}
		stages := pipelineOf(op)
		let, _ := args.Lookup("let").DocumentOK()
		_, err := Compile(stages, Options{DB: "db", Let: let, Out: func(string, string, []bson.Raw) error { return nil }})
		if me := mongoerr.As(errOrNil(err)); err != nil && me.Code == mongoerr.NotImplemented {
			// The refusal itself is what mongotest promises for such a stage.
			return "unsupported stage, refused with NotImplemented as documented: " + stageNames(stages)
		}
	}
	if _, err := tc.LookupErr("outcome"); err != nil {
		for _, v := range arrayValues(docValue(ops)) {
			if _, err := v.Document().LookupErr("expectResult"); err == nil {
				return ""
			}
		}
		return "checks command events only"
	}
	return ""
}

func pipelineOf(op bson.Raw) []bson.Raw {
	var stages []bson.Raw
	for _, s := range arrayValues(op.Lookup("arguments", "pipeline")) {
		stages = append(stages, s.Document())
	}
	return stages
}

func stageNames(stages []bson.Raw) string {
	var names []string
	for _, s := range stages {
		if el, err := s.Index(0); err == nil {
			names = append(names, el.Key())
		}
	}
	return strings.Join(names, ",")
}

func runSpecCase(t *testing.T, tc bson.Raw, colls map[string]string, initial map[string][]bson.Raw) {
	state := map[string][]bson.Raw{}
	for ns, docs := range initial {
		state[ns] = docs
	}
	ops, _ := tc.Lookup("operations").ArrayOK()
	for _, v := range arrayValues(docValue(ops)) {
		op := v.Document()
		ns := colls[op.Lookup("object").StringValue()]
		db, _, _ := strings.Cut(ns, ".")
		let, _ := op.Lookup("arguments", "let").DocumentOK()
		var coll query.Collator
		if cv, err := op.Lookup("arguments").Document().LookupErr("collation"); err == nil {
			c, err := collation.Parse(cv)
			if err != nil {
				t.Fatalf("collation: %v", err)
			}
			if c != nil {
				coll = c
			}
		}
		p, err := Compile(pipelineOf(op), Options{DB: db, Let: let, Collation: coll, Collections: mapCollections(state), Out: func(db, coll string, docs []bson.Raw) error {
			state[db+"."+coll] = docs
			return nil
		}})
		if err != nil {
			t.Fatalf("Compile: %v", err)
		}
		got, err := p.Run(feed(state[ns]))
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if want, err := op.LookupErr("expectResult"); err == nil {
			var wantDocs []bson.Raw
			for _, w := range arrayValues(want) {
				wantDocs = append(wantDocs, w.Document())
			}
			g, w := canonical(t, got), canonical(t, wantDocs)
			if strings.Contains(w, `"$$`) {
				// Special operators ($$type for a $rand result): match
				// as the unified runner does, element by element.
				if len(got) != len(wantDocs) {
					t.Fatalf("result %s\nwant   %s", g, w)
				}
				for i := range got {
					if err := unified.MatchDocument(wantDocs[i], got[i], nil); err != nil {
						t.Fatalf("result %s\nwant   %s: %v", g, w, err)
					}
				}
			} else if g != w {
				t.Fatalf("result %s\nwant   %s", g, w)
			}
		}
	}
	outcome, _ := tc.Lookup("outcome").ArrayOK()
	for _, v := range arrayValues(docValue(outcome)) {
		o := v.Document()
		ns := o.Lookup("databaseName").StringValue() + "." + o.Lookup("collectionName").StringValue()
		var want []bson.Raw
		for _, w := range arrayValues(o.Lookup("documents")) {
			want = append(want, w.Document())
		}
		if g, w := canonical(t, state[ns]), canonical(t, want); g != w {
			t.Fatalf("outcome %s: %s\nwant %s", ns, g, w)
		}
	}
}

// mapCollections reads collections from a map of namespace to documents.
type mapCollections map[string][]bson.Raw

func (m mapCollections) Scan(db, coll string, yield func(bson.Raw) bool) error {
	for _, d := range m[db+"."+coll] {
		if !yield(d) {
			return nil
		}
	}
	return nil
}
