package mongotest

import (
	"bytes"
	"context"
	"sort"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
	"github.com/mongoscope/mongoscope/mongotest/internal/query"
	"github.com/mongoscope/mongoscope/mongotest/internal/store"
)

var findArgs = fieldSet("filter", "projection", "sort", "skip", "limit", "batchSize", "singleBatch",
	"tailable", "awaitData", "noCursorTimeout", "hint", "allowPartialResults", "allowDiskUse",
	"oplogReplay", "readOnce", "returnKey", "showRecordId", "min", "max", "maxScan", "snapshot", "collation", "let")

// findOpts are the parsed options of find.
type findOpts struct {
	filter, projection, sortSpec bson.Raw
	skip, limit, batchSize       int64
	hasLimit, hasBatchSize       bool
	single, tailable, awaitData  bool
	hint                         bson.RawValue
	returnKey, showRecordID      bool
	keys                         keyMode // what returnKey returns
	collation, let               bson.RawValue
}

// parseFind reads find's options in one pass over the body: this is the
// hot path of every findOne.
func parseFind(r *Request) (findOpts, error) {
	var o findOpts
	const cmd = "find"
	err := eachArg(r, findArgs, func(k []byte, v bson.RawValue) error {
		var err error
		switch string(k) {
		case "filter":
			o.filter, err = docValue(v, "filter", cmd)
		case "projection":
			o.projection, err = docValue(v, "projection", cmd)
		case "sort":
			o.sortSpec, err = docValue(v, "sort", cmd)
		case "skip":
			o.skip, err = intValue(v, "skip", cmd)
		case "limit":
			o.hasLimit = true
			o.limit, err = intValue(v, "limit", cmd)
		case "batchSize":
			o.hasBatchSize = true
			o.batchSize, err = intValue(v, "batchSize", cmd)
		case "singleBatch":
			o.single, err = boolValue(v, "singleBatch", cmd)
		case "tailable":
			o.tailable, err = boolValue(v, "tailable", cmd)
		case "awaitData":
			o.awaitData, err = boolValue(v, "awaitData", cmd)
		case "hint":
			o.hint = v
		case "collation":
			o.collation = v
		case "let":
			o.let = v
		case "returnKey":
			o.returnKey, err = boolValue(v, "returnKey", cmd)
		case "showRecordId":
			o.showRecordID, err = boolValue(v, "showRecordId", cmd)
		case "min", "max", "maxScan", "snapshot":
			return newError(mongoerr.NotImplemented, "mongotest does not support the %s option of find", k)
		}
		return err
	})
	if err != nil {
		return o, err
	}
	if o.awaitData && !o.tailable {
		return o, newError(mongoerr.FailedToParse, "Cannot set 'awaitData' without also setting 'tailable'")
	}
	if o.tailable && o.single {
		return o, newError(mongoerr.FailedToParse, "Cannot set both 'tailable' and 'singleBatch'")
	}
	return o, nil
}

// naturalSort recognizes {$natural: 1} and {$natural: -1}: it returns the
// direction, or 0 for any other sort.
func naturalSort(spec bson.Raw) int {
	it := spec.Iter()
	if !it.Next() || it.Key() != "$natural" {
		return 0
	}
	n, ok := it.Value().AsInt64OK()
	if !ok || (n != 1 && n != -1) || it.Next() {
		return 0
	}
	return int(n)
}

// checkHint accepts a hint naming an existing index (by name or key
// pattern) or {$natural: ±1}; mongod refuses any other.
func checkHint(body bson.Raw, c *store.Collection) error {
	return checkHintValue(body.Lookup("hint"), c)
}

func checkHintValue(v bson.RawValue, c *store.Collection) error {
	if v.Type == 0 || c == nil {
		return nil
	}
	switch v.Type {
	case bson.TypeString:
		name := v.StringValue()
		for _, ix := range c.ListIndexes() {
			if ix.Name == name {
				return nil
			}
		}
	case bson.TypeEmbeddedDocument:
		doc := v.Document()
		if len(doc) == 5 || naturalSort(doc) != 0 {
			return nil
		}
		for _, ix := range c.ListIndexes() {
			if bytesEqual(ix.Key, doc) {
				return nil
			}
		}
	default:
		return newError(mongoerr.FailedToParse, "hint must be a string or an object, not %s", typeName(v.Type))
	}
	return newError(mongoerr.BadValue, "error processing query: planner returned error :: caused by :: hint provided does not correspond to an existing index")
}

func findCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	collName, err := collectionArg(r)
	if err != nil {
		return nil, err
	}
	o, err := parseFind(r)
	if err != nil {
		return nil, err
	}
	if err := s.checkRead(r); err != nil {
		return nil, err
	}
	env, err := s.newQueryEnv("find", r.DB, collName, o.collation, o.let)
	if err != nil {
		return nil, err
	}
	if reply, ok, err := s.findOnView(r, collName, o, env); ok {
		return reply, err
	}
	m, err := env.matcher(o.filter)
	if err != nil {
		return nil, err
	}
	if o.returnKey || o.showRecordID {
		if err := s.checkReturnKey(r.DB, collName, &o); err != nil {
			return nil, err
		}
	}
	if id, ok := m.IDEquality(); ok && !o.returnKey && !o.showRecordID && len(o.projection) == 0 && o.skip == 0 && !o.tailable &&
		len(o.sortSpec) <= 5 && o.hint.Type == 0 && (!o.hasBatchSize || o.batchSize > 0 || o.single) {
		// The _id index answers at most one document: no cursor.
		var docs []bson.Raw
		c, err := s.readCollection(r, r.DB, collName)
		if err != nil {
			return nil, err
		}
		if c != nil {
			if doc, found := c.FindByID(id); found && m.Match(doc) {
				docs = []bson.Raw{doc}
			}
		}
		return appendBatchReply(r.DB, collName, docs), nil
	}
	var proj *query.Projection
	if len(o.projection) > 5 {
		if proj, err = query.NewProjection(o.projection); err != nil {
			return nil, err
		}
	}
	natural := naturalSort(o.sortSpec)
	var srt *query.Sort
	if natural == 0 {
		sortSpec := o.sortSpec
		if o.keys == keyID && len(sortSpec) <= 5 {
			// mongod answers from the _id index: in _id order.
			sortSpec = idAscending
		}
		if srt, err = env.sort(sortSpec); err != nil {
			return nil, err
		}
	}
	c, err := s.readCollection(r, r.DB, collName)
	if err != nil {
		return nil, err
	}
	if err := checkHintValue(o.hint, c); err != nil {
		return nil, err
	}
	if o.tailable {
		if c != nil && !c.Capped() {
			return nil, newError(mongoerr.BadValue, "error processing query: ns=%s tailable cursor requested on non capped collection", ns(r.DB, collName))
		}
		if natural == -1 || (srt != nil && !srt.Empty()) {
			return nil, newError(mongoerr.BadValue, "error processing query: ns=%s cannot use tailable option with a sort other than {$natural: 1}", ns(r.DB, collName))
		}
	}
	batchSize := int64(defaultFirstBatch)
	if o.hasBatchSize {
		batchSize = o.batchSize
	}
	if o.hasLimit && o.limit > 0 && batchSize > o.limit {
		batchSize = o.limit
	}
	cur := &cursor{ns: ns(r.DB, collName)}
	switch {
	case c == nil:
		// No collection: an empty result and no cursor, as mongod's EOF
		// plan.
		return s.replyWithCursor(cur, nil, true)
	case !o.tailable && (natural == -1 || (srt != nil && !srt.Empty())):
		docs, err := sortedMatches(c, m, srt, natural == -1, o.skip, o.limit)
		if err != nil {
			return nil, err
		}
		if o.keys != keyNone {
			for i, d := range docs {
				docs[i] = o.keys.apply(d)
			}
		}
		if proj != nil {
			for i, d := range docs {
				if docs[i], err = proj.Apply(nil, d); err != nil {
					return nil, err
				}
			}
		}
		cur.docs = docs
	default:
		if id, ok := m.IDEquality(); ok && o.skip == 0 && !o.tailable && !o.showRecordID && o.keys == keyNone {
			// The _id index answers at most one document.
			if doc, found := c.FindByID(id); found && m.Match(doc) {
				if proj != nil {
					if doc, err = proj.Apply(nil, doc); err != nil {
						return nil, err
					}
				}
				cur.docs = []bson.Raw{doc}
			}
			break
		}
		// The cursor outlives the request, whose bytes the matcher and
		// projection point into: compile them again from copies.
		if m, err = env.matcher(append(bson.Raw(nil), o.filter...)); err != nil {
			return nil, err
		}
		if proj != nil {
			if proj, err = query.NewProjection(append(bson.Raw(nil), o.projection...)); err != nil {
				return nil, err
			}
		}
		cur.scan = &scanState{c: c, m: m, proj: proj, skip: o.skip, limit: o.limit, limited: o.hasLimit && o.limit > 0,
			tailable: o.tailable, awaitData: o.awaitData, keys: o.keys, showRecordID: o.showRecordID}
	}
	return s.firstBatch(cur, batchSize, o.single)
}

// sortedMatches returns the matching documents of c in sort order (or
// reverse natural order), after skip and limit.
func sortedMatches(c *store.Collection, m *query.Matcher, srt *query.Sort, reverse bool, skip, limit int64) ([]bson.Raw, error) {
	var docs []bson.Raw
	forEachMatch(c, m, func(doc bson.Raw) bool {
		docs = append(docs, doc)
		return true
	})
	if err := m.Err(); err != nil {
		return nil, err
	}
	if reverse {
		for i, j := 0, len(docs)-1; i < j; i, j = i+1, j-1 {
			docs[i], docs[j] = docs[j], docs[i]
		}
	} else {
		sort.SliceStable(docs, func(i, j int) bool { return srt.Compare(docs[i], docs[j]) < 0 })
	}
	if skip >= int64(len(docs)) {
		return nil, nil
	}
	docs = docs[skip:]
	if limit > 0 && limit < int64(len(docs)) {
		docs = docs[:limit]
	}
	return docs, nil
}

var countArgs = fieldSet("query", "skip", "limit", "hint", "fields", "collation")

func countCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	if err := checkArgs(r, countArgs); err != nil {
		return nil, err
	}
	collName, err := collectionArg(r)
	if err != nil {
		return nil, err
	}
	q, err := docArg(r.Body, "query", "count")
	if err != nil {
		return nil, err
	}
	skip, _, err := int64Field(r.Body, "skip")
	if err != nil {
		return nil, err
	}
	if skip < 0 {
		return nil, newError(mongoerr.BadValue, "skip value is negative in count query")
	}
	limit, _, err := int64Field(r.Body, "limit")
	if err != nil {
		return nil, err
	}
	if limit < 0 {
		limit = -limit // a negative limit counts as its absolute value
	}
	if err := s.checkRead(r); err != nil {
		return nil, err
	}
	env, err := s.newQueryEnv("count", r.DB, collName, r.Body.Lookup("collation"), bson.RawValue{})
	if err != nil {
		return nil, err
	}
	m, err := env.matcher(q)
	if err != nil {
		return nil, err
	}
	c := s.store.Collection(r.DB, collName)
	if err := checkHint(r.Body, c); err != nil {
		return nil, err
	}
	var n int64
	if vn, ok, err := s.countOnView(r.DB, collName, q, skip, limit, env); ok {
		if err != nil {
			return nil, err
		}
		n, skip, c = vn, 0, nil
	}
	if c != nil {
		if len(q) <= 5 {
			n = int64(c.Count())
		} else {
			forEachMatch(c, m, func(bson.Raw) bool { n++; return true })
			if err := m.Err(); err != nil {
				return nil, err
			}
		}
	}
	n = max(n-skip, 0)
	if limit > 0 {
		n = min(n, limit)
	}
	start, dst := bson.AppendDocumentStart(nil)
	dst = bson.AppendInt32Element(dst, "n", int32(n))
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst, nil
}

var distinctArgs = fieldSet("key", "query", "hint", "collation")

func distinctCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	if err := checkArgs(r, distinctArgs); err != nil {
		return nil, err
	}
	collName, err := collectionArg(r)
	if err != nil {
		return nil, err
	}
	kv, err := r.Body.LookupErr("key")
	if err != nil {
		return nil, newError(40414, "BSON field 'distinct.key' is missing but a required field")
	}
	key, ok := kv.StringValueOK()
	if !ok {
		return nil, newError(mongoerr.TypeMismatch, "BSON field 'distinct.key' is the wrong type '%s', expected type 'string'", typeName(kv.Type))
	}
	if key == "" {
		return nil, newError(mongoerr.Location15998, "FieldPath cannot be constructed with empty string")
	}
	q, err := docArg(r.Body, "query", "distinct")
	if err != nil {
		return nil, err
	}
	if err := s.checkRead(r); err != nil {
		return nil, err
	}
	env, err := s.newQueryEnv("distinct", r.DB, collName, r.Body.Lookup("collation"), bson.RawValue{})
	if err != nil {
		return nil, err
	}
	m, err := env.matcher(q)
	if err != nil {
		return nil, err
	}
	c, err := s.readCollection(r, r.DB, collName)
	if err != nil {
		return nil, err
	}
	if err := checkHint(r.Body, c); err != nil {
		return nil, err
	}
	var vals []bson.RawValue
	if vdocs, ok, err := s.viewRead(r.DB, collName, env, matchStage(q)...); ok {
		if err != nil {
			return nil, err
		}
		for _, doc := range vdocs {
			vals = distinctValues(vals, bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}, splitDots(key))
		}
	}
	if c != nil {
		path := splitDots(key)
		forEachMatch(c, m, func(doc bson.Raw) bool {
			vals = distinctValues(vals, bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}, path)
			return true
		})
	}
	if err := m.Err(); err != nil {
		return nil, err
	}
	// mongod keeps distinct values in a set ordered as it sorts them, so
	// under a collation values it deems equal are one (the first seen).
	coll := env.collator()
	sort.SliceStable(vals, func(i, j int) bool { return query.CompareWith(vals[i], vals[j], coll) < 0 })
	start, dst := bson.AppendDocumentStart(nil)
	as, dst := bson.AppendArrayElementStart(dst, "values")
	n := 0
	for i, v := range vals {
		if i > 0 && query.CompareWith(vals[i-1], v, coll) == 0 {
			continue
		}
		dst = bson.AppendValueElement(dst, bson.ArrayKey(n), v)
		n++
	}
	dst, _ = bson.AppendDocumentEnd(dst, as)
	if len(dst) > MaxBSONObjectSize {
		return nil, newError(17217, "distinct too big, 16mb cap")
	}
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst, nil
}

func splitDots(path string) []string {
	var out []string
	for {
		i := 0
		for i < len(path) && path[i] != '.' {
			i++
		}
		out = append(out, path[:i])
		if i == len(path) {
			return out
		}
		path = path[i+1:]
	}
}

// distinctValues appends the values at path in v as distinct sees them:
// arrays along the path are traversed, and an array at the end contributes
// its elements.
func distinctValues(dst []bson.RawValue, v bson.RawValue, path []string) []bson.RawValue {
	if len(path) == 0 {
		if arr, ok := v.ArrayOK(); ok {
			it := arr.Iter()
			for it.Next() {
				dst = append(dst, it.Value())
			}
			return dst
		}
		return append(dst, v)
	}
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		next, err := v.Document().LookupErr(path[0])
		if err != nil {
			return dst
		}
		return distinctValues(dst, next, path[1:])
	case bson.TypeArray:
		it := v.Array().Iter()
		for it.Next() {
			if it.Value().Type == bson.TypeEmbeddedDocument {
				dst = distinctValues(dst, it.Value(), path)
			}
		}
	}
	return dst
}

// keyMode is what find's returnKey returns for each document, as
// mongod's plan would: nothing from a collection scan, the _id from an
// _id index scan.
type keyMode uint8

const (
	keyNone  keyMode = iota // returnKey not set
	keyEmpty                // a collection scan: {}
	keyID                   // an _id index scan: {_id}
)

var idAscending = func() bson.Raw {
	start, dst := bson.AppendDocumentStart(nil)
	dst = bson.AppendInt32Element(dst, "_id", 1)
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst
}()

func (k keyMode) apply(doc bson.Raw) bson.Raw {
	if k == keyEmpty {
		return emptyDoc
	}
	start, dst := bson.AppendDocumentStart(nil)
	if v, err := doc.LookupErr("_id"); err == nil {
		dst = bson.AppendValueElement(dst, "_id", v)
	}
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst
}

// indexableIDOps are the operators whose _id predicates mongod answers
// with bounds on the _id index.
var indexableIDOps = fieldSet("$eq", "$gt", "$gte", "$lt", "$lte", "$in")

// idFilter tells how filter uses _id: not at all, as a top-level
// predicate the _id index answers, or in some way mongotest cannot plan.
func idFilter(filter bson.Raw) (none, indexed bool) {
	n := bytes.Count(filter, []byte("_id\x00"))
	if n == 0 {
		return true, false
	}
	v, err := filter.LookupErr("_id")
	if err != nil || n != 1 {
		return false, false
	}
	d, ok := v.DocumentOK()
	if !ok || v.Type == bson.TypeRegex {
		return false, v.Type != bson.TypeRegex
	}
	it := d.Iter()
	ops := 0
	for it.Next() {
		if !indexableIDOps[it.Key()] {
			return false, false
		}
		ops++
	}
	return false, ops > 0
}

// isIDSort tells whether spec is {_id: 1} or {_id: -1}.
func isIDSort(spec bson.Raw) bool {
	it := spec.Iter()
	if !it.Next() || it.Key() != "_id" {
		return false
	}
	n, ok := it.Value().AsInt64OK()
	return ok && (n == 1 || n == -1) && !it.Next()
}

// checkReturnKey allows returnKey and showRecordId only where mongotest
// answers as mongod does, and sets o.keys. mongotest plans no queries, so
// returnKey is answered only where mongod's plan is certain: a collection
// with no index but _id's, no hint and no projection; the _id index is
// used for a {_id: ±1} sort or a top-level _id predicate it bounds, and
// otherwise the collection is scanned. With returnKey, showRecordId adds
// nothing (the command monitoring tests' find with both expects only the
// keys from mongod).
func (s *Server) checkReturnKey(db, coll string, o *findOpts) error {
	natural := naturalSort(o.sortSpec)
	if !o.returnKey {
		if natural != 1 && len(o.sortSpec) > 5 {
			return newError(mongoerr.NotImplemented, "mongotest does not support showRecordId with a sort")
		}
		return nil
	}
	o.showRecordID = false
	if len(o.projection) > 5 {
		return newError(mongoerr.NotImplemented, "mongotest does not support returnKey with a projection")
	}
	if o.hint.Type != 0 {
		return newError(mongoerr.NotImplemented, "mongotest does not support returnKey with a hint")
	}
	if c := s.store.Collection(db, coll); c != nil && len(c.ListIndexes()) > 1 {
		return newError(mongoerr.NotImplemented, "mongotest does not support returnKey on a collection with secondary indexes")
	}
	none, indexed := idFilter(o.filter)
	switch {
	case natural == 1:
		o.keys = keyEmpty
	case len(o.sortSpec) > 5 && !isIDSort(o.sortSpec):
		return newError(mongoerr.NotImplemented, "mongotest does not support returnKey with a sort other than {_id: ±1}")
	case !none && !indexed:
		return newError(mongoerr.NotImplemented, "mongotest does not support returnKey where it cannot tell whether the _id index answers the query")
	case indexed || len(o.sortSpec) > 5:
		o.keys = keyID
	default:
		o.keys = keyEmpty
	}
	return nil
}
