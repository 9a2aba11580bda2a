package driver

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
	"github.com/mongoscope/mongoscope/mongotest"
)

// started returns the CommandStarted events named name.
func started(r *eventtest.Recorder, name string) []*event.CommandStarted {
	var out []*event.CommandStarted
	for _, e := range eventtest.Of[*event.CommandStarted](r) {
		if e.CommandName == name {
			out = append(out, e)
		}
	}
	return out
}

func lsidOf(t *testing.T, cmd bson.Raw) bson.Raw {
	t.Helper()
	v, err := cmd.LookupErr("lsid")
	if err != nil {
		return nil
	}
	return v.Document()
}

func seed(t *testing.T, c *Client, coll string, n int) *Collection {
	t.Helper()
	cl := c.Database("sess").Collection(coll)
	docs := make([]any, n)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}}
	}
	if _, err := cl.InsertMany(ctxTimeout(t, 5*time.Second), docs); err != nil {
		t.Fatal(err)
	}
	return cl
}

// Implicit sessions: every command carries an lsid where the server
// supports sessions; find and its getMores share it (prose 11, on a
// replica set read from a secondary too); the session goes back to the
// pool as soon as the cursor is exhausted, on the first batch (prose 8)
// or after a getMore (prose 9); none stays checked out (prose 10).
func TestImplicitSessions(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{})
	for _, mode := range []string{"primary", "secondary", "nearest"} {
		t.Run(mode, func(t *testing.T) {
			rec := &eventtest.Recorder{}
			c := connect(t, rs.URI(), &ClientOptions{Monitors: []any{rec}, URIOptions: URIOptions{ReadPreference: mode}})
			coll := seed(t, c, "s11"+mode, 5)
			ctx := ctxTimeout(t, 10*time.Second)
			cur, err := coll.Find(ctx, bson.D{}, &FindOptions{BatchSize: Ptr[int32](3)})
			if err != nil {
				t.Fatal(err)
			}
			if c.sessions.InUse() != 1 {
				t.Fatalf("an open cursor holds %d sessions, want 1", c.sessions.InUse())
			}
			for i := 0; i < 4; i++ {
				if !cur.Next(ctx) {
					t.Fatalf("Next %d: %v", i, cur.Err())
				}
			}
			// The getMore brought the last two documents and closed the
			// cursor: the session is back before the fifth document.
			if cur.ID() != 0 || c.sessions.InUse() != 0 {
				t.Fatalf("after the last getMore: cursor %d, sessions in use %d", cur.ID(), c.sessions.InUse())
			}
			finds, gms := started(rec, "find"), started(rec, "getMore")
			if len(finds) != 1 || len(gms) != 1 {
				t.Fatalf("%d finds, %d getMores", len(finds), len(gms))
			}
			fl, gl := lsidOf(t, finds[0].Command), lsidOf(t, gms[0].Command)
			if fl == nil || !bytesEqual(fl, gl) {
				t.Fatalf("find lsid %v, getMore lsid %v", fl, gl)
			}
			if finds[0].ServerPort != gms[0].ServerPort {
				t.Fatalf("getMore went to port %d, find to %d", gms[0].ServerPort, finds[0].ServerPort)
			}
			for _, e := range started(rec, "insert") {
				if lsidOf(t, e.Command) == nil {
					t.Fatal("insert sent without lsid")
				}
			}
			// Prose 8: a find answered in one batch returns its session at
			// once; the next command reuses the same lsid (the pool is LIFO).
			rec.Reset()
			cur, err = coll.Find(ctx, bson.D{})
			if err != nil {
				t.Fatal(err)
			}
			if c.sessions.InUse() != 0 {
				t.Fatal("an exhausted first batch kept its session")
			}
			cur.Close(ctx)
			if err := coll.FindOne(ctx, bson.D{}).Err(); err != nil {
				t.Fatal(err)
			}
			f := started(rec, "find")
			if !bytesEqual(lsidOf(t, f[0].Command), lsidOf(t, f[1].Command)) {
				t.Fatal("the second find did not reuse the pooled session")
			}
			// Closing a live cursor returns its session too.
			cur, err = coll.Find(ctx, bson.D{}, &FindOptions{BatchSize: Ptr[int32](1)})
			if err != nil {
				t.Fatal(err)
			}
			if err := cur.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if c.sessions.InUse() != 0 || len(started(rec, "killCursors")) != 1 {
				t.Fatalf("Close: sessions in use %d, killCursors %d", c.sessions.InUse(), len(started(rec, "killCursors")))
			}
		})
	}
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }

// Prose 3: $clusterTime goes out on commands and follows the replies,
// for a ping by RunCommand and the aggregate, find and insert helpers.
// The first command learns the cluster time (a new client has none: it
// does not take it from SDAM's hellos, prose 20); each one after it sends
// the $clusterTime of the reply before.
func TestClusterTimeGossip(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 1, mongotest.ReplicaSetOptions{})
	rec := &eventtest.Recorder{}
	c := connect(t, rs.URI(), &ClientOptions{Monitors: []any{rec}})
	ctx := ctxTimeout(t, 10*time.Second)
	coll := c.Database("sess").Collection("ct")
	steps := []func() error{
		func() error { _, err := c.RunCommand(ctx, "admin", bson.D{{Key: "ping", Value: 1}}); return err },
		func() error { _, err := coll.InsertOne(ctx, bson.D{{Key: "a", Value: 1}}); return err },
		func() error { return coll.FindOne(ctx, bson.D{}).Err() },
		func() error { _, err := c.RunCommand(ctx, "admin", bson.D{{Key: "ping", Value: 1}}); return err },
		func() error {
			cur, err := coll.Aggregate(ctx, bson.A{bson.D{{Key: "$match", Value: bson.D{}}}})
			if err == nil {
				err = cur.Close(ctx)
			}
			return err
		},
		func() error { return coll.FindOne(ctx, bson.D{}).Err() },
		func() error { _, err := coll.InsertOne(ctx, bson.D{{Key: "a", Value: 2}}); return err },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	st := eventtest.Of[*event.CommandStarted](rec)
	ok := eventtest.Of[*event.CommandSucceeded](rec)
	if len(st) != len(steps) || len(ok) != len(steps) {
		t.Fatalf("%d started, %d succeeded", len(st), len(ok))
	}
	for i := 1; i < len(st); i++ {
		sent, err := st[i].Command.LookupErr("$clusterTime")
		if err != nil {
			t.Fatalf("command %d (%s) sent no $clusterTime", i, st[i].CommandName)
		}
		prev := ok[i-1].Reply.Lookup("$clusterTime")
		if !sent.Equal(prev) {
			t.Fatalf("command %d sent %v, the previous reply had %v", i, sent, prev)
		}
	}
}

// Prose 20: monitors do not gossip: hellos carry no $clusterTime.
func TestNoClusterTimeOnMonitoring(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 1, mongotest.ReplicaSetOptions{})
	c := connect(t, rs.URI()+"&heartbeatFrequencyMS=500", nil)
	ctx := ctxTimeout(t, 10*time.Second)
	for i := 0; i < 2; i++ {
		if _, err := c.RunCommand(ctx, "admin", bson.D{{Key: "ping", Value: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(700 * time.Millisecond)
	pings := 0
	for _, m := range rs.Members() {
		for _, cmd := range m.Commands() {
			if cmd.Name == "hello" || cmd.Name == "isMaster" || cmd.Name == "ismaster" {
				if _, err := cmd.Body.LookupErr("$clusterTime"); err == nil {
					t.Fatalf("a %s carried $clusterTime", cmd.Name)
				}
			}
			if cmd.Name == "ping" {
				pings++
				if _, err := cmd.Body.LookupErr("$clusterTime"); err != nil && pings == 2 {
					t.Fatal("the second ping carried no $clusterTime")
				}
			}
		}
	}
}

// Prose 18: against a server without sessions, no lsid is sent.
func TestNoLSIDWithoutSessionSupport(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{NoSessions: true})
	rec := &eventtest.Recorder{}
	c := connect(t, srv.URI(), &ClientOptions{Monitors: []any{rec}})
	ctx := ctxTimeout(t, 10*time.Second)
	coll := c.Database("sess").Collection("none")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "a", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	_ = coll.FindOne(ctx, bson.D{}).Err()
	for _, e := range eventtest.Of[*event.CommandStarted](rec) {
		if lsidOf(t, e.Command) != nil {
			t.Fatalf("%s sent an lsid to a server without sessions", e.CommandName)
		}
	}
	if c.sessions.Created() != 0 {
		t.Fatalf("%d sessions were made for a server without sessions", c.sessions.Created())
	}
}

// Unacknowledged writes never carry an lsid, and take no session.
func TestUnacknowledgedWriteHasNoSession(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	rec := &eventtest.Recorder{}
	c := connect(t, srv.URI(), &ClientOptions{Monitors: []any{rec}})
	ctx := ctxTimeout(t, 10*time.Second)
	coll := c.Database("sess").Collection("unack", &CollectionOptions{WriteConcern: Unacknowledged()})
	res, err := coll.InsertOne(ctx, bson.D{{Key: "a", Value: 1}})
	if err != nil || res.Acknowledged {
		t.Fatalf("unacknowledged InsertOne: %+v, %v", res, err)
	}
	ins := started(rec, "insert")
	if len(ins) != 1 || lsidOf(t, ins[0].Command) != nil {
		t.Fatal("the unacknowledged insert carried an lsid")
	}
	if wc := ins[0].Command.Lookup("writeConcern", "w"); wc.Int32() != 0 {
		t.Fatalf("writeConcern sent: %v", ins[0].Command.Lookup("writeConcern"))
	}
	// The write arrives all the same.
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, err := c.Database("sess").Collection("unack").FindOne(ctx, bson.D{{Key: "a", Value: 1}}).Raw()
		if err == nil && n != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the unacknowledged write never arrived: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if c.sessions.Created() != 1 { // the FindOne's only
		t.Fatalf("%d sessions made, want 1 (the find's)", c.sessions.Created())
	}
}

// Prose 14, with its eight operations and retryWrites: implicit sessions
// are taken after checkout, so concurrent operations on a one-connection
// pool share fewer sessions than there are operations, and sometimes one.
func TestImplicitSessionAfterCheckout(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	ctx := ctxTimeout(t, 60*time.Second)
	set := bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 1}}}}
	one := false
	// The prose test asks for at least five tries, at least one of which
	// uses a single session: a loaded machine may need more for that one.
	for try := 0; try < 5 || !one && try < 30; try++ {
		rec := &eventtest.Recorder{}
		c := connect(t, srv.URI()+"?maxPoolSize=1&retryWrites=true", &ClientOptions{Monitors: []any{rec}})
		coll := c.Database("sess").Collection("checkout")
		noDoc := func(err error) error {
			if err == ErrNoDocuments {
				return nil
			}
			return err
		}
		ops := []func() error{
			func() error { _, err := coll.InsertOne(ctx, bson.D{}); return err },
			func() error { _, err := coll.DeleteOne(ctx, bson.D{}); return err },
			func() error { _, err := coll.UpdateOne(ctx, bson.D{}, set); return err },
			func() error {
				_, err := coll.BulkWrite(ctx, []WriteModel{&UpdateOneModel{Filter: bson.D{}, Update: set}})
				return err
			},
			func() error { return noDoc(coll.FindOneAndDelete(ctx, bson.D{}).Err()) },
			func() error { return noDoc(coll.FindOneAndUpdate(ctx, bson.D{}, set).Err()) },
			func() error { return noDoc(coll.FindOneAndReplace(ctx, bson.D{}, bson.D{{Key: "a", Value: 1}}).Err()) },
			func() error {
				cur, err := coll.Find(ctx, bson.D{})
				if err != nil {
					return err
				}
				var out []bson.Raw
				return cur.All(ctx, &out)
			},
		}
		var wg sync.WaitGroup
		errs := make([]error, len(ops))
		for i, op := range ops {
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = op() }()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		ids := map[string]bool{}
		for _, e := range eventtest.Of[*event.CommandStarted](rec) {
			ids[string(lsidOf(t, e.Command))] = true
		}
		if len(ids) >= len(ops) {
			t.Fatalf("try %d: %d sessions for %d concurrent operations", try, len(ids), len(ops))
		}
		if len(ids) == 1 {
			one = true
		}
		c.Disconnect(context.Background())
	}
	if !one {
		t.Fatal("no try used a single session")
	}
}

// Disconnect ends the pooled sessions with endSessions on admin.
func TestDisconnectEndsSessions(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	rec := &eventtest.Recorder{}
	c := connect(t, srv.URI(), &ClientOptions{Monitors: []any{rec}})
	ctx := ctxTimeout(t, 10*time.Second)
	if _, err := c.Database("sess").Collection("end").InsertOne(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	lsid := lsidOf(t, started(rec, "insert")[0].Command)
	if err := c.Disconnect(ctx); err != nil {
		t.Fatal(err)
	}
	es := started(rec, "endSessions")
	if len(es) != 1 || es[0].DatabaseName != "admin" {
		t.Fatalf("endSessions sent %d times", len(es))
	}
	arr, _ := es[0].Command.Lookup("endSessions").Array().Values()
	if len(arr) != 1 || !bytesEqual(arr[0].Document(), lsid) {
		t.Fatalf("endSessions listed %v, want the insert's lsid", arr)
	}
	if _, err := es[0].Command.LookupErr("lsid"); err == nil {
		t.Fatal("endSessions itself carried an lsid")
	}
}

// A client disconnected with cursors still open (a plain one and, behind
// a load balancer, one pinned to its connection) leaves no goroutine
// behind, and the cursors then fail with ErrClientDisconnected.
func TestDisconnectWithOpenCursors(t *testing.T) {
	for _, lb := range []bool{false, true} {
		name := "plain"
		opts := mongotest.Options{}
		if lb {
			name = "load-balanced"
			opts.Topology = mongotest.Topology{Role: mongotest.RoleLoadBalanced}
		}
		t.Run(name, func(t *testing.T) {
			srv := mongotest.NewServer(t, opts)
			o := &ClientOptions{}
			if err := o.ApplyURI(srv.URI()); err != nil {
				t.Fatal(err)
			}
			c, err := Connect(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			coll := seed(t, c, "open"+name, 10)
			ctx := ctxTimeout(t, 10*time.Second)
			cur, err := coll.Find(ctx, bson.D{}, &FindOptions{BatchSize: Ptr[int32](2)})
			if err != nil {
				t.Fatal(err)
			}
			if !cur.Next(ctx) || cur.ID() == 0 {
				t.Fatalf("cursor not open: %v", cur.Err())
			}
			if lb && c.Topology().Servers[0].Pool.InUse != 1 {
				t.Fatalf("load-balanced cursor: %d connections in use, want 1 pinned", c.Topology().Servers[0].Pool.InUse)
			}
			if err := c.Disconnect(ctx); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(2 * time.Second)
			for len(driverGoroutines()) > 0 {
				if time.Now().After(deadline) {
					t.Fatalf("goroutines left: %v", driverGoroutines())
				}
				time.Sleep(10 * time.Millisecond)
			}
			for cur.Next(ctx) {
			}
			if !errors.Is(cur.Err(), ErrClientDisconnected) {
				t.Fatalf("Next after Disconnect: %v", cur.Err())
			}
			_ = cur.Close(ctx)
		})
	}
}

// AppendMetadata: connections opened afterwards send the appended driver
// info, after a '|'; open connections are kept; the same info twice is
// appended once; a '|' in a field is refused.
func TestAppendMetadata(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c := connect(t, srv.URI()+"?maxPoolSize=1", nil)
	ctx := ctxTimeout(t, 10*time.Second)
	ping := func() {
		if _, err := c.RunCommand(ctx, "admin", bson.D{{Key: "ping", Value: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	ping()
	if err := c.AppendMetadata(DriverInfo{Name: "framework", Version: "2.0", Platform: "Framework Platform"}); err != nil {
		t.Fatal(err)
	}
	if err := c.AppendMetadata(DriverInfo{Name: "framework", Version: "2.0", Platform: "Framework Platform"}); err != nil {
		t.Fatal(err)
	}
	var ae *ArgumentError
	if err := c.AppendMetadata(DriverInfo{Name: "a|b"}); !errors.As(err, &ae) {
		t.Fatalf("a '|' in the name: %v", err)
	}
	before := len(srv.Commands())
	ping()
	for _, cmd := range srv.Commands()[before:] {
		if cmd.Name == "hello" || cmd.Name == "isMaster" {
			if _, err := cmd.Body.LookupErr("topologyVersion"); err != nil {
				t.Fatalf("a new connection was opened for the metadata: %s", cmd.Body)
			}
		}
	}
	// A new connection (the pool's is closed by a server-side reset)
	// sends the new metadata.
	srv.ResetConnections()
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := c.RunCommand(ctx, "admin", bson.D{{Key: "ping", Value: 1}})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
	var names []string
	for _, cmd := range srv.Commands() {
		if cmd.Name != "hello" && cmd.Name != "isMaster" {
			continue
		}
		if _, err := cmd.Body.LookupErr("topologyVersion"); err == nil {
			continue // a monitor's awaited hello: no metadata
		}
		if n, err := cmd.Body.LookupErr("client", "driver", "name"); err == nil {
			names = append(names, n.StringValue())
		}
	}
	last := names[len(names)-1]
	if last != "mongoscope|framework" {
		t.Fatalf("the newest connection's driver name is %q (all: %v)", last, names)
	}
	if names[0] != "mongoscope" {
		t.Fatalf("the first connection sent %q", names[0])
	}
}
