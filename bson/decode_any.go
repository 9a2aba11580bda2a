package bson

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// Decoding into D, M, A and interface values.
//
// A decode makes two passes. The first validates the whole input and counts
// what it holds (elements per document, values per type). The second builds
// the result from exactly-sized slabs: one copy of the input backs every key,
// string and binary payload, one []E backs every D, one []any every A, and
// one slice per scalar type backs the interface values. So a document costs a
// handful of allocations however many fields it has, and a failed decode
// builds nothing.
//
// Interface values point into the slabs directly (see box). The slabs are
// never written after a value is boxed, so the values behave exactly like
// ordinary boxed values. Keys and strings share one allocation with the
// document they came from; keeping any of them keeps that copy alive.

// eface is the layout of an empty interface value.
type eface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

func typeOf(v any) unsafe.Pointer { return (*eface)(unsafe.Pointer(&v)).typ }

// box makes an interface of dynamic type typ whose value is stored at p.
// typ must be the type of *p, *p must never be modified afterwards, and the
// type must not be pointer-shaped (maps, pointers, channels, funcs): the
// interface holds those directly rather than through a pointer.
func box(typ, p unsafe.Pointer) (v any) {
	e := (*eface)(unsafe.Pointer(&v))
	e.typ, e.data = typ, p
	return v
}

var (
	typFloat64  = typeOf(float64(0))
	typString   = typeOf("")
	typD        = typeOf(D(nil))
	typA        = typeOf(A(nil))
	typBinary   = typeOf(Binary{})
	typObjectID = typeOf(ObjectID{})
	typDateTime = typeOf(DateTime(0))
	typInt32    = typeOf(int32(0))
	typInt64    = typeOf(int64(0))
)

// slab hands out values from a pre-sized slice. If a count was wrong it
// still works: append moves on to a new array, and values already handed out
// keep pointing into the old one.
type slab[T any] struct{ s []T }

func (s *slab[T]) init(n int32) {
	if n > 0 {
		s.s = make([]T, 0, n)
	}
}

func (s *slab[T]) put(typ unsafe.Pointer, v T) any {
	s.s = append(s.s, v)
	return box(typ, unsafe.Pointer(&s.s[len(s.s)-1]))
}

// builder is the second, trusting pass of a decode. Every length it reads
// has been checked by the validator.
type builder struct {
	buf     []byte // private copy of the input
	docLens []int32
	next    int // next entry of docLens
	asMap   bool

	elems []E
	anys  []any
	f64   slab[float64]
	strs  slab[string]
	docs  slab[D]
	arrs  slab[A]
	bins  slab[Binary]
	oids  slab[ObjectID]
	dts   slab[DateTime]
	i32   slab[int32]
	i64   slab[int64]
}

func (b *builder) init(src []byte, v *validator, asMap bool) {
	b.buf = make([]byte, len(src))
	copy(b.buf, src)
	b.docLens, b.asMap = v.docLens, asMap
	if !asMap {
		b.elems = make([]E, 0, v.elems)
		b.docs.init(v.counts[TypeEmbeddedDocument] + v.counts[TypeCodeWithScope])
	}
	b.anys = make([]any, 0, v.arrElems)
	b.f64.init(v.counts[TypeDouble])
	b.strs.init(v.counts[TypeString])
	b.arrs.init(v.counts[TypeArray])
	b.bins.init(v.counts[TypeBinary])
	b.oids.init(v.counts[TypeObjectID])
	b.dts.init(v.counts[TypeDateTime])
	b.i32.init(v.counts[TypeInt32])
	b.i64.init(v.counts[TypeInt64])
}

// str returns the n bytes at p as a string sharing b.buf's memory. Those
// bytes are never exposed as a []byte.
func (b *builder) str(p, n int) string {
	if n == 0 {
		return ""
	}
	return unsafe.String(&b.buf[p], n)
}

func (b *builder) cstring(p int) (string, int) {
	n := 0
	for b.buf[p+n] != 0 {
		n++
	}
	return b.str(p, n), n + 1
}

func (b *builder) nextLen() int {
	n := b.docLens[b.next]
	b.next++
	return int(n)
}

// doc decodes the validated document at p into a D whose backing array is a
// capacity-limited window of the shared element slab.
func (b *builder) doc(p int) D {
	n := b.nextLen()
	start := len(b.elems)
	b.elems = b.elems[:start+n]
	d := D(b.elems[start : start+n : start+n])
	p += 4
	for i := 0; i < n; i++ {
		t := Type(b.buf[p])
		key, kl := b.cstring(p + 1)
		p += 1 + kl
		v, size := b.value(t, p)
		d[i] = E{Key: key, Value: v}
		p += size
	}
	return d
}

func (b *builder) docMap(p int) M {
	n := b.nextLen()
	m := make(M, n)
	p += 4
	for i := 0; i < n; i++ {
		t := Type(b.buf[p])
		key, kl := b.cstring(p + 1)
		p += 1 + kl
		v, size := b.value(t, p)
		m[key] = v
		p += size
	}
	return m
}

func (b *builder) array(p int) A {
	n := b.nextLen()
	start := len(b.anys)
	b.anys = b.anys[:start+n]
	a := A(b.anys[start : start+n : start+n])
	p += 4
	for i := 0; i < n; i++ {
		t := Type(b.buf[p])
		_, kl := b.cstring(p + 1)
		p += 1 + kl
		v, size := b.value(t, p)
		a[i] = v
		p += size
	}
	return a
}

// document decodes a nested document as D or M, boxed.
func (b *builder) document(p int) any {
	if b.asMap {
		// A map is pointer-shaped: the interface holds it directly, so
		// boxing it allocates nothing and must not go through a slab.
		return b.docMap(p)
	}
	return b.docs.put(typD, b.doc(p))
}

// value decodes the value of type t at p and returns it with its size.
func (b *builder) value(t Type, p int) (any, int) {
	buf := b.buf
	switch t {
	case TypeDouble:
		return b.f64.put(typFloat64, math.Float64frombits(binary.LittleEndian.Uint64(buf[p:]))), 8
	case TypeString:
		n := int(readInt32(buf, p))
		return b.strs.put(typString, b.str(p+4, n-1)), 4 + n
	case TypeEmbeddedDocument:
		return b.document(p), int(readInt32(buf, p))
	case TypeArray:
		return b.arrs.put(typA, b.array(p)), int(readInt32(buf, p))
	case TypeBinary:
		n := int(readInt32(buf, p))
		st := buf[p+4]
		data := buf[p+5 : p+5+n : p+5+n]
		if st == SubtypeBinaryOld {
			data = data[4:]
		}
		return b.bins.put(typBinary, Binary{Subtype: st, Data: data}), 5 + n
	case TypeUndefined:
		return Undefined{}, 0
	case TypeObjectID:
		return b.oids.put(typObjectID, ObjectID(buf[p:p+12])), 12
	case TypeBoolean:
		return buf[p] == 1, 1
	case TypeDateTime:
		return b.dts.put(typDateTime, DateTime(binary.LittleEndian.Uint64(buf[p:]))), 8
	case TypeNull:
		return nil, 0
	case TypeRegex:
		pat, pl := b.cstring(p)
		opt, ol := b.cstring(p + pl)
		return Regex{Pattern: pat, Options: opt}, pl + ol
	case TypeDBPointer:
		n := int(readInt32(buf, p))
		return DBPointer{DB: b.str(p+4, n-1), Pointer: ObjectID(buf[p+4+n : p+4+n+12])}, 4 + n + 12
	case TypeJavaScript:
		n := int(readInt32(buf, p))
		return JavaScript(b.str(p+4, n-1)), 4 + n
	case TypeSymbol:
		n := int(readInt32(buf, p))
		return Symbol(b.str(p+4, n-1)), 4 + n
	case TypeCodeWithScope:
		total := int(readInt32(buf, p))
		n := int(readInt32(buf, p+4))
		code := JavaScript(b.str(p+8, n-1))
		return CodeWithScope{Code: code, Scope: b.document(p + 8 + n)}, total
	case TypeInt32:
		return b.i32.put(typInt32, readInt32(buf, p)), 4
	case TypeTimestamp:
		return Timestamp{I: binary.LittleEndian.Uint32(buf[p:]), T: binary.LittleEndian.Uint32(buf[p+4:])}, 8
	case TypeInt64:
		return b.i64.put(typInt64, int64(binary.LittleEndian.Uint64(buf[p:]))), 8
	case TypeDecimal128:
		return Decimal128{l: binary.LittleEndian.Uint64(buf[p:]), h: binary.LittleEndian.Uint64(buf[p+8:])}, 16
	case TypeMinKey:
		return MinKey{}, 0
	case TypeMaxKey:
		return MaxKey{}, 0
	}
	// Unreachable for validated input; the validator rejects unknown types.
	return nil, 0
}

// DecodeD decodes one BSON document into a D. Nested documents become D,
// arrays A. The whole input is validated first; on error nothing is built.
func DecodeD(src []byte) (D, error) {
	var lens [32]int32
	v := validator{record: true, docLens: lens[:0]}
	if err := v.validateTop(src); err != nil {
		return nil, err
	}
	var b builder
	b.init(src, &v, false)
	return b.doc(0), nil
}

// DecodeM decodes one BSON document into an M. Nested documents become M,
// arrays A.
func DecodeM(src []byte) (M, error) {
	var lens [32]int32
	v := validator{record: true, docLens: lens[:0]}
	if err := v.validateTop(src); err != nil {
		return nil, err
	}
	var b builder
	b.init(src, &v, true)
	return b.docMap(0), nil
}

// decodeValueAny validates and decodes one value of type t into its default
// Go representation (documents as D, or M when asMap is set).
func decodeValueAny(t Type, val []byte, asMap bool) (any, error) {
	var lens [8]int32
	v := validator{record: true, docLens: lens[:0]}
	n, err := v.validateValue(t, val, 0, len(val), 0, 1)
	if err != nil {
		return nil, err
	}
	if n != len(val) {
		return nil, decodeErr(n, "", t.String()+" value is shorter than the bytes given")
	}
	v.counts[t]++
	var b builder
	b.init(val, &v, asMap)
	out, _ := b.value(t, 0)
	return out, nil
}
