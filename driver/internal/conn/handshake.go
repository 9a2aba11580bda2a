package conn

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mongoscope/mongoscope/driver/internal/auth"
	"github.com/mongoscope/mongoscope/driver/internal/handshake"
	"github.com/mongoscope/mongoscope/internal/wire"
)

// MinWireVersion is the oldest server wire version this connection speaks:
// 6 (MongoDB 3.6) is the first with OP_MSG. Server selection applies the
// driver's real compatibility window; this only refuses servers the
// connection cannot talk to at all.
const MinWireVersion = 6

// errLoadBalancingUnsupported is the error of a hello without serviceId in
// load-balanced mode, with the message the load-balancers specification
// prescribes.
var errLoadBalancingUnsupported = errors.New("Driver attempted to initialize in load balancing mode, but the server does not support this mode.")

// handshakeBound returns the context and socket timeout of one command of
// the handshake or of authentication, by the mode Dial set, and the
// function that releases the context:
//   - without timeoutMS: ctx (connectTimeoutMS bounds the whole
//     establishment) and socketTimeoutMS, as the specification's
//     "Server Selection" asks for when timeoutMS is not set;
//   - for an operation under timeoutMS: ctx alone, whose deadline is the
//     remaining computedServerSelectionTimeout;
//   - in the background under the client's timeoutMS: timeoutMS afresh
//     for each command ("Background Connection Pooling": the timeout is
//     refreshed after each command).
//
// "Handshake commands MUST also set timeouts per the Command Execution
// section": that is the socket's read and write deadlines here. No
// maxTimeMS is appended to hello or the SASL commands: a background
// connection has no selected server whose minRoundTripTime it could use,
// and the server answers these commands without doing the kind of work
// maxTimeMS bounds.
func (c *Conn) handshakeBound(ctx context.Context) (context.Context, context.CancelFunc, time.Duration) {
	switch c.establishing {
	case estOperation:
		return ctx, func() {}, 0
	case estBackground:
		if c.cfg.Timeout > 0 {
			cctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
			return cctx, cancel, 0
		}
		return ctx, func() {}, 0
	}
	return ctx, func() {}, c.cfg.SocketTimeout
}

// handshake sends the initial hello, takes the server's limits and the
// compressor from the reply, and authenticates. The handshake always goes
// over OP_MSG, as the handshake specification requires since 2026-06; the
// command is hello when the Stable API or load balancing is requested and
// legacy hello (isMaster with helloOk) otherwise.
func (c *Conn) handshake(ctx context.Context) error {
	md := c.cfg.Metadata
	if c.cfg.Shared != nil {
		md = c.cfg.Shared.Load()
	}
	if md == nil {
		var err error
		if md, err = handshake.Metadata(c.cfg.Handshake); err != nil {
			return err
		}
	}
	var conv auth.Conversation
	var extra func([]byte) []byte
	if c.cfg.Credential != nil {
		var err error
		if conv, err = auth.Start(c.cfg.Credential); err != nil {
			return err
		}
		extra = conv.AppendHelloFields
	}
	bp := getBuf()
	defer putBuf(bp)
	body, err := handshake.AppendHandshakeMsg((*bp)[:0], md, c.cfg.Handshake, extra)
	*bp = body
	if err != nil {
		return err
	}
	id := c.reqID()
	mp := getBuf()
	defer putBuf(mp)
	msg := wire.AppendMsg((*mp)[:0], id, 0, 0, body)
	*mp = msg
	hctx, cancel, st := c.handshakeBound(ctx)
	if err := c.write(hctx, msg, st); err != nil {
		cancel()
		return err
	}
	r, err := c.receive(hctx, st, id)
	cancel()
	if err != nil {
		return err
	}
	// ParseReply copies the reply, so the pooled buffer can go back now.
	defer r.Release()
	if err := ReplyError(r.Body); err != nil {
		return &HandshakeError{Address: c.addr, ConnID: c.id, Stage: "hello", Err: err}
	}
	hello, err := handshake.ParseReply(r.Body)
	if err != nil {
		return &HandshakeError{Address: c.addr, ConnID: c.id, Stage: "hello", Err: err}
	}
	if hello.MaxWireVersion < MinWireVersion {
		return &HandshakeError{Address: c.addr, ConnID: c.id, Stage: "hello",
			Err: fmt.Errorf("server wire version %d is older than %d, the first with OP_MSG", hello.MaxWireVersion, MinWireVersion)}
	}
	if c.cfg.Handshake.LoadBalanced && hello.ServiceID == nil {
		return &HandshakeError{Address: c.addr, ConnID: c.id, Stage: "hello",
			Err: errLoadBalancingUnsupported}
	}
	c.hello = hello
	if hello.MaxMessageSizeBytes > 0 {
		c.maxSize = int(hello.MaxMessageSizeBytes)
	}
	if name := handshake.NegotiateCompressor(c.cfg.Handshake.Compressors, hello.Compression); name != "" {
		c.comp, _ = wire.CompressorByName(name)
	}
	// Arbiters hold no user data and accept no authentication.
	if conv != nil && !hello.ArbiterOnly {
		if err := conv.Authenticate(ctx, c, hello.Raw); err != nil {
			// A network error here is wrapped too: SDAM treats network
			// errors during authentication (mark Unknown, clear the
			// pool) unlike those during the hello (leave the server
			// be), so the stage must travel with it. errors.As still
			// finds the *NetworkError inside.
			return &HandshakeError{Address: c.addr, ConnID: c.id, Stage: "auth", Err: err, ServiceID: hello.ServiceID}
		}
	}
	return nil
}
