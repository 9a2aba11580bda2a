package selection

import (
	"math"
	"math/rand/v2"
	"time"
)

// InWindow returns the servers whose average RTT is within localThreshold of
// the lowest among them (the latency window), in their original order. The
// result is a new slice; servers is not modified.
func InWindow(servers []Server, localThreshold time.Duration) []Server {
	return appendInWindow(nil, servers, localThreshold)
}

func appendInWindow(dst, servers []Server, localThreshold time.Duration) []Server {
	if len(servers) == 0 {
		return dst
	}
	lowest := servers[0].AvgRTT
	for _, s := range servers[1:] {
		if s.AvgRTT < lowest {
			lowest = s.AvgRTT
		}
	}
	if localThreshold < 0 {
		localThreshold = 0
	}
	limit := satAdd(lowest, localThreshold)
	for _, s := range servers {
		if s.AvgRTT <= limit {
			dst = append(dst, s)
		}
	}
	return dst
}

// Pick chooses one server of the latency window: two distinct servers at
// random, then the one with fewer operations in progress (the first drawn
// on a tie, which is itself random). r nil uses the global source. An empty
// window yields the zero Server.
func Pick(window []Server, r *rand.Rand) Server {
	i, ok := pickIndex(window, r)
	if !ok {
		return Server{}
	}
	return window[i]
}

func pickIndex(window []Server, r *rand.Rand) (int, bool) {
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
	if window[j].OperationCount < window[i].OperationCount {
		return j, true
	}
	return i, true
}

// rttAlpha is the weight of a new sample in the average RTT.
const rttAlpha = 0.2

// NextAvgRTT returns the average RTT after a new sample: the sample itself
// when first is set (no average yet), otherwise the exponentially weighted
// moving average with alpha 0.2 that the Server Selection spec prescribes.
func NextAvgRTT(prev, sample time.Duration, first bool) time.Duration {
	if first {
		return sample
	}
	return time.Duration(math.Round(rttAlpha*float64(sample) + (1-rttAlpha)*float64(prev)))
}
