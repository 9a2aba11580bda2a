package description

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// rttAlpha is the weight of a new sample in the moving average (Server
// Selection spec): about 85% of the average rests on the last 9 samples.
const rttAlpha = 0.2

// rttWindow is how many recent samples the minimum is taken over.
const rttWindow = 10

// RTT keeps a server's round trip times: the exponentially weighted moving
// average of the Server Selection specification and the minimum of the
// last 10 samples (Server Monitoring). The zero value is empty and ready;
// it is safe for concurrent use, since the RTT monitor adds samples while
// the server monitor reads them. It must not be copied after first use.
type RTT struct {
	mu      sync.Mutex
	avg     float64 // nanoseconds
	n       int     // samples since Reset, capped at rttWindow for the ring
	next    int
	samples [rttWindow]time.Duration
	// min is Min's answer, computed when a sample comes or on Reset:
	// selection reads it for every operation, without the lock.
	min atomic.Int64
}

// Add records one sample. The first sample after Reset becomes the
// average; each later one moves it by rttAlpha. Negative samples (a clock
// that stepped back) count as zero.
func (r *RTT) Add(d time.Duration) {
	if d < 0 {
		d = 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == 0 {
		r.avg = float64(d)
	} else {
		r.avg = rttAlpha*float64(d) + (1-rttAlpha)*r.avg
	}
	r.samples[r.next] = d
	r.next = (r.next + 1) % rttWindow
	if r.n < rttWindow {
		r.n++
	}
	r.min.Store(int64(r.windowMin()))
}

// Average returns the moving average and whether there is one (false
// after Reset until the next sample).
func (r *RTT) Average() (time.Duration, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == 0 {
		return 0, false
	}
	if r.avg >= math.MaxInt64 {
		return time.Duration(math.MaxInt64), true
	}
	return time.Duration(math.Round(r.avg)), true
}

// Min returns the smallest of the last 10 samples, or 0 while there are
// fewer than 2, as the specification requires.
func (r *RTT) Min() time.Duration {
	return time.Duration(r.min.Load())
}

// windowMin computes Min; r.mu is held.
func (r *RTT) windowMin() time.Duration {
	if r.n < 2 {
		return 0
	}
	m := r.samples[0]
	for _, d := range r.samples[1:r.n] {
		m = min(m, d)
	}
	return m
}

// Reset forgets every sample: the server became Unknown.
func (r *RTT) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.avg, r.n, r.next = 0, 0, 0
	r.min.Store(0)
}
