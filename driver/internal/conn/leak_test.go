package conn

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// Commands under cancellable contexts register a wake-up with the context;
// none of it may outlive the command, and Close leaves nothing behind.
func TestNoGoroutinesLeft(t *testing.T) {
	before := runtime.NumGoroutine()
	addr := serve(t, "tcp", func(s *scriptConn) {
		s.handshake(t, nil)
		for i := int32(2); i < 52; i++ {
			if s.read() == nil {
				return
			}
			s.write(opMsg(100+i, i, 0, okReply(t), false))
		}
	})
	c := dialScripted(t, addr, nil)
	for i := 0; i < 50; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		r, err := c.Command(ctx, &Request{DB: "admin", Command: ping(t)})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		r.Release()
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	_ = c.Close() // a second Close is harmless
	// The scripted server's goroutine ends when the client hangs up; allow
	// for it and the listener to wind down.
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before+1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+1 {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines before, %d after Close:\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}
