package mongotest

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/agg"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
	"github.com/mongoscope/mongoscope/mongotest/internal/store"
)

var aggregateArgs = fieldSet("pipeline", "cursor", "explain", "allowDiskUse", "bypassDocumentValidation", "hint", "let", "collation")

// collectionlessStages are the stages that run without a collection
// ({aggregate: 1}); mongotest has none of them.
var collectionlessStages = fieldSet("$currentOp", "$documents", "$listLocalSessions", "$changeStream",
	"$listCatalog", "$queryStats", "$querySettings", "$listClusterCatalog")

func aggregateCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	if err := checkArgs(r, aggregateArgs); err != nil {
		return nil, err
	}
	if _, err := r.Body.LookupErr("explain"); err == nil {
		return nil, newError(mongoerr.NotImplemented, "mongotest does not support the explain option of aggregate")
	}
	pv, err := r.Body.LookupErr("pipeline")
	if err != nil {
		return nil, newError(40414, "BSON field 'aggregate.pipeline' is missing but a required field")
	}
	arr, ok := pv.ArrayOK()
	if !ok {
		return nil, newError(mongoerr.TypeMismatch, "BSON field 'aggregate.pipeline' is the wrong type '%s', expected type 'array'", typeName(pv.Type))
	}
	var stages []bson.Raw
	it := arr.Iter()
	for it.Next() {
		st, ok := it.Value().DocumentOK()
		if !ok {
			return nil, newError(mongoerr.TypeMismatch, "Each element of the 'pipeline' array must be an object")
		}
		stages = append(stages, st)
	}
	first := ""
	if len(stages) > 0 {
		if it := stages[0].Iter(); it.Next() {
			first = it.Key()
		}
	}
	if first == "$listSearchIndexes" {
		return nil, searchNotEnabled()
	}
	if err := checkStagesAPIStrict(r, stages); err != nil {
		return nil, err
	}
	if _, err := r.Body.LookupErr("cursor"); err != nil {
		return nil, newError(mongoerr.FailedToParse, "The 'cursor' option is required, except for aggregate with the explain argument")
	}
	batchSize, err := cursorOptions(r.Body, r.Name)
	if err != nil {
		return nil, err
	}
	target := r.Body.Lookup("aggregate")
	if target.Type != bson.TypeString {
		if n, ok := target.AsInt64OK(); !ok || n != 1 || !target.IsNumber() {
			return nil, newError(mongoerr.FailedToParse, "Invalid command format: the 'aggregate' field must specify a collection name or 1")
		}
		if first == "$listLocalSessions" {
			return s.listLocalSessionsAggregate(r, stages, batchSize)
		}
		if first == "$currentOp" {
			if r.DB != "admin" {
				return nil, errCurrentOpNamespace()
			}
			return s.currentOpAggregate(r, stages, batchSize)
		}
		return nil, collectionlessError(stages)
	}
	if first == "$currentOp" {
		return nil, errCurrentOpNamespace()
	}
	collName, err := collectionArg(r)
	if err != nil {
		return nil, err
	}
	if first == "$collStats" {
		return s.collStatsAggregate(r, collName, stages, batchSize)
	}
	let, err := letOption(r)
	if err != nil {
		return nil, err
	}
	env, err := s.newQueryEnv("aggregate", r.DB, collName, r.Body.Lookup("collation"), bson.RawValue{})
	if err != nil {
		return nil, err
	}
	// On a view, the view's pipeline runs first on the collection
	// underneath.
	source, viewStages, _, err := s.store.ResolveView(r.DB, collName)
	if err != nil {
		return nil, err
	}
	stages, mergeArg, err := splitMerge(stages)
	if err != nil {
		return nil, err
	}
	var merge *mergeSpec
	if mergeArg.Type != 0 && env.coll != nil {
		return nil, newError(mongoerr.NotImplemented, "mongotest does not support $merge with a non-simple collation")
	}
	if mergeArg.Type != 0 {
		if merge, err = parseMerge(mergeArg, r.DB, let); err != nil {
			return nil, err
		}
	}
	if len(viewStages) > 0 {
		stages = append(viewStages, stages...)
	}
	out := func(db, coll string, docs []bson.Raw) error { return s.writeOutFor(r, db, coll, docs) }
	p, err := agg.Compile(stages, agg.Options{DB: r.DB, Out: out, Let: let, Collections: storeCollections{s: s, snap: r.snap}, Collation: env.collator()})
	if err != nil {
		return nil, err
	}
	if err := s.checkAggregateRole(r, p.HasOut() || merge != nil); err != nil {
		return nil, err
	}
	c, err := s.readCollection(r, r.DB, source)
	if err != nil {
		return nil, err
	}
	if err := checkHint(r.Body, c); err != nil {
		return nil, err
	}
	docs, err := p.Run(func(yield func(bson.Raw) bool) {
		if c != nil {
			c.Scan(yield)
		}
	})
	if err != nil {
		return nil, err
	}
	if merge != nil {
		if err := s.runMerge(r, merge, docs); err != nil {
			return nil, err
		}
		docs = nil
	}
	return s.firstBatch(&cursor{ns: ns(r.DB, collName), docs: docs}, batchSize, false)
}

// checkAggregateRole checks that this member may run the aggregate: a read
// anywhere reads are allowed, and one that writes ($out, $merge) on the
// primary or, as mongod 5.0+ runs it, on a secondary of a replica set
// with a primary when the read preference allows the read (the simulated
// set's members share one store, so the write is the primary's). A lone
// server given the secondary role has no primary to write to.
func (s *Server) checkAggregateRole(r *Request, writes bool) error {
	if err := s.checkRead(r); err != nil {
		return err
	}
	if !writes {
		return nil
	}
	switch s.role() {
	case RoleSecondary, RoleHidden:
		s.topo.mu.Lock()
		m := s.topo.member
		s.topo.mu.Unlock()
		if m != nil && m.rs.Primary() != nil {
			return nil
		}
	}
	return s.checkWrite(r)
}

func errCurrentOpNamespace() error {
	return newError(mongoerr.InvalidNamespace, "$currentOp must be run against the 'admin' database with {aggregate: 1}")
}

func collectionlessError(stages []bson.Raw) error {
	if len(stages) == 0 {
		return newError(mongoerr.InvalidNamespace, "{aggregate: 1} is not valid for an empty pipeline.")
	}
	name := ""
	if it := stages[0].Iter(); it.Next() {
		name = it.Key()
	}
	if collectionlessStages[name] {
		return newError(mongoerr.NotImplemented, "mongotest does not support the %s stage", name)
	}
	return newError(mongoerr.InvalidNamespace, "{aggregate: 1} is not valid for '%s'; a collection is required.", name)
}

// writeOut is $out's writer: as mongod, it fills a temporary collection
// with the target's indexes and renames it over the target, so the target
// is replaced at once or, on error, left as it was. The target's validator
// applies to the documents.
func (s *Server) writeOut(db, coll string, docs []bson.Raw) error {
	return s.writeOutFor(nil, db, coll, docs)
}

// writeOutFor is writeOut for aggregate request r: its
// bypassDocumentValidation skips the target's validator.
func (s *Server) writeOutFor(r *Request, db, coll string, docs []bson.Raw) error {
	if s.store.View(db, coll) != nil {
		return errViewWrite(db, coll)
	}
	target := s.store.Collection(db, coll)
	if err := errTimeseriesUnsupported(target, "$out"); err != nil {
		return err
	}
	if target != nil && target.Capped() {
		return newError(17152, "namespace '%s' is capped so it can't be used for $out", ns(db, coll))
	}
	var val *validation
	if target != nil {
		var err error
		if r != nil {
			val, err = writeValidation(r, target)
		} else {
			val, err = collValidation(target)
		}
		if err != nil {
			return err
		}
	}
	tmpName := fmt.Sprintf("tmp.agg_out.%016x", rand.Uint64())
	// The temporary collection takes the target's options (its validator),
	// as mongod's $out keeps them.
	var opts store.CollectionOptions
	if target != nil {
		opts = target.Options()
	}
	if err := s.store.CreateCollection(db, tmpName, opts); err != nil {
		return err
	}
	tmp := s.store.Collection(db, tmpName)
	if tmp == nil {
		return newError(mongoerr.NamespaceNotFound, "$out's temporary collection %s was dropped", ns(db, tmpName))
	}
	fail := func(err error) error {
		s.store.DropCollection(db, tmpName)
		return err
	}
	if target != nil {
		var specs []store.IndexSpec
		for _, ix := range target.ListIndexes() {
			if ix.Name != store.IDIndexName {
				specs = append(specs, ix)
			}
		}
		if len(specs) > 0 {
			if _, err := tmp.CreateIndexes(specs); err != nil {
				return fail(err)
			}
		}
	}
	for _, d := range docs {
		if err := val.check(d, nil); err != nil {
			return fail(err)
		}
		if err := tmp.Insert(d); err != nil {
			return fail(err)
		}
	}
	if err := s.store.RenameCollection(db, tmpName, db, coll, true); err != nil {
		return fail(err)
	}
	return nil
}
