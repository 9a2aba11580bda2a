package agg

import (
	"strings"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// projMode is how a projection tree treats fields it does not name.
type projMode int

const (
	modeInclude   projMode = iota // $project keeping only named fields
	modeExclude                   // $project with 0s, and $unset
	modeAddFields                 // $addFields and $set: keep everything
)

// projNode is one level of a projection: the fields named at that level,
// in the order the spec names them.
type projNode struct {
	fields  []*projField
	byName  map[string]*projField
	hasExpr bool // some field here or below is computed
}

type projField struct {
	name    string
	include bool      // kept as is (inclusion mode)
	exclude bool      // removed (exclusion mode)
	expr    expr      // computed
	child   *projNode // a sub-document spec or a dotted path
}

func newProjNode() *projNode { return &projNode{byName: map[string]*projField{}} }

// projection is a compiled $project, $addFields/$set or $unset.
type projection struct {
	stage string
	mode  projMode
	root  *projNode
}

// parseProjection compiles a $project ($project true) or $addFields
// ($project false) spec.
func parseProjection(stage string, spec bson.Raw, project bool) (*projection, error) {
	p := &projection{stage: stage, mode: modeAddFields, root: newProjNode()}
	var sawInclude, sawExclude, sawExpr bool
	var idExcluded, idNamed bool
	var walk func(n *projNode, prefix string, doc bson.Raw) error
	walk = func(n *projNode, prefix string, doc bson.Raw) error {
		it := doc.Iter()
		count := 0
		for it.Next() {
			count++
			key := it.Key()
			if strings.HasPrefix(key, "$") {
				return p.errorf(16410, "FieldPath field names may not start with '$'. Consider using $getField or $setField.")
			}
			path, err := splitPath(key)
			if err != nil {
				return p.wrap(err)
			}
			full := prefix + key
			v := it.Value()
			leaf := &projField{}
			switch {
			case project && (v.IsNumber() || v.Type == bson.TypeBoolean):
				if full == "_id" {
					idNamed = true
					if truthy(v) {
						leaf.include = true
					} else {
						leaf.exclude = true
						idExcluded = true
					}
				} else if truthy(v) {
					sawInclude = true
					leaf.include = true
				} else {
					sawExclude = true
					leaf.exclude = true
				}
			case v.Type == bson.TypeEmbeddedDocument && !isOperatorDoc(bson.Raw(v.Value)):
				sub := bson.Raw(v.Value)
				if isEmptyDoc(sub) {
					if project {
						return p.errorf(51270, "An empty sub-projection is not a valid value. Found empty object at path %s", full)
					}
					// {} in $addFields sets an empty document.
					leaf.expr = literalExpr{v}
					sawExpr = true
					break
				}
				child, err := n.descend(p, path, full)
				if err != nil {
					return err
				}
				if err := walk(child, full+".", sub); err != nil {
					return err
				}
				continue
			default:
				x, err := compileExpr(v)
				if err != nil {
					return p.wrap(err)
				}
				leaf.expr = x
				sawExpr = true
			}
			if err := n.insert(p, path, full, leaf); err != nil {
				return err
			}
		}
		if err := it.Err(); err != nil {
			return badBSON(err)
		}
		return nil
	}
	if err := walk(p.root, "", spec); err != nil {
		return nil, err
	}
	p.root.markExpr()
	if !project {
		return p, nil
	}
	switch {
	case sawExclude && (sawInclude || sawExpr):
		if sawExpr && !sawInclude {
			return nil, p.errorf(31252, "Cannot use expression other than $meta in exclusion projection")
		}
		return nil, p.errorf(mongoerr.Location31254, "Cannot do exclusion on field in inclusion projection")
	case sawExclude:
		p.mode = modeExclude
	case sawInclude || sawExpr:
		p.mode = modeInclude
		if p.root.byName["_id"] == nil {
			// _id is kept unless excluded by name.
			id := &projField{name: "_id", include: true}
			p.root.fields = append([]*projField{id}, p.root.fields...)
			p.root.byName["_id"] = id
		}
	case idNamed && !idExcluded:
		p.mode = modeInclude
	case idNamed:
		p.mode = modeExclude
	default:
		return nil, p.errorf(51272, "projection specification must have at least one field")
	}
	return p, nil
}

// parseUnset compiles $unset: a field name or an array of them.
func parseUnset(v bson.RawValue) (*projection, error) {
	p := &projection{stage: "$unset", mode: modeExclude, root: newProjNode()}
	var names []string
	switch v.Type {
	case bson.TypeString:
		names = []string{v.StringValue()}
	case bson.TypeArray:
		for _, el := range arrayValues(v) {
			if el.Type != bson.TypeString {
				return nil, mongoerr.New(31120, "$unset specification must be a string or an array containing only string values")
			}
			names = append(names, el.StringValue())
		}
		if len(names) == 0 {
			return nil, mongoerr.New(31119, "$unset specification must be a string or an array with at least one field")
		}
	default:
		return nil, mongoerr.New(31002, "$unset specification must be a string or an array")
	}
	for _, name := range names {
		if strings.HasPrefix(name, "$") {
			return nil, p.errorf(16410, "FieldPath field names may not start with '$'. Consider using $getField or $setField.")
		}
		path, err := splitPath(name)
		if err != nil {
			return nil, p.wrap(err)
		}
		if err := p.root.insert(p, path, name, &projField{exclude: true}); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func isOperatorDoc(doc bson.Raw) bool {
	it := doc.Iter()
	return it.Next() && strings.HasPrefix(it.Key(), "$")
}

func isEmptyDoc(doc bson.Raw) bool {
	it := doc.Iter()
	return !it.Next()
}

func (p *projection) errorf(code int32, format string, args ...any) error {
	e := mongoerr.New(code, format, args...)
	e.Message = "Invalid " + p.stage + " :: caused by :: " + e.Message
	return e
}

// wrap prefixes a field-path error with the stage, as mongod does.
func (p *projection) wrap(err error) error {
	e := mongoerr.As(err)
	if strings.HasPrefix(e.Message, "Invalid ") {
		return e
	}
	return p.errorf(e.Code, "%s", e.Message)
}

// descend returns the node for path, creating intermediate nodes.
func (n *projNode) descend(p *projection, path []string, full string) (*projNode, error) {
	for _, name := range path {
		f := n.byName[name]
		if f == nil {
			f = &projField{name: name, child: newProjNode()}
			n.fields = append(n.fields, f)
			n.byName[name] = f
		} else if f.child == nil {
			return nil, p.errorf(31250, "Path collision at %s", full)
		}
		n = f.child
	}
	return n, nil
}

// insert places a leaf at path.
func (n *projNode) insert(p *projection, path []string, full string, leaf *projField) error {
	parent, err := n.descend(p, path[:len(path)-1], full)
	if err != nil {
		return err
	}
	name := path[len(path)-1]
	if _, dup := parent.byName[name]; dup {
		return p.errorf(31250, "Path collision at %s", full)
	}
	leaf.name = name
	parent.fields = append(parent.fields, leaf)
	parent.byName[name] = leaf
	return nil
}

// markExpr sets hasExpr on every node with a computed field at or below it.
func (n *projNode) markExpr() bool {
	for _, f := range n.fields {
		if f.expr != nil || (f.child != nil && f.child.markExpr()) {
			n.hasExpr = true
		}
	}
	return n.hasExpr
}

// apply runs the projection on one document.
func (p *projection) apply(e *env, doc bson.Raw) (bson.Raw, error) {
	return p.applyDoc(e, p.root, doc)
}

func (p *projection) applyDoc(e *env, n *projNode, doc bson.Raw) (bson.Raw, error) {
	start, b := bson.AppendDocumentStart(nil)
	var done map[string]bool
	it := doc.Iter()
	for it.Next() {
		key := it.Key()
		f := n.byName[key]
		if f == nil {
			if p.mode != modeInclude {
				b = append(b, it.Element()...)
			}
			continue
		}
		if done == nil {
			done = map[string]bool{}
		}
		if done[key] {
			continue // a duplicate key in the input: the first one counts
		}
		switch {
		case f.include:
			b = append(b, it.Element()...)
			done[key] = true
		case f.exclude:
			done[key] = true
		case f.child != nil:
			v, err := p.applyValue(e, f.child, it.Value())
			if err != nil {
				return nil, err
			}
			if !isMissing(v) {
				b = bson.AppendValueElement(b, key, v)
			}
			done[key] = true
		case p.mode == modeAddFields:
			// Computed fields replace an existing field where it stands.
			v, err := f.expr.eval(e)
			if err != nil {
				return nil, err
			}
			if !isMissing(v) {
				b = bson.AppendValueElement(b, key, v)
			}
			done[key] = true
		}
	}
	if err := it.Err(); err != nil {
		return nil, mongoerr.New(mongoerr.BadValue, "%s: invalid document: %v", p.stage, err)
	}
	// Computed fields not yet written go last, in spec order.
	for _, f := range n.fields {
		if done[f.name] {
			continue
		}
		var v bson.RawValue
		var err error
		switch {
		case f.expr != nil:
			v, err = f.expr.eval(e)
		case f.child != nil && f.child.hasExpr:
			v, err = p.applyValue(e, f.child, missing)
		}
		if err != nil {
			return nil, err
		}
		if !isMissing(v) {
			b = bson.AppendValueElement(b, f.name, v)
		}
	}
	out, err := endDoc(b, start)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// applyValue applies a sub-projection to the value found at its field:
// documents are projected, arrays element by element, and other values
// are kept (exclusion), dropped (inclusion) or replaced by a document of
// the computed fields.
func (p *projection) applyValue(e *env, n *projNode, v bson.RawValue) (bson.RawValue, error) {
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		d, err := p.applyDoc(e, n, bson.Raw(v.Value))
		if err != nil {
			return missing, err
		}
		return docValue(d), nil
	case bson.TypeArray:
		var out []bson.RawValue
		it := bson.Raw(v.Value).Iter()
		for it.Next() {
			r, err := p.applyValue(e, n, it.Value())
			if err != nil {
				return missing, err
			}
			if !isMissing(r) {
				out = append(out, r)
			}
		}
		return arrayValue(out)
	}
	switch {
	case p.mode == modeExclude && !isMissing(v):
		return v, nil
	case n.hasExpr:
		d, err := p.applyDoc(e, n, emptyDoc)
		if err != nil {
			return missing, err
		}
		return docValue(d), nil
	}
	return missing, nil
}

var emptyDoc = bson.Raw{5, 0, 0, 0, 0}
