package bson

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
)

// MaxDepth is the deepest nesting of documents and arrays this package reads
// or writes. It matches mongod's default maxBSONDepth. The top-level document
// is depth 1.
const MaxDepth = 200

// ErrElementNotFound is returned by lookups when the key or path is absent.
var ErrElementNotFound = errors.New("bson: element not found")

// DecodeError reports BSON bytes that are not valid. Offset is the byte
// offset, from the start of the outermost document given to the function,
// where the problem was found. Path is the dotted field path of the element
// being read ("" at the top level).
type DecodeError struct {
	Offset int
	Path   string
	Reason string
}

func (e *DecodeError) Error() string {
	return offsetError("bson: invalid BSON at byte ", e.Offset, e.Path, e.Reason)
}

// offsetError formats the errors that point at a byte of their input:
// "<prefix><offset> (field "<path>"): <reason>".
func offsetError(prefix string, offset int, path, reason string) string {
	var b strings.Builder
	b.WriteString(prefix)
	b.WriteString(strconv.Itoa(offset))
	if path != "" {
		b.WriteString(" (field \"")
		b.WriteString(path)
		b.WriteString("\")")
	}
	b.WriteString(": ")
	b.WriteString(reason)
	return b.String()
}

// UnmarshalTypeError reports a BSON value that cannot be stored in the Go
// value at Path.
type UnmarshalTypeError struct {
	Path     string       // dotted path of BSON keys, e.g. "items.3.price"
	BSONType Type         // the type found in the document
	GoType   reflect.Type // the Go type it was to be stored in
	Reason   string       // optional detail, e.g. "overflows int8"
	Err      error        // the underlying error, e.g. from an UnmarshalBSON method
}

// Unwrap returns the underlying error, if any.
func (e *UnmarshalTypeError) Unwrap() error { return e.Err }

func (e *UnmarshalTypeError) Error() string {
	var b strings.Builder
	b.WriteString("bson: cannot decode ")
	b.WriteString(e.BSONType.String())
	if e.Path != "" {
		b.WriteString(" at \"")
		b.WriteString(e.Path)
		b.WriteString("\"")
	}
	b.WriteString(" into Go type ")
	if e.GoType != nil {
		b.WriteString(e.GoType.String())
	} else {
		b.WriteString("<nil>")
	}
	if e.Reason != "" {
		b.WriteString(": ")
		b.WriteString(e.Reason)
	}
	return b.String()
}

// MarshalError reports a Go value that cannot be encoded as BSON.
type MarshalError struct {
	Path   string       // dotted path of keys to the value
	GoType reflect.Type // the offending Go type, when there is one
	Reason string
	Err    error // the underlying error, e.g. from a MarshalBSON method
}

// Unwrap returns the underlying error, if any.
func (e *MarshalError) Unwrap() error { return e.Err }

func (e *MarshalError) Error() string {
	var b strings.Builder
	b.WriteString("bson: cannot encode")
	if e.GoType != nil {
		b.WriteString(" Go type ")
		b.WriteString(e.GoType.String())
	}
	if e.Path != "" {
		b.WriteString(" at \"")
		b.WriteString(e.Path)
		b.WriteString("\"")
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	return b.String()
}

// joinPath appends key to a dotted path.
func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
