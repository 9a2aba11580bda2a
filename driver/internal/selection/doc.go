// Package selection chooses a server for an operation, as the Server
// Selection and Max Staleness specifications describe: read preference modes,
// tag sets and maxStalenessSeconds, deprioritised servers, the latency window,
// the operationCount-based choice between two random servers, and a selection
// loop that waits on topology changes until serverSelectionTimeoutMS or the
// caller's deadline.
//
// It reads SDAM's own model, description.TopologyDescription and its
// ServerDescriptions, without copying or translating it: a selection
// allocates nothing. It is pure logic, testable without any network I/O.
package selection
