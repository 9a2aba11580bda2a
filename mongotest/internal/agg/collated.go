package agg

import (
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
	"github.com/mongoscope/mongoscope/mongotest/internal/query"
)

// notCollated are the stages, expressions and accumulators that compare
// strings in ways this package does not yet route through a collation
// (set and array operators, and stages this package does not run at
// all); under a non-simple collation they are refused rather than
// answered by byte order. $group's keys and its $min, $max and $addToSet,
// $bucket's boundaries and $lookup's matches do follow the collation.
var notCollated = map[string]bool{
	"$bucketAuto":  true,
	"$graphLookup": true, "$setWindowFields": true, "$densify": true, "$fill": true,
	"$setUnion": true, "$setIntersection": true, "$setDifference": true, "$setEquals": true,
	"$setIsSubset": true, "$indexOfArray": true, "$sortArray": true,
}

// checkCollated refuses, anywhere in v, a key notCollated names.
func checkCollated(v bson.RawValue) error {
	switch v.Type {
	case bson.TypeArray, bson.TypeEmbeddedDocument:
		it := bson.Raw(v.Value).Iter()
		for it.Next() {
			if v.Type == bson.TypeEmbeddedDocument && notCollated[it.Key()] {
				return mongoerr.New(mongoerr.NotImplemented, "mongotest does not support %s with a non-simple collation", it.Key())
			}
			if it.Key() == "$literal" {
				continue
			}
			if err := checkCollated(it.Value()); err != nil {
				return err
			}
		}
	}
	return nil
}

// ExprFilter returns, for query.Options.Expr, a compiler of $expr operands
// that see vars (a command's evaluated let) as user variables, now as
// $$NOW, and compare strings by coll (nil: simple). An operand naming a
// variable vars lacks fails to compile, as in mongod.
func ExprFilter(vars Vars, now time.Time, coll query.Collator) func(bson.RawValue) (func(bson.Raw) (bool, error), error) {
	defined := make(map[string]bool, len(vars))
	for k := range vars {
		defined[k] = true
	}
	return func(operand bson.RawValue) (func(bson.Raw) (bool, error), error) {
		if coll != nil {
			if err := checkCollated(operand); err != nil {
				return nil, err
			}
		}
		x, err := compileExpr(operand)
		if err != nil {
			return nil, err
		}
		if err := checkDefined(operand, defined); err != nil {
			return nil, err
		}
		ms := now.UnixMilli()
		return func(doc bson.Raw) (bool, error) {
			v, err := x.eval(&env{root: doc, now: ms, vars: vars, coll: coll})
			if err != nil {
				return false, err
			}
			return truthy(v), nil
		}, nil
	}
}
