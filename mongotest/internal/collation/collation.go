package collation

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"sync"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// ICUVersion is the collator version mongod reports in a collation's
// filled-in spec (the ICU it is built with).
const ICUVersion = "57.1"

// Codes of mongod's IDL parser for the collation document.
const (
	codeIDLMissing   = 40414 // "BSON field 'collation.locale' is missing but a required field"
	codeIDLUnknown   = 40415 // "BSON field 'collation.x' is an unknown field."
	codeIDLValidator = 51024 // a field's validator (strength 0 to 5) failed
)

// Collation is a parsed, non-simple collation with mongod's defaults
// filled in. A nil *Collation is the simple (binary) collation. It is safe
// for concurrent use.
type Collation struct {
	Locale          string
	CaseLevel       bool
	CaseFirst       string
	Strength        int
	NumericOrdering bool
	Alternate       string
	MaxVariable     string
	Normalization   bool
	Backwards       bool

	mu   sync.Mutex
	coll *collate.Collator
}

// localeRE is the shape of the ICU locale names mongotest accepts:
// language, optional script, optional region, as ICU spells them
// canonically ("en", "en_US", "zh_Hant", "sr_Latn_RS").
var localeRE = regexp.MustCompile(`^[a-z]{2,3}(_[A-Z][a-z]{3})?(_([A-Z]{2}|[0-9]{3}))?$`)

// supported is the set of base languages x/text has collation tables for.
var supported = func() map[string]bool {
	m := map[string]bool{}
	for _, t := range collate.Supported() {
		b, _ := t.Base()
		m[b.String()] = true
	}
	return m
}()

// Parse reads the collation option value v as mongod's collator factory
// does. It returns nil (and no error) for {locale: "simple"}.
func Parse(v bson.RawValue) (*Collation, error) {
	spec, ok := v.DocumentOK()
	if !ok {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field 'collation' is the wrong type '%s', expected type 'object'", mongoerr.TypeName(v.Type))
	}
	c := &Collation{CaseFirst: "off", Strength: 3, Alternate: "non-ignorable", MaxVariable: "punct"}
	hasLocale, hasBackwards := false, false
	version := ""
	it := spec.Iter()
	for it.Next() {
		k, e := it.Key(), it.Value()
		var err error
		switch k {
		case "locale":
			hasLocale = true
			c.Locale, err = str(k, e)
		case "caseLevel":
			c.CaseLevel, err = boolean(k, e)
		case "caseFirst":
			c.CaseFirst, err = enum(k, e, "CollationCaseFirst", "upper", "lower", "off")
		case "strength":
			c.Strength, err = safeInt(k, e)
			if err == nil && (c.Strength < 0 || c.Strength > 5) {
				op := ">= 0"
				if c.Strength > 5 {
					op = "<= 5"
				}
				err = mongoerr.New(codeIDLValidator, "BSON field 'strength' value must be %s, actual value '%d'", op, c.Strength)
			}
		case "numericOrdering":
			c.NumericOrdering, err = boolean(k, e)
		case "alternate":
			c.Alternate, err = enum(k, e, "CollationAlternate", "non-ignorable", "shifted")
		case "maxVariable":
			c.MaxVariable, err = enum(k, e, "CollationMaxVariable", "punct", "space")
		case "normalization":
			c.Normalization, err = boolean(k, e)
		case "backwards":
			hasBackwards = true
			c.Backwards, err = boolean(k, e)
		case "version":
			version, err = str(k, e)
		default:
			err = mongoerr.New(codeIDLUnknown, "BSON field 'collation.%s' is an unknown field.", k)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := it.Err(); err != nil {
		return nil, mongoerr.New(mongoerr.BadValue, "collation is not a valid BSON document: %v", err)
	}
	if !hasLocale {
		return nil, mongoerr.New(codeIDLMissing, "BSON field 'collation.locale' is missing but a required field")
	}
	js := specJSON(spec)
	if strings.IndexByte(c.Locale, 0) >= 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "Field 'locale' cannot contain null byte. Collation spec: %s", js)
	}
	if c.Locale == "simple" {
		return nil, nil
	}
	if c.Locale == "" {
		return nil, mongoerr.New(mongoerr.BadValue, "Field 'locale' cannot be the empty string in: %s", js)
	}
	if strings.Contains(c.Locale, "@") {
		return nil, mongoerr.New(mongoerr.NotImplemented, "mongotest does not support collation locale variants (%q)", c.Locale)
	}
	if !localeRE.MatchString(c.Locale) {
		return nil, mongoerr.New(mongoerr.BadValue, "Field 'locale' is invalid in: %s", js)
	}
	tag, err := language.Parse(strings.ReplaceAll(c.Locale, "_", "-"))
	if err != nil {
		return nil, mongoerr.New(mongoerr.BadValue, "Field 'locale' is invalid in: %s", js)
	}
	if base, _ := tag.Base(); !supported[base.String()] {
		return nil, mongoerr.New(mongoerr.NotImplemented, "mongotest has no collation data for locale %q", c.Locale)
	}
	if !hasBackwards && c.Locale == "fr_CA" {
		c.Backwards = true // the one CLDR default mongotest's locales change
	}
	if version != "" && version != ICUVersion {
		return nil, mongoerr.New(mongoerr.IncompatibleCollationVersion, "Requested collation version %s but the only available collator version was %s. Requested collation spec: %s", version, ICUVersion, js)
	}
	if c.Backwards && c.Strength == 1 {
		return nil, mongoerr.New(mongoerr.BadValue, "'backwards' is invalid with 'strength' of 1 in: %s", js)
	}
	if c.CaseFirst != "off" && !c.CaseLevel && c.Strength <= 2 {
		return nil, mongoerr.New(mongoerr.BadValue, "'caseFirst' is invalid unless 'caseLevel' is on or 'strength' is greater than 2 in: %s", js)
	}
	switch {
	case c.CaseFirst != "off":
		return nil, mongoerr.New(mongoerr.NotImplemented, "mongotest does not support collation caseFirst %q", c.CaseFirst)
	case c.Alternate != "non-ignorable":
		return nil, mongoerr.New(mongoerr.NotImplemented, "mongotest does not support collation alternate %q", c.Alternate)
	case c.Strength == 0:
		return nil, mongoerr.New(mongoerr.NotImplemented, "mongotest does not support collation strength 0")
	}
	c.coll = collate.New(c.tag(tag))
	return c, nil
}

// tag is the BCP 47 tag carrying c's options as -u- keywords, which is how
// x/text's collator takes strength, caseLevel, backwards and numeric.
func (c *Collation) tag(base language.Tag) language.Tag {
	var b strings.Builder
	b.WriteString(base.String())
	b.WriteString("-u")
	levels := [...]string{1: "level1", 2: "level2", 3: "level3", 4: "level4", 5: "identic"}
	fmt.Fprintf(&b, "-kb-%t-kc-%t-kn-%t-ks-%s", c.Backwards, c.CaseLevel, c.NumericOrdering, levels[c.Strength])
	t, err := language.Parse(b.String())
	if err != nil {
		return base
	}
	return t
}

// CompareString orders two strings by the collation; a nil c compares
// their bytes.
func (c *Collation) CompareString(a, b string) int {
	if c == nil {
		return strings.Compare(a, b)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.coll.CompareString(a, b)
}

// SortKey returns the collation's sort key for s: two strings have equal
// keys exactly when CompareString says they are equal.
func (c *Collation) SortKey(s string) []byte {
	if c == nil {
		return []byte(s)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var buf collate.Buffer
	return append([]byte(nil), c.coll.KeyFromString(&buf, s)...)
}

// Spec is the collation document with every default filled in, as mongod
// shows it in listIndexes and listCollections; nil for simple.
func (c *Collation) Spec() bson.Raw {
	if c == nil {
		return nil
	}
	start, b := bson.AppendDocumentStart(nil)
	b = bson.AppendStringElement(b, "locale", c.Locale)
	b = bson.AppendBooleanElement(b, "caseLevel", c.CaseLevel)
	b = bson.AppendStringElement(b, "caseFirst", c.CaseFirst)
	b = bson.AppendInt32Element(b, "strength", int32(c.Strength))
	b = bson.AppendBooleanElement(b, "numericOrdering", c.NumericOrdering)
	b = bson.AppendStringElement(b, "alternate", c.Alternate)
	b = bson.AppendStringElement(b, "maxVariable", c.MaxVariable)
	b = bson.AppendBooleanElement(b, "normalization", c.Normalization)
	b = bson.AppendBooleanElement(b, "backwards", c.Backwards)
	b = bson.AppendStringElement(b, "version", ICUVersion)
	b, _ = bson.AppendDocumentEnd(b, start)
	return b
}

// Same reports whether a and b are the same collation (nil is simple).
func Same(a, b *Collation) bool {
	if a == nil || b == nil {
		return a == b
	}
	return string(a.Spec()) == string(b.Spec())
}

func specJSON(spec bson.Raw) string {
	js, err := bson.AppendExtJSON(nil, spec, false)
	if err != nil {
		return "{}"
	}
	return string(js)
}

func str(k string, v bson.RawValue) (string, error) {
	s, ok := v.StringValueOK()
	if !ok {
		return "", wrongType(k, v, "'string'")
	}
	return s, nil
}

func boolean(k string, v bson.RawValue) (bool, error) {
	if v.Type != bson.TypeBoolean {
		return false, wrongType(k, v, "'bool'")
	}
	return v.Boolean(), nil
}

func enum(k string, v bson.RawValue, enumName string, values ...string) (string, error) {
	s, err := str(k, v)
	if err != nil {
		return "", err
	}
	for _, x := range values {
		if s == x {
			return s, nil
		}
	}
	return "", mongoerr.New(mongoerr.BadValue, "Enumeration value '%s' for field 'collation.%s' is not a valid value.", s, k)
}

// safeInt reads an IDL safeInt: any number within int32 range, truncated.
func safeInt(k string, v bson.RawValue) (int, error) {
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64:
		n, _ := v.AsInt64OK()
		if n < math.MinInt32 || n > math.MaxInt32 {
			return 0, mongoerr.New(mongoerr.BadValue, "BSON field 'collation.%s' value %d is out of range", k, n)
		}
		return int(n), nil
	case bson.TypeDouble:
		f := v.Double()
		if math.IsNaN(f) || f < math.MinInt32 || f > math.MaxInt32 {
			return 0, mongoerr.New(mongoerr.BadValue, "BSON field 'collation.%s' value %v is out of range", k, f)
		}
		return int(f), nil
	case bson.TypeDecimal128:
		return 0, mongoerr.New(mongoerr.NotImplemented, "mongotest does not read a decimal collation.%s", k)
	}
	return 0, wrongType(k, v, "'[long, int, decimal, double]'")
}

func wrongType(k string, v bson.RawValue, want string) error {
	what := "type"
	if strings.HasPrefix(want, "'[") {
		what = "types"
	}
	return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'collation.%s' is the wrong type '%s', expected %s %s", k, mongoerr.TypeName(v.Type), what, want)
}

// Requested returns the collation option v (already accepted by Parse)
// as mongod's create parser keeps it, which its messages quote: every
// field of its IDL form in order, with the IDL defaults (not the
// locale's) for those not given, and backwards and version only when
// given.
func Requested(v bson.RawValue) bson.Raw {
	spec, _ := v.DocumentOK()
	given := func(k string) (bson.RawValue, bool) {
		e, err := spec.LookupErr(k)
		return e, err == nil
	}
	start, b := bson.AppendDocumentStart(nil)
	locale, _ := spec.Lookup("locale").StringValueOK()
	b = bson.AppendStringElement(b, "locale", locale)
	for _, f := range []struct {
		key string
		def any
	}{{"caseLevel", false}, {"caseFirst", "off"}, {"strength", 3}, {"numericOrdering", false},
		{"alternate", "non-ignorable"}, {"maxVariable", "punct"}, {"normalization", false}} {
		val := f.def
		if e, ok := given(f.key); ok {
			switch f.def.(type) {
			case bool:
				val = e.Boolean()
			case string:
				val = e.StringValue()
			case int:
				val, _ = safeInt(f.key, e)
			}
		}
		switch x := val.(type) {
		case bool:
			b = bson.AppendBooleanElement(b, f.key, x)
		case string:
			b = bson.AppendStringElement(b, f.key, x)
		case int:
			b = bson.AppendInt32Element(b, f.key, int32(x))
		}
	}
	if e, ok := given("backwards"); ok {
		b = bson.AppendBooleanElement(b, "backwards", e.Boolean())
	}
	if e, ok := given("version"); ok {
		b = bson.AppendStringElement(b, "version", e.StringValue())
	}
	b, _ = bson.AppendDocumentEnd(b, start)
	return b
}
