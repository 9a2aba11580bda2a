// Package topology is Server Discovery and Monitoring at work: it runs one
// monitor (streaming or polling, with an RTT monitor when streaming) and one
// connection pool per server, folds what the monitors and the application's
// errors learn into the topology description, publishes the SDAM events, and
// serves server selection.
package topology
