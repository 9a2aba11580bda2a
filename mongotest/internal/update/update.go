package update

import (
	"bytes"
	"slices"
	"strings"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/agg"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
	"github.com/mongoscope/mongoscope/mongotest/internal/query"
)

// EmptyFieldName is mongod's code for an update path with an empty
// component.
const codeEmptyFieldName = 56

// Update is a compiled update: a list of operators or a replacement
// document. It is safe for concurrent use.
type Update struct {
	ops         []op
	replacement bson.Raw
	pipeline    *agg.Pipeline // an update given as an aggregation pipeline
	filters     map[string]*query.Matcher
	coll        query.Collator // strings compare by it; nil: by bytes
}

// op is one field of one update operator.
type op struct {
	name string   // "$set", ...
	path []string // target path
	arg  bson.RawValue
	to   []string // $rename destination
	push *pushSpec
	pull *pullSpec
	coll query.Collator
}

type pushSpec struct {
	each     []bson.RawValue
	slice    int64
	hasSlice bool
	sort     *query.Sort
	sortDir  int // 1 or -1 when sorting whole values
	position int64
	hasPos   bool
}

type pullSpec struct {
	matcher *query.Matcher // conditions, or a document to match elements
	elemDoc bool           // matcher applies to document elements directly
	value   bson.RawValue  // plain value to compare with when matcher is nil
}

// Compile compiles an update document (operators such as {$set: {...}},
// or a replacement document, or an aggregation pipeline given as an array)
// with its arrayFilters. Errors carry mongod's
// codes: FailedToParse for an unknown modifier, ConflictingUpdateOperators
// for two operators on overlapping paths, and so on.
func Compile(u bson.RawValue, arrayFilters []bson.Raw) (*Update, error) {
	return CompileWith(u, arrayFilters, Options{})
}

// Options are what a write command's collation and let options give an
// update.
type Options struct {
	// Collation compares strings: in $min, $max, $addToSet, $pull,
	// $pullAll, $push's $sort, arrayFilters and pipeline updates; nil is
	// simple.
	Collation query.Collator
	// Let is the command's let option, variables a pipeline update reads
	// as $$name.
	Let bson.Raw
}

// CompileWith is Compile with a collation and let variables.
func CompileWith(u bson.RawValue, arrayFilters []bson.Raw, o Options) (*Update, error) {
	switch u.Type {
	case bson.TypeArray:
		if len(arrayFilters) > 0 {
			return nil, mongoerr.New(mongoerr.FailedToParse, "arrayFilters may not be specified for pipeline-style updates")
		}
		return compilePipeline(bson.Raw(u.Value), o)
	case bson.TypeEmbeddedDocument:
	default:
		return nil, mongoerr.New(mongoerr.FailedToParse, "Update argument must be either an object or an array")
	}
	doc := bson.Raw(u.Value)
	if err := doc.Validate(); err != nil {
		return nil, mongoerr.New(mongoerr.FailedToParse, "update is not a valid BSON document: %v", err)
	}
	up := &Update{coll: o.Collation}
	first := ""
	if it := doc.Iter(); it.Next() {
		first = it.Key()
	}
	if !strings.HasPrefix(first, "$") {
		if len(arrayFilters) > 0 {
			return nil, mongoerr.New(mongoerr.FailedToParse, "arrayFilters may not be specified for replacement updates")
		}
		it := doc.Iter()
		for it.Next() {
			if strings.HasPrefix(it.Key(), "$") {
				return nil, mongoerr.New(mongoerr.DollarPrefixedFieldName,
					"The dollar ($) prefixed field '%s' in '%s' is not allowed in the context of an update's replacement document.", it.Key(), it.Key())
			}
		}
		up.replacement = doc
		return up, nil
	}
	if err := up.compileFilters(arrayFilters); err != nil {
		return nil, err
	}
	it := doc.Iter()
	for it.Next() {
		name, v := it.Key(), it.Value()
		if !modifiers[name] {
			if name == "$bit" {
				return nil, mongoerr.New(mongoerr.NotImplemented, "mongotest does not support the $bit update operator")
			}
			return nil, mongoerr.New(mongoerr.FailedToParse,
				"Unknown modifier: %s. Expected a valid update modifier or pipeline-style update specified as an array", name)
		}
		fields, ok := v.DocumentOK()
		if !ok {
			return nil, mongoerr.New(mongoerr.FailedToParse,
				"Modifiers operate on fields but we found type %s instead. For example: {$mod: {<field>: ...}} not {%s: %s}", typeName(v.Type), name, v)
		}
		fi := fields.Iter()
		for fi.Next() {
			o, err := up.compileOp(name, fi.Key(), fi.Value())
			if err != nil {
				return nil, err
			}
			up.ops = append(up.ops, o)
		}
	}
	if err := up.checkConflicts(); err != nil {
		return nil, err
	}
	if err := up.checkFiltersUsed(doc); err != nil {
		return nil, err
	}
	// mongod 5.0+ applies fields in lexicographic order (numeric components
	// numerically), which decides the order new fields are appended in.
	slices.SortStableFunc(up.ops, func(a, b op) int { return comparePaths(a.path, b.path) })
	return up, nil
}

var modifiers = map[string]bool{
	"$set": true, "$unset": true, "$inc": true, "$mul": true, "$min": true, "$max": true,
	"$rename": true, "$push": true, "$addToSet": true, "$pull": true, "$pullAll": true,
	"$pop": true, "$currentDate": true, "$setOnInsert": true,
}

// IsReplacement reports whether the update replaces whole documents.
func (u *Update) IsReplacement() bool { return u.replacement != nil }

func (u *Update) compileFilters(filters []bson.Raw) error {
	for _, f := range filters {
		if err := f.Validate(); err != nil {
			return mongoerr.New(mongoerr.FailedToParse, "arrayFilters entry is not a valid BSON document: %v", err)
		}
		id := ""
		it := f.Iter()
		for it.Next() {
			k := it.Key()
			if strings.HasPrefix(k, "$") {
				// Top-level operators ($and, $or) hide the identifier.
				return mongoerr.New(mongoerr.NotImplemented, "mongotest does not support %s at the top of an array filter", k)
			}
			name, _, _ := strings.Cut(k, ".")
			if id != "" && id != name {
				return mongoerr.New(mongoerr.FailedToParse, "Error parsing array filter :: caused by :: Expected a single top-level field name, found '%s' and '%s'", id, name)
			}
			id = name
		}
		if id == "" {
			return mongoerr.New(mongoerr.FailedToParse, "Cannot use an expression without a top-level field name in arrayFilters")
		}
		if !validIdentifier(id) {
			return mongoerr.New(mongoerr.BadValue, "Error parsing array filter :: caused by :: The top-level field name must be an alphanumeric string beginning with a lowercase letter, found '%s'", id)
		}
		if _, dup := u.filters[id]; dup {
			return mongoerr.New(mongoerr.FailedToParse, "Found multiple array filters with the same top-level field name %s", id)
		}
		m, err := query.NewMatcherWith(f, query.Options{Collator: u.coll})
		if err != nil {
			return err
		}
		if u.filters == nil {
			u.filters = map[string]*query.Matcher{}
		}
		u.filters[id] = m
	}
	return nil
}

func validIdentifier(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func (u *Update) checkFiltersUsed(doc bson.Raw) error {
	for id := range u.filters {
		used := false
		for _, o := range u.ops {
			if slices.Contains(o.path, "$["+id+"]") {
				used = true
			}
		}
		if !used {
			return mongoerr.New(mongoerr.FailedToParse, "The array filter for identifier '%s' was not used in the update %s", id, doc)
		}
	}
	return nil
}

func (u *Update) checkPath(p string) ([]string, error) {
	if p == "" {
		return nil, mongoerr.New(codeEmptyFieldName, "An empty update path is not valid.")
	}
	if strings.IndexByte(p, 0) >= 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "The update path %q contains a NUL byte, which a field name cannot hold", p)
	}
	parts := strings.Split(p, ".")
	for i, c := range parts {
		if c == "" {
			return nil, mongoerr.New(codeEmptyFieldName, "The update path '%s' contains an empty field name, which is not allowed.", p)
		}
		switch {
		case c == "$" || c == "$[]":
		case strings.HasPrefix(c, "$[") && strings.HasSuffix(c, "]"):
			id := c[2 : len(c)-1]
			if _, ok := u.filters[id]; !ok {
				return nil, mongoerr.New(mongoerr.BadValue, "No array filter found for identifier '%s' in path '%s'", id, p)
			}
		case strings.HasPrefix(c, "$") && i == 0:
			return nil, mongoerr.New(mongoerr.DollarPrefixedFieldName, "The dollar ($) prefixed field '%s' in '%s' is not valid for storage.", c, p)
		}
	}
	return parts, nil
}

func (u *Update) compileOp(name, field string, v bson.RawValue) (op, error) {
	path, err := u.checkPath(field)
	if err != nil {
		return op{}, err
	}
	o := op{name: name, path: path, arg: v, coll: u.coll}
	switch name {
	case "$inc", "$mul":
		if !isNumber(v) {
			verb := map[string]string{"$inc": "increment", "$mul": "multiply"}[name]
			return o, mongoerr.New(mongoerr.TypeMismatch, "Cannot %s with non-numeric argument: {%s: %s}", verb, field, v)
		}
	case "$rename":
		to, ok := v.StringValueOK()
		if !ok {
			return o, mongoerr.New(mongoerr.BadValue, "The 'to' field for $rename must be a string: %s: %s", field, v)
		}
		if to == field {
			return o, mongoerr.New(mongoerr.BadValue, "The source and target field for $rename must differ: %s: %q", field, to)
		}
		if strings.HasPrefix(to, field+".") || strings.HasPrefix(field, to+".") {
			return o, mongoerr.New(mongoerr.BadValue, "The source and target field for $rename must not be on the same path: %s: %q", field, to)
		}
		if o.to, err = u.checkPath(to); err != nil {
			return o, err
		}
		for _, c := range append(slices.Clone(path), o.to...) {
			if strings.HasPrefix(c, "$") {
				return o, mongoerr.New(mongoerr.BadValue, "The source field for $rename may not be dynamic: %s", field)
			}
		}
	case "$push", "$addToSet":
		p, err := compilePush(name, v, u.coll)
		if err != nil {
			return o, err
		}
		o.push = p
	case "$pull":
		p, err := compilePull(v, u.coll)
		if err != nil {
			return o, err
		}
		o.pull = p
	case "$pullAll":
		if v.Type != bson.TypeArray {
			return o, mongoerr.New(mongoerr.BadValue, "$pullAll requires an array argument but was given a %s", typeName(v.Type))
		}
	case "$pop":
		n, ok := v.AsFloat64OK()
		if v.Type == bson.TypeDecimal128 {
			d := v.Decimal128().String()
			ok, n = d == "1" || d == "-1", map[bool]float64{true: 1, false: -1}[d == "1"]
		}
		if !ok {
			return o, mongoerr.New(mongoerr.FailedToParse, "Expected a number in: %s: %s", field, v)
		}
		if n != 1 && n != -1 {
			return o, mongoerr.New(mongoerr.FailedToParse, "$pop expects 1 or -1, found: %s", v)
		}
	case "$currentDate":
		switch v.Type {
		case bson.TypeBoolean:
		case bson.TypeEmbeddedDocument:
			t, ok := v.Document().Lookup("$type").StringValueOK()
			if !ok || (t != "date" && t != "timestamp") {
				return o, mongoerr.New(mongoerr.BadValue, "The '$type' string field is required to be 'date' or 'timestamp': {$currentDate: {field : {$type: 'date'}}}")
			}
			if n, _ := v.Document().Elements(); len(n) != 1 {
				return o, mongoerr.New(mongoerr.BadValue, "Unrecognized $currentDate option: %s", v)
			}
		default:
			return o, mongoerr.New(mongoerr.BadValue, "%s is not valid type for $currentDate. Please use a boolean ('true') or a $type expression ({$type: 'timestamp/date'}).", typeName(v.Type))
		}
	}
	return o, nil
}

func compilePush(name string, v bson.RawValue, coll query.Collator) (*pushSpec, error) {
	p := &pushSpec{}
	d, ok := v.DocumentOK()
	if !ok {
		p.each = []bson.RawValue{v}
		return p, nil
	}
	if _, err := d.LookupErr("$each"); err != nil {
		p.each = []bson.RawValue{v}
		return p, nil
	}
	it := d.Iter()
	for it.Next() {
		k, x := it.Key(), it.Value()
		if name == "$addToSet" && k != "$each" {
			// mongod adds the whole document when it has other fields.
			p.each = []bson.RawValue{v}
			return p, nil
		}
		switch k {
		case "$each":
			arr, ok := x.ArrayOK()
			if !ok {
				return nil, mongoerr.New(mongoerr.BadValue, "The argument to $each in %s must be an array but it was of type: %s", name, typeName(x.Type))
			}
			vals, err := arr.Values()
			if err != nil {
				return nil, mongoerr.New(mongoerr.BadValue, "$each: %v", err)
			}
			p.each = vals
		case "$slice":
			n, ok := integral(x)
			if !ok {
				return nil, mongoerr.New(mongoerr.BadValue, "The value for $slice must be an integer value but was given type: %s", typeName(x.Type))
			}
			p.slice, p.hasSlice = n, true
		case "$position":
			n, ok := integral(x)
			if !ok {
				return nil, mongoerr.New(mongoerr.BadValue, "The value for $position must be an integer value, not of type: %s", typeName(x.Type))
			}
			p.position, p.hasPos = n, true
		case "$sort":
			if sd, ok := x.DocumentOK(); ok {
				if len(sd) <= 5 {
					return nil, mongoerr.New(mongoerr.BadValue, "The $sort pattern is empty when it should be a set of fields.")
				}
				s, err := query.NewSortWith(sd, coll)
				if err != nil {
					return nil, err
				}
				p.sort = s
				continue
			}
			n, ok := integral(x)
			if !ok || (n != 1 && n != -1) {
				return nil, mongoerr.New(mongoerr.BadValue, "The $sort is invalid: use 1/-1 to sort the whole element, or {field:1/-1} to sort embedded fields")
			}
			p.sortDir = int(n)
		default:
			return nil, mongoerr.New(mongoerr.BadValue, "Unrecognized clause in $push: %s", k)
		}
	}
	return p, nil
}

func compilePull(v bson.RawValue, coll query.Collator) (*pullSpec, error) {
	p := &pullSpec{value: v}
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		d := bson.Raw(v.Value)
		first := ""
		if it := d.Iter(); it.Next() {
			first = it.Key()
		}
		if strings.HasPrefix(first, "$") && first != "$and" && first != "$or" && first != "$nor" {
			// Conditions on the element itself: {$gte: 6}.
			m, err := query.NewMatcherWith(wrap(v), query.Options{Collator: coll})
			if err != nil {
				return nil, err
			}
			p.matcher = m
			return p, nil
		}
		m, err := query.NewMatcherWith(d, query.Options{Collator: coll})
		if err != nil {
			return nil, err
		}
		p.matcher, p.elemDoc = m, true
	case bson.TypeRegex:
		m, err := query.NewMatcherWith(wrap(v), query.Options{Collator: coll})
		if err != nil {
			return nil, err
		}
		p.matcher = m
	}
	return p, nil
}

// wrap returns {"v": v}, the document through which a condition on a bare
// value is matched.
func wrap(v bson.RawValue) bson.Raw {
	start, b := bson.AppendDocumentStart(nil)
	b = bson.AppendValueElement(b, "v", v)
	b, _ = bson.AppendDocumentEnd(b, start)
	return b
}

// checkConflicts rejects two operators whose paths overlap.
func (u *Update) checkConflicts() error {
	var paths [][]string
	for _, o := range u.ops {
		paths = append(paths, o.path)
		if o.to != nil {
			paths = append(paths, o.to)
		}
	}
	for i := range paths {
		for j := i + 1; j < len(paths); j++ {
			a, b := paths[i], paths[j]
			n := min(len(a), len(b))
			if slices.Equal(a[:n], b[:n]) {
				return mongoerr.New(mongoerr.ConflictingUpdateOperators,
					"Updating the path '%s' would create a conflict at '%s'", strings.Join(b, "."), strings.Join(a[:n], "."))
			}
		}
	}
	return nil
}

func comparePaths(a, b []string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		x, xn := arrayIndex(a[i])
		y, yn := arrayIndex(b[i])
		if xn && yn {
			if x != y {
				return x - y
			}
			continue
		}
		if c := strings.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return len(a) - len(b)
}

// Apply applies the update to doc and returns the new document. insert is
// true when doc is an upsert's seed, so $setOnInsert applies. now is the
// time $currentDate writes. changed is false when the result is
// byte-for-byte the input, as mongod's nModified counts. The _id may not
// change (ImmutableField). The positional "$" operator needs the index
// the query matched, which Apply does not have: a path using it is
// NotImplemented, never a guess.
func (u *Update) Apply(doc bson.Raw, insert bool, now time.Time) (out bson.Raw, changed bool, err error) {
	if err := doc.Validate(); err != nil {
		return nil, false, mongoerr.New(mongoerr.BadValue, "document is not valid BSON: %v", err)
	}
	oldID, hasID := lookupTop(doc, "_id")
	switch {
	case u.pipeline != nil:
		var res bson.Raw
		if res, err = u.runPipeline(doc); err == nil {
			out, err = replaceWith(res, oldID, hasID)
		}
	case u.replacement != nil:
		out, err = replaceWith(u.replacement, oldID, hasID)
	default:
		out, err = u.applyOps(doc, insert, now)
	}
	if err != nil {
		return nil, false, err
	}
	if hasID {
		newID, ok := lookupTop(out, "_id")
		if !ok || newID.Type != oldID.Type || !bytes.Equal(newID.Value, oldID.Value) {
			if u.replacement != nil || u.pipeline != nil {
				return nil, false, mongoerr.New(mongoerr.ImmutableField,
					"After applying the update, the (immutable) field '_id' was found to have been altered to _id: %s", newID)
			}
			return nil, false, mongoerr.New(mongoerr.ImmutableField,
				"Performing an update on the path '_id' would modify the immutable field '_id'")
		}
	}
	if len(out) > maxDocumentSize {
		return nil, false, mongoerr.New(17419, "Resulting document after update is larger than %d", maxDocumentSize)
	}
	return out, !bytes.Equal(out, doc), nil
}

// maxBackfill is how many nulls mongod will pad an array with to reach an
// index.
const maxBackfill = 1500000

// maxDocumentSize is mongod's maxBsonObjectSize.
const maxDocumentSize = 16 * 1024 * 1024

func lookupTop(doc bson.Raw, key string) (bson.RawValue, bool) {
	it := doc.Iter()
	for it.Next() {
		if it.Key() == key {
			return it.Value(), true
		}
	}
	return bson.RawValue{}, false
}

// replaceWith builds the replacement document, keeping the original _id
// (first, as mongod stores it) when the replacement has none.
func replaceWith(replacement bson.Raw, oldID bson.RawValue, hasID bool) (bson.Raw, error) {
	start, b := bson.AppendDocumentStart(nil)
	newID, replHasID := lookupTop(replacement, "_id")
	switch {
	case replHasID:
		b = bson.AppendValueElement(b, "_id", newID)
	case hasID:
		b = bson.AppendValueElement(b, "_id", oldID)
	}
	it := replacement.Iter()
	for it.Next() {
		if it.Key() != "_id" {
			b = append(b, it.Element()...)
		}
	}
	b, err := bson.AppendDocumentEnd(b, start)
	if err != nil {
		return nil, mongoerr.New(17419, "Resulting document after update is larger than %d", maxDocumentSize)
	}
	return b, nil
}

func (u *Update) applyOps(doc bson.Raw, insert bool, now time.Time) (bson.Raw, error) {
	root := newNode(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc})
	root.expand()
	for _, o := range u.ops {
		if o.name == "$setOnInsert" && !insert {
			continue
		}
		if err := u.applyOp(root, o, now); err != nil {
			return nil, err
		}
	}
	start, b := bson.AppendDocumentStart(nil)
	b = root.appendFields(b)
	b, err := bson.AppendDocumentEnd(b, start)
	if err != nil {
		return nil, mongoerr.New(17419, "Resulting document after update is larger than %d", maxDocumentSize)
	}
	return b, nil
}

// target is one place an operator writes: child idx of parent, or a new
// field key (idx < 0) or array index.
type target struct {
	parent *mnode
	idx    int
	key    string
	arrIdx int
}

func (t target) exists() bool { return t.idx >= 0 }

func (t target) current() bson.RawValue { return t.parent.kids[t.idx].value() }

func (t target) set(v bson.RawValue) {
	if t.idx >= 0 {
		t.parent.setKid(t.idx, v)
		return
	}
	t.parent.add(t.key, t.arrIdx, v)
}

// creates reports whether an operator creates its field when missing.
func creates(name string) bool {
	switch name {
	case "$unset", "$pull", "$pullAll", "$pop":
		return false
	}
	return true
}

func (u *Update) applyOp(root *mnode, o op, now time.Time) error {
	if o.name == "$rename" {
		return u.rename(root, o)
	}
	var targets []target
	if err := u.resolve(root, o.path, o.path, creates(o.name), &targets); err != nil {
		return err
	}
	for _, t := range targets {
		if err := applyAt(t, o, now); err != nil {
			return err
		}
	}
	return nil
}

// resolve finds the targets of path below n, expanding $[] and $[id] and
// creating intermediate documents when create is set.
func (u *Update) resolve(n *mnode, comps, full []string, create bool, out *[]target) error {
	c := comps[0]
	last := len(comps) == 1
	visit := func(t target) error {
		if last {
			*out = append(*out, t)
			return nil
		}
		if !t.exists() {
			if !create {
				return nil
			}
			if next := comps[1]; strings.HasPrefix(next, "$") {
				return mongoerr.New(mongoerr.BadValue, "The path '%s' must exist in the document in order to apply array updates.", strings.Join(full[:len(full)-len(comps)+1], "."))
			}
			t.set(emptyDoc)
			if t.parent.isArr {
				t.idx = t.arrIdx
			} else {
				t.idx = len(t.parent.kids) - 1
			}
		}
		child := t.parent.kids[t.idx]
		if !child.isContainer() {
			if !create {
				return nil
			}
			if strings.HasPrefix(comps[1], "$") {
				return mongoerr.New(mongoerr.BadValue, "Cannot apply array updates to non-array element %s: %s", t.keyName(), child.value())
			}
			return mongoerr.New(mongoerr.PathNotViable, "Cannot create field '%s' in element {%s: %s}", comps[1], t.keyName(), child.value())
		}
		child.expand()
		return u.resolve(child, comps[1:], full, create, out)
	}
	switch {
	case c == "$":
		// mongod fills in the array index the query matched; mongotest's
		// matcher does not report it, so any answer here could be wrong.
		return mongoerr.New(mongoerr.NotImplemented, "mongotest does not support the positional $ update operator (path '%s')", strings.Join(full, "."))
	case c == "$[]" || (strings.HasPrefix(c, "$[") && strings.HasSuffix(c, "]")):
		if !n.isArr {
			return mongoerr.New(mongoerr.BadValue, "Cannot apply array updates to non-array element %s", n.value())
		}
		var filter *query.Matcher
		if c != "$[]" {
			filter = u.filters[c[2:len(c)-1]]
		}
		// Decide which elements match before any of them change.
		var idx []int
		for i, k := range n.kids {
			if filter == nil || filter.Match(wrapAs(c[2:len(c)-1], k.value())) {
				idx = append(idx, i)
			}
		}
		for _, i := range idx {
			if err := visit(target{parent: n, idx: i, arrIdx: i}); err != nil {
				return err
			}
		}
		return nil
	case n.isArr:
		i, ok := arrayIndex(c)
		if !ok {
			if !create {
				return nil
			}
			return mongoerr.New(mongoerr.PathNotViable, "Cannot create field '%s' in element {%s}", c, n.value())
		}
		if i < len(n.kids) {
			return visit(target{parent: n, idx: i, arrIdx: i})
		}
		if create && i-len(n.kids) > maxBackfill {
			return mongoerr.New(mongoerr.BadValue, "can't backfill more than %d elements", maxBackfill)
		}
		return visit(target{parent: n, idx: -1, arrIdx: i})
	}
	return visit(target{parent: n, idx: n.field(c), key: c})
}

func (t target) keyName() string {
	if t.parent.isArr {
		return bson.ArrayKey(t.arrIdx)
	}
	return t.key
}

// wrapAs returns {id: v}, how an array filter sees one element.
func wrapAs(id string, v bson.RawValue) bson.Raw {
	start, b := bson.AppendDocumentStart(nil)
	b = bson.AppendValueElement(b, id, v)
	b, _ = bson.AppendDocumentEnd(b, start)
	return b
}

func (u *Update) rename(root *mnode, o op) error {
	var src []target
	if err := u.resolve(root, o.path, o.path, false, &src); err != nil {
		return err
	}
	if len(src) == 0 || !src[0].exists() {
		return nil
	}
	if src[0].parent.isArr {
		return mongoerr.New(mongoerr.BadValue, "The source field cannot be an array element, '%s' in doc with %s", strings.Join(o.path, "."), src[0].parent.value())
	}
	v := src[0].current()
	var dst []target
	if err := u.resolve(root, o.to, o.to, true, &dst); err != nil {
		return err
	}
	if len(dst) != 1 || dst[0].parent.isArr {
		return mongoerr.New(mongoerr.BadValue, "The destination field cannot be an array element, '%s'", strings.Join(o.to, "."))
	}
	// Resolve again: creating the destination may have shifted nothing in
	// the source's parent unless they share it, so look the source up anew.
	src = src[:0]
	if err := u.resolve(root, o.path, o.path, false, &src); err != nil {
		return err
	}
	src[0].parent.remove(src[0].idx)
	dst = dst[:0]
	if err := u.resolve(root, o.to, o.to, true, &dst); err != nil {
		return err
	}
	if dst[0].exists() {
		// mongod removes an existing destination and appends the value.
		dst[0].parent.remove(dst[0].idx)
		dst[0].idx = -1
	}
	dst[0].set(v)
	return nil
}

func typeName(t bson.Type) string { return mongoerr.TypeName(t) }
