package auth

import (
	"context"
	"strconv"

	"github.com/mongoscope/mongoscope/bson"
)

// Runner runs one command on the connection being authenticated. A reply
// with ok:0 comes back as an error (the caller's typed server error),
// which Authenticate wraps in an *Error.
type Runner interface {
	RunCommand(ctx context.Context, db string, cmd bson.Raw) (bson.Raw, error)
}

// Conversation is one connection's authentication. It is used by one
// goroutine: the one setting up its connection.
type Conversation interface {
	// AppendHelloFields appends to the hello command being built the
	// elements this credential needs: saslSupportedMechs "<source>.<user>"
	// when the mechanism is negotiated, and speculativeAuthenticate (the
	// first SCRAM message as a saslStart document with db, or the X509
	// authenticate command) where the spec allows it.
	AppendHelloFields(dst []byte) []byte
	// Authenticate finishes authentication; hello is the server's hello
	// reply (its saslSupportedMechs and speculativeAuthenticate fields
	// matter). When the speculative reply is present, it continues from
	// it; otherwise it runs the full exchange. Errors are *Error.
	Authenticate(ctx context.Context, r Runner, hello bson.Raw) error
}

// saslClient is one SASL mechanism's client state machine.
type saslClient interface {
	// start returns the first message (the saslStart payload).
	start() ([]byte, error)
	// next consumes a server challenge and returns the response.
	next(challenge []byte) ([]byte, error)
	// completed reports whether the client has nothing left to check.
	completed() bool
}

// Start validates c and returns a fresh conversation for one connection.
// GSSAPI, MONGODB-AWS and MONGODB-OIDC give an *Error: this driver does
// not support them yet.
func Start(c *Credential) (Conversation, error) {
	conv, err := start(c, defaultConfig)
	if err != nil {
		return nil, err
	}
	return conv, nil
}

func start(c *Credential, cfg *config) (*conversation, *Error) {
	if c == nil {
		return nil, fail("no credential", nil)
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	mech, _ := canonicalMechanism(c.Mechanism)
	return &conversation{
		mechanism: mech,
		source:    c.source(mech),
		username:  c.Username,
		password:  c.Password,
		cfg:       cfg,
	}, nil
}

type conversation struct {
	mechanism string // canonical; "" when negotiated
	source    string
	username  string
	password  string
	cfg       *config

	// What the last AppendHelloFields sent speculatively.
	speculative     *scramClient
	speculativeX509 bool
}

// AppendHelloFields implements Conversation.
func (c *conversation) AppendHelloFields(dst []byte) []byte {
	c.speculative, c.speculativeX509 = nil, false
	switch c.mechanism {
	case "":
		// The username goes unprepared: the server looks it up raw.
		dst = bson.AppendStringElement(dst, "saslSupportedMechs", c.source+"."+c.username)
		// The handshake spec: a negotiated credential speculates with
		// SCRAM-SHA-256.
		dst = c.appendSpeculativeSCRAM(dst, MechanismSCRAMSHA256)
	case MechanismSCRAMSHA1, MechanismSCRAMSHA256:
		dst = c.appendSpeculativeSCRAM(dst, c.mechanism)
	case MechanismX509:
		orig := len(dst)
		start, out := bson.AppendDocumentElementStart(dst, "speculativeAuthenticate")
		out = appendX509Fields(out, c.username)
		out, err := bson.AppendDocumentEnd(out, start)
		if err != nil {
			return out[:orig]
		}
		c.speculativeX509 = true
		return out
	}
	return dst
}

// appendSpeculativeSCRAM appends the saslStart document, with db, as
// speculativeAuthenticate. When the client cannot start (the password fails
// SASLprep, no nonce), it appends nothing: Authenticate reports the problem,
// or negotiation picks SCRAM-SHA-1, which does not SASLprep.
func (c *conversation) appendSpeculativeSCRAM(dst []byte, mech string) []byte {
	s, err := c.newSCRAM(mech)
	if err != nil {
		return dst
	}
	first, serr := s.start()
	if serr != nil {
		return dst
	}
	orig := len(dst)
	start, out := bson.AppendDocumentElementStart(dst, "speculativeAuthenticate")
	out = appendSASLStartFields(out, mech, first)
	out = bson.AppendStringElement(out, "db", c.source)
	out, eerr := bson.AppendDocumentEnd(out, start)
	if eerr != nil {
		return out[:orig]
	}
	c.speculative = s
	return out
}

func (c *conversation) newSCRAM(mech string) (*scramClient, *Error) {
	pw, err := scramPassword(mech, c.username, c.password)
	if err != nil {
		return nil, err
	}
	nonce, nerr := c.cfg.nonce()
	if nerr != nil {
		return nil, fail("generating the client nonce failed", nerr)
	}
	return newSCRAMClient(mech, c.username, pw, nonce, c.cfg), nil
}

// Authenticate implements Conversation.
func (c *conversation) Authenticate(ctx context.Context, r Runner, hello bson.Raw) error {
	specSCRAM, specX509 := c.speculative, c.speculativeX509
	c.speculative, c.speculativeX509 = nil, false // a conversation continues once

	var specReply bson.Raw
	if hello != nil {
		if v, err := hello.LookupErr("speculativeAuthenticate"); err == nil {
			doc, ok := v.DocumentOK()
			if !ok {
				return c.wrap(c.mechanism, fail("the hello reply's speculativeAuthenticate is "+v.Type.String()+", want a document", nil))
			}
			specReply = doc
		}
	}
	if err := ctx.Err(); err != nil {
		return c.wrap(c.mechanism, fail("authentication interrupted", err))
	}

	switch {
	case specSCRAM != nil && specReply != nil:
		return c.wrap(specSCRAM.mechanism, runSASL(ctx, r, c.source, specSCRAM.mechanism, specSCRAM, specReply))
	case c.mechanism == MechanismX509:
		if !specX509 {
			specReply = nil
		}
		return c.wrap(c.mechanism, authenticateX509(ctx, r, c.username, specReply))
	case c.mechanism == MechanismPLAIN:
		return c.wrap(c.mechanism, runSASL(ctx, r, c.source, MechanismPLAIN, &plainClient{username: c.username, password: c.password}, nil))
	}
	mech := c.mechanism
	if mech == "" {
		mech = negotiate(hello)
	}
	s, err := c.newSCRAM(mech)
	if err != nil {
		return c.wrap(mech, err)
	}
	return c.wrap(mech, runSASL(ctx, r, c.source, mech, s, nil))
}

// negotiate picks the default mechanism from the hello reply's
// saslSupportedMechs: SCRAM-SHA-256 when listed, otherwise SCRAM-SHA-1,
// also when the field is absent. The spec forbids rejecting the list's
// contents, so anything unexpected is ignored.
func negotiate(hello bson.Raw) string {
	arr, ok := hello.Lookup("saslSupportedMechs").ArrayOK()
	if !ok {
		return MechanismSCRAMSHA1
	}
	values, err := arr.Values()
	if err != nil {
		return MechanismSCRAMSHA1
	}
	for _, v := range values {
		if s, ok := v.StringValueOK(); ok && s == MechanismSCRAMSHA256 {
			return MechanismSCRAMSHA256
		}
	}
	return MechanismSCRAMSHA1
}

// wrap fills in which credential an error is about.
func (c *conversation) wrap(mech string, err error) error {
	if err == nil {
		return nil
	}
	e, ok := err.(*Error)
	if !ok {
		e = fail("authentication failed", err)
	}
	if e.Mechanism == "" {
		e.Mechanism = mech
	}
	e.Username, e.Source = c.username, c.source
	return e
}

// runSASL runs a saslStart/saslContinue conversation, or continues one
// from the speculative reply when reply is not nil. Servers given
// skipEmptyExchange end it with done:true on the reply carrying the server
// signature; older ones want one more, empty, saslContinue.
func runSASL(ctx context.Context, r Runner, db, mech string, cl saslClient, reply bson.Raw) error {
	if reply == nil {
		payload, err := cl.start()
		if err != nil {
			return err
		}
		start, cmd := bson.AppendDocumentStart(nil)
		cmd = appendSASLStartFields(cmd, mech, payload)
		cmd, err = bson.AppendDocumentEnd(cmd, start)
		if err != nil {
			return fail("building saslStart failed", err)
		}
		if reply, err = r.RunCommand(ctx, db, cmd); err != nil {
			return fail("the server rejected saslStart", err)
		}
	}
	emptySent := false
	for {
		id, payload, done, perr := parseSASLReply(reply)
		if perr != nil {
			return perr
		}
		var resp []byte
		if !cl.completed() {
			var err error
			if resp, err = cl.next(payload); err != nil {
				return err
			}
		}
		if done {
			if cl.completed() {
				return nil
			}
			return fail("the server ended the conversation before proving it knows the password", nil)
		}
		if cl.completed() {
			if emptySent {
				return fail("the server did not end the conversation after the final exchange", nil)
			}
			emptySent = true
		}
		if err := ctx.Err(); err != nil {
			return fail("authentication interrupted", err)
		}
		start, cmd := bson.AppendDocumentStart(nil)
		cmd = bson.AppendInt32Element(cmd, "saslContinue", 1)
		cmd = bson.AppendValueElement(cmd, "conversationId", id)
		cmd = bson.AppendBinaryElement(cmd, "payload", bson.SubtypeGeneric, resp)
		cmd, err := bson.AppendDocumentEnd(cmd, start)
		if err != nil {
			return fail("building saslContinue failed", err)
		}
		if reply, err = r.RunCommand(ctx, db, cmd); err != nil {
			return fail("the server rejected saslContinue", err)
		}
	}
}

// appendSASLStartFields appends saslStart's fields. skipEmptyExchange lets
// newer servers end the conversation one round trip early.
func appendSASLStartFields(dst []byte, mech string, payload []byte) []byte {
	dst = bson.AppendInt32Element(dst, "saslStart", 1)
	dst = bson.AppendStringElement(dst, "mechanism", mech)
	dst = bson.AppendBinaryElement(dst, "payload", bson.SubtypeGeneric, payload)
	dst = bson.AppendInt32Element(dst, "autoAuthorize", 1)
	start, dst := bson.AppendDocumentElementStart(dst, "options")
	dst = bson.AppendBooleanElement(dst, "skipEmptyExchange", true)
	// A three-element document is far below the size limit.
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst
}

// parseSASLReply reads a saslStart or saslContinue reply, or the
// speculativeAuthenticate reply, which has the same fields without ok.
func parseSASLReply(reply bson.Raw) (id bson.RawValue, payload []byte, done bool, _ *Error) {
	if err := checkOK(reply); err != nil {
		return id, nil, false, err
	}
	id, err := reply.LookupErr("conversationId")
	if err != nil {
		return id, nil, false, fail("the server's reply has no conversationId", err)
	}
	if _, ok := id.AsInt64OK(); !ok {
		return id, nil, false, fail("the server's conversationId is "+id.Type.String()+", want an integer", nil)
	}
	pv, err := reply.LookupErr("payload")
	if err != nil {
		return id, nil, false, fail("the server's reply has no payload", err)
	}
	bin, ok := pv.BinaryOK()
	if !ok {
		return id, nil, false, fail("the server's payload is "+pv.Type.String()+", want binary", nil)
	}
	if dv, err := reply.LookupErr("done"); err == nil {
		if done, ok = dv.BooleanOK(); !ok {
			return id, nil, false, fail("the server's done is "+dv.Type.String()+", want a boolean", nil)
		}
	}
	return id, bin.Data, done, nil
}

// checkOK rejects a reply with ok:0 that the Runner let through.
func checkOK(reply bson.Raw) *Error {
	v, err := reply.LookupErr("ok")
	if err != nil {
		return nil
	}
	if f, ok := v.AsFloat64OK(); ok && f == 0 {
		msg := reply.Lookup("errmsg").StringValue()
		return fail("the server replied ok:0: "+strconv.Quote(truncate(msg)), nil)
	}
	return nil
}
