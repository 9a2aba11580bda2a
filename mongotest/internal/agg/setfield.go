package agg

import (
	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// $getField, $setField and $unsetField: the operators that read and write
// fields whose names contain '.' or start with '$', which paths cannot
// name. Registered here, after ops.go's init builds the table (files
// initialize in name order).

func init() {
	operators["$getField"] = opDef{compile: compileGetField}
	operators["$setField"] = opDef{compile: compileSetField}
	operators["$unsetField"] = opDef{compile: compileSetField}
	for _, n := range []string{"$getField", "$setField", "$unsetField"} {
		delete(unsupportedOperators, n)
	}
}

// fieldExpr is one of the three operators; value is nil for $getField
// and $unsetField.
type fieldExpr struct {
	name  string
	field string
	input expr
	value expr
}

// compileGetField: {$getField: <field>} or {$getField: {field, input}};
// input defaults to $$CURRENT.
func compileGetField(name string, operand bson.RawValue) (expr, error) {
	f := &fieldExpr{name: name, input: pathExpr{}}
	var fieldArg bson.RawValue
	if d, ok := operand.DocumentOK(); ok && !isOperatorDoc(d) {
		it := d.Iter()
		for it.Next() {
			switch k := it.Key(); k {
			case "field":
				fieldArg = it.Value()
			case "input":
				x, err := compileExpr(it.Value())
				if err != nil {
					return nil, err
				}
				f.input = x
			default:
				return nil, mongoerr.New(3041701, "$getField found an unknown argument: %s", k)
			}
		}
		if fieldArg.Type == 0 {
			return nil, mongoerr.New(3041702, "$getField requires 'field' to be specified")
		}
	} else {
		fieldArg = operand
	}
	var err error
	if f.field, err = constantFieldName(name, fieldArg, 3041704, 3041703); err != nil {
		return nil, err
	}
	return f, nil
}

// compileSetField: {$setField: {field, input, value}} and
// {$unsetField: {field, input}}.
func compileSetField(name string, operand bson.RawValue) (expr, error) {
	d, ok := operand.DocumentOK()
	if !ok {
		return nil, mongoerr.New(4161100, "%s only supports an object as its argument", name)
	}
	f := &fieldExpr{name: name}
	var fieldArg bson.RawValue
	hasValue := false
	it := d.Iter()
	for it.Next() {
		k := it.Key()
		switch {
		case k == "field":
			fieldArg = it.Value()
		case k == "input":
			x, err := compileExpr(it.Value())
			if err != nil {
				return nil, err
			}
			f.input = x
		case k == "value" && name == "$setField":
			x, err := compileExpr(it.Value())
			if err != nil {
				return nil, err
			}
			f.value, hasValue = x, true
		default:
			return nil, mongoerr.New(4161101, "%s found an unknown argument: %s", name, k)
		}
	}
	switch {
	case fieldArg.Type == 0:
		return nil, mongoerr.New(4161102, "%s requires 'field' to be specified", name)
	case f.input == nil:
		return nil, mongoerr.New(4161109, "%s requires 'input' to be specified", name)
	case name == "$setField" && !hasValue:
		return nil, mongoerr.New(4161103, "$setField requires 'value' to be specified")
	}
	var err error
	if f.field, err = constantFieldName("$setField", fieldArg, 4161106, 4161107); err != nil {
		return nil, err
	}
	return f, nil
}

// constantFieldName reads 'field', which must be a constant string: a
// string that is not a path, or a $literal.
func constantFieldName(name string, v bson.RawValue, nonConstCode, typeCode int32) (string, error) {
	x, err := compileExpr(v)
	if err != nil {
		return "", err
	}
	lit, ok := x.(literalExpr)
	if !ok {
		return "", mongoerr.New(nonConstCode, "%s requires 'field' to evaluate to a constant, but got a non-constant argument", name)
	}
	s, ok := lit.v.StringValueOK()
	if !ok {
		return "", mongoerr.New(typeCode, "%s requires 'field' to evaluate to type String, but got %s", name, typeName(lit.v))
	}
	return s, nil
}

func (f *fieldExpr) eval(e *env) (bson.RawValue, error) {
	in, err := f.input.eval(e)
	if err != nil {
		return missing, err
	}
	if nullish(in) {
		if f.name == "$getField" && isMissing(in) {
			return missing, nil
		}
		return nullValue, nil
	}
	doc, ok := in.DocumentOK()
	if !ok {
		code := int32(4161105)
		if f.name == "$getField" {
			code = 3041705
		}
		return missing, mongoerr.New(code, "%s requires 'input' to evaluate to type Object, but got %s", f.name, typeName(in))
	}
	if f.name == "$getField" {
		v, err := doc.LookupErr(f.field)
		if err != nil {
			return missing, nil
		}
		return v, nil
	}
	var val bson.RawValue
	if f.value != nil {
		if val, err = f.value.eval(e); err != nil {
			return missing, err
		}
	}
	// The field keeps its place when it exists; a missing value (or
	// $unsetField) removes it.
	start, b := bson.AppendDocumentStart(nil)
	set := false
	it := doc.Iter()
	for it.Next() {
		if it.Key() != f.field {
			b = append(b, it.Element()...)
			continue
		}
		set = true
		if !isMissing(val) {
			b = bson.AppendValueElement(b, f.field, val)
		}
	}
	if !set && !isMissing(val) {
		b = bson.AppendValueElement(b, f.field, val)
	}
	out, err := endDoc(b, start)
	if err != nil {
		return missing, err
	}
	return docValue(out), nil
}
