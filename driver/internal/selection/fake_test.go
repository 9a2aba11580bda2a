package selection

import (
	"sync"
	"time"

	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
)

// fakeSource is a Source whose topology and operation counts tests change
// by hand.
type fakeSource struct {
	mu       sync.Mutex
	top      description.TopologyDescription
	ops      opCounts
	changed  chan struct{}
	requests int
	// onRequest, if set, runs on every immediate-check request.
	onRequest func()
}

func (f *fakeSource) Current() (description.TopologyDescription, <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.top, f.changed
}

func (f *fakeSource) OperationCount(addr string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ops[addr]
}

func (f *fakeSource) RequestImmediateCheck() {
	f.mu.Lock()
	f.requests++
	fn := f.onRequest
	f.mu.Unlock()
	if fn != nil {
		fn()
	}
}

// set installs a new topology and wakes every waiter.
func (f *fakeSource) set(t description.TopologyDescription) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.top = t
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *fakeSource) requestCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests
}

// opCounts is an OperationCounter over a fixed map.
type opCounts map[string]int64

func (c opCounts) OperationCount(addr string) int64 { return c[addr] }

// dur returns a pointer to d, for ReadPref.MaxStaleness.
func dur(d time.Duration) *time.Duration { return &d }
