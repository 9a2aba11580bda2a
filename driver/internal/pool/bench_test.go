package pool

import (
	"context"
	"runtime"
	"testing"

	"github.com/mongoscope/mongoscope/driver/event"
)

// benchmarkContended runs checkout+checkin on 64 goroutines.
func benchmarkContended(b *testing.B, maxPoolSize int, events *event.Dispatcher) {
	p, err := New(Config{Address: "db:27017", Dial: fakeDial, MaxPoolSize: maxPoolSize, Events: events})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	p.Ready()
	ctx := context.Background()
	b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
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

// BenchmarkCheckOutCheckIn64 has a connection for every goroutine.
func BenchmarkCheckOutCheckIn64(b *testing.B) { benchmarkContended(b, 100, nil) }

// BenchmarkCheckOutCheckIn64Waiting has 8 connections for 64 goroutines, so
// most checkouts wait in the queue.
func BenchmarkCheckOutCheckIn64Waiting(b *testing.B) { benchmarkContended(b, 8, nil) }

type discard struct{}

func (discard) PoolEvent(context.Context, event.PoolEvent) {}

// BenchmarkCheckOutCheckIn64Monitored adds a pool monitor that does nothing.
func BenchmarkCheckOutCheckIn64Monitored(b *testing.B) {
	benchmarkContended(b, 100, event.NewDispatcher(discard{}))
}
