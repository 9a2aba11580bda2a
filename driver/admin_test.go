package driver_test

import (
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
	"github.com/mongoscope/mongoscope/mongotest"
)

// Tests of the enumerate-databases, enumerate-collections and collection
// management operations, through driver.Connect against mongotest.

// admClient connects to uri with a recorder of started commands.
func admClient(t *testing.T, uri string) (*driver.Client, *eventtest.Recorder) {
	t.Helper()
	rec := &eventtest.Recorder{Keep: eventtest.Only[*event.CommandStarted]}
	return dial(t, uri, &driver.ClientOptions{Monitors: []any{rec}}), rec
}

// admSent returns the commands named name that rec saw start.
func admSent(rec *eventtest.Recorder, name string) []*event.CommandStarted {
	var out []*event.CommandStarted
	for _, e := range eventtest.Of[*event.CommandStarted](rec) {
		if e.CommandName == name {
			out = append(out, e)
		}
	}
	return out
}

// admLast returns the last command named name, or fails the test.
func admLast(t *testing.T, rec *eventtest.Recorder, name string) bson.Raw {
	t.Helper()
	cmds := admSent(rec, name)
	if len(cmds) == 0 {
		t.Fatalf("no %s command was sent", name)
	}
	return cmds[len(cmds)-1].Command
}

// admWantFields checks that cmd has each field of want with the same value
// (numbers compared as numbers) and none of absent.
func admWantFields(t *testing.T, cmd bson.Raw, want bson.D, absent ...string) {
	t.Helper()
	for _, e := range want {
		got, err := cmd.LookupErr(e.Key)
		if err != nil {
			t.Errorf("%s: no %q in %s", cmd.Lookup(admFirstKey(cmd)), e.Key, cmd)
			continue
		}
		typ, b, err := bson.MarshalValue(e.Value)
		if err != nil {
			t.Fatal(err)
		}
		exp := bson.RawValue{Type: typ, Value: b}
		if gi, ok := got.AsInt64OK(); ok {
			if ei, ok := exp.AsInt64OK(); ok && gi == ei {
				continue
			}
		}
		if got.String() != exp.String() {
			t.Errorf("%q is %s, want %s (command %s)", e.Key, got, exp, cmd)
		}
	}
	for _, k := range absent {
		if _, err := cmd.LookupErr(k); err == nil {
			t.Errorf("%q sent: %s", k, cmd)
		}
	}
}

func admFirstKey(d bson.Raw) string {
	if it := d.Iter(); it.Next() {
		return it.Key()
	}
	return ""
}

// admWantArgErr checks that err is an *ArgumentError naming arg.
func admWantArgErr(t *testing.T, err error, arg string) {
	t.Helper()
	var ae *driver.ArgumentError
	if !errors.As(err, &ae) {
		t.Fatalf("want an *ArgumentError naming %s, got %T: %v", arg, err, err)
	}
	if ae.Argument != arg {
		t.Fatalf("ArgumentError names %q, want %q (%v)", ae.Argument, arg, err)
	}
}

// admWantCode checks that err is the server's refusal with code.
func admWantCode(t *testing.T, err error, code int32) {
	t.Helper()
	var ce *driver.CommandError
	if !errors.As(err, &ce) || ce.Code != code {
		t.Fatalf("want a CommandError with code %d, got %v", code, err)
	}
}

func adoc(kv ...any) bson.D {
	var out bson.D
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, bson.E{Key: kv[i].(string), Value: kv[i+1]})
	}
	return out
}

func TestListDatabases(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := admClient(t, srv.URI())
	ctx := testCtx(t)
	for _, db := range []string{"shop", "shop_archive", "logs"} {
		if _, err := c.Database(db).Collection("c").InsertOne(ctx, adoc("x", 1)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		filter  any
		opts    *driver.ListDatabasesOptions
		want    []string // names, sorted; must hold these
		exact   bool
		wantCmd bson.D
		absent  []string
	}{
		{name: "all", filter: bson.D{}, want: []string{"logs", "shop", "shop_archive"}, absent: []string{"nameOnly", "authorizedDatabases", "comment"}},
		{name: "by name", filter: adoc("name", "logs"), want: []string{"logs"}, exact: true, wantCmd: adoc("filter", adoc("name", "logs"))},
		{name: "regex", filter: adoc("name", bson.Regex{Pattern: "^shop"}), want: []string{"shop", "shop_archive"}, exact: true},
		{name: "options sent", filter: bson.D{}, opts: &driver.ListDatabasesOptions{AuthorizedDatabases: driver.Ptr(true), Comment: "hi"},
			want: []string{"logs"}, wantCmd: adoc("authorizedDatabases", true, "comment", "hi")},
		{name: "nameOnly", filter: adoc("name", "shop"), opts: &driver.ListDatabasesOptions{NameOnly: driver.Ptr(true)}, want: []string{"shop"}, exact: true, wantCmd: adoc("nameOnly", true)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.ListDatabases(ctx, tc.filter, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			var total int64
			for _, s := range res.Databases {
				names = append(names, s.Name)
				total += s.SizeOnDisk
			}
			admNames(t, names, tc.want, tc.exact)
			if res.TotalSize != total {
				t.Errorf("TotalSize %d, sum of sizes %d", res.TotalSize, total)
			}
			cmd := admLast(t, rec, "listDatabases")
			admWantFields(t, cmd, tc.wantCmd, tc.absent...)
			if db := admSent(rec, "listDatabases")[0].DatabaseName; db != "admin" {
				t.Errorf("listDatabases ran on %q", db)
			}

			names, err = c.ListDatabaseNames(ctx, tc.filter, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			admNames(t, names, tc.want, tc.exact)
			admWantFields(t, admLast(t, rec, "listDatabases"), append(bson.D{{Key: "nameOnly", Value: true}}, tc.wantCmd...))
		})
	}
}

// admNames checks that names has no duplicates and holds want (exactly
// when exact).
func admNames(t *testing.T, names, want []string, exact bool) {
	t.Helper()
	s := slices.Clone(names)
	slices.Sort(s)
	if len(slices.Compact(slices.Clone(s))) != len(s) {
		t.Errorf("duplicate names: %v", names)
	}
	if exact {
		if !slices.Equal(s, want) {
			t.Errorf("names %v, want %v", s, want)
		}
		return
	}
	for _, w := range want {
		if !slices.Contains(s, w) {
			t.Errorf("names %v lack %q", s, w)
		}
	}
}

func TestListCollections(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := admClient(t, srv.URI())
	ctx := testCtx(t)
	db := c.Database("enum")
	if err := db.CreateCollection(ctx, "plain"); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateCollection(ctx, "capped", &driver.CreateCollectionOptions{Capped: driver.Ptr(true), SizeInBytes: driver.Ptr[int64](4096)}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateView(ctx, "view", "plain", bson.A{adoc("$match", adoc("x", 1))}); err != nil {
		t.Fatal(err)
	}
	for _, coll := range []string{"plain", "capped"} {
		if _, err := db.Collection(coll).Indexes().CreateOne(ctx, driver.IndexModel{Keys: adoc("x", 1)}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Collection(coll).InsertOne(ctx, adoc("x", 1)); err != nil {
			t.Fatal(err)
		}
	}

	// The enumerate-collections specification's test plan, and nameOnly
	// only for a filter on the name.
	tests := []struct {
		name     string
		filter   any
		want     []string
		nameOnly bool
	}{
		{"all", bson.D{}, []string{"capped", "plain", "view"}, true},
		{"capped", adoc("options.capped", true), []string{"capped"}, false},
		{"by name", adoc("name", adoc("$in", bson.A{"plain", "nope"})), []string{"plain"}, true},
		{"views", adoc("type", "view"), []string{"view"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			names, err := db.ListCollectionNames(ctx, tc.filter)
			if err != nil {
				t.Fatal(err)
			}
			admNames(t, names, tc.want, true)
			for _, n := range names {
				if n == "" || slices.Contains([]byte(n), '$') {
					t.Errorf("bad name %q", n)
				}
			}
			cmd := admLast(t, rec, "listCollections")
			if tc.nameOnly {
				admWantFields(t, cmd, adoc("nameOnly", true))
			} else {
				admWantFields(t, cmd, nil, "nameOnly")
			}
		})
	}

	specs, err := db.ListCollectionSpecifications(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 3 {
		t.Fatalf("%d specifications: %+v", len(specs), specs)
	}
	byName := map[string]driver.CollectionSpecification{}
	for _, s := range specs {
		byName[s.Name] = s
	}
	cs := byName["capped"]
	if cs.Type != "collection" || cs.ReadOnly || cs.UUID == nil || len(cs.UUID.Data) != 16 || !cs.Options.Lookup("capped").Boolean() {
		t.Errorf("capped: %+v", cs)
	}
	if cs.IDIndex == nil || cs.IDIndex.Name != "_id_" || cs.IDIndex.Namespace != "enum.capped" || cs.IDIndex.KeysDocument.Lookup("_id").Int32() != 1 {
		t.Errorf("capped's _id index: %+v", cs.IDIndex)
	}
	vs := byName["view"]
	if vs.Type != "view" || !vs.ReadOnly || vs.UUID != nil || vs.IDIndex != nil || vs.Options.Lookup("viewOn").StringValue() != "plain" {
		t.Errorf("view: %+v", vs)
	}

	// A cursor over several batches: the comment goes with
	// listCollections, not with its getMores.
	cur, err := db.ListCollections(ctx, bson.D{}, &driver.ListCollectionsOptions{BatchSize: driver.Ptr[int32](1), Comment: "enum"})
	if err != nil {
		t.Fatal(err)
	}
	docs, err := driver.All[bson.Raw](ctx, cur)
	if err != nil || len(docs) != 3 {
		t.Fatalf("ListCollections: %d documents, %v", len(docs), err)
	}
	admWantFields(t, admLast(t, rec, "listCollections"), adoc("comment", "enum", "cursor", adoc("batchSize", 1)))
	gm := admSent(rec, "getMore")
	if len(gm) < 2 {
		t.Fatalf("%d getMores for 3 collections in batches of 1", len(gm))
	}
	for _, g := range gm {
		admWantFields(t, g.Command, adoc("batchSize", 1), "comment")
	}
}

// TestListCollectionsOnPrimary: the enumerate specifications run
// listCollections, listDatabases and listIndexes on the primary, whatever
// the read preference.
func TestListCollectionsOnPrimary(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 2, mongotest.ReplicaSetOptions{ElectionDelay: -1})
	c, rec := admClient(t, rs.URI()+"&readPreference=secondary")
	ctx := testCtx(t)
	coll := c.Database("p").Collection("c")
	if _, err := coll.InsertOne(ctx, adoc("x", 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Database("p").ListCollectionNames(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListDatabaseNames(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().ListSpecifications(ctx); err != nil {
		t.Fatal(err)
	}
	primary := rs.Primary().Addr()
	for _, name := range []string{"listCollections", "listDatabases", "listIndexes"} {
		e := admSent(rec, name)
		if len(e) != 1 {
			t.Fatalf("%d %s commands", len(e), name)
		}
		if addr := net.JoinHostPort(e[0].ServerHost, strconv.Itoa(e[0].ServerPort)); addr != primary {
			t.Errorf("%s ran on %s, not on the primary %s", name, addr, primary)
		}
	}
}

// TestListCollectionsDirectSecondary: directly connected to a
// secondary, the enumerations run there (the specifications' exception).
func TestListCollectionsDirectSecondary(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 2, mongotest.ReplicaSetOptions{ElectionDelay: -1})
	pc := dial(t, rs.URI(), nil)
	ctx := testCtx(t)
	if _, err := pc.Database("p").Collection("c").InsertOne(ctx, adoc("x", 1)); err != nil {
		t.Fatal(err)
	}
	var secondary *mongotest.Server
	for _, m := range rs.Members() {
		if m != rs.Primary() {
			secondary = m
		}
	}
	c, rec := admClient(t, "mongodb://"+secondary.Addr()+"/?directConnection=true")
	names, err := c.Database("p").ListCollectionNames(ctx, bson.D{})
	if err != nil || len(names) != 1 || names[0] != "c" {
		t.Fatalf("ListCollectionNames on a secondary: %v, %v", names, err)
	}
	if _, err := c.ListDatabaseNames(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	ix, err := c.Database("p").Collection("c").Indexes().ListNames(ctx)
	if err != nil || len(ix) != 1 {
		t.Fatalf("ListNames on a secondary: %v, %v", ix, err)
	}
	for _, name := range []string{"listCollections", "listDatabases", "listIndexes"} {
		if cmds := admSent(rec, name); len(cmds) != 1 || cmds[0].ServerPort == 0 {
			t.Fatalf("%s: %d commands", name, len(cmds))
		}
	}
}

func TestCreateCollectionCommand(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := admClient(t, srv.URI())
	ctx := testCtx(t)
	db := c.Database("create")
	hour := time.Hour
	tests := []struct {
		name string
		opts *driver.CreateCollectionOptions
		want bson.D
		// code is mongotest's answer: 0, or an error code for options
		// it refuses.
		code int32
	}{
		{name: "plain", opts: nil, want: adoc("create", "plain")},
		{name: "capped", opts: &driver.CreateCollectionOptions{Capped: driver.Ptr(true), SizeInBytes: driver.Ptr[int64](1 << 20), MaxDocuments: driver.Ptr[int64](10)},
			want: adoc("capped", true, "size", 1<<20, "max", 10)},
		{name: "validated", opts: &driver.CreateCollectionOptions{Validator: adoc("x", adoc("$gt", 0)), ValidationLevel: driver.Ptr("moderate"), ValidationAction: driver.Ptr("warn")},
			want: adoc("validator", adoc("x", adoc("$gt", 0)), "validationLevel", "moderate", "validationAction", "warn")},
		{name: "engine", opts: &driver.CreateCollectionOptions{StorageEngine: adoc("wiredTiger", bson.D{}), IndexOptionDefaults: adoc("storageEngine", adoc("wiredTiger", bson.D{})), Comment: "c"},
			want: adoc("storageEngine", adoc("wiredTiger", bson.D{}), "indexOptionDefaults", adoc("storageEngine", adoc("wiredTiger", bson.D{})), "comment", "c")},
		{name: "clustered", opts: &driver.CreateCollectionOptions{ClusteredIndex: adoc("key", adoc("_id", 1), "unique", true, "name", "test index")},
			want: adoc("clusteredIndex", adoc("key", adoc("_id", 1), "unique", true, "name", "test index"))},
		{name: "timeseries", opts: &driver.CreateCollectionOptions{ExpireAfterSeconds: driver.Ptr[int64](604800),
			TimeSeries: &driver.TimeSeriesOptions{TimeField: "time", MetaField: driver.Ptr("meta"), Granularity: driver.Ptr("minutes")}},
			want: adoc("expireAfterSeconds", 604800, "timeseries", adoc("timeField", "time", "metaField", "meta", "granularity", "minutes"))},
		{name: "bucketing", opts: &driver.CreateCollectionOptions{TimeSeries: &driver.TimeSeriesOptions{TimeField: "time", BucketMaxSpan: &hour, BucketRounding: &hour}},
			want: adoc("timeseries", adoc("timeField", "time", "bucketMaxSpanSeconds", 3600, "bucketRoundingSeconds", 3600))},
		{name: "images", opts: &driver.CreateCollectionOptions{ChangeStreamPreAndPostImages: adoc("enabled", true)},
			want: adoc("changeStreamPreAndPostImages", adoc("enabled", true))},
		{name: "view", opts: &driver.CreateCollectionOptions{ViewOn: driver.Ptr("plain"), Pipeline: bson.A{adoc("$project", adoc("x", 1))}},
			want: adoc("viewOn", "plain", "pipeline", bson.A{adoc("$project", adoc("x", 1))})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := db.CreateCollection(ctx, tc.name, tc.opts)
			if tc.code != 0 {
				admWantCode(t, err, tc.code)
			} else if err != nil {
				t.Fatal(err)
			}
			cmd := admLast(t, rec, "create")
			if admFirstKey(cmd) != "create" || cmd.Lookup("create").StringValue() != tc.name {
				t.Fatalf("command %s", cmd)
			}
			admWantFields(t, cmd, tc.want)
		})
	}
	names, err := db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	admNames(t, names, []string{"bucketing", "capped", "clustered", "engine", "images", "plain", "timeseries", "validated", "view"}, true)

	// Creating what exists is the server's business: since MongoDB 7.0
	// (SERVER-60064) the same options succeed and others fail with
	// NamespaceExists (48).
	again := []struct {
		name string
		opts *driver.CreateCollectionOptions
		code int32
	}{
		{name: "plain", opts: nil},
		{name: "capped", opts: &driver.CreateCollectionOptions{Capped: driver.Ptr(true), SizeInBytes: driver.Ptr[int64](1 << 20), MaxDocuments: driver.Ptr[int64](10)}},
		{name: "view", opts: &driver.CreateCollectionOptions{ViewOn: driver.Ptr("plain"), Pipeline: bson.A{adoc("$project", adoc("x", 1))}}},
		{name: "plain", opts: &driver.CreateCollectionOptions{Capped: driver.Ptr(true), SizeInBytes: driver.Ptr[int64](4096)}, code: 48},
		{name: "capped", opts: &driver.CreateCollectionOptions{Capped: driver.Ptr(true), SizeInBytes: driver.Ptr[int64](1 << 20)}, code: 48},
		{name: "view", opts: &driver.CreateCollectionOptions{ViewOn: driver.Ptr("capped")}, code: 48},
	}
	for _, tc := range again {
		err := db.CreateCollection(ctx, tc.name, tc.opts)
		if tc.code == 0 {
			if err != nil {
				t.Fatalf("creating %s again with the same options: %v", tc.name, err)
			}
			continue
		}
		admWantCode(t, err, tc.code)
		var ce *driver.CommandError
		if !errors.As(err, &ce) || ce.CodeName != "NamespaceExists" || !strings.Contains(ce.Message, "namespace create."+tc.name+" already exists, but ") {
			t.Fatalf("creating %s again with other options: %v", tc.name, err)
		}
	}
	// The write concern is sent.
	wdb := c.Database("create", &driver.DatabaseOptions{WriteConcern: driver.Majority()})
	if err := wdb.CreateCollection(ctx, "wc"); err != nil {
		t.Fatal(err)
	}
	admWantFields(t, admLast(t, rec, "create"), adoc("writeConcern", adoc("w", "majority")))
}

func TestDropAndRename(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := admClient(t, srv.URI())
	ctx := testCtx(t)
	db := c.Database("dr")
	coll := db.Collection("a")
	if _, err := coll.InsertOne(ctx, adoc("_id", 1)); err != nil {
		t.Fatal(err)
	}

	// Rename, onto a missing and onto an existing collection.
	if err := coll.Rename(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	cmd := admLast(t, rec, "renameCollection")
	admWantFields(t, cmd, adoc("renameCollection", "dr.a", "to", "dr.b"), "dropTarget")
	if e := admSent(rec, "renameCollection"); e[0].DatabaseName != "admin" {
		t.Errorf("renameCollection on %q", e[0].DatabaseName)
	}
	if _, err := coll.InsertOne(ctx, adoc("_id", 2)); err != nil {
		t.Fatal(err)
	}
	if err := coll.Rename(ctx, "b"); err == nil {
		t.Fatal("rename onto an existing collection succeeded")
	}
	if err := coll.Rename(ctx, "b", &driver.RenameOptions{DropTarget: driver.Ptr(true)}); err != nil {
		t.Fatal(err)
	}
	got, err := driver.Decode[bson.M](db.Collection("b").FindOne(ctx, bson.D{}))
	if err != nil || got["_id"] != int32(2) {
		t.Fatalf("after rename with dropTarget: %v, %v", got, err)
	}

	// Drop twice: a missing collection is not an error.
	for i := 0; i < 2; i++ {
		if err := db.Collection("b").Drop(ctx); err != nil {
			t.Fatalf("drop %d: %v", i, err)
		}
	}
	// The server's NamespaceNotFound (older servers) is not an error
	// either.
	admFailPoint(t, c, adoc("failCommands", bson.A{"drop"}, "errorCode", 26))
	if err := db.Collection("b").Drop(ctx); err != nil {
		t.Fatalf("drop answered NamespaceNotFound: %v", err)
	}
	admFailPoint(t, c, adoc("failCommands", bson.A{"drop"}, "errorCode", 13))
	if err := db.Collection("b").Drop(ctx); err == nil {
		t.Fatal("drop answered Unauthorized, Drop returned nil")
	}

	// Database.Drop.
	if _, err := db.Collection("c").InsertOne(ctx, adoc("_id", 1)); err != nil {
		t.Fatal(err)
	}
	if err := db.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	names, err := c.ListDatabaseNames(ctx, adoc("name", "dr"))
	if err != nil || len(names) != 0 {
		t.Fatalf("after Drop: %v, %v", names, err)
	}
	if err := db.Drop(ctx); err != nil {
		t.Fatalf("dropping a missing database: %v", err)
	}
}

// admFailPoint sets failCommand to fail the next command of data.
func admFailPoint(t *testing.T, c *driver.Client, data bson.D) {
	t.Helper()
	_, err := c.RunCommand(testCtx(t), "admin", adoc("configureFailPoint", "failCommand", "mode", adoc("times", 1), "data", data))
	if err != nil {
		t.Fatal(err)
	}
}

// TestAdminBadInput: mistakes are *ArgumentErrors naming the argument,
// found before anything is sent.
func TestAdminBadInput(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := admClient(t, srv.URI())
	ctx := testCtx(t)
	db := c.Database("bad")
	coll := db.Collection("c")
	half := 1500 * time.Millisecond
	neg := -time.Second
	tests := []struct {
		name string
		run  func() error
		arg  string
	}{
		{"ListDatabases nil filter", func() error { _, err := c.ListDatabases(ctx, nil); return err }, "filter"},
		{"ListDatabaseNames bad comment", func() error {
			_, err := c.ListDatabaseNames(ctx, bson.D{}, &driver.ListDatabasesOptions{Comment: make(chan int)})
			return err
		}, "ListDatabasesOptions.Comment"},
		{"ListCollections nil filter", func() error { _, err := db.ListCollections(ctx, nil); return err }, "filter"},
		{"ListCollectionNames nil filter", func() error { _, err := db.ListCollectionNames(ctx, nil); return err }, "filter"},
		{"ListCollections negative batch", func() error {
			_, err := db.ListCollections(ctx, bson.D{}, &driver.ListCollectionsOptions{BatchSize: driver.Ptr[int32](-1)})
			return err
		}, "ListCollectionsOptions.BatchSize"},
		{"empty database name", func() error { _, err := c.Database("").ListCollectionNames(ctx, bson.D{}); return err }, "database name"},
		{"CreateCollection empty name", func() error { return db.CreateCollection(ctx, "") }, "collection name"},
		{"CreateCollection negative size", func() error {
			return db.CreateCollection(ctx, "x", &driver.CreateCollectionOptions{Capped: driver.Ptr(true), SizeInBytes: driver.Ptr[int64](-1)})
		}, "CreateCollectionOptions.SizeInBytes"},
		{"CreateCollection negative max", func() error {
			return db.CreateCollection(ctx, "x", &driver.CreateCollectionOptions{MaxDocuments: driver.Ptr[int64](-1)})
		}, "CreateCollectionOptions.MaxDocuments"},
		{"CreateCollection negative TTL", func() error {
			return db.CreateCollection(ctx, "x", &driver.CreateCollectionOptions{ExpireAfterSeconds: driver.Ptr[int64](-5)})
		}, "CreateCollectionOptions.ExpireAfterSeconds"},
		{"CreateCollection validator not a document", func() error {
			return db.CreateCollection(ctx, "x", &driver.CreateCollectionOptions{Validator: 42})
		}, "CreateCollectionOptions.Validator"},
		{"CreateCollection pipeline without viewOn", func() error {
			return db.CreateCollection(ctx, "x", &driver.CreateCollectionOptions{Pipeline: bson.A{}})
		}, "CreateCollectionOptions.Pipeline"},
		{"CreateCollection no time field", func() error {
			return db.CreateCollection(ctx, "x", &driver.CreateCollectionOptions{TimeSeries: &driver.TimeSeriesOptions{}})
		}, "CreateCollectionOptions.TimeSeries.TimeField"},
		{"CreateCollection fractional bucket span", func() error {
			return db.CreateCollection(ctx, "x", &driver.CreateCollectionOptions{TimeSeries: &driver.TimeSeriesOptions{TimeField: "t", BucketMaxSpan: &half}})
		}, "CreateCollectionOptions.TimeSeries.BucketMaxSpan"},
		{"CreateView empty viewOn", func() error { return db.CreateView(ctx, "v", "", nil) }, "viewOn"},
		{"CreateView pipeline of numbers", func() error { return db.CreateView(ctx, "v", "c", bson.A{1}) }, "pipeline[0]"},
		{"CreateView pipeline not an array", func() error { return db.CreateView(ctx, "v", "c", adoc("$match", bson.D{})) }, "pipeline"},
		{"Rename empty name", func() error { return coll.Rename(ctx, "") }, "newName"},
		{"collection name with $", func() error { return db.Collection("a$b").Drop(ctx) }, "collection name"},

		{"CreateOne nil keys", func() error { _, err := coll.Indexes().CreateOne(ctx, driver.IndexModel{}); return err }, "model.Keys"},
		{"CreateOne empty keys", func() error { _, err := coll.Indexes().CreateOne(ctx, driver.IndexModel{Keys: bson.D{}}); return err }, "model.Keys"},
		{"CreateOne unordered keys", func() error {
			_, err := coll.Indexes().CreateOne(ctx, driver.IndexModel{Keys: bson.M{"a": 1, "b": 1}})
			return err
		}, "model.Keys"},
		{"CreateOne keys not a document", func() error { _, err := coll.Indexes().CreateOne(ctx, driver.IndexModel{Keys: 1}); return err }, "model.Keys"},
		{"CreateOne empty name", func() error {
			_, err := coll.Indexes().CreateOne(ctx, driver.IndexModel{Keys: adoc("a", 1), Options: &driver.IndexOptions{Name: driver.Ptr("")}})
			return err
		}, "model.Options.Name"},
		{"CreateOne key value without a name", func() error {
			_, err := coll.Indexes().CreateOne(ctx, driver.IndexModel{Keys: adoc("a", true)})
			return err
		}, "model.Keys.a"},
		{"CreateOne negative TTL", func() error {
			_, err := coll.Indexes().CreateOne(ctx, driver.IndexModel{Keys: adoc("a", 1), Options: &driver.IndexOptions{ExpireAfterSeconds: driver.Ptr[int32](-1)}})
			return err
		}, "model.Options.ExpireAfterSeconds"},
		{"CreateOne bits out of range", func() error {
			_, err := coll.Indexes().CreateOne(ctx, driver.IndexModel{Keys: adoc("loc", "2d"), Options: &driver.IndexOptions{Bits: driver.Ptr[int32](33)}})
			return err
		}, "model.Options.Bits"},
		{"CreateOne partial filter not a document", func() error {
			_, err := coll.Indexes().CreateOne(ctx, driver.IndexModel{Keys: adoc("a", 1), Options: &driver.IndexOptions{PartialFilterExpression: "x"}})
			return err
		}, "model.Options.PartialFilterExpression"},
		{"CreateOne bad commit quorum", func() error {
			_, err := coll.Indexes().CreateOne(ctx, driver.IndexModel{Keys: adoc("a", 1)}, &driver.CreateIndexesOptions{CommitQuorum: true})
			return err
		}, "CreateIndexesOptions.CommitQuorum"},
		{"CreateOne negative max time", func() error {
			_, err := coll.Indexes().CreateOne(ctx, driver.IndexModel{Keys: adoc("a", 1)}, &driver.CreateIndexesOptions{MaxTime: &neg})
			return err
		}, "CreateIndexesOptions.MaxTime"},
		{"CreateMany empty", func() error { _, err := coll.Indexes().CreateMany(ctx, nil); return err }, "models"},
		{"CreateMany second nil", func() error {
			_, err := coll.Indexes().CreateMany(ctx, []driver.IndexModel{{Keys: adoc("a", 1)}, {}})
			return err
		}, "models[1].Keys"},
		{"DropOne star", func() error { return coll.Indexes().DropOne(ctx, "*") }, "name"},
		{"DropOne empty", func() error { return coll.Indexes().DropOne(ctx, "") }, "name"},
		{"DropWithKey nil", func() error { return coll.Indexes().DropWithKey(ctx, nil) }, "keys"},
		{"DropAll negative max time", func() error { return coll.Indexes().DropAll(ctx, &driver.DropIndexesOptions{MaxTime: &neg}) }, "DropIndexesOptions.MaxTime"},
		{"List negative batch", func() error {
			_, err := coll.Indexes().List(ctx, &driver.ListIndexesOptions{BatchSize: driver.Ptr[int32](-2)})
			return err
		}, "ListIndexesOptions.BatchSize"},
		{"search CreateOne nil definition", func() error { _, err := coll.SearchIndexes().CreateOne(ctx, driver.SearchIndexModel{}); return err }, "model.Definition"},
		{"search UpdateOne empty name", func() error { return coll.SearchIndexes().UpdateOne(ctx, "", bson.D{}) }, "name"},
		{"search UpdateOne nil definition", func() error { return coll.SearchIndexes().UpdateOne(ctx, "x", nil) }, "definition"},
		{"search List negative batch", func() error {
			_, err := coll.SearchIndexes().List(ctx, nil, &driver.AggregateOptions{BatchSize: driver.Ptr[int32](-1)})
			return err
		}, "AggregateOptions.BatchSize"},
		{"search DropOne empty name", func() error { return coll.SearchIndexes().DropOne(ctx, "") }, "name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec.Reset()
			admWantArgErr(t, tc.run(), tc.arg)
			if n := eventtest.Count[*event.CommandStarted](rec); n != 0 {
				t.Errorf("%d commands sent: %v", n, rec.Names())
			}
		})
	}
}
