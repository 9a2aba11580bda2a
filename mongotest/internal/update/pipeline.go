package update

import (
	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/agg"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// pipelineStages are the stages mongod allows in an update pipeline.
var pipelineStages = map[string]bool{
	"$addFields": true, "$set": true, "$project": true, "$unset": true,
	"$replaceRoot": true, "$replaceWith": true,
}

// compilePipeline compiles an update given as an aggregation pipeline.
// As mongod does, every stage is parsed first (an unknown stage name is
// Location40324), then a stage that is not allowed in an update is
// InvalidOptions.
func compilePipeline(arr bson.Raw, o Options) (*Update, error) {
	vals, err := arr.Values()
	if err != nil {
		return nil, mongoerr.New(mongoerr.FailedToParse, "update pipeline is not valid BSON: %v", err)
	}
	stages := make([]bson.Raw, 0, len(vals))
	for _, v := range vals {
		d, ok := v.DocumentOK()
		if !ok {
			return nil, mongoerr.New(mongoerr.TypeMismatch, "Each element of the 'pipeline' array must be an object")
		}
		stages = append(stages, d)
	}
	var disallowed string
	for _, st := range stages {
		elems, err := st.Elements()
		if err != nil || len(elems) != 1 {
			continue // agg.Compile reports it
		}
		name := elems[0].Key()
		if pipelineStages[name] {
			continue
		}
		// A stage mongod knows but does not allow here: mongod parses it,
		// then refuses it. agg may not run it at all (NotImplemented), which
		// does not matter, since the update refuses it either way.
		if _, err := agg.Compile([]bson.Raw{st}, agg.Options{Out: func(string, string, []bson.Raw) error { return nil }}); err != nil {
			if me, ok := err.(*mongoerr.Error); !ok || me.Code != mongoerr.NotImplemented {
				return nil, err
			}
		}
		if disallowed == "" {
			disallowed = name
		}
	}
	if disallowed == "" {
		p, err := agg.Compile(stages, agg.Options{Let: o.Let, Collation: o.Collation})
		if err != nil {
			return nil, err
		}
		return &Update{pipeline: p}, nil
	}
	return nil, mongoerr.New(mongoerr.InvalidOptions, "%s is not allowed to be used within an update", disallowed)
}

// runPipeline runs the pipeline on doc; its result replaces doc, keeping
// doc's _id when the result has none (mongod's replacement rules, with
// $-prefixed top-level fields allowed).
func (u *Update) runPipeline(doc bson.Raw) (bson.Raw, error) {
	out, err := u.pipeline.Run(func(yield func(bson.Raw) bool) { yield(doc) })
	if err != nil {
		return nil, err
	}
	if len(out) != 1 {
		return nil, mongoerr.New(mongoerr.InternalError, "update pipeline returned %d documents", len(out))
	}
	return out[0], nil
}
