package mongotest

import (
	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/agg"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// Reads on a view run, as in mongod, as an aggregation: the view's
// pipeline on the collection underneath, then the read's own stages.

// viewRead runs stages after the pipeline of view db.name. ok is false
// when db.name is not a view.
func (s *Server) viewRead(db, name string, env *queryEnv, stages ...bson.Raw) (docs []bson.Raw, ok bool, err error) {
	return s.viewReadAt(db, name, env, 0, stages...)
}

// maxViewNesting is mongod's limit on views read through views.
const maxViewNesting = 20

// viewReadAt is viewRead from within depth other views' pipelines (their
// $lookup and $unionWith stages), which it passes on so that a cycle
// through them ends with ViewDepthLimitExceeded.
func (s *Server) viewReadAt(db, name string, env *queryEnv, depth int, stages ...bson.Raw) (docs []bson.Raw, ok bool, err error) {
	source, viewStages, isView, err := s.store.ResolveView(db, name)
	if err != nil || !isView {
		return nil, isView, err
	}
	all := append(append([]bson.Raw(nil), viewStages...), stages...)
	o := agg.Options{DB: db, Collections: storeCollections{s: s, depth: depth}}
	if env != nil {
		o.Collation, o.Let = env.collator(), env.let
	}
	p, err := agg.Compile(all, o)
	if err != nil {
		return nil, true, err
	}
	c := s.store.Collection(db, source)
	docs, err = p.Run(func(yield func(bson.Raw) bool) {
		if c != nil {
			c.Scan(yield)
		}
	})
	return docs, true, err
}

// stage returns {name: value} for a document value.
func stage(name string, v bson.Raw) bson.Raw {
	start, b := bson.AppendDocumentStart(nil)
	b = bson.AppendDocumentElement(b, name, v)
	b, _ = bson.AppendDocumentEnd(b, start)
	return b
}

// matchStage returns [{$match: q}], or none when q is empty.
func matchStage(q bson.Raw) []bson.Raw {
	if len(q) <= 5 {
		return nil
	}
	return []bson.Raw{stage("$match", q)}
}

// intStage returns {name: n}.
func intStage(name string, n int64) bson.Raw {
	start, b := bson.AppendDocumentStart(nil)
	b = bson.AppendInt64Element(b, name, n)
	b, _ = bson.AppendDocumentEnd(b, start)
	return b
}

// findOnView answers find on a view: $match, $sort, $skip, $limit and
// $project after the view's pipeline. ok is false when collName is not a
// view.
func (s *Server) findOnView(r *Request, collName string, o findOpts, env *queryEnv) (bson.Raw, bool, error) {
	if s.store.View(r.DB, collName) == nil {
		return nil, false, nil
	}
	if o.tailable || o.returnKey || o.showRecordID || o.hint.Type != 0 {
		return nil, true, newError(mongoerr.NotImplemented, "mongotest does not support tailable, returnKey, showRecordId or hint on a view")
	}
	var stages []bson.Raw
	if len(o.filter) > 5 {
		stages = append(stages, stage("$match", o.filter))
	}
	if len(o.sortSpec) > 5 {
		stages = append(stages, stage("$sort", o.sortSpec))
	}
	if o.skip > 0 {
		stages = append(stages, intStage("$skip", o.skip))
	}
	limit, single := o.limit, o.single
	if limit < 0 {
		limit, single = -limit, true
	}
	if limit > 0 {
		stages = append(stages, intStage("$limit", limit))
	}
	if len(o.projection) > 5 {
		stages = append(stages, stage("$project", o.projection))
	}
	docs, _, err := s.viewRead(r.DB, collName, env, stages...)
	if err != nil {
		return nil, true, err
	}
	batchSize := int64(defaultFirstBatch)
	if o.hasBatchSize {
		batchSize = o.batchSize
	}
	if limit > 0 && batchSize > limit {
		batchSize = limit
	}
	reply, err := s.firstBatch(&cursor{ns: ns(r.DB, collName), docs: docs}, batchSize, single)
	return reply, true, err
}

// countOnView is count's number of documents of a view matching q, after
// skip and limit (0: none).
func (s *Server) countOnView(db, name string, q bson.Raw, skip, limit int64, env *queryEnv) (int64, bool, error) {
	docs, ok, err := s.viewRead(db, name, env, matchStage(q)...)
	if !ok || err != nil {
		return 0, ok, err
	}
	n := max(int64(len(docs))-skip, 0)
	if limit > 0 {
		n = min(n, limit)
	}
	return n, true, nil
}
