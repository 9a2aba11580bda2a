package mongotest

import (
	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/agg"
	"github.com/mongoscope/mongoscope/mongotest/internal/collation"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
	"github.com/mongoscope/mongoscope/mongotest/internal/store"
)

// viewOptions are the create options a view accepts besides viewOn and
// pipeline; any other (capped, validator, ...) fails as in mongod.
var viewOptions = fieldSet("create", "viewOn", "pipeline", "collation")

// createView runs create with viewOn: the view r.DB.name on viewOn through
// pipeline.
func (s *Server) createView(r *Request, name string) (bson.Raw, error) {
	it := r.Body.Iter()
	for it.Next() {
		k := it.Key()
		if viewOptions[k] || genericArgs[k] {
			continue
		}
		return nil, newError(mongoerr.InvalidOptions, "option not supported on a view: %s", k)
	}
	v := r.Body.Lookup("viewOn")
	viewOn, ok := v.StringValueOK()
	if !ok {
		return nil, newError(mongoerr.TypeMismatch, "BSON field 'create.viewOn' is the wrong type '%s', expected type 'string'", typeName(v.Type))
	}
	if viewOn == "" {
		return nil, newError(mongoerr.BadValue, "'viewOn' cannot be empty")
	}
	stages, _, err := viewPipelineArg(r, "create", name)
	if err != nil {
		return nil, err
	}
	var spec, shown bson.Raw
	if cv, err := r.Body.LookupErr("collation"); err == nil {
		coll, err := collation.Parse(cv)
		if err != nil {
			return nil, err
		}
		spec, shown = coll.Spec(), collation.Requested(cv)
	}
	if err := s.checkWrite(r); err != nil {
		return nil, err
	}
	err = s.store.CreateViewWithCollation(r.DB, name, viewOn, stages, spec)
	if err != nil && mongoerr.As(err).Code == mongoerr.NamespaceExists {
		// mongod 7.0+: creating the same view again succeeds.
		req := store.CreateRequest{ViewOn: viewOn, Pipeline: stages, Collation: spec, CollationShown: shown}
		return nil, s.store.CheckExisting(r.DB, name, req, err)
	}
	return nil, err
}

// collModView runs collMod on a view: viewOn and pipeline replace the
// view's; any other option fails as in mongod.
func (s *Server) collModView(r *Request, name string) (bson.Raw, error) {
	it := r.Body.Iter()
	it.Next() // collMod
	for it.Next() {
		if k := it.Key(); k != "viewOn" && k != "pipeline" && !genericArgs[k] {
			return nil, newError(mongoerr.InvalidOptions, "option not supported on a view: %s", k)
		}
	}
	viewOn := ""
	if v, err := r.Body.LookupErr("viewOn"); err == nil {
		var ok bool
		if viewOn, ok = v.StringValueOK(); !ok {
			return nil, newError(mongoerr.TypeMismatch, "BSON field 'collMod.viewOn' is the wrong type '%s', expected type 'string'", typeName(v.Type))
		}
		if viewOn == "" {
			return nil, newError(mongoerr.BadValue, "'viewOn' cannot be empty")
		}
	}
	stages, hasPipeline, err := viewPipelineArg(r, "collMod", name)
	if err != nil {
		return nil, err
	}
	if err := s.checkWrite(r); err != nil {
		return nil, err
	}
	return nil, s.store.ModifyView(r.DB, name, viewOn, stages, hasPipeline)
}

// viewPipelineArg reads and checks a view's pipeline argument: an array
// of stages mongotest can run, none of which writes.
func viewPipelineArg(r *Request, cmd, name string) ([]bson.Raw, bool, error) {
	pv, err := r.Body.LookupErr("pipeline")
	if err != nil {
		return nil, false, nil
	}
	arr, ok := pv.ArrayOK()
	if !ok {
		return nil, false, newError(mongoerr.TypeMismatch, "BSON field '%s.pipeline' is the wrong type '%s', expected type 'array'", cmd, typeName(pv.Type))
	}
	var stages []bson.Raw
	it := arr.Iter()
	for it.Next() {
		st, ok := it.Value().DocumentOK()
		if !ok {
			return nil, false, newError(mongoerr.TypeMismatch, "Each element of the 'pipeline' array must be an object")
		}
		stages = append(stages, st)
	}
	for i, st := range stages {
		if it := st.Iter(); it.Next() && (it.Key() == "$out" || it.Key() == "$merge") {
			return nil, false, namedError(codeOptionNotSupportedOnView, "OptionNotSupportedOnView",
				"Invalid pipeline for view %s :: caused by :: The aggregation stage %s in location %d of the pipeline cannot be used in the view definition of %s because it writes to disk",
				ns(r.DB, name), it.Key(), i, ns(r.DB, name))
		}
	}
	// The definition must be a pipeline mongotest can run.
	if _, err := agg.Compile(stages, agg.Options{DB: r.DB}); err != nil {
		return nil, false, err
	}
	return stages, true, nil
}

// errViewWrite is mongod's error for a write to a view.
func errViewWrite(db, coll string) error {
	return namedError(codeCommandNotSupportedOnView, "CommandNotSupportedOnView", "Namespace %s is a view, not a collection", ns(db, coll))
}

// Codes of view errors.
const (
	codeCommandNotSupportedOnView = 166
	codeOptionNotSupportedOnView  = 167
)

// namedError is newError for a code whose name only this file uses.
func namedError(code int32, name, format string, args ...any) *mongoerr.Error {
	e := newError(code, format, args...)
	e.CodeName = name
	return e
}
