package bson

// MarshalExtJSON encodes v, any value Marshal accepts as a document, as
// Extended JSON: canonical when canonical is set, which keeps every BSON
// type, otherwise relaxed, which writes numbers and dates plainly.
func MarshalExtJSON(v any, canonical bool) ([]byte, error) {
	s := getScratch()
	defer func() { putScratch(s, (*s)[:0]) }()
	doc, err := appendDocumentValue((*s)[:0], v, 1)
	*s = doc
	if err != nil {
		return nil, err
	}
	return AppendExtJSON(nil, doc, canonical)
}

// UnmarshalExtJSON parses Extended JSON (canonical, relaxed, or the legacy
// forms the specification requires parsers to accept) into v by the rules
// of Unmarshal. Parse errors are *ExtJSONError values naming the byte offset
// and key path.
func UnmarshalExtJSON(data []byte, v any) error {
	s := getScratch()
	doc, err := AppendParseExtJSON((*s)[:0], data)
	if err == nil {
		err = Unmarshal(doc, v)
	}
	putScratch(s, doc)
	return err
}

// String returns d as relaxed Extended JSON, or a description of why it
// cannot be encoded.
func (d D) String() string { return valueString(d) }

// String returns m as relaxed Extended JSON, or a description of why it
// cannot be encoded.
func (m M) String() string { return valueString(m) }

func valueString(v any) string {
	b, err := MarshalExtJSON(v, false)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}
