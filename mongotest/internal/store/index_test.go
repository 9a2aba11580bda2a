package store

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

func TestParseIndexSpec(t *testing.T) {
	cases := []struct {
		spec string
		want int32
		raw  string // listIndexes form; "" skips
	}{
		{`{"key": {"a": 1}, "name": "a_1"}`, 0, `{"v":2,"key":{"a":1},"name":"a_1"}`},
		{`{"key": {"a": 1, "b.c": -1}}`, 0, `{"v":2,"key":{"a":1,"b.c":-1},"name":"a_1_b.c_-1"}`},
		{`{"key": {"a": 1}, "name": "u", "unique": true, "sparse": 1, "hidden": false, "background": true, "v": 2, "ns": "db.c"}`, 0, `{"v":2,"key":{"a":1},"name":"u","unique":true,"sparse":true}`},
		{`{"key": {"t": 1}, "name": "ttl", "expireAfterSeconds": 3600}`, 0, `{"v":2,"key":{"t":1},"name":"ttl","expireAfterSeconds":3600}`},
		{`{"key": {"a": 1}, "name": "p", "partialFilterExpression": {"a": {"$gt": 1}}}`, 0, `{"v":2,"key":{"a":1},"name":"p","partialFilterExpression":{"a":{"$gt":1}}}`},
		{`{"key": {"a": 1}, "name": "old", "v": 1}`, 0, `{"v":1,"key":{"a":1},"name":"old"}`},
		{`{"key": {"a": {"$numberDouble": "1.5"}}}`, 0, `{"v":2,"key":{"a":1.5},"name":"a_1.5"}`},
		{`{"name": "x"}`, mongoerr.FailedToParse, ""},
		{`{"key": 1, "name": "x"}`, mongoerr.TypeMismatch, ""},
		{`{"key": {"a": 1}, "name": 5}`, mongoerr.TypeMismatch, ""},
		{`{"key": {"a": 1}, "unique": "yes"}`, mongoerr.TypeMismatch, ""},
		{`{"key": {"a": 1}, "partialFilterExpression": 1}`, mongoerr.TypeMismatch, ""},
		{`{"key": {"a": 1}, "expireAfterSeconds": -1}`, codeCannotCreateIndex, ""},
		{`{"key": {"a": 1}, "expireAfterSeconds": "1"}`, codeCannotCreateIndex, ""},
		{`{"key": {"a": 1}, "v": 3}`, codeCannotCreateIndex, ""},
		{`{"key": {"a": 1}, "unique": true, "collation": {"locale": "fr", "alternate": "shifted"}}`, mongoerr.NotImplemented, ""},
		{`{"key": {"a": 1}, "collation": {"locale": "fr", "strength": 7}}`, 51024, ""},
		{`{"key": {"a": 1}, "bogus": 1}`, codeInvalidIndexSpecificationOption, ""},
		{`{"key": {}}`, codeCannotCreateIndex, ""},
		{`{"key": {"a": 0}}`, codeCannotCreateIndex, ""},
		{`{"key": {"a": {"$numberDecimal": "0"}}}`, codeCannotCreateIndex, ""},
		{`{"key": {"a": {"$numberDouble": "NaN"}}}`, codeCannotCreateIndex, ""},
		{`{"key": {"a": true}}`, codeCannotCreateIndex, ""},
		{`{"key": {"a": "text"}}`, mongoerr.NotImplemented, ""},
		{`{"key": {"a": "2dsphere"}}`, mongoerr.NotImplemented, ""},
		{`{"key": {"a": "nonsense"}}`, codeCannotCreateIndex, ""},
		{`{"key": {"$**": 1}}`, mongoerr.NotImplemented, ""},
		{`{"key": {"$a": 1}}`, codeCannotCreateIndex, ""},
		{`{"key": {"": 1}}`, codeCannotCreateIndex, ""},
		{`{"key": {"a..b": 1}}`, codeCannotCreateIndex, ""},
	}
	for _, c := range cases {
		s, err := ParseIndexSpec(doc(t, c.spec))
		if code(err) != c.want {
			t.Errorf("ParseIndexSpec(%s) = %v, want code %d", c.spec, err, c.want)
			continue
		}
		if err == nil && c.raw != "" {
			if got := extJSON(t, s.Raw()); got != c.raw {
				t.Errorf("ParseIndexSpec(%s).Raw() = %s, want %s", c.spec, got, c.raw)
			}
		}
	}
	if _, err := ParseIndexSpec(bson.Raw{1}); code(err) != codeInvalidBSON {
		t.Errorf("invalid BSON: %v", err)
	}
	if e := mongoerr.As(func() error { _, err := ParseIndexSpec(doc(t, `{"key": {"a": 1}, "bogus": 1}`)); return err }()); e.CodeName != "InvalidIndexSpecificationOption" {
		t.Errorf("code name %q", e.CodeName)
	}
}

func spec(t *testing.T, js string) IndexSpec {
	t.Helper()
	s, err := ParseIndexSpec(doc(t, js))
	if err != nil {
		t.Fatalf("ParseIndexSpec(%s): %v", js, err)
	}
	return s
}

func TestCreateIndexes(t *testing.T) {
	cases := []struct {
		name    string
		specs   []string
		created int
		want    int32
	}{
		{"new", []string{`{"key": {"b": 1}, "name": "b_1"}`, `{"key": {"c": 1}, "name": "c_1", "unique": true, "sparse": true}`}, 2, 0},
		{"identical is a no-op", []string{`{"key": {"a": 1}, "name": "a_1"}`}, 0, 0},
		{"identical _id index", []string{`{"key": {"_id": 1}, "name": "_id_"}`}, 0, 0},
		{"descending _id is another index", []string{`{"key": {"_id": -1}, "name": "_id_-1"}`}, 1, 0},
		{"same name, other key", []string{`{"key": {"a": -1}, "name": "a_1"}`}, 0, mongoerr.IndexKeySpecsConflict},
		{"same name, other options", []string{`{"key": {"a": 1}, "name": "a_1", "unique": true}`}, 0, mongoerr.IndexOptionsConflict},
		{"same key, other name", []string{`{"key": {"a": 1}, "name": "other"}`}, 0, mongoerr.IndexOptionsConflict},
		{"same key as number of another type", []string{`{"key": {"a": {"$numberLong": "1"}}, "name": "other"}`}, 0, mongoerr.IndexOptionsConflict},
		{"same key, other partial filter", []string{`{"key": {"a": 1}, "name": "other", "partialFilterExpression": {"x": 1}}`}, 1, 0},
		{"all or nothing", []string{`{"key": {"b": 1}, "name": "b_1"}`, `{"key": {"a": -1}, "name": "a_1"}`}, 0, mongoerr.IndexKeySpecsConflict},
		{"twice in one request", []string{`{"key": {"b": 1}, "name": "b_1"}`, `{"key": {"b": 1}, "name": "b_1"}`}, 1, 0},
		{"unique over duplicates", []string{`{"key": {"dup": 1}, "name": "dup_1", "unique": true}`}, 0, mongoerr.DuplicateKey},
		{"parallel arrays in existing documents", []string{`{"key": {"x": 1, "y": 1}, "name": "xy"}`}, 0, codeCannotIndexParallelArrays},
		{"empty name", []string{`{"key": {"b": 1}, "name": ""}`}, 0, codeCannotCreateIndex},
		{"star name", []string{`{"key": {"b": 1}, "name": "*"}`}, 0, mongoerr.BadValue},
		{"sparse and partial", []string{`{"key": {"b": 1}, "name": "b", "sparse": true, "partialFilterExpression": {"b": 1}}`}, 0, codeCannotCreateIndex},
		{"unique partial without a matcher", []string{`{"key": {"b": 1}, "name": "b", "unique": true, "partialFilterExpression": {"b": 1}}`}, 0, mongoerr.NotImplemented},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newColl(t)
			for _, d := range []string{`{"_id": 1, "dup": 1, "x": [1, 2], "y": [3, 4]}`, `{"_id": 2, "dup": 1}`} {
				if err := c.Insert(doc(t, d)); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := c.CreateIndexes([]IndexSpec{spec(t, `{"key": {"a": 1}, "name": "a_1"}`)}); err != nil {
				t.Fatal(err)
			}
			var specs []IndexSpec
			for _, s := range tc.specs {
				specs = append(specs, spec(t, s))
			}
			before := c.NumIndexes()
			created, err := c.CreateIndexes(specs)
			if code(err) != tc.want || created != tc.created {
				t.Fatalf("CreateIndexes = %d, %v; want %d, code %d", created, err, tc.created, tc.want)
			}
			if c.NumIndexes() != before+created {
				t.Errorf("indexes %d -> %d after creating %d", before, c.NumIndexes(), created)
			}
		})
	}
	// Too many indexes.
	c := newColl(t)
	var specs []IndexSpec
	for i := 0; i < 64; i++ {
		specs = append(specs, spec(t, fmt.Sprintf(`{"key": {"f%d": 1}}`, i)))
	}
	if _, err := c.CreateIndexes(specs); code(err) != codeCannotCreateIndex {
		t.Errorf("65 indexes: %v", err)
	}
	if n, err := c.CreateIndexes(specs[:63]); n != 63 || err != nil {
		t.Errorf("64 indexes: %d %v", n, err)
	}
}

func TestCreateIndexesMessages(t *testing.T) {
	c := newColl(t)
	_, _ = c.CreateIndexes([]IndexSpec{spec(t, `{"key": {"a": 1}, "name": "a_1"}`)})
	_, err := c.CreateIndexes([]IndexSpec{spec(t, `{"key": {"a": -1}, "name": "a_1"}`)})
	want := "An existing index has the same name as the requested index. When index names are not specified, they are auto generated and can cause conflicts. Please refer to our documentation. Requested index: { v: 2, key: { a: -1 }, name: \"a_1\" }, existing index: { v: 2, key: { a: 1 }, name: \"a_1\" }"
	if mongoerr.As(err).Message != want {
		t.Errorf("message\n got %s\nwant %s", mongoerr.As(err).Message, want)
	}
	_, err = c.CreateIndexes([]IndexSpec{spec(t, `{"key": {"a": 1}, "name": "b"}`)})
	if mongoerr.As(err).Message != "Index already exists with a different name: a_1" {
		t.Errorf("message %s", mongoerr.As(err).Message)
	}
}

func TestUniqueIndexes(t *testing.T) {
	type step struct {
		doc  string
		want int32
		dup  string // expected "dup key: ..." part
	}
	cases := []struct {
		name  string
		index string
		steps []step
	}{
		{"scalar", `{"key": {"u": 1}, "name": "u_1", "unique": true}`, []step{
			{`{"_id": 1, "u": 1}`, 0, ""},
			{`{"_id": 2, "u": {"$numberDouble": "1.0"}}`, mongoerr.DuplicateKey, `{ u: 1.0 }`},
			{`{"_id": 3, "u": "1"}`, 0, ""},
		}},
		{"missing is null", `{"key": {"u": 1}, "name": "u_1", "unique": true}`, []step{
			{`{"_id": 1}`, 0, ""},
			{`{"_id": 2}`, mongoerr.DuplicateKey, `{ u: null }`},
			{`{"_id": 3, "u": null}`, mongoerr.DuplicateKey, `{ u: null }`},
		}},
		{"sparse skips missing", `{"key": {"u": 1}, "name": "u_1", "unique": true, "sparse": true}`, []step{
			{`{"_id": 1}`, 0, ""},
			{`{"_id": 2}`, 0, ""},
			{`{"_id": 3, "u": null}`, 0, ""},
			{`{"_id": 4, "u": null}`, mongoerr.DuplicateKey, `{ u: null }`},
		}},
		{"multikey", `{"key": {"tags": 1}, "name": "tags_1", "unique": true}`, []step{
			{`{"_id": 1, "tags": ["a", "b", "a"]}`, 0, ""},
			{`{"_id": 2, "tags": ["c", "b"]}`, mongoerr.DuplicateKey, `{ tags: "b" }`},
			{`{"_id": 3, "tags": "a"}`, mongoerr.DuplicateKey, `{ tags: "a" }`},
			{`{"_id": 4, "tags": [["a"]]}`, 0, ""},
			{`{"_id": 5, "tags": ["a"]}`, mongoerr.DuplicateKey, `{ tags: "a" }`},
			{`{"_id": 6, "tags": []}`, 0, ""},
			{`{"_id": 7, "tags": []}`, mongoerr.DuplicateKey, `{ tags: undefined }`},
		}},
		{"dotted path through arrays", `{"key": {"a.b": 1}, "name": "a.b_1", "unique": true}`, []step{
			{`{"_id": 1, "a": [{"b": 1}, {"b": 2}]}`, 0, ""},
			{`{"_id": 2, "a": {"b": 2}}`, mongoerr.DuplicateKey, `{ a.b: 2 }`},
			{`{"_id": 3, "a": {"b": [3, 4]}}`, 0, ""},
			{`{"_id": 4, "a": [{"b": [4]}]}`, mongoerr.DuplicateKey, `{ a.b: 4 }`},
			{`{"_id": 5, "a": [1, 2]}`, 0, ""},
			{`{"_id": 6, "a": 5}`, mongoerr.DuplicateKey, `{ a.b: null }`},
			{`{"_id": 7, "a": [{"b": 9}, {"c": 1}]}`, mongoerr.DuplicateKey, `{ a.b: null }`},
		}},
		{"positional path", `{"key": {"a.1": 1}, "name": "a.1_1", "unique": true}`, []step{
			{`{"_id": 1, "a": [5, 6]}`, 0, ""},
			{`{"_id": 2, "a": [6, 5]}`, 0, ""},
			{`{"_id": 3, "a": [0, 6]}`, mongoerr.DuplicateKey, `{ a.1: 6 }`},
		}},
		{"compound", `{"key": {"a": 1, "b": -1}, "name": "ab", "unique": true}`, []step{
			{`{"_id": 1, "a": 1, "b": 1}`, 0, ""},
			{`{"_id": 2, "a": 1, "b": 2}`, 0, ""},
			{`{"_id": 3, "b": 1, "a": 1}`, mongoerr.DuplicateKey, `{ a: 1, b: 1 }`},
			{`{"_id": 4, "a": [3, 1], "b": 2}`, mongoerr.DuplicateKey, `{ a: 1, b: 2 }`},
			{`{"_id": 5, "a": [1], "b": [2]}`, codeCannotIndexParallelArrays, ""},
			{`{"_id": 6, "a": "1", "b": 1}`, 0, ""},
		}},
		{"compound over one array", `{"key": {"a.x": 1, "a.y": 1}, "name": "axy", "unique": true}`, []step{
			{`{"_id": 1, "a": [{"x": 1, "y": 1}, {"x": 2, "y": 2}]}`, 0, ""},
			{`{"_id": 2, "a": {"x": 1, "y": 2}}`, mongoerr.DuplicateKey, `{ a.x: 1, a.y: 2 }`},
			{`{"_id": 3, "a": {"x": 3, "y": 3}}`, 0, ""},
		}},
		{"compound sparse indexes a document with one field", `{"key": {"a": 1, "b": 1}, "name": "ab", "unique": true, "sparse": true}`, []step{
			{`{"_id": 1}`, 0, ""},
			{`{"_id": 2}`, 0, ""},
			{`{"_id": 3, "b": 1}`, 0, ""},
			{`{"_id": 4, "b": 1}`, mongoerr.DuplicateKey, `{ a: null, b: 1 }`},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newColl(t)
			if _, err := c.CreateIndexes([]IndexSpec{spec(t, tc.index)}); err != nil {
				t.Fatal(err)
			}
			for _, st := range tc.steps {
				err := c.Insert(doc(t, st.doc))
				if code(err) != st.want {
					t.Fatalf("Insert(%s) = %v, want code %d", st.doc, err, st.want)
				}
				var dk *DuplicateKeyError
				if st.dup != "" {
					if !errors.As(err, &dk) {
						t.Fatalf("Insert(%s) = %v, want a DuplicateKeyError", st.doc, err)
					}
					if !strings.HasSuffix(dk.Err.Message, " dup key: "+st.dup) || dk.Index != spec(t, tc.index).Name {
						t.Errorf("Insert(%s): %s, want dup key %s", st.doc, dk.Err.Message, st.dup)
					}
					if string(dk.KeyPattern) != string(spec(t, tc.index).Key) {
						t.Errorf("keyPattern %s", dk.KeyPattern)
					}
				}
			}
		})
	}
}

func TestUniquePartialIndex(t *testing.T) {
	c := newColl(t)
	s := spec(t, `{"key": {"email": 1}, "name": "email_1", "unique": true, "partialFilterExpression": {"active": true}}`)
	s.PartialFilter = func(d bson.Raw) bool { return d.Lookup("active").Boolean() }
	if _, err := c.CreateIndexes([]IndexSpec{s}); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		doc  string
		want int32
	}{
		{`{"_id": 1, "email": "a", "active": true}`, 0},
		{`{"_id": 2, "email": "a", "active": false}`, 0},
		{`{"_id": 3, "email": "a"}`, 0},
		{`{"_id": 4, "email": "a", "active": true}`, mongoerr.DuplicateKey},
	}
	for _, st := range steps {
		if err := c.Insert(doc(t, st.doc)); code(err) != st.want {
			t.Errorf("Insert(%s) = %v, want code %d", st.doc, err, st.want)
		}
	}
	// Leaving the filter frees the key.
	if err := c.Replace(val(t, `1`), doc(t, `{"email": "a", "active": false}`)); err != nil {
		t.Fatal(err)
	}
	if err := c.Insert(doc(t, `{"_id": 4, "email": "a", "active": true}`)); err != nil {
		t.Errorf("key still held after the document left the filter: %v", err)
	}
}

func TestNonUniqueIndexes(t *testing.T) {
	c := newColl(t)
	if _, err := c.CreateIndexes([]IndexSpec{spec(t, `{"key": {"a": 1}}`), spec(t, `{"key": {"x": 1, "y": 1}}`)}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{`{"a": 1}`, `{"a": 1}`, `{"x": [1, 2], "y": 1}`} {
		if err := c.Insert(doc(t, d)); err != nil {
			t.Errorf("Insert(%s) = %v", d, err)
		}
	}
	err := c.Insert(doc(t, `{"x": [1, 2], "y": [3]}`))
	if code(err) != codeCannotIndexParallelArrays || mongoerr.As(err).CodeName != "CannotIndexParallelArrays" || mongoerr.As(err).Message != "cannot index parallel arrays [x] [y]" {
		t.Errorf("parallel arrays: %v", err)
	}
	// The same check on replace.
	if err := c.Replace(val(t, `1`), doc(t, `{"x": [1], "y": [1]}`)); code(err) != mongoerr.NoSuchKey {
		t.Errorf("replace of a missing document: %v", err)
	}
	var id bson.RawValue
	c.Scan(func(d bson.Raw) bool { id = d.Lookup("_id"); return false })
	if err := c.Replace(id, doc(t, `{"x": [1], "y": [1]}`)); code(err) != codeCannotIndexParallelArrays {
		t.Errorf("replace with parallel arrays: %v", err)
	}
	if c.Count() != 3 {
		t.Errorf("count %d", c.Count())
	}
}

func TestTooManyKeys(t *testing.T) {
	c := newColl(t)
	if _, err := c.CreateIndexes([]IndexSpec{spec(t, `{"key": {"a.x": 1, "a.y": 1}, "unique": true}`)}); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(`{"a": [`)
	for i := 0; i < 400; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"x": %d, "y": %d}`, i, i)
	}
	b.WriteString(`]}`)
	if err := c.Insert(doc(t, b.String())); code(err) != codeCannotCreateIndex {
		t.Errorf("160000 keys: %v", err)
	}
}

func TestDropIndexes(t *testing.T) {
	cases := []struct {
		name string
		drop []string
		key  string
		want int32
		left string
	}{
		{"by name", []string{"a_1"}, "", 0, "_id_,b_1"},
		{"several", []string{"a_1", "b_1"}, "", 0, "_id_"},
		{"star", []string{"*"}, "", 0, "_id_"},
		{"_id_", []string{"_id_"}, "", mongoerr.InvalidOptions, "_id_,a_1,b_1"},
		{"missing", []string{"nope"}, "", mongoerr.IndexNotFound, "_id_,a_1,b_1"},
		{"all or nothing", []string{"a_1", "nope"}, "", mongoerr.IndexNotFound, "_id_,a_1,b_1"},
		{"by key", nil, `{"b": 1}`, 0, "_id_,a_1"},
		{"by key of another numeric type", nil, `{"b": {"$numberDouble": "1.0"}}`, 0, "_id_,a_1"},
		{"by _id key", nil, `{"_id": 1}`, mongoerr.InvalidOptions, "_id_,a_1,b_1"},
		{"by missing key", nil, `{"c": 1}`, mongoerr.IndexNotFound, "_id_,a_1,b_1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newColl(t)
			if _, err := c.CreateIndexes([]IndexSpec{spec(t, `{"key": {"a": 1}, "unique": true}`), spec(t, `{"key": {"b": 1}}`)}); err != nil {
				t.Fatal(err)
			}
			var err error
			if tc.key != "" {
				err = c.DropIndexByKey(doc(t, tc.key))
			} else {
				err = c.DropIndexes(tc.drop...)
			}
			if code(err) != tc.want {
				t.Fatalf("drop = %v, want code %d", err, tc.want)
			}
			var names []string
			for _, s := range c.ListIndexes() {
				names = append(names, s.Name)
			}
			if got := strings.Join(names, ","); got != tc.left {
				t.Errorf("left %s, want %s", got, tc.left)
			}
		})
	}
	c := newColl(t)
	if err := c.DropIndex("x"); mongoerr.As(err).Message != "index not found with name [x]" {
		t.Errorf("message %v", err)
	}
	// A dropped unique index no longer rejects duplicates.
	_, _ = c.CreateIndexes([]IndexSpec{spec(t, `{"key": {"u": 1}, "unique": true}`)})
	_ = c.Insert(doc(t, `{"u": 1}`))
	if err := c.DropIndex("u_1"); err != nil {
		t.Fatal(err)
	}
	if err := c.Insert(doc(t, `{"u": 1}`)); err != nil {
		t.Errorf("insert after drop: %v", err)
	}
}

func TestListIndexes(t *testing.T) {
	c := newColl(t)
	if _, err := c.CreateIndexes([]IndexSpec{spec(t, `{"key": {"a": 1}, "unique": true, "name": "ua"}`), spec(t, `{"key": {"t": 1}, "expireAfterSeconds": 60}`)}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range c.ListIndexes() {
		got = append(got, extJSON(t, s.Raw()))
	}
	want := []string{
		`{"v":2,"key":{"_id":1},"name":"_id_"}`,
		`{"v":2,"key":{"a":1},"name":"ua","unique":true}`,
		`{"v":2,"key":{"t":1},"name":"t_1","expireAfterSeconds":60}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("ListIndexes\n got %s\nwant %s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestModifyIndex(t *testing.T) {
	yes, no := true, false
	ttl, bad := int64(120), int64(-1)
	cases := []struct {
		name   string
		index  string
		hidden *bool
		ttl    *int64
		want   int32
		listed string
	}{
		{"hide", "a_1", &yes, nil, 0, `{"v":2,"key":{"a":1},"name":"a_1","hidden":true}`},
		{"unhide", "a_1", &no, nil, 0, `{"v":2,"key":{"a":1},"name":"a_1"}`},
		{"ttl", "t_1", nil, &ttl, 0, `{"v":2,"key":{"t":1},"name":"t_1","expireAfterSeconds":120}`},
		{"bad ttl", "t_1", nil, &bad, mongoerr.InvalidOptions, ""},
		{"ttl on a non-TTL index", "a_1", nil, &ttl, mongoerr.InvalidOptions, ""},
		{"hide _id", "_id_", &yes, nil, mongoerr.BadValue, ""},
		{"missing", "nope", &yes, nil, mongoerr.IndexNotFound, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newColl(t)
			if _, err := c.CreateIndexes([]IndexSpec{spec(t, `{"key": {"a": 1}}`), spec(t, `{"key": {"t": 1}, "expireAfterSeconds": 60}`)}); err != nil {
				t.Fatal(err)
			}
			before := c.ListIndexes()
			old, err := c.ModifyIndex(tc.index, tc.hidden, tc.ttl)
			if code(err) != tc.want {
				t.Fatalf("ModifyIndex = %v, want code %d", err, tc.want)
			}
			if err != nil {
				return
			}
			if old.Name != tc.index {
				t.Errorf("old spec %+v", old)
			}
			for _, s := range c.ListIndexes() {
				if s.Name == tc.index && extJSON(t, s.Raw()) != tc.listed {
					t.Errorf("listed %s, want %s", extJSON(t, s.Raw()), tc.listed)
				}
			}
			for _, s := range before {
				if s.Hidden || (s.ExpireAfterSeconds != nil && *s.ExpireAfterSeconds != 60) {
					t.Error("ModifyIndex changed a spec handed out earlier")
				}
			}
		})
	}
	// A hidden unique index still enforces uniqueness, as in mongod.
	c := newColl(t)
	_, _ = c.CreateIndexes([]IndexSpec{spec(t, `{"key": {"u": 1}, "unique": true}`)})
	_ = c.Insert(doc(t, `{"u": 1}`))
	if _, err := c.ModifyIndex("u_1", &yes, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Insert(doc(t, `{"u": 1}`)); code(err) != mongoerr.DuplicateKey {
		t.Errorf("hidden unique index: %v", err)
	}
}

func TestSetExtraOptions(t *testing.T) {
	s := New()
	_ = s.CreateCollection("db", "c", CollectionOptions{Capped: true, Size: 4096})
	c := s.Collection("db", "c")
	if err := c.SetExtraOptions(doc(t, `{"validator": {"a": 1}}`)); err != nil {
		t.Fatal(err)
	}
	if got := extJSON(t, s.ListCollections("db")[0].Options); got != `{"capped":true,"size":4096,"validator":{"a":1}}` {
		t.Errorf("options %s", got)
	}
	if err := c.SetExtraOptions(bson.Raw{9, 9}); code(err) != codeInvalidBSON {
		t.Errorf("invalid options: %v", err)
	}
}
