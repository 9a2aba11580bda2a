package agg

import (
	"strings"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
	"github.com/mongoscope/mongoscope/mongotest/internal/query"
)

// env is what an expression is evaluated against: the current document
// (which is also $$ROOT in every stage this package runs) and $$NOW.
type env struct {
	root  bson.Raw
	now   int64                    // $$NOW, milliseconds since the epoch
	vars  map[string]bson.RawValue // user variables: let, $lookup's let
	colls Collections              // other collections, for $lookup and $unionWith
	db    string
	coll  query.Collator // the collation comparisons use; nil is simple
}

// compare orders two values by e's collation.
func (e *env) compare(a, b bson.RawValue) int { return query.CompareWith(a, b, e.coll) }

// sub is an environment for a sub-pipeline: the same clock, collections
// and database, with vars as its variables.
func (e *env) sub(vars map[string]bson.RawValue) *env {
	return &env{now: e.now, vars: vars, colls: e.colls, db: e.db, coll: e.coll}
}

// varExpr is "$$name" or "$$name.a.b" for a user variable.
type varExpr struct {
	name  string
	parts []string
}

func (x varExpr) eval(e *env) (bson.RawValue, error) {
	v, ok := e.vars[x.name]
	if !ok {
		return missing, mongoerr.New(17276, "Use of undefined variable: %s", x.name)
	}
	if len(x.parts) == 0 {
		return v, nil
	}
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		return evalPath(bson.Raw(v.Value), x.parts)
	case bson.TypeArray:
		return evalPathArray(bson.Raw(v.Value), x.parts)
	}
	return missing, nil
}

// checkVarName checks a user variable's name as mongod's let does: a
// lowercase ASCII letter or a non-ASCII byte first, then letters, digits,
// '_' or non-ASCII bytes.
func checkVarName(name string) error {
	if name == "" {
		return mongoerr.New(16866, "empty variable names are not allowed")
	}
	if c := name[0]; !(c >= 'a' && c <= 'z' || c >= 0x80) {
		return mongoerr.New(16867, "'%s' starts with an invalid character for a user variable name", name)
	}
	for i := 1; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c >= 0x80) {
			return mongoerr.New(16868, "'%s' contains an invalid character for a variable name: '%c'", name, c)
		}
	}
	return nil
}

// expr is a compiled aggregation expression.
type expr interface {
	eval(e *env) (bson.RawValue, error)
}

type literalExpr struct{ v bson.RawValue }

func (l literalExpr) eval(*env) (bson.RawValue, error) { return l.v, nil }

// pathExpr is "$a.b" or "$$ROOT.a.b"; an empty parts is $$ROOT itself.
type pathExpr struct{ parts []string }

func (p pathExpr) eval(e *env) (bson.RawValue, error) {
	if len(p.parts) == 0 {
		return docValue(e.root), nil
	}
	return evalPath(e.root, p.parts)
}

type nowExpr struct{}

func (nowExpr) eval(e *env) (bson.RawValue, error) { return dateValue(e.now), nil }

// objectExpr is a document whose values are expressions; fields that
// evaluate to missing are left out, as mongod does.
type objectExpr struct {
	keys []string
	vals []expr
}

func (o objectExpr) eval(e *env) (bson.RawValue, error) {
	start, b := bson.AppendDocumentStart(nil)
	for i, x := range o.vals {
		v, err := x.eval(e)
		if err != nil {
			return missing, err
		}
		if !isMissing(v) {
			b = bson.AppendValueElement(b, o.keys[i], v)
		}
	}
	b, err := endDoc(b, start)
	if err != nil {
		return missing, err
	}
	return docValue(b), nil
}

type arrayExpr struct{ elems []expr }

func (a arrayExpr) eval(e *env) (bson.RawValue, error) {
	vals := make([]bson.RawValue, len(a.elems))
	for i, x := range a.elems {
		v, err := x.eval(e)
		if err != nil {
			return missing, err
		}
		vals[i] = v
	}
	return arrayValue(vals)
}

// opExpr is an operator applied to its (unevaluated) arguments, so that
// $cond, $and, $or and $ifNull evaluate only what they need, as mongod.
type opExpr struct {
	name string
	args []expr
	fn   opFunc
}

func (o *opExpr) eval(e *env) (bson.RawValue, error) { return o.fn(o, e) }

// evalArgs evaluates every argument in order.
func (o *opExpr) evalArgs(e *env) ([]bson.RawValue, error) {
	vals := make([]bson.RawValue, len(o.args))
	for i, a := range o.args {
		v, err := a.eval(e)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	return vals, nil
}

// evalPath reads a field path as aggregation does: through documents, and
// through arrays by collecting the path's value in each element.
func evalPath(doc bson.Raw, parts []string) (bson.RawValue, error) {
	v := doc.Lookup(parts[0])
	if len(parts) == 1 {
		return v, nil
	}
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		return evalPath(bson.Raw(v.Value), parts[1:])
	case bson.TypeArray:
		return evalPathArray(bson.Raw(v.Value), parts[1:])
	}
	return missing, nil
}

func evalPathArray(arr bson.Raw, parts []string) (bson.RawValue, error) {
	var out []bson.RawValue
	it := arr.Iter()
	for it.Next() {
		v := it.Value()
		var (
			nested bson.RawValue
			err    error
		)
		switch v.Type {
		case bson.TypeEmbeddedDocument:
			nested, err = evalPath(bson.Raw(v.Value), parts)
		case bson.TypeArray:
			nested, err = evalPathArray(bson.Raw(v.Value), parts)
		default:
			continue
		}
		if err != nil {
			return missing, err
		}
		if !isMissing(nested) {
			out = append(out, nested)
		}
	}
	return arrayValue(out)
}

// compileExpr compiles one expression: a "$path" or "$$VAR" string, an
// operator document, a document or array of expressions, or a literal.
func compileExpr(v bson.RawValue) (expr, error) {
	switch v.Type {
	case bson.TypeString:
		s := v.StringValue()
		if strings.HasPrefix(s, "$") {
			return compilePath(s)
		}
	case bson.TypeEmbeddedDocument:
		return compileDocExpr(bson.Raw(v.Value))
	case bson.TypeArray:
		var a arrayExpr
		it := bson.Raw(v.Value).Iter()
		for it.Next() {
			x, err := compileExpr(it.Value())
			if err != nil {
				return nil, err
			}
			a.elems = append(a.elems, x)
		}
		if err := it.Err(); err != nil {
			return nil, badBSON(err)
		}
		return a, nil
	}
	return literalExpr{v}, nil
}

// compilePath compiles "$a.b", "$$ROOT.a", "$$CURRENT", "$$NOW" and
// "$$REMOVE".
func compilePath(s string) (expr, error) {
	if !strings.HasPrefix(s, "$$") {
		if s == "$" {
			return nil, mongoerr.New(16872, "'$' by itself is not a valid FieldPath")
		}
		parts, err := splitPath(s[1:])
		if err != nil {
			return nil, err
		}
		return pathExpr{parts}, nil
	}
	name, rest, dotted := strings.Cut(s[2:], ".")
	var parts []string
	if dotted {
		var err error
		if parts, err = splitPath(rest); err != nil {
			return nil, err
		}
	}
	switch name {
	case "":
		return nil, mongoerr.New(16869, "empty variable names are not allowed")
	case "ROOT", "CURRENT":
		return pathExpr{parts}, nil
	case "NOW":
		if dotted {
			return literalExpr{missing}, nil
		}
		return nowExpr{}, nil
	case "REMOVE":
		return literalExpr{missing}, nil
	case "CLUSTER_TIME", "USER_ROLES", "SEARCH_META":
		return nil, mongoerr.New(mongoerr.NotImplemented, "$$%s is not supported by mongotest", name)
	}
	if checkVarName(name) == nil {
		// A user variable: whether it is defined is known only when the
		// expression runs (let and $lookup bind them per run).
		return varExpr{name, parts}, nil
	}
	return nil, mongoerr.New(17276, "Use of undefined variable: %s", name)
}

// splitPath splits a dotted field path and checks each name as mongod's
// FieldPath does.
func splitPath(p string) ([]string, error) {
	parts := strings.Split(p, ".")
	for _, f := range parts {
		if f == "" {
			return nil, mongoerr.New(mongoerr.Location15998, "FieldPath field names may not be empty strings.")
		}
		if f[0] == '$' {
			return nil, mongoerr.New(16410, "FieldPath field names may not start with '$'. Consider using $getField or $setField.")
		}
		if strings.IndexByte(f, 0) >= 0 {
			return nil, mongoerr.New(16411, "FieldPath field names may not contain '\\0'.")
		}
	}
	return parts, nil
}

// compileDocExpr compiles a document: an operator when its first key
// starts with '$', otherwise an object of expressions.
func compileDocExpr(doc bson.Raw) (expr, error) {
	elems, err := doc.Elements()
	if err != nil {
		return nil, badBSON(err)
	}
	if len(elems) > 0 && strings.HasPrefix(elems[0].Key(), "$") {
		if len(elems) != 1 {
			return nil, mongoerr.New(15983, "an expression specification must contain exactly one field, the name of the expression. Found %d fields in %s", len(elems), doc)
		}
		return compileOp(elems[0].Key(), elems[0].Value())
	}
	var o objectExpr
	seen := map[string]bool{}
	for _, el := range elems {
		k := el.Key()
		switch {
		case k == "":
			return nil, mongoerr.New(16410, "FieldPath field names may not be empty strings.")
		case k[0] == '$':
			return nil, mongoerr.New(16410, "FieldPath field names may not start with '$'. Consider using $getField or $setField.")
		case strings.IndexByte(k, '.') >= 0:
			return nil, mongoerr.New(16412, "FieldPath field names may not contain '.'. Consider using $getField or $setField.")
		case seen[k]:
			return nil, mongoerr.New(16406, "duplicate field name specified in object literal: %s", doc)
		}
		seen[k] = true
		x, err := compileExpr(el.Value())
		if err != nil {
			return nil, err
		}
		o.keys = append(o.keys, k)
		o.vals = append(o.vals, x)
	}
	return o, nil
}

// compileOp compiles {$name: operand}.
func compileOp(name string, operand bson.RawValue) (expr, error) {
	if name == "$literal" {
		return literalExpr{operand}, nil
	}
	def, ok := operators[name]
	if !ok {
		if unsupportedOperators[name] {
			return nil, mongoerr.New(mongoerr.NotImplemented, "expression %s is not supported by mongotest", name)
		}
		return nil, mongoerr.New(mongoerr.InvalidPipelineOperator, "Unrecognized expression '%s'", name)
	}
	if def.compile != nil {
		return def.compile(name, operand)
	}
	o := &opExpr{name: name, fn: def.fn}
	if operand.Type == bson.TypeArray {
		it := bson.Raw(operand.Value).Iter()
		for it.Next() {
			x, err := compileExpr(it.Value())
			if err != nil {
				return nil, err
			}
			o.args = append(o.args, x)
		}
		if err := it.Err(); err != nil {
			return nil, badBSON(err)
		}
	} else {
		x, err := compileExpr(operand)
		if err != nil {
			return nil, err
		}
		o.args = []expr{x}
	}
	if err := def.checkArity(name, len(o.args)); err != nil {
		return nil, err
	}
	return o, nil
}

func badBSON(err error) error {
	return mongoerr.New(mongoerr.BadValue, "invalid BSON in pipeline: %v", err)
}
