// Package wire encodes and decodes MongoDB wire protocol messages: OP_MSG,
// OP_COMPRESSED, and the OP_QUERY/OP_REPLY pair kept for the legacy hello.
// The driver and the mongotest server share it, so it knows nothing about
// connections beyond reading one size-capped message from an io.Reader.
//
// Encoders are append-style and allocate only to grow dst. Decoders never
// copy: documents and sequences returned by ParseMsg, ParseQuery and
// ParseReply alias the message bytes, so they are valid only as long as the
// message is. Every document is validated before it is returned, and every
// decoding or limit error is an *Error naming the opcode and byte offset.
package wire
