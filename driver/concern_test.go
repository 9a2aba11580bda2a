package driver_test

import (
	"errors"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
)

// Read concern, write concern and read preference are inherited client
// -> database -> collection, each level overriding the one above, and
// reach the server: readConcern on reads, writeConcern on writes, and
// $readPreference on reads sent to a replica-set secondary.
func TestConcernInheritance(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 2, mongotest.ReplicaSetOptions{})
	c := dial(t, rs.URI()+"&readConcernLevel=local&w=1", nil)
	ctx := testCtx(t)
	db := c.Database("conc", &driver.DatabaseOptions{ReadConcern: &driver.ReadConcern{Level: "majority"}})
	plain := db.Collection("x")
	over := db.Collection("x", &driver.CollectionOptions{
		WriteConcern:   driver.Majority(),
		ReadPreference: &driver.ReadPreference{Mode: driver.Secondary},
	})
	clientLevel := c.Database("conc").Collection("x")
	for _, m := range rs.Members() {
		m.ClearCommands()
	}
	if _, err := clientLevel.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := over.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}}); err != nil {
		t.Fatal(err)
	}
	_ = plain.FindOne(ctx, bson.D{}).Err()
	_ = clientLevel.FindOne(ctx, bson.D{}).Err()
	_ = over.FindOne(ctx, bson.D{}).Err()
	var inserts, finds []mongotest.Command
	secondaryFinds := 0
	for _, m := range rs.Members() {
		for _, cmd := range m.Commands() {
			switch cmd.Name {
			case "insert":
				inserts = append(inserts, cmd)
			case "find":
				finds = append(finds, cmd)
				if m != rs.Primary() {
					secondaryFinds++
				}
			}
		}
	}
	if len(inserts) != 2 || len(finds) != 3 {
		t.Fatalf("%d inserts, %d finds", len(inserts), len(finds))
	}
	if w := inserts[0].Body.Lookup("writeConcern", "w"); w.Int32() != 1 {
		t.Errorf("client-level insert: writeConcern %v, want the URI's w:1", inserts[0].Body.Lookup("writeConcern"))
	}
	if w := inserts[1].Body.Lookup("writeConcern", "w"); w.StringValue() != "majority" {
		t.Errorf("collection-level insert: writeConcern %v, want majority", inserts[1].Body.Lookup("writeConcern"))
	}
	levels := map[string]int{}
	for _, f := range finds {
		levels[f.Body.Lookup("readConcern", "level").StringValue()]++
	}
	if levels["majority"] != 2 || levels["local"] != 1 {
		t.Errorf("find read concerns %v, want 2 majority (database) and 1 local (URI)", levels)
	}
	if secondaryFinds != 1 {
		t.Errorf("%d finds went to a secondary, want 1", secondaryFinds)
	}
	for _, f := range finds {
		if _, err := f.Body.LookupErr("writeConcern"); err == nil {
			t.Error("a find carried a writeConcern")
		}
	}
	for _, i := range inserts {
		if _, err := i.Body.LookupErr("readConcern"); err == nil {
			t.Error("an insert carried a readConcern")
		}
	}
}

// Mistakes in names and options are *ArgumentErrors naming them, from
// every operation, and nothing is sent.
func TestHandleArgumentErrors(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c := dial(t, srv.URI(), nil)
	ctx := testCtx(t)
	cases := []struct {
		name string
		coll *driver.Collection
		arg  string
	}{
		{"empty database", c.Database("").Collection("x"), "database name"},
		{"dot in database", c.Database("a.b").Collection("x"), "database name"},
		{"empty collection", c.Database("d").Collection(""), "collection name"},
		{"NUL in collection", c.Database("d").Collection("a\x00b"), "collection name"},
		{"w negative", c.Database("d").Collection("x", &driver.CollectionOptions{WriteConcern: &driver.WriteConcern{W: &driver.W{Nodes: -1}}}), "CollectionOptions.WriteConcern.W"},
		{"w0 j", c.Database("d", &driver.DatabaseOptions{WriteConcern: &driver.WriteConcern{W: &driver.W{}, Journal: driver.Ptr(true)}}).Collection("x"), "DatabaseOptions.WriteConcern"},
		{"bad mode", c.Database("d").Collection("x", &driver.CollectionOptions{ReadPreference: &driver.ReadPreference{Mode: "fastest"}}), "CollectionOptions.ReadPreference.Mode"},
		{"tags with primary", c.Database("d").Collection("x", &driver.CollectionOptions{ReadPreference: &driver.ReadPreference{Mode: "primary", Tags: []map[string]string{{"dc": "ny"}}}}), "CollectionOptions.ReadPreference.Tags"},
	}
	srv.ClearCommands()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for op, err := range map[string]error{
				"InsertOne": func() error { _, err := tc.coll.InsertOne(ctx, bson.D{}); return err }(),
				"Find":      func() error { _, err := tc.coll.Find(ctx, bson.D{}); return err }(),
				"FindOne":   tc.coll.FindOne(ctx, bson.D{}).Err(),
			} {
				var ae *driver.ArgumentError
				if !errors.As(err, &ae) || ae.Argument != tc.arg {
					t.Errorf("%s: %v, want an ArgumentError naming %q", op, err, tc.arg)
				}
			}
		})
	}
	// Bad documents and option values.
	coll := c.Database("d").Collection("x")
	docCases := []struct {
		name string
		err  error
		arg  string
	}{
		{"nil document", func() error { _, err := coll.InsertOne(ctx, nil); return err }(), "document"},
		{"not a document", func() error { _, err := coll.InsertOne(ctx, 42); return err }(), "document"},
		{"nil filter", func() error { _, err := coll.Find(ctx, nil); return err }(), "filter"},
		{"nil FindOne filter", coll.FindOne(ctx, nil).Err(), "filter"},
		{"empty InsertMany", func() error { _, err := coll.InsertMany(ctx, nil); return err }(), "documents"},
		{"nil in InsertMany", func() error { _, err := coll.InsertMany(ctx, []any{bson.D{}, nil}); return err }(), "documents[1]"},
		{"negative skip", func() error {
			_, err := coll.Find(ctx, bson.D{}, &driver.FindOptions{Skip: driver.Ptr[int64](-1)})
			return err
		}(), "FindOptions.Skip"},
		{"maxAwaitTime without await", func() error {
			_, err := coll.Find(ctx, bson.D{}, &driver.FindOptions{MaxAwaitTime: driver.Ptr(msDuration(5))})
			return err
		}(), "FindOptions.MaxAwaitTime"},
		{"sort not a document", func() error { _, err := coll.Find(ctx, bson.D{}, &driver.FindOptions{Sort: 3}); return err }(), "FindOptions.Sort"},
	}
	for _, tc := range docCases {
		var ae *driver.ArgumentError
		if !errors.As(tc.err, &ae) || ae.Argument != tc.arg {
			t.Errorf("%s: %v, want an ArgumentError naming %q", tc.name, tc.err, tc.arg)
		}
	}
	for _, cmd := range srv.Commands() {
		switch cmd.Name {
		case "insert", "find":
			t.Errorf("a %s reached the server", cmd.Name)
		}
	}
}

func msDuration(ms int) time.Duration { return time.Duration(ms) * time.Millisecond }

// An operation's own ReadConcern, ReadPreference and WriteConcern
// override the collection's for that operation only.
func TestOperationLevelConcerns(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 2, mongotest.ReplicaSetOptions{})
	c := dial(t, rs.URI(), nil)
	ctx := testCtx(t)
	coll := c.Database("conc").Collection("op", &driver.CollectionOptions{ReadConcern: &driver.ReadConcern{Level: "local"}})
	for _, m := range rs.Members() {
		m.ClearCommands()
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}, &driver.InsertOneOptions{WriteConcern: driver.Majority()}); err != nil {
		t.Fatal(err)
	}
	res, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 1}}}},
		&driver.UpdateOptions{WriteConcern: driver.Unacknowledged()})
	if err != nil || res.Acknowledged {
		t.Fatalf("unacknowledged UpdateOne: %+v %v", res, err)
	}
	if _, err := coll.DeleteMany(ctx, bson.D{{Key: "_id", Value: 99}}); err != nil {
		t.Fatal(err)
	}
	if err := coll.FindOne(ctx, bson.D{}, &driver.FindOneOptions{ReadPreference: &driver.ReadPreference{Mode: driver.Secondary}}).Err(); err != nil && !errors.Is(err, driver.ErrNoDocuments) {
		t.Fatal(err)
	}
	cur, err := coll.Find(ctx, bson.D{}, &driver.FindOptions{ReadConcern: &driver.ReadConcern{Level: "majority"}})
	if err != nil {
		t.Fatal(err)
	}
	cur.Close(ctx)
	if _, err := coll.CountDocuments(ctx, bson.D{}, &driver.CountOptions{ReadConcern: &driver.ReadConcern{Level: "available"}}); err != nil {
		t.Fatal(err)
	}
	type seen struct {
		name, detail string
		secondary    bool
	}
	var got []seen
	for _, m := range rs.Members() {
		for _, cmd := range m.Commands() {
			var d string
			switch cmd.Name {
			case "insert", "update", "delete":
				if wc, err := cmd.Body.LookupErr("writeConcern"); err == nil {
					d = wc.String()
				}
			case "find", "aggregate":
				d = cmd.Body.Lookup("readConcern", "level").StringValue()
			default:
				continue
			}
			got = append(got, seen{cmd.Name, d, m != rs.Primary()})
		}
	}
	want := map[string]seen{
		"insert":    {"insert", `{"w":"majority"}`, false},
		"update":    {"update", `{"w":0}`, false},
		"delete":    {"delete", "", false},
		"aggregate": {"aggregate", "available", false},
	}
	finds := 0
	for _, g := range got {
		if g.name == "find" {
			finds++
			if g.secondary && g.detail != "local" {
				t.Errorf("the secondary FindOne sent read concern %q, want the collection's local", g.detail)
			}
			if !g.secondary && g.detail != "majority" {
				t.Errorf("the primary Find sent read concern %q, want majority", g.detail)
			}
			continue
		}
		w, ok := want[g.name]
		if !ok {
			continue
		}
		if g.detail != w.detail || g.secondary != w.secondary {
			t.Errorf("%s: got %+v, want %+v", g.name, g, w)
		}
	}
	if finds != 2 {
		t.Errorf("%d finds seen", finds)
	}
	// A bad override is an ArgumentError naming the options field.
	_, err = coll.Find(ctx, bson.D{}, &driver.FindOptions{ReadPreference: &driver.ReadPreference{Mode: "closest"}})
	var ae *driver.ArgumentError
	if !errors.As(err, &ae) || ae.Argument != "FindOptions.ReadPreference.Mode" {
		t.Errorf("bad operation read preference: %v", err)
	}
	_, err = coll.InsertOne(ctx, bson.D{}, &driver.InsertOneOptions{WriteConcern: &driver.WriteConcern{W: &driver.W{Nodes: -2}}})
	if !errors.As(err, &ae) || ae.Argument != "InsertOneOptions.WriteConcern.W" {
		t.Errorf("bad operation write concern: %v", err)
	}
}
