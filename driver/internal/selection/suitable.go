package selection

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// Validate checks the read preference against the Server Selection and Max
// Staleness rules: a known mode; no tag sets and no maxStalenessSeconds with
// mode primary; and, on a replica set, maxStalenessSeconds of at least
// smallestMaxStalenessSeconds (90s) and at least heartbeatFrequencyMS plus
// idleWritePeriodMS. It returns a *Error naming the component.
func (rp ReadPref) Validate(t Topology) error {
	if !rp.Mode.valid() {
		return &Error{Field: "mode", Reason: fmt.Sprintf("unknown mode %d", int(rp.Mode))}
	}
	if rp.Mode == Primary {
		for _, ts := range rp.TagSets {
			if len(ts) > 0 {
				return &Error{Field: "tagSets", Reason: "tag sets are not allowed with mode primary"}
			}
		}
		if rp.MaxStaleness > 0 {
			return &Error{Field: "maxStalenessSeconds", Reason: "maxStalenessSeconds is not allowed with mode primary"}
		}
	}
	if rp.MaxStaleness > 0 && t.Kind.replicaSet() {
		if rp.MaxStaleness < SmallestMaxStaleness {
			return &Error{Field: "maxStalenessSeconds", Reason: fmt.Sprintf(
				"%gs is less than the smallest allowed, %gs", rp.MaxStaleness.Seconds(), SmallestMaxStaleness.Seconds())}
		}
		if min := t.heartbeat() + IdleWritePeriod; rp.MaxStaleness < min {
			return &Error{Field: "maxStalenessSeconds", Reason: fmt.Sprintf(
				"%gs is less than heartbeatFrequencyMS plus idleWritePeriodMS (%gs)", rp.MaxStaleness.Seconds(), min.Seconds())}
		}
	}
	return nil
}

// Suitable returns the servers suitable for sel, before the latency window:
// it validates the read preference, applies the topology type's rules
// (mode, maxStalenessSeconds, tag sets), leaves deprioritised servers out
// unless nothing else is suitable, and then applies sel.Filter. The result
// is a new slice in the topology's order; nil when nothing is suitable.
func Suitable(t Topology, sel Selector) ([]Server, error) {
	return appendSuitable(nil, t, sel)
}

func appendSuitable(dst []Server, t Topology, sel Selector) ([]Server, error) {
	if !sel.Write {
		if err := sel.ReadPref.Validate(t); err != nil {
			return nil, err
		}
	}
	start := len(dst)
	if len(sel.Deprioritized) > 0 {
		dst = appendByType(dst, t, sel, true)
	}
	if len(dst) == start {
		dst = appendByType(dst, t, sel, false)
	}
	if sel.Filter != nil && len(dst) > start {
		got := sel.Filter(slices.Clip(dst[start:]))
		dst = append(dst[:start], got...)
	}
	if len(dst) == start {
		return dst[:start:start], nil
	}
	return dst, nil
}

// appendByType appends the suitable servers by topology type, skipping
// deprioritised addresses when skipDeprioritized is set.
func appendByType(dst []Server, t Topology, sel Selector, skipDeprioritized bool) []Server {
	keep := func(s *Server) bool {
		return !skipDeprioritized || !slices.Contains(sel.Deprioritized, s.Addr)
	}
	switch t.Kind {
	case Single:
		// Read preference is ignored: the one server is suitable if available.
		for i := range t.Servers {
			if s := &t.Servers[i]; s.Kind.Available() && keep(s) {
				dst = append(dst, *s)
			}
		}
	case Sharded:
		dst = appendKind(dst, t, Mongos, keep)
	case LoadBalanced:
		dst = appendKind(dst, t, LoadBalancer, keep)
	case ReplicaSetWithPrimary, ReplicaSetNoPrimary:
		if sel.Write {
			return appendKind(dst, t, RSPrimary, keep)
		}
		dst = appendReplicaSetRead(dst, t, sel.ReadPref, keep)
	}
	return dst
}

func appendKind(dst []Server, t Topology, kind ServerKind, keep func(*Server) bool) []Server {
	for i := range t.Servers {
		if s := &t.Servers[i]; s.Kind == kind && keep(s) {
			dst = append(dst, *s)
		}
	}
	return dst
}

func appendReplicaSetRead(dst []Server, t Topology, rp ReadPref, keep func(*Server) bool) []Server {
	start := len(dst)
	switch rp.Mode {
	case Primary:
		return appendKind(dst, t, RSPrimary, keep)
	case PrimaryPreferred:
		if dst = appendKind(dst, t, RSPrimary, keep); len(dst) > start {
			return dst
		}
		return appendEligible(dst, t, rp, false, keep)
	case Secondary:
		return appendEligible(dst, t, rp, false, keep)
	case SecondaryPreferred:
		if dst = appendEligible(dst, t, rp, false, keep); len(dst) > start {
			return dst
		}
		return appendKind(dst, t, RSPrimary, keep)
	case Nearest:
		return appendEligible(dst, t, rp, true, keep)
	}
	return dst
}

// appendEligible appends the secondaries (and the primary, for nearest) that
// pass maxStalenessSeconds and then the first tag set matching any of them.
func appendEligible(dst []Server, t Topology, rp ReadPref, withPrimary bool, keep func(*Server) bool) []Server {
	start := len(dst)
	var st staleness
	if rp.MaxStaleness > 0 {
		st = newStaleness(t)
	}
	for i := range t.Servers {
		s := &t.Servers[i]
		if s.Kind != RSSecondary && (!withPrimary || s.Kind != RSPrimary) || !keep(s) {
			continue
		}
		if rp.MaxStaleness > 0 && st.of(s) > rp.MaxStaleness {
			continue
		}
		dst = append(dst, *s)
	}
	if len(rp.TagSets) == 0 || len(dst) == start {
		return dst
	}
	// The first tag set matching any candidate decides; an empty tag set
	// matches them all.
	for _, ts := range rp.TagSets {
		kept := dst[:start]
		for _, s := range dst[start:] {
			if tagsMatch(ts, s.Tags) {
				kept = append(kept, s) // in place: never overtakes the read
			}
		}
		if len(kept) > start {
			clear(dst[len(kept):])
			return kept
		}
	}
	clear(dst[start:])
	return dst[:start]
}

func tagsMatch(want TagSet, have map[string]string) bool {
	if len(want) == 0 {
		return true // skip starting a map iteration
	}
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// staleness estimates secondaries' replication lag as the Max Staleness spec
// does, against the whole topology (so a deprioritised primary still anchors
// the estimate).
type staleness struct {
	heartbeat time.Duration
	primary   *Server // ReplicaSetWithPrimary: the primary
	maxWrite  time.Time
}

func newStaleness(t Topology) staleness {
	st := staleness{heartbeat: t.heartbeat()}
	if t.Kind == ReplicaSetWithPrimary {
		for i := range t.Servers {
			if t.Servers[i].Kind == RSPrimary {
				st.primary = &t.Servers[i]
				break
			}
		}
	}
	if st.primary == nil {
		// No primary known: measure against the freshest secondary.
		for i := range t.Servers {
			if s := &t.Servers[i]; s.Kind == RSSecondary && s.LastWriteDate.After(st.maxWrite) {
				st.maxWrite = s.LastWriteDate
			}
		}
	}
	return st
}

func (st staleness) of(s *Server) time.Duration {
	if s.Kind != RSSecondary {
		return 0
	}
	if p := st.primary; p != nil {
		lag := satSub(s.LastUpdateTime.Sub(s.LastWriteDate), p.LastUpdateTime.Sub(p.LastWriteDate))
		return satAdd(lag, st.heartbeat)
	}
	return satAdd(st.maxWrite.Sub(s.LastWriteDate), st.heartbeat)
}

// satAdd and satSub saturate instead of wrapping, so that absurd dates from a
// server make a secondary look very stale (or very fresh), never wrap around.
func satAdd(a, b time.Duration) time.Duration {
	c := a + b
	if (b > 0 && c < a) || (b < 0 && c > a) {
		if b > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return c
}

func satSub(a, b time.Duration) time.Duration {
	if b == math.MinInt64 {
		if a >= 0 {
			return math.MaxInt64
		}
		return a - b
	}
	return satAdd(a, -b)
}
