package bson

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// ejNormalizeJSON re-emits JSON text compactly, with every string escaped
// the same way (only '"', '\\' and control characters), so two texts that
// differ only in insignificant whitespace or optional escapes compare
// equal, as the corpus specification requires. Numbers keep their exact
// text. It uses encoding/json so that the check does not depend on the
// code under test.
func ejNormalizeJSON(t *testing.T, s string) string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var b strings.Builder
	type frame struct {
		obj bool
		n   int
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("normalizing %q: %v", s, err)
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			b.WriteByte(byte(d))
			continue
		}
		if len(stack) > 0 {
			f := &stack[len(stack)-1]
			switch {
			case f.obj && f.n%2 == 1:
				b.WriteByte(':')
			case f.n > 0:
				b.WriteByte(',')
			}
			f.n++
		}
		switch v := tok.(type) {
		case json.Delim:
			b.WriteByte(byte(v))
			stack = append(stack, frame{obj: v == '{'})
		case string:
			ejTestQuote(&b, v)
		case json.Number:
			b.WriteString(string(v))
		case bool:
			if v {
				b.WriteString("true")
			} else {
				b.WriteString("false")
			}
		case nil:
			b.WriteString("null")
		}
	}
	return b.String()
}

func ejTestQuote(b *strings.Builder, s string) {
	const hexd = "0123456789abcdef"
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hexd[r>>4])
			b.WriteByte(hexd[r&0xF])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

func ejHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// ejCorpusCounts tallies what the runner checked, for the summary line.
type ejCorpusCounts struct {
	valid, assertions, parseErrors, decodeErrors int
	skipped                                      map[string]int
}

func TestExtJSONCorpus(t *testing.T) {
	files := loadCorpus(t)
	c := ejCorpusCounts{skipped: map[string]int{}}
	for name, f := range files {
		t.Run(strings.TrimSuffix(name, ".json"), func(t *testing.T) {
			ejRunCorpusFile(t, &f, &c)
		})
	}
	var skips []string
	for reason, n := range c.skipped {
		skips = append(skips, reason+": "+strconv.Itoa(n))
	}
	t.Logf("Extended JSON corpus: %d files, %d valid cases (%d assertions), %d parseErrors, %d decodeErrors; skipped assertions: %s",
		len(files), c.valid, c.assertions, c.parseErrors, c.decodeErrors, strings.Join(skips, "; "))
}

func ejRunCorpusFile(t *testing.T, f *corpusFile, c *ejCorpusCounts) {
	// toJSON checks bson_to_{canonical,relaxed}_extended_json(b) = want.
	toJSON := func(t *testing.T, what string, b []byte, canonical bool, want string) {
		t.Helper()
		c.assertions++
		got, err := AppendExtJSON(nil, b, canonical)
		if err != nil {
			t.Errorf("%s: AppendExtJSON(%X): %v", what, b, err)
			return
		}
		if g, w := ejNormalizeJSON(t, string(got)), ejNormalizeJSON(t, want); g != w {
			t.Errorf("%s:\n got %s\nwant %s", what, g, w)
		}
	}
	// toBSON checks json_to_bson(j) = want.
	toBSON := func(t *testing.T, what, j string, want []byte) {
		t.Helper()
		c.assertions++
		got, err := ParseExtJSON([]byte(j))
		if err != nil {
			t.Errorf("%s: ParseExtJSON(%s): %v", what, j, err)
			return
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: ParseExtJSON(%s)\n got %X\nwant %X", what, j, []byte(got), want)
		}
		if err := got.Validate(); err != nil {
			t.Errorf("%s: ParseExtJSON(%s) gave invalid BSON: %v", what, j, err)
		}
	}
	for _, v := range f.Valid {
		t.Run(v.Description, func(t *testing.T) {
			c.valid++
			cB := ejHex(t, v.CanonicalBSON)
			toJSON(t, "cB -> cEJ", cB, true, v.CanonicalExtJSON)
			if v.RelaxedExtJSON != "" {
				toJSON(t, "cB -> rEJ", cB, false, v.RelaxedExtJSON)
			}
			if v.Lossy {
				// The corpus marks as lossy the values Extended JSON cannot
				// carry exactly (NaN payloads, non-canonical decimals), so
				// json_to_bson cannot give canonical_bson back.
				c.skipped["json -> cB for lossy cases (spec: 'unless lossy')"]++
			} else {
				toBSON(t, "cEJ -> cB", v.CanonicalExtJSON, cB)
			}
			if v.DegenerateBSON != "" {
				dB := ejHex(t, v.DegenerateBSON)
				toJSON(t, "dB -> cEJ", dB, true, v.CanonicalExtJSON)
				if v.RelaxedExtJSON != "" {
					toJSON(t, "dB -> rEJ", dB, false, v.RelaxedExtJSON)
				}
			}
			if v.DegenerateExtJSON != "" {
				if v.Lossy {
					c.skipped["json -> cB for lossy cases (spec: 'unless lossy')"]++
				} else {
					toBSON(t, "dEJ -> cB", v.DegenerateExtJSON, cB)
				}
			}
			if v.RelaxedExtJSON != "" {
				c.assertions++
				b, err := ParseExtJSON([]byte(v.RelaxedExtJSON))
				if err != nil {
					t.Errorf("rEJ -> BSON: ParseExtJSON(%s): %v", v.RelaxedExtJSON, err)
				} else {
					c.assertions--
					toJSON(t, "rEJ -> BSON -> rEJ", b, false, v.RelaxedExtJSON)
				}
			}
			// The deprecated types' conversions are optional in the spec;
			// they are ordinary documents, so check them both ways too.
			if v.ConvertedBSON != "" && v.ConvertedExtJSON != "" {
				convB := ejHex(t, v.ConvertedBSON)
				toJSON(t, "convertedB -> convertedEJ", convB, true, v.ConvertedExtJSON)
				toBSON(t, "convertedEJ -> convertedB", v.ConvertedExtJSON, convB)
			}
		})
	}
	for _, d := range f.DecodeErrors {
		t.Run("decodeError/"+d.Description, func(t *testing.T) {
			c.decodeErrors++
			b := ejHex(t, d.BSON)
			for _, canonical := range []bool{true, false} {
				out, err := AppendExtJSON([]byte("prefix"), b, canonical)
				var de *DecodeError
				if !errors.As(err, &de) {
					t.Errorf("AppendExtJSON(%X, canonical=%v) = %q, %v; want a *DecodeError", b, canonical, out, err)
					continue
				}
				if string(out) != "prefix" {
					t.Errorf("AppendExtJSON(%X) failed but left %q in dst", b, out)
				}
			}
		})
	}
	for _, p := range f.ParseErrors {
		t.Run("parseError/"+p.Description, func(t *testing.T) {
			c.parseErrors++
			input := p.String
			if f.BSONType == "0x13" {
				// Decimal128 parse errors are bare strings for a decimal
				// parser; reach it through a $numberDecimal wrapper.
				q, err := json.Marshal(p.String)
				if err != nil {
					t.Fatal(err)
				}
				input = `{"d":{"$numberDecimal":` + string(q) + `}}`
			} else if !json.Valid([]byte(input)) {
				// The spec: the input must be valid JSON, so the error is an
				// Extended JSON one.
				t.Errorf("parse error input is not valid JSON: %s", input)
			}
			out, err := AppendParseExtJSON([]byte("prefix"), []byte(input))
			var pe *ExtJSONError
			if !errors.As(err, &pe) {
				t.Errorf("ParseExtJSON(%s) = %X, %v; want an *ExtJSONError", input, out, err)
				return
			}
			if string(out) != "prefix" {
				t.Errorf("ParseExtJSON(%s) failed but left %X in dst", input, out)
			}
			if pe.Offset < 0 || pe.Offset > len(input) {
				t.Errorf("error offset %d outside the input of %d bytes", pe.Offset, len(input))
			}
			if !utf8.ValidString(err.Error()) {
				t.Errorf("error message is not UTF-8: %q", err.Error())
			}
		})
	}
}
