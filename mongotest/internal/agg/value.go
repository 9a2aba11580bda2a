package agg

import (
	"encoding/binary"
	"math"
	"math/big"
	"strconv"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
	"github.com/mongoscope/mongoscope/mongotest/internal/query"
)

// missing is the value of an absent field: the zero RawValue.
var missing bson.RawValue

// Codes mongod uses that mongoerr does not name.
const (
	codeConversionFailure = 241
	codeBSONObjTooLarge   = 10334
)

// maxDocSize is mongod's limit on one document (16 MiB).
const maxDocSize = 16 << 20

func isMissing(v bson.RawValue) bool { return v.Type == 0 }

// nullish reports whether v is null, undefined or missing, which most
// operators treat alike.
func nullish(v bson.RawValue) bool {
	return v.Type == 0 || v.Type == bson.TypeNull || v.Type == bson.TypeUndefined
}

func int32Value(n int32) bson.RawValue {
	return bson.RawValue{Type: bson.TypeInt32, Value: bson.AppendInt32(nil, n)}
}

func int64Value(n int64) bson.RawValue {
	return bson.RawValue{Type: bson.TypeInt64, Value: bson.AppendInt64(nil, n)}
}

func doubleValue(f float64) bson.RawValue {
	return bson.RawValue{Type: bson.TypeDouble, Value: bson.AppendDouble(nil, f)}
}

func stringValue(s string) bson.RawValue {
	return bson.RawValue{Type: bson.TypeString, Value: bson.AppendString(nil, s)}
}

func boolValue(b bool) bson.RawValue {
	return bson.RawValue{Type: bson.TypeBoolean, Value: bson.AppendBoolean(nil, b)}
}

func dateValue(ms int64) bson.RawValue {
	return bson.RawValue{Type: bson.TypeDateTime, Value: bson.AppendDateTime(nil, ms)}
}

var nullValue = bson.RawValue{Type: bson.TypeNull}

// intValue returns n as an int32 when it fits and as an int64 otherwise,
// the narrowing mongod applies to integer results.
func intValue(n int64) bson.RawValue {
	if n >= math.MinInt32 && n <= math.MaxInt32 {
		return int32Value(int32(n))
	}
	return int64Value(n)
}

// arrayValue encodes vals as an array. Missing values become null, as in
// mongod's array expressions.
func arrayValue(vals []bson.RawValue) (bson.RawValue, error) {
	start, b := bson.AppendDocumentStart(nil)
	for i, v := range vals {
		if isMissing(v) {
			v = nullValue
		}
		b = bson.AppendValueElement(b, bson.ArrayKey(i), v)
	}
	b, err := endDoc(b, start)
	if err != nil {
		return missing, err
	}
	return bson.RawValue{Type: bson.TypeArray, Value: b}, nil
}

// endDoc finishes a document or array begun at start, refusing one over
// mongod's 16 MiB limit so no expression can grow values without bound.
func endDoc(b []byte, start int) ([]byte, error) {
	if len(b)-start+1 > maxDocSize {
		return nil, mongoerr.New(codeBSONObjTooLarge, "BSONObj size: %d is invalid. Size must be between 0 and 16793600(16MB)", len(b)-start+1)
	}
	b, err := bson.AppendDocumentEnd(b, start)
	if err != nil {
		return nil, tooLarge(err)
	}
	return b, nil
}

func docValue(doc bson.Raw) bson.RawValue {
	return bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}
}

func tooLarge(err error) error {
	return mongoerr.New(codeBSONObjTooLarge, "BSONObj size is invalid: %v", err)
}

// compare orders two values as aggregation does: mongod's cross-type sort
// order, with missing below null.
func compare(a, b bson.RawValue) int { return query.Compare(a, b) }

// truthy is aggregation's boolean coercion: false, null, undefined,
// missing and numeric zero are false; everything else is true.
func truthy(v bson.RawValue) bool {
	switch v.Type {
	case 0, bson.TypeNull, bson.TypeUndefined:
		return false
	case bson.TypeBoolean:
		return v.Boolean()
	case bson.TypeInt32:
		return v.Int32() != 0
	case bson.TypeInt64:
		return v.Int64() != 0
	case bson.TypeDouble:
		return v.Double() != 0
	case bson.TypeDecimal128:
		return !v.Decimal128().IsZero()
	}
	return true
}

// typeName is the name $type returns and error messages use.
func typeName(v bson.RawValue) string {
	if v.Type == 0 {
		return "missing"
	}
	return mongoerr.TypeName(v.Type)
}

// arrayValues returns the elements of an array value.
func arrayValues(v bson.RawValue) []bson.RawValue {
	var out []bson.RawValue
	it := bson.Raw(v.Value).Iter()
	for it.Next() {
		out = append(out, it.Value())
	}
	return out
}

// groupKey returns a string that is equal for two values exactly when
// query.Equal says they are, so it can key a map: numbers of any type
// with the same value share a key, and documents and arrays are keyed
// element by element.
func groupKey(dst []byte, v bson.RawValue) []byte { return groupKeyWith(dst, v, nil) }

// SortKeyer is a collation that can give a string's sort key: two strings
// have equal keys exactly when the collation deems them equal.
type SortKeyer interface {
	SortKey(s string) []byte
}

// sortKeyer is the SortKeyer of a collator, or nil.
func sortKeyer(c query.Collator) SortKeyer {
	k, _ := c.(SortKeyer)
	return k
}

// groupKeyWith is groupKey with strings keyed by coll's sort keys (nil:
// by their bytes), so strings the collation deems equal group together.
func groupKeyWith(dst []byte, v bson.RawValue, coll SortKeyer) []byte {
	switch v.Type {
	case 0, bson.TypeNull, bson.TypeUndefined:
		// $group puts missing and null under one null _id; callers turn
		// missing into null before keying, so only undefined lands here
		// besides null, and it sorts with missing, not null.
		if v.Type == bson.TypeNull {
			return append(dst, 'z')
		}
		return append(dst, 'u')
	case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128:
		return numberKey(dst, v)
	case bson.TypeString, bson.TypeSymbol:
		s := stringBytes(v.Value)
		if coll != nil {
			s = coll.SortKey(string(s))
		}
		dst = append(dst, 's')
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(s)))
		return append(dst, s...)
	case bson.TypeEmbeddedDocument, bson.TypeArray:
		dst = append(dst, byte(v.Type))
		it := bson.Raw(v.Value).Iter()
		for it.Next() {
			if v.Type == bson.TypeEmbeddedDocument {
				k := it.KeyBytes()
				dst = binary.LittleEndian.AppendUint32(dst, uint32(len(k)))
				dst = append(dst, k...)
			}
			dst = groupKeyWith(dst, it.Value(), coll)
		}
		return append(dst, 0xff)
	}
	dst = append(dst, 't', byte(v.Type))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(v.Value)))
	return append(dst, v.Value...)
}

func numberKey(dst []byte, v bson.RawValue) []byte {
	switch v.Type {
	case bson.TypeInt32:
		return binary.LittleEndian.AppendUint64(append(dst, 'i'), uint64(int64(v.Int32())))
	case bson.TypeInt64:
		return binary.LittleEndian.AppendUint64(append(dst, 'i'), uint64(v.Int64()))
	case bson.TypeDouble:
		f := v.Double()
		if f == math.Trunc(f) && f >= -(1<<63) && f < 1<<63 {
			return binary.LittleEndian.AppendUint64(append(dst, 'i'), uint64(int64(f)))
		}
		if math.IsNaN(f) {
			return append(dst, 'n')
		}
		if f == 0 { // -0 equals 0
			f = 0
		}
		return binary.LittleEndian.AppendUint64(append(dst, 'f'), math.Float64bits(f))
	}
	// Decimal128: integral values in int64 range share the integer key;
	// others key by coefficient and exponent with trailing zeros removed.
	d := v.Decimal128()
	if d.IsNaN() {
		return append(dst, 'n')
	}
	if inf := d.IsInf(); inf != 0 {
		if d.IsInf() > 0 {
			return append(dst, '+')
		}
		return append(dst, '-')
	}
	bi, exp, err := d.BigInt()
	if err != nil {
		return append(dst, 'n')
	}
	if bi.Sign() == 0 {
		exp = 0
	}
	var rem big.Int
	for exp < 0 {
		var q big.Int
		q.QuoRem(bi, bigTen, &rem)
		if rem.Sign() != 0 {
			break
		}
		bi, exp = &q, exp+1
	}
	for exp > 0 && bi.BitLen() < 64 {
		bi = new(big.Int).Mul(bi, bigTen)
		exp--
	}
	if exp == 0 && bi.IsInt64() {
		return binary.LittleEndian.AppendUint64(append(dst, 'i'), uint64(bi.Int64()))
	}
	s := bi.String() + "e" + strconv.Itoa(exp)
	dst = append(dst, 'd')
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(s)))
	return append(dst, s...)
}

var bigTen = big.NewInt(10)

// stringBytes returns the bytes of an encoded string value without its
// length prefix and NUL, or nil when malformed.
func stringBytes(v []byte) []byte {
	if len(v) < 5 {
		return nil
	}
	n := int(binary.LittleEndian.Uint32(v))
	if n < 1 || n > len(v)-4 {
		return nil
	}
	return v[4 : 4+n-1]
}
