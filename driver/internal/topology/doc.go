// Package topology is Server Discovery and Monitoring at work: it runs one
// monitor (streaming or polling, with an RTT monitor when streaming) and one
// connection pool per server, folds what the monitors and the application's
// errors learn into the topology description, publishes the SDAM events, and
// serves server selection.
//
// Monitors use connectTimeoutMS (Config.ConnectTimeout) to connect and for
// each polling check, and connectTimeoutMS + heartbeatFrequencyMS for each
// awaited reply; never socketTimeoutMS or timeoutMS, which are the
// application's. heartbeatFrequencyMS and minHeartbeatFrequencyMS count from
// the end of the previous check.
//
// The hello reply of every application connection's handshake updates the
// server's description as a check would (Server Monitoring, "Clients update
// the topology from each handshake"), without a heartbeat event or an RTT
// sample; a reply from a connection dialled before the pool's last clear, or
// older by topologyVersion than the current description, is dropped. A failed
// application handshake goes through the error handling rules
// (Topology.HandleError), which leave the server alone when the connection
// labelled the error SystemOverloadedError (a network error or timeout while
// connecting or during the hello: CMAP backpressure). Behind a load balancer
// errors up to the end of the hello are ignored, later ones clear only the
// connections of the service the hello named, and an error from a
// connection older than its service's generation is stale.
//
// Readers take no lock. Every update, under the topology's lock, publishes
// an immutable snapshot (the description, the servers, the channel the
// next change closes) that Description, Server, Current and
// OperationCount load atomically, so selection never waits for an update
// and an event monitor may read the topology (Client.Topology) from any
// callback. Updates still hold their locks while events go out, because
// the specifications fix their order: a pool is marked ready (PoolReady)
// before its server is published as known, and cleared (PoolCleared)
// after it is published as Unknown, both inside the update; the
// ServerDescriptionChanged and TopologyDescriptionChanged events of one
// update go out, in that order, before the next update starts. So a
// monitor must not make the topology update from inside those events
// (HandleError, or an operation that dials a connection, fails or waits
// for a change): the update would wait for the monitor to return.
// Selection events and the other pool events are sent with no topology
// lock held.
package topology
