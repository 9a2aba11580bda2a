package bson

import (
	"math"
	"strconv"
)

// Type wrappers: once an object closes, finishWrapper turns what its
// special keys held into the typed value; parseWrapperValue reads each
// special key's value, and the helpers below read the inner objects some
// wrappers hold.

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
