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
	"github.com/mongoscope/mongoscope/mongotest"
)

// retryRecorder is a RetryMonitor and an OperationMonitor.
type retryRecorder struct {
	mu       sync.Mutex
	retries  []event.OperationRetry
	finished []event.OperationFinished
}

func (r *retryRecorder) OperationRetry(_ context.Context, e *event.OperationRetry) {
	r.mu.Lock()
	r.retries = append(r.retries, *e)
	r.mu.Unlock()
}

func (r *retryRecorder) OperationStarted(ctx context.Context, _ *event.OperationStarted) context.Context {
	return ctx
}

func (r *retryRecorder) OperationFinished(_ context.Context, e *event.OperationFinished) {
	r.mu.Lock()
	r.finished = append(r.finished, *e)
	r.mu.Unlock()
}

func (r *retryRecorder) take() ([]event.OperationRetry, []event.OperationFinished) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, b := r.retries, r.finished
	r.retries, r.finished = nil, nil
	return a, b
}

// retryOnly implements RetryMonitor alone: the client takes it.
type retryOnly struct{ n *int }

func (m retryOnly) OperationRetry(context.Context, *event.OperationRetry) { *m.n++ }

// TestRetryEvent: a retryable read that fails once with a retryable code (7, HostNotFound)
// sends one OperationRetry, with the operation's name, namespace and id,
// attempt 1 and the server's code; the operation then succeeds. A
// non-retryable failure sends none.
func TestRetryEvent(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	rec := &retryRecorder{}
	n := 0
	client := dial(t, s.URI(), &driver.ClientOptions{Monitors: []any{rec, retryOnly{&n}}})
	ctx := testCtx(t)
	coll := client.Database("d").Collection("c")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "x", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	rec.take()
	if err := s.SetFailPoint(bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: bson.D{{Key: "times", Value: 1}}},
		{Key: "data", Value: bson.D{{Key: "failCommands", Value: bson.A{"find"}}, {Key: "errorCode", Value: 7}}}}); err != nil {
		t.Fatal(err)
	}
	if err := coll.FindOne(ctx, bson.D{}).Err(); err != nil {
		t.Fatal(err)
	}
	retries, fin := rec.take()
	if len(retries) != 1 || len(fin) != 1 {
		t.Fatalf("got %d retries and %d finished operations, want 1 and 1", len(retries), len(fin))
	}
	r := retries[0]
	if r.Name != "find" || r.Database != "d" || r.Collection != "c" || r.Attempt != 1 || r.Overload || r.OperationID != fin[0].OperationID {
		t.Errorf("retry event %+v (operation id %d)", r, fin[0].OperationID)
	}
	if code, ok := event.ServerErrorCode(r.Err); !ok || code != 7 {
		t.Errorf("retry error %v: code %d, %v; want 7", r.Err, code, ok)
	}
	if fin[0].Err != nil || fin[0].Attempts != 2 || fin[0].TimeoutStage != "" {
		t.Errorf("finished %+v", fin[0])
	}
	if n != 1 {
		t.Errorf("the RetryMonitor alone saw %d retries, want 1", n)
	}

	// Not retryable: no event.
	if err := s.SetFailPoint(bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: bson.D{{Key: "times", Value: 1}}},
		{Key: "data", Value: bson.D{{Key: "failCommands", Value: bson.A{"find"}}, {Key: "errorCode", Value: 2}}}}); err != nil {
		t.Fatal(err)
	}
	if err := coll.FindOne(ctx, bson.D{}).Err(); err == nil {
		t.Fatal("want the fail point's error")
	}
	retries, fin = rec.take()
	if len(retries) != 0 || len(fin) != 1 || fin[0].TimeoutStage != "" {
		t.Fatalf("non-retryable: %d retries, finished %+v", len(retries), fin)
	}
	if code, ok := event.ServerErrorCode(fin[0].Err); !ok || code != 2 {
		t.Errorf("finished error %v: code %d, %v; want 2", fin[0].Err, code, ok)
	}
}

// TestTimeoutStageEvent: OperationFinished.TimeoutStage says where the
// budget ran out: waiting for the reply under timeoutMS, on the server
// (MaxTimeMSExpired), and under a context deadline without timeoutMS.
func TestTimeoutStageEvent(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	rec := &retryRecorder{}
	client := dial(t, s.URI(), &driver.ClientOptions{Monitors: []any{rec}})
	ctx := testCtx(t)
	coll := client.Database("d").Collection("c")
	if _, err := coll.InsertOne(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	block := func(cmd string) {
		t.Helper()
		if err := s.SetFailPoint(bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: bson.D{{Key: "times", Value: 1}}},
			{Key: "data", Value: bson.D{{Key: "failCommands", Value: bson.A{cmd}}, {Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: 300}}}}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, stage string
		run         func() error
	}{
		{"timeoutMS, reply", event.TimeoutStageNetwork, func() error {
			block("find")
			return coll.FindOne(driver.WithTimeout(ctx, 50*time.Millisecond), bson.D{}).Err()
		}},
		{"MaxTimeMSExpired", event.TimeoutStageServer, func() error {
			if err := s.SetFailPoint(bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: bson.D{{Key: "times", Value: 1}}},
				{Key: "data", Value: bson.D{{Key: "failCommands", Value: bson.A{"find"}}, {Key: "errorCode", Value: 50}}}}); err != nil {
				t.Fatal(err)
			}
			return coll.FindOne(driver.WithTimeout(ctx, time.Second), bson.D{}).Err()
		}},
		{"context deadline, reply", event.TimeoutStageNetwork, func() error {
			block("insert")
			c, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			defer cancel()
			_, err := coll.InsertOne(c, bson.D{})
			return err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec.take()
			err := tc.run()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("got %v, want a timeout", err)
			}
			_, fin := rec.take()
			if len(fin) != 1 {
				t.Fatalf("%d finished operations", len(fin))
			}
			if fin[0].TimeoutStage != tc.stage {
				t.Errorf("TimeoutStage %q, want %q (error %v)", fin[0].TimeoutStage, tc.stage, fin[0].Err)
			}
		})
	}
	// Success: no stage.
	rec.take()
	if err := coll.FindOne(driver.WithTimeout(ctx, time.Second), bson.D{}).Err(); err != nil {
		t.Fatal(err)
	}
	if _, fin := rec.take(); len(fin) != 1 || fin[0].TimeoutStage != "" {
		t.Errorf("success: %+v", fin)
	}
}
