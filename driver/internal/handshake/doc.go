// Package handshake builds the initial handshake of a MongoDB connection and
// reads the reply: the client metadata document (MongoDB Handshake
// specification), the hello or legacy hello command that carries it, and the
// fields of a hello reply that a connection and server monitoring need.
//
// The package does no I/O beyond reading environment variables and checking
// for /.dockerenv while building metadata; framing and sending the command
// belong to the connection.
package handshake
