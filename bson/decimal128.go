package bson

import (
	"errors"
	"math/big"
	"math/bits"
	"strconv"
)

// Layout of the BID encoding of an IEEE 754-2008 decimal128, as seen in the
// high 64 bits. The low 64 bits hold only coefficient bits.
const (
	d128SignBit   = uint64(1) << 63
	d128InfBits   = uint64(0x1E) << 58 // combination field 11110
	d128NaNBits   = uint64(0x1F) << 58 // combination field 11111
	d128SpecMask  = uint64(0x1F) << 58
	d128Form2Bits = uint64(0x3) << 61 // combination field starting 11
	d128ExpMask   = uint64(0x3FFF)

	d128ExpBias   = 6176
	d128MinExp    = -6176 // smallest exponent (of the last coefficient digit)
	d128MaxExp    = 6111  // largest exponent
	d128MaxDigits = 34    // coefficient precision in decimal digits

	// 10^34, the first coefficient value that is out of range.
	d128TenTo34Hi = 0x0001ed09bead87c0
	d128TenTo34Lo = 0x378d8e6400000000

	// 10^19 is the largest power of ten that fits in a uint64; coefficients
	// are split around it when converting to and from decimal digits.
	d128TenTo19 = 10000000000000000000
)

// ErrDecimal128NaN is returned by Decimal128.BigInt for a NaN.
var ErrDecimal128NaN = errors.New("bson: Decimal128 is NaN and has no coefficient")

// ErrDecimal128Inf is returned by Decimal128.BigInt for an infinity.
var ErrDecimal128Inf = errors.New("bson: Decimal128 is infinite and has no coefficient")

// Decimal128ParseError reports a string that is not a Decimal128, or whose
// value a Decimal128 cannot hold exactly (overflow, underflow or inexact
// rounding, all of which the BSON Decimal128 specification makes errors).
type Decimal128ParseError struct {
	Input  string // the string given to the parser
	Reason string // what is wrong, with the byte offset where one applies
}

// d128MaxQuoted bounds how much of the input an error message repeats, so
// that a megabyte of digits does not become a megabyte of log line.
const d128MaxQuoted = 64

func (e *Decimal128ParseError) Error() string {
	in := e.Input
	var b []byte
	b = append(b, "bson: cannot parse "...)
	if len(in) > d128MaxQuoted {
		b = strconv.AppendQuote(b, in[:d128MaxQuoted])
		b = append(b, "... ("...)
		b = strconv.AppendInt(b, int64(len(in)), 10)
		b = append(b, " bytes)"...)
	} else {
		b = strconv.AppendQuote(b, in)
	}
	b = append(b, " as Decimal128: "...)
	b = append(b, e.Reason...)
	return string(b)
}

func d128Error(s, reason string) error {
	return &Decimal128ParseError{Input: s, Reason: reason}
}

// d128ExpLimit caps the exponent digits a parser accumulates. Any exponent
// beyond it is out of range whatever the digits before it, since no string
// held in memory has anywhere near 2^52 digits to shift it back.
const d128ExpLimit = int64(1) << 52

// ParseDecimal128 converts a numeric string to a Decimal128, following the
// "From String Representation" rules of the BSON Decimal128 specification:
// an optional sign, then digits with an optional decimal point and an
// optional exponent ("-1.50E+3", ".5", "017."), or one of "Infinity", "Inf"
// and "NaN" in any case. No whitespace is allowed. NaN parses to the
// canonical quiet NaN whatever its sign; "sNaN" and NaN payloads are not
// accepted.
//
// The exponent of the string is kept where possible, so "2.00" and "2.0"
// parse to different Decimal128 values. When it is out of range, the value
// is re-expressed exactly instead: zeros are added to the coefficient for a
// large exponent (clamping), trailing zeros are dropped for a long
// coefficient or a tiny exponent (exact rounding), and a zero takes the
// nearest exponent in range. When that is not possible the value is too
// large, too small or has too many significant digits, and the result is a
// *Decimal128ParseError: the specification forbids inexact rounding.
func ParseDecimal128(s string) (Decimal128, error) {
	i := 0
	neg := false
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		i = 1
	}
	if i == len(s) {
		if len(s) == 0 {
			return Decimal128{}, d128Error(s, "empty string")
		}
		return Decimal128{}, d128Error(s, "sign without digits")
	}
	if c := s[i]; c != '.' && (c < '0' || c > '9') {
		return parseDecimal128Special(s, i, neg)
	}

	// Scan the digits and at most one decimal point, remembering where the
	// significant digits (from the first non-zero one) start and where the
	// last non-zero one is, without storing the digits themselves.
	var (
		sawPoint   bool
		nDigits    int   // all digits, leading zeros included
		firstSig   = -1  // index in s of the first non-zero digit
		nSig       int   // digits from the first non-zero one to the last
		nSigToLast int   // nSig up to and including the last non-zero digit
		fracDigits int64 // digits after the decimal point
	)
scan:
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			nDigits++
			if sawPoint {
				fracDigits++
			}
			if firstSig < 0 && c != '0' {
				firstSig = i
			}
			if firstSig >= 0 {
				nSig++
				if c != '0' {
					nSigToLast = nSig
				}
			}
		case c == '.':
			if sawPoint {
				return Decimal128{}, d128Error(s, "second decimal point at offset "+strconv.Itoa(i))
			}
			sawPoint = true
		default:
			break scan
		}
	}
	if nDigits == 0 {
		return Decimal128{}, d128Error(s, "no digits before offset "+strconv.Itoa(i))
	}

	var exp int64
	if i < len(s) {
		if s[i] != 'e' && s[i] != 'E' {
			return Decimal128{}, d128Error(s, "unexpected "+d128QuoteByte(s[i])+" at offset "+strconv.Itoa(i))
		}
		i++
		expNeg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			expNeg = s[i] == '-'
			i++
		}
		start := i
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			if exp < d128ExpLimit {
				exp = exp*10 + int64(s[i]-'0')
			}
		}
		if i == start {
			if i == len(s) {
				return Decimal128{}, d128Error(s, "exponent without digits at end of string")
			}
			return Decimal128{}, d128Error(s, "exponent without digits: unexpected "+d128QuoteByte(s[i])+" at offset "+strconv.Itoa(i))
		}
		if i < len(s) {
			return Decimal128{}, d128Error(s, "unexpected "+d128QuoteByte(s[i])+" at offset "+strconv.Itoa(i)+" after the exponent")
		}
		if expNeg {
			exp = -exp
		}
	}

	// e is the exponent of the last digit written.
	e := exp - fracDigits
	if firstSig < 0 {
		// A zero is exact at any exponent, so an out-of-range one clamps.
		e = min(max(e, d128MinExp), d128MaxExp)
		return d128Finite(neg, e, 0, 0), nil
	}

	// Drop trailing digits when there are too many or the exponent is too
	// small; only zeros may be dropped, as rounding must be exact.
	trailingZeros := int64(nSig - nSigToLast)
	drop := max(0, int64(nSig)-d128MaxDigits, d128MinExp-e)
	if drop > trailingZeros {
		if int64(nSig)-d128MaxDigits == drop {
			return Decimal128{}, d128Error(s, "more than 34 significant digits (inexact rounding)")
		}
		return Decimal128{}, d128Error(s, "exponent too small: the value underflows Decimal128 (inexact rounding)")
	}
	keep := int64(nSig) - drop
	e += drop

	// Add zeros when the exponent is too large (clamping).
	pad := int64(0)
	if e > d128MaxExp {
		pad = e - d128MaxExp
		if keep+pad > d128MaxDigits {
			return Decimal128{}, d128Error(s, "exponent too large: the value overflows Decimal128")
		}
		e = d128MaxExp
	}

	// At most 34 digits remain. The first n-19 go to a and the last 19 to
	// b, so the coefficient is a*10^19 + b with no 128-bit multiply loop.
	n := int(keep + pad)
	split := n - 19
	var a, b uint64
	j := 0
	for p := firstSig; j < int(keep); p++ {
		c := s[p]
		if c == '.' {
			continue
		}
		if j < split {
			a = a*10 + uint64(c-'0')
		} else {
			b = b*10 + uint64(c-'0')
		}
		j++
	}
	for ; j < n; j++ {
		if j < split {
			a *= 10
		} else {
			b *= 10
		}
	}
	hi, lo := bits.Mul64(a, d128TenTo19)
	lo, carry := bits.Add64(lo, b, 0)
	return d128Finite(neg, e, hi+carry, lo), nil
}

// parseDecimal128Special parses the names of the special values; s[i:] is
// what follows the optional sign.
func parseDecimal128Special(s string, i int, neg bool) (Decimal128, error) {
	rest := s[i:]
	switch {
	case d128EqualFold(rest, "inf"), d128EqualFold(rest, "infinity"):
		if neg {
			return Decimal128{h: d128SignBit | d128InfBits}, nil
		}
		return Decimal128{h: d128InfBits}, nil
	case d128EqualFold(rest, "nan"):
		return Decimal128{h: d128NaNBits}, nil
	}
	return Decimal128{}, d128Error(s, "unexpected "+d128QuoteByte(s[i])+" at offset "+strconv.Itoa(i)+": not a number, Infinity, Inf or NaN")
}

// d128EqualFold reports whether s equals the lower-case ASCII word w in any
// case. Unlike strings.EqualFold it folds ASCII only, so "ınf" (dotless i)
// is not taken for "inf".
func d128EqualFold(s, w string) bool {
	if len(s) != len(w) {
		return false
	}
	for k := 0; k < len(s); k++ {
		if s[k]|0x20 != w[k] {
			return false
		}
	}
	return true
}

// d128QuoteByte names one input byte for an error message.
func d128QuoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return "byte 0x" + strconv.FormatUint(uint64(c), 16)
}

// d128Finite assembles a finite value whose coefficient hi:lo is below 10^34
// and exponent e within [d128MinExp, d128MaxExp].
func d128Finite(neg bool, e int64, hi, lo uint64) Decimal128 {
	h := uint64(e+d128ExpBias)<<49 | hi
	if neg {
		h |= d128SignBit
	}
	return Decimal128{h: h, l: lo}
}

// IsNaN reports whether d is a NaN, quiet or signalling, of either sign.
func (d Decimal128) IsNaN() bool { return d.h&d128SpecMask == d128NaNBits }

// IsInf returns +1 for positive infinity, -1 for negative infinity and 0
// otherwise.
func (d Decimal128) IsInf() int {
	if d.h&d128SpecMask != d128InfBits {
		return 0
	}
	if d.h&d128SignBit != 0 {
		return -1
	}
	return 1
}

// IsZero reports whether d is a zero of any sign and exponent. Encodings
// whose coefficient is out of range count as zero, as IEEE 754-2008
// requires. The zero Decimal128{} is 0E-6176.
func (d Decimal128) IsZero() bool {
	hi, lo, _, ok := d.finite()
	return ok && hi == 0 && lo == 0
}

// finite decodes a finite d into its coefficient and exponent; ok is false
// for NaN and infinities. A coefficient that does not fit in 34 digits, and
// any coefficient in the second ("11") form, is non-canonical and read as 0.
func (d Decimal128) finite() (hi, lo uint64, exp int, ok bool) {
	if d.h&d128Form2Bits == d128Form2Bits {
		if d.h&d128SpecMask >= d128InfBits {
			return 0, 0, 0, false
		}
		// In this form the exponent sits two bits lower and the implied
		// coefficient is at least 2^113 > 10^34, hence zero.
		return 0, 0, int((d.h>>47)&d128ExpMask) - d128ExpBias, true
	}
	exp = int((d.h>>49)&d128ExpMask) - d128ExpBias
	hi = d.h & (1<<49 - 1)
	lo = d.l
	if hi > d128TenTo34Hi || (hi == d128TenTo34Hi && lo >= d128TenTo34Lo) {
		return 0, 0, exp, true
	}
	return hi, lo, exp, true
}

// String formats d as the BSON Decimal128 specification's "To String
// Representation" requires, which is also the Extended JSON $numberDecimal
// form: "NaN", "Infinity", "-Infinity", plain notation such as "-0.0012"
// when the exponent is at most zero and the number not too small, and
// scientific notation such as "1.0E+3" otherwise.
func (d Decimal128) String() string {
	var buf [48]byte
	return string(d.AppendString(buf[:0]))
}

// AppendString appends the String form of d to dst and returns the extended
// buffer. It allocates only if dst must grow.
func (d Decimal128) AppendString(dst []byte) []byte {
	hi, lo, exp, ok := d.finite()
	if !ok {
		if d.IsNaN() {
			return append(dst, "NaN"...)
		}
		if d.h&d128SignBit != 0 {
			return append(dst, "-Infinity"...)
		}
		return append(dst, "Infinity"...)
	}
	if d.h&d128SignBit != 0 {
		dst = append(dst, '-')
	}

	// The coefficient is below 10^34 < 2^113, so hi < 2^49 < 10^19 and one
	// division splits it into at most 15 leading and 19 trailing digits.
	var digitBuf [40]byte
	q, r := bits.Div64(hi, lo, d128TenTo19)
	var digits []byte
	if q != 0 {
		digits = strconv.AppendUint(digitBuf[:0], q, 10)
		n := len(digits)
		digits = digits[:n+19]
		for k := n + 18; k >= n; k-- {
			digits[k] = byte('0' + r%10)
			r /= 10
		}
	} else {
		digits = strconv.AppendUint(digitBuf[:0], r, 10)
	}

	adjusted := exp + len(digits) - 1
	if exp > 0 || adjusted < -6 {
		dst = append(dst, digits[0])
		if len(digits) > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:]...)
		}
		dst = append(dst, 'E')
		if adjusted >= 0 {
			dst = append(dst, '+')
		}
		return strconv.AppendInt(dst, int64(adjusted), 10)
	}
	if exp == 0 {
		return append(dst, digits...)
	}
	// point is how many digits precede the decimal point.
	point := len(digits) + exp
	if point <= 0 {
		dst = append(dst, '0', '.')
		for ; point < 0; point++ {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	dst = append(dst, digits[:point]...)
	dst = append(dst, '.')
	return append(dst, digits[point:]...)
}

// BigInt returns the coefficient and exponent of a finite d, whose value is
// coefficient × 10^exponent. The coefficient carries the sign, so a negative
// zero comes back as 0. It returns ErrDecimal128NaN or ErrDecimal128Inf for
// the special values.
func (d Decimal128) BigInt() (*big.Int, int, error) {
	hi, lo, exp, ok := d.finite()
	if !ok {
		if d.IsNaN() {
			return nil, 0, ErrDecimal128NaN
		}
		return nil, 0, ErrDecimal128Inf
	}
	bi := new(big.Int).SetUint64(hi)
	bi.Lsh(bi, 64)
	bi.Or(bi, new(big.Int).SetUint64(lo))
	if d.h&d128SignBit != 0 {
		bi.Neg(bi)
	}
	return bi, exp, nil
}

// log10of2 bounds digit counts from bit lengths: a number of n bits has
// between floor((n-1)·log10 2)+1 and floor(n·log10 2)+1 decimal digits.
const log10of2 = 0.30102999566398119521

var (
	d128BigTenTo34 = new(big.Int).Exp(big.NewInt(10), big.NewInt(d128MaxDigits), nil)
	d128BigTen     = big.NewInt(10)
)

// ParseDecimal128FromBigInt returns the Decimal128 for bi × 10^exp, with the
// same exact re-expression as ParseDecimal128: trailing zeros of bi are
// dropped or zeros added to fit the 34 digits and exponent range, and zero
// clamps its exponent. It reports false when the value cannot be held
// exactly, or bi is nil. A zero bi gives a positive zero.
func ParseDecimal128FromBigInt(bi *big.Int, exp int) (Decimal128, bool) {
	if bi == nil {
		return Decimal128{}, false
	}
	neg := bi.Sign() < 0
	e := int64(exp)
	if bi.Sign() == 0 {
		e = min(max(e, d128MinExp), d128MaxExp)
		return d128Finite(false, e, 0, 0), true
	}
	abs := new(big.Int).Abs(bi)

	// Drop trailing zeros while the coefficient is too long or the exponent
	// too small, in as few divisions as the digit count allows.
	var rem big.Int
	for abs.Cmp(d128BigTenTo34) >= 0 || e < d128MinExp {
		if e >= d128MaxExp+d128MaxDigits {
			return Decimal128{}, false // e only grows from here: overflow
		}
		// Bounds on the digit count, each loosened by one so that float
		// rounding cannot make them wrong.
		bitLen := int64(abs.BitLen())
		minDigits := int64(float64(bitLen-1) * log10of2)
		maxDigits := int64(float64(bitLen)*log10of2) + 2
		k := max(1, minDigits-d128MaxDigits)
		if e < d128MinExp {
			k = max(k, d128MinExp-e)
		}
		if k >= maxDigits {
			return Decimal128{}, false // dropping every digit of a non-zero
		}
		div := new(big.Int).Exp(d128BigTen, big.NewInt(k), nil)
		q := new(big.Int)
		q.QuoRem(abs, div, &rem)
		if rem.Sign() != 0 {
			return Decimal128{}, false
		}
		abs = q
		e += k
	}
	if e > d128MaxExp {
		pad := e - d128MaxExp
		if pad >= d128MaxDigits {
			return Decimal128{}, false
		}
		abs.Mul(abs, new(big.Int).Exp(d128BigTen, big.NewInt(pad), nil))
		if abs.Cmp(d128BigTenTo34) >= 0 {
			return Decimal128{}, false
		}
		e = d128MaxExp
	}
	var buf [16]byte
	abs.FillBytes(buf[:])
	var hi, lo uint64
	for k := 0; k < 8; k++ {
		hi = hi<<8 | uint64(buf[k])
		lo = lo<<8 | uint64(buf[k+8])
	}
	return d128Finite(neg, e, hi, lo), true
}

// MarshalText implements encoding.TextMarshaler with the String form, so a
// Decimal128 encodes as a JSON string in encoding/json.
func (d Decimal128) MarshalText() ([]byte, error) {
	return d.AppendString(make([]byte, 0, 48)), nil
}

// UnmarshalText implements encoding.TextUnmarshaler with ParseDecimal128,
// so a Decimal128 can be read from JSON strings and command-line flags.
func (d *Decimal128) UnmarshalText(text []byte) error {
	v, err := ParseDecimal128(string(text))
	if err != nil {
		return err
	}
	*d = v
	return nil
}
