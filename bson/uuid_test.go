package bson

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// specUUID is the UUID every prose test of the BSON Binary UUID
// specification uses.
const specUUID = "00112233-4455-6677-8899-aabbccddeeff"

func uuidMustParse(t *testing.T, s string) UUID {
	t.Helper()
	u, err := ParseUUID(s)
	if err != nil {
		t.Fatalf("ParseUUID(%q): %v", s, err)
	}
	return u
}

func uuidMustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// The specification's "Explicit encoding" prose tests.
func TestUUIDExplicitEncoding(t *testing.T) {
	u := uuidMustParse(t, specUUID)

	// Test 1: the constructor without a representation is standard.
	if b := u.Binary(); b.Subtype != 4 || !strings.EqualFold(hex.EncodeToString(b.Data), "00112233445566778899AABBCCDDEEFF") {
		t.Errorf("UUID.Binary() = subtype %d data %x", b.Subtype, b.Data)
	}

	tests := []struct {
		name    string
		rep     UUIDRepresentation
		subtype byte
		data    string // "" when an error is expected
	}{
		{"2 standard", UUIDStandard, 4, "00112233445566778899AABBCCDDEEFF"},
		{"3 javaLegacy", UUIDJavaLegacy, 3, "7766554433221100FFEEDDCCBBAA9988"},
		{"4 csharpLegacy", UUIDCSharpLegacy, 3, "33221100554477668899AABBCCDDEEFF"},
		{"5 pythonLegacy", UUIDPythonLegacy, 3, "00112233445566778899AABBCCDDEEFF"},
		{"6 unspecified", UUIDUnspecified, 0, ""},
		{"unknown representation", UUIDRepresentation(99), 0, ""},
		{"negative representation", UUIDRepresentation(-1), 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := BinaryFromUUID(u, tt.rep)
			if tt.data == "" {
				var ue *UUIDError
				if !errors.As(err, &ue) || ue.Representation != tt.rep {
					t.Fatalf("BinaryFromUUID(%v) = %v, %v; want a *UUIDError for that representation", tt.rep, b, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("BinaryFromUUID(%v): %v", tt.rep, err)
			}
			if b.Subtype != tt.subtype || !strings.EqualFold(hex.EncodeToString(b.Data), tt.data) {
				t.Errorf("BinaryFromUUID(%v) = subtype %d data %X; want subtype %d data %s", tt.rep, b.Subtype, b.Data, tt.subtype, tt.data)
			}
		})
	}

	// Encoding must not share memory with the UUID or between calls.
	b1, _ := BinaryFromUUID(u, UUIDJavaLegacy)
	b2, _ := BinaryFromUUID(u, UUIDJavaLegacy)
	b1.Data[0] ^= 0xFF
	if b2.Data[0] == b1.Data[0] || u != uuidMustParse(t, specUUID) {
		t.Error("BinaryFromUUID results share memory")
	}
}

// The specification's "Explicit Decoding" prose tests, plus the length and
// subtype checks around them.
func TestUUIDExplicitDecoding(t *testing.T) {
	want := uuidMustParse(t, specUUID)
	type call struct {
		rep UUIDRepresentation
		ok  bool
	}
	tests := []struct {
		name    string
		subtype byte
		data    string
		calls   []call
	}{
		{"1 subtype 4 standard order", 4, "00112233445566778899AABBCCDDEEFF", []call{
			{UUIDStandard, true}, // 1.1 asUuid() and 1.2 asUuid(STANDARD)
			{UUIDUnspecified, false},
			{UUIDJavaLegacy, false},
			{UUIDCSharpLegacy, false},
			{UUIDPythonLegacy, false},
		}},
		{"2 subtype 3 java order", 3, "7766554433221100FFEEDDCCBBAA9988", []call{
			{UUIDStandard, false}, // 2.1 asUuid() and 2.2 asUuid(STANDARD)
			{UUIDUnspecified, false},
			{UUIDJavaLegacy, true},
		}},
		{"3 subtype 3 csharp order", 3, "33221100554477668899AABBCCDDEEFF", []call{
			{UUIDStandard, false},
			{UUIDUnspecified, false},
			{UUIDCSharpLegacy, true},
		}},
		{"4 subtype 3 python order", 3, "00112233445566778899AABBCCDDEEFF", []call{
			{UUIDStandard, false},
			{UUIDUnspecified, false},
			{UUIDPythonLegacy, true},
		}},
		{"subtype 4 with 15 bytes", 4, "00112233445566778899AABBCCDDEE", []call{{UUIDStandard, false}}},
		{"subtype 4 with 17 bytes", 4, "00112233445566778899AABBCCDDEEFF00", []call{{UUIDStandard, false}}},
		{"subtype 3 empty", 3, "", []call{{UUIDJavaLegacy, false}, {UUIDCSharpLegacy, false}, {UUIDPythonLegacy, false}}},
		{"generic subtype", 0, "00112233445566778899AABBCCDDEEFF", []call{{UUIDStandard, false}, {UUIDPythonLegacy, false}}},
		{"unknown representation", 4, "00112233445566778899AABBCCDDEEFF", []call{{UUIDRepresentation(7), false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := Binary{Subtype: tt.subtype, Data: uuidMustHex(t, tt.data)}
			for _, c := range tt.calls {
				got, err := b.UUID(c.rep)
				if c.ok {
					if err != nil || got != want {
						t.Errorf("UUID(%v) = %v, %v; want %v", c.rep, got, err, want)
					}
					continue
				}
				var ue *UUIDError
				if !errors.As(err, &ue) {
					t.Errorf("UUID(%v) = %v, %v; want a *UUIDError", c.rep, got, err)
				}
				if got != (UUID{}) {
					t.Errorf("UUID(%v) returned %v with an error", c.rep, got)
				}
			}
		})
	}
}

func TestUUIDErrorMessages(t *testing.T) {
	tests := []struct {
		b    Binary
		rep  UUIDRepresentation
		want string
	}{
		{Binary{Subtype: 3, Data: make([]byte, 16)}, UUIDStandard, "bson: UUID representation standard: binary subtype is 0x03, want 0x04"},
		{Binary{Subtype: 4, Data: make([]byte, 16)}, UUIDJavaLegacy, "bson: UUID representation javaLegacy: binary subtype is 0x04, want 0x03"},
		{Binary{Subtype: 4, Data: make([]byte, 3)}, UUIDStandard, "bson: UUID representation standard: binary data is 3 bytes, want 16"},
		{Binary{Subtype: 4, Data: make([]byte, 16)}, UUIDUnspecified, "bson: UUID representation unspecified: cannot decode a UUID without choosing a representation"},
		{Binary{Subtype: 4, Data: make([]byte, 16)}, UUIDRepresentation(-1), "bson: UUID representation UUIDRepresentation(-1): unknown representation"},
	}
	for _, tt := range tests {
		_, err := tt.b.UUID(tt.rep)
		if err == nil || err.Error() != tt.want {
			t.Errorf("UUID(%v) error = %v, want %q", tt.rep, err, tt.want)
		}
	}
}

// Every UUID survives a round trip through every representation.
func TestUUIDRoundTripAllRepresentations(t *testing.T) {
	for i := 0; i < 50; i++ {
		u := NewUUID()
		for _, rep := range []UUIDRepresentation{UUIDStandard, UUIDCSharpLegacy, UUIDJavaLegacy, UUIDPythonLegacy} {
			b, err := BinaryFromUUID(u, rep)
			if err != nil {
				t.Fatalf("BinaryFromUUID(%v, %v): %v", u, rep, err)
			}
			got, err := b.UUID(rep)
			if err != nil || got != u {
				t.Fatalf("round trip through %v: %v, %v; want %v", rep, got, err, u)
			}
		}
	}
}

func TestNewUUID(t *testing.T) {
	seen := make(map[UUID]bool)
	for i := 0; i < 1000; i++ {
		u := NewUUID()
		if u[6]>>4 != 4 {
			t.Fatalf("%v: version nibble is %d, want 4", u, u[6]>>4)
		}
		if u[8]>>6 != 2 {
			t.Fatalf("%v: variant bits are %b, want 10", u, u[8]>>6)
		}
		if seen[u] {
			t.Fatalf("duplicate random UUID %v", u)
		}
		seen[u] = true
	}
}

func TestParseUUID(t *testing.T) {
	tests := []struct {
		in      string
		want    string // String() of the result; "" for an error
		wantPos int
		wantMsg string
	}{
		{in: specUUID, want: specUUID},
		{in: "00112233-4455-6677-8899-AABBCCDDEEFF", want: specUUID},
		{in: "00112233445566778899aabbccddeeff", want: specUUID},
		{in: "00112233445566778899AABBCCDDEEFF", want: specUUID},
		{in: "00000000-0000-0000-0000-000000000000", want: "00000000-0000-0000-0000-000000000000"},
		{in: "", wantPos: -1, wantMsg: "length is 0 characters"},
		{in: "{00112233-4455-6677-8899-aabbccddeeff}", wantPos: -1, wantMsg: "length is 38"},
		{in: "urn:uuid:00112233-4455-6677-8899-aabbccddeeff", wantPos: -1, wantMsg: "length is 45"},
		{in: "0011223344556677-8899-aabbccddeeff", wantPos: -1, wantMsg: "length is 34"},
		{in: "00112233_4455-6677-8899-aabbccddeeff", wantPos: 8, wantMsg: "'_' found where the canonical form has '-'"},
		{in: "00112233-4455-6677-8899aaabbccddeeff", wantPos: 23, wantMsg: "'a' found where"},
		{in: "001122334-455-6677-8899-aabbccddeeff", wantPos: 8, wantMsg: "'4' found where"},
		{in: "0011223-44455-6677-8899-aabbccddeeff", wantPos: 7, wantMsg: "'-' is not a hexadecimal digit"},
		{in: "00112233-4455-6677-8899-aabbccddeefg", wantPos: 35, wantMsg: "'g' is not a hexadecimal digit"},
		{in: "x0112233445566778899aabbccddeeff", wantPos: 0, wantMsg: "'x' is not"},
		{in: "0011223344556677889\x00aabbccddeeff", wantPos: 19, wantMsg: "byte 0x00 is not"},
		{in: "00112233-4455-6677-8899-aabbccddee\xc3\xa9", wantPos: 34, wantMsg: "byte 0xc3 is not"},
	}
	for _, tt := range tests {
		u, err := ParseUUID(tt.in)
		if tt.want != "" {
			if err != nil || u.String() != tt.want {
				t.Errorf("ParseUUID(%q) = %v, %v; want %s", tt.in, u, err, tt.want)
			}
			continue
		}
		var pe *UUIDParseError
		if !errors.As(err, &pe) {
			t.Errorf("ParseUUID(%q) error = %v (%T), want *UUIDParseError", tt.in, err, err)
			continue
		}
		if pe.Pos != tt.wantPos || !strings.Contains(err.Error(), tt.wantMsg) {
			t.Errorf("ParseUUID(%q) error = %q at pos %d; want pos %d and %q", tt.in, err, pe.Pos, tt.wantPos, tt.wantMsg)
		}
	}
}

func TestUUIDText(t *testing.T) {
	u := uuidMustParse(t, specUUID)
	txt, err := u.MarshalText()
	if err != nil || string(txt) != specUUID {
		t.Errorf("MarshalText = %s, %v", txt, err)
	}
	var back UUID
	if err := back.UnmarshalText(txt); err != nil || back != u {
		t.Errorf("UnmarshalText = %v, %v", back, err)
	}
	if err := back.UnmarshalText([]byte("nope")); err == nil {
		t.Error("UnmarshalText(nope) succeeded")
	}
	if u.IsZero() || !(UUID{}).IsZero() {
		t.Error("IsZero is wrong")
	}
}

func TestUUIDRepresentationNames(t *testing.T) {
	tests := []struct {
		name string
		rep  UUIDRepresentation
	}{
		{"unspecified", UUIDUnspecified},
		{"standard", UUIDStandard},
		{"csharpLegacy", UUIDCSharpLegacy},
		{"javaLegacy", UUIDJavaLegacy},
		{"pythonLegacy", UUIDPythonLegacy},
	}
	for _, tt := range tests {
		if got := tt.rep.String(); got != tt.name {
			t.Errorf("%d.String() = %q, want %q", int(tt.rep), got, tt.name)
		}
		for _, in := range []string{tt.name, strings.ToUpper(tt.name), strings.ToLower(tt.name)} {
			got, err := ParseUUIDRepresentation(in)
			if err != nil || got != tt.rep {
				t.Errorf("ParseUUIDRepresentation(%q) = %v, %v; want %v", in, got, err, tt.rep)
			}
		}
	}
	for _, bad := range []string{"", "charpLegacy", "java", "standard "} {
		if _, err := ParseUUIDRepresentation(bad); err == nil {
			t.Errorf("ParseUUIDRepresentation(%q) succeeded", bad)
		} else if want := "bson: unknown UUID representation " + strconv.Quote(bad) + "; want one of"; !strings.HasPrefix(err.Error(), want) {
			t.Errorf("ParseUUIDRepresentation(%q) error = %v", bad, err)
		}
	}
	if got := UUIDRepresentation(42).String(); got != "UUIDRepresentation(42)" {
		t.Errorf("String of an unknown value = %q", got)
	}
}

func ExampleBinaryFromUUID() {
	u, err := ParseUUID("00112233-4455-6677-8899-aabbccddeeff")
	if err != nil {
		panic(err)
	}
	std, _ := BinaryFromUUID(u, UUIDStandard)
	java, _ := BinaryFromUUID(u, UUIDJavaLegacy)
	fmt.Printf("standard:   subtype %d %x\n", std.Subtype, std.Data)
	fmt.Printf("javaLegacy: subtype %d %x\n", java.Subtype, java.Data)

	// Decoding needs the representation the data was written with.
	back, _ := java.UUID(UUIDJavaLegacy)
	fmt.Println(back)
	_, err = java.UUID(UUIDStandard)
	fmt.Println(err)
	// Output:
	// standard:   subtype 4 00112233445566778899aabbccddeeff
	// javaLegacy: subtype 3 7766554433221100ffeeddccbbaa9988
	// 00112233-4455-6677-8899-aabbccddeeff
	// bson: UUID representation standard: binary subtype is 0x03, want 0x04
}

func ExampleNewUUID() {
	u := NewUUID()
	b := u.Binary() // standard representation, subtype 4
	back, _ := b.UUID(UUIDStandard)
	fmt.Println(back == u, len(u.String()))
	// Output: true 36
}

func FuzzParseUUID(f *testing.F) {
	for _, s := range []string{specUUID, "00112233445566778899AABBCCDDEEFF", "", "{" + specUUID + "}", "00112233_4455-6677-8899-aabbccddeeff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseUUID(s)
		if err != nil {
			var pe *UUIDParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is %T, want *UUIDParseError", err, err)
			}
			if pe.Pos >= len(s) || (pe.Pos < 0 && (len(s) == 32 || len(s) == 36)) {
				t.Fatalf("error position %d is wrong for an input of length %d", pe.Pos, len(s))
			}
			if u != (UUID{}) {
				t.Fatalf("error with non-zero UUID %v", u)
			}
			return
		}
		// Success means one of the two accepted forms, which print back as
		// the canonical lower-case text.
		want := strings.ToLower(s)
		if len(s) == 32 {
			want = want[0:8] + "-" + want[8:12] + "-" + want[12:16] + "-" + want[16:20] + "-" + want[20:]
		}
		if len(s) != 32 && len(s) != 36 || u.String() != want {
			t.Fatalf("ParseUUID(%q) = %s", s, u)
		}
		again, err := ParseUUID(u.String())
		if err != nil || again != u {
			t.Fatalf("round trip of %s = %v, %v", u, again, err)
		}
	})
}
