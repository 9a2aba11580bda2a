package pool

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
)

func newTestPool(t *testing.T, cfg Config[*fakeConn]) (*Pool[*fakeConn], *eventtest.Recorder) {
	t.Helper()
	checkNoLeaks(t)
	rec := &eventtest.Recorder{}
	if cfg.Address == "" {
		cfg.Address = "db:27017"
	}
	if cfg.Dial == nil {
		cfg.Dial = fakeDial
	}
	cfg.Events = event.NewDispatcher(rec)
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p, rec
}

func names(evs []event.PoolEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, specName(e))
	}
	return out
}

func TestConfigValidation(t *testing.T) {
	dial := fakeDial
	tests := []struct {
		cfg   Config[*fakeConn]
		field string
	}{
		{Config[*fakeConn]{Dial: dial}, "Address"},
		{Config[*fakeConn]{Address: "a"}, "Dial"},
		{Config[*fakeConn]{Address: "a", Dial: dial, MinPoolSize: -1}, "MinPoolSize"},
		{Config[*fakeConn]{Address: "a", Dial: dial, MaxPoolSize: -1}, "MaxPoolSize"},
		{Config[*fakeConn]{Address: "a", Dial: dial, MinPoolSize: 3, MaxPoolSize: 2}, "MinPoolSize"},
		{Config[*fakeConn]{Address: "a", Dial: dial, MaxConnecting: -1}, "MaxConnecting"},
		{Config[*fakeConn]{Address: "a", Dial: dial, MaxIdleTime: -1}, "MaxIdleTime"},
		{Config[*fakeConn]{Address: "a", Dial: dial, WaitQueueTimeout: -1}, "WaitQueueTimeout"},
	}
	for _, tt := range tests {
		_, err := New(tt.cfg)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != tt.field {
			t.Errorf("New(%+v) = %v, want a ConfigError on %s", tt.cfg, err, tt.field)
		} else if !strings.Contains(err.Error(), tt.field) {
			t.Errorf("error %q does not name %s", err, tt.field)
		}
	}
	checkNoLeaks(t)
	p, err := New(Config[*fakeConn]{Address: "a", Dial: dial, MinPoolSize: 2}) // MaxPoolSize 0: no limit
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
	p.Close() // twice is fine
}

func TestStats(t *testing.T) {
	ctx := context.Background()
	p, _ := newTestPool(t, Config[*fakeConn]{MaxPoolSize: 2})
	if s := p.Stats(); s.State != "paused" || s.Max != 2 || s.Total != 0 {
		t.Fatalf("new pool stats = %+v", s)
	}
	p.Ready()
	a, err := p.CheckOut(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.CheckOut(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *Pooled[*fakeConn])
	go func() {
		c, err := p.CheckOut(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- c
	}()
	waitUntil(t, func() bool { return p.Stats().WaitCount == 1 })
	s := p.Stats()
	want := Stats{State: "ready", Max: 2, Total: 2, InUse: 2, WaitCount: 1, Waited: 1, CreatedTotal: 2}
	s.WaitDuration = 0
	if s != want {
		t.Fatalf("stats = %+v, want %+v", s, want)
	}
	time.Sleep(5 * time.Millisecond)
	if err := p.CheckIn(ctx, a); err != nil {
		t.Fatal(err)
	}
	c := <-got
	if c != a {
		t.Fatalf("waiter got connection %d, want the one checked in (%d)", c.ID(), a.ID())
	}
	b.MarkErrored(errors.New("socket reset"))
	if err := p.CheckIn(ctx, b); err != nil {
		t.Fatal(err)
	}
	p.Clear(nil, false)
	s = p.Stats()
	if s.Total != 1 || s.InUse != 1 || s.ClosedTotal != 1 || s.Generation != 1 || s.State != "paused" || s.WaitDuration < 5*time.Millisecond {
		t.Fatalf("stats = %+v", s)
	}
	p.CheckIn(ctx, c)
	if s := p.Stats(); s.Total != 0 || s.ClosedTotal != 2 {
		t.Fatalf("after stale check-in, stats = %+v", s)
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; !cond(); i++ {
		if i > 500 {
			t.Fatal("condition not met after 5s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestDialError(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("connection refused")
	tests := []struct {
		name string
		dial func(context.Context, int64) (*fakeConn, error)
		want error
	}{
		{"error", func(context.Context, int64) (*fakeConn, error) { return nil, boom }, boom},
		{"error and conn", func(_ context.Context, id int64) (*fakeConn, error) { return &fakeConn{id: id}, boom }, boom},
		{"neither", func(context.Context, int64) (*fakeConn, error) { return nil, nil }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, rec := newTestPool(t, Config[*fakeConn]{Dial: tt.dial})
			p.Ready()
			_, err := p.CheckOut(ctx)
			var de *DialError
			if !errors.As(err, &de) || de.ConnectionID != 1 || de.Address != "db:27017" {
				t.Fatalf("CheckOut error = %v, want a DialError for connection 1", err)
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("error %v does not wrap %v", err, tt.want)
			}
			evs := poolEvents(rec)
			want := []string{"ConnectionPoolCreated", "ConnectionPoolReady", "ConnectionCheckOutStarted", "ConnectionCreated", "ConnectionClosed", "ConnectionCheckOutFailed"}
			if got := names(evs); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("events %v, want %v", got, want)
			}
			if cl := evs[4].(*event.ConnectionClosed); cl.Reason != event.ReasonError {
				t.Errorf("closed reason %q", cl.Reason)
			}
			if f := evs[5].(*event.ConnectionCheckOutFailed); f.Reason != event.ReasonCheckOutConnectionError || f.Err != err {
				t.Errorf("checkout failed = %+v", f)
			}
			if s := p.Stats(); s.Total != 0 || s.PendingConnections != 0 || s.ClosedTotal != 1 {
				t.Errorf("stats = %+v", s)
			}
		})
	}
}

func TestWaitEnds(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config[*fakeConn]
		ctx     func() (context.Context, context.CancelFunc)
		is      error
		msg     string
		timeout bool
	}{
		{"deadline", Config[*fakeConn]{MaxPoolSize: 1}, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 20*time.Millisecond)
		}, context.DeadlineExceeded, "Timed out while checking out a connection from connection pool for db:27017 after", true},
		{"wait queue timeout", Config[*fakeConn]{MaxPoolSize: 1, WaitQueueTimeout: 20 * time.Millisecond}, func() (context.Context, context.CancelFunc) {
			return context.WithCancel(context.Background())
		}, context.DeadlineExceeded, "Timed out", true},
		{"canceled", Config[*fakeConn]{MaxPoolSize: 1}, func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(20*time.Millisecond, cancel)
			return ctx, cancel
		}, context.Canceled, "Canceled while checking out", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, rec := newTestPool(t, tt.cfg)
			p.Ready()
			held, err := p.CheckOut(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := tt.ctx()
			defer cancel()
			_, err = p.CheckOut(ctx)
			var we *WaitQueueTimeoutError
			if !errors.As(err, &we) || !errors.Is(err, tt.is) || we.Timeout() != tt.timeout {
				t.Fatalf("CheckOut = %v, want a WaitQueueTimeoutError wrapping %v", err, tt.is)
			}
			if !strings.HasPrefix(err.Error(), tt.msg) || !strings.Contains(err.Error(), "maxPoolSize 1, total 1, in use 1, idle 0, pending 0, waiting 0") {
				t.Fatalf("message %q", err)
			}
			if we.Waited < 15*time.Millisecond {
				t.Errorf("waited %v", we.Waited)
			}
			evs := poolEvents(rec)
			f, ok := evs[len(evs)-1].(*event.ConnectionCheckOutFailed)
			if !ok || f.Reason != event.ReasonCheckOutTimeout || f.Duration < 15*time.Millisecond {
				t.Fatalf("last event %#v", evs[len(evs)-1])
			}
			if p.Stats().WaitCount != 0 {
				t.Fatal("waiter left in the queue")
			}
			// The connection still serves the next checkout.
			p.CheckIn(context.Background(), held)
			again, err := p.CheckOut(context.Background())
			if err != nil || again != held {
				t.Fatalf("CheckOut after timeout = %v, %v", again, err)
			}
		})
	}
}

func TestCheckInErrors(t *testing.T) {
	ctx := context.Background()
	p, _ := newTestPool(t, Config[*fakeConn]{})
	other, _ := newTestPool(t, Config[*fakeConn]{Address: "other:1"})
	p.Ready()
	other.Ready()
	c, err := p.CheckOut(ctx)
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := other.CheckOut(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CheckIn(ctx, c); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		c    *Pooled[*fakeConn]
		want string
	}{
		{"nil", nil, "nil connection"},
		{"foreign", foreign, "belongs to the pool for other:1"},
		{"twice", c, "not checked out"},
	}
	for _, tt := range tests {
		err := p.CheckIn(ctx, tt.c)
		var ce *CheckInError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: CheckIn = %v, want a CheckInError saying %q", tt.name, err, tt.want)
		}
	}
	if s := p.Stats(); s.Idle != 1 || s.InUse != 0 {
		t.Errorf("stats after bad check-ins = %+v", s)
	}
}

func TestCloseReasons(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		cfg    Config[*fakeConn]
		before func(p *Pool[*fakeConn], c *Pooled[*fakeConn])
		after  func(p *Pool[*fakeConn])
		reason event.CloseReason
	}{
		{"marked errored", Config[*fakeConn]{}, func(p *Pool[*fakeConn], c *Pooled[*fakeConn]) { c.MarkErrored(errors.New("bad reply")) }, nil, event.ReasonError},
		{"marked errored without error", Config[*fakeConn]{}, func(p *Pool[*fakeConn], c *Pooled[*fakeConn]) { c.MarkErrored(nil) }, nil, event.ReasonError},
		{"closed itself", Config[*fakeConn]{}, func(p *Pool[*fakeConn], c *Pooled[*fakeConn]) { c.Conn().Close() }, nil, event.ReasonError},
		{"stale", Config[*fakeConn]{}, func(p *Pool[*fakeConn], c *Pooled[*fakeConn]) { p.Clear(nil, false) }, nil, event.ReasonStale},
		{"pool closed", Config[*fakeConn]{}, func(p *Pool[*fakeConn], c *Pooled[*fakeConn]) { p.Close() }, nil, event.ReasonPoolClosed},
		{"idle, by the background run", Config[*fakeConn]{MaxIdleTime: 10 * time.Millisecond, MaintainInterval: 5 * time.Millisecond}, nil,
			func(p *Pool[*fakeConn]) { time.Sleep(50 * time.Millisecond) }, event.ReasonIdle},
		{"closed while idle", Config[*fakeConn]{MaintainInterval: -1}, nil, func(p *Pool[*fakeConn]) {
			p.mu.Lock()
			p.idle[0].conn.Close()
			p.mu.Unlock()
			p.CheckOut(ctx)
		}, event.ReasonError},
		{"stale while idle", Config[*fakeConn]{MaintainInterval: -1}, nil, func(p *Pool[*fakeConn]) {
			p.Clear(nil, false)
			p.Ready()
			p.CheckOut(ctx)
		}, event.ReasonStale},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, rec := newTestPool(t, tt.cfg)
			p.Ready()
			c, err := p.CheckOut(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if tt.before != nil {
				tt.before(p, c)
			}
			if err := p.CheckIn(ctx, c); err != nil {
				t.Fatal(err)
			}
			if tt.after != nil {
				tt.after(p)
			}
			var closed *event.ConnectionClosed
			for _, e := range poolEvents(rec) {
				if x, ok := e.(*event.ConnectionClosed); ok && x.ConnectionID == 1 {
					closed = x
				}
			}
			if closed == nil || closed.Reason != tt.reason {
				t.Fatalf("ConnectionClosed = %+v, want reason %q; events %v", closed, tt.reason, names(poolEvents(rec)))
			}
			if !c.Conn().Closed() {
				t.Error("the connection was not closed")
			}
		})
	}
}

func TestClearFailsWaitersAndPauses(t *testing.T) {
	ctx := context.Background()
	p, _ := newTestPool(t, Config[*fakeConn]{MaxPoolSize: 1})
	p.Ready()
	held, _ := p.CheckOut(ctx)
	errc := make(chan error)
	go func() {
		_, err := p.CheckOut(ctx)
		errc <- err
	}()
	waitUntil(t, func() bool { return p.Stats().WaitCount == 1 })
	cause := errors.New("network error on db:27017")
	p.ClearWithCause(nil, false, cause)
	err := <-errc
	var pc *PoolClearedError
	if !errors.As(err, &pc) || !errors.Is(err, cause) || !pc.Retryable() || pc.Interrupted {
		t.Fatalf("waiter got %v, want a PoolClearedError caused by %v", err, cause)
	}
	if want := "Connection pool for db:27017 was cleared because another operation failed with: network error on db:27017"; err.Error() != want {
		t.Errorf("message %q", err)
	}
	// Paused: checkouts fail at once, with the same cause.
	if _, err := p.CheckOut(ctx); !errors.Is(err, cause) {
		t.Fatalf("CheckOut on paused pool = %v", err)
	}
	p.Ready()
	p.CheckIn(ctx, held) // stale: closed
	c, err := p.CheckOut(ctx)
	if err != nil || c.ID() != 2 {
		t.Fatalf("CheckOut after ready = %v, %v; want a new connection 2", c, err)
	}
	if got := (&PoolClearedError{Address: "a"}).Error(); got != "Connection pool for a was cleared" {
		t.Errorf("message without cause %q", got)
	}
}

func TestClearInterruptsInUse(t *testing.T) {
	ctx := context.Background()
	p, rec := newTestPool(t, Config[*fakeConn]{MaintainInterval: time.Hour})
	p.Ready()
	old, _ := p.CheckOut(ctx)
	p.Clear(nil, true)
	waitUntil(t, func() bool { return old.Conn().Closed() })
	if !old.Interrupted() {
		t.Fatal("Interrupted() = false")
	}
	if msg := (&PoolClearedError{Address: "db:27017", Interrupted: true}).Error(); msg != "Connection to db:27017 interrupted due to server monitor timeout" {
		t.Errorf("message %q", msg)
	}
	p.Ready()
	fresh, _ := p.CheckOut(ctx)
	p.Clear(nil, false) // without interrupt: fresh stays open
	time.Sleep(20 * time.Millisecond)
	if fresh.Conn().Closed() || fresh.Interrupted() {
		t.Fatal("a clear without interruptInUseConnections closed an in-use connection")
	}
	p.CheckIn(ctx, old)
	var cleared []bool
	for _, e := range poolEvents(rec) {
		if c, ok := e.(*event.PoolCleared); ok {
			cleared = append(cleared, c.InterruptInUseConnections)
		}
	}
	if len(cleared) != 2 || !cleared[0] || cleared[1] {
		t.Fatalf("PoolCleared interrupt flags %v", cleared)
	}
}

func TestLoadBalancedClearPerService(t *testing.T) {
	ctx := context.Background()
	svcA, svcB := bson.ObjectID{0xa}, bson.ObjectID{0xb}
	dial := func(_ context.Context, id int64) (*fakeConn, error) {
		s := svcA
		if id%2 == 0 {
			s = svcB
		}
		return &fakeConn{id: id, svc: &s}, nil
	}
	p, rec := newTestPool(t, Config[*fakeConn]{LoadBalanced: true, Dial: dial, MaxPoolSize: 1})
	p.Ready()
	a, _ := p.CheckOut(ctx) // id 1: service A
	waiter := make(chan *Pooled[*fakeConn])
	go func() {
		c, err := p.CheckOut(ctx)
		if err != nil {
			t.Error(err)
		}
		waiter <- c
	}()
	waitUntil(t, func() bool { return p.Stats().WaitCount == 1 })
	p.Clear(&svcA, false)
	if s := p.Stats(); s.State != "ready" || s.WaitCount != 1 {
		t.Fatalf("load-balanced clear paused the pool or failed waiters: %+v", s)
	}
	if got := a.ServiceID(); got == nil || *got != svcA {
		t.Fatalf("ServiceID = %v", got)
	}
	p.CheckIn(ctx, a) // stale: closed; the waiter gets a new connection
	b := <-waiter
	if b.ID() != 2 || *b.ServiceID() != svcB || b.Generation() != 0 {
		t.Fatalf("waiter got connection %d of service %v generation %d", b.ID(), b.ServiceID(), b.Generation())
	}
	p.Clear(&svcA, false) // no connection of A is left: B's survives
	p.CheckIn(ctx, b)
	c, _ := p.CheckOut(ctx)
	if c != b {
		t.Fatal("clearing service A closed service B's connection")
	}
	p.CheckIn(ctx, c)
	p.Clear(nil, false) // every service
	d, _ := p.CheckOut(ctx)
	if d == b {
		t.Fatal("clearing every service kept service B's connection")
	}
	var sids []string
	var reasons []event.CloseReason
	for _, e := range poolEvents(rec) {
		switch e := e.(type) {
		case *event.PoolCleared:
			s := "nil"
			if e.ServiceID != nil {
				s = e.ServiceID.Hex()
			}
			sids = append(sids, s)
		case *event.ConnectionClosed:
			reasons = append(reasons, e.Reason)
		}
	}
	if want := []string{svcA.Hex(), svcA.Hex(), "nil"}; strings.Join(sids, ",") != strings.Join(want, ",") {
		t.Errorf("PoolCleared service ids %v, want %v", sids, want)
	}
	if len(reasons) != 2 || reasons[0] != event.ReasonStale || reasons[1] != event.ReasonStale {
		t.Errorf("close reasons %v", reasons)
	}
}

func TestCloseFailsWaitersAndStopsPopulation(t *testing.T) {
	ctx := context.Background()
	started := make(chan struct{}, 10)
	dial := func(ctx context.Context, id int64) (*fakeConn, error) {
		if id > 1 { // connection 1 is quick; population blocks until canceled
			started <- struct{}{}
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return &fakeConn{id: id}, nil
	}
	p, rec := newTestPool(t, Config[*fakeConn]{MaxPoolSize: 1, Dial: dial})
	p.Ready()
	held, _ := p.CheckOut(ctx)
	errc := make(chan error)
	go func() {
		_, err := p.CheckOut(ctx)
		errc <- err
	}()
	waitUntil(t, func() bool { return p.Stats().WaitCount == 1 })
	p.Close()
	var pc *PoolClosedError
	if err := <-errc; !errors.As(err, &pc) || err.Error() != "Attempted to check out a connection from closed connection pool for db:27017" {
		t.Fatalf("waiter got %v", err)
	}
	p.CheckIn(ctx, held)
	if !held.Conn().Closed() {
		t.Fatal("check-in to a closed pool kept the connection open")
	}
	p.Ready() // a closed pool stays closed
	if s := p.Stats(); s.State != "closed" || s.Total != 0 {
		t.Fatalf("stats = %+v", s)
	}

	// Background population blocked in Dial stops when the pool closes.
	q, qrec := newTestPool(t, Config[*fakeConn]{MinPoolSize: 2, MaxPoolSize: 3, Dial: dial})
	q.Ready()
	<-started
	q.Close()
	closedReasons := 0
	for _, e := range poolEvents(qrec) {
		if c, ok := e.(*event.ConnectionClosed); ok && c.Reason == event.ReasonPoolClosed {
			closedReasons++
		}
	}
	if closedReasons == 0 {
		t.Fatalf("population canceled by Close: events %v", names(poolEvents(qrec)))
	}
	_ = rec
}

func TestEventsCarryCallerContext(t *testing.T) {
	p, rec := newTestPool(t, Config[*fakeConn]{})
	p.Ready()
	ctx := context.WithValue(context.Background(), ctxKey{}, "trace-1")
	c, err := p.CheckOut(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p.CheckIn(ctx, c)
	for _, r := range rec.Records() {
		switch e := r.Event.(type) {
		case *event.ConnectionCheckOutStarted, *event.ConnectionCreated, *event.ConnectionReady, *event.ConnectionCheckedOut, *event.ConnectionCheckedIn:
			if r.Ctx.Value(ctxKey{}) != "trace-1" {
				t.Errorf("%s did not get the caller's context", specName(e.(event.PoolEvent)))
			}
		}
	}
}

type ctxKey struct{}

// TestRacingTimeouts checks the pool's counts stay right when waits time out
// just as connections are handed to them.
func TestRacingTimeouts(t *testing.T) {
	p, _ := newTestPool(t, Config[*fakeConn]{MaxPoolSize: 2, MaxConnecting: 1})
	p.Ready()
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration((g+i)%50)*time.Microsecond)
				c, err := p.CheckOut(ctx)
				cancel()
				if err == nil {
					if i%7 == 0 {
						c.MarkErrored(errors.New("x"))
					}
					p.CheckIn(context.Background(), c)
				}
			}
		}()
	}
	wg.Wait()
	s := p.Stats()
	if s.InUse != 0 || s.WaitCount != 0 || s.PendingConnections != 0 || s.Total != s.Idle || s.Total > 2 ||
		s.CreatedTotal-s.ClosedTotal != int64(s.Total) {
		t.Fatalf("stats after the storm = %+v", s)
	}
}

func TestSteadyStateAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	p, err := New(Config[*fakeConn]{Address: "db:27017", Dial: fakeDial, MaxPoolSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.Ready()
	warm, _ := p.CheckOut(ctx)
	p.CheckIn(ctx, warm)
	n := testing.AllocsPerRun(1000, func() {
		c, err := p.CheckOut(ctx)
		if err != nil {
			t.Fatal(err)
		}
		p.CheckIn(ctx, c)
	})
	if n != 0 {
		t.Fatalf("checkout+checkin allocates %v times, want 0", n)
	}
}
