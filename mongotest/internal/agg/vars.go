package agg

import (
	"strings"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// checkDefined refuses, as mongod does when it parses, a $$name that no
// enclosing let binds. It walks a compiled pipeline's source: stage
// arguments are expressions except in $match (only its $expr is) and
// $literal; $lookup's let binds in its pipeline, $let's vars in its in.
func checkDefined(v bson.RawValue, defined map[string]bool) error {
	switch v.Type {
	case bson.TypeString:
		s := v.StringValue()
		if !strings.HasPrefix(s, "$$") {
			return nil
		}
		name, _, _ := strings.Cut(s[2:], ".")
		if checkVarName(name) == nil && !defined[name] {
			return mongoerr.New(17276, "Use of undefined variable: %s", name)
		}
	case bson.TypeArray:
		for _, el := range arrayValues(v) {
			if err := checkDefined(el, defined); err != nil {
				return err
			}
		}
	case bson.TypeEmbeddedDocument:
		doc := bson.Raw(v.Value)
		it := doc.Iter()
		for it.Next() {
			k, val := it.Key(), it.Value()
			var err error
			switch k {
			case "$literal":
			case "$match":
				err = checkFilterDefined(val, defined)
			case "$lookup", "$let":
				err = checkBinder(k, val, defined)
			default:
				err = checkDefined(val, defined)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func lookupDoc(v bson.RawValue, key string) (bson.RawValue, bool) {
	if v.Type != bson.TypeEmbeddedDocument {
		return missing, false
	}
	x, err := bson.Raw(v.Value).LookupErr(key)
	return x, err == nil
}

// checkBinder checks $lookup ({let, pipeline}) or $let ({vars, in}): the
// bindings' expressions in the outer scope, the body with them added.
func checkBinder(op string, v bson.RawValue, defined map[string]bool) error {
	bindKey, bodyKey := "let", "pipeline"
	if op == "$let" {
		bindKey, bodyKey = "vars", "in"
	}
	inner := defined
	if binds, ok := lookupDoc(v, bindKey); ok && binds.Type == bson.TypeEmbeddedDocument {
		inner = make(map[string]bool, len(defined)+4)
		for k := range defined {
			inner[k] = true
		}
		it := bson.Raw(binds.Value).Iter()
		for it.Next() {
			if err := checkDefined(it.Value(), defined); err != nil {
				return err
			}
			inner[it.Key()] = true
		}
	}
	if body, ok := lookupDoc(v, bodyKey); ok {
		return checkDefined(body, inner)
	}
	return nil
}

// checkFilterDefined is checkDefined for a query filter: its $expr
// operands, at the top level or under $and, $or and $nor, are expressions.
func checkFilterDefined(filter bson.RawValue, defined map[string]bool) error {
	if filter.Type != bson.TypeEmbeddedDocument {
		return nil
	}
	it := bson.Raw(filter.Value).Iter()
	for it.Next() {
		switch it.Key() {
		case "$expr":
			if err := checkDefined(it.Value(), defined); err != nil {
				return err
			}
		case "$and", "$or", "$nor":
			for _, sub := range arrayValues(it.Value()) {
				if err := checkFilterDefined(sub, defined); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
