package mongotest

import (
	"slices"
	"unicode/utf8"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
	"github.com/mongoscope/mongoscope/mongotest/internal/query"
)

// schema is a compiled $jsonSchema of a collection validator. mongotest
// implements the keywords bsonType, type, enum, minimum, maximum (with
// exclusiveMinimum and exclusiveMaximum), minLength, maxLength, required,
// properties, title and description; a schema using another keyword mongod
// knows is NotImplemented.
type schema struct {
	raw        bson.Raw
	types      []bson.Type // bsonType or type; nil for any
	typeKw     string      // "bsonType" or "type"
	typeSpec   bson.RawValue
	enum       []bson.RawValue
	enumSpec   bson.RawValue
	min, max   *bound
	minLen     *lengthKw
	maxLen     *lengthKw
	required   []string
	reqSpec    bson.RawValue
	properties []property
	title      *bson.RawValue
	desc       *bson.RawValue
}

type bound struct {
	v         bson.RawValue
	exclusive bool
	spec      bson.Raw // {minimum: v[, exclusiveMinimum: b]}
}

type lengthKw struct {
	n    int64
	spec bson.Raw
}

type property struct {
	name string
	s    *schema
}

// schemaKeywords are the keywords mongod's $jsonSchema parser knows.
var schemaKeywords = fieldSet("additionalItems", "additionalProperties", "allOf", "anyOf", "bsonType",
	"dependencies", "description", "encrypt", "encryptMetadata", "enum", "exclusiveMaximum",
	"exclusiveMinimum", "items", "maxItems", "maxLength", "maxProperties", "maximum", "minItems",
	"minLength", "minProperties", "minimum", "multipleOf", "not", "oneOf", "pattern",
	"patternProperties", "properties", "required", "title", "type", "uniqueItems")

// jsonTypes are the type keyword's JSON Schema names.
var jsonTypes = map[string][]bson.Type{
	"object": {bson.TypeEmbeddedDocument}, "array": {bson.TypeArray}, "string": {bson.TypeString},
	"boolean": {bson.TypeBoolean}, "null": {bson.TypeNull},
	"number": {bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128},
}

func compileSchema(raw bson.Raw) (*schema, error) {
	s := &schema{raw: raw}
	kw := map[string]bson.RawValue{}
	it := raw.Iter()
	for it.Next() {
		k := it.Key()
		if !schemaKeywords[k] {
			return nil, newError(mongoerr.FailedToParse, "Unknown $jsonSchema keyword: %s", k)
		}
		if _, dup := kw[k]; dup {
			return nil, newError(mongoerr.FailedToParse, "Duplicate $jsonSchema keyword: %s", k)
		}
		kw[k] = it.Value()
	}
	for k := range kw {
		switch k {
		case "bsonType", "type", "enum", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
			"minLength", "maxLength", "required", "properties", "title", "description":
		default:
			return nil, newError(mongoerr.NotImplemented, "mongotest does not support the $jsonSchema keyword '%s'", k)
		}
	}
	for _, k := range []string{"title", "description"} {
		if v, ok := kw[k]; ok {
			if v.Type != bson.TypeString {
				return nil, newError(mongoerr.TypeMismatch, "$jsonSchema keyword '%s' must be of type string", k)
			}
			if k == "title" {
				s.title = &v
			} else {
				s.desc = &v
			}
		}
	}
	_, hasType := kw["type"]
	_, hasBSONType := kw["bsonType"]
	if hasType && hasBSONType {
		return nil, newError(mongoerr.FailedToParse, "Cannot specify both $jsonSchema keywords 'type' and 'bsonType'")
	}
	for _, k := range []string{"type", "bsonType"} {
		v, ok := kw[k]
		if !ok {
			continue
		}
		s.typeKw, s.typeSpec = k, v
		var names []string
		switch v.Type {
		case bson.TypeString:
			names = []string{v.StringValue()}
		case bson.TypeArray:
			vals, _ := v.Array().Values()
			for _, e := range vals {
				n, ok := e.StringValueOK()
				if !ok {
					return nil, newError(mongoerr.TypeMismatch, "$jsonSchema keyword '%s' array elements must be strings", k)
				}
				names = append(names, n)
			}
		default:
			return nil, newError(mongoerr.TypeMismatch, "$jsonSchema keyword '%s' must be either a string or an array of strings", k)
		}
		for _, n := range names {
			if n == "integer" {
				return nil, newError(mongoerr.FailedToParse, "$jsonSchema type 'integer' is not currently supported.")
			}
			var ts []bson.Type
			if k == "type" {
				ts = jsonTypes[n]
			} else {
				ts = bsonTypeAlias(n)
			}
			if ts == nil {
				return nil, newError(mongoerr.BadValue, "Unknown type name alias: %s", n)
			}
			s.types = append(s.types, ts...)
		}
	}
	if v, ok := kw["enum"]; ok {
		arr, ok := v.ArrayOK()
		if !ok {
			return nil, newError(mongoerr.TypeMismatch, "$jsonSchema keyword 'enum' must be an array")
		}
		s.enum, _ = arr.Values()
		if len(s.enum) == 0 {
			return nil, newError(mongoerr.FailedToParse, "$jsonSchema keyword 'enum' cannot be an empty array")
		}
		s.enumSpec = v
	}
	var err error
	if s.min, err = compileBound(kw, "minimum", "exclusiveMinimum"); err != nil {
		return nil, err
	}
	if s.max, err = compileBound(kw, "maximum", "exclusiveMaximum"); err != nil {
		return nil, err
	}
	if s.minLen, err = compileLength(kw, "minLength"); err != nil {
		return nil, err
	}
	if s.maxLen, err = compileLength(kw, "maxLength"); err != nil {
		return nil, err
	}
	if v, ok := kw["required"]; ok {
		arr, ok := v.ArrayOK()
		if !ok {
			return nil, newError(mongoerr.TypeMismatch, "$jsonSchema keyword 'required' must be an array, but found an element of type %s", typeName(v.Type))
		}
		vals, _ := arr.Values()
		if len(vals) == 0 {
			return nil, newError(mongoerr.FailedToParse, "$jsonSchema keyword 'required' cannot be an empty array")
		}
		for _, e := range vals {
			n, ok := e.StringValueOK()
			if !ok {
				return nil, newError(mongoerr.TypeMismatch, "$jsonSchema keyword 'required' must be an array of strings, but found an element of type: %s", typeName(e.Type))
			}
			if slices.Contains(s.required, n) {
				return nil, newError(mongoerr.FailedToParse, "$jsonSchema keyword 'required' array cannot contain duplicate values")
			}
			s.required = append(s.required, n)
		}
		s.reqSpec = v
	}
	if v, ok := kw["properties"]; ok {
		d, ok := v.DocumentOK()
		if !ok {
			return nil, newError(mongoerr.TypeMismatch, "$jsonSchema keyword 'properties' must be an object")
		}
		pi := d.Iter()
		for pi.Next() {
			sub, ok := pi.Value().DocumentOK()
			if !ok {
				return nil, newError(mongoerr.TypeMismatch, "Nested schema for $jsonSchema property '%s' must be an object", pi.Key())
			}
			ps, err := compileSchema(sub)
			if err != nil {
				return nil, err
			}
			s.properties = append(s.properties, property{pi.Key(), ps})
		}
	}
	return s, nil
}

func bsonTypeAlias(n string) []bson.Type {
	if n == "number" {
		return jsonTypes["number"]
	}
	for t := bson.Type(1); t <= 0x13; t++ {
		if mongoerr.TypeName(t) == n {
			return []bson.Type{t}
		}
	}
	switch n {
	case "minKey":
		return []bson.Type{bson.TypeMinKey}
	case "maxKey":
		return []bson.Type{bson.TypeMaxKey}
	}
	return nil
}

func isNumber(v bson.RawValue) bool {
	return slices.Contains(jsonTypes["number"], v.Type)
}

func compileBound(kw map[string]bson.RawValue, name, excl string) (*bound, error) {
	v, ok := kw[name]
	ev, hasExcl := kw[excl]
	if !ok {
		if hasExcl {
			return nil, newError(mongoerr.FailedToParse, "$jsonSchema keyword '%s' must be a present if %s is present", name, excl)
		}
		return nil, nil
	}
	if !isNumber(v) {
		return nil, newError(mongoerr.TypeMismatch, "$jsonSchema keyword '%s' must be a number", name)
	}
	b := &bound{v: v}
	start, spec := bson.AppendDocumentStart(nil)
	spec = bson.AppendValueElement(spec, name, v)
	if hasExcl {
		e, ok := ev.BooleanOK()
		if !ok {
			return nil, newError(mongoerr.TypeMismatch, "$jsonSchema keyword '%s' must be a boolean", excl)
		}
		b.exclusive = e
		spec = bson.AppendValueElement(spec, excl, ev)
	}
	b.spec, _ = bson.AppendDocumentEnd(spec, start)
	return b, nil
}

func compileLength(kw map[string]bson.RawValue, name string) (*lengthKw, error) {
	v, ok := kw[name]
	if !ok {
		return nil, nil
	}
	n, ok := v.AsInt64OK()
	if !ok || !isNumber(v) {
		return nil, newError(mongoerr.TypeMismatch, "$jsonSchema keyword '%s' must be a number", name)
	}
	if n < 0 {
		return nil, newError(mongoerr.FailedToParse, "$jsonSchema keyword '%s' must be a non-negative integral number", name)
	}
	return &lengthKw{n: n, spec: single(name, v)}, nil
}

// rules returns the details of each rule of s that v (a present value)
// fails, in mongod's order: scalar keywords, properties, required, enum,
// and the type last (at the top level the type must allow objects).
func (s *schema) rules(v bson.RawValue, top bool) []bson.Raw {
	var out []bson.Raw
	leaf := func(op string, spec bson.Raw, reason string, extra func(b []byte) []byte) {
		start, b := bson.AppendDocumentStart(nil)
		b = bson.AppendStringElement(b, "operatorName", op)
		b = bson.AppendDocumentElement(b, "specifiedAs", spec)
		b = bson.AppendStringElement(b, "reason", reason)
		b = bson.AppendValueElement(b, "consideredValue", v)
		if extra != nil {
			b = extra(b)
		}
		b, _ = bson.AppendDocumentEnd(b, start)
		out = append(out, b)
	}
	if isNumber(v) {
		if s.min != nil {
			c := query.Compare(v, s.min.v)
			if c < 0 || (c == 0 && s.min.exclusive) {
				leaf("minimum", s.min.spec, "comparison failed", nil)
			}
		}
		if s.max != nil {
			c := query.Compare(v, s.max.v)
			if c > 0 || (c == 0 && s.max.exclusive) {
				leaf("maximum", s.max.spec, "comparison failed", nil)
			}
		}
	}
	if str, ok := v.StringValueOK(); ok {
		n := int64(utf8.RuneCountInString(str))
		if s.minLen != nil && n < s.minLen.n {
			leaf("minLength", s.minLen.spec, "specified string length was not satisfied", nil)
		}
		if s.maxLen != nil && n > s.maxLen.n {
			leaf("maxLength", s.maxLen.spec, "specified string length was not satisfied", nil)
		}
	}
	if doc, ok := v.DocumentOK(); ok {
		if r := s.propertiesRule(doc); r != nil {
			out = append(out, r)
		}
		if r := s.requiredRule(doc); r != nil {
			out = append(out, r)
		}
	}
	if s.enum != nil && !slices.ContainsFunc(s.enum, func(e bson.RawValue) bool { return query.Equal(e, v) }) {
		leaf("enum", single("enum", s.enumSpec), "value was not found in enum", nil)
	}
	if !top && s.types != nil && !slices.Contains(s.types, v.Type) {
		leaf(s.typeKw, single(s.typeKw, s.typeSpec), "type did not match", func(b []byte) []byte {
			return bson.AppendStringElement(b, "consideredType", mongoerr.TypeName(v.Type))
		})
	}
	return out
}

func (s *schema) requiredRule(doc bson.Raw) bson.Raw {
	var missing []string
	for _, r := range s.required {
		if _, err := doc.LookupErr(r); err != nil {
			missing = append(missing, r)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	slices.Sort(missing)
	start, b := bson.AppendDocumentStart(nil)
	b = bson.AppendStringElement(b, "operatorName", "required")
	b = bson.AppendDocumentElement(b, "specifiedAs", single("required", s.reqSpec))
	as, a := bson.AppendArrayElementStart(b, "missingProperties")
	for i, m := range missing {
		a = bson.AppendStringElement(a, bson.ArrayKey(i), m)
	}
	b, _ = bson.AppendDocumentEnd(a, as)
	b, _ = bson.AppendDocumentEnd(b, start)
	return b
}

func (s *schema) propertiesRule(doc bson.Raw) bson.Raw {
	start, b := bson.AppendDocumentStart(nil)
	b = bson.AppendStringElement(b, "operatorName", "properties")
	as, a := bson.AppendArrayElementStart(b, "propertiesNotSatisfied")
	n := 0
	for _, p := range s.properties {
		v, err := doc.LookupErr(p.name)
		if err != nil {
			continue
		}
		rules := p.s.rules(v, false)
		if len(rules) == 0 {
			continue
		}
		ps, e := bson.AppendDocumentElementStart(a, bson.ArrayKey(n))
		e = bson.AppendStringElement(e, "propertyName", p.name)
		e = p.s.appendAnnotations(e)
		ds, dd := bson.AppendArrayElementStart(e, "details")
		for i, r := range rules {
			dd = bson.AppendDocumentElement(dd, bson.ArrayKey(i), r)
		}
		e, _ = bson.AppendDocumentEnd(dd, ds)
		a, _ = bson.AppendDocumentEnd(e, ps)
		n++
	}
	if n == 0 {
		return nil
	}
	b, _ = bson.AppendDocumentEnd(a, as)
	b, _ = bson.AppendDocumentEnd(b, start)
	return b
}

func (s *schema) appendAnnotations(b []byte) []byte {
	if s.title != nil {
		b = bson.AppendValueElement(b, "title", *s.title)
	}
	if s.desc != nil {
		b = bson.AppendValueElement(b, "description", *s.desc)
	}
	return b
}

// matchesDoc reports whether a document satisfies the top-level schema.
// A top-level type that does not allow objects matches nothing.
func (s *schema) matchesDoc(doc bson.Raw) bool {
	if s.types != nil && !slices.Contains(s.types, bson.TypeEmbeddedDocument) {
		return false
	}
	return len(s.rules(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}, true)) == 0
}

// details is the errInfo details of a document that fails the schema.
func (s *schema) details(doc bson.Raw) bson.Raw {
	start, b := bson.AppendDocumentStart(nil)
	b = bson.AppendStringElement(b, "operatorName", "$jsonSchema")
	if s.types != nil && !slices.Contains(s.types, bson.TypeEmbeddedDocument) {
		b = bson.AppendDocumentElement(b, "specifiedAs", single("$jsonSchema", bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: s.raw}))
		b = bson.AppendStringElement(b, "reason", "expression always evaluates to false")
		b, _ = bson.AppendDocumentEnd(b, start)
		return b
	}
	b = s.appendAnnotations(b)
	as, a := bson.AppendArrayElementStart(b, "schemaRulesNotSatisfied")
	for i, r := range s.rules(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}, true) {
		a = bson.AppendDocumentElement(a, bson.ArrayKey(i), r)
	}
	b, _ = bson.AppendDocumentEnd(a, as)
	b, _ = bson.AppendDocumentEnd(b, start)
	return b
}
