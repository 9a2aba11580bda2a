package bson

import (
	"encoding"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// The struct codec works from a plan built once per Go type and cached: for
// a struct, the key, memory offset, flags and codec of every field; for any
// other type, a pair of encode/decode functions bound to that type. After the
// first use of a type, Marshal and Unmarshal do no reflect.Type walking, no
// tag parsing and no per-field reflection: fields are read and written
// through unsafe.Pointer offsets computed from reflect.StructField.Offset, so
// every pointer the codec forms points inside a value of the type the plan
// was built for.

// encFunc writes one element (type byte, key and value) for the Go value at
// p. depth is the nesting depth of the document that holds the element.
// Errors carry the dotted path from that document, starting with key.
type encFunc func(dst []byte, key string, p unsafe.Pointer, depth int) ([]byte, error)

// docFunc writes the Go value at p as a whole document at depth. Errors
// carry paths relative to that document.
type docFunc func(dst []byte, p unsafe.Pointer, depth int) ([]byte, error)

// decFunc stores the validated BSON value of type t, whose encoded bytes are
// exactly v, in the Go value at p. Errors carry paths relative to the value.
type decFunc func(t Type, v []byte, p unsafe.Pointer) error

// kind selects the inlined fast paths of the struct loops; kOther means
// "call the codec's function".
type kind uint8

const (
	kOther kind = iota
	kBool
	kInt
	kInt32
	kInt64
	kFloat64
	kString
	kTime
	kObjectID
	kStringSlice
	kStruct
)

// codec is the cached plan for one Go type.
type codec struct {
	typ   reflect.Type
	ekind kind // fast path when encoding; kOther: use enc
	dkind kind // fast path when decoding; kOther: use dec
	enc   encFunc
	doc   docFunc // non-nil for types that encode as a whole document
	dec   decFunc
	empty func(p unsafe.Pointer) bool // omitempty test
	zero  func(p unsafe.Pointer) bool // omitzero test

	elem *codec      // pointer target, slice/array/map element
	st   *structPlan // struct field plan
	mp   *mapPlan    // map key handling

	// ptrWord is the runtime type word of *typ, so that a pointer into
	// memory holding a typ can be boxed as a *typ interface without
	// reflection (to call methods, which *typ's method set always has).
	ptrWord unsafe.Pointer
	// word is the runtime type word of typ.
	word unsafe.Pointer
	// direct reports that an interface holding a typ stores the value
	// itself in its data word (pointer-shaped types) rather than a pointer
	// to it.
	direct bool
	// addrMethods reports that encoding a typ may call a method with a
	// pointer receiver on it or on a value it contains by value, so the
	// encoder must not be pointed at an interface's read-only copy.
	addrMethods bool
	// ptrRecv reports that this type's own marshal or IsZero method has a
	// pointer receiver.
	ptrRecv bool
	// indirect reports a pointer or interface kind: decoding follows the
	// indirection in a bounded loop (see decodeIndirect).
	indirect bool
	// size is typ.Size(), cached for slice and array element strides.
	size uintptr
	// num is the kind of a plain integer or float32 type using the default
	// codec, which the minsize and truncate tag options apply to;
	// reflect.Invalid otherwise.
	num reflect.Kind
	// decMethod reports that typ decodes itself through UnmarshalBSON or
	// UnmarshalBSONValue.
	decMethod bool
	// backups holds zeroed values of typ (as unsafe.Pointer) in which
	// Unmarshal saves a non-zero target while decoding into it, so that
	// decoding again and again into one value allocates no backup.
	backups *sync.Pool
}

// structPlan is the field plan of a struct type.
type structPlan struct {
	fields []fieldPlan
	// byName finds a field by key when the struct has many fields. Lookups
	// index it with string(keyBytes), which does not allocate.
	byName map[string]int32
	// inline is the inline catch-all map, if any.
	inline *fieldPlan
	// err is set when the struct's tags are invalid; every use of the type
	// then fails with this reason.
	err string
	// building guards against a struct inlining itself.
	building bool
}

// fieldPlan is one encoded field of a struct, possibly promoted from an
// inlined struct.
type fieldPlan struct {
	name   string
	keyz   string // name followed by the NUL that ends a BSON key
	offset uintptr
	// via lists the pointer hops of a field reached through inlined
	// *struct fields; nil for the usual direct field.
	via   []viaStep
	c     *codec
	ekind kind
	dkind kind
	omit  uint8 // omitNone, omitEmpty or omitZero
	// encVariant and decVariant mark a field-specific codec (minsize,
	// truncate) that must use the generic path.
	encVariant, decVariant bool

	index []int // for dominance between promoted fields
}

const (
	omitNone uint8 = iota
	omitEmpty
	omitZero
)

// viaStep is one pointer hop: the pointer to follow sits at offset in the
// current struct and points to an elem.
type viaStep struct {
	offset uintptr
	elem   reflect.Type
	// id numbers the distinct pointers of a struct plan (fields promoted
	// through the same inlined *struct share their hops' ids), so that a
	// decode copies each pointee once (see fieldPtrOwned).
	id int
}

// mapPlan describes how a map type's keys become BSON keys.
type mapPlan struct {
	keyKind   reflect.Kind
	keyText   bool // keys implement encoding.TextMarshaler
	keyUnText bool // *key implements encoding.TextUnmarshaler
	keyType   reflect.Type
	fast      int // mapStringString, mapStringAny or mapGeneric
}

const (
	mapGeneric = iota
	mapStringString
	mapStringAny
)

var (
	codecs  sync.Map // reflect.Type -> *codec
	buildMu sync.Mutex
)

var (
	rtMarshaler        = reflect.TypeFor[Marshaler]()
	rtValueMarshaler   = reflect.TypeFor[ValueMarshaler]()
	rtUnmarshaler      = reflect.TypeFor[Unmarshaler]()
	rtValueUnmarshaler = reflect.TypeFor[ValueUnmarshaler]()
	rtZeroer           = reflect.TypeFor[Zeroer]()
	rtTextMarshaler    = reflect.TypeFor[encoding.TextMarshaler]()
	rtTextUnmarshaler  = reflect.TypeFor[encoding.TextUnmarshaler]()
	rtTime             = reflect.TypeFor[time.Time]()
	rtString           = reflect.TypeFor[string]()
	rtAny              = reflect.TypeFor[any]()
)

// codecFor returns the plan for t, building it on first use. Safe for
// concurrent use: plans are published only once complete.
func codecFor(t reflect.Type) *codec {
	if c, ok := codecs.Load(t); ok {
		return c.(*codec)
	}
	buildMu.Lock()
	defer buildMu.Unlock()
	if c, ok := codecs.Load(t); ok {
		return c.(*codec)
	}
	p := planner{pending: map[reflect.Type]*codec{}}
	c := p.codec(t)
	for _, pc := range p.pending {
		if pc.st != nil {
			pc.st.settleKinds()
		}
	}
	for _, pc := range p.pending {
		p.finish(pc, map[*codec]bool{})
	}
	for pt, pc := range p.pending {
		codecs.Store(pt, pc)
	}
	return c
}

// planner builds the codecs for one type and everything it reaches. Types
// can be recursive (through pointers, slices and maps), so a codec is
// registered as pending before its parts are built, and parts refer to
// codecs only through pointers that are read when encoding, never while
// planning.
type planner struct {
	pending map[reflect.Type]*codec
}

func (pl *planner) codec(t reflect.Type) *codec {
	if c, ok := codecs.Load(t); ok {
		return c.(*codec)
	}
	if c := pl.pending[t]; c != nil {
		return c
	}
	c := &codec{typ: t, size: t.Size()}
	c.backups = &sync.Pool{New: func() any { return reflect.New(t).UnsafePointer() }}
	pl.pending[t] = c
	pl.fill(c)
	return c
}

// settleKinds copies each field's fast-path kinds from its codec. It runs
// once the build is complete: while planning, a field's codec may still be
// unfinished (a recursive type) and its kinds not yet final.
func (st *structPlan) settleKinds() {
	for i := range st.fields {
		f := &st.fields[i]
		if !f.encVariant {
			f.ekind = f.c.ekind
		}
		if !f.decVariant {
			f.dkind = f.c.dkind
		}
	}
}

// finish computes addrMethods once every codec of the build is filled.
// Containment by value is acyclic, so the recursion ends. Codecs published
// by earlier builds are complete and only read.
func (pl *planner) finish(c *codec, seen map[*codec]bool) bool {
	if seen[c] || pl.pending[c.typ] != c {
		return c.addrMethods
	}
	seen[c] = true
	if c.ptrRecv {
		c.addrMethods = true
		return true
	}
	switch c.typ.Kind() {
	case reflect.Struct:
		if c.st != nil {
			for i := range c.st.fields {
				f := &c.st.fields[i]
				if f.via == nil && pl.finish(f.c, seen) {
					c.addrMethods = true
				}
			}
			if in := c.st.inline; in != nil && in.via == nil && pl.finish(in.c, seen) {
				c.addrMethods = true
			}
		}
	case reflect.Array:
		if c.elem != nil && pl.finish(c.elem, seen) {
			c.addrMethods = true
		}
	}
	return c.addrMethods
}

// typeWord returns the runtime type word of t.
func typeWord(t reflect.Type) unsafe.Pointer {
	return typeOf(reflect.Zero(t).Interface())
}

// isDirect reports whether interfaces store a t in their data word. The
// zero value of such a type boxes with a nil data word; any other type
// boxes a pointer to (zeroed) memory.
func isDirect(t reflect.Type) bool {
	z := reflect.Zero(t).Interface()
	return (*eface)(unsafe.Pointer(&z)).data == nil
}

func (pl *planner) fill(c *codec) {
	t := c.typ
	c.word = typeWord(t)
	c.ptrWord = typeWord(reflect.PointerTo(t))
	c.direct = isDirect(t)

	k := t.Kind()
	if k == reflect.Pointer || k == reflect.Interface {
		// Methods of a pointer type are reached through its target, after
		// the nil check; interfaces dispatch on their dynamic value.
		pl.fillKind(c)
		return
	}
	if !pl.fillSpecial(c) {
		pl.fillKind(c)
	}
	pl.fillMethods(c)
}

// fillMethods lets Marshaler, ValueMarshaler, Unmarshaler, ValueUnmarshaler
// and Zeroer implementations override the default behaviour. Methods with
// value or pointer receivers count alike: the codec always has the value's
// address.
func (pl *planner) fillMethods(c *codec) {
	t := c.typ
	pt := reflect.PointerTo(t)
	switch {
	case pt.Implements(rtValueMarshaler):
		c.num = reflect.Invalid
		c.ekind, c.enc, c.doc = kOther, encValueMarshaler(c), docValueMarshaler(c)
		c.ptrRecv = !t.Implements(rtValueMarshaler)
	case pt.Implements(rtMarshaler):
		c.num = reflect.Invalid
		c.ekind, c.enc, c.doc = kOther, encMarshaler(c), docMarshaler(c)
		c.ptrRecv = !t.Implements(rtMarshaler)
	}
	switch {
	case pt.Implements(rtValueUnmarshaler):
		c.num = reflect.Invalid
		c.dkind, c.dec, c.decMethod = kOther, decValueUnmarshaler(c), true
	case pt.Implements(rtUnmarshaler):
		c.num = reflect.Invalid
		c.dkind, c.dec, c.decMethod = kOther, decUnmarshaler(c), true
	}
	if pt.Implements(rtZeroer) {
		c.empty = func(p unsafe.Pointer) bool { return box(c.ptrWord, p).(Zeroer).IsZero() }
		c.zero = c.empty
		c.ptrRecv = c.ptrRecv || !t.Implements(rtZeroer)
	}
}

// fillKind sets the default codec for t's kind.
func (pl *planner) fillKind(c *codec) {
	t := c.typ
	c.empty = emptyByKind(t)
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		c.num = t.Kind()
	}
	c.zero = func(p unsafe.Pointer) bool { return reflect.NewAt(t, p).Elem().IsZero() }
	switch t.Kind() {
	case reflect.Bool:
		c.ekind, c.dkind = kBool, kBool
		c.enc, c.dec = encBool, decBool(t)
	case reflect.Int:
		c.ekind, c.dkind = kInt, kInt
		c.enc, c.dec = encIntKind(t, false), decIntKind(t, false)
	case reflect.Int32:
		c.ekind, c.dkind = kInt32, kInt32
		c.enc, c.dec = encIntKind(t, false), decIntKind(t, false)
	case reflect.Int64:
		c.ekind, c.dkind = kInt64, kInt64
		c.enc, c.dec = encIntKind(t, false), decIntKind(t, false)
	case reflect.Int8, reflect.Int16, reflect.Uint, reflect.Uint8, reflect.Uint16,
		reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		c.enc, c.dec = encIntKind(t, false), decIntKind(t, false)
	case reflect.Float32:
		c.num = reflect.Float32
		c.enc, c.dec = encFloat32, decFloat32(t, false)
	case reflect.Float64:
		c.ekind, c.dkind = kFloat64, kFloat64
		c.enc, c.dec = encFloat64, decFloat64(t)
	case reflect.String:
		c.ekind, c.dkind = kString, kString
		c.enc, c.dec = encString, decString(t)
	case reflect.Pointer:
		c.indirect = true
		c.elem = pl.codec(t.Elem())
		c.enc, c.dec = encPointer(c), decIndirect(c)
		c.zero = func(p unsafe.Pointer) bool { return *(*unsafe.Pointer)(p) == nil }
		c.empty = emptyPointer(c)
	case reflect.Interface:
		c.indirect = true
		c.enc, c.dec = encInterface(c), decIndirect(c)
		c.zero = c.empty
	case reflect.Struct:
		c.ekind, c.dkind = kStruct, kStruct
		c.st = &structPlan{}
		pl.fillStruct(c)
		c.enc, c.doc, c.dec = encStruct(c), docStruct(c), decStruct(c)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !hasCodecMethods(t.Elem()) {
			c.enc, c.dec = encByteSlice, decByteSlice(t)
			return
		}
		c.elem = pl.codec(t.Elem())
		if t.Elem() == rtString {
			c.ekind, c.dkind = kStringSlice, kStringSlice
		}
		c.enc, c.dec = encSlice(c), decSlice(c)
	case reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && !hasCodecMethods(t.Elem()) {
			c.enc, c.dec = encByteArray(c), decByteArray(c)
			return
		}
		c.elem = pl.codec(t.Elem())
		c.enc, c.dec = encArray(c), decArray(c)
	case reflect.Map:
		mp, reason := planMap(t)
		if reason != "" {
			c.enc, c.doc, c.dec = encUnsupported(t, reason), docUnsupported(t, reason), decUnsupported(t, reason)
			return
		}
		c.mp = mp
		c.elem = pl.codec(t.Elem())
		c.enc, c.doc, c.dec = encMap(c), docMap(c), decMap(c)
	default: // Complex64, Complex128, Chan, Func, UnsafePointer
		reason := "BSON has no representation for Go kind " + t.Kind().String()
		c.enc, c.dec = encUnsupported(t, reason), decUnsupported(t, reason)
	}
}

// hasCodecMethods reports whether t customises its own encoding, so that a
// []T or [N]T of a byte-sized T must not be written as binary.
func hasCodecMethods(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return pt.Implements(rtMarshaler) || pt.Implements(rtValueMarshaler) ||
		pt.Implements(rtUnmarshaler) || pt.Implements(rtValueUnmarshaler)
}

func planMap(t reflect.Type) (*mapPlan, string) {
	kt := t.Key()
	mp := &mapPlan{keyKind: kt.Kind(), keyType: kt}
	switch kt.Kind() {
	case reflect.String:
		if kt == rtString {
			switch t.Elem() {
			case rtString:
				mp.fast = mapStringString
			case rtAny:
				mp.fast = mapStringAny
			}
		}
		return mp, ""
	}
	mp.keyText = kt.Implements(rtTextMarshaler)
	mp.keyUnText = reflect.PointerTo(kt).Implements(rtTextUnmarshaler)
	if mp.keyText || mp.keyUnText {
		return mp, ""
	}
	switch kt.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return mp, ""
	}
	return nil, "map key type " + kt.String() + " is not a string, an integer or an encoding.TextMarshaler"
}

// Struct plans.

// tagInfo is a parsed `bson` struct tag.
type tagInfo struct {
	name      string
	skip      bool
	omitEmpty bool
	omitZero  bool
	minSize   bool
	truncate  bool
	inline    bool
}

// parseTag parses the field's bson tag. As with the official driver, a tag
// with no "key:" pairs at all is read as a bson tag (`bson` may be omitted).
func parseTag(sf reflect.StructField) (tagInfo, string) {
	tag, ok := sf.Tag.Lookup("bson")
	if !ok && len(sf.Tag) > 0 && !strings.Contains(string(sf.Tag), ":") {
		tag = string(sf.Tag)
	}
	var ti tagInfo
	if tag == "-" {
		ti.skip = true
		return ti, ""
	}
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" {
		name = strings.ToLower(sf.Name)
	}
	ti.name = name
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		switch o {
		case "omitempty":
			ti.omitEmpty = true
		case "omitzero":
			ti.omitZero = true
		case "minsize":
			ti.minSize = true
		case "truncate":
			ti.truncate = true
		case "inline":
			ti.inline = true
		case "":
		default:
			return ti, "field " + sf.Name + ": unknown bson tag option " + strconv.Quote(o)
		}
	}
	if !ValidKey(name) {
		return ti, "field " + sf.Name + ": key " + strconv.Quote(name) + " contains a NUL byte"
	}
	return ti, ""
}

// fillStruct builds c.st. Errors in the tags are recorded in st.err rather
// than returned: they surface, with the Go type, when the type is used.
func (pl *planner) fillStruct(c *codec) {
	st := c.st
	st.building = true
	defer func() { st.building = false }()
	fields, inline, reason := pl.collectFields(c.typ)
	if reason != "" {
		st.err = reason
		return
	}
	// Resolve duplicate keys by Go's embedding rule: the shallowest field
	// wins; two at the same depth are an error.
	byName := make(map[string][]int, len(fields))
	for i := range fields {
		byName[fields[i].name] = append(byName[fields[i].name], i)
	}
	drop := make([]bool, len(fields))
	for i := range fields { // in field order, so the error names the first clash
		idx := byName[fields[i].name]
		if len(idx) == 1 || idx[0] != i {
			continue
		}
		best, tie := idx[0], false
		for _, j := range idx[1:] {
			switch {
			case len(fields[j].index) < len(fields[best].index):
				best, tie = j, false
			case len(fields[j].index) == len(fields[best].index):
				tie = true
			}
		}
		if tie {
			st.err = "duplicate bson key " + strconv.Quote(fields[i].name) + " in " + c.typ.String()
			return
		}
		for _, j := range idx {
			drop[j] = j != best
		}
	}
	for i := range fields {
		if !drop[i] {
			st.fields = append(st.fields, fields[i])
		}
	}
	st.inline = inline
	st.numberHops()
	if len(st.fields) > 8 {
		st.byName = make(map[string]int32, len(st.fields))
		for i := range st.fields {
			st.byName[st.fields[i].name] = int32(i)
		}
	}
}

// collectFields lists t's encoded fields in declaration order, flattening
// inlined structs, and finds the inline map.
func (pl *planner) collectFields(t reflect.Type) ([]fieldPlan, *fieldPlan, string) {
	var fields []fieldPlan
	var inline *fieldPlan
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		ti, reason := parseTag(sf)
		if reason != "" {
			return nil, nil, reason
		}
		if ti.skip {
			continue
		}
		if !sf.IsExported() {
			// An unexported embedded struct may still be inlined: its
			// exported fields are reachable, as with encoding/json.
			if !(sf.Anonymous && ti.inline && sf.Type.Kind() == reflect.Struct) {
				continue
			}
		}
		if ti.inline {
			ft := sf.Type
			switch {
			case ft.Kind() == reflect.Map:
				if inline != nil {
					return nil, nil, "more than one inline map in " + t.String()
				}
				if ft.Key().Kind() != reflect.String {
					return nil, nil, "inline map " + sf.Name + " must have string keys"
				}
				mc := pl.codec(ft)
				inline = &fieldPlan{name: sf.Name, offset: sf.Offset, c: mc, index: []int{i}}
			case ft.Kind() == reflect.Struct || (ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct):
				st := ft
				if ft.Kind() == reflect.Pointer {
					st = ft.Elem()
				}
				ic := pl.codec(st)
				if ic.st == nil {
					return nil, nil, "inline field " + sf.Name + " has a custom codec and cannot be inlined"
				}
				if ic.st.building {
					return nil, nil, "inline field " + sf.Name + " makes " + t.String() + " contain itself"
				}
				if ic.st.err != "" {
					return nil, nil, ic.st.err
				}
				for _, f := range ic.st.fields {
					f.promote(i, sf, st)
					fields = append(fields, f)
				}
				if in := ic.st.inline; in != nil {
					if inline != nil {
						return nil, nil, "more than one inline map in " + t.String()
					}
					f := *in
					f.promote(i, sf, st)
					inline = &f
				}
			default:
				return nil, nil, "inline field " + sf.Name + " must be a struct, a pointer to a struct or a map"
			}
			continue
		}
		fc := pl.codec(sf.Type)
		f := fieldPlan{name: ti.name, keyz: ti.name + "\x00", offset: sf.Offset, c: fc,
			ekind: fc.ekind, dkind: fc.dkind, index: []int{i}}
		switch {
		case ti.omitZero:
			f.omit = omitZero
		case ti.omitEmpty:
			f.omit = omitEmpty
		}
		// minsize and truncate only change plain numeric codecs; a field
		// codec variant is made so other uses of the type are unaffected.
		if ti.minSize {
			switch fc.num {
			case reflect.Int64, reflect.Uint, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
				v := *fc
				v.enc = encIntKind(sf.Type, true)
				f.c, f.ekind, f.encVariant = &v, kOther, true
			}
		}
		if ti.truncate && fc.num != reflect.Invalid {
			v := *f.c
			if fc.num == reflect.Float32 {
				v.dec = decFloat32(sf.Type, true)
			} else {
				v.dec = decIntKind(sf.Type, true)
			}
			f.c, f.dkind, f.decVariant = &v, kOther, true
		}
		fields = append(fields, f)
	}
	return fields, inline, ""
}

// promote rebases f, a field of the struct type st, onto the struct that
// inlines st as its field number i, sf. Through a *st field, f gains a
// pointer hop; otherwise its first hop or its offset moves by sf's offset.
// The slices are copied, never shared with st's own plan.
func (f *fieldPlan) promote(i int, sf reflect.StructField, st reflect.Type) {
	f.index = append([]int{i}, f.index...)
	if sf.Type.Kind() == reflect.Pointer {
		f.via = append([]viaStep{{offset: sf.Offset, elem: st}}, f.via...)
	} else if len(f.via) > 0 {
		f.via = append([]viaStep(nil), f.via...)
		f.via[0].offset += sf.Offset
	} else {
		f.offset += sf.Offset
	}
}

// fieldPtr returns the address of f in the struct at base, or nil when an
// inlined *struct on the way is nil.
func (f *fieldPlan) fieldPtr(base unsafe.Pointer) unsafe.Pointer {
	for _, s := range f.via {
		base = *(*unsafe.Pointer)(unsafe.Add(base, s.offset))
		if base == nil {
			return nil
		}
	}
	return unsafe.Add(base, f.offset)
}

// numberHops gives each distinct pointer hop of the plan's fields an id. A
// hop is identified by the offsets leading to it: fields promoted through
// the same inlined *struct follow the same pointer. Every field's via slice
// is its own (see promote), so the ids can be written in place.
func (st *structPlan) numberHops() {
	ids := map[string]int{}
	number := func(f *fieldPlan) {
		var path []byte
		for i := range f.via {
			path = strconv.AppendUint(append(path, '.'), uint64(f.via[i].offset), 10)
			id, ok := ids[string(path)]
			if !ok {
				id = len(ids)
				ids[string(path)] = id
			}
			f.via[i].id = id
		}
	}
	for i := range st.fields {
		number(&st.fields[i])
	}
	if st.inline != nil {
		number(st.inline)
	}
}

// fieldPtrOwned is fieldPtr for decoding, which must not write into memory
// that existed before the decode: the first time a decode of one struct
// passes an inlined *struct, it replaces the pointer with one to a new
// copy of the target (or a new zero target when nil). owned records, by
// hop id, the pointers already replaced; hops numbered past its 64 bits
// are copied on every pass, which is correct, only slower.
func (f *fieldPlan) fieldPtrOwned(base unsafe.Pointer, owned *uint64) unsafe.Pointer {
	for i := range f.via {
		s := &f.via[i]
		pp := (*unsafe.Pointer)(unsafe.Add(base, s.offset))
		if s.id >= 64 || *owned&(1<<s.id) == 0 {
			*pp = newCopy(s.elem, *pp)
			if s.id < 64 {
				*owned |= 1 << s.id
			}
		}
		base = *pp
	}
	return unsafe.Add(base, f.offset)
}

// newCopy returns a pointer to a new t holding a shallow copy of the t at
// old, or the zero t when old is nil.
func newCopy(t reflect.Type, old unsafe.Pointer) unsafe.Pointer {
	n := reflect.New(t)
	if old != nil {
		n.Elem().Set(reflect.NewAt(t, old).Elem())
	}
	return n.UnsafePointer()
}

// find returns the index of the field with the given key, or -1. hint is
// the field expected next: documents usually list fields in declaration
// order, so the first comparison nearly always hits.
func (st *structPlan) find(key []byte, hint int) int {
	fs := st.fields
	if hint < len(fs) && fs[hint].name == string(key) {
		return hint
	}
	if st.byName == nil {
		for i := range fs {
			if fs[i].name == string(key) {
				return i
			}
		}
		return -1
	}
	if i, ok := st.byName[string(key)]; ok {
		return int(i)
	}
	return -1
}

// has reports whether the struct has a field with key k.
func (st *structPlan) has(k string) bool {
	if st.byName != nil {
		_, ok := st.byName[k]
		return ok
	}
	for i := range st.fields {
		if st.fields[i].name == k {
			return true
		}
	}
	return false
}

// emptyByKind is omitempty's test for types without IsZero: false, 0, "",
// and nil or empty slices and maps; nil pointers and interfaces. Structs are
// never empty (as with the official driver); arrays only when of length 0.
func emptyByKind(t reflect.Type) func(p unsafe.Pointer) bool {
	switch t.Kind() {
	case reflect.Bool:
		return func(p unsafe.Pointer) bool { return !*(*bool)(p) }
	case reflect.Int8, reflect.Uint8:
		return func(p unsafe.Pointer) bool { return *(*uint8)(p) == 0 }
	case reflect.Int16, reflect.Uint16:
		return func(p unsafe.Pointer) bool { return *(*uint16)(p) == 0 }
	case reflect.Int32, reflect.Uint32:
		return func(p unsafe.Pointer) bool { return *(*uint32)(p) == 0 }
	case reflect.Int, reflect.Int64, reflect.Uint, reflect.Uint64, reflect.Uintptr:
		if t.Size() == 4 {
			return func(p unsafe.Pointer) bool { return *(*uint32)(p) == 0 }
		}
		return func(p unsafe.Pointer) bool { return *(*uint64)(p) == 0 }
	case reflect.Float32:
		return func(p unsafe.Pointer) bool { return *(*float32)(p) == 0 }
	case reflect.Float64:
		return func(p unsafe.Pointer) bool { return *(*float64)(p) == 0 }
	case reflect.String:
		return func(p unsafe.Pointer) bool { return len(*(*string)(p)) == 0 }
	case reflect.Slice:
		return func(p unsafe.Pointer) bool { return (*sliceHeader)(p).Len == 0 }
	case reflect.Map:
		return func(p unsafe.Pointer) bool { return reflect.NewAt(t, p).Elem().Len() == 0 }
	case reflect.Pointer, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return func(p unsafe.Pointer) bool { return *(*unsafe.Pointer)(p) == nil }
	case reflect.Interface:
		// The first word of any interface is its type (or itab): nil
		// exactly when the interface is nil.
		return func(p unsafe.Pointer) bool { return *(*unsafe.Pointer)(p) == nil }
	case reflect.Array:
		n := t.Len()
		return func(unsafe.Pointer) bool { return n == 0 }
	case reflect.Complex64, reflect.Complex128:
		return func(p unsafe.Pointer) bool { return reflect.NewAt(t, p).Elem().IsZero() }
	}
	return func(unsafe.Pointer) bool { return false }
}

// emptyPointer: a nil pointer is empty; a non-nil one is empty only when
// its target implements Zeroer and says so.
func emptyPointer(c *codec) func(p unsafe.Pointer) bool {
	if !c.typ.Implements(rtZeroer) {
		return func(p unsafe.Pointer) bool { return *(*unsafe.Pointer)(p) == nil }
	}
	word := c.word // the pointer type itself
	return func(p unsafe.Pointer) bool {
		q := *(*unsafe.Pointer)(p)
		return q == nil || box(word, q).(Zeroer).IsZero()
	}
}

// sliceHeader is the memory layout of every Go slice. Data is typed as a
// pointer so that writes to it keep the garbage collector informed.
type sliceHeader struct {
	Data unsafe.Pointer
	Len  int
	Cap  int
}
