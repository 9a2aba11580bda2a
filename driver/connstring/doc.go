// Package connstring parses MongoDB connection strings ("mongodb://" and
// "mongodb+srv://") into a typed ConnString, following the Connection
// String and URI Options specifications, and writes them back out with
// every secret redacted.
//
// Parse never resolves DNS: for "mongodb+srv" it checks what can be checked
// before resolution. SRV and TXT resolution (srv.go) merge the TXT options
// and re-run the cross-option rules once the seed list is known, as the
// Initial DNS Seedlist Discovery specification requires.
package connstring
