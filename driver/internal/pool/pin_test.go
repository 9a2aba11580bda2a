package pool

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
)

// The load-balancers spec's connection tracking: the pool counts checked-out
// connections pinned to cursors and to transactions until they are checked
// in, and a wait queue timeout in load-balanced mode reports them.
func TestPinnedConnectionsInWaitQueueTimeout(t *testing.T) {
	svc := bson.ObjectID{0xa}
	dial := func(_ context.Context, id int64) (*fakeConn, error) { return &fakeConn{id: id, svc: &svc}, nil }
	p, _ := newTestPool(t, Config[*fakeConn]{LoadBalanced: true, Dial: dial, MaxPoolSize: 3, WaitQueueTimeout: 20 * time.Millisecond})
	p.Ready()
	ctx := context.Background()
	var held []*Pooled[*fakeConn]
	for _, kind := range []PinKind{PinCursor, PinTransaction, PinNone} {
		c, err := p.CheckOut(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c.Pin(kind)
		held = append(held, c)
	}
	held[0].Pin(PinCursor) // pinning again counts once
	_, err := p.CheckOut(ctx)
	var wqt *WaitQueueTimeoutError
	if !errors.As(err, &wqt) {
		t.Fatalf("CheckOut = %v, want a WaitQueueTimeoutError", err)
	}
	const want = "maxPoolSize: 3, connections in use by cursors: 1, connections in use by transactions: 1, connections in use by other operations: 1"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q lacks %q", err, want)
	}
	for _, c := range held {
		if err := p.CheckIn(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if s := p.Stats(); s.InUseByCursors != 0 || s.InUseByTransactions != 0 || s.InUse != 0 {
		t.Errorf("after CheckIn: %+v, want nothing in use or pinned", s)
	}
	// A reused connection starts unpinned.
	c, err := p.CheckOut(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.InUseByCursors != 0 || s.InUse != 1 {
		t.Errorf("reused connection: %+v", s)
	}
	c.Pin(PinCursor)
	p.Clear(&svc, false)
	p.CheckIn(ctx, c) // stale: closed, and no longer counted as pinned
	// (Total is not checked: the clear may close the service's idle
	// connections in the background, at its own pace.)
	if s := p.Stats(); s.InUseByCursors != 0 || s.InUse != 0 {
		t.Errorf("after a stale CheckIn: %+v", s)
	}
}

// Outside load-balanced mode the message keeps the pool's usual figures.
func TestWaitQueueTimeoutMessageNotLoadBalanced(t *testing.T) {
	p, _ := newTestPool(t, Config[*fakeConn]{MaxPoolSize: 1, WaitQueueTimeout: 10 * time.Millisecond})
	p.Ready()
	c, err := p.CheckOut(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer p.CheckIn(context.Background(), c)
	_, err = p.CheckOut(context.Background())
	if err == nil || strings.Contains(err.Error(), "connections in use by cursors") || !strings.Contains(err.Error(), "in use 1") {
		t.Errorf("CheckOut = %v", err)
	}
}
