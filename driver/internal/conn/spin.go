package conn

import (
	"runtime"
	"sync/atomic"
	"time"
)

// DefaultSpinWait is how long a lone exchange polls for its reply before
// it parks (Spinner).
const DefaultSpinWait = 50 * time.Microsecond

// Spinner lets an exchange that is the only one of its client waiting for
// a reply poll its socket for a short while (the budget) instead of
// parking its goroutine at once. A parked goroutine is woken by the
// kernel when the reply comes, and on an idle CPU (a virtual one above
// all) that wake-up alone can take longer than a nearby server takes to
// answer; polling keeps the CPU awake and picks the reply up as it
// lands. It costs CPU time: at most the budget per exchange, and only
// while nothing else of the client waits, since an exchange stops
// polling (and parks) as soon as a second one waits, and yields its
// thread to other goroutines between polls. When a poll runs out of
// budget (a slower server, or a remote one), the next exchanges do not
// poll: 2, 4, ... up to 1024 of them after as many misses in a row, so a
// server farther away than the budget costs next to nothing.
//
// One Spinner serves all the pooled connections of a client; monitoring
// connections have none.
type Spinner struct {
	budget  time.Duration
	waiting atomic.Int32 // exchanges of the client waiting in receive
	skip    atomic.Int32 // exchanges left that do not poll, after misses
	misses  atomic.Int32 // polls in a row that ran out of budget
	caught  atomic.Int64 // replies a poll found, for tests
}

// NewSpinner returns a Spinner with the given budget; a budget of zero or
// less returns nil, which never polls.
func NewSpinner(budget time.Duration) *Spinner {
	if budget <= 0 {
		return nil
	}
	return &Spinner{budget: budget}
}

// spin polls c's socket until a reply is there to read, the budget runs
// out, or another exchange of the client starts waiting. c.br has nothing
// buffered.
func (s *Spinner) spin(c *Conn) {
	if s.skip.Load() > 0 {
		s.skip.Add(-1)
		return
	}
	start := time.Now()
	for {
		if s.waiting.Load() != 1 {
			return
		}
		ready, ok := c.pollReadable()
		if !ok {
			return
		}
		if ready {
			s.misses.Store(0)
			s.caught.Add(1)
			return
		}
		if time.Since(start) >= s.budget {
			m := min(s.misses.Add(1), 10)
			s.skip.Store(1 << m)
			return
		}
		runtime.Gosched()
	}
}

// Budget returns how long an exchange polls; 0 for a nil Spinner (off).
func (s *Spinner) Budget() time.Duration {
	if s == nil {
		return 0
	}
	return s.budget
}
