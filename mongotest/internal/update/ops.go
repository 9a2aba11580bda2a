package update

import (
	"math"
	"math/big"
	"slices"
	"strconv"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
	"github.com/mongoscope/mongoscope/mongotest/internal/query"
)

// applyAt applies one operator at one resolved place.
func applyAt(t target, o op, now time.Time) error {
	switch o.name {
	case "$set", "$setOnInsert":
		t.set(o.arg)
	case "$unset":
		if t.exists() {
			t.parent.remove(t.idx)
		}
	case "$inc", "$mul":
		return arith(t, o)
	case "$min", "$max":
		if !t.exists() {
			t.set(o.arg)
			return nil
		}
		c := query.CompareWith(o.arg, t.current(), o.coll)
		if (o.name == "$min" && c < 0) || (o.name == "$max" && c > 0) {
			t.set(o.arg)
		}
	case "$currentDate":
		if d, ok := o.arg.DocumentOK(); ok && d.Lookup("$type").StringValue() == "timestamp" {
			t.set(bson.RawValue{Type: bson.TypeTimestamp, Value: bson.AppendTimestamp(nil, uint32(now.Unix()), 1)})
		} else {
			t.set(bson.RawValue{Type: bson.TypeDateTime, Value: bson.AppendDateTime(nil, now.UnixMilli())})
		}
	case "$push", "$addToSet":
		return pushAt(t, o)
	case "$pull", "$pullAll":
		return pullAt(t, o)
	case "$pop":
		return popAt(t, o)
	}
	return nil
}

// elements returns the array at t (nil when missing), or an error naming
// the field when it is not an array.
func elements(t target, o op) ([]bson.RawValue, bool, error) {
	if !t.exists() {
		return nil, false, nil
	}
	cur := t.current()
	if cur.Type != bson.TypeArray {
		return nil, true, mongoerr.New(mongoerr.BadValue, "The field '%s' must be an array but is of type %s in document", t.keyName(), typeName(cur.Type))
	}
	vals, err := cur.Array().Values()
	if err != nil {
		return nil, true, mongoerr.New(mongoerr.BadValue, "field '%s': %v", t.keyName(), err)
	}
	return vals, true, nil
}

func setArray(t target, vals []bson.RawValue) {
	start, b := bson.AppendDocumentStart(nil)
	for i, v := range vals {
		b = bson.AppendValueElement(b, bson.ArrayKey(i), v)
	}
	b, _ = bson.AppendDocumentEnd(b, start)
	t.set(bson.RawValue{Type: bson.TypeArray, Value: b})
}

func pushAt(t target, o op) error {
	vals, _, err := elements(t, o)
	if err != nil {
		return err
	}
	p := o.push
	if o.name == "$addToSet" {
		for _, v := range p.each {
			if !slices.ContainsFunc(vals, func(x bson.RawValue) bool { return query.CompareWith(x, v, o.coll) == 0 }) {
				vals = append(vals, v)
			}
		}
		if vals == nil {
			vals = []bson.RawValue{}
		}
		setArray(t, vals)
		return nil
	}
	pos := int64(len(vals))
	if p.hasPos {
		pos = p.position
		if pos < 0 {
			pos = max(0, int64(len(vals))+pos)
		}
		pos = min(pos, int64(len(vals)))
	}
	vals = slices.Insert(slices.Clone(vals), int(pos), p.each...)
	switch {
	case p.sort != nil:
		slices.SortStableFunc(vals, func(a, b bson.RawValue) int {
			return p.sort.Compare(docOf(a), docOf(b))
		})
	case p.sortDir != 0:
		slices.SortStableFunc(vals, func(a, b bson.RawValue) int { return p.sortDir * query.CompareWith(a, b, o.coll) })
	}
	if p.hasSlice {
		n := int64(len(vals))
		switch {
		case p.slice >= 0:
			vals = vals[:min(n, p.slice)]
		default:
			vals = vals[max(0, n+p.slice):]
		}
	}
	setArray(t, vals)
	return nil
}

// docOf returns v as a document for a field sort; other values sort as
// documents without the field.
func docOf(v bson.RawValue) bson.Raw {
	if d, ok := v.DocumentOK(); ok {
		return d
	}
	return bson.Raw{5, 0, 0, 0, 0}
}

func pullAt(t target, o op) error {
	if !t.exists() {
		return nil
	}
	if t.current().Type != bson.TypeArray {
		return mongoerr.New(mongoerr.BadValue, "Cannot apply %s to a non-array value", o.name)
	}
	vals, _, err := elements(t, o)
	if err != nil {
		return err
	}
	var remove func(bson.RawValue) bool
	if o.name == "$pullAll" {
		all, _ := o.arg.Array().Values()
		remove = func(v bson.RawValue) bool {
			return slices.ContainsFunc(all, func(x bson.RawValue) bool { return query.CompareWith(x, v, o.coll) == 0 })
		}
	} else {
		p := o.pull
		remove = func(v bson.RawValue) bool {
			switch {
			case p.matcher == nil:
				return query.CompareWith(v, p.value, o.coll) == 0
			case p.elemDoc:
				d, ok := v.DocumentOK()
				return ok && p.matcher.Match(d)
			}
			return p.matcher.Match(wrap(v))
		}
	}
	kept := vals[:0:0]
	for _, v := range vals {
		if !remove(v) {
			kept = append(kept, v)
		}
	}
	if len(kept) != len(vals) {
		setArray(t, kept)
	}
	return nil
}

func popAt(t target, o op) error {
	if !t.exists() {
		return nil
	}
	cur := t.current()
	if cur.Type != bson.TypeArray {
		return mongoerr.New(mongoerr.TypeMismatch, "Path '%s' contains an element of non-array type '%s'", t.keyName(), typeName(cur.Type))
	}
	vals, _, err := elements(t, o)
	if err != nil || len(vals) == 0 {
		return err
	}
	if f, _ := o.arg.AsFloat64OK(); f == 1 || (o.arg.Type == bson.TypeDecimal128 && o.arg.Decimal128().String() == "1") {
		vals = vals[:len(vals)-1]
	} else {
		vals = vals[1:]
	}
	setArray(t, vals)
	return nil
}

func isNumber(v bson.RawValue) bool {
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128:
		return true
	}
	return false
}

// arith applies $inc or $mul with mongod's type promotion: int32 widens to
// int64 on overflow, any double makes a double, any decimal a decimal, and
// an int64 overflow is an error.
func arith(t target, o op) error {
	if !t.exists() {
		if o.name == "$inc" {
			t.set(o.arg)
			return nil
		}
		// $mul on a missing field sets 0 of the argument's type.
		t.set(zeroLike(o.arg))
		return nil
	}
	cur := t.current()
	if !isNumber(cur) {
		verb := map[string]string{"$inc": "$inc", "$mul": "$mul"}[o.name]
		return mongoerr.New(mongoerr.TypeMismatch, "Cannot apply %s to a value of non-numeric type. The field '%s' has a value of non-numeric type %s", verb, t.keyName(), typeName(cur.Type))
	}
	res, ok := compute(o.name == "$mul", cur, o.arg)
	if !ok {
		return mongoerr.New(mongoerr.BadValue, "Failed to apply %s operations to current value (%s) for field '%s': the result overflows a 64-bit integer", o.name, cur, t.keyName())
	}
	t.set(res)
	return nil
}

func zeroLike(v bson.RawValue) bson.RawValue {
	switch v.Type {
	case bson.TypeInt32:
		return bson.RawValue{Type: v.Type, Value: bson.AppendInt32(nil, 0)}
	case bson.TypeInt64:
		return bson.RawValue{Type: v.Type, Value: bson.AppendInt64(nil, 0)}
	case bson.TypeDecimal128:
		d, _ := bson.ParseDecimal128("0")
		return bson.RawValue{Type: v.Type, Value: bson.AppendDecimal128(nil, d)}
	}
	return bson.RawValue{Type: bson.TypeDouble, Value: bson.AppendDouble(nil, 0)}
}

func compute(mul bool, a, b bson.RawValue) (bson.RawValue, bool) {
	switch {
	case a.Type == bson.TypeDecimal128 || b.Type == bson.TypeDecimal128:
		x, y := toBigDecimal(a), toBigDecimal(b)
		if x == nil || y == nil {
			return decimalValue(nanDecimal()), true
		}
		var coef *big.Int
		var exp int
		if mul {
			coef, exp = new(big.Int).Mul(x.coef, y.coef), x.exp+y.exp
		} else {
			e := min(x.exp, y.exp)
			cx := new(big.Int).Mul(x.coef, pow10(x.exp-e))
			cy := new(big.Int).Mul(y.coef, pow10(y.exp-e))
			coef, exp = cx.Add(cx, cy), e
		}
		// Keep at most the 34 digits decimal128 holds, dropping the
		// least significant ones.
		ten := big.NewInt(10)
		limit := pow10(34)
		for new(big.Int).Abs(coef).Cmp(limit) >= 0 {
			coef.Quo(coef, ten)
			exp++
		}
		d, ok := bson.ParseDecimal128FromBigInt(coef, exp)
		if !ok {
			return bson.RawValue{}, false
		}
		return decimalValue(d), true
	case a.Type == bson.TypeDouble || b.Type == bson.TypeDouble:
		x, _ := a.AsFloat64OK()
		y, _ := b.AsFloat64OK()
		r := x + y
		if mul {
			r = x * y
		}
		return bson.RawValue{Type: bson.TypeDouble, Value: bson.AppendDouble(nil, r)}, true
	}
	x, _ := a.AsInt64OK()
	y, _ := b.AsInt64OK()
	var r int64
	if mul {
		if x != 0 && y != 0 {
			r = x * y
			if r/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64) {
				return bson.RawValue{}, false
			}
		}
	} else {
		r = x + y
		if (y > 0 && r < x) || (y < 0 && r > x) {
			return bson.RawValue{}, false
		}
	}
	if a.Type == bson.TypeInt32 && b.Type == bson.TypeInt32 && r >= math.MinInt32 && r <= math.MaxInt32 {
		return bson.RawValue{Type: bson.TypeInt32, Value: bson.AppendInt32(nil, int32(r))}, true
	}
	return bson.RawValue{Type: bson.TypeInt64, Value: bson.AppendInt64(nil, r)}, true
}

type bigDecimal struct {
	coef *big.Int
	exp  int
}

// toBigDecimal converts a finite number to coefficient and exponent;
// doubles go through their 15 significant digits, as mongod converts them.
func toBigDecimal(v bson.RawValue) *bigDecimal {
	switch v.Type {
	case bson.TypeDecimal128:
		c, e, err := v.Decimal128().BigInt()
		if err != nil {
			return nil
		}
		return &bigDecimal{coef: c, exp: e}
	case bson.TypeDouble:
		f := v.Double()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil
		}
		d, err := bson.ParseDecimal128(strconv.FormatFloat(f, 'g', 15, 64))
		if err != nil {
			return nil
		}
		c, e, err := d.BigInt()
		if err != nil {
			return nil
		}
		return &bigDecimal{coef: c, exp: e}
	}
	i, _ := v.AsInt64OK()
	return &bigDecimal{coef: big.NewInt(i)}
}

func pow10(n int) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }

func nanDecimal() bson.Decimal128 {
	d, _ := bson.ParseDecimal128("NaN")
	return d
}

func decimalValue(d bson.Decimal128) bson.RawValue {
	return bson.RawValue{Type: bson.TypeDecimal128, Value: bson.AppendDecimal128(nil, d)}
}

// integral returns v as an int64 when it is a whole number.
func integral(v bson.RawValue) (int64, bool) {
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64:
		return v.AsInt64OK()
	case bson.TypeDouble:
		f := v.Double()
		if f != math.Trunc(f) || math.IsInf(f, 0) || math.Abs(f) >= 9.2e18 {
			return 0, false
		}
		return int64(f), true
	case bson.TypeDecimal128:
		f, err := strconv.ParseFloat(v.Decimal128().String(), 64)
		if err != nil || f != math.Trunc(f) || math.IsInf(f, 0) || math.Abs(f) >= 9.2e18 {
			return 0, false
		}
		return int64(f), true
	}
	return 0, false
}

// arrayIndex reports whether s is a non-negative array index.
func arrayIndex(s string) (int, bool) {
	if s == "" || len(s) > 9 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}
