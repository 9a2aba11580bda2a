package driver_test

import (
	"errors"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
)

// Tests of the index-management specification's Index View API and
// search index API, through driver.Connect against mongotest.

// TestIndexName: the specification's "Index Name Generation" rule, key
// and value pairs joined with underscores.
func TestIndexName(t *testing.T) {
	tests := []struct {
		keys any
		want string
		bad  string // the argument an error names, when the keys have no name
	}{
		{keys: adoc("name", 1, "dob", -1), want: "name_1_dob_-1"},
		{keys: adoc("a", int64(1)), want: "a_1"},
		{keys: adoc("a", -1.0), want: "a_-1"},
		{keys: adoc("a", 1.5), want: "a_1.5"},
		{keys: adoc("loc", "2dsphere"), want: "loc_2dsphere"},
		{keys: adoc("title", "text", "year", 1), want: "title_text_year_1"},
		{keys: adoc("a.b", "hashed"), want: "a.b_hashed"},
		{keys: adoc("$**", 1), want: "$**_1"},
		{keys: bson.M{"only": 1}, want: "only_1"},
		{keys: adoc("_id", 1), want: "_id_1"},
		{keys: adoc("a", true), bad: "keys.a"},
		{keys: adoc("a", 1, "b", bson.D{}), bad: "keys.b"},
		{keys: bson.D{}, bad: "keys"},
		{keys: nil, bad: "keys"},
		{keys: bson.M{"a": 1, "b": -1}, bad: "keys"},
		{keys: "a_1", bad: "keys"},
	}
	for _, tc := range tests {
		got, err := driver.IndexName(tc.keys)
		if tc.bad != "" {
			admWantArgErr(t, err, tc.bad)
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("IndexName(%v) = %q, %v; want %q", tc.keys, got, err, tc.want)
		}
	}
}

func TestIndexView(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := admClient(t, srv.URI())
	ctx := testCtx(t)
	coll := c.Database("ix").Collection("people")
	iv := coll.Indexes()

	// CreateOne on a missing collection creates it; the name is
	// generated or given.
	name, err := iv.CreateOne(ctx, driver.IndexModel{Keys: adoc("name", 1, "dob", -1), Options: &driver.IndexOptions{Unique: driver.Ptr(true)}})
	if err != nil || name != "name_1_dob_-1" {
		t.Fatalf("CreateOne: %q, %v", name, err)
	}
	cmd := admLast(t, rec, "createIndexes")
	admWantFields(t, cmd, adoc("createIndexes", "people", "indexes", bson.A{adoc("key", adoc("name", 1, "dob", -1), "name", "name_1_dob_-1", "unique", true)}),
		"commitQuorum", "maxTimeMS", "comment")

	maxTime := 5 * time.Second
	names, err := iv.CreateMany(ctx, []driver.IndexModel{
		{Keys: adoc("age", -1), Options: &driver.IndexOptions{Name: driver.Ptr("age")}},
		{Keys: adoc("email", 1), Options: &driver.IndexOptions{Sparse: driver.Ptr(true), Hidden: driver.Ptr(true)}},
		{Keys: adoc("created", 1), Options: &driver.IndexOptions{ExpireAfterSeconds: driver.Ptr[int32](3600)}},
		{Keys: adoc("score", 1), Options: &driver.IndexOptions{PartialFilterExpression: adoc("score", adoc("$gt", 5))}},
	}, &driver.CreateIndexesOptions{MaxTime: &maxTime, Comment: "build"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"age", "email_1", "created_1", "score_1"}; !equalStrings(names, want) {
		t.Fatalf("CreateMany names %v, want %v", names, want)
	}
	admWantFields(t, admLast(t, rec, "createIndexes"), adoc("maxTimeMS", 5000, "comment", "build"))

	specs, err := iv.ListSpecifications(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]driver.IndexSpecification{}
	for _, s := range specs {
		if s.Namespace != "ix.people" {
			t.Errorf("%s: namespace %q", s.Name, s.Namespace)
		}
		byName[s.Name] = s
	}
	if len(specs) != 6 {
		t.Fatalf("%d indexes: %v", len(specs), byName)
	}
	checks := []struct {
		name string
		ok   func(driver.IndexSpecification) bool
	}{
		{"_id_", func(s driver.IndexSpecification) bool {
			return s.KeysDocument.Lookup("_id").Int32() == 1 && s.Version == 2
		}},
		{"name_1_dob_-1", func(s driver.IndexSpecification) bool { return s.Unique != nil && *s.Unique && s.Sparse == nil }},
		{"email_1", func(s driver.IndexSpecification) bool { return *s.Sparse && *s.Hidden }},
		{"created_1", func(s driver.IndexSpecification) bool {
			return s.ExpireAfterSeconds != nil && *s.ExpireAfterSeconds == 3600
		}},
		{"score_1", func(s driver.IndexSpecification) bool {
			return s.Raw.Lookup("partialFilterExpression", "score", "$gt").Int32() == 5
		}},
		{"age", func(s driver.IndexSpecification) bool { return s.KeysDocument.Lookup("age").Int32() == -1 }},
	}
	for _, ck := range checks {
		s, ok := byName[ck.name]
		if !ok || !ck.ok(s) {
			t.Errorf("index %s: %+v", ck.name, s)
		}
	}

	inames, err := iv.ListNames(ctx)
	if want := []string{"_id_", "name_1_dob_-1", "age", "email_1", "created_1", "score_1"}; err != nil || !equalStrings(inames, want) {
		t.Fatalf("ListNames: %v, %v; want %v", inames, err, want)
	}

	// List in batches, the comment on every getMore (the
	// specification's rule for listIndexes).
	rec.Reset()
	cur, err := iv.List(ctx, &driver.ListIndexesOptions{BatchSize: driver.Ptr[int32](2), Comment: "ls"})
	if err != nil {
		t.Fatal(err)
	}
	all, err := driver.All[bson.M](ctx, cur)
	if err != nil || len(all) != 6 {
		t.Fatalf("List: %d, %v", len(all), err)
	}
	admWantFields(t, admLast(t, rec, "listIndexes"), adoc("comment", "ls", "cursor", adoc("batchSize", 2)))
	gms := admSent(rec, "getMore")
	if len(gms) < 2 {
		t.Fatalf("%d getMores", len(gms))
	}
	for _, g := range gms {
		admWantFields(t, g.Command, adoc("comment", "ls", "batchSize", 2))
	}

	// Drop by name, by keys, then all.
	if err := iv.DropOne(ctx, "age"); err != nil {
		t.Fatal(err)
	}
	admWantFields(t, admLast(t, rec, "dropIndexes"), adoc("dropIndexes", "people", "index", "age"))
	if err := iv.DropWithKey(ctx, adoc("email", 1), &driver.DropIndexesOptions{Comment: "k"}); err != nil {
		t.Fatal(err)
	}
	admWantFields(t, admLast(t, rec, "dropIndexes"), adoc("index", adoc("email", 1), "comment", "k"))
	err = iv.DropOne(ctx, "age")
	admWantCode(t, err, 27) // IndexNotFound
	if err := iv.DropAll(ctx); err != nil {
		t.Fatal(err)
	}
	admWantFields(t, admLast(t, rec, "dropIndexes"), adoc("index", "*"))
	specs, err = iv.ListSpecifications(ctx)
	if err != nil || len(specs) != 1 || specs[0].Name != "_id_" {
		t.Fatalf("after DropAll: %+v, %v", specs, err)
	}

	// A duplicate key fails the build.
	if _, err := coll.InsertMany(ctx, []any{adoc("_id", 1, "k", 1), adoc("_id", 2, "k", 1)}); err != nil {
		t.Fatal(err)
	}
	_, err = iv.CreateOne(ctx, driver.IndexModel{Keys: adoc("k", 1), Options: &driver.IndexOptions{Unique: driver.Ptr(true)}})
	if !driver.IsDuplicateKeyError(err) {
		t.Fatalf("unique index over duplicates: %v", err)
	}
	// listIndexes on a missing collection is the server's
	// NamespaceNotFound.
	_, err = c.Database("ix").Collection("nope").Indexes().ListSpecifications(ctx)
	admWantCode(t, err, 26)
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestIndexOptionsSent: each IndexOptions field goes into the index
// specification under the server's name.
func TestIndexOptionsSent(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := admClient(t, srv.URI())
	ctx := testCtx(t)
	iv := c.Database("ix").Collection("opts").Indexes()
	tests := []struct {
		name string
		m    driver.IndexModel
		want bson.D
	}{
		{"text", driver.IndexModel{Keys: adoc("body", "text"), Options: &driver.IndexOptions{Weights: adoc("body", 5), DefaultLanguage: driver.Ptr("french"),
			LanguageOverride: driver.Ptr("lang"), TextIndexVersion: driver.Ptr[int32](3)}},
			adoc("name", "body_text", "weights", adoc("body", 5), "default_language", "french", "language_override", "lang", "textIndexVersion", 3)},
		{"2dsphere", driver.IndexModel{Keys: adoc("loc", "2dsphere"), Options: &driver.IndexOptions{SphereVersion: driver.Ptr[int32](3)}},
			adoc("2dsphereIndexVersion", 3)},
		{"2d", driver.IndexModel{Keys: adoc("pt", "2d"), Options: &driver.IndexOptions{Bits: driver.Ptr[int32](20), Min: driver.Ptr(-10.0), Max: driver.Ptr(10.0)}},
			adoc("bits", 20, "min", -10.0, "max", 10.0)},
		{"wildcard", driver.IndexModel{Keys: adoc("$**", 1), Options: &driver.IndexOptions{WildcardProjection: adoc("a", 1)}},
			adoc("name", "$**_1", "wildcardProjection", adoc("a", 1))},
		{"collation", driver.IndexModel{Keys: adoc("s", 1), Options: &driver.IndexOptions{Collation: adoc("locale", "fr"), Name: driver.Ptr("s_fr")}},
			adoc("name", "s_fr", "collation", adoc("locale", "fr"))},
		{"engine and version", driver.IndexModel{Keys: adoc("e", 1), Options: &driver.IndexOptions{StorageEngine: adoc("wiredTiger", bson.D{}), Version: driver.Ptr[int32](2)}},
			adoc("storageEngine", adoc("wiredTiger", bson.D{}), "v", 2)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec.Reset()
			// mongotest may not build every kind of index; the
			// specification sent is what this test checks.
			_, _ = iv.CreateOne(ctx, tc.m)
			spec, ok := admLast(t, rec, "createIndexes").Lookup("indexes", "0").DocumentOK()
			if !ok {
				t.Fatal("no index specification sent")
			}
			if admFirstKey(spec) != "key" {
				t.Errorf("specification does not start with key: %s", spec)
			}
			admWantFields(t, spec, tc.want)
		})
	}
}

// TestCommitQuorum: sent as given to servers 4.4+, refused for older
// ones (the specification's rule: 4.2 servers misread it).
func TestCommitQuorum(t *testing.T) {
	for _, tc := range []struct {
		wire   int32
		quorum any
		sent   bool
	}{
		{wire: 9, quorum: "majority", sent: true},
		{wire: 25, quorum: 2, sent: true},
		{wire: 25, quorum: "votingMembers", sent: true},
		{wire: 8, quorum: "majority"},
		{wire: 8, quorum: 1},
	} {
		srv := mongotest.NewServer(t, mongotest.Options{MaxWireVersion: tc.wire})
		c, rec := admClient(t, srv.URI())
		_, err := c.Database("cq").Collection("c").Indexes().CreateOne(testCtx(t), driver.IndexModel{Keys: adoc("a", 1)},
			&driver.CreateIndexesOptions{CommitQuorum: tc.quorum})
		if !tc.sent {
			admWantArgErr(t, err, "CreateIndexesOptions.CommitQuorum")
			var oe *driver.OperationError
			if !errors.As(err, &oe) || oe.Address == "" {
				t.Errorf("wire %d: want an OperationError with the server's address: %v", tc.wire, err)
			}
			if n := len(admSent(rec, "createIndexes")); n != 0 {
				t.Errorf("wire %d: createIndexes sent", tc.wire)
			}
			continue
		}
		if err != nil {
			t.Fatalf("wire %d, %v: %v", tc.wire, tc.quorum, err)
		}
		admWantFields(t, admLast(t, rec, "createIndexes"), adoc("commitQuorum", tc.quorum))
	}
}

// TestSearchIndexes: the search index helpers send the specification's
// commands, without read or write concern even when the collection has
// them, and report the server's SearchNotEnabled (mongotest, like a
// mongod outside Atlas, has no search).
func TestSearchIndexes(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := admClient(t, srv.URI())
	ctx := testCtx(t)
	coll := c.Database("s").Collection("c", &driver.CollectionOptions{WriteConcern: driver.Majority(), ReadConcern: &driver.ReadConcern{Level: "majority"}})
	if _, err := coll.InsertOne(ctx, adoc("x", 1)); err != nil {
		t.Fatal(err)
	}
	sv := coll.SearchIndexes()
	const searchNotEnabled = 31082
	tests := []struct {
		name string
		run  func() error
		cmd  string
		want bson.D
	}{
		{"CreateOne", func() error {
			_, err := sv.CreateOne(ctx, driver.SearchIndexModel{Definition: adoc("mappings", adoc("dynamic", true)),
				Options: &driver.SearchIndexOptions{Name: driver.Ptr("test index"), Type: driver.Ptr("search")}})
			return err
		}, "createSearchIndexes", adoc("createSearchIndexes", "c", "indexes", bson.A{adoc("definition", adoc("mappings", adoc("dynamic", true)), "name", "test index", "type", "search")})},
		{"CreateMany empty", func() error { _, err := sv.CreateMany(ctx, nil); return err }, "createSearchIndexes", adoc("indexes", bson.A{})},
		{"UpdateOne", func() error { return sv.UpdateOne(ctx, "test index", bson.D{}) }, "updateSearchIndex",
			adoc("updateSearchIndex", "c", "name", "test index", "definition", bson.D{})},
		{"DropOne", func() error { return sv.DropOne(ctx, "test index") }, "dropSearchIndex", adoc("dropSearchIndex", "c", "name", "test index")},
		{"List", func() error { _, err := sv.List(ctx, nil); return err }, "aggregate", adoc("aggregate", "c", "pipeline", bson.A{adoc("$listSearchIndexes", bson.D{})})},
		{"List by name", func() error {
			_, err := sv.List(ctx, &driver.ListSearchIndexesOptions{Name: driver.Ptr("n")}, &driver.AggregateOptions{BatchSize: driver.Ptr[int32](3), Comment: "c"})
			return err
		},
			"aggregate", adoc("pipeline", bson.A{adoc("$listSearchIndexes", adoc("name", "n"))}, "cursor", adoc("batchSize", 3), "comment", "c")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec.Reset()
			admWantCode(t, tc.run(), searchNotEnabled)
			admWantFields(t, admLast(t, rec, tc.cmd), tc.want, "writeConcern", "readConcern")
		})
	}

	// dropSearchIndex's NamespaceNotFound is not an error.
	admFailPoint(t, c, adoc("failCommands", bson.A{"dropSearchIndex"}, "errorCode", 26))
	if err := sv.DropOne(ctx, "gone"); err != nil {
		t.Fatalf("DropOne answered NamespaceNotFound: %v", err)
	}
}

// TestIndexesUnacknowledged: with w: 0 the commands go out without a
// reply to wait for; CreateOne still returns the index's name.
func TestIndexesUnacknowledged(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := admClient(t, srv.URI())
	ctx := testCtx(t)
	coll := c.Database("ix").Collection("w0", &driver.CollectionOptions{WriteConcern: driver.Unacknowledged()})
	name, err := coll.Indexes().CreateOne(ctx, driver.IndexModel{Keys: adoc("a", 1)})
	if err != nil || name != "a_1" {
		t.Fatalf("CreateOne with w:0: %q, %v", name, err)
	}
	admWantFields(t, admLast(t, rec, "createIndexes"), adoc("writeConcern", adoc("w", 0)), "lsid")
	if err := coll.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	admWantFields(t, admLast(t, rec, "drop"), adoc("writeConcern", adoc("w", 0)))
}
