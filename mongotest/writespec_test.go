package mongotest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/internal/spectest"
)

// TestSpecOutMergeViewsCapped runs, against a mongotest server, the unified
// CRUD, collection-management, retryable-reads, retryable-writes and
// unified-test-format (valid-pass) cases
// that use $out, $merge, views or capped collections: initialData is
// written with commands, each operation is sent as its command, and
// expectResult and outcome are compared. Command monitoring expectations
// are the driver's business and are not checked here.
func TestSpecOutMergeViewsCapped(t *testing.T) {
	tally := spectest.NewTally("unified cases with $out/$merge/views/capped (server level)")
	var files []string
	for _, suite := range [][]string{{"crud", "tests", "unified"}, {"collection-management", "tests"},
		{"retryable-reads", "tests", "unified"}, {"retryable-writes", "tests", "unified"},
		{"unified-test-format", "tests", "valid-pass"}} {
		files = append(files, spectest.Files(t, "*.json", suite...)...)
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !usesOutMergeViewsCapped(string(data)) {
			continue
		}
		file, err := bson.ParseExtJSON(data)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		base := filepath.Base(filepath.Dir(path)) + "/" + filepath.Base(path)
		tests, _ := file.Lookup("tests").ArrayOK()
		it := tests.Iter()
		for it.Next() {
			tc := it.Value().Document()
			js, _ := bson.AppendExtJSON(nil, tc, false)
			if !usesOutMergeViewsCapped(string(js)) {
				continue
			}
			name := base + "/" + tc.Lookup("description").StringValue()
			reason := specReqReason(file)
			if reason == "" {
				reason = specReqReason(tc)
			}
			if reason == "" {
				reason = specUnrunnable(tc)
			}
			if reason != "" {
				tally.Skip(t, name, reason)
				continue
			}
			tally.Run(t, name, func(t *testing.T) { runWriteSpecCase(t, file, tc) })
		}
	}
	tally.Log(t)
	if tally.Passed == 0 {
		t.Error("no case was run")
	}
}

func usesOutMergeViewsCapped(s string) bool {
	for _, k := range []string{`"$out"`, `"$merge"`, `"viewOn"`, `"capped"`} {
		if strings.Contains(s, k) {
			return true
		}
	}
	return false
}

// specReqReason is why runOnRequirements exclude mongotest (a server of
// version 8.0 without authentication or encryption), or "".
func specReqReason(doc bson.Raw) string {
	reqs, ok := doc.Lookup("runOnRequirements").ArrayOK()
	if !ok {
		return ""
	}
	it := reqs.Iter()
	reason := ""
	for it.Next() {
		r := it.Value().Document()
		switch {
		case versionAbove(r.Lookup("minServerVersion").StringValue(), DefaultVersion):
			reason = "needs a server at least " + r.Lookup("minServerVersion").StringValue()
		case r.Lookup("maxServerVersion").StringValue() != "" && r.Lookup("maxServerVersion").StringValue() < "8":
			reason = "needs a server at most " + r.Lookup("maxServerVersion").StringValue()
		case r.Lookup("auth").Type == bson.TypeBoolean && r.Lookup("auth").Boolean():
			reason = "needs authentication"
		case r.Lookup("csfle").Type != 0:
			reason = "needs client-side encryption"
		default:
			return "" // one requirement set mongotest meets is enough
		}
	}
	return reason
}

var writeSpecOps = fieldSet("aggregate", "createCollection", "dropCollection", "estimatedDocumentCount", "find", "insertOne", "insertMany", "countDocuments")

// specUnrunnable is why this runner cannot check tc, or "".
func specUnrunnable(tc bson.Raw) string {
	ops, _ := tc.Lookup("operations").ArrayOK()
	it := ops.Iter()
	for it.Next() {
		op := it.Value().Document()
		name := op.Lookup("name").StringValue()
		if !writeSpecOps[name] {
			return "operation " + name + " is not run by this runner (it checks driver behaviour)"
		}
		if ee, ok := op.Lookup("expectError").DocumentOK(); ok {
			if _, err := ee.LookupErr("isClientError"); err == nil {
				return "expects a client-side error"
			}
		}
		js, _ := bson.AppendExtJSON(nil, op, false)
		if strings.Contains(string(js), `"$$`) {
			return "uses the unified format's special matching operators"
		}
		args, _ := op.Lookup("arguments").DocumentOK()
		for _, opt := range []string{"collation", "let", "session", "timeoutMS", "rawData"} {
			if _, err := args.LookupErr(opt); err == nil {
				return "the " + opt + " argument is not run by this runner"
			}
		}
	}
	if len(ops) <= 5 {
		return "no operations"
	}
	return ""
}

func runWriteSpecCase(t *testing.T, file, tc bson.Raw) {
	_, c := crudServer(t)
	dbs := map[string]string{}
	colls := map[string][2]string{}
	ents, _ := file.Lookup("createEntities").ArrayOK()
	for pass := 0; pass < 2; pass++ {
		it := ents.Iter()
		for it.Next() {
			e := it.Value().Document()
			if db, ok := e.Lookup("database").DocumentOK(); ok && pass == 0 {
				dbs[db.Lookup("id").StringValue()] = db.Lookup("databaseName").StringValue()
			}
			if co, ok := e.Lookup("collection").DocumentOK(); ok && pass == 1 {
				colls[co.Lookup("id").StringValue()] = [2]string{dbs[co.Lookup("database").StringValue()], co.Lookup("collectionName").StringValue()}
			}
		}
	}
	initial, _ := file.Lookup("initialData").ArrayOK()
	it := initial.Iter()
	for it.Next() {
		in := it.Value().Document()
		db, coll := in.Lookup("databaseName").StringValue(), in.Lookup("collectionName").StringValue()
		c.mustRun(db, d("drop", coll))
		create := bson.D{{Key: "create", Value: coll}}
		if opts, ok := in.Lookup("createOptions").DocumentOK(); ok {
			oi := opts.Iter()
			for oi.Next() {
				create = append(create, bson.E{Key: oi.Key(), Value: oi.Value()})
			}
		}
		c.mustRun(db, create)
		if docs, ok := in.Lookup("documents").ArrayOK(); ok && len(docs) > 5 {
			c.mustRun(db, d("insert", coll, "documents", in.Lookup("documents")))
		}
	}
	ops, _ := tc.Lookup("operations").ArrayOK()
	it = ops.Iter()
	for i := 0; it.Next(); i++ {
		op := it.Value().Document()
		object := op.Lookup("object").StringValue()
		db, coll := dbs[object], ""
		if nc, ok := colls[object]; ok {
			db, coll = nc[0], nc[1]
		}
		args, _ := op.Lookup("arguments").DocumentOK()
		cmd, path := writeSpecCommand(op.Lookup("name").StringValue(), coll, args)
		r, err := c.run(db, cmd)
		if _, ok := op.Lookup("expectError").DocumentOK(); ok {
			if err == nil {
				t.Fatalf("operation %d: want an error, got %s", i, r)
			}
			continue
		}
		if err != nil {
			t.Fatalf("operation %d (%v): %v", i, cmd, err)
		}
		if want, err := op.LookupErr("expectResult"); err == nil && path != "" {
			got, _ := r.LookupPath(path)
			if js(t, relaxed(t, got)) != js(t, relaxed(t, want)) {
				t.Errorf("operation %d: result %s, want %s", i, relaxed(t, got), relaxed(t, want))
			}
		}
	}
	outcome, _ := tc.Lookup("outcome").ArrayOK()
	it = outcome.Iter()
	for it.Next() {
		o := it.Value().Document()
		db, coll := o.Lookup("databaseName").StringValue(), o.Lookup("collectionName").StringValue()
		r := c.mustRun(db, d("find", coll, "sort", d("_id", 1), "batchSize", 10000))
		got, _ := r.LookupPath("cursor.firstBatch")
		if js(t, relaxed(t, got)) != js(t, relaxed(t, o.Lookup("documents"))) {
			t.Errorf("%s.%s holds %s, want %s", db, coll, relaxed(t, got), relaxed(t, o.Lookup("documents")))
		}
	}
}

// writeSpecCommand returns the command for a unified operation and the
// reply path its result is at ("" for none checked).
func writeSpecCommand(name, coll string, args bson.Raw) (bson.D, string) {
	rest := func(skip ...string) bson.D {
		var out bson.D
		it := args.Iter()
		for it.Next() {
			if !fieldSet(skip...)[it.Key()] {
				out = append(out, bson.E{Key: it.Key(), Value: it.Value()})
			}
		}
		return out
	}
	switch name {
	case "aggregate":
		var target any = coll
		if coll == "" {
			target = 1
		}
		cur := bson.D{}
		if bs := args.Lookup("batchSize"); bs.Type != 0 {
			cur = d("batchSize", bs)
		}
		return append(d("aggregate", target, "cursor", cur), rest("batchSize")...), "cursor.firstBatch"
	case "createCollection":
		return append(d("create", args.Lookup("collection").StringValue()), rest("collection")...), ""
	case "dropCollection":
		return d("drop", args.Lookup("collection").StringValue()), ""
	case "estimatedDocumentCount":
		return d("count", coll), "n"
	case "countDocuments":
		return d("count", coll, "query", args.Lookup("filter")), "n"
	case "find":
		return append(d("find", coll, "batchSize", 10000), rest("batchSize")...), "cursor.firstBatch"
	case "insertOne":
		return d("insert", coll, "documents", bson.A{args.Lookup("document")}), ""
	case "insertMany":
		return d("insert", coll, "documents", args.Lookup("documents")), ""
	}
	return nil, ""
}

// versionAbove reports whether version a ("8.2.0") is above b ("8.0.4"),
// comparing each dotted number.
func versionAbove(a, b string) bool {
	if a == "" {
		return false
	}
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) || i < len(pb); i++ {
		var x, y int
		if i < len(pa) {
			x, _ = strconv.Atoi(pa[i])
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		if x != y {
			return x > y
		}
	}
	return false
}
