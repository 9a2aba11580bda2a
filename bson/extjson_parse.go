package bson

import (
	"encoding/base64"
	"math"
	"strconv"
	"sync"
)

// extjson_parse*.go parse Extended JSON straight into BSON. The scanner is strict
// RFC 8259 JSON (no comments, no trailing commas, no leading zeros, no raw
// control characters or invalid UTF-8 in strings, no lone surrogates) and
// keeps the order of keys and the exact text of numbers.
//
// Objects are written as BSON documents while they are read. Keys that name
// a type wrapper ($oid, $date, ...) have their values read by a small
// dedicated parser into an ejWrapper instead; when the object closes, a
// wrapper replaces the document bytes written so far with the typed value.
// That makes key order irrelevant, as the specification requires, without
// scanning any object twice.

// ejParser holds the input and the read position. scratch keeps decoded
// wrapper strings that contain escapes; it is used as a stack so nested
// wrappers (inside $scope) never clobber an enclosing wrapper's strings.
type ejParser struct {
	data    []byte
	pos     int
	scratch []byte
	pooled  *[]byte // where scratch came from, to return it
}

// ejScratchPool recycles scratch buffers, so that documents with binary
// data or escaped wrapper strings parse without allocating.
var ejScratchPool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// grab makes sure p.scratch is a borrowed buffer before it is appended to.
func (p *ejParser) grab() {
	if p.pooled == nil {
		p.pooled = ejScratchPool.Get().(*[]byte)
		p.scratch = (*p.pooled)[:0]
	}
}

// release returns the scratch buffer; the parsed BSON never aliases it.
func (p *ejParser) release() {
	if p.pooled != nil && cap(p.scratch) <= 1<<16 {
		*p.pooled = p.scratch[:0]
		ejScratchPool.Put(p.pooled)
	}
	p.pooled, p.scratch = nil, nil
}

// ejKey classifies the $-prefixed keys that are special inside an object.
type ejKey uint8

const (
	ejKeyNone ejKey = iota
	// Keys whose values a dedicated parser reads; any of them makes the
	// object a type wrapper.
	ejKeyOID
	ejKeySymbol
	ejKeyNumberInt
	ejKeyNumberLong
	ejKeyNumberDouble
	ejKeyNumberDecimal
	ejKeyBinary
	ejKeyCode
	ejKeyTimestamp
	ejKeyRegularExpression
	ejKeyDBPointer
	ejKeyDate
	ejKeyMinKey
	ejKeyMaxKey
	ejKeyUndefined
	ejKeyUUID
	// $scope makes the object a wrapper too, but its value is a document
	// parsed like any other.
	ejKeyScope
	// Keys that only mean a legacy wrapper in the right company:
	// {"$binary": "...", "$type": "..."} and {"$regex": "...", "$options":
	// "..."}. Elsewhere they are MongoDB query operators and stay as-is.
	ejKeyType
	ejKeyRegex
	ejKeyOptions
)

var ejKeyNames = [...]string{
	ejKeyOID:               "$oid",
	ejKeySymbol:            "$symbol",
	ejKeyNumberInt:         "$numberInt",
	ejKeyNumberLong:        "$numberLong",
	ejKeyNumberDouble:      "$numberDouble",
	ejKeyNumberDecimal:     "$numberDecimal",
	ejKeyBinary:            "$binary",
	ejKeyCode:              "$code",
	ejKeyTimestamp:         "$timestamp",
	ejKeyRegularExpression: "$regularExpression",
	ejKeyDBPointer:         "$dbPointer",
	ejKeyDate:              "$date",
	ejKeyMinKey:            "$minKey",
	ejKeyMaxKey:            "$maxKey",
	ejKeyUndefined:         "$undefined",
	ejKeyUUID:              "$uuid",
	ejKeyScope:             "$scope",
	ejKeyType:              "$type",
	ejKeyRegex:             "$regex",
	ejKeyOptions:           "$options",
}

func (k ejKey) String() string { return ejKeyNames[k] }

func ejClassify(key []byte) ejKey {
	switch string(key) {
	case "$oid":
		return ejKeyOID
	case "$symbol":
		return ejKeySymbol
	case "$numberInt":
		return ejKeyNumberInt
	case "$numberLong":
		return ejKeyNumberLong
	case "$numberDouble":
		return ejKeyNumberDouble
	case "$numberDecimal":
		return ejKeyNumberDecimal
	case "$binary":
		return ejKeyBinary
	case "$code":
		return ejKeyCode
	case "$timestamp":
		return ejKeyTimestamp
	case "$regularExpression":
		return ejKeyRegularExpression
	case "$dbPointer":
		return ejKeyDBPointer
	case "$date":
		return ejKeyDate
	case "$minKey":
		return ejKeyMinKey
	case "$maxKey":
		return ejKeyMaxKey
	case "$undefined":
		return ejKeyUndefined
	case "$uuid":
		return ejKeyUUID
	case "$scope":
		return ejKeyScope
	case "$type":
		return ejKeyType
	case "$regex":
		return ejKeyRegex
	case "$options":
		return ejKeyOptions
	}
	return ejKeyNone
}

// ejMember records a member of an object parsed as an ordinary value:
// where its element header and value sit in the output, and its type.
type ejMember struct {
	set    bool
	t      Type
	hdr    int32 // offset of the element's type byte in dst, from the object's start
	vpos   int32 // offset of the value in dst, from the object's start
	keyOff int   // offset of the key in the input
}

// ejWrapper collects what an object's special keys held until the object
// closes and its kind is known.
type ejWrapper struct {
	kind    ejKey // the dedicated-parser key present, or ejKeyNone
	keyOff  int   // input offset of that key
	members int   // all members of the object

	scope, typ, regex, options ejMember
	// The first ordinary members, to name in errors. Two suffice: at most
	// one of them ($type beside a legacy $binary) is allowed.
	others  [2]ejMember
	nothers int

	// Values read by the dedicated parsers.
	str     []byte // string payload: code, symbol, pattern, namespace, binary data
	str2    []byte // regex options
	id      [16]byte
	i64     int64
	f64     float64
	dec     Decimal128
	u1, u2  uint32
	subtype byte
	legacy  bool // $binary held a base64 string, so $type must give the subtype
}

var ejBase64 = base64.StdEncoding.Strict()

// ejSpace marks the four JSON whitespace bytes.
var ejSpace = [256]bool{' ': true, '\t': true, '\n': true, '\r': true}

func (p *ejParser) skipWS() {
	i, d := p.pos, p.data
	for i < len(d) && ejSpace[d[i]] {
		i++
	}
	p.pos = i
}

// describe names the token at off for error messages.
func (p *ejParser) describe(off int) string {
	if off >= len(p.data) {
		return "end of input"
	}
	c := p.data[off]
	switch {
	case c == '"':
		return "a string"
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '-' || (c >= '0' && c <= '9'):
		return "a number"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	case c >= 0x20 && c < 0x7F:
		return "character " + strconv.QuoteRune(rune(c))
	}
	return "byte 0x" + strconv.FormatUint(uint64(c), 16)
}

// expect consumes c after optional whitespace.
func (p *ejParser) expect(c byte, what string) error {
	p.skipWS()
	if p.pos >= len(p.data) || p.data[p.pos] != c {
		return ejErr(p.pos, "want "+strconv.QuoteRune(rune(c))+" "+what+", found "+p.describe(p.pos))
	}
	p.pos++
	return nil
}

// parseValue parses the JSON value at p.pos and appends its BSON encoding
// to dst. depth is the depth of the document that holds the value.
func (p *ejParser) parseValue(dst []byte, depth int) ([]byte, Type, error) {
	p.skipWS()
	if p.pos >= len(p.data) {
		return dst, 0, ejErr(p.pos, "unexpected end of input; want a value")
	}
	switch c := p.data[p.pos]; {
	case c == '"':
		start := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		var err error
		dst, err = p.appendString(dst)
		if err != nil {
			return dst, 0, err
		}
		n := len(dst) - start - 4 + 1
		if n > math.MaxInt32 {
			return dst, 0, ejErr(p.pos, "string is too long for BSON")
		}
		dst = append(dst, 0)
		ejPutInt32(dst[start:], int32(n))
		return dst, TypeString, nil
	case c == '{':
		return p.parseObject(dst, depth+1, false)
	case c == '[':
		return p.parseArray(dst, depth+1)
	case c == 't':
		if err := p.literal("true"); err != nil {
			return dst, 0, err
		}
		return append(dst, 1), TypeBoolean, nil
	case c == 'f':
		if err := p.literal("false"); err != nil {
			return dst, 0, err
		}
		return append(dst, 0), TypeBoolean, nil
	case c == 'n':
		if err := p.literal("null"); err != nil {
			return dst, 0, err
		}
		return dst, TypeNull, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.parseNumber(dst)
	}
	return dst, 0, ejErr(p.pos, "unexpected "+p.describe(p.pos)+"; want a value")
}

func ejPutInt32(b []byte, v int32) {
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

func (p *ejParser) literal(lit string) error {
	if len(p.data)-p.pos < len(lit) || string(p.data[p.pos:p.pos+len(lit)]) != lit {
		return ejErr(p.pos, "invalid literal; want "+lit)
	}
	p.pos += len(lit)
	return nil
}

// parseArray parses a JSON array into a BSON array keyed "0", "1", ...
func (p *ejParser) parseArray(dst []byte, depth int) ([]byte, Type, error) {
	open := p.pos
	if depth > MaxDepth {
		return dst, 0, ejErr(open, "nesting exceeds the maximum depth of "+strconv.Itoa(MaxDepth))
	}
	p.pos++
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	p.skipWS()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
	} else {
		for i := 0; ; i++ {
			hdr := len(dst)
			dst = append(dst, 0)
			dst = append(dst, ArrayKey(i)...)
			dst = append(dst, 0)
			var t Type
			var err error
			dst, t, err = p.parseValue(dst, depth)
			if err != nil {
				return dst, 0, ejWithParent(err, strconv.Itoa(i))
			}
			dst[hdr] = byte(t)
			p.skipWS()
			if p.pos >= len(p.data) {
				return dst, 0, ejErr(p.pos, "unexpected end of input in the array that starts at byte "+strconv.Itoa(open))
			}
			if c := p.data[p.pos]; c == ',' {
				p.pos++
				continue
			} else if c == ']' {
				p.pos++
				break
			}
			return dst, 0, ejErr(p.pos, "want ',' or ']' after an array element, found "+p.describe(p.pos))
		}
	}
	dst, err := AppendDocumentEnd(dst, start)
	if err != nil {
		return dst, 0, ejErr(open, "array exceeds the maximum BSON document size")
	}
	return dst, TypeArray, nil
}

// parseObject parses a JSON object. The top-level object is always a
// document; any other object may turn out to be a type wrapper, in which
// case the returned type is the wrapped value's. depth is the depth the
// object has if it is a document.
func (p *ejParser) parseObject(dst []byte, depth int, top bool) ([]byte, Type, error) {
	open := p.pos
	if depth > MaxDepth+1 {
		// A wrapper one level below the deepest document is still fine
		// (it becomes a value, not a document); anything deeper is not.
		return dst, 0, ejErr(open, "nesting exceeds the maximum depth of "+strconv.Itoa(MaxDepth))
	}
	p.pos++
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	var w ejWrapper
	mark := len(p.scratch)
	p.skipWS()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
	} else {
		for {
			p.skipWS()
			if p.pos >= len(p.data) || p.data[p.pos] != '"' {
				return dst, 0, ejErr(p.pos, "want a string key, found "+p.describe(p.pos))
			}
			keyOff := p.pos
			hdr := len(dst)
			dst = append(dst, 0)
			var err error
			dst, err = p.appendString(dst)
			if err != nil {
				return dst, 0, err
			}
			key := dst[hdr+1:]
			for i, c := range key {
				if c == 0 {
					return dst, 0, ejErr(keyOff, "key "+ejQuote(key)+" contains a NUL byte at index "+strconv.Itoa(i)+"; BSON keys cannot")
				}
			}
			if err := p.expect(':', "after an object key"); err != nil {
				return dst, 0, err
			}
			kind := ejKeyNone
			if !top && len(key) > 1 && key[0] == '$' {
				kind = ejClassify(key)
			}
			w.members++
			if kind != ejKeyNone && kind < ejKeyScope {
				dst = dst[:hdr]
				if w.kind != ejKeyNone {
					return dst, 0, ejErr(keyOff, "key "+kind.String()+" cannot appear in the same object as "+w.kind.String())
				}
				w.kind, w.keyOff = kind, keyOff
				if err := p.parseWrapperValue(&w, kind); err != nil {
					return dst, 0, ejWithParent(err, kind.String())
				}
			} else {
				dst = append(dst, 0)
				vpos := len(dst)
				d := depth
				if kind == ejKeyScope {
					// The scope is nested in a code-with-scope value of the
					// enclosing document, not in this object.
					d = depth - 1
				}
				var t Type
				dst, t, err = p.parseValue(dst, d)
				if err != nil {
					return dst, 0, ejWithParent(err, string(dst[hdr+1:vpos-1]))
				}
				dst[hdr] = byte(t)
				m := ejMember{set: true, t: t, hdr: int32(hdr - start), vpos: int32(vpos - start), keyOff: keyOff}
				switch kind {
				case ejKeyScope:
					if w.scope.set {
						return dst, 0, ejErr(keyOff, "key $scope appears twice")
					}
					w.scope = m
				case ejKeyType:
					w.typ = m
				case ejKeyRegex:
					w.regex = m
				case ejKeyOptions:
					w.options = m
				}
				if kind != ejKeyScope && w.nothers < len(w.others) {
					w.others[w.nothers] = m
					w.nothers++
				}
			}
			p.skipWS()
			if p.pos >= len(p.data) {
				return dst, 0, ejErr(p.pos, "unexpected end of input in the object that starts at byte "+strconv.Itoa(open))
			}
			if c := p.data[p.pos]; c == ',' {
				p.pos++
				continue
			} else if c == '}' {
				p.pos++
				break
			}
			return dst, 0, ejErr(p.pos, "want ',' or '}' after an object member, found "+p.describe(p.pos))
		}
	}
	if w.kind != ejKeyNone || w.scope.set || (w.members == 2 && w.regex.set && w.options.set &&
		w.regex.t == TypeString && w.options.t == TypeString) {
		out, t, err := p.finishWrapper(dst, start, &w)
		p.scratch = p.scratch[:mark]
		return out, t, err
	}
	if depth > MaxDepth {
		return dst, 0, ejErr(open, "nesting exceeds the maximum depth of "+strconv.Itoa(MaxDepth))
	}
	dst, err := AppendDocumentEnd(dst, start)
	if err != nil {
		return dst, 0, ejErr(open, "document exceeds the maximum BSON document size")
	}
	return dst, TypeEmbeddedDocument, nil
}
