package handshake

import (
	"fmt"
)

// DriverName is client.driver.name in the handshake metadata.
const DriverName = "mongoscope"

// Version is client.driver.version in the handshake metadata. A release
// build sets it with the linker:
//
//	go build -ldflags "-X github.com/mongoscope/mongoscope/driver/internal/handshake.Version=1.2.3"
var Version = "0.1.0"

// ServerAPIVersion1 is the only Stable API version the specification
// defines so far.
const ServerAPIVersion1 = "1"

// Limits from the MongoDB Handshake specification.
const (
	// MaxMetadataSize is the largest client metadata document, BSON
	// overhead included, that a server accepts.
	MaxMetadataSize = 512
	// MaxAppNameSize is the largest client.application.name in bytes.
	MaxAppNameSize = 128
)

// DriverInfo is what a library wrapping the driver adds to the metadata
// (the specification's DriverInfoOptions). Each non-empty field is appended
// to the matching metadata field after a '|'; an empty field is unset.
type DriverInfo struct {
	Name, Version, Platform string
}

// ServerAPI is the declared Stable API (Versioned API specification). When
// set, every command, the handshake included, carries apiVersion, and
// apiStrict and apiDeprecationErrors when the user set them.
type ServerAPI struct {
	Version           string
	Strict            *bool
	DeprecationErrors *bool
}

// Options are the client settings the handshake depends on.
type Options struct {
	// AppName is client.application.name; at most 128 bytes.
	AppName string
	// DriverInfo lists wrapping libraries, outermost last. Duplicates (all
	// three fields equal) are appended once.
	DriverInfo []DriverInfo
	// Compressors are the compressor names to offer, in order of preference.
	Compressors []string
	// LoadBalanced adds loadBalanced:true and requires the hello command.
	LoadBalanced bool
	// ServerAPI, when set, adds the Stable API fields and requires hello.
	ServerAPI *ServerAPI
	// Getenv reads environment variables for FaaS and container detection;
	// nil means os.Getenv. Tests inject their own.
	Getenv func(string) string
	// FileExists reports whether a file exists; it detects Docker through
	// /.dockerenv. nil means os.Stat succeeding. Tests inject their own.
	FileExists func(path string) bool
}

// Error reports a handshake option or reply field that cannot be used.
// Field names the option ("AppName", "DriverInfo[1].Name") or the reply
// field ("topologyVersion.counter"). It never holds a credential: none of
// the inputs this package reads is one.
type Error struct {
	Field  string
	Reason string
	Err    error
}

func (e *Error) Error() string {
	msg := "handshake: "
	if e.Field != "" {
		msg += e.Field + ": "
	}
	msg += e.Reason
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying error, if any.
func (e *Error) Unwrap() error { return e.Err }

func errorf(field, format string, args ...any) *Error {
	return &Error{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// UseHello reports whether the initial handshake must use the hello command
// rather than legacy hello: the Stable API and load-balanced mode both
// require it.
func UseHello(o Options) bool {
	return o.ServerAPI != nil || o.LoadBalanced
}

// NegotiateCompressor picks the first compressor in the client's order of
// preference that the server also lists in its hello reply; "" if none.
func NegotiateCompressor(client, server []string) string {
	for _, c := range client {
		for _, s := range server {
			if c == s {
				return c
			}
		}
	}
	return ""
}
