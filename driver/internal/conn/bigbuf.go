package conn

import "sync"

// Big replies (bigReply and up: cursor batches of up to 16 MB) are read
// into buffers that a cursor hands back with RecycleBuffer when it moves
// on to its next batch or closes. Without that, each batch allocates and
// zeroes a fresh 16 MB buffer, and with a small live heap every such
// allocation starts a garbage collection: on the benchmarking
// specification's find-many task that was a third of the process's time.
//
// The pool is a sync.Pool, so the garbage collector frees buffers that
// stay unused across two cycles; a buffer is never shared: whoever gets one
// owns it until it recycles it or drops it.

// bigGranule rounds big buffers' capacities, so that the batches of one
// cursor, which differ in size by a few bytes, reuse one buffer.
const bigGranule = 4 << 20

var bigPool sync.Pool // of *[]byte, each of cap >= bigReply

// getBig returns a buffer of length n >= bigReply whose contents are
// undefined (the caller overwrites all n bytes).
func getBig(n int) []byte {
	for range 2 {
		p, _ := bigPool.Get().(*[]byte)
		if p == nil {
			break
		}
		if cap(*p) >= n {
			return (*p)[:n]
		}
		// Too small for this reply: a later, smaller one may use it, but
		// holding on to it here would just pin memory; let it go.
	}
	c := (n + bigGranule - 1) / bigGranule * bigGranule
	return make([]byte, n, c)
}

// RecycleBuffer takes back a buffer that holds a big reply (Result.Buf in
// the operation package): its owner must not read it, or anything sliced
// from it, afterwards. Buffers below bigReply and nil are ignored.
func RecycleBuffer(b []byte) {
	if cap(b) < bigReply {
		return
	}
	b = b[:0]
	bigPool.Put(&b)
}
