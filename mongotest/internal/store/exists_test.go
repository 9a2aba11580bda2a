package store

import "testing"

func TestSameCollectionOptions(t *testing.T) {
	tests := []struct {
		a, b string
		same bool
	}{
		{`{}`, `{}`, true},
		{`{"capped": true, "size": 4096}`, `{"size": {"$numberLong": "4096"}, "capped": true}`, true},
		{`{"validator": {"a": {"$gt": 1}}}`, `{"validator": {"a": {"$gt": 1.0}}}`, true},
		{`{"validator": {"a": 1, "b": 1}}`, `{"validator": {"b": 1, "a": 1}}`, false},
		{`{"validator": {}, "storageEngine": {}, "indexOptionDefaults": {}}`, `{}`, true},
		{`{"validationLevel": "strict"}`, `{}`, false},
		{`{"capped": true, "size": 4096}`, `{"capped": true, "size": 4096, "max": 3}`, false},
		{`{"collation": {"locale": "fr"}}`, `{"collation": {"locale": "fr", "strength": 1}}`, false},
	}
	for _, tc := range tests {
		if got := SameCollectionOptions(doc(t, tc.a), doc(t, tc.b)); got != tc.same {
			t.Errorf("SameCollectionOptions(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.same)
		}
		if got := SameCollectionOptions(doc(t, tc.b), doc(t, tc.a)); got != tc.same {
			t.Errorf("SameCollectionOptions(%s, %s) = %v, want %v", tc.b, tc.a, got, tc.same)
		}
	}
}
