package agg

import (
	"math"
	"strings"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
	"github.com/mongoscope/mongoscope/mongotest/internal/query"
)

// group is a compiled $group stage.
type group struct {
	id   expr
	accs []accSpec
}

type accSpec struct {
	field string
	op    string
	arg   expr
}

// accumulator folds the values of one group.
type accumulator interface {
	add(v bson.RawValue) error
	result() (bson.RawValue, error)
}

var accumulators = map[string]func() accumulator{
	"$sum":      func() accumulator { return &sumAcc{} },
	"$avg":      func() accumulator { return &sumAcc{avg: true} },
	"$min":      func() accumulator { return &minMaxAcc{sign: -1} },
	"$max":      func() accumulator { return &minMaxAcc{sign: 1} },
	"$push":     func() accumulator { return &pushAcc{} },
	"$addToSet": func() accumulator { return &pushAcc{set: map[string]bool{}} },
	"$first":    func() accumulator { return &firstLastAcc{last: false} },
	"$last":     func() accumulator { return &firstLastAcc{last: true} },
}

// unsupportedAccumulators are mongod accumulators this package lacks.
var unsupportedAccumulators = map[string]bool{
	"$accumulator": true, "$bottom": true, "$bottomN": true, "$firstN": true, "$lastN": true,
	"$maxN": true, "$mergeObjects": true, "$minN": true, "$stdDevPop": true, "$stdDevSamp": true,
	"$top": true, "$topN": true, "$median": true, "$percentile": true, "$concatArrays": true,
	"$setUnion": true,
}

func parseGroup(v bson.RawValue) (*group, error) {
	if v.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(15947, "a group's fields must be specified in an object")
	}
	g := &group{}
	seen := map[string]bool{}
	it := bson.Raw(v.Value).Iter()
	for it.Next() {
		name, val := it.Key(), it.Value()
		if name == "_id" {
			if g.id != nil {
				return nil, mongoerr.New(16414, "$group: _id specified twice")
			}
			x, err := compileExpr(val)
			if err != nil {
				return nil, err
			}
			g.id = x
			continue
		}
		switch {
		case name == "":
			return nil, mongoerr.New(40352, "FieldPath cannot be constructed with empty string")
		case name[0] == '$':
			return nil, mongoerr.New(40236, "The field name '%s' cannot be an operator name", name)
		case strings.IndexByte(name, '.') >= 0:
			return nil, mongoerr.New(40235, "The field name '%s' cannot contain '.'", name)
		case seen[name]:
			return nil, mongoerr.New(16406, "duplicate field name specified in $group: %s", name)
		}
		seen[name] = true
		if val.Type != bson.TypeEmbeddedDocument {
			return nil, mongoerr.New(40234, "The field '%s' must be an accumulator object", name)
		}
		elems, err := bson.Raw(val.Value).Elements()
		if err != nil {
			return nil, badBSON(err)
		}
		if len(elems) != 1 {
			return nil, mongoerr.New(40238, "The field '%s' must specify one accumulator", name)
		}
		op, arg := elems[0].Key(), elems[0].Value()
		if op == "$count" {
			// {$count: {}} is {$sum: 1}.
			if arg.Type != bson.TypeEmbeddedDocument || !isEmptyDoc(bson.Raw(arg.Value)) {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "$count takes no arguments, i.e. $count:{}")
			}
			g.accs = append(g.accs, accSpec{field: name, op: "$sum", arg: literalExpr{int32Value(1)}})
			continue
		}
		if _, ok := accumulators[op]; !ok {
			if unsupportedAccumulators[op] {
				return nil, mongoerr.New(mongoerr.NotImplemented, "accumulator %s is not supported by mongotest", op)
			}
			return nil, mongoerr.New(15952, "unknown group operator '%s'", op)
		}
		if arg.Type == bson.TypeArray {
			return nil, mongoerr.New(40237, "The %s accumulator is a unary operator", op)
		}
		x, err := compileExpr(arg)
		if err != nil {
			return nil, err
		}
		g.accs = append(g.accs, accSpec{field: name, op: op, arg: x})
	}
	if err := it.Err(); err != nil {
		return nil, badBSON(err)
	}
	if g.id == nil {
		return nil, mongoerr.New(15955, "a group specification must include an _id")
	}
	return g, nil
}

type groupState struct {
	id   bson.RawValue
	accs []accumulator
}

// run groups docs, emitting groups in the order their keys first appear.
func (g *group) run(e *env, docs []bson.Raw) ([]bson.Raw, error) {
	var groups []*groupState
	index := map[string]*groupState{}
	var key []byte
	for _, doc := range docs {
		e.root = doc
		id, err := g.id.eval(e)
		if err != nil {
			return nil, err
		}
		if isMissing(id) {
			id = nullValue
		}
		key = groupKeyWith(key[:0], id, sortKeyer(e.coll))
		st := index[string(key)]
		if st == nil {
			st = &groupState{id: id}
			for _, a := range g.accs {
				acc := accumulators[a.op]()
				if c, ok := acc.(interface{ setCollation(query.Collator) }); ok && e.coll != nil {
					c.setCollation(e.coll)
				}
				st.accs = append(st.accs, acc)
			}
			index[string(key)] = st
			groups = append(groups, st)
		}
		for i, a := range g.accs {
			v, err := a.arg.eval(e)
			if err != nil {
				return nil, err
			}
			if err := st.accs[i].add(v); err != nil {
				return nil, err
			}
		}
	}
	out := make([]bson.Raw, 0, len(groups))
	for _, st := range groups {
		start, b := bson.AppendDocumentStart(nil)
		b = bson.AppendValueElement(b, "_id", st.id)
		for i, a := range g.accs {
			v, err := st.accs[i].result()
			if err != nil {
				return nil, err
			}
			b = bson.AppendValueElement(b, a.field, v)
		}
		doc, err := endDoc(b, start)
		if err != nil {
			return nil, err
		}
		out = append(out, doc)
	}
	return out, nil
}

// sumAcc is $sum and $avg. It keeps an exact int64 total while every
// input is an integer, and switches to a double when a double arrives or
// the total overflows, as mongod does.
type sumAcc struct {
	avg     bool
	t       bson.Type // widest type seen: int32, int64 or double
	i       int64
	f       float64
	isFloat bool // the total lives in f
	n       int64
}

func (s *sumAcc) add(v bson.RawValue) error {
	op := "$sum"
	if s.avg {
		op = "$avg"
	}
	n, ok, err := toNumber(op, v)
	if err != nil {
		return err
	}
	if !ok {
		return nil // non-numeric values are ignored
	}
	s.n++
	switch {
	case n.t == bson.TypeDouble:
		s.t = bson.TypeDouble
	case s.t != bson.TypeDouble && (n.t == bson.TypeInt64 || s.t == bson.TypeInt64):
		s.t = bson.TypeInt64
	case s.t == 0:
		s.t = bson.TypeInt32
	}
	if n.t == bson.TypeDouble && !s.isFloat {
		s.isFloat, s.f = true, float64(s.i)
	}
	if s.isFloat {
		s.f += n.float()
		return nil
	}
	sum := s.i + n.i
	if (sum > s.i) != (n.i > 0) {
		s.isFloat, s.f = true, float64(s.i)+float64(n.i)
		s.t = bson.TypeDouble
		return nil
	}
	s.i = sum
	return nil
}

func (s *sumAcc) result() (bson.RawValue, error) {
	if s.avg {
		if s.n == 0 {
			return nullValue, nil
		}
		total := float64(s.i)
		if s.isFloat {
			total = s.f
		}
		return doubleValue(total / float64(s.n)), nil
	}
	switch {
	case s.isFloat || s.t == bson.TypeDouble:
		if !s.isFloat {
			return doubleValue(float64(s.i)), nil
		}
		return doubleValue(s.f), nil
	case s.t == bson.TypeInt64:
		return int64Value(s.i), nil
	}
	// int32 inputs whose total outgrew int32 come out as int64.
	if s.i >= math.MinInt32 && s.i <= math.MaxInt32 {
		return int32Value(int32(s.i)), nil
	}
	return int64Value(s.i), nil
}

// minMaxAcc is $min (sign -1) and $max (sign 1); null and missing values
// are ignored, and a group with none else gives null.
type minMaxAcc struct {
	sign int
	best bson.RawValue
	coll query.Collator // set by the group from its run's collation
}

// setCollation makes the accumulator compare strings by coll.
func (m *minMaxAcc) setCollation(coll query.Collator) { m.coll = coll }

func (m *minMaxAcc) add(v bson.RawValue) error {
	if nullish(v) {
		return nil
	}
	if isMissing(m.best) || query.CompareWith(v, m.best, m.coll)*m.sign > 0 {
		m.best = v
	}
	return nil
}

func (m *minMaxAcc) result() (bson.RawValue, error) {
	if isMissing(m.best) {
		return nullValue, nil
	}
	return m.best, nil
}

// pushAcc is $push and, with set, $addToSet; missing values are skipped.
type pushAcc struct {
	vals []bson.RawValue
	size int
	set  map[string]bool
	coll SortKeyer // $addToSet: strings it deems equal are one
}

// setCollation makes $addToSet treat strings coll deems equal as one.
func (p *pushAcc) setCollation(coll query.Collator) { p.coll = sortKeyer(coll) }

func (p *pushAcc) add(v bson.RawValue) error {
	if isMissing(v) {
		return nil
	}
	if p.set != nil {
		k := string(groupKeyWith(nil, v, p.coll))
		if p.set[k] {
			return nil
		}
		p.set[k] = true
	}
	p.size += len(v.Value) + 8
	if p.size > maxDocSize {
		return mongoerr.New(codeBSONObjTooLarge, "$push: the array for one group is over the 16 MiB document limit")
	}
	p.vals = append(p.vals, v)
	return nil
}

func (p *pushAcc) result() (bson.RawValue, error) { return arrayValue(p.vals) }

// firstLastAcc is $first and $last; a missing value counts, and comes
// out as null.
type firstLastAcc struct {
	last bool
	seen bool
	v    bson.RawValue
}

func (f *firstLastAcc) add(v bson.RawValue) error {
	if !f.seen || f.last {
		f.v, f.seen = v, true
	}
	return nil
}

func (f *firstLastAcc) result() (bson.RawValue, error) {
	if isMissing(f.v) {
		return nullValue, nil
	}
	return f.v, nil
}
