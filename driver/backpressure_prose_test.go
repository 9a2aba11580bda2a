package driver_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
	"github.com/mongoscope/mongoscope/mongotest"
)

// The client backpressure specification's prose tests
// (client-backpressure/tests/README.md) and the overload retry policy's
// rules, through the public API against mongotest.

// overloadLabels are the labels of a retryable overload error.
var overloadLabels = bson.A{"SystemOverloadedError", "RetryableError"}

// failCommand sets a failCommand fail point on s.
func failCommand(t *testing.T, s *mongotest.Server, mode any, cmds bson.A, code int32, labels bson.A) {
	t.Helper()
	data := bson.D{{Key: "failCommands", Value: cmds}, {Key: "errorCode", Value: code}}
	if labels != nil {
		data = append(data, bson.E{Key: "errorLabels", Value: labels})
	}
	if err := s.SetFailPoint(bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: mode},
		{Key: "data", Value: data}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.ClearFailPoints)
}

func times(n int) bson.D { return bson.D{{Key: "times", Value: n}} }

// sleeps records the backoffs of a client's overload retries; real makes
// them wait as the driver would.
type sleeps struct {
	mu   sync.Mutex
	d    []time.Duration
	real bool
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	if !s.real {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *sleeps) take() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.d
	s.d = nil
	return d
}

// started returns the names of the commands named name rec saw start.
func started(rec *eventtest.Recorder, name string) []*event.CommandStarted {
	var out []*event.CommandStarted
	for _, e := range eventtest.Of[*event.CommandStarted](rec) {
		if e.CommandName == name {
			out = append(out, e)
		}
	}
	return out
}

// bpClient connects to uri, recording command events, with jitter fixed
// at j and the backoffs recorded by sl.
func bpClient(t *testing.T, uri string, j float64, sl *sleeps) (*driver.Client, *eventtest.Recorder) {
	t.Helper()
	c, rec := sessClient(t, uri)
	driver.SetOverloadBackoff(c, func() float64 { return j }, sl.sleep)
	return c, rec
}

// Prose test 1: retries after an overload error wait an exponential
// backoff: with jitter 1 the two backoffs add 0.2 s + 0.4 s.
func TestBackpressureProse1ExponentialBackoff(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	sl := &sleeps{real: true}
	jitter := 0.0
	var mu sync.Mutex
	c, _ := sessClient(t, srv.URI())
	driver.SetOverloadBackoff(c, func() float64 { mu.Lock(); defer mu.Unlock(); return jitter }, sl.sleep)
	coll := c.Database("bp").Collection("c")
	failCommand(t, srv, "alwaysOn", bson.A{"insert"}, 2, overloadLabels)
	run := func() time.Duration {
		start := time.Now()
		_, err := coll.InsertOne(testCtx(t), bson.D{{Key: "a", Value: 1}})
		var ce *driver.CommandError
		if !errors.As(err, &ce) {
			t.Fatalf("insert: %v, want a server error", err)
		}
		return time.Since(start)
	}
	noBackoff := run()
	mu.Lock()
	jitter = 1
	mu.Unlock()
	withBackoff := run()
	if d := withBackoff - (noBackoff + 600*time.Millisecond); d < -600*time.Millisecond || d > 600*time.Millisecond {
		t.Errorf("with backoff %v, without %v: want about 0.6 s more", withBackoff, noBackoff)
	}
	got := sl.take()
	want := []time.Duration{0, 0, 200 * time.Millisecond, 400 * time.Millisecond}
	if len(got) != len(want) {
		t.Fatalf("backoffs %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("backoffs %v, want %v", got, want)
			break
		}
	}
}

// Prose tests 3 and 4: overload errors are retried maxAdaptiveRetries
// times (2 by default), and the error returned keeps both labels.
func TestBackpressureProse3And4MaxRetries(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	for _, tc := range []struct {
		name  string
		query string
		want  int
	}{
		{"default", "", 3},
		{"maxAdaptiveRetries=1", "maxAdaptiveRetries=1", 2},
		{"maxAdaptiveRetries=0", "maxAdaptiveRetries=0", 1},
		{"maxAdaptiveRetries=4", "maxAdaptiveRetries=4", 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sl := &sleeps{}
			c, rec := bpClient(t, srv.URI()+"?"+tc.query, 0.5, sl)
			failCommand(t, srv, "alwaysOn", bson.A{"find"}, 462, overloadLabels)
			err := c.Database("bp").Collection("c").FindOne(testCtx(t), bson.D{}).Err()
			if !driver.HasErrorLabel(err, "RetryableError") || !driver.HasErrorLabel(err, "SystemOverloadedError") {
				t.Fatalf("find: %v, want both overload labels", err)
			}
			if n := len(started(rec, "find")); n != tc.want {
				t.Errorf("%d finds started, want %d", n, tc.want)
			}
			if n := len(sl.take()); n != tc.want-1 {
				t.Errorf("%d backoffs, want %d", n, tc.want-1)
			}
		})
	}
}

// Prose test 5: a positive baseBackoffMS in the error replaces the base
// backoff of 100 ms.
func TestBackpressureProse5BaseBackoffMS(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	sl := &sleeps{real: true}
	c, rec := bpClient(t, srv.URI(), 1, sl)
	coll := c.Database("bp").Collection("c")
	failCommand(t, srv, "alwaysOn", bson.A{"insert"}, 462, overloadLabels)
	run := func() (time.Duration, error) {
		start := time.Now()
		_, err := coll.InsertOne(testCtx(t), bson.D{{Key: "a", Value: 1}})
		if err == nil {
			t.Fatal("insert succeeded, want an overload error")
		}
		return time.Since(start), err
	}
	setBase := func(ms int32) {
		if _, err := c.RunCommand(testCtx(t), "admin", bson.D{{Key: "setParameter", Value: 1}, {Key: "externalClientBaseBackoffMS", Value: ms}}); err != nil {
			t.Fatal(err)
		}
	}
	exponential, _ := run()
	defaults := sl.take()
	setBase(50)
	withBase, err := run()
	based := sl.take()
	setBase(0)
	var ce *driver.CommandError
	if !errors.As(err, &ce) || ce.Raw.Lookup("baseBackoffMS").Type == 0 {
		t.Errorf("error %v: want the server's baseBackoffMS in the reply", err)
	}
	if failed := eventtest.Of[*event.CommandFailed](rec); len(failed) == 0 {
		t.Fatal("no command failed")
	}
	if exponential < 600*time.Millisecond {
		t.Errorf("default backoff run took %v, want at least 0.6 s", exponential)
	}
	if withBase < 300*time.Millisecond || withBase >= 600*time.Millisecond {
		t.Errorf("baseBackoffMS=50 run took %v, want 0.3 s to 0.6 s", withBase)
	}
	if len(defaults) != 2 || defaults[0] != 200*time.Millisecond || defaults[1] != 400*time.Millisecond {
		t.Errorf("default backoffs %v, want [200ms 400ms]", defaults)
	}
	if len(based) != 2 || based[0] != 100*time.Millisecond || based[1] != 200*time.Millisecond {
		t.Errorf("baseBackoffMS=50 backoffs %v, want [100ms 200ms]", based)
	}
}

// A context that ends during the backoff ends the operation at once, with
// the overload error; one whose deadline comes before the backoff ends
// does not wait for it.
func TestBackpressureBackoffHonoursContext(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := sessClient(t, srv.URI())
	driver.SetOverloadBackoff(c, func() float64 { return 1 }, nil) // real sleeps of 200 ms, 400 ms
	coll := c.Database("bp").Collection("c")
	failCommand(t, srv, "alwaysOn", bson.A{"find"}, 462, overloadLabels)
	for _, tc := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
	}{
		{"canceled", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)
			return ctx, cancel
		}},
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 100*time.Millisecond)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec.Reset()
			ctx, cancel := tc.ctx()
			defer cancel()
			start := time.Now()
			err := coll.FindOne(ctx, bson.D{}).Err()
			took := time.Since(start)
			var ce *driver.CommandError
			if !errors.As(err, &ce) || ce.Code != 462 {
				t.Errorf("find: %v, want the overload error", err)
			}
			if took > 150*time.Millisecond {
				t.Errorf("find took %v, want it to end with its context", took)
			}
			if n := len(started(rec, "find")); n != 1 {
				t.Errorf("%d finds started, want 1", n)
			}
		})
	}
}

// The overload retry policy covers every command, under retryReads for
// reads, retryWrites for writes and both for runCommand; a retryable
// write keeps its session and txnNumber across the overload retries.
func TestBackpressureRetryScope(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 1, mongotest.ReplicaSetOptions{})
	prim := rs.Primary()
	type opFn func(ctx context.Context, c *driver.Client) error
	updateMany := func(ctx context.Context, c *driver.Client) error {
		_, err := c.Database("bp").Collection("c").UpdateMany(ctx, bson.D{}, bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}})
		return err
	}
	insertOne := func(ctx context.Context, c *driver.Client) error {
		_, err := c.Database("bp").Collection("c").InsertOne(ctx, bson.D{{Key: "x", Value: 1}})
		return err
	}
	ping := func(ctx context.Context, c *driver.Client) error {
		_, err := c.RunCommand(ctx, "admin", bson.D{{Key: "ping", Value: 1}})
		return err
	}
	count := func(ctx context.Context, c *driver.Client) error {
		_, err := c.Database("bp").Collection("c").CountDocuments(ctx, bson.D{})
		return err
	}
	for _, tc := range []struct {
		name    string
		query   string
		command string
		run     opFn
		retried bool
	}{
		{"updateMany", "", "update", updateMany, true},
		{"updateMany retryWrites=false", "retryWrites=false", "update", updateMany, false},
		{"updateMany retryReads=false", "retryReads=false", "update", updateMany, true},
		{"insertOne", "", "insert", insertOne, true},
		{"insertOne retryWrites=false", "retryWrites=false", "insert", insertOne, false},
		{"count", "", "aggregate", count, true},
		{"count retryReads=false", "retryReads=false", "aggregate", count, false},
		{"count retryWrites=false", "retryWrites=false", "aggregate", count, true},
		{"runCommand", "", "ping", ping, true},
		{"runCommand retryReads=false", "retryReads=false", "ping", ping, false},
		{"runCommand retryWrites=false", "retryWrites=false", "ping", ping, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sl := &sleeps{}
			c, rec := bpClient(t, rs.URI()+"&"+tc.query, 0, sl)
			failCommand(t, prim, times(2), bson.A{tc.command}, 462, overloadLabels)
			err := tc.run(testCtx(t), c)
			got := started(rec, tc.command)
			switch {
			case tc.retried && (err != nil || len(got) != 3):
				t.Fatalf("%v, %d commands started: want success on the third", err, len(got))
			case !tc.retried && (err == nil || len(got) != 1):
				t.Fatalf("%v, %d commands started: want the overload error, no retry", err, len(got))
			}
			if tc.command == "insert" && tc.retried {
				first := got[0].Command.Lookup("txnNumber")
				for _, e := range got {
					if tn := e.Command.Lookup("txnNumber"); tn.Type == 0 || tn.Int64() != first.Int64() ||
						!rawEqual(e.Command.Lookup("lsid").Document(), got[0].Command.Lookup("lsid").Document()) {
						t.Errorf("txnNumber %v, lsid %v: want the first attempt's", tn, e.Command.Lookup("lsid"))
					}
				}
			}
		})
	}
}

// An error with only one of the two labels is not an overload retry; an
// error labelled SystemOverloadedError that a retryable read may retry
// anyway is retried, and it caps the retries at maxAdaptiveRetries.
func TestBackpressureLabelsBoth(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	for _, tc := range []struct {
		name    string
		code    int32
		labels  bson.A
		started int
	}{
		{"only SystemOverloadedError", 2, bson.A{"SystemOverloadedError"}, 1},
		{"only RetryableError", 2, bson.A{"RetryableError"}, 1},
		{"both", 2, overloadLabels, 3},
		{"retryable read code, overloaded", 134, bson.A{"SystemOverloadedError"}, 3},
		{"retryable read code", 134, nil, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sl := &sleeps{}
			c, rec := bpClient(t, srv.URI(), 0, sl)
			failCommand(t, srv, "alwaysOn", bson.A{"find"}, tc.code, tc.labels)
			if err := c.Database("bp").Collection("c").FindOne(testCtx(t), bson.D{}).Err(); err == nil || errors.Is(err, driver.ErrNoDocuments) {
				t.Fatalf("find: %v, want the server's error", err)
			}
			if n := len(started(rec, "find")); n != tc.started {
				t.Errorf("%d finds started, want %d", n, tc.started)
			}
		})
	}
}

// enableOverloadRetargeting: a retry after an overload error avoids the
// server that returned it (a primaryPreferred read goes to a secondary);
// without it, the retry goes back to the primary.
func TestBackpressureOverloadRetargeting(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{})
	prim := rs.Primary()
	for _, tc := range []struct {
		query      string
		retargeted bool
	}{
		{"", false},
		{"&enableOverloadRetargeting=false", false},
		{"&enableOverloadRetargeting=true", true},
	} {
		t.Run(tc.query, func(t *testing.T) {
			sl := &sleeps{}
			c, rec := bpClient(t, rs.URI()+"&readPreference=primaryPreferred"+tc.query, 0, sl)
			ctx := testCtx(t)
			waitForKind(t, c, "RSPrimary", 1)
			waitForKind(t, c, "RSSecondary", 2)
			failCommand(t, prim, times(1), bson.A{"find"}, 462, overloadLabels)
			if err := c.Database("bp").Collection("c").FindOne(ctx, bson.D{}).Err(); err != nil && !errors.Is(err, driver.ErrNoDocuments) {
				t.Fatal(err)
			}
			finds := started(rec, "find")
			if len(finds) != 2 {
				t.Fatalf("%d finds started, want 2", len(finds))
			}
			same := finds[0].ServerHost == finds[1].ServerHost && finds[0].ServerPort == finds[1].ServerPort
			if same == tc.retargeted {
				t.Errorf("retry on %s:%d after %s:%d: retargeted %v, want %v", finds[1].ServerHost, finds[1].ServerPort,
					finds[0].ServerHost, finds[0].ServerPort, !same, tc.retargeted)
			}
		})
	}
}

// The ingress request rate limiter's real overload error (462 with both
// labels) is retried after the backoff, and the retry gets through once
// the bucket has a token again.
func TestBackpressureIngressRateLimiter(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := sessClient(t, srv.URI())
	driver.SetOverloadBackoff(c, func() float64 { return 1 }, nil)
	ctx := testCtx(t)
	ping := bson.D{{Key: "ping", Value: 1}}
	if _, err := c.RunCommand(ctx, "admin", ping); err != nil {
		t.Fatal(err)
	}
	srv.SetIngressRateLimit(10, 1) // a token each 100 ms; the first retry waits 200 ms
	t.Cleanup(func() { srv.SetIngressRateLimit(0, 0) })
	rec.Reset()
	for i := 0; i < 2; i++ {
		if _, err := c.RunCommand(ctx, "admin", ping); err != nil {
			t.Fatalf("ping %d: %v", i, err)
		}
	}
	failed := eventtest.Of[*event.CommandFailed](rec)
	if len(failed) == 0 {
		t.Fatal("no ping was refused by the rate limiter")
	}
	if msg := failed[0].Failure.Error(); !strings.Contains(msg, "IngressRequestRateLimitExceeded") || !strings.Contains(msg, "SystemOverloadedError") {
		t.Errorf("refusal %v, want IngressRequestRateLimitExceeded with the overload labels", failed[0].Failure)
	}
}
