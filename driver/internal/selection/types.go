package selection

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// ServerKind is a server's type as SDAM sees it.
type ServerKind int

// The server types of the SDAM specification.
const (
	Unknown ServerKind = iota
	Standalone
	Mongos
	RSPrimary
	RSSecondary
	RSArbiter
	RSOther
	RSGhost
	LoadBalancer
	PossiblePrimary
)

var serverKindNames = [...]string{
	Unknown:         "Unknown",
	Standalone:      "Standalone",
	Mongos:          "Mongos",
	RSPrimary:       "RSPrimary",
	RSSecondary:     "RSSecondary",
	RSArbiter:       "RSArbiter",
	RSOther:         "RSOther",
	RSGhost:         "RSGhost",
	LoadBalancer:    "LoadBalancer",
	PossiblePrimary: "PossiblePrimary",
}

// String returns the specification's name for the kind.
func (k ServerKind) String() string {
	if k >= 0 && int(k) < len(serverKindNames) {
		return serverKindNames[k]
	}
	return fmt.Sprintf("ServerKind(%d)", int(k))
}

// Available reports whether a server of this kind is believed reachable:
// every kind but Unknown and PossiblePrimary (the spec's "available").
func (k ServerKind) Available() bool {
	return k != Unknown && k != PossiblePrimary && k >= 0 && int(k) < len(serverKindNames)
}

// TopologyKind is a topology's type as SDAM sees it.
type TopologyKind int

// The topology types of the SDAM specification.
const (
	TopologyUnknown TopologyKind = iota
	Single
	ReplicaSetNoPrimary
	ReplicaSetWithPrimary
	Sharded
	LoadBalanced
)

var topologyKindNames = [...]string{
	TopologyUnknown:       "Unknown",
	Single:                "Single",
	ReplicaSetNoPrimary:   "ReplicaSetNoPrimary",
	ReplicaSetWithPrimary: "ReplicaSetWithPrimary",
	Sharded:               "Sharded",
	LoadBalanced:          "LoadBalanced",
}

// String returns the specification's name for the kind.
func (k TopologyKind) String() string {
	if k >= 0 && int(k) < len(topologyKindNames) {
		return topologyKindNames[k]
	}
	return fmt.Sprintf("TopologyKind(%d)", int(k))
}

func (k TopologyKind) replicaSet() bool {
	return k == ReplicaSetNoPrimary || k == ReplicaSetWithPrimary
}

// Server is what selection needs to know about one server.
type Server struct {
	Addr string
	Kind ServerKind
	// AvgRTT is the average round-trip time of the monitor's hellos.
	AvgRTT time.Duration
	// Tags are the replica-set member's tags.
	Tags map[string]string
	// LastUpdateTime is when the server's description was last updated, by
	// this client's clock.
	LastUpdateTime time.Time
	// LastWriteDate is the server's lastWrite.lastWriteDate, by its clock.
	LastWriteDate  time.Time
	MaxWireVersion int32
	// OperationCount is the number of operations in progress on the server,
	// for the choice between two random servers in the latency window.
	OperationCount int64
	// Err is the error that made the server Unknown, if any; it is shown in
	// selection errors, so it must never hold a credential (the connection
	// layer's errors never do).
	Err error
}

// Topology is what selection needs to know about the deployment.
type Topology struct {
	Kind    TopologyKind
	Servers []Server
	// HeartbeatFrequency is heartbeatFrequencyMS; zero means the SDAM
	// default, [DefaultHeartbeatFrequency].
	HeartbeatFrequency time.Duration
	// CompatibilityErr is set by SDAM when an available server's wire
	// version range does not overlap the driver's; selection then fails at
	// once with it.
	CompatibilityErr error
}

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

func (t Topology) heartbeat() time.Duration {
	if t.HeartbeatFrequency > 0 {
		return t.HeartbeatFrequency
	}
	return DefaultHeartbeatFrequency
}

// maxSummaryServers caps how many servers a summary lists, so an error about
// a large sharded cluster stays readable.
const maxSummaryServers = 16

// String summarises the topology for errors and logs: its kind and each
// server's address, kind, average RTT and error. It holds no credentials.
func (t Topology) String() string {
	var b strings.Builder
	b.WriteString(t.Kind.String())
	b.WriteString(" [")
	for i, s := range t.Servers {
		if i == maxSummaryServers {
			fmt.Fprintf(&b, ", ... %d more", len(t.Servers)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(s.String())
	}
	b.WriteString("]")
	if t.CompatibilityErr != nil {
		b.WriteString(" incompatible: ")
		b.WriteString(t.CompatibilityErr.Error())
	}
	return b.String()
}

// String summarises the server: address, kind, average RTT and error.
func (s Server) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", s.Addr, s.Kind)
	if s.Kind.Available() {
		fmt.Fprintf(&b, " rtt=%s", s.AvgRTT)
	}
	if s.Err != nil {
		fmt.Fprintf(&b, " error=%q", s.Err.Error())
	}
	return b.String()
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
	// MaxStaleness is maxStalenessSeconds; zero or negative means none.
	MaxStaleness time.Duration
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
	if rp.MaxStaleness > 0 {
		fmt.Fprintf(&b, ", maxStalenessSeconds: %g", rp.MaxStaleness.Seconds())
	}
	b.WriteString("}")
	return b.String()
}

func writeTagSet(b *strings.Builder, ts TagSet) {
	keys := make([]string, 0, len(ts))
	for k := range ts {
		keys = append(keys, k)
	}
	sort.Strings(keys) // map order is random; the rendering should not be
	b.WriteString("{")
	for i, k := range keys {
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
	// returns: Select reuses it.
	Filter func([]Server) []Server
}

// Read returns a selector for reads under rp.
func Read(rp ReadPref) Selector { return Selector{ReadPref: rp} }

// Write returns a selector for writes.
func Write() Selector { return Selector{Write: true} }

// String describes the selector for errors and logs.
func (s Selector) String() string {
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
