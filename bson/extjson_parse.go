package bson

import (
	"encoding/base64"
	"math"
	"strconv"
	"sync"
	"unicode/utf8"
)

// This file parses Extended JSON straight into BSON. The scanner is strict
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

// ejStringAt returns the bytes of the BSON string value at dst[vpos:].
func ejStringAt(dst []byte, vpos int) []byte {
	n := int(readInt32(dst, vpos))
	return dst[vpos+4 : vpos+4+n-1]
}

// finishWrapper replaces the document begun at dst[start:] with the value
// the wrapper describes, checking that the object held exactly the
// wrapper's keys.
func (p *ejParser) finishWrapper(dst []byte, start int, w *ejWrapper) ([]byte, Type, error) {
	if w.kind == ejKeyNone {
		if !w.scope.set {
			// Legacy {"$regex": "...", "$options": "..."}.
			pattern := ejStringAt(dst, start+int(w.regex.vpos))
			options := ejStringAt(dst, start+int(w.options.vpos))
			if err := ejCheckRegexPart(pattern, "pattern", w.regex.keyOff); err != nil {
				return dst, 0, ejWithParent(err, "$regex")
			}
			if err := ejCheckRegexPart(options, "options", w.options.keyOff); err != nil {
				return dst, 0, ejWithParent(err, "$options")
			}
			tmp := len(dst)
			dst = ejAppendRegex(dst, pattern, options)
			return ejMove(dst, start, tmp), TypeRegex, nil
		}
		return dst, 0, ejErr(w.scope.keyOff, "key $scope without $code")
	}
	// Every ordinary member is an extra key, except the companions a
	// wrapper allows: $scope with $code, $type with a legacy $binary.
	extra := w.members - 1
	if w.scope.set {
		if w.kind != ejKeyCode {
			return dst, 0, ejErr(w.scope.keyOff, "key $scope cannot appear in a "+w.kind.String()+" type wrapper")
		}
		extra--
	}
	if w.kind == ejKeyBinary && w.legacy {
		if !w.typ.set {
			return dst, 0, ejErr(w.keyOff, `legacy {"$binary": <base64 string>} needs a "$type" key with the subtype`)
		}
		extra--
	}
	if extra > 0 {
		for _, m := range w.others[:w.nothers] {
			if !m.set || (w.legacy && m.hdr == w.typ.hdr) {
				continue
			}
			key := dst[start+int(m.hdr)+1 : start+int(m.vpos)-1]
			return dst, 0, ejErr(m.keyOff, "unexpected key "+ejQuote(key)+" in a "+w.kind.String()+" type wrapper")
		}
		return dst, 0, ejErr(w.keyOff, "unexpected extra keys in a "+w.kind.String()+" type wrapper")
	}
	switch w.kind {
	case ejKeyOID:
		return append(dst[:start], w.id[:12]...), TypeObjectID, nil
	case ejKeySymbol, ejKeyCode:
		t := TypeSymbol
		if w.kind == ejKeyCode {
			t = TypeJavaScript
		}
		if len(w.str) >= math.MaxInt32-16 {
			return dst, 0, ejErr(w.keyOff, "string is too long for BSON")
		}
		if w.scope.set {
			if w.scope.t != TypeEmbeddedDocument {
				return dst, 0, ejErr(w.scope.keyOff, "$scope must be a document, found "+w.scope.t.String())
			}
			scope := dst[start+int(w.scope.vpos):]
			scope = scope[:readInt32(scope, 0)]
			total := 4 + 4 + len(w.str) + 1 + len(scope)
			if total > math.MaxInt32 {
				return dst, 0, ejErr(w.keyOff, "code with scope is too long for BSON")
			}
			tmp := len(dst)
			dst = appendInt32(dst, int32(total))
			dst = appendInt32(dst, int32(len(w.str)+1))
			dst = append(dst, w.str...)
			dst = append(dst, 0)
			dst = append(dst, scope...)
			return ejMove(dst, start, tmp), TypeCodeWithScope, nil
		}
		dst = appendInt32(dst[:start], int32(len(w.str)+1))
		dst = append(dst, w.str...)
		return append(dst, 0), t, nil
	case ejKeyNumberInt:
		return appendInt32(dst[:start], int32(w.i64)), TypeInt32, nil
	case ejKeyNumberLong:
		return AppendInt64(dst[:start], w.i64), TypeInt64, nil
	case ejKeyDate:
		return AppendDateTime(dst[:start], w.i64), TypeDateTime, nil
	case ejKeyNumberDouble:
		return AppendDouble(dst[:start], w.f64), TypeDouble, nil
	case ejKeyNumberDecimal:
		return AppendDecimal128(dst[:start], w.dec), TypeDecimal128, nil
	case ejKeyBinary:
		if w.legacy {
			if w.typ.t != TypeString {
				return dst, 0, ejErr(w.typ.keyOff, "legacy $type must be a hex string giving the binary subtype, found "+w.typ.t.String())
			}
			sub, ok := ejParseSubtype(ejStringAt(dst, start+int(w.typ.vpos)))
			if !ok {
				return dst, 0, ejErr(w.typ.keyOff, "legacy $type "+ejQuote(ejStringAt(dst, start+int(w.typ.vpos)))+" is not a one- or two-digit hex binary subtype")
			}
			w.subtype = sub
		}
		if len(w.str) > math.MaxInt32-16 {
			return dst, 0, ejErr(w.keyOff, "binary data is too long for BSON")
		}
		return AppendBinary(dst[:start], w.subtype, w.str), TypeBinary, nil
	case ejKeyUUID:
		return AppendBinary(dst[:start], SubtypeUUID, w.id[:16]), TypeBinary, nil
	case ejKeyTimestamp:
		return AppendTimestamp(dst[:start], w.u1, w.u2), TypeTimestamp, nil
	case ejKeyRegularExpression:
		return ejAppendRegex(dst[:start], w.str, w.str2), TypeRegex, nil
	case ejKeyDBPointer:
		if len(w.str) >= math.MaxInt32-16 {
			return dst, 0, ejErr(w.keyOff, "namespace is too long for BSON")
		}
		dst = appendInt32(dst[:start], int32(len(w.str)+1))
		dst = append(dst, w.str...)
		dst = append(dst, 0)
		return append(dst, w.id[:12]...), TypeDBPointer, nil
	case ejKeyMinKey:
		return dst[:start], TypeMinKey, nil
	case ejKeyMaxKey:
		return dst[:start], TypeMaxKey, nil
	case ejKeyUndefined:
		return dst[:start], TypeUndefined, nil
	}
	return dst, 0, ejErr(w.keyOff, "unsupported type wrapper "+w.kind.String())
}

// ejMove moves the bytes built at dst[from:] down to dst[to:] (they were
// built past the object whose place they take) and drops the rest.
func ejMove(dst []byte, to, from int) []byte {
	n := copy(dst[to:], dst[from:])
	return dst[:to+n]
}

// ejAppendRegex appends a regex value with its options sorted.
func ejAppendRegex(dst []byte, pattern, options []byte) []byte {
	dst = append(dst, pattern...)
	dst = append(dst, 0)
	o := len(dst)
	dst = append(dst, options...)
	ejSortBytes(dst[o:])
	return append(dst, 0)
}

func ejCheckRegexPart(b []byte, what string, off int) error {
	for i, c := range b {
		if c == 0 {
			return ejErr(off, "regex "+what+" "+ejQuote(b)+" contains a NUL byte at index "+strconv.Itoa(i)+"; BSON cannot hold it")
		}
	}
	return nil
}

// parseWrapperValue reads the value of a type-wrapper key into w.
func (p *ejParser) parseWrapperValue(w *ejWrapper, kind ejKey) error {
	p.skipWS()
	off := p.pos
	switch kind {
	case ejKeyBinary:
		return p.parseBinary(w)
	case ejKeyTimestamp:
		return p.parseTimestamp(w)
	case ejKeyRegularExpression:
		return p.parseRegularExpression(w)
	case ejKeyDBPointer:
		return p.parseDBPointer(w)
	case ejKeyDate:
		return p.parseDate(w)
	case ejKeyMinKey, ejKeyMaxKey:
		if p.pos < len(p.data) && (p.data[p.pos] == '-' || (p.data[p.pos] >= '0' && p.data[p.pos] <= '9')) {
			tok, _, err := p.scanNumber()
			if err != nil {
				return err
			}
			if string(tok) == "1" {
				return nil
			}
			return ejErr(off, kind.String()+" must be the integer 1, found "+ejQuote(tok))
		}
		return ejErr(off, kind.String()+" must be the integer 1, found "+p.describe(off))
	case ejKeyUndefined:
		if p.pos < len(p.data) && p.data[p.pos] == 't' {
			return p.literal("true")
		}
		return ejErr(off, "$undefined must be true, found "+p.describe(off))
	}
	// Every other wrapper holds a string.
	s, err := p.wrapperString(kind)
	if err != nil {
		return err
	}
	switch kind {
	case ejKeyOID:
		if !ejParseHex(w.id[:12], s) {
			return ejErr(off, "$oid must be 24 hexadecimal digits, found "+ejQuote(s))
		}
	case ejKeySymbol, ejKeyCode:
		w.str = s
	case ejKeyNumberInt:
		v, ok := ejParseIntString(s)
		if !ok || v < math.MinInt32 || v > math.MaxInt32 {
			return ejErr(off, "$numberInt must be a decimal 32-bit integer string, found "+ejQuote(s))
		}
		w.i64 = v
	case ejKeyNumberLong:
		v, ok := ejParseIntString(s)
		if !ok {
			return ejErr(off, "$numberLong must be a decimal 64-bit integer string, found "+ejQuote(s))
		}
		w.i64 = v
	case ejKeyNumberDouble:
		f, reason := ejParseDoubleString(s)
		if reason != "" {
			return ejErr(off, "$numberDouble "+ejQuote(s)+" "+reason)
		}
		w.f64 = f
	case ejKeyNumberDecimal:
		d, err := ParseDecimal128(string(s))
		if err != nil {
			return ejErr(off, "$numberDecimal: "+err.Error())
		}
		w.dec = d
	case ejKeyUUID:
		u, err := ParseUUID(string(s))
		if err != nil {
			return ejErr(off, "$uuid: "+err.Error())
		}
		copy(w.id[:], u[:])
	}
	return nil
}

// wrapperString reads a string a wrapper key requires.
func (p *ejParser) wrapperString(kind ejKey) ([]byte, error) {
	p.skipWS()
	if p.pos >= len(p.data) || p.data[p.pos] != '"' {
		return nil, ejErr(p.pos, kind.String()+" must be a string, found "+p.describe(p.pos))
	}
	return p.stringView()
}

// stringView reads a JSON string. Without escapes it returns a view of the
// input; otherwise the decoded text is pushed on p.scratch.
func (p *ejParser) stringView() ([]byte, error) {
	start := p.pos + 1
	for i := start; i < len(p.data); i++ {
		c := p.data[i]
		if c == '"' {
			p.pos = i + 1
			return p.data[start:i:i], nil
		}
		if !ejSafe[c] {
			break
		}
	}
	p.grab()
	mark := len(p.scratch)
	var err error
	p.scratch, err = p.appendString(p.scratch)
	if err != nil {
		return nil, err
	}
	return p.scratch[mark:len(p.scratch):len(p.scratch)], nil
}

// openObject consumes the '{' of a wrapper's inner object.
func (p *ejParser) openObject(what string) error {
	p.skipWS()
	if p.pos >= len(p.data) || p.data[p.pos] != '{' {
		return ejErr(p.pos, what+" must be an object, found "+p.describe(p.pos))
	}
	p.pos++
	return nil
}

// nextMember reads the next key of an object opened with openObject,
// leaving p.pos at its value. ok is false at the closing '}'.
func (p *ejParser) nextMember(first bool) (key []byte, keyOff int, ok bool, err error) {
	p.skipWS()
	if p.pos >= len(p.data) {
		return nil, p.pos, false, ejErr(p.pos, "unexpected end of input in an object")
	}
	if p.data[p.pos] == '}' && first {
		p.pos++
		return nil, p.pos, false, nil
	}
	if !first {
		switch p.data[p.pos] {
		case '}':
			p.pos++
			return nil, p.pos, false, nil
		case ',':
			p.pos++
			p.skipWS()
		default:
			return nil, p.pos, false, ejErr(p.pos, "want ',' or '}' after an object member, found "+p.describe(p.pos))
		}
	}
	keyOff = p.pos
	if p.pos >= len(p.data) || p.data[p.pos] != '"' {
		return nil, keyOff, false, ejErr(p.pos, "want a string key, found "+p.describe(p.pos))
	}
	key, err = p.stringView()
	if err != nil {
		return nil, keyOff, false, err
	}
	if err := p.expect(':', "after an object key"); err != nil {
		return nil, keyOff, false, err
	}
	p.skipWS()
	return key, keyOff, true, nil
}

// innerString reads a string member of a wrapper's inner object.
func (p *ejParser) innerString(what string) ([]byte, error) {
	if p.pos >= len(p.data) || p.data[p.pos] != '"' {
		return nil, ejErr(p.pos, what+" must be a string, found "+p.describe(p.pos))
	}
	return p.stringView()
}

// innerUint32 reads a non-negative JSON integer up to 2^32-1.
func (p *ejParser) innerUint32(what string) (uint32, error) {
	off := p.pos
	if p.pos >= len(p.data) || !(p.data[p.pos] == '-' || (p.data[p.pos] >= '0' && p.data[p.pos] <= '9')) {
		return 0, ejErr(off, what+" must be a non-negative integer, found "+p.describe(off))
	}
	tok, isInt, err := p.scanNumber()
	if err != nil {
		return 0, err
	}
	v, ok := ejParseIntString(tok)
	if !isInt || !ok || v < 0 || v > math.MaxUint32 {
		return 0, ejErr(off, what+" must be an integer from 0 to 4294967295, found "+ejQuote(tok))
	}
	return uint32(v), nil
}

func ejDupKey(off int, key string) error {
	return ejErr(off, "key "+strconv.Quote(key)+" appears twice")
}

func ejUnexpectedKey(off int, key []byte, in string) error {
	return ejErr(off, "unexpected key "+ejQuote(key)+" in "+in)
}

// parseBinary reads {"base64": ..., "subType": ...} or a legacy base64
// string (whose subtype comes from a sibling $type key).
func (p *ejParser) parseBinary(w *ejWrapper) error {
	if p.pos < len(p.data) && p.data[p.pos] == '"' {
		off := p.pos
		s, err := p.stringView()
		if err != nil {
			return err
		}
		w.legacy = true
		return p.decodeBase64(w, s, off)
	}
	if err := p.openObject("$binary"); err != nil {
		return err
	}
	var haveData, haveSub bool
	for first := true; ; first = false {
		key, keyOff, ok, err := p.nextMember(first)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		switch string(key) {
		case "base64":
			if haveData {
				return ejDupKey(keyOff, "base64")
			}
			haveData = true
			off := p.pos
			s, err := p.innerString("base64")
			if err != nil {
				return ejWithParent(err, "base64")
			}
			if err := p.decodeBase64(w, s, off); err != nil {
				return ejWithParent(err, "base64")
			}
		case "subType":
			if haveSub {
				return ejDupKey(keyOff, "subType")
			}
			haveSub = true
			off := p.pos
			s, err := p.innerString("subType")
			if err != nil {
				return ejWithParent(err, "subType")
			}
			sub, ok := ejParseSubtype(s)
			if !ok {
				return ejWithParent(ejErr(off, "subType "+ejQuote(s)+" is not a one- or two-digit hex binary subtype"), "subType")
			}
			w.subtype = sub
		default:
			return ejUnexpectedKey(keyOff, key, `$binary; want only "base64" and "subType"`)
		}
	}
	if !haveData || !haveSub {
		missing := "base64"
		if haveData {
			missing = "subType"
		}
		return ejErr(w.keyOff, "$binary is missing its "+strconv.Quote(missing)+" key")
	}
	return nil
}

// decodeBase64 decodes padded standard base64 onto p.scratch.
func (p *ejParser) decodeBase64(w *ejWrapper, s []byte, off int) error {
	for i, c := range s {
		// The decoder skips newlines; Extended JSON does not allow them.
		if c == '\r' || c == '\n' {
			return ejErr(off, "base64 data contains a line break at index "+strconv.Itoa(i))
		}
	}
	p.grab()
	mark := len(p.scratch)
	var err error
	p.scratch, err = ejBase64.AppendDecode(p.scratch, s)
	if err != nil {
		p.scratch = p.scratch[:mark]
		return ejErr(off, "invalid base64 (standard alphabet, padded with '='): "+err.Error())
	}
	w.str = p.scratch[mark:len(p.scratch):len(p.scratch)]
	return nil
}

// ejParseSubtype parses a one- or two-digit hex binary subtype.
func ejParseSubtype(s []byte) (byte, bool) {
	if len(s) == 0 || len(s) > 2 {
		return 0, false
	}
	var v byte
	for _, c := range s {
		n, ok := ejHexNibble(c)
		if !ok {
			return 0, false
		}
		v = v<<4 | n
	}
	return v, true
}

func ejHexNibble(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// ejParseHex decodes exactly 2*len(dst) hex digits (either case).
func ejParseHex(dst []byte, s []byte) bool {
	if len(s) != 2*len(dst) {
		return false
	}
	for i := range dst {
		hi, ok1 := ejHexNibble(s[2*i])
		lo, ok2 := ejHexNibble(s[2*i+1])
		if !ok1 || !ok2 {
			return false
		}
		dst[i] = hi<<4 | lo
	}
	return true
}

// parseTimestamp reads {"t": <uint32>, "i": <uint32>}.
func (p *ejParser) parseTimestamp(w *ejWrapper) error {
	if err := p.openObject("$timestamp"); err != nil {
		return err
	}
	var haveT, haveI bool
	for first := true; ; first = false {
		key, keyOff, ok, err := p.nextMember(first)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		switch string(key) {
		case "t":
			if haveT {
				return ejDupKey(keyOff, "t")
			}
			haveT = true
			if w.u1, err = p.innerUint32("t"); err != nil {
				return ejWithParent(err, "t")
			}
		case "i":
			if haveI {
				return ejDupKey(keyOff, "i")
			}
			haveI = true
			if w.u2, err = p.innerUint32("i"); err != nil {
				return ejWithParent(err, "i")
			}
		default:
			return ejUnexpectedKey(keyOff, key, `$timestamp; want only "t" and "i"`)
		}
	}
	if !haveT || !haveI {
		missing := "t"
		if haveT {
			missing = "i"
		}
		return ejErr(w.keyOff, "$timestamp is missing its "+strconv.Quote(missing)+" key")
	}
	return nil
}

// parseRegularExpression reads {"pattern": ..., "options": ...}.
func (p *ejParser) parseRegularExpression(w *ejWrapper) error {
	if err := p.openObject("$regularExpression"); err != nil {
		return err
	}
	var haveP, haveO bool
	for first := true; ; first = false {
		key, keyOff, ok, err := p.nextMember(first)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		off := p.pos
		switch string(key) {
		case "pattern":
			if haveP {
				return ejDupKey(keyOff, "pattern")
			}
			haveP = true
			if w.str, err = p.innerString("pattern"); err != nil {
				return ejWithParent(err, "pattern")
			}
			if err := ejCheckRegexPart(w.str, "pattern", off); err != nil {
				return ejWithParent(err, "pattern")
			}
		case "options":
			if haveO {
				return ejDupKey(keyOff, "options")
			}
			haveO = true
			if w.str2, err = p.innerString("options"); err != nil {
				return ejWithParent(err, "options")
			}
			if err := ejCheckRegexPart(w.str2, "options", off); err != nil {
				return ejWithParent(err, "options")
			}
		default:
			return ejUnexpectedKey(keyOff, key, `$regularExpression; want only "pattern" and "options"`)
		}
	}
	if !haveP || !haveO {
		missing := "pattern"
		if haveP {
			missing = "options"
		}
		return ejErr(w.keyOff, "$regularExpression is missing its "+strconv.Quote(missing)+" key")
	}
	return nil
}

// parseDBPointer reads {"$ref": <namespace>, "$id": {"$oid": <hex>}}.
func (p *ejParser) parseDBPointer(w *ejWrapper) error {
	if err := p.openObject("$dbPointer"); err != nil {
		return err
	}
	var haveRef, haveID bool
	for first := true; ; first = false {
		key, keyOff, ok, err := p.nextMember(first)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		switch string(key) {
		case "$ref":
			if haveRef {
				return ejDupKey(keyOff, "$ref")
			}
			haveRef = true
			if w.str, err = p.innerString("$ref"); err != nil {
				return ejWithParent(err, "$ref")
			}
		case "$id":
			if haveID {
				return ejDupKey(keyOff, "$id")
			}
			haveID = true
			if err := p.parseInnerOID(w); err != nil {
				return ejWithParent(err, "$id")
			}
		default:
			return ejUnexpectedKey(keyOff, key, `$dbPointer; want only "$ref" and "$id"`)
		}
	}
	if !haveRef || !haveID {
		missing := "$ref"
		if haveRef {
			missing = "$id"
		}
		return ejErr(w.keyOff, "$dbPointer is missing its "+strconv.Quote(missing)+" key")
	}
	return nil
}

// parseInnerOID reads {"$oid": <hex>} into w.id.
func (p *ejParser) parseInnerOID(w *ejWrapper) error {
	open := p.pos
	if err := p.openObject(`$id (an {"$oid": ...} object)`); err != nil {
		return err
	}
	have := false
	for first := true; ; first = false {
		key, keyOff, ok, err := p.nextMember(first)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if string(key) != "$oid" || have {
			return ejUnexpectedKey(keyOff, key, `$dbPointer $id; want only "$oid"`)
		}
		have = true
		off := p.pos
		s, err := p.innerString("$oid")
		if err != nil {
			return ejWithParent(err, "$oid")
		}
		if !ejParseHex(w.id[:12], s) {
			return ejWithParent(ejErr(off, "$oid must be 24 hexadecimal digits, found "+ejQuote(s)), "$oid")
		}
	}
	if !have {
		return ejErr(open, `$id must be {"$oid": <24 hex digits>}`)
	}
	return nil
}

// parseDate reads an RFC 3339 string or {"$numberLong": <string>}. The
// BSON corpus requires a bare number to be rejected.
func (p *ejParser) parseDate(w *ejWrapper) error {
	off := p.pos
	if p.pos < len(p.data) && p.data[p.pos] == '"' {
		s, err := p.stringView()
		if err != nil {
			return err
		}
		ms, reason := ejParseISODate(s)
		if reason != "" {
			return ejErr(off, "$date "+ejQuote(s)+" is not an RFC 3339 date-time: "+reason)
		}
		w.i64 = ms
		return nil
	}
	if p.pos >= len(p.data) || p.data[p.pos] != '{' {
		return ejErr(off, `$date must be an RFC 3339 string or {"$numberLong": <string>}, found `+p.describe(off))
	}
	p.pos++
	have := false
	for first := true; ; first = false {
		key, keyOff, ok, err := p.nextMember(first)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if string(key) != "$numberLong" || have {
			return ejUnexpectedKey(keyOff, key, `$date; want only "$numberLong"`)
		}
		have = true
		soff := p.pos
		s, err := p.innerString("$numberLong")
		if err != nil {
			return ejWithParent(err, "$numberLong")
		}
		v, ok := ejParseIntString(s)
		if !ok {
			return ejWithParent(ejErr(soff, "$numberLong must be a decimal 64-bit integer string, found "+ejQuote(s)), "$numberLong")
		}
		w.i64 = v
	}
	if !have {
		return ejErr(off, `$date object must be {"$numberLong": <string>}`)
	}
	return nil
}

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
