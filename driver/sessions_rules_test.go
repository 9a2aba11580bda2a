package driver_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
	"github.com/mongoscope/mongoscope/mongotest"
)

// Regression tests of the rule-by-rule audit of the driver-sessions,
// snapshot-sessions and causal-consistency specifications, each through
// driver.Connect and the public API.

// Ending a session while a cursor opened in it is still open must not put
// its server session back in the pool, where another session or an
// implicit one would take it and use the lsid while the cursor still does
// (driver-sessions, "Server Session Pool": a server session is never used
// by two ClientSessions at the same time). The cursor's getMore is then an
// operation in an ended session, an error; the cursor is still killed
// with the lsid, and only then does the server session go back.
func TestSessionEndWithOpenCursor(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := sessClient(t, srv.URI())
	ctx := testCtx(t)
	coll := c.Database("sess").Collection("endcur")
	if _, err := coll.InsertMany(ctx, []any{bson.D{}, bson.D{}, bson.D{}, bson.D{}, bson.D{}}); err != nil {
		t.Fatal(err)
	}
	s := startSession(t, c, nil)
	id := s.ID()
	cur, err := coll.Find(driver.NewSessionContext(ctx, s), bson.D{}, &driver.FindOptions{BatchSize: driver.Ptr[int32](2)})
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close(ctx)
	s.EndSession(ctx)

	other := startSession(t, c, nil)
	if rawEqual(other.ID(), id) {
		t.Fatal("a new session took the server session of an ended session whose cursor is still open")
	}
	if _, err := coll.InsertOne(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	if lsid, _ := lastStarted(t, rec).Command.LookupErr("lsid"); rawEqual(lsid.Document(), id) {
		t.Fatal("an implicit session used the lsid of an open cursor")
	}

	// The first batch is still there; the getMore after it is refused.
	for range 2 {
		if !cur.Next(ctx) {
			t.Fatalf("first batch: %v", cur.Err())
		}
	}
	rec.Reset()
	if cur.Next(ctx) {
		t.Fatal("a getMore ran in an ended session")
	}
	if !errors.Is(cur.Err(), driver.ErrSessionEnded) {
		t.Fatalf("getMore in an ended session: %v, want ErrSessionEnded", cur.Err())
	}
	// The failed cursor is killed at once (as after any failed getMore),
	// with the lsid it still holds.
	if err := cur.Close(ctx); err != nil {
		t.Fatal(err)
	}
	kc := eventtest.Of[*event.CommandStarted](rec)
	if len(kc) != 1 || kc[0].CommandName != "killCursors" {
		t.Fatalf("%d commands were sent, want one killCursors", len(kc))
	}
	if lsid, err := kc[0].Command.LookupErr("lsid"); err != nil || !rawEqual(lsid.Document(), id) {
		t.Fatal("killCursors did not carry the cursor's lsid")
	}
	// Now the server session is free again.
	if !rawEqual(startSession(t, c, nil).ID(), id) {
		t.Fatal("the server session did not go back to the pool when the cursor closed")
	}
}

// The options given to StartSession cannot change the session afterwards
// (driver-sessions, startSession: "It MUST NOT be possible to change the
// options provided to startSession after startSession has been called"),
// neither through the caller's SessionOptions, whose fields are pointers,
// nor through what Options returns; and snapshotTime is read-only
// (snapshot-sessions, ClientSession changes; prose test 23 below covers
// the non-snapshot session).
func TestSessionOptionsImmutable(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c := dial(t, srv.URI(), nil)
	tr, fa := true, false
	ts := bson.Timestamp{T: 7, I: 2}
	d := 5 * time.Second
	o := &driver.SessionOptions{Snapshot: &tr, CausalConsistency: &fa, SnapshotTime: &ts, DefaultTimeout: &d,
		DefaultReadConcern: &driver.ReadConcern{Level: "majority"}, DefaultWriteConcern: driver.Majority(),
		DefaultReadPreference: &driver.ReadPreference{Mode: driver.Secondary, Tags: []map[string]string{{"dc": "a"}}}}
	s := startSession(t, c, o)
	check := func(when string) {
		t.Helper()
		got := s.Options()
		if *got.Snapshot != true || *got.CausalConsistency != false || *got.SnapshotTime != (bson.Timestamp{T: 7, I: 2}) ||
			*got.DefaultTimeout != 5*time.Second || got.DefaultReadConcern.Level != "majority" ||
			got.DefaultWriteConcern.W.Tag != "majority" || got.DefaultReadPreference.Mode != driver.Secondary ||
			got.DefaultReadPreference.Tags[0]["dc"] != "a" {
			t.Fatalf("%s: Options changed to %+v", when, got)
		}
		if st, err := s.SnapshotTime(); err != nil || st != (bson.Timestamp{T: 7, I: 2}) {
			t.Fatalf("%s: SnapshotTime %v %v", when, st, err)
		}
		if !s.Snapshot() || s.CausalConsistency() {
			t.Fatalf("%s: the session's kind changed", when)
		}
	}
	// Through the caller's options.
	tr, fa, ts, d = false, true, bson.Timestamp{T: 99}, time.Hour
	o.DefaultReadConcern.Level = "local"
	o.DefaultWriteConcern.W.Tag = "dc"
	o.DefaultReadPreference.Mode = driver.Primary
	o.DefaultReadPreference.Tags[0]["dc"] = "b"
	check("after changing the options given to StartSession")
	// Through Options' result.
	got := s.Options()
	*got.Snapshot, *got.CausalConsistency, *got.SnapshotTime, *got.DefaultTimeout = false, true, bson.Timestamp{T: 99}, time.Hour
	got.DefaultReadConcern.Level = "local"
	got.DefaultWriteConcern.W.Tag = "dc"
	got.DefaultReadPreference.Mode = driver.Primary
	got.DefaultReadPreference.Tags[0]["dc"] = "b"
	check("after changing what Options returned")
}

// ClusterTime returns the session's cluster time, not the session's own
// copy: changing the returned bytes changes nothing (driver-sessions: a
// session's clusterTime changes only through advanceClusterTime and the
// replies).
func TestSessionClusterTimeReadOnly(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 1, mongotest.ReplicaSetOptions{})
	c, rec := sessClient(t, rs.URI())
	s := startSession(t, c, nil)
	ctx := driver.NewSessionContext(testCtx(t), s)
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	ct := s.ClusterTime()
	if ct == nil {
		t.Fatal("no cluster time after an operation on a replica set")
	}
	want := append(bson.Raw(nil), ct...)
	for i := 4; i < len(ct)-1; i++ {
		ct[i] = 0xff
	}
	if !rawEqual(s.ClusterTime(), want) {
		t.Fatal("changing what ClusterTime returned changed the session's cluster time")
	}
	if _, err := c.RunCommand(ctx, "admin", bson.D{{Key: "ping", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if v, err := lastStarted(t, rec).Command.LookupErr("$clusterTime"); err != nil || v.Type != bson.TypeEmbeddedDocument {
		t.Fatal("the next command sent no well-formed $clusterTime")
	}
}

// A snapshot session sends readConcern {level: "snapshot"} on every
// command it runs, the ones that take no read concern included, so that
// the server refuses what cannot run in a snapshot session
// (snapshot-sessions, "Sending readConcern to the server on all
// commands"); the exceptions are the generic runCommand, whose document is
// the caller's (read-write-concern: no readConcern is added to it), and a
// cursor's getMore and killCursors, which take none.
func TestSnapshotSessionReadConcernOnAllCommands(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 1, mongotest.ReplicaSetOptions{})
	c, rec := sessClient(t, rs.URI())
	ctx := testCtx(t)
	db := c.Database("snapall")
	coll := db.Collection("c")
	if _, err := coll.InsertMany(ctx, []any{bson.D{}, bson.D{}, bson.D{}}); err != nil {
		t.Fatal(err)
	}
	ops := []struct {
		name, command string
		run           func(ctx context.Context) error
	}{
		{"ListCollectionNames", "listCollections", func(ctx context.Context) error { _, err := db.ListCollectionNames(ctx, bson.D{}); return err }},
		{"ListIndexes", "listIndexes", func(ctx context.Context) error { _, err := coll.Indexes().ListNames(ctx); return err }},
		{"ListDatabaseNames", "listDatabases", func(ctx context.Context) error { _, err := c.ListDatabaseNames(ctx, bson.D{}); return err }},
		{"Rename", "renameCollection", func(ctx context.Context) error { return db.Collection("r").Rename(ctx, "r2") }},
		{"CreateCollection", "create", func(ctx context.Context) error { return db.CreateCollection(ctx, "made") }},
		{"InsertOne", "insert", func(ctx context.Context) error { _, err := coll.InsertOne(ctx, bson.D{}); return err }},
		{"Find", "find", func(ctx context.Context) error { return coll.FindOne(ctx, bson.D{}).Err() }},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			s := startSession(t, c, &driver.SessionOptions{Snapshot: driver.Ptr(true)})
			rec.Reset()
			_ = op.run(driver.NewSessionContext(ctx, s)) // the server may refuse it: what was sent is checked
			var cmd bson.Raw
			for _, e := range eventtest.Of[*event.CommandStarted](rec) {
				if e.CommandName == op.command {
					cmd = e.Command
				}
			}
			if cmd == nil {
				t.Fatalf("no %s was sent", op.command)
			}
			if lvl := readConcernOf(cmd).Lookup("level").StringValue(); lvl != "snapshot" {
				t.Fatalf("%s in a snapshot session sent readConcern %s", op.command, readConcernOf(cmd))
			}
		})
	}
	t.Run("runCommand, getMore and killCursors", func(t *testing.T) {
		s := startSession(t, c, &driver.SessionOptions{Snapshot: driver.Ptr(true)})
		sctx := driver.NewSessionContext(ctx, s)
		rec.Reset()
		if _, err := c.RunCommand(sctx, "admin", bson.D{{Key: "ping", Value: 1}}); err != nil {
			t.Fatal(err)
		}
		cur, err := coll.Find(sctx, bson.D{}, &driver.FindOptions{BatchSize: driver.Ptr[int32](1)})
		if err != nil {
			t.Fatal(err)
		}
		cur.Next(sctx)
		cur.Next(sctx)
		if err := cur.Close(sctx); err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, e := range eventtest.Of[*event.CommandStarted](rec) {
			seen[e.CommandName] = true
			if e.CommandName != "find" && readConcernOf(e.Command) != nil {
				t.Errorf("%s sent readConcern %s", e.CommandName, readConcernOf(e.Command))
			}
		}
		if !seen["ping"] || !seen["getMore"] || !seen["killCursors"] {
			t.Fatalf("commands sent: %v", seen)
		}
	})
}

// A standalone does not support cluster times, so a command sent to it
// carries neither $clusterTime nor readConcern.afterClusterTime, even when
// the session's times were advanced by hand (causal-consistency: "the
// afterClusterTime field ... MUST NOT be sent when connected to a
// deployment that does not support cluster times"; its tests 7 and 11).
func TestStandaloneNoClusterTimeAfterAdvance(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := sessClient(t, srv.URI())
	s := startSession(t, c, nil)
	ct, err := bson.Marshal(bson.D{{Key: "clusterTime", Value: bson.Timestamp{T: 10, I: 1}}, {Key: "signature", Value: bson.D{
		{Key: "hash", Value: bson.Binary{Data: make([]byte, 20)}}, {Key: "keyId", Value: int64(0)}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AdvanceClusterTime(ct); err != nil {
		t.Fatal(err)
	}
	s.AdvanceOperationTime(bson.Timestamp{T: 10, I: 1})
	coll := c.Database("cc").Collection("standalone")
	ctx := driver.NewSessionContext(testCtx(t), s)
	if err := coll.FindOne(ctx, bson.D{}).Err(); err != nil && !errors.Is(err, driver.ErrNoDocuments) {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	for _, e := range eventtest.Of[*event.CommandStarted](rec) {
		if e.CommandName != "find" && e.CommandName != "insert" {
			continue
		}
		if rc := readConcernOf(e.Command); rc != nil {
			t.Errorf("%s sent readConcern %s to a standalone", e.CommandName, rc)
		}
		if _, err := e.Command.LookupErr("$clusterTime"); err == nil {
			t.Errorf("%s sent $clusterTime to a standalone", e.CommandName)
		}
	}
}

// Whether a command gets a session is decided by its connection: the
// handshake's logicalSessionTimeoutMinutes (driver-sessions, "How to Tell
// Whether a Connection Supports Sessions"), not the topology's, which is
// null as soon as one data-bearing server reports none. Here one of two
// mongos has no sessions: commands on the other still carry an lsid, in
// an implicit session and in an explicit one, and those on the first do
// not (implicit) or fail before anything is sent (explicit).
func TestSessionSupportByConnection(t *testing.T) {
	with := mongotest.NewServer(t, mongotest.Options{Topology: mongotest.Topology{Role: mongotest.RoleMongos}})
	without := mongotest.NewServer(t, mongotest.Options{Topology: mongotest.Topology{Role: mongotest.RoleMongos}, NoSessions: true})
	c, rec := sessClient(t, "mongodb://"+with.Addr()+","+without.Addr()+"/?localThresholdMS=1000")
	ctx := testCtx(t)
	coll := c.Database("sess").Collection("byconn")
	var sawWith, sawWithout, explicitWith bool
	for i := 0; i < 200 && !(sawWith && sawWithout && explicitWith); i++ {
		rec.Reset()
		if err := coll.FindOne(ctx, bson.D{}).Err(); err != nil && !errors.Is(err, driver.ErrNoDocuments) {
			t.Fatal(err)
		}
		e := lastStarted(t, rec)
		_, lsidErr := e.Command.LookupErr("lsid")
		switch addrOf(e) {
		case with.Addr():
			// Only once the other mongos is known is the topology's
			// logicalSessionTimeoutMinutes null.
			if sawWithout && lsidErr != nil {
				t.Fatal("a command on a mongos with sessions carried no lsid (implicit session)")
			}
			sawWith = sawWith || sawWithout
		case without.Addr():
			if lsidErr == nil {
				t.Fatal("a command on a mongos without sessions carried an lsid")
			}
			sawWithout = true
		}
		if !sawWithout {
			continue
		}
		s, err := c.StartSession(nil)
		if err != nil {
			t.Fatal(err)
		}
		rec.Reset()
		err = coll.FindOne(driver.NewSessionContext(ctx, s), bson.D{}).Err()
		evs := eventtest.Of[*event.CommandStarted](rec)
		switch {
		case errors.Is(err, driver.ErrSessionsNotSupported):
			if len(evs) != 0 {
				t.Fatal("an explicit session's command was sent to a server without sessions")
			}
		case err != nil && !errors.Is(err, driver.ErrNoDocuments):
			t.Fatal(err)
		default:
			if len(evs) != 1 || addrOf(evs[0]) != with.Addr() {
				t.Fatal("an explicit session's command ran on the mongos without sessions")
			}
			if lsid, err := evs[0].Command.LookupErr("lsid"); err != nil || !rawEqual(lsid.Document(), s.ID()) {
				t.Fatal("an explicit session's command on a mongos with sessions did not carry its lsid")
			}
			explicitWith = true
		}
		s.EndSession(ctx)
	}
	if !sawWith || !sawWithout || !explicitWith {
		t.Fatalf("the operations did not reach both mongos (with sessions %v, without %v, explicit %v)", sawWith, sawWithout, explicitWith)
	}
}

// addrOf returns the "host:port" a command went to.
func addrOf(e *event.CommandStarted) string {
	return net.JoinHostPort(e.ServerHost, strconv.Itoa(e.ServerPort))
}

// A socket timeout is a network error too (driver-sessions, Terms): the
// command may still run on the server, so the session is dirty and its
// server session is discarded, not reused.
func TestSessionDirtyAfterTimeout(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c := dial(t, srv.URI(), nil)
	ctx := testCtx(t)
	if _, err := c.RunCommand(ctx, "admin", adoc("configureFailPoint", "failCommand", "mode", adoc("times", 1),
		"data", adoc("failCommands", bson.A{"insert"}, "blockConnection", true, "blockTimeMS", 2000))); err != nil {
		t.Fatal(err)
	}
	s := startSession(t, c, nil)
	id := s.ID()
	tctx, cancel := context.WithTimeout(driver.NewSessionContext(ctx, s), 200*time.Millisecond)
	defer cancel()
	_, err := c.Database("sess").Collection("dirtyto").InsertOne(tctx, bson.D{})
	if err == nil {
		t.Fatal("the blocked insert succeeded within its deadline")
	}
	if !s.Dirty() {
		t.Fatalf("the session is not dirty after %v", err)
	}
	s.EndSession(ctx)
	if rawEqual(startSession(t, c, nil).ID(), id) {
		t.Fatal("a dirty server session was reused")
	}
}

// Disconnect ends the pooled server sessions in endSessions commands of at
// most 10,000 sessions each (driver-sessions, "endSessions"), each to
// admin and without an lsid of its own, every pooled session exactly once.
func TestDisconnectEndSessionsBatches(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	rec := &eventtest.Recorder{}
	c := dial(t, srv.URI(), &driver.ClientOptions{Monitors: []any{rec}})
	ctx := testCtx(t)
	var err error
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 10_001
	ids := make(map[string]bool, n)
	sessions := make([]*driver.Session, n)
	for i := range sessions {
		if sessions[i], err = c.StartSession(nil); err != nil {
			t.Fatal(err)
		}
		ids[string(sessions[i].ID())] = true
	}
	for _, s := range sessions {
		s.EndSession(ctx)
	}
	if len(ids) != n {
		t.Fatalf("%d live sessions had %d ids", n, len(ids))
	}
	if err := c.Disconnect(ctx); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, e := range eventtest.Of[*event.CommandStarted](rec) {
		if e.CommandName != "endSessions" {
			continue
		}
		if e.DatabaseName != "admin" {
			t.Fatalf("endSessions sent to %q", e.DatabaseName)
		}
		if _, err := e.Command.LookupErr("lsid"); err == nil {
			t.Fatal("endSessions carried an lsid")
		}
		vals, err := e.Command.Lookup("endSessions").Array().Values()
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(vals))
		for _, v := range vals {
			if !ids[string(v.Document())] {
				t.Fatal("endSessions listed an unknown or repeated session")
			}
			delete(ids, string(v.Document()))
		}
	}
	if len(sizes) != 2 || sizes[0] != 10_000 || sizes[1] != 1 || len(ids) != 0 {
		t.Fatalf("endSessions batches %v, %d sessions not ended; want [10000 1], 0", sizes, len(ids))
	}
}

// No unacknowledged write carries an lsid: in an explicit session each is
// an error before anything is sent, and without one none gets an implicit
// session (driver-sessions, "When using unacknowledged writes").
func TestUnacknowledgedWritesNoSession(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := sessClient(t, srv.URI())
	w0db := c.Database("sessw0", &driver.DatabaseOptions{WriteConcern: driver.Unacknowledged()})
	w0 := w0db.Collection("c")
	set := bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}
	ops := []struct {
		name string
		run  func(ctx context.Context) error
	}{
		{"InsertOne", func(ctx context.Context) error { _, err := w0.InsertOne(ctx, bson.D{}); return err }},
		{"InsertMany", func(ctx context.Context) error { _, err := w0.InsertMany(ctx, []any{bson.D{}, bson.D{}}); return err }},
		{"UpdateOne", func(ctx context.Context) error { _, err := w0.UpdateOne(ctx, bson.D{}, set); return err }},
		{"UpdateMany", func(ctx context.Context) error { _, err := w0.UpdateMany(ctx, bson.D{}, set); return err }},
		{"ReplaceOne", func(ctx context.Context) error { _, err := w0.ReplaceOne(ctx, bson.D{}, bson.D{}); return err }},
		{"DeleteOne", func(ctx context.Context) error { _, err := w0.DeleteOne(ctx, bson.D{}); return err }},
		{"DeleteMany", func(ctx context.Context) error { _, err := w0.DeleteMany(ctx, bson.D{}); return err }},
		{"BulkWrite", func(ctx context.Context) error {
			_, err := w0.BulkWrite(ctx, []driver.WriteModel{&driver.InsertOneModel{Document: bson.D{}}, &driver.DeleteOneModel{Filter: bson.D{}}})
			return err
		}},
		{"Aggregate $out", func(ctx context.Context) error {
			cur, err := w0.Aggregate(ctx, bson.A{bson.D{{Key: "$out", Value: "out"}}})
			if err == nil {
				err = cur.Close(ctx)
			}
			return err
		}},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			s := startSession(t, c, nil)
			rec.Reset()
			err := op.run(driver.NewSessionContext(testCtx(t), s))
			if !errors.Is(err, driver.ErrSessionUnacknowledged) {
				t.Fatalf("explicit session: %v, want ErrSessionUnacknowledged", err)
			}
			if n := len(eventtest.Of[*event.CommandStarted](rec)); n != 0 {
				t.Fatalf("explicit session: %d commands were sent", n)
			}
			rec.Reset()
			if err := op.run(testCtx(t)); err != nil {
				t.Fatalf("implicit: %v", err)
			}
			evs := eventtest.Of[*event.CommandStarted](rec)
			if len(evs) == 0 {
				t.Fatal("implicit: nothing was sent")
			}
			for _, e := range evs {
				if _, err := e.Command.LookupErr("lsid"); err == nil {
					t.Fatalf("implicit: %s under w:0 carried an lsid", e.CommandName)
				}
			}
		})
	}
}

// Prose test 11 on the topologies TestImplicitSessions (a replica set)
// does not cover: on a standalone, a sharded cluster and behind a load
// balancer, under each read preference, a find and its getMore send the
// same non-zero lsid.
func TestSessionProseFindGetMoreSameLSID(t *testing.T) {
	standalone := mongotest.NewServer(t, mongotest.Options{})
	sharded := mongotest.NewShardedCluster(t, 2, mongotest.ShardedClusterOptions{})
	lb := mongotest.NewLoadBalancer(t, 1, mongotest.LoadBalancerOptions{})
	for _, topo := range []struct{ name, uri string }{{"standalone", standalone.URI()}, {"sharded", sharded.URI()}, {"load-balanced", lb.URI()}} {
		for _, mode := range []string{driver.Primary, driver.PrimaryPreferred, driver.Secondary, driver.SecondaryPreferred, driver.Nearest} {
			if topo.name == "standalone" && mode != driver.Primary {
				continue // a standalone serves every read preference alike
			}
			t.Run(topo.name+"/"+mode, func(t *testing.T) {
				o := &driver.ClientOptions{Monitors: []any{&eventtest.Recorder{}}}
				rec := o.Monitors[0].(*eventtest.Recorder)
				c := dial(t, topo.uri, o)
				ctx := testCtx(t)
				coll := c.Database("sess11").Collection(topo.name + mode)
				if _, err := coll.InsertMany(ctx, []any{bson.D{}, bson.D{}, bson.D{}}); err != nil {
					t.Fatal(err)
				}
				rp := c.Database("sess11").Collection(topo.name+mode, &driver.CollectionOptions{ReadPreference: &driver.ReadPreference{Mode: mode}})
				rec.Reset()
				cur, err := rp.Find(ctx, bson.D{}, &driver.FindOptions{BatchSize: driver.Ptr[int32](2)})
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for cur.Next(ctx) {
					n++
				}
				if cur.Err() != nil || n != 3 {
					t.Fatalf("%d documents, %v", n, cur.Err())
				}
				var find, getMore bson.Raw
				for _, e := range eventtest.Of[*event.CommandStarted](rec) {
					lsid, err := e.Command.LookupErr("lsid")
					switch {
					case e.CommandName != "find" && e.CommandName != "getMore":
						continue
					case err != nil:
						t.Fatalf("%s sent no lsid", e.CommandName)
					case e.CommandName == "find":
						find = lsid.Document()
					default:
						getMore = lsid.Document()
					}
				}
				if find == nil || getMore == nil || !rawEqual(find, getMore) {
					t.Fatalf("find lsid %v, getMore lsid %v", find, getMore)
				}
				if id, _ := find.Lookup("id").BinaryOK(); len(id.Data) != 16 || string(id.Data) == string(make([]byte, 16)) {
					t.Fatalf("lsid %v is not a non-zero UUID", find)
				}
			})
		}
	}
}

// No command of a connection's opening (hello, with its speculative
// authentication, and the rest of the SCRAM conversation) or
// of SDAM's monitoring carries an lsid or $clusterTime (driver-sessions,
// "When opening and authenticating a connection", "Do not gossip on SDAM
// commands"), while the operations after them carry both; seen from the
// server, which logs what it received.
func TestNoSessionOnHandshakeAuthOrMonitoring(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 1, mongotest.ReplicaSetOptions{})
	if err := rs.AddUser("admin", "ada", "lovelace"); err != nil {
		t.Fatal(err)
	}
	o := &driver.ClientOptions{Username: "ada", Password: "lovelace"}
	c := dial(t, rs.URI()+"&heartbeatFrequencyMS=500", o)
	ctx := testCtx(t)
	coll := c.Database("sessauth").Collection("c")
	for range 3 {
		if _, err := coll.InsertOne(ctx, bson.D{}); err != nil {
			t.Fatal(err)
		}
	}
	// A second connection opens while the first is busy.
	cur, err := coll.Find(ctx, bson.D{}, &driver.FindOptions{BatchSize: driver.Ptr[int32](1)})
	if err != nil {
		t.Fatal(err)
	}
	if err := coll.FindOne(ctx, bson.D{}).Err(); err != nil {
		t.Fatal(err)
	}
	cur.Close(ctx)
	seen := map[string]int{}
	for _, cmd := range rs.Members()[0].Commands() {
		_, lsidErr := cmd.Body.LookupErr("lsid")
		_, ctErr := cmd.Body.LookupErr("$clusterTime")
		switch cmd.Name {
		case "hello", "isMaster", "ismaster", "saslStart", "saslContinue", "authenticate":
			seen[cmd.Name]++
			if lsidErr == nil || ctErr == nil {
				t.Errorf("%s carried an lsid or $clusterTime: %s", cmd.Name, cmd.Body)
			}
		case "insert":
			seen[cmd.Name]++
			if lsidErr != nil {
				t.Errorf("insert carried no lsid")
			}
			if ctErr != nil && seen["insert"] > 1 {
				t.Errorf("insert %d carried no $clusterTime", seen["insert"])
			}
		}
	}
	if seen["hello"]+seen["isMaster"]+seen["ismaster"] == 0 || seen["saslStart"]+seen["saslContinue"] == 0 || seen["insert"] != 3 {
		t.Fatalf("commands seen: %v", seen)
	}
}

// Disconnect with explicit sessions still checked out (one idle, one with
// an open cursor): endSessions lists only the pooled sessions, as the
// specification asks; the sessions and the cursor then fail with
// ErrClientDisconnected, and ending them afterwards is harmless.
func TestDisconnectWithExplicitSessions(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	rec := &eventtest.Recorder{}
	c := dial(t, srv.URI(), &driver.ClientOptions{Monitors: []any{rec}})
	ctx := testCtx(t)
	coll := c.Database("sessdisc").Collection("c")
	if _, err := coll.InsertMany(ctx, []any{bson.D{}, bson.D{}, bson.D{}}); err != nil {
		t.Fatal(err)
	}
	idle, err := c.StartSession(nil)
	if err != nil {
		t.Fatal(err)
	}
	withCursor, err := c.StartSession(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := coll.FindOne(driver.NewSessionContext(ctx, idle), bson.D{}).Err(); err != nil {
		t.Fatal(err)
	}
	cur, err := coll.Find(driver.NewSessionContext(ctx, withCursor), bson.D{}, &driver.FindOptions{BatchSize: driver.Ptr[int32](1)})
	if err != nil {
		t.Fatal(err)
	}
	// An implicit session, pooled when its insert ends.
	if _, err := coll.InsertOne(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	pooled, _ := lastStarted(t, rec).Command.LookupErr("lsid")
	if err := c.Disconnect(ctx); err != nil {
		t.Fatal(err)
	}
	es := eventtest.Of[*event.CommandStarted](rec)
	var ended []bson.RawValue
	for _, e := range es {
		if e.CommandName == "endSessions" {
			ended, _ = e.Command.Lookup("endSessions").Array().Values()
		}
	}
	if len(ended) != 1 || !rawEqual(ended[0].Document(), pooled.Document()) {
		t.Fatalf("endSessions listed %v, want only the pooled session", ended)
	}
	if err := coll.FindOne(driver.NewSessionContext(ctx, idle), bson.D{}).Err(); !errors.Is(err, driver.ErrClientDisconnected) {
		t.Fatalf("an operation in a session after Disconnect: %v", err)
	}
	cur.Next(ctx)
	cur.Next(ctx)
	if !errors.Is(cur.Err(), driver.ErrClientDisconnected) {
		t.Fatalf("a cursor's getMore after Disconnect: %v", cur.Err())
	}
	_ = cur.Close(ctx)
	idle.EndSession(ctx)
	withCursor.EndSession(ctx)
	idle.EndSession(ctx)
}

// ID returns a copy of the lsid: changing it does not change what the
// session's commands send.
func TestSessionIDReadOnly(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := sessClient(t, srv.URI())
	s := startSession(t, c, nil)
	id := s.ID()
	want := append(bson.Raw(nil), id...)
	for i := 4; i < len(id)-1; i++ {
		id[i] = 0
	}
	if !rawEqual(s.ID(), want) {
		t.Fatal("changing what ID returned changed the session's id")
	}
	if err := c.Ping(driver.NewSessionContext(testCtx(t), s)); err != nil {
		t.Fatal(err)
	}
	if lsid, err := lastStarted(t, rec).Command.LookupErr("lsid"); err != nil || !rawEqual(lsid.Document(), want) {
		t.Fatal("the session's command did not carry its original lsid")
	}
}

// Causal-consistency test 5 ("any write operation (test them all)") for
// the writes TestCausalConsistencyProse leaves out: each one's
// operationTime, from its reply, is the afterClusterTime of the findOne
// after it; and the write commands the read-write-concern specification
// lists send afterClusterTime themselves once the session has a time
// (renameCollection, not among them, sends none).
func TestCausalConsistencyEveryWrite(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 1, mongotest.ReplicaSetOptions{})
	c, rec := sessClient(t, rs.URI())
	ctx := testCtx(t)
	db := c.Database("ccw")
	set := bson.D{{Key: "$set", Value: bson.D{{Key: "y", Value: 1}}}}
	type write struct {
		name, command string
		run           func(ctx context.Context, coll *driver.Collection) error
		afterCT       bool
	}
	noDoc := func(err error) error {
		if errors.Is(err, driver.ErrNoDocuments) {
			return nil
		}
		return err
	}
	writes := []write{
		{"UpdateMany", "update", func(ctx context.Context, coll *driver.Collection) error {
			_, err := coll.UpdateMany(ctx, bson.D{}, set)
			return err
		}, true},
		{"DeleteOne", "delete", func(ctx context.Context, coll *driver.Collection) error {
			_, err := coll.DeleteOne(ctx, bson.D{})
			return err
		}, true},
		{"FindOneAndReplace", "findAndModify", func(ctx context.Context, coll *driver.Collection) error {
			return noDoc(coll.FindOneAndReplace(ctx, bson.D{}, bson.D{{Key: "z", Value: 1}}).Err())
		}, true},
		{"FindOneAndDelete", "findAndModify", func(ctx context.Context, coll *driver.Collection) error {
			return noDoc(coll.FindOneAndDelete(ctx, bson.D{}).Err())
		}, true},
		{"CreateIndex", "createIndexes", func(ctx context.Context, coll *driver.Collection) error {
			_, err := coll.Indexes().CreateOne(ctx, driver.IndexModel{Keys: bson.D{{Key: "q", Value: 1}}})
			return err
		}, true},
		{"DropIndex", "dropIndexes", func(ctx context.Context, coll *driver.Collection) error {
			return coll.Indexes().DropOne(ctx, "q_1")
		}, true},
		{"Rename", "renameCollection", func(ctx context.Context, coll *driver.Collection) error {
			return coll.Rename(ctx, coll.Name()+"_renamed")
		}, false},
		{"Drop", "drop", func(ctx context.Context, coll *driver.Collection) error { return coll.Drop(ctx) }, true},
		{"CreateCollection", "create", func(ctx context.Context, coll *driver.Collection) error {
			return coll.Database().CreateCollection(ctx, coll.Name()+"_new")
		}, true},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			coll := db.Collection("w" + w.name)
			if _, err := coll.InsertMany(ctx, []any{bson.D{{Key: "x", Value: 1}}, bson.D{{Key: "x", Value: 2}}}); err != nil {
				t.Fatal(err)
			}
			if w.name == "DropIndex" {
				if _, err := coll.Indexes().CreateOne(ctx, driver.IndexModel{Keys: bson.D{{Key: "q", Value: 1}}}); err != nil {
					t.Fatal(err)
				}
			}
			s := startSession(t, c, nil)
			sctx := driver.NewSessionContext(ctx, s)
			if err := coll.FindOne(sctx, bson.D{}).Err(); err != nil {
				t.Fatal(err)
			}
			before := *s.OperationTime()
			rec.Reset()
			if err := w.run(sctx, coll); err != nil {
				t.Fatal(err)
			}
			var cmd bson.Raw
			for _, e := range eventtest.Of[*event.CommandStarted](rec) {
				if e.CommandName == w.command {
					cmd = e.Command
				}
			}
			if cmd == nil {
				t.Fatalf("no %s was sent", w.command)
			}
			v, err := readConcernOf(cmd).LookupErr("afterClusterTime")
			switch {
			case w.afterCT && err != nil:
				t.Fatalf("%s sent no afterClusterTime: %s", w.command, cmd)
			case w.afterCT:
				if ts, i, _ := v.TimestampOK(); (bson.Timestamp{T: ts, I: i}) != before {
					t.Fatalf("%s sent afterClusterTime %v, want %v", w.command, v, before)
				}
			case err == nil:
				t.Fatalf("%s, which takes no read concern, sent afterClusterTime", w.command)
			}
			op := s.OperationTime()
			if op == nil {
				t.Fatal("no operationTime after the write")
			}
			reply := lastSucceeded(t, rec).Reply
			if rv, err := reply.LookupErr("operationTime"); err == nil {
				if ts, i, _ := rv.TimestampOK(); (bson.Timestamp{T: ts, I: i}) != *op {
					t.Fatalf("operationTime %v, the reply's %v", *op, rv)
				}
			}
			if err := coll.Database().Collection("w").FindOne(sctx, bson.D{}).Err(); err != nil && !errors.Is(err, driver.ErrNoDocuments) {
				t.Fatal(err)
			}
			got, err := readConcernOf(lastStarted(t, rec).Command).LookupErr("afterClusterTime")
			if err != nil {
				t.Fatal("the findOne after the write sent no afterClusterTime")
			}
			if ts, i, _ := got.TimestampOK(); (bson.Timestamp{T: ts, I: i}) != *op {
				t.Fatalf("findOne sent afterClusterTime %v, want the write's %v", got, *op)
			}
		})
	}
}

// The driver's sessions as the server sees them, through
// $listLocalSessions: an explicit session's lsid is listed once its first
// command ran, and forgotten after the client that ended the session
// disconnects (endSessions).
func TestSessionsSeenByServer(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c := dial(t, srv.URI(), nil)
	watcher := dial(t, srv.URI(), nil)
	ctx := testCtx(t)
	listed := func() map[string]bool {
		t.Helper()
		cur, err := watcher.Database("admin").Aggregate(ctx, bson.A{bson.D{{Key: "$listLocalSessions", Value: bson.D{{Key: "allUsers", Value: true}}}}})
		if err != nil {
			t.Fatal(err)
		}
		defer cur.Close(ctx)
		ids := map[string]bool{}
		for cur.Next(ctx) {
			id, err := cur.Current.LookupErr("_id", "id")
			if err != nil {
				t.Fatalf("listed session without _id.id: %s", cur.Current)
			}
			b, _ := id.BinaryOK()
			ids[string(b.Data)] = true
		}
		return ids
	}
	uuidOf := func(lsid bson.Raw) string {
		b, _ := lsid.Lookup("id").BinaryOK()
		return string(b.Data)
	}
	s, err := c.StartSession(nil)
	if err != nil {
		t.Fatal(err)
	}
	id := uuidOf(s.ID())
	if listed()[id] {
		t.Fatal("the session is listed before any command carried it")
	}
	if _, err := c.Database("seen").Collection("c").InsertOne(driver.NewSessionContext(ctx, s), bson.D{}); err != nil {
		t.Fatal(err)
	}
	if !listed()[id] {
		t.Fatal("the session is not listed after its insert")
	}
	s.EndSession(ctx)
	if !listed()[id] {
		t.Fatal("an ended session's server session is pooled, not ended on the server, until Disconnect")
	}
	if err := c.Disconnect(ctx); err != nil {
		t.Fatal(err)
	}
	if listed()[id] {
		t.Fatal("the session is still listed after Disconnect sent endSessions")
	}
}

// Prose test 20 as written: a client's cluster time does not advance
// through SDAM's heartbeats, whose replies carry the greater $clusterTime
// another client's insert made; its next ping sends the one it had.
func TestSessionProseNoGossipThroughSDAM(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 1, mongotest.ReplicaSetOptions{})
	primary := rs.Members()[0]
	rec := &eventtest.Recorder{}
	c1 := dial(t, "mongodb://"+primary.Addr()+"/?directConnection=true&heartbeatFrequencyMS=500&serverMonitoringMode=poll",
		&driver.ClientOptions{Monitors: []any{rec}})
	c2 := dial(t, rs.URI(), nil)
	ctx := testCtx(t)
	if _, err := c1.RunCommand(ctx, "admin", bson.D{{Key: "ping", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	clusterTime, err := lastSucceeded(t, rec).Reply.LookupErr("$clusterTime")
	if err != nil {
		t.Fatal("the ping's reply has no $clusterTime")
	}
	if _, err := c2.Database("sess20").Collection("c").InsertOne(ctx, bson.D{{Key: "advance", Value: "$clusterTime"}}); err != nil {
		t.Fatal(err)
	}
	// The next heartbeat that starts and succeeds after the insert.
	beats := func() (started, succeeded int) {
		return len(eventtest.Of[*event.ServerHeartbeatStarted](rec)), len(eventtest.Of[*event.ServerHeartbeatSucceeded](rec))
	}
	s0, _ := beats()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, ok := beats()
		if s > s0 && ok >= s {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no heartbeat within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The heartbeat's reply did carry a greater cluster time: that is what
	// the client must not take.
	hb := eventtest.Of[*event.ServerHeartbeatSucceeded](rec)
	ct, err := hb[len(hb)-1].Reply.LookupErr("$clusterTime", "clusterTime")
	if err != nil {
		t.Fatal("the heartbeat's reply has no $clusterTime")
	}
	t0, i0, _ := clusterTime.Document().Lookup("clusterTime").TimestampOK()
	if t1, i1, _ := ct.TimestampOK(); t1 < t0 || t1 == t0 && i1 <= i0 {
		t.Fatalf("the heartbeat's cluster time %v is not past the ping's %v", ct, clusterTime)
	}
	for _, cmd := range primary.Commands() {
		if cmd.Name == "hello" || cmd.Name == "isMaster" {
			if _, err := cmd.Body.LookupErr("$clusterTime"); err == nil {
				t.Fatalf("a %s carried $clusterTime", cmd.Name)
			}
		}
	}
	if _, err := c1.RunCommand(ctx, "admin", bson.D{{Key: "ping", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	var sent bson.RawValue
	for _, e := range eventtest.Of[*event.CommandStarted](rec) {
		if e.CommandName == "ping" {
			sent, _ = e.Command.LookupErr("$clusterTime")
		}
	}
	if !sent.Equal(clusterTime) {
		t.Fatalf("the second ping sent %v, want the first ping's reply's %v", sent, clusterTime)
	}
}

// AdvanceClusterTime only moves the session's cluster time forward: a
// smaller or equal clusterTime (an equal one with another signature
// included) changes nothing; a document without a timestamp clusterTime
// is an *ArgumentError (that the client's own cluster time does not move
// is TestCausalConsistencyProse's). AdvanceOperationTime likewise only
// moves forward, unvalidated.
func TestSessionAdvanceOnlyForward(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c := dial(t, srv.URI(), nil)
	s := startSession(t, c, nil)
	ct := func(ts uint32, sig byte) bson.Raw {
		raw, err := bson.Marshal(bson.D{{Key: "clusterTime", Value: bson.Timestamp{T: ts, I: 1}}, {Key: "signature", Value: bson.D{
			{Key: "hash", Value: bson.Binary{Data: bytes.Repeat([]byte{sig}, 20)}}, {Key: "keyId", Value: int64(sig)}}}})
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	for _, step := range []struct {
		doc  bson.Raw
		want bson.Raw
	}{
		{ct(10, 1), ct(10, 1)},
		{ct(9, 2), ct(10, 1)},
		{ct(10, 3), ct(10, 1)},
		{ct(11, 4), ct(11, 4)},
	} {
		if err := s.AdvanceClusterTime(step.doc); err != nil {
			t.Fatal(err)
		}
		if !rawEqual(s.ClusterTime(), step.want) {
			t.Fatalf("after AdvanceClusterTime(%s): %s, want %s", step.doc, s.ClusterTime(), step.want)
		}
	}
	var ae *driver.ArgumentError
	for _, bad := range []bson.Raw{nil, adocRaw(t), bson.Raw{1, 2, 3}} {
		if err := s.AdvanceClusterTime(bad); !errors.As(err, &ae) {
			t.Fatalf("AdvanceClusterTime(%v): %v, want an *ArgumentError", bad, err)
		}
	}
	if !rawEqual(s.ClusterTime(), ct(11, 4)) {
		t.Fatal("a refused document changed the cluster time")
	}
	s.AdvanceOperationTime(bson.Timestamp{T: 5, I: 5})
	s.AdvanceOperationTime(bson.Timestamp{T: 5, I: 4})
	s.AdvanceOperationTime(bson.Timestamp{T: 5, I: 5})
	if got := s.OperationTime(); got == nil || *got != (bson.Timestamp{T: 5, I: 5}) {
		t.Fatalf("operationTime %v, want Timestamp(5, 5)", got)
	}
	// Unvalidated: later than the cluster time is taken as it is.
	s.AdvanceOperationTime(bson.Timestamp{T: 1 << 30})
	if got := s.OperationTime(); got == nil || got.T != 1<<30 {
		t.Fatalf("operationTime %v after advancing past the cluster time", got)
	}
}

// A retry never takes the operation's implicit session to a server
// without sessions (driver-sessions: the session MUST NOT be used on a
// connection that does not support sessions), and a retryable write is
// not retried there at all (retryable-writes: when the server selected
// for the retry does not support retryable writes, the error of the
// previous attempt is raised): the write must not run a second time,
// without its txnNumber. Two mongos, one without sessions; the write fails
// on the other with a network error and its retry selects the first.
func TestRetryNotSentWithoutSessions(t *testing.T) {
	with := mongotest.NewServer(t, mongotest.Options{Topology: mongotest.Topology{Role: mongotest.RoleMongos}})
	without := mongotest.NewServer(t, mongotest.Options{Topology: mongotest.Topology{Role: mongotest.RoleMongos}, NoSessions: true})
	ctx := testCtx(t)
	direct := func(s *mongotest.Server) *driver.Client { return dial(t, "mongodb://"+s.Addr()+"/", nil) }
	withC, withoutC := direct(with), direct(without)
	for _, kind := range []string{"insert", "find"} {
		t.Run(kind, func(t *testing.T) {
			// A client of its own: the network error marks the mongos
			// Unknown in the client that saw it.
			c, rec := sessClient(t, "mongodb://"+with.Addr()+","+without.Addr()+"/?localThresholdMS=1000&retryWrites=true&retryReads=true")
			if _, err := withC.RunCommand(ctx, "admin", adoc("configureFailPoint", "failCommand", "mode", adoc("times", 1),
				"data", adoc("failCommands", bson.A{kind}, "closeConnection", true))); err != nil {
				t.Fatal(err)
			}
			defer withC.RunCommand(ctx, "admin", adoc("configureFailPoint", "failCommand", "mode", "off"))
			coll := c.Database("sessretry").Collection("c")
			for i := 0; i < 200; i++ {
				rec.Reset()
				var err error
				if kind == "insert" {
					_, err = coll.InsertOne(ctx, bson.D{{Key: "_id", Value: i}})
				} else {
					err = coll.FindOne(ctx, bson.D{}).Err()
					if errors.Is(err, driver.ErrNoDocuments) {
						err = nil
					}
				}
				evs := eventtest.Of[*event.CommandStarted](rec)
				if len(evs) == 0 || addrOf(evs[0]) != with.Addr() || err == nil && len(evs) == 1 {
					continue // the first attempt went to the mongos without sessions, or the fail point is spent
				}
				for _, e := range evs[1:] {
					if addrOf(e) != without.Addr() {
						continue
					}
					if kind == "insert" {
						t.Fatalf("the write was retried on the mongos without sessions: %s", e.Command)
					}
					if _, err := e.Command.LookupErr("lsid"); err == nil {
						t.Fatalf("the retry took the implicit session to the mongos without sessions: %s", e.Command)
					}
				}
				if kind == "insert" {
					if !driver.IsNetworkError(err) {
						t.Fatalf("insert: %v, want the first attempt's network error", err)
					}
					if n, err := withoutC.Database("sessretry").Collection("c").CountDocuments(ctx, bson.D{{Key: "_id", Value: i}}); err != nil || n != 0 {
						t.Fatalf("the insert ran on the mongos without sessions (%d, %v)", n, err)
					}
				}
				return
			}
			t.Fatal("no first attempt reached the mongos with the fail point")
		})
	}
}

// A bulk write is one operation: its commands share one implicit session
// (driver-sessions: "as if a new ClientSession was started just for this
// one operation"), a dirty one included ("It is valid for a dirty session
// to be used for subsequent commands (e.g. ... a later command in a bulk
// write"), which is discarded when the operation ends. The insert's first
// attempt meets a network error; its retry and the update and delete
// after it carry the same lsid; the next operation gets another.
func TestBulkWriteOneImplicitSession(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 1, mongotest.ReplicaSetOptions{})
	c, rec := sessClient(t, rs.URI()+"&retryWrites=true")
	ctx := testCtx(t)
	coll := c.Database("sessbulk").Collection("c")
	if _, err := c.RunCommand(ctx, "admin", adoc("configureFailPoint", "failCommand", "mode", adoc("times", 1),
		"data", adoc("failCommands", bson.A{"insert"}, "closeConnection", true))); err != nil {
		t.Fatal(err)
	}
	rec.Reset()
	set := bson.D{{Key: "$set", Value: bson.D{{Key: "y", Value: 1}}}}
	if _, err := coll.BulkWrite(ctx, []driver.WriteModel{
		&driver.InsertOneModel{Document: bson.D{{Key: "_id", Value: 1}}},
		&driver.UpdateOneModel{Filter: bson.D{{Key: "_id", Value: 1}}, Update: set},
		&driver.DeleteOneModel{Filter: bson.D{{Key: "_id", Value: 1}}},
	}); err != nil {
		t.Fatal(err)
	}
	var lsids []bson.Raw
	var names []string
	for _, e := range eventtest.Of[*event.CommandStarted](rec) {
		v, err := e.Command.LookupErr("lsid")
		if err != nil {
			t.Fatalf("%s carried no lsid", e.CommandName)
		}
		lsids, names = append(lsids, v.Document()), append(names, e.CommandName)
	}
	if len(lsids) != 4 {
		t.Fatalf("commands sent: %v, want insert, its retry, update, delete", names)
	}
	for i, l := range lsids[1:] {
		if !rawEqual(l, lsids[0]) {
			t.Fatalf("%s carried another lsid than the bulk write's first command", names[i+1])
		}
	}
	if _, err := coll.InsertOne(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	if lsid, _ := lastStarted(t, rec).Command.LookupErr("lsid"); rawEqual(lsid.Document(), lsids[0]) {
		t.Fatal("the dirty session of the bulk write went back to the pool")
	}
}

// On a server without sessions the shared implicit session of a bulk
// write is ignored, as any implicit session is (prose test 18): no
// command carries an lsid, and nothing fails.
func TestBulkWriteImplicitSessionIgnoredWithoutSessions(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{NoSessions: true})
	c, rec := sessClient(t, srv.URI())
	ctx := testCtx(t)
	coll := c.Database("sessbulk").Collection("none")
	if _, err := coll.BulkWrite(ctx, []driver.WriteModel{
		&driver.InsertOneModel{Document: bson.D{{Key: "_id", Value: 1}}},
		&driver.DeleteOneModel{Filter: bson.D{{Key: "_id", Value: 1}}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertMany(ctx, []any{bson.D{}, bson.D{}}); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range eventtest.Of[*event.CommandStarted](rec) {
		n++
		if _, err := e.Command.LookupErr("lsid"); err == nil {
			t.Fatalf("%s carried an lsid to a server without sessions", e.CommandName)
		}
	}
	if n != 3 {
		t.Fatalf("%d commands sent, want insert, delete, insert", n)
	}
}
