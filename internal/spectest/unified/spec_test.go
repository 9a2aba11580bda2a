package unified

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/internal/spectest"
)

// TestUnifiedFormatMatchingFiles runs the unified format's own valid-pass
// and valid-fail files whose outcome depends on matching alone: their
// operations are insertOne and find on the collections of initialData, so
// the actual values can be computed here without a server. valid-pass
// cases must match; each valid-fail case must produce a mismatch or an
// invalid-expectation error. Every other case is skipped with its reason.
func TestUnifiedFormatMatchingFiles(t *testing.T) {
	total := spectest.NewTally("unified-test-format matching")
	for _, kind := range []string{"valid-pass", "valid-fail"} {
		for _, file := range spectest.Files(t, "*.json", "unified-test-format", "tests", kind) {
			doc, err := LoadFile(file)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			tests, err := doc.Lookup("tests").Array().Values()
			if err != nil {
				t.Fatalf("%s: tests: %v", file, err)
			}
			for _, tc := range tests {
				name := kind + "/" + strings.TrimSuffix(filepath.Base(file), ".json") + "/" + tc.Document().Lookup("description").StringValue()
				sim, reason := newSimulation(doc, tc.Document())
				if reason != "" && strings.HasPrefix(filepath.Base(file), "operator-") {
					// These files exist to test matching; skipping one would
					// hide a gap in the simulation.
					t.Errorf("%s: an operator file was not run: %s", name, reason)
					continue
				}
				if reason != "" {
					total.Skip(t, name, reason)
					continue
				}
				total.Run(t, name, func(t *testing.T) {
					err := sim.run()
					if kind == "valid-pass" && err != nil {
						t.Fatal(err)
					}
					if kind == "valid-fail" {
						var me *MismatchError
						var ie *InvalidTestError
						if !errors.As(err, &me) && !errors.As(err, &ie) {
							t.Fatalf("valid-fail case passed matching (err = %v)", err)
						}
						t.Logf("fails as it must: %v", err)
					}
				})
			}
		}
	}
	total.Log(t)
	if total.Passed == 0 {
		t.Fatal("no spec case was run; the file selection is wrong")
	}
}

// simulation holds one test's operations against in-memory collections.
type simulation struct {
	colls  map[string]string          // collection entity id -> "db.coll"
	data   map[string][]bson.RawValue // "db.coll" -> documents
	ops    []bson.Raw
	events []bson.RawValue // expectEvents[0].events, if any
	client string
}

const needsServer = "needs a server or driver: only insertOne, find and commandStartedEvent on insert are simulated"

// newSimulation prepares a test, or says why it cannot be decided by
// matching alone.
func newSimulation(file, test bson.Raw) (*simulation, string) {
	s := &simulation{colls: map[string]string{}, data: map[string][]bson.RawValue{}}
	ents, _ := file.Lookup("createEntities").Array().Values()
	dbs := map[string]string{}
	for _, e := range ents {
		d := e.Document()
		if db, ok := d.Lookup("database").DocumentOK(); ok {
			dbs[db.Lookup("id").StringValue()] = db.Lookup("databaseName").StringValue()
		}
		if c, ok := d.Lookup("collection").DocumentOK(); ok {
			s.colls[c.Lookup("id").StringValue()] = dbs[c.Lookup("database").StringValue()] + "." + c.Lookup("collectionName").StringValue()
		}
	}
	init, _ := file.Lookup("initialData").Array().Values()
	for _, c := range init {
		d := c.Document()
		ns := d.Lookup("databaseName").StringValue() + "." + d.Lookup("collectionName").StringValue()
		docs, _ := d.Lookup("documents").Array().Values()
		s.data[ns] = docs
	}
	ops, err := test.Lookup("operations").Array().Values()
	if err != nil || len(ops) == 0 {
		return nil, "test has no operations, so nothing to match"
	}
	for _, o := range ops {
		d := o.Document()
		name := d.Lookup("name").StringValue()
		fields, _ := d.Elements()
		for _, f := range fields {
			switch f.Key() {
			case "name", "object", "arguments", "expectResult":
			default:
				return nil, "operation field " + f.Key() + " needs the runner"
			}
		}
		if name != "insertOne" && name != "find" {
			return nil, needsServer
		}
		if _, ok := s.colls[d.Lookup("object").StringValue()]; !ok {
			return nil, needsServer
		}
		if !d.Lookup("expectError").IsZero() || (name == "insertOne" && !d.Lookup("expectResult").IsZero()) {
			return nil, needsServer
		}
		if name == "find" {
			f := d.Lookup("arguments", "filter").Document()
			it := f.Iter()
			for it.Next() {
				if strings.HasPrefix(it.Key(), "$") {
					return nil, needsServer
				}
				if _, _, isOp := operator(it.Value()); isOp || it.Value().Type == bson.TypeEmbeddedDocument {
					return nil, needsServer
				}
			}
			args, _ := d.Lookup("arguments").Document().Elements()
			for _, a := range args {
				if k := a.Key(); k != "filter" && k != "limit" {
					return nil, needsServer
				}
			}
		}
		s.ops = append(s.ops, d)
	}
	if ee := test.Lookup("expectEvents"); !ee.IsZero() {
		clients, _ := ee.Array().Values()
		if len(clients) != 1 {
			return nil, needsServer
		}
		c := clients[0].Document()
		keys, _ := c.Elements()
		for _, k := range keys {
			if k.Key() != "client" && k.Key() != "events" {
				return nil, "expectEvents option " + k.Key() + " needs the runner's event filtering"
			}
		}
		s.events, _ = c.Lookup("events").Array().Values()
		for _, e := range s.events {
			if e.Document().Lookup("commandStartedEvent").IsZero() {
				return nil, needsServer
			}
		}
		for _, o := range s.ops {
			if o.Lookup("name").StringValue() != "insertOne" {
				return nil, needsServer
			}
		}
	}
	if !test.Lookup("outcome").IsZero() {
		return nil, needsServer
	}
	return s, ""
}

// run performs the operations and matches every expectation.
func (s *simulation) run() error {
	var started []bson.RawValue
	for i, o := range s.ops {
		ns := s.colls[o.Lookup("object").StringValue()]
		path := fmt.Sprintf("operations.%d.expectResult", i)
		switch o.Lookup("name").StringValue() {
		case "insertOne":
			doc := o.Lookup("arguments", "document")
			s.data[ns] = append(s.data[ns], doc)
			db, coll, _ := strings.Cut(ns, ".")
			started = append(started, buildStarted(db, coll, doc))
		case "find":
			filter := o.Lookup("arguments", "filter").Document()
			limit, _ := o.Lookup("arguments", "limit").AsInt64OK()
			var found [][]byte
			for _, d := range s.data[ns] {
				if matchesFilter(filter, d.Document()) {
					found = append(found, d.Value)
				}
				if limit > 0 && int64(len(found)) == limit {
					break
				}
			}
			if exp := o.Lookup("expectResult"); !exp.IsZero() {
				if err := Match(exp, arrayOf(found), &Options{Path: path, Top: TopRootElements}); err != nil {
					return err
				}
			}
		}
	}
	if s.events != nil {
		if len(started) != len(s.events) {
			return fmt.Errorf("simulated %d events, expected %d", len(started), len(s.events))
		}
		for i, e := range s.events {
			exp := e.Document().Lookup("commandStartedEvent").Document()
			it := exp.Iter()
			for it.Next() {
				act := started[i].Document().Lookup(it.Key())
				// "command" is a root-level document; the other fields are
				// plain values.
				if err := Match(it.Value(), act, &Options{Path: fmt.Sprintf("expectEvents.%d.%s", i, it.Key())}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// buildStarted is the commandStartedEvent an insertOne would produce, with
// the fields the unified format's expectations read.
func buildStarted(db, coll string, doc bson.RawValue) bson.RawValue {
	cmd := bson.D{{Key: "insert", Value: coll}, {Key: "documents", Value: bson.A{bson.Raw(doc.Value)}}, {Key: "ordered", Value: true}, {Key: "$db", Value: db}}
	ev := bson.D{{Key: "command", Value: cmd}, {Key: "commandName", Value: "insert"}, {Key: "databaseName", Value: db}}
	b, err := bson.Marshal(ev)
	if err != nil {
		panic(err) // fixed shapes: cannot fail
	}
	return docValue(b)
}

func matchesFilter(filter, doc bson.Raw) bool {
	it := filter.Iter()
	for it.Next() {
		v, err := doc.LookupErr(it.Key())
		if err != nil || Match(it.Value(), v, &Options{Top: TopNested}) != nil {
			return false
		}
	}
	return it.Err() == nil
}

// arrayOf builds a BSON array of documents.
func arrayOf(docs [][]byte) bson.RawValue {
	a := make(bson.A, len(docs))
	for i, d := range docs {
		a[i] = bson.Raw(d)
	}
	b, err := bson.Marshal(bson.D{{Key: "a", Value: a}})
	if err != nil {
		panic(err)
	}
	return bson.Raw(b).Lookup("a")
}
