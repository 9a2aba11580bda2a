package mongotest

import (
	"context"
	"sort"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
	"github.com/mongoscope/mongoscope/mongotest/internal/query"
	"github.com/mongoscope/mongoscope/mongotest/internal/store"
	"github.com/mongoscope/mongoscope/mongotest/internal/update"
)

var famArgs = fieldSet("query", "sort", "remove", "update", "new", "fields", "upsert",
	"arrayFilters", "bypassDocumentValidation", "hint", "stmtId", "collation", "let")

// famRequest is a parsed findAndModify.
type famRequest struct {
	m         *query.Matcher
	q         bson.Raw
	sort      *query.Sort
	remove    bool
	u         *update.Update
	returnNew bool
	upsert    bool
	proj      *query.Projection
}

func (s *Server) parseFindAndModify(r *Request, collName string) (famRequest, error) {
	var f famRequest
	var err error
	cmd := "findAndModify"
	if f.q, err = docArg(r.Body, "query", cmd); err != nil {
		return f, err
	}
	env, err := s.newQueryEnv(cmd, r.DB, collName, r.Body.Lookup("collation"), r.Body.Lookup("let"))
	if err != nil {
		if s.store.View(r.DB, collName) != nil {
			return f, errViewWrite(r.DB, collName)
		}
		return f, err
	}
	if f.m, err = env.matcher(f.q); err != nil {
		return f, err
	}
	sortSpec, err := docArg(r.Body, "sort", cmd)
	if err != nil {
		return f, err
	}
	if f.sort, err = env.sort(sortSpec); err != nil {
		return f, err
	}
	if f.remove, err = boolArg(r.Body, "remove", cmd); err != nil {
		return f, err
	}
	if f.returnNew, err = boolArg(r.Body, "new", cmd); err != nil {
		return f, err
	}
	if f.upsert, err = boolArg(r.Body, "upsert", cmd); err != nil {
		return f, err
	}
	fields, err := docArg(r.Body, "fields", cmd)
	if err != nil {
		return f, err
	}
	if len(fields) > 5 {
		if f.proj, err = query.NewProjection(fields); err != nil {
			return f, err
		}
	}
	filters, err := arrayFiltersArg(r.Body, cmd)
	if err != nil {
		return f, err
	}
	uv, hasUpdate := r.Body.LookupErr("update")
	switch {
	case f.remove && hasUpdate == nil:
		return f, newError(mongoerr.FailedToParse, "Cannot specify both an update and remove=true")
	case f.remove && f.upsert:
		return f, newError(mongoerr.FailedToParse, "Cannot specify both upsert=true and remove=true ")
	case f.remove && f.returnNew:
		return f, newError(mongoerr.FailedToParse, "Cannot specify both new=true and remove=true; 'remove' always returns the deleted document")
	case !f.remove && hasUpdate != nil:
		return f, newError(mongoerr.FailedToParse, "Either an update or remove=true must be specified")
	case filters != nil && f.remove:
		return f, newError(mongoerr.FailedToParse, "Cannot specify arrayFilters and remove=true")
	}
	if !f.remove {
		if uv.Type != bson.TypeEmbeddedDocument && uv.Type != bson.TypeArray {
			return f, newError(mongoerr.TypeMismatch, "BSON field 'findAndModify.update' is the wrong type '%s', expected types '[object, array]'", typeName(uv.Type))
		}
		if f.u, err = update.CompileWith(uv, filters, update.Options{Collation: env.collator(), Let: env.let}); err != nil {
			return f, err
		}
	}
	return f, nil
}

func findAndModifyCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	if err := checkArgs(r, famArgs); err != nil {
		return nil, err
	}
	collName, err := collectionArg(r)
	if err != nil {
		return nil, err
	}
	f, err := s.parseFindAndModify(r, collName)
	if err != nil {
		return nil, err
	}
	if err := s.checkWrite(r); err != nil {
		return nil, err
	}
	rt, err := s.beginRetryable(r)
	defer rt.end()
	if err != nil {
		return nil, err
	}
	if rt != nil && rt.sess.reply != nil {
		return append(bson.Raw(nil), rt.sess.reply...), nil
	}
	var c *store.Collection
	if s.store.View(r.DB, collName) != nil {
		return nil, errViewWrite(r.DB, collName)
	}
	if f.remove {
		c = s.store.Collection(r.DB, collName)
	} else if c, err = s.store.CollectionOrCreate(r.DB, collName); err != nil {
		return nil, err
	}
	if err := errTimeseriesUnsupported(c, "findAndModify"); err != nil {
		return nil, err
	}
	var undo *undoLog
	if rt != nil && c != nil {
		undo = &undoLog{c: c}
	}
	var val *validation
	if c != nil && !f.remove {
		if val, err = writeValidation(r, c); err != nil {
			return nil, err
		}
	}
	reply, wrote, err := s.runFindAndModify(c, f, val, undo)
	if err != nil {
		return dupKeyReply(err), err
	}
	if wrote && rt != nil {
		if fault := s.txnWriteFault(rt); fault != nil {
			if fault.failCode != 0 {
				undo.run()
				return nil, fault.outcome()
			}
			rt.sess.reply = reply
			if fault.close {
				return nil, fault.outcome()
			}
		}
		rt.sess.reply = reply
	}
	return reply, nil
}

// runFindAndModify finds the first matching document (in sort order) and
// removes or updates it, or upserts; it returns the reply and whether it
// wrote anything.
func (s *Server) runFindAndModify(c *store.Collection, f famRequest, val *validation, undo *undoLog) (bson.Raw, bool, error) {
	now := time.Now()
	var (
		before, after bson.Raw
		found         bool
		upsertedID    bson.RawValue
		err           error
	)
	try := func(doc bson.Raw) bool {
		id := doc.Lookup("_id")
		if f.remove {
			old, ok := c.DeleteIf(id, f.m.Match)
			if ok {
				before, found = old, true
				if undo != nil {
					undo.reinsert = append(undo.reinsert, old)
				}
			}
			return !ok
		}
		matched := false
		b, a, merr := c.Modify(id, func(cur bson.Raw) (bson.Raw, error) {
			if !f.m.Match(cur) {
				return nil, nil
			}
			matched = true
			out, changed, aerr := f.u.Apply(cur, false, now)
			if aerr != nil || !changed {
				return nil, aerr
			}
			if verr := val.check(out, cur); verr != nil {
				return nil, verr
			}
			return out, nil
		})
		if merr != nil {
			if store.IsNotFound(merr) {
				return true
			}
			err = merr
			return false
		}
		if !matched {
			return true
		}
		before, after, found = b, a, true
		if undo != nil && !bytesEqual(b, a) {
			undo.restore = append(undo.restore, b)
		}
		return false
	}
	if c != nil {
		if f.sort.Empty() {
			forEachMatch(c, f.m, try)
		} else {
			var docs []bson.Raw
			forEachMatch(c, f.m, func(doc bson.Raw) bool {
				docs = append(docs, doc)
				return true
			})
			sort.SliceStable(docs, func(i, j int) bool { return f.sort.Compare(docs[i], docs[j]) < 0 })
			for _, d := range docs {
				if !try(d) {
					break
				}
			}
		}
	}
	if err == nil {
		err = f.m.Err()
	}
	if err != nil {
		return nil, false, err
	}
	wrote := found && (f.remove || !bytesEqual(before, after))
	if !found && f.upsert {
		doc, err := upsertDoc(f.q, f.u, now)
		if err == nil {
			doc, err = validInsert(val, doc)
		}
		if err != nil {
			return nil, false, err
		}
		stored, err := c.InsertWithID(doc)
		if err != nil {
			return nil, false, err
		}
		after, upsertedID, wrote = stored, stored.Lookup("_id"), true
		if undo != nil {
			undo.remove = append(undo.remove, upsertedID)
		}
	}
	value := before
	if f.returnNew {
		value = after
	}
	start, dst := bson.AppendDocumentStart(nil)
	ls, dst := bson.AppendDocumentElementStart(dst, "lastErrorObject")
	n := int32(0)
	if found || upsertedID.Type != 0 {
		n = 1
	}
	dst = bson.AppendInt32Element(dst, "n", n)
	if !f.remove {
		dst = bson.AppendBooleanElement(dst, "updatedExisting", found)
	}
	if upsertedID.Type != 0 {
		dst = bson.AppendValueElement(dst, "upserted", upsertedID)
	}
	dst, _ = bson.AppendDocumentEnd(dst, ls)
	if value == nil {
		dst = bson.AppendNullElement(dst, "value")
	} else {
		if f.proj != nil {
			if value, err = f.proj.Apply(nil, value); err != nil {
				return nil, false, err
			}
		}
		dst = bson.AppendDocumentElement(dst, "value", value)
	}
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst, wrote, nil
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }
