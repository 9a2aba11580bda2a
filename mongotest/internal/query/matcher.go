package query

import (
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// Matcher is a compiled query filter. It is safe for concurrent use.
type Matcher struct {
	root node
	errs *exprErrors // nil without $expr
	coll Collator
}

// Options configure NewMatcherWith.
type Options struct {
	// Collator compares strings for $eq, $ne, $gt/$gte/$lt/$lte, $in,
	// $nin and $all; nil is the simple collation.
	Collator Collator
	// Expr compiles the operand of a $expr (at the top level or inside
	// $and, $or and $nor) into a predicate; with nil, $expr is refused
	// with NotImplemented. The query package has no expressions of its
	// own; the aggregation package provides them.
	Expr func(operand bson.RawValue) (func(doc bson.Raw) (bool, error), error)
}

// parser compiles one filter with its options.
type parser struct {
	Options
	errs        *exprErrors
	inElemMatch int // $elemMatch bodies being parsed, where $expr is refused
}

// exprErrors keeps the first error a $expr raised while matching, which
// Match cannot return.
type exprErrors struct {
	mu  sync.Mutex
	err error
}

func (e *exprErrors) set(err error) {
	e.mu.Lock()
	if e.err == nil {
		e.err = err
	}
	e.mu.Unlock()
}

// Err returns the first error a $expr of the filter raised during Match
// (a $divide by zero, say), which mongod would have failed the command
// with; nil when there was none.
func (m *Matcher) Err() error {
	if m.errs == nil {
		return nil
	}
	m.errs.mu.Lock()
	defer m.errs.mu.Unlock()
	return m.errs.err
}

// node is one compiled filter clause, matched against a document (or, in
// the value form of $elemMatch, against one array element).
type node interface {
	matches(v bson.RawValue) bool
}

// NewMatcher compiles filter. Errors are *mongoerr.Error values naming the
// operator or field at fault, with the codes mongod uses (BadValue for an
// unknown or malformed operator, NotImplemented for operators the test
// server does not support).
func NewMatcher(filter bson.Raw) (*Matcher, error) { return NewMatcherWith(filter, Options{}) }

// NewMatcherWith is NewMatcher with a collation and $expr support.
func NewMatcherWith(filter bson.Raw, o Options) (*Matcher, error) {
	if len(filter) == 0 {
		return &Matcher{root: andNode(nil)}, nil
	}
	if err := filter.Validate(); err != nil {
		return nil, mongoerr.New(mongoerr.BadValue, "filter is not a valid BSON document: %v", err)
	}
	ps := &parser{Options: o}
	root, err := ps.parseFilter(filter, 0)
	if err != nil {
		return nil, err
	}
	return &Matcher{root: root, errs: ps.errs, coll: o.Collator}, nil
}

// Match reports whether doc satisfies the filter. Malformed bytes never
// match more than their readable prefix allows; Match does not panic.
func (m *Matcher) Match(doc bson.Raw) bool {
	return m.root.matches(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc})
}

// maxFilterDepth bounds the nesting of $and/$or/$elemMatch/$not, as
// mongod's own limit on expression depth does.
const maxFilterDepth = 100

func (ps *parser) parseFilter(doc bson.Raw, depth int) (node, error) {
	if depth > maxFilterDepth {
		return nil, mongoerr.New(mongoerr.BadValue, "exceeded depth limit of %d when parsing the filter", maxFilterDepth)
	}
	var and andNode
	it := doc.Iter()
	for it.Next() {
		key, v := it.Key(), it.Value()
		if strings.HasPrefix(key, "$") {
			n, err := ps.parseTopOperator(key, v, depth)
			if err != nil {
				return nil, err
			}
			if n != nil {
				and = append(and, n)
			}
			continue
		}
		n, err := ps.parseField(splitPath(key), v, depth)
		if err != nil {
			return nil, err
		}
		and = append(and, n)
	}
	if err := it.Err(); err != nil {
		return nil, mongoerr.New(mongoerr.BadValue, "filter is not a valid BSON document: %v", err)
	}
	if len(and) == 1 {
		return and[0], nil
	}
	return and, nil
}

func (ps *parser) parseTopOperator(key string, v bson.RawValue, depth int) (node, error) {
	switch key {
	case "$and", "$or", "$nor":
		arr, ok := v.ArrayOK()
		if !ok {
			return nil, mongoerr.New(mongoerr.BadValue, "%s must be an array", key)
		}
		var kids []node
		it := arr.Iter()
		for it.Next() {
			d, ok := it.Value().DocumentOK()
			if !ok {
				return nil, mongoerr.New(mongoerr.BadValue, "%s argument's entries must be objects", key)
			}
			n, err := ps.parseFilter(d, depth+1)
			if err != nil {
				return nil, err
			}
			kids = append(kids, n)
		}
		if len(kids) == 0 {
			return nil, mongoerr.New(mongoerr.BadValue, "%s argument must be a non-empty array", key)
		}
		switch key {
		case "$and":
			return andNode(kids), nil
		case "$or":
			return orNode(kids), nil
		}
		return notNode{orNode(kids)}, nil
	case "$comment":
		return nil, nil
	case "$alwaysTrue":
		return andNode(nil), nil
	case "$alwaysFalse":
		return orNode(nil), nil
	case "$expr":
		if ps.inElemMatch > 0 {
			return nil, mongoerr.New(mongoerr.BadValue, "$expr can only be applied to the top-level document")
		}
		if ps.Expr == nil {
			return nil, unsupported(key)
		}
		fn, err := ps.Expr(v)
		if err != nil {
			return nil, err
		}
		if ps.errs == nil {
			ps.errs = &exprErrors{}
		}
		return exprNode{fn: fn, errs: ps.errs}, nil
	case "$where", "$text", "$jsonSchema", "$sampleRate", "$atomic", "$isolated":
		return nil, unsupported(key)
	}
	return nil, mongoerr.New(mongoerr.BadValue, "unknown top level operator: %s", key)
}

func unsupported(op string) error {
	return mongoerr.New(mongoerr.NotImplemented, "mongotest does not support the %s query operator", op)
}

// isOperatorDoc reports whether a field's value is a document of operators
// ({$gt: 1}) rather than a document to compare with. DBRef-shaped
// documents ({$ref, $id}) are values.
func isOperatorDoc(d bson.Raw) bool {
	it := d.Iter()
	if !it.Next() {
		return false
	}
	k := it.Key()
	return strings.HasPrefix(k, "$") && k != "$ref" && k != "$id" && k != "$db"
}

func (ps *parser) parseField(path []string, v bson.RawValue, depth int) (node, error) {
	switch v.Type {
	case bson.TypeRegex:
		p, o, _ := v.RegexOK()
		re, err := compileRegex(p, o)
		if err != nil {
			return nil, err
		}
		return &leaf{path: path, pred: &regexPred{re: re, pattern: p, options: o}, expand: true}, nil
	case bson.TypeEmbeddedDocument:
		if d := bson.Raw(v.Value); isOperatorDoc(d) {
			return ps.parseOperators(path, d, depth)
		}
	}
	return &leaf{path: path, pred: eqPred{val: v, coll: ps.Collator}, expand: true}, nil
}

// parseOperators compiles {$op: value, ...} for one path. An empty path
// means the operators apply to the value being matched itself (the value
// form of $elemMatch).
func (ps *parser) parseOperators(path []string, ops bson.Raw, depth int) (node, error) {
	if depth > maxFilterDepth {
		return nil, mongoerr.New(mongoerr.BadValue, "exceeded depth limit of %d when parsing the filter", maxFilterDepth)
	}
	var (
		and                  andNode
		regex, options       bson.RawValue
		hasRegex, hasOptions bool
	)
	mk := func(p elemPred) node { return &leaf{path: path, pred: p, expand: true} }
	it := ops.Iter()
	for it.Next() {
		op, v := it.Key(), it.Value()
		switch op {
		case "$eq":
			and = append(and, mk(eqPred{val: v, coll: ps.Collator}))
		case "$ne":
			if v.Type == bson.TypeRegex {
				return nil, mongoerr.New(mongoerr.BadValue, "Can't have regex as arg to $ne.")
			}
			and = append(and, notNode{mk(eqPred{val: v, coll: ps.Collator})})
		case "$gt", "$gte", "$lt", "$lte":
			and = append(and, mk(cmpPred{op: op, val: v, coll: ps.Collator}))
		case "$in", "$nin":
			p, err := ps.parseIn(op, v)
			if err != nil {
				return nil, err
			}
			if op == "$in" {
				and = append(and, mk(p))
			} else {
				and = append(and, notNode{mk(p)})
			}
		case "$exists":
			n := mk(existsPred{})
			if truthy(v) {
				and = append(and, n)
			} else {
				and = append(and, notNode{n})
			}
		case "$type":
			p, err := parseType(v)
			if err != nil {
				return nil, err
			}
			and = append(and, mk(p))
		case "$size":
			p, err := parseSize(v)
			if err != nil {
				return nil, err
			}
			and = append(and, &leaf{path: path, pred: p})
		case "$mod":
			p, err := parseMod(v)
			if err != nil {
				return nil, err
			}
			and = append(and, mk(p))
		case "$regex":
			regex, hasRegex = v, true
		case "$options":
			options, hasOptions = v, true
		case "$all":
			n, err := ps.parseAll(path, v, depth)
			if err != nil {
				return nil, err
			}
			and = append(and, n)
		case "$elemMatch":
			p, err := ps.parseElemMatch(v, depth)
			if err != nil {
				return nil, err
			}
			and = append(and, &leaf{path: path, pred: p})
		case "$not":
			n, err := ps.parseNot(path, v, depth)
			if err != nil {
				return nil, err
			}
			and = append(and, notNode{n})
		case "$comment":
		case "$near", "$nearSphere", "$geoWithin", "$geoIntersects", "$within", "$box", "$center",
			"$centerSphere", "$polygon", "$geometry", "$maxDistance", "$minDistance",
			"$bitsAllSet", "$bitsAllClear", "$bitsAnySet", "$bitsAnyClear", "$expr", "$where", "$text",
			"$jsonSchema":
			return nil, unsupported(op)
		default:
			return nil, mongoerr.New(mongoerr.BadValue, "unknown operator: %s", op)
		}
	}
	if err := it.Err(); err != nil {
		return nil, mongoerr.New(mongoerr.BadValue, "filter is not a valid BSON document: %v", err)
	}
	if hasOptions && !hasRegex {
		return nil, mongoerr.New(mongoerr.BadValue, "$options needs a $regex")
	}
	if hasRegex {
		p, err := parseRegexOp(regex, options, hasOptions)
		if err != nil {
			return nil, err
		}
		and = append(and, mk(p))
	}
	if len(and) == 1 {
		return and[0], nil
	}
	return and, nil
}

func parseRegexOp(regex, options bson.RawValue, hasOptions bool) (*regexPred, error) {
	var pattern, opts string
	switch regex.Type {
	case bson.TypeString:
		pattern = regex.StringValue()
	case bson.TypeRegex:
		pattern, opts, _ = regex.RegexOK()
		if hasOptions && opts != "" {
			return nil, mongoerr.New(mongoerr.BadValue, "options set in both $regex and $options")
		}
	default:
		return nil, mongoerr.New(mongoerr.BadValue, "$regex has to be a string")
	}
	if hasOptions {
		o, ok := options.StringValueOK()
		if !ok {
			return nil, mongoerr.New(mongoerr.BadValue, "$options has to be a string")
		}
		opts = o
	}
	re, err := compileRegex(pattern, opts)
	if err != nil {
		return nil, err
	}
	return &regexPred{re: re, pattern: pattern, options: opts}, nil
}

func (ps *parser) parseIn(op string, v bson.RawValue) (*inPred, error) {
	arr, ok := v.ArrayOK()
	if !ok {
		return nil, mongoerr.New(mongoerr.BadValue, "%s needs an array", op)
	}
	p := &inPred{coll: ps.Collator}
	it := arr.Iter()
	for it.Next() {
		e := it.Value()
		switch e.Type {
		case bson.TypeRegex:
			pat, o, _ := e.RegexOK()
			re, err := compileRegex(pat, o)
			if err != nil {
				return nil, err
			}
			p.regexes = append(p.regexes, &regexPred{re: re, pattern: pat, options: o})
		case bson.TypeEmbeddedDocument:
			if isOperatorDoc(bson.Raw(e.Value)) {
				return nil, mongoerr.New(mongoerr.BadValue, "cannot nest $ under %s", op)
			}
			p.vals = append(p.vals, e)
		case bson.TypeNull:
			p.null = true
			p.vals = append(p.vals, e)
		default:
			p.vals = append(p.vals, e)
		}
	}
	return p, nil
}

func (ps *parser) parseAll(path []string, v bson.RawValue, depth int) (node, error) {
	arr, ok := v.ArrayOK()
	if !ok {
		return nil, mongoerr.New(mongoerr.BadValue, "$all needs an array")
	}
	var and andNode
	elemMatches := 0
	it := arr.Iter()
	for it.Next() {
		e := it.Value()
		if d, ok := e.DocumentOK(); ok {
			if f, ok := firstKey(d); ok && f == "$elemMatch" {
				elemMatches++
				n, err := ps.parseOperators(path, d, depth+1)
				if err != nil {
					return nil, err
				}
				and = append(and, n)
				continue
			} else if isOperatorDoc(d) {
				return nil, mongoerr.New(mongoerr.BadValue, "no $ expressions in $all")
			}
		}
		n, err := ps.parseField(path, e, depth)
		if err != nil {
			return nil, err
		}
		and = append(and, n)
	}
	if elemMatches > 0 && elemMatches != len(and) {
		return nil, mongoerr.New(mongoerr.BadValue, "$all/$elemMatch has to be consistent")
	}
	if len(and) == 0 {
		// mongod: $all with no values matches nothing.
		return orNode(nil), nil
	}
	return and, nil
}

func firstKey(d bson.Raw) (string, bool) {
	it := d.Iter()
	if !it.Next() {
		return "", false
	}
	return it.Key(), true
}

func (ps *parser) parseElemMatch(v bson.RawValue, depth int) (elemPred, error) {
	d, ok := v.DocumentOK()
	if !ok {
		return nil, mongoerr.New(mongoerr.BadValue, "$elemMatch needs an Object")
	}
	if f, ok := firstKey(d); ok && strings.HasPrefix(f, "$") && f != "$and" && f != "$or" && f != "$nor" &&
		f != "$expr" && f != "$where" && f != "$text" && f != "$comment" && f != "$alwaysTrue" && f != "$alwaysFalse" {
		n, err := ps.parseOperators(nil, d, depth+1)
		if err != nil {
			return nil, err
		}
		return elemMatchPred{sub: n, value: true}, nil
	}
	ps.inElemMatch++
	n, err := ps.parseFilter(d, depth+1)
	ps.inElemMatch--
	if err != nil {
		return nil, err
	}
	return elemMatchPred{sub: n}, nil
}

func (ps *parser) parseNot(path []string, v bson.RawValue, depth int) (node, error) {
	switch v.Type {
	case bson.TypeRegex:
		return ps.parseField(path, v, depth)
	case bson.TypeEmbeddedDocument:
		d := bson.Raw(v.Value)
		f, ok := firstKey(d)
		if !ok {
			return nil, mongoerr.New(mongoerr.BadValue, "$not cannot be empty")
		}
		if !strings.HasPrefix(f, "$") {
			return nil, mongoerr.New(mongoerr.BadValue, "unknown operator: %s", f)
		}
		return ps.parseOperators(path, d, depth+1)
	}
	return nil, mongoerr.New(mongoerr.BadValue, "$not needs a regex or a document")
}

// truthy is how mongod reads a boolean-ish operand such as $exists.
func truthy(v bson.RawValue) bool {
	switch v.Type {
	case bson.TypeBoolean:
		return v.Boolean()
	case bson.TypeNull, bson.TypeUndefined, typeMissing:
		return false
	case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128:
		n, ok := toNumber(v)
		if !ok {
			return false
		}
		return compareNum(n, number{kind: 'i'}) != 0
	}
	return true
}

// integral returns v as an int64 when it is a number with no fraction.
func integral(v bson.RawValue) (int64, bool) {
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64:
		return v.AsInt64OK()
	case bson.TypeDouble:
		f := v.Double()
		if f != math.Trunc(f) || math.IsInf(f, 0) || f >= 9.2e18 || f <= -9.2e18 {
			return 0, false
		}
		return int64(f), true
	case bson.TypeDecimal128:
		d, _ := v.Decimal128OK()
		f, err := strconv.ParseFloat(d.String(), 64)
		if err != nil || f != math.Trunc(f) || math.IsInf(f, 0) || f >= 9.2e18 || f <= -9.2e18 {
			return 0, false
		}
		return int64(f), true
	}
	return 0, false
}

func parseSize(v bson.RawValue) (elemPred, error) {
	if !v.IsNumber() && v.Type != bson.TypeDecimal128 {
		return nil, mongoerr.New(mongoerr.BadValue, "$size needs a number")
	}
	n, ok := integral(v)
	if !ok {
		return nil, mongoerr.New(mongoerr.BadValue, "$size must be a whole number")
	}
	if n < 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "$size may not be negative")
	}
	return sizePred{n: n}, nil
}

func parseMod(v bson.RawValue) (elemPred, error) {
	arr, ok := v.ArrayOK()
	if !ok {
		return nil, mongoerr.New(mongoerr.BadValue, "malformed mod, needs to be an array")
	}
	vals, err := arr.Values()
	if err != nil {
		return nil, mongoerr.New(mongoerr.BadValue, "malformed mod: %v", err)
	}
	switch {
	case len(vals) < 2:
		return nil, mongoerr.New(mongoerr.BadValue, "malformed mod, not enough elements")
	case len(vals) > 2:
		return nil, mongoerr.New(mongoerr.BadValue, "malformed mod, too many elements")
	}
	d, ok1 := truncNumber(vals[0])
	r, ok2 := truncNumber(vals[1])
	if !ok1 {
		return nil, mongoerr.New(mongoerr.BadValue, "malformed mod, divisor not a number")
	}
	if !ok2 {
		return nil, mongoerr.New(mongoerr.BadValue, "malformed mod, remainder not a number")
	}
	if d == 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "divisor cannot be 0")
	}
	return modPred{div: d, rem: r}, nil
}

// truncNumber returns a finite number truncated toward zero.
func truncNumber(v bson.RawValue) (int64, bool) {
	var f float64
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64:
		return v.AsInt64OK()
	case bson.TypeDouble:
		f = v.Double()
	case bson.TypeDecimal128:
		d, _ := v.Decimal128OK()
		x, err := strconv.ParseFloat(d.String(), 64)
		if err != nil {
			return 0, false
		}
		f = x
	default:
		return 0, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) || f >= 9.2e18 || f <= -9.2e18 {
		return 0, false
	}
	return int64(math.Trunc(f)), true
}

// Nodes.

type andNode []node

func (a andNode) matches(v bson.RawValue) bool {
	for _, n := range a {
		if !n.matches(v) {
			return false
		}
	}
	return true
}

type orNode []node

func (o orNode) matches(v bson.RawValue) bool {
	for _, n := range o {
		if n.matches(v) {
			return true
		}
	}
	return false
}

// exprNode is a $expr, evaluated on the whole document.
type exprNode struct {
	fn   func(doc bson.Raw) (bool, error)
	errs *exprErrors
}

func (x exprNode) matches(v bson.RawValue) bool {
	ok, err := x.fn(bson.Raw(v.Value))
	if err != nil {
		x.errs.set(err)
		return false
	}
	return ok
}

type notNode struct{ n node }

func (n notNode) matches(v bson.RawValue) bool { return !n.n.matches(v) }

// leaf applies pred to the values path reaches; with no path, to the
// value itself.
type leaf struct {
	path   []string
	pred   elemPred
	expand bool
}

func (l *leaf) matches(v bson.RawValue) bool {
	if len(l.path) == 0 {
		return l.pred.matchElem(v)
	}
	var d bson.Raw
	switch v.Type {
	case bson.TypeEmbeddedDocument, bson.TypeArray:
		d = bson.Raw(v.Value)
	default:
		return l.pred.matchElem(bson.RawValue{})
	}
	w := walker{pred: l.pred, expand: l.expand}
	return w.doc(d, l.path)
}

// Predicates.

type eqPred struct {
	val  bson.RawValue
	coll Collator
}

func (p eqPred) matchElem(v bson.RawValue) bool {
	if p.val.Type == bson.TypeNull {
		return v.Type == bson.TypeNull || v.Type == typeMissing
	}
	if bracket(v.Type) != bracket(p.val.Type) {
		return false
	}
	return CompareWith(v, p.val, p.coll) == 0
}

type cmpPred struct {
	op   string
	val  bson.RawValue
	coll Collator
}

func (p cmpPred) matchElem(v bson.RawValue) bool {
	if v.Type == typeMissing {
		v = bson.RawValue{Type: bson.TypeNull}
	}
	// Comparisons only hold within a type bracket, except against MinKey
	// and MaxKey, which compare with everything.
	if bracket(v.Type) != bracket(p.val.Type) && p.val.Type != bson.TypeMinKey && p.val.Type != bson.TypeMaxKey {
		return false
	}
	if isNaN(v) || isNaN(p.val) {
		// NaN is only ever equal to NaN; it is neither above nor below
		// any number in a query.
		return isNaN(v) && isNaN(p.val) && (p.op == "$gte" || p.op == "$lte")
	}
	c := CompareWith(v, p.val, p.coll)
	switch p.op {
	case "$gt":
		return c > 0
	case "$gte":
		return c >= 0
	case "$lt":
		return c < 0
	}
	return c <= 0
}

func isNaN(v bson.RawValue) bool {
	n, ok := toNumber(v)
	return ok && n.isNaN()
}

type inPred struct {
	coll    Collator
	vals    []bson.RawValue
	regexes []*regexPred
	null    bool
}

func (p *inPred) matchElem(v bson.RawValue) bool {
	if v.Type == typeMissing {
		return p.null
	}
	for _, x := range p.vals {
		if bracket(x.Type) == bracket(v.Type) && CompareWith(v, x, p.coll) == 0 {
			return true
		}
	}
	for _, r := range p.regexes {
		if r.matchElem(v) {
			return true
		}
	}
	return false
}

type existsPred struct{}

func (existsPred) matchElem(v bson.RawValue) bool { return v.Type != typeMissing }

type sizePred struct{ n int64 }

func (p sizePred) matchElem(v bson.RawValue) bool {
	if v.Type != bson.TypeArray {
		return false
	}
	var n int64
	it := bson.Raw(v.Value).Iter()
	for it.Next() {
		n++
	}
	return n == p.n
}

type modPred struct{ div, rem int64 }

func (p modPred) matchElem(v bson.RawValue) bool {
	x, ok := truncNumber(v)
	if !ok {
		return false
	}
	return x%p.div == p.rem
}

type elemMatchPred struct {
	sub   node
	value bool // the value form: operators apply to each element itself
}

func (p elemMatchPred) matchElem(v bson.RawValue) bool {
	if v.Type != bson.TypeArray {
		return false
	}
	it := bson.Raw(v.Value).Iter()
	for it.Next() {
		e := it.Value()
		if !p.value && e.Type != bson.TypeEmbeddedDocument && e.Type != bson.TypeArray {
			continue
		}
		if p.sub.matches(e) {
			return true
		}
	}
	return false
}

// IDEquality returns v when the filter is exactly {_id: v} with v a plain
// value (not an operator document, regex, array or null), so a store can
// answer it from its _id index. Equal values of other numeric types (1,
// 1.0, NumberLong(1)) also match such a filter; an index must key them
// alike.
func (m *Matcher) IDEquality() (bson.RawValue, bool) {
	l, ok := m.root.(*leaf)
	if !ok || len(l.path) != 1 || l.path[0] != "_id" {
		return bson.RawValue{}, false
	}
	eq, ok := l.pred.(eqPred)
	if !ok {
		return bson.RawValue{}, false
	}
	switch eq.val.Type {
	case bson.TypeArray, bson.TypeNull, bson.TypeRegex, typeMissing:
		return bson.RawValue{}, false
	case bson.TypeString, bson.TypeSymbol, bson.TypeEmbeddedDocument:
		if m.coll != nil {
			// The _id index keys strings by their bytes; under a
			// collation equal strings may differ.
			return bson.RawValue{}, false
		}
	}
	return eq.val, true
}
