package selection

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
)

// Constants from the specifications.
const (
	// DefaultHeartbeatFrequency is heartbeatFrequencyMS's default for
	// multi-threaded drivers.
	DefaultHeartbeatFrequency = 10 * time.Second
	// IdleWritePeriod is how often an idle primary writes a no-op
	// (idleWritePeriodMS, Max Staleness spec).
	IdleWritePeriod = 10 * time.Second
	// SmallestMaxStaleness is smallestMaxStalenessSeconds.
	SmallestMaxStaleness = 90 * time.Second
	// DefaultLocalThreshold is localThresholdMS's default.
	DefaultLocalThreshold = 15 * time.Millisecond
	// DefaultTimeout is serverSelectionTimeoutMS's default.
	DefaultTimeout = 30 * time.Second
)

// available reports whether a server of type st is believed reachable: every
// type but Unknown and PossiblePrimary (the spec's "available"), and none
// that description does not define.
func available(st description.ServerType) bool {
	switch st {
	case description.Standalone, description.Mongos, description.RSPrimary, description.RSSecondary,
		description.RSArbiter, description.RSOther, description.RSGhost, description.LoadBalancer:
		return true
	}
	return false
}

func replicaSet(tt description.TopologyType) bool {
	return tt == description.ReplicaSetNoPrimary || tt == description.ReplicaSetWithPrimary
}

func heartbeatOrDefault(d time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return DefaultHeartbeatFrequency
}

// maxSummaryServers caps how many servers a summary lists, so an error about
// a large sharded cluster stays readable.
const maxSummaryServers = 16

// Summary renders t for errors and logs: its type and each server's
// address, type, average RTT (when available) and error, and the
// compatibility error if any. It holds no tags, dates or credentials.
func Summary(t description.TopologyDescription) string {
	var b strings.Builder
	b.WriteString(t.Type.String())
	b.WriteString(" [")
	for i := range t.Servers {
		if i == maxSummaryServers {
			fmt.Fprintf(&b, ", ... %d more", len(t.Servers)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		writeServer(&b, &t.Servers[i])
	}
	b.WriteString("]")
	if t.CompatibilityErr != nil {
		b.WriteString(" incompatible: ")
		b.WriteString(t.CompatibilityErr.Error())
	}
	return b.String()
}

func writeServer(b *strings.Builder, s *description.ServerDescription) {
	fmt.Fprintf(b, "%s %s", s.Address, s.Type)
	if available(s.Type) {
		fmt.Fprintf(b, " rtt=%s", s.RoundTripTime)
	}
	if s.Error != nil {
		fmt.Fprintf(b, " error=%q", s.Error.Error())
	}
}

// Mode is a read preference mode.
type Mode int

// The read preference modes. The zero Mode is Primary, the default.
const (
	Primary Mode = iota
	PrimaryPreferred
	Secondary
	SecondaryPreferred
	Nearest
)

var modeNames = [...]string{
	Primary:            "primary",
	PrimaryPreferred:   "primaryPreferred",
	Secondary:          "secondary",
	SecondaryPreferred: "secondaryPreferred",
	Nearest:            "nearest",
}

// String returns the mode in camel case, as $readPreference spells it.
func (m Mode) String() string {
	if m >= 0 && int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// modeReadTexts are the Selector texts of a read by mode alone.
var modeReadTexts = func() (t [len(modeNames)]string) {
	for m := range t {
		t[m] = "read " + ReadPref{Mode: Mode(m)}.String()
	}
	return t
}()

func (m Mode) valid() bool { return m >= 0 && int(m) < len(modeNames) }

// ParseMode parses a mode name, ignoring case ("secondaryPreferred",
// "SecondaryPreferred" and "secondarypreferred" are one mode).
func ParseMode(s string) (Mode, error) {
	for i, name := range modeNames {
		if strings.EqualFold(s, name) {
			return Mode(i), nil
		}
	}
	return 0, &Error{Field: "mode", Reason: fmt.Sprintf("unknown read preference mode %q", s)}
}

// TagSet is one read preference tag set: a member matches it when the
// member's tags include every pair of it.
type TagSet map[string]string

// ReadPref is a read preference.
type ReadPref struct {
	Mode Mode
	// TagSets are tried in order; nil or empty means every candidate is
	// eligible, as does a list holding an empty tag set.
	TagSets []TagSet
	// MaxStaleness is maxStalenessSeconds. nil, or a negative duration
	// (the specifications' -1), means no maximum. Otherwise it must be a
	// positive whole number of seconds: zero is invalid, not "none".
	MaxStaleness *time.Duration
}

// NoMaxStaleness is the specifications' maxStalenessSeconds -1: no maximum.
const NoMaxStaleness = -time.Second

// maxStaleness returns the maximum staleness and whether there is one
// (set and not negative; Validate refuses zero).
func (rp *ReadPref) maxStaleness() (time.Duration, bool) {
	if rp.MaxStaleness == nil || *rp.MaxStaleness < 0 {
		return 0, false
	}
	return *rp.MaxStaleness, true
}

// String renders every component of the read preference, for errors and the
// selection log messages.
func (rp ReadPref) String() string {
	var b strings.Builder
	b.WriteString("{mode: ")
	b.WriteString(rp.Mode.String())
	if len(rp.TagSets) > 0 {
		b.WriteString(", tagSets: [")
		for i, ts := range rp.TagSets {
			if i > 0 {
				b.WriteString(", ")
			}
			writeTagSet(&b, ts)
		}
		b.WriteString("]")
	}
	if ms, ok := rp.maxStaleness(); ok {
		fmt.Fprintf(&b, ", maxStalenessSeconds: %g", ms.Seconds())
	}
	b.WriteString("}")
	return b.String()
}

// sortedKeys returns the tag set's keys in order: map order is random, and
// renderings and documents should not be.
func sortedKeys(ts TagSet) []string {
	keys := make([]string, 0, len(ts))
	for k := range ts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func writeTagSet(b *strings.Builder, ts TagSet) {
	b.WriteString("{")
	for i, k := range sortedKeys(ts) {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(b, "%s: %q", k, ts[k])
	}
	b.WriteString("}")
}

// Selector says what an operation needs: a server for writes, or for reads
// under a read preference.
type Selector struct {
	// Write selects a writable server; ReadPref is then ignored.
	Write    bool
	ReadPref ReadPref
	// Deprioritized lists addresses that a retry should avoid: they are
	// chosen only when no other server is suitable.
	Deprioritized []string
	// Filter is the optional application-provided selector, applied to the
	// suitable servers before the latency window. It may return a subset of
	// its argument (reusing the slice), but must not keep the slice after it
	// returns: Select reuses it. The descriptions are shared with the
	// topology and must not be modified.
	Filter func([]*description.ServerDescription) []*description.ServerDescription
}

// Read returns a selector for reads under rp.
func Read(rp ReadPref) Selector { return Selector{ReadPref: rp} }

// Write returns a selector for writes.
func Write() Selector { return Selector{Write: true} }

// String describes the selector for errors and logs.
func (s Selector) String() string {
	// The common selectors (a write, or a read by mode alone) have fixed
	// texts, rendered once: each operation's selection events name one.
	if len(s.Deprioritized) == 0 && s.Filter == nil {
		if s.Write {
			return "write"
		}
		if _, ok := s.ReadPref.maxStaleness(); !ok && len(s.ReadPref.TagSets) == 0 && s.ReadPref.Mode.valid() {
			return modeReadTexts[s.ReadPref.Mode]
		}
	}
	var b strings.Builder
	if s.Write {
		b.WriteString("write")
	} else {
		b.WriteString("read ")
		b.WriteString(s.ReadPref.String())
	}
	if len(s.Deprioritized) > 0 {
		fmt.Fprintf(&b, " deprioritized %v", s.Deprioritized)
	}
	if s.Filter != nil {
		b.WriteString(" with custom selector")
	}
	return b.String()
}
