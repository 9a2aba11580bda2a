package query

import (
	"strings"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// Projection is a compiled find projection. It is safe for concurrent use.
type Projection struct {
	root      *projNode
	inclusion bool
	// id is what happens to the top-level _id: included unless {_id: 0}.
	id bool
	// all is set for an empty projection, which returns documents whole.
	all bool
}

// projNode is one level of the projection tree.
type projNode struct {
	children map[string]*projNode
	order    []string // children in specification order
	include  bool
	exclude  bool
	slice    *sliceSpec
	elem     *Matcher
}

type sliceSpec struct {
	skip, limit int64
	hasSkip     bool
}

// NewProjection compiles a projection: inclusion ({a: 1, "b.c": 1}) or
// exclusion ({a: 0}) — mixing them is an error except for _id — with
// nested documents, $slice and $elemMatch. $meta, the positional "a.$"
// form and computed fields return NotImplemented.
func NewProjection(spec bson.Raw) (*Projection, error) {
	p := &Projection{root: &projNode{}, id: true}
	if len(spec) == 0 {
		p.all = true
		return p, nil
	}
	if err := spec.Validate(); err != nil {
		return nil, mongoerr.New(mongoerr.BadValue, "projection is not a valid BSON document: %v", err)
	}
	var mode projMode
	if err := p.parse(spec, "", &mode); err != nil {
		return nil, err
	}
	p.inclusion = mode.include || (!mode.exclude && mode.idInclude)
	if len(p.root.children) == 0 && !p.inclusion && p.id {
		p.all = true
	}
	return p, nil
}

// projMode remembers which kind of field was seen, to reject mixtures.
type projMode struct {
	include, exclude, idInclude bool
}

func (p *Projection) parse(spec bson.Raw, prefix string, mode *projMode) error {
	it := spec.Iter()
	for it.Next() {
		key, v := it.Key(), it.Value()
		path := key
		if prefix != "" {
			path = prefix + "." + key
		}
		if err := checkProjectionPath(path); err != nil {
			return err
		}
		if path == "_id" && (v.IsNumber() || v.Type == bson.TypeBoolean || v.Type == bson.TypeDecimal128) {
			p.id = truthy(v)
			mode.idInclude = p.id
			continue
		}
		switch v.Type {
		case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128, bson.TypeBoolean:
			n, err := p.add(path)
			if err != nil {
				return err
			}
			if truthy(v) {
				if mode.exclude {
					return mongoerr.New(31253, "Cannot do inclusion on field %s in exclusion projection", path)
				}
				mode.include, n.include = true, true
			} else {
				if mode.include {
					return mongoerr.New(mongoerr.Location31254, "Cannot do exclusion on field %s in inclusion projection", path)
				}
				mode.exclude, n.exclude = true, true
			}
		case bson.TypeEmbeddedDocument:
			d := bson.Raw(v.Value)
			first, ok := firstKey(d)
			if !ok {
				return mongoerr.New(51270, "An empty sub-projection is not a valid value. Found empty object at path %s", path)
			}
			if !strings.HasPrefix(first, "$") {
				if err := p.parse(d, path, mode); err != nil {
					return err
				}
				continue
			}
			if err := p.parseOperator(path, first, d, mode); err != nil {
				return err
			}
		default:
			return mongoerr.New(mongoerr.NotImplemented, "mongotest does not support computed projection fields (field %s)", path)
		}
	}
	return nil
}

func (p *Projection) parseOperator(path, op string, d bson.Raw, mode *projMode) error {
	v := d.Lookup(op)
	switch op {
	case "$slice":
		s, err := parseSlice(v)
		if err != nil {
			return err
		}
		n, err := p.add(path)
		if err != nil {
			return err
		}
		n.slice = s
	case "$elemMatch":
		if strings.Contains(path, ".") {
			return mongoerr.New(31275, "Cannot use $elemMatch projection on a nested field.")
		}
		if mode.exclude {
			return mongoerr.New(31253, "Cannot do inclusion on field %s in exclusion projection", path)
		}
		sub, ok := v.DocumentOK()
		if !ok {
			return mongoerr.New(mongoerr.BadValue, "elemMatch: Invalid argument, object required.")
		}
		m, err := NewMatcher(sub)
		if err != nil {
			return err
		}
		n, err := p.add(path)
		if err != nil {
			return err
		}
		n.elem = m
		mode.include = true
	case "$meta":
		return mongoerr.New(mongoerr.NotImplemented, "mongotest does not support $meta projections (field %s)", path)
	default:
		return mongoerr.New(mongoerr.NotImplemented, "mongotest does not support the %s projection expression (field %s)", op, path)
	}
	return nil
}

func checkProjectionPath(path string) error {
	for _, c := range strings.Split(path, ".") {
		switch {
		case c == "$":
			return mongoerr.New(mongoerr.NotImplemented, "mongotest does not support positional projection %s", path)
		case c == "":
			return mongoerr.New(mongoerr.Location15998, "FieldPath field names may not be empty strings.")
		case strings.HasPrefix(c, "$"):
			return mongoerr.New(16410, "FieldPath field names may not start with '$'. Consider using $getField or $setField.")
		}
	}
	return nil
}

func parseSlice(v bson.RawValue) (*sliceSpec, error) {
	if arr, ok := v.ArrayOK(); ok {
		vals, err := arr.Values()
		if err != nil || len(vals) != 2 {
			return nil, mongoerr.New(28724, "First argument to $slice must be an array")
		}
		skip, ok1 := integral(vals[0])
		limit, ok2 := integral(vals[1])
		if !ok1 || !ok2 {
			return nil, mongoerr.New(mongoerr.BadValue, "$slice arguments must be whole numbers")
		}
		if limit <= 0 {
			return nil, mongoerr.New(mongoerr.BadValue, "$slice limit must be positive")
		}
		return &sliceSpec{skip: skip, limit: limit, hasSkip: true}, nil
	}
	n, ok := integral(v)
	if !ok {
		return nil, mongoerr.New(mongoerr.BadValue, "$slice only supports numbers and [skip, limit] arrays")
	}
	return &sliceSpec{limit: n}, nil
}

// add creates the node for path, refusing one path that is a prefix of
// another.
func (p *Projection) add(path string) (*projNode, error) {
	n := p.root
	parts := strings.Split(path, ".")
	for i, part := range parts {
		if n.include || n.exclude || n.slice != nil || n.elem != nil {
			return nil, mongoerr.New(31250, "Path collision at %s", path)
		}
		if n.children == nil {
			n.children = map[string]*projNode{}
		}
		c, ok := n.children[part]
		if !ok {
			c = &projNode{}
			n.children[part] = c
			n.order = append(n.order, part)
		} else if i == len(parts)-1 {
			return nil, mongoerr.New(31250, "Path collision at %s", path)
		}
		n = c
	}
	return n, nil
}

// Apply appends the projection of doc to dst.
func (p *Projection) Apply(dst []byte, doc bson.Raw) ([]byte, error) {
	if p.all {
		return append(dst, doc...), nil
	}
	start, dst := bson.AppendDocumentStart(dst)
	dst = p.fields(dst, doc, p.root, true)
	return bson.AppendDocumentEnd(dst, start)
}

// fields appends the projected fields of one document level.
func (p *Projection) fields(dst []byte, doc bson.Raw, n *projNode, top bool) []byte {
	it := doc.Iter()
	for it.Next() {
		key, v := it.Key(), it.Value()
		if top && key == "_id" {
			if _, ok := n.children["_id"]; !ok {
				if p.id {
					dst = bson.AppendValueElement(dst, key, v)
				}
				continue
			}
		}
		c := n.children[key]
		switch {
		case c == nil:
			if !p.inclusion {
				dst = bson.AppendValueElement(dst, key, v)
			}
		case c.include:
			dst = bson.AppendValueElement(dst, key, v)
		case c.exclude, c.elem != nil:
			// Excluded, or an $elemMatch field, which mongod writes after
			// the others.
		case c.slice != nil:
			dst = appendSliced(dst, key, v, c.slice)
		default:
			dst = p.nested(dst, key, v, c)
		}
	}
	for _, k := range n.order {
		c := n.children[k]
		if c.elem == nil {
			continue
		}
		v, ok := lookupField(doc, k)
		if !ok || v.Type != bson.TypeArray {
			continue
		}
		ai := bson.Raw(v.Value).Iter()
		for ai.Next() {
			e := ai.Value()
			if (e.Type == bson.TypeEmbeddedDocument || e.Type == bson.TypeArray) && c.elem.Match(bson.Raw(e.Value)) {
				as, out := bson.AppendArrayElementStart(dst, k)
				out = bson.AppendValueElement(out, "0", e)
				out, err := bson.AppendDocumentEnd(out, as)
				if err == nil {
					dst = out
				}
				break
			}
		}
	}
	return dst
}

// nested applies a sub-projection to a field's value: documents are
// projected, arrays element by element; scalars stay in an exclusion
// projection and vanish from an inclusion one.
func (p *Projection) nested(dst []byte, key string, v bson.RawValue, c *projNode) []byte {
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		s, out := bson.AppendDocumentElementStart(dst, key)
		out = p.fields(out, bson.Raw(v.Value), c, false)
		if out, err := bson.AppendDocumentEnd(out, s); err == nil {
			return out
		}
		return dst
	case bson.TypeArray:
		s, out := bson.AppendArrayElementStart(dst, key)
		out = p.arrayElems(out, bson.Raw(v.Value), c)
		if out, err := bson.AppendDocumentEnd(out, s); err == nil {
			return out
		}
		return dst
	}
	if !p.inclusion {
		return bson.AppendValueElement(dst, key, v)
	}
	return dst
}

func (p *Projection) arrayElems(dst []byte, arr bson.Raw, c *projNode) []byte {
	i := 0
	it := arr.Iter()
	for it.Next() {
		e := it.Value()
		switch e.Type {
		case bson.TypeEmbeddedDocument, bson.TypeArray:
			dst = p.nested(dst, bson.ArrayKey(i), e, c)
			i++
		default:
			if !p.inclusion {
				dst = bson.AppendValueElement(dst, bson.ArrayKey(i), e)
				i++
			}
		}
	}
	return dst
}

// appendSliced writes key with $slice applied when the value is an array.
func appendSliced(dst []byte, key string, v bson.RawValue, s *sliceSpec) []byte {
	arr, ok := v.ArrayOK()
	if !ok {
		return bson.AppendValueElement(dst, key, v)
	}
	vals, err := arr.Values()
	if err != nil {
		return bson.AppendValueElement(dst, key, v)
	}
	n := int64(len(vals))
	var from, to int64
	switch {
	case s.hasSkip:
		from = s.skip
		if from < 0 {
			from = max(0, n+from)
		}
		from = min(from, n)
		to = min(n, from+s.limit)
	case s.limit >= 0:
		from, to = 0, min(n, s.limit)
	default:
		from, to = max(0, n+s.limit), n
	}
	start, out := bson.AppendArrayElementStart(dst, key)
	for i, e := range vals[from:to] {
		out = bson.AppendValueElement(out, bson.ArrayKey(i), e)
	}
	out, err = bson.AppendDocumentEnd(out, start)
	if err != nil {
		return dst
	}
	return out
}
