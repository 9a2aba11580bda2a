package bson

import (
	"encoding/binary"
	"maps"
	"math"
	"reflect"
	"strconv"
	"time"
	"unsafe"
)

// Decoders. Unmarshal validates the whole input first, so decoders read
// lengths without re-checking them; the slicing they do is still bounds
// checked by Go. Every decoder copies what it keeps (strings, binary data,
// raw bytes): callers may reuse their buffers.
//
// Decoding is copy-on-write, so that a failed Unmarshal changes nothing
// (see decodeTop): a decoder writes only into the value it is given, which
// is either new memory of this decode or the top-level target, and never
// into memory that value merely refers to. Slices get new backing arrays,
// non-nil maps are replaced by new maps holding their old entries, and
// non-nil pointers (in fields, in interfaces, or on the way to inlined
// fields) are replaced by pointers to new copies of their targets before
// anything is decoded into them.

func le32(b []byte) int32 { return int32(binary.LittleEndian.Uint32(b)) }
func le64(b []byte) int64 { return int64(binary.LittleEndian.Uint64(b)) }

// valueLen returns the size of the validated value of type t at b[p:].
func valueLen(t Type, b []byte, p int) int {
	switch t {
	case TypeDouble, TypeDateTime, TypeTimestamp, TypeInt64:
		return 8
	case TypeString, TypeJavaScript, TypeSymbol:
		return 4 + int(le32(b[p:]))
	case TypeEmbeddedDocument, TypeArray, TypeCodeWithScope:
		return int(le32(b[p:]))
	case TypeBinary:
		return 5 + int(le32(b[p:]))
	case TypeObjectID:
		return 12
	case TypeBoolean:
		return 1
	case TypeInt32:
		return 4
	case TypeDecimal128:
		return 16
	case TypeRegex:
		q := p
		for b[q] != 0 {
			q++
		}
		q++
		for b[q] != 0 {
			q++
		}
		return q + 1 - p
	case TypeDBPointer:
		return 4 + int(le32(b[p:])) + 12
	}
	return 0 // null, undefined, min key, max key
}

// elemIter walks the elements of a validated document or array.
type elemIter struct {
	b   []byte
	pos int
	end int
}

func newElemIter(doc []byte) elemIter { return elemIter{b: doc, pos: 4, end: len(doc) - 1} }

// next returns the next element's type, key and value bytes; ok is false at
// the end.
func (it *elemIter) next() (t Type, key, val []byte, ok bool) {
	if it.pos >= it.end {
		return 0, nil, nil, false
	}
	b := it.b
	t = Type(b[it.pos])
	ks := it.pos + 1
	ke := ks + keyLen(b, ks)
	p := ke + 1
	n := valueLen(t, b, p)
	it.pos = p + n
	return t, b[ks:ke], b[p : p+n], true
}

// countElems counts the elements of a validated document or array.
func countElems(doc []byte) int {
	n := 0
	for pos, end := 4, len(doc)-1; pos < end; n++ {
		t := Type(doc[pos])
		pos++
		for doc[pos] != 0 {
			pos++
		}
		pos++
		pos += valueLen(t, doc, pos)
	}
	return n
}

func typeError(t Type, gt reflect.Type, reason string) error {
	return &UnmarshalTypeError{BSONType: t, GoType: gt, Reason: reason}
}

// isNull reports the BSON types that decode to a Go zero value.
func isNull(t Type) bool { return t == TypeNull || t == TypeUndefined }

// setZero stores the zero value of t at p.
func setZero(t reflect.Type, p unsafe.Pointer) {
	reflect.NewAt(t, p).Elem().SetZero()
}

// takeOrZero begins a decoder that takes only the BSON type want, which
// sets ok. null and undefined zero the value at p; any other type is a
// type error giving reason.
func takeOrZero(c *codec, t, want Type, p unsafe.Pointer, reason string) (ok bool, err error) {
	switch t {
	case want:
		return true, nil
	case TypeNull, TypeUndefined:
		setZero(c.typ, p)
		return false, nil
	}
	return false, typeError(t, c.typ, reason)
}

func bsonString(v []byte) string { return string(v[4 : len(v)-1]) }

func decBool(gt reflect.Type) decFunc {
	return func(t Type, v []byte, p unsafe.Pointer) error {
		switch t {
		case TypeBoolean:
			*(*bool)(p) = v[0] == 1
		case TypeInt32:
			*(*bool)(p) = le32(v) != 0
		case TypeInt64:
			*(*bool)(p) = le64(v) != 0
		case TypeDouble:
			*(*bool)(p) = math.Float64frombits(uint64(le64(v))) != 0
		case TypeNull, TypeUndefined:
			*(*bool)(p) = false
		default:
			return typeError(t, gt, "")
		}
		return nil
	}
}

func decString(gt reflect.Type) decFunc {
	return func(t Type, v []byte, p unsafe.Pointer) error {
		switch t {
		case TypeString, TypeSymbol, TypeJavaScript:
			*(*string)(p) = bsonString(v)
		case TypeNull, TypeUndefined:
			*(*string)(p) = ""
		default:
			return typeError(t, gt, "")
		}
		return nil
	}
}

func overflow(t Type, gt reflect.Type, value string) error {
	return typeError(t, gt, "value "+value+" overflows "+gt.Kind().String())
}

// decIntKind decodes into an integer kind. int32, int64 and boolean values
// are accepted, as is a double that is integral (or any finite double when
// truncate is set, dropping the fraction) and within int64's range; values
// out of the kind's range are an error, never wrapped.
func decIntKind(gt reflect.Type, truncate bool) decFunc {
	k := gt.Kind()
	return func(t Type, v []byte, p unsafe.Pointer) error {
		var x int64
		switch t {
		case TypeInt32:
			x = int64(le32(v))
		case TypeInt64:
			x = le64(v)
		case TypeBoolean:
			x = int64(v[0])
		case TypeNull, TypeUndefined:
		case TypeDouble:
			src := math.Float64frombits(uint64(le64(v)))
			f := src
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return typeError(t, gt, "value "+fmtFloat(src)+" is not an integer")
			}
			if f != math.Trunc(f) {
				if !truncate {
					return typeError(t, gt, "value "+fmtFloat(src)+" is not an integer (the truncate tag option allows dropping the fraction)")
				}
				f = math.Trunc(f)
			}
			// Only values a BSON integer can hold are accepted, so that
			// whatever decodes can be encoded again.
			if f < -(1<<63) || f >= 1<<63 {
				return overflow(t, gt, fmtFloat(src))
			}
			x = int64(f)
			if isUnsigned(k) {
				if x < 0 {
					return overflow(t, gt, fmtFloat(src))
				}
				return storeUint(t, gt, uint64(x), src, p)
			}
			return storeInt(t, gt, x, src, p)
		default:
			return typeError(t, gt, "")
		}
		if isUnsigned(k) {
			if x < 0 {
				return overflow(t, gt, strconv.FormatInt(x, 10))
			}
			return storeUint(t, gt, uint64(x), math.NaN(), p)
		}
		return storeInt(t, gt, x, math.NaN(), p)
	}
}

func isUnsigned(k reflect.Kind) bool {
	switch k {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// shownValue formats x for an error, or src when the document's value was
// the double src rather than an integer (src is NaN otherwise).
func shownValue(x string, src float64) string {
	if math.IsNaN(src) {
		return x
	}
	return fmtFloat(src)
}

// storeInt stores x in the signed integer at p after a range check. src is
// the document's value when that was a double, for error messages.
func storeInt(t Type, gt reflect.Type, x int64, src float64, p unsafe.Pointer) error {
	if bits := gt.Size() * 8; bits < 64 && (x < -1<<(bits-1) || x >= 1<<(bits-1)) {
		return overflow(t, gt, shownValue(strconv.FormatInt(x, 10), src))
	}
	storeSized(p, gt.Size(), uint64(x))
	return nil
}

func storeUint(t Type, gt reflect.Type, x uint64, src float64, p unsafe.Pointer) error {
	if bits := gt.Size() * 8; bits < 64 && x >= 1<<bits {
		return overflow(t, gt, shownValue(strconv.FormatUint(x, 10), src))
	}
	storeSized(p, gt.Size(), x)
	return nil
}

// storeSized stores the low size bytes of x, an integer already checked
// to fit, at p: two's complement makes that right for signed kinds too.
func storeSized(p unsafe.Pointer, size uintptr, x uint64) {
	switch size {
	case 1:
		*(*uint8)(p) = uint8(x)
	case 2:
		*(*uint16)(p) = uint16(x)
	case 4:
		*(*uint32)(p) = uint32(x)
	default:
		*(*uint64)(p) = x
	}
}

// exactFloat converts an integer to float64, reporting whether the result
// is exact.
func exactFloat(x int64) (float64, bool) {
	f := float64(x)
	if f >= 1<<63 { // x rounded up past MaxInt64
		return f, false
	}
	return f, int64(f) == x
}

// decFloat64 accepts doubles, and int32 and int64 values that a float64
// represents exactly.
func decFloat64(gt reflect.Type) decFunc {
	return func(t Type, v []byte, p unsafe.Pointer) error {
		switch t {
		case TypeDouble:
			*(*float64)(p) = math.Float64frombits(uint64(le64(v)))
		case TypeInt32:
			*(*float64)(p) = float64(le32(v))
		case TypeInt64:
			x := le64(v)
			f, ok := exactFloat(x)
			if !ok {
				return typeError(t, gt, "value "+strconv.FormatInt(x, 10)+" cannot be represented exactly as float64")
			}
			*(*float64)(p) = f
		case TypeNull, TypeUndefined:
			*(*float64)(p) = 0
		default:
			return typeError(t, gt, "")
		}
		return nil
	}
}

// decFloat32 accepts doubles that a float32 holds exactly (any double,
// rounded, when truncate is set), and integers a float32 holds exactly.
func decFloat32(gt reflect.Type, truncate bool) decFunc {
	return func(t Type, v []byte, p unsafe.Pointer) error {
		var f float64
		switch t {
		case TypeDouble:
			f = math.Float64frombits(uint64(le64(v)))
			if !truncate && !math.IsNaN(f) && float64(float32(f)) != f {
				return typeError(t, gt, "value "+strconv.FormatFloat(f, 'g', -1, 64)+" loses precision as float32 (the truncate tag option allows it)")
			}
		case TypeInt32, TypeInt64:
			var x int64
			if t == TypeInt32 {
				x = int64(le32(v))
			} else {
				x = le64(v)
			}
			f = float64(x)
			if g, ok := exactFloat(x); !ok || float64(float32(g)) != g {
				return typeError(t, gt, "value "+strconv.FormatInt(x, 10)+" cannot be represented exactly as float32")
			}
		case TypeNull, TypeUndefined:
		default:
			return typeError(t, gt, "")
		}
		*(*float32)(p) = float32(f)
		return nil
	}
}

// binaryData returns a binary value's subtype and payload (without the
// legacy subtype 0x02 inner length).
func binaryData(v []byte) (byte, []byte) {
	st, data := v[4], v[5:]
	if st == SubtypeBinaryOld {
		data = data[4:]
	}
	return st, data
}

// decByteSlice decodes binary of any subtype into a []byte-shaped slice,
// always into a fresh copy.
func decByteSlice(gt reflect.Type) decFunc {
	return func(t Type, v []byte, p unsafe.Pointer) error {
		switch t {
		case TypeBinary:
			_, data := binaryData(v)
			b := make([]byte, len(data))
			copy(b, data)
			*(*[]byte)(p) = b
		case TypeNull, TypeUndefined:
			*(*[]byte)(p) = nil
		default:
			return typeError(t, gt, "")
		}
		return nil
	}
}

// decByteArray decodes binary of exactly N bytes into a [N]byte.
func decByteArray(c *codec) decFunc {
	n := c.typ.Len()
	return func(t Type, v []byte, p unsafe.Pointer) error {
		dst := unsafe.Slice((*byte)(p), n)
		switch t {
		case TypeBinary:
			_, data := binaryData(v)
			if len(data) != n {
				return typeError(t, c.typ, "binary length "+strconv.Itoa(len(data))+" does not match array length "+strconv.Itoa(n))
			}
			copy(dst, data)
		case TypeNull, TypeUndefined:
			clear(dst)
		default:
			return typeError(t, c.typ, "")
		}
		return nil
	}
}

func decUnsupported(gt reflect.Type, reason string) decFunc {
	return func(t Type, _ []byte, _ unsafe.Pointer) error {
		return typeError(t, gt, reason)
	}
}

// Pointers and interfaces.

func decIndirect(c *codec) decFunc {
	return func(t Type, v []byte, p unsafe.Pointer) error {
		return decodeIndirect(c, t, v, p)
	}
}

// decodeIndirect decodes through pointers and interfaces. It loops rather
// than recursing, and gives up after MaxDepth hops, so that pointer cycles
// (type P *P, or an interface holding a pointer to itself) end in an error.
//
// Pointers: null sets nil; otherwise the pointer is set to a new target,
// holding a copy of the old target's value when it was non-nil, and the
// value is decoded into that. Interfaces: null sets nil; an interface
// holding a non-nil pointer gets a new pointer the same way; an empty
// interface otherwise gets the default representation (documents as D,
// arrays as A); a non-empty interface holding a value gets a new value of
// that value's type. The pointer or interface at p is in memory of this
// decode (see decodeTop), so it may be set before the target is decoded.
func decodeIndirect(c *codec, t Type, v []byte, p unsafe.Pointer) error {
	for hops := 0; ; hops++ {
		if hops > MaxDepth {
			return typeError(t, c.typ, "more than "+strconv.Itoa(MaxDepth)+" pointer or interface indirections")
		}
		switch c.typ.Kind() {
		case reflect.Pointer:
			pp := (*unsafe.Pointer)(p)
			if isNull(t) {
				*pp = nil
				return nil
			}
			e := c.elem
			q := newCopy(e.typ, *pp)
			*pp = q
			if !e.indirect {
				return decodeValue(e, t, v, q)
			}
			c, p = e, q
		case reflect.Interface:
			if t == TypeNull {
				setZero(c.typ, p)
				return nil
			}
			var cur any
			if c.typ.NumMethod() == 0 {
				cur = *(*any)(p)
			} else {
				rv := reflect.NewAt(c.typ, p).Elem()
				if rv.IsNil() {
					return typeError(t, c.typ, "cannot decode into a nil interface that has methods")
				}
				cur = rv.Interface()
			}
			if cur != nil {
				ct := reflect.TypeOf(cur)
				cc := codecFor(ct)
				if ct.Kind() == reflect.Pointer {
					if q := (*eface)(unsafe.Pointer(&cur)).data; q != nil {
						q = newCopy(cc.elem.typ, q)
						// Every interface is a type (or itab) word and a
						// data word, which for a pointer is the pointer:
						// replacing it keeps the dynamic type, named or not.
						(*eface)(p).data = q
						if !cc.elem.indirect {
							return decodeValue(cc.elem, t, v, q)
						}
						c, p = cc.elem, q
						continue
					}
				}
				if c.typ.NumMethod() != 0 {
					nv := reflect.New(ct)
					if err := decodeValue(cc, t, v, nv.UnsafePointer()); err != nil {
						return err
					}
					reflect.NewAt(c.typ, p).Elem().Set(nv.Elem())
					return nil
				}
			}
			x, err := decodeValueAny(t, v, false)
			if err != nil {
				return err
			}
			*(*any)(p) = x
			return nil
		default:
			return decodeValue(c, t, v, p)
		}
	}
}

// decodeValue decodes into the value at p through c, taking the inline fast
// path for the common kinds.
func decodeValue(c *codec, t Type, v []byte, p unsafe.Pointer) error {
	switch c.dkind {
	case kString:
		if t == TypeString {
			*(*string)(p) = bsonString(v)
			return nil
		}
	case kInt32:
		if t == TypeInt32 {
			*(*int32)(p) = le32(v)
			return nil
		}
	case kInt64:
		if t == TypeInt64 {
			*(*int64)(p) = le64(v)
			return nil
		}
	case kInt:
		if t == TypeInt32 {
			*(*int)(p) = int(le32(v))
			return nil
		}
	case kFloat64:
		if t == TypeDouble {
			*(*float64)(p) = math.Float64frombits(uint64(le64(v)))
			return nil
		}
	case kBool:
		if t == TypeBoolean {
			*(*bool)(p) = v[0] == 1
			return nil
		}
	case kTime:
		if t == TypeDateTime {
			*(*time.Time)(p) = time.UnixMilli(le64(v)).UTC()
			return nil
		}
	case kObjectID:
		if t == TypeObjectID {
			*(*ObjectID)(p) = ObjectID(v)
			return nil
		}
	case kStruct:
		if t == TypeEmbeddedDocument {
			return c.st.decodeDoc(c, v, p)
		}
	case kStringSlice:
		if t == TypeArray {
			return decodeStringSlice(c, v, p)
		}
	}
	return c.dec(t, v, p)
}

// Structs.

func decStruct(c *codec) decFunc {
	return func(t Type, v []byte, p unsafe.Pointer) error {
		if ok, err := takeOrZero(c, t, TypeEmbeddedDocument, p, ""); !ok {
			return err
		}
		return c.st.decodeDoc(c, v, p)
	}
}

// decodeDoc decodes the validated document v into the struct at base.
// Fields absent from the document keep their values; unknown keys go to
// the inline map if there is one and are skipped otherwise.
func (st *structPlan) decodeDoc(c *codec, v []byte, base unsafe.Pointer) error {
	if st.err != "" {
		return typeError(TypeEmbeddedDocument, c.typ, st.err)
	}
	fields := st.fields
	next := 0
	// owned marks the inlined *struct pointers already replaced by copies,
	// and inlineOwned the inline map, in this decode of the struct.
	var owned uint64
	inlineOwned := false
	for pos, end := 4, len(v)-1; pos < end; {
		t := Type(v[pos])
		ks := pos + 1
		// Documents usually hold fields in declaration order: try the
		// expected field's name in place before searching for the key.
		i := -1
		if next < len(fields) {
			name := fields[next].name
			if ke := ks + len(name); ke < end && v[ke] == 0 && string(v[ks:ke]) == name {
				i, pos = next, ke+1
			}
		}
		var key []byte
		if i < 0 {
			ke := ks + keyLen(v, ks)
			key, pos = v[ks:ke], ke+1
			i = st.find(key, next)
		}
		n := valueLen(t, v, pos)
		val := v[pos : pos+n]
		pos += n
		if i < 0 {
			if in := st.inline; in != nil {
				mp := in.fieldPtrOwned(base, &owned)
				if !inlineOwned {
					in.c.ownMap(mp)
					inlineOwned = true
				}
				if err := in.c.decodeMapEntry(mp, t, key, val); err != nil {
					return err
				}
			}
			continue
		}
		next = i + 1
		f := &fields[i]
		fp := unsafe.Add(base, f.offset)
		if f.via != nil {
			fp = f.fieldPtrOwned(base, &owned)
		}
		// The common cases are written here, saving a call; anything
		// else, including conversions and errors, goes to decodeValue.
		switch f.dkind {
		case kString:
			if t == TypeString {
				*(*string)(fp) = bsonString(val)
				continue
			}
		case kInt64:
			if t == TypeInt64 {
				*(*int64)(fp) = le64(val)
				continue
			}
		case kInt32:
			if t == TypeInt32 {
				*(*int32)(fp) = le32(val)
				continue
			}
		case kFloat64:
			if t == TypeDouble {
				*(*float64)(fp) = math.Float64frombits(uint64(le64(val)))
				continue
			}
		}
		if err := decodeValue(f.c, t, val, fp); err != nil {
			return inField(err, f.name)
		}
	}
	return nil
}

// Slices and arrays.

// decodeStringSlice decodes an array into a []string-shaped slice.
func decodeStringSlice(c *codec, v []byte, p unsafe.Pointer) error {
	n := countElems(v)
	s := make([]string, n)
	it := newElemIter(v)
	for i := 0; i < n; i++ {
		t, _, val, _ := it.next()
		if t == TypeString {
			s[i] = bsonString(val)
			continue
		}
		if err := decodeValue(c.elem, t, val, unsafe.Pointer(&s[i])); err != nil {
			return inIndex(err, i)
		}
	}
	*(*[]string)(p) = s
	return nil
}

// decSlice decodes an array into a slice, always into a new backing array
// of the right length: the old one may be shared, and a failed decode must
// leave it as it was. null gives a nil slice; an empty array a non-nil
// empty one.
func decSlice(c *codec) decFunc {
	return func(t Type, v []byte, p unsafe.Pointer) error {
		if ok, err := takeOrZero(c, t, TypeArray, p, ""); !ok {
			return err
		}
		if c.dkind == kStringSlice {
			return decodeStringSlice(c, v, p)
		}
		n := countElems(v)
		h := (*sliceHeader)(p)
		switch {
		case n == 0:
			reflect.NewAt(c.typ, p).Elem().Set(reflect.MakeSlice(c.typ, 0, 0))
		default:
			// Grow on a nil slice allocates just the new backing array
			// and writes the header in place.
			*h = sliceHeader{}
			reflect.NewAt(c.typ, p).Elem().Grow(n)
			h.Len = n
		}
		return decodeElems(c.elem, v, h.Data, n)
	}
}

// decodeElems decodes the first n elements of the array v into consecutive
// values of e starting at data.
func decodeElems(e *codec, v []byte, data unsafe.Pointer, n int) error {
	it := newElemIter(v)
	for i := 0; i < n; i++ {
		t, _, val, _ := it.next()
		if err := decodeValue(e, t, val, unsafe.Add(data, uintptr(i)*e.size)); err != nil {
			return inIndex(err, i)
		}
	}
	return nil
}

// decArray decodes an array into a Go array. More elements than the array
// holds is an error; missing ones are zeroed.
func decArray(c *codec) decFunc {
	n := c.typ.Len()
	return func(t Type, v []byte, p unsafe.Pointer) error {
		if ok, err := takeOrZero(c, t, TypeArray, p, ""); !ok {
			return err
		}
		m := countElems(v)
		if m > n {
			return typeError(t, c.typ, "array of "+strconv.Itoa(m)+" elements does not fit")
		}
		setZero(c.typ, p)
		return decodeElems(c.elem, v, p, m)
	}
}

// Maps.

// decMap decodes a document into a map. A nil map is allocated; a non-nil
// one is replaced by a new map holding its entries and the decoded ones
// (which win), as encoding/json would merge them, but without writing to a
// map that others may hold.
func decMap(c *codec) decFunc {
	return func(t Type, v []byte, p unsafe.Pointer) error {
		if ok, err := takeOrZero(c, t, TypeEmbeddedDocument, p, ""); !ok {
			return err
		}
		if len(v) == 5 && *(*unsafe.Pointer)(p) != nil {
			return nil // nothing to add to the map
		}
		switch c.mp.fast {
		case mapStringString:
			m := *(*map[string]string)(p)
			if m == nil {
				m = make(map[string]string, countElems(v))
			} else {
				m = maps.Clone(m)
			}
			*(*map[string]string)(p) = m
			it := newElemIter(v)
			for {
				t, key, val, ok := it.next()
				if !ok {
					return nil
				}
				if t == TypeString {
					m[string(key)] = bsonString(val)
					continue
				}
				var s string
				if err := c.elem.dec(t, val, unsafe.Pointer(&s)); err != nil {
					return inField(err, string(key))
				}
				m[string(key)] = s
			}
		case mapStringAny:
			x, err := decodeValueAny(TypeEmbeddedDocument, v, true)
			if err != nil {
				return err
			}
			dm, _ := x.(M)
			// dm is new: the old entries the document does not replace
			// go into it.
			for k, e := range *(*map[string]any)(p) {
				if _, ok := dm[k]; !ok {
					dm[k] = e
				}
			}
			*(*map[string]any)(p) = dm
			return nil
		}
		mv := reflect.NewAt(c.typ, p).Elem()
		if mv.IsNil() {
			mv.Set(reflect.MakeMapWithSize(c.typ, countElems(v)))
		} else {
			mv.Set(cloneMap(mv, countElems(v)))
		}
		kv := reflect.New(c.mp.keyType).Elem()
		ev := reflect.New(c.elem.typ).Elem()
		ep := ev.Addr().UnsafePointer()
		it := newElemIter(v)
		for {
			t, key, val, ok := it.next()
			if !ok {
				return nil
			}
			if err := c.mp.setKey(kv, key, t); err != nil {
				return inField(err, string(key))
			}
			ev.SetZero()
			if err := decodeValue(c.elem, t, val, ep); err != nil {
				return inField(err, string(key))
			}
			mv.SetMapIndex(kv, ev)
		}
	}
}

// ownMap makes the map at p safe to add to: a non-nil map is replaced by a
// copy, for a struct's inline map, before decodeMapEntry adds to it.
func (c *codec) ownMap(p unsafe.Pointer) {
	if *(*unsafe.Pointer)(p) == nil {
		return
	}
	switch c.mp.fast {
	case mapStringString:
		*(*map[string]string)(p) = maps.Clone(*(*map[string]string)(p))
	case mapStringAny:
		*(*map[string]any)(p) = maps.Clone(*(*map[string]any)(p))
	default:
		mv := reflect.NewAt(c.typ, p).Elem()
		mv.Set(cloneMap(mv, 0))
	}
}

// cloneMap returns a new map holding m's entries, with room for extra more.
func cloneMap(m reflect.Value, extra int) reflect.Value {
	n := reflect.MakeMapWithSize(m.Type(), m.Len()+extra)
	addEntries(n, m)
	return n
}

// decodeMapEntry adds one element to the map at p (allocating the map if
// nil), for a struct's inline map, which ownMap has made this decode's own.
func (c *codec) decodeMapEntry(p unsafe.Pointer, t Type, key, val []byte) error {
	switch c.mp.fast {
	case mapStringString:
		m := *(*map[string]string)(p)
		if m == nil {
			m = map[string]string{}
			*(*map[string]string)(p) = m
		}
		var s string
		if err := decodeValue(c.elem, t, val, unsafe.Pointer(&s)); err != nil {
			return inField(err, string(key))
		}
		m[string(key)] = s
		return nil
	case mapStringAny:
		m := *(*map[string]any)(p)
		if m == nil {
			m = map[string]any{}
			*(*map[string]any)(p) = m
		}
		x, err := decodeValueAny(t, val, true)
		if err != nil {
			return inField(err, string(key))
		}
		m[string(key)] = x
		return nil
	}
	mv := reflect.NewAt(c.typ, p).Elem()
	if mv.IsNil() {
		mv.Set(reflect.MakeMap(c.typ))
	}
	kv := reflect.New(c.mp.keyType).Elem()
	if err := c.mp.setKey(kv, key, t); err != nil {
		return inField(err, string(key))
	}
	ev := reflect.New(c.elem.typ).Elem()
	if err := decodeValue(c.elem, t, val, ev.Addr().UnsafePointer()); err != nil {
		return inField(err, string(key))
	}
	mv.SetMapIndex(kv, ev)
	return nil
}

// setKey parses a BSON key into the map key k: string kinds as they are,
// then encoding.TextUnmarshaler, then decimal integers.
func (mp *mapPlan) setKey(k reflect.Value, key []byte, t Type) error {
	switch {
	case mp.keyKind == reflect.String:
		k.SetString(string(key))
		return nil
	case mp.keyUnText:
		err := k.Addr().Interface().(interface{ UnmarshalText([]byte) error }).UnmarshalText(key)
		if err != nil {
			return &UnmarshalTypeError{BSONType: t, GoType: mp.keyType, Reason: "map key UnmarshalText: " + err.Error(), Err: err}
		}
		return nil
	}
	switch mp.keyKind {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x, err := strconv.ParseInt(string(key), 10, int(mp.keyType.Size())*8)
		if err != nil {
			return typeError(t, mp.keyType, "map key "+strconv.Quote(string(key))+" is not a "+mp.keyType.Kind().String())
		}
		k.SetInt(x)
		return nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		x, err := strconv.ParseUint(string(key), 10, int(mp.keyType.Size())*8)
		if err != nil {
			return typeError(t, mp.keyType, "map key "+strconv.Quote(string(key))+" is not a "+mp.keyType.Kind().String())
		}
		k.SetUint(x)
		return nil
	}
	return typeError(t, mp.keyType, "map key type has no UnmarshalText method")
}

// Methods.

// methodUnmarshalError attributes an error from a user's unmarshal method
// to the value; errors of this package's types keep their own detail.
func methodUnmarshalError(err error, t Type, gt reflect.Type, method string) error {
	switch err.(type) {
	case *UnmarshalTypeError, *DecodeError:
		return err
	}
	return &UnmarshalTypeError{BSONType: t, GoType: gt, Reason: method + ": " + err.Error(), Err: err}
}

// decUnmarshaler passes a copy of an embedded document to UnmarshalBSON.
// null leaves the zero value.
func decUnmarshaler(c *codec) decFunc {
	return func(t Type, v []byte, p unsafe.Pointer) error {
		if ok, err := takeOrZero(c, t, TypeEmbeddedDocument, p, "UnmarshalBSON takes an embedded document"); !ok {
			return err
		}
		b := append([]byte(nil), v...)
		if err := box(c.ptrWord, p).(Unmarshaler).UnmarshalBSON(b); err != nil {
			return methodUnmarshalError(err, t, c.typ, "UnmarshalBSON")
		}
		return nil
	}
}

// decValueUnmarshaler passes the type and a copy of any value, null
// included, to UnmarshalBSONValue.
func decValueUnmarshaler(c *codec) decFunc {
	return func(t Type, v []byte, p unsafe.Pointer) error {
		b := append([]byte(nil), v...)
		if err := box(c.ptrWord, p).(ValueUnmarshaler).UnmarshalBSONValue(t, b); err != nil {
			return methodUnmarshalError(err, t, c.typ, "UnmarshalBSONValue")
		}
		return nil
	}
}
