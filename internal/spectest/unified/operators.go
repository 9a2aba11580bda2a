package unified

import (
	"bytes"
	"encoding/hex"
	"strings"

	"github.com/mongoscope/mongoscope/bson"
)

// operator runs one special operator. act is the actual value, present
// whether it exists, root whether an actual document is root-level.
func (m *matcher) operator(path, name string, arg, act bson.RawValue, present, root bool) error {
	switch name {
	case "$$exists":
		want, ok := arg.BooleanOK()
		if !ok {
			return invalid(path, nil, "$$exists takes a boolean, got %s", show(arg))
		}
		if want && !present {
			return mismatch(path, arg, act, "missing; want it present ($$exists: true)")
		}
		if !want && present {
			return mismatch(path, arg, act, "present with value %s; want it absent ($$exists: false)", show(act))
		}
		return nil

	case "$$unsetOrMatches":
		if !present {
			return nil
		}
		// "This operator does not influence whether or not an actual
		// document value is considered a root-level document."
		return m.match(path, arg, act, true, root)

	case "$$type":
		types, err := typeList(path, arg)
		if err != nil {
			return err
		}
		if !present {
			return mismatch(path, arg, act, "missing; want a value of type %s", show(arg))
		}
		for _, t := range types {
			if t == act.Type {
				return nil
			}
		}
		return mismatch(path, arg, act, "got %s %s, want type %s", typeName(act.Type), show(act), show(arg))

	case "$$matchesEntity":
		id, ok := arg.StringValueOK()
		if !ok {
			return invalid(path, nil, "$$matchesEntity takes an entity name, got %s", show(arg))
		}
		if m.ents == nil {
			return invalid(path, nil, "$$matchesEntity: entity %q is undefined (no entities)", id)
		}
		ent, err := m.ents.BSONEntity(id)
		if err != nil {
			return invalid(path, err, "$$matchesEntity: entity %q", id)
		}
		return m.match(path, ent, act, present, root)

	case "$$matchesHexBytes":
		s, ok := arg.StringValueOK()
		if !ok {
			return invalid(path, nil, "$$matchesHexBytes takes a hex string, got %s", show(arg))
		}
		want, err := hex.DecodeString(s)
		if err != nil {
			return invalid(path, err, "$$matchesHexBytes operand %q is not an even number of hex digits", s)
		}
		if !present {
			return mismatch(path, arg, act, "missing; want bytes %s", strings.ToLower(s))
		}
		var got []byte
		switch act.Type {
		case bson.TypeString:
			str, _ := act.StringValueOK()
			got = []byte(str)
		case bson.TypeBinary:
			got = act.Binary().Data
		default:
			return mismatch(path, arg, act, "got %s %s, want a string or binary of bytes %s", typeName(act.Type), show(act), strings.ToLower(s))
		}
		if !bytes.Equal(got, want) {
			return mismatch(path, arg, act, "got bytes %x, want %s", got, strings.ToLower(s))
		}
		return nil

	case "$$sessionLsid":
		id, ok := arg.StringValueOK()
		if !ok {
			return invalid(path, nil, "$$sessionLsid takes a session entity name, got %s", show(arg))
		}
		if m.ents == nil {
			return invalid(path, nil, "$$sessionLsid: session entity %q is undefined (no entities)", id)
		}
		lsid, err := m.ents.SessionLsid(id)
		if err != nil {
			return invalid(path, err, "$$sessionLsid: session entity %q", id)
		}
		want := docValue(lsid)
		if !present {
			return mismatch(path, want, act, "missing; want the lsid of session %q, %s", id, show(want))
		}
		if !exactEqual(want, act, 0) {
			return mismatch(path, want, act, "got %s, want the lsid of session %q, %s", show(act), id, show(want))
		}
		return nil

	case "$$lte":
		if !isNumber(arg.Type) {
			return invalid(path, nil, "$$lte takes a number, got %s", show(arg))
		}
		if !present {
			return mismatch(path, arg, act, "missing; want a number <= %s", show(arg))
		}
		if !isNumber(act.Type) {
			return mismatch(path, arg, act, "got %s %s, want a number <= %s", typeName(act.Type), show(act), show(arg))
		}
		c, ok := compareNumbers(act, arg)
		if !ok {
			return mismatch(path, arg, act, "got %s, not comparable with %s", show(act), show(arg))
		}
		if c > 0 {
			return mismatch(path, arg, act, "got %s, want <= %s", show(act), show(arg))
		}
		return nil

	case "$$matchAsDocument":
		if !present {
			return mismatch(path, arg, act, "missing; want an Extended JSON string")
		}
		s, ok := act.StringValueOK()
		if !ok {
			return mismatch(path, arg, act, "got %s %s, want an Extended JSON string", typeName(act.Type), show(act))
		}
		doc, err := bson.ParseExtJSON([]byte(s))
		if err != nil {
			return mismatch(path, arg, act, "actual string is not an Extended JSON document: %v", err)
		}
		// "The actual value MUST NOT be considered a root-level document."
		return m.match(path, arg, docValue(doc), true, false)

	case "$$matchAsRoot":
		if arg.Type != bson.TypeEmbeddedDocument {
			return invalid(path, nil, "$$matchAsRoot takes a document, got %s", show(arg))
		}
		if !present {
			return mismatch(path, arg, act, "missing; want a document")
		}
		return m.match(path, arg, act, true, true)
	}
	return invalid(path, nil, "unknown special operator %s", name)
}

// typeList reads $$type's operand: one alias or an array of them, where
// "number" stands for int, long, double and decimal.
func typeList(path string, arg bson.RawValue) ([]bson.Type, error) {
	var names []string
	switch arg.Type {
	case bson.TypeString:
		names = []string{arg.StringValue()}
	case bson.TypeArray:
		vals, err := bson.Raw(arg.Value).Values()
		if err != nil {
			return nil, invalid(path, err, "$$type operand is malformed")
		}
		for _, v := range vals {
			s, ok := v.StringValueOK()
			if !ok {
				return nil, invalid(path, nil, "$$type takes type names, got %s", show(v))
			}
			names = append(names, s)
		}
	default:
		return nil, invalid(path, nil, "$$type takes a type name or an array of them, got %s", show(arg))
	}
	if len(names) == 0 {
		return nil, invalid(path, nil, "$$type has no type names")
	}
	var types []bson.Type
	for _, n := range names {
		if n == "number" {
			types = append(types, bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128)
			continue
		}
		t, ok := typeAliases[n]
		if !ok {
			return nil, invalid(path, nil, "$$type: unknown type name %q", n)
		}
		types = append(types, t)
	}
	return types, nil
}
