package store

import (
	"math"
	"strconv"
	"strings"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/collation"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// IDIndexName is the name of the _id index every collection has.
const IDIndexName = "_id_"

// maxIndexes is mongod's limit of indexes per collection, _id_ included.
const maxIndexes = 64

// maxKeysPerDoc bounds the keys one document may produce in one index, so
// a compound index over a few large arrays cannot exhaust memory.
const maxKeysPerDoc = 100000

// IndexSpec describes one index as createIndexes gives it and listIndexes
// shows it.
type IndexSpec struct {
	// Name is the index name; ParseIndexSpec fills in mongod's default
	// ("a_1_b_-1") when the specification has none.
	Name string
	// Key is the key pattern, such as {a: 1, "b.c": -1}.
	Key bson.Raw
	// Unique indexes reject a second document with an equal key.
	Unique bool
	// Sparse indexes skip documents that have none of the key's fields.
	Sparse bool
	// Hidden is listed but has no effect here (queries never use indexes).
	Hidden bool
	// PartialFilterExpression is listed as given. A unique partial index
	// also needs PartialFilter, which decides whether a document belongs in
	// the index; CreateIndexes refuses one without it. PartialFilter runs
	// under the collection's lock and must not call the collection.
	PartialFilterExpression bson.Raw
	PartialFilter           func(doc bson.Raw) bool
	// ExpireAfterSeconds is listed but never enforced: documents do not
	// expire. Nil when the index is not a TTL index.
	ExpireAfterSeconds *int64
	// Version is the index version "v", 2 unless given.
	Version int32
	// Collation is the index's collation with mongod's defaults filled in
	// (nil for simple). It is listed, tells apart indexes on one key
	// pattern, and a unique index compares strings by it.
	Collation bson.Raw
	// Clustered marks a clustered collection's cluster key, which
	// listIndexes shows in place of the _id index.
	Clustered bool
}

// Raw returns the index as listIndexes shows it: {v, key, name, ...}.
func (s IndexSpec) Raw() bson.Raw {
	start, b := bson.AppendDocumentStart(nil)
	v := s.Version
	if v == 0 {
		v = 2
	}
	b = bson.AppendInt32Element(b, "v", v)
	b = bson.AppendDocumentElement(b, "key", s.Key)
	b = bson.AppendStringElement(b, "name", s.Name)
	if s.Unique {
		b = bson.AppendBooleanElement(b, "unique", true)
	}
	if s.Clustered {
		b = bson.AppendBooleanElement(b, "clustered", true)
	}
	if s.Sparse {
		b = bson.AppendBooleanElement(b, "sparse", true)
	}
	if s.Hidden {
		b = bson.AppendBooleanElement(b, "hidden", true)
	}
	if s.PartialFilterExpression != nil {
		b = bson.AppendDocumentElement(b, "partialFilterExpression", s.PartialFilterExpression)
	}
	if s.Collation != nil {
		b = bson.AppendDocumentElement(b, "collation", s.Collation)
	}
	if s.ExpireAfterSeconds != nil {
		if n := *s.ExpireAfterSeconds; n >= math.MinInt32 && n <= math.MaxInt32 {
			b = bson.AppendInt32Element(b, "expireAfterSeconds", int32(n))
		} else {
			b = bson.AppendInt64Element(b, "expireAfterSeconds", n)
		}
	}
	b, _ = bson.AppendDocumentEnd(b, start)
	return b
}

// unsupportedIndexOptions are valid in mongod but not implemented here;
// they fail loudly rather than being ignored.
var unsupportedIndexOptions = map[string]bool{
	"weights": true, "default_language": true, "language_override": true,
	"textIndexVersion": true, "2dsphereIndexVersion": true, "bits": true, "min": true, "max": true,
	"bucketSize": true, "wildcardProjection": true, "storageEngine": true, "clustered": true,
	"prepareUnique": true, "columnstoreProjection": true,
}

// ParseIndexSpec parses one element of createIndexes' indexes array.
// Options mongod knows but this store does not implement (collation, text
// and geo options, ...) fail with NotImplemented; unknown fields fail with
// InvalidIndexSpecificationOption (197), as in mongod.
func ParseIndexSpec(spec bson.Raw) (IndexSpec, error) {
	var s IndexSpec
	if err := spec.Validate(); err != nil {
		return s, newError(codeInvalidBSON, "index specification is not valid BSON: %v", err)
	}
	haveKey, haveName := false, false
	it := spec.Iter()
	for it.Next() {
		k, v := it.Key(), it.Value()
		switch k {
		case "key":
			doc, ok := v.DocumentOK()
			if !ok {
				return s, mongoerr.New(mongoerr.TypeMismatch, "The field 'key' must be an object, but got %s", typeName(v.Type))
			}
			s.Key, haveKey = doc, true
		case "name":
			name, ok := v.StringValueOK()
			if !ok {
				return s, mongoerr.New(mongoerr.TypeMismatch, "The field 'name' must be a string, but got %s", typeName(v.Type))
			}
			s.Name, haveName = name, true
		case "unique", "sparse", "hidden", "background":
			b, ok := truthy(v)
			if !ok {
				return s, mongoerr.New(mongoerr.TypeMismatch, "The field '%s' must be a boolean or a number, but got %s", k, typeName(v.Type))
			}
			switch k {
			case "unique":
				s.Unique = b
			case "sparse":
				s.Sparse = b
			case "hidden":
				s.Hidden = b
			}
		case "partialFilterExpression":
			doc, ok := v.DocumentOK()
			if !ok {
				return s, mongoerr.New(mongoerr.TypeMismatch, "The field 'partialFilterExpression' must be an object, but got %s", typeName(v.Type))
			}
			s.PartialFilterExpression = doc
		case "expireAfterSeconds":
			f, ok := v.AsFloat64OK()
			if !ok || f != f {
				return s, newError(codeCannotCreateIndex, "TTL index 'expireAfterSeconds' option must be numeric, but received a type of '%s'", typeName(v.Type))
			}
			if f < 0 || f > math.MaxInt32 {
				return s, newError(codeCannotCreateIndex, "TTL index 'expireAfterSeconds' option must be within an acceptable range, try 0-%d", math.MaxInt32)
			}
			n := int64(f)
			s.ExpireAfterSeconds = &n
		case "v":
			f, ok := v.AsFloat64OK()
			if !ok || (f != 1 && f != 2) {
				return s, newError(codeCannotCreateIndex, "Invalid index specification %s; index version v: %s is not supported", formatDoc(nil, spec, 0), formatValue(nil, v, 0))
			}
			s.Version = int32(f)
		case "ns":
			// Old clients send the namespace; mongod ignores it.
		case "collation":
			coll, err := collation.Parse(v)
			if err != nil {
				return s, err
			}
			s.Collation = coll.Spec()
		default:
			if unsupportedIndexOptions[k] {
				return s, mongoerr.New(mongoerr.NotImplemented, "index option '%s' is not supported by mongotest", k)
			}
			return s, newError(codeInvalidIndexSpecificationOption, "The field '%s' is not valid for an index specification. Specification: %s", k, formatDoc(nil, spec, 0))
		}
	}
	if !haveKey {
		return s, mongoerr.New(mongoerr.FailedToParse, "The 'key' field is a required property of an index specification")
	}
	if _, err := parseKeyPattern(s.Key); err != nil {
		return s, err
	}
	if !haveName {
		s.Name = DefaultIndexName(s.Key)
	}
	return s, nil
}

// truthy reads a boolean option the way mongod does: a bool, or a number
// that is true when non-zero.
func truthy(v bson.RawValue) (bool, bool) {
	if b, ok := v.BooleanOK(); ok {
		return b, true
	}
	if f, ok := v.AsFloat64OK(); ok {
		return f != 0, true
	}
	return false, false
}

// DefaultIndexName returns the name mongod and the drivers give an index
// with key pattern key: field_direction pairs joined by "_" ("a_1_b_-1").
func DefaultIndexName(key bson.Raw) string {
	var b []byte
	it := key.Iter()
	for it.Next() {
		if len(b) > 0 {
			b = append(b, '_')
		}
		b = append(b, it.KeyBytes()...)
		b = append(b, '_')
		v := it.Value()
		switch v.Type {
		case bson.TypeString:
			b = append(b, v.StringValue()...)
		case bson.TypeDouble:
			b = strconv.AppendFloat(b, v.Double(), 'g', -1, 64)
		default:
			if n, ok := v.AsInt64OK(); ok {
				b = strconv.AppendInt(b, n, 10)
			} else {
				b = formatValue(b, v, 0)
			}
		}
	}
	return string(b)
}

// indexField is one field of a key pattern.
type indexField struct {
	path  string
	parts []string
}

// specialIndexTypes are the string key values mongod accepts (text, geo,
// hashed indexes); none is implemented here.
var specialIndexTypes = map[string]bool{
	"text": true, "2d": true, "2dsphere": true, "2dsphere_bucket": true, "hashed": true, "geoHaystack": true, "columnstore": true,
}

// parseKeyPattern checks a key pattern and splits its paths.
func parseKeyPattern(key bson.Raw) ([]indexField, error) {
	var fields []indexField
	it := key.Iter()
	for it.Next() {
		path, v := it.Key(), it.Value()
		switch {
		case path == "":
			return nil, newError(codeCannotCreateIndex, "Index keys cannot be an empty field.")
		case path == "$**" || strings.HasSuffix(path, ".$**"):
			return nil, mongoerr.New(mongoerr.NotImplemented, "wildcard indexes are not supported by mongotest")
		case path[0] == '$':
			return nil, newError(codeCannotCreateIndex, "Index key contains an illegal field name: field name starts with '$'.")
		}
		parts := strings.Split(path, ".")
		for _, p := range parts {
			if p == "" {
				return nil, newError(codeCannotCreateIndex, "Index keys cannot contain an empty field: '%s'.", path)
			}
		}
		switch v.Type {
		case bson.TypeString:
			t := v.StringValue()
			if specialIndexTypes[t] {
				return nil, mongoerr.New(mongoerr.NotImplemented, "index type '%s' (field '%s') is not supported by mongotest", t, path)
			}
			return nil, newError(codeCannotCreateIndex, "Unknown index plugin '%s'", t)
		case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128:
			f, ok := v.AsFloat64OK()
			if v.Type == bson.TypeDecimal128 {
				d := v.Decimal128()
				ok, f = !d.IsNaN(), 1
				if d.IsZero() {
					f = 0
				}
			}
			if !ok || f == 0 || f != f {
				return nil, newError(codeCannotCreateIndex, "Values in the index key pattern can't be 0 or NaN (field '%s')", path)
			}
		default:
			return nil, newError(codeCannotCreateIndex, "Values in v:2 index key pattern cannot be of type %s. Only numbers > 0, numbers < 0, and strings are allowed.", typeName(v.Type))
		}
		fields = append(fields, indexField{path: path, parts: parts})
	}
	if err := it.Err(); err != nil {
		return nil, newError(codeInvalidBSON, "index key pattern is not valid BSON: %v", err)
	}
	if len(fields) == 0 {
		return nil, newError(codeCannotCreateIndex, "Index keys cannot be empty.")
	}
	if len(fields) > 32 {
		return nil, newError(codeCannotCreateIndex, "Index key pattern has %d fields; the limit is 32", len(fields))
	}
	return fields, nil
}

// index is a secondary index of one collection.
type index struct {
	spec     IndexSpec
	fields   []indexField
	identity string               // Key of the key pattern, for conflict checks
	entries  map[string]*record   // unique indexes only: key to owner
	coll     *collation.Collation // strings key by its sort keys; nil: bytes
}

// needsKeys reports whether inserts must compute this index's keys: to
// enforce uniqueness, or to reject parallel arrays in a compound index.
func (ix *index) needsKeys() bool { return ix.entries != nil || len(ix.fields) > 1 }

var (
	nullValue      = bson.RawValue{Type: bson.TypeNull}
	undefinedValue = bson.RawValue{Type: bson.TypeUndefined}
)

// indexKey is one key a document produces, with the values behind it for
// error messages.
type indexKey struct {
	key  string
	vals []bson.RawValue
}

// fieldWalk collects the values one key path reaches in a document.
type fieldWalk struct {
	vals    []bson.RawValue
	arrays  []string // paths of the arrays the walk went through
	present bool     // a value (not just a missing field) was found
}

func (w *fieldWalk) markArray(parts []string) {
	p := strings.Join(parts, ".")
	for _, a := range w.arrays {
		if a == p {
			return
		}
	}
	w.arrays = append(w.arrays, p)
}

// walk follows parts[i:] from cur, expanding arrays as mongod's index key
// generation does: an array met along the path contributes its document
// elements, an array at the end contributes each element (an empty one
// indexes as undefined), and a missing field indexes as null.
func (w *fieldWalk) walk(cur bson.RawValue, parts []string, i, depth int) {
	if depth > bson.MaxDepth {
		w.vals = append(w.vals, nullValue)
		return
	}
	if i == len(parts) {
		w.present = true
		if arr, ok := cur.ArrayOK(); ok {
			w.markArray(parts)
			n := 0
			it := arr.Iter()
			for it.Next() {
				w.vals = append(w.vals, it.Value())
				n++
			}
			if n == 0 {
				w.vals = append(w.vals, undefinedValue)
			}
			return
		}
		w.vals = append(w.vals, cur)
		return
	}
	switch cur.Type {
	case bson.TypeEmbeddedDocument:
		child, err := cur.Document().LookupErr(parts[i])
		if err != nil {
			w.vals = append(w.vals, nullValue)
			return
		}
		w.walk(child, parts, i+1, depth+1)
	case bson.TypeArray:
		arr := cur.Array()
		if isArrayIndex(parts[i]) {
			if elem, err := arr.LookupErr(parts[i]); err == nil {
				w.walk(elem, parts, i+1, depth+1)
				return
			}
		}
		w.markArray(parts[:i])
		before := len(w.vals)
		it := arr.Iter()
		for it.Next() {
			if e := it.Value(); e.Type == bson.TypeEmbeddedDocument {
				w.walk(e, parts, i, depth+1)
			}
		}
		if len(w.vals) == before {
			w.vals = append(w.vals, nullValue)
		}
	default:
		w.vals = append(w.vals, nullValue)
	}
}

func isArrayIndex(s string) bool {
	if s == "" || len(s) > 9 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// keys returns the distinct keys doc produces in ix; skip is true when the
// document is not in the index (sparse and without the fields, or outside
// the partial filter).
func (ix *index) keys(doc bson.Raw) (keys []indexKey, skip bool, err error) {
	if ix.spec.PartialFilter != nil && !ix.spec.PartialFilter(doc) {
		return nil, true, nil
	}
	root := bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}
	walks := make([]fieldWalk, len(ix.fields))
	present := false
	for i, f := range ix.fields {
		walks[i].walk(root, f.parts, 0, 0)
		present = present || walks[i].present
	}
	if ix.spec.Sparse && !present {
		return nil, true, nil
	}
	if len(walks) > 1 {
		if err := checkParallel(ix, walks); err != nil {
			return nil, false, err
		}
	}
	// Distinct values per field, then their cartesian product.
	per := make([][]fieldValue, len(walks))
	total := 1
	for i := range walks {
		per[i] = distinct(walks[i].vals, ix.coll)
		total *= len(per[i])
		if total > maxKeysPerDoc {
			return nil, false, newError(codeCannotCreateIndex, "a document produces more than %d keys for index %s", maxKeysPerDoc, ix.spec.Name)
		}
	}
	keys = make([]indexKey, 0, total)
	if len(per) == 1 {
		for _, fv := range per[0] {
			keys = append(keys, indexKey{key: fv.key, vals: []bson.RawValue{fv.v}})
		}
		return keys, false, nil
	}
	combo := make([]int, len(per))
	for {
		vals := make([]bson.RawValue, len(per))
		n := 0
		for i, j := range combo {
			n += len(per[i][j].key)
		}
		kb := make([]byte, 0, n)
		for i, j := range combo {
			vals[i] = per[i][j].v
			kb = append(kb, per[i][j].key...)
		}
		keys = append(keys, indexKey{key: string(kb), vals: vals})
		i := len(combo) - 1
		for ; i >= 0; i-- {
			combo[i]++
			if combo[i] < len(per[i]) {
				break
			}
			combo[i] = 0
		}
		if i < 0 {
			return keys, false, nil
		}
	}
}

// fieldValue is one value a key path reached, with its key.
type fieldValue struct {
	v   bson.RawValue
	key string
}

// distinct keys vals and drops repeated keys (an array holding a value
// twice indexes it once).
func distinct(vals []bson.RawValue, coll *collation.Collation) []fieldValue {
	out := make([]fieldValue, 0, len(vals))
	var seen map[string]bool
	if len(vals) > 16 {
		seen = make(map[string]bool, len(vals))
	}
outer:
	for _, v := range vals {
		k := Key(collateValue(v, coll))
		if seen != nil {
			if seen[k] {
				continue
			}
			seen[k] = true
		} else {
			for _, o := range out {
				if o.key == k {
					continue outer
				}
			}
		}
		out = append(out, fieldValue{v: v, key: k})
	}
	return out
}

// checkParallel rejects a document in which two fields of a compound index
// go through different arrays, as mongod does.
func checkParallel(ix *index, walks []fieldWalk) error {
	for i := range walks {
		for j := i + 1; j < len(walks); j++ {
			for _, a := range walks[i].arrays {
				for _, b := range walks[j].arrays {
					if !pathPrefix(a, b) && !pathPrefix(b, a) {
						return newError(codeCannotIndexParallelArrays, "cannot index parallel arrays [%s] [%s]", a, b)
					}
				}
			}
		}
	}
	return nil
}

// pathPrefix reports whether dotted path p is q or one of its ancestors.
func pathPrefix(p, q string) bool {
	return p == q || (strings.HasPrefix(q, p) && q[len(p)] == '.')
}

// keyValueDoc builds the keyValue of a duplicate key error: the index's
// field names with the values that collided.
func (ix *index) keyValueDoc(vals []bson.RawValue) bson.Raw {
	start, b := bson.AppendDocumentStart(nil)
	for i, f := range ix.fields {
		if i < len(vals) {
			b = bson.AppendValueElement(b, f.path, vals[i])
		}
	}
	b, _ = bson.AppendDocumentEnd(b, start)
	return b
}

// sameOptions reports whether two specs with the same key pattern would
// build the same index.
func sameOptions(a, b IndexSpec) bool {
	if a.Unique != b.Unique || a.Sparse != b.Sparse || string(a.Collation) != string(b.Collation) {
		return false
	}
	if (a.ExpireAfterSeconds == nil) != (b.ExpireAfterSeconds == nil) ||
		(a.ExpireAfterSeconds != nil && *a.ExpireAfterSeconds != *b.ExpireAfterSeconds) {
		return false
	}
	return samePartial(a, b)
}

func samePartial(a, b IndexSpec) bool {
	if (a.PartialFilterExpression == nil) != (b.PartialFilterExpression == nil) {
		return false
	}
	return a.PartialFilterExpression == nil || docKey(a.PartialFilterExpression) == docKey(b.PartialFilterExpression)
}

func docKey(doc bson.Raw) string {
	return Key(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc})
}

// typeName is the name mongod gives a BSON type in messages.
func typeName(t bson.Type) string { return mongoerr.TypeName(t) }

// collateValue returns v with every string in it (in documents and arrays
// too) replaced by its sort key under coll, so that keys of values the
// collation deems equal are equal; with a nil coll, v itself.
func collateValue(v bson.RawValue, coll *collation.Collation) bson.RawValue {
	if coll == nil {
		return v
	}
	switch v.Type {
	case bson.TypeString, bson.TypeSymbol:
		s, ok := stringBytes(v.Value)
		if !ok {
			return v
		}
		return bson.RawValue{Type: bson.TypeString, Value: bson.AppendString(nil, string(coll.SortKey(string(s))))}
	case bson.TypeEmbeddedDocument, bson.TypeArray:
		start, b := bson.AppendDocumentStart(nil)
		it := bson.Raw(v.Value).Iter()
		for it.Next() {
			b = bson.AppendValueElement(b, it.Key(), collateValue(it.Value(), coll))
		}
		out, err := bson.AppendDocumentEnd(b, start)
		if err != nil || it.Err() != nil {
			return v
		}
		return bson.RawValue{Type: v.Type, Value: out}
	}
	return v
}
