package bson

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// Scalars: RFC 3339 dates, integer and double strings, JSON numbers and
// JSON strings, each checked as strictly as the specification requires.

// ejParseISODate parses YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM|±HHMM)
// into milliseconds since the epoch. Fractions finer than a millisecond
// are truncated. It returns a reason when s is not such a date.
func ejParseISODate(s []byte) (int64, string) {
	num := func(i, n int) (int64, bool) {
		if i+n > len(s) {
			return 0, false
		}
		var v int64
		for _, c := range s[i : i+n] {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int64(c-'0')
		}
		return v, true
	}
	sep := func(i int, c byte) bool { return i < len(s) && s[i] == c }
	y, ok1 := num(0, 4)
	mo, ok2 := num(5, 2)
	d, ok3 := num(8, 2)
	if !ok1 || !ok2 || !ok3 || !sep(4, '-') || !sep(7, '-') {
		return 0, "want a YYYY-MM-DD date"
	}
	if len(s) <= 10 || (s[10] != 'T' && s[10] != 't') {
		return 0, "want 'T' after the date"
	}
	h, ok1 := num(11, 2)
	mi, ok2 := num(14, 2)
	sec, ok3 := num(17, 2)
	if !ok1 || !ok2 || !ok3 || !sep(13, ':') || !sep(16, ':') {
		return 0, "want an HH:MM:SS time"
	}
	if mo < 1 || mo > 12 || d < 1 || d > ejDaysIn(y, mo) || h > 23 || mi > 59 || sec > 59 {
		return 0, "date or time field out of range"
	}
	i := 19
	var frac int64
	if sep(i, '.') {
		i++
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			if n < 3 {
				frac = frac*10 + int64(s[i]-'0')
			}
			n++
			i++
		}
		if n == 0 {
			return 0, "want digits after '.'"
		}
		for ; n < 3; n++ {
			frac *= 10
		}
	}
	var offset int64 // minutes east of UTC
	switch {
	case sep(i, 'Z') || sep(i, 'z'):
		i++
	case sep(i, '+') || sep(i, '-'):
		oh, ok1 := num(i+1, 2)
		j := i + 3
		if sep(j, ':') {
			j++
		}
		om, ok2 := num(j, 2)
		if !ok1 || !ok2 || oh > 23 || om > 59 {
			return 0, "want a ±HH:MM time zone offset"
		}
		offset = oh*60 + om
		if s[i] == '-' {
			offset = -offset
		}
		i = j + 2
	default:
		return 0, "want a time zone: 'Z' or ±HH:MM"
	}
	if i != len(s) {
		return 0, "unexpected text after the time zone"
	}
	days := daysFromCivil(y, mo, d)
	return ((days*24+h)*60+mi-offset)*60000 + sec*1000 + frac, ""
}

func ejDaysIn(y, m int64) int64 {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// ejParseIntString parses a decimal integer in JSON integer syntax
// ([-](0|[1-9][0-9]*)) that fits in an int64.
func ejParseIntString(s []byte) (int64, bool) {
	neg := false
	i := 0
	if len(s) > 0 && s[0] == '-' {
		neg = true
		i = 1
	}
	if i >= len(s) || (s[i] == '0' && len(s) > i+1) || len(s)-i > 19 {
		return 0, false
	}
	var u uint64
	for _, c := range s[i:] {
		if c < '0' || c > '9' {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return int64(-u), true
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

// ejParseDoubleString parses a $numberDouble string: "Infinity",
// "-Infinity", "NaN", or a number in JSON syntax. It returns a reason when
// s is none of these.
func ejParseDoubleString(s []byte) (float64, string) {
	switch string(s) {
	case "Infinity":
		return math.Inf(1), ""
	case "-Infinity":
		return math.Inf(-1), ""
	case "NaN":
		// The quiet NaN the corpus uses, so the bits are predictable.
		return math.Float64frombits(0x7FF8000000000000), ""
	}
	n, _, ok := ejScanNumber(s)
	if !ok || n != len(s) {
		return 0, "is not a number in JSON syntax, Infinity, -Infinity or NaN"
	}
	f, ok := ejParseFloat(s)
	if !ok {
		return 0, "is out of the range of a double"
	}
	return f, ""
}

// ejScanNumber measures the JSON number at the start of b: it returns its
// length, whether it is an integer (no fraction, no exponent), and whether
// the syntax is valid.
func ejScanNumber(b []byte) (n int, isInt, ok bool) {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return i, false, false
	}
	switch c := b[i]; {
	case c == '0':
		i++
	case c >= '1' && c <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return i, false, false
	}
	isInt = true
	if i < len(b) && b[i] == '.' {
		isInt = false
		i++
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return i, false, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		isInt = false
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return i, false, false
		}
	}
	return i, isInt, true
}

// scanNumber reads the JSON number at p.pos.
func (p *ejParser) scanNumber() (tok []byte, isInt bool, err error) {
	start := p.pos
	n, isInt, ok := ejScanNumber(p.data[start:])
	if !ok {
		return nil, false, ejErr(start+n, "invalid number "+ejQuote(p.data[start:start+n])+": want JSON number syntax")
	}
	end := start + n
	if isInt && end < len(p.data) && p.data[end] >= '0' && p.data[end] <= '9' {
		return nil, false, ejErr(start, "invalid number: leading zeros are not allowed")
	}
	p.pos = end
	return p.data[start:end], isInt, nil
}

// parseNumber appends a JSON number as the smallest BSON integer type that
// holds it exactly, or as a double when it has a fraction or exponent or
// does not fit in an int64 (as the specification requires).
func (p *ejParser) parseNumber(dst []byte) ([]byte, Type, error) {
	start := p.pos
	// Fast path: a short integer, read in one pass. Anything else (a
	// fraction, an exponent, 19+ digits, a leading zero) takes the
	// general path below.
	d := p.data
	i := start
	neg := d[i] == '-'
	if neg {
		i++
	}
	if i < len(d) && d[i] >= '1' && d[i] <= '9' {
		var v int64
		j := i
		for j < len(d) && j-i < 18 && d[j] >= '0' && d[j] <= '9' {
			v = v*10 + int64(d[j]-'0')
			j++
		}
		if j >= len(d) || (d[j] != '.' && d[j] != 'e' && d[j] != 'E' && (d[j] < '0' || d[j] > '9')) {
			p.pos = j
			if neg {
				v = -v
			}
			if v >= math.MinInt32 && v <= math.MaxInt32 {
				return appendInt32(dst, int32(v)), TypeInt32, nil
			}
			return AppendInt64(dst, v), TypeInt64, nil
		}
	}
	tok, isInt, err := p.scanNumber()
	if err != nil {
		return dst, 0, err
	}
	if isInt {
		if v, ok := ejParseIntString(tok); ok {
			if v >= math.MinInt32 && v <= math.MaxInt32 {
				return appendInt32(dst, int32(v)), TypeInt32, nil
			}
			return AppendInt64(dst, v), TypeInt64, nil
		}
	}
	f, ok := ejParseFloat(tok)
	if !ok {
		return dst, 0, ejErr(start, "number "+ejQuote(tok)+" is out of the range of a double")
	}
	return AppendDouble(dst, f), TypeDouble, nil
}

// ejPow10 holds the powers of ten a float64 represents exactly.
var ejPow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// ejParseFloat converts a syntactically valid JSON number to the nearest
// float64. Short numbers take the exact fast path (an exact integer
// mantissa times or divided by an exact power of ten rounds once); the
// rest go to strconv. It reports false when the value overflows.
func ejParseFloat(tok []byte) (float64, bool) {
	i := 0
	neg := tok[0] == '-'
	if neg {
		i = 1
	}
	var mant uint64
	nd, exp := 0, 0
	fast, frac := true, false
	for ; i < len(tok); i++ {
		c := tok[i]
		if c == '.' {
			frac = true
			continue
		}
		if c == 'e' || c == 'E' {
			break
		}
		if mant == 0 && c == '0' {
			// Leading zeros add no significant digit.
			if frac {
				exp--
			}
			continue
		}
		if nd >= 19 {
			fast = false
			break
		}
		mant = mant*10 + uint64(c-'0')
		nd++
		if frac {
			exp--
		}
	}
	if fast && i < len(tok) {
		i++
		eneg := false
		if tok[i] == '+' || tok[i] == '-' {
			eneg = tok[i] == '-'
			i++
		}
		e := 0
		for ; i < len(tok) && e <= 1000; i++ {
			e = e*10 + int(tok[i]-'0')
		}
		if i < len(tok) {
			fast = false // a huge exponent: let strconv decide
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if fast && mant < 1<<53 && exp >= -22 && exp <= 22 {
		f := float64(mant)
		if exp < 0 {
			f /= ejPow10[-exp]
		} else {
			f *= ejPow10[exp]
		}
		if neg {
			f = -f
		}
		return f, true
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		return 0, false
	}
	return f, true
}

// appendString decodes the JSON string at p.pos (which must be '"') onto
// dst, checking the RFC 8259 rules: escapes only as listed, no raw control
// characters, valid UTF-8, and surrogate escapes only in valid pairs (a lone
// surrogate has no UTF-8 encoding, so it is rejected rather than replaced).
func (p *ejParser) appendString(dst []byte) ([]byte, error) {
	data := p.data
	open := p.pos
	i := p.pos + 1
	start := i
	for {
		for i < len(data) && ejSafe[data[i]] {
			i++
		}
		if i >= len(data) {
			return dst, ejErr(open, "unterminated string")
		}
		c := data[i]
		switch {
		case c == '"':
			dst = append(dst, data[start:i]...)
			p.pos = i + 1
			return dst, nil
		case c == '\\':
			dst = append(dst, data[start:i]...)
			if i+1 >= len(data) {
				return dst, ejErr(open, "unterminated string")
			}
			esc := data[i+1]
			i += 2
			switch esc {
			case '"', '\\', '/':
				dst = append(dst, esc)
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				r, ok := ejHex4(data, i)
				if !ok {
					return dst, ejErr(i-2, `invalid \u escape: want four hex digits`)
				}
				i += 4
				if r >= 0xD800 && r < 0xDC00 {
					var lo rune
					ok := i+1 < len(data) && data[i] == '\\' && data[i+1] == 'u'
					if ok {
						lo, ok = ejHex4(data, i+2)
					}
					if !ok || lo < 0xDC00 || lo > 0xDFFF {
						return dst, ejErr(i-6, `lone UTF-16 surrogate \u`+strconv.FormatInt(int64(r), 16)+" (a high surrogate must be followed by a low one)")
					}
					i += 6
					r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				} else if r >= 0xDC00 && r <= 0xDFFF {
					return dst, ejErr(i-6, `lone UTF-16 surrogate \u`+strconv.FormatInt(int64(r), 16)+" (a low surrogate must follow a high one)")
				}
				dst = utf8.AppendRune(dst, r)
			default:
				return dst, ejErr(i-2, "invalid escape "+strconv.Quote(string([]byte{'\\', esc})))
			}
			start = i
		case c < 0x20:
			return dst, ejErr(i, "control character 0x"+strconv.FormatUint(uint64(c), 16)+" in a string must be escaped")
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				return dst, ejErr(i, "invalid UTF-8 in a string")
			}
			i += size
		}
	}
}

func ejHex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		n, ok := ejHexNibble(c)
		if !ok {
			return 0, false
		}
		r = r<<4 | rune(n)
	}
	return r, true
}
