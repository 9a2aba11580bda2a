package mongotest

import (
	"errors"
	"slices"
	"strings"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/agg"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
	"github.com/mongoscope/mongoscope/mongotest/internal/store"
)

// validation is a collection's document validation: its validator (a
// query filter, $expr included), validationLevel and validationAction,
// as create and collMod set them.
type validation struct {
	raw    bson.Raw
	match  *validator
	level  string // "strict" (the default) or "moderate"; "off" has no validation
	action string // "error" (the default), "warn" or "errorAndLog"
}

// validator is a compiled collection validator: a top-level $jsonSchema
// (evaluated by jsonschema.go) and the rest of the filter (run as a
// $match, so $expr works).
type validator struct {
	rest   *agg.Pipeline // nil when the filter is only a $jsonSchema
	schema *schema
}

// compileValidator checks a validator as create and collMod do: a query
// filter mongotest can run, with at most a top-level $jsonSchema of the
// keywords jsonschema.go implements.
func compileValidator(v bson.Raw) (*validator, error) {
	out := &validator{}
	start, rest := bson.AppendDocumentStart(nil)
	it := v.Iter()
	for it.Next() {
		if it.Key() != "$jsonSchema" {
			rest = append(rest, it.Element()...)
			continue
		}
		d, ok := it.Value().DocumentOK()
		if !ok {
			return nil, newError(mongoerr.TypeMismatch, "$jsonSchema must be an object")
		}
		var err error
		if out.schema, err = compileSchema(d); err != nil {
			return nil, err
		}
	}
	restDoc, err := bson.AppendDocumentEnd(rest, start)
	if err != nil {
		return nil, newError(10334, "validator is too large")
	}
	if out.schema == nil || len(restDoc) > 5 {
		ms, m := bson.AppendDocumentStart(nil)
		m = bson.AppendDocumentElement(m, "$match", restDoc)
		stage, _ := bson.AppendDocumentEnd(m, ms)
		if out.rest, err = agg.Compile([]bson.Raw{stage}, agg.Options{}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (v *validator) matches(doc bson.Raw) (bool, error) {
	if v.schema != nil && !v.schema.matchesDoc(doc) {
		return false, nil
	}
	if v.rest == nil {
		return true, nil
	}
	out, err := v.rest.Run(func(yield func(bson.Raw) bool) { yield(doc) })
	if err != nil {
		return false, err
	}
	return len(out) == 1, nil
}

// collValidation returns c's validation, or nil when writes to c are not
// validated (no validator, an empty one, or validationLevel off).
func collValidation(c *store.Collection) (*validation, error) {
	extra := c.Options().Extra
	if extra == nil {
		return nil, nil
	}
	raw, ok := extra.Lookup("validator").DocumentOK()
	if !ok || len(raw) <= 5 {
		return nil, nil
	}
	v := &validation{raw: raw, level: "strict", action: "error"}
	if l, ok := extra.Lookup("validationLevel").StringValueOK(); ok {
		v.level = l
	}
	if a, ok := extra.Lookup("validationAction").StringValueOK(); ok {
		v.action = a
	}
	if v.level == "off" {
		return nil, nil
	}
	var err error
	if v.match, err = compileValidator(raw); err != nil {
		return nil, err
	}
	return v, nil
}

// writeValidation returns the validation a write command applies to c:
// none with bypassDocumentValidation.
func writeValidation(r *Request, c *store.Collection) (*validation, error) {
	if r.Body.Lookup("bypassDocumentValidation").Boolean() {
		return nil, nil
	}
	return collValidation(c)
}

func (v *validation) matches(doc bson.Raw) (bool, error) { return v.match.matches(doc) }

// check validates doc, the document an insert or update would store; old
// is the document an update replaces (nil for inserts and upserts). Under
// validationLevel moderate an update of a document that already failed
// the validator is not checked. A failure is mongod's
// DocumentValidationFailure with errInfo; with validationAction warn it
// is no error.
func (v *validation) check(doc, old bson.Raw) error {
	if v == nil {
		return nil
	}
	ok, err := v.matches(doc)
	if err != nil || ok {
		return err
	}
	if old != nil && v.level == "moderate" {
		if oldOK, err := v.matches(old); err == nil && !oldOK {
			return nil
		}
	}
	if v.action == "warn" {
		return nil
	}
	return &validationError{
		err:  newError(mongoerr.DocumentValidationFailure, "Document failed validation"),
		info: v.errInfo(doc),
	}
}

// validationError is a DocumentValidationFailure with its errInfo.
type validationError struct {
	err  *mongoerr.Error
	info bson.Raw
}

func (e *validationError) Error() string { return e.err.Error() }
func (e *validationError) Unwrap() error { return e.err }

// appendErrInfo appends errInfo when err is a document validation failure.
func appendErrInfo(dst []byte, err error) []byte {
	var ve *validationError
	if errors.As(err, &ve) && ve.info != nil {
		dst = bson.AppendDocumentElement(dst, "errInfo", ve.info)
	}
	return dst
}

// errInfo is {failingDocumentId, details}. The details follow mongod's
// doc_validation_error for the validators whose explanation mongotest
// builds exactly: top-level field predicates ($eq, $gt, $gte, $lt, $lte,
// $in, $type, $exists: true), $expr and $jsonSchema, several of them
// under an implicit $and. Any other predicate is described by its operatorName (and
// specifiedAs for a field predicate) only.
func (v *validation) errInfo(doc bson.Raw) bson.Raw {
	start, b := bson.AppendDocumentStart(nil)
	if id, err := doc.LookupErr("_id"); err == nil {
		b = bson.AppendValueElement(b, "failingDocumentId", id)
	}
	clauses := splitClauses(v.raw)
	var details bson.Raw
	if len(clauses) == 1 {
		details = clauses[0].explain(doc)
	} else {
		ds, d := bson.AppendDocumentStart(nil)
		d = bson.AppendStringElement(d, "operatorName", "$and")
		as, d := bson.AppendArrayElementStart(d, "clausesNotSatisfied")
		n := 0
		for i, c := range clauses {
			if ok, err := c.matches(doc); err == nil && ok {
				continue
			}
			cs, e := bson.AppendDocumentElementStart(d, bson.ArrayKey(n))
			e = bson.AppendInt32Element(e, "index", int32(i))
			e = bson.AppendDocumentElement(e, "details", c.explain(doc))
			d, _ = bson.AppendDocumentEnd(e, cs)
			n++
		}
		d, _ = bson.AppendDocumentEnd(d, as)
		details, _ = bson.AppendDocumentEnd(d, ds)
	}
	b = bson.AppendDocumentElement(b, "details", details)
	b, _ = bson.AppendDocumentEnd(b, start)
	return b
}

// clause is one predicate of a validator as mongod's parser flattens it:
// a top-level operator ($and, $expr, ...) or one operator on one field.
type clause struct {
	field string        // "" for a top-level operator
	op    string        // "$eq" for an implicit equality
	arg   bson.RawValue // the operator's argument
	spec  bson.Raw      // the clause as written: specifiedAs
}

func splitClauses(filter bson.Raw) []clause {
	var out []clause
	it := filter.Iter()
	for it.Next() {
		k, val := it.Key(), it.Value()
		if k == "$comment" {
			continue
		}
		if strings.HasPrefix(k, "$") {
			out = append(out, clause{op: k, arg: val, spec: single(k, val)})
			continue
		}
		if d, ok := val.DocumentOK(); ok && isOperatorDoc(d) {
			oi := d.Iter()
			for oi.Next() {
				ss, s := bson.AppendDocumentStart(nil)
				s = bson.AppendDocumentElement(s, k, single(oi.Key(), oi.Value()))
				spec, _ := bson.AppendDocumentEnd(s, ss)
				out = append(out, clause{field: k, op: oi.Key(), arg: oi.Value(), spec: spec})
			}
			continue
		}
		out = append(out, clause{field: k, op: "$eq", arg: val, spec: single(k, val)})
	}
	return out
}

func isOperatorDoc(d bson.Raw) bool {
	it := d.Iter()
	return it.Next() && strings.HasPrefix(it.Key(), "$")
}

func single(k string, v bson.RawValue) bson.Raw {
	start, b := bson.AppendDocumentStart(nil)
	b = bson.AppendValueElement(b, k, v)
	b, _ = bson.AppendDocumentEnd(b, start)
	return b
}

func (c clause) matches(doc bson.Raw) (bool, error) {
	p, err := compileValidator(c.spec)
	if err != nil {
		return false, err
	}
	return p.matches(doc)
}

// explain builds the details of a clause doc fails.
func (c clause) explain(doc bson.Raw) bson.Raw {
	start, b := bson.AppendDocumentStart(nil)
	b = bson.AppendStringElement(b, "operatorName", c.op)
	if c.op == "$jsonSchema" {
		if s, err := compileSchema(c.arg.Document()); err == nil {
			return s.details(doc)
		}
	}
	if c.field == "" {
		if c.op == "$expr" {
			b = bson.AppendDocumentElement(b, "specifiedAs", c.spec)
			b = bson.AppendStringElement(b, "reason", "expression did not match")
			if r, ok := exprResult(c.arg, doc); ok {
				b = bson.AppendValueElement(b, "expressionResult", r)
			}
		}
		b, _ = bson.AppendDocumentEnd(b, start)
		return b
	}
	b = bson.AppendDocumentElement(b, "specifiedAs", c.spec)
	reason := map[string]string{
		"$eq": "comparison failed", "$gt": "comparison failed", "$gte": "comparison failed",
		"$lt": "comparison failed", "$lte": "comparison failed",
		"$in": "no matching value found in array", "$type": "type did not match",
	}[c.op]
	if c.op == "$exists" && c.arg.Boolean() {
		reason = "path does not exist"
	}
	values, exists, exact := consideredValues(doc, c.field)
	if reason == "" || !exact {
		b, _ = bson.AppendDocumentEnd(b, start)
		return b
	}
	if !exists && c.op != "$exists" {
		b = bson.AppendStringElement(b, "reason", "field was missing")
	} else {
		b = bson.AppendStringElement(b, "reason", reason)
	}
	if exists && c.op != "$exists" {
		if len(values) == 1 {
			b = bson.AppendValueElement(b, "consideredValue", values[0])
		} else {
			as, a := bson.AppendArrayElementStart(b, "consideredValues")
			for i, v := range values {
				a = bson.AppendValueElement(a, bson.ArrayKey(i), v)
			}
			b, _ = bson.AppendDocumentEnd(a, as)
		}
		if c.op == "$type" && len(values) > 0 {
			var types []string
			for _, v := range values {
				if n := mongoerr.TypeName(v.Type); !slices.Contains(types, n) {
					types = append(types, n)
				}
			}
			slices.Sort(types)
			if len(types) == 1 {
				b = bson.AppendStringElement(b, "consideredType", types[0])
			} else {
				as, a := bson.AppendArrayElementStart(b, "consideredTypes")
				for i, t := range types {
					a = bson.AppendStringElement(a, bson.ArrayKey(i), t)
				}
				b, _ = bson.AppendDocumentEnd(a, as)
			}
		}
	}
	b, _ = bson.AppendDocumentEnd(b, start)
	return b
}

// consideredValues are the values a field predicate looked at: the value
// at path, or the elements when it is an array (mongod's
// kTraverseOmitArray). exact is false when the path crosses an array
// before its last component, which mongotest does not explain.
func consideredValues(doc bson.Raw, path string) (values []bson.RawValue, exists, exact bool) {
	cur := doc
	parts := strings.Split(path, ".")
	for i, p := range parts {
		v, err := cur.LookupErr(p)
		if err != nil {
			return nil, false, true
		}
		if i == len(parts)-1 {
			if arr, ok := v.ArrayOK(); ok {
				vals, _ := arr.Values()
				return vals, true, true
			}
			return []bson.RawValue{v}, true, true
		}
		d, ok := v.DocumentOK()
		if !ok {
			if v.Type == bson.TypeArray {
				return nil, false, false
			}
			return nil, false, true
		}
		cur = d
	}
	return nil, false, true
}

// exprResult evaluates a validator's $expr on doc, for expressionResult.
func exprResult(x bson.RawValue, doc bson.Raw) (bson.RawValue, bool) {
	start, b := bson.AppendDocumentStart(nil)
	ws, w := bson.AppendDocumentElementStart(b, "$replaceWith")
	w = bson.AppendValueElement(w, "r", x)
	b, _ = bson.AppendDocumentEnd(w, ws)
	stage, _ := bson.AppendDocumentEnd(b, start)
	p, err := agg.Compile([]bson.Raw{stage}, agg.Options{})
	if err != nil {
		return bson.RawValue{}, false
	}
	out, err := p.Run(func(yield func(bson.Raw) bool) { yield(doc) })
	if err != nil || len(out) != 1 {
		return bson.RawValue{}, false
	}
	r, err := out[0].LookupErr("r")
	return r, err == nil
}
