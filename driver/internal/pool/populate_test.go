package pool

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
)

// A failed background connection keeps its place in the pool until
// OnPopulateError has run: otherwise the next background run could start a
// replacement before the clear pauses the pool, and a ConnectionCreated
// would come between the failure and the ConnectionPoolCleared (which
// pool-create-min-size-error forbids; it showed under -race against
// mongotest).
func TestPopulateErrorClearsBeforeReplacing(t *testing.T) {
	checkNoLeaks(t)
	for _, tc := range []struct {
		name     string
		minPool  int
		interval time.Duration
	}{
		{"minPoolSize 1, 1ms interval", 1, time.Millisecond},
		{"minPoolSize 1, signalled runs only", 1, -1},
		{"minPoolSize 3, 1ms interval", 3, time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &eventtest.Recorder{}
			var dials atomic.Int64
			boom := errors.New("handshake refused")
			var p *Pool[*fakeConn]
			p, err := New(Config[*fakeConn]{
				Address:          "a:1",
				MinPoolSize:      tc.minPool,
				MaxPoolSize:      10,
				MaxConnecting:    1,
				MaintainInterval: tc.interval,
				Events:           event.NewDispatcher(rec),
				Dial: func(context.Context, int64) (*fakeConn, error) {
					dials.Add(1)
					return nil, boom
				},
				OnPopulateError: func(err error, _ uint64) {
					// Give a background run every chance to start a
					// replacement before the clear.
					time.Sleep(30 * time.Millisecond)
					p.ClearWithCause(nil, false, err)
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(p.Close)
			p.Ready()
			if err := waitForEvent(rec, "ConnectionClosed", 1, 5*time.Second); err != nil {
				t.Fatal(err)
			}
			// A few more intervals: the paused pool must start nothing.
			time.Sleep(20 * time.Millisecond)
			var names []string
			for _, e := range poolEvents(rec) {
				if n := specName(e); n != "ConnectionPoolCreated" && len(names) < 8 {
					names = append(names, n)
				}
			}
			want := []string{"ConnectionPoolReady", "ConnectionCreated", "ConnectionPoolCleared", "ConnectionClosed"}
			if len(names) != len(want) {
				t.Fatalf("events %v, want %v", names, want)
			}
			for i := range want {
				if names[i] != want[i] {
					t.Fatalf("events %v, want %v", names, want)
				}
			}
			if n := dials.Load(); n != 1 {
				t.Errorf("%d dials, want 1", n)
			}
			var closed *event.ConnectionClosed
			for _, e := range poolEvents(rec) {
				if c, ok := e.(*event.ConnectionClosed); ok {
					closed = c
				}
			}
			if closed.Reason != event.ReasonError || !errors.Is(closed.Err, boom) {
				t.Errorf("closed %+v, want reason error with the dial's error", closed)
			}
			if s := p.Stats(); s.State != "paused" || s.Total != 0 || s.PendingConnections != 0 {
				t.Errorf("stats %+v, want a paused, empty pool", s)
			}
		})
	}
}

// A checkout whose connection fails to establish hands the error to
// OnDialError, with the connection's generation, before ConnectionClosed
// and ConnectionCheckOutFailed, so SDAM's clear comes first in the event
// stream (connection-logging.json, "Connection checkout fails due to error
// establishing connection").
func TestDialErrorHandledBeforeEvents(t *testing.T) {
	checkNoLeaks(t)
	rec := &eventtest.Recorder{}
	boom := errors.New("authentication cut off")
	var p *Pool[*fakeConn]
	var gotGen uint64 = 99
	p, err := New(Config[*fakeConn]{
		Address:          "a:1",
		MaxPoolSize:      10,
		MaintainInterval: -1,
		Events:           event.NewDispatcher(rec),
		Dial:             func(context.Context, int64) (*fakeConn, error) { return nil, boom },
		OnDialError: func(err error, gen uint64) {
			gotGen = gen
			p.ClearWithCause(nil, false, err)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	p.Ready()
	if _, err := p.CheckOut(context.Background()); !errors.Is(err, boom) {
		t.Fatalf("CheckOut = %v, want the dial error", err)
	}
	if gotGen != 0 {
		t.Errorf("OnDialError got generation %d, want 0", gotGen)
	}
	var names []string
	for _, e := range poolEvents(rec) {
		names = append(names, specName(e))
	}
	want := []string{"ConnectionPoolCreated", "ConnectionPoolReady", "ConnectionCheckOutStarted", "ConnectionCreated", "ConnectionPoolCleared", "ConnectionClosed", "ConnectionCheckOutFailed"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("events\n%v\nwant\n%v", names, want)
	}
}
