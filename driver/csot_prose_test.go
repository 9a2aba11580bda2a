package driver_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
	"github.com/mongoscope/mongoscope/mongotest"
)

// The client-side operations timeout specification's prose tests
// (client-side-operations-timeout/tests/README.md) that can run against
// mongotest, through the public API. The specification's timings (10 to
// 20 ms) are scaled up so that the tests hold on a loaded machine running
// the race detector: what each test tells apart stays the same (which of
// two timeouts wins, whether a timeout is refreshed), with margins of a
// hundred milliseconds or more on either side.

const csotUser, csotPassword = "ada", "csot-Secret-7"

// csotAuthServer starts a server that requires authentication, with one
// user, and returns it with a URI carrying that user and the options in
// query (without the leading '?').
func csotAuthServer(t *testing.T, query string) (*mongotest.Server, string) {
	t.Helper()
	s := mongotest.NewServer(t, mongotest.Options{Auth: true})
	if err := s.AddUser("admin", csotUser, csotPassword); err != nil {
		t.Fatal(err)
	}
	uri := strings.Replace(s.URI(), "mongodb://", "mongodb://"+csotUser+":"+csotPassword+"@", 1)
	return s, withQuery(uri, query)
}

// withQuery appends the options in query to uri.
func withQuery(uri, query string) string {
	if query == "" {
		return uri
	}
	if strings.Contains(uri, "?") {
		return uri + "&" + query
	}
	if !strings.Contains(strings.TrimPrefix(uri, "mongodb://"), "/") {
		uri += "/"
	}
	return uri + "?" + query
}

// blockCommands sets a failCommand fail point that blocks cmds for block,
// for the connections of appName ("" for all).
func blockCommands(t *testing.T, s *mongotest.Server, mode any, cmds bson.A, block time.Duration, appName string) {
	t.Helper()
	data := bson.D{{Key: "failCommands", Value: cmds}, {Key: "blockConnection", Value: true},
		{Key: "blockTimeMS", Value: block.Milliseconds()}}
	if appName != "" {
		data = append(data, bson.E{Key: "appName", Value: appName})
	}
	if err := s.SetFailPoint(bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: mode},
		{Key: "data", Value: data}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.ClearFailPoints)
}

// wantTimeout fails t unless err is the timeout error of an operation
// whose timeoutMS expired.
func wantTimeout(t *testing.T, what string, err error) {
	t.Helper()
	var te *driver.TimeoutError
	if !errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) || !driver.IsTimeout(err) {
		t.Fatalf("%s: %v (%T), want a *driver.TimeoutError", what, err, err)
	}
}

// Prose test 1: the timeout of a multi-batch insertMany covers all its
// batches. The specification's 50 documents of 1 MiB take two messages;
// here 100,001 small documents take two batches (maxWriteBatchSize is
// 100,000), which mongotest processes far faster than 50 MiB, so that
// the time a batch takes is the fail point's block, not the machine's
// load. Each insert blocks for 2.5 s and timeoutMS is 5 s: the first
// batch succeeds, the second times out, and no third is sent.
func TestCSOTProse1MultiBatchInserts(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	c, rec := sessClient(t, withQuery(s.URI(), "timeoutMS=5000"))
	coll := c.Database("db").Collection("coll")
	if err := coll.Drop(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	blockCommands(t, s, times(2), bson.A{"insert"}, 2500*time.Millisecond, "")
	docs := make([]any, mongotest.MaxWriteBatchSize+1)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}}
	}
	rec.Reset()
	_, err := coll.InsertMany(context.Background(), docs)
	wantTimeout(t, "insertMany", err)
	if n := len(started(rec, "insert")); n != 2 {
		t.Fatalf("%d insert commands, want 2", n)
	}
}

// Prose test 4, "timeoutMS used for handshake commands": a connection
// made for minPoolSize bounds its authentication by the client's
// timeoutMS, so a saslContinue blocked past it fails the connection.
func TestCSOTProse4BackgroundHandshakeTimeout(t *testing.T) {
	const app = "timeoutBackgroundPoolTest"
	s, uri := csotAuthServer(t, "minPoolSize=1&timeoutMS=100&appName="+app)
	blockCommands(t, s, times(1), bson.A{"saslContinue"}, 500*time.Millisecond, app)
	rec := &eventtest.Recorder{}
	c := dial(t, uri, &driver.ClientOptions{Monitors: []any{rec}})
	if _, ok := eventtest.WaitFor(rec, 10*time.Second, func(*event.ConnectionCreated) bool { return true }); !ok {
		t.Fatal("no ConnectionCreated within 10 s")
	}
	if _, ok := eventtest.WaitFor(rec, 10*time.Second, func(*event.ConnectionClosed) bool { return true }); !ok {
		t.Fatalf("no ConnectionClosed within 10 s: the handshake was not bounded by timeoutMS; events %v", rec.Names())
	}
	c.Disconnect(context.Background())
	checkNoDriverGoroutines(t)
}

// Prose test 4, "timeoutMS is refreshed for each handshake command": each
// of the handshake's commands (hello, then saslContinue) is blocked for
// less than timeoutMS, together for more: the connection becomes ready
// only if each command gets timeoutMS afresh.
func TestCSOTProse4BackgroundHandshakeTimeoutRefreshed(t *testing.T) {
	const app = "refreshTimeoutBackgroundPoolTest"
	s, uri := csotAuthServer(t, "minPoolSize=1&timeoutMS=450&appName="+app)
	blockCommands(t, s, "alwaysOn", bson.A{"hello", "isMaster", "saslContinue"}, 250*time.Millisecond, app)
	rec := &eventtest.Recorder{}
	c := dial(t, uri, &driver.ClientOptions{Monitors: []any{rec}})
	if _, ok := eventtest.WaitFor(rec, 10*time.Second, func(*event.ConnectionCreated) bool { return true }); !ok {
		t.Fatal("no ConnectionCreated within 10 s")
	}
	if _, ok := eventtest.WaitFor(rec, 10*time.Second, func(*event.ConnectionReady) bool { return true }); !ok {
		t.Fatalf("no ConnectionReady within 10 s: timeoutMS was not refreshed for each handshake command; events %v", rec.Names())
	}
	// The monitors' hellos are still blocked: Disconnect stops them.
	c.Disconnect(context.Background())
	checkNoDriverGoroutines(t)
}

// Prose test 8: server selection and the handshake of a connection made
// for an operation are bounded by min(serverSelectionTimeoutMS,
// remaining timeoutMS).
func TestCSOTProse8ServerSelection(t *testing.T) {
	// The first four cases select from a host that does not resolve;
	// the timeout that should win is 100 ms, the other 3 s, and the
	// selection must end well before the longer one.
	for _, tc := range []struct {
		name, query string
		timeout     bool // the error is a timeoutMS one
	}{
		{"serverSelectionTimeoutMS honored if timeoutMS is not set", "serverSelectionTimeoutMS=100", false},
		{"timeoutMS honored for server selection if it's lower than serverSelectionTimeoutMS", "timeoutMS=100&serverSelectionTimeoutMS=3000", true},
		{"serverSelectionTimeoutMS honored for server selection if it's lower than timeoutMS", "timeoutMS=3000&serverSelectionTimeoutMS=100", false},
		{"serverSelectionTimeoutMS honored for server selection if timeoutMS=0", "timeoutMS=0&serverSelectionTimeoutMS=100", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, "mongodb://invalid.invalid/?"+tc.query, nil)
			start := time.Now()
			_, err := c.RunCommand(context.Background(), "admin", bson.D{{Key: "ping", Value: 1}})
			took := time.Since(start)
			var se *driver.SelectionError
			if !errors.As(err, &se) {
				t.Fatalf("ping: %v, want a server selection error", err)
			}
			if tc.timeout {
				wantTimeout(t, "ping", err)
			}
			if took > 1500*time.Millisecond {
				t.Fatalf("selection failed after %v, want about 100 ms", took)
			}
		})
	}
	// The last two block the authentication of the connection the insert
	// needs for 2.5 s; the timeout that should win is 500 ms, the other
	// 5 s. The insert starts once the monitor knows the server, so that
	// its budget goes to the connection, not to discovery.
	for _, tc := range []struct{ name, query string }{
		{"timeoutMS honored for connection handshake commands if it's lower than serverSelectionTimeoutMS", "timeoutMS=500&serverSelectionTimeoutMS=5000"},
		{"serverSelectionTimeoutMS honored for connection handshake commands if it's lower than timeoutMS", "timeoutMS=5000&serverSelectionTimeoutMS=500"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, uri := csotAuthServer(t, tc.query)
			blockCommands(t, s, times(1), bson.A{"saslContinue"}, 2500*time.Millisecond, "")
			rec := &eventtest.Recorder{}
			c := dial(t, uri, &driver.ClientOptions{Monitors: []any{rec}})
			if _, ok := eventtest.WaitFor(rec, 10*time.Second, func(*event.ServerDescriptionChanged) bool { return true }); !ok {
				t.Fatal("the monitor did not find the server within 10 s")
			}
			start := time.Now()
			_, err := c.Database("db").Collection("coll").InsertOne(context.Background(), bson.D{{Key: "x", Value: 1}})
			took := time.Since(start)
			wantTimeout(t, "insert", err)
			// A retry would take another 500 ms (or succeed: the fail
			// point blocks once); the specification allows none.
			if took > 950*time.Millisecond {
				t.Fatalf("insert failed after %v, want about 500 ms", took)
			}
		})
	}
}

// maxTimeMS is what remains of timeoutMS less the selected server's
// minRoundTripTime (CSOT, "Command Execution"): with every reply delayed
// by 300 ms from the start, once the monitor has two RTT samples a find under a
// timeoutMS of 2 s is sent with a maxTimeMS of at most 1.7 s.
func TestCSOTMaxTimeMSLessMinRTT(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	s.AddLatency(300 * time.Millisecond)
	c, rec := sessClient(t, withQuery(s.URI(), "heartbeatFrequencyMS=500"))
	coll := c.Database("db").Collection("coll")
	ctx := testCtx(t)
	if err := c.Ping(ctx); err != nil { // a connection in the pool: no handshake below
		t.Fatal(err)
	}
	deadline := time.Now().Add(8 * time.Second)
	var last int64
	for time.Now().Before(deadline) {
		rec.Reset()
		cur, err := coll.Find(driver.WithTimeout(ctx, 2*time.Second), bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		cur.Close(ctx)
		finds := started(rec, "find")
		if len(finds) != 1 {
			t.Fatalf("%d finds", len(finds))
		}
		v, err := finds[0].Command.LookupErr("maxTimeMS")
		if err != nil {
			t.Fatal("no maxTimeMS under timeoutMS")
		}
		last, _ = v.AsInt64OK()
		if last <= 1700 {
			return
		}
	}
	t.Fatalf("maxTimeMS stayed at %d: the server's minimum RTT (about 300 ms) was not subtracted", last)
}

// Prose test 5, "Tailable cursors": a blocking Next on a tailable cursor
// (timeoutMode ITERATION) gets timeoutMS for all the getMores it sends,
// not each. Every getMore blocks for 500 ms and timeoutMS is 750 ms: the
// first empty getMore returns, the second one times out, and no third is
// sent. The collection is capped, as a tailable cursor needs.
func TestCSOTProse5TailableCursor(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	c, rec := sessClient(t, withQuery(s.URI(), "timeoutMS=750"))
	db := c.Database("db")
	ctx := testCtx(t)
	coll := db.Collection("coll")
	if err := coll.Drop(driver.WithTimeout(ctx, 0)); err != nil {
		t.Fatal(err)
	}
	capped, size := true, int64(1<<20)
	if err := db.CreateCollection(driver.WithTimeout(ctx, 0), "coll", &driver.CreateCollectionOptions{Capped: &capped, SizeInBytes: &size}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(driver.WithTimeout(ctx, 0), bson.D{{Key: "x", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	blockCommands(t, s, "alwaysOn", bson.A{"getMore"}, 500*time.Millisecond, "")
	rec.Reset()
	cur, err := coll.Find(context.Background(), bson.D{}, &driver.FindOptions{CursorType: driver.Tailable})
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close(context.Background())
	if cur.ID() == 0 {
		t.Fatal("the tailable cursor is closed")
	}
	if !cur.Next(context.Background()) {
		t.Fatalf("no first document: %v", cur.Err())
	}
	if x, err := cur.Current.LookupErr("x"); err != nil || !isOne(x) {
		t.Fatalf("first document %v", cur.Current)
	}
	if n := len(started(rec, "getMore")); n != 0 {
		t.Fatalf("%d getMores for the first batch's document", n)
	}
	if cur.Next(context.Background()) {
		t.Fatalf("a second document %v", cur.Current)
	}
	wantTimeout(t, "Next", cur.Err())
	if f, g := len(started(rec, "find")), len(started(rec, "getMore")); f != 1 || g != 2 {
		t.Fatalf("%d finds and %d getMores, want 1 and 2", f, g)
	}
}

func isOne(v bson.RawValue) bool {
	n, ok := v.AsInt64OK()
	return ok && n == 1
}

// Under timeoutMS: 0 a retryable error is retried until an attempt
// succeeds or fails otherwise (retryAgain): the caller's context and
// Disconnect are what end a server's endless retryable errors.
func TestCSOTZeroTimeoutRetriesUntilTheCallerStops(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	failCommand(t, s, "alwaysOn", bson.A{"find"}, 7, nil) // HostNotFound: a retryable read error
	c, rec := sessClient(t, withQuery(s.URI(), "timeoutMS=0"))
	coll := c.Database("db").Collection("coll")

	// The caller's deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := coll.Find(ctx, bson.D{})
	if err == nil {
		t.Fatal("find succeeded")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("find returned %v after its context's deadline", took-500*time.Millisecond)
	}
	if n := len(started(rec, "find")); n < 3 {
		t.Fatalf("%d find attempts under timeoutMS=0, want retries until the context ended", n)
	}

	// Disconnect.
	rec.Reset()
	done := make(chan error, 1)
	go func() {
		_, err := coll.Find(context.Background(), bson.D{})
		done <- err
	}()
	if !rec.Wait(10*time.Second, func([]any) bool { return len(started(rec, "find")) >= 3 }) {
		t.Fatal("the find is not being retried")
	}
	// Disconnect waits for the operations in progress until its context
	// ends, then interrupts them.
	dctx, dcancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer dcancel()
	if err := c.Disconnect(dctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Disconnect: %v, want it to interrupt the find", err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, driver.ErrClientDisconnected) {
			t.Fatalf("find after Disconnect: %v, want ErrClientDisconnected", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Disconnect did not end the retries")
	}
	checkNoDriverGoroutines(t)
}

// Once timeoutMS expires while an operation is being retried, the error
// is a timeout error (CSOT "Retryability"), even when the retry that
// found the budget spent sent nothing. Every reply is delayed by 300 ms,
// so the server's minimum RTT is about 300 ms; the find fails with a
// retryable error after 300 ms of its 450 ms, and its retry is not sent
// (what is left does not exceed the minimum RTT): the find's error must
// still be a timeout, not the first attempt's HostNotFound alone.
func TestCSOTTimeoutErrorWhenRetriesRunOut(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	s.AddLatency(300 * time.Millisecond)
	c, rec := sessClient(t, withQuery(s.URI(), "heartbeatFrequencyMS=500"))
	coll := c.Database("db").Collection("coll")
	ctx := testCtx(t)
	waitMinRTT(t, coll, rec, 250*time.Millisecond)
	failCommand(t, s, "alwaysOn", bson.A{"find"}, 7, nil) // HostNotFound: a retryable read error
	rec.Reset()
	_, err := coll.Find(driver.WithTimeout(ctx, 450*time.Millisecond), bson.D{})
	wantTimeout(t, "find", err)
	var ce *driver.CommandError
	if n := len(started(rec, "find")); n == 1 && !errors.As(err, &ce) {
		t.Fatalf("find: %v, want the first attempt's error inside the timeout error", err)
	}
}

// waitMinRTT waits until the selected server's minimum RTT, as maxTimeMS
// shows it, is at least rtt.
func waitMinRTT(t *testing.T, coll *driver.Collection, rec *eventtest.Recorder, rtt time.Duration) {
	t.Helper()
	ctx := testCtx(t)
	const budget = 5 * time.Second
	for deadline := time.Now().Add(8 * time.Second); time.Now().Before(deadline); {
		rec.Reset()
		cur, err := coll.Find(driver.WithTimeout(ctx, budget), bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		cur.Close(ctx)
		if f := started(rec, "find"); len(f) == 1 {
			if v, err := f[0].Command.LookupErr("maxTimeMS"); err == nil {
				if ms, ok := v.AsInt64OK(); ok && time.Duration(ms)*time.Millisecond <= budget-rtt {
					return
				}
			}
		}
	}
	t.Fatalf("the server's minimum RTT did not reach %v", rtt)
}

// A write error with code 50 (MaxTimeMSExpired) under a positive
// timeoutMS is a timeout error, as a top-level one is (CSOT "Error
// Transformations": {ok: 1, writeErrors: [{code: 50}]} matches); without
// timeoutMS it stays the write exception it was.
func TestCSOTWriteErrorMaxTimeMSExpired(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	s.Handle("insert", func(context.Context, *mongotest.Server, *mongotest.Request) (bson.Raw, error) {
		return bson.Marshal(bson.D{{Key: "n", Value: 0}, {Key: "writeErrors", Value: bson.A{
			bson.D{{Key: "index", Value: 0}, {Key: "code", Value: 50}, {Key: "errmsg", Value: "operation exceeded time limit"}}}}})
	})
	c := dial(t, s.URI(), nil)
	coll := c.Database("db").Collection("coll")
	ctx := testCtx(t)
	doc := bson.D{{Key: "x", Value: 1}}

	_, err := coll.InsertOne(ctx, doc)
	var we *driver.WriteException
	var te *driver.TimeoutError
	if !errors.As(err, &we) || errors.As(err, &te) {
		t.Fatalf("insertOne without timeoutMS: %v, want a WriteException and no TimeoutError", err)
	}
	_, err = coll.InsertOne(driver.WithTimeout(ctx, 5*time.Second), doc)
	wantTimeout(t, "insertOne", err)
	if !errors.As(err, &we) || we.WriteErrors[0].Code != 50 {
		t.Fatalf("insertOne: %v, want the WriteException inside", err)
	}
	_, err = coll.InsertMany(driver.WithTimeout(ctx, 5*time.Second), []any{doc, bson.D{{Key: "x", Value: 2}}})
	wantTimeout(t, "insertMany", err)
	var bwe *driver.BulkWriteException
	if !errors.As(err, &bwe) {
		t.Fatalf("insertMany: %v, want the BulkWriteException inside", err)
	}
	_, err = coll.BulkWrite(driver.WithTimeout(ctx, 5*time.Second), []driver.WriteModel{&driver.InsertOneModel{Document: doc}})
	wantTimeout(t, "bulkWrite", err)
}

// RunCommand's document is not inspected for maxTimeMS (CSOT
// "RunCommand"): under a positive timeoutMS the driver's maxTimeMS is
// appended and the caller's is left where it was.
func TestCSOTRunCommandDocumentNotInspected(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	c, rec := sessClient(t, s.URI())
	ctx := testCtx(t)
	rec.Reset()
	_, _ = c.RunCommand(driver.WithTimeout(ctx, 5*time.Second), "admin", bson.D{{Key: "ping", Value: 1}, {Key: "maxTimeMS", Value: int64(1234)}})
	pings := started(rec, "ping")
	if len(pings) != 1 {
		t.Fatalf("%d pings", len(pings))
	}
	var values []int64
	it := pings[0].Command.Iter()
	for it.Next() {
		if e := it.Element(); e.Key() == "maxTimeMS" {
			n, _ := e.Value().AsInt64OK()
			values = append(values, n)
		}
	}
	if len(values) != 2 || values[0] != 1234 || values[1] <= 1234 {
		t.Fatalf("maxTimeMS values %v, want the caller's 1234 then the driver's", values)
	}
}
