package selection

import "sync"

// fakeSource is a Source whose topology tests change by hand.
type fakeSource struct {
	mu       sync.Mutex
	top      Topology
	changed  chan struct{}
	requests int
	// onRequest, if set, runs on every immediate-check request.
	onRequest func()
}

func (f *fakeSource) Current() (Topology, <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.top, f.changed
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
func (f *fakeSource) set(t Topology) {
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
