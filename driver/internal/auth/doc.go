// Package auth authenticates one connection as the Driver Authentication
// specification describes: SCRAM-SHA-1, SCRAM-SHA-256, PLAIN and
// MONGODB-X509, with mechanism negotiation and speculative authentication
// folded into the connection's hello.
//
// The connection code calls Start once per connection, appends the fields
// the Conversation asks for to its hello command, and then passes the hello
// reply to Authenticate. Failures are *Error values; none of them, nor the
// printed form of a Credential, ever contains the password or anything
// derived from it.
package auth
