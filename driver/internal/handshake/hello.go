package handshake

import (
	"encoding/binary"

	"github.com/mongoscope/mongoscope/bson"
)

// backpressureVersion is the client backpressure specification version the
// handshake declares; the handshake specification requires the string "2".
const backpressureVersion = "2"

// AppendHello appends a complete hello command document to dst: the body of
// an OP_MSG section or of an OP_QUERY, not a wire header.
//
// legacy=false writes {hello: 1, ..., $db: "admin"} for OP_MSG. legacy=true
// writes {isMaster: 1, ...} without $db, for OP_QUERY, which names the
// database in the collection name instead; the Stable API and load-balanced
// mode forbid legacy hello, so those options make it an *Error.
//
// Field order: the command, helloOk:true, backpressure:"2", client
// (metadata; omitted when empty), compression (omitted when there are no
// compressors), loadBalanced:true when set, the elements extra appends (auth
// adds speculativeAuthenticate and saslSupportedMechs), apiVersion,
// apiStrict and apiDeprecationErrors when a ServerAPI is set, then $db.
//
// On error dst is returned unchanged.
func AppendHello(dst []byte, metadata bson.Raw, o Options, legacy bool, extra func([]byte) []byte) ([]byte, error) {
	if legacy {
		if o.LoadBalanced {
			return dst, errorf("LoadBalanced", "load-balanced mode requires the hello command, not legacy hello")
		}
		if o.ServerAPI != nil {
			return dst, errorf("ServerAPI", "a declared Stable API requires the hello command, not legacy hello")
		}
		return appendHello(dst, metadata, o, "isMaster", false, extra)
	}
	return appendHello(dst, metadata, o, "hello", true, extra)
}

// AppendHandshakeMsg appends the initial handshake command for an OP_MSG
// body, choosing the command as the handshake specification does now that
// every handshake uses OP_MSG: hello when UseHello(o), otherwise legacy
// hello (isMaster) with helloOk:true. Either way it ends with $db:"admin".
// The fields are those of AppendHello.
func AppendHandshakeMsg(dst []byte, metadata bson.Raw, o Options, extra func([]byte) []byte) ([]byte, error) {
	cmd := "isMaster"
	if UseHello(o) {
		cmd = "hello"
	}
	return appendHello(dst, metadata, o, cmd, true, extra)
}

func appendHello(dst []byte, metadata bson.Raw, o Options, cmd string, withDB bool, extra func([]byte) []byte) ([]byte, error) {
	if len(metadata) > 0 {
		if err := checkDocument(metadata); err != nil {
			return dst, err
		}
	}
	if o.ServerAPI != nil && o.ServerAPI.Version != ServerAPIVersion1 {
		return dst, errorf("ServerAPI.Version", "%q is not a known Stable API version (known: %q)", o.ServerAPI.Version, ServerAPIVersion1)
	}
	orig := len(dst)
	start, out := bson.AppendDocumentStart(dst)
	out = bson.AppendInt32Element(out, cmd, 1)
	out = bson.AppendBooleanElement(out, "helloOk", true)
	out = bson.AppendStringElement(out, "backpressure", backpressureVersion)
	if len(metadata) > 0 {
		out = bson.AppendDocumentElement(out, "client", metadata)
	}
	if len(o.Compressors) > 0 {
		var arr int
		arr, out = bson.AppendArrayElementStart(out, "compression")
		for i, c := range o.Compressors {
			out = bson.AppendStringElement(out, bson.ArrayKey(i), c)
		}
		var err error
		if out, err = bson.AppendDocumentEnd(out, arr); err != nil {
			return dst[:orig], &Error{Field: "Compressors", Reason: "cannot encode", Err: err}
		}
	}
	if o.LoadBalanced {
		out = bson.AppendBooleanElement(out, "loadBalanced", true)
	}
	if extra != nil {
		mark := len(out)
		if out = extra(out); len(out) < mark {
			return dst[:orig], errorf("extra", "returned %d bytes, fewer than the %d it was given", len(out), mark)
		}
	}
	out = AppendServerAPI(out, o.ServerAPI)
	if withDB {
		out = bson.AppendStringElement(out, "$db", "admin")
	}
	out, err := bson.AppendDocumentEnd(out, start)
	if err != nil {
		return dst[:orig], &Error{Reason: "cannot encode the hello command", Err: err}
	}
	return out, nil
}

// checkDocument is a cheap framing check of the metadata document: its
// length prefix matches and it ends with NUL. Metadata builds it, so a full
// validation on every connection would buy nothing.
func checkDocument(doc bson.Raw) error {
	if len(doc) < 5 || int(binary.LittleEndian.Uint32(doc)) != len(doc) || doc[len(doc)-1] != 0 {
		return errorf("metadata", "is not a BSON document (%d bytes)", len(doc))
	}
	return nil
}

// AppendServerAPI appends the Stable API fields of api to a command being
// built: apiVersion, and apiStrict and apiDeprecationErrors when set.
// Nothing is appended for a nil api. The versioned API specification
// wants them on every command, the handshake and getMore included.
func AppendServerAPI(dst []byte, api *ServerAPI) []byte {
	if api == nil {
		return dst
	}
	dst = bson.AppendStringElement(dst, "apiVersion", api.Version)
	if api.Strict != nil {
		dst = bson.AppendBooleanElement(dst, "apiStrict", *api.Strict)
	}
	if api.DeprecationErrors != nil {
		dst = bson.AppendBooleanElement(dst, "apiDeprecationErrors", *api.DeprecationErrors)
	}
	return dst
}
