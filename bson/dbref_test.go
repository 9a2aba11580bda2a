package bson

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

// drTestDoc builds a document from element writers, in order, so that
// field order in the tests is exactly as written.
func drTestDoc(elems ...func([]byte) []byte) Raw {
	start, doc := AppendDocumentStart(nil)
	for _, e := range elems {
		doc = e(doc)
	}
	doc, err := AppendDocumentEnd(doc, start)
	if err != nil {
		panic(err) // test documents are small
	}
	return doc
}

func drStr(k, v string) func([]byte) []byte {
	return func(b []byte) []byte { return AppendStringElement(b, k, v) }
}

func drI32(k string, v int32) func([]byte) []byte {
	return func(b []byte) []byte { return AppendInt32Element(b, k, v) }
}

func drBool(k string, v bool) func([]byte) []byte {
	return func(b []byte) []byte { return AppendBooleanElement(b, k, v) }
}

func drNull(k string) func([]byte) []byte {
	return func(b []byte) []byte { return AppendNullElement(b, k) }
}

func drOID(k string, v ObjectID) func([]byte) []byte {
	return func(b []byte) []byte { return AppendObjectIDElement(b, k, v) }
}

func drDoc(k string, d Raw) func([]byte) []byte {
	return func(b []byte) []byte { return AppendDocumentElement(b, k, d) }
}

var dbrefTestOID = func() ObjectID {
	id, err := ObjectIDFromHex("60a6fe9a54f4180c86309efa")
	if err != nil {
		panic(err)
	}
	return id
}()

// The DBRef specification's decoding prose tests 1-3: documents that are
// DBRefs, with extra fields and in any field order.
func TestParseDBRefValid(t *testing.T) {
	meta := drTestDoc(drI32("foo", 1), drI32("bar", 2))
	tests := []struct {
		name string
		doc  Raw
		want DBRef
	}{
		{"1.1 ObjectId id", drTestDoc(drStr("$ref", "coll0"), drOID("$id", dbrefTestOID)), DBRef{Ref: "coll0", ID: dbrefTestOID}},
		{"1.2 int id", drTestDoc(drStr("$ref", "coll0"), drI32("$id", 1)), DBRef{Ref: "coll0", ID: int32(1)}},
		{"1.3 null id", drTestDoc(drStr("$ref", "coll0"), drNull("$id")), DBRef{Ref: "coll0", ID: nil}},
		{"1.4 with db", drTestDoc(drStr("$ref", "coll0"), drI32("$id", 1), drStr("$db", "db0")), DBRef{Ref: "coll0", ID: int32(1), DB: "db0"}},

		{"2.1 db and extra", drTestDoc(drStr("$ref", "coll0"), drI32("$id", 1), drStr("$db", "db0"), drStr("foo", "bar")),
			DBRef{Ref: "coll0", ID: int32(1), DB: "db0", Extra: D{{"foo", "bar"}}}},
		{"2.2 two extras", drTestDoc(drStr("$ref", "coll0"), drI32("$id", 1), drBool("foo", true), drBool("bar", false)),
			DBRef{Ref: "coll0", ID: int32(1), Extra: D{{"foo", true}, {"bar", false}}}},
		{"2.3 document extra", drTestDoc(drStr("$ref", "coll0"), drI32("$id", 1), drDoc("meta", meta)),
			DBRef{Ref: "coll0", ID: int32(1), Extra: D{{"meta", RawValue{Type: TypeEmbeddedDocument, Value: meta}}}}},
		{"2.4 dollar extra", drTestDoc(drStr("$ref", "coll0"), drI32("$id", 1), drStr("$foo", "bar")),
			DBRef{Ref: "coll0", ID: int32(1), Extra: D{{"$foo", "bar"}}}},
		{"2.5 dotted extra", drTestDoc(drStr("$ref", "coll0"), drI32("$id", 1), drI32("foo.bar", 0)),
			DBRef{Ref: "coll0", ID: int32(1), Extra: D{{"foo.bar", int32(0)}}}},

		{"3.1 id before ref", drTestDoc(drI32("$id", 1), drStr("$ref", "coll0")), DBRef{Ref: "coll0", ID: int32(1)}},
		{"3.2 db first", drTestDoc(drStr("$db", "db0"), drStr("$ref", "coll0"), drI32("$id", 1)), DBRef{Ref: "coll0", ID: int32(1), DB: "db0"}},
		{"3.3 extra first", drTestDoc(drI32("foo", 1), drI32("$id", 1), drStr("$ref", "coll0")),
			DBRef{Ref: "coll0", ID: int32(1), Extra: D{{"foo", int32(1)}}}},
		{"3.4 extra first with db", drTestDoc(drI32("foo", 1), drStr("$ref", "coll0"), drI32("$id", 1), drStr("$db", "db0")),
			DBRef{Ref: "coll0", ID: int32(1), DB: "db0", Extra: D{{"foo", int32(1)}}}},
		{"3.5 extras around", drTestDoc(drI32("foo", 1), drStr("$ref", "coll0"), drI32("$id", 1), drStr("$db", "db0"), drI32("bar", 1)),
			DBRef{Ref: "coll0", ID: int32(1), DB: "db0", Extra: D{{"foo", int32(1)}, {"bar", int32(1)}}}},

		// Naming is not restricted, and $id may be any type.
		{"empty ref", drTestDoc(drStr("$ref", ""), drI32("$id", 1)), DBRef{Ref: "", ID: int32(1)}},
		{"document id", drTestDoc(drStr("$ref", "c"), drDoc("$id", meta)), DBRef{Ref: "c", ID: RawValue{Type: TypeEmbeddedDocument, Value: meta}}},
		{"string id", drTestDoc(drStr("$ref", "c"), drStr("$id", "x")), DBRef{Ref: "c", ID: "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseDBRef(tt.doc)
			if !ok {
				t.Fatalf("ParseDBRef(%x) reported not a DBRef", []byte(tt.doc))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseDBRef = %#v\nwant %#v", got, tt.want)
			}
			var viaUnmarshal DBRef
			if err := viaUnmarshal.UnmarshalBSON(tt.doc); err != nil || !reflect.DeepEqual(viaUnmarshal, tt.want) {
				t.Errorf("UnmarshalBSON = %#v, %v", viaUnmarshal, err)
			}
			// The result owns its bytes: clobbering the input changes
			// nothing.
			for i := range tt.doc {
				tt.doc[i] = 0xEE
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("the DBRef refers to its input's bytes: %#v", got)
			}
		})
	}
}

// The specification's decoding prose tests 4 and 5, plus malformed input
// and repeated fields.
func TestParseDBRefInvalid(t *testing.T) {
	truncated := drTestDoc(drStr("$ref", "coll0"), drI32("$id", 1))
	truncated = truncated[:len(truncated)-3]
	badNested := drTestDoc(drStr("$ref", "coll0"), drI32("$id", 1), drDoc("meta", Raw{5, 0, 0, 0, 1}))
	tests := []struct {
		name    string
		doc     Raw
		wantErr string // for UnmarshalBSON
		decode  bool   // the error is a *DecodeError rather than an *UnmarshalTypeError
	}{
		{"4.1 no id", drTestDoc(drStr("$ref", "coll0")), "$id is missing", false},
		{"4.2 no ref", drTestDoc(drOID("$id", dbrefTestOID)), "$ref is missing", false},
		{"4.3 only db", drTestDoc(drStr("$db", "db0")), "$ref is missing", false},
		{"5.1 ref not a string", drTestDoc(drBool("$ref", true), drI32("$id", 1)), "$ref is boolean, not a string", false},
		{"5.2 db not a string", drTestDoc(drStr("$ref", "coll0"), drI32("$id", 1), drI32("$db", 1)), "$db is 32-bit integer, not a string", false},
		{"empty document", drTestDoc(), "$ref is missing", false},
		{"repeated ref", drTestDoc(drStr("$ref", "a"), drI32("$id", 1), drStr("$ref", "b")), "$ref appears more than once", false},
		{"repeated id", drTestDoc(drStr("$ref", "a"), drI32("$id", 1), drI32("$id", 2)), "$id appears more than once", false},
		{"repeated db", drTestDoc(drStr("$ref", "a"), drI32("$id", 1), drStr("$db", "x"), drStr("$db", "y")), "$db appears more than once", false},
		{"ref null", drTestDoc(drNull("$ref"), drI32("$id", 1)), "$ref is null, not a string", false},
		{"truncated", truncated, "invalid BSON", true},
		{"malformed nested document", badNested, "invalid BSON", true},
		{"nil", nil, "invalid BSON", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, ok := ParseDBRef(tt.doc); ok {
				t.Errorf("ParseDBRef = %#v, true; want not a DBRef", got)
			}
			r := DBRef{Ref: "untouched"}
			err := r.UnmarshalBSON(tt.doc)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("UnmarshalBSON error = %v, want one containing %q", err, tt.wantErr)
			}
			var de *DecodeError
			var ue *UnmarshalTypeError
			if tt.decode && !errors.As(err, &de) || !tt.decode && !errors.As(err, &ue) {
				t.Errorf("UnmarshalBSON error is %T", err)
			}
			if r.Ref != "untouched" {
				t.Errorf("UnmarshalBSON changed the DBRef on error: %#v", r)
			}
		})
	}
}

// The specification's encoding prose tests 1 and 2: fields come out as
// $ref, $id, $db, then the extras in order.
func TestDBRefMarshalBSON(t *testing.T) {
	meta := drTestDoc(drI32("foo", 1), drI32("bar", 2))
	tests := []struct {
		name string
		ref  DBRef
		want Raw
	}{
		{"1.1 ObjectId id", DBRef{Ref: "coll0", ID: dbrefTestOID}, drTestDoc(drStr("$ref", "coll0"), drOID("$id", dbrefTestOID))},
		{"1.2 int id", DBRef{Ref: "coll0", ID: 1}, drTestDoc(drStr("$ref", "coll0"), drI32("$id", 1))},
		{"1.3 null id", DBRef{Ref: "coll0", ID: nil}, drTestDoc(drStr("$ref", "coll0"), drNull("$id"))},
		{"1.4 with db", DBRef{Ref: "coll0", ID: 1, DB: "db0"}, drTestDoc(drStr("$ref", "coll0"), drI32("$id", 1), drStr("$db", "db0"))},
		{"2.1 db and extra", DBRef{Ref: "coll0", ID: 1, DB: "db0", Extra: D{{"foo", "bar"}}},
			drTestDoc(drStr("$ref", "coll0"), drI32("$id", 1), drStr("$db", "db0"), drStr("foo", "bar"))},
		{"2.2 two extras", DBRef{Ref: "coll0", ID: 1, Extra: D{{"foo", true}, {"bar", false}}},
			drTestDoc(drStr("$ref", "coll0"), drI32("$id", 1), drBool("foo", true), drBool("bar", false))},
		{"2.3 document extra as D", DBRef{Ref: "coll0", ID: 1, Extra: D{{"meta", D{{"foo", 1}, {"bar", 2}}}}},
			drTestDoc(drStr("$ref", "coll0"), drI32("$id", 1), drDoc("meta", meta))},
		{"2.3 document extra as Raw", DBRef{Ref: "coll0", ID: 1, Extra: D{{"meta", meta}}},
			drTestDoc(drStr("$ref", "coll0"), drI32("$id", 1), drDoc("meta", meta))},
		{"2.4 dollar extra", DBRef{Ref: "coll0", ID: 1, Extra: D{{"$foo", "bar"}}},
			drTestDoc(drStr("$ref", "coll0"), drI32("$id", 1), drStr("$foo", "bar"))},
		{"2.5 dotted extra", DBRef{Ref: "coll0", ID: 1, Extra: D{{"foo.bar", 0}}},
			drTestDoc(drStr("$ref", "coll0"), drI32("$id", 1), drI32("foo.bar", 0))},
		{"int64 id", DBRef{Ref: "c", ID: int64(5)}, drTestDoc(drStr("$ref", "c"),
			func(b []byte) []byte { return AppendInt64Element(b, "$id", 5) })},
		{"large int id", DBRef{Ref: "c", ID: math.MaxInt32 + 1}, drTestDoc(drStr("$ref", "c"),
			func(b []byte) []byte { return AppendInt64Element(b, "$id", math.MaxInt32+1) })},
		{"Null id", DBRef{Ref: "c", ID: Null{}}, drTestDoc(drStr("$ref", "c"), drNull("$id"))},
		{"array extra", DBRef{Ref: "c", ID: "x", Extra: D{{"tags", A{"a", int32(2)}}}}, drTestDoc(drStr("$ref", "c"), drStr("$id", "x"),
			func(b []byte) []byte {
				return AppendArrayElement(b, "tags", drTestDoc(drStr("0", "a"), drI32("1", 2)))
			})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.ref.MarshalBSON()
			if err != nil {
				t.Fatalf("MarshalBSON: %v", err)
			}
			if !bytes.Equal(got, tt.want) {
				t.Errorf("MarshalBSON =\n %x\nwant\n %x", got, []byte(tt.want))
			}
			if err := Raw(got).Validate(); err != nil {
				t.Errorf("output is not valid BSON: %v", err)
			}
			if _, ok := ParseDBRef(got); !ok {
				t.Error("the output does not parse back as a DBRef")
			}
		})
	}
}

// The specification's encoding prose test 3: decoding then encoding puts
// out-of-order fields in the required order.
func TestDBRefReorders(t *testing.T) {
	tests := []struct {
		in, want Raw
	}{
		{drTestDoc(drI32("$id", 1), drStr("$ref", "coll0")),
			drTestDoc(drStr("$ref", "coll0"), drI32("$id", 1))},
		{drTestDoc(drStr("$db", "db0"), drStr("$ref", "coll0"), drI32("$id", 1)),
			drTestDoc(drStr("$ref", "coll0"), drI32("$id", 1), drStr("$db", "db0"))},
		{drTestDoc(drI32("foo", 1), drI32("$id", 1), drStr("$ref", "coll0")),
			drTestDoc(drStr("$ref", "coll0"), drI32("$id", 1), drI32("foo", 1))},
		{drTestDoc(drI32("foo", 1), drStr("$ref", "coll0"), drI32("$id", 1), drStr("$db", "db0")),
			drTestDoc(drStr("$ref", "coll0"), drI32("$id", 1), drStr("$db", "db0"), drI32("foo", 1))},
		{drTestDoc(drI32("foo", 1), drStr("$ref", "coll0"), drI32("$id", 1), drStr("$db", "db0"), drI32("bar", 1)),
			drTestDoc(drStr("$ref", "coll0"), drI32("$id", 1), drStr("$db", "db0"), drI32("foo", 1), drI32("bar", 1))},
	}
	for i, tt := range tests {
		r, ok := ParseDBRef(tt.in)
		if !ok {
			t.Fatalf("3.%d: not decoded", i+1)
		}
		got, err := r.MarshalBSON()
		if err != nil {
			t.Fatalf("3.%d: MarshalBSON: %v", i+1, err)
		}
		if !bytes.Equal(got, tt.want) {
			t.Errorf("3.%d: re-encoded as\n %x\nwant\n %x", i+1, got, []byte(tt.want))
		}
	}
}

// Every value type the DBRef decoder produces encodes back to the same
// bytes.
func TestDBRefRoundTripTypes(t *testing.T) {
	regex := RawValue{Type: TypeRegex, Value: AppendRegex(nil, "a.c", "i")}
	values := []any{
		nil, true, false, "s", int32(-7), int64(1 << 40), 2.5, math.Inf(-1), dbrefTestOID,
		DateTime(1621491290000), Timestamp{T: 5, I: 6}, NewDecimal128(0x3040000000000000, 12345),
		Binary{Subtype: SubtypeUUID, Data: make([]byte, 16)},
		Binary{Subtype: SubtypeBinaryOld, Data: []byte{1, 2, 3}},
		regex,
		MinKey{}, MaxKey{}, Undefined{},
		RawValue{Type: TypeArray, Value: drTestDoc(drI32("0", 1))},
	}
	for _, v := range values {
		r := DBRef{Ref: "c", ID: v, DB: "d", Extra: D{{"x", v}}}
		enc, err := r.MarshalBSON()
		if err != nil {
			t.Errorf("%#v: MarshalBSON: %v", v, err)
			continue
		}
		back, ok := ParseDBRef(enc)
		if !ok {
			t.Errorf("%#v: the encoding is not a DBRef: %x", v, enc)
			continue
		}
		if !reflect.DeepEqual(back, r) {
			t.Errorf("%#v: round trip = %#v", v, back)
		}
		again, err := back.MarshalBSON()
		if err != nil || !bytes.Equal(again, enc) {
			t.Errorf("%#v: second encoding differs: %x, %v", v, again, err)
		}
	}
}

func TestDBRefMarshalErrors(t *testing.T) {
	deep := D{{"x", 1}}
	for i := 0; i < MaxDepth+5; i++ {
		deep = D{{"x", deep}}
	}
	tests := []struct {
		name     string
		ref      DBRef
		wantPath string
		wantMsg  string
	}{
		{"unencodable id", DBRef{Ref: "c", ID: make(chan int)}, "$id", "chan int"},
		{"unencodable extra", DBRef{Ref: "c", ID: 1, Extra: D{{"when", []func(){nil}}}}, "when.0", "func()"},
		{"unencodable nested", DBRef{Ref: "c", ID: 1, Extra: D{{"meta", D{{"a", 1}, {"b", complex(1, 2)}}}}}, "meta.b", "complex128"},
		{"reserved extra $ref", DBRef{Ref: "c", ID: 1, Extra: D{{"$ref", "d"}}}, "$ref", "reserved DBRef field"},
		{"reserved extra $db", DBRef{Ref: "c", ID: 1, Extra: D{{"$db", "d"}}}, "$db", "reserved DBRef field"},
		{"NUL in extra key", DBRef{Ref: "c", ID: 1, Extra: D{{"a\x00b", 1}}}, "a\x00b", "NUL"},
		{"NUL in nested key", DBRef{Ref: "c", ID: D{{"a\x00", 1}}}, "$id.a\x00", "NUL"},
		{"bad Raw", DBRef{Ref: "c", ID: Raw{1, 2}}, "$id", "invalid Raw document"},
		{"bad RawValue", DBRef{Ref: "c", ID: RawValue{Type: TypeInt32, Value: []byte{1}}}, "$id", "invalid RawValue"},
		{"zero RawValue", DBRef{Ref: "c", ID: RawValue{}}, "$id", "invalid RawValue"},
		{"too deep", DBRef{Ref: "c", ID: deep}, "", "nesting exceeds the maximum depth"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := tt.ref.MarshalBSON()
			var me *MarshalError
			if !errors.As(err, &me) {
				t.Fatalf("MarshalBSON = %x, %v; want a *MarshalError", out, err)
			}
			if tt.wantPath != "" && me.Path != tt.wantPath {
				t.Errorf("error path = %q, want %q", me.Path, tt.wantPath)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q does not contain %q", err, tt.wantMsg)
			}
			if out != nil {
				t.Errorf("MarshalBSON returned bytes with an error: %x", out)
			}
		})
	}
}

func ExampleDBRef_MarshalBSON() {
	id, _ := ObjectIDFromHex("60a6fe9a54f4180c86309efa")
	ref := DBRef{Ref: "users", ID: id, DB: "app", Extra: D{{"note", "owner"}}}
	doc, err := ref.MarshalBSON()
	if err != nil {
		panic(err)
	}
	it := Raw(doc).Iter()
	for it.Next() {
		fmt.Println(it.Key(), it.Value().Type)
	}
	// Output:
	// $ref string
	// $id objectID
	// $db string
	// note string
}

func ExampleParseDBRef() {
	// Field order does not matter when reading.
	start, doc := AppendDocumentStart(nil)
	doc = AppendInt32Element(doc, "$id", 42)
	doc = AppendStringElement(doc, "$ref", "orders")
	doc = AppendBooleanElement(doc, "archived", true)
	doc, _ = AppendDocumentEnd(doc, start)

	ref, ok := ParseDBRef(doc)
	fmt.Println(ok, ref.Ref, ref.ID, ref.DB == "", ref.Extra)

	// A document without $id is an ordinary document.
	start, doc = AppendDocumentStart(nil)
	doc = AppendStringElement(doc, "$ref", "orders")
	doc, _ = AppendDocumentEnd(doc, start)
	_, ok = ParseDBRef(doc)
	fmt.Println(ok)
	// Output:
	// true orders 42 true {"archived":true}
	// false
}

func FuzzParseDBRef(f *testing.F) {
	f.Add([]byte(drTestDoc(drStr("$ref", "coll0"), drOID("$id", dbrefTestOID))))
	f.Add([]byte(drTestDoc(drI32("foo", 1), drStr("$ref", "coll0"), drI32("$id", 1), drStr("$db", "db0"), drI32("bar", 1))))
	f.Add([]byte(drTestDoc(drStr("$ref", "c"), drDoc("$id", drTestDoc(drI32("a", 1))), drNull("x"))))
	f.Add([]byte(drTestDoc(drStr("$ref", "c"), drI32("$id", 1),
		func(b []byte) []byte { return AppendBinaryElement(b, "bin", SubtypeBinaryOld, []byte{1, 2}) })))
	f.Add([]byte(drTestDoc(drStr("$ref", "c"))))
	f.Fuzz(func(t *testing.T, data []byte) {
		in := append([]byte{}, data...)
		r, ok := ParseDBRef(data)
		if !bytes.Equal(in, data) {
			t.Fatal("ParseDBRef modified its input")
		}
		var u DBRef
		uerr := u.UnmarshalBSON(data)
		if ok != (uerr == nil) {
			t.Fatalf("ParseDBRef ok = %v but UnmarshalBSON error = %v", ok, uerr)
		}
		if !ok {
			return
		}
		if !reflect.DeepEqual(u, r) {
			t.Fatalf("UnmarshalBSON = %#v, ParseDBRef = %#v", u, r)
		}
		// Whatever decodes must encode, as a valid DBRef that decodes to
		// the same model and encodes to the same bytes again.
		enc, err := r.MarshalBSON()
		if err != nil {
			t.Fatalf("MarshalBSON of decoded %#v: %v", r, err)
		}
		if err := Raw(enc).Validate(); err != nil {
			t.Fatalf("encoding is invalid: %v", err)
		}
		back, ok := ParseDBRef(enc)
		if !ok || !reflect.DeepEqual(back, r) {
			t.Fatalf("re-decoded %#v, %v; want %#v", back, ok, r)
		}
		again, err := back.MarshalBSON()
		if err != nil || !bytes.Equal(again, enc) {
			t.Fatalf("second encoding differs: %x, %v", again, err)
		}
	})
}

// DBRef ids and extra fields may hold any type Marshal accepts.
func TestDBRefMarshalAnyType(t *testing.T) {
	type key struct {
		Region string `bson:"region"`
		N      uint8  `bson:"n"`
	}
	ref := DBRef{Ref: "c", ID: key{Region: "eu", N: 7}, Extra: D{{Key: "tags", Value: []int{1, 2}}}}
	b, err := ref.MarshalBSON()
	if err != nil {
		t.Fatal(err)
	}
	back, ok := ParseDBRef(b)
	if !ok || back.Ref != "c" {
		t.Fatalf("ParseDBRef = %+v, %v", back, ok)
	}
	var k key
	if err := Raw(b).Lookup("$id").Unmarshal(&k); err != nil || k.Region != "eu" || k.N != 7 {
		t.Errorf("$id = %+v, %v", k, err)
	}
}
