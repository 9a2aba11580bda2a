package driver_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
	"github.com/mongoscope/mongoscope/mongotest"
)

// The retryable-reads (retryable-reads/tests/README.md) and
// retryable-writes (retryable-writes/tests/README.md) prose tests that
// mongotest can run, through the public API.

// fastHeartbeat lowers heartbeatFrequencyMS, as the retryable reads and
// writes test READMEs suggest: a shutdown error (91) marks the server
// Unknown, and the retry waits for the monitor to find it again.
const fastHeartbeat = "&heartbeatFrequencyMS=500"

// hookRecorder records events and calls onFailed and onSucceeded (when
// set) before recording a failed or succeeded command.
type hookRecorder struct {
	*eventtest.Recorder
	mu          sync.Mutex
	onFailed    func(*event.CommandFailed)
	onSucceeded func(*event.CommandSucceeded)
}

func (h *hookRecorder) CommandFailed(ctx context.Context, e *event.CommandFailed) {
	h.mu.Lock()
	f := h.onFailed
	h.mu.Unlock()
	if f != nil {
		f(e)
	}
	h.Recorder.CommandFailed(ctx, e)
}

func (h *hookRecorder) CommandSucceeded(ctx context.Context, e *event.CommandSucceeded) {
	h.mu.Lock()
	f := h.onSucceeded
	h.mu.Unlock()
	if f != nil {
		f(e)
	}
	h.Recorder.CommandSucceeded(ctx, e)
}

// once returns f to run at most once, for the first event it accepts.
func onceFor[E any](accept func(E) bool, f func()) func(E) {
	var o sync.Once
	return func(e E) {
		if accept(e) {
			o.Do(f)
		}
	}
}

func hookClient(t *testing.T, uri string) (*driver.Client, *hookRecorder) {
	t.Helper()
	h := &hookRecorder{Recorder: &eventtest.Recorder{}}
	return dial(t, uri, &driver.ClientOptions{Monitors: []any{h}}), h
}

func setFP(t *testing.T, s *mongotest.Server, mode any, data bson.D) {
	t.Helper()
	if err := s.SetFailPoint(bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: mode},
		{Key: "data", Value: data}}); err != nil {
		t.Error(err)
	}
}

// waitForKind waits until c knows n servers of the kind.
func waitForKind(t *testing.T, c *driver.Client, kind string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		k := 0
		for _, s := range c.Topology().Servers {
			if s.Kind == kind {
				k++
			}
		}
		if k >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d servers of kind %s known, want %d: %v", k, kind, n, c.Topology())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func errCode(err error) int32 {
	var ce *driver.CommandError
	if errors.As(err, &ce) {
		return ce.Code
	}
	var wce *driver.WriteConcernError
	if errors.As(err, &wce) {
		return wce.Code
	}
	return 0
}

// Retryable reads prose 1 and retryable writes prose 2: an operation whose
// checkout fails with a PoolClearedError is retried.
func TestRetryProsePoolClearedError(t *testing.T) {
	for _, tc := range []struct {
		name, command string
		run           func(ctx context.Context, coll *driver.Collection) error
	}{
		{"reads", "find", func(ctx context.Context, coll *driver.Collection) error {
			err := coll.FindOne(ctx, bson.D{}).Err()
			if errors.Is(err, driver.ErrNoDocuments) {
				return nil
			}
			return err
		}},
		{"writes", "insert", func(ctx context.Context, coll *driver.Collection) error {
			_, err := coll.InsertOne(ctx, bson.D{})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := mongotest.NewReplicaSet(t, 1, mongotest.ReplicaSetOptions{})
			c, rec := sessClient(t, rs.URI()+"&maxPoolSize=1&retryReads=true&retryWrites=true"+fastHeartbeat)
			coll := c.Database("retry").Collection("c")
			ctx := testCtx(t)
			if err := c.Ping(ctx); err != nil {
				t.Fatal(err)
			}
			data := bson.D{{Key: "failCommands", Value: bson.A{tc.command}}, {Key: "errorCode", Value: 91},
				{Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: 1000}}
			if tc.command == "insert" {
				data = append(data, bson.E{Key: "errorLabels", Value: bson.A{"RetryableWriteError"}})
			}
			setFP(t, rs.Primary(), times(1), data)
			t.Cleanup(rs.Primary().ClearFailPoints)
			rec.Reset()
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i := range errs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = tc.run(ctx, coll)
				}()
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("operation %d: %v", i, err)
				}
			}
			var seq []string
			for _, e := range rec.Events() {
				switch e := e.(type) {
				case *event.ConnectionCheckedOut:
					seq = append(seq, "checkedOut")
				case *event.PoolCleared:
					seq = append(seq, "cleared")
				case *event.ConnectionCheckOutFailed:
					seq = append(seq, "failed:"+string(e.Reason))
				}
			}
			want := []string{"checkedOut", "cleared", "failed:" + string(event.ReasonCheckOutConnectionError)}
			for i, w := range want {
				if i >= len(seq) || seq[i] != w {
					t.Errorf("pool events %v, want them to begin %v", seq, want)
					break
				}
			}
			if n := len(started(rec, tc.command)); n != 3 {
				t.Errorf("%d %s commands started, want 3", n, tc.command)
			}
		})
	}
}

// Retryable reads prose 2 and retryable writes prose 4 and 5: on a
// sharded cluster a retry goes to another mongos when there is one, and
// to the same one otherwise.
func TestRetryProseShardedDeprioritization(t *testing.T) {
	for _, tc := range []struct {
		name, command string
		run           func(ctx context.Context, coll *driver.Collection) error
	}{
		{"reads", "find", func(ctx context.Context, coll *driver.Collection) error {
			err := coll.FindOne(ctx, bson.D{}).Err()
			if errors.Is(err, driver.ErrNoDocuments) {
				return nil
			}
			return err
		}},
		{"writes", "insert", func(ctx context.Context, coll *driver.Collection) error {
			_, err := coll.InsertOne(ctx, bson.D{})
			return err
		}},
	} {
		t.Run(tc.name+"/two mongoses", func(t *testing.T) {
			sc := mongotest.NewShardedCluster(t, 2, mongotest.ShardedClusterOptions{})
			data := bson.D{{Key: "failCommands", Value: bson.A{tc.command}}, {Key: "errorCode", Value: 6}}
			if tc.command == "insert" {
				data = append(data, bson.E{Key: "errorLabels", Value: bson.A{"RetryableWriteError"}})
			}
			for _, m := range sc.Mongoses() {
				setFP(t, m, times(1), data)
			}
			c, rec := sessClient(t, sc.URI())
			waitForKind(t, c, "Mongos", 2)
			if err := tc.run(testCtx(t), c.Database("retry").Collection("c")); err == nil {
				t.Fatal("the operation succeeded, want it to fail on both mongoses")
			}
			failed := eventtest.Of[*event.CommandFailed](rec)
			if len(failed) != 2 {
				t.Fatalf("%d failed commands, want 2", len(failed))
			}
			if failed[0].ServerPort == failed[1].ServerPort && failed[0].ServerHost == failed[1].ServerHost {
				t.Errorf("both attempts on %s:%d, want different mongoses", failed[0].ServerHost, failed[0].ServerPort)
			}
		})
		t.Run(tc.name+"/one mongos", func(t *testing.T) {
			sc := mongotest.NewShardedCluster(t, 1, mongotest.ShardedClusterOptions{})
			data := bson.D{{Key: "failCommands", Value: bson.A{tc.command}}, {Key: "errorCode", Value: 6}}
			if tc.command == "insert" {
				data = append(data, bson.E{Key: "errorLabels", Value: bson.A{"RetryableWriteError"}}, bson.E{Key: "closeConnection", Value: true})
			}
			setFP(t, sc.Mongoses()[0], times(1), data)
			c, rec := sessClient(t, sc.URI()+"&directConnection=false")
			if err := tc.run(testCtx(t), c.Database("retry").Collection("c")); err != nil {
				t.Fatal(err)
			}
			failed := eventtest.Of[*event.CommandFailed](rec)
			succeeded := started(rec, tc.command)
			if len(failed) != 1 || len(succeeded) != 2 {
				t.Fatalf("%d failed, %d started: want 1 failure and a retry", len(failed), len(succeeded))
			}
			if failed[0].ServerPort != succeeded[1].ServerPort {
				t.Errorf("retry on port %d after %d, want the same mongos", succeeded[1].ServerPort, failed[0].ServerPort)
			}
		})
	}
}

// Retryable reads prose 3.2: a read retried for an error that is not an
// overload error goes back to the same replica set member (3.1 and 3.3
// are TestBackpressureOverloadRetargeting).
func TestRetryProseReplicaSetSameServer(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{})
	c, rec := sessClient(t, rs.URI()+"&retryReads=true&readPreference=primaryPreferred")
	ctx := testCtx(t)
	waitForKind(t, c, "RSPrimary", 1)
	waitForKind(t, c, "RSSecondary", 2)
	setFP(t, rs.Primary(), times(1), bson.D{{Key: "failCommands", Value: bson.A{"find"}}, {Key: "errorCode", Value: 6},
		{Key: "errorLabels", Value: bson.A{"RetryableError"}}})
	t.Cleanup(rs.Primary().ClearFailPoints)
	rec.Reset()
	if err := c.Database("retry").Collection("c").FindOne(ctx, bson.D{}).Err(); err != nil && !errors.Is(err, driver.ErrNoDocuments) {
		t.Fatal(err)
	}
	failed := eventtest.Of[*event.CommandFailed](rec)
	ok := eventtest.Of[*event.CommandSucceeded](rec)
	if len(failed) != 1 || len(ok) != 1 {
		t.Fatalf("%d failed, %d succeeded: want one each", len(failed), len(ok))
	}
	if failed[0].ServerPort != ok[0].ServerPort {
		t.Errorf("retry on port %d after %d, want the same server", ok[0].ServerPort, failed[0].ServerPort)
	}
}

// Retryable writes prose 3: a retry failing with NoWritesPerformed
// returns the first attempt's error (a write concern error, 91).
func TestRetryProseWriteConcernErrorThenNoWritesPerformed(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 1, mongotest.ReplicaSetOptions{})
	prim := rs.Primary()
	t.Cleanup(prim.ClearFailPoints)
	c, h := hookClient(t, rs.URI()+"&retryWrites=true")
	h.onSucceeded = onceFor(func(e *event.CommandSucceeded) bool {
		wce, _ := e.Reply.Lookup("writeConcernError").DocumentOK()
		return e.CommandName == "insert" && wce.Lookup("code").Int32() == 91
	}, func() {
		setFP(t, prim, times(1), bson.D{{Key: "failCommands", Value: bson.A{"insert"}}, {Key: "errorCode", Value: 10107},
			{Key: "errorLabels", Value: bson.A{"RetryableWriteError", "NoWritesPerformed"}}})
	})
	setFP(t, prim, times(1), bson.D{{Key: "failCommands", Value: bson.A{"insert"}},
		{Key: "errorLabels", Value: bson.A{"RetryableWriteError"}}, {Key: "writeConcernError", Value: bson.D{{Key: "code", Value: 91}, {Key: "errmsg", Value: "shutting down"}}}})
	_, err := c.Database("retry").Collection("c").InsertOne(testCtx(t), bson.D{{Key: "x", Value: 1}})
	if code := errCode(err); code != 91 {
		t.Errorf("insert: %v (code %d), want the first error, 91", err, code)
	}
}

// Retryable writes prose 6 and retryable reads prose 4 and 5: the error
// returned after several, the cap of maxAdaptiveRetries once an overload
// error came, and a backoff only after overload errors.
func TestRetryProseMultipleErrors(t *testing.T) {
	overload := bson.A{"RetryableError", "SystemOverloadedError"}
	for _, tc := range []struct {
		name       string
		command    string
		first      bson.A // the first error's labels (code 91)
		second     bson.A // the following errors' labels
		secondCode int32
		wantCode   int32
		noWrites   bool // the error returned must not carry NoWritesPerformed
		attempts   int  // 0: not checked
		backoffs   int  // -1: not checked
	}{
		{"writes case 1", "insert", overload, overload, 10107, 10107, false, 3, -1},
		{"writes case 2", "insert", append(overload, "NoWritesPerformed"), append(overload, "NoWritesPerformed"), 10107, 91, false, 3, -1},
		{"writes case 3", "insert", overload, append(overload, "NoWritesPerformed"), 91, 91, true, 3, -1},
		{"writes case 4", "insert", overload, bson.A{"RetryableError", "RetryableWriteError"}, 91, 91, false, 3, -1},
		{"writes case 5", "insert", overload, bson.A{"RetryableError", "RetryableWriteError"}, 91, 91, false, 0, 1},
		{"reads 4", "find", overload, bson.A{"RetryableError"}, 91, 91, false, 3, -1},
		{"reads 5", "find", overload, bson.A{"RetryableError"}, 91, 91, false, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := mongotest.NewReplicaSet(t, 1, mongotest.ReplicaSetOptions{})
			prim := rs.Primary()
			t.Cleanup(prim.ClearFailPoints)
			c, h := hookClient(t, rs.URI()+"&retryWrites=true&retryReads=true"+fastHeartbeat)
			sl := &sleeps{}
			driver.SetOverloadBackoff(c, func() float64 { return 0.5 }, sl.sleep)
			if err := c.Ping(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			h.onFailed = onceFor(func(e *event.CommandFailed) bool {
				return e.CommandName == tc.command && e.Reply.Lookup("code").Int32() == 91
			}, func() {
				setFP(t, prim, "alwaysOn", bson.D{{Key: "failCommands", Value: bson.A{tc.command}},
					{Key: "errorCode", Value: tc.secondCode}, {Key: "errorLabels", Value: tc.second}})
			})
			setFP(t, prim, times(1), bson.D{{Key: "failCommands", Value: bson.A{tc.command}},
				{Key: "errorCode", Value: 91}, {Key: "errorLabels", Value: tc.first}})
			h.Reset()
			var err error
			coll := c.Database("retry").Collection("c")
			if tc.command == "insert" {
				_, err = coll.InsertOne(testCtx(t), bson.D{{Key: "x", Value: 1}})
			} else {
				err = coll.FindOne(testCtx(t), bson.D{}).Err()
			}
			if code := errCode(err); code != tc.wantCode {
				t.Errorf("%s: %v (code %d), want code %d", tc.command, err, code, tc.wantCode)
			}
			if tc.noWrites && driver.HasErrorLabel(err, "NoWritesPerformed") {
				t.Errorf("%s: %v carries NoWritesPerformed", tc.command, err)
			}
			if n := len(started(h.Recorder, tc.command)); tc.attempts > 0 && n != tc.attempts {
				t.Errorf("%d attempts, want %d", n, tc.attempts)
			}
			if n := len(sl.take()); tc.backoffs >= 0 && n != tc.backoffs {
				t.Errorf("%d backoffs, want %d (only after the overload error)", n, tc.backoffs)
			}
		})
	}
}
