package mongotest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/internal/spectest"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
	"github.com/mongoscope/mongoscope/mongotest/internal/query"
)

// TestSpecCRUDServer runs the unified CRUD, collection-management,
// index-management and unified-test-format (valid-pass) tests against a
// mongotest server: each operation is
// sent as the command a driver sends for it (a bulkWrite as one command
// per request), its reply is turned into the driver's result, and
// expectResult, expectError and outcome are matched as the unified test
// format says ($$exists, $$type, $$unsetOrMatches; extra fields allowed in
// root-level documents). Command monitoring expectations are the driver's
// business and are not checked.
func TestSpecCRUDServer(t *testing.T) {
	for _, suite := range [][]string{{"crud", "tests", "unified"}, {"collection-management", "tests"}, {"index-management", "tests"}, {"unified-test-format", "tests", "valid-pass"}} {
		tally := spectest.NewTally(strings.Join(suite[:1], "/") + " (server level)")
		for _, path := range spectest.Files(t, "*.json", suite...) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			file, err := bson.ParseExtJSON(data)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			base := filepath.Base(path)
			tests, _ := file.Lookup("tests").ArrayOK()
			it := tests.Iter()
			for it.Next() {
				tc := it.Value().Document()
				name := base + "/" + tc.Lookup("description").StringValue()
				reason := specReqReason(file)
				if reason == "" {
					reason = specReqReason(tc)
				}
				if reason == "" {
					reason = serverUnrunnable(file, tc)
				}
				if reason != "" {
					tally.Skip(t, name, reason)
					continue
				}
				// A case stopped by an operation mongotest refuses with
				// NotImplemented counts as skipped with the refusal as its
				// reason, not as passed.
				var refused string
				ok := t.Run(name, func(t *testing.T) {
					if refused = runServerSpecCase(t, file, tc); refused != "" {
						t.Skip(refused)
					}
				})
				switch {
				case refused != "":
					tally.Skipped[refused]++
				case ok:
					tally.Passed++
				default:
					tally.Failed++
				}
			}
		}
		tally.Log(t)
		if suite[0] == "crud" && tally.Passed == 0 {
			t.Errorf("%s: no case was run", tally.Suite)
		}
	}
}

var serverSpecOps = fieldSet("find", "findOne", "count", "countDocuments", "estimatedDocumentCount", "distinct",
	"aggregate", "insertOne", "insertMany", "updateOne", "updateMany", "replaceOne", "deleteOne", "deleteMany",
	"findOneAndUpdate", "findOneAndReplace", "findOneAndDelete", "bulkWrite", "createIndex", "dropIndex",
	"dropIndexes", "listIndexes", "createCollection", "dropCollection", "listCollections", "modifyCollection",
	"assertCollectionExists", "assertCollectionNotExists", "clientBulkWrite")

// serverMatchOps are the unified format's special operators this runner
// implements.
var serverMatchOps = fieldSet("$$exists", "$$type", "$$unsetOrMatches")

// serverUnrunnable is why TestSpecCRUDServer cannot check tc, or "".
func serverUnrunnable(file, tc bson.Raw) string {
	// Unacknowledged (w: 0) writes run acknowledged here: their results
	// are the driver's to make up and are not checked; their outcome is.
	var expectations []bson.RawValue
	expectations = append(expectations, tc.Lookup("outcome"))
	ops, _ := tc.Lookup("operations").ArrayOK()
	for _, v := range mustValues(ops) {
		expectations = append(expectations, v.Document().Lookup("expectResult"))
	}
	for _, x := range expectations {
		if x.Type == 0 {
			continue
		}
		raw, _ := bson.Marshal(d("x", x))
		js, _ := bson.AppendExtJSON(nil, raw, false)
		for _, part := range strings.Split(string(js), `"$$`)[1:] {
			op := "$$" + part[:strings.IndexByte(part+`"`, '"')]
			if !serverMatchOps[op] {
				return "expects the unified format's " + op
			}
		}
	}
	it := ops.Iter()
	for it.Next() {
		op := it.Value().Document()
		name := op.Lookup("name").StringValue()
		aj, _ := bson.AppendExtJSON(nil, op, false)
		if strings.Contains(string(aj), "$listLocalSessions") {
			return "$listLocalSessions lists the driver's implicit session"
		}
		if !serverSpecOps[name] {
			return "operation " + name + " is not run by this runner"
		}
		if ee, ok := op.Lookup("expectError").DocumentOK(); ok {
			for _, k := range []string{"isClientError", "isTimeoutError", "errorLabelsContain", "errorLabelsOmit", "errorResponse"} {
				if _, err := ee.LookupErr(k); err == nil {
					return "expectError checks " + k
				}
			}
		}
		args, _ := op.Lookup("arguments").DocumentOK()
		for _, opt := range []string{"session", "timeoutMS", "rawData"} {
			if _, err := args.LookupErr(opt); err == nil {
				return "argument " + opt + " is driver behaviour"
			}
		}
		if reqs, ok := args.Lookup("requests").ArrayOK(); ok {
			rj, _ := bson.AppendExtJSON(nil, reqs, false)
			if strings.Contains(string(rj), `"let"`) {
				// A per-request let is refused by the driver (client error).
				for _, v := range mustValues(reqs) {
					for _, sub := range mustValues(bson.Raw(v.Value)) {
						if d, ok := sub.DocumentOK(); ok {
							if _, err := d.LookupErr("let"); err == nil {
								return "a bulk request's let is a client-side error"
							}
						}
					}
				}
			}
		}
	}
	return ""
}

func mustValues(d bson.Raw) []bson.RawValue {
	vals, _ := d.Values()
	return vals
}

// specOutcome is what one operation gave: a result or an error (with, for
// clientBulkWrite, the partial result and the write errors by index).
type specOutcome struct {
	result      bson.RawValue
	err         *cmdError
	writeErrors map[string]int32
}

// runServerSpecCase runs tc; it returns, instead of failing, the error of
// an operation mongotest refuses with NotImplemented.
func runServerSpecCase(t *testing.T, file, tc bson.Raw) (refused string) {
	_, c := crudServer(t)
	dbs := map[string]string{}
	colls := map[string][2]string{}
	ents, _ := file.Lookup("createEntities").ArrayOK()
	for pass := 0; pass < 2; pass++ {
		for _, e := range mustValues(ents) {
			ed := e.Document()
			if db, ok := ed.Lookup("database").DocumentOK(); ok && pass == 0 {
				dbs[db.Lookup("id").StringValue()] = db.Lookup("databaseName").StringValue()
			}
			if co, ok := ed.Lookup("collection").DocumentOK(); ok && pass == 1 {
				colls[co.Lookup("id").StringValue()] = [2]string{dbs[co.Lookup("database").StringValue()], co.Lookup("collectionName").StringValue()}
			}
		}
	}
	ej, _ := bson.AppendExtJSON(nil, ents, false)
	unacknowledged := strings.Contains(string(ej), `"w":0`)
	initial, _ := file.Lookup("initialData").ArrayOK()
	for _, in := range mustValues(initial) {
		ind := in.Document()
		db, coll := ind.Lookup("databaseName").StringValue(), ind.Lookup("collectionName").StringValue()
		c.mustRun(db, d("drop", coll))
		create := bson.D{{Key: "create", Value: coll}}
		if opts, ok := ind.Lookup("createOptions").DocumentOK(); ok {
			oi := opts.Iter()
			for oi.Next() {
				create = append(create, bson.E{Key: oi.Key(), Value: oi.Value()})
			}
		}
		c.mustRun(db, create)
		if docs, ok := ind.Lookup("documents").ArrayOK(); ok && len(docs) > 5 {
			c.mustRun(db, d("insert", coll, "documents", ind.Lookup("documents")))
		}
	}
	ops, _ := tc.Lookup("operations").ArrayOK()
	for i, ov := range mustValues(ops) {
		op := ov.Document()
		object := op.Lookup("object").StringValue()
		db, coll := dbs[object], ""
		if nc, ok := colls[object]; ok {
			db, coll = nc[0], nc[1]
		}
		name := op.Lookup("name").StringValue()
		args, _ := op.Lookup("arguments").DocumentOK()
		out := runSpecOp(t, c, db, coll, name, args)
		if out.err != nil && out.err.Code == mongoerr.NotImplemented {
			return "refused with NotImplemented: " + out.err.Message
		}
		if ignore, _ := op.Lookup("ignoreResultAndError").BooleanOK(); ignore {
			continue
		}
		if ee, ok := op.Lookup("expectError").DocumentOK(); ok {
			if out.err == nil {
				t.Fatalf("operation %d (%s): want an error, got result %s", i, name, relaxed(t, out.result))
			}
			if msg := errorMismatch(out.err, ee); msg != "" {
				t.Fatalf("operation %d (%s): %s", i, name, msg)
			}
			if want, err := ee.LookupErr("expectResult"); err == nil {
				if msg := unifiedMatch(out.result, want, true, "partialResult"); msg != "" {
					t.Fatalf("operation %d (%s): %s\n got %s\nwant %s", i, name, msg, relaxed(t, out.result), relaxed(t, want))
				}
			}
			if we, ok := ee.Lookup("writeErrors").DocumentOK(); ok {
				it := we.Iter()
				for it.Next() {
					want, _ := it.Value().Document().Lookup("code").AsInt64OK()
					if got, ok := out.writeErrors[it.Key()]; !ok || int64(got) != want {
						t.Fatalf("operation %d (%s): write error %s has code %d (present %t), want %d", i, name, it.Key(), got, ok, want)
					}
				}
			}
			continue
		}
		if out.err != nil {
			t.Fatalf("operation %d (%s %s): %v", i, name, args, out.err)
		}
		if want, err := op.LookupErr("expectResult"); err == nil && !unacknowledged {
			if msg := unifiedMatch(out.result, want, true, "result"); msg != "" {
				t.Fatalf("operation %d (%s): %s\n got %s\nwant %s", i, name, msg, relaxed(t, out.result), relaxed(t, want))
			}
		}
	}
	outcome, _ := tc.Lookup("outcome").ArrayOK()
	for _, o := range mustValues(outcome) {
		od := o.Document()
		db, coll := od.Lookup("databaseName").StringValue(), od.Lookup("collectionName").StringValue()
		r := c.mustRun(db, d("find", coll, "sort", d("_id", 1), "batchSize", 100000))
		got, _ := r.LookupPath("cursor.firstBatch")
		if msg := unifiedMatch(got, od.Lookup("documents"), false, "outcome"); msg != "" {
			t.Errorf("%s.%s: %s\n got %s\nwant %s", db, coll, msg, relaxed(t, got), relaxed(t, od.Lookup("documents")))
		}
	}
	return ""
}

// errorMismatch compares an error with expectError.
func errorMismatch(e *cmdError, ee bson.Raw) string {
	if v, err := ee.LookupErr("errorCode"); err == nil {
		if n, _ := v.AsInt64OK(); int32(n) != e.Code {
			return fmt.Sprintf("error code %d (%s: %s), want %d", e.Code, e.CodeName, e.Message, n)
		}
	}
	if v, err := ee.LookupErr("errorCodeName"); err == nil && v.StringValue() != e.CodeName {
		return fmt.Sprintf("error %s (%d: %s), want %s", e.CodeName, e.Code, e.Message, v.StringValue())
	}
	if v, err := ee.LookupErr("errorContains"); err == nil && !strings.Contains(strings.ToLower(e.Message), strings.ToLower(v.StringValue())) {
		return fmt.Sprintf("error %q does not contain %q", e.Message, v.StringValue())
	}
	return ""
}

// runSpecOp sends the command(s) for one unified operation.
func runSpecOp(t *testing.T, c *client, db, coll, name string, args bson.Raw) specOutcome {
	pick := func(cmd bson.D, pairs ...string) bson.D {
		for i := 0; i+1 < len(pairs); i += 2 {
			if v, err := args.LookupErr(pairs[i]); err == nil {
				cmd = append(cmd, bson.E{Key: pairs[i+1], Value: v})
			}
		}
		return cmd
	}
	run := func(cmd bson.D) (bson.Raw, *cmdError) {
		r, err := c.run(db, cmd)
		if err != nil {
			var ce *cmdError
			if errors.As(err, &ce) {
				return r, ce
			}
			t.Fatalf("%v: %v", cmd, err)
		}
		if we, ok := r.Lookup("writeErrors").ArrayOK(); ok && len(we) > 5 {
			first := mustValues(we)[0].Document()
			code := first.Lookup("code").Int32()
			return r, &cmdError{Code: code, CodeName: mongoerr.CodeName(code), Message: first.Lookup("errmsg").StringValue(), Raw: r}
		}
		if wce, ok := r.Lookup("writeConcernError").DocumentOK(); ok {
			code := wce.Lookup("code").Int32()
			return r, &cmdError{Code: code, CodeName: wce.Lookup("codeName").StringValue(), Message: wce.Lookup("errmsg").StringValue(), Raw: r}
		}
		return r, nil
	}
	docs := func(cmd bson.D) specOutcome {
		r, e := run(cmd)
		if e != nil {
			return specOutcome{err: e}
		}
		batch := r.Lookup("cursor", "firstBatch")
		return specOutcome{result: batch}
	}
	generic := []string{"comment", "comment", "let", "let", "collation", "collation", "hint", "hint"}
	switch name {
	case "find", "findOne":
		cmd := pick(d("find", coll, "batchSize", 100000), "filter", "filter", "sort", "sort", "projection", "projection",
			"skip", "skip", "allowDiskUse", "allowDiskUse", "min", "min", "max", "max", "returnKey", "returnKey",
			"showRecordId", "showRecordId", "maxTimeMS", "maxTimeMS")
		cmd = pick(cmd, generic...)
		limit, _ := args.Lookup("limit").AsInt64OK()
		if name == "findOne" {
			limit = -1
		}
		if limit < 0 {
			cmd = append(cmd, bson.E{Key: "limit", Value: -limit}, bson.E{Key: "singleBatch", Value: true})
		} else if limit > 0 {
			cmd = append(cmd, bson.E{Key: "limit", Value: limit})
		}
		out := docs(cmd)
		if name == "findOne" && out.err == nil {
			vals := mustValues(bson.Raw(out.result.Value))
			out.result = bson.RawValue{Type: bson.TypeNull}
			if len(vals) > 0 {
				out.result = vals[0]
			}
		}
		return out
	case "aggregate":
		var target any = coll
		if coll == "" {
			target = 1
		}
		cmd := pick(d("aggregate", target, "cursor", d("batchSize", 100000)), "pipeline", "pipeline",
			"allowDiskUse", "allowDiskUse", "bypassDocumentValidation", "bypassDocumentValidation", "maxTimeMS", "maxTimeMS")
		return docs(pick(cmd, generic...))
	case "count", "estimatedDocumentCount":
		cmd := pick(d("count", coll), "filter", "query", "skip", "skip", "limit", "limit", "maxTimeMS", "maxTimeMS")
		r, e := run(pick(cmd, generic...))
		if e != nil {
			return specOutcome{err: e}
		}
		return specOutcome{result: r.Lookup("n")}
	case "countDocuments":
		filter := args.Lookup("filter")
		pipeline := bson.A{d("$match", filter)}
		if v, err := args.LookupErr("skip"); err == nil {
			pipeline = append(pipeline, d("$skip", v))
		}
		if v, err := args.LookupErr("limit"); err == nil {
			pipeline = append(pipeline, d("$limit", v))
		}
		pipeline = append(pipeline, d("$group", d("_id", 1, "n", d("$sum", 1))))
		out := docs(pick(d("aggregate", coll, "pipeline", pipeline, "cursor", bson.D{}), generic...))
		if out.err == nil {
			vals := mustValues(bson.Raw(out.result.Value))
			out.result = bson.RawValue{Type: bson.TypeInt64, Value: bson.AppendInt64(nil, 0)}
			if len(vals) > 0 {
				out.result = vals[0].Document().Lookup("n")
			}
		}
		return out
	case "distinct":
		r, e := run(pick(pick(d("distinct", coll), "fieldName", "key", "filter", "query"), generic...))
		if e != nil {
			return specOutcome{err: e}
		}
		return specOutcome{result: r.Lookup("values")}
	case "insertOne", "insertMany":
		var list bson.A
		if name == "insertOne" {
			list = bson.A{args.Lookup("document")}
		} else {
			for _, v := range mustValues(args.Lookup("documents").Array()) {
				list = append(list, v)
			}
		}
		reply, e := run(pick(d("insert", coll, "documents", list), "ordered", "ordered", "bypassDocumentValidation", "bypassDocumentValidation", "comment", "comment"))
		if e != nil {
			// The driver's BulkWriteException carries the partial result.
			n, _ := reply.Lookup("n").AsInt64OK()
			partial, _ := bson.Marshal(d("deletedCount", 0, "insertedCount", n, "matchedCount", 0, "modifiedCount", 0, "upsertedCount", 0, "upsertedIds", bson.D{}))
			return specOutcome{err: e, result: bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: partial}}
		}
		start, b := bson.AppendDocumentStart(nil)
		if name == "insertOne" {
			b = bson.AppendValueElement(b, "insertedId", list[0].(bson.RawValue).Document().Lookup("_id"))
		} else {
			is, bb := bson.AppendDocumentElementStart(b, "insertedIds")
			for i, v := range list {
				bb = bson.AppendValueElement(bb, fmt.Sprint(i), v.(bson.RawValue).Document().Lookup("_id"))
			}
			b, _ = bson.AppendDocumentEnd(bb, is)
		}
		b, _ = bson.AppendDocumentEnd(b, start)
		return specOutcome{result: bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: b}}
	case "updateOne", "updateMany", "replaceOne", "deleteOne", "deleteMany", "bulkWrite":
		return runSpecWrites(t, run, coll, name, args)
	case "findOneAndUpdate", "findOneAndReplace", "findOneAndDelete":
		cmd := pick(d("findAndModify", coll), "filter", "query", "sort", "sort", "projection", "fields",
			"upsert", "upsert", "arrayFilters", "arrayFilters", "bypassDocumentValidation", "bypassDocumentValidation", "maxTimeMS", "maxTimeMS")
		cmd = pick(cmd, generic...)
		switch name {
		case "findOneAndDelete":
			cmd = append(cmd, bson.E{Key: "remove", Value: true})
		case "findOneAndUpdate":
			cmd = pick(cmd, "update", "update")
		default:
			cmd = pick(cmd, "replacement", "update")
		}
		if args.Lookup("returnDocument").StringValue() == "After" {
			cmd = append(cmd, bson.E{Key: "new", Value: true})
		}
		r, e := run(cmd)
		if e != nil {
			return specOutcome{err: e}
		}
		return specOutcome{result: r.Lookup("value")}
	case "createIndex":
		spec := pick(d("key", args.Lookup("keys")), "name", "name", "unique", "unique", "sparse", "sparse",
			"expireAfterSeconds", "expireAfterSeconds", "partialFilterExpression", "partialFilterExpression",
			"collation", "collation", "hidden", "hidden")
		if _, err := args.LookupErr("name"); err != nil {
			spec = append(spec, bson.E{Key: "name", Value: defaultIndexName(args.Lookup("keys").Document())})
		}
		_, e := run(d("createIndexes", coll, "indexes", bson.A{spec}))
		if e != nil {
			return specOutcome{err: e}
		}
		return specOutcome{result: spec[len(spec)-1].Value.(bson.RawValue)}
	case "dropIndex", "dropIndexes":
		var index any = "*"
		if v, err := args.LookupErr("name"); err == nil {
			index = v
		}
		_, e := run(d("dropIndexes", coll, "index", index))
		return specOutcome{err: e}
	case "listIndexes":
		return docs(d("listIndexes", coll))
	case "createCollection":
		cmd := d("create", args.Lookup("collection"))
		it := args.Iter()
		for it.Next() {
			if it.Key() != "collection" {
				cmd = append(cmd, bson.E{Key: it.Key(), Value: it.Value()})
			}
		}
		_, e := run(cmd)
		return specOutcome{err: e}
	case "dropCollection":
		_, e := run(d("drop", args.Lookup("collection")))
		return specOutcome{err: e}
	case "listCollections":
		return docs(pick(d("listCollections", 1), "filter", "filter", "nameOnly", "nameOnly", "authorizedCollections", "authorizedCollections"))
	case "clientBulkWrite":
		return runClientBulkWrite(t, c, args)
	case "assertCollectionExists", "assertCollectionNotExists":
		dbName, collName := args.Lookup("databaseName").StringValue(), args.Lookup("collectionName").StringValue()
		r, err := c.run(dbName, d("listCollections", 1, "filter", d("name", collName)))
		if err != nil {
			t.Fatal(err)
		}
		n := len(mustValues(r.Lookup("cursor", "firstBatch").Array()))
		if (n == 1) != (name == "assertCollectionExists") {
			t.Fatalf("%s %s.%s: listCollections found %d", name, dbName, collName, n)
		}
		return specOutcome{}
	case "modifyCollection":
		cmd := d("collMod", args.Lookup("collection"))
		it := args.Iter()
		for it.Next() {
			if it.Key() != "collection" {
				cmd = append(cmd, bson.E{Key: it.Key(), Value: it.Value()})
			}
		}
		_, e := run(cmd)
		return specOutcome{err: e}
	}
	t.Fatalf("operation %s is not mapped", name)
	return specOutcome{}
}

// defaultIndexName is the name drivers give an index: field_direction
// pairs joined by "_".
func defaultIndexName(keys bson.Raw) string {
	var parts []string
	it := keys.Iter()
	for it.Next() {
		v := it.Value()
		s := fmt.Sprint(v)
		if n, ok := v.AsInt64OK(); ok && v.IsNumber() {
			s = fmt.Sprint(n)
		} else if str, ok := v.StringValueOK(); ok {
			s = str
		}
		parts = append(parts, it.Key()+"_"+s)
	}
	return strings.Join(parts, "_")
}

// runSpecWrites runs updateOne/updateMany/replaceOne/deleteOne/deleteMany,
// or the requests of a bulkWrite one command each, and returns the
// driver's result.
func runSpecWrites(t *testing.T, run func(bson.D) (bson.Raw, *cmdError), coll, name string, args bson.Raw) specOutcome {
	type req struct {
		kind string
		args bson.Raw
	}
	var reqs []req
	if name == "bulkWrite" {
		for _, v := range mustValues(args.Lookup("requests").Array()) {
			el, _ := v.Document().Index(0)
			reqs = append(reqs, req{el.Key(), el.Value().Document()})
		}
	} else {
		reqs = []req{{name, args}}
	}
	ordered := true
	if v, err := args.LookupErr("ordered"); err == nil {
		ordered = v.Boolean()
	}
	var inserted, matched, modified, deleted, upserted int64
	insertedIDs, upsertedIDs := bson.D{}, bson.D{}
	var firstErr *cmdError
	for i, r := range reqs {
		stmt := func(pairs ...string) bson.D {
			var out bson.D
			for j := 0; j+1 < len(pairs); j += 2 {
				if v, err := r.args.LookupErr(pairs[j]); err == nil {
					out = append(out, bson.E{Key: pairs[j+1], Value: v})
				}
			}
			return out
		}
		top := func(cmd bson.D) bson.D {
			for _, k := range []string{"let", "comment", "bypassDocumentValidation"} {
				if v, err := args.LookupErr(k); err == nil {
					cmd = append(cmd, bson.E{Key: k, Value: v})
				}
			}
			return cmd
		}
		var (
			reply bson.Raw
			e     *cmdError
		)
		switch r.kind {
		case "insertOne":
			reply, e = run(top(d("insert", coll, "documents", bson.A{r.args.Lookup("document")})))
			if e == nil {
				inserted++
				insertedIDs = append(insertedIDs, bson.E{Key: fmt.Sprint(i), Value: r.args.Lookup("document", "_id")})
			}
		case "updateOne", "updateMany", "replaceOne":
			s := stmt("filter", "q", "update", "u", "replacement", "u", "upsert", "upsert", "arrayFilters", "arrayFilters",
				"collation", "collation", "hint", "hint", "sort", "sort")
			s = append(s, bson.E{Key: "multi", Value: r.kind == "updateMany"})
			reply, e = run(top(d("update", coll, "updates", bson.A{s})))
			if e == nil {
				n := int64(reply.Lookup("n").Int32())
				up, _ := reply.Lookup("upserted").ArrayOK()
				if vals := mustValues(up); len(vals) > 0 {
					upserted++
					n--
					upsertedIDs = append(upsertedIDs, bson.E{Key: fmt.Sprint(i), Value: vals[0].Document().Lookup("_id")})
				}
				matched += n
				modified += int64(reply.Lookup("nModified").Int32())
			}
		case "deleteOne", "deleteMany":
			s := stmt("filter", "q", "collation", "collation", "hint", "hint")
			limit := 0
			if r.kind == "deleteOne" {
				limit = 1
			}
			s = append(s, bson.E{Key: "limit", Value: limit})
			reply, e = run(top(d("delete", coll, "deletes", bson.A{s})))
			if e == nil {
				deleted += int64(reply.Lookup("n").Int32())
			}
		default:
			t.Fatalf("bulk request %s is not mapped", r.kind)
		}
		if e != nil {
			if firstErr == nil {
				firstErr = e
			}
			if ordered {
				break
			}
		}
	}
	var res bson.D
	switch name {
	case "deleteOne", "deleteMany":
		res = d("deletedCount", deleted)
	case "bulkWrite":
		res = d("deletedCount", deleted, "insertedCount", inserted, "insertedIds", insertedIDs, "matchedCount", matched,
			"modifiedCount", modified, "upsertedCount", upserted, "upsertedIds", upsertedIDs)
	default:
		res = d("matchedCount", matched, "modifiedCount", modified, "upsertedCount", upserted)
		if len(upsertedIDs) > 0 {
			res = append(res, bson.E{Key: "upsertedId", Value: upsertedIDs[0].Value})
		}
	}
	raw, err := bson.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	// With an error, the result is the partial one the driver's exception
	// carries.
	return specOutcome{result: bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: raw}, err: firstErr}
}

// unifiedTypes maps $$type names to BSON types.
var unifiedTypes = map[string][]bson.Type{
	"double": {bson.TypeDouble}, "string": {bson.TypeString}, "object": {bson.TypeEmbeddedDocument},
	"array": {bson.TypeArray}, "binData": {bson.TypeBinary}, "objectId": {bson.TypeObjectID},
	"bool": {bson.TypeBoolean}, "date": {bson.TypeDateTime}, "null": {bson.TypeNull}, "int": {bson.TypeInt32},
	"long": {bson.TypeInt64}, "decimal": {bson.TypeDecimal128}, "timestamp": {bson.TypeTimestamp},
	"regex": {bson.TypeRegex}, "number": {bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128},
}

// unifiedMatch matches actual against expected as the unified test
// format does; root-level documents may hold extra fields. It returns ""
// on a match, else what differs at path.
func unifiedMatch(actual, expected bson.RawValue, root bool, path string) string {
	if d, ok := expected.DocumentOK(); ok {
		if el, err := d.Index(0); err == nil && strings.HasPrefix(el.Key(), "$$") {
			switch el.Key() {
			case "$$unsetOrMatches":
				if actual.Type == 0 {
					return ""
				}
				return unifiedMatch(actual, el.Value(), root, path)
			case "$$type":
				var names []string
				if s, ok := el.Value().StringValueOK(); ok {
					names = []string{s}
				} else {
					for _, v := range mustValues(el.Value().Array()) {
						names = append(names, v.StringValue())
					}
				}
				for _, n := range names {
					for _, ty := range unifiedTypes[n] {
						if actual.Type == ty {
							return ""
						}
					}
				}
				return fmt.Sprintf("%s: type %s, want %v", path, actual.Type, names)
			case "$$exists":
				if (actual.Type != 0) != el.Value().Boolean() {
					return fmt.Sprintf("%s: exists is %t", path, actual.Type != 0)
				}
				return ""
			}
			return path + ": unsupported operator " + el.Key()
		}
		ad, ok := actual.DocumentOK()
		if !ok {
			return fmt.Sprintf("%s: got %s, want a document", path, actual.Type)
		}
		it := d.Iter()
		for it.Next() {
			av, _ := ad.LookupErr(it.Key())
			if msg := unifiedMatch(av, it.Value(), false, path+"."+it.Key()); msg != "" {
				return msg
			}
		}
		if !root {
			ai := ad.Iter()
			for ai.Next() {
				if _, err := d.LookupErr(ai.Key()); err != nil {
					return fmt.Sprintf("%s: unexpected field %s", path, ai.Key())
				}
			}
		}
		return ""
	}
	if expected.Type == bson.TypeArray {
		if actual.Type != bson.TypeArray {
			return fmt.Sprintf("%s: got %s, want an array", path, actual.Type)
		}
		a, w := mustValues(bson.Raw(actual.Value)), mustValues(bson.Raw(expected.Value))
		if len(a) != len(w) {
			return fmt.Sprintf("%s: %d elements, want %d", path, len(a), len(w))
		}
		for i := range w {
			if msg := unifiedMatch(a[i], w[i], root, fmt.Sprintf("%s.%d", path, i)); msg != "" {
				return msg
			}
		}
		return ""
	}
	if actual.Type == 0 {
		return path + ": missing"
	}
	if actual.IsNumber() != expected.IsNumber() || (!actual.IsNumber() && actual.Type != expected.Type) || !query.Equal(actual, expected) {
		return fmt.Sprintf("%s: got %s, want %s", path, actual, expected)
	}
	return ""
}

// runClientBulkWrite sends a clientBulkWrite as the bulkWrite command and
// builds the driver's result (or error with partial result).
func runClientBulkWrite(t *testing.T, c *client, args bson.Raw) specOutcome {
	var nsInfo bson.A
	nsIndex := map[string]int{}
	var ops bson.A
	var kinds []string
	var ids []bson.RawValue
	for _, mv := range mustValues(args.Lookup("models").Array()) {
		el, _ := mv.Document().Index(0)
		kind, m := el.Key(), el.Value().Document()
		ns := m.Lookup("namespace").StringValue()
		idx, ok := nsIndex[ns]
		if !ok {
			idx = len(nsInfo)
			nsIndex[ns] = idx
			nsInfo = append(nsInfo, d("ns", ns))
		}
		copyArgs := func(op bson.D, pairs ...string) bson.D {
			for i := 0; i+1 < len(pairs); i += 2 {
				if v, err := m.LookupErr(pairs[i]); err == nil {
					op = append(op, bson.E{Key: pairs[i+1], Value: v})
				}
			}
			return op
		}
		var op bson.D
		switch kind {
		case "insertOne":
			op = d("insert", idx, "document", m.Lookup("document"))
			ids = append(ids, m.Lookup("document", "_id"))
		case "updateOne", "updateMany", "replaceOne":
			op = copyArgs(d("update", idx, "filter", m.Lookup("filter")), "update", "updateMods", "replacement", "updateMods",
				"upsert", "upsert", "arrayFilters", "arrayFilters", "collation", "collation", "hint", "hint", "sort", "sort")
			op = append(op, bson.E{Key: "multi", Value: kind == "updateMany"})
			ids = append(ids, bson.RawValue{})
		case "deleteOne", "deleteMany":
			op = copyArgs(d("delete", idx, "filter", m.Lookup("filter")), "collation", "collation", "hint", "hint")
			op = append(op, bson.E{Key: "multi", Value: kind == "deleteMany"})
			ids = append(ids, bson.RawValue{})
		default:
			t.Fatalf("clientBulkWrite model %s is not mapped", kind)
		}
		ops = append(ops, op)
		kinds = append(kinds, kind)
	}
	verbose, _ := args.Lookup("verboseResults").BooleanOK()
	cmd := d("bulkWrite", 1, "ops", ops, "nsInfo", nsInfo, "errorsOnly", !verbose)
	for _, k := range []string{"ordered", "bypassDocumentValidation", "let", "comment", "writeConcern"} {
		if v, err := args.LookupErr(k); err == nil {
			cmd = append(cmd, bson.E{Key: k, Value: v})
		}
	}
	r, err := c.run("admin", cmd)
	if err != nil {
		var ce *cmdError
		if errors.As(err, &ce) {
			return specOutcome{err: ce}
		}
		t.Fatal(err)
	}
	n := func(k string) int64 { v, _ := r.Lookup(k).AsInt64OK(); return v }
	res := d("insertedCount", n("nInserted"), "upsertedCount", n("nUpserted"), "matchedCount", n("nMatched"),
		"modifiedCount", n("nModified"), "deletedCount", n("nDeleted"))
	inserts, updates, deletes := bson.D{}, bson.D{}, bson.D{}
	out := specOutcome{}
	for _, iv := range mustValues(r.Lookup("cursor", "firstBatch").Array()) {
		item := iv.Document()
		i := int(item.Lookup("idx").Int32())
		key := fmt.Sprint(i)
		if ok, _ := item.Lookup("ok").AsFloat64OK(); ok != 1 {
			code := item.Lookup("code").Int32()
			if out.err == nil {
				out.err = &cmdError{Code: code, CodeName: item.Lookup("codeName").StringValue(), Message: item.Lookup("errmsg").StringValue(), Raw: r}
				out.writeErrors = map[string]int32{}
			}
			out.writeErrors[key] = code
			continue
		}
		nn, _ := item.Lookup("n").AsInt64OK()
		switch kinds[i] {
		case "insertOne":
			inserts = append(inserts, bson.E{Key: key, Value: d("insertedId", ids[i])})
		case "deleteOne", "deleteMany":
			deletes = append(deletes, bson.E{Key: key, Value: d("deletedCount", nn)})
		default:
			nm, _ := item.Lookup("nModified").AsInt64OK()
			u := d("matchedCount", nn, "modifiedCount", nm)
			if up, err := item.LookupErr("upserted", "_id"); err == nil {
				u = append(u, bson.E{Key: "upsertedId", Value: up})
			}
			updates = append(updates, bson.E{Key: key, Value: u})
		}
	}
	if n("nErrors") > 0 && out.err == nil {
		out.err = &cmdError{Code: 0, Message: "bulkWrite reported errors", Raw: r}
	}
	if verbose {
		res = append(res, bson.E{Key: "insertResults", Value: inserts}, bson.E{Key: "updateResults", Value: updates}, bson.E{Key: "deleteResults", Value: deletes})
	}
	succeeded := n("nInserted")+n("nUpserted")+n("nMatched")+n("nModified")+n("nDeleted") > 0 || len(inserts)+len(updates)+len(deletes) > 0
	if out.err != nil && !succeeded {
		return out // no partial result
	}
	raw, err := bson.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	out.result = bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: raw}
	return out
}
