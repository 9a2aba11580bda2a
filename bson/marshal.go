package bson

import (
	"reflect"
	"strconv"
	"strings"
	"unsafe"
)

// Marshaler is implemented by types that encode themselves as a BSON
// document. MarshalBSON must return one complete, valid document; it is
// validated before use.
type Marshaler interface {
	MarshalBSON() ([]byte, error)
}

// ValueMarshaler is implemented by types that encode themselves as a single
// BSON value of any type. The returned bytes are the value without type
// byte or key, and are validated before use.
type ValueMarshaler interface {
	MarshalBSONValue() (Type, []byte, error)
}

// Zeroer is implemented by types that know when they are empty. The
// omitempty and omitzero tag options skip a field whose value (or, for a
// pointer field, whose non-nil target) reports IsZero. time.Time, ObjectID,
// UUID, Timestamp and Decimal128 implement it.
type Zeroer interface {
	IsZero() bool
}

// Marshal encodes v as a BSON document. v may be a D, M, map, Raw, a struct,
// a pointer to one of these, or a Marshaler or ValueMarshaler that produces
// a document.
//
// Struct fields are encoded in declaration order under the key given by
// their `bson` tag, `bson:"key,opt1,opt2"`:
//
//   - no tag or an empty key: the field name in lower case ("UserID" ->
//     "userid"), the official Go driver's convention;
//   - `bson:"-"`: the field is skipped; unexported fields always are;
//   - omitempty: skip false, 0, "", nil pointers and interfaces, empty
//     slices and maps, and values whose IsZero method (Zeroer) returns
//     true. As with the official driver, a struct without IsZero is never
//     empty; omitzero skips any value equal to its type's zero value;
//   - minsize: write int64 and uint/uint32/uint64 values that fit as int32;
//   - truncate: (decoding) allow a double with a fraction into an integer
//     field, and any double into a float32;
//   - inline: flatten a struct or *struct field's fields into this document
//     (a nil *struct contributes nothing), or, on a map with string keys,
//     write the map's entries here and collect unknown keys into it when
//     decoding. Key clashes between promoted fields follow Go's embedding
//     rule (the shallowest wins, equal depths are an error); an inline map
//     key that repeats a field's key is an encoding error.
//
// An anonymous (embedded) struct field without the inline option is, as
// with the official driver, a nested document under its lower-cased type
// name; unexported embedded structs are skipped unless tagged inline.
//
// Go values map to BSON as follows: bool -> boolean; int8, int16, int32,
// uint8, uint16 -> int32; int -> int32 when it fits, else int64; int64,
// uint, uint32, uint64 -> int64 (an unsigned value above math.MaxInt64 is
// an error); float32, float64 -> double; string -> string; []byte and
// [N]byte -> binary; other slices and arrays -> array; maps -> document
// (keys of string kind as they are, encoding.TextMarshaler keys as their
// text, integer keys in decimal; entries in Go's map order); pointers and
// interfaces -> their target, nil -> null; nil slices and maps -> null;
// time.Time -> UTC datetime (milliseconds; finer precision is dropped);
// time.Duration -> int64 nanoseconds; UUID -> binary subtype 4; Vector ->
// binary subtype 9 (the zero Vector -> null); this package's other types ->
// their BSON types. Channels, functions and complex
// numbers cannot be encoded.
//
// Errors are *MarshalError values whose Path names the dotted field path.
func Marshal(v any) ([]byte, error) {
	return encodeDocument(v)
}

// MarshalAppend encodes v as a BSON document appended to dst. On error dst
// is returned unchanged.
func MarshalAppend(dst []byte, v any) ([]byte, error) {
	out, err := appendDocumentValue(dst, v, 1)
	if err != nil {
		return dst, err
	}
	return out, nil
}

// MarshalValue encodes v as a single BSON value and returns its type and
// bytes (without type byte or key).
func MarshalValue(v any) (Type, []byte, error) {
	buf, err := appendElement(make([]byte, 0, 32), "", v, 0)
	if err != nil {
		// The value was encoded under the empty key: drop the empty
		// leading path component from the error.
		switch e := err.(type) {
		case *MarshalError:
			e.Path = strings.TrimPrefix(e.Path, ".")
		case *DecodeError:
			e.Path = strings.TrimPrefix(e.Path, ".")
		}
		return 0, nil, err
	}
	return Type(buf[0]), buf[2:], nil
}

// appendOther writes one element for a value the fast path in
// appendElement does not know, by its cached codec. Errors begin with key.
func appendOther(dst []byte, key string, v any, depth int) ([]byte, error) {
	c := codecFor(reflect.TypeOf(v))
	data := (*eface)(unsafe.Pointer(&v)).data
	if c.typ.Kind() == reflect.Pointer {
		return c.encPointerValue(dst, key, data, depth)
	}
	return c.enc(dst, key, valuePointer(c, v, data), depth)
}

// valuePointer returns a pointer to the value held by the interface v for
// reading. Most types sit behind the interface's data word; pointer-shaped
// ones are the data word itself and get a copy of it. A value whose
// encoding may call pointer-receiver methods is copied, so those methods
// never see the interface's (possibly read-only) memory.
func valuePointer(c *codec, v any, data unsafe.Pointer) unsafe.Pointer {
	switch {
	case c.direct:
		w := new(unsafe.Pointer)
		*w = data
		return unsafe.Pointer(w)
	case c.addrMethods:
		nv := reflect.New(c.typ)
		nv.Elem().Set(reflect.ValueOf(v))
		return nv.UnsafePointer()
	}
	return data
}

// appendOtherDocument writes a struct, map, Marshaler or pointer to one of
// those as a document at depth.
func appendOtherDocument(dst []byte, v any, depth int) ([]byte, error) {
	rt := reflect.TypeOf(v)
	c := codecFor(rt)
	data := (*eface)(unsafe.Pointer(&v)).data
	var p unsafe.Pointer
	if rt.Kind() == reflect.Pointer {
		// Follow pointers (to pointers) to the value.
		for hops := 0; c.typ.Kind() == reflect.Pointer; hops++ {
			if data == nil {
				return dst, &MarshalError{GoType: rt, Reason: "a nil pointer cannot be encoded as a document"}
			}
			if hops > MaxDepth {
				return dst, &MarshalError{GoType: rt, Reason: "more than " + strconv.Itoa(MaxDepth) + " pointer indirections"}
			}
			p, c = data, c.elem
			if c.typ.Kind() == reflect.Pointer {
				data = *(*unsafe.Pointer)(p)
			}
		}
	} else {
		p = valuePointer(c, v, data)
	}
	if c.doc == nil {
		if c.typ.Kind() == reflect.Interface {
			// A pointer to an interface: encode what it holds. The extra
			// depth bounds an interface that holds a pointer to itself.
			return appendDocumentValue(dst, reflect.NewAt(c.typ, p).Elem().Interface(), depth+1)
		}
		return dst, &MarshalError{GoType: c.typ, Reason: "cannot encode a Go " + c.typ.Kind().String() + " as a document; use a struct, a map, D, M or Raw"}
	}
	return c.doc(dst, p, depth)
}
