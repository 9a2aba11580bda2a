package bson

import (
	"encoding/binary"
	"errors"
	"math"
	"sort"
	"strconv"
)

// This file is the append-style builder. Each AppendXElement writes one
// element (type byte, key, value) onto dst and returns the extended slice;
// each AppendX writes only a value. Nothing here allocates beyond growing dst.
//
// The builder trusts its caller: keys and regex parts must not contain NUL
// bytes (use ValidKey to check untrusted keys). Marshal and the D/M encoders
// check keys and report a *MarshalError instead.

// ErrDocumentTooLarge is returned when a document grows past the 2 GiB that
// a BSON length prefix can express.
var ErrDocumentTooLarge = errors.New("bson: document exceeds the maximum BSON length")

// ValidKey reports whether s can be used as a BSON key or regex component:
// it must not contain a NUL byte.
func ValidKey(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return false
		}
	}
	return true
}

// AppendHeader writes an element's type byte and key.
func AppendHeader(dst []byte, t Type, key string) []byte {
	dst = append(dst, byte(t))
	dst = append(dst, key...)
	return append(dst, 0)
}

// AppendDocumentStart reserves a document's length prefix and returns its
// offset, to be passed to AppendDocumentEnd.
func AppendDocumentStart(dst []byte) (start int, out []byte) {
	return len(dst), append(dst, 0, 0, 0, 0)
}

// AppendDocumentElementStart writes an embedded-document element header and
// reserves the document's length prefix.
func AppendDocumentElementStart(dst []byte, key string) (start int, out []byte) {
	return AppendDocumentStart(AppendHeader(dst, TypeEmbeddedDocument, key))
}

// AppendArrayElementStart writes an array element header and reserves the
// array's length prefix. Array elements use the keys "0", "1", ...; see
// ArrayKey.
func AppendArrayElementStart(dst []byte, key string) (start int, out []byte) {
	return AppendDocumentStart(AppendHeader(dst, TypeArray, key))
}

// AppendDocumentEnd writes the terminating NUL of the document begun at start
// and fills in its length prefix. Arrays end the same way.
func AppendDocumentEnd(dst []byte, start int) ([]byte, error) {
	if start < 0 || start+4 > len(dst) {
		return dst, errors.New("bson: AppendDocumentEnd: start " + strconv.Itoa(start) + " is not a document start in a buffer of length " + strconv.Itoa(len(dst)))
	}
	dst = append(dst, 0)
	n := len(dst) - start
	if n > math.MaxInt32 {
		return dst[:start], ErrDocumentTooLarge
	}
	binary.LittleEndian.PutUint32(dst[start:], uint32(n))
	return dst, nil
}

// smallKeys holds the array keys "0" to "999" so arrays encode without
// formatting integers.
var smallKeys = func() [1000]string {
	var k [1000]string
	for i := range k {
		k[i] = strconv.Itoa(i)
	}
	return k
}()

// ArrayKey returns the key of array index i.
func ArrayKey(i int) string {
	if i >= 0 && i < len(smallKeys) {
		return smallKeys[i]
	}
	return strconv.Itoa(i)
}

func appendInt32(dst []byte, v int32) []byte {
	return append(dst, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
}

func appendUint64(dst []byte, v uint64) []byte {
	return append(dst, byte(v), byte(v>>8), byte(v>>16), byte(v>>24),
		byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56))
}

func appendCString(dst []byte, s string) []byte {
	dst = append(dst, s...)
	return append(dst, 0)
}

// AppendDouble writes a double value.
func AppendDouble(dst []byte, f float64) []byte { return appendUint64(dst, math.Float64bits(f)) }

// AppendString writes a string value (length prefix, bytes, NUL).
func AppendString(dst []byte, s string) []byte {
	dst = appendInt32(dst, int32(len(s)+1))
	dst = append(dst, s...)
	return append(dst, 0)
}

// AppendBinary writes a binary value. Subtype 0x02 gets the extra inner
// length its legacy layout requires.
func AppendBinary(dst []byte, subtype byte, data []byte) []byte {
	if subtype == SubtypeBinaryOld {
		dst = appendInt32(dst, int32(len(data)+4))
		dst = append(dst, subtype)
		dst = appendInt32(dst, int32(len(data)))
		return append(dst, data...)
	}
	dst = appendInt32(dst, int32(len(data)))
	dst = append(dst, subtype)
	return append(dst, data...)
}

// AppendObjectID writes an ObjectID value.
func AppendObjectID(dst []byte, id ObjectID) []byte { return append(dst, id[:]...) }

// AppendBoolean writes a boolean value.
func AppendBoolean(dst []byte, b bool) []byte {
	if b {
		return append(dst, 1)
	}
	return append(dst, 0)
}

// AppendDateTime writes a UTC datetime value in milliseconds since the epoch.
func AppendDateTime(dst []byte, ms int64) []byte { return appendUint64(dst, uint64(ms)) }

// AppendRegex writes a regex value with its options sorted.
func AppendRegex(dst []byte, pattern, options string) []byte {
	dst = appendCString(dst, pattern)
	if sortedOptions(options) {
		return appendCString(dst, options)
	}
	start := len(dst)
	dst = append(dst, options...)
	opts := dst[start:]
	sort.Slice(opts, func(i, j int) bool { return opts[i] < opts[j] })
	return append(dst, 0)
}

func sortedOptions(s string) bool {
	for i := 1; i < len(s); i++ {
		if s[i] < s[i-1] {
			return false
		}
	}
	return true
}

// AppendDBPointer writes a DBPointer value.
func AppendDBPointer(dst []byte, ns string, id ObjectID) []byte {
	return append(AppendString(dst, ns), id[:]...)
}

// AppendJavaScript writes a JavaScript code value.
func AppendJavaScript(dst []byte, code string) []byte { return AppendString(dst, code) }

// AppendSymbol writes a symbol value.
func AppendSymbol(dst []byte, s string) []byte { return AppendString(dst, s) }

// AppendCodeWithScope writes a code-with-scope value; scope is an encoded
// document.
func AppendCodeWithScope(dst []byte, code string, scope []byte) []byte {
	dst = appendInt32(dst, int32(4+4+len(code)+1+len(scope)))
	dst = AppendString(dst, code)
	return append(dst, scope...)
}

// AppendInt32 writes a 32-bit integer value.
func AppendInt32(dst []byte, v int32) []byte { return appendInt32(dst, v) }

// AppendTimestamp writes a timestamp value.
func AppendTimestamp(dst []byte, t, i uint32) []byte {
	return appendUint64(dst, uint64(t)<<32|uint64(i))
}

// AppendInt64 writes a 64-bit integer value.
func AppendInt64(dst []byte, v int64) []byte { return appendUint64(dst, uint64(v)) }

// AppendDecimal128 writes a Decimal128 value.
func AppendDecimal128(dst []byte, d Decimal128) []byte {
	return appendUint64(appendUint64(dst, d.l), d.h)
}

// AppendDoubleElement writes a double element.
func AppendDoubleElement(dst []byte, key string, f float64) []byte {
	return AppendDouble(AppendHeader(dst, TypeDouble, key), f)
}

// AppendStringElement writes a string element.
func AppendStringElement(dst []byte, key, s string) []byte {
	return AppendString(AppendHeader(dst, TypeString, key), s)
}

// AppendDocumentElement writes an embedded document element from encoded bytes.
func AppendDocumentElement(dst []byte, key string, doc []byte) []byte {
	return append(AppendHeader(dst, TypeEmbeddedDocument, key), doc...)
}

// AppendArrayElement writes an array element from encoded bytes.
func AppendArrayElement(dst []byte, key string, arr []byte) []byte {
	return append(AppendHeader(dst, TypeArray, key), arr...)
}

// AppendBinaryElement writes a binary element.
func AppendBinaryElement(dst []byte, key string, subtype byte, data []byte) []byte {
	return AppendBinary(AppendHeader(dst, TypeBinary, key), subtype, data)
}

// AppendUndefinedElement writes a (deprecated) undefined element.
func AppendUndefinedElement(dst []byte, key string) []byte {
	return AppendHeader(dst, TypeUndefined, key)
}

// AppendObjectIDElement writes an ObjectID element.
func AppendObjectIDElement(dst []byte, key string, id ObjectID) []byte {
	return AppendObjectID(AppendHeader(dst, TypeObjectID, key), id)
}

// AppendBooleanElement writes a boolean element.
func AppendBooleanElement(dst []byte, key string, b bool) []byte {
	return AppendBoolean(AppendHeader(dst, TypeBoolean, key), b)
}

// AppendDateTimeElement writes a UTC datetime element.
func AppendDateTimeElement(dst []byte, key string, ms int64) []byte {
	return AppendDateTime(AppendHeader(dst, TypeDateTime, key), ms)
}

// AppendNullElement writes a null element.
func AppendNullElement(dst []byte, key string) []byte {
	return AppendHeader(dst, TypeNull, key)
}

// AppendRegexElement writes a regex element.
func AppendRegexElement(dst []byte, key, pattern, options string) []byte {
	return AppendRegex(AppendHeader(dst, TypeRegex, key), pattern, options)
}

// AppendDBPointerElement writes a (deprecated) DBPointer element.
func AppendDBPointerElement(dst []byte, key, ns string, id ObjectID) []byte {
	return AppendDBPointer(AppendHeader(dst, TypeDBPointer, key), ns, id)
}

// AppendJavaScriptElement writes a JavaScript code element.
func AppendJavaScriptElement(dst []byte, key, code string) []byte {
	return AppendJavaScript(AppendHeader(dst, TypeJavaScript, key), code)
}

// AppendSymbolElement writes a (deprecated) symbol element.
func AppendSymbolElement(dst []byte, key, s string) []byte {
	return AppendSymbol(AppendHeader(dst, TypeSymbol, key), s)
}

// AppendCodeWithScopeElement writes a (deprecated) code-with-scope element.
func AppendCodeWithScopeElement(dst []byte, key, code string, scope []byte) []byte {
	return AppendCodeWithScope(AppendHeader(dst, TypeCodeWithScope, key), code, scope)
}

// AppendInt32Element writes a 32-bit integer element.
func AppendInt32Element(dst []byte, key string, v int32) []byte {
	return AppendInt32(AppendHeader(dst, TypeInt32, key), v)
}

// AppendTimestampElement writes a timestamp element.
func AppendTimestampElement(dst []byte, key string, t, i uint32) []byte {
	return AppendTimestamp(AppendHeader(dst, TypeTimestamp, key), t, i)
}

// AppendInt64Element writes a 64-bit integer element.
func AppendInt64Element(dst []byte, key string, v int64) []byte {
	return AppendInt64(AppendHeader(dst, TypeInt64, key), v)
}

// AppendDecimal128Element writes a Decimal128 element.
func AppendDecimal128Element(dst []byte, key string, d Decimal128) []byte {
	return AppendDecimal128(AppendHeader(dst, TypeDecimal128, key), d)
}

// AppendMinKeyElement writes a min key element.
func AppendMinKeyElement(dst []byte, key string) []byte {
	return AppendHeader(dst, TypeMinKey, key)
}

// AppendMaxKeyElement writes a max key element.
func AppendMaxKeyElement(dst []byte, key string) []byte {
	return AppendHeader(dst, TypeMaxKey, key)
}

// AppendValueElement writes an element holding an already-encoded value.
func AppendValueElement(dst []byte, key string, v RawValue) []byte {
	return append(AppendHeader(dst, v.Type, key), v.Value...)
}
