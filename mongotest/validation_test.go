package mongotest

import (
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

// Collection validators set by create and collMod are enforced on insert,
// update (upserts included) and findAndModify, with mongod's
// DocumentValidationFailure (121) and errInfo; bypassDocumentValidation,
// validationLevel and validationAction change that as in mongod.
func TestValidationWrites(t *testing.T) {
	_, c := crudServer(t)
	c.mustRun("db", d("create", "v", "validator", d("x", d("$type", "string"))))
	c.mustRun("db", d("insert", "v", "documents", bson.A{d("_id", 1, "x", "a")}))

	tests := []struct {
		name  string
		cmd   bson.D
		reply map[string]string
	}{
		{"insert fails", d("insert", "v", "documents", bson.A{d("_id", 2, "x", 1)}), map[string]string{
			"n": "0", "writeErrors.0.code": "121", "writeErrors.0.errmsg": `"Document failed validation"`,
			"writeErrors.0.errInfo": `{"failingDocumentId":2,"details":{"operatorName":"$type","specifiedAs":{"x":{"$type":"string"}},"reason":"type did not match","consideredValue":1,"consideredType":"int"}}`}},
		{"insert bypassing", d("insert", "v", "documents", bson.A{d("_id", 3, "x", 1)}, "bypassDocumentValidation", true), map[string]string{
			"n": "1", "writeErrors": "<missing>"}},
		{"insert missing field", d("insert", "v", "documents", bson.A{d("_id", 4)}), map[string]string{
			"writeErrors.0.errInfo.details": `{"operatorName":"$type","specifiedAs":{"x":{"$type":"string"}},"reason":"field was missing"}`}},
		{"update fails", d("update", "v", "updates", bson.A{d("q", d("_id", 1), "u", d("$set", d("x", 5)))}), map[string]string{
			"n": "0", "nModified": "0", "writeErrors.0.code": "121", "writeErrors.0.errInfo.failingDocumentId": "1"}},
		{"no-op update of an invalid document passes", d("update", "v", "updates", bson.A{d("q", d("_id", 3), "u", d("$set", d("x", 1)))}), map[string]string{
			"n": "1", "nModified": "0", "writeErrors": "<missing>"}},
		{"upsert fails", d("update", "v", "updates", bson.A{d("q", d("_id", 5), "u", d("$set", d("x", 5)), "upsert", true)}), map[string]string{
			"n": "0", "writeErrors.0.code": "121", "writeErrors.0.errInfo.failingDocumentId": "5"}},
		{"update bypassing", d("update", "v", "updates", bson.A{d("q", d("_id", 1), "u", d("$set", d("y", 5)))}, "bypassDocumentValidation", true), map[string]string{
			"nModified": "1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := c.mustRun("db", tc.cmd)
			for path, want := range tc.reply {
				expectField(t, r, path, want)
			}
		})
	}

	_, err := c.run("db", d("findAndModify", "v", "query", d("_id", 1), "update", d("$set", d("x", 1))))
	ce := wantCode(t, err, 121, "Document failed validation")
	if got, _ := ce.Raw.LookupErr("errInfo"); got.Type != bson.TypeEmbeddedDocument {
		t.Errorf("findAndModify error has no errInfo: %s", ce.Raw)
	}
	r := c.mustRun("db", d("findAndModify", "v", "query", d("_id", 1), "update", d("$set", d("x", 1)), "bypassDocumentValidation", true, "new", true))
	expectField(t, r, "value.x", "1")

	// moderate: an update of a document that already fails is not checked;
	// warn: nothing fails; off: nothing is checked.
	c.mustRun("db", d("collMod", "v", "validationLevel", "moderate"))
	r = c.mustRun("db", d("update", "v", "updates", bson.A{d("q", d("_id", 3), "u", d("$set", d("x", 2)))}))
	expectField(t, r, "nModified", "1")
	r = c.mustRun("db", d("update", "v", "updates", bson.A{d("q", d("_id", 4), "u", d("$set", d("x", 2))), d("q", d("x", "a"), "u", d("$set", d("x", 2)))}))
	expectField(t, r, "writeErrors", "<missing>")
	c.mustRun("db", d("insert", "v", "documents", bson.A{d("_id", 6, "x", "b")}))
	r = c.mustRun("db", d("update", "v", "updates", bson.A{d("q", d("_id", 6), "u", d("$set", d("x", 2)))}))
	expectField(t, r, "writeErrors.0.code", "121")
	c.mustRun("db", d("collMod", "v", "validationAction", "warn"))
	r = c.mustRun("db", d("insert", "v", "documents", bson.A{d("_id", 7, "x", 1)}))
	expectField(t, r, "n", "1")
	c.mustRun("db", d("collMod", "v", "validationAction", "error", "validationLevel", "off"))
	r = c.mustRun("db", d("insert", "v", "documents", bson.A{d("_id", 8, "x", 1)}))
	expectField(t, r, "n", "1")
}

// errInfo details for the validators mongotest explains exactly, and the
// operatorName-only description of the others.
func TestValidationErrInfo(t *testing.T) {
	_, c := crudServer(t)
	tests := []struct {
		name      string
		validator bson.D
		doc       bson.D
		details   string
	}{
		{"implicit equality", d("a", 1), d("_id", 1, "a", 2),
			`{"operatorName":"$eq","specifiedAs":{"a":1},"reason":"comparison failed","consideredValue":2}`},
		{"comparison on array", d("a", d("$gt", 5)), d("_id", 1, "a", bson.A{1, 2}),
			`{"operatorName":"$gt","specifiedAs":{"a":{"$gt":5}},"reason":"comparison failed","consideredValues":[1,2]}`},
		{"in", d("a", d("$in", bson.A{1, 2})), d("_id", 1, "a", 3),
			`{"operatorName":"$in","specifiedAs":{"a":{"$in":[1,2]}},"reason":"no matching value found in array","consideredValue":3}`},
		{"exists", d("a", d("$exists", true)), d("_id", 1),
			`{"operatorName":"$exists","specifiedAs":{"a":{"$exists":true}},"reason":"path does not exist"}`},
		{"expr", d("$expr", d("$gt", bson.A{"$a", "$b"})), d("_id", 1, "a", 1, "b", 2),
			`{"operatorName":"$expr","specifiedAs":{"$expr":{"$gt":["$a","$b"]}},"reason":"expression did not match","expressionResult":false}`},
		{"implicit and", d("a", d("$gte", 1, "$lte", 3), "b", "x"), d("_id", 1, "a", 5, "b", "x"),
			`{"operatorName":"$and","clausesNotSatisfied":[{"index":1,"details":{"operatorName":"$lte","specifiedAs":{"a":{"$lte":3}},"reason":"comparison failed","consideredValue":5}}]}`},
		{"or named only", d("$or", bson.A{d("a", 1), d("b", 1)}), d("_id", 1),
			`{"operatorName":"$or"}`},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			coll := "e" + string(rune('a'+i))
			c.mustRun("db", d("create", coll, "validator", tc.validator))
			r := c.mustRun("db", d("insert", coll, "documents", bson.A{tc.doc}))
			expectField(t, r, "writeErrors.0.code", "121")
			expectField(t, r, "writeErrors.0.errInfo.details", tc.details)
		})
	}
}

// $jsonSchema validators: matching and errInfo details as mongod's
// doc_validation_error tests give them.
func TestValidationJSONSchema(t *testing.T) {
	_, c := crudServer(t)
	tests := []struct {
		name    string
		schema  bson.D
		doc     bson.D
		details string // "" when the document is valid
	}{
		{"minimum with title and description", d("properties", d("a", d("minimum", 1)), "title", "example title", "description", "example description"), d("a", 0),
			`{"operatorName":"$jsonSchema","title":"example title","description":"example description","schemaRulesNotSatisfied":[{"operatorName":"properties","propertiesNotSatisfied":[{"propertyName":"a","details":[{"operatorName":"minimum","specifiedAs":{"minimum":1},"reason":"comparison failed","consideredValue":0}]}]}]}`},
		{"type with annotations", d("properties", d("a", d("type", "number", "minimum", 1, "title", "property a", "description", "a >= 1"))), d("a", "foo"),
			`{"operatorName":"$jsonSchema","schemaRulesNotSatisfied":[{"operatorName":"properties","propertiesNotSatisfied":[{"propertyName":"a","title":"property a","description":"a >= 1","details":[{"operatorName":"type","specifiedAs":{"type":"number"},"reason":"type did not match","consideredValue":"foo","consideredType":"string"}]}]}]}`},
		{"bsonType", d("properties", d("a", d("bsonType", "int", "minimum", 1))), d("a", 1.1),
			`{"operatorName":"$jsonSchema","schemaRulesNotSatisfied":[{"operatorName":"properties","propertiesNotSatisfied":[{"propertyName":"a","details":[{"operatorName":"bsonType","specifiedAs":{"bsonType":"int"},"reason":"type did not match","consideredValue":1.1,"consideredType":"double"}]}]}]}`},
		{"required missing", d("required", bson.A{"a"}, "properties", d("a", d("minimum", 1))), d("b", 1),
			`{"operatorName":"$jsonSchema","schemaRulesNotSatisfied":[{"operatorName":"required","specifiedAs":{"required":["a"]},"missingProperties":["a"]}]}`},
		{"exclusive minimum", d("properties", d("a", d("minimum", 1, "exclusiveMinimum", true))), d("a", 1),
			`{"operatorName":"$jsonSchema","schemaRulesNotSatisfied":[{"operatorName":"properties","propertiesNotSatisfied":[{"propertyName":"a","details":[{"operatorName":"minimum","specifiedAs":{"minimum":1,"exclusiveMinimum":true},"reason":"comparison failed","consideredValue":1}]}]}]}`},
		{"enum", d("properties", d("c", d("enum", bson.A{1, 2, 3}))), d("c", 0),
			`{"operatorName":"$jsonSchema","schemaRulesNotSatisfied":[{"operatorName":"properties","propertiesNotSatisfied":[{"propertyName":"c","details":[{"operatorName":"enum","specifiedAs":{"enum":[1,2,3]},"reason":"value was not found in enum","consideredValue":0}]}]}]}`},
		{"maxLength", d("properties", d("s", d("maxLength", 2))), d("s", "abc"),
			`{"operatorName":"$jsonSchema","schemaRulesNotSatisfied":[{"operatorName":"properties","propertiesNotSatisfied":[{"propertyName":"s","details":[{"operatorName":"maxLength","specifiedAs":{"maxLength":2},"reason":"specified string length was not satisfied","consideredValue":"abc"}]}]}]}`},
		{"keywords of other types do not apply", d("properties", d("a", d("minimum", 5, "maxLength", 1))), d("a", "x"), ""},
		{"missing optional property", d("properties", d("a", d("bsonType", "string"))), d("b", 1), ""},
		{"nested required", d("properties", d("o", d("bsonType", "object", "required", bson.A{"z", "y"}))), d("o", d("x", 1)),
			`{"operatorName":"$jsonSchema","schemaRulesNotSatisfied":[{"operatorName":"properties","propertiesNotSatisfied":[{"propertyName":"o","details":[{"operatorName":"required","specifiedAs":{"required":["z","y"]},"missingProperties":["y","z"]}]}]}]}`},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			coll := "s" + string(rune('a'+i))
			c.mustRun("db", d("create", coll, "validator", d("$jsonSchema", tc.schema)))
			r := c.mustRun("db", d("insert", coll, "documents", bson.A{tc.doc}))
			if tc.details == "" {
				expectField(t, r, "writeErrors", "<missing>")
				return
			}
			expectField(t, r, "writeErrors.0.code", "121")
			expectField(t, r, "writeErrors.0.errInfo.details", tc.details)
		})
	}
}

// create and collMod check a validator: $jsonSchema is not implemented,
// and a bad filter is mongod's parse error.
func TestValidatorOptions(t *testing.T) {
	_, c := crudServer(t)
	_, err := c.run("db", d("create", "j", "validator", d("$jsonSchema", d("properties", d("a", d("pattern", "^x"))))))
	wantCode(t, err, 238, "$jsonSchema keyword 'pattern'")
	_, err = c.run("db", d("create", "j", "validator", d("$jsonSchema", d("nope", 1))))
	wantCode(t, err, 9, "Unknown $jsonSchema keyword: nope")
	_, err = c.run("db", d("create", "j", "validator", d("$jsonSchema", d("type", "integer"))))
	wantCode(t, err, 9, "$jsonSchema type 'integer' is not currently supported.")
	_, err = c.run("db", d("create", "j", "validator", d("$or", bson.A{d("$jsonSchema", d("required", bson.A{"a"}))})))
	wantCode(t, err, 238, "$jsonSchema")
	_, err = c.run("db", d("create", "j", "validator", d("$bad", 1)))
	wantCode(t, err, 2, "unknown top level operator")
	_, err = c.run("db", d("create", "j", "validationLevel", "sometimes"))
	wantCode(t, err, 2, "validationLevel")
	c.mustRun("db", d("create", "j"))
	c.mustRun("db", d("collMod", "j", "validator", d("n", d("$gte", 0))))
	r := c.mustRun("db", d("insert", "j", "documents", bson.A{d("n", -1)}))
	expectField(t, r, "writeErrors.0.code", "121")
}
