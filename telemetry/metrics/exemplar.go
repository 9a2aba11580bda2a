package metrics

import (
	"context"
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

// histogram is a HistogramVec with the times its series' buckets last
// took an exemplar.
type histogram struct {
	vec    *prometheus.HistogramVec
	bounds []float64 // the buckets' upper bounds, sorted
	// last holds, per slot, when it last took an exemplar: nanoseconds
	// since clockStart, plus 1; 0 is never.
	last [exemplarSlots]atomic.Int64
}

// clockStart is the origin of the monotonic clock of the exemplar slots.
var clockStart = time.Now()

func monotonicNow() int64 { return int64(time.Since(clockStart)) + 1 }

// slot returns the slot of the series of the label values and the bucket
// that v falls in. Label values are hashed by their address and length,
// without reading their bytes: the values the sink passes are interned or
// constants, so a series keeps its slot; a value that is not only costs
// an extra exemplar now and then.
func (h *histogram) slot(v float64, labels []string) *atomic.Int64 {
	// The bucket: the first bound >= v (Prometheus buckets include their
	// upper bound); len(bounds) is +Inf (and NaN).
	lo, hi := 0, len(h.bounds)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if h.bounds[mid] < v {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	x := uint64(lo) + 0x9e3779b97f4a7c15
	for _, l := range labels {
		x ^= uint64(uintptr(unsafe.Pointer(unsafe.StringData(l)))) + uint64(len(l))
		x *= 0xbf58476d1ce4e5b9
		x ^= x >> 31
	}
	x *= 0x94d049bb133111eb
	return &h.last[x>>(64-8)] // 2^8 == exemplarSlots
}

// observe records d on h's series of the label values. When the context
// carries a sampled span and the series' bucket took no exemplar in the
// last m.exemplarEvery, the observation carries the span's trace id as
// its exemplar; Prometheus keeps one exemplar per bucket, the latest, so
// the ones left out would only have replaced it.
func (m *Metrics) observe(ctx context.Context, h *histogram, d time.Duration, labels ...string) {
	o, err := h.vec.GetMetricWithLabelValues(labels...)
	if err != nil {
		return
	}
	v := d.Seconds()
	if every := m.exemplarEvery; every > 0 && ctx != nil {
		s := h.slot(v, labels)
		last, now := s.Load(), monotonicNow()
		if last == 0 || now-last >= every {
			if sc := trace.SpanContextFromContext(ctx); sc.IsValid() && sc.IsSampled() && s.CompareAndSwap(last, now) {
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
