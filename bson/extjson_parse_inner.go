package bson

import (
	"strconv"
)

// The inner objects of the wrappers that hold one: $binary, $timestamp,
// $regularExpression, $dbPointer (and its $id) and $date's
// {"$numberLong": ...}. One helper, parseInner, reads their members.

// ejInner describes the object a wrapper key holds ($binary's {"base64",
// "subType"}, $date's {"$numberLong"}...): where names it in errors, and
// keys are its one or two keys, each required exactly once. An absent key
// is reported at missingAt with missing, or, when missing is "", as
// "<where> is missing its "<key>" key".
type ejInner struct {
	where     string
	keys      [2]string // keys[1] is "" for a one-key object
	missingAt int
	missing   string
}

// parseInner reads the members of the inner object o, whose '{' was
// consumed: read is called with the index of each key in o.keys, p.pos at
// its value, and its errors get the key as parent. Unknown and repeated
// keys are errors (a one-key object reports a repeat as an unexpected key).
func (p *ejParser) parseInner(o ejInner, read func(i int) error) error {
	var have [2]bool
	for first := true; ; first = false {
		key, keyOff, ok, err := p.nextMember(first)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		i := 0
		if string(key) != o.keys[0] {
			i = 1
			if o.keys[1] == "" || string(key) != o.keys[1] {
				i = -1
			}
		}
		if i >= 0 && have[i] && o.keys[1] != "" {
			return ejDupKey(keyOff, o.keys[i])
		}
		if i < 0 || have[i] {
			want := `; want only "` + o.keys[0] + `"`
			if o.keys[1] != "" {
				want += ` and "` + o.keys[1] + `"`
			}
			return ejUnexpectedKey(keyOff, key, o.where+want)
		}
		have[i] = true
		if err := read(i); err != nil {
			return ejWithParent(err, o.keys[i])
		}
	}
	for i, k := range o.keys {
		if k == "" || have[i] {
			continue
		}
		if o.missing != "" {
			return ejErr(o.missingAt, o.missing)
		}
		return ejErr(o.missingAt, o.where+" is missing its "+strconv.Quote(k)+" key")
	}
	return nil
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
	return p.parseInner(ejInner{where: "$binary", keys: [2]string{"base64", "subType"}, missingAt: w.keyOff}, func(i int) error {
		off := p.pos
		if i == 0 {
			s, err := p.innerString("base64")
			if err != nil {
				return err
			}
			return p.decodeBase64(w, s, off)
		}
		s, err := p.innerString("subType")
		if err != nil {
			return err
		}
		sub, ok := ejParseSubtype(s)
		if !ok {
			return ejErr(off, "subType "+ejQuote(s)+" is not a one- or two-digit hex binary subtype")
		}
		w.subtype = sub
		return nil
	})
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
	return p.parseInner(ejInner{where: "$timestamp", keys: [2]string{"t", "i"}, missingAt: w.keyOff}, func(i int) (err error) {
		if i == 0 {
			w.u1, err = p.innerUint32("t")
		} else {
			w.u2, err = p.innerUint32("i")
		}
		return err
	})
}

// parseRegularExpression reads {"pattern": ..., "options": ...}.
func (p *ejParser) parseRegularExpression(w *ejWrapper) error {
	if err := p.openObject("$regularExpression"); err != nil {
		return err
	}
	return p.parseInner(ejInner{where: "$regularExpression", keys: [2]string{"pattern", "options"}, missingAt: w.keyOff}, func(i int) error {
		off, what, dst := p.pos, "pattern", &w.str
		if i == 1 {
			what, dst = "options", &w.str2
		}
		s, err := p.innerString(what)
		if err != nil {
			return err
		}
		*dst = s
		return ejCheckRegexPart(s, what, off)
	})
}

// parseDBPointer reads {"$ref": <namespace>, "$id": {"$oid": <hex>}}.
func (p *ejParser) parseDBPointer(w *ejWrapper) error {
	if err := p.openObject("$dbPointer"); err != nil {
		return err
	}
	return p.parseInner(ejInner{where: "$dbPointer", keys: [2]string{"$ref", "$id"}, missingAt: w.keyOff}, func(i int) (err error) {
		if i == 0 {
			w.str, err = p.innerString("$ref")
			return err
		}
		return p.parseInnerOID(w)
	})
}

// parseInnerOID reads {"$oid": <hex>} into w.id.
func (p *ejParser) parseInnerOID(w *ejWrapper) error {
	open := p.pos
	if err := p.openObject(`$id (an {"$oid": ...} object)`); err != nil {
		return err
	}
	return p.parseInner(ejInner{where: "$dbPointer $id", keys: [2]string{"$oid"}, missingAt: open, missing: `$id must be {"$oid": <24 hex digits>}`}, func(int) error {
		off := p.pos
		s, err := p.innerString("$oid")
		if err != nil {
			return err
		}
		if !ejParseHex(w.id[:12], s) {
			return ejErr(off, "$oid must be 24 hexadecimal digits, found "+ejQuote(s))
		}
		return nil
	})
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
	return p.parseInner(ejInner{where: "$date", keys: [2]string{"$numberLong"}, missingAt: off, missing: `$date object must be {"$numberLong": <string>}`}, func(int) error {
		soff := p.pos
		s, err := p.innerString("$numberLong")
		if err != nil {
			return err
		}
		v, ok := ejParseIntString(s)
		if !ok {
			return ejErr(soff, "$numberLong must be a decimal 64-bit integer string, found "+ejQuote(s))
		}
		w.i64 = v
		return nil
	})
}
