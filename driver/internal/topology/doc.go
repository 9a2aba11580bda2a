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
// (Topology.HandleError), which leave the server alone when the pool labelled
// the error SystemOverloadedError.
package topology
