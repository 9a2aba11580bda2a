package driver_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
)

// TestFindCommandShape checks, rule by rule, the find and getMore commands
// Find and FindOne send: the CRUD specification's limit/batchSize rules
// ("Setting limit and batchSize options for find commands", "findOne API
// details", crud/tests/unified/find.json and findOne.json) and the
// find/getMore/killCursors specification's ("Mapping OP_QUERY behavior to
// the find command limit and batchSize fields", "Behavior of Limit, skip
// and batchSize", "Semantics of maxTimeMS for a Driver").
func TestFindCommandShape(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := recordingClient(t, srv.URI())
	coll := c.Database("shop").Collection("items")
	seed(t, coll, 10)
	byID := bson.D{{Key: "_id", Value: 1}}
	tests := []struct {
		name  string
		opts  *driver.FindOptions
		one   *driver.FindOneOptions // FindOne instead of Find
		want  map[string]string      // fields of the find command
		gm    []string               // each getMore's batchSize
		gmMax string                 // each getMore's maxTimeMS
		n     int
	}{
		{name: "batchSize applies to every getMore", opts: &driver.FindOptions{BatchSize: driver.Ptr[int32](4)},
			want: map[string]string{"batchSize": "4", "limit": "<absent>", "singleBatch": "<absent>"},
			gm:   []string{"4", "4"}, n: 10},
		{name: "batchSize equal to limit is sent as limit+1", opts: &driver.FindOptions{Sort: byID, Limit: driver.Ptr[int64](4), BatchSize: driver.Ptr[int32](4)},
			want: map[string]string{"batchSize": "5", "limit": "4"}, n: 4},
		{name: "getMore asks for no more than the limit's rest", opts: &driver.FindOptions{Limit: driver.Ptr[int64](4), BatchSize: driver.Ptr[int32](3)},
			want: map[string]string{"batchSize": "3", "limit": "4"}, gm: []string{"1"}, n: 4},
		{name: "negative limit is one batch of -limit", opts: &driver.FindOptions{Limit: driver.Ptr[int64](-3), BatchSize: driver.Ptr[int32](2)},
			want: map[string]string{"limit": "3", "singleBatch": "true", "batchSize": "3"}, n: 3},
		{name: "negative batchSize without a limit is one batch of -batchSize", opts: &driver.FindOptions{BatchSize: driver.Ptr[int32](-4)},
			want: map[string]string{"limit": "<absent>", "singleBatch": "true", "batchSize": "4"}, n: 4},
		{name: "negative batchSize with a limit is one batch of the limit", opts: &driver.FindOptions{Limit: driver.Ptr[int64](6), BatchSize: driver.Ptr[int32](-2)},
			want: map[string]string{"limit": "6", "singleBatch": "true", "batchSize": "6"}, n: 6},
		{name: "zero limit and batchSize are left out", opts: &driver.FindOptions{Limit: driver.Ptr[int64](0), BatchSize: driver.Ptr[int32](0)},
			want: map[string]string{"limit": "<absent>", "batchSize": "<absent>", "singleBatch": "<absent>"}, n: 10},
		{name: "maxTimeMS on find, not on getMore", opts: &driver.FindOptions{BatchSize: driver.Ptr[int32](6), MaxTime: driver.Ptr(1500 * time.Millisecond)},
			want: map[string]string{"maxTimeMS": "1500"}, gm: []string{"6"}, gmMax: "<absent>", n: 10},
		{name: "options are passed through", opts: &driver.FindOptions{Sort: bson.D{{Key: "qty", Value: -1}}, Skip: driver.Ptr[int64](2),
			Projection: bson.D{{Key: "qty", Value: 1}}, Hint: "_id_", Comment: "c", AllowPartialResults: driver.Ptr(true), NoCursorTimeout: driver.Ptr(false)},
			want: map[string]string{"sort": `{"qty":-1}`, "skip": "2", "projection": `{"qty":1}`, "hint": `"_id_"`, "comment": `"c"`,
				"allowPartialResults": "true", "noCursorTimeout": "false", "tailable": "<absent>", "awaitData": "<absent>",
				"readConcern": "<absent>", "allowDiskUse": "<absent>", "returnKey": "<absent>"}, n: 8},
		{name: "FindOne: limit 1, singleBatch, no batchSize", one: &driver.FindOneOptions{Sort: byID, Skip: driver.Ptr[int64](2)},
			want: map[string]string{"limit": "1", "singleBatch": "true", "batchSize": "<absent>", "skip": "2", "sort": `{"_id":1}`}, n: 1},
		// FindOneOptions are FindOptions without batchSize, cursorType,
		// limit and noCursorTimeout (CRUD spec): allowDiskUse included.
		{name: "FindOne options", one: &driver.FindOneOptions{AllowDiskUse: driver.Ptr(true), AllowPartialResults: driver.Ptr(true),
			MaxTime: driver.Ptr(time.Second), Comment: "one", ReturnKey: driver.Ptr(false), ShowRecordID: driver.Ptr(false)},
			want: map[string]string{"allowDiskUse": "true", "allowPartialResults": "true", "maxTimeMS": "1000", "comment": `"one"`,
				"returnKey": "false", "showRecordId": "false", "noCursorTimeout": "<absent>", "tailable": "<absent>"}, n: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			rec.Reset()
			n := 0
			if tc.one != nil {
				if err := coll.FindOne(ctx, bson.D{}, tc.one).Err(); err != nil {
					t.Fatal(err)
				}
				n = 1
			} else {
				cur, err := coll.Find(ctx, bson.D{}, tc.opts)
				if err != nil {
					t.Fatal(err)
				}
				docs, err := driver.All[item](ctx, cur)
				if err != nil {
					t.Fatal(err)
				}
				n = len(docs)
			}
			if n != tc.n {
				t.Errorf("%d documents, want %d", n, tc.n)
			}
			cmd := lastSent(t, rec, "find")
			for k, v := range tc.want {
				if got := field(cmd, k); got != v {
					t.Errorf("find %s = %s, want %s", k, got, v)
				}
			}
			var gm []string
			for _, e := range sent(rec, "getMore") {
				gm = append(gm, field(e.Command, "batchSize"))
				if tc.gmMax != "" && field(e.Command, "maxTimeMS") != tc.gmMax {
					t.Errorf("getMore maxTimeMS %s, want %s", field(e.Command, "maxTimeMS"), tc.gmMax)
				}
			}
			if strings.Join(gm, ",") != strings.Join(tc.gm, ",") {
				t.Errorf("getMore batch sizes [%s], want [%s]", strings.Join(gm, ","), strings.Join(tc.gm, ","))
			}
			if k := sent(rec, "killCursors"); len(k) != 0 {
				t.Errorf("%d killCursors: the cursor should have been exhausted", len(k))
			}
		})
	}
}

// TestFindHugeLimitGetMore checks that a limit past int32 does not turn
// into a truncated getMore batchSize: with no batchSize, the getMores
// carry none (find/getMore spec: batchSize only when the limit needs one).
func TestFindHugeLimitGetMore(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := recordingClient(t, srv.URI())
	coll := c.Database("shop").Collection("many")
	seed(t, coll, 150) // more than the server's first batch of 101
	ctx := testCtx(t)
	// limit - 101 is 2^32 + 5, which an int32 conversion makes 5.
	cur, err := coll.Find(ctx, bson.D{}, &driver.FindOptions{Limit: driver.Ptr[int64](1<<32 + 106)})
	if err != nil {
		t.Fatal(err)
	}
	docs, err := driver.All[item](ctx, cur)
	if err != nil || len(docs) != 150 {
		t.Fatalf("%d documents, %v", len(docs), err)
	}
	gms := sent(rec, "getMore")
	if len(gms) != 1 || field(gms[0].Command, "batchSize") != "<absent>" {
		for _, g := range gms {
			t.Logf("getMore batchSize %s", field(g.Command, "batchSize"))
		}
		t.Fatalf("%d getMores, want one without batchSize", len(gms))
	}
}

// TestOldServerOptionsSentAsIs checks the CRUD spec's version notes for
// let (5.0+), comment (4.4+ for writes), hint on acknowledged deletes and
// findAndModify (4.4+) and allowDiskUse on find (4.4+): "older servers
// will report an error", so the driver sends them as they are and checks
// nothing itself (only unacknowledged hints are checked, in
// TestUnacknowledgedHintByVersion).
func TestOldServerOptionsSentAsIs(t *testing.T) {
	old := mongotest.NewServer(t, mongotest.Options{MaxWireVersion: 8, Version: "4.2.0"})
	c, rec := recordingClient(t, old.URI())
	ctx := testCtx(t)
	coll := c.Database("shop").Collection("old")
	let := bson.D{{Key: "v", Value: 1}}
	tests := []struct {
		cmd    string
		run    func()
		fields []string
	}{
		{"find", func() {
			_ = coll.FindOne(ctx, bson.D{}, &driver.FindOneOptions{Let: let, Comment: bson.D{{Key: "c", Value: 1}}, AllowDiskUse: driver.Ptr(true)}).Err()
		}, []string{"let", "comment", "allowDiskUse"}},
		{"aggregate", func() {
			cur, err := coll.Aggregate(ctx, bson.A{bson.D{{Key: "$match", Value: bson.D{}}}}, &driver.AggregateOptions{Let: let})
			if err == nil {
				cur.Close(ctx)
			}
		}, []string{"let"}},
		{"update", func() {
			_, _ = coll.UpdateOne(ctx, bson.D{}, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 1}}}}, &driver.UpdateOptions{Let: let, Comment: "c"})
		}, []string{"let", "comment"}},
		{"delete", func() {
			_, _ = coll.DeleteOne(ctx, bson.D{}, &driver.DeleteOptions{Hint: "_id_", Comment: "c"})
		}, []string{"deletes.0.hint", "comment"}},
		{"findAndModify", func() {
			_ = coll.FindOneAndDelete(ctx, bson.D{}, &driver.FindOneAndDeleteOptions{Hint: "_id_", Let: let}).Err()
		}, []string{"hint", "let"}},
	}
	for _, tc := range tests {
		t.Run(tc.cmd, func(t *testing.T) {
			rec.Reset()
			tc.run()
			cmd := lastSent(t, rec, tc.cmd)
			for _, f := range tc.fields {
				if _, err := cmd.LookupErr(strings.Split(f, ".")...); err != nil {
					t.Errorf("%s sent without %s", tc.cmd, f)
				}
			}
		})
	}
}

// TestCursorNamespace checks the find/getMore/killCursors spec's rule that
// getMore and killCursors go to the namespace the server's reply named
// (cursor.ns): for a database aggregate, "admin.$cmd.aggregate".
func TestCursorNamespace(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := recordingClient(t, srv.URI())
	ctx := testCtx(t)
	currentOp := bson.A{bson.D{{Key: "$currentOp", Value: bson.D{}}}}
	for _, kill := range []bool{false, true} {
		rec.Reset()
		cur, err := c.Database("admin").Aggregate(ctx, currentOp, &driver.AggregateOptions{BatchSize: driver.Ptr[int32](0)})
		if err != nil {
			t.Fatal(err)
		}
		name := "getMore"
		if kill {
			name = "killCursors"
			if cur.ID() == 0 {
				t.Fatal("an aggregate with batchSize 0 gave no open cursor")
			}
			if err := cur.Close(ctx); err != nil {
				t.Fatal(err)
			}
		} else if _, err := driver.All[bson.M](ctx, cur); err != nil {
			t.Fatal(err)
		}
		cmd := lastSent(t, rec, name)
		coll := field(cmd, "collection")
		if kill {
			coll = field(cmd, "killCursors")
		}
		if coll != `"$cmd.aggregate"` || field(cmd, "$db") != `"admin"` {
			t.Errorf("%s went to %s.%s, want admin.$cmd.aggregate", name, field(cmd, "$db"), coll)
		}
	}
}
