package query

import (
	"regexp"
	"strings"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// regexPred matches strings and symbols against a regular expression, and
// regex values equal to the pattern itself, as mongod does.
type regexPred struct {
	re               *regexp.Regexp
	pattern, options string
}

func (p *regexPred) matchElem(v bson.RawValue) bool {
	switch v.Type {
	case bson.TypeString, bson.TypeSymbol:
		return p.re.Match(stringBytes(v.Value))
	case bson.TypeRegex:
		pat, opts, _ := v.RegexOK()
		return pat == p.pattern && opts == p.options
	}
	return false
}

// compileRegex translates a MongoDB (PCRE) pattern with its options into
// a Go regexp. Options i, m and s map to Go's flags; x (extended) is done
// here by dropping unescaped whitespace and #-comments outside character
// classes; u is accepted as Go is always Unicode-aware. Syntax Go's RE2
// lacks is reported as an invalid regular expression.
func compileRegex(pattern, options string) (*regexp.Regexp, error) {
	var flags strings.Builder
	extended := false
	for i := 0; i < len(options); i++ {
		switch c := options[i]; c {
		case 'i', 'm', 's':
			flags.WriteByte(c)
		case 'x':
			extended = true
		case 'u':
		default:
			return nil, mongoerr.New(51108, "invalid flag in regex options: %c", c)
		}
	}
	if extended {
		pattern = stripExtended(pattern)
	}
	expr := pattern
	if flags.Len() > 0 {
		expr = "(?" + flags.String() + ")" + pattern
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, mongoerr.New(51091, "Regular expression is invalid: %v", err)
	}
	return re, nil
}

// stripExtended removes what PCRE's extended mode ignores: whitespace and
// comments from # to the end of the line, outside classes and escapes.
func stripExtended(p string) string {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			b.WriteByte(c)
			b.WriteByte(p[i+1])
			i++
		case inClass:
			if c == ']' {
				inClass = false
			}
			b.WriteByte(c)
		case c == '[':
			inClass = true
			b.WriteByte(c)
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
		case c == '#':
			for i < len(p) && p[i] != '\n' {
				i++
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
