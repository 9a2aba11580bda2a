package query

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"math"
	"math/big"

	"github.com/mongoscope/mongoscope/bson"
)

// typeMissing is the Type of the zero RawValue, which stands for a field
// that is absent.
const typeMissing bson.Type = 0

// Canonical type brackets, in mongod's sort order. Values of different
// brackets order by bracket alone; values in one bracket compare by value.
const (
	bracketMinKey    = -1
	bracketMissing   = 0 // also undefined
	bracketNull      = 5
	bracketNumber    = 10
	bracketString    = 15 // string and symbol
	bracketObject    = 20
	bracketArray     = 25
	bracketBinary    = 30
	bracketObjectID  = 35
	bracketBool      = 40
	bracketDate      = 45
	bracketTimestamp = 47
	bracketRegex     = 50
	bracketDBPointer = 55
	bracketCode      = 60
	bracketCodeScope = 65
	bracketMaxKey    = 127
)

// bracket returns the canonical sort bracket of t.
func bracket(t bson.Type) int {
	switch t {
	case bson.TypeMinKey:
		return bracketMinKey
	case typeMissing, bson.TypeUndefined:
		return bracketMissing
	case bson.TypeNull:
		return bracketNull
	case bson.TypeDouble, bson.TypeInt32, bson.TypeInt64, bson.TypeDecimal128:
		return bracketNumber
	case bson.TypeString, bson.TypeSymbol:
		return bracketString
	case bson.TypeEmbeddedDocument:
		return bracketObject
	case bson.TypeArray:
		return bracketArray
	case bson.TypeBinary:
		return bracketBinary
	case bson.TypeObjectID:
		return bracketObjectID
	case bson.TypeBoolean:
		return bracketBool
	case bson.TypeDateTime:
		return bracketDate
	case bson.TypeTimestamp:
		return bracketTimestamp
	case bson.TypeRegex:
		return bracketRegex
	case bson.TypeDBPointer:
		return bracketDBPointer
	case bson.TypeJavaScript:
		return bracketCode
	case bson.TypeCodeWithScope:
		return bracketCodeScope
	case bson.TypeMaxKey:
		return bracketMaxKey
	}
	// Unknown type bytes only come from malformed input; order them after
	// everything so Compare stays a total order.
	return 200 + int(t)
}

// Compare orders two BSON values as mongod sorts them: first by type
// bracket (MinKey < undefined/missing < null < numbers < symbol, string <
// object < array < binData < ObjectId < bool < date < timestamp < regex <
// DBPointer < code < code with scope < MaxKey), then by value. Numbers
// compare by value across int32, int64, double and decimal128, NaN below
// every other number. Strings compare by bytes, documents element by
// element (type bracket, then name, then value), arrays element by element,
// binary data by length, then subtype, then bytes. It returns -1, 0 or 1
// and does not allocate except to compare decimal128 values.
func Compare(a, b bson.RawValue) int { return CompareWith(a, b, nil) }

// Collator compares strings by a collation. A nil Collator is mongod's
// simple collation: strings compare by their bytes.
type Collator interface {
	CompareString(a, b string) int
}

// CompareWith is Compare with strings (and symbols), also those inside
// documents and arrays, compared by coll.
func CompareWith(a, b bson.RawValue, coll Collator) int {
	ba, bb := bracket(a.Type), bracket(b.Type)
	if ba != bb {
		return cmp.Compare(ba, bb)
	}
	switch ba {
	case bracketMinKey, bracketMissing, bracketNull, bracketMaxKey:
		return 0
	case bracketNumber:
		return compareNumbers(a, b)
	case bracketString:
		if coll != nil {
			return coll.CompareString(string(stringBytes(a.Value)), string(stringBytes(b.Value)))
		}
		return bytes.Compare(stringBytes(a.Value), stringBytes(b.Value))
	case bracketObject, bracketArray:
		return compareDocs(bson.Raw(a.Value), bson.Raw(b.Value), coll)
	case bracketBinary:
		return compareBinary(a.Value, b.Value)
	case bracketObjectID:
		return bytes.Compare(a.Value, b.Value)
	case bracketBool:
		return cmp.Compare(int(boolByte(a.Value)), int(boolByte(b.Value)))
	case bracketDate:
		x, _ := a.DateTimeOK()
		y, _ := b.DateTimeOK()
		return cmp.Compare(x, y)
	case bracketTimestamp:
		// Timestamps are unsigned: the seconds, then the increment.
		t1, i1, _ := a.TimestampOK()
		t2, i2, _ := b.TimestampOK()
		if t1 != t2 {
			return cmp.Compare(t1, t2)
		}
		return cmp.Compare(i1, i2)
	case bracketRegex:
		p1, o1, _ := a.RegexOK()
		p2, o2, _ := b.RegexOK()
		if c := cmp.Compare(p1, p2); c != 0 {
			return c
		}
		return cmp.Compare(o1, o2)
	case bracketDBPointer:
		n1, id1, _ := a.DBPointerOK()
		n2, id2, _ := b.DBPointerOK()
		if len(n1) != len(n2) {
			return cmp.Compare(len(n1), len(n2))
		}
		if c := cmp.Compare(n1, n2); c != 0 {
			return c
		}
		return id1.Compare(id2)
	case bracketCode:
		return bytes.Compare(stringBytes(a.Value), stringBytes(b.Value))
	case bracketCodeScope:
		c1, s1, _ := a.CodeWithScopeOK()
		c2, s2, _ := b.CodeWithScopeOK()
		if c := cmp.Compare(c1, c2); c != 0 {
			return c
		}
		return compareDocs(s1, s2, nil)
	}
	return bytes.Compare(a.Value, b.Value)
}

// Equal reports whether a and b compare equal, so 1, 1.0 and NumberLong(1)
// are all equal.
func Equal(a, b bson.RawValue) bool { return Compare(a, b) == 0 }

// compareDocs compares two documents (or arrays) element by element.
func compareDocs(a, b bson.Raw, coll Collator) int {
	ia, ib := a.Iter(), b.Iter()
	for {
		na, nb := ia.Next(), ib.Next()
		if !na || !nb {
			switch {
			case na:
				return 1
			case nb:
				return -1
			}
			return 0
		}
		va, vb := ia.Value(), ib.Value()
		if c := cmp.Compare(bracket(va.Type), bracket(vb.Type)); c != 0 {
			return c
		}
		if c := bytes.Compare(ia.KeyBytes(), ib.KeyBytes()); c != 0 {
			return c
		}
		if c := CompareWith(va, vb, coll); c != 0 {
			return c
		}
	}
}

func compareBinary(a, b []byte) int {
	if len(a) < 5 || len(b) < 5 {
		return bytes.Compare(a, b)
	}
	la := binary.LittleEndian.Uint32(a)
	lb := binary.LittleEndian.Uint32(b)
	if la != lb {
		return cmp.Compare(la, lb)
	}
	if a[4] != b[4] {
		return cmp.Compare(int(a[4]), int(b[4]))
	}
	return bytes.Compare(a[5:], b[5:])
}

// stringBytes returns a string value's bytes without its length prefix and
// trailing NUL; malformed values give whatever bytes are there.
func stringBytes(v []byte) []byte {
	if len(v) < 5 {
		return v
	}
	n := int(binary.LittleEndian.Uint32(v))
	if n < 1 || 4+n > len(v) {
		return v[4:]
	}
	return v[4 : 4+n-1]
}

func boolByte(v []byte) byte {
	if len(v) == 0 {
		return 0
	}
	if v[0] != 0 {
		return 1
	}
	return 0
}

// number is a numeric value in the form that compares cheaply.
type number struct {
	kind byte // 'i' integer, 'f' double, 'd' decimal128
	i    int64
	f    float64
	d    bson.Decimal128
}

func toNumber(v bson.RawValue) (number, bool) {
	switch v.Type {
	case bson.TypeInt32:
		x, ok := v.Int32OK()
		return number{kind: 'i', i: int64(x)}, ok
	case bson.TypeInt64:
		x, ok := v.Int64OK()
		return number{kind: 'i', i: x}, ok
	case bson.TypeDouble:
		x, ok := v.DoubleOK()
		return number{kind: 'f', f: x}, ok
	case bson.TypeDecimal128:
		x, ok := v.Decimal128OK()
		return number{kind: 'd', d: x}, ok
	}
	return number{}, false
}

func (n number) isNaN() bool {
	switch n.kind {
	case 'f':
		return math.IsNaN(n.f)
	case 'd':
		return n.d.IsNaN()
	}
	return false
}

func compareNumbers(a, b bson.RawValue) int {
	x, okx := toNumber(a)
	y, oky := toNumber(b)
	if !okx || !oky {
		// Truncated bytes: order them deterministically.
		return bytes.Compare(a.Value, b.Value)
	}
	return compareNum(x, y)
}

func compareNum(x, y number) int {
	nx, ny := x.isNaN(), y.isNaN()
	if nx || ny {
		switch {
		case nx && ny:
			return 0
		case nx:
			return -1
		}
		return 1
	}
	switch {
	case x.kind == 'i' && y.kind == 'i':
		return cmp.Compare(x.i, y.i)
	case x.kind == 'f' && y.kind == 'f':
		return cmpFloat(x.f, y.f)
	case x.kind == 'i' && y.kind == 'f':
		return cmpIntFloat(x.i, y.f)
	case x.kind == 'f' && y.kind == 'i':
		return -cmpIntFloat(y.i, x.f)
	}
	return compareDecimal(x, y)
}

// cmpIntFloat compares an int64 with a double exactly, which a conversion
// of either to the other's type would not (2^53+1 vs 2^53).
func cmpIntFloat(i int64, f float64) int {
	switch {
	case f >= 9223372036854775808.0: // 2^63, above every int64
		return -1
	case f < -9223372036854775808.0:
		return 1
	}
	t := math.Trunc(f)
	if c := cmp.Compare(i, int64(t)); c != 0 {
		return c
	}
	switch frac := f - t; {
	case frac > 0:
		return -1
	case frac < 0:
		return 1
	}
	return 0
}

// compareDecimal compares numbers of which at least one is a decimal128,
// exactly, through big.Rat. NaNs are handled by the caller.
func compareDecimal(x, y number) int {
	ix, iy := x.inf(), y.inf()
	if ix != 0 || iy != 0 {
		return cmp.Compare(ix, iy)
	}
	return x.rat().Cmp(y.rat())
}

// inf returns -1 or 1 for an infinity and 0 otherwise.
func (n number) inf() int {
	switch n.kind {
	case 'f':
		switch {
		case math.IsInf(n.f, 1):
			return 1
		case math.IsInf(n.f, -1):
			return -1
		}
	case 'd':
		return n.d.IsInf()
	}
	return 0
}

func (n number) rat() *big.Rat {
	switch n.kind {
	case 'i':
		return new(big.Rat).SetInt64(n.i)
	case 'f':
		if r := new(big.Rat).SetFloat64(n.f); r != nil {
			return r
		}
		return new(big.Rat)
	}
	coef, exp, err := n.d.BigInt()
	if err != nil {
		return new(big.Rat)
	}
	r := new(big.Rat).SetInt(coef)
	if exp == 0 {
		return r
	}
	e := exp
	if e < 0 {
		e = -e
	}
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(e)), nil)
	if exp > 0 {
		return r.Mul(r, new(big.Rat).SetInt(p))
	}
	return r.Quo(r, new(big.Rat).SetInt(p))
}

// cmpFloat orders by the operators alone, so NaN is neither less nor
// greater than anything; cmp.Compare would rank NaN lowest, which the
// callers handle themselves.
func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
