// Package connstring parses MongoDB connection strings ("mongodb://" and
// "mongodb+srv://") into a typed ConnString, following the Connection
// String and URI Options specifications, and writes them back out with
// every secret redacted.
//
// The options are the fields of URIOptions, one per URI option, tagged
// with the option's name; ConnString embeds it, and so does
// driver.ClientOptions, so an option is declared in one place.
//
// Parse is lenient by default, as the specifications ask: an invalid value
// is ignored with a Warning. WithStrict makes it an error. Security options
// (tls, ssl, tls*, authMechanism, authSource) fail closed in both modes:
// their invalid values are always errors.
//
// Parse never resolves DNS: for "mongodb+srv" it checks what can be checked
// before resolution. SRV and TXT resolution (srv.go) merge the TXT options
// and re-run the cross-option rules once the seed list is known, as the
// Initial DNS Seedlist Discovery specification requires.
package connstring
