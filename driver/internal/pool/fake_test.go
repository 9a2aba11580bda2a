package pool

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
)

// fakeConn is a connection that does no I/O.
type fakeConn struct {
	id     int64
	svc    *bson.ObjectID
	closed atomic.Bool
}

func (c *fakeConn) ID() int64                                 { return c.id }
func (c *fakeConn) Close() error                              { c.closed.Store(true); return nil }
func (c *fakeConn) Closed() bool                              { return c.closed.Load() }
func (c *fakeConn) ServiceID() *bson.ObjectID                 { return c.svc }
func fakeDial(_ context.Context, id int64) (*fakeConn, error) { return &fakeConn{id: id}, nil }

// poolEvents returns the pool events rec has recorded, oldest first.
func poolEvents(rec *eventtest.Recorder) []event.PoolEvent { return eventtest.Of[event.PoolEvent](rec) }

// waitForEvent waits until rec has n events with the spec's type name
// name, or d passes.
func waitForEvent(rec *eventtest.Recorder, name string, n int, d time.Duration) error {
	ok := rec.Wait(d, func(evs []any) bool {
		c := 0
		for _, e := range evs {
			if pe, is := e.(event.PoolEvent); is && specName(pe) == name {
				c++
			}
		}
		return c >= n
	})
	if !ok {
		return errors.New("timed out waiting for " + name)
	}
	return nil
}

// specName is the event's name in the spec tests.
func specName(e event.PoolEvent) string {
	switch e.(type) {
	case *event.PoolCreated:
		return "ConnectionPoolCreated"
	case *event.PoolReady:
		return "ConnectionPoolReady"
	case *event.PoolCleared:
		return "ConnectionPoolCleared"
	case *event.PoolClosed:
		return "ConnectionPoolClosed"
	case *event.ConnectionCreated:
		return "ConnectionCreated"
	case *event.ConnectionReady:
		return "ConnectionReady"
	case *event.ConnectionClosed:
		return "ConnectionClosed"
	case *event.ConnectionCheckOutStarted:
		return "ConnectionCheckOutStarted"
	case *event.ConnectionCheckOutFailed:
		return "ConnectionCheckOutFailed"
	case *event.ConnectionCheckedOut:
		return "ConnectionCheckedOut"
	case *event.ConnectionCheckedIn:
		return "ConnectionCheckedIn"
	}
	return ""
}

// The frames of the pool's goroutines in a stack dump (Pool is generic, so
// its methods print as Pool[...]). TestLeakCheckSeesPool proves they match.
const (
	poolMaintainFrame = "pool.(*Pool[...]).maintain"
	poolPopulateFrame = "pool.(*Pool[...]).populate"
)

// leakChecks holds the tests whose leak check is registered: once per
// test, before any pool's Close, so that it runs after all of them.
var leakChecks sync.Map

// checkNoLeaks fails t if a goroutine of this package (other than the test
// itself) is still running shortly after the test.
func checkNoLeaks(t *testing.T) {
	t.Helper()
	if _, done := leakChecks.LoadOrStore(t, true); done {
		return
	}
	t.Cleanup(func() {
		var stacks string
		for range 100 {
			buf := make([]byte, 1<<20)
			stacks = string(buf[:runtime.Stack(buf, true)])
			if !strings.Contains(stacks, poolMaintainFrame) && !strings.Contains(stacks, poolPopulateFrame) {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Errorf("pool goroutines left running:\n%s", stacks)
	})
}

// TestLeakCheckSeesPool keeps checkNoLeaks honest: the frames it looks for
// are in the stacks of a running pool (a renamed method or a change in how
// generic methods print would otherwise make every leak check pass).
func TestLeakCheckSeesPool(t *testing.T) {
	block := make(chan struct{})
	p, err := New(Config[*fakeConn]{Address: "a:1", MinPoolSize: 1, Dial: func(ctx context.Context, id int64) (*fakeConn, error) {
		select {
		case <-block:
		case <-ctx.Done():
		}
		return &fakeConn{id: id}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	defer close(block)
	p.Ready()
	for _, frame := range []string{poolMaintainFrame, poolPopulateFrame} {
		found := false
		for i := 0; i < 500 && !found; i++ {
			buf := make([]byte, 1<<20)
			found = strings.Contains(string(buf[:runtime.Stack(buf, true)]), frame)
			if !found {
				time.Sleep(10 * time.Millisecond)
			}
		}
		if !found {
			t.Errorf("no goroutine running %s in a live pool's stacks", frame)
		}
	}
}
