package driver_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
	"github.com/mongoscope/mongoscope/mongotest"
)

// Tests of the read operations (Aggregate, CountDocuments,
// EstimatedDocumentCount, Distinct) and of Database.RunCommand and
// RunCursorCommand, through driver.Connect against mongotest.

// recordingClient connects to uri with a recorder of the commands the
// client starts.
func recordingClient(t *testing.T, uri string) (*driver.Client, *eventtest.Recorder) {
	t.Helper()
	rec := &eventtest.Recorder{Keep: eventtest.Only[*event.CommandStarted]}
	return dial(t, uri, &driver.ClientOptions{Monitors: []any{rec}}), rec
}

// sent returns the commands named name that rec saw start, in order.
func sent(rec *eventtest.Recorder, name string) []*event.CommandStarted {
	var out []*event.CommandStarted
	for _, e := range eventtest.Of[*event.CommandStarted](rec) {
		if e.CommandName == name {
			out = append(out, e)
		}
	}
	return out
}

// lastSent returns the last command named name rec saw, or fails.
func lastSent(t *testing.T, rec *eventtest.Recorder, name string) bson.Raw {
	t.Helper()
	cs := sent(rec, name)
	if len(cs) == 0 {
		t.Fatalf("no %s command was sent", name)
	}
	return cs[len(cs)-1].Command
}

// field returns doc's key as relaxed JSON, or "<absent>".
func field(doc bson.Raw, key ...string) string {
	v, err := doc.LookupErr(key...)
	if err != nil {
		return "<absent>"
	}
	return v.String()
}

// seed inserts items with _id 1..n and qty 10*_id (tag "even"/"odd").
func seed(t *testing.T, coll *driver.Collection, n int) {
	t.Helper()
	var docs []any
	for i := 1; i <= n; i++ {
		tag := "odd"
		if i%2 == 0 {
			tag = "even"
		}
		docs = append(docs, item{ID: i, Qty: i * 10, Tag: tag})
	}
	if _, err := coll.InsertMany(testCtx(t), docs); err != nil {
		t.Fatal(err)
	}
}

func commandCode(err error) int32 {
	var ce *driver.CommandError
	if errors.As(err, &ce) {
		return ce.Code
	}
	return 0
}

func TestAggregate(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := recordingClient(t, srv.URI()+"?w=1&readConcernLevel=local")
	coll := c.Database("shop").Collection("items")
	seed(t, coll, 7)
	byID := bson.D{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}}

	tests := []struct {
		name     string
		pipeline any
		opts     *driver.AggregateOptions
		wantIDs  []int
		wantCode int32
		// fields of the aggregate command sent, as relaxed JSON.
		want map[string]string
		// fields of each getMore sent.
		wantGetMore map[string]string
	}{
		{name: "plain", pipeline: bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "qty", Value: bson.D{{Key: "$gt", Value: 30}}}}}}, byID},
			wantIDs: []int{4, 5, 6, 7},
			want: map[string]string{"aggregate": `"items"`, "cursor": `{}`, "readConcern": `{"level":"local"}`, "writeConcern": "<absent>",
				"allowDiskUse": "<absent>", "maxTimeMS": "<absent>", "bypassDocumentValidation": "<absent>"}},
		{name: "batchSize applies to getMore", pipeline: []bson.D{byID}, opts: &driver.AggregateOptions{BatchSize: driver.Ptr[int32](3)},
			wantIDs: []int{1, 2, 3, 4, 5, 6, 7}, want: map[string]string{"cursor": `{"batchSize":3}`},
			wantGetMore: map[string]string{"batchSize": "3", "maxTimeMS": "<absent>"}},
		{name: "batchSize 0 is sent", pipeline: []bson.D{byID}, opts: &driver.AggregateOptions{BatchSize: driver.Ptr[int32](0)},
			wantIDs: []int{1, 2, 3, 4, 5, 6, 7}, want: map[string]string{"cursor": `{"batchSize":0}`},
			wantGetMore: map[string]string{"batchSize": "<absent>"}},
		{name: "options", pipeline: bson.A{byID, bson.D{{Key: "$limit", Value: 2}}},
			opts: &driver.AggregateOptions{AllowDiskUse: driver.Ptr(true), MaxTime: driver.Ptr(5 * time.Second), Comment: bson.D{{Key: "who", Value: "test"}},
				Hint: "_id_", BypassDocumentValidation: driver.Ptr(false), BatchSize: driver.Ptr[int32](1)},
			wantIDs: []int{1, 2},
			want: map[string]string{"allowDiskUse": "true", "maxTimeMS": "5000", "comment": `{"who":"test"}`, "hint": `"_id_"`,
				"bypassDocumentValidation": "false"},
			wantGetMore: map[string]string{"comment": `{"who":"test"}`, "maxTimeMS": "<absent>"}},
		{name: "let", pipeline: bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "$expr", Value: bson.D{{Key: "$eq", Value: bson.A{"$qty", "$$q"}}}}}}}},
			opts: &driver.AggregateOptions{Let: bson.D{{Key: "q", Value: 50}}}, wantIDs: []int{5}, want: map[string]string{"let": `{"q":50}`}},
		{name: "collation is sent (alternate shifted: NotImplemented in mongotest)", pipeline: bson.A{byID}, opts: &driver.AggregateOptions{Collation: bson.D{{Key: "locale", Value: "en"}, {Key: "alternate", Value: "shifted"}}},
			wantCode: 238, want: map[string]string{"collation": `{"locale":"en","alternate":"shifted"}`}},
		{name: "server error", pipeline: bson.A{bson.D{{Key: "$nosuchstage", Value: 1}}}, wantCode: 40324},
		// A $changeStream opens a tailable awaitData cursor, so
		// MaxAwaitTime is accepted (mongotest has no change streams).
		{name: "MaxAwaitTime with $changeStream", pipeline: bson.A{bson.D{{Key: "$changeStream", Value: bson.D{}}}},
			opts: &driver.AggregateOptions{MaxAwaitTime: driver.Ptr(time.Second)}, wantCode: 238, want: map[string]string{"maxTimeMS": "<absent>"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec.Reset()
			ctx := testCtx(t)
			var opts []*driver.AggregateOptions
			if tc.opts != nil {
				opts = append(opts, tc.opts)
			}
			cur, err := coll.Aggregate(ctx, tc.pipeline, opts...)
			if tc.wantCode != 0 {
				if commandCode(err) != tc.wantCode {
					t.Fatalf("err %v, want code %d", err, tc.wantCode)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				got, err := driver.All[item](ctx, cur)
				if err != nil {
					t.Fatal(err)
				}
				var ids []int
				for _, it := range got {
					ids = append(ids, it.ID)
				}
				if !slices.Equal(ids, tc.wantIDs) {
					t.Fatalf("ids %v, want %v", ids, tc.wantIDs)
				}
			}
			cmd := lastSent(t, rec, "aggregate")
			for k, v := range tc.want {
				if got := field(cmd, k); got != v {
					t.Errorf("aggregate %s = %s, want %s (%s)", k, got, v, cmd)
				}
			}
			gms := sent(rec, "getMore")
			if tc.wantGetMore != nil && len(gms) == 0 {
				t.Fatal("no getMore sent")
			}
			for _, gm := range gms {
				for k, v := range tc.wantGetMore {
					if got := field(gm.Command, k); got != v {
						t.Errorf("getMore %s = %s, want %s (%s)", k, got, v, gm.Command)
					}
				}
			}
		})
	}
}

// TestAggregateWriteStage: a pipeline ending in $out or $merge sends the
// write concern with the read concern, and no batchSize in its cursor
// document (0 would stop it from running).
func TestAggregateWriteStage(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := recordingClient(t, srv.URI()+"?w=1&readConcernLevel=local")
	db := c.Database("shop")
	coll := db.Collection("items")
	seed(t, coll, 5)
	tests := []struct {
		name      string
		last      bson.D
		batchSize *int32
		target    string
		wc        *driver.WriteConcern // the collection's; nil: the client's w:1
	}{
		{"$out batchSize 0", bson.D{{Key: "$out", Value: "out0"}}, driver.Ptr[int32](0), "out0", nil},
		{"$out batchSize 2", bson.D{{Key: "$out", Value: "out2"}}, driver.Ptr[int32](2), "out2", nil},
		{"$merge", bson.D{{Key: "$merge", Value: bson.D{{Key: "into", Value: "merged"}}}}, driver.Ptr[int32](0), "merged", nil},
		// w:0 is sent, but the reply (which holds the cursor) is awaited.
		{"$out unacknowledged", bson.D{{Key: "$out", Value: "outw0"}}, nil, "outw0", driver.Unacknowledged()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec.Reset()
			ctx := testCtx(t)
			coll := db.Collection("items", &driver.CollectionOptions{WriteConcern: tc.wc})
			wantWC := `{"w":1}`
			if tc.wc != nil {
				wantWC = `{"w":0}`
			}
			cur, err := coll.Aggregate(ctx, bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: 2}}}}}}, tc.last},
				&driver.AggregateOptions{BatchSize: tc.batchSize})
			if err != nil {
				t.Fatal(err)
			}
			if cur.Next(ctx) || cur.Err() != nil {
				t.Fatalf("a write stage's cursor returned a document or an error: %v", cur.Err())
			}
			cmd := lastSent(t, rec, "aggregate")
			for k, v := range map[string]string{"cursor": "{}", "writeConcern": wantWC, "readConcern": `{"level":"local"}`} {
				if got := field(cmd, k); got != v {
					t.Errorf("%s = %s, want %s", k, got, v)
				}
			}
			n, err := db.Collection(tc.target).CountDocuments(ctx, bson.D{})
			if err != nil || n != 3 {
				t.Fatalf("%s holds %d documents (%v), want 3", tc.target, n, err)
			}
		})
	}
}

// TestAggregateWriteStageReadPreference: the CRUD specification's "Read
// preferences and server selection": with a secondary read preference a
// pipeline with $out goes to a secondary (with $readPreference) when every
// server is 5.0+, and to the primary otherwise.
func TestAggregateWriteStageReadPreference(t *testing.T) {
	tests := []struct {
		name          string
		wire          int32
		wantSecondary bool
	}{
		{"5.0+ uses the read preference", 0, true},
		{"pre-5.0 uses the primary", 12, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{Options: mongotest.Options{MaxWireVersion: tc.wire}})
			c, rec := recordingClient(t, rs.URI())
			ctx := testCtx(t)
			coll := c.Database("shop").Collection("items", &driver.CollectionOptions{ReadPreference: &driver.ReadPreference{Mode: driver.Secondary}})
			seed(t, c.Database("shop").Collection("items"), 3)
			// Wait until the client knows the secondaries.
			if _, err := coll.CountDocuments(ctx, bson.D{}); err != nil {
				t.Fatal(err)
			}
			rec.Reset()
			cur, err := coll.Aggregate(ctx, bson.A{bson.D{{Key: "$out", Value: "copy"}}})
			if err != nil {
				t.Fatal(err)
			}
			cur.Close(ctx)
			st := sent(rec, "aggregate")
			if len(st) != 1 {
				t.Fatalf("%d aggregate commands", len(st))
			}
			onPrimary := st[0].ServerPort == port(t, rs.Primary().Addr())
			if onPrimary == tc.wantSecondary {
				t.Fatalf("aggregate on the primary: %v, want %v", onPrimary, !tc.wantSecondary)
			}
			rp := field(st[0].Command, "$readPreference")
			if tc.wantSecondary && rp != `{"mode":"secondary"}` || !tc.wantSecondary && rp != "<absent>" {
				t.Fatalf("$readPreference %s", rp)
			}
		})
	}
}

func port(t *testing.T, addr string) int {
	t.Helper()
	for i := len(addr) - 1; i >= 0; i-- {
		if addr[i] == ':' {
			n := 0
			for _, ch := range addr[i+1:] {
				n = n*10 + int(ch-'0')
			}
			return n
		}
	}
	t.Fatalf("no port in %q", addr)
	return 0
}

func TestDatabaseAggregate(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := recordingClient(t, srv.URI())
	ctx := testCtx(t)
	cur, err := c.Database("admin").Aggregate(ctx, bson.A{bson.D{{Key: "$currentOp", Value: bson.D{}}}})
	if err != nil {
		t.Fatal(err)
	}
	var ops []bson.M
	if err := cur.All(ctx, &ops); err != nil {
		t.Fatal(err)
	}
	if len(ops) == 0 {
		t.Fatal("$currentOp returned nothing; it should at least show itself")
	}
	cmd := lastSent(t, rec, "aggregate")
	if v := cmd.Lookup("aggregate"); v.Type != bson.TypeInt32 || v.Int32() != 1 {
		t.Fatalf("aggregate: %s, want 1", v)
	}
	// A stage that needs a collection is the server's to refuse.
	_, err = c.Database("shop").Aggregate(ctx, bson.A{bson.D{{Key: "$match", Value: bson.D{}}}})
	if commandCode(err) != 73 {
		t.Fatalf("collection stage on aggregate: 1: %v, want InvalidNamespace", err)
	}
}

func TestCountDocuments(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := recordingClient(t, srv.URI())
	db := c.Database("shop")
	coll := db.Collection("items")
	seed(t, coll, 10)
	odd := bson.D{{Key: "tag", Value: "odd"}}
	tests := []struct {
		name     string
		coll     string
		filter   any
		opts     *driver.CountOptions
		want     int64
		pipeline string
		wantCode int32
		fields   map[string]string
	}{
		{name: "all", filter: bson.D{}, want: 10,
			pipeline: `[{"$match":{}},{"$group":{"_id":1,"n":{"$sum":1}}}]`},
		{name: "filter", filter: odd, want: 5},
		{name: "skip", filter: odd, opts: &driver.CountOptions{Skip: driver.Ptr[int64](2)}, want: 3,
			pipeline: `[{"$match":{"tag":"odd"}},{"$skip":2},{"$group":{"_id":1,"n":{"$sum":1}}}]`},
		{name: "limit", filter: bson.D{}, opts: &driver.CountOptions{Limit: driver.Ptr[int64](4)}, want: 4,
			pipeline: `[{"$match":{}},{"$limit":4},{"$group":{"_id":1,"n":{"$sum":1}}}]`},
		{name: "skip and limit", filter: bson.D{}, opts: &driver.CountOptions{Skip: driver.Ptr[int64](8), Limit: driver.Ptr[int64](4)}, want: 2,
			pipeline: `[{"$match":{}},{"$skip":8},{"$limit":4},{"$group":{"_id":1,"n":{"$sum":1}}}]`},
		{name: "zero skip and limit are left out", filter: bson.D{}, opts: &driver.CountOptions{Skip: driver.Ptr[int64](0), Limit: driver.Ptr[int64](0)}, want: 10,
			pipeline: `[{"$match":{}},{"$group":{"_id":1,"n":{"$sum":1}}}]`},
		{name: "no match", filter: bson.D{{Key: "tag", Value: "none"}}, want: 0},
		{name: "empty collection", coll: "nothing", filter: bson.D{}, want: 0},
		{name: "options", filter: bson.D{}, opts: &driver.CountOptions{Hint: bson.D{{Key: "_id", Value: 1}}, MaxTime: driver.Ptr(time.Second), Comment: "c"}, want: 10,
			fields: map[string]string{"hint": `{"_id":1}`, "maxTimeMS": "1000", "comment": `"c"`, "cursor": "{}"}},
		{name: "collation is sent (alternate shifted: NotImplemented in mongotest)", filter: bson.D{}, opts: &driver.CountOptions{Collation: bson.D{{Key: "locale", Value: "fr"}, {Key: "alternate", Value: "shifted"}}},
			wantCode: 238, fields: map[string]string{"collation": `{"locale":"fr","alternate":"shifted"}`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec.Reset()
			cl := coll
			if tc.coll != "" {
				cl = db.Collection(tc.coll)
			}
			var opts []*driver.CountOptions
			if tc.opts != nil {
				opts = append(opts, tc.opts)
			}
			n, err := cl.CountDocuments(testCtx(t), tc.filter, opts...)
			if tc.wantCode != 0 {
				if commandCode(err) != tc.wantCode {
					t.Fatalf("err %v, want code %d", err, tc.wantCode)
				}
			} else if err != nil || n != tc.want {
				t.Fatalf("count %d, %v; want %d", n, err, tc.want)
			}
			cmd := lastSent(t, rec, "aggregate")
			if tc.pipeline != "" && field(cmd, "pipeline") != tc.pipeline {
				t.Errorf("pipeline %s, want %s", field(cmd, "pipeline"), tc.pipeline)
			}
			for k, v := range tc.fields {
				if got := field(cmd, k); got != v {
					t.Errorf("%s = %s, want %s", k, got, v)
				}
			}
		})
	}
}

func TestEstimatedDocumentCount(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := recordingClient(t, srv.URI())
	db := c.Database("shop")
	seed(t, db.Collection("items"), 6)
	tests := []struct {
		name   string
		coll   string
		opts   []*driver.EstimatedDocumentCountOptions
		want   int64
		fields map[string]string
	}{
		{"plain", "items", nil, 6, map[string]string{"count": `"items"`, "query": "<absent>", "maxTimeMS": "<absent>", "comment": "<absent>"}},
		{"options", "items", []*driver.EstimatedDocumentCountOptions{{MaxTime: driver.Ptr(2 * time.Second)}, nil, {Comment: 7}}, 6,
			map[string]string{"maxTimeMS": "2000", "comment": "7"}},
		{"missing collection", "nothing", nil, 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec.Reset()
			n, err := db.Collection(tc.coll).EstimatedDocumentCount(testCtx(t), tc.opts...)
			if err != nil || n != tc.want {
				t.Fatalf("%d, %v; want %d", n, err, tc.want)
			}
			cmd := lastSent(t, rec, "count")
			for k, v := range tc.fields {
				if got := field(cmd, k); got != v {
					t.Errorf("%s = %s, want %s", k, got, v)
				}
			}
		})
	}
}

func TestDistinct(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := recordingClient(t, srv.URI())
	coll := c.Database("shop").Collection("items")
	seed(t, coll, 6)
	ctx := testCtx(t)

	tags, err := driver.Values[string](coll.Distinct(ctx, "tag", bson.D{}))
	slices.Sort(tags)
	if err != nil || !slices.Equal(tags, []string{"even", "odd"}) {
		t.Fatalf("tags %v, %v", tags, err)
	}
	var qtys []any
	if err := coll.Distinct(ctx, "qty", bson.D{{Key: "tag", Value: "even"}}).Decode(&qtys); err != nil {
		t.Fatal(err)
	}
	if len(qtys) != 3 {
		t.Fatalf("qtys %v", qtys)
	}
	none, err := driver.Values[any](coll.Distinct(ctx, "nosuchfield", bson.D{}))
	if err != nil || len(none) != 0 {
		t.Fatalf("distinct of a missing field: %v, %v", none, err)
	}
	if raw, err := coll.Distinct(ctx, "tag", bson.D{{Key: "_id", Value: 2}}).Raw(); err != nil || raw.Lookup("0").StringValue() != "even" {
		t.Fatalf("Raw: %v, %v", raw, err)
	}

	tests := []struct {
		name     string
		opts     *driver.DistinctOptions
		fields   map[string]string
		wantCode int32
	}{
		{"command", nil, map[string]string{"distinct": `"items"`, "key": `"tag"`, "query": `{"qty":{"$gt":10}}`, "hint": "<absent>"}, 0},
		{"options", &driver.DistinctOptions{MaxTime: driver.Ptr(time.Second), Comment: "x", Hint: "_id_"},
			map[string]string{"maxTimeMS": "1000", "comment": `"x"`, "hint": `"_id_"`}, 0},
		{"collation is sent (alternate shifted: NotImplemented in mongotest)", &driver.DistinctOptions{Collation: bson.D{{Key: "locale", Value: "en"}, {Key: "alternate", Value: "shifted"}}},
			map[string]string{"collation": `{"locale":"en","alternate":"shifted"}`}, 238},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec.Reset()
			r := coll.Distinct(testCtx(t), "tag", bson.D{{Key: "qty", Value: bson.D{{Key: "$gt", Value: 10}}}}, tc.opts)
			if commandCode(r.Err()) != tc.wantCode || tc.wantCode == 0 && r.Err() != nil {
				t.Fatalf("err %v, want code %d", r.Err(), tc.wantCode)
			}
			cmd := lastSent(t, rec, "distinct")
			for k, v := range tc.fields {
				if got := field(cmd, k); got != v {
					t.Errorf("%s = %s, want %s", k, got, v)
				}
			}
		})
	}
}

func TestDatabaseRunCommand(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 2, mongotest.ReplicaSetOptions{})
	c, rec := recordingClient(t, rs.URI())
	db := c.Database("shop", &driver.DatabaseOptions{ReadConcern: &driver.ReadConcern{Level: "majority"},
		WriteConcern: driver.Majority(), ReadPreference: &driver.ReadPreference{Mode: driver.Secondary}})
	ctx := testCtx(t)
	primaryPort := port(t, rs.Primary().Addr())

	tests := []struct {
		name        string
		cmd         any
		opts        *driver.RunCommandOptions
		wantCode    int32
		wantPrimary bool
		wantRP      string
	}{
		{name: "ping goes to the primary", cmd: bson.D{{Key: "ping", Value: 1}}, wantPrimary: true, wantRP: "<absent>"},
		{name: "read preference", cmd: bson.D{{Key: "ping", Value: 1}}, opts: &driver.RunCommandOptions{ReadPreference: "secondary"}, wantRP: `{"mode":"secondary"}`},
		{name: "server error", cmd: bson.D{{Key: "noSuchCommand", Value: 1}}, wantCode: 59, wantPrimary: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec.Reset()
			r := db.RunCommand(ctx, tc.cmd, tc.opts)
			if tc.wantCode != 0 {
				if commandCode(r.Err()) != tc.wantCode {
					t.Fatalf("err %v, want %d", r.Err(), tc.wantCode)
				}
				if _, err := r.Raw(); err == nil {
					t.Fatal("Raw returned no error")
				}
			} else {
				var reply struct {
					OK float64 `bson:"ok"`
				}
				if err := r.Decode(&reply); err != nil || reply.OK != 1 {
					t.Fatalf("reply %+v, %v", reply, err)
				}
			}
			st := eventtest.Of[*event.CommandStarted](rec)
			if len(st) != 1 {
				t.Fatalf("%d commands sent", len(st))
			}
			cmd := st[0].Command
			if (st[0].ServerPort == primaryPort) != tc.wantPrimary {
				t.Errorf("ran on port %d, primary %d, want primary %v", st[0].ServerPort, primaryPort, tc.wantPrimary)
			}
			if field(cmd, "readConcern") != "<absent>" || field(cmd, "writeConcern") != "<absent>" {
				t.Errorf("the database's concerns were added: %s", cmd)
			}
			if tc.wantRP != "" && field(cmd, "$readPreference") != tc.wantRP {
				t.Errorf("$readPreference %s, want %s", field(cmd, "$readPreference"), tc.wantRP)
			}
		})
	}
	if err := c.Database("bad.name").RunCommand(ctx, bson.D{{Key: "ping", Value: 1}}).Err(); !errors.As(err, new(*driver.ArgumentError)) {
		t.Fatalf("bad database name: %v", err)
	}
}

func TestRunCursorCommand(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := recordingClient(t, srv.URI())
	db := c.Database("shop")
	seed(t, db.Collection("items"), 7)
	ctx := testCtx(t)

	t.Run("find with getMore options", func(t *testing.T) {
		rec.Reset()
		cur, err := db.RunCursorCommand(ctx, bson.D{{Key: "find", Value: "items"}, {Key: "batchSize", Value: 2}, {Key: "sort", Value: bson.D{{Key: "_id", Value: 1}}}},
			&driver.RunCursorCommandOptions{BatchSize: driver.Ptr[int32](3), Comment: "gm"})
		if err != nil {
			t.Fatal(err)
		}
		got, err := driver.All[item](ctx, cur)
		if err != nil || len(got) != 7 || got[6].ID != 7 {
			t.Fatalf("%v, %v", got, err)
		}
		if field(lastSent(t, rec, "find"), "comment") != "<absent>" {
			t.Error("the getMore comment was added to the first command")
		}
		gms := sent(rec, "getMore")
		if len(gms) != 2 {
			t.Fatalf("%d getMores, want 2 (batches 2+3+2)", len(gms))
		}
		for _, gm := range gms {
			if field(gm.Command, "batchSize") != "3" || field(gm.Command, "comment") != `"gm"` || field(gm.Command, "collection") != `"items"` {
				t.Errorf("getMore %s", gm.Command)
			}
		}
	})
	t.Run("listCollections", func(t *testing.T) {
		cur, err := db.RunCursorCommand(ctx, bson.D{{Key: "listCollections", Value: 1}})
		if err != nil {
			t.Fatal(err)
		}
		var colls []bson.M
		if err := cur.All(ctx, &colls); err != nil || len(colls) != 1 || colls[0]["name"] != "items" {
			t.Fatalf("%v, %v", colls, err)
		}
	})
	t.Run("a reply without a cursor is an error", func(t *testing.T) {
		_, err := db.RunCursorCommand(ctx, bson.D{{Key: "ping", Value: 1}})
		var oe *driver.OperationError
		if !errors.As(err, &oe) {
			t.Fatalf("%v, want an OperationError", err)
		}
	})
	t.Run("server error", func(t *testing.T) {
		_, err := db.RunCursorCommand(ctx, bson.D{{Key: "find", Value: 1}})
		if commandCode(err) == 0 {
			t.Fatalf("%v, want a CommandError", err)
		}
	})
}

// TestReadsBadInput: arguments the driver refuses before sending
// anything, with an *ArgumentError naming them.
func TestReadsBadInput(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := recordingClient(t, srv.URI())
	db := c.Database("shop")
	coll := db.Collection("items")
	byID := bson.D{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}}
	tests := []struct {
		name string
		run  func(ctx context.Context) error
		arg  string
	}{
		{"nil pipeline", func(ctx context.Context) error { _, err := coll.Aggregate(ctx, nil); return err }, "pipeline"},
		{"pipeline not an array", func(ctx context.Context) error { _, err := coll.Aggregate(ctx, byID); return err }, "pipeline"},
		{"stage not a document", func(ctx context.Context) error { _, err := coll.Aggregate(ctx, bson.A{byID, 3}); return err }, "pipeline[1]"},
		{"negative aggregate batchSize", func(ctx context.Context) error {
			_, err := coll.Aggregate(ctx, bson.A{byID}, &driver.AggregateOptions{BatchSize: driver.Ptr[int32](-1)})
			return err
		}, "AggregateOptions.BatchSize"},
		{"aggregate MaxAwaitTime without a tailable cursor", func(ctx context.Context) error {
			_, err := coll.Aggregate(ctx, bson.A{byID}, &driver.AggregateOptions{MaxAwaitTime: driver.Ptr(time.Second)})
			return err
		}, "AggregateOptions.MaxAwaitTime"},
		{"aggregate hint not a value", func(ctx context.Context) error {
			_, err := coll.Aggregate(ctx, bson.A{byID}, &driver.AggregateOptions{Let: 5})
			return err
		}, "AggregateOptions.Let"},
		{"database nil pipeline", func(ctx context.Context) error { _, err := db.Aggregate(ctx, nil); return err }, "pipeline"},
		{"database stage not a document", func(ctx context.Context) error { _, err := db.Aggregate(ctx, []any{"$currentOp"}); return err }, "pipeline[0]"},
		{"count nil filter", func(ctx context.Context) error { _, err := coll.CountDocuments(ctx, nil); return err }, "filter"},
		{"count negative skip", func(ctx context.Context) error {
			_, err := coll.CountDocuments(ctx, bson.D{}, &driver.CountOptions{Skip: driver.Ptr[int64](-1)})
			return err
		}, "CountOptions.Skip"},
		{"count negative limit", func(ctx context.Context) error {
			_, err := coll.CountDocuments(ctx, bson.D{}, &driver.CountOptions{Limit: driver.Ptr[int64](-2)})
			return err
		}, "CountOptions.Limit"},
		{"estimated negative maxTime", func(ctx context.Context) error {
			_, err := coll.EstimatedDocumentCount(ctx, &driver.EstimatedDocumentCountOptions{MaxTime: driver.Ptr(-time.Second)})
			return err
		}, "EstimatedDocumentCountOptions.MaxTime"},
		{"distinct nil filter", func(ctx context.Context) error { return coll.Distinct(ctx, "tag", nil).Err() }, "filter"},
		{"find MaxAwaitTime without TailableAwait", func(ctx context.Context) error {
			_, err := coll.Find(ctx, bson.D{}, &driver.FindOptions{MaxAwaitTime: driver.Ptr(time.Second)})
			return err
		}, "FindOptions.MaxAwaitTime"},
		{"find MaxAwaitTime on a Tailable (not await) cursor", func(ctx context.Context) error {
			_, err := coll.Find(ctx, bson.D{}, &driver.FindOptions{CursorType: driver.Tailable, MaxAwaitTime: driver.Ptr(time.Second)})
			return err
		}, "FindOptions.MaxAwaitTime"},
		{"run cursor command negative batchSize", func(ctx context.Context) error {
			_, err := db.RunCursorCommand(ctx, bson.D{{Key: "find", Value: "items"}}, &driver.RunCursorCommandOptions{BatchSize: driver.Ptr[int32](-1)})
			return err
		}, "RunCursorCommandOptions.BatchSize"},
		{"run cursor command negative MaxAwaitTime", func(ctx context.Context) error {
			_, err := db.RunCursorCommand(ctx, bson.D{{Key: "find", Value: "items"}}, &driver.RunCursorCommandOptions{MaxAwaitTime: driver.Ptr(-time.Second)})
			return err
		}, "RunCursorCommandOptions.MaxAwaitTime"},
		{"run cursor command bad read preference", func(ctx context.Context) error {
			_, err := db.RunCursorCommand(ctx, bson.D{{Key: "find", Value: "items"}}, &driver.RunCursorCommandOptions{ReadPreference: "sideways"})
			return err
		}, "RunCursorCommandOptions.ReadPreference"},
		{"run cursor command nil", func(ctx context.Context) error { _, err := db.RunCursorCommand(ctx, nil); return err }, "cmd"},
		{"run command map with two keys", func(ctx context.Context) error {
			return db.RunCommand(ctx, map[string]any{"find": "items", "limit": 1}).Err()
		}, "cmd"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec.Reset()
			err := tc.run(testCtx(t))
			var ae *driver.ArgumentError
			if !errors.As(err, &ae) || ae.Argument != tc.arg {
				t.Fatalf("err %v, want an ArgumentError naming %s", err, tc.arg)
			}
			if n := len(eventtest.Of[*event.CommandStarted](rec)); n != 0 {
				t.Fatalf("%d commands were sent", n)
			}
		})
	}
}
