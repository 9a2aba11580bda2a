// Package description holds the pure core of Server Discovery and Monitoring:
// server and topology descriptions built from hello replies, the state
// machine that folds a new server description into a topology description,
// the rules deciding what an application error does to a server and its
// pool, and the round-trip-time average. It does no I/O and starts no
// goroutines; the monitors and the pool act on what it decides.
package description
