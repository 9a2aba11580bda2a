package agg

import (
	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// fieldExpr is $getField, $setField or $unsetField: they read or write one
// field of a document by a literal name, which may hold '.' or start with
// '$' (names a path expression cannot spell).
type fieldExpr struct {
	op       string
	field    string
	input    expr // nil: $$CURRENT
	value    expr // $setField only
	hasValue bool
}

// compileFieldOp compiles $getField ({field, input} or a field name),
// $setField ({field, input, value}) and $unsetField ({field, input}).
func compileFieldOp(name string, operand bson.RawValue) (expr, error) {
	f := &fieldExpr{op: name}
	var fieldArg bson.RawValue
	hasField, hasInput := false, false
	if d, ok := operand.DocumentOK(); ok && !isOperatorObject(d) {
		it := d.Iter()
		for it.Next() {
			v := it.Value()
			switch it.Key() {
			case "field":
				fieldArg, hasField = v, true
			case "input":
				x, err := compileExpr(v)
				if err != nil {
					return nil, err
				}
				f.input, hasInput = x, true
			case "value":
				if name != "$setField" {
					return nil, mongoerr.New(mongoerr.FailedToParse, "%s found an unknown argument: value", name)
				}
				x, err := compileExpr(v)
				if err != nil {
					return nil, err
				}
				f.value, f.hasValue = x, true
			default:
				return nil, mongoerr.New(mongoerr.FailedToParse, "%s found an unknown argument: %s", name, it.Key())
			}
		}
	} else if name == "$getField" {
		fieldArg, hasField = operand, true
	} else {
		return nil, mongoerr.New(4161100, "%s only supports an object as its argument", name)
	}
	switch {
	case !hasField:
		return nil, mongoerr.New(mongoerr.FailedToParse, "%s requires 'field' to be specified", name)
	case name != "$getField" && !hasInput:
		return nil, mongoerr.New(mongoerr.FailedToParse, "%s requires 'input' to be specified", name)
	case name == "$setField" && !f.hasValue:
		return nil, mongoerr.New(mongoerr.FailedToParse, "%s requires 'value' to be specified", name)
	}
	fx, err := compileExpr(fieldArg)
	if err != nil {
		return nil, err
	}
	lit, ok := fx.(literalExpr)
	if !ok {
		return nil, mongoerr.New(5654600, "%s requires 'field' to evaluate to a constant, but got a non-constant argument", name)
	}
	s, ok := lit.v.StringValueOK()
	if !ok {
		return nil, mongoerr.New(5654601, "%s requires 'field' to evaluate to type String, but got %s", name, typeName(lit.v))
	}
	f.field = s
	return f, nil
}

// isOperatorObject reports whether d is {$op: ...} rather than an
// argument object.
func isOperatorObject(d bson.Raw) bool {
	k, ok := firstKeyOf(d)
	return ok && len(k) > 0 && k[0] == '$'
}

func firstKeyOf(d bson.Raw) (string, bool) {
	it := d.Iter()
	if !it.Next() {
		return "", false
	}
	return it.Key(), true
}

func (f *fieldExpr) eval(e *env) (bson.RawValue, error) {
	input := docValue(e.root)
	if f.input != nil {
		v, err := f.input.eval(e)
		if err != nil {
			return missing, err
		}
		input = v
	}
	switch input.Type {
	case bson.TypeEmbeddedDocument:
	case 0, bson.TypeNull, bson.TypeUndefined:
		if f.op == "$getField" {
			return missing, nil
		}
		return nullValue, nil
	default:
		return missing, mongoerr.New(3041705, "%s requires 'input' to evaluate to type Object, but got %s", f.op, typeName(input))
	}
	doc := bson.Raw(input.Value)
	if f.op == "$getField" {
		v, err := doc.LookupErr(f.field)
		if err != nil {
			return missing, nil
		}
		return v, nil
	}
	value := missing // $unsetField, or $setField to $$REMOVE
	if f.op == "$setField" {
		v, err := f.value.eval(e)
		if err != nil {
			return missing, err
		}
		value = v
	}
	start, b := bson.AppendDocumentStart(nil)
	found := false
	it := doc.Iter()
	for it.Next() {
		if it.Key() != f.field {
			b = append(b, it.Element()...)
			continue
		}
		found = true
		if !isMissing(value) {
			b = bson.AppendValueElement(b, f.field, value)
		}
	}
	if !found && !isMissing(value) {
		b = bson.AppendValueElement(b, f.field, value)
	}
	out, err := endDoc(b, start)
	if err != nil {
		return missing, err
	}
	return docValue(out), nil
}
