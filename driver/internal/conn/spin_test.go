package conn

import (
	"bufio"
	"context"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/mongotest"
)

func spinDial(t *testing.T, s *mongotest.Server, sp *Spinner) *Conn {
	t.Helper()
	c, err := Dial(context.Background(), Config{Address: s.Addr(), Spin: sp})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// The handshake's exchanges poll too; the tests count from here.
	sp.caught.Store(0)
	return c
}

func spinPing(t *testing.T, c *Conn) {
	t.Helper()
	r, err := c.Command(context.Background(), &Request{DB: "admin", Command: ping(t)})
	if err != nil {
		t.Fatal(err)
	}
	r.Release()
}

func TestNewSpinnerOff(t *testing.T) {
	for _, d := range []time.Duration{0, -1, -time.Second} {
		if NewSpinner(d) != nil {
			t.Errorf("NewSpinner(%v) polls; zero or less turns polling off", d)
		}
	}
}

// A lone exchange polls for its reply and finds it: every ping of one
// connection is caught by a poll (the budget is far above any reply time).
func TestSpinnerCatchesLoneReplies(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("polling is implemented on Linux only")
	}
	srv := mongotest.NewServer(t, mongotest.Options{})
	sp := NewSpinner(time.Second)
	c := spinDial(t, srv, sp)
	for range 20 {
		spinPing(t, c)
	}
	if n := sp.caught.Load(); n != 20 {
		t.Fatalf("%d of 20 replies caught by polling", n)
	}
	if sp.misses.Load() != 0 || sp.skip.Load() != 0 || sp.waiting.Load() != 0 {
		t.Fatalf("misses %d, skip %d, waiting %d after 20 fast replies", sp.misses.Load(), sp.skip.Load(), sp.waiting.Load())
	}
}

// A poll that runs out of budget makes the next 2, then 4, ... exchanges
// park without polling; a caught reply resets the count.
func TestSpinnerBacksOffAfterMisses(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("polling is implemented on Linux only")
	}
	slow := mongotest.NewServer(t, mongotest.Options{})
	fast := mongotest.NewServer(t, mongotest.Options{})
	// The budget is far above a fast reply's time, even on a loaded
	// machine, and far below the slow server's.
	sp := NewSpinner(50 * time.Millisecond)
	cs, cf := spinDial(t, slow, sp), spinDial(t, fast, sp)
	slow.AddLatency(400 * time.Millisecond)
	state := func(misses, skip int32) {
		t.Helper()
		if m, s := sp.misses.Load(), sp.skip.Load(); m != misses || s != skip {
			t.Fatalf("misses %d, skip %d; want %d, %d", m, s, misses, skip)
		}
	}
	spinPing(t, cs) // polls 50 ms, misses
	state(1, 2)
	spinPing(t, cs) // no poll
	spinPing(t, cs) // no poll
	state(1, 0)
	spinPing(t, cs) // polls, misses again
	state(2, 4)
	for range 4 {
		spinPing(t, cf) // no poll, though the server is fast
	}
	state(2, 0)
	if sp.caught.Load() != 0 {
		t.Fatalf("%d replies caught while skipping", sp.caught.Load())
	}
	spinPing(t, cf) // polls and catches
	state(0, 0)
	if sp.caught.Load() != 1 {
		t.Fatalf("%d replies caught, want 1", sp.caught.Load())
	}
}

// An exchange stops polling as soon as another of the client waits, and
// the other does not poll: with a budget far longer than the reply takes,
// neither catches its reply by polling, and neither counts a miss.
func TestSpinnerStopsWhenAnotherWaits(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("polling is implemented on Linux only")
	}
	srv := mongotest.NewServer(t, mongotest.Options{})
	sp := NewSpinner(10 * time.Second)
	a, b := spinDial(t, srv, sp), spinDial(t, srv, sp)
	srv.AddLatency(300 * time.Millisecond)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		spinPing(t, a)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for sp.waiting.Load() != 1 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // a is polling now
	spinPing(t, b)
	wg.Wait()
	if c, m := sp.caught.Load(), sp.misses.Load(); c != 0 || m != 0 {
		t.Fatalf("caught %d, misses %d; want 0, 0: an exchange polled while another waited", c, m)
	}
}

// A stream that is not a kernel socket (a pipe, a custom Dialer's
// connection) is never polled, and the exchange goes straight to its read.
func TestSpinnerSkipsUnpollableStreams(t *testing.T) {
	p1, p2 := net.Pipe()
	defer p1.Close()
	defer p2.Close()
	c := &Conn{nc: p1, br: bufio.NewReader(p1)}
	sp := NewSpinner(10 * time.Second)
	sp.waiting.Store(1)
	start := time.Now()
	sp.spin(c)
	if el := time.Since(start); el > time.Second {
		t.Fatalf("spin on a pipe took %v", el)
	}
	if sp.caught.Load() != 0 || sp.misses.Load() != 0 || !c.pollFailed {
		t.Fatalf("caught %d, misses %d, pollFailed %v", sp.caught.Load(), sp.misses.Load(), c.pollFailed)
	}
}
