package agg

import (
	"encoding/hex"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

type opFunc func(o *opExpr, e *env) (bson.RawValue, error)

// opDef describes an operator: how many arguments it takes (max < 0 for
// no limit) and how to evaluate it; compile, when set, parses the
// operand itself.
type opDef struct {
	min, max int
	fn       opFunc
	compile  func(name string, operand bson.RawValue) (expr, error)
}

func (d opDef) checkArity(name string, n int) error {
	switch {
	case d.min == d.max && n != d.min:
		return mongoerr.New(16020, "Expression %s takes exactly %d arguments. %d were passed in.", name, d.min, n)
	case n < d.min:
		return mongoerr.New(16020, "Expression %s takes at least %d arguments. %d were passed in.", name, d.min, n)
	case d.max >= 0 && n > d.max:
		return mongoerr.New(16020, "Expression %s takes at most %d arguments. %d were passed in.", name, d.max, n)
	}
	return nil
}

var operators map[string]opDef

func init() {
	// Assigned in init because $cond's compile function refers back to
	// compileExpr, which reads this table.
	operators = map[string]opDef{
		"$add":         {0, -1, opAdd, nil},
		"$subtract":    {2, 2, opSubtract, nil},
		"$multiply":    {0, -1, opMultiply, nil},
		"$divide":      {2, 2, opDivide, nil},
		"$mod":         {2, 2, opMod, nil},
		"$abs":         {1, 1, opAbs, nil},
		"$eq":          {2, 2, cmpOp(func(c int) bool { return c == 0 }), nil},
		"$ne":          {2, 2, cmpOp(func(c int) bool { return c != 0 }), nil},
		"$gt":          {2, 2, cmpOp(func(c int) bool { return c > 0 }), nil},
		"$gte":         {2, 2, cmpOp(func(c int) bool { return c >= 0 }), nil},
		"$lt":          {2, 2, cmpOp(func(c int) bool { return c < 0 }), nil},
		"$lte":         {2, 2, cmpOp(func(c int) bool { return c <= 0 }), nil},
		"$cmp":         {2, 2, opCmp, nil},
		"$and":         {0, -1, opAnd, nil},
		"$or":          {0, -1, opOr, nil},
		"$not":         {1, 1, opNot, nil},
		"$cond":        {3, 3, opCond, compileCond},
		"$ifNull":      {2, -1, opIfNull, nil},
		"$concat":      {0, -1, opConcat, nil},
		"$toLower":     {1, 1, opCase(strings.ToLower), nil},
		"$toUpper":     {1, 1, opCase(strings.ToUpper), nil},
		"$substrCP":    {3, 3, opSubstrCP, nil},
		"$strLenCP":    {1, 1, opStrLenCP, nil},
		"$size":        {1, 1, opSize, nil},
		"$arrayElemAt": {2, 2, opArrayElemAt, nil},
		"$in":          {2, 2, opIn, nil},
		"$isArray":     {1, 1, opIsArray, nil},
		"$type":        {1, 1, opType, nil},
		"$toString":    {1, 1, convertOp(toString), nil},
		"$toInt":       {1, 1, convertOp(toInt), nil},
		"$toLong":      {1, 1, convertOp(toLong), nil},
		"$toDouble":    {1, 1, convertOp(toDouble), nil},
		"$toBool":      {1, 1, convertOp(toBool), nil},
		"$rand":        {0, 0, nil, compileRand},
		"$let":         {0, 0, nil, compileLetExpr},
	}
}

// unsupportedOperators are expression operators mongod has and this
// package does not: they fail with NotImplemented rather than as unknown.
var unsupportedOperators = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`$acos $acosh $allElementsTrue $anyElementTrue $arrayToObject
		$asin $asinh $atan $atan2 $atanh $avg $binarySize $bsonSize $ceil $concatArrays $convert
		$cos $cosh $dateAdd $dateDiff $dateFromParts $dateFromString $dateSubtract $dateToParts
		$dateToString $dateTrunc $dayOfMonth $dayOfWeek $dayOfYear $degreesToRadians $exp $filter
		$first $firstN $floor $function $hour $indexOfArray $indexOfBytes $indexOfCP
		$isNumber $isoDayOfWeek $isoWeek $isoWeekYear $last $lastN $ln $log $log10 $ltrim
		$map $max $maxN $meta $median $mergeObjects $millisecond $min $minN $minute $month
		$objectToArray $percentile $pow $radiansToDegrees $range $reduce $regexFind
		$regexFindAll $regexMatch $replaceAll $replaceOne $reverseArray $round $rtrim $second
		$setDifference $setEquals $setIntersection $setIsSubset $setUnion $sin $sinh
		$slice $sortArray $split $sqrt $stdDevPop $stdDevSamp $strcasecmp $strLenBytes $substr
		$substrBytes $sum $switch $tan $tanh $toDate $toDecimal $toObjectId $trim $trunc
		$tsIncrement $tsSecond $week $year $zip`) {
		unsupportedOperators[n] = true
	}
}

// number is a non-decimal numeric value: an int32 or int64 in i, or a
// double in f.
type number struct {
	t bson.Type
	i int64
	f float64
}

func (n number) float() float64 {
	if n.t == bson.TypeDouble {
		return n.f
	}
	return float64(n.i)
}

func (n number) value() bson.RawValue {
	switch n.t {
	case bson.TypeDouble:
		return doubleValue(n.f)
	case bson.TypeInt64:
		return int64Value(n.i)
	}
	return int32Value(int32(n.i))
}

// toNumber returns v as a number; ok is false when v is not numeric, and
// err is set for Decimal128, whose arithmetic is not implemented.
func toNumber(op string, v bson.RawValue) (n number, ok bool, err error) {
	switch v.Type {
	case bson.TypeInt32:
		return number{t: bson.TypeInt32, i: int64(v.Int32())}, true, nil
	case bson.TypeInt64:
		return number{t: bson.TypeInt64, i: v.Int64()}, true, nil
	case bson.TypeDouble:
		return number{t: bson.TypeDouble, f: v.Double()}, true, nil
	case bson.TypeDecimal128:
		return number{}, false, decimalUnsupported(op)
	}
	return number{}, false, nil
}

func decimalUnsupported(op string) error {
	return mongoerr.New(mongoerr.NotImplemented, "%s on Decimal128 values is not supported by mongotest", op)
}

// widerInt returns the result type of integer arithmetic on a and b.
func widerInt(a, b bson.Type) bson.Type {
	if a == bson.TypeInt64 || b == bson.TypeInt64 {
		return bson.TypeInt64
	}
	return bson.TypeInt32
}

// intResult narrows an int64 result to int32 when both operands were
// int32 and it fits, as mongod does; an int32 overflow becomes int64.
func intResult(t bson.Type, n int64) number {
	if t == bson.TypeInt32 && n >= math.MinInt32 && n <= math.MaxInt32 {
		return number{t: bson.TypeInt32, i: n}
	}
	return number{t: bson.TypeInt64, i: n}
}

// addNumbers adds with mongod's promotion: int32 overflow to int64,
// int64 overflow to double.
func addNumbers(a, b number) number {
	if a.t == bson.TypeDouble || b.t == bson.TypeDouble {
		return number{t: bson.TypeDouble, f: a.float() + b.float()}
	}
	s := a.i + b.i
	if (s > a.i) != (b.i > 0) {
		return number{t: bson.TypeDouble, f: a.float() + b.float()}
	}
	return intResult(widerInt(a.t, b.t), s)
}

func subNumbers(a, b number) number {
	if a.t == bson.TypeDouble || b.t == bson.TypeDouble {
		return number{t: bson.TypeDouble, f: a.float() - b.float()}
	}
	s := a.i - b.i
	if (s < a.i) != (b.i > 0) {
		return number{t: bson.TypeDouble, f: a.float() - b.float()}
	}
	return intResult(widerInt(a.t, b.t), s)
}

func mulNumbers(a, b number) number {
	if a.t == bson.TypeDouble || b.t == bson.TypeDouble {
		return number{t: bson.TypeDouble, f: a.float() * b.float()}
	}
	if p, ok := mulInt64(a.i, b.i); ok {
		return intResult(widerInt(a.t, b.t), p)
	}
	return number{t: bson.TypeDouble, f: a.float() * b.float()}
}

// mulInt64 multiplies and reports whether the product fits an int64.
func mulInt64(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	neg := (a < 0) != (b < 0)
	ua, ub := absU(a), absU(b)
	hi, lo := bits.Mul64(ua, ub)
	if hi != 0 {
		return 0, false
	}
	if neg {
		if lo > 1<<63 {
			return 0, false
		}
		return int64(-lo), true
	}
	if lo > math.MaxInt64 {
		return 0, false
	}
	return int64(lo), true
}

func absU(a int64) uint64 {
	if a < 0 {
		return uint64(-a) // -MinInt64 wraps to itself, whose uint64 is 1<<63
	}
	return uint64(a)
}

func opAdd(o *opExpr, e *env) (bson.RawValue, error) {
	vals, err := o.evalArgs(e)
	if err != nil {
		return missing, err
	}
	total := number{t: bson.TypeInt32}
	var date int64
	haveDate := false
	for _, v := range vals {
		if nullish(v) {
			return nullValue, nil
		}
		if v.Type == bson.TypeDateTime {
			if haveDate {
				return missing, mongoerr.New(16612, "only one date allowed in an $add expression")
			}
			haveDate, date = true, v.DateTime()
			continue
		}
		n, ok, err := toNumber("$add", v)
		if err != nil {
			return missing, err
		}
		if !ok {
			return missing, mongoerr.New(16554, "$add only supports numeric or date types, not %s", typeName(v))
		}
		total = addNumbers(total, n)
	}
	if haveDate {
		ms, err := dateOffset(date, total)
		if err != nil {
			return missing, err
		}
		return dateValue(ms), nil
	}
	return total.value(), nil
}

// dateOffset adds a number of milliseconds (rounded, as mongod does for
// doubles) to a date.
func dateOffset(date int64, n number) (int64, error) {
	d := n.i
	if n.t == bson.TypeDouble {
		r := math.Round(n.f)
		if math.IsNaN(r) || r < math.MinInt64 || r >= math.MaxInt64 {
			return 0, mongoerr.New(mongoerr.Overflow, "date overflow in $add")
		}
		d = int64(r)
	}
	s := date + d
	if (s > date) != (d > 0) {
		return 0, mongoerr.New(mongoerr.Overflow, "date overflow in $add")
	}
	return s, nil
}

func opSubtract(o *opExpr, e *env) (bson.RawValue, error) {
	vals, err := o.evalArgs(e)
	if err != nil {
		return missing, err
	}
	a, b := vals[0], vals[1]
	if nullish(a) || nullish(b) {
		return nullValue, nil
	}
	na, aNum, err := toNumber("$subtract", a)
	if err != nil {
		return missing, err
	}
	nb, bNum, err := toNumber("$subtract", b)
	if err != nil {
		return missing, err
	}
	switch {
	case aNum && bNum:
		return subNumbers(na, nb).value(), nil
	case a.Type == bson.TypeDateTime && b.Type == bson.TypeDateTime:
		return int64Value(a.DateTime() - b.DateTime()), nil
	case a.Type == bson.TypeDateTime && bNum:
		neg := subNumbers(number{t: bson.TypeInt32}, nb)
		ms, err := dateOffset(a.DateTime(), neg)
		if err != nil {
			return missing, err
		}
		return dateValue(ms), nil
	case b.Type == bson.TypeDateTime:
		return missing, mongoerr.New(16556, "can't $subtract date from %s", typeName(a))
	}
	return missing, mongoerr.New(16556, "can't $subtract %s from %s", typeName(b), typeName(a))
}

func opMultiply(o *opExpr, e *env) (bson.RawValue, error) {
	vals, err := o.evalArgs(e)
	if err != nil {
		return missing, err
	}
	p := number{t: bson.TypeInt32, i: 1}
	for _, v := range vals {
		if nullish(v) {
			return nullValue, nil
		}
		n, ok, err := toNumber("$multiply", v)
		if err != nil {
			return missing, err
		}
		if !ok {
			return missing, mongoerr.New(16555, "$multiply only supports numeric types, not %s", typeName(v))
		}
		p = mulNumbers(p, n)
	}
	return p.value(), nil
}

// twoNumbers evaluates a binary numeric operator's arguments; null says
// one of them is nullish, so the result is null.
func twoNumbers(o *opExpr, e *env, code int32) (a, b number, null bool, err error) {
	vals, err := o.evalArgs(e)
	if err != nil {
		return a, b, false, err
	}
	if nullish(vals[0]) || nullish(vals[1]) {
		return a, b, true, nil
	}
	a, okA, err := toNumber(o.name, vals[0])
	if err != nil {
		return a, b, false, err
	}
	b, okB, err := toNumber(o.name, vals[1])
	if err != nil {
		return a, b, false, err
	}
	if !okA || !okB {
		return a, b, false, mongoerr.New(code, "%s only supports numeric types, not %s and %s", o.name, typeName(vals[0]), typeName(vals[1]))
	}
	return a, b, false, nil
}

func opDivide(o *opExpr, e *env) (bson.RawValue, error) {
	a, b, null, err := twoNumbers(o, e, 16609)
	if err != nil || null {
		return nullValue, err
	}
	if b.float() == 0 {
		return missing, mongoerr.New(16608, "can't $divide by zero")
	}
	return doubleValue(a.float() / b.float()), nil
}

func opMod(o *opExpr, e *env) (bson.RawValue, error) {
	a, b, null, err := twoNumbers(o, e, 16611)
	if err != nil || null {
		return nullValue, err
	}
	if b.float() == 0 {
		return missing, mongoerr.New(16610, "can't $mod by zero")
	}
	if a.t == bson.TypeDouble || b.t == bson.TypeDouble {
		return doubleValue(math.Mod(a.float(), b.float())), nil
	}
	if b.i == -1 { // MinInt64 % -1 is 0; avoid relying on wraparound
		return intResult(widerInt(a.t, b.t), 0).value(), nil
	}
	return intResult(widerInt(a.t, b.t), a.i%b.i).value(), nil
}

func opAbs(o *opExpr, e *env) (bson.RawValue, error) {
	v, err := o.args[0].eval(e)
	if err != nil || nullish(v) {
		return nullValue, err
	}
	n, ok, err := toNumber("$abs", v)
	if err != nil {
		return missing, err
	}
	if !ok {
		return missing, mongoerr.New(28765, "$abs only supports numeric types, not %s", typeName(v))
	}
	switch {
	case n.t == bson.TypeDouble:
		return doubleValue(math.Abs(n.f)), nil
	case n.i == math.MinInt64:
		return missing, mongoerr.New(28680, "can't take $abs of long long min")
	case n.i < 0:
		n.i = -n.i
	}
	return intResult(n.t, n.i).value(), nil
}

func cmpOp(ok func(int) bool) opFunc {
	return func(o *opExpr, e *env) (bson.RawValue, error) {
		vals, err := o.evalArgs(e)
		if err != nil {
			return missing, err
		}
		return boolValue(ok(e.compare(vals[0], vals[1]))), nil
	}
}

func opCmp(o *opExpr, e *env) (bson.RawValue, error) {
	vals, err := o.evalArgs(e)
	if err != nil {
		return missing, err
	}
	return int32Value(int32(e.compare(vals[0], vals[1]))), nil
}

func opAnd(o *opExpr, e *env) (bson.RawValue, error) {
	for _, a := range o.args {
		v, err := a.eval(e)
		if err != nil {
			return missing, err
		}
		if !truthy(v) {
			return boolValue(false), nil
		}
	}
	return boolValue(true), nil
}

func opOr(o *opExpr, e *env) (bson.RawValue, error) {
	for _, a := range o.args {
		v, err := a.eval(e)
		if err != nil {
			return missing, err
		}
		if truthy(v) {
			return boolValue(true), nil
		}
	}
	return boolValue(false), nil
}

func opNot(o *opExpr, e *env) (bson.RawValue, error) {
	v, err := o.args[0].eval(e)
	if err != nil {
		return missing, err
	}
	return boolValue(!truthy(v)), nil
}

// compileCond accepts both $cond forms: [if, then, else] and
// {if, then, else}.
func compileCond(name string, operand bson.RawValue) (expr, error) {
	if operand.Type != bson.TypeEmbeddedDocument {
		x, err := compileOpArgs(name, operand)
		if err != nil {
			return nil, err
		}
		if err := operators[name].checkArity(name, len(x.args)); err != nil {
			return nil, err
		}
		return x, nil
	}
	o := &opExpr{name: name, fn: opCond, args: make([]expr, 3)}
	it := bson.Raw(operand.Value).Iter()
	for it.Next() {
		var i int
		switch k := it.Key(); k {
		case "if":
			i = 0
		case "then":
			i = 1
		case "else":
			i = 2
		default:
			return nil, mongoerr.New(17083, "Unrecognized parameter to $cond: %s", k)
		}
		x, err := compileExpr(it.Value())
		if err != nil {
			return nil, err
		}
		o.args[i] = x
	}
	if err := it.Err(); err != nil {
		return nil, badBSON(err)
	}
	for i, n := range []string{"if", "then", "else"} {
		if o.args[i] == nil {
			return nil, mongoerr.New(int32(17080+i), "Missing '%s' parameter to $cond", n)
		}
	}
	return o, nil
}

// compileOpArgs compiles an operand as an argument list: an array's
// elements, or the operand itself as the only argument.
func compileOpArgs(name string, operand bson.RawValue) (*opExpr, error) {
	o := &opExpr{name: name, fn: operators[name].fn}
	if operand.Type != bson.TypeArray {
		x, err := compileExpr(operand)
		if err != nil {
			return nil, err
		}
		o.args = []expr{x}
		return o, nil
	}
	it := bson.Raw(operand.Value).Iter()
	for it.Next() {
		x, err := compileExpr(it.Value())
		if err != nil {
			return nil, err
		}
		o.args = append(o.args, x)
	}
	if err := it.Err(); err != nil {
		return nil, badBSON(err)
	}
	return o, nil
}

func opCond(o *opExpr, e *env) (bson.RawValue, error) {
	c, err := o.args[0].eval(e)
	if err != nil {
		return missing, err
	}
	if truthy(c) {
		return o.args[1].eval(e)
	}
	return o.args[2].eval(e)
}

func opIfNull(o *opExpr, e *env) (bson.RawValue, error) {
	last := len(o.args) - 1
	for _, a := range o.args[:last] {
		v, err := a.eval(e)
		if err != nil {
			return missing, err
		}
		if !nullish(v) {
			return v, nil
		}
	}
	return o.args[last].eval(e)
}

func opConcat(o *opExpr, e *env) (bson.RawValue, error) {
	var sb strings.Builder
	for _, a := range o.args {
		v, err := a.eval(e)
		if err != nil {
			return missing, err
		}
		if nullish(v) {
			return nullValue, nil
		}
		if v.Type != bson.TypeString {
			return missing, mongoerr.New(16702, "$concat only supports strings, not %s", typeName(v))
		}
		sb.WriteString(v.StringValue())
	}
	return stringValue(sb.String()), nil
}

// coerceToString is the string conversion of $toLower, $toUpper and
// $substrCP: nullish values become "".
func coerceToString(op string, v bson.RawValue) (string, error) {
	switch v.Type {
	case 0, bson.TypeNull, bson.TypeUndefined:
		return "", nil
	case bson.TypeString, bson.TypeSymbol:
		return string(stringBytes(v.Value)), nil
	case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDateTime:
		r, err := toString(op, v)
		return r.StringValue(), err
	}
	return "", mongoerr.New(16007, "can't convert from BSON type %s to String", typeName(v))
}

// opCase maps ASCII letters only, as mongod's $toLower and $toUpper do.
func opCase(f func(string) string) opFunc {
	return func(o *opExpr, e *env) (bson.RawValue, error) {
		v, err := o.args[0].eval(e)
		if err != nil {
			return missing, err
		}
		s, err := coerceToString(o.name, v)
		if err != nil {
			return missing, err
		}
		b := []byte(s)
		for i, c := range b {
			if c < utf8.RuneSelf {
				b[i] = f(string(c))[0]
			}
		}
		return stringValue(string(b)), nil
	}
}

// int32Arg reads an integral numeric argument that fits an int32.
func int32Arg(v bson.RawValue) (n int32, numeric, ok bool) {
	switch v.Type {
	case bson.TypeInt32:
		return v.Int32(), true, true
	case bson.TypeInt64:
		i := v.Int64()
		return int32(i), true, i >= math.MinInt32 && i <= math.MaxInt32
	case bson.TypeDouble:
		f := v.Double()
		return int32(f), true, f == math.Trunc(f) && f >= math.MinInt32 && f <= math.MaxInt32
	case bson.TypeDecimal128:
		return 0, true, false
	}
	return 0, false, false
}

func opSubstrCP(o *opExpr, e *env) (bson.RawValue, error) {
	vals, err := o.evalArgs(e)
	if err != nil {
		return missing, err
	}
	s, err := coerceToString(o.name, vals[0])
	if err != nil {
		return missing, err
	}
	start, num, ok := int32Arg(vals[1])
	switch {
	case !num:
		return missing, mongoerr.New(34450, "$substrCP: starting index must be a numeric type (is BSON type %s)", typeName(vals[1]))
	case !ok:
		return missing, mongoerr.New(34451, "$substrCP: starting index cannot be represented as a 32-bit integral value: %s", vals[1])
	case start < 0:
		return missing, mongoerr.New(34455, "$substrCP: the starting index must be nonnegative integer.")
	}
	length, num, ok := int32Arg(vals[2])
	switch {
	case !num:
		return missing, mongoerr.New(34452, "$substrCP: length must be a numeric type (is BSON type %s)", typeName(vals[2]))
	case !ok:
		return missing, mongoerr.New(34453, "$substrCP: length cannot be represented as a 32-bit integral value: %s", vals[2])
	case length < 0:
		return missing, mongoerr.New(34454, "$substrCP: length must be a nonnegative integer.")
	}
	r := []rune(s)
	if int(start) >= len(r) {
		return stringValue(""), nil
	}
	end := len(r)
	if int(length) < end-int(start) {
		end = int(start) + int(length)
	}
	return stringValue(string(r[start:end])), nil
}

func opStrLenCP(o *opExpr, e *env) (bson.RawValue, error) {
	v, err := o.args[0].eval(e)
	if err != nil {
		return missing, err
	}
	if v.Type != bson.TypeString {
		return missing, mongoerr.New(34471, "$strLenCP requires a string argument, found: %s", typeName(v))
	}
	return intValue(int64(utf8.RuneCountInString(v.StringValue()))), nil
}

func opSize(o *opExpr, e *env) (bson.RawValue, error) {
	v, err := o.args[0].eval(e)
	if err != nil {
		return missing, err
	}
	if v.Type != bson.TypeArray {
		return missing, mongoerr.New(17124, "The argument to $size must be an array. Type of input: %s", typeName(v))
	}
	return intValue(int64(len(arrayValues(v)))), nil
}

func opArrayElemAt(o *opExpr, e *env) (bson.RawValue, error) {
	vals, err := o.evalArgs(e)
	if err != nil {
		return missing, err
	}
	arr, idx := vals[0], vals[1]
	if nullish(arr) || nullish(idx) {
		return nullValue, nil
	}
	if arr.Type != bson.TypeArray {
		return missing, mongoerr.New(28689, "$arrayElemAt's first argument must be an array, but is %s", typeName(arr))
	}
	i, num, ok := int32Arg(idx)
	if !num {
		return missing, mongoerr.New(28690, "$arrayElemAt's second argument must be a numeric value, but is %s", typeName(idx))
	}
	if !ok {
		return missing, mongoerr.New(28691, "$arrayElemAt's second argument must be representable as a 32-bit integer: %s", idx)
	}
	elems := arrayValues(arr)
	n := int(i)
	if n < 0 {
		n += len(elems)
	}
	if n < 0 || n >= len(elems) {
		return missing, nil
	}
	return elems[n], nil
}

func opIn(o *opExpr, e *env) (bson.RawValue, error) {
	vals, err := o.evalArgs(e)
	if err != nil {
		return missing, err
	}
	if vals[1].Type != bson.TypeArray {
		return missing, mongoerr.New(40081, "$in requires an array as a second argument, found: %s", typeName(vals[1]))
	}
	for _, el := range arrayValues(vals[1]) {
		if e.compare(vals[0], el) == 0 {
			return boolValue(true), nil
		}
	}
	return boolValue(false), nil
}

func opIsArray(o *opExpr, e *env) (bson.RawValue, error) {
	v, err := o.args[0].eval(e)
	if err != nil {
		return missing, err
	}
	return boolValue(v.Type == bson.TypeArray), nil
}

func opType(o *opExpr, e *env) (bson.RawValue, error) {
	v, err := o.args[0].eval(e)
	if err != nil {
		return missing, err
	}
	return stringValue(typeName(v)), nil
}

// convertOp wraps a conversion: nullish input gives null, as $convert
// without onNull does.
func convertOp(f func(op string, v bson.RawValue) (bson.RawValue, error)) opFunc {
	return func(o *opExpr, e *env) (bson.RawValue, error) {
		v, err := o.args[0].eval(e)
		if err != nil {
			return missing, err
		}
		if nullish(v) {
			return nullValue, nil
		}
		return f(o.name, v)
	}
}

func unsupportedConversion(v bson.RawValue, to string) error {
	return mongoerr.New(codeConversionFailure, "Unsupported conversion from %s to %s in $convert with no onError value", typeName(v), to)
}

func toString(op string, v bson.RawValue) (bson.RawValue, error) {
	switch v.Type {
	case bson.TypeString:
		return v, nil
	case bson.TypeSymbol:
		return stringValue(string(stringBytes(v.Value))), nil
	case bson.TypeInt32:
		return stringValue(strconv.FormatInt(int64(v.Int32()), 10)), nil
	case bson.TypeInt64:
		return stringValue(strconv.FormatInt(v.Int64(), 10)), nil
	case bson.TypeDouble:
		return stringValue(formatDouble(v.Double())), nil
	case bson.TypeDecimal128:
		return stringValue(v.Decimal128().String()), nil
	case bson.TypeBoolean:
		return stringValue(strconv.FormatBool(v.Boolean())), nil
	case bson.TypeObjectID:
		id := v.ObjectID()
		return stringValue(hex.EncodeToString(id[:])), nil
	case bson.TypeDateTime:
		t := time.UnixMilli(v.DateTime()).UTC()
		return stringValue(t.Format("2006-01-02T15:04:05.000Z")), nil
	}
	return missing, unsupportedConversion(v, "string")
}

func formatDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// integral converts v to an integer in [lo, hi] for $toInt and $toLong.
func integral(v bson.RawValue, lo, hi int64, bits int, to string) (int64, error) {
	switch v.Type {
	case bson.TypeInt32:
		return int64(v.Int32()), nil
	case bson.TypeInt64:
		n := v.Int64()
		if n < lo || n > hi {
			return 0, mongoerr.New(codeConversionFailure, "Conversion would overflow target type in $convert with no onError value: %d", n)
		}
		return n, nil
	case bson.TypeDouble:
		f := v.Double()
		if math.IsNaN(f) {
			return 0, mongoerr.New(codeConversionFailure, "Attempt to convert NaN value to integer type in $convert with no onError value")
		}
		t := math.Trunc(f)
		if t < float64(lo) || t >= -float64(lo) {
			return 0, mongoerr.New(codeConversionFailure, "Conversion would overflow target type in $convert with no onError value: %s", formatDouble(f))
		}
		return int64(t), nil
	case bson.TypeBoolean:
		if v.Boolean() {
			return 1, nil
		}
		return 0, nil
	case bson.TypeString:
		s := v.StringValue()
		n, err := strconv.ParseInt(s, 10, bits)
		if err != nil {
			return 0, mongoerr.New(codeConversionFailure, "Failed to parse number '%s' in $convert with no onError value", s)
		}
		return n, nil
	case bson.TypeDecimal128:
		return 0, decimalUnsupported("$to" + to)
	}
	return 0, unsupportedConversion(v, to)
}

func toInt(op string, v bson.RawValue) (bson.RawValue, error) {
	n, err := integral(v, math.MinInt32, math.MaxInt32, 32, "int")
	if err != nil {
		return missing, err
	}
	return int32Value(int32(n)), nil
}

func toLong(op string, v bson.RawValue) (bson.RawValue, error) {
	if v.Type == bson.TypeDateTime {
		return int64Value(v.DateTime()), nil
	}
	n, err := integral(v, math.MinInt64, math.MaxInt64, 64, "long")
	if err != nil {
		return missing, err
	}
	return int64Value(n), nil
}

func toDouble(op string, v bson.RawValue) (bson.RawValue, error) {
	switch v.Type {
	case bson.TypeDouble:
		return v, nil
	case bson.TypeInt32:
		return doubleValue(float64(v.Int32())), nil
	case bson.TypeInt64:
		return doubleValue(float64(v.Int64())), nil
	case bson.TypeBoolean:
		if v.Boolean() {
			return doubleValue(1), nil
		}
		return doubleValue(0), nil
	case bson.TypeDateTime:
		return doubleValue(float64(v.DateTime())), nil
	case bson.TypeString:
		s := v.StringValue()
		f, err := strconv.ParseFloat(s, 64)
		if err != nil && !isRangeErr(err) {
			return missing, mongoerr.New(codeConversionFailure, "Failed to parse number '%s' in $convert with no onError value", s)
		}
		return doubleValue(f), nil
	case bson.TypeDecimal128:
		return missing, decimalUnsupported(op)
	}
	return missing, unsupportedConversion(v, "double")
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func toBool(op string, v bson.RawValue) (bson.RawValue, error) {
	switch v.Type {
	case bson.TypeBoolean:
		return v, nil
	case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128:
		return boolValue(truthy(v)), nil
	case bson.TypeString, bson.TypeObjectID, bson.TypeDateTime, bson.TypeTimestamp,
		bson.TypeEmbeddedDocument, bson.TypeArray, bson.TypeBinary, bson.TypeRegex,
		bson.TypeMinKey, bson.TypeMaxKey, bson.TypeJavaScript, bson.TypeSymbol:
		return boolValue(true), nil
	}
	return missing, unsupportedConversion(v, "bool")
}
