package bson

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
)

// UUID is a 16-byte RFC 4122 UUID in its standard (network) byte order.
//
// BSON has no UUID type: a UUID is stored as binary data, and the byte order
// depends on the UUIDRepresentation chosen. This package never converts
// between UUID and Binary implicitly; use BinaryFromUUID and Binary.UUID.
type UUID [16]byte

// NewUUID returns a random (version 4) UUID drawn from crypto/rand.
func NewUUID() UUID {
	var u UUID
	// crypto/rand.Read never fails: it crashes the program when the OS
	// cannot supply randomness.
	_, _ = rand.Read(u[:])
	u[6] = u[6]&0x0F | 0x40 // version 4
	u[8] = u[8]&0x3F | 0x80 // RFC 4122 variant
	return u
}

// UUIDParseError reports a string that is not a UUID.
type UUIDParseError struct {
	Input  string // the rejected input, shortened when very long
	Pos    int    // byte offset of the first bad character, or -1 when the length is wrong
	Reason string
}

// Error describes the problem, naming the input and where it went wrong.
func (e *UUIDParseError) Error() string {
	s := "bson: invalid UUID " + strconv.Quote(e.Input) + ": "
	if e.Pos >= 0 {
		s += "byte " + strconv.Itoa(e.Pos) + ": "
	}
	return s + e.Reason
}

// ParseUUID parses a UUID written in the canonical 8-4-4-4-12 form
// ("00112233-4455-6677-8899-aabbccddeeff") or as 32 hexadecimal digits
// without hyphens. Digits may be upper or lower case. The error is a
// *UUIDParseError.
func ParseUUID(s string) (UUID, error) {
	var u UUID
	switch len(s) {
	case 32:
		for i := range u {
			b, err := uuidParseHexByte(s, 2*i)
			if err != nil {
				return UUID{}, err
			}
			u[i] = b
		}
		return u, nil
	case 36:
		// Hyphens sit before bytes 4, 6, 8 and 10.
		p := 0
		for i := range u {
			if i == 4 || i == 6 || i == 8 || i == 10 {
				if s[p] != '-' {
					return UUID{}, &UUIDParseError{Input: oidShortInput(s), Pos: p,
						Reason: oidDescribeByte(s[p]) + " found where the canonical form has '-'"}
				}
				p++
			}
			b, err := uuidParseHexByte(s, p)
			if err != nil {
				return UUID{}, err
			}
			u[i] = b
			p += 2
		}
		return u, nil
	}
	return UUID{}, &UUIDParseError{Input: oidShortInput(s), Pos: -1,
		Reason: "length is " + strconv.Itoa(len(s)) + " characters, want 36 (8-4-4-4-12) or 32 (hex digits only)"}
}

// uuidParseHexByte decodes the two hexadecimal digits at s[p:p+2].
func uuidParseHexByte(s string, p int) (byte, error) {
	hi, ok := oidHexNibble(s[p])
	if !ok {
		return 0, &UUIDParseError{Input: oidShortInput(s), Pos: p, Reason: oidDescribeByte(s[p]) + " is not a hexadecimal digit"}
	}
	lo, ok := oidHexNibble(s[p+1])
	if !ok {
		return 0, &UUIDParseError{Input: oidShortInput(s), Pos: p + 1, Reason: oidDescribeByte(s[p+1]) + " is not a hexadecimal digit"}
	}
	return hi<<4 | lo, nil
}

// String returns u in the canonical lower-case 8-4-4-4-12 form.
func (u UUID) String() string {
	var buf [36]byte
	u.appendCanonical(buf[:0])
	return string(buf[:])
}

func (u UUID) appendCanonical(b []byte) []byte {
	b = hex.AppendEncode(b, u[0:4])
	b = append(b, '-')
	b = hex.AppendEncode(b, u[4:6])
	b = append(b, '-')
	b = hex.AppendEncode(b, u[6:8])
	b = append(b, '-')
	b = hex.AppendEncode(b, u[8:10])
	b = append(b, '-')
	return hex.AppendEncode(b, u[10:16])
}

// IsZero reports whether u is the all-zero (nil) UUID.
func (u UUID) IsZero() bool { return u == UUID{} }

// MarshalText returns u in the canonical 8-4-4-4-12 form.
func (u UUID) MarshalText() ([]byte, error) {
	return u.appendCanonical(make([]byte, 0, 36)), nil
}

// UnmarshalText parses a UUID as ParseUUID does.
func (u *UUID) UnmarshalText(text []byte) error {
	v, err := ParseUUID(string(text))
	if err != nil {
		return err
	}
	*u = v
	return nil
}

// Binary returns u as BSON binary subtype 4 in standard byte order. It is
// BinaryFromUUID(u, UUIDStandard), which cannot fail.
func (u UUID) Binary() Binary {
	data := make([]byte, 16)
	copy(data, u[:])
	return Binary{Subtype: SubtypeUUID, Data: data}
}

// UUIDRepresentation selects how a UUID is stored as BSON binary data, as
// defined by the BSON Binary UUID specification. The zero value is
// UUIDUnspecified, which refuses to convert: an application must choose.
type UUIDRepresentation int

// The UUID representations. Only UUIDStandard uses subtype 4; the legacy
// ones use subtype 3 with the byte order an old driver used.
const (
	// UUIDUnspecified is the absence of a choice; converting with it fails.
	UUIDUnspecified UUIDRepresentation = iota
	// UUIDStandard is RFC 4122 byte order, binary subtype 4.
	UUIDStandard
	// UUIDCSharpLegacy is the C# driver's order, binary subtype 3: bytes
	// 0-3, 4-5 and 6-7 each reversed.
	UUIDCSharpLegacy
	// UUIDJavaLegacy is the Java driver's order, binary subtype 3: bytes 0-7
	// and 8-15 each reversed.
	UUIDJavaLegacy
	// UUIDPythonLegacy is the Python driver's: RFC 4122 byte order, but
	// binary subtype 3.
	UUIDPythonLegacy
)

// uuidRepNames are the names the specification gives each representation,
// which the uuidRepresentation URI option uses too.
var uuidRepNames = [...]string{
	UUIDUnspecified:  "unspecified",
	UUIDStandard:     "standard",
	UUIDCSharpLegacy: "csharpLegacy",
	UUIDJavaLegacy:   "javaLegacy",
	UUIDPythonLegacy: "pythonLegacy",
}

// String returns the representation's name as the specification and the
// uuidRepresentation URI option spell it, such as "javaLegacy".
func (r UUIDRepresentation) String() string {
	if r >= 0 && int(r) < len(uuidRepNames) {
		return uuidRepNames[r]
	}
	return "UUIDRepresentation(" + strconv.Itoa(int(r)) + ")"
}

// ParseUUIDRepresentation returns the representation with the given name
// ("unspecified", "standard", "csharpLegacy", "javaLegacy",
// "pythonLegacy"), as used by the uuidRepresentation URI option. Names are
// matched case-insensitively, as URI option values are.
func ParseUUIDRepresentation(name string) (UUIDRepresentation, error) {
	for r, n := range uuidRepNames {
		if uuidEqualFold(name, n) {
			return UUIDRepresentation(r), nil
		}
	}
	return UUIDUnspecified, &UUIDError{Name: oidShortInput(name)}
}

func uuidEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// UUIDError reports a UUID that cannot be converted to or from BSON binary
// data with the representation asked for, or a representation name that
// ParseUUIDRepresentation does not know.
type UUIDError struct {
	Representation UUIDRepresentation // the representation asked for
	Name           string             // the unknown name given to ParseUUIDRepresentation, if that failed
	Reason         string
}

// Error describes the conversion that failed and why.
func (e *UUIDError) Error() string {
	if e.Name != "" || e.Reason == "" {
		return "bson: unknown UUID representation " + strconv.Quote(e.Name) + "; want one of unspecified, standard, csharpLegacy, javaLegacy, pythonLegacy"
	}
	return "bson: UUID representation " + e.Representation.String() + ": " + e.Reason
}

// BinaryFromUUID stores u as BSON binary data in representation rep: subtype
// 4 for UUIDStandard, subtype 3 in the legacy byte order for the legacy
// representations. UUIDUnspecified and unknown values are errors
// (*UUIDError), as the specification requires.
func BinaryFromUUID(u UUID, rep UUIDRepresentation) (Binary, error) {
	switch rep {
	case UUIDStandard:
		return u.Binary(), nil
	case UUIDCSharpLegacy, UUIDJavaLegacy, UUIDPythonLegacy:
		data := make([]byte, 16)
		copy(data, u[:])
		uuidSwapLegacy(data, rep)
		return Binary{Subtype: SubtypeUUIDOld, Data: data}, nil
	case UUIDUnspecified:
		return Binary{}, &UUIDError{Representation: rep, Reason: "cannot encode a UUID without choosing a representation"}
	}
	return Binary{}, &UUIDError{Representation: rep, Reason: "unknown representation"}
}

// UUID decodes b as a UUID stored in representation rep. UUIDStandard
// requires subtype 4 (the specification's asUuid() with no argument is
// b.UUID(UUIDStandard)); the legacy representations require subtype 3.
// The data must be 16 bytes. UUIDUnspecified is always an error. Errors are
// *UUIDError values that say what did not match.
func (b Binary) UUID(rep UUIDRepresentation) (UUID, error) {
	var want byte
	switch rep {
	case UUIDStandard:
		want = SubtypeUUID
	case UUIDCSharpLegacy, UUIDJavaLegacy, UUIDPythonLegacy:
		want = SubtypeUUIDOld
	case UUIDUnspecified:
		return UUID{}, &UUIDError{Representation: rep, Reason: "cannot decode a UUID without choosing a representation"}
	default:
		return UUID{}, &UUIDError{Representation: rep, Reason: "unknown representation"}
	}
	if b.Subtype != want {
		return UUID{}, &UUIDError{Representation: rep,
			Reason: "binary subtype is 0x" + uuidHexByte(b.Subtype) + ", want 0x" + uuidHexByte(want)}
	}
	if len(b.Data) != 16 {
		return UUID{}, &UUIDError{Representation: rep,
			Reason: "binary data is " + strconv.Itoa(len(b.Data)) + " bytes, want 16"}
	}
	var u UUID
	copy(u[:], b.Data)
	uuidSwapLegacy(u[:], rep)
	return u, nil
}

func uuidHexByte(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&0xF]})
}

// uuidSwapLegacy converts 16 bytes between standard order and rep's legacy
// order in place. Each conversion is a set of reversals, so it is its own
// inverse and serves both directions.
func uuidSwapLegacy(b []byte, rep UUIDRepresentation) {
	switch rep {
	case UUIDCSharpLegacy:
		uuidReverse(b[0:4])
		uuidReverse(b[4:6])
		uuidReverse(b[6:8])
	case UUIDJavaLegacy:
		uuidReverse(b[0:8])
		uuidReverse(b[8:16])
	}
}

func uuidReverse(b []byte) {
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
}
