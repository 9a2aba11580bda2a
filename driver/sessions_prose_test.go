package driver_test

import (
	"context"
	"errors"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
	"github.com/mongoscope/mongoscope/mongotest"
)

// Where each prose test of sessions/tests/README.md is:
//   - 1, 21, 22: TestSessionProseOptions; 2: TestSessionProsePoolLIFO;
//     3: TestClusterTimeGossip; 4: TestSessionProseExplicitAndImplicit;
//     5, 6: TestSessionProseMisuse (6's disposal pattern: TestUseSession);
//   - 8, 9: TestImplicitSessions; 10: the unified runner's CheckClient
//     (every unified test) and TestImplicitSessions,
//     TestImplicitSessionReturnedPerOperation; 11: TestImplicitSessions
//     (replica set) and TestSessionProseFindGetMoreSameLSID (the other
//     topologies); 14: TestImplicitSessionAfterCheckout;
//   - 18: TestNoLSIDWithoutSessionSupport; 19: TestSessionProseNotSupported;
//     20: TestSessionProseNoGossipThroughSDAM and
//     TestNoClusterTimeOnMonitoring; 23: TestSessionProseSnapshotTimeReadOnly;
//   - 7, 12, 13, 16, 17: not applicable, see below; 15 was removed.
//
// The causal-consistency specification's test plan (it has no
// tests/README.md): TestCausalConsistencyProse (1-9, 11, 12) and
// TestCausalConsistencyEveryWrite (5 for the remaining writes).

// sessClient connects to uri with a recorder of command events.
func sessClient(t *testing.T, uri string) (*driver.Client, *eventtest.Recorder) {
	t.Helper()
	rec := &eventtest.Recorder{}
	return dial(t, uri, &driver.ClientOptions{Monitors: []any{rec}}), rec
}

func startSession(t *testing.T, c *driver.Client, o *driver.SessionOptions) *driver.Session {
	t.Helper()
	s, err := c.StartSession(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.EndSession(context.Background()) })
	return s
}

// lastStarted returns the last CommandStarted event rec saw.
func lastStarted(t *testing.T, rec *eventtest.Recorder) *event.CommandStarted {
	t.Helper()
	evs := eventtest.Of[*event.CommandStarted](rec)
	if len(evs) == 0 {
		t.Fatal("no command was sent")
	}
	return evs[len(evs)-1]
}

func lastSucceeded(t *testing.T, rec *eventtest.Recorder) *event.CommandSucceeded {
	t.Helper()
	evs := eventtest.Of[*event.CommandSucceeded](rec)
	if len(evs) == 0 {
		t.Fatal("no command succeeded")
	}
	return evs[len(evs)-1]
}

func rawEqual(a, b bson.Raw) bool { return string(a) == string(b) }

// sessionOps are operations that take a session, each run in ctx on
// coll; they succeed on an empty collection "s" of database "sess".
var sessionOps = []struct {
	name string
	run  func(ctx context.Context, coll *driver.Collection) error
}{
	{"insertOne", func(ctx context.Context, coll *driver.Collection) error {
		_, err := coll.InsertOne(ctx, bson.D{})
		return err
	}},
	{"insertMany", func(ctx context.Context, coll *driver.Collection) error {
		_, err := coll.InsertMany(ctx, []any{bson.D{}, bson.D{}})
		return err
	}},
	{"find", func(ctx context.Context, coll *driver.Collection) error {
		cur, err := coll.Find(ctx, bson.D{})
		if err != nil {
			return err
		}
		return cur.Close(ctx)
	}},
	{"findOne", func(ctx context.Context, coll *driver.Collection) error {
		err := coll.FindOne(ctx, bson.D{}).Err()
		if errors.Is(err, driver.ErrNoDocuments) {
			return nil
		}
		return err
	}},
	{"aggregate", func(ctx context.Context, coll *driver.Collection) error {
		cur, err := coll.Aggregate(ctx, bson.A{})
		if err != nil {
			return err
		}
		return cur.Close(ctx)
	}},
	{"countDocuments", func(ctx context.Context, coll *driver.Collection) error {
		_, err := coll.CountDocuments(ctx, bson.D{})
		return err
	}},
	{"estimatedDocumentCount", func(ctx context.Context, coll *driver.Collection) error {
		_, err := coll.EstimatedDocumentCount(ctx)
		return err
	}},
	{"distinct", func(ctx context.Context, coll *driver.Collection) error {
		return coll.Distinct(ctx, "x", bson.D{}).Err()
	}},
	{"updateOne", func(ctx context.Context, coll *driver.Collection) error {
		_, err := coll.UpdateOne(ctx, bson.D{}, bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}})
		return err
	}},
	{"replaceOne", func(ctx context.Context, coll *driver.Collection) error {
		_, err := coll.ReplaceOne(ctx, bson.D{}, bson.D{{Key: "x", Value: 2}})
		return err
	}},
	{"deleteMany", func(ctx context.Context, coll *driver.Collection) error {
		_, err := coll.DeleteMany(ctx, bson.D{{Key: "x", Value: 99}})
		return err
	}},
	{"findOneAndUpdate", func(ctx context.Context, coll *driver.Collection) error {
		err := coll.FindOneAndUpdate(ctx, bson.D{}, bson.D{{Key: "$set", Value: bson.D{{Key: "y", Value: 1}}}}).Err()
		if errors.Is(err, driver.ErrNoDocuments) {
			return nil
		}
		return err
	}},
	{"bulkWrite", func(ctx context.Context, coll *driver.Collection) error {
		_, err := coll.BulkWrite(ctx, []driver.WriteModel{&driver.InsertOneModel{Document: bson.D{}}})
		return err
	}},
	{"createIndex", func(ctx context.Context, coll *driver.Collection) error {
		_, err := coll.Indexes().CreateOne(ctx, driver.IndexModel{Keys: bson.D{{Key: "x", Value: 1}}})
		return err
	}},
	{"listIndexes", func(ctx context.Context, coll *driver.Collection) error {
		_, err := coll.Indexes().ListNames(ctx)
		return err
	}},
	{"listCollections", func(ctx context.Context, coll *driver.Collection) error {
		_, err := coll.Database().ListCollectionNames(ctx, bson.D{})
		return err
	}},
	{"runCommand", func(ctx context.Context, coll *driver.Collection) error {
		_, err := coll.Database().Client().RunCommand(ctx, "admin", bson.D{{Key: "ping", Value: 1}})
		return err
	}},
}

// Prose test 4: an operation in an explicit session sends its lsid; the
// same operation without one sends an implicit session's lsid.
func TestSessionProseExplicitAndImplicit(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := sessClient(t, srv.URI())
	coll := c.Database("sess").Collection("s")
	for _, op := range sessionOps {
		t.Run(op.name, func(t *testing.T) {
			ctx := testCtx(t)
			s := startSession(t, c, nil)
			if err := op.run(driver.NewSessionContext(ctx, s), coll); err != nil {
				t.Fatal(err)
			}
			lsid, err := lastStarted(t, rec).Command.LookupErr("lsid")
			if err != nil || !rawEqual(lsid.Document(), s.ID()) {
				t.Fatalf("explicit: lsid %v, want the session's %v", lsid, s.ID())
			}
			if err := op.run(ctx, coll); err != nil {
				t.Fatal(err)
			}
			lsid, err = lastStarted(t, rec).Command.LookupErr("lsid")
			if err != nil {
				t.Fatal("implicit: no lsid")
			}
			if rawEqual(lsid.Document(), s.ID()) {
				t.Fatal("implicit: the operation used the explicit session, which its context does not carry")
			}
		})
	}
}

// Prose tests 5 and 6, and the unacknowledged-write rule: a session of
// another client, an ended session, and an explicit session with w:0 are
// each a *SessionError, before anything is sent.
func TestSessionProseMisuse(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c1, rec := sessClient(t, srv.URI())
	c2 := dial(t, srv.URI(), nil)
	coll := c1.Database("sess").Collection("s")
	other := startSession(t, c2, nil)
	ended := startSession(t, c1, nil)
	ended.EndSession(context.Background())
	for _, tc := range []struct {
		name string
		s    *driver.Session
		want error
	}{
		{"other client", other, driver.ErrSessionOtherClient},
		{"ended", ended, driver.ErrSessionEnded},
	} {
		for _, op := range sessionOps {
			t.Run(tc.name+"/"+op.name, func(t *testing.T) {
				rec.Reset()
				err := op.run(driver.NewSessionContext(testCtx(t), tc.s), coll)
				var se *driver.SessionError
				if !errors.Is(err, tc.want) || !errors.As(err, &se) {
					t.Fatalf("got %v, want a *SessionError wrapping %v", err, tc.want)
				}
				if n := len(eventtest.Of[*event.CommandStarted](rec)); n != 0 {
					t.Fatalf("%d commands were sent", n)
				}
			})
		}
	}
	t.Run("unacknowledged", func(t *testing.T) {
		s := startSession(t, c1, nil)
		w0 := c1.Database("sess").Collection("s", &driver.CollectionOptions{WriteConcern: driver.Unacknowledged()})
		rec.Reset()
		_, err := w0.InsertOne(driver.NewSessionContext(testCtx(t), s), bson.D{})
		if !errors.Is(err, driver.ErrSessionUnacknowledged) {
			t.Fatalf("got %v, want ErrSessionUnacknowledged", err)
		}
		if n := len(eventtest.Of[*event.CommandStarted](rec)); n != 0 {
			t.Fatalf("%d commands were sent", n)
		}
	})
}

// Prose tests 1, 21 and 22: invalid session options and snapshotTime on a
// session that has none.
func TestSessionProseOptions(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c := dial(t, srv.URI(), nil)
	tr, fa := true, false
	for _, o := range []*driver.SessionOptions{
		{Snapshot: &tr, CausalConsistency: &tr},
		{Snapshot: &fa, SnapshotTime: &bson.Timestamp{T: 1}},
		{SnapshotTime: &bson.Timestamp{T: 1}},
		{DefaultWriteConcern: &driver.WriteConcern{W: &driver.W{Nodes: -1}}},
	} {
		var ae *driver.ArgumentError
		if _, err := c.StartSession(o); !errors.As(err, &ae) {
			t.Errorf("StartSession(%+v): %v, want an *ArgumentError", *o, err)
		}
	}
	s := startSession(t, c, &driver.SessionOptions{Snapshot: &fa})
	if _, err := s.SnapshotTime(); !errors.Is(err, driver.ErrNoSnapshotTime) {
		t.Errorf("SnapshotTime of a non-snapshot session: %v", err)
	}
	s = startSession(t, c, &driver.SessionOptions{Snapshot: &tr})
	if s.CausalConsistency() || !s.Snapshot() {
		t.Error("a snapshot session defaults to causalConsistency false")
	}
	if !startSession(t, c, nil).CausalConsistency() {
		t.Error("a session defaults to causalConsistency true")
	}
	s = startSession(t, c, &driver.SessionOptions{Snapshot: &tr, SnapshotTime: &bson.Timestamp{T: 7, I: 2}})
	if ts, err := s.SnapshotTime(); err != nil || ts != (bson.Timestamp{T: 7, I: 2}) {
		t.Errorf("SnapshotTime: %v %v", ts, err)
	}
}

// Prose test 23: snapshotTime is read-only. Session.SnapshotTime is an
// accessor that returns a value, and no API sets it after StartSession;
// the only ways in are the SessionOptions given to StartSession and the
// copy Options returns, and changing either changes nothing.
func TestSessionProseSnapshotTimeReadOnly(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c := dial(t, srv.URI(), nil)
	o := &driver.SessionOptions{Snapshot: driver.Ptr(false)}
	s := startSession(t, c, o)
	unset := func(when string) {
		t.Helper()
		if ts, err := s.SnapshotTime(); !errors.Is(err, driver.ErrNoSnapshotTime) || ts != (bson.Timestamp{}) {
			t.Fatalf("%s: SnapshotTime %v %v, want it unset", when, ts, err)
		}
		if s.Options().SnapshotTime != nil {
			t.Fatalf("%s: Options().SnapshotTime is set", when)
		}
	}
	unset("at the start")
	o.SnapshotTime, *o.Snapshot = &bson.Timestamp{T: 1}, true
	unset("after setting the options given to StartSession")
	got := s.Options()
	got.SnapshotTime, *got.Snapshot = &bson.Timestamp{T: 1}, true
	unset("after setting the options Options returned")
}

// Prose tests 7, 12, 13, 16 and 17 do not apply to this driver, by the
// conditions the tests themselves state:
//   - 7 ("skip if your driver does not allow simultaneous authentication
//     with multiple users"): a Client has one credential
//     (ClientOptions.Username and Password, or the URI's userinfo), with
//     which every connection authenticates, so only one user is ever
//     authenticated on a connection.
//   - 16 and 17 ("only applies to drivers that allow authentication to be
//     changed on the fly"): the credential is fixed at Connect; there is
//     no API to authenticate another user or to log out afterwards.
//   - 12 and 13 ("skip if your driver does not allow forking"): a Go
//     program cannot fork itself with its state (syscall.ForkExec starts a
//     new program, which shares no client or pool), so the driver has no
//     fork support and no pool to clear in a child.

// Prose test 2: the pool is LIFO, seen through explicit sessions.
func TestSessionProsePoolLIFO(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c := dial(t, srv.URI(), nil)
	// A first operation tells the client the session timeout.
	if err := c.Ping(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	a, b := startSession(t, c, nil), startSession(t, c, nil)
	idA, idB := a.ID(), b.ID()
	if rawEqual(idA, idB) {
		t.Fatal("two live sessions share an id")
	}
	a.EndSession(context.Background())
	b.EndSession(context.Background())
	if got := startSession(t, c, nil).ID(); !rawEqual(got, idB) {
		t.Fatal("the first session started after ending A then B is not B's")
	}
	if got := startSession(t, c, nil).ID(); !rawEqual(got, idA) {
		t.Fatal("the second is not A's")
	}
}

// Prose test 19: an explicit session on a deployment without sessions is
// a client-side error; nothing is sent.
func TestSessionProseNotSupported(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{NoSessions: true})
	c, rec := sessClient(t, srv.URI())
	s := startSession(t, c, nil) // must not fail
	ctx := driver.NewSessionContext(testCtx(t), s)
	coll := c.Database("sess").Collection("s")
	rec.Reset()
	err := coll.FindOne(ctx, bson.D{}).Err()
	if !errors.Is(err, driver.ErrSessionsNotSupported) {
		t.Fatalf("findOne: %v", err)
	}
	if _, err := coll.InsertOne(ctx, bson.D{}); !errors.Is(err, driver.ErrSessionsNotSupported) {
		t.Fatalf("insertOne: %v", err)
	}
	if n := len(eventtest.Of[*event.CommandStarted](rec)); n != 0 {
		t.Fatalf("%d commands were sent", n)
	}
}

// A cursor opened in an explicit session sends its getMores with the
// session's lsid, and keeps the session's server session when exhausted:
// the session's id stays the same, and its next operation uses it too.
func TestSessionCursorKeepsSession(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := sessClient(t, srv.URI())
	ctx := testCtx(t)
	coll := c.Database("sess").Collection("cur")
	if _, err := coll.InsertMany(ctx, []any{bson.D{}, bson.D{}, bson.D{}, bson.D{}, bson.D{}}); err != nil {
		t.Fatal(err)
	}
	s := startSession(t, c, nil)
	sctx := driver.NewSessionContext(ctx, s)
	cur, err := coll.Find(sctx, bson.D{}, &driver.FindOptions{BatchSize: driver.Ptr[int32](2)})
	if err != nil {
		t.Fatal(err)
	}
	// Iterated with a context without the session: the cursor has its own.
	n := 0
	for cur.Next(ctx) {
		n++
	}
	if cur.Err() != nil || n != 5 {
		t.Fatalf("%d documents, %v", n, cur.Err())
	}
	gms := 0
	for _, e := range eventtest.Of[*event.CommandStarted](rec) {
		if e.CommandName != "find" && e.CommandName != "getMore" {
			continue
		}
		gms++
		if lsid, err := e.Command.LookupErr("lsid"); err != nil || !rawEqual(lsid.Document(), s.ID()) {
			t.Fatalf("%s without the session's lsid", e.CommandName)
		}
	}
	if gms < 3 {
		t.Fatalf("%d find and getMore commands, want 3", gms)
	}
	// The exhausted cursor gave nothing back to the pool: an implicit
	// session now gets another id.
	if _, err := coll.InsertOne(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	if lsid, _ := lastStarted(t, rec).Command.LookupErr("lsid"); rawEqual(lsid.Document(), s.ID()) {
		t.Fatal("an implicit session reused the explicit session's server session")
	}
}

// A network error marks the explicit session dirty: when it ends, its
// server session is discarded, so the next session gets a new id.
func TestSessionDirty(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c := dial(t, srv.URI(), nil)
	ctx := testCtx(t)
	s := startSession(t, c, nil)
	id := s.ID()
	if _, err := c.RunCommand(ctx, "admin", adoc("configureFailPoint", "failCommand", "mode", adoc("times", 1),
		"data", adoc("failCommands", bson.A{"insert"}, "closeConnection", true))); err != nil {
		t.Fatal(err)
	}
	_, err := c.Database("sess").Collection("d").InsertOne(driver.NewSessionContext(ctx, s), bson.D{})
	if !driver.IsNetworkError(err) {
		t.Fatalf("insert: %v, want a network error", err)
	}
	if !s.Dirty() {
		t.Fatal("the session is not dirty after a network error")
	}
	s.EndSession(ctx)
	if rawEqual(startSession(t, c, nil).ID(), id) {
		t.Fatal("a dirty server session was reused")
	}
}

// UseSession runs fn in a session and ends it afterwards.
func TestUseSession(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := sessClient(t, srv.URI())
	var kept *driver.Session
	var id bson.Raw
	err := c.UseSession(testCtx(t), func(ctx context.Context) error {
		kept = driver.SessionFromContext(ctx)
		if kept == nil || kept.Client() != c {
			t.Fatal("fn's context carries no session of the client")
		}
		id = kept.ID()
		_, err := c.Database("sess").Collection("u").InsertOne(ctx, bson.D{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if lsid, _ := lastStarted(t, rec).Command.LookupErr("lsid"); !rawEqual(lsid.Document(), id) {
		t.Fatal("the insert did not run in the session")
	}
	_, err = c.Database("sess").Collection("u").InsertOne(driver.NewSessionContext(testCtx(t), kept), bson.D{})
	if !errors.Is(err, driver.ErrSessionEnded) {
		t.Fatalf("after UseSession: %v, want ErrSessionEnded", err)
	}
	want := errors.New("fn failed")
	if err := c.UseSession(testCtx(t), func(context.Context) error { return want }); err != want {
		t.Fatalf("UseSession returned %v, want fn's error", err)
	}
}

// readConcernOf returns the readConcern a command carries, or nil.
func readConcernOf(cmd bson.Raw) bson.Raw {
	v, err := cmd.LookupErr("readConcern")
	if err != nil {
		return nil
	}
	return v.Document()
}

// The causal-consistency specification's tests 1-9, 11 and 12 on a replica
// set (which supports cluster times) and a standalone (which does not).
func TestCausalConsistencyProse(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{})
	c, rec := sessClient(t, rs.URI())
	ctx := testCtx(t)
	coll := c.Database("cc").Collection("c")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	replyOpTime := func() bson.Timestamp {
		t.Helper()
		v, err := lastSucceeded(t, rec).Reply.LookupErr("operationTime")
		if err != nil {
			t.Fatal("the reply has no operationTime")
		}
		ts, i, _ := v.TimestampOK()
		return bson.Timestamp{T: ts, I: i}
	}
	afterClusterTime := func() (bson.Timestamp, bool) {
		rc := readConcernOf(lastStarted(t, rec).Command)
		v, err := rc.LookupErr("afterClusterTime")
		if err != nil {
			return bson.Timestamp{}, false
		}
		ts, i, _ := v.TimestampOK()
		return bson.Timestamp{T: ts, I: i}, true
	}

	t.Run("1-3 first operation", func(t *testing.T) {
		s := startSession(t, c, &driver.SessionOptions{CausalConsistency: driver.Ptr(true)})
		if s.OperationTime() != nil {
			t.Fatal("a new session has an operationTime")
		}
		if err := coll.FindOne(driver.NewSessionContext(ctx, s), bson.D{}).Err(); err != nil {
			t.Fatal(err)
		}
		if _, ok := afterClusterTime(); ok {
			t.Fatal("the first read sent afterClusterTime")
		}
		if got := s.OperationTime(); got == nil || *got != replyOpTime() {
			t.Fatalf("operationTime %v, want the reply's %v", got, replyOpTime())
		}
	})
	t.Run("3 error", func(t *testing.T) {
		s := startSession(t, c, nil)
		_, err := coll.InsertOne(driver.NewSessionContext(ctx, s), bson.D{{Key: "_id", Value: 1}})
		if err == nil {
			t.Fatal("duplicate insert succeeded")
		}
		if got := s.OperationTime(); got == nil || *got != replyOpTime() {
			t.Fatalf("operationTime %v after a failed write, want the reply's", got)
		}
	})
	reads := sessionOps[2:8] // find ... distinct
	for _, r := range reads {
		t.Run("4 findOne then "+r.name, func(t *testing.T) {
			s := startSession(t, c, &driver.SessionOptions{CausalConsistency: driver.Ptr(true)})
			sctx := driver.NewSessionContext(ctx, s)
			if err := coll.FindOne(sctx, bson.D{}).Err(); err != nil {
				t.Fatal(err)
			}
			op := *s.OperationTime()
			if err := r.run(sctx, coll); err != nil {
				t.Fatal(err)
			}
			// The read's command is the first the operation sent.
			var cmd bson.Raw
			for _, e := range eventtest.Of[*event.CommandStarted](rec) {
				if e.CommandName != "killCursors" && e.CommandName != "getMore" {
					cmd = e.Command
				}
			}
			v, err := readConcernOf(cmd).LookupErr("afterClusterTime")
			if err != nil {
				t.Fatalf("%s sent no afterClusterTime: %s", r.name, cmd)
			}
			if ts, i, _ := v.TimestampOK(); (bson.Timestamp{T: ts, I: i}) != op {
				t.Fatalf("afterClusterTime %v, want %v", v, op)
			}
		})
	}
	writes := []int{0, 1, 8, 9, 10, 11, 12}
	for _, i := range writes {
		w := sessionOps[i]
		t.Run("5 "+w.name+" then findOne", func(t *testing.T) {
			s := startSession(t, c, nil)
			sctx := driver.NewSessionContext(ctx, s)
			if err := w.run(sctx, coll); err != nil {
				t.Fatal(err)
			}
			op := *s.OperationTime()
			if err := coll.FindOne(sctx, bson.D{}).Err(); err != nil {
				t.Fatal(err)
			}
			if got, ok := afterClusterTime(); !ok || got != op {
				t.Fatalf("afterClusterTime %v %v, want %v", got, ok, op)
			}
		})
	}
	t.Run("6 not causally consistent", func(t *testing.T) {
		s := startSession(t, c, &driver.SessionOptions{CausalConsistency: driver.Ptr(false)})
		sctx := driver.NewSessionContext(ctx, s)
		for range 2 {
			if err := coll.FindOne(sctx, bson.D{}).Err(); err != nil {
				t.Fatal(err)
			}
			if _, ok := afterClusterTime(); ok {
				t.Fatal("afterClusterTime sent")
			}
		}
	})
	t.Run("8-9 read concern merged", func(t *testing.T) {
		for _, level := range []string{"", "majority"} {
			cl := coll
			if level != "" {
				cl = c.Database("cc").Collection("c", &driver.CollectionOptions{ReadConcern: &driver.ReadConcern{Level: level}})
			}
			s := startSession(t, c, nil)
			sctx := driver.NewSessionContext(ctx, s)
			if err := cl.FindOne(sctx, bson.D{}).Err(); err != nil {
				t.Fatal(err)
			}
			op := *s.OperationTime()
			if _, err := cl.CountDocuments(sctx, bson.D{}); err != nil {
				t.Fatal(err)
			}
			rc := readConcernOf(lastStarted(t, rec).Command)
			if got := rc.Lookup("level").StringValue(); got != level {
				t.Fatalf("level %q, want %q (%s)", got, level, rc)
			}
			if ts, i, _ := rc.Lookup("afterClusterTime").TimestampOK(); (bson.Timestamp{T: ts, I: i}) != op {
				t.Fatalf("afterClusterTime in %s, want %v", rc, op)
			}
		}
	})
	t.Run("12 $clusterTime sent", func(t *testing.T) {
		if err := coll.FindOne(ctx, bson.D{}).Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := lastStarted(t, rec).Command.LookupErr("$clusterTime"); err != nil {
			t.Fatal("no $clusterTime sent to a replica set")
		}
	})
	t.Run("runCommand gets no afterClusterTime", func(t *testing.T) {
		s := startSession(t, c, nil)
		sctx := driver.NewSessionContext(ctx, s)
		if err := coll.FindOne(sctx, bson.D{}).Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := c.RunCommand(sctx, "cc", bson.D{{Key: "find", Value: "c"}}); err != nil {
			t.Fatal(err)
		}
		if readConcernOf(lastStarted(t, rec).Command) != nil {
			t.Fatal("runCommand got a readConcern")
		}
	})
	t.Run("cluster time: the greater of the client's and the session's", func(t *testing.T) {
		s := startSession(t, c, nil)
		sctx := driver.NewSessionContext(ctx, s)
		if err := coll.FindOne(sctx, bson.D{}).Err(); err != nil {
			t.Fatal(err)
		}
		if s.ClusterTime() == nil {
			t.Fatal("the session has no cluster time after an operation")
		}
		ahead := bson.D{{Key: "clusterTime", Value: bson.Timestamp{T: 1 << 31}}, {Key: "signature", Value: bson.D{
			{Key: "hash", Value: bson.Binary{Data: make([]byte, 20)}}, {Key: "keyId", Value: int64(0)}}}}
		raw, err := bson.Marshal(ahead)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AdvanceClusterTime(raw); err != nil {
			t.Fatal(err)
		}
		// Outside the session first: the server has not seen the
		// session's time yet (it gossips back what it is sent, so the
		// client's own clock would take it up afterwards).
		if err := coll.FindOne(ctx, bson.D{}).Err(); err != nil {
			t.Fatal(err)
		}
		sent, _ := lastStarted(t, rec).Command.LookupErr("$clusterTime")
		if rawEqual(sent.Document(), raw) {
			t.Fatal("an operation outside the session sent the session's cluster time")
		}
		_ = coll.FindOne(sctx, bson.D{}).Err() // mongotest may refuse the forged time
		sent, _ = lastStarted(t, rec).Command.LookupErr("$clusterTime")
		if !rawEqual(sent.Document(), raw) {
			t.Fatalf("sent %s, want the session's greater %s", sent, bson.Raw(raw))
		}
		if err := s.AdvanceClusterTime(bson.Raw(adocRaw(t))); err == nil {
			t.Fatal("AdvanceClusterTime took a document without clusterTime")
		}
	})
	t.Run("AdvanceOperationTime", func(t *testing.T) {
		s := startSession(t, c, nil)
		s.AdvanceOperationTime(bson.Timestamp{T: 10, I: 2})
		s.AdvanceOperationTime(bson.Timestamp{T: 10, I: 1})
		if got := s.OperationTime(); got == nil || *got != (bson.Timestamp{T: 10, I: 2}) {
			t.Fatalf("operationTime %v", got)
		}
	})

	t.Run("7 and 11 standalone", func(t *testing.T) {
		srv := mongotest.NewServer(t, mongotest.Options{})
		c, rec := sessClient(t, srv.URI())
		coll := c.Database("cc").Collection("c")
		s := startSession(t, c, nil)
		sctx := driver.NewSessionContext(testCtx(t), s)
		for range 2 {
			if err := coll.FindOne(sctx, bson.D{}).Err(); err != nil && !errors.Is(err, driver.ErrNoDocuments) {
				t.Fatal(err)
			}
			cmd := lastStarted(t, rec).Command
			if readConcernOf(cmd) != nil {
				t.Fatalf("readConcern sent to a standalone: %s", cmd)
			}
			if _, err := cmd.LookupErr("$clusterTime"); err == nil {
				t.Fatal("$clusterTime sent to a standalone")
			}
		}
		if s.OperationTime() != nil {
			t.Fatal("a standalone gave an operationTime")
		}
	})
}

func adocRaw(t *testing.T) bson.Raw {
	raw, err := bson.Marshal(bson.D{{Key: "x", Value: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// A snapshot session sends readConcern {level: snapshot} and, on a server
// older than 5.0, fails before sending anything.
func TestSnapshotSession(t *testing.T) {
	t.Run("readConcern", func(t *testing.T) {
		rs := mongotest.NewReplicaSet(t, 1, mongotest.ReplicaSetOptions{})
		c, rec := sessClient(t, rs.URI())
		s := startSession(t, c, &driver.SessionOptions{Snapshot: driver.Ptr(true), SnapshotTime: &bson.Timestamp{T: 5, I: 1}})
		// Timestamp(5, 1) is older than mongotest's history, so the read
		// fails with SnapshotTooOld; the command sent is what is checked.
		_ = c.Database("sn").Collection("c").FindOne(driver.NewSessionContext(testCtx(t), s), bson.D{}).Err()
		rc := readConcernOf(lastStarted(t, rec).Command)
		if rc.Lookup("level").StringValue() != "snapshot" {
			t.Fatalf("readConcern %s", rc)
		}
		if ts, i, ok := rc.Lookup("atClusterTime").TimestampOK(); !ok || ts != 5 || i != 1 {
			t.Fatalf("atClusterTime in %s", rc)
		}
	})
	t.Run("before 5.0", func(t *testing.T) {
		srv := mongotest.NewServer(t, mongotest.Options{Version: "4.4.0", MaxWireVersion: 9})
		c, rec := sessClient(t, srv.URI())
		s := startSession(t, c, &driver.SessionOptions{Snapshot: driver.Ptr(true)})
		rec.Reset()
		err := c.Database("sn").Collection("c").FindOne(driver.NewSessionContext(testCtx(t), s), bson.D{}).Err()
		if !errors.Is(err, driver.ErrSnapshotNotSupported) {
			t.Fatalf("got %v, want ErrSnapshotNotSupported", err)
		}
		if n := len(eventtest.Of[*event.CommandStarted](rec)); n != 0 {
			t.Fatalf("%d commands were sent", n)
		}
	})
}
