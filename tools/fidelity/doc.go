// Package fidelity checks mongotest with someone else's client: it runs
// the official Go driver (go.mongodb.org/mongo-driver/v2) against
// mongotest servers and replica sets and asserts what that driver sees.
// A difference between mongotest and mongod that the official driver can
// observe fails here; differences that are deliberate are written down in
// mongotest's package documentation.
//
// It is a separate module so the library's go.mod never requires the
// official driver. make test runs it.
package fidelity
