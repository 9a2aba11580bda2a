package unified

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

// fakeEntities is an entity map with one BSON entity and one session.
type fakeEntities struct{}

var errUndefined = errors.New("entity is undefined")

func (fakeEntities) BSONEntity(id string) (bson.RawValue, error) {
	switch id {
	case "oid0":
		return mustValue(`{"$oid": "57e193d7a9cc81b4027498b5"}`), nil
	case "doc0":
		return mustValue(`{"a": 1}`), nil
	}
	return bson.RawValue{}, fmt.Errorf("%q: %w", id, errUndefined)
}

func (fakeEntities) SessionLsid(id string) (bson.Raw, error) {
	if id == "session0" {
		return mustValue(`{"id": {"$binary": {"base64": "AAECAwQFBgcICQoLDA0ODw==", "subType": "04"}}}`).Document(), nil
	}
	return nil, fmt.Errorf("%q: %w", id, errUndefined)
}

func mustValue(s string) bson.RawValue {
	v, err := ParseValue([]byte(s))
	if err != nil {
		panic(fmt.Sprintf("bad test value %s: %v", s, err))
	}
	return v
}

// The outcomes a case expects.
const (
	wantMatch    = ""
	wantMismatch = "mismatch"
	wantInvalid  = "invalid"
)

type matchCase struct {
	name     string
	exp, act string // Extended JSON; act "" is an absent value
	top      Top
	want     string // wantMatch, wantMismatch or wantInvalid
	wantPath string // for a mismatch: the path named
}

func runMatchCases(t *testing.T, cases []matchCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			exp := mustValue(c.exp)
			var act bson.RawValue
			if c.act != "" {
				act = mustValue(c.act)
			}
			err := Match(exp, act, &Options{Entities: fakeEntities{}, Path: "r", Top: c.top})
			var me *MismatchError
			var ie *InvalidTestError
			switch c.want {
			case wantMatch:
				if err != nil {
					t.Fatalf("Match(%s, %s) = %v, want a match", c.exp, c.act, err)
				}
			case wantMismatch:
				if !errors.As(err, &me) {
					t.Fatalf("Match(%s, %s) = %v (%T), want a *MismatchError", c.exp, c.act, err, err)
				}
				if c.wantPath != "" && me.Path != c.wantPath {
					t.Fatalf("Match(%s, %s): path %q, want %q (%v)", c.exp, c.act, me.Path, c.wantPath, err)
				}
				if !strings.HasPrefix(err.Error(), me.Path+": ") {
					t.Fatalf("message %q does not start with the path", err)
				}
			case wantInvalid:
				if !errors.As(err, &ie) {
					t.Fatalf("Match(%s, %s) = %v (%T), want an *InvalidTestError", c.exp, c.act, err, err)
				}
			}
		})
	}
}

func TestMatchDocumentsAndArrays(t *testing.T) { runMatchCases(t, documentCases) }

var documentCases = []matchCase{
	// "When matching root-level documents, test runners MUST permit the
	// actual document to contain additional fields not present in the
	// expected document."
	{name: "root extra field", exp: `{"x": 1}`, act: `{"x": 1, "y": 1}`},
	// "The inverse is not true."
	{name: "root missing field", exp: `{"x": 1, "y": 1}`, act: `{"x": 1}`, want: wantMismatch, wantPath: "r.y"},
	// "Test runners MUST NOT permit additional fields in nested documents."
	{name: "nested extra field", exp: `{"x": {"y": 1}}`, act: `{"x": {"y": 1, "z": 1}}`, want: wantMismatch, wantPath: "r.x.z"},
	{name: "nested exact", exp: `{"x": {"y": 1}}`, act: `{"x": {"y": 1}}`},
	// TopNested: the top-level document itself is not root-level.
	{name: "top nested extra field", exp: `{"x": 1}`, act: `{"x": 1, "y": 1}`, top: TopNested, want: wantMismatch, wantPath: "r.y"},
	// "assert that actual is a document"
	{name: "document vs scalar", exp: `{"x": 1}`, act: `1`, want: wantMismatch, wantPath: "r"},
	{name: "nested document vs array", exp: `{"x": {"y": 1}}`, act: `{"x": [1]}`, want: wantMismatch, wantPath: "r.x"},
	// "test runners MUST NOT require keys in the expected and actual
	// document to appear in the same order."
	{name: "key order", exp: `{"x": 1, "y": 1}`, act: `{"y": 1, "x": 1}`},
	{name: "nested key order", exp: `{"a": {"x": 1, "y": 1}}`, act: `{"a": {"y": 1, "x": 1}}`},
	// "When comparing arrays, expected and actual values MUST contain
	// the same number of elements."
	{name: "array longer", exp: `[1, 2, 3]`, act: `[1, 2, 3, 4]`, want: wantMismatch, wantPath: "r"},
	{name: "array shorter", exp: `{"a": [1, 2, 3]}`, act: `{"a": [1, 2]}`, want: wantMismatch, wantPath: "r.a"},
	{name: "array equal", exp: `[1, 2, 3]`, act: `[1, 2, 3]`},
	// "for every index/value in expected: assert that actual[index] matches value"
	{name: "array order", exp: `[1, 2]`, act: `[2, 1]`, want: wantMismatch, wantPath: "r.0"},
	{name: "array vs document", exp: `[1]`, act: `{"0": 1}`, want: wantMismatch, wantPath: "r"},
	{name: "empty array", exp: `[]`, act: `[]`},
	// "the following array of documents would not match if returned by
	// distinct, but would match if returned via find"
	{name: "distinct docs nested", exp: `[{"x": 1}, {"x": 2}]`, act: `[{"x": 1, "y": 1}, {"x": 2, "y": 2}]`, want: wantMismatch, wantPath: "r.0.y"},
	{name: "find docs root", exp: `[{"x": 1}, {"x": 2}]`, act: `[{"x": 1, "y": 1}, {"x": 2, "y": 2}]`, top: TopRootElements},
	{name: "find docs root, nested still strict", exp: `[{"x": {"a": 1}}]`, act: `[{"x": {"a": 1, "b": 2}}]`, top: TopRootElements, want: wantMismatch, wantPath: "r.0.x.b"},
	{name: "find docs count", exp: `[{"x": 1}]`, act: `[]`, top: TopRootElements, want: wantMismatch, wantPath: "r"},
	{name: "find docs absent", exp: `[{"x": 1}]`, act: ``, top: TopRootElements, want: wantMismatch, wantPath: "r"},
	// Path naming through arrays and documents.
	{name: "deep path", exp: `{"cursor": {"firstBatch": [{"x": 1}]}}`, act: `{"cursor": {"firstBatch": [{"x": 2}]}}`, want: wantMismatch, wantPath: "r.cursor.firstBatch.0.x"},
	// "When comparing types that contain documents as internal
	// properties (e.g. CodeWScope) ... the documents MUST match exactly;
	// however, test runners MUST permit variation in document key order"
	{name: "code with scope key order", exp: `{"$code": "f", "$scope": {"a": 1, "b": 2}}`, act: `{"$code": "f", "$scope": {"b": 2, "a": 1}}`},
	{name: "code with scope extra key", exp: `{"$code": "f", "$scope": {"a": 1}}`, act: `{"$code": "f", "$scope": {"a": 1, "b": 2}}`, want: wantMismatch},
	{name: "code with scope code", exp: `{"$code": "f", "$scope": {}}`, act: `{"$code": "g", "$scope": {}}`, want: wantMismatch},
	// "assert that actual and expected are the same type ... assert
	// that actual and expected are equal"
	{name: "string equal", exp: `"a"`, act: `"a"`},
	{name: "string differs", exp: `"a"`, act: `"b"`, want: wantMismatch},
	{name: "string vs int", exp: `"1"`, act: `1`, want: wantMismatch},
	{name: "bool", exp: `true`, act: `true`},
	{name: "bool vs int", exp: `true`, act: `1`, want: wantMismatch},
	{name: "null", exp: `null`, act: `null`},
	{name: "null vs absent", exp: `{"x": null}`, act: `{}`, want: wantMismatch, wantPath: "r.x"},
	{name: "objectId", exp: `{"$oid": "57e193d7a9cc81b4027498b5"}`, act: `{"$oid": "57e193d7a9cc81b4027498b5"}`},
	{name: "objectId differs", exp: `{"$oid": "57e193d7a9cc81b4027498b5"}`, act: `{"$oid": "57e193d7a9cc81b4027498b6"}`, want: wantMismatch},
	{name: "date", exp: `{"$date": {"$numberLong": "1000"}}`, act: `{"$date": {"$numberLong": "1000"}}`},
	{name: "date vs long", exp: `{"$date": {"$numberLong": "1000"}}`, act: `{"$numberLong": "1000"}`, want: wantMismatch},
	{name: "binary", exp: `{"$binary": {"base64": "AQI=", "subType": "00"}}`, act: `{"$binary": {"base64": "AQI=", "subType": "00"}}`},
	{name: "binary subtype", exp: `{"$binary": {"base64": "AQI=", "subType": "00"}}`, act: `{"$binary": {"base64": "AQI=", "subType": "80"}}`, want: wantMismatch},
	{name: "timestamp", exp: `{"$timestamp": {"t": 1, "i": 2}}`, act: `{"$timestamp": {"t": 1, "i": 2}}`},
	{name: "timestamp differs", exp: `{"$timestamp": {"t": 1, "i": 2}}`, act: `{"$timestamp": {"t": 1, "i": 3}}`, want: wantMismatch},
	{name: "regex", exp: `{"$regularExpression": {"pattern": "a", "options": "i"}}`, act: `{"$regularExpression": {"pattern": "a", "options": "i"}}`},
	{name: "minKey vs maxKey", exp: `{"$minKey": 1}`, act: `{"$maxKey": 1}`, want: wantMismatch},
	// A document with "$$" in a key among others is not an operator:
	// "first and only key of expected starts with $$".
	{name: "two keys, not an operator", exp: `{"$$exists": true, "b": 1}`, act: `{"$$exists": true, "b": 1}`},
	{name: "dollar key plain", exp: `{"$set": {"x": 1}}`, act: `{"$set": {"x": 1}}`},
}

func TestMatchFlexibleNumbers(t *testing.T) { runMatchCases(t, numberCases) }

var numberCases = []matchCase{
	// "test runners MUST consider 32-bit, 64-bit, and floating point
	// numbers to be equal if their values are numerically equivalent.
	// For example, an expected value of 1 would match an actual value
	// of 1.0 ... but would not match 1.5."
	{name: "int vs double", exp: `1`, act: `1.0`},
	{name: "int vs 1.5", exp: `1`, act: `1.5`, want: wantMismatch},
	{name: "ok field", exp: `{"ok": 1}`, act: `{"ok": 1.0}`},
	{name: "int vs long", exp: `1`, act: `{"$numberLong": "1"}`},
	{name: "long vs int", exp: `{"$numberLong": "7"}`, act: `7`},
	{name: "long vs double", exp: `{"$numberLong": "-3"}`, act: `-3.0`},
	{name: "double vs int", exp: `2.0`, act: `2`},
	{name: "int differs", exp: `1`, act: `2`, want: wantMismatch},
	// Large int64s compare exactly, not through float64 rounding.
	{name: "large longs differ by one", exp: `{"$numberLong": "9007199254740993"}`, act: `{"$numberLong": "9007199254740992"}`, want: wantMismatch},
	{name: "large long vs double", exp: `{"$numberLong": "9007199254740993"}`, act: `9007199254740992.0`, want: wantMismatch},
	{name: "zero vs negative zero", exp: `0`, act: `-0.0`},
	{name: "NaN vs NaN", exp: `{"$numberDouble": "NaN"}`, act: `{"$numberDouble": "NaN"}`},
	{name: "NaN vs 1", exp: `{"$numberDouble": "NaN"}`, act: `1`, want: wantMismatch},
	{name: "Infinity", exp: `{"$numberDouble": "Infinity"}`, act: `{"$numberDouble": "Infinity"}`},
	// "When comparing numeric types (excluding Decimal128)": a decimal
	// matches only a decimal.
	{name: "decimal vs decimal", exp: `{"$numberDecimal": "1.5"}`, act: `{"$numberDecimal": "1.5"}`},
	{name: "decimal vs double", exp: `{"$numberDecimal": "1.5"}`, act: `1.5`, want: wantMismatch},
	{name: "int vs decimal", exp: `1`, act: `{"$numberDecimal": "1"}`, want: wantMismatch},
	{name: "decimal differs", exp: `{"$numberDecimal": "1.5"}`, act: `{"$numberDecimal": "1.6"}`, want: wantMismatch},
	{name: "number vs string", exp: `1`, act: `"1"`, want: wantMismatch},
}

func TestMatchOperators(t *testing.T) { runMatchCases(t, operatorCases) }

var operatorCases = []matchCase{
	// $$exists: "If true, the test runner MUST assert that the key
	// exists in the actual document, irrespective of its value (e.g. a
	// key with a null value would match). If false, the test runner
	// MUST assert that the key does not exist in the actual document."
	{name: "exists true present", exp: `{"x": {"$$exists": true}}`, act: `{"x": 5}`},
	{name: "exists true null", exp: `{"x": {"$$exists": true}}`, act: `{"x": null}`},
	{name: "exists true absent", exp: `{"x": {"$$exists": true}}`, act: `{}`, want: wantMismatch, wantPath: "r.x"},
	{name: "exists false absent", exp: `{"x": {"$$exists": false}}`, act: `{"y": 1}`},
	{name: "exists false present", exp: `{"x": {"$$exists": false}}`, act: `{"x": 1}`, want: wantMismatch, wantPath: "r.x"},
	{name: "exists false nested", exp: `{"a": {"x": {"$$exists": false}}}`, act: `{"a": {}}`},
	// An $$exists key still counts as named, so a nested document
	// holding it is not refused as an extra field.
	{name: "exists true nested no extra", exp: `{"a": {"x": {"$$exists": true}}}`, act: `{"a": {"x": 1}}`},
	{name: "exists bad operand", exp: `{"x": {"$$exists": 1}}`, act: `{"x": 1}`, want: wantInvalid},

	// $$type: "The test runner MUST assert that the actual value exists
	// and matches one of the expected types"
	{name: "type string", exp: `{"x": {"$$type": "string"}}`, act: `{"x": "a"}`},
	{name: "type string vs int", exp: `{"x": {"$$type": "string"}}`, act: `{"x": 1}`, want: wantMismatch, wantPath: "r.x"},
	{name: "type absent", exp: `{"x": {"$$type": "string"}}`, act: `{}`, want: wantMismatch, wantPath: "r.x"},
	{name: "type array of names", exp: `{"getMore": {"$$type": ["int", "long"]}}`, act: `{"getMore": {"$numberLong": "5"}}`},
	{name: "type array no match", exp: `{"getMore": {"$$type": ["int", "long"]}}`, act: `{"getMore": 5.5}`, want: wantMismatch},
	{name: "type int is not long", exp: `{"$$type": "long"}`, act: `5`, want: wantMismatch},
	// operator-type-number_alias.json: "number" covers int, long,
	// double and decimal.
	{name: "type number int", exp: `{"$$type": "number"}`, act: `{"$numberInt": "2147483647"}`},
	{name: "type number long", exp: `{"$$type": "number"}`, act: `{"$numberLong": "9223372036854775807"}`},
	{name: "type number double", exp: `{"$$type": "number"}`, act: `2.71828`},
	{name: "type number decimal", exp: `{"$$type": "number"}`, act: `{"$numberDecimal": "3.14159"}`},
	{name: "type number string", exp: `{"$$type": "number"}`, act: `"1"`, want: wantMismatch},
	// "When the actual value is an array, test runners MUST NOT examine
	// types of the array's elements."
	{name: "type array is array", exp: `{"$$type": "array"}`, act: `["a"]`},
	{name: "type string vs array of strings", exp: `{"$$type": "string"}`, act: `["a"]`, want: wantMismatch},
	{name: "type every alias", exp: `{"a": {"$$type": "object"}, "b": {"$$type": "binData"}, "c": {"$$type": "objectId"}, "d": {"$$type": "bool"}, "e": {"$$type": "date"}, "f": {"$$type": "null"}, "g": {"$$type": "regex"}, "h": {"$$type": "javascript"}, "i": {"$$type": "timestamp"}, "j": {"$$type": "decimal"}, "k": {"$$type": "minKey"}, "l": {"$$type": "maxKey"}, "m": {"$$type": "double"}, "n": {"$$type": "javascriptWithScope"}, "o": {"$$type": "symbol"}, "p": {"$$type": "undefined"}, "q": {"$$type": "dbPointer"}}`,
		act: `{"a": {}, "b": {"$binary": {"base64": "", "subType": "00"}}, "c": {"$oid": "57e193d7a9cc81b4027498b5"}, "d": false, "e": {"$date": {"$numberLong": "0"}}, "f": null, "g": {"$regularExpression": {"pattern": "a", "options": ""}}, "h": {"$code": "x"}, "i": {"$timestamp": {"t": 1, "i": 1}}, "j": {"$numberDecimal": "1"}, "k": {"$minKey": 1}, "l": {"$maxKey": 1}, "m": 1.5, "n": {"$code": "x", "$scope": {}}, "o": {"$symbol": "s"}, "p": {"$undefined": true}, "q": {"$dbPointer": {"$ref": "c", "$id": {"$oid": "57e193d7a9cc81b4027498b5"}}}}`},
	{name: "type unknown alias", exp: `{"$$type": "integer"}`, act: `1`, want: wantInvalid},
	{name: "type empty list", exp: `{"$$type": []}`, act: `1`, want: wantInvalid},
	{name: "type bad operand", exp: `{"$$type": 16}`, act: `1`, want: wantInvalid},

	// $$unsetOrMatches: "The test runner MUST assert that the actual
	// value either does not exist or matches the expected value."
	{name: "unsetOrMatches absent", exp: `{"insertedId": {"$$unsetOrMatches": 2}}`, act: `{}`},
	{name: "unsetOrMatches matches", exp: `{"insertedId": {"$$unsetOrMatches": 2}}`, act: `{"insertedId": 2}`},
	{name: "unsetOrMatches differs", exp: `{"insertedId": {"$$unsetOrMatches": 2}}`, act: `{"insertedId": 3}`, want: wantMismatch, wantPath: "r.insertedId"},
	{name: "unsetOrMatches null is not unset", exp: `{"x": {"$$unsetOrMatches": 2}}`, act: `{"x": null}`, want: wantMismatch},
	{name: "unsetOrMatches top absent", exp: `{"$$unsetOrMatches": {"deletedCount": 0}}`, act: ``},
	// "... which means that it may contain special operators."
	{name: "unsetOrMatches with operator", exp: `{"x": {"$$unsetOrMatches": {"$$type": "int"}}}`, act: `{"x": 1}`},
	// "This operator does not influence whether or not an actual
	// document value is considered a root-level document."
	{name: "unsetOrMatches keeps root", exp: `{"$$unsetOrMatches": {"deletedCount": 0}}`, act: `{"deletedCount": 0, "insertedCount": 2}`},
	{name: "unsetOrMatches keeps nested", exp: `{"x": {"$$unsetOrMatches": {"a": 1}}}`, act: `{"x": {"a": 1, "b": 2}}`, want: wantMismatch, wantPath: "r.x.b"},

	// $$matchesEntity: "the test runner MUST fetch that entity and
	// assert that the actual value matches the entity using the
	// standard rules ... otherwise, the test runner MUST raise an error
	// for an undefined or mistyped entity."
	{name: "matchesEntity", exp: `{"_id": {"$$matchesEntity": "oid0"}}`, act: `{"_id": {"$oid": "57e193d7a9cc81b4027498b5"}}`},
	{name: "matchesEntity differs", exp: `{"_id": {"$$matchesEntity": "oid0"}}`, act: `{"_id": {"$oid": "57e193d7a9cc81b4027498b6"}}`, want: wantMismatch, wantPath: "r._id"},
	{name: "matchesEntity absent", exp: `{"_id": {"$$matchesEntity": "oid0"}}`, act: `{}`, want: wantMismatch, wantPath: "r._id"},
	{name: "matchesEntity undefined", exp: `{"_id": {"$$matchesEntity": "nope"}}`, act: `{"_id": 1}`, want: wantInvalid},
	{name: "matchesEntity bad operand", exp: `{"$$matchesEntity": 1}`, act: `1`, want: wantInvalid},
	// "This operator does not influence whether or not an actual
	// document value is considered a root-level document."
	{name: "matchesEntity at root", exp: `{"$$matchesEntity": "doc0"}`, act: `{"a": 1, "b": 2}`},
	{name: "matchesEntity nested", exp: `{"x": {"$$matchesEntity": "doc0"}}`, act: `{"x": {"a": 1, "b": 2}}`, want: wantMismatch, wantPath: "r.x.b"},

	// $$matchesHexBytes: "hexBytes is an even number of hexadecimal
	// characters (case-insensitive) and MAY be empty ... The test
	// runner MUST raise an error if the hexBytes string is malformed."
	{name: "hexBytes string", exp: `{"$$matchesHexBytes": "616263"}`, act: `"abc"`},
	{name: "hexBytes upper case", exp: `{"$$matchesHexBytes": "12AB"}`, act: `{"$binary": {"base64": "Eqs=", "subType": "00"}}`},
	{name: "hexBytes empty", exp: `{"$$matchesHexBytes": ""}`, act: `""`},
	{name: "hexBytes differs", exp: `{"$$matchesHexBytes": "616263"}`, act: `"abd"`, want: wantMismatch},
	{name: "hexBytes not a string", exp: `{"$$matchesHexBytes": "01"}`, act: `1`, want: wantMismatch},
	{name: "hexBytes odd", exp: `{"$$matchesHexBytes": "123"}`, act: `"a"`, want: wantInvalid},
	{name: "hexBytes not hex", exp: `{"$$matchesHexBytes": "zz"}`, act: `"a"`, want: wantInvalid},

	// $$sessionLsid: "the test runner MUST assert that the actual value
	// equals its logical session ID; otherwise, the test runner MUST
	// raise an error for an undefined or mistyped entity."
	{name: "sessionLsid", exp: `{"lsid": {"$$sessionLsid": "session0"}}`, act: `{"lsid": {"id": {"$binary": {"base64": "AAECAwQFBgcICQoLDA0ODw==", "subType": "04"}}}}`},
	{name: "sessionLsid differs", exp: `{"lsid": {"$$sessionLsid": "session0"}}`, act: `{"lsid": {"id": {"$binary": {"base64": "AAECAwQFBgcICQoLDA0OAA==", "subType": "04"}}}}`, want: wantMismatch, wantPath: "r.lsid"},
	{name: "sessionLsid extra field", exp: `{"lsid": {"$$sessionLsid": "session0"}}`, act: `{"lsid": {"id": {"$binary": {"base64": "AAECAwQFBgcICQoLDA0ODw==", "subType": "04"}}, "x": 1}}`, want: wantMismatch},
	{name: "sessionLsid absent", exp: `{"lsid": {"$$sessionLsid": "session0"}}`, act: `{}`, want: wantMismatch, wantPath: "r.lsid"},
	{name: "sessionLsid undefined", exp: `{"lsid": {"$$sessionLsid": "session9"}}`, act: `{"lsid": {}}`, want: wantInvalid},

	// $$lte: "The test runner MUST assert that the actual value is less
	// than or equal to the specified value. ... an expected value of 1
	// would match an actual value of 1.0 and 0.0 but would not match 1.1."
	{name: "lte equal flexible", exp: `{"$$lte": 1}`, act: `1.0`},
	{name: "lte less", exp: `{"$$lte": 1}`, act: `0.0`},
	{name: "lte greater", exp: `{"$$lte": 1}`, act: `1.1`, want: wantMismatch},
	// operator-lte.json's operands: int, double, long.
	{name: "lte double operand", exp: `{"x": {"$$lte": 2.1}}`, act: `{"x": 2}`},
	{name: "lte long operand", exp: `{"y": {"$$lte": {"$numberLong": "3"}}}`, act: `{"y": 3}`},
	{name: "lte long vs long", exp: `{"$$lte": {"$numberLong": "9007199254740992"}}`, act: `{"$numberLong": "9007199254740993"}`, want: wantMismatch},
	{name: "lte decimal", exp: `{"$$lte": {"$numberDecimal": "1.50"}}`, act: `{"$numberDecimal": "1.5"}`},
	{name: "lte decimal greater", exp: `{"$$lte": {"$numberDecimal": "1.5"}}`, act: `{"$numberDecimal": "1.51"}`, want: wantMismatch},
	{name: "lte decimal vs int", exp: `{"$$lte": {"$numberDecimal": "5"}}`, act: `1`, want: wantMismatch},
	{name: "lte string actual", exp: `{"$$lte": 1}`, act: `"0"`, want: wantMismatch},
	{name: "lte absent", exp: `{"x": {"$$lte": 1}}`, act: `{}`, want: wantMismatch, wantPath: "r.x"},
	{name: "lte bad operand", exp: `{"$$lte": "1"}`, act: `1`, want: wantInvalid},

	// $$matchAsDocument: "The test runner MUST parse the actual value
	// into a BSON document and match it against the expected value."
	{name: "matchAsDocument", exp: `{"json": {"$$matchAsDocument": {"x": 1, "y": 2}}}`, act: `{"json": "{ \"x\": 1, \"y\": 2.0 }"}`},
	{name: "matchAsDocument extjson", exp: `{"$$matchAsDocument": {"x": {"$$type": "objectId"}}}`, act: `"{ \"x\": { \"$oid\": \"57e193d7a9cc81b4027498b5\" } }"`},
	// "The actual value MUST NOT be considered a root-level document"
	{name: "matchAsDocument no extra", exp: `{"$$matchAsDocument": {"x": 1}}`, act: `"{\"x\": 1, \"y\": 2}"`, want: wantMismatch, wantPath: "r.y"},
	// "however, $$matchAsRoot may be used to change that behavior."
	{name: "matchAsDocument with matchAsRoot", exp: `{"$$matchAsDocument": {"$$matchAsRoot": {"x": 1}}}`, act: `"{\"x\": 1, \"y\": 2}"`},
	{name: "matchAsDocument scalar json", exp: `{"$$matchAsDocument": {"$$matchAsRoot": {}}}`, act: `"1"`, want: wantMismatch},
	{name: "matchAsDocument array json", exp: `{"$$matchAsDocument": {"$$matchAsRoot": {}}}`, act: `"[\"foo\"]"`, want: wantMismatch},
	{name: "matchAsDocument bad json", exp: `{"$$matchAsDocument": {"$$matchAsRoot": {}}}`, act: `"{ \"x\" }"`, want: wantMismatch},
	{name: "matchAsDocument not a string", exp: `{"$$matchAsDocument": {}}`, act: `{}`, want: wantMismatch},

	// $$matchAsRoot: "The test runner MUST treat the actual value as a
	// root-level document"
	{name: "matchAsRoot nested", exp: `{"x": {"$$matchAsRoot": {"y": 2}}}`, act: `{"x": {"y": 2, "z": 3}}`},
	{name: "matchAsRoot differs", exp: `{"x": {"$$matchAsRoot": {"y": 3}}}`, act: `{"x": {"y": 2, "z": 3}}`, want: wantMismatch, wantPath: "r.x.y"},
	{name: "matchAsRoot only that level", exp: `{"x": {"$$matchAsRoot": {"y": {"a": 1}}}}`, act: `{"x": {"y": {"a": 1, "b": 1}}}`, want: wantMismatch, wantPath: "r.x.y.b"},
	{name: "matchAsRoot not a document", exp: `{"$$matchAsRoot": {"y": 2}}`, act: `[1]`, want: wantMismatch},
	{name: "matchAsRoot bad operand", exp: `{"$$matchAsRoot": 1}`, act: `{}`, want: wantInvalid},

	// "test runners MUST check if the value is an object whose first and
	// only key starts with $$": an unknown one is an error in the test.
	{name: "unknown operator", exp: `{"$$foo": 1}`, act: `1`, want: wantInvalid},
	{name: "operator inside array", exp: `[{"$$type": "int"}, {"$$exists": true}]`, act: `[1, 2]`},
}

func TestMatchNoEntities(t *testing.T) {
	for _, exp := range []string{`{"$$matchesEntity": "x"}`, `{"$$sessionLsid": "s"}`} {
		err := Match(mustValue(exp), mustValue(`1`), nil)
		var ie *InvalidTestError
		if !errors.As(err, &ie) {
			t.Errorf("Match(%s) with no entities = %v, want an *InvalidTestError", exp, err)
		}
	}
	// An entity lookup's own error is wrapped.
	err := Match(mustValue(`{"$$matchesEntity": "x"}`), mustValue(`1`), &Options{Entities: fakeEntities{}})
	if !errors.Is(err, errUndefined) {
		t.Errorf("Match with an undefined entity = %v, want it to wrap the lookup error", err)
	}
}

func TestMismatchErrorFields(t *testing.T) {
	err := MatchDocument(mustValue(`{"reply": {"n": 2}}`).Document(), mustValue(`{"reply": {"n": 3}}`).Document(), nil)
	var me *MismatchError
	if !errors.As(err, &me) {
		t.Fatalf("got %v, want a *MismatchError", err)
	}
	if me.Path != "reply.n" || me.Expected.Int32() != 2 || me.Actual.Int32() != 3 {
		t.Fatalf("got path %q expected %v actual %v", me.Path, me.Expected, me.Actual)
	}
	if got, want := err.Error(), "reply.n: got 3, want 2"; got != want {
		t.Fatalf("message %q, want %q", got, want)
	}
	if !IsMismatch(err) {
		t.Fatal("IsMismatch = false")
	}
}

// Malformed bytes on either side give an error, never a panic or a match.
func TestMatchMalformed(t *testing.T) {
	good := mustValue(`{"a": {"b": 1}}`)
	bad := bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: []byte{5, 0, 0, 0, 3}}
	truncated := bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: []byte{12, 0, 0, 0, 3, 'a', 0, 5, 0, 0}}
	for _, c := range []struct {
		name     string
		exp, act bson.RawValue
	}{
		{"bad actual", good, bad},
		{"truncated actual", good, truncated},
		{"bad expected", bad, good},
		{"bad int", mustValue(`1`), bson.RawValue{Type: bson.TypeInt32, Value: []byte{1}}},
	} {
		if err := Match(c.exp, c.act, nil); err == nil {
			t.Errorf("%s: matched", c.name)
		}
	}
}

func TestParseValue(t *testing.T) {
	for _, c := range []struct {
		in   string
		typ  bson.Type
		fail bool
	}{
		{in: `1`, typ: bson.TypeInt32},
		{in: `{"$numberLong": "1"}`, typ: bson.TypeInt64},
		{in: `[1, "a"]`, typ: bson.TypeArray},
		{in: `{"a": 1}`, typ: bson.TypeEmbeddedDocument},
		{in: `"s"`, typ: bson.TypeString},
		{in: `1, "w": 2`, fail: true},
		{in: ``, fail: true},
		{in: `{`, fail: true},
	} {
		v, err := ParseValue([]byte(c.in))
		if c.fail {
			if err == nil {
				t.Errorf("ParseValue(%q) = %v, want an error", c.in, v)
			}
			continue
		}
		if err != nil || v.Type != c.typ {
			t.Errorf("ParseValue(%q) = %v (%v), %v; want type %v", c.in, v, v.Type, err, c.typ)
		}
	}
}
