package metrics

import (
	"context"
	"slices"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
)

// DefaultExemplarInterval is the least time between two exemplars of a
// histogram's series and bucket when Options.ExemplarInterval is 0.
const DefaultExemplarInterval = time.Second

// exemplarSlots is the number of "last exemplar" times a histogram keeps
// (a power of 2). A series' bucket maps to one slot; series and buckets
// that share a slot share its interval, so a histogram takes at most
// exemplarSlots exemplars per interval.
const exemplarSlots = 256

// histogram is a HistogramVec with the observers of its hot series and
// the times its series' buckets last took an exemplar.
type histogram struct {
	vec    *prometheus.HistogramVec
	bounds []float64 // the buckets' upper bounds, sorted
	// observers caches the observers of the first series seen, so that
	// an observation skips GetMetricWithLabelValues (hashing and
	// validating the label values, a lock): a slot once set is never
	// replaced, so the cache allocates only when it fills.
	observers [observerSlots]atomic.Pointer[cachedObserver]
	// last holds, per slot, when it last took an exemplar: nanoseconds
	// since clockStart, plus 1; 0 is never.
	last [exemplarSlots]atomic.Int64
}

// observerSlots is the size of a histogram's observer cache (a power of
// 2); a series looks in two slots.
const observerSlots = 64

type cachedObserver struct {
	labels []string
	obs    prometheus.Observer
}

// clockStart is the origin of the monotonic clock of the exemplar slots.
var clockStart = time.Now()

func monotonicNow() int64 { return int64(time.Since(clockStart)) + 1 }

// labelsHash hashes label values by their address and length, without
// reading their bytes: the values the sink passes are interned or
// constants, so a series keeps its hash. A value that is not only finds
// the observer cache empty, and may take an extra exemplar.
func labelsHash(labels []string) uint64 {
	x := uint64(0x9e3779b97f4a7c15)
	for _, l := range labels {
		x ^= uint64(uintptr(unsafe.Pointer(unsafe.StringData(l)))) + uint64(len(l))
		x *= 0xbf58476d1ce4e5b9
		x ^= x >> 31
	}
	return x * 0x94d049bb133111eb
}

// observer returns the observer of the series of the label values (x is
// their labelsHash), nil when the values do not fit the labels.
func (h *histogram) observer(x uint64, labels []string) prometheus.Observer {
	i := x >> (64 - 6) // 2^6 == observerSlots
	for _, j := range [2]uint64{i, i ^ 1} {
		if c := h.observers[j].Load(); c != nil && slices.Equal(c.labels, labels) {
			return c.obs
		}
	}
	o, err := h.vec.GetMetricWithLabelValues(labels...)
	if err != nil {
		return nil
	}
	for _, j := range [2]uint64{i, i ^ 1} {
		if h.observers[j].Load() == nil {
			h.observers[j].CompareAndSwap(nil, &cachedObserver{labels: slices.Clone(labels), obs: o})
			break
		}
	}
	return o
}

// slot returns the exemplar slot of the series of hash x and the bucket
// that v falls in.
func (h *histogram) slot(x uint64, v float64) *atomic.Int64 {
	// The bucket: the first bound >= v (Prometheus buckets include their
	// upper bound); len(bounds) is +Inf. NaN falls in 0: only the slot
	// depends on it.
	lo, hi := 0, len(h.bounds)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if h.bounds[mid] < v {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	x = (x ^ uint64(lo)) * 0xbf58476d1ce4e5b9
	return &h.last[x>>(64-8)] // 2^8 == exemplarSlots
}

// observe records d on h's series of the label values. When the context
// carries a sampled span and the series' bucket took no exemplar in the
// last m.exemplarEvery, the observation carries the span's trace id as
// its exemplar; a bucket holds only its latest exemplar, so the ones left
// out would only have replaced it.
//
// The span is looked up before the clock is read: a context lookup costs
// less than a monotonic clock read (about 11 against 33 ns on a KVM
// guest), and without a sampled span the clock is not needed.
func (m *Metrics) observe(ctx context.Context, h *histogram, d time.Duration, labels ...string) {
	x := labelsHash(labels)
	o := h.observer(x, labels)
	if o == nil {
		return
	}
	v := d.Seconds()
	if every := m.exemplarEvery; every > 0 && ctx != nil {
		if sc := trace.SpanContextFromContext(ctx); sc.IsSampled() && sc.IsValid() {
			s := h.slot(x, v)
			last, now := s.Load(), monotonicNow()
			if (last == 0 || now-last >= every) && s.CompareAndSwap(last, now) {
				if eo, ok := o.(prometheus.ExemplarObserver); ok {
					eo.ObserveWithExemplar(v, prometheus.Labels{"trace_id": sc.TraceID().String()})
					return
				}
			}
		}
	}
	o.Observe(v)
}

// ExemplarInterval returns the least time between two exemplars of a
// histogram series' bucket: Options.ExemplarInterval, or its default; a
// negative value when exemplars are off.
func (m *Metrics) ExemplarInterval() time.Duration {
	if m.exemplarEvery <= 0 {
		return -1
	}
	return time.Duration(m.exemplarEvery)
}
