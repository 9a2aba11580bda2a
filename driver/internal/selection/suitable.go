package selection

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
)

// Validate checks the rules that hold whatever the deployment: a known
// mode; no non-empty tag set and no maxStalenessSeconds with mode primary;
// and maxStalenessSeconds, when set and not negative (no maximum), a
// positive whole number of seconds. It returns a *Error naming the
// component.
func (rp ReadPref) Validate() error {
	if !rp.Mode.valid() {
		return &Error{Field: "mode", Reason: fmt.Sprintf("unknown mode %d", int(rp.Mode))}
	}
	ms, hasMax := rp.maxStaleness()
	if hasMax {
		switch {
		case ms == 0:
			return &Error{Field: "maxStalenessSeconds", Reason: "0 is not allowed: it must be positive, or -1 for no maximum"}
		case ms%time.Second != 0:
			return &Error{Field: "maxStalenessSeconds", Reason: fmt.Sprintf("%s is not a whole number of seconds", ms)}
		}
	}
	if rp.Mode == Primary {
		for _, ts := range rp.TagSets {
			if len(ts) > 0 {
				return &Error{Field: "tagSets", Reason: "tag sets are not allowed with mode primary"}
			}
		}
		if hasMax {
			return &Error{Field: "maxStalenessSeconds", Reason: "maxStalenessSeconds is not allowed with mode primary"}
		}
	}
	return nil
}

// ValidateFor is Validate plus the rule for a topology of type tt: on a
// replica set, maxStalenessSeconds must be at least
// smallestMaxStalenessSeconds (90s) and at least heartbeatFrequencyMS plus
// idleWritePeriodMS. heartbeat is heartbeatFrequencyMS; zero means
// [DefaultHeartbeatFrequency].
func (rp ReadPref) ValidateFor(tt description.TopologyType, heartbeat time.Duration) error {
	if err := rp.Validate(); err != nil {
		return err
	}
	ms, ok := rp.maxStaleness()
	if !ok || !replicaSet(tt) {
		return nil
	}
	if ms < SmallestMaxStaleness {
		return &Error{Field: "maxStalenessSeconds", Reason: fmt.Sprintf(
			"%gs is less than the smallest allowed, %gs", ms.Seconds(), SmallestMaxStaleness.Seconds())}
	}
	if min := heartbeatOrDefault(heartbeat) + IdleWritePeriod; ms < min {
		return &Error{Field: "maxStalenessSeconds", Reason: fmt.Sprintf(
			"%gs is less than heartbeatFrequencyMS plus idleWritePeriodMS (%gs)", ms.Seconds(), min.Seconds())}
	}
	return nil
}

// Suitable returns the servers of t suitable for sel, before the latency
// window: it validates the read preference, applies the topology type's
// rules (mode, maxStalenessSeconds, tag sets), leaves deprioritised servers
// out unless nothing else is suitable, and then applies sel.Filter.
// heartbeat is heartbeatFrequencyMS (zero means the default). The result is
// a new slice of pointers into t.Servers, in their order; nil when nothing
// is suitable.
func Suitable(t description.TopologyDescription, sel Selector, heartbeat time.Duration) ([]*description.ServerDescription, error) {
	// One allocation: nothing but a Filter can return more servers than
	// the topology has.
	got, err := appendSuitable(make([]*description.ServerDescription, 0, len(t.Servers)), &t, sel, heartbeat)
	if len(got) == 0 {
		return nil, err
	}
	return got, err
}

func appendSuitable(dst []*description.ServerDescription, t *description.TopologyDescription, sel Selector, heartbeat time.Duration) ([]*description.ServerDescription, error) {
	if !sel.Write {
		if err := sel.ReadPref.ValidateFor(t.Type, heartbeat); err != nil {
			return nil, err
		}
	}
	start := len(dst)
	if len(sel.Deprioritized) > 0 {
		dst = appendByType(dst, t, &sel, heartbeat, true)
	}
	if len(dst) == start {
		dst = appendByType(dst, t, &sel, heartbeat, false)
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

// candidates says which servers appendByType may return: all of them, or
// all but the deprioritised ones.
type candidates struct {
	skip []string // the deprioritised addresses; nil keeps every server
}

func (c candidates) keep(s *description.ServerDescription) bool {
	return len(c.skip) == 0 || !slices.Contains(c.skip, s.Address)
}

// appendByType appends the suitable servers by topology type, skipping
// deprioritised addresses when skipDeprioritized is set.
func appendByType(dst []*description.ServerDescription, t *description.TopologyDescription, sel *Selector, heartbeat time.Duration, skipDeprioritized bool) []*description.ServerDescription {
	var c candidates
	if skipDeprioritized {
		c.skip = sel.Deprioritized
	}
	switch t.Type {
	case description.Single:
		// Read preference is ignored: the one server is suitable if available.
		for i := range t.Servers {
			if s := &t.Servers[i]; available(s.Type) && c.keep(s) {
				dst = append(dst, s)
			}
		}
	case description.Sharded:
		dst = appendType(dst, t, description.Mongos, c)
	case description.LoadBalanced:
		dst = appendType(dst, t, description.LoadBalancer, c)
	case description.ReplicaSetWithPrimary, description.ReplicaSetNoPrimary:
		if sel.Write {
			return appendType(dst, t, description.RSPrimary, c)
		}
		dst = appendReplicaSetRead(dst, t, &sel.ReadPref, heartbeat, c)
	}
	return dst
}

func appendType(dst []*description.ServerDescription, t *description.TopologyDescription, st description.ServerType, c candidates) []*description.ServerDescription {
	for i := range t.Servers {
		if s := &t.Servers[i]; s.Type == st && c.keep(s) {
			dst = append(dst, s)
		}
	}
	return dst
}

func appendReplicaSetRead(dst []*description.ServerDescription, t *description.TopologyDescription, rp *ReadPref, heartbeat time.Duration, c candidates) []*description.ServerDescription {
	start := len(dst)
	switch rp.Mode {
	case Primary:
		return appendType(dst, t, description.RSPrimary, c)
	case PrimaryPreferred:
		if dst = appendType(dst, t, description.RSPrimary, c); len(dst) > start {
			return dst
		}
		return appendEligible(dst, t, rp, heartbeat, false, c)
	case Secondary:
		return appendEligible(dst, t, rp, heartbeat, false, c)
	case SecondaryPreferred:
		if dst = appendEligible(dst, t, rp, heartbeat, false, c); len(dst) > start {
			return dst
		}
		return appendType(dst, t, description.RSPrimary, c)
	case Nearest:
		return appendEligible(dst, t, rp, heartbeat, true, c)
	}
	return dst
}

// appendEligible appends the secondaries (and the primary, for nearest) that
// pass maxStalenessSeconds and then the first tag set matching any of them.
func appendEligible(dst []*description.ServerDescription, t *description.TopologyDescription, rp *ReadPref, heartbeat time.Duration, withPrimary bool, c candidates) []*description.ServerDescription {
	start := len(dst)
	maxStale, hasMax := rp.maxStaleness()
	var st staleness
	if hasMax {
		st = newStaleness(t, heartbeat)
	}
	for i := range t.Servers {
		s := &t.Servers[i]
		if s.Type != description.RSSecondary && (!withPrimary || s.Type != description.RSPrimary) || !c.keep(s) {
			continue
		}
		if hasMax && st.of(s) > maxStale {
			continue
		}
		dst = append(dst, s)
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
	primary   *description.ServerDescription // ReplicaSetWithPrimary: the primary
	maxWrite  time.Time                      // otherwise: the freshest secondary's lastWriteDate
}

func newStaleness(t *description.TopologyDescription, heartbeat time.Duration) staleness {
	st := staleness{heartbeat: heartbeatOrDefault(heartbeat)}
	if t.Type == description.ReplicaSetWithPrimary {
		for i := range t.Servers {
			if t.Servers[i].Type == description.RSPrimary {
				st.primary = &t.Servers[i]
				break
			}
		}
	}
	if st.primary == nil {
		// No primary known: measure against the freshest secondary.
		for i := range t.Servers {
			if s := &t.Servers[i]; s.Type == description.RSSecondary && s.LastWriteDate.After(st.maxWrite) {
				st.maxWrite = s.LastWriteDate
			}
		}
	}
	return st
}

func (st staleness) of(s *description.ServerDescription) time.Duration {
	if s.Type != description.RSSecondary {
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
