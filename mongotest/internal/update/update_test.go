package update

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

func doc(t testing.TB, s string) bson.Raw {
	t.Helper()
	r, err := bson.ParseExtJSON([]byte(s))
	if err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return r
}

func docValue(t testing.TB, s string) bson.RawValue {
	return bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc(t, s)}
}

var testNow = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)

func TestApply(t *testing.T) {
	tests := []struct {
		name, update, doc, want string
		filters                 []string
		insert                  bool
	}{
		{"set existing in place", `{"$set": {"a": 5}}`, `{"_id": 1, "a": 1, "b": 2}`, `{"_id": 1, "a": 5, "b": 2}`, nil, false},
		{"set new appended", `{"$set": {"c": 3}}`, `{"_id": 1, "a": 1}`, `{"_id": 1, "a": 1, "c": 3}`, nil, false},
		{"set new fields lexicographic", `{"$set": {"z": 1, "b": 2, "a.c": 3}}`, `{"_id": 1}`, `{"_id": 1, "a": {"c": 3}, "b": 2, "z": 1}`, nil, false},
		{"set dotted into existing", `{"$set": {"a.b.c": 1}}`, `{"a": {"x": 0}}`, `{"a": {"x": 0, "b": {"c": 1}}}`, nil, false},
		{"set array index", `{"$set": {"a.1": 9}}`, `{"a": [1, 2, 3]}`, `{"a": [1, 9, 3]}`, nil, false},
		{"set array index pads", `{"$set": {"a.4": 9}}`, `{"a": [1]}`, `{"a": [1, null, null, null, 9]}`, nil, false},
		{"set in array element doc", `{"$set": {"a.0.b": 2}}`, `{"a": [{"b": 1}]}`, `{"a": [{"b": 2}]}`, nil, false},
		{"set numeric key in doc", `{"$set": {"a.1": 9}}`, `{"a": {"x": 1}}`, `{"a": {"x": 1, "1": 9}}`, nil, false},
		{"unset", `{"$unset": {"a": "", "z": 1}}`, `{"_id": 1, "a": 1, "b": 2}`, `{"_id": 1, "b": 2}`, nil, false},
		{"unset nested", `{"$unset": {"a.b": 1}}`, `{"a": {"b": 1, "c": 2}}`, `{"a": {"c": 2}}`, nil, false},
		{"unset array element nulls", `{"$unset": {"a.0": 1}}`, `{"a": [1, 2]}`, `{"a": [null, 2]}`, nil, false},
		{"unset through scalar is no-op", `{"$unset": {"a.b.c": 1}}`, `{"a": 1}`, `{"a": 1}`, nil, false},
		{"inc int32", `{"$inc": {"a": 2}}`, `{"a": 1}`, `{"a": 3}`, nil, false},
		{"inc missing", `{"$inc": {"a": 2}}`, `{}`, `{"a": 2}`, nil, false},
		{"inc int32 overflow widens", `{"$inc": {"a": 1}}`, `{"a": 2147483647}`, `{"a": {"$numberLong": "2147483648"}}`, nil, false},
		{"inc int64", `{"$inc": {"a": {"$numberLong": "5"}}}`, `{"a": 1}`, `{"a": {"$numberLong": "6"}}`, nil, false},
		{"inc double", `{"$inc": {"a": 0.5}}`, `{"a": 1}`, `{"a": 1.5}`, nil, false},
		{"inc decimal", `{"$inc": {"a": {"$numberDecimal": "0.1"}}}`, `{"a": {"$numberDecimal": "0.2"}}`, `{"a": {"$numberDecimal": "0.3"}}`, nil, false},
		{"inc int by decimal", `{"$inc": {"a": {"$numberDecimal": "1.5"}}}`, `{"a": 2}`, `{"a": {"$numberDecimal": "3.5"}}`, nil, false},
		{"mul", `{"$mul": {"a": 3}}`, `{"a": 4}`, `{"a": 12}`, nil, false},
		{"mul missing sets zero", `{"$mul": {"a": {"$numberLong": "3"}, "b": 2.5}}`, `{}`, `{"a": {"$numberLong": "0"}, "b": 0.0}`, nil, false},
		{"mul decimal", `{"$mul": {"a": {"$numberDecimal": "1.5"}}}`, `{"a": {"$numberDecimal": "2.0"}}`, `{"a": {"$numberDecimal": "3.00"}}`, nil, false},
		{"min lowers", `{"$min": {"a": 1}}`, `{"a": 5}`, `{"a": 1}`, nil, false},
		{"min keeps", `{"$min": {"a": 9}}`, `{"a": 5}`, `{"a": 5}`, nil, false},
		{"min across types", `{"$min": {"a": null}}`, `{"a": 5}`, `{"a": null}`, nil, false},
		{"max raises", `{"$max": {"a": 9, "b": 1}}`, `{"a": 5}`, `{"a": 9, "b": 1}`, nil, false},
		{"rename", `{"$rename": {"a": "z"}}`, `{"a": 1, "b": 2}`, `{"b": 2, "z": 1}`, nil, false},
		{"rename nested", `{"$rename": {"a.b": "c.d"}}`, `{"a": {"b": 1}}`, `{"a": {}, "c": {"d": 1}}`, nil, false},
		{"rename over existing", `{"$rename": {"a": "b"}}`, `{"a": 1, "b": 2, "c": 3}`, `{"c": 3, "b": 1}`, nil, false},
		{"rename missing no-op", `{"$rename": {"x": "y"}}`, `{"a": 1}`, `{"a": 1}`, nil, false},
		{"push", `{"$push": {"a": 3}}`, `{"a": [1, 2]}`, `{"a": [1, 2, 3]}`, nil, false},
		{"push missing creates", `{"$push": {"a": 3}}`, `{}`, `{"a": [3]}`, nil, false},
		{"push array as one element", `{"$push": {"a": [3, 4]}}`, `{"a": [1]}`, `{"a": [1, [3, 4]]}`, nil, false},
		{"push each", `{"$push": {"a": {"$each": [3, 4]}}}`, `{"a": [1]}`, `{"a": [1, 3, 4]}`, nil, false},
		{"push position", `{"$push": {"a": {"$each": [9], "$position": 1}}}`, `{"a": [1, 2]}`, `{"a": [1, 9, 2]}`, nil, false},
		{"push negative position", `{"$push": {"a": {"$each": [9], "$position": -1}}}`, `{"a": [1, 2]}`, `{"a": [1, 9, 2]}`, nil, false},
		{"push slice", `{"$push": {"a": {"$each": [3, 4], "$slice": -2}}}`, `{"a": [1, 2]}`, `{"a": [3, 4]}`, nil, false},
		{"push slice zero", `{"$push": {"a": {"$each": [3], "$slice": 0}}}`, `{"a": [1, 2]}`, `{"a": []}`, nil, false},
		{"push sort values", `{"$push": {"a": {"$each": [0, 5], "$sort": -1}}}`, `{"a": [3, 1]}`, `{"a": [5, 3, 1, 0]}`, nil, false},
		{"push sort fields slice", `{"$push": {"a": {"$each": [{"s": 2}], "$sort": {"s": 1}, "$slice": 2}}}`, `{"a": [{"s": 3}, {"s": 1}]}`, `{"a": [{"s": 1}, {"s": 2}]}`, nil, false},
		{"addToSet", `{"$addToSet": {"a": 2}}`, `{"a": [1, 2]}`, `{"a": [1, 2]}`, nil, false},
		{"addToSet numeric equality", `{"$addToSet": {"a": 2.0}}`, `{"a": [1, 2]}`, `{"a": [1, 2]}`, nil, false},
		{"addToSet each", `{"$addToSet": {"a": {"$each": [2, 3, 3]}}}`, `{"a": [1, 2]}`, `{"a": [1, 2, 3]}`, nil, false},
		{"addToSet missing", `{"$addToSet": {"a": {"$each": []}}}`, `{}`, `{"a": []}`, nil, false},
		{"pull value", `{"$pull": {"a": 2}}`, `{"a": [1, 2, 3, 2]}`, `{"a": [1, 3]}`, nil, false},
		{"pull condition", `{"$pull": {"a": {"$gte": 2}}}`, `{"a": [1, 2, 3]}`, `{"a": [1]}`, nil, false},
		{"pull document match", `{"$pull": {"a": {"b": 1}}}`, `{"a": [{"b": 1, "c": 2}, {"b": 2}, 1]}`, `{"a": [{"b": 2}, 1]}`, nil, false},
		{"pull regex", `{"$pull": {"a": {"$regularExpression": {"pattern": "^x", "options": ""}}}}`, `{"a": ["xa", "b"]}`, `{"a": ["b"]}`, nil, false},
		{"pull missing", `{"$pull": {"a": 1}}`, `{}`, `{}`, nil, false},
		{"pullAll", `{"$pullAll": {"a": [1, 3]}}`, `{"a": [1, 2, 3, 1.0]}`, `{"a": [2]}`, nil, false},
		{"pop last", `{"$pop": {"a": 1}}`, `{"a": [1, 2, 3]}`, `{"a": [1, 2]}`, nil, false},
		{"pop first", `{"$pop": {"a": -1}}`, `{"a": [1, 2, 3]}`, `{"a": [2, 3]}`, nil, false},
		{"pop empty", `{"$pop": {"a": 1}}`, `{"a": []}`, `{"a": []}`, nil, false},
		{"currentDate", `{"$currentDate": {"a": true, "b": {"$type": "timestamp"}, "c": {"$type": "date"}}}`, `{}`,
			`{"a": {"$date": "2024-05-06T07:08:09Z"}, "b": {"$timestamp": {"t": 1714979289, "i": 1}}, "c": {"$date": "2024-05-06T07:08:09Z"}}`, nil, false},
		{"setOnInsert ignored on update", `{"$setOnInsert": {"a": 1}, "$set": {"b": 1}}`, `{"_id": 1}`, `{"_id": 1, "b": 1}`, nil, false},
		{"setOnInsert on insert", `{"$setOnInsert": {"a": 1}, "$set": {"b": 1}}`, `{"_id": 1}`, `{"_id": 1, "a": 1, "b": 1}`, nil, true},
		{"all positional", `{"$inc": {"a.$[]": 1}}`, `{"a": [1, 2]}`, `{"a": [2, 3]}`, nil, false},
		{"all positional nested", `{"$set": {"a.$[].b": 0}}`, `{"a": [{"b": 1}, {"c": 1}]}`, `{"a": [{"b": 0}, {"c": 1, "b": 0}]}`, nil, false},
		{"array filter", `{"$set": {"a.$[x]": 0}}`, `{"a": [1, 5, 7]}`, `{"a": [1, 0, 0]}`, []string{`{"x": {"$gt": 4}}`}, false},
		{"array filter field", `{"$inc": {"a.$[e].n": 10}}`, `{"a": [{"k": 1, "n": 1}, {"k": 2, "n": 1}]}`, `{"a": [{"k": 1, "n": 1}, {"k": 2, "n": 11}]}`, []string{`{"e.k": 2}`}, false},
		{"nested array filters", `{"$set": {"a.$[i].b.$[j]": 0}}`, `{"a": [{"t": 1, "b": [1, 2]}, {"t": 0, "b": [1, 2]}]}`, `{"a": [{"t": 1, "b": [1, 0]}, {"t": 0, "b": [1, 2]}]}`,
			[]string{`{"i.t": 1}`, `{"j": 2}`}, false},
		{"replacement keeps _id first", `{"x": 1, "y": 2}`, `{"_id": 7, "a": 1}`, `{"_id": 7, "x": 1, "y": 2}`, nil, false},
		{"replacement with same _id", `{"x": 1, "_id": 7}`, `{"_id": 7, "a": 1}`, `{"_id": 7, "x": 1}`, nil, false},
		{"empty replacement", `{}`, `{"_id": 7, "a": 1}`, `{"_id": 7}`, nil, false},
		{"set same _id", `{"$set": {"_id": 7, "a": 2}}`, `{"_id": 7, "a": 1}`, `{"_id": 7, "a": 2}`, nil, false},
		{"empty set is a no-op", `{"$set": {}}`, `{"_id": 7}`, `{"_id": 7}`, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var filters []bson.Raw
			for _, f := range tt.filters {
				filters = append(filters, doc(t, f))
			}
			u, err := Compile(docValue(t, tt.update), filters)
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			in := doc(t, tt.doc)
			orig := slices.Clone(in)
			out, changed, err := u.Apply(in, tt.insert, testNow)
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			want := doc(t, tt.want)
			if !slices.Equal(out, want) {
				t.Errorf("got %s, want %s", out, want)
			}
			if changed != !slices.Equal(want, orig) {
				t.Errorf("changed = %v", changed)
			}
			if !slices.Equal(in, orig) {
				t.Error("Apply modified its input")
			}
		})
	}
}

func TestIsReplacement(t *testing.T) {
	u, _ := Compile(docValue(t, `{"a": 1}`), nil)
	v, _ := Compile(docValue(t, `{"$set": {"a": 1}}`), nil)
	if !u.IsReplacement() || v.IsReplacement() {
		t.Error("IsReplacement is wrong")
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		update  string
		filters []string
		code    int32
		text    string
	}{
		{`{"$foo": {"a": 1}}`, nil, mongoerr.FailedToParse, "Unknown modifier: $foo"},
		{`{"$set": 5}`, nil, mongoerr.FailedToParse, "Modifiers operate on fields"},
		{`{"$set": {"a": 1}, "$inc": {"a": 1}}`, nil, mongoerr.ConflictingUpdateOperators, "conflict at 'a'"},
		{`{"$set": {"a.b": 1}, "$unset": {"a": 1}}`, nil, mongoerr.ConflictingUpdateOperators, "conflict"},
		{`{"$rename": {"a": "b"}, "$set": {"b": 1}}`, nil, mongoerr.ConflictingUpdateOperators, "conflict"},
		{`{"$inc": {"a": "x"}}`, nil, mongoerr.TypeMismatch, "Cannot increment with non-numeric argument"},
		{`{"$mul": {"a": null}}`, nil, mongoerr.TypeMismatch, "Cannot multiply with non-numeric argument"},
		{`{"$rename": {"a": 1}}`, nil, mongoerr.BadValue, "must be a string"},
		{`{"$rename": {"a": "a"}}`, nil, mongoerr.BadValue, "must differ"},
		{`{"$rename": {"a": "a.b"}}`, nil, mongoerr.BadValue, "same path"},
		{`{"$rename": {"a.$[]": "b"}}`, nil, mongoerr.BadValue, "dynamic"},
		{`{"$rename": {"a": "b\u0000c"}}`, nil, mongoerr.BadValue, "NUL byte"},
		{`{"$pop": {"a": 2}}`, nil, mongoerr.FailedToParse, "$pop expects 1 or -1"},
		{`{"$pop": {"a": "x"}}`, nil, mongoerr.FailedToParse, "Expected a number"},
		{`{"$push": {"a": {"$each": 1}}}`, nil, mongoerr.BadValue, "$each"},
		{`{"$push": {"a": {"$each": [], "$foo": 1}}}`, nil, mongoerr.BadValue, "Unrecognized clause in $push: $foo"},
		{`{"$push": {"a": {"$each": [], "$slice": "x"}}}`, nil, mongoerr.BadValue, "$slice"},
		{`{"$push": {"a": {"$each": [], "$sort": 2}}}`, nil, mongoerr.BadValue, "$sort is invalid"},
		{`{"$push": {"a": {"$each": [], "$sort": {}}}}`, nil, mongoerr.BadValue, "$sort pattern is empty"},
		{`{"$pullAll": {"a": 1}}`, nil, mongoerr.BadValue, "$pullAll requires an array"},
		{`{"$pull": {"a": {"$foo": 1}}}`, nil, mongoerr.BadValue, "unknown operator: $foo"},
		{`{"$currentDate": {"a": 1}}`, nil, mongoerr.BadValue, "not valid type for $currentDate"},
		{`{"$currentDate": {"a": {"$type": "x"}}}`, nil, mongoerr.BadValue, "'date' or 'timestamp'"},
		{`{"$set": {"a..b": 1}}`, nil, codeEmptyFieldName, "empty field name"},
		{`{"$set": {"": 1}}`, nil, codeEmptyFieldName, "empty update path"},
		{`{"$set": {"$a": 1}}`, nil, mongoerr.DollarPrefixedFieldName, "$a"},
		{`{"$set": {"a.$[x]": 1}}`, nil, mongoerr.BadValue, "No array filter found for identifier 'x'"},
		{`{"$set": {"a": 1}}`, []string{`{"x": 1}`}, mongoerr.FailedToParse, "identifier 'x' was not used"},
		{`{"$set": {"a.$[x]": 1}}`, []string{`{"x": 1}`, `{"x": 2}`}, mongoerr.FailedToParse, "same top-level field name x"},
		{`{"$set": {"a.$[x]": 1}}`, []string{`{"x": 1, "y": 2}`}, mongoerr.FailedToParse, "single top-level field name"},
		{`{"$set": {"a.$[X]": 1}}`, []string{`{"X": 1}`}, mongoerr.BadValue, "lowercase letter"},
		{`{"$set": {"a": 1}}`, []string{`{}`}, mongoerr.FailedToParse, "without a top-level field name"},
		{`{"$set": {"a.$[x]": 1}}`, []string{`{"x": {"$foo": 1}}`}, mongoerr.BadValue, "unknown operator"},
		{`{"a": 1, "$set": {"b": 1}}`, nil, mongoerr.DollarPrefixedFieldName, "$set"},
		{`{"a": 1}`, []string{`{"x": 1}`}, mongoerr.FailedToParse, "replacement"},
		{`{"$bit": {"a": {"and": 1}}}`, nil, mongoerr.NotImplemented, "$bit"},
	}
	for _, tt := range tests {
		var filters []bson.Raw
		for _, f := range tt.filters {
			filters = append(filters, doc(t, f))
		}
		_, err := Compile(docValue(t, tt.update), filters)
		var me *mongoerr.Error
		if !errors.As(err, &me) || me.Code != tt.code || !strings.Contains(me.Message, tt.text) {
			t.Errorf("Compile(%s) = %v, want code %d containing %q", tt.update, err, tt.code, tt.text)
		}
	}
	arr := bson.RawValue{Type: bson.TypeArray, Value: doc(t, `{"0": {"$set": {"a": 1}}}`)}
	if _, err := Compile(arr, nil); err != nil {
		t.Errorf("pipeline update: %v", err)
	}
	if _, err := Compile(bson.RawValue{Type: bson.TypeInt32, Value: []byte{1, 0, 0, 0}}, nil); mongoerr.As(err).Code != mongoerr.FailedToParse {
		t.Errorf("int update: %v", err)
	}
	if _, err := Compile(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: []byte{9, 9}}, nil); err == nil {
		t.Error("malformed update compiled")
	}
}

func TestApplyErrors(t *testing.T) {
	tests := []struct {
		update, doc string
		filters     []string
		code        int32
		text        string
	}{
		{`{"$set": {"_id": 2}}`, `{"_id": 1}`, nil, mongoerr.ImmutableField, "_id"},
		{`{"$unset": {"_id": 1}}`, `{"_id": 1}`, nil, mongoerr.ImmutableField, "_id"},
		{`{"$set": {"_id.x": 2}}`, `{"_id": {"x": 1}}`, nil, mongoerr.ImmutableField, "_id"},
		{`{"_id": 2, "a": 1}`, `{"_id": 1}`, nil, mongoerr.ImmutableField, "altered"},
		{`{"$set": {"a.b": 1}}`, `{"a": 5}`, nil, mongoerr.PathNotViable, "Cannot create field 'b'"},
		{`{"$set": {"a.x": 1}}`, `{"a": [1]}`, nil, mongoerr.PathNotViable, "Cannot create field 'x'"},
		{`{"$inc": {"a": 1}}`, `{"a": "s"}`, nil, mongoerr.TypeMismatch, "non-numeric type string"},
		{`{"$inc": {"a": 1}}`, `{"a": {"$numberLong": "9223372036854775807"}}`, nil, mongoerr.BadValue, "overflow"},
		{`{"$mul": {"a": 2}}`, `{"a": {"$numberLong": "9223372036854775807"}}`, nil, mongoerr.BadValue, "overflow"},
		{`{"$push": {"a": 1}}`, `{"a": 1}`, nil, mongoerr.BadValue, "must be an array"},
		{`{"$addToSet": {"a": 1}}`, `{"a": {}}`, nil, mongoerr.BadValue, "must be an array"},
		{`{"$pull": {"a": 1}}`, `{"a": 1}`, nil, mongoerr.BadValue, "non-array"},
		{`{"$pop": {"a": 1}}`, `{"a": 1}`, nil, mongoerr.TypeMismatch, "non-array type"},
		{`{"$set": {"a.$": 1}}`, `{"a": [1]}`, nil, mongoerr.NotImplemented, "does not support the positional $ update operator"},
		{`{"$set": {"a.$[]": 1}}`, `{"a": 1}`, nil, mongoerr.BadValue, "non-array element"},
		{`{"$set": {"a.$[]": 1}}`, `{}`, nil, mongoerr.BadValue, "must exist"},
		{`{"$set": {"a.$[x].b": 1}}`, `{"a": [1]}`, []string{`{"x": 1}`}, mongoerr.PathNotViable, "Cannot create field 'b'"},
		{`{"$rename": {"a.0": "b"}}`, `{"a": [1]}`, nil, mongoerr.BadValue, "source field cannot be an array element"},
		{`{"$rename": {"a": "b.0"}}`, `{"a": 1, "b": [1]}`, nil, mongoerr.BadValue, "destination field cannot be an array element"},
		{`{"$set": {"a.2000000": 1}}`, `{"a": []}`, nil, mongoerr.BadValue, "backfill"},
	}
	for _, tt := range tests {
		var filters []bson.Raw
		for _, f := range tt.filters {
			filters = append(filters, doc(t, f))
		}
		u, err := Compile(docValue(t, tt.update), filters)
		if err != nil {
			t.Errorf("Compile(%s): %v", tt.update, err)
			continue
		}
		_, _, err = u.Apply(doc(t, tt.doc), false, testNow)
		var me *mongoerr.Error
		if !errors.As(err, &me) || me.Code != tt.code || !strings.Contains(me.Message, tt.text) {
			t.Errorf("%s on %s = %v, want code %d containing %q", tt.update, tt.doc, err, tt.code, tt.text)
		}
	}
	u, _ := Compile(docValue(t, `{"$set": {"a": 1}}`), nil)
	if _, _, err := u.Apply(bson.Raw{7, 0, 0}, false, testNow); err == nil {
		t.Error("Apply accepted a malformed document")
	}
}

func TestUpsertSeed(t *testing.T) {
	tests := []struct{ filter, want string }{
		{`{}`, `{}`},
		{`{"a": 1}`, `{"a": 1}`},
		{`{"a": 1, "_id": 5}`, `{"_id": 5, "a": 1}`},
		{`{"a": 1, "b.c": 2}`, `{"a": 1, "b": {"c": 2}}`},
		{`{"b.c": 2, "b.d": 3}`, `{"b": {"c": 2, "d": 3}}`},
		{`{"$and": [{"a": 1}, {"b": {"$eq": 2}}]}`, `{"a": 1, "b": 2}`},
		{`{"a": {"$gt": 1}, "b": {"$in": [1]}, "c": {"$regularExpression": {"pattern": "x", "options": ""}}}`, `{}`},
		{`{"$or": [{"a": 1}], "b": {"x": 1}}`, `{"b": {"x": 1}}`},
		{`{"a": [1, 2]}`, `{"a": [1, 2]}`},
		{`{"a": {"$ref": "c", "$id": 1}}`, `{"a": {"$ref": "c", "$id": 1}}`},
	}
	for _, tt := range tests {
		got, err := UpsertSeed(doc(t, tt.filter))
		if err != nil {
			t.Errorf("UpsertSeed(%s): %v", tt.filter, err)
			continue
		}
		if want := doc(t, tt.want); !slices.Equal(got, want) {
			t.Errorf("UpsertSeed(%s) = %s, want %s", tt.filter, got, want)
		}
	}
	for _, f := range []string{`{"a": 1, "a.b": 2}`, `{"a.b": 2, "a": 1}`, `{"$and": [{"a": 1}, {"a": 2}]}`, `{"$and": 1}`} {
		if _, err := UpsertSeed(doc(t, f)); err == nil {
			t.Errorf("UpsertSeed(%s) succeeded", f)
		}
	}
	if got, err := UpsertSeed(nil); err != nil || !slices.Equal(got, doc(t, `{}`)) {
		t.Errorf("UpsertSeed(nil) = %v, %v", got, err)
	}
	if _, err := UpsertSeed(bson.Raw{1, 2}); err == nil {
		t.Error("UpsertSeed accepted malformed BSON")
	}
}

// An upsert applies the update to the seed with insert set.
func TestUpsertFlow(t *testing.T) {
	seed, err := UpsertSeed(doc(t, `{"_id": 3, "k": "x"}`))
	if err != nil {
		t.Fatal(err)
	}
	u, _ := Compile(docValue(t, `{"$inc": {"n": 1}, "$setOnInsert": {"created": true}}`), nil)
	out, changed, err := u.Apply(seed, true, testNow)
	if err != nil || !changed {
		t.Fatal(err, changed)
	}
	if want := doc(t, `{"_id": 3, "k": "x", "created": true, "n": 1}`); !slices.Equal(out, want) {
		t.Errorf("upsert = %s, want %s", out, want)
	}
}

func FuzzApply(f *testing.F) {
	seeds := [][3]string{
		{`{"$set": {"a.b": 1, "c.1": 2}}`, `{"_id": 1, "a": {"x": 1}, "c": [0]}`, `{}`},
		{`{"$inc": {"a.$[]": 1}, "$push": {"b": {"$each": [1, 2], "$sort": 1, "$slice": -1}}}`, `{"a": [1, 2], "b": [3]}`, `{}`},
		{`{"$set": {"a.$[x].v": 0}}`, `{"a": [{"v": 1}, {"v": 2}]}`, `{"x.v": {"$gt": 1}}`},
		{`{"$rename": {"a": "b.c"}, "$unset": {"d": 1}, "$pull": {"e": {"$gte": 2}}}`, `{"a": 1, "d": 2, "e": [1, 2, 3]}`, `{}`},
		{`{"x": 1}`, `{"_id": 1}`, `{}`},
		{`{"$mul": {"a": {"$numberDecimal": "1.5"}}, "$min": {"m": 1}, "$pop": {"p": -1}}`, `{"a": 2, "p": [1]}`, `{}`},
	}
	for _, s := range seeds {
		f.Add([]byte(doc(f, s[0])), []byte(doc(f, s[1])), []byte(doc(f, s[2])))
	}
	f.Fuzz(func(t *testing.T, upd, d, filter []byte) {
		var filters []bson.Raw
		if len(filter) > 5 {
			filters = []bson.Raw{filter}
		}
		u, err := Compile(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: upd}, filters)
		if err != nil {
			var me *mongoerr.Error
			if !errors.As(err, &me) {
				t.Fatalf("error is not a *mongoerr.Error: %v", err)
			}
			return
		}
		out, _, err := u.Apply(d, false, testNow)
		if err == nil {
			if verr := out.Validate(); verr != nil {
				t.Fatalf("Apply produced invalid BSON: %v", verr)
			}
		}
		_, _ = UpsertSeed(d)
	})
}
