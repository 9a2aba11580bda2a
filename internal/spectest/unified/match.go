package unified

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mongoscope/mongoscope/bson"
)

// Entities gives the matcher the entities of the running test that the
// $$matchesEntity and $$sessionLsid operators refer to. A lookup of an
// undefined or mistyped entity returns an error, which Match reports as an
// *InvalidTestError.
type Entities interface {
	// BSONEntity returns a BSON value saved with saveResultAsEntity.
	BSONEntity(id string) (bson.RawValue, error)
	// SessionLsid returns a session entity's logical session id document.
	SessionLsid(id string) (bson.Raw, error)
}

// Top says how the top-level actual value is treated.
type Top int

const (
	// TopRoot: the actual value is a root-level document, which may hold
	// fields the expected document does not name (command, reply,
	// errorResponse, a findOneAnd* result, log message data).
	TopRoot Top = iota
	// TopNested: the actual value is not a root-level document, so extra
	// fields are refused everywhere (e.g. a distinct result's elements).
	TopNested
	// TopRootElements: the actual value is an array of root-level
	// documents, the result of iterating a cursor (find, aggregate, ...).
	TopRootElements
)

// Options configure Match. The zero value matches at the root with no
// entities.
type Options struct {
	// Entities resolves $$matchesEntity and $$sessionLsid; nil means the
	// test defines none.
	Entities Entities
	// Path prefixes every path in errors, e.g. "reply" or "expectResult".
	Path string
	// Top says how the top-level actual value is treated.
	Top Top
}

// MismatchError says that an actual value does not match the expected one.
type MismatchError struct {
	Path     string        // dotted path of the value that differs ("reply.cursor.firstBatch.0.x")
	Reason   string        // why it differs
	Expected bson.RawValue // the expected value at Path, zero when not a single value
	Actual   bson.RawValue // the actual value at Path, zero when absent
}

func (e *MismatchError) Error() string {
	return pathName(e.Path) + ": " + e.Reason
}

// InvalidTestError says that the expected value itself is malformed: an
// unknown operator, a bad operand, or an undefined entity. The spec
// requires runners to raise an error for these rather than report a
// mismatch.
type InvalidTestError struct {
	Path   string
	Reason string
	Err    error // the underlying error, if any (e.g. from Entities)
}

func (e *InvalidTestError) Error() string {
	s := pathName(e.Path) + ": invalid expectation: " + e.Reason
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *InvalidTestError) Unwrap() error { return e.Err }

func pathName(p string) string {
	if p == "" {
		return "(top)"
	}
	return p
}

// Match reports whether actual matches expected under the unified test
// format's rules. It returns nil on a match, a *MismatchError on a
// mismatch, or an *InvalidTestError when expected is malformed. A zero
// actual (bson.RawValue{}) stands for an absent value. Match never panics,
// whatever the bytes.
func Match(expected, actual bson.RawValue, opts *Options) error {
	var o Options
	if opts != nil {
		o = *opts
	}
	m := matcher{ents: o.Entities}
	switch o.Top {
	case TopNested:
		return m.match(o.Path, expected, actual, !actual.IsZero(), false)
	case TopRootElements:
		return m.matchRootElements(o.Path, expected, actual)
	default:
		return m.match(o.Path, expected, actual, !actual.IsZero(), true)
	}
}

// MatchDocument is Match for a root-level document against an expected
// document, the common case (a command, a reply).
func MatchDocument(expected, actual bson.Raw, opts *Options) error {
	return Match(docValue(expected), docValue(actual), opts)
}

func docValue(d bson.Raw) bson.RawValue {
	if d == nil {
		return bson.RawValue{}
	}
	return bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: d}
}

// maxDepth bounds recursion; spec files nest a handful of levels, and
// malformed input must not exhaust the stack.
const maxDepth = 200

type matcher struct {
	ents  Entities
	depth int
}

func mismatch(path string, exp, act bson.RawValue, format string, args ...any) *MismatchError {
	return &MismatchError{Path: path, Reason: fmt.Sprintf(format, args...), Expected: exp, Actual: act}
}

func invalid(path string, err error, format string, args ...any) *InvalidTestError {
	return &InvalidTestError{Path: path, Reason: fmt.Sprintf(format, args...), Err: err}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// show renders a value for an error message: relaxed Extended JSON, cut to
// a readable length.
func show(v bson.RawValue) string {
	if v.IsZero() {
		return "(absent)"
	}
	s := v.String()
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// operator returns the name and operand of a special operator: a document
// whose first and only key starts with "$$".
func operator(v bson.RawValue) (string, bson.RawValue, bool) {
	if v.Type != bson.TypeEmbeddedDocument {
		return "", bson.RawValue{}, false
	}
	it := bson.Raw(v.Value).Iter()
	if !it.Next() {
		return "", bson.RawValue{}, false
	}
	key, val := it.KeyBytes(), it.Value()
	if !bytes.HasPrefix(key, []byte("$$")) || it.Next() || it.Err() != nil {
		return "", bson.RawValue{}, false
	}
	return string(key), val, true
}

// match is the spec's match function. present says whether the actual
// value exists (key-based operators such as $$exists need to know); root
// says whether an actual document is a root-level document.
func (m *matcher) match(path string, exp, act bson.RawValue, present, root bool) error {
	m.depth++
	defer func() { m.depth-- }()
	if m.depth > maxDepth {
		return invalid(path, nil, "expected value nests deeper than %d levels", maxDepth)
	}
	if name, arg, ok := operator(exp); ok {
		return m.operator(path, name, arg, act, present, root)
	}
	if !present {
		return mismatch(path, exp, act, "missing; want %s", show(exp))
	}
	switch exp.Type {
	case bson.TypeEmbeddedDocument:
		return m.matchDocument(path, exp, act, root)
	case bson.TypeArray:
		return m.matchArray(path, exp, act, false)
	}
	return matchScalar(path, exp, act)
}

func (m *matcher) matchDocument(path string, exp, act bson.RawValue, root bool) error {
	if act.Type != bson.TypeEmbeddedDocument {
		return mismatch(path, exp, act, "got %s %s, want a document", typeName(act.Type), show(act))
	}
	ad := bson.Raw(act.Value)
	it := bson.Raw(exp.Value).Iter()
	var keys map[string]struct{}
	if !root {
		keys = map[string]struct{}{}
	}
	for it.Next() {
		k := it.Key()
		if keys != nil {
			keys[k] = struct{}{}
		}
		av, err := ad.LookupErr(k)
		present := err == nil
		if err != nil && !errors.Is(err, bson.ErrElementNotFound) {
			return mismatch(join(path, k), it.Value(), bson.RawValue{}, "actual document is malformed: %v", err)
		}
		if err := m.match(join(path, k), it.Value(), av, present, false); err != nil {
			return err
		}
	}
	if err := it.Err(); err != nil {
		return invalid(path, err, "expected document is malformed")
	}
	if root {
		return nil
	}
	// "Test runners MUST NOT permit additional fields in nested documents."
	ai := ad.Iter()
	for ai.Next() {
		if _, ok := keys[string(ai.KeyBytes())]; !ok {
			return mismatch(join(path, ai.Key()), bson.RawValue{}, ai.Value(), "unexpected field %q in a nested document (value %s)", ai.Key(), show(ai.Value()))
		}
	}
	if err := ai.Err(); err != nil {
		return mismatch(path, exp, act, "actual document is malformed: %v", err)
	}
	return nil
}

// matchArray matches arrays element by element; elementsRoot says the
// actual elements are root-level documents (a cursor's results).
func (m *matcher) matchArray(path string, exp, act bson.RawValue, elementsRoot bool) error {
	if act.Type != bson.TypeArray {
		return mismatch(path, exp, act, "got %s %s, want an array", typeName(act.Type), show(act))
	}
	ev, err := bson.Raw(exp.Value).Values()
	if err != nil {
		return invalid(path, err, "expected array is malformed")
	}
	av, err := bson.Raw(act.Value).Values()
	if err != nil {
		return mismatch(path, exp, act, "actual array is malformed: %v", err)
	}
	if len(av) != len(ev) {
		return mismatch(path, exp, act, "got %d elements, want %d (%s)", len(av), len(ev), show(act))
	}
	for i := range ev {
		if err := m.match(join(path, strconv.Itoa(i)), ev[i], av[i], true, elementsRoot); err != nil {
			return err
		}
	}
	return nil
}

func (m *matcher) matchRootElements(path string, exp, act bson.RawValue) error {
	if exp.Type != bson.TypeArray {
		// A special operator or a scalar: match normally at the root.
		return m.match(path, exp, act, !act.IsZero(), true)
	}
	if act.IsZero() {
		return mismatch(path, exp, act, "missing; want %s", show(exp))
	}
	return m.matchArray(path, exp, act, true)
}

// matchScalar compares values other than documents and arrays: the same
// type (numbers flexibly) and equal.
func matchScalar(path string, exp, act bson.RawValue) error {
	if isFlexNumber(exp.Type) && isFlexNumber(act.Type) {
		c, ok := compareNumbers(exp, act)
		if !ok {
			return mismatch(path, exp, act, "got %s, want %s (not comparable numbers)", show(act), show(exp))
		}
		if c != 0 {
			return mismatch(path, exp, act, "got %s, want %s", show(act), show(exp))
		}
		return nil
	}
	if exp.Type != act.Type {
		return mismatch(path, exp, act, "got %s %s, want %s %s", typeName(act.Type), show(act), typeName(exp.Type), show(exp))
	}
	if !exactEqual(exp, act, 0) {
		return mismatch(path, exp, act, "got %s, want %s", show(act), show(exp))
	}
	return nil
}

// exactEqual compares two values of any type exactly, letting document
// keys differ in order ("test runners MUST permit variation in document key
// order" for documents inside values such as CodeWScope).
func exactEqual(a, b bson.RawValue, depth int) bool {
	if a.Type != b.Type || depth > maxDepth {
		return false
	}
	switch a.Type {
	case bson.TypeEmbeddedDocument:
		return docsEqual(bson.Raw(a.Value), bson.Raw(b.Value), depth+1)
	case bson.TypeArray:
		av, err1 := bson.Raw(a.Value).Values()
		bv, err2 := bson.Raw(b.Value).Values()
		if err1 != nil || err2 != nil || len(av) != len(bv) {
			return false
		}
		for i := range av {
			if !exactEqual(av[i], bv[i], depth+1) {
				return false
			}
		}
		return true
	case bson.TypeCodeWithScope:
		ac, as, ok1 := a.CodeWithScopeOK()
		bc, bs, ok2 := b.CodeWithScopeOK()
		if !ok1 || !ok2 {
			return bytes.Equal(a.Value, b.Value)
		}
		return ac == bc && docsEqual(as, bs, depth+1)
	case bson.TypeDouble:
		// NaN equals NaN here: both files and replies spell it the same.
		af, ok1 := a.DoubleOK()
		bf, ok2 := b.DoubleOK()
		if ok1 && ok2 && af != af && bf != bf {
			return true
		}
		return ok1 && ok2 && af == bf
	}
	return bytes.Equal(a.Value, b.Value)
}

func docsEqual(a, b bson.Raw, depth int) bool {
	ae, err1 := a.Elements()
	be, err2 := b.Elements()
	if err1 != nil || err2 != nil || len(ae) != len(be) {
		return false
	}
	for _, e := range ae {
		k := e.Key()
		bv, err := b.LookupErr(k)
		if err != nil || !exactEqual(e.Value(), bv, depth) {
			return false
		}
	}
	return true
}

// typeNames are the $type aliases, the names the unified format uses.
var typeAliases = map[string]bson.Type{
	"double":              bson.TypeDouble,
	"string":              bson.TypeString,
	"object":              bson.TypeEmbeddedDocument,
	"array":               bson.TypeArray,
	"binData":             bson.TypeBinary,
	"undefined":           bson.TypeUndefined,
	"objectId":            bson.TypeObjectID,
	"bool":                bson.TypeBoolean,
	"date":                bson.TypeDateTime,
	"null":                bson.TypeNull,
	"regex":               bson.TypeRegex,
	"dbPointer":           bson.TypeDBPointer,
	"javascript":          bson.TypeJavaScript,
	"symbol":              bson.TypeSymbol,
	"javascriptWithScope": bson.TypeCodeWithScope,
	"int":                 bson.TypeInt32,
	"timestamp":           bson.TypeTimestamp,
	"long":                bson.TypeInt64,
	"decimal":             bson.TypeDecimal128,
	"minKey":              bson.TypeMinKey,
	"maxKey":              bson.TypeMaxKey,
}

// typeName names a BSON type by its $type alias.
func typeName(t bson.Type) string {
	for name, tt := range typeAliases {
		if tt == t {
			return name
		}
	}
	if t == 0 {
		return "absent"
	}
	return "type 0x" + strings.ToLower(strconv.FormatUint(uint64(t), 16))
}
