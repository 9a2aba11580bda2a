package mongotest

import (
	"bytes"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/agg"
	"github.com/mongoscope/mongoscope/mongotest/internal/collation"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
	"github.com/mongoscope/mongoscope/mongotest/internal/query"
	"github.com/mongoscope/mongoscope/mongotest/internal/store"
)

// queryEnv is what a command's collation and let options give its
// filters, sorts and pipeline updates: the collation strings compare by
// (the command's own, else the collection's default) and the let
// variables $expr and pipelines read as $$name.
type queryEnv struct {
	coll *collation.Collation // nil: simple
	vars agg.Vars
	let  bson.Raw // the let option as given, for pipeline updates
	now  time.Time
}

// newQueryEnv reads the collation value cv and the let value lv (Type 0
// when the command has none) of command cmd on db.collName.
func (s *Server) newQueryEnv(cmd, db, collName string, cv, lv bson.RawValue) (*queryEnv, error) {
	var e queryEnv
	var err error
	if cv.Type != 0 && cv.Type != bson.TypeEmbeddedDocument {
		return nil, newError(mongoerr.TypeMismatch, "BSON field '%s.collation' is the wrong type '%s', expected type 'object'", cmd, typeName(cv.Type))
	}
	if cv.Type != 0 {
		if e.coll, err = collation.Parse(cv); err != nil {
			return nil, err
		}
	} else if c := s.store.Collection(db, collName); c != nil {
		e.coll = defaultCollation(c)
	}
	if lv.Type != 0 {
		let, ok := lv.DocumentOK()
		if !ok {
			return nil, newError(mongoerr.TypeMismatch, "BSON field '%s.let' is the wrong type '%s', expected type 'object'", cmd, typeName(lv.Type))
		}
		e.now = time.Now()
		let = append(bson.Raw(nil), let...) // cursors outlive the request
		if e.vars, err = agg.EvalLet(let, e.now); err != nil {
			return nil, err
		}
		e.let = let
	}
	if v := s.store.View(db, collName); v != nil {
		// A read on a view uses the view's collation; another one fails.
		var vc *collation.Collation
		if v.Collation != nil {
			if vc, err = collation.Parse(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: v.Collation}); err != nil {
				return nil, err
			}
		}
		if cv.Type != 0 && !collation.Same(e.coll, vc) {
			return nil, namedError(codeOptionNotSupportedOnView, "OptionNotSupportedOnView", "Cannot override a view's default collation")
		}
		e.coll = vc
	}
	if e.coll == nil && e.let == nil {
		return &simpleEnv, nil // no allocation on find's hot path
	}
	out := new(queryEnv)
	*out = e
	return out, nil
}

// simpleEnv is the queryEnv of a command without collation or let; it is
// never modified.
var simpleEnv queryEnv

// collator is e's collation as the query package takes it (a nil
// interface for simple).
func (e *queryEnv) collator() query.Collator {
	if e == nil || e.coll == nil {
		return nil
	}
	return e.coll
}

// matcher compiles filter with e's collation and $expr support.
func (e *queryEnv) matcher(filter bson.Raw) (*query.Matcher, error) {
	if e == nil {
		e = &queryEnv{}
	}
	o := query.Options{Collator: e.collator()}
	if bytes.Contains(filter, []byte("$expr")) {
		// Only then: find's hot path should not pay for the compiler.
		now := e.now
		if now.IsZero() {
			now = time.Now()
		}
		o.Expr = agg.ExprFilter(e.vars, now, e.collator())
	}
	return query.NewMatcherWith(filter, o)
}

// sort compiles a sort specification with e's collation.
func (e *queryEnv) sort(spec bson.Raw) (*query.Sort, error) {
	return query.NewSortWith(spec, e.collator())
}

// defaultCollation is the collation a collection was created with, or
// nil for simple.
func defaultCollation(c *store.Collection) *collation.Collation {
	extra := c.Options().Extra
	if extra == nil {
		return nil
	}
	v, err := extra.LookupErr("collation")
	if err != nil {
		return nil
	}
	coll, err := collation.Parse(v)
	if err != nil {
		return nil // it parsed when the collection was created
	}
	return coll
}

// writeEnv reads an update or delete command's let (a bad one fails the
// command) and returns how each statement gets its queryEnv from its own
// collation field.
func (s *Server) writeEnv(r *Request, collName string) (func(bson.RawValue) (*queryEnv, error), error) {
	lv := r.Body.Lookup("let")
	base, err := s.newQueryEnv(r.Name, r.DB, "", bson.RawValue{}, lv)
	if err != nil {
		return nil, err
	}
	return func(cv bson.RawValue) (*queryEnv, error) {
		e := *base
		if cv.Type != 0 {
			c, err := collation.Parse(cv)
			if err != nil {
				return nil, err
			}
			e.coll = c
		} else if c := s.store.Collection(r.DB, collName); c != nil {
			e.coll = defaultCollation(c)
		}
		return &e, nil
	}, nil
}
