package update

import (
	"errors"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
	"github.com/mongoscope/mongoscope/mongotest/internal/query"
)

func arrValue(t testing.TB, s string) bson.RawValue {
	t.Helper()
	d := doc(t, `{"a": `+s+`}`)
	return d.Lookup("a")
}

func TestPipelineApply(t *testing.T) {
	tests := []struct {
		name, pipeline, doc, want string
		changed                   bool
	}{
		{"set from fields", `[{"$set": {"t": {"$add": ["$a", "$b"]}}}]`, `{"_id": 1, "a": 1, "b": 2}`, `{"_id": 1, "a": 1, "b": 2, "t": 3}`, true},
		{"addFields then unset", `[{"$addFields": {"c": 1}}, {"$unset": "a"}]`, `{"_id": 1, "a": 1}`, `{"_id": 1, "c": 1}`, true},
		{"project keeps _id", `[{"$project": {"b": 1}}]`, `{"_id": 1, "a": 1, "b": 2}`, `{"_id": 1, "b": 2}`, true},
		{"replaceRoot restores _id first", `[{"$replaceRoot": {"newRoot": "$t"}}, {"$addFields": {"foo": 1}}]`, `{"_id": 1, "t": {"u": {"v": 1}}}`, `{"_id": 1, "u": {"v": 1}, "foo": 1}`, true},
		{"replaceWith same _id", `[{"$replaceWith": {"_id": "$_id", "x": 2}}]`, `{"_id": 1, "x": 1}`, `{"_id": 1, "x": 2}`, true},
		{"no change", `[{"$set": {"a": "$a"}}]`, `{"_id": 1, "a": 1}`, `{"_id": 1, "a": 1}`, false},
		{"empty pipeline", `[]`, `{"_id": 1, "a": 1}`, `{"_id": 1, "a": 1}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := Compile(arrValue(t, tt.pipeline), nil)
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			if u.IsReplacement() {
				t.Error("a pipeline update is not a replacement")
			}
			out, changed, err := u.Apply(doc(t, tt.doc), false, testNow)
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			want := doc(t, tt.want)
			if !query.Equal(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: out}, bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: want}) || !sameFieldOrder(out, want) {
				t.Errorf("got %s, want %s", out, want)
			}
			if changed != tt.changed {
				t.Errorf("changed = %v, want %v", changed, tt.changed)
			}
		})
	}
}

func TestPipelineErrors(t *testing.T) {
	tests := []struct {
		name, pipeline string
		filters        bool
		compile        bool // the error comes from Compile (else Apply)
		code           int32
	}{
		{"match not allowed", `[{"$match": {"a": 1}}]`, false, true, mongoerr.InvalidOptions},
		{"sort not allowed after set", `[{"$set": {"a": 1}}, {"$sort": {"a": 1}}]`, false, true, mongoerr.InvalidOptions},
		{"lookup not allowed", `[{"$lookup": {"from": "x", "localField": "a", "foreignField": "b", "as": "c"}}]`, false, true, mongoerr.InvalidOptions},
		{"unknown stage", `[{"$nope": {}}]`, false, true, mongoerr.Location40324},
		{"bad match filter is parsed first", `[{"$match": {"$bad": 1}}]`, false, true, mongoerr.BadValue},
		{"two fields in a stage", `[{"$set": {"a": 1}, "$unset": "b"}]`, false, true, 40323},
		{"non-object stage", `[1]`, false, true, mongoerr.TypeMismatch},
		{"arrayFilters", `[{"$set": {"a": 1}}]`, true, true, mongoerr.FailedToParse},
		{"changes _id", `[{"$set": {"_id": 2}}]`, false, false, mongoerr.ImmutableField},
		{"newRoot not a document", `[{"$replaceRoot": {"newRoot": "$a"}}]`, false, false, 40228},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var filters []bson.Raw
			if tt.filters {
				filters = []bson.Raw{doc(t, `{"x.a": 1}`)}
			}
			u, err := Compile(arrValue(t, tt.pipeline), filters)
			if !tt.compile {
				if err != nil {
					t.Fatalf("Compile: %v", err)
				}
				_, _, err = u.Apply(doc(t, `{"_id": 1, "a": 1}`), false, testNow)
			}
			var me *mongoerr.Error
			if !errors.As(err, &me) || me.Code != tt.code {
				t.Fatalf("error = %v, want code %d", err, tt.code)
			}
		})
	}
}

// An upsert with a pipeline starts from the query's equality fields, as
// mongod does, and the pipeline sees them.
func TestPipelineUpsert(t *testing.T) {
	seed, err := UpsertSeed(doc(t, `{"_id": 7, "a": 1, "b": {"$gt": 1}}`))
	if err != nil {
		t.Fatal(err)
	}
	u, err := Compile(arrValue(t, `[{"$set": {"c": {"$add": ["$a", 1]}}}]`), nil)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := u.Apply(seed, true, testNow)
	if err != nil {
		t.Fatal(err)
	}
	if want := doc(t, `{"_id": 7, "a": 1, "c": 2}`); !sameFieldOrder(out, want) ||
		!query.Equal(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: out}, bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: want}) {
		t.Errorf("upserted %s, want %s", out, want)
	}
}
