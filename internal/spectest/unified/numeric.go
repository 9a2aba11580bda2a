package unified

import (
	"math"
	"math/big"

	"github.com/mongoscope/mongoscope/bson"
)

// isFlexNumber reports the types that compare by value: "When comparing
// numeric types (excluding Decimal128), test runners MUST consider 32-bit,
// 64-bit, and floating point numbers to be equal if their values are
// numerically equivalent."
func isFlexNumber(t bson.Type) bool {
	return t == bson.TypeInt32 || t == bson.TypeInt64 || t == bson.TypeDouble
}

func isNumber(t bson.Type) bool { return isFlexNumber(t) || t == bson.TypeDecimal128 }

// compareNumbers returns -1, 0 or +1 as a is less than, equal to or
// greater than b. int32, int64 and double compare exactly by value (no
// rounding of large int64s through float64). Decimal128 compares only with
// Decimal128, since flexible comparison excludes it. ok is false when the
// two cannot be ordered: NaN against a number, a decimal against another
// type, or malformed bytes. Two NaNs of the same type compare equal, as
// they would as Extended JSON strings.
func compareNumbers(a, b bson.RawValue) (int, bool) {
	if a.Type == bson.TypeDecimal128 || b.Type == bson.TypeDecimal128 {
		if a.Type != b.Type {
			return 0, false
		}
		return compareDecimals(a, b)
	}
	ai, aInt := intOf(a)
	bi, bInt := intOf(b)
	if aInt && bInt {
		switch {
		case ai < bi:
			return -1, true
		case ai > bi:
			return 1, true
		}
		return 0, true
	}
	af, aok := floatOf(a)
	bf, bok := floatOf(b)
	if !aok || !bok {
		return 0, false
	}
	if math.IsNaN(af) || math.IsNaN(bf) {
		if math.IsNaN(af) && math.IsNaN(bf) {
			return 0, true
		}
		return 0, false
	}
	// big.Float holds any int64 and any finite double exactly; infinities
	// compare correctly too.
	return bigOf(a, af).Cmp(bigOf(b, bf)), true
}

func intOf(v bson.RawValue) (int64, bool) {
	switch v.Type {
	case bson.TypeInt32:
		i, ok := v.Int32OK()
		return int64(i), ok
	case bson.TypeInt64:
		return v.Int64OK()
	}
	return 0, false
}

func floatOf(v bson.RawValue) (float64, bool) {
	if v.Type == bson.TypeDouble {
		return v.DoubleOK()
	}
	_, ok := intOf(v)
	return 0, ok // the value is read exactly by bigOf
}

func bigOf(v bson.RawValue, f float64) *big.Float {
	if i, ok := intOf(v); ok {
		return new(big.Float).SetInt64(i)
	}
	return new(big.Float).SetFloat64(f)
}

func compareDecimals(a, b bson.RawValue) (int, bool) {
	ad, ok1 := a.Decimal128OK()
	bd, ok2 := b.Decimal128OK()
	if !ok1 || !ok2 {
		return 0, false
	}
	if ad.IsNaN() || bd.IsNaN() {
		if ad.IsNaN() && bd.IsNaN() {
			return 0, true
		}
		return 0, false
	}
	ai, bi := ad.IsInf(), bd.IsInf()
	if ai != 0 || bi != 0 {
		switch {
		case ai < bi:
			return -1, true
		case ai > bi:
			return 1, true
		}
		if ai != 0 { // same infinity
			return 0, true
		}
	}
	ar, ok1 := ratOf(ad)
	br, ok2 := ratOf(bd)
	if !ok1 || !ok2 {
		return 0, false
	}
	return ar.Cmp(br), true
}

// ratOf returns a finite decimal's exact value.
func ratOf(d bson.Decimal128) (*big.Rat, bool) {
	coef, exp, err := d.BigInt()
	if err != nil {
		return nil, false
	}
	r := new(big.Rat).SetInt(coef)
	if exp == 0 || coef.Sign() == 0 {
		return r, true
	}
	e := exp
	if e < 0 {
		e = -e
	}
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(e)), nil)
	pr := new(big.Rat).SetInt(p)
	if exp > 0 {
		return r.Mul(r, pr), true
	}
	return r.Quo(r, pr), true
}
