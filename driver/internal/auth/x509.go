package auth

import (
	"context"

	"github.com/mongoscope/mongoscope/bson"
)

// appendX509Fields appends MONGODB-X509's authenticate command fields. The
// user goes only when the application gave one, as the spec requires; the
// server otherwise takes it from the client certificate.
func appendX509Fields(dst []byte, username string) []byte {
	dst = bson.AppendInt32Element(dst, "authenticate", 1)
	dst = bson.AppendStringElement(dst, "mechanism", MechanismX509)
	if username != "" {
		dst = bson.AppendStringElement(dst, "user", username)
	}
	return dst
}

// authenticateX509 runs the authenticate command on "$external" unless the
// hello reply carried the speculative one's answer, which needs nothing
// more: its presence means the server accepted the certificate.
func authenticateX509(ctx context.Context, r Runner, username string, speculative bson.Raw) error {
	if speculative != nil {
		return nil
	}
	start, cmd := bson.AppendDocumentStart(nil)
	cmd = appendX509Fields(cmd, username)
	cmd, err := bson.AppendDocumentEnd(cmd, start)
	if err != nil {
		return fail("building the authenticate command failed", err)
	}
	reply, err := r.RunCommand(ctx, externalSource, cmd)
	if err != nil {
		return fail("the server rejected the authenticate command", err)
	}
	if e := checkOK(reply); e != nil {
		return e
	}
	return nil
}
