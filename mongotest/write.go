package mongotest

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
	"github.com/mongoscope/mongoscope/mongotest/internal/query"
	"github.com/mongoscope/mongoscope/mongotest/internal/store"
	"github.com/mongoscope/mongoscope/mongotest/internal/update"
)

var (
	insertArgs = fieldSet("documents", "ordered", "bypassDocumentValidation", "stmtIds", "stmtId")
	updateArgs = fieldSet("updates", "ordered", "bypassDocumentValidation", "stmtIds", "stmtId", "let")
	deleteArgs = fieldSet("deletes", "ordered", "stmtIds", "stmtId", "let")
	// The fields of one update or delete statement.
	updateStmtArgs = fieldSet("q", "u", "upsert", "multi", "arrayFilters", "hint", "upsertSupplied", "sort", "collation")
	deleteStmtArgs = fieldSet("q", "limit", "hint", "collation")
)

// writePrologue does what every write command starts with: argument and
// role checks, the collection name, the ordered flag, the statements and
// the retryable-write session (nil for other writes; end it).
func (s *Server) writePrologue(r *Request, known map[string]bool, stmtsKey string) (coll string, ordered bool, stmts []bson.Raw, rt *retryable, err error) {
	if err = checkArgs(r, known); err != nil {
		return
	}
	if coll, err = collectionArg(r); err != nil {
		return
	}
	ordered = true
	if _, e := r.Body.LookupErr("ordered"); e == nil {
		if ordered, err = boolArg(r.Body, "ordered", r.Name); err != nil {
			return
		}
	}
	if stmts, err = docsArray(r.Body, stmtsKey, r.Name); err != nil {
		return
	}
	if err = s.checkWrite(r); err != nil {
		return
	}
	rt, err = s.beginRetryable(r)
	return
}

// docsArray reads a write's statements: an array of 1 to MaxWriteBatchSize
// documents.
func docsArray(body bson.Raw, key, cmd string) ([]bson.Raw, error) {
	v, err := body.LookupErr(key)
	if err != nil {
		return nil, newError(40414, "BSON field '%s.%s' is missing but a required field", cmd, key)
	}
	arr, ok := v.ArrayOK()
	if !ok {
		return nil, newError(mongoerr.TypeMismatch, "BSON field '%s.%s' is the wrong type '%s', expected type 'array'", cmd, key, typeName(v.Type))
	}
	var out []bson.Raw
	it := arr.Iter()
	for it.Next() {
		d, ok := it.Value().DocumentOK()
		if !ok {
			return nil, newError(mongoerr.TypeMismatch, "BSON field '%s.%s.%d' is the wrong type '%s', expected type 'object'", cmd, key, len(out), typeName(it.Value().Type))
		}
		out = append(out, d)
	}
	if len(out) == 0 || len(out) > MaxWriteBatchSize {
		return nil, newError(codeInvalidLength, "Write batch sizes must be between 1 and %d. Got %d operations.", MaxWriteBatchSize, len(out))
	}
	return out, nil
}

func insertCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	collName, ordered, docs, rt, err := s.writePrologue(r, insertArgs, "documents")
	defer rt.end()
	if err != nil {
		return nil, err
	}
	c, err := s.store.CollectionOrCreate(r.DB, collName)
	if err != nil {
		return nil, err
	}
	val, err := writeValidation(r, c)
	if err != nil {
		return nil, err
	}
	timeField := timeseriesField(c, "timeField")
	var (
		n        int64
		errs     []writeErr
		inserted []int
		ids      []bson.RawValue
	)
	for i, doc := range docs {
		if _, ok := rt.done(i); ok {
			n++
			continue
		}
		err := checkTimeseriesInsert(timeField, doc)
		var stored bson.Raw
		if err == nil {
			stored, err = validInsert(val, doc)
		}
		if err == nil {
			stored, err = c.InsertWithID(stored)
		}
		if err != nil {
			errs = append(errs, writeErr{i, err})
			if ordered {
				break
			}
			continue
		}
		n++
		inserted = append(inserted, i)
		ids = append(ids, stored.Lookup("_id"))
	}
	// mongod commits an insert batch at once, so the fail point fires
	// once per command.
	if len(inserted) > 0 {
		if f := s.txnWriteFault(rt); f != nil {
			if f.failCode != 0 {
				for _, id := range ids {
					c.Delete(id)
				}
				return nil, f.outcome()
			}
			for _, i := range inserted {
				rt.record(i, stmtResult{n: 1})
			}
			if f.close {
				return nil, f.outcome()
			}
		}
		for _, i := range inserted {
			rt.record(i, stmtResult{n: 1})
		}
	}
	start, dst := bson.AppendDocumentStart(nil)
	dst = bson.AppendInt32Element(dst, "n", int32(n))
	dst = appendWriteErrors(dst, errs)
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst, nil
}

// updateStmt is one parsed statement of an update command.
type updateStmt struct {
	q      bson.Raw
	m      *query.Matcher
	u      *update.Update
	upsert bool
	multi  bool
	sort   *query.Sort // 8.0: which match a single update picks; nil for none
}

// parseUpdateStmt checks a statement's fields (a problem fails the whole
// command, as mongod's parser does) and compiles its query and update (a
// problem there is that statement's write error).
func parseUpdateStmt(doc bson.Raw, envFor func(collation bson.RawValue) (*queryEnv, error)) (st updateStmt, cmdErr, stmtErr error) {
	if cmdErr = checkSubArgs(doc, "update.updates", updateStmtArgs); cmdErr != nil {
		return
	}
	if st.q, cmdErr = docArg(doc, "q", "update.updates"); cmdErr != nil {
		return
	}
	if _, err := doc.LookupErr("q"); err != nil {
		cmdErr = newError(40414, "BSON field 'update.updates.q' is missing but a required field")
		return
	}
	u, err := doc.LookupErr("u")
	if err != nil {
		cmdErr = newError(40414, "BSON field 'update.updates.u' is missing but a required field")
		return
	}
	if u.Type != bson.TypeEmbeddedDocument && u.Type != bson.TypeArray {
		cmdErr = newError(mongoerr.TypeMismatch, "BSON field 'update.updates.u' is the wrong type '%s', expected types '[object, array]'", typeName(u.Type))
		return
	}
	if arr, ok := u.ArrayOK(); ok {
		// mongod's parser reads a pipeline's stages as objects, failing the
		// command otherwise; the stages themselves are parsed per statement.
		vals, _ := arr.Values()
		for _, v := range vals {
			if v.Type != bson.TypeEmbeddedDocument {
				cmdErr = newError(mongoerr.TypeMismatch, "Each element of the 'pipeline' array must be an object")
				return
			}
		}
	}
	if st.upsert, cmdErr = boolArg(doc, "upsert", "update.updates"); cmdErr != nil {
		return
	}
	if st.multi, cmdErr = boolArg(doc, "multi", "update.updates"); cmdErr != nil {
		return
	}
	filters, cmdErr := arrayFiltersArg(doc, "update.updates")
	if cmdErr != nil {
		return
	}
	var sortSpec bson.Raw
	if sortSpec, cmdErr = docArg(doc, "sort", "update.updates"); cmdErr != nil {
		return
	}
	_, hasSort := doc.LookupErr("sort")
	if hasSort == nil && st.multi {
		// mongod checks this before it runs the statement, outside the
		// statement's error handling, so the command fails.
		cmdErr = newError(mongoerr.FailedToParse, "Cannot specify sort with multi=true")
		return
	}
	var env *queryEnv
	if env, stmtErr = envFor(doc.Lookup("collation")); stmtErr != nil {
		return
	}
	if st.m, stmtErr = env.matcher(st.q); stmtErr != nil {
		return
	}
	if hasSort == nil {
		if st.sort, stmtErr = env.sort(sortSpec); stmtErr != nil {
			return
		}
		if st.sort.Empty() {
			st.sort = nil
		}
	}
	if st.u, stmtErr = update.CompileWith(u, filters, update.Options{Collation: env.collator(), Let: env.let}); stmtErr != nil {
		var me *mongoerr.Error
		if u.Type == bson.TypeArray && errors.As(stmtErr, &me) && me.Code == mongoerr.Location40324 {
			// mongod lite-parses an update pipeline's stage names
			// before it runs the statements (to check the privileges
			// the stages need): an unknown stage fails the command
			// (ok: 0), as the logging spec's operation-id test sees
			// from real servers. Other stage errors ($match in an
			// update...) come from running the statement.
			cmdErr, stmtErr = stmtErr, nil
		}
		return
	}
	if st.multi && st.u.IsReplacement() {
		stmtErr = newError(mongoerr.FailedToParse, "multi update is not supported for replacement-style update")
	}
	return
}

func arrayFiltersArg(doc bson.Raw, where string) ([]bson.Raw, error) {
	v, err := doc.LookupErr("arrayFilters")
	if err != nil {
		return nil, nil
	}
	arr, ok := v.ArrayOK()
	if !ok {
		return nil, newError(mongoerr.TypeMismatch, "BSON field '%s.arrayFilters' is the wrong type '%s', expected type 'array'", where, typeName(v.Type))
	}
	var out []bson.Raw
	it := arr.Iter()
	for it.Next() {
		d, ok := it.Value().DocumentOK()
		if !ok {
			return nil, newError(mongoerr.TypeMismatch, "BSON field '%s.arrayFilters.%d' is the wrong type '%s', expected type 'object'", where, len(out), typeName(it.Value().Type))
		}
		out = append(out, d)
	}
	return out, nil
}

// forEachMatch calls fn with each document m matches, in natural order,
// until fn returns false. An {_id: v} filter is answered from the _id
// index.
func forEachMatch(c *store.Collection, m *query.Matcher, fn func(doc bson.Raw) bool) {
	if id, ok := m.IDEquality(); ok {
		if doc, found := c.FindByID(id); found && m.Match(doc) {
			fn(doc)
		}
		return
	}
	c.Scan(func(doc bson.Raw) bool {
		if !m.Match(doc) {
			return true
		}
		return fn(doc)
	})
}

// undoLog restores what a statement wrote, for the fail point that fails
// a write after it was applied ("the write must not be reflected").
type undoLog struct {
	c        *store.Collection
	restore  []bson.Raw      // documents as they were before an update
	remove   []bson.RawValue // _ids of upserted documents
	reinsert []bson.Raw      // deleted documents
}

func (u *undoLog) run() {
	for _, d := range u.restore {
		u.c.Replace(d.Lookup("_id"), d)
	}
	for _, id := range u.remove {
		u.c.Delete(id)
	}
	for _, d := range u.reinsert {
		u.c.Insert(d)
	}
}

// validInsert returns doc as it would be stored, checked against val
// (which may be nil).
func validInsert(val *validation, doc bson.Raw) (bson.Raw, error) {
	if val == nil {
		return doc, nil
	}
	stored, err := store.PrepareInsert(doc)
	if err != nil {
		return nil, err
	}
	return stored, val.check(stored, nil)
}

// applyUpdate runs one update statement on c, checking what it writes
// against val (nil for none). With undo non-nil, it keeps what it needs to
// take the write back.
func applyUpdate(c *store.Collection, st updateStmt, val *validation, now time.Time, undo *undoLog) (res stmtResult, err error) {
	visit := func(doc bson.Raw) bool {
		matched, modified := false, false
		before, _, merr := c.Modify(doc.Lookup("_id"), func(cur bson.Raw) (bson.Raw, error) {
			if !st.m.Match(cur) {
				return nil, nil
			}
			matched = true
			out, changed, aerr := st.u.Apply(cur, false, now)
			if aerr != nil || !changed {
				return nil, aerr
			}
			if verr := val.check(out, cur); verr != nil {
				return nil, verr
			}
			modified = true
			return out, nil
		})
		if merr != nil {
			if store.IsNotFound(merr) {
				return true
			}
			err = merr
			return false
		}
		if matched {
			res.n++
		}
		if modified {
			res.nModified++
			if undo != nil {
				undo.restore = append(undo.restore, before)
			}
		}
		return !matched || st.multi
	}
	defer func() {
		if merr := st.m.Err(); merr != nil && err == nil {
			err = merr
		}
	}()
	if st.sort == nil {
		forEachMatch(c, st.m, visit)
	} else {
		// The first match in sort order; later ones are candidates should
		// the first stop matching before it is modified.
		var docs []bson.Raw
		forEachMatch(c, st.m, func(doc bson.Raw) bool {
			docs = append(docs, doc)
			return true
		})
		slices.SortStableFunc(docs, st.sort.Compare)
		for _, doc := range docs {
			if !visit(doc) {
				break
			}
		}
	}
	if err != nil || res.n > 0 || !st.upsert {
		return res, err
	}
	doc, err := upsertDoc(st.q, st.u, now)
	if err == nil {
		doc, err = validInsert(val, doc)
	}
	if err != nil {
		return res, err
	}
	stored, err := c.InsertWithID(doc)
	if err != nil {
		return res, err
	}
	res.n = 1
	res.upserted = stored.Lookup("_id")
	if undo != nil {
		undo.remove = append(undo.remove, res.upserted)
	}
	return res, nil
}

// upsertDoc builds the document an upsert inserts: the query's equality
// fields (its _id among them), then the update applied as an insert.
func upsertDoc(q bson.Raw, u *update.Update, now time.Time) (bson.Raw, error) {
	seed, err := update.UpsertSeed(q)
	if err != nil {
		return nil, err
	}
	if u.IsReplacement() {
		// A replacement keeps only the query's _id, as mongod does.
		start, b := bson.AppendDocumentStart(nil)
		if id, err := seed.LookupErr("_id"); err == nil {
			b = bson.AppendValueElement(b, "_id", id)
		}
		seed, _ = bson.AppendDocumentEnd(b, start)
	}
	doc, _, err := u.Apply(seed, true, now)
	return doc, err
}

func updateCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	collName, ordered, stmts, rt, err := s.writePrologue(r, updateArgs, "updates")
	defer rt.end()
	if err != nil {
		return nil, err
	}
	parsed := make([]updateStmt, len(stmts))
	stmtErrs := make([]error, len(stmts))
	envFor, err := s.writeEnv(r, collName)
	if err != nil {
		return nil, err
	}
	for i, doc := range stmts {
		var cmdErr error
		parsed[i], cmdErr, stmtErrs[i] = parseUpdateStmt(doc, envFor)
		if cmdErr != nil {
			return nil, cmdErr
		}
	}
	c, err := s.store.CollectionOrCreate(r.DB, collName)
	if err != nil {
		return nil, err
	}
	if err := errTimeseriesUnsupported(c, "update"); err != nil {
		return nil, err
	}
	val, err := writeValidation(r, c)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	var (
		n, nModified int64
		errs         []writeErr
		upserted     []stmtResultAt
	)
	for i, st := range parsed {
		res, done := rt.done(i)
		if !done {
			if stmtErrs[i] != nil {
				err = stmtErrs[i]
			} else {
				var undo *undoLog
				if rt != nil {
					undo = &undoLog{c: c}
				}
				res, err = applyUpdate(c, st, val, now, undo)
				if err == nil && (res.n > 0 || res.nModified > 0) {
					if f := s.txnWriteFault(rt); f != nil {
						if f.failCode != 0 {
							undo.run()
							return nil, f.outcome()
						}
						rt.record(i, res)
						if f.close {
							return nil, f.outcome()
						}
					}
				}
				if err == nil {
					rt.record(i, res)
				}
			}
			if err != nil {
				errs = append(errs, writeErr{i, err})
				if ordered {
					break
				}
				continue
			}
		}
		n += res.n
		nModified += res.nModified
		if res.upserted.Type != 0 {
			upserted = append(upserted, stmtResultAt{i, res.upserted})
		}
	}
	start, dst := bson.AppendDocumentStart(nil)
	dst = bson.AppendInt32Element(dst, "n", int32(n))
	if len(upserted) > 0 {
		as, d := bson.AppendArrayElementStart(dst, "upserted")
		for j, u := range upserted {
			ds, e := bson.AppendDocumentElementStart(d, bson.ArrayKey(j))
			e = bson.AppendInt32Element(e, "index", int32(u.index))
			e = bson.AppendValueElement(e, "_id", u.id)
			d, _ = bson.AppendDocumentEnd(e, ds)
		}
		dst, _ = bson.AppendDocumentEnd(d, as)
	}
	dst = appendWriteErrors(dst, errs)
	dst = bson.AppendInt32Element(dst, "nModified", int32(nModified))
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst, nil
}

type stmtResultAt struct {
	index int
	id    bson.RawValue
}

type deleteStmt struct {
	m     *query.Matcher
	multi bool
}

func parseDeleteStmt(doc bson.Raw, envFor func(collation bson.RawValue) (*queryEnv, error)) (st deleteStmt, cmdErr, stmtErr error) {
	if cmdErr = checkSubArgs(doc, "delete.deletes", deleteStmtArgs); cmdErr != nil {
		return
	}
	q, cmdErr := docArg(doc, "q", "delete.deletes")
	if cmdErr != nil {
		return
	}
	if _, err := doc.LookupErr("q"); err != nil {
		cmdErr = newError(40414, "BSON field 'delete.deletes.q' is missing but a required field")
		return
	}
	if _, err := doc.LookupErr("limit"); err != nil {
		cmdErr = newError(40414, "BSON field 'delete.deletes.limit' is missing but a required field")
		return
	}
	limit, _, cmdErr := intArg(doc, "limit", "delete.deletes")
	if cmdErr != nil {
		return
	}
	if limit > 1 {
		cmdErr = newError(mongoerr.FailedToParse, "The limit field in delete objects must be 0 or 1. Got %d", limit)
		return
	}
	st.multi = limit == 0
	env, stmtErr := envFor(doc.Lookup("collation"))
	if stmtErr != nil {
		return
	}
	st.m, stmtErr = env.matcher(q)
	return
}

func applyDelete(c *store.Collection, st deleteStmt, undo *undoLog) int64 {
	var n int64
	forEachMatch(c, st.m, func(doc bson.Raw) bool {
		old, ok := c.DeleteIf(doc.Lookup("_id"), st.m.Match)
		if !ok {
			return true
		}
		n++
		if undo != nil {
			undo.reinsert = append(undo.reinsert, old)
		}
		return st.multi
	})
	return n
}

func deleteCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	collName, ordered, stmts, rt, err := s.writePrologue(r, deleteArgs, "deletes")
	defer rt.end()
	if err != nil {
		return nil, err
	}
	parsed := make([]deleteStmt, len(stmts))
	stmtErrs := make([]error, len(stmts))
	envFor, err := s.writeEnv(r, collName)
	if err != nil {
		return nil, err
	}
	for i, doc := range stmts {
		var cmdErr error
		parsed[i], cmdErr, stmtErrs[i] = parseDeleteStmt(doc, envFor)
		if cmdErr != nil {
			return nil, cmdErr
		}
	}
	if s.store.View(r.DB, collName) != nil {
		return nil, errViewWrite(r.DB, collName)
	}
	c := s.store.Collection(r.DB, collName)
	if err := errTimeseriesUnsupported(c, "delete"); err != nil {
		return nil, err
	}
	var (
		n    int64
		errs []writeErr
	)
	for i, st := range parsed {
		if res, done := rt.done(i); done {
			n += res.n
			continue
		}
		if stmtErrs[i] != nil {
			errs = append(errs, writeErr{i, stmtErrs[i]})
			if ordered {
				break
			}
			continue
		}
		if c == nil {
			continue
		}
		var undo *undoLog
		if rt != nil {
			undo = &undoLog{c: c}
		}
		res := stmtResult{n: applyDelete(c, st, undo)}
		if err := st.m.Err(); err != nil {
			errs = append(errs, writeErr{i, err})
			if ordered {
				break
			}
			continue
		}
		if res.n > 0 {
			if f := s.txnWriteFault(rt); f != nil {
				if f.failCode != 0 {
					undo.run()
					return nil, f.outcome()
				}
				rt.record(i, res)
				if f.close {
					return nil, f.outcome()
				}
			}
		}
		rt.record(i, res)
		n += res.n
	}
	start, dst := bson.AppendDocumentStart(nil)
	dst = bson.AppendInt32Element(dst, "n", int32(n))
	dst = appendWriteErrors(dst, errs)
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst, nil
}
