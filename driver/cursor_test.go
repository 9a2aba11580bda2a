package driver_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
	"github.com/mongoscope/mongoscope/mongotest"
)

// Tests of Cursor through the public API: tailable and awaitData cursors
// on capped collections, Close, getMore errors, and where getMores go (the
// cursor's server; behind a load balancer, its pinned connection).

// cappedLog creates the capped collection shop.log holding n documents.
func cappedLog(t *testing.T, c *driver.Client, n int) *driver.Collection {
	t.Helper()
	db := c.Database("shop")
	if err := db.RunCommand(testCtx(t), bson.D{{Key: "create", Value: "log"}, {Key: "capped", Value: true}, {Key: "size", Value: 1 << 20}}).Err(); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("log")
	for i := 1; i <= n; i++ {
		if _, err := coll.InsertOne(testCtx(t), item{ID: i}); err != nil {
			t.Fatal(err)
		}
	}
	return coll
}

func TestTailableCursor(t *testing.T) {
	const await = 150 * time.Millisecond
	tests := []struct {
		name string
		open func(ctx context.Context, coll *driver.Collection) (*driver.Cursor, error)
		// wantMaxTime is the getMore's maxTimeMS.
		wantMaxTime string
		// waits: an empty getMore takes the await time on the server.
		waits bool
	}{
		{"find TailableAwait", func(ctx context.Context, coll *driver.Collection) (*driver.Cursor, error) {
			return coll.Find(ctx, bson.D{}, &driver.FindOptions{CursorType: driver.TailableAwait, MaxAwaitTime: driver.Ptr(await)})
		}, "150", true},
		{"find Tailable", func(ctx context.Context, coll *driver.Collection) (*driver.Cursor, error) {
			return coll.Find(ctx, bson.D{}, &driver.FindOptions{CursorType: driver.Tailable})
		}, "<absent>", false},
		{"RunCursorCommand TailableAwait", func(ctx context.Context, coll *driver.Collection) (*driver.Cursor, error) {
			return coll.Database().RunCursorCommand(ctx, bson.D{{Key: "find", Value: "log"}, {Key: "tailable", Value: true}, {Key: "awaitData", Value: true}},
				&driver.RunCursorCommandOptions{CursorType: driver.TailableAwait, MaxAwaitTime: driver.Ptr(await)})
		}, "150", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := mongotest.NewServer(t, mongotest.Options{})
			c, rec := recordingClient(t, srv.URI())
			coll := cappedLog(t, c, 2)
			ctx := testCtx(t)
			cur, err := tc.open(ctx, coll)
			if err != nil {
				t.Fatal(err)
			}
			defer cur.Close(ctx)
			for want := 1; want <= 2; want++ {
				if !cur.Next(ctx) {
					t.Fatalf("Next: %v", cur.Err())
				}
				if id := cur.Current.Lookup("_id").Int32(); int(id) != want {
					t.Fatalf("document %d, want %d", id, want)
				}
			}
			// At the end: TryNext makes one getMore and comes back empty,
			// leaving the cursor open.
			start := time.Now()
			if cur.TryNext(ctx) {
				t.Fatalf("TryNext found %s", cur.Current)
			}
			took := time.Since(start)
			if cur.Err() != nil || cur.ID() == 0 {
				t.Fatalf("after an empty TryNext: err %v id %d", cur.Err(), cur.ID())
			}
			if tc.waits && took < await-20*time.Millisecond {
				t.Errorf("an awaitData getMore came back after %v, before maxAwaitTime %v", took, await)
			}
			if !tc.waits && took > 500*time.Millisecond {
				t.Errorf("a tailable getMore without awaitData took %v", took)
			}
			gms := sent(rec, "getMore")
			if len(gms) != 1 {
				t.Fatalf("%d getMores for one TryNext", len(gms))
			}
			if got := field(gms[0].Command, "maxTimeMS"); got != tc.wantMaxTime {
				t.Errorf("getMore maxTimeMS %s, want %s", got, tc.wantMaxTime)
			}
			// Next waits for the next document.
			done := make(chan error, 1)
			go func() {
				time.Sleep(50 * time.Millisecond)
				_, err := coll.InsertOne(context.Background(), item{ID: 3})
				done <- err
			}()
			if !cur.Next(ctx) {
				t.Fatalf("Next after an insert: %v", cur.Err())
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if id := cur.Current.Lookup("_id").Int32(); id != 3 {
				t.Fatalf("document %d, want 3", id)
			}
			// Close kills it; Next then returns false without an error.
			if err := cur.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if len(sent(rec, "killCursors")) != 1 {
				t.Fatal("Close sent no killCursors")
			}
			if cur.Next(ctx) || cur.TryNext(ctx) || cur.Err() != nil {
				t.Fatalf("Next after Close: err %v", cur.Err())
			}
		})
	}
}

func TestCursorClose(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := recordingClient(t, srv.URI())
	coll := c.Database("shop").Collection("items")
	seed(t, coll, 5)
	tests := []struct {
		name     string
		read     int // documents read before Close
		wantKill bool
	}{
		{"live cursor is killed", 1, true},
		{"between batches", 2, true},
		{"exhausted cursor sends nothing", 5, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec.Reset()
			ctx := testCtx(t)
			cur, err := coll.Find(ctx, bson.D{}, &driver.FindOptions{BatchSize: driver.Ptr[int32](2)})
			if err != nil {
				t.Fatal(err)
			}
			id := cur.ID()
			for i := 0; i < tc.read; i++ {
				if !cur.Next(ctx) {
					t.Fatalf("Next %d: %v", i, cur.Err())
				}
			}
			if tc.read == 5 && cur.Next(ctx) {
				t.Fatal("a sixth document")
			}
			if err := cur.Close(ctx); err != nil {
				t.Fatal(err)
			}
			kills := sent(rec, "killCursors")
			if tc.wantKill != (len(kills) == 1) {
				t.Fatalf("%d killCursors sent, want kill %v", len(kills), tc.wantKill)
			}
			if tc.wantKill {
				want := "[" + (bson.RawValue{Type: bson.TypeInt64, Value: bson.AppendInt64(nil, id)}).String() + "]"
				if got := field(kills[0].Command, "cursors"); got != want {
					t.Errorf("killCursors cursors %s, want %s", got, want)
				}
				// The server no longer knows the cursor.
				_, err := c.RunCommand(ctx, "shop", bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "items"}})
				if commandCode(err) != 43 {
					t.Errorf("getMore of a killed cursor: %v, want CursorNotFound", err)
				}
			}
			if cur.ID() != 0 || cur.Next(ctx) || cur.Err() != nil || cur.Current != nil {
				t.Fatalf("after Close: id %d err %v", cur.ID(), cur.Err())
			}
			if err := cur.Close(ctx); err != nil {
				t.Fatalf("second Close: %v", err)
			}
		})
	}
}

func TestCursorGetMoreError(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c := dial(t, srv.URI(), nil)
	coll := c.Database("shop").Collection("items")
	seed(t, coll, 5)
	tests := []struct {
		name string
		code int32
	}{
		{"CursorNotFound", 43},
		{"interrupted", 11601},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			cur, err := coll.Find(ctx, bson.D{}, &driver.FindOptions{BatchSize: driver.Ptr[int32](2)})
			if err != nil {
				t.Fatal(err)
			}
			defer cur.Close(ctx)
			if err := srv.SetFailPoint(bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: bson.D{{Key: "times", Value: 1}}},
				{Key: "data", Value: bson.D{{Key: "failCommands", Value: bson.A{"getMore"}}, {Key: "errorCode", Value: tc.code}}}}); err != nil {
				t.Fatal(err)
			}
			n := 0
			for cur.Next(ctx) {
				n++
			}
			if n != 2 || commandCode(cur.Err()) != tc.code {
				t.Fatalf("%d documents then %v, want 2 then code %d", n, cur.Err(), tc.code)
			}
			var oe *driver.OperationError
			if !errors.As(cur.Err(), &oe) || oe.Op != "getMore" {
				t.Errorf("error %v, want an OperationError for getMore", cur.Err())
			}
			if cur.Next(ctx) {
				t.Fatal("Next after a failed getMore returned a document")
			}
		})
	}
}

// TestCursorGetMoreSameServer: a cursor's getMores go to the member that
// opened it, not to another one the read preference allows.
func TestCursorGetMoreSameServer(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{})
	c, rec := recordingClient(t, rs.URI())
	seed(t, c.Database("shop").Collection("items"), 6)
	primary := port(t, rs.Primary().Addr())
	tests := []struct {
		name string
		mode string
	}{
		{"secondary", driver.Secondary},
		{"nearest", driver.Nearest},
		{"secondaryPreferred", driver.SecondaryPreferred},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			coll := c.Database("shop").Collection("items", &driver.CollectionOptions{ReadPreference: &driver.ReadPreference{Mode: tc.mode}})
			ctx := testCtx(t)
			servers := map[int]bool{}
			for range 6 {
				rec.Reset()
				cur, err := coll.Find(ctx, bson.D{}, &driver.FindOptions{BatchSize: driver.Ptr[int32](2)})
				if err != nil {
					t.Fatal(err)
				}
				got, err := driver.All[item](ctx, cur)
				if err != nil || len(got) != 6 {
					t.Fatalf("%d documents, %v", len(got), err)
				}
				find := sent(rec, "find")[0]
				servers[find.ServerPort] = true
				gms := sent(rec, "getMore")
				if len(gms) == 0 {
					t.Fatal("no getMore")
				}
				for _, gm := range gms {
					if gm.ServerPort != find.ServerPort {
						t.Fatalf("find on port %d, getMore on %d", find.ServerPort, gm.ServerPort)
					}
				}
			}
			if tc.mode == driver.Secondary && servers[primary] {
				t.Error("a secondary read ran on the primary")
			}
		})
	}
}

// TestLoadBalancedCursorPinning: behind a load balancer a cursor keeps its
// connection checked out until it is exhausted or closed, and its
// getMores and killCursors use that connection.
func TestLoadBalancedCursorPinning(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{Topology: mongotest.Topology{Role: mongotest.RoleLoadBalanced}})
	rec := &eventtest.Recorder{Keep: func(e any) bool {
		switch e.(type) {
		case *event.CommandStarted, *event.ConnectionCheckedOut, *event.ConnectionCheckedIn:
			return true
		}
		return false
	}}
	c := dial(t, srv.URI(), &driver.ClientOptions{Monitors: []any{rec}})
	coll := c.Database("shop").Collection("items")
	seed(t, coll, 5)

	checkedIn := func(conn int64) bool {
		for _, e := range eventtest.Of[*event.ConnectionCheckedIn](rec) {
			if e.ConnectionID == conn {
				return true
			}
		}
		return false
	}
	tests := []struct {
		name  string
		close bool // Close after the first document rather than exhausting
		open  func(ctx context.Context) (*driver.Cursor, error)
	}{
		{"find exhausted", false, func(ctx context.Context) (*driver.Cursor, error) {
			return coll.Find(ctx, bson.D{}, &driver.FindOptions{BatchSize: driver.Ptr[int32](2)})
		}},
		{"aggregate closed", true, func(ctx context.Context) (*driver.Cursor, error) {
			return coll.Aggregate(ctx, bson.A{}, &driver.AggregateOptions{BatchSize: driver.Ptr[int32](2)})
		}},
		{"RunCursorCommand exhausted", false, func(ctx context.Context) (*driver.Cursor, error) {
			return coll.Database().RunCursorCommand(ctx, bson.D{{Key: "find", Value: "items"}, {Key: "batchSize", Value: 1}})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			rec.Reset()
			cur, err := tc.open(ctx)
			if err != nil {
				t.Fatal(err)
			}
			st := eventtest.Of[*event.CommandStarted](rec)
			pinned := st[0].ConnectionID
			if checkedIn(pinned) {
				t.Fatal("the cursor's connection was checked in while the cursor is open")
			}
			// Another operation meanwhile needs another connection.
			if _, err := coll.EstimatedDocumentCount(ctx); err != nil {
				t.Fatal(err)
			}
			if cs := sent(rec, "count"); cs[0].ConnectionID == pinned {
				t.Fatal("count ran on the cursor's pinned connection")
			}
			if !cur.Next(ctx) {
				t.Fatal(cur.Err())
			}
			if tc.close {
				if err := cur.Close(ctx); err != nil {
					t.Fatal(err)
				}
			} else {
				for cur.Next(ctx) {
				}
				if cur.Err() != nil {
					t.Fatal(cur.Err())
				}
			}
			if !checkedIn(pinned) {
				t.Fatal("the cursor's connection was not checked in once the cursor was done")
			}
			var follow int
			for _, e := range eventtest.Of[*event.CommandStarted](rec) {
				if e.CommandName == "getMore" || e.CommandName == "killCursors" {
					follow++
					if e.ConnectionID != pinned {
						t.Errorf("%s on connection %d, the cursor's is %d", e.CommandName, e.ConnectionID, pinned)
					}
				}
			}
			if follow == 0 {
				t.Fatal("no getMore or killCursors")
			}
		})
	}
}

// TestGetMoreComment: the cursor's comment goes with each getMore on 4.4+
// servers (wire version 9) and is left out before, as the CRUD
// specification requires; the getMores carry the first command's lsid.
func TestGetMoreComment(t *testing.T) {
	tests := []struct {
		name        string
		wire        int32
		wantComment string
	}{
		{"4.4+", 9, `"note"`},
		{"4.2", 8, "<absent>"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := mongotest.NewServer(t, mongotest.Options{MaxWireVersion: tc.wire})
			c, rec := recordingClient(t, srv.URI())
			coll := c.Database("shop").Collection("items")
			seed(t, coll, 5)
			ctx := testCtx(t)
			opens := []func() (*driver.Cursor, error){
				func() (*driver.Cursor, error) {
					return coll.Find(ctx, bson.D{}, &driver.FindOptions{BatchSize: driver.Ptr[int32](2), Comment: "note"})
				},
				func() (*driver.Cursor, error) {
					return coll.Aggregate(ctx, bson.A{}, &driver.AggregateOptions{BatchSize: driver.Ptr[int32](2), Comment: "note"})
				},
				func() (*driver.Cursor, error) {
					return coll.Database().RunCursorCommand(ctx, bson.D{{Key: "find", Value: "items"}, {Key: "batchSize", Value: 2}},
						&driver.RunCursorCommandOptions{Comment: "note"})
				},
			}
			for i, open := range opens {
				rec.Reset()
				cur, err := open()
				if err != nil {
					t.Fatal(err)
				}
				if got, err := driver.All[item](ctx, cur); err != nil || len(got) != 5 {
					t.Fatalf("cursor %d: %d documents, %v", i, len(got), err)
				}
				st := eventtest.Of[*event.CommandStarted](rec)
				lsid := field(st[0].Command, "lsid")
				gms := sent(rec, "getMore")
				if len(gms) == 0 {
					t.Fatalf("cursor %d: no getMore", i)
				}
				for _, gm := range gms {
					if got := field(gm.Command, "comment"); got != tc.wantComment {
						t.Errorf("cursor %d: getMore comment %s, want %s", i, got, tc.wantComment)
					}
					if got := field(gm.Command, "lsid"); got != lsid || lsid == "<absent>" {
						t.Errorf("cursor %d: getMore lsid %s, first command's %s", i, got, lsid)
					}
				}
			}
		})
	}
}

// The run-command specification: RunCursorCommand's getMore maxTimeMS is
// sent on every getMore, whatever the cursor type, and the command's own
// maxTimeMS stays on the first command only.
func TestRunCursorCommandGetMoreMaxTime(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c := dial(t, srv.URI(), nil)
	ctx := testCtx(t)
	db := c.Database("rcc")
	if _, err := db.Collection("items").InsertMany(ctx, []any{bson.D{}, bson.D{}, bson.D{}}); err != nil {
		t.Fatal(err)
	}
	srv.ClearCommands()
	cur, err := db.RunCursorCommand(ctx, bson.D{{Key: "find", Value: "items"}, {Key: "maxTimeMS", Value: 200}, {Key: "batchSize", Value: 1}},
		&driver.RunCursorCommandOptions{MaxAwaitTime: driver.Ptr(300 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	for cur.Next(ctx) {
	}
	cur.Close(ctx)
	var sawGetMore bool
	for _, cmd := range srv.Commands() {
		switch cmd.Name {
		case "find":
			if func() int64 { n, _ := cmd.Body.Lookup("maxTimeMS").AsInt64OK(); return n }() != 200 {
				t.Errorf("find maxTimeMS %v", cmd.Body.Lookup("maxTimeMS"))
			}
		case "getMore":
			sawGetMore = true
			if func() int64 { n, _ := cmd.Body.Lookup("maxTimeMS").AsInt64OK(); return n }() != 300 {
				t.Errorf("getMore maxTimeMS %v, want 300", cmd.Body.Lookup("maxTimeMS"))
			}
		}
	}
	if !sawGetMore {
		t.Fatal("no getMore was sent")
	}
}

type originKey struct{}

// A cursor's getMore and killCursors carry, in OperationStarted.Origin,
// the context the monitors' OperationStarted returned for the operation
// that opened the cursor (a tracing sink parents their spans to it); other
// operations carry none.
func TestCursorOperationsCarryOrigin(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	n := 0
	rec := &eventtest.Recorder{Start: func(ctx context.Context, e any) context.Context {
		if os, ok := e.(*event.OperationStarted); ok {
			n++
			return context.WithValue(ctx, originKey{}, os.Name+"#"+strconv.Itoa(n))
		}
		return ctx
	}}
	o := &driver.ClientOptions{Monitors: []any{rec}}
	if err := o.ApplyURI(srv.URI()); err != nil {
		t.Fatal(err)
	}
	c, err := driver.Connect(testCtx(t), o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Disconnect(context.Background())
	coll := c.Database("shop").Collection("items")
	seed(t, coll, 5)
	rec.Reset()
	n = 0
	cur, err := coll.Find(testCtx(t), bson.D{}, &driver.FindOptions{BatchSize: driver.Ptr[int32](2)})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if !cur.Next(testCtx(t)) {
			t.Fatal(cur.Err())
		}
	}
	if err := cur.Close(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range eventtest.Of[*event.OperationStarted](rec) {
		var origin any
		if e.Origin != nil {
			origin = e.Origin.Value(originKey{})
		}
		names = append(names, fmt.Sprintf("%s<-%v", e.Name, origin))
	}
	want := []string{"find<-<nil>", "getMore<-find#1", "killCursors<-find#1"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("operations and their origins %q; want %q", names, want)
	}
}
