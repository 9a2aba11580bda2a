package query

import (
	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// typeAliases are the $type names mongod accepts, with their type codes.
var typeAliases = map[string]int{
	"double": 1, "string": 2, "object": 3, "array": 4, "binData": 5, "undefined": 6,
	"objectId": 7, "bool": 8, "date": 9, "null": 10, "regex": 11, "dbPointer": 12,
	"javascript": 13, "symbol": 14, "javascriptWithScope": 15, "int": 16,
	"timestamp": 17, "long": 18, "decimal": 19, "minKey": -1, "maxKey": 127,
}

// typePred matches values whose BSON type is one of a set.
type typePred struct {
	codes  []bson.Type
	number bool // the "number" alias: any numeric type
}

func (p typePred) matchElem(v bson.RawValue) bool {
	if v.Type == typeMissing {
		return false
	}
	if p.number && bracket(v.Type) == bracketNumber {
		return true
	}
	for _, c := range p.codes {
		if c == v.Type {
			return true
		}
	}
	return false
}

func parseType(v bson.RawValue) (elemPred, error) {
	var p typePred
	add := func(x bson.RawValue) error {
		if s, ok := x.StringValueOK(); ok {
			if s == "number" {
				p.number = true
				return nil
			}
			code, ok := typeAliases[s]
			if !ok {
				return mongoerr.New(mongoerr.BadValue, "Unknown type name alias: %s", s)
			}
			p.codes = append(p.codes, typeCode(code))
			return nil
		}
		if !x.IsNumber() && x.Type != bson.TypeDecimal128 {
			return mongoerr.New(mongoerr.TypeMismatch, "type must be represented as a number or a string")
		}
		n, ok := integral(x)
		if !ok {
			return mongoerr.New(mongoerr.BadValue, "Invalid numerical type code: %s", x.String())
		}
		if n != -1 && n != 127 && (n < 1 || n > 19) {
			return mongoerr.New(mongoerr.BadValue, "Invalid numerical type code: %d", n)
		}
		p.codes = append(p.codes, typeCode(int(n)))
		return nil
	}
	if arr, ok := v.ArrayOK(); ok {
		it := arr.Iter()
		for it.Next() {
			if err := add(it.Value()); err != nil {
				return nil, err
			}
		}
		if len(p.codes) == 0 && !p.number {
			return nil, mongoerr.New(mongoerr.FailedToParse, "$type must match at least one type")
		}
		return p, nil
	}
	if err := add(v); err != nil {
		return nil, err
	}
	return p, nil
}

func typeCode(c int) bson.Type {
	if c == -1 {
		return bson.TypeMinKey
	}
	return bson.Type(c)
}
