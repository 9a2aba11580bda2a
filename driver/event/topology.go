package event

import (
	"context"
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

// ServerDescription is a summary of what the driver knows about one server,
// as carried by events.
type ServerDescription struct {
	Address string
	// Kind is the server type as the SDAM specification spells it:
	// "Unknown", "Standalone", "Mongos", "RSPrimary", "RSSecondary",
	// "RSArbiter", "RSOther", "RSGhost", "LoadBalancer" or "PossiblePrimary".
	Kind          string
	SetName       string
	RoundTripTime time.Duration
	Error         error // the error that made the server Unknown, if any
}

// TopologyDescription is a summary of what the driver knows about the
// deployment, as carried by events.
type TopologyDescription struct {
	// Kind is the topology type as the SDAM specification spells it:
	// "Unknown", "Single", "ReplicaSetNoPrimary", "ReplicaSetWithPrimary",
	// "Sharded" or "LoadBalanced".
	Kind    string
	SetName string
	Servers []ServerDescription
}

// String formats the description on one line for log messages, e.g.
// {type: ReplicaSetWithPrimary, setName: rs0, servers: [{address: a:27017, type: RSPrimary}]}.
func (t TopologyDescription) String() string {
	var b strings.Builder
	b.WriteString("{type: ")
	b.WriteString(t.Kind)
	if t.SetName != "" {
		b.WriteString(", setName: ")
		b.WriteString(t.SetName)
	}
	b.WriteString(", servers: [")
	for i, s := range t.Servers {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("{address: ")
		b.WriteString(s.Address)
		b.WriteString(", type: ")
		b.WriteString(s.Kind)
		if s.RoundTripTime > 0 {
			b.WriteString(", rtt: ")
			b.WriteString(s.RoundTripTime.String())
		}
		if s.Error != nil {
			b.WriteString(", error: ")
			b.WriteString(strconv.Quote(s.Error.Error()))
		}
		b.WriteString("}")
	}
	b.WriteString("]}")
	return b.String()
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
