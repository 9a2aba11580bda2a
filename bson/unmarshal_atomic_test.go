package bson

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

// Tests of Unmarshal's atomicity: a failed decode leaves the target and
// everything reachable from it exactly as it was, and no decode, failed or
// not, writes into memory that existed before it other than the target.

// fingerprint describes everything reachable from v: every value, and the
// identity (address, length, capacity) of every pointer, slice and map,
// with slices read over their whole capacity. Two equal fingerprints mean
// the same memory graph holding the same values, so a decode that wrote
// anywhere in it (even into a slice's spare capacity) or replaced any part
// of it shows up as a difference.
func fingerprint(v any) string {
	var b strings.Builder
	type seenKey struct {
		p uintptr
		t reflect.Type
	}
	seen := map[seenKey]bool{}
	var walk func(b *strings.Builder, v reflect.Value)
	walk = func(b *strings.Builder, v reflect.Value) {
		switch v.Kind() {
		case reflect.Invalid:
			b.WriteString("invalid")
		case reflect.Bool:
			b.WriteString(strconv.FormatBool(v.Bool()))
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			b.WriteString(strconv.FormatInt(v.Int(), 10))
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			b.WriteString(strconv.FormatUint(v.Uint(), 10))
		case reflect.Float32, reflect.Float64:
			b.WriteString("f" + strconv.FormatUint(math.Float64bits(v.Float()), 16))
		case reflect.Complex64, reflect.Complex128:
			c := v.Complex()
			fmt.Fprintf(b, "c%x,%x", math.Float64bits(real(c)), math.Float64bits(imag(c)))
		case reflect.String:
			b.WriteString(strconv.Quote(v.String()))
		case reflect.Pointer:
			if v.IsNil() {
				b.WriteString("nil")
				return
			}
			k := seenKey{v.Pointer(), v.Type()}
			fmt.Fprintf(b, "&%#x", k.p)
			if seen[k] {
				return
			}
			seen[k] = true
			b.WriteByte('{')
			walk(b, v.Elem())
			b.WriteByte('}')
		case reflect.Interface:
			if v.IsNil() {
				b.WriteString("nil")
				return
			}
			fmt.Fprintf(b, "(%v)", v.Elem().Type())
			walk(b, v.Elem())
		case reflect.Struct:
			b.WriteByte('{')
			for i := 0; i < v.NumField(); i++ {
				walk(b, v.Field(i))
				b.WriteByte(',')
			}
			b.WriteByte('}')
		case reflect.Array:
			b.WriteByte('[')
			for i := 0; i < v.Len(); i++ {
				walk(b, v.Index(i))
				b.WriteByte(',')
			}
			b.WriteByte(']')
		case reflect.Slice:
			if v.IsNil() {
				b.WriteString("nil")
				return
			}
			fmt.Fprintf(b, "[%#x %d/%d:", v.Pointer(), v.Len(), v.Cap())
			full := v.Slice3(0, v.Cap(), v.Cap())
			for i := 0; i < full.Len(); i++ {
				walk(b, full.Index(i))
				b.WriteByte(',')
			}
			b.WriteByte(']')
		case reflect.Map:
			if v.IsNil() {
				b.WriteString("nil")
				return
			}
			fmt.Fprintf(b, "map%#x{", v.Pointer())
			var entries []string
			for it := v.MapRange(); it.Next(); {
				var e strings.Builder
				walk(&e, it.Key())
				e.WriteByte(':')
				walk(&e, it.Value())
				entries = append(entries, e.String())
			}
			slices.Sort(entries)
			b.WriteString(strings.Join(entries, ","))
			b.WriteByte('}')
		default: // chan, func, unsafe.Pointer
			fmt.Fprintf(b, "%v%#x", v.Kind(), v.Pointer())
		}
	}
	walk(&b, reflect.ValueOf(v))
	return b.String()
}

type atItem struct {
	SKU string `bson:"sku"`
	Qty int32  `bson:"qty"`
}

type atInner struct {
	A    int32            `bson:"a"`
	B    string           `bson:"b"`
	Tags []string         `bson:"tags"`
	M    map[string]int32 `bson:"m"`
	Next *atInner         `bson:"next"`
}

type atDeep struct {
	Z int8 `bson:"z"`
}

type atEmbed struct {
	X    int32   `bson:"x"`
	Y    string  `bson:"y"`
	Deep *atDeep `bson:",inline"`
}

type atNamer interface{ Name() string }

type atImpl struct {
	N string `bson:"n"`
	K int8   `bson:"k"`
}

func (a *atImpl) Name() string { return a.N }

// atUnmarshaler assigns to itself before it fails, so a failed decode must
// undo what it did.
type atUnmarshaler struct {
	V     string
	Calls int
}

func (u *atUnmarshaler) UnmarshalBSON(b []byte) error {
	u.Calls++
	if s, ok := Raw(b).Lookup("v").StringValueOK(); ok {
		u.V = s
	}
	if Raw(b).Lookup("fail").Type != 0 {
		return errors.New("told to fail")
	}
	return nil
}

type atValueUnmarshaler struct {
	T Type
	N int
}

func (u *atValueUnmarshaler) UnmarshalBSONValue(t Type, _ []byte) error {
	u.T = t
	u.N++
	if t == TypeBoolean {
		return errors.New("no booleans")
	}
	return nil
}

// atKey is a map key decoded by UnmarshalText from "a-b".
type atKey struct{ A, B string }

func (k *atKey) UnmarshalText(b []byte) error {
	a, bb, ok := strings.Cut(string(b), "-")
	if !ok {
		return errors.New("no dash")
	}
	*k = atKey{a, bb}
	return nil
}

// atMethodMap decodes itself, with a key type the map decoder does not
// support; it adds an entry before it fails.
type atMethodMap map[[2]int]string

func (m *atMethodMap) UnmarshalBSON(b []byte) error {
	(*m)[[2]int{len(*m), 0}] = Raw(b).Lookup("v").StringValue()
	if Raw(b).Lookup("fail").Type != 0 {
		return errors.New("told to fail")
	}
	return nil
}

type atDoc struct {
	Name   string              `bson:"name"`
	N      int8                `bson:"n"`
	F      float32             `bson:"f"`
	Items  []atItem            `bson:"items"`
	Tags   []string            `bson:"tags"`
	Arr    [2]atItem           `bson:"arr"`
	Meta   map[string]string   `bson:"meta"`
	Counts map[string]atItem   `bson:"counts"`
	Anys   map[string]any      `bson:"anys"`
	Keys   map[atKey]int32     `bson:"keys"`
	P      *atInner            `bson:"p"`
	PP     **atInner           `bson:"pp"`
	Any    any                 `bson:"any"`
	Iface  atNamer             `bson:"iface"`
	U      *atUnmarshaler      `bson:"u"`
	UV     atUnmarshaler       `bson:"uv"`
	VU     *atValueUnmarshaler `bson:"vu"`
	Ptrs   []*atItem           `bson:"ptrs"`
	Emb    *atEmbed            `bson:",inline"`
	Rest   map[string]int32    `bson:",inline"`
}

// atPopulated builds a new atDoc with every reference field set. Slices
// have spare capacity holding data, so writes into it are detectable.
func atPopulated() *atDoc {
	items := []atItem{{"i0", 1}, {"i1", 2}, {"spare2", 3}, {"spare3", 4}}[:2]
	tags := []string{"t0", "spare1", "spare2"}[:1]
	pp := &atInner{A: 3, B: "pp"}
	return &atDoc{
		Name: "old", N: 1, F: 1.5, Items: items, Tags: tags,
		Arr:    [2]atItem{{"a0", 1}, {"a1", 2}},
		Meta:   map[string]string{"k0": "v0"},
		Counts: map[string]atItem{"c0": {"c", 1}},
		Anys:   map[string]any{"x0": int32(1)},
		Keys:   map[atKey]int32{{"a", "b"}: 1},
		P:      &atInner{A: 1, B: "b", Tags: []string{"t0", "spare"}[:1], M: map[string]int32{"m0": 0}, Next: &atInner{A: 2}},
		PP:     &pp,
		Any:    &atInner{A: 4},
		Iface:  &atImpl{N: "impl"},
		U:      &atUnmarshaler{V: "u"},
		UV:     atUnmarshaler{V: "uv"},
		VU:     &atValueUnmarshaler{N: 5},
		Ptrs:   []*atItem{{"p0", 1}},
		Emb:    &atEmbed{X: 1, Y: "y", Deep: &atDeep{Z: 1}},
		Rest:   map[string]int32{"r0": 1},
	}
}

// atPrefix decodes successfully into every field of an atDoc; the failure
// cases append a failing element to it, so that the failure comes after
// many fields were decoded.
func atPrefix() D {
	return D{
		{"name", "new"}, {"n", int32(2)},
		{"items", A{D{{"sku", "new"}}}}, {"tags", A{"x", "y"}}, {"arr", A{D{{"sku", "na"}}}},
		{"meta", D{{"k1", "v1"}}}, {"counts", D{{"c1", D{{"qty", int32(5)}}}}}, {"anys", D{{"x1", "s"}}}, {"keys", D{{"c-d", int32(2)}}},
		{"p", D{{"a", int32(9)}, {"tags", A{"n"}}, {"m", D{{"m1", int32(1)}}}, {"next", D{{"a", int32(8)}}}}},
		{"pp", D{{"a", int32(7)}}}, {"any", D{{"a", int32(6)}}}, {"iface", D{{"n", "new"}}},
		{"u", D{{"v", "new"}}}, {"uv", D{{"v", "new"}}}, {"vu", "s"}, {"ptrs", A{D{{"qty", int32(3)}}}},
		{"x", int32(5)}, {"z", int32(5)}, {"r1", int32(2)},
	}
}

// atFailures are elements that fail to decode into an atDoc, with the
// error path expected.
var atFailures = []struct {
	name string
	elem E
	path string
}{
	{"type error", E{"name", int32(1)}, "name"},
	{"overflow", E{"n", int32(300)}, "n"},
	{"float32 precision", E{"f", 0.1}, "f"},
	{"nested struct through a pointer", E{"p", D{{"a", int32(10)}, {"tags", A{"q"}}, {"m", D{{"m2", int32(2)}}}, {"b", int32(1)}}}, "p.b"},
	{"two pointer hops", E{"p", D{{"a", int32(10)}, {"next", D{{"a", int32(1)}, {"b", true}}}}}, "p.next.b"},
	{"pointer to pointer", E{"pp", D{{"a", int32(1)}, {"b", 1.5}}}, "pp.b"},
	{"slice element", E{"items", A{D{{"sku", "a"}}, D{{"qty", "bad"}}}}, "items.1.qty"},
	{"slice of pointers", E{"ptrs", A{D{{"sku", "a"}}, D{{"qty", "bad"}}}}, "ptrs.1.qty"},
	{"string slice", E{"tags", A{"a", int32(1)}}, "tags.1"},
	{"array element", E{"arr", A{D{{"sku", "z"}}, D{{"qty", "bad"}}}}, "arr.1.qty"},
	{"array too long", E{"arr", A{D{}, D{}, D{}}}, "arr"},
	{"string map value", E{"meta", D{{"k2", "v"}, {"bad", int32(1)}}}, "meta.bad"},
	{"struct map value", E{"counts", D{{"c2", D{{"sku", "s"}}}, {"bad", D{{"qty", "bad"}}}}}, "counts.bad.qty"},
	{"TextUnmarshaler map key", E{"keys", D{{"e-f", int32(1)}, {"nodash", int32(1)}}}, "keys.nodash"},
	{"map in a struct through a pointer", E{"p", D{{"m", D{{"m3", int32(1)}, {"bad", "x"}}}}}, "p.m.bad"},
	{"empty interface holding a pointer", E{"any", D{{"a", int32(11)}, {"b", int32(1)}}}, "any.b"},
	{"interface with methods holding a pointer", E{"iface", D{{"n", "z"}, {"k", int32(300)}}}, "iface.k"},
	{"UnmarshalBSON through a pointer", E{"u", D{{"v", "changed"}, {"fail", true}}}, "u"},
	{"UnmarshalBSON on a field", E{"uv", D{{"v", "changed"}, {"fail", true}}}, "uv"},
	{"UnmarshalBSONValue through a pointer", E{"vu", true}, "vu"},
	{"inlined pointer struct", E{"y", int32(1)}, "y"},
	{"two inlined pointer hops", E{"z", int32(300)}, "z"},
	{"inline map", E{"r2", "str"}, "r2"},
}

// checkUnchanged fails the test unless the failed decode left the value
// with fingerprint before exactly as it was and deep-equal to want.
func checkUnchanged(t *testing.T, err error, path string, got any, before string, want any) {
	t.Helper()
	var ute *UnmarshalTypeError
	if !errors.As(err, &ute) {
		t.Fatalf("err = %T %v, want *UnmarshalTypeError", err, err)
	}
	if ute.Path != path {
		t.Errorf("error path %q, want %q (%v)", ute.Path, path, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("target changed:\n got %#v\nwant %#v", got, want)
	}
	if after := fingerprint(got); after != before {
		t.Errorf("memory reachable from the target changed:\nbefore %s\n after %s", before, after)
	}
}

func TestCodecUnmarshalAtomicStruct(t *testing.T) {
	for _, tc := range atFailures {
		t.Run(tc.name, func(t *testing.T) {
			doc := mustDoc(t, append(atPrefix(), tc.elem))
			// A populated target: everything reachable stays as it was.
			d := atPopulated()
			before := fingerprint(d)
			err := Unmarshal(doc, d)
			checkUnchanged(t, err, tc.path, d, before, atPopulated())

			// The failing element alone, with nothing decoded before it.
			d = atPopulated()
			before = fingerprint(d)
			err = Unmarshal(mustDoc(t, D{tc.elem}), d)
			checkUnchanged(t, err, tc.path, d, before, atPopulated())

			// A zero target is decoded in place and cleared on failure.
			// Its nil interface with methods cannot take "iface" at all,
			// and its nil empty interface takes any document.
			zdoc := slices.DeleteFunc(atPrefix(), func(e E) bool { return e.Key == "iface" })
			var z atDoc
			before = fingerprint(&z)
			err = Unmarshal(mustDoc(t, append(zdoc, tc.elem)), &z)
			switch tc.elem.Key {
			case "iface":
				checkUnchanged(t, err, "iface", &z, before, &atDoc{})
			case "any":
				if err != nil {
					t.Errorf("zero target: %v", err)
				}
			default:
				checkUnchanged(t, err, tc.path, &z, before, &atDoc{})
			}

			// The same through the other entry points.
			d = atPopulated()
			before = fingerprint(d)
			err = Raw(doc).Unmarshal(d)
			checkUnchanged(t, err, tc.path, d, before, atPopulated())
			d = atPopulated()
			before = fingerprint(d)
			err = UnmarshalValue(TypeEmbeddedDocument, doc, d)
			checkUnchanged(t, err, tc.path, d, before, atPopulated())
			d = atPopulated()
			before = fingerprint(d)
			err = RawValue{Type: TypeEmbeddedDocument, Value: doc}.Unmarshal(d)
			checkUnchanged(t, err, tc.path, d, before, atPopulated())
			js, jerr := MarshalExtJSON(Raw(doc), true)
			if jerr != nil {
				t.Fatal(jerr)
			}
			d = atPopulated()
			before = fingerprint(d)
			err = UnmarshalExtJSON(js, d)
			checkUnchanged(t, err, tc.path, d, before, atPopulated())

			// Through a pointer to the target's pointer: the pointer is
			// copied on write too.
			d = atPopulated()
			dp := &d
			before = fingerprint(dp)
			err = Unmarshal(doc, dp)
			checkUnchanged(t, err, tc.path, dp, before, func() **atDoc { p := atPopulated(); return &p }())
		})
	}
}

// TestCodecUnmarshalAtomicPrefixSucceeds checks that the failure cases
// above fail because of their last element, and that a successful decode
// merges as documented without writing into any memory the target held
// before: the new value has new slices, maps and pointed-to structs, and
// the old ones are untouched.
func TestCodecUnmarshalAtomicPrefixSucceeds(t *testing.T) {
	d := atPopulated()
	held := *d // every reference the target held, to check after
	heldBefore := fingerprint(&held)
	if err := Unmarshal(mustDoc(t, atPrefix()), d); err != nil {
		t.Fatal(err)
	}
	want := atPopulated()
	want.Name, want.N = "new", 2
	want.Items = []atItem{{"new", 0}}
	want.Tags = []string{"x", "y"}
	want.Arr = [2]atItem{{"na", 0}, {}}
	want.Meta["k1"] = "v1"
	want.Counts["c1"] = atItem{"", 5}
	want.Anys["x1"] = "s"
	want.Keys[atKey{"c", "d"}] = 2
	want.P.A, want.P.Tags, want.P.M["m1"], want.P.Next.A = 9, []string{"n"}, 1, 8
	(*want.PP).A = 7
	want.Any.(*atInner).A = 6
	want.Iface.(*atImpl).N = "new"
	want.U.V, want.U.Calls = "new", 1
	want.UV.V, want.UV.Calls = "new", 1
	want.VU.T, want.VU.N = TypeString, 6
	want.Ptrs = []*atItem{{"", 3}}
	want.Emb.X, want.Emb.Deep.Z = 5, 5
	want.Rest["r1"] = 2
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("got  %#v\nwant %#v", d, want)
	}
	if after := fingerprint(&held); after != heldBefore {
		t.Fatalf("memory the target held before was written:\nbefore %s\n after %s", heldBefore, after)
	}
	// Everything the document reached was replaced, not reused.
	same := map[string]bool{
		"items":    &d.Items[0] == &held.Items[0],
		"tags":     &d.Tags[0] == &held.Tags[0],
		"meta":     reflect.ValueOf(d.Meta).Pointer() == reflect.ValueOf(held.Meta).Pointer(),
		"p":        d.P == held.P,
		"p.next":   d.P.Next == held.P.Next,
		"pp":       d.PP == held.PP,
		"*pp":      *d.PP == *held.PP,
		"any":      d.Any == held.Any,
		"iface":    d.Iface == held.Iface,
		"u":        d.U == held.U,
		"vu":       d.VU == held.VU,
		"emb":      d.Emb == held.Emb,
		"emb.deep": d.Emb.Deep == held.Emb.Deep,
		"rest":     reflect.ValueOf(d.Rest).Pointer() == reflect.ValueOf(held.Rest).Pointer(),
	}
	for k, v := range same {
		if v {
			t.Errorf("%s: old memory reused", k)
		}
	}
}

// TestCodecUnmarshalAtomicMerge: successful decodes still merge. Fields
// the document lacks keep their values, through pointers too; map entries
// the document lacks are kept; an empty document changes nothing.
func TestCodecUnmarshalAtomicMerge(t *testing.T) {
	d := atPopulated()
	if err := Unmarshal(mustDoc(t, D{{"p", D{{"a", int32(5)}}}, {"meta", D{{"k0", "replaced"}, {"k9", "added"}}}, {"y", "emb"}}), d); err != nil {
		t.Fatal(err)
	}
	want := atPopulated()
	want.P.A = 5
	want.Meta = map[string]string{"k0": "replaced", "k9": "added"}
	want.Emb.Y = "emb"
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("got  %#v\nwant %#v", d, want)
	}

	d = atPopulated()
	before := fingerprint(d)
	if err := Unmarshal(mustDoc(t, D{}), d); err != nil {
		t.Fatal(err)
	}
	if fingerprint(d) != before {
		t.Error("an empty document changed the target")
	}
	// An empty document into a non-nil map field keeps that very map.
	if err := Unmarshal(mustDoc(t, D{{"meta", D{}}, {"anys", D{}}, {"counts", D{}}}), d); err != nil || fingerprint(d) != before {
		t.Errorf("empty maps changed the target: %v", err)
	}

	// Inline map fast paths merge too.
	type inlStr struct {
		A    int32             `bson:"a"`
		Rest map[string]string `bson:",inline"`
	}
	type inlAny struct {
		A    int32          `bson:"a"`
		Rest map[string]any `bson:",inline"`
	}
	s := inlStr{Rest: map[string]string{"old": "o"}}
	held := s.Rest
	if err := Unmarshal(mustDoc(t, D{{"new", "n"}, {"new2", "m"}}), &s); err != nil ||
		!reflect.DeepEqual(s.Rest, map[string]string{"old": "o", "new": "n", "new2": "m"}) || len(held) != 1 {
		t.Errorf("inline map[string]string: %v %v (old map %v)", s.Rest, err, held)
	}
	a := inlAny{Rest: map[string]any{"old": "o"}}
	heldAny := a.Rest
	if err := Unmarshal(mustDoc(t, D{{"new", "n"}, {"a", int32(1)}}), &a); err != nil ||
		!reflect.DeepEqual(a, inlAny{A: 1, Rest: map[string]any{"old": "o", "new": "n"}}) || len(heldAny) != 1 {
		t.Errorf("inline map[string]any: %v %v (old map %v)", a, err, heldAny)
	}
	// Both fail atomically when a later field does not fit.
	s = inlStr{A: 1, Rest: map[string]string{"old": "o"}}
	before = fingerprint(&s)
	err := Unmarshal(mustDoc(t, D{{"new", "n"}, {"a", "x"}}), &s)
	checkUnchanged(t, err, "a", &s, before, &inlStr{A: 1, Rest: map[string]string{"old": "o"}})
	a = inlAny{A: 1, Rest: map[string]any{"old": "o"}}
	before = fingerprint(&a)
	err = Unmarshal(mustDoc(t, D{{"new", "n"}, {"a", "x"}}), &a)
	checkUnchanged(t, err, "a", &a, before, &inlAny{A: 1, Rest: map[string]any{"old": "o"}})
}

// TestCodecUnmarshalAtomicTargets covers targets other than structs: maps
// (by pointer and by value), slices, top-level unmarshalers, interfaces,
// and pointer cycles that end in the indirection limit.
func TestCodecUnmarshalAtomicTargets(t *testing.T) {
	badMap := mustDoc(t, D{{"a", D{{"sku", "x"}}}, {"b", D{{"qty", "bad"}}}})

	t.Run("map by value", func(t *testing.T) {
		m := map[string]atItem{"old": {"o", 1}}
		before := fingerprint(m)
		err := Unmarshal(badMap, m)
		checkUnchanged(t, err, "b.qty", m, before, map[string]atItem{"old": {"o", 1}})
		ms := map[string]string{"old": "o"}
		before = fingerprint(ms)
		err = Unmarshal(mustDoc(t, D{{"a", "x"}, {"b", int32(1)}}), ms)
		checkUnchanged(t, err, "b", ms, before, map[string]string{"old": "o"})
		// On success a map passed by value is added to in place.
		if err := Unmarshal(mustDoc(t, D{{"a", D{{"sku", "x"}}}}), m); err != nil || !reflect.DeepEqual(m, map[string]atItem{"old": {"o", 1}, "a": {"x", 0}}) {
			t.Errorf("merge: %v %v", m, err)
		}
		if err := Unmarshal(mustDoc(t, D{{"a", "x"}}), ms); err != nil || !reflect.DeepEqual(ms, map[string]string{"old": "o", "a": "x"}) {
			t.Errorf("merge: %v %v", ms, err)
		}
	})
	t.Run("map with its own method, by value", func(t *testing.T) {
		m := atMethodMap{{9, 9}: "old"}
		before := fingerprint(m)
		err := Unmarshal(mustDoc(t, D{{"v", "new"}, {"fail", true}}), m)
		checkUnchanged(t, err, "", m, before, atMethodMap{{9, 9}: "old"})
		// On success the map holds what the method made of it.
		if err := Unmarshal(mustDoc(t, D{{"v", "new"}}), m); err != nil || !reflect.DeepEqual(m, atMethodMap{{9, 9}: "old", {1, 0}: "new"}) {
			t.Errorf("success: %v %v", m, err)
		}
	})
	t.Run("map by pointer", func(t *testing.T) {
		m := map[string]atItem{"old": {"o", 1}}
		before := fingerprint(&m)
		err := Unmarshal(badMap, &m)
		checkUnchanged(t, err, "b.qty", &m, before, &map[string]atItem{"old": {"o", 1}})
	})
	t.Run("slice with spare capacity", func(t *testing.T) {
		arr := mustDoc(t, D{{"0", D{{"sku", "x"}}}, {"1", D{{"qty", "bad"}}}})
		fresh := func() []atItem { return []atItem{{"i0", 1}, {"spare", 2}, {"spare", 3}}[:1] }
		s := fresh()
		backing := s[:cap(s)]
		before := fingerprint(&s)
		err := UnmarshalValue(TypeArray, arr, &s)
		checkUnchanged(t, err, "1.qty", &s, before, func() *[]atItem { s := fresh(); return &s }())
		err = RawValue{Type: TypeArray, Value: arr}.Unmarshal(&s)
		checkUnchanged(t, err, "1.qty", &s, before, func() *[]atItem { s := fresh(); return &s }())
		if !reflect.DeepEqual(backing, []atItem{{"i0", 1}, {"spare", 2}, {"spare", 3}}) {
			t.Errorf("backing array written: %v", backing)
		}
	})
	t.Run("top-level UnmarshalBSON", func(t *testing.T) {
		fail := mustDoc(t, D{{"v", "new"}, {"fail", true}})
		u := atUnmarshaler{V: "old", Calls: 3}
		before := fingerprint(&u)
		err := Unmarshal(fail, &u)
		checkUnchanged(t, err, "", &u, before, &atUnmarshaler{V: "old", Calls: 3})
		var z atUnmarshaler
		before = fingerprint(&z)
		err = Unmarshal(fail, &z)
		checkUnchanged(t, err, "", &z, before, &atUnmarshaler{})
		vu := atValueUnmarshaler{T: TypeInt32, N: 2}
		before = fingerprint(&vu)
		err = UnmarshalValue(TypeBoolean, []byte{1}, &vu)
		checkUnchanged(t, err, "", &vu, before, &atValueUnmarshaler{T: TypeInt32, N: 2})
	})
	t.Run("interface holding a pointer", func(t *testing.T) {
		var x any = &atInner{A: 1, M: map[string]int32{"k": 1}}
		before := fingerprint(&x)
		err := Unmarshal(mustDoc(t, D{{"a", int32(2)}, {"m", D{{"j", int32(2)}}}, {"b", int32(1)}}), &x)
		var want any = &atInner{A: 1, M: map[string]int32{"k": 1}}
		checkUnchanged(t, err, "b", &x, before, &want)
	})
	t.Run("pointer cycles", func(t *testing.T) {
		doc := mustDoc(t, D{{"x", int32(1)}})
		var self any
		self = &self
		before := fingerprint(&self)
		if err := Unmarshal(doc, &self); err == nil || !strings.Contains(err.Error(), "indirections") || fingerprint(&self) != before || self != any(&self) {
			t.Errorf("interface holding a pointer to itself: %v", err)
		}
		var pp utPP
		pp = &pp
		before = fingerprint(&pp)
		if err := Unmarshal(doc, &pp); err == nil || !strings.Contains(err.Error(), "indirections") || fingerprint(&pp) != before || pp != utPP(&pp) {
			t.Errorf("type P *P: %v", err)
		}
		// The cycle error comes after another field was decoded.
		var s struct {
			A    string
			Self any
		}
		s.A, s.Self = "old", &s.Self
		before = fingerprint(&s)
		if err := Unmarshal(mustDoc(t, D{{"a", "new"}, {"self", D{{"x", int32(1)}}}}), &s); err == nil || fingerprint(&s) != before || s.A != "old" || s.Self != any(&s.Self) {
			t.Errorf("cycle after a field: %v", err)
		}
	})
	t.Run("invalid BSON", func(t *testing.T) {
		good := mustDoc(t, atPrefix())
		for i, b := range [][]byte{good[:len(good)-1], append(append([]byte{}, good...), 0), nil} {
			d := atPopulated()
			before := fingerprint(d)
			var de *DecodeError
			if err := Unmarshal(b, d); !errors.As(err, &de) || fingerprint(d) != before || !reflect.DeepEqual(d, atPopulated()) {
				t.Errorf("%d: %v", i, err)
			}
		}
	})
}

// TestCodecUnmarshalAtomicSharedMemory decodes concurrently into shallow
// copies of one value, which share all of its slices, maps and pointers,
// while that value is read. Decoding writes into none of the shared
// memory, so under -race nothing is reported, and the value is unchanged.
func TestCodecUnmarshalAtomicSharedMemory(t *testing.T) {
	base := atPopulated()
	before := fingerprint(base)
	good := mustDoc(t, atPrefix())
	bad := mustDoc(t, append(atPrefix(), atFailures[3].elem))
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				d := *base
				doc := good
				if j%2 == 1 {
					doc = bad
				}
				if err := Unmarshal(doc, &d); (err == nil) != (j%2 == 0) {
					t.Errorf("decode %d: %v", j, err)
					return
				}
			}
		}()
	}
	for i := 0; i < 20; i++ {
		if fingerprint(base) != before {
			t.Error("shared memory changed during decoding")
			break
		}
	}
	wg.Wait()
	if fingerprint(base) != before {
		t.Error("shared memory changed")
	}
}

// TestCodecUnmarshalAtomicZeroCheck tests the all-zero test that picks
// the in-place path, across the boundaries of its comparison chunks.
func TestCodecUnmarshalAtomicZeroCheck(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 511, 512, 513, 1024, 1025, 1500} {
		buf := make([]byte, n)
		if n > 0 && !isZeroMem(unsafe.Pointer(&buf[0]), uintptr(n)) {
			t.Errorf("%d zero bytes reported non-zero", n)
		}
		for _, at := range []int{0, n / 2, 511, 512, n - 1} {
			if at < 0 || at >= n {
				continue
			}
			buf[at] = 1
			if isZeroMem(unsafe.Pointer(&buf[0]), uintptr(n)) {
				t.Errorf("%d bytes with byte %d set reported zero", n, at)
			}
			buf[at] = 0
		}
	}
	// A large struct takes both paths.
	type big struct {
		Pad  [700]byte `bson:"pad"`
		Name string    `bson:"name"`
		N    int8      `bson:"n"`
	}
	fail := mustDoc(t, D{{"name", "new"}, {"n", int32(300)}})
	var z big
	if err := Unmarshal(fail, &z); err == nil || z != (big{}) {
		t.Errorf("zero target: %v %+v", err, z.Name)
	}
	nz := big{Name: "old"}
	nz.Pad[650] = 1
	if err := Unmarshal(fail, &nz); err == nil || nz.Name != "old" || nz.Pad[650] != 1 {
		t.Errorf("non-zero target: %v %+v", err, nz.Name)
	}
	if err := Unmarshal(mustDoc(t, D{{"name", "new"}}), &nz); err != nil || nz.Name != "new" || nz.Pad[650] != 1 {
		t.Errorf("non-zero target, success: %v %+v", err, nz.Name)
	}
}
