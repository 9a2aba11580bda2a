package selection

import (
	"math/rand/v2"
	"time"

	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
)

// InWindow returns the servers whose average RTT is within localThreshold of
// the lowest among them (the latency window), in their original order. The
// result is a new slice; servers is not modified.
func InWindow(servers []*description.ServerDescription, localThreshold time.Duration) []*description.ServerDescription {
	if len(servers) == 0 {
		return nil
	}
	return appendInWindow(make([]*description.ServerDescription, 0, len(servers)), servers, localThreshold)
}

func appendInWindow(dst, servers []*description.ServerDescription, localThreshold time.Duration) []*description.ServerDescription {
	if len(servers) == 0 {
		return dst
	}
	lowest := servers[0].RoundTripTime
	for _, s := range servers[1:] {
		if s.RoundTripTime < lowest {
			lowest = s.RoundTripTime
		}
	}
	if localThreshold < 0 {
		localThreshold = 0
	}
	limit := satAdd(lowest, localThreshold)
	for _, s := range servers {
		if s.RoundTripTime <= limit {
			dst = append(dst, s)
		}
	}
	return dst
}

// OperationCounter tells how many operations are in progress on a server:
// its operationCount, which the choice between two servers compares.
type OperationCounter interface {
	OperationCount(addr string) int64
}

// Pick chooses one server of the latency window: two distinct servers at
// random, then the one with fewer operations in progress by ops (the first
// drawn on a tie, which is itself random). r nil uses the global source. An
// empty window yields nil.
func Pick(window []*description.ServerDescription, ops OperationCounter, r *rand.Rand) *description.ServerDescription {
	i, ok := pickIndex(window, ops, r)
	if !ok {
		return nil
	}
	return window[i]
}

func pickIndex(window []*description.ServerDescription, ops OperationCounter, r *rand.Rand) (int, bool) {
	n := len(window)
	switch n {
	case 0:
		return 0, false
	case 1:
		return 0, true
	}
	intN := rand.IntN
	if r != nil {
		intN = r.IntN
	}
	i := intN(n)
	j := intN(n - 1)
	if j >= i {
		j++ // j is uniform over the other n-1 servers
	}
	if ops.OperationCount(window[j].Address) < ops.OperationCount(window[i].Address) {
		return j, true
	}
	return i, true
}
