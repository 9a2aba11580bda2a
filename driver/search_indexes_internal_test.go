package driver

import (
	"slices"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

// TestCreatedSearchIndexes reads createSearchIndexes replies as Atlas
// sends them (mongotest has no search, so the public tests see only
// SearchNotEnabled), and refuses malformed ones without panicking.
func TestCreatedSearchIndexes(t *testing.T) {
	idx := func(id, name any) bson.D { return bson.D{{Key: "id", Value: id}, {Key: "name", Value: name}} }
	tests := []struct {
		name  string
		reply any
		want  []string
		bad   bool
	}{
		{"two", bson.D{{Key: "indexesCreated", Value: bson.A{idx("6524096020da840844a4c4a7", "default"), idx("x", "vec")}}, {Key: "ok", Value: 1}}, []string{"default", "vec"}, false},
		{"none", bson.D{{Key: "indexesCreated", Value: bson.A{}}, {Key: "ok", Value: 1}}, []string{}, false},
		{"missing", bson.D{{Key: "ok", Value: 1}}, nil, true},
		{"not an array", bson.D{{Key: "indexesCreated", Value: "x"}}, nil, true},
		{"element not a document", bson.D{{Key: "indexesCreated", Value: bson.A{1}}}, nil, true},
		{"no name", bson.D{{Key: "indexesCreated", Value: bson.A{bson.D{{Key: "id", Value: "a"}}}}}, nil, true},
		{"name not a string", bson.D{{Key: "indexesCreated", Value: bson.A{idx("a", 5)}}}, nil, true},
	}
	for _, tc := range tests {
		b, err := bson.Marshal(tc.reply)
		if err != nil {
			t.Fatal(err)
		}
		got, err := createdSearchIndexes(b)
		if tc.bad {
			if err == nil {
				t.Errorf("%s: no error, names %v", tc.name, got)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}
