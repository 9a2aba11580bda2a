package bson

import (
	"maps"
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
// Unmarshal is atomic: when it returns an error of any kind (invalid BSON,
// a value that does not fit, a failing UnmarshalBSON method, too deep a
// chain of pointers), v and everything reachable from it are exactly as
// they were. The whole document is validated first, so invalid BSON
// returns a *DecodeError before anything is decoded. Decoding then follows
// the struct tags and type mapping described at Marshal, and in addition:
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
//   - slices always get a new backing array of the decoded length; arrays
//     take at most their length in elements and zero the rest;
//   - maps are allocated when nil; a non-nil map is replaced by a new map
//     holding its old entries plus the decoded ones;
//   - nil pointers get a new target; a non-nil pointer is replaced by a
//     pointer to a new copy of its target (a shallow copy), into which the
//     value is decoded, so fields the document lacks keep their values;
//   - an empty interface gets documents as D, arrays as A and other values
//     as their default Go types (M and map[string]any fields hold nested
//     documents as M); an interface holding a non-nil pointer gets a new
//     pointer to an updated copy, as a pointer does; a non-empty interface
//     holding a value gets a new value of the same type;
//   - time.Time values are UTC.
//
// Atomicity comes from copy-on-write: decoding never writes into memory
// that existed before the call, except the value v points to, which is
// restored if the decode fails (a non-nil map passed as v gets the decoded
// entries only on success). So a slice's old backing array is never
// reused; a map, or a struct reached through a non-nil pointer, is
// replaced by an updated copy, and other holders of the old map or pointer
// do not see the decode. The guarantee covers what an UnmarshalBSON or
// UnmarshalBSONValue method assigns to its own value, which lies in memory
// that is restored or discarded; what a method writes through references
// its value already held (into a map it holds, say) is beyond Unmarshal's
// reach.
//
// A value that does not fit its Go type stops decoding with an
// *UnmarshalTypeError whose Path is the dotted path of keys, e.g.
// "items.3.price".
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
	c, ptr, isMap, err := unmarshalTarget(v, TypeEmbeddedDocument)
	if err != nil {
		return err
	}
	if err := validateForDecode(data); err != nil {
		return err
	}
	if isMap {
		return decodeIntoMap(c, TypeEmbeddedDocument, data, ptr)
	}
	return decodeTop(c, TypeEmbeddedDocument, data, ptr)
}

// UnmarshalValue decodes one BSON value of type t, whose encoded bytes are
// exactly data, into v (a non-nil pointer or map), by the rules of
// Unmarshal.
func UnmarshalValue(t Type, data []byte, v any) error {
	c, ptr, isMap, err := unmarshalTarget(v, t)
	if err != nil {
		return err
	}
	if err := (RawValue{Type: t, Value: data}).Validate(); err != nil {
		return err
	}
	if isMap {
		return decodeIntoMap(c, t, data, ptr)
	}
	return decodeTop(c, t, data, ptr)
}

// Unmarshal decodes the value into out, as UnmarshalValue does.
func (v RawValue) Unmarshal(out any) error {
	return UnmarshalValue(v.Type, v.Value, out)
}

// Unmarshal decodes the document into out, as Unmarshal does.
func (r Raw) Unmarshal(out any) error {
	return Unmarshal(r, out)
}

// decodeTop decodes the validated value v into the target at p, atomically:
// when the decode fails, the target is restored. Decoders write only into
// the memory they are given and into memory they allocate (see the
// copy-on-write notes in codec_decode.go), so only the target itself needs
// restoring. A target of all zero bytes, as in the usual
// "var x T; Unmarshal(b, &x)", is restored by clearing it. Any other is
// first saved in a pooled backup value, which nothing else ever sees, and
// copied back on failure. Decoding in place (rather than into a copy that
// replaces the target on success) costs one copy less, hands UnmarshalBSON
// methods their value's real address, and with the pool allocates nothing
// when one value is decoded into again and again.
func decodeTop(c *codec, t Type, v []byte, p unsafe.Pointer) error {
	if isZeroMem(p, c.size) {
		if err := decodeValue(c, t, v, p); err != nil {
			setZero(c.typ, p)
			return err
		}
		return nil
	}
	target := reflect.NewAt(c.typ, p).Elem()
	b := c.backups.Get().(unsafe.Pointer)
	backup := reflect.NewAt(c.typ, b).Elem()
	backup.Set(target)
	err := decodeValue(c, t, v, p)
	if err != nil {
		target.Set(backup)
	}
	// Cleared, the pooled value keeps nothing of the target alive.
	backup.SetZero()
	c.backups.Put(b)
	return err
}

// decodeIntoMap decodes the validated value v for m, a non-nil map of c's
// type passed to Unmarshal by value, changing m only if the decode
// succeeds. The usual map decoder fills a new map whose entries are then
// added to m. A map type with its own decoding method is handed a copy of
// m instead, whose contents m takes on if the method succeeds.
func decodeIntoMap(c *codec, t Type, v []byte, m unsafe.Pointer) error {
	dst := reflect.NewAt(c.typ, unsafe.Pointer(&m)).Elem()
	if c.decMethod {
		w := reflect.New(c.typ)
		w.Elem().Set(cloneMap(dst, 0))
		if err := decodeValue(c, t, v, w.UnsafePointer()); err != nil {
			return err
		}
		dst.Clear()
		addEntries(dst, w.Elem())
		return nil
	}
	var fresh unsafe.Pointer // a nil map of c's type
	if err := decodeValue(c, t, v, unsafe.Pointer(&fresh)); err != nil || fresh == nil {
		return err // fresh is nil after null: nothing to add
	}
	switch c.mp.fast {
	case mapStringString:
		maps.Copy(*(*map[string]string)(unsafe.Pointer(&m)), *(*map[string]string)(unsafe.Pointer(&fresh)))
	case mapStringAny:
		maps.Copy(*(*map[string]any)(unsafe.Pointer(&m)), *(*map[string]any)(unsafe.Pointer(&fresh)))
	default:
		addEntries(dst, reflect.NewAt(c.typ, unsafe.Pointer(&fresh)).Elem())
	}
	return nil
}

// addEntries sets every entry of the map src in the map dst.
func addEntries(dst, src reflect.Value) {
	if src.IsNil() {
		return
	}
	t := src.Type()
	k := reflect.New(t.Key()).Elem()
	e := reflect.New(t.Elem()).Elem()
	for it := src.MapRange(); it.Next(); {
		k.SetIterKey(it)
		e.SetIterValue(it)
		dst.SetMapIndex(k, e)
	}
}

// zeroMem is compared against to test memory for zero bytes.
var zeroMem [512]byte

// isZeroMem reports whether the n bytes at p are all zero. Padding counts:
// a value with non-zero padding is only copied needlessly.
func isZeroMem(p unsafe.Pointer, n uintptr) bool {
	for n > uintptr(len(zeroMem)) {
		if string(unsafe.Slice((*byte)(p), len(zeroMem))) != string(zeroMem[:]) {
			return false
		}
		// Still inside the value: more than len(zeroMem) bytes remained.
		p, n = unsafe.Add(p, len(zeroMem)), n-uintptr(len(zeroMem))
	}
	return n == 0 || string(unsafe.Slice((*byte)(p), n)) == string(zeroMem[:n])
}

// unmarshalTarget finds the codec and memory that v designates: the target
// of a pointer, or (isMap) a map value itself.
func unmarshalTarget(v any, t Type) (c *codec, p unsafe.Pointer, isMap bool, err error) {
	rt := reflect.TypeOf(v)
	if rt == nil {
		return nil, nil, false, &UnmarshalTypeError{BSONType: t, Reason: "cannot decode into a nil interface; pass a non-nil pointer"}
	}
	data := (*eface)(unsafe.Pointer(&v)).data
	switch rt.Kind() {
	case reflect.Pointer:
		if data == nil {
			return nil, nil, false, &UnmarshalTypeError{BSONType: t, GoType: rt, Reason: "cannot decode into a nil pointer"}
		}
		return codecFor(rt).elem, data, false, nil
	case reflect.Map:
		if data == nil {
			return nil, nil, false, &UnmarshalTypeError{BSONType: t, GoType: rt, Reason: "cannot decode into a nil map; pass a pointer to it"}
		}
		return codecFor(rt), data, true, nil
	}
	return nil, nil, false, &UnmarshalTypeError{BSONType: t, GoType: rt, Reason: "cannot decode into a non-pointer; pass a pointer"}
}
