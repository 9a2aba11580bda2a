package driver_test

import (
	"context"
	"errors"
	"net"
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

// Rule-by-rule tests of the retryable-writes, retryable-reads and client
// backpressure specifications, each through driver.Connect against
// mongotest, for the rules the unified suites and prose tests leave
// unchecked.

// serverCommands returns the commands named name that s received.
func serverCommands(s *mongotest.Server, name string) []mongotest.Command {
	var out []mongotest.Command
	for _, c := range s.Commands() {
		if c.Name == name {
			out = append(out, c)
		}
	}
	return out
}

// scriptHello makes s answer every hello (the handshake's and the
// monitor's) with its current hello reply, with the fields of set in
// place of its own and less the fields drop names, as a server that
// changed under the driver would. The monitor falls back to polling,
// since the reply carries no topologyVersion.
func scriptHello(t *testing.T, c *driver.Client, s *mongotest.Server, set bson.D, drop ...string) {
	t.Helper()
	reply, err := c.RunCommand(testCtx(t), "admin", bson.D{{Key: "hello", Value: 1}})
	if err != nil {
		t.Fatal(err)
	}
	skip := map[string]bool{"ok": true, "$clusterTime": true, "operationTime": true, "topologyVersion": true}
	for _, d := range drop {
		skip[d] = true
	}
	for _, e := range set {
		skip[e.Key] = true
	}
	els, err := reply.Elements()
	if err != nil {
		t.Fatal(err)
	}
	st, b := bson.AppendDocumentStart(nil)
	for _, e := range els {
		if !skip[e.Key()] {
			b = append(b, e...)
		}
	}
	for _, e := range set {
		v, err := bson.Marshal(bson.D{e})
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, v[4:len(v)-1]...)
	}
	b, _ = bson.AppendDocumentEnd(b, st)
	h := func(context.Context, *mongotest.Server, *mongotest.Request) (bson.Raw, error) { return b, nil }
	for _, name := range []string{"hello", "isMaster", "ismaster"} {
		s.Handle(name, h)
		t.Cleanup(func() { s.Handle(name, nil) })
	}
}

// Retryable writes, "Executing Retryable Write Commands": when the server
// selected for a retry does not support retryable writes, retrying is not
// possible and the previous attempt's error is raised. The write must not
// be sent again (without a txnNumber it could be applied twice).
func TestRetryWriteNotResentToServerWithoutRetryableWrites(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 1, mongotest.ReplicaSetOptions{})
	prim := rs.Primary()
	t.Cleanup(prim.ClearFailPoints)
	c, h := hookClient(t, rs.URI()+"&retryWrites=true"+fastHeartbeat)
	ctx := testCtx(t)
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	// The first attempt's connection closes; from then on the server
	// answers hello without logicalSessionTimeoutMinutes, so the retry's
	// new connection finds a server without retryable writes.
	h.onFailed = onceFor(func(e *event.CommandFailed) bool { return e.CommandName == "insert" }, func() {
		scriptHello(t, c, prim, nil, "logicalSessionTimeoutMinutes")
	})
	setFP(t, prim, times(1), bson.D{{Key: "failCommands", Value: bson.A{"insert"}}, {Key: "closeConnection", Value: true}})
	_, err := c.Database("retry").Collection("c").InsertOne(ctx, bson.D{{Key: "x", Value: 1}})
	var ne *driver.NetworkError
	if !errors.As(err, &ne) {
		t.Errorf("insert: %v, want the first attempt's network error", err)
	}
	if n := len(serverCommands(prim, "insert")); n != 1 {
		t.Errorf("the server received %d inserts, want 1: the retry must not be sent", n)
	}
}

// Client backpressure, "Interaction with Other Retry Policies": once an
// overload error came, the retries of any retry policy are capped at
// maxAdaptiveRetries, with CSOT too: "If CSOT is enabled and a command has
// been retried at least MAX_RETRIES times, it MUST NOT be retried
// further", even when the later errors are not overload errors (which
// CSOT alone would retry until timeoutMS runs out).
func TestRetryOverloadCapsLaterRetriesUnderTimeoutMS(t *testing.T) {
	overload := bson.A{"RetryableError", "SystemOverloadedError"}
	for _, tc := range []struct {
		command string
		labels  bson.A // the non-overload error's labels
		run     func(ctx context.Context, coll *driver.Collection) error
	}{
		{"find", nil, func(ctx context.Context, coll *driver.Collection) error {
			return coll.FindOne(ctx, bson.D{}).Err()
		}},
		{"insert", bson.A{"RetryableWriteError"}, func(ctx context.Context, coll *driver.Collection) error {
			_, err := coll.InsertOne(ctx, bson.D{{Key: "x", Value: 1}})
			return err
		}},
	} {
		t.Run(tc.command, func(t *testing.T) {
			rs := mongotest.NewReplicaSet(t, 1, mongotest.ReplicaSetOptions{})
			prim := rs.Primary()
			t.Cleanup(prim.ClearFailPoints)
			// A generous timeoutMS: the operation must stop at the cap long
			// before it runs out.
			c, h := hookClient(t, rs.URI()+"&timeoutMS=5000")
			driver.SetOverloadBackoff(c, func() float64 { return 0 }, (&sleeps{}).sleep)
			if err := c.Ping(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			// HostUnreachable (6) is retryable and leaves the server known.
			h.onFailed = onceFor(func(e *event.CommandFailed) bool { return e.CommandName == tc.command }, func() {
				data := bson.D{{Key: "failCommands", Value: bson.A{tc.command}}, {Key: "errorCode", Value: 6}}
				if tc.labels != nil {
					data = append(data, bson.E{Key: "errorLabels", Value: tc.labels})
				}
				setFP(t, prim, "alwaysOn", data)
			})
			setFP(t, prim, times(1), bson.D{{Key: "failCommands", Value: bson.A{tc.command}},
				{Key: "errorCode", Value: 6}, {Key: "errorLabels", Value: overload}})
			h.Reset()
			err := tc.run(testCtx(t), c.Database("retry").Collection("c"))
			if code := errCode(err); code != 6 {
				t.Errorf("%s: %v, want the last error (code 6)", tc.command, err)
			}
			if n := len(started(h.Recorder, tc.command)); n != 3 {
				t.Errorf("%d attempts, want 3 (the first and maxAdaptiveRetries = 2 retries)", n)
			}
		})
	}
}

// Retryable writes, "RetryableWriteError Labels": a server older than 4.4
// does not label its errors, so the driver adds RetryableWriteError for
// the retryable codes in the reply's top-level code (mongod or mongos)
// and in writeConcernError.code from a mongod only; never for a mongos's
// write concern error, never for a 4.4+ server's response. The label
// decides the retry, and the application sees it on the error.
func TestRetryWritePre44Labels(t *testing.T) {
	pre44 := mongotest.Options{MaxWireVersion: 8, Version: "4.2.0"}
	wce91 := bson.D{{Key: "code", Value: 91}, {Key: "errmsg", Value: "shutting down"}}
	for _, tc := range []struct {
		name      string
		mongos    bool
		opts      mongotest.Options
		data      bson.D // the fail point's data, failing insert
		attempts  int
		wantLabel bool
	}{
		{"mongod top-level code", false, pre44, bson.D{{Key: "errorCode", Value: 189}}, 2, true},
		// HostUnreachable, as a mongos returns when it cannot reach a shard
		// (a state change error such as 189 would mark the mongos Unknown,
		// and the retry would wait for the monitor).
		{"mongos top-level code", true, pre44, bson.D{{Key: "errorCode", Value: 6}}, 2, true},
		{"mongod writeConcernError", false, pre44, bson.D{{Key: "writeConcernError", Value: wce91}}, 2, true},
		{"mongos writeConcernError", true, pre44,
			bson.D{{Key: "writeConcernError", Value: bson.D{{Key: "code", Value: 6}, {Key: "errmsg", Value: "unreachable"}}}}, 1, false},
		{"mongod writeConcernError, other code", false, pre44,
			bson.D{{Key: "writeConcernError", Value: bson.D{{Key: "code", Value: 100}, {Key: "errmsg", Value: "no"}}}}, 1, false},
		{"4.4+ mongod, no label", false, mongotest.Options{}, bson.D{{Key: "errorCode", Value: 189}}, 1, false},
		{"4.4+ mongod writeConcernError, no label", false, mongotest.Options{}, bson.D{{Key: "writeConcernError", Value: wce91}}, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var srv *mongotest.Server
			var uri string
			if tc.mongos {
				sc := mongotest.NewShardedCluster(t, 1, mongotest.ShardedClusterOptions{Options: tc.opts})
				srv, uri = sc.Mongoses()[0], sc.URI()+"&directConnection=false"
			} else {
				rs := mongotest.NewReplicaSet(t, 1, mongotest.ReplicaSetOptions{Options: tc.opts})
				srv, uri = rs.Primary(), rs.URI()
			}
			t.Cleanup(srv.ClearFailPoints)
			c, rec := sessClient(t, uri+"&retryWrites=true"+fastHeartbeat)
			if err := c.Ping(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			// errorLabels: [] keeps the labels mongotest adds as a 4.4+
			// server does off the reply, as a 4.2 server sends it.
			setFP(t, srv, times(2), append(bson.D{{Key: "failCommands", Value: bson.A{"insert"}},
				{Key: "errorLabels", Value: bson.A{}}}, tc.data...))
			rec.Reset()
			_, err := c.Database("retry").Collection("c").InsertOne(testCtx(t), bson.D{{Key: "x", Value: 1}})
			if err == nil {
				t.Fatal("insert succeeded, want an error")
			}
			if n := len(started(rec, "insert")); n != tc.attempts {
				t.Errorf("%d attempts, want %d: %v", n, tc.attempts, err)
			}
			if got := driver.HasErrorLabel(err, "RetryableWriteError"); got != tc.wantLabel {
				t.Errorf("RetryableWriteError label %v, want %v: %v", got, tc.wantLabel, err)
			}
		})
	}
}

// Retryable writes, "Supported Write Operations": a bulk write's
// retryability is decided for each command after the split, on the
// statements it carries. With maxWriteBatchSize 2, an ordered bulk write
// of two updateOne and an updateMany sends [updateOne, updateOne], which
// takes a txnNumber and is retried, then [updateMany], which takes none;
// unordered, [updateMany, updateOne] takes none and [updateOne] one.
// (A failure of a command stops a bulk write, ordered or not, so only the
// ordered case fails a command, its first, to see the retry.)
func TestRetryBulkWriteEligibilityPerCommand(t *testing.T) {
	one := func(x int) driver.WriteModel {
		return &driver.UpdateOneModel{Filter: bson.D{{Key: "x", Value: x}}, Update: bson.D{{Key: "$set", Value: bson.D{{Key: "y", Value: 1}}}}}
	}
	many := &driver.UpdateManyModel{Filter: bson.D{}, Update: bson.D{{Key: "$set", Value: bson.D{{Key: "z", Value: 1}}}}}
	for _, tc := range []struct {
		name    string
		ordered bool
		models  []driver.WriteModel
		fail    bool   // the first command fails once, retryably
		txn     []bool // per update command sent, retries included
	}{
		{"ordered", true, []driver.WriteModel{one(1), one(2), many}, true, []bool{true, true, false}},
		{"unordered", false, []driver.WriteModel{many, one(1), one(2)}, false, []bool{false, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := mongotest.NewReplicaSet(t, 1, mongotest.ReplicaSetOptions{})
			prim := rs.Primary()
			t.Cleanup(prim.ClearFailPoints)
			scriptHello(t, dial(t, rs.URI(), nil), prim, bson.D{{Key: "maxWriteBatchSize", Value: int32(2)}})
			c, rec := sessClient(t, rs.URI()+"&retryWrites=true")
			coll := c.Database("retry").Collection("c")
			if _, err := coll.InsertMany(testCtx(t), []any{bson.D{{Key: "x", Value: 1}}, bson.D{{Key: "x", Value: 2}}}); err != nil {
				t.Fatal(err)
			}
			// HostUnreachable with the label: retryable, and the server stays
			// known. A command without a txnNumber is not retried.
			if tc.fail {
				setFP(t, prim, times(1), bson.D{{Key: "failCommands", Value: bson.A{"update"}}, {Key: "errorCode", Value: 6},
					{Key: "errorLabels", Value: bson.A{"RetryableWriteError"}}})
			}
			rec.Reset()
			_, err := coll.BulkWrite(testCtx(t), tc.models, &driver.BulkWriteOptions{Ordered: &tc.ordered})
			cmds := started(rec, "update")
			var got []bool
			for _, e := range cmds {
				_, terr := e.Command.LookupErr("txnNumber")
				got = append(got, terr == nil)
			}
			if len(got) != len(tc.txn) {
				t.Fatalf("%d update commands (txnNumber: %v), want %d (%v); bulk write: %v", len(got), got, len(tc.txn), tc.txn, err)
			}
			for i := range got {
				if got[i] != tc.txn[i] {
					t.Errorf("update command %d carries a txnNumber: %v, want %v (all: %v)", i, got[i], tc.txn[i], got)
				}
			}
			if err != nil {
				t.Errorf("bulk write: %v", err)
			}
		})
	}
}

// Retryable writes, "RetryableWriteError Labels": a network error while
// establishing a connection for a retryable write gets the
// RetryableWriteError label when retryWrites is on, whatever the server
// (nothing was sent; the server's support is not known yet). Here both
// attempts' connections fail during authentication (saslContinue closes
// the connection), so the first error is returned: it must carry the
// label. A read's error, and a write's under retryWrites=false, do not.
func TestRetryWriteLabelOnConnectionEstablishmentError(t *testing.T) {
	for _, tc := range []struct {
		name, query string
		write       bool
		wantLabel   bool
		attempts    int // connections that reached saslContinue
	}{
		{"write", "&retryWrites=true", true, true, 2},
		{"write, retryWrites=false", "&retryWrites=false", true, false, 1},
		{"read", "&retryWrites=true", false, false, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := mongotest.NewReplicaSet(t, 1, mongotest.ReplicaSetOptions{Options: mongotest.Options{Auth: true}})
			prim := rs.Primary()
			if err := prim.AddUser("admin", "ada", "pw-Retry-1"); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(prim.ClearFailPoints)
			// The monitor does not authenticate: only the operation's
			// connections meet the fail point.
			setFP(t, prim, times(2), bson.D{{Key: "failCommands", Value: bson.A{"saslContinue"}}, {Key: "closeConnection", Value: true}})
			uri := strings.Replace(rs.URI(), "mongodb://", "mongodb://ada:pw-Retry-1@", 1) + tc.query + fastHeartbeat
			c := dial(t, uri, nil)
			coll := c.Database("retry").Collection("c")
			var err error
			if tc.write {
				_, err = coll.InsertOne(testCtx(t), bson.D{{Key: "x", Value: 1}})
			} else {
				err = coll.FindOne(testCtx(t), bson.D{}).Err()
			}
			var ne *driver.NetworkError
			if !errors.As(err, &ne) {
				t.Fatalf("%v, want a network error", err)
			}
			if got := driver.HasErrorLabel(err, "RetryableWriteError"); got != tc.wantLabel {
				t.Errorf("RetryableWriteError label %v, want %v: %v", got, tc.wantLabel, err)
			}
			// A handshake's network error is retryable (retryable-reads,
			// "Retryable Error"; retryable-writes, the label above).
			if n := len(serverCommands(prim, "saslContinue")); n != tc.attempts {
				t.Errorf("%d saslContinue, want %d", n, tc.attempts)
			}
			// A handshake's network error is retryable (retryable-reads,
			// "Retryable Error"; retryable-writes, the label above).
			if n := len(serverCommands(prim, "saslContinue")); n != tc.attempts {
				t.Errorf("%d saslContinue, want %d", n, tc.attempts)
			}
		})
	}
}

// Retryable writes, "Executing Retryable Write Commands": a retry resends
// the command with the same transaction ID, in an explicit session as in
// an implicit one, and the session's next write takes a greater
// txnNumber. Each attempt is built again (a command started event of its
// own) and, under timeoutMS, with its own maxTimeMS, from what is left of
// the budget (client-side-operations-timeout).
func TestRetryExplicitSessionKeepsTransactionID(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 1, mongotest.ReplicaSetOptions{})
	prim := rs.Primary()
	t.Cleanup(prim.ClearFailPoints)
	c, rec := sessClient(t, rs.URI()+"&retryWrites=true&timeoutMS=5000")
	coll := c.Database("retry").Collection("c")
	s := startSession(t, c, nil)
	ctx := driver.NewSessionContext(testCtx(t), s)
	// HostUnreachable, labelled: retryable, and the server stays known. The
	// fail point blocks first, so that the retry has less budget left.
	setFP(t, prim, times(1), bson.D{{Key: "failCommands", Value: bson.A{"insert", "findAndModify"}}, {Key: "errorCode", Value: 6},
		{Key: "errorLabels", Value: bson.A{"RetryableWriteError"}}, {Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: 50}})
	rec.Reset()
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "x", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	setFP(t, prim, times(1), bson.D{{Key: "failCommands", Value: bson.A{"findAndModify"}}, {Key: "errorCode", Value: 6},
		{Key: "errorLabels", Value: bson.A{"RetryableWriteError"}}})
	if err := coll.FindOneAndUpdate(ctx, bson.D{{Key: "x", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "y", Value: 1}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	ins, fam := started(rec, "insert"), started(rec, "findAndModify")
	if len(ins) != 2 || len(fam) != 2 {
		t.Fatalf("%d inserts, %d findAndModify started, want 2 of each (a failure and its retry)", len(ins), len(fam))
	}
	lsid := ins[0].Command.Lookup("lsid").Document()
	txn := func(e *event.CommandStarted) int64 { return e.Command.Lookup("txnNumber").Int64() }
	for i, e := range append(ins, fam...) {
		if l, ok := e.Command.Lookup("lsid").DocumentOK(); !ok || !rawEqual(l, lsid) {
			t.Errorf("command %d: lsid %v, want the session's %v", i, e.Command.Lookup("lsid"), lsid)
		}
	}
	if txn(ins[0]) <= 0 || txn(ins[1]) != txn(ins[0]) {
		t.Errorf("insert txnNumbers %d and %d, want one positive number for both attempts", txn(ins[0]), txn(ins[1]))
	}
	if txn(fam[0]) <= txn(ins[0]) || txn(fam[1]) != txn(fam[0]) {
		t.Errorf("findAndModify txnNumbers %d and %d after the insert's %d, want one greater number", txn(fam[0]), txn(fam[1]), txn(ins[0]))
	}
	if ins[0].RequestID == ins[1].RequestID {
		t.Errorf("both attempts have requestId %d, want one each", ins[0].RequestID)
	}
	m0, ok0 := ins[0].Command.Lookup("maxTimeMS").AsInt64OK()
	m1, ok1 := ins[1].Command.Lookup("maxTimeMS").AsInt64OK()
	if !ok0 || !ok1 || m1 >= m0 {
		t.Errorf("maxTimeMS %d then %d, want each attempt's from the budget left (the retry's smaller)", m0, m1)
	}
}

// Retryable reads, "Supported Read Operations": the enumeration commands
// and aggregates without a write stage are retryable reads, listing
// search indexes (an aggregate of $listSearchIndexes) among them.
// mongotest has no search, so the retry fails with SearchNotEnabled: what
// counts is that it is sent.
func TestRetryReadListSearchIndexes(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 1, mongotest.ReplicaSetOptions{})
	prim := rs.Primary()
	t.Cleanup(prim.ClearFailPoints)
	c, rec := sessClient(t, rs.URI()+"&retryReads=true")
	if err := c.Ping(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	setFP(t, prim, times(1), bson.D{{Key: "failCommands", Value: bson.A{"aggregate"}}, {Key: "errorCode", Value: 6}})
	rec.Reset()
	_, err := c.Database("retry").Collection("c").SearchIndexes().List(testCtx(t), nil)
	if code := errCode(err); code != 31082 {
		t.Errorf("list: %v, want the retry's SearchNotEnabled (31082)", err)
	}
	if n := len(started(rec, "aggregate")); n != 2 {
		t.Errorf("%d aggregates started, want 2 (a failure and its retry)", n)
	}
}

// Client backpressure, "Overload retry policy" step 4: with
// enableOverloadRetargeting, a retry after an overload error avoids the
// server that returned it, also when the error came while establishing
// the attempt's connection (CMAP labels such network errors
// SystemOverloadedError and RetryableError, and SDAM leaves the server
// selectable). The primary closes the find's new connection on accept;
// with primaryPreferred the retry must go to a secondary.
func TestRetryOverloadRetargetsAfterConnectionEstablishmentError(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 2, mongotest.ReplicaSetOptions{})
	prim := rs.Primary()
	c, rec := bpClient(t, rs.URI()+"&readPreference=primaryPreferred&enableOverloadRetargeting=true", 0, &sleeps{})
	waitForKind(t, c, "RSPrimary", 1)
	waitForKind(t, c, "RSSecondary", 1)
	rec.Reset()
	prim.CloseNextConnections(1)
	if err := c.Database("bp").Collection("c").FindOne(testCtx(t), bson.D{}).Err(); err != nil && !errors.Is(err, driver.ErrNoDocuments) {
		t.Fatal(err)
	}
	failed := eventtest.Of[*event.ConnectionCheckOutFailed](rec)
	if len(failed) != 1 || failed[0].Address != prim.Addr() {
		t.Fatalf("%d failed checkouts (%v), want one, on the primary %s", len(failed), failed, prim.Addr())
	}
	finds := started(rec, "find")
	if len(finds) != 1 {
		t.Fatalf("%d finds started, want 1 (the retry's)", len(finds))
	}
	if got := net.JoinHostPort(finds[0].ServerHost, strconv.Itoa(int(finds[0].ServerPort))); got == prim.Addr() {
		t.Errorf("the retry went to the primary %s, want a secondary", got)
	}
}

// Retryable writes, "Supported Server Versions": a write whose first
// server does not support retryable writes (a standalone) runs as if
// retryWrites were off and "MUST not retry the command under any
// circumstances", also when it never reached the server: here the second
// of two inserts finds the pool cleared (PoolClearedError) by the first
// one's ShutdownInProgress. A read's errors are retried on a standalone
// as on any server.
func TestRetryWriteNotRetriedOnStandalone(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	t.Cleanup(srv.ClearFailPoints)
	c, rec := sessClient(t, srv.URI()+"?maxPoolSize=1&retryWrites=true&retryReads=true"+fastHeartbeat)
	coll := c.Database("retry").Collection("c")
	ctx := testCtx(t)
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		command string
		run     func() error
		retried bool
	}{
		{"insert", func() error { _, err := coll.InsertOne(ctx, bson.D{}); return err }, false},
		{"find", func() error {
			if err := coll.FindOne(ctx, bson.D{}).Err(); err != nil && !errors.Is(err, driver.ErrNoDocuments) {
				return err
			}
			return nil
		}, true},
	} {
		t.Run(tc.command, func(t *testing.T) {
			setFP(t, srv, times(1), bson.D{{Key: "failCommands", Value: bson.A{tc.command}}, {Key: "errorCode", Value: 91},
				{Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: 1500}})
			rec.Reset()
			errs := make([]error, 2)
			done := make(chan int, 1)
			go func() { errs[0] = tc.run(); done <- 0 }()
			// The second starts once the first holds the only connection.
			deadline := time.Now().Add(5 * time.Second)
			for len(started(rec, tc.command)) == 0 && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			errs[1] = tc.run()
			<-done
			if tc.retried && errs[0] != nil {
				t.Errorf("first %s: %v, want it retried", tc.command, errs[0])
			}
			if !tc.retried && errCode(errs[0]) != 91 {
				t.Errorf("first %s: %v, want ShutdownInProgress (91), not retried", tc.command, errs[0])
			}
			var pce *driver.PoolClearedError
			if got := errors.As(errs[1], &pce); got == tc.retried {
				t.Errorf("second %s: %v; want a PoolClearedError: %v", tc.command, errs[1], !tc.retried)
			}
			if !tc.retried {
				if n := len(started(rec, tc.command)); n != 1 {
					t.Errorf("%d %s commands started, want 1", n, tc.command)
				}
			}
		})
	}
}

// Retryable reads and writes: "If the driver cannot select a server for a
// retry attempt ... drivers MUST raise the previous retryable error", not
// the selection error. The primary answers ShutdownInProgress, then drops
// off the network, so the retry finds no server within
// serverSelectionTimeoutMS.
func TestRetryReselectionFailureReturnsPreviousError(t *testing.T) {
	for _, command := range []string{"insert", "find"} {
		t.Run(command, func(t *testing.T) {
			rs := mongotest.NewReplicaSet(t, 1, mongotest.ReplicaSetOptions{})
			prim := rs.Primary()
			t.Cleanup(prim.ClearFailPoints)
			c, h := hookClient(t, rs.URI()+"&serverSelectionTimeoutMS=1000"+fastHeartbeat)
			coll := c.Database("retry").Collection("c")
			if err := c.Ping(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			h.onFailed = onceFor(func(e *event.CommandFailed) bool { return e.CommandName == command }, func() {
				if err := rs.Partition(0); err != nil {
					t.Error(err)
				}
			})
			setFP(t, prim, times(1), bson.D{{Key: "failCommands", Value: bson.A{command}}, {Key: "errorCode", Value: 91},
				{Key: "errorLabels", Value: bson.A{"RetryableWriteError"}}})
			var err error
			if command == "insert" {
				_, err = coll.InsertOne(testCtx(t), bson.D{})
			} else {
				err = coll.FindOne(testCtx(t), bson.D{}).Err()
			}
			if code := errCode(err); code != 91 {
				t.Errorf("%s: %v, want the first attempt's ShutdownInProgress (91)", command, err)
			}
			var se *driver.SelectionError
			if errors.As(err, &se) {
				t.Errorf("%s: the retry's selection error came back: %v", command, err)
			}
		})
	}
}

// Client backpressure, backoff step 3.6: a positive baseBackoffMS from
// the server replaces the base backoff, and MAX_BACKOFF (10 s) still caps
// the result. A huge value (1e300 ms, scripted as a server's overload
// reply) once overflowed into a negative duration: no backoff at all.
func TestRetryOverloadHugeBaseBackoffMSIsCapped(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	reply, _ := bson.Marshal(bson.D{{Key: "ok", Value: 0}, {Key: "code", Value: 462}, {Key: "codeName", Value: "IngressRequestRateLimitExceeded"},
		{Key: "errmsg", Value: "Rate limiter 'ingressRequestRateLimiter' rate exceeded"}, {Key: "errorLabels", Value: overloadLabels},
		{Key: "baseBackoffMS", Value: 1e300}})
	srv.Handle("insert", func(context.Context, *mongotest.Server, *mongotest.Request) (bson.Raw, error) { return reply, nil })
	sl := &sleeps{} // records the backoffs without waiting
	c, _ := bpClient(t, srv.URI(), 1, sl)
	// A deadline past the two backoffs, which a shorter one would cut
	// short (no retry whose backoff outlasts the deadline).
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := c.Database("bp").Collection("c").InsertOne(ctx, bson.D{{Key: "a", Value: 1}}); err == nil {
		t.Fatal("insert succeeded, want the overload error")
	}
	got := sl.take()
	if len(got) != 2 || got[0] != 10*time.Second || got[1] != 10*time.Second {
		t.Errorf("backoffs %v, want [10s 10s] (jitter 1, capped at MAX_BACKOFF)", got)
	}
}
