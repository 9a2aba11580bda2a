package description

import (
	"slices"
	"strconv"
	"strings"

	"github.com/mongoscope/mongoscope/bson"
)

// Wire versions this driver speaks. 8 is MongoDB 4.2, the oldest server
// the driver supports; 25 is MongoDB 8.0. A server whose range lies wholly
// outside [MinSupportedWireVersion, MaxSupportedWireVersion] makes the
// topology incompatible.
const (
	MinSupportedWireVersion = 8
	MaxSupportedWireVersion = 25
	// minSupportedMongoDB is the server version of MinSupportedWireVersion,
	// named in the compatibility error.
	minSupportedMongoDB = "4.2"
	driverName          = "mongoscope"
)

// TopologyType is the kind of deployment the client believes it is talking
// to. Its String form is the specification's name.
type TopologyType uint8

// Topology types. The zero value is TopologyUnknown ("Unknown").
const (
	TopologyUnknown TopologyType = iota
	Single
	ReplicaSetNoPrimary
	ReplicaSetWithPrimary
	Sharded
	LoadBalanced
)

var topologyTypeNames = [...]string{
	TopologyUnknown:       "Unknown",
	Single:                "Single",
	ReplicaSetNoPrimary:   "ReplicaSetNoPrimary",
	ReplicaSetWithPrimary: "ReplicaSetWithPrimary",
	Sharded:               "Sharded",
	LoadBalanced:          "LoadBalanced",
}

// String returns the specification's name for t.
func (t TopologyType) String() string {
	if int(t) < len(topologyTypeNames) {
		return topologyTypeNames[t]
	}
	return "TopologyType(" + strconv.Itoa(int(t)) + ")"
}

// Settings are the client options the initial topology depends on.
type Settings struct {
	// Seeds are the seed list addresses; they are normalized (see
	// NormalizeAddress) and deduplicated.
	Seeds []string
	// SetName is the replicaSet option.
	SetName string
	// DirectConnection is directConnection=true: TopologyType Single.
	DirectConnection bool
	// LoadBalanced is loadBalanced=true.
	LoadBalanced bool
	// SRV says the seeds came from a mongodb+srv lookup. It forbids
	// DirectConnection; the initial type never depends on how many hosts
	// the lookup returned.
	SRV bool
}

// TopologyDescription is the client's view of the whole deployment. It is
// a value that Apply never modifies: Apply returns a new one, so a reader
// may keep the one it got without locking. Servers is shared between
// copies and must be treated as read-only.
type TopologyDescription struct {
	Type TopologyType
	// SetName is the replica set name, configured or discovered.
	SetName string
	// MaxElectionID and MaxSetVersion are the largest (electionId,
	// setVersion) a primary has reported; nil until one has.
	MaxElectionID *bson.ObjectID
	MaxSetVersion *int64
	// Servers holds one description per server, sorted by address.
	Servers []ServerDescription
	// CompatibilityErr is a *WireVersionError when some server's wire
	// version range does not overlap the driver's; nil when compatible.
	CompatibilityErr error
	// LogicalSessionTimeoutMinutes is the smallest value among the
	// data-bearing servers, nil when any of them has none (or there are
	// none).
	LogicalSessionTimeoutMinutes *int64

	// oneSeed remembers whether the seed list had a single address, which
	// decides what a Standalone does to an Unknown topology.
	oneSeed bool
}

// New returns the initial topology description for s: every seed as an
// Unknown server, and the type the specification's table gives (Single
// for a direct connection, LoadBalanced, ReplicaSetNoPrimary when a set
// name is given, Unknown otherwise). In load-balanced mode the caller then
// applies LoadBalancerServer for the one seed. Combinations the
// specification forbids are a *ConfigError.
func New(s Settings) (TopologyDescription, error) {
	seeds := make([]string, 0, len(s.Seeds))
	for _, a := range s.Seeds {
		if a = NormalizeAddress(a); a != "" {
			seeds = append(seeds, a)
		}
	}
	slices.Sort(seeds)
	seeds = slices.Compact(seeds)
	switch {
	case len(seeds) == 0:
		return TopologyDescription{}, &ConfigError{Field: "Seeds", Reason: "the seed list is empty"}
	case s.DirectConnection && len(seeds) > 1:
		return TopologyDescription{}, &ConfigError{Field: "DirectConnection", Reason: "a direct connection takes exactly one seed, got " + strconv.Itoa(len(seeds))}
	case s.DirectConnection && s.SRV:
		return TopologyDescription{}, &ConfigError{Field: "DirectConnection", Reason: "a direct connection cannot be used with a mongodb+srv seed list"}
	case s.LoadBalanced && s.DirectConnection:
		return TopologyDescription{}, &ConfigError{Field: "LoadBalanced", Reason: "load-balanced mode cannot be used with a direct connection"}
	case s.LoadBalanced && s.SetName != "":
		return TopologyDescription{}, &ConfigError{Field: "LoadBalanced", Reason: "load-balanced mode cannot be used with a replica set name"}
	case s.LoadBalanced && len(seeds) > 1:
		return TopologyDescription{}, &ConfigError{Field: "LoadBalanced", Reason: "load-balanced mode takes exactly one seed, got " + strconv.Itoa(len(seeds))}
	}
	t := TopologyDescription{SetName: s.SetName, oneSeed: len(seeds) == 1}
	switch {
	case s.LoadBalanced:
		t.Type = LoadBalanced
	case s.DirectConnection:
		t.Type = Single
	case s.SetName != "":
		t.Type = ReplicaSetNoPrimary
	default:
		t.Type = TopologyUnknown
	}
	t.Servers = make([]ServerDescription, len(seeds))
	for i, a := range seeds {
		t.Servers[i] = ServerDescription{Address: a}
	}
	return t, nil
}

// Server returns the description of the server at addr, if the topology
// has one.
func (t TopologyDescription) Server(addr string) (ServerDescription, bool) {
	if i, ok := t.index(addr); ok {
		return t.Servers[i], true
	}
	return ServerDescription{}, false
}

// Compatible reports whether every known server's wire version range
// overlaps the driver's.
func (t TopologyDescription) Compatible() bool { return t.CompatibilityErr == nil }

// Equal reports whether two topology descriptions would look the same to a
// TopologyDescriptionChangedEvent reader: same type, set name, maxima,
// compatibility, session timeout, and pairwise equal servers.
func (t TopologyDescription) Equal(o TopologyDescription) bool {
	return t.Type == o.Type &&
		t.SetName == o.SetName &&
		equalPtr(t.MaxElectionID, o.MaxElectionID) &&
		equalPtr(t.MaxSetVersion, o.MaxSetVersion) &&
		errorText(t.CompatibilityErr) == errorText(o.CompatibilityErr) &&
		equalPtr(t.LogicalSessionTimeoutMinutes, o.LogicalSessionTimeoutMinutes) &&
		slices.EqualFunc(t.Servers, o.Servers, ServerDescription.Equal)
}

func (t TopologyDescription) index(addr string) (int, bool) {
	return slices.BinarySearchFunc(t.Servers, addr, func(s ServerDescription, a string) int {
		return strings.Compare(s.Address, a)
	})
}

// ConfigError reports initial settings the specification does not allow
// together.
type ConfigError struct {
	Field  string // the setting: "Seeds", "DirectConnection", "LoadBalanced"
	Reason string
}

// Error names the setting and the reason.
func (e *ConfigError) Error() string {
	return "description: invalid " + e.Field + ": " + e.Reason
}

// WireVersionError says a server's wire version range does not overlap the
// driver's. Its message is the one the specification prescribes.
type WireVersionError struct {
	Address        string
	MinWireVersion int32
	MaxWireVersion int32
	// TooNew is true when the server requires a newer driver, false when
	// it is older than the driver supports.
	TooNew bool
}

// Error is the specification's compatibility message.
func (e *WireVersionError) Error() string {
	if e.TooNew {
		return "Server at " + e.Address + " requires wire version " + strconv.Itoa(int(e.MinWireVersion)) +
			", but this version of " + driverName + " only supports up to " + strconv.Itoa(MaxSupportedWireVersion) + "."
	}
	return "Server at " + e.Address + " reports wire version " + strconv.Itoa(int(e.MaxWireVersion)) +
		", but this version of " + driverName + " requires at least " + strconv.Itoa(MinSupportedWireVersion) +
		" (MongoDB " + minSupportedMongoDB + ")."
}

// StalePrimaryError is the Error of a primary the topology marked Unknown
// because it is not the newest primary.
type StalePrimaryError struct {
	Address string
	// Mismatch is true when the server's own (electionId, setVersion) was
	// older than the topology's maximum; false when another server was
	// discovered as the newer primary.
	Mismatch      bool
	ElectionID    *bson.ObjectID
	SetVersion    *int64
	MaxElectionID *bson.ObjectID
	MaxSetVersion *int64
}

// Error holds the substring the specification requires for each case.
func (e *StalePrimaryError) Error() string {
	if !e.Mismatch {
		return "primary marked stale due to discovery of newer primary"
	}
	return "primary marked stale due to electionId/setVersion mismatch, " +
		tuple(e.ElectionID, e.SetVersion) + " is stale compared to " + tuple(e.MaxElectionID, e.MaxSetVersion)
}

func tuple(id *bson.ObjectID, v *int64) string {
	s := "(electionId: "
	if id == nil {
		s += "null"
	} else {
		s += id.Hex()
	}
	s += ", setVersion: "
	if v == nil {
		s += "null"
	} else {
		s += strconv.FormatInt(*v, 10)
	}
	return s + ")"
}

// SetNameError is the Error of a server whose replica set name is not the
// one the topology requires.
type SetNameError struct {
	Address string
	Want    string
	Got     string // "" when the server reported none
}

// Error names the server and both set names.
func (e *SetNameError) Error() string {
	got := strconv.Quote(e.Got)
	if e.Got == "" {
		got = "none"
	}
	return "server at " + e.Address + " reports replica set name " + got + ", want " + strconv.Quote(e.Want)
}
