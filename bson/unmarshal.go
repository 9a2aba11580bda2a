package bson

import (
	"reflect"
	"unsafe"
)

// Unmarshaler is implemented by types that decode themselves from a BSON
// document. UnmarshalBSON receives a copy of the document's bytes, which it
// may keep. A BSON null leaves the zero value without calling it; any other
// non-document value is an error.
type Unmarshaler interface {
	UnmarshalBSON([]byte) error
}

// ValueUnmarshaler is implemented by types that decode themselves from a
// single BSON value of any type, null included. UnmarshalBSONValue receives
// the type and a copy of the value's bytes.
type ValueUnmarshaler interface {
	UnmarshalBSONValue(Type, []byte) error
}

// Unmarshal decodes the BSON document data into v, which must be a non-nil
// pointer (to a struct, map, D, M, Raw, interface, or any type with an
// UnmarshalBSON method) or a non-nil map.
//
// The whole document is validated first; invalid BSON returns a
// *DecodeError and leaves v untouched. Decoding then follows the struct
// tags and type mapping described at Marshal, and in addition:
//
//   - keys not matching any field are skipped (or collected by an inline
//     map); fields whose keys are absent keep their values;
//   - null (and undefined) leaves the zero value, and sets pointers,
//     slices, maps and interfaces to nil;
//   - integers accept int32, int64, boolean and integral doubles, and
//     report values out of range (e.g. 300 into an int8) instead of
//     wrapping; the truncate option lets a double with a fraction in;
//   - float64 accepts int32, and int64 values it holds exactly; float32
//     also requires a double to fit exactly, unless truncate is set;
//   - strings accept string, symbol and JavaScript values;
//   - []byte accepts binary of any subtype, always copied; [N]byte needs
//     binary of exactly N bytes;
//   - slices reuse their backing array when it is large enough (zeroing it
//     first) and otherwise get a new one of the exact length; arrays take
//     at most their length in elements and zero the rest;
//   - maps are allocated when nil and otherwise added to;
//   - nil pointers get a new target; non-nil ones are decoded into;
//   - an empty interface gets documents as D, arrays as A and other values
//     as their default Go types (M and map[string]any fields hold nested
//     documents as M); an interface holding a non-nil pointer is decoded
//     through it; a non-empty interface holding a value gets a new value of
//     the same type;
//   - time.Time values are UTC.
//
// A value that does not fit its Go type stops decoding with an
// *UnmarshalTypeError whose Path is the dotted path of keys, e.g.
// "items.3.price". Fields decoded before the error keep their new values;
// everything after it is untouched. A *D, *M or nil *interface{} is only
// assigned when the whole decode succeeds.
func Unmarshal(data []byte, v any) error {
	switch p := v.(type) {
	case *D:
		if p != nil {
			d, err := DecodeD(data)
			if err == nil {
				*p = d
			}
			return err
		}
	case *M:
		if p != nil {
			m, err := DecodeM(data)
			if err == nil {
				*p = m
			}
			return err
		}
	case *any:
		if p != nil && *p == nil {
			d, err := DecodeD(data)
			if err == nil {
				*p = d
			}
			return err
		}
	}
	c, ptr, err := unmarshalTarget(v, TypeEmbeddedDocument)
	if err != nil {
		return err
	}
	if err := validateForDecode(data); err != nil {
		return err
	}
	return decodeValue(c, TypeEmbeddedDocument, data, ptr)
}

// UnmarshalValue decodes one BSON value of type t, whose encoded bytes are
// exactly data, into v (a non-nil pointer or map), by the rules of
// Unmarshal.
func UnmarshalValue(t Type, data []byte, v any) error {
	c, ptr, err := unmarshalTarget(v, t)
	if err != nil {
		return err
	}
	if err := (RawValue{Type: t, Value: data}).Validate(); err != nil {
		return err
	}
	return decodeValue(c, t, data, ptr)
}

// Unmarshal decodes the value into out, as UnmarshalValue does.
func (v RawValue) Unmarshal(out any) error {
	return UnmarshalValue(v.Type, v.Value, out)
}

// Unmarshal decodes the document into out, as Unmarshal does.
func (r Raw) Unmarshal(out any) error {
	return Unmarshal(r, out)
}

// unmarshalTarget finds the codec and memory that v designates: the target
// of a pointer, or a map value itself.
func unmarshalTarget(v any, t Type) (*codec, unsafe.Pointer, error) {
	rt := reflect.TypeOf(v)
	if rt == nil {
		return nil, nil, &UnmarshalTypeError{BSONType: t, Reason: "cannot decode into a nil interface; pass a non-nil pointer"}
	}
	data := (*eface)(unsafe.Pointer(&v)).data
	switch rt.Kind() {
	case reflect.Pointer:
		if data == nil {
			return nil, nil, &UnmarshalTypeError{BSONType: t, GoType: rt, Reason: "cannot decode into a nil pointer"}
		}
		return codecFor(rt).elem, data, nil
	case reflect.Map:
		if data == nil {
			return nil, nil, &UnmarshalTypeError{BSONType: t, GoType: rt, Reason: "cannot decode into a nil map; pass a pointer to it"}
		}
		w := new(unsafe.Pointer)
		*w = data
		return codecFor(rt), unsafe.Pointer(w), nil
	}
	return nil, nil, &UnmarshalTypeError{BSONType: t, GoType: rt, Reason: "cannot decode into a non-pointer; pass a pointer"}
}
