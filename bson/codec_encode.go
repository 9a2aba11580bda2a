package bson

import (
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// Encoders. Each encFunc reads the Go value at p, whose type is the one its
// codec was planned for, and appends one element. Error paths begin with the
// element's key.

func encBool(dst []byte, key string, p unsafe.Pointer, _ int) ([]byte, error) {
	return AppendBooleanElement(dst, key, *(*bool)(p)), nil
}

func encFloat32(dst []byte, key string, p unsafe.Pointer, _ int) ([]byte, error) {
	return AppendDoubleElement(dst, key, float64(*(*float32)(p))), nil
}

func encFloat64(dst []byte, key string, p unsafe.Pointer, _ int) ([]byte, error) {
	return AppendDoubleElement(dst, key, *(*float64)(p)), nil
}

func encString(dst []byte, key string, p unsafe.Pointer, _ int) ([]byte, error) {
	return AppendStringElement(dst, key, *(*string)(p)), nil
}

// appendIntElement writes v as an int32 when small is set and v fits, else
// as an int64.
func appendIntElement(dst []byte, key string, v int64, small bool) []byte {
	if small && v >= math.MinInt32 && v <= math.MaxInt32 {
		return AppendInt32Element(dst, key, int32(v))
	}
	return AppendInt64Element(dst, key, v)
}

// encIntKind returns the encoder for an integer kind, following the
// official driver: 8-, 16- and 32-bit signed integers and 8- and 16-bit
// unsigned ones become int32; int becomes int32 when it fits; int64 and the
// wider unsigned kinds become int64, or int32 when minSize is set and the
// value fits. Unsigned values above math.MaxInt64 cannot be represented.
func encIntKind(t reflect.Type, minSize bool) encFunc {
	switch t.Kind() {
	case reflect.Int8:
		return func(dst []byte, key string, p unsafe.Pointer, _ int) ([]byte, error) {
			return AppendInt32Element(dst, key, int32(*(*int8)(p))), nil
		}
	case reflect.Int16:
		return func(dst []byte, key string, p unsafe.Pointer, _ int) ([]byte, error) {
			return AppendInt32Element(dst, key, int32(*(*int16)(p))), nil
		}
	case reflect.Int32:
		return func(dst []byte, key string, p unsafe.Pointer, _ int) ([]byte, error) {
			return AppendInt32Element(dst, key, *(*int32)(p)), nil
		}
	case reflect.Int:
		return func(dst []byte, key string, p unsafe.Pointer, _ int) ([]byte, error) {
			return appendIntElement(dst, key, int64(*(*int)(p)), true), nil
		}
	case reflect.Int64:
		return func(dst []byte, key string, p unsafe.Pointer, _ int) ([]byte, error) {
			return appendIntElement(dst, key, *(*int64)(p), minSize), nil
		}
	case reflect.Uint8:
		return func(dst []byte, key string, p unsafe.Pointer, _ int) ([]byte, error) {
			return AppendInt32Element(dst, key, int32(*(*uint8)(p))), nil
		}
	case reflect.Uint16:
		return func(dst []byte, key string, p unsafe.Pointer, _ int) ([]byte, error) {
			return AppendInt32Element(dst, key, int32(*(*uint16)(p))), nil
		}
	case reflect.Uint32:
		return func(dst []byte, key string, p unsafe.Pointer, _ int) ([]byte, error) {
			return appendIntElement(dst, key, int64(*(*uint32)(p)), minSize), nil
		}
	}
	// Uint, Uint64, Uintptr.
	k := t.Kind()
	return func(dst []byte, key string, p unsafe.Pointer, _ int) ([]byte, error) {
		var u uint64
		switch k {
		case reflect.Uint:
			u = uint64(*(*uint)(p))
		case reflect.Uintptr:
			u = uint64(*(*uintptr)(p))
		default:
			u = *(*uint64)(p)
		}
		if u > math.MaxInt64 {
			return dst, &MarshalError{Path: key, GoType: t, Reason: "value " + strconv.FormatUint(u, 10) + " overflows int64"}
		}
		return appendIntElement(dst, key, int64(u), minSize), nil
	}
}

// encByteSlice writes any []byte-shaped slice as generic binary; nil is
// null, as with the official driver.
func encByteSlice(dst []byte, key string, p unsafe.Pointer, _ int) ([]byte, error) {
	b := *(*[]byte)(p)
	if b == nil {
		return AppendHeader(dst, TypeNull, key), nil
	}
	return AppendBinaryElement(dst, key, SubtypeGeneric, b), nil
}

// encByteArray writes a [N]byte as generic binary of N bytes.
func encByteArray(c *codec) encFunc {
	n := c.typ.Len()
	return func(dst []byte, key string, p unsafe.Pointer, _ int) ([]byte, error) {
		return AppendBinaryElement(dst, key, SubtypeGeneric, unsafe.Slice((*byte)(p), n)), nil
	}
}

func encUnsupported(t reflect.Type, reason string) encFunc {
	return func(dst []byte, key string, _ unsafe.Pointer, _ int) ([]byte, error) {
		return dst, &MarshalError{Path: key, GoType: t, Reason: reason}
	}
}

func docUnsupported(t reflect.Type, reason string) docFunc {
	return func(dst []byte, _ unsafe.Pointer, _ int) ([]byte, error) {
		return dst, &MarshalError{GoType: t, Reason: reason}
	}
}

func nestingError(key string, t reflect.Type) error {
	return &MarshalError{Path: key, GoType: t, Reason: "nesting exceeds the maximum depth of " + strconv.Itoa(MaxDepth)}
}

// encPointer writes nil as null and anything else as its target.
func encPointer(c *codec) encFunc {
	return func(dst []byte, key string, p unsafe.Pointer, depth int) ([]byte, error) {
		return c.encPointerValue(dst, key, *(*unsafe.Pointer)(p), depth)
	}
}

// encPointerValue encodes the pointer q of c's type. A pointer to a pointer
// or to an interface adds no document level of its own, so each such hop
// counts as one, which ends self-referencing pointer cycles at MaxDepth.
func (c *codec) encPointerValue(dst []byte, key string, q unsafe.Pointer, depth int) ([]byte, error) {
	if q == nil {
		return AppendHeader(dst, TypeNull, key), nil
	}
	e := c.elem
	if e.indirect {
		depth++
		if depth > MaxDepth {
			return dst, nestingError(key, c.typ)
		}
	}
	return e.enc(dst, key, q, depth)
}

// encInterface writes nil as null and anything else by its dynamic type.
func encInterface(c *codec) encFunc {
	if c.typ.NumMethod() == 0 {
		return func(dst []byte, key string, p unsafe.Pointer, depth int) ([]byte, error) {
			return appendElement(dst, key, *(*any)(p), depth)
		}
	}
	t := c.typ
	return func(dst []byte, key string, p unsafe.Pointer, depth int) ([]byte, error) {
		v := reflect.NewAt(t, p).Elem()
		if v.IsNil() {
			return AppendHeader(dst, TypeNull, key), nil
		}
		return appendElement(dst, key, v.Interface(), depth)
	}
}

// appendEmbedded writes the element key of type t, a document or an
// array, whose value doc writes at depth+1 from the Go value at p. On error
// nothing of the element is left written and the error's path gains key.
func appendEmbedded(dst []byte, t Type, key string, doc docFunc, p unsafe.Pointer, depth int) ([]byte, error) {
	mark := len(dst)
	dst = AppendHeader(dst, t, key)
	dst, err := doc(dst, p, depth+1)
	if err != nil {
		return dst[:mark], inField(err, key)
	}
	return dst, nil
}

func encStruct(c *codec) encFunc {
	doc := docStruct(c)
	return func(dst []byte, key string, p unsafe.Pointer, depth int) ([]byte, error) {
		return appendEmbedded(dst, TypeEmbeddedDocument, key, doc, p, depth)
	}
}

func docStruct(c *codec) docFunc {
	return func(dst []byte, p unsafe.Pointer, depth int) ([]byte, error) {
		return c.st.appendDoc(c, dst, p, depth)
	}
}

// appendDoc writes the struct at p as a document at depth. The common field
// types are written inline; the rest go through their codec.
func (st *structPlan) appendDoc(c *codec, dst []byte, p unsafe.Pointer, depth int) ([]byte, error) {
	if st.err != "" {
		return dst, &MarshalError{GoType: c.typ, Reason: st.err}
	}
	if depth > MaxDepth {
		return dst, nestingError("", c.typ)
	}
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	var err error
	for i := range st.fields {
		f := &st.fields[i]
		fp := unsafe.Add(p, f.offset)
		if f.via != nil {
			if fp = f.fieldPtr(p); fp == nil {
				continue
			}
		}
		switch f.omit {
		case omitEmpty:
			if f.c.empty(fp) {
				continue
			}
		case omitZero:
			if f.c.zero(fp) {
				continue
			}
		}
		switch f.ekind {
		case kString:
			s := *(*string)(fp)
			dst = append(dst, byte(TypeString))
			dst = append(dst, f.keyz...)
			dst = appendInt32(dst, int32(len(s)+1))
			dst = append(dst, s...)
			dst = append(dst, 0)
		case kInt32:
			dst = append(dst, byte(TypeInt32))
			dst = append(dst, f.keyz...)
			dst = appendInt32(dst, *(*int32)(fp))
		case kInt64:
			dst = append(dst, byte(TypeInt64))
			dst = append(dst, f.keyz...)
			dst = appendUint64(dst, uint64(*(*int64)(fp)))
		case kInt:
			v := *(*int)(fp)
			if v >= math.MinInt32 && v <= math.MaxInt32 {
				dst = append(dst, byte(TypeInt32))
				dst = append(dst, f.keyz...)
				dst = appendInt32(dst, int32(v))
			} else {
				dst = append(dst, byte(TypeInt64))
				dst = append(dst, f.keyz...)
				dst = appendUint64(dst, uint64(v))
			}
		case kFloat64:
			dst = append(dst, byte(TypeDouble))
			dst = append(dst, f.keyz...)
			dst = appendUint64(dst, math.Float64bits(*(*float64)(fp)))
		case kBool:
			dst = append(dst, byte(TypeBoolean))
			dst = append(dst, f.keyz...)
			b := byte(0)
			if *(*bool)(fp) {
				b = 1
			}
			dst = append(dst, b)
		case kTime:
			dst = append(dst, byte(TypeDateTime))
			dst = append(dst, f.keyz...)
			dst = appendUint64(dst, uint64(NewDateTimeFromTime(*(*time.Time)(fp))))
		case kObjectID:
			dst = append(dst, byte(TypeObjectID))
			dst = append(dst, f.keyz...)
			dst = append(dst, (*ObjectID)(fp)[:]...)
		case kStringSlice:
			dst, err = appendStringArray(dst, f.name, *(*[]string)(fp), depth)
		case kStruct:
			mark := len(dst)
			dst = append(dst, byte(TypeEmbeddedDocument))
			dst = append(dst, f.keyz...)
			if dst, err = f.c.st.appendDoc(f.c, dst, fp, depth+1); err != nil {
				dst, err = dst[:mark], inField(err, f.name)
			}
		default:
			dst, err = f.c.enc(dst, f.name, fp, depth)
		}
		if err != nil {
			return dst[:start], err
		}
	}
	if in := st.inline; in != nil {
		if mp := in.fieldPtr(p); mp != nil {
			if dst, err = in.c.appendMapEntries(dst, mp, depth, st); err != nil {
				return dst[:start], err
			}
		}
	}
	return AppendDocumentEnd(dst, start)
}

// appendStringArray writes a []string; nil is null.
func appendStringArray(dst []byte, key string, s []string, depth int) ([]byte, error) {
	if s == nil {
		return AppendHeader(dst, TypeNull, key), nil
	}
	if depth+1 > MaxDepth {
		return dst, nestingError(key, reflect.TypeFor[[]string]())
	}
	mark := len(dst)
	dst = AppendHeader(dst, TypeArray, key)
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	for i, v := range s {
		dst = AppendStringElement(dst, ArrayKey(i), v)
	}
	dst, err := AppendDocumentEnd(dst, start)
	if err != nil {
		return dst[:mark], err
	}
	return dst, nil
}

// encSlice writes a slice as an array; nil is null, as with the official
// driver, so that nil and empty slices survive a round trip.
func encSlice(c *codec) encFunc {
	if c.ekind == kStringSlice {
		return func(dst []byte, key string, p unsafe.Pointer, depth int) ([]byte, error) {
			return appendStringArray(dst, key, *(*[]string)(p), depth)
		}
	}
	return func(dst []byte, key string, p unsafe.Pointer, depth int) ([]byte, error) {
		h := (*sliceHeader)(p)
		if h.Data == nil {
			return AppendHeader(dst, TypeNull, key), nil
		}
		return appendArrayOf(dst, key, c, h.Data, h.Len, depth)
	}
}

func encArray(c *codec) encFunc {
	n := c.typ.Len()
	return func(dst []byte, key string, p unsafe.Pointer, depth int) ([]byte, error) {
		return appendArrayOf(dst, key, c, p, n, depth)
	}
}

// appendArrayOf writes the n elements of c.elem at data as an array element.
func appendArrayOf(dst []byte, key string, c *codec, data unsafe.Pointer, n, depth int) ([]byte, error) {
	if depth+1 > MaxDepth {
		return dst, nestingError(key, c.typ)
	}
	e := c.elem
	mark := len(dst)
	dst = AppendHeader(dst, TypeArray, key)
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	var err error
	for i := 0; i < n; i++ {
		ep := unsafe.Add(data, uintptr(i)*e.size)
		if e.ekind == kStruct {
			dst = AppendHeader(dst, TypeEmbeddedDocument, ArrayKey(i))
			if dst, err = e.st.appendDoc(e, dst, ep, depth+2); err != nil {
				err = inIndex(err, i)
			}
		} else {
			dst, err = e.enc(dst, ArrayKey(i), ep, depth+1)
		}
		if err != nil {
			return dst[:mark], inField(err, key)
		}
	}
	if dst, err = AppendDocumentEnd(dst, start); err != nil {
		return dst[:mark], err
	}
	return dst, nil
}

// Maps.

// encMap writes a map as an embedded document; a nil map is null.
func encMap(c *codec) encFunc {
	doc := docMap(c)
	return func(dst []byte, key string, p unsafe.Pointer, depth int) ([]byte, error) {
		if *(*unsafe.Pointer)(p) == nil {
			return AppendHeader(dst, TypeNull, key), nil
		}
		return appendEmbedded(dst, TypeEmbeddedDocument, key, doc, p, depth)
	}
}

func docMap(c *codec) docFunc {
	return c.appendMapDoc
}

// appendMapDoc writes the map at p as a document; nil is an empty document.
func (c *codec) appendMapDoc(dst []byte, p unsafe.Pointer, depth int) ([]byte, error) {
	if depth > MaxDepth {
		return dst, nestingError("", c.typ)
	}
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst, err := c.appendMapEntries(dst, p, depth, nil)
	if err != nil {
		return dst[:start], err
	}
	return AppendDocumentEnd(dst, start)
}

// appendMapEntries writes the entries of the map at p, in Go's map order,
// as elements of the document at depth. When the map is a struct's inline
// map, st is that struct, whose keys the map must not repeat.
func (c *codec) appendMapEntries(dst []byte, p unsafe.Pointer, depth int, st *structPlan) ([]byte, error) {
	check := func(k string) error {
		if strings.IndexByte(k, 0) >= 0 {
			return keyError(k)
		}
		if st != nil && st.has(k) {
			return &MarshalError{Path: k, GoType: c.typ, Reason: "inline map key duplicates a struct field's key"}
		}
		return nil
	}
	var err error
	switch c.mp.fast {
	case mapStringString:
		for k, v := range *(*map[string]string)(p) {
			if err = check(k); err != nil {
				return dst, err
			}
			dst = AppendStringElement(dst, k, v)
		}
		return dst, nil
	case mapStringAny:
		for k, v := range *(*map[string]any)(p) {
			if err = check(k); err != nil {
				return dst, err
			}
			if dst, err = appendElement(dst, k, v, depth); err != nil {
				return dst, err
			}
		}
		return dst, nil
	}
	mv := reflect.NewAt(c.typ, p).Elem()
	if mv.Len() == 0 {
		return dst, nil
	}
	kv := reflect.New(c.mp.keyType).Elem()
	ev := reflect.New(c.elem.typ).Elem()
	ep := ev.Addr().UnsafePointer()
	it := mv.MapRange()
	for it.Next() {
		kv.SetIterKey(it)
		ev.SetIterValue(it)
		k, err := c.mp.keyString(kv)
		if err != nil {
			return dst, err
		}
		if err = check(k); err != nil {
			return dst, err
		}
		if dst, err = c.elem.enc(dst, k, ep, depth); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// keyString converts a map key to a BSON key: string kinds as they are,
// then encoding.TextMarshaler, then integers in decimal.
func (mp *mapPlan) keyString(k reflect.Value) (string, error) {
	switch {
	case mp.keyKind == reflect.String:
		return k.String(), nil
	case mp.keyText:
		b, err := k.Interface().(interface{ MarshalText() ([]byte, error) }).MarshalText()
		if err != nil {
			return "", &MarshalError{GoType: mp.keyType, Reason: "map key MarshalText: " + err.Error(), Err: err}
		}
		return string(b), nil
	}
	switch mp.keyKind {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(k.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(k.Uint(), 10), nil
	}
	return "", &MarshalError{GoType: mp.keyType, Reason: "map key type has no MarshalText method"}
}

// Methods.

// methodMarshalError attributes an error from a user's marshal method to
// the element; errors of this package's types keep their own detail.
func methodMarshalError(err error, key string, t reflect.Type, method string) error {
	switch err.(type) {
	case *MarshalError:
		if key == "" {
			return err
		}
		return inField(err, key)
	}
	return &MarshalError{Path: key, GoType: t, Reason: method + ": " + err.Error(), Err: err}
}

// encMarshaler writes what MarshalBSON returns as an embedded document;
// errors get their key from appendEmbedded.
func encMarshaler(c *codec) encFunc {
	doc := docMarshaler(c)
	return func(dst []byte, key string, p unsafe.Pointer, depth int) ([]byte, error) {
		return appendEmbedded(dst, TypeEmbeddedDocument, key, doc, p, depth)
	}
}

func docMarshaler(c *codec) docFunc {
	return func(dst []byte, p unsafe.Pointer, _ int) ([]byte, error) {
		b, err := box(c.ptrWord, p).(Marshaler).MarshalBSON()
		if err != nil {
			return dst, methodMarshalError(err, "", c.typ, "MarshalBSON")
		}
		if err := Raw(b).Validate(); err != nil {
			return dst, &MarshalError{GoType: c.typ, Reason: "MarshalBSON returned an invalid document: " + err.Error()}
		}
		return append(dst, b...), nil
	}
}

func encValueMarshaler(c *codec) encFunc {
	return func(dst []byte, key string, p unsafe.Pointer, _ int) ([]byte, error) {
		t, b, err := box(c.ptrWord, p).(ValueMarshaler).MarshalBSONValue()
		if err != nil {
			return dst, methodMarshalError(err, key, c.typ, "MarshalBSONValue")
		}
		rv := RawValue{Type: t, Value: b}
		if err := rv.Validate(); err != nil {
			return dst, &MarshalError{Path: key, GoType: c.typ, Reason: "MarshalBSONValue returned an invalid " + t.String() + " value: " + err.Error()}
		}
		return AppendValueElement(dst, key, rv), nil
	}
}

func docValueMarshaler(c *codec) docFunc {
	return func(dst []byte, p unsafe.Pointer, _ int) ([]byte, error) {
		t, b, err := box(c.ptrWord, p).(ValueMarshaler).MarshalBSONValue()
		if err != nil {
			return dst, methodMarshalError(err, "", c.typ, "MarshalBSONValue")
		}
		if t != TypeEmbeddedDocument {
			return dst, &MarshalError{GoType: c.typ, Reason: "MarshalBSONValue returned a " + t.String() + ", not a document"}
		}
		if err := Raw(b).Validate(); err != nil {
			return dst, &MarshalError{GoType: c.typ, Reason: "MarshalBSONValue returned an invalid document: " + err.Error()}
		}
		return append(dst, b...), nil
	}
}
