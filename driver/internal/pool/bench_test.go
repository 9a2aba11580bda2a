package pool

import (
	"context"
	"runtime"
	"testing"

	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/conn"
	"github.com/mongoscope/mongoscope/mongotest"
)

// contenders is the number of goroutines checking out at once.
const contenders = 64

// benchmarkContended runs checkout+checkin on 64 goroutines. The pool is
// warmed first (every goroutine's connection established), so the timed loop
// measures the steady state, not dialling.
func benchmarkContended[C Conn](b *testing.B, cfg Config[C]) {
	p, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	p.Ready()
	ctx := context.Background()
	warm(b, p, min(contenders, cfg.MaxPoolSize))
	b.SetParallelism(max(1, contenders/runtime.GOMAXPROCS(0)))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c, err := p.CheckOut(ctx)
			if err != nil {
				b.Error(err)
				return
			}
			p.CheckIn(ctx, c)
		}
	})
}

// warm checks out n connections at once and gives them back, leaving n idle
// connections in the pool.
func warm[C Conn](b *testing.B, p *Pool[C], n int) {
	ctx := context.Background()
	held := make([]*Pooled[C], 0, n)
	for range n {
		c, err := p.CheckOut(ctx)
		if err != nil {
			b.Fatal(err)
		}
		held = append(held, c)
	}
	for _, c := range held {
		if err := p.CheckIn(ctx, c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckOutCheckIn64 has a connection for every goroutine.
func BenchmarkCheckOutCheckIn64(b *testing.B) {
	benchmarkContended(b, Config[*fakeConn]{Address: "db:27017", Dial: fakeDial, MaxPoolSize: 100})
}

// BenchmarkCheckOutCheckIn64Waiting has 8 connections for 64 goroutines, so
// most checkouts wait in the queue.
func BenchmarkCheckOutCheckIn64Waiting(b *testing.B) {
	benchmarkContended(b, Config[*fakeConn]{Address: "db:27017", Dial: fakeDial, MaxPoolSize: 8})
}

type discard struct{}

func (discard) PoolEvent(context.Context, event.PoolEvent) {}

// BenchmarkCheckOutCheckIn64Monitored adds a pool monitor that does nothing.
func BenchmarkCheckOutCheckIn64Monitored(b *testing.B) {
	benchmarkContended(b, Config[*fakeConn]{Address: "db:27017", Dial: fakeDial, MaxPoolSize: 100, Events: event.NewDispatcher(discard{})})
}

// BenchmarkCheckOutCheckIn64Real is BenchmarkCheckOutCheckIn64 on real
// connections (TCP, handshake) to an in-process server, as make bench gives
// the official driver's pool; checkout and checkin do no I/O, so the
// difference from fake connections is what the pool does with a real one.
func BenchmarkCheckOutCheckIn64Real(b *testing.B) {
	srv := mongotest.NewServer(b, mongotest.Options{})
	dial := func(ctx context.Context, id int64) (*conn.Conn, error) {
		return conn.Dial(ctx, conn.Config{Address: srv.Addr(), ID: id})
	}
	benchmarkContended(b, Config[*conn.Conn]{Address: srv.Addr(), Dial: dial, MaxPoolSize: 100})
	if n := srv.NumConnections(); n > 100 {
		b.Fatalf("server saw %d connections, more than maxPoolSize 100", n)
	}
}
