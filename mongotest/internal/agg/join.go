package agg

import (
	"math/rand/v2"
	"strings"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
	"github.com/mongoscope/mongoscope/mongotest/internal/query"
)

// letVar is one variable of a let: its name and its expression.
type letVar struct {
	name string
	x    expr
}

// compileLet compiles a let document, checking each name as mongod does.
func compileLet(let bson.Raw) ([]letVar, error) {
	var out []letVar
	it := let.Iter()
	for it.Next() {
		name := it.Key()
		if err := checkVarName(name); err != nil {
			return nil, err
		}
		x, err := compileExpr(it.Value())
		if err != nil {
			return nil, err
		}
		out = append(out, letVar{name, x})
	}
	if err := it.Err(); err != nil {
		return nil, badBSON(err)
	}
	return out, nil
}

// evalLet evaluates let against e (its current document is $$ROOT) and
// returns e's variables with let's added.
func evalLet(e *env, let []letVar, root bson.Raw) (map[string]bson.RawValue, error) {
	vars := make(map[string]bson.RawValue, len(e.vars)+len(let))
	for k, v := range e.vars {
		vars[k] = v
	}
	if root == nil {
		root = emptyDoc
	}
	e.root = root
	for _, l := range let {
		v, err := l.x.eval(e)
		if err != nil {
			return nil, err
		}
		vars[l.name] = v
	}
	return vars, nil
}

// Vars are evaluated let variables, for commands other than aggregate
// (find's and update's let) to evaluate expressions with.
type Vars map[string]bson.RawValue

// EvalLet evaluates a command's let option (each value an expression
// evaluated against no document), with now as $$NOW.
func EvalLet(let bson.Raw, now time.Time) (Vars, error) {
	if let == nil {
		return nil, nil
	}
	lv, err := compileLet(let)
	if err != nil {
		return nil, err
	}
	if err := checkDefined(docValue(let), nil); err != nil {
		return nil, err
	}
	vars, err := evalLet(&env{now: now.UnixMilli()}, lv, nil)
	return Vars(vars), err
}

// Eval evaluates the aggregation expression x against doc ($$ROOT and
// $$CURRENT) with vars as the user variables and now as $$NOW. A missing
// result has Type 0.
func Eval(x bson.RawValue, doc bson.Raw, vars Vars, now time.Time) (bson.RawValue, error) {
	c, err := compileExpr(x)
	if err != nil {
		return missing, err
	}
	defined := make(map[string]bool, len(vars))
	for k := range vars {
		defined[k] = true
	}
	if err := checkDefined(x, defined); err != nil {
		return missing, err
	}
	if doc == nil {
		doc = emptyDoc
	}
	return c.eval(&env{root: doc, now: now.UnixMilli(), vars: vars})
}

// checkNested refuses the stages mongod refuses inside a sub-pipeline.
func checkNested(within, name string) error {
	switch within {
	case "":
		return nil
	case "$facet":
		switch name {
		case "$out", "$merge", "$facet", "$collStats", "$indexStats", "$changeStream",
			"$geoNear", "$search", "$searchMeta", "$vectorSearch", "$currentOp", "$documents":
			return mongoerr.New(40600, "%s is not allowed to be used within a $facet stage", name)
		}
	case "$lookup":
		if name == "$out" || name == "$merge" {
			return mongoerr.New(51047, "%s is not allowed within a $lookup's sub-pipeline", name)
		}
	case "$unionWith":
		if name == "$out" || name == "$merge" {
			return mongoerr.New(31441, "%s is not allowed within a $unionWith's sub-pipeline", name)
		}
	}
	if name == "$changeStream" {
		return mongoerr.New(51047, "%s is not allowed within a %s's sub-pipeline", name, within)
	}
	return nil
}

// subPipeline compiles the array v as a sub-pipeline of within.
func subPipeline(v bson.RawValue, o Options, within string) ([]stage, error) {
	var raws []bson.Raw
	for _, el := range arrayValues(v) {
		d, ok := el.DocumentOK()
		if !ok {
			return nil, mongoerr.New(mongoerr.TypeMismatch, "Each element of the 'pipeline' array must be an object")
		}
		raws = append(raws, d)
	}
	st, _, err := compileStages(raws, o, within)
	return st, err
}

// scan reads db.coll through e's collections.
func (e *env) scan(db, coll string) ([]bson.Raw, error) {
	var docs []bson.Raw
	if e.colls != nil {
		err := e.colls.Scan(db, coll, func(d bson.Raw) bool {
			docs = append(docs, d)
			return true
		})
		return docs, err
	}
	return docs, nil
}

// lookupStage is $lookup: the equality form (localField, foreignField),
// the pipeline form (let, pipeline) or both at once.
type lookupStage struct {
	db, from string
	as       []string
	local    []string // nil without the equality form
	foreign  string
	let      []letVar
	pipeline []stage
	hasPipe  bool
}

func parseLookup(spec bson.RawValue, o Options) (stage, error) {
	if spec.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.FailedToParse, "the $lookup specification must be an Object, but found %s", typeName(spec))
	}
	l := &lookupStage{db: o.DB}
	var localField, foreignField, as string
	hasLet := false
	it := bson.Raw(spec.Value).Iter()
	for it.Next() {
		k, v := it.Key(), it.Value()
		switch k {
		case "pipeline":
			if v.Type != bson.TypeArray {
				return nil, mongoerr.New(mongoerr.FailedToParse, "'pipeline' option must be specified as an array")
			}
			st, err := subPipeline(v, o, "$lookup")
			if err != nil {
				return nil, err
			}
			l.pipeline, l.hasPipe = st, true
			continue
		case "let":
			if v.Type != bson.TypeEmbeddedDocument {
				return nil, mongoerr.New(mongoerr.FailedToParse, "$lookup argument 'let: %s' must be an object, is type %s", v, typeName(v))
			}
			let, err := compileLet(bson.Raw(v.Value))
			if err != nil {
				return nil, err
			}
			l.let, hasLet = let, true
			continue
		case "from":
			if v.Type == bson.TypeEmbeddedDocument {
				return nil, mongoerr.New(mongoerr.NotImplemented, "$lookup from another database is not supported by mongotest")
			}
		case "as", "localField", "foreignField":
		default:
			return nil, mongoerr.New(mongoerr.FailedToParse, "unknown argument to $lookup: %s", k)
		}
		if v.Type != bson.TypeString {
			return nil, mongoerr.New(mongoerr.FailedToParse, "$lookup argument '%s: %s' must be a string, is type %s", k, v, typeName(v))
		}
		switch s := v.StringValue(); k {
		case "from":
			l.from = s
		case "as":
			as = s
		case "localField":
			localField = s
		case "foreignField":
			foreignField = s
		}
	}
	if err := it.Err(); err != nil {
		return nil, badBSON(err)
	}
	if l.from == "" {
		return nil, mongoerr.New(mongoerr.FailedToParse, "must specify 'from' field for a $lookup")
	}
	if as == "" {
		return nil, mongoerr.New(mongoerr.FailedToParse, "must specify 'as' field for a $lookup")
	}
	if l.hasPipe {
		if (localField == "") != (foreignField == "") {
			return nil, mongoerr.New(mongoerr.FailedToParse, "$lookup requires both or neither of 'localField' and 'foreignField' to be specified")
		}
	} else {
		if localField == "" || foreignField == "" {
			return nil, mongoerr.New(mongoerr.FailedToParse, "$lookup requires either 'pipeline' or both 'localField' and 'foreignField' to be specified")
		}
		if hasLet {
			return nil, mongoerr.New(mongoerr.FailedToParse, "$lookup with a 'let' argument must also specify 'pipeline'")
		}
	}
	var err error
	if l.as, err = splitPath(as); err != nil {
		return nil, err
	}
	if localField != "" {
		if l.local, err = splitPath(localField); err != nil {
			return nil, err
		}
		if _, err = splitPath(foreignField); err != nil {
			return nil, err
		}
		l.foreign = foreignField
	}
	return l, nil
}

// localValues are the values $lookup matches for localField: the value
// at the path, with arrays (at the end or on the way) giving their
// elements; null when there are none, so null and missing foreign fields
// match.
func localValues(doc bson.Raw, path []string) []bson.RawValue {
	var out []bson.RawValue
	var walk func(v bson.RawValue, rest []string)
	walk = func(v bson.RawValue, rest []string) {
		if len(rest) == 0 {
			if v.Type == bson.TypeArray {
				out = append(out, arrayValues(v)...)
			} else if !isMissing(v) {
				out = append(out, v)
			}
			return
		}
		switch v.Type {
		case bson.TypeEmbeddedDocument:
			walk(bson.Raw(v.Value).Lookup(rest[0]), rest[1:])
		case bson.TypeArray:
			for _, el := range arrayValues(v) {
				if el.Type == bson.TypeEmbeddedDocument {
					walk(el, rest)
				}
			}
		}
	}
	walk(docValue(doc), path)
	if len(out) == 0 {
		out = append(out, nullValue)
	}
	return out
}

// equalityFilter is {foreign: {$in: values}}, with regular expressions
// matched as values ({$eq: re}), not as patterns, as mongod does.
func equalityFilter(foreign string, vals []bson.RawValue) (bson.Raw, error) {
	var plain, regexes []bson.RawValue
	for _, v := range vals {
		if v.Type == bson.TypeRegex {
			regexes = append(regexes, v)
		} else {
			plain = append(plain, v)
		}
	}
	in, err := arrayValue(plain)
	if err != nil {
		return nil, err
	}
	clause := func(op string, v bson.RawValue) (bson.RawValue, error) {
		s, b := bson.AppendDocumentStart(nil)
		is, ib := bson.AppendDocumentStart(nil)
		ib = bson.AppendValueElement(ib, op, v)
		inner, err := endDoc(ib, is)
		if err != nil {
			return missing, err
		}
		b = bson.AppendValueElement(b, foreign, docValue(inner))
		d, err := endDoc(b, s)
		return docValue(d), err
	}
	ors := []bson.RawValue{}
	c, err := clause("$in", in)
	if err != nil {
		return nil, err
	}
	ors = append(ors, c)
	for _, re := range regexes {
		if c, err = clause("$eq", re); err != nil {
			return nil, err
		}
		ors = append(ors, c)
	}
	if len(ors) == 1 {
		return bson.Raw(ors[0].Value), nil
	}
	arr, err := arrayValue(ors)
	if err != nil {
		return nil, err
	}
	s, b := bson.AppendDocumentStart(nil)
	b = bson.AppendValueElement(b, "$or", arr)
	return endDoc(b, s)
}

func (l *lookupStage) run(e *env, docs []bson.Raw) ([]bson.Raw, error) {
	foreign, err := e.scan(l.db, l.from)
	if err != nil {
		return nil, err
	}
	vars := e.vars
	out := make([]bson.Raw, 0, len(docs))
	for _, d := range docs {
		matched := foreign
		if l.local != nil {
			f, err := equalityFilter(l.foreign, localValues(d, l.local))
			if err != nil {
				return nil, err
			}
			m, err := query.NewMatcherWith(f, query.Options{Collator: e.coll})
			if err != nil {
				return nil, err
			}
			matched = nil
			for _, fd := range foreign {
				if m.Match(fd) {
					matched = append(matched, fd)
				}
			}
		}
		if l.hasPipe {
			v := vars
			if l.let != nil {
				var err error
				if v, err = evalLet(e, l.let, d); err != nil {
					return nil, err
				}
			}
			var err error
			if matched, err = runStages(e.sub(v), l.pipeline, append([]bson.Raw(nil), matched...)); err != nil {
				return nil, err
			}
		}
		vals := make([]bson.RawValue, len(matched))
		for i, m := range matched {
			vals[i] = docValue(m)
		}
		arr, err := arrayValue(vals)
		if err != nil {
			return nil, err
		}
		r, err := setPath(d, l.as, arr)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// facetStage is $facet: each named sub-pipeline runs over all the input,
// and one document holds each's results as an array.
type facetStage struct {
	names     []string
	pipelines [][]stage
}

func parseFacet(spec bson.RawValue, o Options) (stage, error) {
	if spec.Type != bson.TypeEmbeddedDocument || isEmptyDoc(bson.Raw(spec.Value)) {
		return nil, mongoerr.New(40169, "the $facet specification must be a non-empty object, but found: $facet: %s", spec)
	}
	f := &facetStage{}
	it := bson.Raw(spec.Value).Iter()
	for it.Next() {
		name, v := it.Key(), it.Value()
		if _, err := splitPath(name); err != nil {
			return nil, err
		}
		if strings.IndexByte(name, '.') >= 0 {
			return nil, mongoerr.New(16412, "FieldPath field names may not contain '.'. Consider using $getField or $setField.")
		}
		if v.Type != bson.TypeArray {
			return nil, mongoerr.New(40170, "arguments to $facet must be arrays, %s is type %s", name, typeName(v))
		}
		for _, el := range arrayValues(v) {
			if el.Type != bson.TypeEmbeddedDocument {
				return nil, mongoerr.New(40171, "elements of arrays in $facet spec must be non-empty objects, %s argument contained an element of type %s: %s", name, typeName(el), el)
			}
		}
		st, err := subPipeline(v, o, "$facet")
		if err != nil {
			return nil, err
		}
		f.names = append(f.names, name)
		f.pipelines = append(f.pipelines, st)
	}
	if err := it.Err(); err != nil {
		return nil, badBSON(err)
	}
	return f, nil
}

func (f *facetStage) run(e *env, docs []bson.Raw) ([]bson.Raw, error) {
	start, b := bson.AppendDocumentStart(nil)
	for i, p := range f.pipelines {
		res, err := runStages(e, p, append([]bson.Raw(nil), docs...))
		if err != nil {
			return nil, err
		}
		vals := make([]bson.RawValue, len(res))
		for j, d := range res {
			vals[j] = docValue(d)
		}
		arr, err := arrayValue(vals)
		if err != nil {
			return nil, err
		}
		b = bson.AppendValueElement(b, f.names[i], arr)
	}
	d, err := endDoc(b, start)
	if err != nil {
		return nil, err
	}
	return []bson.Raw{d}, nil
}

// unionWithStage is $unionWith: the input, then another collection's
// documents through an optional pipeline.
type unionWithStage struct {
	db, coll string
	pipeline []stage
}

func parseUnionWith(spec bson.RawValue, o Options) (stage, error) {
	u := &unionWithStage{db: o.DB}
	switch spec.Type {
	case bson.TypeString:
		u.coll = spec.StringValue()
	case bson.TypeEmbeddedDocument:
		haveColl := false
		it := bson.Raw(spec.Value).Iter()
		for it.Next() {
			k, v := it.Key(), it.Value()
			switch k {
			case "coll":
				if v.Type != bson.TypeString {
					return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$unionWith.coll' is the wrong type '%s', expected type 'string'", typeName(v))
				}
				u.coll, haveColl = v.StringValue(), true
			case "pipeline":
				if v.Type != bson.TypeArray {
					return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$unionWith.pipeline' is the wrong type '%s', expected type 'array'", typeName(v))
				}
				st, err := subPipeline(v, o, "$unionWith")
				if err != nil {
					return nil, err
				}
				u.pipeline = st
			default:
				return nil, mongoerr.New(40415, "BSON field '$unionWith.%s' is an unknown field.", k)
			}
		}
		if err := it.Err(); err != nil {
			return nil, badBSON(err)
		}
		if !haveColl {
			return nil, mongoerr.New(40414, "BSON field '$unionWith.coll' is missing but a required field")
		}
	default:
		return nil, mongoerr.New(mongoerr.FailedToParse, "the $unionWith stage specification must be an object or string, but found %s", typeName(spec))
	}
	if u.coll == "" {
		return nil, mongoerr.New(mongoerr.InvalidNamespace, "Invalid collection name for $unionWith: ''")
	}
	return u, nil
}

func (u *unionWithStage) run(e *env, docs []bson.Raw) ([]bson.Raw, error) {
	input, err := e.scan(u.db, u.coll)
	if err != nil {
		return nil, err
	}
	other, err := runStages(e.sub(e.vars), u.pipeline, input)
	if err != nil {
		return nil, err
	}
	return append(append([]bson.Raw(nil), docs...), other...), nil
}

// pairStage runs two stages in turn: $sortByCount and $bucket are a
// $group and a $sort, as in mongod.
type pairStage struct{ a, b stage }

func (p pairStage) run(e *env, docs []bson.Raw) ([]bson.Raw, error) {
	docs, err := p.a.run(e, docs)
	if err != nil {
		return nil, err
	}
	return p.b.run(e, docs)
}

func sortBy(field string, dir int32, coll query.Collator) (stage, error) {
	s, b := bson.AppendDocumentStart(nil)
	b = bson.AppendValueElement(b, field, int32Value(dir))
	d, err := endDoc(b, s)
	if err != nil {
		return nil, err
	}
	srt, err := query.NewSortWith(d, coll)
	if err != nil {
		return nil, err
	}
	return sortStage{srt}, nil
}

func parseSortByCount(spec bson.RawValue) (stage, error) {
	switch spec.Type {
	case bson.TypeEmbeddedDocument:
		elems, err := bson.Raw(spec.Value).Elements()
		if err != nil {
			return nil, badBSON(err)
		}
		if len(elems) == 0 || !strings.HasPrefix(elems[0].Key(), "$") {
			return nil, mongoerr.New(40147, "the sortByCount field must be defined as a $-prefixed path or an expression")
		}
	case bson.TypeString:
		if s := spec.StringValue(); s == "" || s[0] != '$' {
			return nil, mongoerr.New(40148, "the sortByCount field must be defined as a $-prefixed path or an expression")
		}
	default:
		return nil, mongoerr.New(40149, "the sortByCount field must be specified as a string or as an object")
	}
	id, err := compileExpr(spec)
	if err != nil {
		return nil, err
	}
	g := &group{id: id, accs: []accSpec{{field: "count", op: "$sum", arg: literalExpr{int32Value(1)}}}}
	s, err := sortBy("count", -1, nil)
	if err != nil {
		return nil, err
	}
	return pairStage{g, s}, nil
}

// bucketID is $bucket's group key: the lower boundary of the bucket the
// groupBy value falls in, or the default.
type bucketID struct {
	groupBy    expr
	boundaries []bson.RawValue
	def        bson.RawValue // missing without a default
}

func (b bucketID) eval(e *env) (bson.RawValue, error) {
	v, err := b.groupBy.eval(e)
	if err != nil {
		return missing, err
	}
	if isMissing(v) {
		v = nullValue
	}
	for i := 1; i < len(b.boundaries); i++ {
		if e.compare(v, b.boundaries[i-1]) >= 0 && e.compare(v, b.boundaries[i]) < 0 {
			return b.boundaries[i-1], nil
		}
	}
	if isMissing(b.def) {
		return missing, mongoerr.New(40066, "$switch could not find a matching branch for an input, and no default was specified.")
	}
	return b.def, nil
}

// canonicalType groups the types mongod's $bucket treats as one: all
// numbers, string and symbol, date and timestamp.
func canonicalType(v bson.RawValue) bson.Type {
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128:
		return bson.TypeDouble
	case bson.TypeSymbol:
		return bson.TypeString
	case bson.TypeUndefined:
		return bson.TypeNull
	}
	return v.Type
}

// constant compiles v and returns its value when it is a constant.
func constant(v bson.RawValue) (bson.RawValue, bool, error) {
	x, err := compileExpr(v)
	if err != nil {
		return missing, false, err
	}
	if l, ok := x.(literalExpr); ok {
		return l.v, true, nil
	}
	if v.Type == bson.TypeEmbeddedDocument || v.Type == bson.TypeArray {
		// A document, array or operator over constants is a constant too.
		val, err := x.eval(&env{root: emptyDoc})
		if err == nil && !hasPathOrVar(v) {
			return val, true, nil
		}
	}
	return missing, false, nil
}

// hasPathOrVar reports whether an expression reads a field path or a
// variable, or calls $rand: what keeps mongod from folding it to a
// constant.
func hasPathOrVar(v bson.RawValue) bool {
	switch v.Type {
	case bson.TypeString:
		s := v.StringValue()
		return len(s) > 0 && s[0] == '$'
	case bson.TypeEmbeddedDocument, bson.TypeArray:
		it := bson.Raw(v.Value).Iter()
		for it.Next() {
			if it.Key() == "$rand" {
				return true
			}
			if it.Key() == "$literal" {
				continue
			}
			if hasPathOrVar(it.Value()) {
				return true
			}
		}
	}
	return false
}

func parseBucket(spec bson.RawValue, coll query.Collator) (stage, error) {
	compare := func(a, b bson.RawValue) int { return query.CompareWith(a, b, coll) }
	if spec.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(40201, "Argument to $bucket stage must be an object, but found type: %s.", typeName(spec))
	}
	id := bucketID{}
	var output bson.Raw
	haveGroupBy := false
	it := bson.Raw(spec.Value).Iter()
	for it.Next() {
		v := it.Value()
		switch k := it.Key(); k {
		case "groupBy":
			isExpr := v.Type == bson.TypeEmbeddedDocument && !isEmptyDoc(bson.Raw(v.Value)) && strings.HasPrefix(firstKey(bson.Raw(v.Value)), "$")
			isPath := v.Type == bson.TypeString && len(v.StringValue()) > 0 && v.StringValue()[0] == '$'
			if !isExpr && !isPath {
				return nil, mongoerr.New(40202, "The $bucket 'groupBy' field must be defined as a $-prefixed path or an expression, but found: %s.", v)
			}
			x, err := compileExpr(v)
			if err != nil {
				return nil, err
			}
			id.groupBy, haveGroupBy = x, true
		case "boundaries":
			if v.Type != bson.TypeArray {
				return nil, mongoerr.New(40200, "The $bucket 'boundaries' field must be an array, but found type: %s.", typeName(v))
			}
			id.boundaries = nil
			for _, el := range arrayValues(v) {
				c, ok, err := constant(el)
				if err != nil {
					return nil, err
				}
				if !ok {
					return nil, mongoerr.New(40191, "The $bucket 'boundaries' field must be an array of constant values, but found value: %s.", el)
				}
				id.boundaries = append(id.boundaries, c)
			}
			if n := len(id.boundaries); n < 2 {
				return nil, mongoerr.New(40192, "The $bucket 'boundaries' field must have at least 2 values, but found %d value(s).", n)
			}
			for i := 1; i < len(id.boundaries); i++ {
				lo, hi := id.boundaries[i-1], id.boundaries[i]
				if canonicalType(lo) != canonicalType(hi) {
					return nil, mongoerr.New(40193, "All values in the the 'boundaries' option to $bucket must have the same type. Found conflicting types %s and %s.", typeName(lo), typeName(hi))
				}
				if compare(lo, hi) >= 0 {
					return nil, mongoerr.New(40194, "The 'boundaries' option to $bucket must be sorted, but elements %d and %d are not in ascending order (%s is not less than %s).", i-1, i, lo, hi)
				}
			}
		case "default":
			c, ok, err := constant(v)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, mongoerr.New(40195, "The $bucket 'default' field must be a constant expression, but found: %s.", v)
			}
			id.def = c
		case "output":
			if v.Type != bson.TypeEmbeddedDocument {
				return nil, mongoerr.New(40196, "The $bucket 'output' field must be an object, but found type: %s.", typeName(v))
			}
			output = bson.Raw(v.Value)
		default:
			return nil, mongoerr.New(40197, "Unrecognized option to $bucket: %s.", k)
		}
	}
	if err := it.Err(); err != nil {
		return nil, badBSON(err)
	}
	if !haveGroupBy || len(id.boundaries) == 0 {
		return nil, mongoerr.New(40198, "$bucket requires 'groupBy' and 'boundaries' to be specified.")
	}
	if !isMissing(id.def) && canonicalType(id.def) == canonicalType(id.boundaries[0]) {
		if compare(id.def, id.boundaries[0]) >= 0 && compare(id.def, id.boundaries[len(id.boundaries)-1]) < 0 {
			return nil, mongoerr.New(40199, "The $bucket 'default' field must be less than the lowest boundary or greater than or equal to the highest boundary.")
		}
	}
	// The group: _id null stands in for bucketID, then output's
	// accumulators, or {count: {$sum: 1}} without output.
	s, b := bson.AppendDocumentStart(nil)
	b = bson.AppendValueElement(b, "_id", nullValue)
	if output != nil {
		oit := output.Iter()
		for oit.Next() {
			b = append(b, oit.Element()...)
		}
	} else {
		s2, c := bson.AppendDocumentStart(nil)
		c = bson.AppendValueElement(c, "$sum", int32Value(1))
		cd, err := endDoc(c, s2)
		if err != nil {
			return nil, err
		}
		b = bson.AppendValueElement(b, "count", docValue(cd))
	}
	gd, err := endDoc(b, s)
	if err != nil {
		return nil, err
	}
	g, err := parseGroup(docValue(gd))
	if err != nil {
		return nil, err
	}
	g.id = id
	srt, err := sortBy("_id", 1, coll)
	if err != nil {
		return nil, err
	}
	return pairStage{g, srt}, nil
}

func firstKey(d bson.Raw) string {
	it := d.Iter()
	if it.Next() {
		return it.Key()
	}
	return ""
}

// randExpr is {$rand: {}}: a double in [0, 1).
type randExpr struct{}

func (randExpr) eval(*env) (bson.RawValue, error) { return doubleValue(rand.Float64()), nil }

func compileRand(_ string, operand bson.RawValue) (expr, error) {
	switch operand.Type {
	case bson.TypeEmbeddedDocument, bson.TypeArray:
		if !isEmptyDoc(bson.Raw(operand.Value)) {
			return nil, mongoerr.New(3040501, "$rand does not currently accept arguments")
		}
		return randExpr{}, nil
	}
	return nil, mongoerr.New(10065, "invalid parameter: expected an object ($rand)")
}

// letExpr is {$let: {vars: {...}, in: expr}}.
type letExpr struct {
	vars []letVar
	in   expr
}

func (l letExpr) eval(e *env) (bson.RawValue, error) {
	vars := make(map[string]bson.RawValue, len(e.vars)+len(l.vars))
	for k, v := range e.vars {
		vars[k] = v
	}
	for _, lv := range l.vars {
		v, err := lv.x.eval(e) // evaluated in the outer scope, as mongod
		if err != nil {
			return missing, err
		}
		vars[lv.name] = v
	}
	outer := e.vars
	e.vars = vars
	v, err := l.in.eval(e)
	e.vars = outer
	return v, err
}

func compileLetExpr(_ string, operand bson.RawValue) (expr, error) {
	if operand.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(16874, "$let only supports an object as its argument")
	}
	var (
		l                letExpr
		haveVars, haveIn bool
	)
	it := bson.Raw(operand.Value).Iter()
	for it.Next() {
		v := it.Value()
		switch k := it.Key(); k {
		case "vars":
			if v.Type != bson.TypeEmbeddedDocument {
				return nil, mongoerr.New(10065, "invalid parameter: expected an object (vars)")
			}
			vars, err := compileLet(bson.Raw(v.Value))
			if err != nil {
				return nil, err
			}
			l.vars, haveVars = vars, true
		case "in":
			x, err := compileExpr(v)
			if err != nil {
				return nil, err
			}
			l.in, haveIn = x, true
		default:
			return nil, mongoerr.New(16875, "Unrecognized parameter to $let: %s", k)
		}
	}
	if err := it.Err(); err != nil {
		return nil, badBSON(err)
	}
	if !haveVars {
		return nil, mongoerr.New(16876, "Missing 'vars' parameter to $let")
	}
	if !haveIn {
		return nil, mongoerr.New(16877, "Missing 'in' parameter to $let")
	}
	return l, nil
}
