// Command ferretdb-embedded runs FerretDB v1 embedded over SQLite as a
// MongoDB-compatible server for mongoscope's interop tests.
//
// It listens on one TCP address, keeps its data in a directory (a temporary
// one, removed at exit, unless -dir is given), writes the address it listens
// on to -ready-file once connections are accepted, and stops on SIGINT or
// SIGTERM. Authentication cannot be turned on here: the embeddable package
// of FerretDB v1 has no option for it (see README.md in this directory for
// the authenticated server).
package main
