package store

import (
	"encoding/binary"
	"math"
	"math/big"

	"github.com/mongoscope/mongoscope/bson"
)

// Tags that start each value's key. Every variable-length payload carries a
// length prefix or a terminator, so keys are prefix-free and a compound key
// is simply the concatenation of its parts.
const (
	tagMinKey    = 'm'
	tagUndefined = 'u'
	tagNull      = 'z'
	tagNaN       = 'N'
	tagInt       = 'I' // integral number within int64
	tagFloat     = 'F' // other value exactly representable as a float64
	tagDecimal   = 'D' // any other decimal128 value
	tagString    = 's' // strings and symbols compare alike
	tagDocument  = 'o'
	tagArray     = 'a'
	tagBinary    = 'B'
	tagObjectID  = 'i'
	tagBool      = 'b'
	tagDate      = 't'
	tagTimestamp = 'T'
	tagRegex     = 'r'
	tagDBPointer = 'p'
	tagCode      = 'j'
	tagCodeScope = 'C'
	tagMaxKey    = 'M'
	tagInvalid   = 'x' // malformed bytes: equal only to the same bytes

	elemMark = 0x01 // precedes each element of a document or array key
	endMark  = 0x00 // ends a document or array key
)

// Key returns the normalized index key of v: two values get the same key
// exactly when mongod's _id index treats them as equal. Numbers compare by
// value whatever their BSON type (NaN equals NaN, -0 equals 0), strings by
// bytes (symbols equal strings), documents by field names, order and
// values, arrays by elements. Malformed bytes get a key of their own.
func Key(v bson.RawValue) string {
	var buf [64]byte
	if k, ok := appendScalarKey(buf[:0], v); ok {
		return string(k)
	}
	return string(appendKey(nil, v, 0))
}

// stringBytes returns the bytes of an encoded string value (int32 length,
// bytes, NUL) that fills b exactly.
func stringBytes(b []byte) ([]byte, bool) {
	if len(b) < 5 {
		return nil, false
	}
	n := int(int32(binary.LittleEndian.Uint32(b)))
	if n < 1 || n != len(b)-4 || b[len(b)-1] != 0 {
		return nil, false
	}
	return b[4 : len(b)-1], true
}

func appendLen(dst []byte, n int) []byte {
	return binary.BigEndian.AppendUint32(dst, uint32(n))
}

func appendInvalid(dst []byte, v bson.RawValue) []byte {
	dst = append(dst, tagInvalid, byte(v.Type))
	dst = appendLen(dst, len(v.Value))
	return append(dst, v.Value...)
}

// appendScalarKey appends the key of a value that holds no document or
// array; ok is false for those and for malformed values. It is apart from
// the recursive appendKey so that a caller's stack buffer does not escape.
func appendScalarKey(dst []byte, v bson.RawValue) (out []byte, ok bool) {
	switch v.Type {
	case bson.TypeMinKey:
		return append(dst, tagMinKey), true
	case bson.TypeMaxKey:
		return append(dst, tagMaxKey), true
	case bson.TypeNull:
		return append(dst, tagNull), true
	case bson.TypeUndefined:
		return append(dst, tagUndefined), true
	case bson.TypeInt32:
		if n, ok := v.Int32OK(); ok {
			return appendIntKey(dst, int64(n)), true
		}
	case bson.TypeInt64:
		if n, ok := v.Int64OK(); ok {
			return appendIntKey(dst, n), true
		}
	case bson.TypeDouble:
		if f, ok := v.DoubleOK(); ok {
			return appendDoubleKey(dst, f), true
		}
	case bson.TypeDecimal128:
		if d, ok := v.Decimal128OK(); ok {
			return appendDecimalKey(dst, d), true
		}
	case bson.TypeString, bson.TypeSymbol:
		// Read in place: the bson accessors return a string, which would
		// allocate on FindByID's path.
		if s, ok := stringBytes(v.Value); ok {
			dst = append(dst, tagString)
			dst = appendLen(dst, len(s))
			return append(dst, s...), true
		}
	case bson.TypeObjectID:
		if len(v.Value) == 12 {
			dst = append(dst, tagObjectID)
			return append(dst, v.Value...), true
		}
	case bson.TypeBoolean:
		if b, ok := v.BooleanOK(); ok {
			if b {
				return append(dst, tagBool, 1), true
			}
			return append(dst, tagBool, 0), true
		}
	case bson.TypeDateTime:
		if ms, ok := v.DateTimeOK(); ok {
			dst = append(dst, tagDate)
			return binary.BigEndian.AppendUint64(dst, uint64(ms)), true
		}
	case bson.TypeTimestamp:
		if t, i, ok := v.TimestampOK(); ok {
			dst = append(dst, tagTimestamp)
			dst = binary.BigEndian.AppendUint32(dst, t)
			return binary.BigEndian.AppendUint32(dst, i), true
		}
	case bson.TypeBinary:
		if b, ok := v.BinaryOK(); ok {
			dst = append(dst, tagBinary, b.Subtype)
			dst = appendLen(dst, len(b.Data))
			return append(dst, b.Data...), true
		}
	case bson.TypeRegex:
		if p, o, ok := v.RegexOK(); ok {
			// Both parts are C strings, which cannot hold a NUL, so the
			// terminators delimit them.
			dst = append(dst, tagRegex)
			dst = append(dst, p...)
			dst = append(dst, 0)
			dst = append(dst, o...)
			return append(dst, 0), true
		}
	case bson.TypeDBPointer:
		if ns, id, ok := v.DBPointerOK(); ok {
			dst = append(dst, tagDBPointer)
			dst = appendLen(dst, len(ns))
			dst = append(dst, ns...)
			return append(dst, id[:]...), true
		}
	case bson.TypeJavaScript:
		if s, ok := v.JavaScriptOK(); ok {
			dst = append(dst, tagCode)
			dst = appendLen(dst, len(s))
			return append(dst, s...), true
		}
	}
	return dst, false
}

// appendKey appends v's key to dst. It never panics: values whose bytes are
// too short or malformed, or nested deeper than bson.MaxDepth, are keyed by
// their raw bytes.
func appendKey(dst []byte, v bson.RawValue, depth int) []byte {
	if out, ok := appendScalarKey(dst, v); ok {
		return out
	}
	switch v.Type {
	case bson.TypeCodeWithScope:
		if depth < bson.MaxDepth {
			if code, scope, ok := v.CodeWithScopeOK(); ok {
				start := len(dst)
				dst = append(dst, tagCodeScope)
				dst = appendLen(dst, len(code))
				dst = append(dst, code...)
				out, ok := appendDocKey(dst, scope, depth+1)
				if ok {
					return out
				}
				dst = out[:start]
			}
		}
	case bson.TypeEmbeddedDocument:
		if depth < bson.MaxDepth {
			if doc, ok := v.DocumentOK(); ok {
				start := len(dst)
				out, ok := appendDocKey(dst, doc, depth+1)
				if ok {
					return out
				}
				dst = out[:start]
			}
		}
	case bson.TypeArray:
		if depth < bson.MaxDepth {
			if arr, ok := v.ArrayOK(); ok {
				start := len(dst)
				dst = append(dst, tagArray)
				it := arr.Iter()
				for it.Next() {
					dst = append(dst, elemMark)
					dst = appendKey(dst, it.Value(), depth+1)
				}
				if it.Err() == nil {
					return append(dst, endMark)
				}
				dst = dst[:start]
			}
		}
	}
	return appendInvalid(dst, v)
}

// appendDocKey appends a document's key; ok is false when doc is malformed,
// in which case the caller truncates what was appended.
func appendDocKey(dst []byte, doc bson.Raw, depth int) ([]byte, bool) {
	dst = append(dst, tagDocument)
	it := doc.Iter()
	for it.Next() {
		name := it.KeyBytes()
		dst = append(dst, elemMark)
		dst = appendLen(dst, len(name))
		dst = append(dst, name...)
		dst = appendKey(dst, it.Value(), depth)
	}
	if it.Err() != nil {
		return dst, false
	}
	return append(dst, endMark), true
}

func appendIntKey(dst []byte, n int64) []byte {
	dst = append(dst, tagInt)
	return binary.BigEndian.AppendUint64(dst, uint64(n))
}

func appendFloatKey(dst []byte, f float64) []byte {
	dst = append(dst, tagFloat)
	return binary.BigEndian.AppendUint64(dst, math.Float64bits(f))
}

// appendDoubleKey keys a double. Integral values within int64's range share
// the integer form so that 1.0 and NumberLong(1) collide; -0 becomes 0.
func appendDoubleKey(dst []byte, f float64) []byte {
	if f != f {
		return append(dst, tagNaN)
	}
	if f >= -(1<<63) && f < 1<<63 && f == math.Trunc(f) {
		return appendIntKey(dst, int64(f))
	}
	return appendFloatKey(dst, f)
}

var (
	bigTen = big.NewInt(10)
)

// appendDecimalKey keys a decimal128 so it collides with an equal int32,
// int64 or double: integral values within int64 take the integer form,
// values a float64 holds exactly take the float form, and the rest a
// canonical decimal form (coefficient without trailing zeros, exponent).
func appendDecimalKey(dst []byte, d bson.Decimal128) []byte {
	if d.IsNaN() {
		return append(dst, tagNaN)
	}
	if s := d.IsInf(); s != 0 {
		return appendFloatKey(dst, math.Inf(s))
	}
	if n, ok := decimalSmallInt(d); ok {
		return appendIntKey(dst, n)
	}
	coef, exp, err := d.BigInt()
	if err != nil {
		// Finite values always have a coefficient; keep a key regardless.
		h, l := d.GetBytes()
		dst = append(dst, tagInvalid, byte(bson.TypeDecimal128))
		dst = binary.BigEndian.AppendUint64(dst, h)
		return binary.BigEndian.AppendUint64(dst, l)
	}
	if coef.Sign() == 0 {
		return appendIntKey(dst, 0)
	}
	// Strip trailing zeros so equal values share one coefficient/exponent
	// pair. The coefficient has at most 34 digits.
	var q, r big.Int
	for {
		q.QuoRem(coef, bigTen, &r)
		if r.Sign() != 0 {
			break
		}
		coef.Set(&q)
		exp++
	}
	if f, ok := decimalExactFloat(coef, exp); ok {
		if f >= -(1<<63) && f < 1<<63 && f == math.Trunc(f) {
			return appendIntKey(dst, int64(f))
		}
		return appendFloatKey(dst, f)
	}
	if exp >= 0 && exp <= 18 {
		v := new(big.Int).Exp(bigTen, big.NewInt(int64(exp)), nil)
		v.Mul(v, coef)
		if v.IsInt64() {
			return appendIntKey(dst, v.Int64())
		}
	}
	dst = append(dst, tagDecimal)
	if coef.Sign() < 0 {
		dst = append(dst, 0)
	} else {
		dst = append(dst, 1)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(int32(exp)))
	mag := new(big.Int).Abs(coef).Bytes()
	dst = appendLen(dst, len(mag))
	return append(dst, mag...)
}

// decimalExactFloat reports the float64 equal to coef×10^exp, if one exists.
func decimalExactFloat(coef *big.Int, exp int) (float64, bool) {
	switch {
	case exp > 308:
		// At least 10^309: beyond every finite float64.
		return 0, false
	case exp >= 0:
		v := new(big.Int).Exp(bigTen, big.NewInt(int64(exp)), nil)
		v.Mul(v, coef)
		f, acc := new(big.Float).SetInt(v).Float64()
		return f, acc == big.Exact && !math.IsInf(f, 0)
	case exp < -48:
		// coef has no factor 10 left and fewer than 35 digits, so 5^-exp
		// cannot divide it: the value is not a binary fraction.
		return 0, false
	default:
		den := new(big.Int).Exp(bigTen, big.NewInt(int64(-exp)), nil)
		return new(big.Rat).SetFrac(coef, den).Float64()
	}
}

// decimalSmallInt decodes the common decimal128 values whose coefficient
// fits 64 bits and whose value is an integer within int64, without
// allocating.
func decimalSmallInt(d bson.Decimal128) (int64, bool) {
	h, l := d.GetBytes()
	if (h>>61)&3 == 3 {
		// The large-coefficient form: NaN, infinities, or a coefficient
		// above 2^113 (non-canonical, hence zero). Let the general path
		// decide.
		return 0, false
	}
	if h&(1<<49-1) != 0 {
		return 0, false
	}
	neg := h>>63 == 1
	exp := int((h>>49)&0x3fff) - 6176
	c := l
	if c == 0 {
		return 0, true
	}
	for exp < 0 && c%10 == 0 {
		c /= 10
		exp++
	}
	if exp < 0 {
		return 0, false
	}
	for ; exp > 0; exp-- {
		if c > math.MaxUint64/10 {
			return 0, false
		}
		c *= 10
	}
	if neg {
		if c > 1<<63 {
			return 0, false
		}
		return int64(-c), true
	}
	if c > math.MaxInt64 {
		return 0, false
	}
	return int64(c), true
}
