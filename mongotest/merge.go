package mongotest

import (
	"errors"
	"strings"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/agg"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
	"github.com/mongoscope/mongoscope/mongotest/internal/query"
	"github.com/mongoscope/mongoscope/mongotest/internal/store"
)

// mergeSpec is a parsed $merge stage.
type mergeSpec struct {
	db, coll       string
	on             []string // nil: _id
	whenMatched    string   // replace, keepExisting, merge, fail or pipeline
	pipeline       *agg.Pipeline
	whenNotMatched string // insert, discard or fail
	// let are the pipeline's variables, each an expression evaluated
	// against the source document ({new: "$$ROOT"} unless given).
	let []mergeVar
}

type mergeVar struct {
	name string
	x    bson.RawValue
}

// Error codes of $merge that mongoerr does not name.
const (
	codeMergeUnsupported    = 51181
	codeMergeDuplicateOn    = 31465
	codeMergeIntoType       = 51178
	codeMergeOnType         = 51186
	codeMergeOnElem         = 51134
	codeMergeOnEmpty        = 51187
	codeMergeWhenMatched    = 51191
	codeMergeNoUniqueIndex  = 51183
	codeMergeOnMissing      = 51132
	codeMergeOnArray        = 51185
	codeMergeLetNotPipeline = 51199
	codeMergeNoMatch        = 13113
	codeStageNotLast        = 40601
)

// splitMerge finds a $merge stage: it must be the last one (40601). It
// returns the stages before it and the $merge's argument, or all stages
// and a zero value when there is none.
func splitMerge(stages []bson.Raw) ([]bson.Raw, bson.RawValue, error) {
	for i, st := range stages {
		it := st.Iter()
		if !it.Next() || it.Key() != "$merge" {
			continue
		}
		if i != len(stages)-1 {
			return nil, bson.RawValue{}, newError(codeStageNotLast, "$merge can only be the final stage in the pipeline")
		}
		return stages[:i], it.Value(), nil
	}
	return stages, bson.RawValue{}, nil
}

// parseMerge parses $merge's argument, as mongod's $merge parser.
func parseMerge(v bson.RawValue, db string, cmdLet bson.Raw) (*mergeSpec, error) {
	m := &mergeSpec{db: db, whenMatched: "merge", whenNotMatched: "insert"}
	switch v.Type {
	case bson.TypeString:
		m.coll = v.StringValue()
		return m, checkMergeTarget(m)
	case bson.TypeEmbeddedDocument:
	default:
		return nil, newError(mongoerr.TypeMismatch, "$merge requires a string or object argument, but found %s", typeName(v.Type))
	}
	spec := v.Document()
	into, err := spec.LookupErr("into")
	if err != nil {
		return nil, newError(40414, "BSON field '$merge.into' is missing but a required field")
	}
	switch into.Type {
	case bson.TypeString:
		m.coll = into.StringValue()
	case bson.TypeEmbeddedDocument:
		it := into.Document().Iter()
		for it.Next() {
			s, ok := it.Value().StringValueOK()
			switch it.Key() {
			case "db", "coll":
				if !ok {
					return nil, newError(mongoerr.TypeMismatch, "BSON field 'into.%s' is the wrong type '%s', expected type 'string'", it.Key(), typeName(it.Value().Type))
				}
				if it.Key() == "db" {
					m.db = s
				} else {
					m.coll = s
				}
			default:
				return nil, newError(40415, "BSON field 'into.%s' is an unknown field.", it.Key())
			}
		}
	default:
		return nil, newError(codeMergeIntoType, "$merge 'into' field must be either a string or an object, but found %s", typeName(into.Type))
	}
	hasLet := false
	var stages []bson.Raw
	it := spec.Iter()
	for it.Next() {
		val := it.Value()
		switch it.Key() {
		case "into":
		case "on":
			if m.on, err = parseMergeOn(val); err != nil {
				return nil, err
			}
		case "let":
			if val.Type != bson.TypeEmbeddedDocument {
				return nil, newError(mongoerr.TypeMismatch, "BSON field '$merge.let' is the wrong type '%s', expected type 'object'", typeName(val.Type))
			}
			hasLet = true
			li := val.Document().Iter()
			for li.Next() {
				m.let = append(m.let, mergeVar{li.Key(), li.Value()})
			}
		case "whenMatched":
			switch val.Type {
			case bson.TypeString:
				switch s := val.StringValue(); s {
				case "replace", "keepExisting", "merge", "fail":
					m.whenMatched = s
				default:
					return nil, newError(mongoerr.BadValue, "Enumeration value '%s' for field 'whenMatched' is not a valid value.", s)
				}
			case bson.TypeArray:
				stages = []bson.Raw{}
				ai := val.Array().Iter()
				for ai.Next() {
					st, ok := ai.Value().DocumentOK()
					if !ok {
						return nil, newError(mongoerr.TypeMismatch, "Each element of the 'pipeline' array must be an object")
					}
					stages = append(stages, st)
				}
				m.whenMatched = "pipeline"
			default:
				return nil, newError(codeMergeWhenMatched, "$merge 'whenMatched' field must be either a string or an array, but found %s", typeName(val.Type))
			}
		case "whenNotMatched":
			s, ok := val.StringValueOK()
			if !ok {
				return nil, newError(mongoerr.TypeMismatch, "BSON field '$merge.whenNotMatched' is the wrong type '%s', expected type 'string'", typeName(val.Type))
			}
			switch s {
			case "insert", "discard", "fail":
				m.whenNotMatched = s
			default:
				return nil, newError(mongoerr.BadValue, "Enumeration value '%s' for field '$merge.whenNotMatched' is not a valid value.", s)
			}
		default:
			return nil, newError(40415, "BSON field '$merge.%s' is an unknown field.", it.Key())
		}
	}
	if hasLet && m.whenMatched != "pipeline" {
		return nil, newError(codeMergeLetNotPipeline, "Cannot use 'let' variables with 'whenMatched: %s' mode", m.whenMatched)
	}
	if !mergeModeSupported[m.whenMatched+"/"+m.whenNotMatched] {
		return nil, newError(codeMergeUnsupported, "Combination of $merge modes 'whenMatched: %s' and 'whenNotMatched: %s' is not supported", m.whenMatched, m.whenNotMatched)
	}
	if stages != nil {
		if !hasLet {
			m.let = []mergeVar{{"new", bson.RawValue{Type: bson.TypeString, Value: bson.AppendString(nil, "$$ROOT")}}}
		}
		names := make([]string, len(m.let))
		for i, l := range m.let {
			names[i] = l.name
		}
		p, err := agg.Compile(stages, agg.Options{DB: db, Let: cmdLet, Vars: names})
		if err != nil {
			return nil, err
		}
		m.pipeline = p
	}
	return m, checkMergeTarget(m)
}

// mergeModeSupported are the whenMatched/whenNotMatched pairs mongod runs.
var mergeModeSupported = fieldSet("replace/insert", "replace/fail", "replace/discard",
	"merge/insert", "merge/fail", "merge/discard", "keepExisting/insert", "fail/insert",
	"pipeline/insert", "pipeline/fail", "pipeline/discard")

func parseMergeOn(v bson.RawValue) ([]string, error) {
	switch v.Type {
	case bson.TypeString:
		return []string{v.StringValue()}, nil
	case bson.TypeArray:
		var on []string
		it := v.Array().Iter()
		for it.Next() {
			s, ok := it.Value().StringValueOK()
			if !ok {
				return nil, newError(codeMergeOnElem, "$merge 'on' array elements must be strings, but found %s", typeName(it.Value().Type))
			}
			for _, f := range on {
				if f == s {
					return nil, newError(codeMergeDuplicateOn, "Found a duplicate field '%s'", s)
				}
			}
			on = append(on, s)
		}
		if len(on) == 0 {
			return nil, newError(codeMergeOnEmpty, "If explicitly specifying $merge 'on', must include at least one field")
		}
		return on, nil
	}
	return nil, newError(codeMergeOnType, "$merge 'on' field must be either a string or an array of strings, but found %s", typeName(v.Type))
}

func checkMergeTarget(m *mergeSpec) error {
	if m.coll == "" || m.db == "" || strings.ContainsAny(m.coll, "$\x00") {
		return newError(mongoerr.InvalidNamespace, "Invalid $merge target namespace: '%s'", ns(m.db, m.coll))
	}
	if strings.HasPrefix(m.coll, "system.") {
		return newError(31319, "Cannot $merge to special collection: %s", m.coll)
	}
	switch m.db {
	case "admin", "config", "local":
		return newError(31320, "Cannot $merge to internal database: %s", m.db)
	}
	return nil
}

// onIsID tells whether the merge matches on _id alone.
func (m *mergeSpec) onIsID() bool { return m.on == nil || (len(m.on) == 1 && m.on[0] == "_id") }

// runMerge writes docs into the target as m says, one document after the
// other as mongod's batches do (an error leaves earlier writes in place).
// The target's validator applies unless r has bypassDocumentValidation.
func (s *Server) runMerge(r *Request, m *mergeSpec, docs []bson.Raw) error {
	if s.store.View(m.db, m.coll) != nil {
		return errViewWrite(m.db, m.coll)
	}
	c := s.store.Collection(m.db, m.coll)
	if err := errTimeseriesUnsupported(c, "$merge"); err != nil {
		return err
	}
	var val *validation
	if c != nil {
		var err error
		if val, err = writeValidation(r, c); err != nil {
			return err
		}
	}
	if !m.onIsID() {
		// mongod needs a unique index on exactly the 'on' fields.
		if c == nil || !hasUniqueIndexOn(c, m.on) {
			return newError(codeMergeNoUniqueIndex, "Cannot find index to verify that join fields will be unique")
		}
	}
	for _, d := range docs {
		if m.onIsID() {
			if _, err := d.LookupErr("_id"); err != nil {
				var err error
				if d, err = store.PrepareInsert(d); err != nil {
					return err
				}
			}
		}
		target, err := m.findTarget(c, d)
		if err != nil {
			return err
		}
		if target == nil {
			switch m.whenNotMatched {
			case "discard":
				continue
			case "fail":
				return newError(codeMergeNoMatch, "$merge could not find a matching document in the target collection for at least one document in the source collection")
			}
			if c == nil {
				if c, err = s.store.CollectionOrCreate(m.db, m.coll); err != nil {
					return err
				}
			}
			if err := val.check(d, nil); err != nil {
				return err
			}
			if err := c.Insert(d); err != nil {
				return err
			}
			continue
		}
		id := target.Lookup("_id")
		var newDoc bson.Raw
		switch m.whenMatched {
		case "keepExisting":
			continue
		case "fail":
			// mongod inserts and reports the unique index's E11000.
			if err := c.Insert(d); err != nil {
				return err
			}
			continue
		case "replace":
			newDoc = d
		case "merge":
			newDoc = mergeTop(target, d)
		case "pipeline":
			vars := make(agg.Vars, len(m.let))
			for _, l := range m.let {
				v, err := agg.Eval(l.x, d, nil, time.Now())
				if err != nil {
					return err
				}
				vars[l.name] = v
			}
			out, err := m.pipeline.RunWith(func(yield func(bson.Raw) bool) { yield(target) }, vars)
			if err != nil {
				return err
			}
			if len(out) != 1 {
				return newError(mongoerr.NotImplemented, "mongotest's $merge pipeline must produce one document")
			}
			newDoc = out[0]
		}
		if err := val.check(newDoc, target); err != nil {
			return err
		}
		if err := c.Replace(id, newDoc); err != nil {
			var me *mongoerr.Error
			if errors.As(err, &me) && me.Code == mongoerr.ImmutableField {
				return newError(mongoerr.ImmutableField, "$merge failed to update the matching document, did you attempt to modify the _id or the shard key? :: caused by :: %s", me.Message)
			}
			return err
		}
	}
	return nil
}

// findTarget returns the target's document matching d on m.on, or nil.
func (m *mergeSpec) findTarget(c *store.Collection, d bson.Raw) (bson.Raw, error) {
	if m.onIsID() {
		if c == nil {
			return nil, nil
		}
		doc, _ := c.FindByID(d.Lookup("_id"))
		return doc, nil
	}
	start, f := bson.AppendDocumentStart(nil)
	for _, path := range m.on {
		v, err := d.LookupErr(strings.Split(path, ".")...)
		if err != nil || v.Type == bson.TypeNull || v.Type == bson.TypeUndefined {
			return nil, newError(codeMergeOnMissing, "$merge write error: 'on' field cannot be missing, null, undefined or an array")
		}
		if v.Type == bson.TypeArray {
			return nil, newError(codeMergeOnArray, "$merge write error: 'on' field '%s' is an array", path)
		}
		es, b := bson.AppendDocumentElementStart(f, path)
		b = bson.AppendValueElement(b, "$eq", v)
		f, _ = bson.AppendDocumentEnd(b, es)
	}
	f, _ = bson.AppendDocumentEnd(f, start)
	mt, err := query.NewMatcher(f)
	if err != nil {
		return nil, err
	}
	var found bson.Raw
	c.Scan(func(doc bson.Raw) bool {
		if mt.Match(doc) {
			found = doc
			return false
		}
		return true
	})
	return found, nil
}

// hasUniqueIndexOn tells whether c has a unique index whose key fields are
// exactly fields (in any order).
func hasUniqueIndexOn(c *store.Collection, fields []string) bool {
	want := make(map[string]bool, len(fields))
	for _, f := range fields {
		want[f] = true
	}
	for _, ix := range c.ListIndexes() {
		if !ix.Unique && ix.Name != store.IDIndexName {
			continue
		}
		n := 0
		it := ix.Key.Iter()
		ok := true
		for it.Next() {
			if !want[it.Key()] {
				ok = false
			}
			n++
		}
		if ok && n == len(want) {
			return true
		}
	}
	return false
}

// mergeTop is whenMatched: merge: target with d's top-level fields set.
func mergeTop(target, d bson.Raw) bson.Raw {
	start, b := bson.AppendDocumentStart(nil)
	it := target.Iter()
	for it.Next() {
		if v, err := d.LookupErr(it.Key()); err == nil {
			b = bson.AppendValueElement(b, it.Key(), v)
			continue
		}
		b = append(b, it.Element()...)
	}
	it = d.Iter()
	for it.Next() {
		if _, err := target.LookupErr(it.Key()); err != nil {
			b = append(b, it.Element()...)
		}
	}
	b, _ = bson.AppendDocumentEnd(b, start)
	return b
}
