package event

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mongoscope/mongoscope/bson"
)

// TopologyMonitor receives the server discovery and monitoring (SDAM)
// events, heartbeats included.
type TopologyMonitor interface {
	TopologyEvent(ctx context.Context, e TopologyEvent)
}

// TopologyEvent is one of the SDAM event types of this package:
// *ServerOpening, *ServerClosed, *ServerDescriptionChanged,
// *TopologyOpening, *TopologyClosed, *TopologyDescriptionChanged,
// *ServerHeartbeatStarted, *ServerHeartbeatSucceeded or
// *ServerHeartbeatFailed.
type TopologyEvent interface {
	// Topology is the id of the topology (one per client) that sent it.
	Topology() bson.ObjectID
	topologyEvent()
}

// ServerDescription is what the driver knows about one server, as carried
// by events: the fields of the SDAM specification's Server Description
// Equality (a ServerDescriptionChanged event means one of them changed),
// plus the round trip time. Fields a server's hello did not report are
// zero. The slices and the map belong to the event and may be kept.
type ServerDescription struct {
	Address string
	// Kind is the server type as the SDAM specification spells it:
	// "Unknown", "Standalone", "Mongos", "RSPrimary", "RSSecondary",
	// "RSArbiter", "RSOther", "RSGhost", "LoadBalancer" or "PossiblePrimary".
	Kind          string
	SetName       string
	RoundTripTime time.Duration
	Error         error // the error that made the server Unknown, if any

	// Primary is the address of the member this server names as the
	// primary ("" when it names none).
	Primary string
	// SetVersion and ElectionID are the replica set configuration version
	// and the primary's election id; nil when not reported.
	SetVersion *int64
	ElectionID *bson.ObjectID
	// TopologyVersion is the server's topologyVersion, nil when not
	// reported.
	TopologyVersion *TopologyVersion
	// Me is the address the server calls itself.
	Me string
	// Hosts, Passives and Arbiters are the server's view of the replica
	// set's members, sorted.
	Hosts, Passives, Arbiters []string
	Tags                      map[string]string
	MinWireVersion            int32
	MaxWireVersion            int32
	// LogicalSessionTimeoutMinutes is nil when not reported.
	LogicalSessionTimeoutMinutes *int64
	IsCryptd                     bool
}

// TopologyVersion is a server's topologyVersion: its process id and a
// counter that grows with every state change of that process.
type TopologyVersion struct {
	ProcessID bson.ObjectID
	Counter   int64
}

// TopologyDescription is what the driver knows about the deployment, as
// carried by events.
type TopologyDescription struct {
	// Kind is the topology type as the SDAM specification spells it:
	// "Unknown", "Single", "ReplicaSetNoPrimary", "ReplicaSetWithPrimary",
	// "Sharded" or "LoadBalanced".
	Kind    string
	SetName string
	Servers []ServerDescription
	// MaxElectionID and MaxSetVersion are the largest (electionId,
	// setVersion) a primary has reported; nil until one has.
	MaxElectionID *bson.ObjectID
	MaxSetVersion *int64
	// CompatibilityError is set when some server's wire version range does
	// not overlap the driver's.
	CompatibilityError error
	// LogicalSessionTimeoutMinutes is the deployment's session timeout;
	// nil when some data-bearing server reports none.
	LogicalSessionTimeoutMinutes *int64
}

// Primary returns the description of the server whose Kind is RSPrimary,
// if there is one.
func (t TopologyDescription) Primary() (ServerDescription, bool) {
	for _, s := range t.Servers {
		if s.Kind == "RSPrimary" {
			return s, true
		}
	}
	return ServerDescription{}, false
}

// String formats the description on one line for log messages, e.g.
// {type: ReplicaSetWithPrimary, setName: rs0, maxElectionId: 7fffffff0000000000000001, maxSetVersion: 1,
// servers: [{address: a:27017, type: RSPrimary, rtt: 1ms, ...}]}.
// It shows every field that Server Description Equality compares (those
// at their zero value left out), so the previous and new descriptions of a
// TopologyDescriptionChanged event never read the same.
func (t TopologyDescription) String() string {
	var b strings.Builder
	b.WriteString("{type: ")
	b.WriteString(t.Kind)
	if t.SetName != "" {
		b.WriteString(", setName: ")
		b.WriteString(t.SetName)
	}
	if t.MaxElectionID != nil {
		b.WriteString(", maxElectionId: ")
		b.WriteString(t.MaxElectionID.Hex())
	}
	if t.MaxSetVersion != nil {
		b.WriteString(", maxSetVersion: ")
		b.WriteString(strconv.FormatInt(*t.MaxSetVersion, 10))
	}
	if t.LogicalSessionTimeoutMinutes != nil {
		b.WriteString(", logicalSessionTimeoutMinutes: ")
		b.WriteString(strconv.FormatInt(*t.LogicalSessionTimeoutMinutes, 10))
	}
	if t.CompatibilityError != nil {
		b.WriteString(", compatibilityError: ")
		b.WriteString(strconv.Quote(t.CompatibilityError.Error()))
	}
	b.WriteString(", servers: [")
	for i, s := range t.Servers {
		if i > 0 {
			b.WriteString(", ")
		}
		s.appendTo(&b, t.SetName)
	}
	b.WriteString("]}")
	return b.String()
}

// String formats the description on one line, e.g.
// {address: b:27017, type: RSSecondary, rtt: 1ms, setName: rs0, primary: a:27017, setVersion: 1,
// topologyVersion: {processId: 6b06a8d5b8dd1d0bebd22be4, counter: 3}, hosts: [a:27017, b:27017]}.
// Fields at their zero value are left out.
func (s ServerDescription) String() string {
	var b strings.Builder
	s.appendTo(&b, "")
	return b.String()
}

// appendTo writes s. The setName of a member that is not a ghost is left
// out when it is the topology's: such a member always has one, so leaving
// it out hides no change.
func (s ServerDescription) appendTo(b *strings.Builder, topologySetName string) {
	b.WriteString("{address: ")
	b.WriteString(s.Address)
	b.WriteString(", type: ")
	b.WriteString(s.Kind)
	if s.RoundTripTime > 0 {
		b.WriteString(", rtt: ")
		b.WriteString(s.RoundTripTime.String())
	}
	if s.SetName != "" && (s.SetName != topologySetName || !namedMember(s.Kind)) {
		b.WriteString(", setName: ")
		b.WriteString(s.SetName)
	}
	if s.Primary != "" {
		b.WriteString(", primary: ")
		b.WriteString(s.Primary)
	}
	if s.SetVersion != nil {
		b.WriteString(", setVersion: ")
		b.WriteString(strconv.FormatInt(*s.SetVersion, 10))
	}
	if s.ElectionID != nil {
		b.WriteString(", electionId: ")
		b.WriteString(s.ElectionID.Hex())
	}
	if tv := s.TopologyVersion; tv != nil {
		b.WriteString(", topologyVersion: {processId: ")
		b.WriteString(tv.ProcessID.Hex())
		b.WriteString(", counter: ")
		b.WriteString(strconv.FormatInt(tv.Counter, 10))
		b.WriteString("}")
	}
	if s.Me != "" && s.Me != s.Address {
		b.WriteString(", me: ")
		b.WriteString(s.Me)
	}
	appendList(b, "hosts", s.Hosts)
	appendList(b, "passives", s.Passives)
	appendList(b, "arbiters", s.Arbiters)
	if len(s.Tags) > 0 {
		b.WriteString(", tags: {")
		keys := make([]string, 0, len(s.Tags))
		for k := range s.Tags {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(k)
			b.WriteString(": ")
			b.WriteString(s.Tags[k])
		}
		b.WriteString("}")
	}
	if s.MinWireVersion != 0 || s.MaxWireVersion != 0 {
		b.WriteString(", wireVersions: ")
		b.WriteString(strconv.Itoa(int(s.MinWireVersion)))
		b.WriteString("-")
		b.WriteString(strconv.Itoa(int(s.MaxWireVersion)))
	}
	if s.LogicalSessionTimeoutMinutes != nil {
		b.WriteString(", logicalSessionTimeoutMinutes: ")
		b.WriteString(strconv.FormatInt(*s.LogicalSessionTimeoutMinutes, 10))
	}
	if s.IsCryptd {
		b.WriteString(", iscryptd: true")
	}
	if s.Error != nil {
		b.WriteString(", error: ")
		b.WriteString(strconv.Quote(s.Error.Error()))
	}
	b.WriteString("}")
}

// namedMember reports the member types whose hello always holds setName.
func namedMember(kind string) bool {
	switch kind {
	case "RSPrimary", "RSSecondary", "RSArbiter", "RSOther":
		return true
	}
	return false
}

func appendList(b *strings.Builder, name string, list []string) {
	if len(list) == 0 {
		return
	}
	b.WriteString(", ")
	b.WriteString(name)
	b.WriteString(": [")
	b.WriteString(strings.Join(list, ", "))
	b.WriteString("]")
}

// ServerOpening is sent when the driver starts monitoring a server.
type ServerOpening struct {
	TopologyID bson.ObjectID
	Address    string
}

// ServerClosed is sent when the driver stops monitoring a server.
type ServerClosed struct {
	TopologyID bson.ObjectID
	Address    string
}

// ServerDescriptionChanged is sent when a server's description changes.
type ServerDescriptionChanged struct {
	TopologyID bson.ObjectID
	Address    string
	Previous   ServerDescription
	New        ServerDescription
}

// TopologyOpening is sent when a client starts discovering its deployment.
type TopologyOpening struct {
	TopologyID bson.ObjectID
}

// TopologyClosed is sent when a client stops monitoring its deployment.
type TopologyClosed struct {
	TopologyID bson.ObjectID
}

// TopologyDescriptionChanged is sent when the topology description changes.
type TopologyDescriptionChanged struct {
	TopologyID bson.ObjectID
	Previous   TopologyDescription
	New        TopologyDescription
}

// HeartbeatFields are the fields every heartbeat event carries.
type HeartbeatFields struct {
	TopologyID bson.ObjectID
	ServerHost string
	ServerPort int // 0 for a Unix socket
	// DriverConnectionID is the monitoring connection's id;
	// ServerConnectionID the server's id for it, once known.
	DriverConnectionID int64
	ServerConnectionID *int64
	// Awaited tells whether the check was a streaming (awaitable) hello.
	Awaited bool
}

// ServerHeartbeatStarted is sent when a server check starts.
type ServerHeartbeatStarted struct {
	HeartbeatFields
}

// ServerHeartbeatSucceeded is sent when a server check succeeds.
type ServerHeartbeatSucceeded struct {
	HeartbeatFields
	Duration time.Duration
	Reply    bson.Raw
}

// ServerHeartbeatFailed is sent when a server check fails.
type ServerHeartbeatFailed struct {
	HeartbeatFields
	Duration time.Duration
	Failure  error
}

// Topology implements TopologyEvent.
func (e *ServerOpening) Topology() bson.ObjectID { return e.TopologyID }

// Topology implements TopologyEvent.
func (e *ServerClosed) Topology() bson.ObjectID { return e.TopologyID }

// Topology implements TopologyEvent.
func (e *ServerDescriptionChanged) Topology() bson.ObjectID { return e.TopologyID }

// Topology implements TopologyEvent.
func (e *TopologyOpening) Topology() bson.ObjectID { return e.TopologyID }

// Topology implements TopologyEvent.
func (e *TopologyClosed) Topology() bson.ObjectID { return e.TopologyID }

// Topology implements TopologyEvent.
func (e *TopologyDescriptionChanged) Topology() bson.ObjectID { return e.TopologyID }

// Topology implements TopologyEvent.
func (e *HeartbeatFields) Topology() bson.ObjectID { return e.TopologyID }

func (*ServerOpening) topologyEvent()              {}
func (*ServerClosed) topologyEvent()               {}
func (*ServerDescriptionChanged) topologyEvent()   {}
func (*TopologyOpening) topologyEvent()            {}
func (*TopologyClosed) topologyEvent()             {}
func (*TopologyDescriptionChanged) topologyEvent() {}
func (*ServerHeartbeatStarted) topologyEvent()     {}
func (*ServerHeartbeatSucceeded) topologyEvent()   {}
func (*ServerHeartbeatFailed) topologyEvent()      {}
