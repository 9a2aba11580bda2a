package bson

import (
	"strconv"
	"time"
)

// Type is the one-byte BSON element type.
type Type byte

// The BSON element types.
const (
	TypeDouble           Type = 0x01
	TypeString           Type = 0x02
	TypeEmbeddedDocument Type = 0x03
	TypeArray            Type = 0x04
	TypeBinary           Type = 0x05
	TypeUndefined        Type = 0x06 // deprecated
	TypeObjectID         Type = 0x07
	TypeBoolean          Type = 0x08
	TypeDateTime         Type = 0x09
	TypeNull             Type = 0x0A
	TypeRegex            Type = 0x0B
	TypeDBPointer        Type = 0x0C // deprecated
	TypeJavaScript       Type = 0x0D
	TypeSymbol           Type = 0x0E // deprecated
	TypeCodeWithScope    Type = 0x0F // deprecated
	TypeInt32            Type = 0x10
	TypeTimestamp        Type = 0x11
	TypeInt64            Type = 0x12
	TypeDecimal128       Type = 0x13
	TypeMinKey           Type = 0xFF
	TypeMaxKey           Type = 0x7F
)

var typeNames = [...]string{
	TypeDouble:           "double",
	TypeString:           "string",
	TypeEmbeddedDocument: "embedded document",
	TypeArray:            "array",
	TypeBinary:           "binary",
	TypeUndefined:        "undefined",
	TypeObjectID:         "objectID",
	TypeBoolean:          "boolean",
	TypeDateTime:         "UTC datetime",
	TypeNull:             "null",
	TypeRegex:            "regex",
	TypeDBPointer:        "dbPointer",
	TypeJavaScript:       "javascript",
	TypeSymbol:           "symbol",
	TypeCodeWithScope:    "code with scope",
	TypeInt32:            "32-bit integer",
	TypeTimestamp:        "timestamp",
	TypeInt64:            "64-bit integer",
	TypeDecimal128:       "128-bit decimal",
}

// String returns the type's name as the BSON specification spells it.
func (t Type) String() string {
	switch {
	case t == TypeMinKey:
		return "min key"
	case t == TypeMaxKey:
		return "max key"
	case int(t) < len(typeNames) && typeNames[t] != "":
		return typeNames[t]
	}
	return "invalid type 0x" + strconv.FormatUint(uint64(t), 16)
}

// Valid reports whether t is a BSON type this package knows.
func (t Type) Valid() bool {
	return (t >= TypeDouble && t <= TypeDecimal128) || t == TypeMinKey || t == TypeMaxKey
}

// Binary subtypes.
const (
	SubtypeGeneric     byte = 0x00
	SubtypeFunction    byte = 0x01
	SubtypeBinaryOld   byte = 0x02 // deprecated: the payload repeats its length
	SubtypeUUIDOld     byte = 0x03 // deprecated: byte order depends on the legacy driver
	SubtypeUUID        byte = 0x04
	SubtypeMD5         byte = 0x05
	SubtypeEncrypted   byte = 0x06
	SubtypeColumn      byte = 0x07
	SubtypeSensitive   byte = 0x08
	SubtypeVector      byte = 0x09
	SubtypeUserDefined byte = 0x80
)

// D is an ordered BSON document. Use it wherever field order matters, such as
// commands.
type D []E

// E is one element of a D.
type E struct {
	Key   string
	Value any
}

// M is an unordered BSON document. Encoding an M writes its keys in Go's
// random map order; use D when order matters.
type M map[string]any

// A is a BSON array.
type A []any

// Map returns the document as an M. A later duplicate key wins.
func (d D) Map() M {
	m := make(M, len(d))
	for _, e := range d {
		m[e.Key] = e.Value
	}
	return m
}

// Binary is BSON binary data with its subtype.
type Binary struct {
	Subtype byte
	Data    []byte
}

// Undefined is the deprecated BSON undefined value.
type Undefined struct{}

// Null is the BSON null value. Decoding produces a nil interface instead;
// Null exists so that a null can be written explicitly where nil is ambiguous.
type Null struct{}

// DateTime is a BSON UTC datetime: milliseconds since the Unix epoch.
type DateTime int64

// NewDateTimeFromTime converts t to a DateTime, truncating to milliseconds.
func NewDateTimeFromTime(t time.Time) DateTime {
	return DateTime(t.Unix()*1000 + int64(t.Nanosecond())/1e6)
}

// Time returns the DateTime as a time.Time in UTC.
func (d DateTime) Time() time.Time {
	return time.UnixMilli(int64(d)).UTC()
}

// String formats the DateTime as RFC 3339 with milliseconds.
func (d DateTime) String() string {
	return d.Time().Format("2006-01-02T15:04:05.000Z07:00")
}

// Regex is a BSON regular expression. Encoders write Options sorted, as the
// BSON specification requires.
type Regex struct {
	Pattern string
	Options string
}

// String returns the regex in /pattern/options form.
func (r Regex) String() string { return "/" + r.Pattern + "/" + r.Options }

// DBPointer is the deprecated BSON DBPointer type.
type DBPointer struct {
	DB      string
	Pointer ObjectID
}

// JavaScript is BSON JavaScript code.
type JavaScript string

// Symbol is the deprecated BSON symbol type.
type Symbol string

// CodeWithScope is the deprecated BSON JavaScript-code-with-scope type. Scope
// is any document value (D, M, Raw or a struct); decoding sets it to a D.
type CodeWithScope struct {
	Code  JavaScript
	Scope any
}

// Timestamp is the BSON timestamp type used internally by MongoDB
// (replication, cluster time). T is seconds since the epoch, I an ordinal.
type Timestamp struct {
	T uint32
	I uint32
}

// Compare returns -1, 0 or +1 as tp orders before, equal to, or after tp2.
func (tp Timestamp) Compare(tp2 Timestamp) int {
	switch {
	case tp.T < tp2.T || (tp.T == tp2.T && tp.I < tp2.I):
		return -1
	case tp == tp2:
		return 0
	}
	return 1
}

// IsZero reports whether tp is the zero Timestamp.
func (tp Timestamp) IsZero() bool { return tp.T == 0 && tp.I == 0 }

// MinKey is the BSON value that sorts before every other value.
type MinKey struct{}

// MaxKey is the BSON value that sorts after every other value.
type MaxKey struct{}

// ObjectID is the 12-byte BSON ObjectId: a 4-byte big-endian timestamp in
// seconds, a 5-byte process-unique random value, and a 3-byte counter.
type ObjectID [12]byte

// Decimal128 is an IEEE 754-2008 128-bit decimal floating point value in the
// binary integer decimal (BID) encoding BSON uses. h and l are the high and
// low 64 bits.
type Decimal128 struct {
	h, l uint64
}

// NewDecimal128 builds a Decimal128 from its high and low 64 bits.
func NewDecimal128(h, l uint64) Decimal128 { return Decimal128{h: h, l: l} }

// GetBytes returns the high and low 64 bits of d.
func (d Decimal128) GetBytes() (h, l uint64) { return d.h, d.l }
