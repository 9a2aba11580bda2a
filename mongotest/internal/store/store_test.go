package store

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

func TestValidateNames(t *testing.T) {
	cases := []struct {
		db, coll string
		want     int32
	}{
		{"test", "c", 0},
		{"test", "a.b", 0},
		{"test", "system.profile", 0},
		{"admin", "system.views", 0},
		{"", "c", mongoerr.InvalidNamespace},
		{"a/b", "c", mongoerr.InvalidNamespace},
		{`a\b`, "c", mongoerr.InvalidNamespace},
		{"a.b", "c", mongoerr.InvalidNamespace},
		{`a"b`, "c", mongoerr.InvalidNamespace},
		{"a$b", "c", mongoerr.InvalidNamespace},
		{"a b", "c", mongoerr.InvalidNamespace},
		{"a\x00b", "c", mongoerr.InvalidNamespace},
		{strings.Repeat("d", 63), "c", 0},
		{strings.Repeat("d", 64), "c", mongoerr.InvalidNamespace},
		{"test", "", mongoerr.InvalidNamespace},
		{"test", "a$b", mongoerr.InvalidNamespace},
		{"test", "a\x00b", mongoerr.InvalidNamespace},
		{"test", ".a", mongoerr.InvalidNamespace},
		{"test", "system.foo", mongoerr.InvalidNamespace},
		{"test", strings.Repeat("c", 250), 0},
		{"test", strings.Repeat("c", 251), mongoerr.InvalidNamespace},
	}
	for _, c := range cases {
		err := ValidateCollectionName(c.db, c.coll)
		if code(err) != c.want {
			t.Errorf("ValidateCollectionName(%q, %q) = %v, want code %d", c.db, c.coll, err, c.want)
		}
		if err != nil && code(err) == 0 {
			t.Errorf("error %v is not a *mongoerr.Error", err)
		}
		// The store applies the same rules.
		if err := New().CreateCollection(c.db, c.coll, CollectionOptions{}); code(err) != c.want {
			t.Errorf("CreateCollection(%q, %q) = %v, want code %d", c.db, c.coll, err, c.want)
		}
		if _, err := New().CollectionOrCreate(c.db, c.coll); code(err) != c.want {
			t.Errorf("CollectionOrCreate(%q, %q) = %v, want code %d", c.db, c.coll, err, c.want)
		}
	}
}

func TestCreateCollection(t *testing.T) {
	cases := []struct {
		name string
		opts CollectionOptions
		want int32
	}{
		{"plain", CollectionOptions{}, 0},
		{"capped", CollectionOptions{Capped: true, Size: 1000, Max: 10}, 0},
		{"capped without size", CollectionOptions{Capped: true}, mongoerr.InvalidOptions},
		{"capped too big", CollectionOptions{Capped: true, Size: 1<<50 + 1}, mongoerr.InvalidOptions},
		{"capped max too big", CollectionOptions{Capped: true, Size: 4096, Max: 1 << 31}, mongoerr.InvalidOptions},
		{"extra options", CollectionOptions{Extra: bson.Raw{5, 0, 0, 0, 0}}, 0},
		{"bad extra options", CollectionOptions{Extra: bson.Raw{6, 0, 0, 0, 0}}, codeInvalidBSON},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New()
			err := s.CreateCollection("db", "c", c.opts)
			if code(err) != c.want {
				t.Fatalf("CreateCollection = %v, want code %d", err, c.want)
			}
			if err != nil {
				if s.Collection("db", "c") != nil || len(s.ListDatabases()) != 0 {
					t.Error("a failed create left a collection behind")
				}
				return
			}
			if err := s.CreateCollection("db", "c", c.opts); code(err) != mongoerr.NamespaceExists ||
				err.Error() != "NamespaceExists (48): Collection db.c already exists." {
				t.Errorf("second create = %v", err)
			}
		})
	}
}

func TestCatalog(t *testing.T) {
	s := New()
	for _, ns := range [][2]string{{"b", "y"}, {"a", "z"}, {"a", "x"}} {
		if err := s.CreateCollection(ns[0], ns[1], CollectionOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreateCollection("a", "capped", CollectionOptions{Capped: true, Size: 5000, Max: 3, Extra: doc(t, `{"validator": {"x": 1}}`)}); err != nil {
		t.Fatal(err)
	}
	c := s.Collection("a", "x")
	if err := c.Insert(doc(t, `{"_id": 1, "s": "hello"}`)); err != nil {
		t.Fatal(err)
	}
	dbs := s.ListDatabases()
	if len(dbs) != 2 || dbs[0].Name != "a" || dbs[1].Name != "b" {
		t.Fatalf("ListDatabases = %+v", dbs)
	}
	if dbs[0].SizeOnDisk <= dbs[1].SizeOnDisk || dbs[0].Empty {
		t.Errorf("sizes %+v", dbs)
	}
	colls := s.ListCollections("a")
	var names []string
	for _, ci := range colls {
		names = append(names, ci.Name)
		if ci.Type != "collection" || ci.ReadOnly || ci.UUID.Subtype != bson.SubtypeUUID || len(ci.UUID.Data) != 16 {
			t.Errorf("%+v", ci)
		}
	}
	if strings.Join(names, ",") != "capped,x,z" {
		t.Errorf("ListCollections names = %v", names)
	}
	got := extJSON(t, colls[0].Raw())
	uuid := colls[0].UUID
	want := extJSON(t, doc(t, `{"name": "capped", "type": "collection", "options": {"capped": true, "size": 5000, "max": 3, "validator": {"x": 1}},
		"info": {"readOnly": false, "uuid": {"$binary": {"base64": "`+base64.StdEncoding.EncodeToString(uuid.Data)+`", "subType": "04"}}},
		"idIndex": {"v": 2, "key": {"_id": 1}, "name": "_id_"}}`))
	if got != want {
		t.Errorf("listCollections entry\n got %s\nwant %s", got, want)
	}
	if s.ListCollections("nope") == nil || len(s.ListCollections("nope")) != 0 {
		t.Error("ListCollections of a missing database should be empty")
	}
	if c.UUID().Subtype != bson.SubtypeUUID || c.Namespace() != "a.x" || c.Name() != "x" || c.Database() != "a" || c.Capped() {
		t.Error("collection accessors")
	}
	if !s.Collection("a", "capped").Options().Capped {
		t.Error("Options lost capped")
	}

	if !s.DropCollection("b", "y") || s.DropCollection("b", "y") {
		t.Error("DropCollection result")
	}
	if len(s.ListDatabases()) != 1 {
		t.Error("a database without collections should disappear")
	}
	if !s.DropDatabase("a") || s.DropDatabase("a") || len(s.ListDatabases()) != 0 {
		t.Error("DropDatabase")
	}
	if err := c.Insert(doc(t, `{"_id": 2}`)); code(err) != mongoerr.NamespaceNotFound {
		t.Errorf("insert into a dropped collection = %v", err)
	}
	c2, err := s.CollectionOrCreate("a", "x")
	if err != nil || c2 == c || c2.Count() != 0 {
		t.Errorf("recreated collection %v %v", c2, err)
	}
	if c3, _ := s.CollectionOrCreate("a", "x"); c3 != c2 {
		t.Error("CollectionOrCreate should return the existing collection")
	}
}

func TestRenameCollection(t *testing.T) {
	cases := []struct {
		name                   string
		fromDB, from, toDB, to string
		dropTarget             bool
		want                   int32
		sameUUID               bool
	}{
		{"same db", "a", "src", "a", "dst", false, 0, true},
		{"across databases", "a", "src", "b", "dst", false, 0, false},
		{"missing source", "a", "nope", "a", "dst", false, mongoerr.NamespaceNotFound, false},
		{"target exists", "a", "src", "a", "other", false, mongoerr.NamespaceExists, false},
		{"drop target", "a", "src", "a", "other", true, 0, true},
		{"to itself", "a", "src", "a", "src", false, mongoerr.IllegalOperation, false},
		{"bad target name", "a", "src", "a", "x$y", false, mongoerr.InvalidNamespace, false},
		{"bad target db", "a", "src", "b.c", "x", false, mongoerr.InvalidNamespace, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New()
			src, _ := s.CollectionOrCreate("a", "src")
			other, _ := s.CollectionOrCreate("a", "other")
			if _, err := src.InsertWithID(doc(t, `{"_id": 1, "u": 1}`)); err != nil {
				t.Fatal(err)
			}
			if _, err := src.CreateIndexes([]IndexSpec{{Name: "u_1", Key: doc(t, `{"u": 1}`), Unique: true}}); err != nil {
				t.Fatal(err)
			}
			uuid := src.UUID()
			v := src.Version()
			err := s.RenameCollection(c.fromDB, c.from, c.toDB, c.to, c.dropTarget)
			if code(err) != c.want {
				t.Fatalf("RenameCollection = %v, want code %d", err, c.want)
			}
			if err != nil {
				if s.Collection("a", "src") != src {
					t.Error("a failed rename moved the source")
				}
				return
			}
			if s.Collection(c.fromDB, c.from) != nil {
				t.Error("source still present")
			}
			got := s.Collection(c.toDB, c.to)
			if got != src || got.Count() != 1 || got.NumIndexes() != 2 || got.Namespace() != c.toDB+"."+c.to {
				t.Fatalf("target %v", got)
			}
			if (string(got.UUID().Data) == string(uuid.Data)) != c.sameUUID {
				t.Errorf("UUID kept = %v, want %v", !c.sameUUID, c.sameUUID)
			}
			if got.Version() == v {
				t.Error("rename did not change the version")
			}
			if c.dropTarget {
				if err := other.Insert(doc(t, `{}`)); code(err) != mongoerr.NamespaceNotFound {
					t.Errorf("the dropped target still takes writes: %v", err)
				}
			}
			// The error message names the new namespace.
			err = got.Insert(doc(t, `{"_id": 2, "u": 1}`))
			if !strings.Contains(err.Error(), "collection: "+c.toDB+"."+c.to+" index: u_1") {
				t.Errorf("duplicate after rename: %v", err)
			}
		})
	}
}
