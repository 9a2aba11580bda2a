package agg

import (
	"bytes"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
	"github.com/mongoscope/mongoscope/mongotest/internal/query"
)

// Options configure a pipeline.
type Options struct {
	// Out writes the documents that reach a final $out stage to the named
	// collection, replacing its contents (docs may be empty: the
	// collection then exists and is empty). The documents are as the
	// pipeline made them; the writer gives any without an _id one, as
	// insert does. A pipeline with $out fails to compile when Out is nil.
	Out func(db, coll string, docs []bson.Raw) error
	// Now is the value of $$NOW; the zero Time means the time Run starts.
	Now time.Time
	// DB is the database the aggregate runs in: $out's default database,
	// and the database of $lookup's and $unionWith's collections.
	DB string
	// Let is the aggregate command's let option: variables, each an
	// expression evaluated once when Run starts, that every stage and
	// sub-pipeline can read as $$name.
	Let bson.Raw
	// Collections reads the other collections $lookup and $unionWith
	// name; with nil, those stages see every collection empty.
	Collections Collections
	// Collation compares strings in $match, $sort and the comparison
	// expressions ($eq, $lt, $cmp, $in, ...); nil is the simple
	// collation. Stages and expressions that would also need it and do
	// not have it ($group keys, set expressions, ...) fail to compile with
	// NotImplemented when it is set.
	Collation query.Collator
	// Vars names variables the caller supplies to each RunWith (such as
	// $merge's $$new); stages may read them as $$name.
	Vars []string
}

// Collections is how a pipeline reads a collection other than its input.
type Collections interface {
	// Scan yields the documents of db.coll (none when it does not exist)
	// until yield returns false.
	// The error is the view's pipeline's when db.coll is a view.
	Scan(db, coll string, yield func(bson.Raw) bool) error
}

// Pipeline is a compiled aggregation pipeline. It holds no per-run state,
// so one Pipeline may be run any number of times, one run at a time or
// concurrently.
type Pipeline struct {
	stages []stage
	opts   Options
	out    *outStage
	let    []letVar
}

// stage transforms the whole document stream; every stage sees all the
// documents of the one before (the results are materialized anyway).
type stage interface {
	run(e *env, docs []bson.Raw) ([]bson.Raw, error)
}

// knownUnsupported are stages mongod has that this package does not run.
var knownUnsupported = map[string]bool{
	"$bucketAuto": true, "$geoNear": true,
	"$merge": true, "$changeStream": true, "$changeStreamSplitLargeEvent": true,
	"$graphLookup": true, "$sample": true, "$redact": true,
	"$indexStats": true, "$collStats": true, "$currentOp": true, "$listSessions": true,
	"$listLocalSessions": true, "$listCachedAndActiveUsers": true, "$planCacheStats": true,
	"$densify": true, "$fill": true, "$setWindowFields": true,
	"$search": true, "$searchMeta": true, "$vectorSearch": true, "$documents": true,
	"$listSearchIndexes": true, "$shardedDataDistribution": true, "$querySettings": true,
	"$listSampledQueries": true, "$rankFusion": true, "$scoreFusion": true,
}

// Compile checks every stage, as mongod does before running any, and
// returns the pipeline. Errors are *mongoerr.Error values with mongod's
// codes: Location40324 for an unknown stage name, NotImplemented for a
// stage mongod has and this package does not run, and the stage's own
// parse errors otherwise.
func Compile(stages []bson.Raw, o Options) (*Pipeline, error) {
	p := &Pipeline{opts: o}
	if o.Collation != nil {
		for _, raw := range stages {
			if err := checkCollated(docValue(raw)); err != nil {
				return nil, err
			}
		}
	}
	if o.Let != nil {
		let, err := compileLet(o.Let)
		if err != nil {
			return nil, err
		}
		p.let = let
	}
	st, out, err := compileStages(stages, o, "")
	if err != nil {
		return nil, err
	}
	// The let option's expressions see none of its variables.
	if err := checkDefined(docValue(o.Let), nil); o.Let != nil && err != nil {
		return nil, err
	}
	defined := map[string]bool{}
	for _, l := range p.let {
		defined[l.name] = true
	}
	for _, name := range o.Vars {
		defined[name] = true
	}
	for _, raw := range stages {
		if err := checkDefined(docValue(raw), defined); err != nil {
			return nil, err
		}
	}
	p.stages, p.out = st, out
	return p, nil
}

// compileStages compiles a pipeline; within is the stage holding it
// ("$lookup", "$facet", "$unionWith") or "" at the top level, where alone
// a final $out is allowed.
func compileStages(stages []bson.Raw, o Options, within string) ([]stage, *outStage, error) {
	var (
		compiled []stage
		last     *outStage
	)
	for i, raw := range stages {
		if err := raw.Validate(); err != nil {
			return nil, nil, mongoerr.New(mongoerr.BadValue, "pipeline stage %d is not a valid BSON document: %v", i, err)
		}
		elems, err := raw.Elements()
		if err != nil {
			return nil, nil, badBSON(err)
		}
		if len(elems) != 1 {
			return nil, nil, mongoerr.New(40323, "A pipeline stage specification object must contain exactly one field.")
		}
		name, spec := elems[0].Key(), elems[0].Value()
		if err := checkNested(within, name); err != nil {
			return nil, nil, err
		}
		s, err := compileStage(name, spec, o)
		if err != nil {
			return nil, nil, err
		}
		if out, ok := s.(*outStage); ok {
			if i != len(stages)-1 {
				return nil, nil, mongoerr.New(40601, "$out can only be the final stage in the pipeline")
			}
			last = out
			continue
		}
		compiled = append(compiled, s)
	}
	return compiled, last, nil
}

func compileStage(name string, spec bson.RawValue, o Options) (stage, error) {
	switch name {
	case "$match":
		if spec.Type != bson.TypeEmbeddedDocument {
			return nil, mongoerr.New(15959, "the match filter must be an expression in an object")
		}
		return parseMatch(bson.Raw(spec.Value), o.Collation)
	case "$project":
		if spec.Type != bson.TypeEmbeddedDocument {
			return nil, mongoerr.New(15969, "$project specification must be an object")
		}
		p, err := parseProjection(name, bson.Raw(spec.Value), true)
		if err != nil {
			return nil, err
		}
		return projectStage{p}, nil
	case "$addFields", "$set":
		if spec.Type != bson.TypeEmbeddedDocument {
			return nil, mongoerr.New(40272, "%s specification stage must be an object, got %s", name, typeName(spec))
		}
		p, err := parseProjection(name, bson.Raw(spec.Value), false)
		if err != nil {
			return nil, err
		}
		return projectStage{p}, nil
	case "$unset":
		p, err := parseUnset(spec)
		if err != nil {
			return nil, err
		}
		return projectStage{p}, nil
	case "$group":
		g, err := parseGroup(spec)
		if err != nil {
			return nil, err
		}
		return g, nil
	case "$sort":
		if spec.Type != bson.TypeEmbeddedDocument {
			return nil, mongoerr.New(15973, "the $sort key specification must be an object")
		}
		if isEmptyDoc(bson.Raw(spec.Value)) {
			return nil, mongoerr.New(15976, "$sort stage must have at least one sort key")
		}
		s, err := query.NewSortWith(bson.Raw(spec.Value), o.Collation)
		if err != nil {
			return nil, err
		}
		return sortStage{s}, nil
	case "$skip", "$limit":
		return parseSkipLimit(name, spec)
	case "$count":
		return parseCount(spec)
	case "$unwind":
		return parseUnwind(spec)
	case "$replaceRoot", "$replaceWith":
		return parseReplaceRoot(name, spec)
	case "$out":
		return parseOut(spec, o)
	case "$lookup":
		return parseLookup(spec, o)
	case "$facet":
		return parseFacet(spec, o)
	case "$unionWith":
		return parseUnionWith(spec, o)
	case "$sortByCount":
		return parseSortByCount(spec)
	case "$bucket":
		return parseBucket(spec, o.Collation)
	}
	if knownUnsupported[name] {
		return nil, mongoerr.New(mongoerr.NotImplemented, "the %s stage is not supported by mongotest", name)
	}
	return nil, mongoerr.New(mongoerr.Location40324, "Unrecognized pipeline stage name: '%s'", name)
}

// HasOut reports whether the pipeline ends in $out, so it writes rather
// than returns documents (and must run on a primary).
func (p *Pipeline) HasOut() bool { return p.out != nil }

// Run feeds the documents input yields through the pipeline and returns
// the results; with $out it writes them through Options.Out and returns
// none. Returned documents may share memory with the input documents.
func (p *Pipeline) Run(input func(yield func(bson.Raw) bool)) ([]bson.Raw, error) {
	return p.RunWith(input, nil)
}

// RunWith is Run with vars, the values of the variables Options.Vars
// names, set beside the let option's.
func (p *Pipeline) RunWith(input func(yield func(bson.Raw) bool), vars Vars) ([]bson.Raw, error) {
	now := p.opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	e := &env{now: now.UnixMilli(), colls: p.opts.Collections, db: p.opts.DB, coll: p.opts.Collation}
	if p.let != nil {
		vars, err := evalLet(e, p.let, nil)
		if err != nil {
			return nil, err
		}
		e.vars = vars
	}
	if len(vars) > 0 {
		all := make(map[string]bson.RawValue, len(e.vars)+len(vars))
		for k, v := range e.vars {
			all[k] = v
		}
		for k, v := range vars {
			all[k] = v
		}
		e.vars = all
	}
	var docs []bson.Raw
	if input != nil {
		input(func(d bson.Raw) bool {
			docs = append(docs, d)
			return true
		})
	}
	docs, err := runStages(e, p.stages, docs)
	if err != nil {
		return nil, err
	}
	if p.out != nil {
		if err := p.opts.Out(p.out.db, p.out.coll, docs); err != nil {
			return nil, err
		}
		return nil, nil
	}
	return docs, nil
}

func runStages(e *env, stages []stage, docs []bson.Raw) ([]bson.Raw, error) {
	for _, s := range stages {
		var err error
		if docs, err = s.run(e, docs); err != nil {
			return nil, err
		}
	}
	return docs, nil
}

// matchStage is $match: a query filter, its $expr (wherever $and, $or and
// $nor put it) evaluated with this package's expressions.
type matchStage struct {
	m      *query.Matcher // nil when the filter has $expr: compiled per run, with the run's variables
	filter bson.Raw
	coll   query.Collator
}

func parseMatch(filter bson.Raw, coll query.Collator) (stage, error) {
	s := &matchStage{filter: filter, coll: coll}
	if !bytes.Contains(filter, []byte("$expr")) {
		m, err := query.NewMatcherWith(filter, query.Options{Collator: coll})
		if err != nil {
			return nil, err
		}
		s.m = m
		return s, nil
	}
	// Compiled now for its errors, as mongod parses before running.
	if _, err := s.compile(nil); err != nil {
		return nil, err
	}
	return s, nil
}

// compile compiles the filter with its $expr evaluated in e (its
// variables, clock and collations) on each document.
func (s *matchStage) compile(e *env) (*query.Matcher, error) {
	return query.NewMatcherWith(s.filter, query.Options{Collator: s.coll, Expr: func(operand bson.RawValue) (func(bson.Raw) (bool, error), error) {
		x, err := compileExpr(operand)
		if err != nil {
			return nil, err
		}
		return func(doc bson.Raw) (bool, error) {
			if e == nil {
				return false, nil
			}
			sub := *e
			sub.root = doc
			v, err := x.eval(&sub)
			if err != nil {
				return false, err
			}
			return truthy(v), nil
		}, nil
	}})
}

func (s *matchStage) run(e *env, docs []bson.Raw) ([]bson.Raw, error) {
	m := s.m
	if m == nil {
		var err error
		if m, err = s.compile(e); err != nil {
			return nil, err
		}
	}
	out := docs[:0:0]
	for _, d := range docs {
		if m.Match(d) {
			out = append(out, d)
		}
	}
	if err := m.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

type projectStage struct{ p *projection }

func (s projectStage) run(e *env, docs []bson.Raw) ([]bson.Raw, error) {
	out := make([]bson.Raw, 0, len(docs))
	for _, d := range docs {
		e.root = d
		r, err := s.p.apply(e, d)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

type sortStage struct{ s *query.Sort }

func (s sortStage) run(_ *env, docs []bson.Raw) ([]bson.Raw, error) {
	out := append([]bson.Raw(nil), docs...)
	sort.SliceStable(out, func(i, j int) bool { return s.s.Compare(out[i], out[j]) < 0 })
	return out, nil
}

type skipStage struct{ n int64 }

func (s skipStage) run(_ *env, docs []bson.Raw) ([]bson.Raw, error) {
	if s.n >= int64(len(docs)) {
		return nil, nil
	}
	return docs[s.n:], nil
}

type limitStage struct{ n int64 }

func (s limitStage) run(_ *env, docs []bson.Raw) ([]bson.Raw, error) {
	if s.n < int64(len(docs)) {
		return docs[:s.n], nil
	}
	return docs, nil
}

func parseSkipLimit(name string, spec bson.RawValue) (stage, error) {
	var n int64
	switch spec.Type {
	case bson.TypeInt32:
		n = int64(spec.Int32())
	case bson.TypeInt64:
		n = spec.Int64()
	case bson.TypeDouble:
		f := spec.Double()
		if f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
			return nil, mongoerr.New(5107200, "invalid argument to %s stage: Cannot represent as a 64-bit integer: %s: %s", name, name, spec)
		}
		n = int64(f)
	case bson.TypeDecimal128:
		return nil, decimalUnsupported(name)
	default:
		if name == "$skip" {
			return nil, mongoerr.New(15972, "Argument to $skip must be a number")
		}
		return nil, mongoerr.New(15957, "the limit must be specified as a number")
	}
	if name == "$skip" {
		if n < 0 {
			return nil, mongoerr.New(15956, "Argument to $skip cannot be negative")
		}
		return skipStage{n}, nil
	}
	if n <= 0 {
		return nil, mongoerr.New(15958, "the limit must be positive")
	}
	return limitStage{n}, nil
}

type countStage struct{ field string }

func parseCount(spec bson.RawValue) (stage, error) {
	if spec.Type != bson.TypeString {
		return nil, mongoerr.New(40156, "the count field must be a non-empty string")
	}
	f := spec.StringValue()
	switch {
	case f == "":
		return nil, mongoerr.New(40157, "the count field must be a non-empty string")
	case f[0] == '$':
		return nil, mongoerr.New(40158, "the count field cannot be a $-prefixed path")
	case strings.IndexByte(f, '.') >= 0:
		return nil, mongoerr.New(40160, "the count field cannot contain '.'")
	case strings.IndexByte(f, 0) >= 0:
		return nil, mongoerr.New(40159, "the count field cannot contain a null byte")
	}
	return countStage{f}, nil
}

func (s countStage) run(_ *env, docs []bson.Raw) ([]bson.Raw, error) {
	if len(docs) == 0 {
		return nil, nil // mongod returns no document, not {count: 0}
	}
	start, b := bson.AppendDocumentStart(nil)
	b = bson.AppendValueElement(b, s.field, intValue(int64(len(docs))))
	b, err := endDoc(b, start)
	if err != nil {
		return nil, err
	}
	return []bson.Raw{b}, nil
}

type unwindStage struct {
	path     []string
	index    []string // includeArrayIndex, nil when not asked for
	preserve bool
}

func parseUnwind(spec bson.RawValue) (stage, error) {
	u := &unwindStage{}
	var path string
	switch spec.Type {
	case bson.TypeString:
		path = spec.StringValue()
	case bson.TypeEmbeddedDocument:
		havePath := false
		it := bson.Raw(spec.Value).Iter()
		for it.Next() {
			v := it.Value()
			switch k := it.Key(); k {
			case "path":
				if v.Type != bson.TypeString {
					return nil, mongoerr.New(28808, "expected a string as the path for $unwind stage, got %s", typeName(v))
				}
				path, havePath = v.StringValue(), true
			case "includeArrayIndex":
				if v.Type != bson.TypeString {
					return nil, mongoerr.New(28810, "expected a non-empty string for the includeArrayIndex option to $unwind stage, got %s", typeName(v))
				}
				s := v.StringValue()
				if s == "" {
					return nil, mongoerr.New(28810, "expected a non-empty string for the includeArrayIndex option to $unwind stage, got string")
				}
				if s[0] == '$' {
					return nil, mongoerr.New(28822, "includeArrayIndex option to $unwind stage should not be prefixed with a '$': %s", s)
				}
				idx, err := splitPath(s)
				if err != nil {
					return nil, err
				}
				u.index = idx
			case "preserveNullAndEmptyArrays":
				if v.Type != bson.TypeBoolean {
					return nil, mongoerr.New(28809, "expected a boolean for the preserveNullAndEmptyArrays option to $unwind stage, got %s", typeName(v))
				}
				u.preserve = v.Boolean()
			default:
				return nil, mongoerr.New(28811, "unrecognized option to $unwind stage: %s", k)
			}
		}
		if err := it.Err(); err != nil {
			return nil, badBSON(err)
		}
		if !havePath {
			return nil, mongoerr.New(28812, "no path specified to $unwind stage")
		}
	default:
		return nil, mongoerr.New(15981, "expected either a string or an object as specification for $unwind stage, got %s", typeName(spec))
	}
	if path == "" {
		return nil, mongoerr.New(40719, "Path option to $unwind stage is empty")
	}
	if path[0] != '$' {
		return nil, mongoerr.New(28818, "path option to $unwind stage should be prefixed with a '$': %s", path)
	}
	parts, err := splitPath(path[1:])
	if err != nil {
		return nil, err
	}
	u.path = parts
	return u, nil
}

func (u *unwindStage) run(_ *env, docs []bson.Raw) ([]bson.Raw, error) {
	var out []bson.Raw
	for _, d := range docs {
		v := lookupDocPath(d, u.path)
		if v.Type == bson.TypeArray {
			elems := arrayValues(v)
			for i, el := range elems {
				r, err := setPath(d, u.path, el)
				if err != nil {
					return nil, err
				}
				if u.index != nil {
					if r, err = setPath(r, u.index, int64Value(int64(i))); err != nil {
						return nil, err
					}
				}
				out = append(out, r)
			}
			if len(elems) > 0 || !u.preserve {
				continue
			}
			// An empty array, preserved: the field goes away.
			r, err := setPath(d, u.path, missing)
			if err != nil {
				return nil, err
			}
			d = r
		} else if nullish(v) && !u.preserve {
			continue
		}
		// A scalar unwinds to itself; null and missing are kept only when
		// preserved. Neither has an array index.
		if u.index != nil {
			r, err := setPath(d, u.index, nullValue)
			if err != nil {
				return nil, err
			}
			d = r
		}
		out = append(out, d)
	}
	return out, nil
}

// lookupDocPath follows a dotted path through embedded documents only,
// as $unwind does.
func lookupDocPath(doc bson.Raw, path []string) bson.RawValue {
	v := doc.Lookup(path[0])
	for _, p := range path[1:] {
		if v.Type != bson.TypeEmbeddedDocument {
			return missing
		}
		v = bson.Raw(v.Value).Lookup(p)
	}
	return v
}

// setPath returns a copy of doc with the field at path set to v (removed
// when v is missing). An existing field keeps its position; a new one is
// appended; a non-document on the way is replaced by a document.
func setPath(doc bson.Raw, path []string, v bson.RawValue) (bson.Raw, error) {
	start, b := bson.AppendDocumentStart(nil)
	found := false
	it := doc.Iter()
	for it.Next() {
		if found || it.Key() != path[0] {
			b = append(b, it.Element()...)
			continue
		}
		found = true
		nv, err := setValue(it.Value(), path[1:], v)
		if err != nil {
			return nil, err
		}
		if !isMissing(nv) {
			b = bson.AppendValueElement(b, path[0], nv)
		}
	}
	if err := it.Err(); err != nil {
		return nil, mongoerr.New(mongoerr.BadValue, "invalid document: %v", err)
	}
	if !found {
		nv, err := setValue(missing, path[1:], v)
		if err != nil {
			return nil, err
		}
		if !isMissing(nv) {
			b = bson.AppendValueElement(b, path[0], nv)
		}
	}
	out, err := endDoc(b, start)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// setValue returns old with rest set to v.
func setValue(old bson.RawValue, rest []string, v bson.RawValue) (bson.RawValue, error) {
	if len(rest) == 0 {
		return v, nil
	}
	if old.Type != bson.TypeEmbeddedDocument {
		if isMissing(v) {
			return old, nil // removing below a non-document changes nothing
		}
		old = docValue(emptyDoc)
	}
	d, err := setPath(bson.Raw(old.Value), rest, v)
	if err != nil {
		return missing, err
	}
	return docValue(d), nil
}

type replaceRootStage struct{ newRoot expr }

func parseReplaceRoot(name string, spec bson.RawValue) (stage, error) {
	if name == "$replaceWith" {
		x, err := compileExpr(spec)
		if err != nil {
			return nil, err
		}
		return replaceRootStage{x}, nil
	}
	if spec.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(40229, "expected an object as specification for $replaceRoot stage, got %s", typeName(spec))
	}
	var x expr
	it := bson.Raw(spec.Value).Iter()
	for it.Next() {
		if k := it.Key(); k != "newRoot" {
			return nil, mongoerr.New(40415, "BSON field '$replaceRoot.%s' is an unknown field.", k)
		}
		var err error
		if x, err = compileExpr(it.Value()); err != nil {
			return nil, err
		}
	}
	if err := it.Err(); err != nil {
		return nil, badBSON(err)
	}
	if x == nil {
		return nil, mongoerr.New(40414, "BSON field '$replaceRoot.newRoot' is missing but a required field")
	}
	return replaceRootStage{x}, nil
}

func (s replaceRootStage) run(e *env, docs []bson.Raw) ([]bson.Raw, error) {
	out := make([]bson.Raw, 0, len(docs))
	for _, d := range docs {
		e.root = d
		v, err := s.newRoot.eval(e)
		if err != nil {
			return nil, err
		}
		if v.Type != bson.TypeEmbeddedDocument {
			return nil, mongoerr.New(40228, "'newRoot' expression must evaluate to an object, but resulting value was: %s. Type of resulting value: '%s'.", valueString(v), typeName(v))
		}
		out = append(out, bson.Raw(v.Value))
	}
	return out, nil
}

// valueString is v for a message, "MISSING" when absent.
func valueString(v bson.RawValue) string {
	if isMissing(v) {
		return "MISSING"
	}
	s := v.String()
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// outStage is a final $out; Compile keeps it apart from the other stages.
type outStage struct{ db, coll string }

func (*outStage) run(_ *env, docs []bson.Raw) ([]bson.Raw, error) { return docs, nil }

func parseOut(spec bson.RawValue, o Options) (stage, error) {
	s := &outStage{db: o.DB}
	switch spec.Type {
	case bson.TypeString:
		s.coll = spec.StringValue()
	case bson.TypeEmbeddedDocument:
		it := bson.Raw(spec.Value).Iter()
		for it.Next() {
			v := it.Value()
			switch k := it.Key(); k {
			case "db", "coll":
				if v.Type != bson.TypeString {
					return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$out.%s' is the wrong type '%s', expected type 'string'", k, typeName(v))
				}
				if k == "db" {
					s.db = v.StringValue()
				} else {
					s.coll = v.StringValue()
				}
			case "timeseries":
				return nil, mongoerr.New(mongoerr.NotImplemented, "$out to a time-series collection is not supported by mongotest")
			default:
				return nil, mongoerr.New(40415, "BSON field '$out.%s' is an unknown field.", k)
			}
		}
		if err := it.Err(); err != nil {
			return nil, badBSON(err)
		}
	default:
		return nil, mongoerr.New(16990, "$out only supports a string or object argument, not %s", typeName(spec))
	}
	if s.coll == "" || s.db == "" || strings.ContainsAny(s.coll, "$\x00") || strings.ContainsAny(s.db, "/\\. \"$\x00") {
		return nil, mongoerr.New(mongoerr.InvalidNamespace, "Invalid $out target namespace, %s.%s", s.db, s.coll)
	}
	if strings.HasPrefix(s.coll, "system.") {
		return nil, mongoerr.New(17385, "Can't $out to special collection: %s", s.coll)
	}
	if o.Out == nil {
		return nil, mongoerr.New(mongoerr.IllegalOperation, "$out cannot run here: the server gave the pipeline no writer")
	}
	return s, nil
}
