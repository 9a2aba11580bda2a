package description

import (
	"errors"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/handshake"
)

// ServerType is what a server is, as far as the client knows (SDAM's
// ServerType). Its String form is the specification's name.
type ServerType uint8

// Server types. The zero value is Unknown.
const (
	Unknown ServerType = iota
	Standalone
	Mongos
	PossiblePrimary
	RSPrimary
	RSSecondary
	RSArbiter
	RSOther
	RSGhost
	LoadBalancer
)

var serverTypeNames = [...]string{
	Unknown:         "Unknown",
	Standalone:      "Standalone",
	Mongos:          "Mongos",
	PossiblePrimary: "PossiblePrimary",
	RSPrimary:       "RSPrimary",
	RSSecondary:     "RSSecondary",
	RSArbiter:       "RSArbiter",
	RSOther:         "RSOther",
	RSGhost:         "RSGhost",
	LoadBalancer:    "LoadBalancer",
}

// String returns the specification's name for t.
func (t ServerType) String() string {
	if int(t) < len(serverTypeNames) {
		return serverTypeNames[t]
	}
	return "ServerType(" + strconv.Itoa(int(t)) + ")"
}

// IsDataBearing reports whether application data can be read from a server
// of this type (the specification's data-bearing server types).
func (t ServerType) IsDataBearing() bool {
	switch t {
	case Standalone, Mongos, RSPrimary, RSSecondary, LoadBalancer:
		return true
	}
	return false
}

// IsReplicaSetMember reports whether t is one of the RS* types.
func (t ServerType) IsReplicaSetMember() bool {
	switch t {
	case RSPrimary, RSSecondary, RSArbiter, RSOther, RSGhost:
		return true
	}
	return false
}

// ServerDescription is the client's view of one server, from its latest
// hello reply or failed check. It is a value: the slices and the map it
// holds are shared between copies and must be treated as read-only.
type ServerDescription struct {
	// Address is the "host:port" the client connects to, which is not
	// necessarily what the server calls itself (Me).
	Address string
	Type    ServerType
	// Error is why the server is Unknown: the failed check, the
	// application error or the topology rule that marked it so.
	Error error

	// RoundTripTime is the average RTT, zero while the server is Unknown.
	RoundTripTime time.Duration
	// MinRoundTripTime is the minimum over the last 10 samples; zero
	// until two samples exist.
	MinRoundTripTime time.Duration
	// LastUpdateTime is when the description was made, from the caller's
	// clock (monotonic when it comes from time.Now).
	LastUpdateTime time.Time

	LastWriteDate time.Time     // lastWrite.lastWriteDate; zero when absent
	OpTime        bson.RawValue // lastWrite.opTime, an opaque value; zero when absent

	MinWireVersion int32
	MaxWireVersion int32

	Me       string
	Hosts    []string // sorted and lower-cased, like Passives and Arbiters
	Passives []string
	Arbiters []string
	Tags     map[string]string
	SetName  string
	// SetVersion and ElectionID are nil when the reply had none.
	SetVersion *int64
	ElectionID *bson.ObjectID
	Primary    string

	LogicalSessionTimeoutMinutes *int64
	TopologyVersion              *handshake.TopologyVersion
	IsCryptd                     bool
	HelloOK                      bool
	Compression                  []string
	ServiceID                    *bson.ObjectID
}

// ErrNoReply is the Error of a description built from a nil reply.
var ErrNoReply = errors.New("description: no hello reply")

// NewServer builds the description of the server at addr from a successful
// hello or legacy hello reply (ok:1; a failed check makes an UnknownServer
// instead). rtt is the average round trip time the monitor keeps (see RTT);
// the caller sets MinRoundTripTime from the same RTT. now becomes
// LastUpdateTime. Hostnames the server reports are lower-cased and given
// the default port when they have none, as seeds are.
func NewServer(addr string, hello *handshake.Reply, rtt time.Duration, now time.Time) ServerDescription {
	if hello == nil {
		return UnknownServer(addr, ErrNoReply)
	}
	s := ServerDescription{
		Address:                      addr,
		RoundTripTime:                rtt,
		LastUpdateTime:               now,
		LastWriteDate:                hello.LastWriteDate,
		MinWireVersion:               hello.MinWireVersion,
		MaxWireVersion:               hello.MaxWireVersion,
		Me:                           normalizeHost(hello.Me),
		Hosts:                        normalizeHosts(hello.Hosts),
		Passives:                     normalizeHosts(hello.Passives),
		Arbiters:                     normalizeHosts(hello.Arbiters),
		Tags:                         hello.Tags,
		SetName:                      hello.SetName,
		SetVersion:                   hello.SetVersion,
		ElectionID:                   hello.ElectionID,
		Primary:                      normalizeHost(hello.Primary),
		LogicalSessionTimeoutMinutes: hello.LogicalSessionTimeoutMinutes,
		TopologyVersion:              hello.TopologyVersion,
		IsCryptd:                     hello.IsCryptd,
		HelloOK:                      hello.HelloOK,
		Compression:                  hello.Compression,
		ServiceID:                    hello.ServiceID,
	}
	if v, err := hello.Raw.LookupErr("lastWrite", "opTime"); err == nil {
		// A private copy, so the description does not pin the whole reply.
		s.OpTime = bson.RawValue{Type: v.Type, Value: slices.Clone(v.Value)}
	}
	switch {
	case hello.IsReplicaSet:
		s.Type = RSGhost
	case hello.SetName != "":
		switch {
		case hello.IsWritablePrimary:
			s.Type = RSPrimary
		case hello.Hidden:
			s.Type = RSOther
		case hello.Secondary:
			s.Type = RSSecondary
		case hello.ArbiterOnly:
			s.Type = RSArbiter
		default:
			s.Type = RSOther
		}
	case hello.MsgIsDBGrid:
		s.Type = Mongos
	default:
		s.Type = Standalone
	}
	return s
}

// UnknownServer is the description of a server whose check failed, or that
// a rule marked Unknown: type Unknown, err as its Error, every other field
// at its default (RTT included).
func UnknownServer(addr string, err error) ServerDescription {
	return ServerDescription{Address: addr, Error: err}
}

// LoadBalancerServer is the description of the load balancer at addr in
// load-balanced mode: type LoadBalancer and nothing else, since no monitor
// ever talks to it.
func LoadBalancerServer(addr string) ServerDescription {
	return ServerDescription{Address: addr, Type: LoadBalancer}
}

// Equal reports whether s and o are equal under the specification's
// Server Description Equality: the fields it marks (=) are compared (type,
// error, wire versions, me, hosts, passives, arbiters, tags, setName,
// setVersion, electionId, primary, logicalSessionTimeoutMinutes,
// topologyVersion, iscryptd) along with the address. RTT and update times
// are not, so a routine heartbeat publishes no event.
//
// Two refinements the specification leaves to the driver:
//   - PossiblePrimary equals Unknown: the specification calls the type
//     "synonymous with Unknown" for multi-threaded clients, and its
//     monitoring tests publish no ServerDescriptionChanged when a member
//     names an unchecked server as its primary;
//   - errors are compared by kind (see sameError), not by message, so a
//     dead server, whose every failed check names a new connection
//     number, does not change on every heartbeat.
func (s ServerDescription) Equal(o ServerDescription) bool {
	return s.Address == o.Address &&
		equalType(s.Type, o.Type) &&
		sameError(s.Error, o.Error) &&
		s.MinWireVersion == o.MinWireVersion &&
		s.MaxWireVersion == o.MaxWireVersion &&
		s.Me == o.Me &&
		slices.Equal(s.Hosts, o.Hosts) &&
		slices.Equal(s.Passives, o.Passives) &&
		slices.Equal(s.Arbiters, o.Arbiters) &&
		maps.Equal(s.Tags, o.Tags) &&
		s.SetName == o.SetName &&
		equalPtr(s.SetVersion, o.SetVersion) &&
		equalPtr(s.ElectionID, o.ElectionID) &&
		s.Primary == o.Primary &&
		equalPtr(s.LogicalSessionTimeoutMinutes, o.LogicalSessionTimeoutMinutes) &&
		equalPtr(s.TopologyVersion, o.TopologyVersion) &&
		s.IsCryptd == o.IsCryptd
}

// members reports whether addr is in s's hosts, passives or arbiters.
func (s ServerDescription) members(addr string) bool {
	return contains(s.Hosts, addr) || contains(s.Passives, addr) || contains(s.Arbiters, addr)
}

func contains(sorted []string, addr string) bool {
	_, ok := slices.BinarySearch(sorted, addr)
	return ok
}

// equalType compares server types for Equal, PossiblePrimary counting as
// Unknown.
func equalType(a, b ServerType) bool {
	if a == PossiblePrimary {
		a = Unknown
	}
	if b == PossiblePrimary {
		b = Unknown
	}
	return a == b
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// CompareTopologyVersion orders two topologyVersions as the specification
// does: -1 when a is older than b, 0 when equal, 1 when newer. A missing
// version, or a different processId, makes b count as newer (-1): the
// server restarted or cannot say, so the newer information wins.
func CompareTopologyVersion(a, b *handshake.TopologyVersion) int {
	if a == nil || b == nil || a.ProcessID != b.ProcessID {
		return -1
	}
	switch {
	case a.Counter < b.Counter:
		return -1
	case a.Counter > b.Counter:
		return 1
	}
	return 0
}

// DefaultPort is the port an address without one gets.
const DefaultPort = "27017"

// NormalizeAddress lower-cases the host part of a "host[:port]" address
// and adds DefaultPort when it has no port, so that "A" and "a:27017" name
// one server. IPv6 literals keep their brackets. A Unix domain socket path
// (one ending in ".sock") is returned unchanged. An empty string stays
// empty.
func NormalizeAddress(addr string) string {
	if addr == "" || strings.HasSuffix(addr, ".sock") {
		return addr
	}
	addr = strings.ToLower(addr)
	if strings.HasPrefix(addr, "[") {
		if strings.HasSuffix(addr, "]") {
			return addr + ":" + DefaultPort
		}
		return addr
	}
	if _, port, err := net.SplitHostPort(addr); err == nil {
		if port == "" {
			return addr + DefaultPort
		}
		return addr
	}
	if strings.Count(addr, ":") > 1 {
		// A bare IPv6 literal: bracket it so a port can follow.
		return "[" + addr + "]:" + DefaultPort
	}
	return addr + ":" + DefaultPort
}

func normalizeHost(h string) string { return NormalizeAddress(h) }

// normalizeHosts returns the normalized addresses as a sorted set.
func normalizeHosts(hs []string) []string {
	if len(hs) == 0 {
		return nil
	}
	out := make([]string, 0, len(hs))
	for _, h := range hs {
		if h = NormalizeAddress(h); h != "" {
			out = append(out, h)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
