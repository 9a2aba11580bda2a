// Package conn is one connection to a MongoDB server: it dials TCP or a
// Unix socket, wraps it in TLS, runs the handshake and authentication, and
// then sends commands and reads replies under the caller's deadline.
//
// A Conn that sees a network error, a timeout or a malformed message
// closes itself and never carries another command: a half-read reply would
// otherwise be taken for the answer to the next request.
package conn
