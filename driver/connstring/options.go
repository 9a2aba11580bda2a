package connstring

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// badValue is a setter's verdict that a value is invalid for its option,
// which Parse turns into an InvalidValue Warning (or an *Error under
// WithStrict). Any other error from a setter is returned as is.
type badValue string

func (b badValue) Error() string { return string(b) }

type repeatRule int

const (
	repeatWarn  repeatRule = iota // last valid value wins, with a Warning
	repeatList                    // each occurrence adds to a list
	repeatError                   // the SOCKS5 spec forbids repeats
)

// optionSpec describes one URI option: how to parse it and how String
// writes it back.
type optionSpec struct {
	name      string // canonical spelling
	sensitive bool   // value is a secret: never shown
	// failClosed makes an invalid value an *Error even when Parse is
	// lenient: a security option (tls, ssl, tls*, authMechanism,
	// authSource) must never be ignored, since ignoring tls=yes would
	// connect without TLS.
	failClosed bool
	allowEmpty bool // "" is a meaningful value
	repeat     repeatRule
	set        func(p *parser, v string) error
	// get returns the option's encoded values for String, none when
	// unset; secrets are Redacted unless withSecrets.
	get func(c *ConnString, withSecrets bool) []string

	// For deprecated aliases: the replacement's canonical name, and
	// whether the replacement was given (then the alias is ignored).
	deprecatedFor string
	replaced      func(p *parser) bool
}

// options lists every option in the order String writes them.
var options = markFailClosed([]*optionSpec{
	strOpt("appname", func(c *ConnString) *string { return &c.AppName }, func(v string) string {
		if len(v) > 128 {
			return "longer than 128 bytes, the handshake limit"
		}
		return ""
	}),
	{name: "authMechanism", set: setAuthMechanism, get: func(c *ConnString, _ bool) []string { return strValue(c.AuthMechanism) }},
	{name: "authSource", allowEmpty: true, set: setAuthSource, get: func(c *ConnString, _ bool) []string { return strValue(c.AuthSource) }},
	// Sensitive: a property may be a credential (AWS_SESSION_TOKEN).
	{name: "authMechanismProperties", sensitive: true, set: setAuthMechanismProperties, get: func(c *ConnString, _ bool) []string {
		if c.AuthMechanismProperties == nil {
			return nil
		}
		return []string{encodePairs(c.AuthMechanismProperties)}
	}},
	{name: "gssapiServiceName", deprecatedFor: "authMechanismProperties", set: func(p *parser, v string) error {
		if p.c.AuthMechanismProperties == nil {
			p.c.AuthMechanismProperties = map[string]string{}
		}
		p.c.AuthMechanismProperties["SERVICE_NAME"] = v
		return nil
	}, replaced: func(p *parser) bool {
		_, ok := p.c.AuthMechanismProperties["SERVICE_NAME"]
		return ok
	}},

	{name: "compressors", set: setCompressors, get: func(c *ConnString, _ bool) []string {
		if len(c.Compressors) == 0 {
			return nil
		}
		enc := make([]string, len(c.Compressors))
		for i, s := range c.Compressors {
			enc[i] = escape(s, valueSafe)
		}
		return []string{strings.Join(enc, ",")}
	}},
	intOpt("zlibCompressionLevel", -1, 9, func(c *ConnString) **int { return &c.ZlibCompressionLevel }),

	msOpt("connectTimeoutMS", 0, math.MaxInt32, func(c *ConnString) **time.Duration { return &c.ConnectTimeout }),
	msOpt("socketTimeoutMS", 0, math.MaxInt32, func(c *ConnString) **time.Duration { return &c.SocketTimeout }),
	msOpt("timeoutMS", 0, maxMS, func(c *ConnString) **time.Duration { return &c.Timeout }),
	msOpt("serverSelectionTimeoutMS", 1, math.MaxInt32, func(c *ConnString) **time.Duration { return &c.ServerSelectionTimeout }),
	boolOpt("serverSelectionTryOnce", func(c *ConnString) **bool { return &c.ServerSelectionTryOnce }),
	msOpt("heartbeatFrequencyMS", 500, math.MaxInt32, func(c *ConnString) **time.Duration { return &c.HeartbeatFrequency }),
	msOpt("localThresholdMS", 0, math.MaxInt32, func(c *ConnString) **time.Duration { return &c.LocalThreshold }),

	boolOpt("directConnection", func(c *ConnString) **bool { return &c.DirectConnection }),
	boolOpt("loadBalanced", func(c *ConnString) **bool { return &c.LoadBalanced }),
	strOpt("replicaSet", func(c *ConnString) *string { return &c.ReplicaSet }, nil),
	strOpt("serverMonitoringMode", func(c *ConnString) *string { return &c.ServerMonitoringMode }, func(v string) string {
		if v != "stream" && v != "poll" && v != "auto" {
			return `must be "stream", "poll" or "auto"`
		}
		return ""
	}),
	intOpt("srvMaxHosts", 0, math.MaxInt32, func(c *ConnString) **int { return &c.SRVMaxHosts }),
	strOpt("srvServiceName", func(c *ConnString) *string { return &c.SRVServiceName }, checkServiceName),

	intOpt("maxPoolSize", 0, math.MaxInt32, func(c *ConnString) **int { return &c.MaxPoolSize }),
	intOpt("minPoolSize", 0, math.MaxInt32, func(c *ConnString) **int { return &c.MinPoolSize }),
	intOpt("maxConnecting", 1, math.MaxInt32, func(c *ConnString) **int { return &c.MaxConnecting }),
	msOpt("maxIdleTimeMS", 0, math.MaxInt32, func(c *ConnString) **time.Duration { return &c.MaxIdleTime }),
	msOpt("waitQueueTimeoutMS", 1, math.MaxInt32, func(c *ConnString) **time.Duration { return &c.WaitQueueTimeout }),

	{name: "readPreference", set: setReadPreference, get: func(c *ConnString, _ bool) []string { return strValue(c.ReadPreference) }},
	{name: "readPreferenceTags", allowEmpty: true, repeat: repeatList, set: setReadPreferenceTags, get: func(c *ConnString, _ bool) []string {
		if c.ReadPreferenceTags == nil {
			return nil
		}
		out := make([]string, len(c.ReadPreferenceTags))
		for i, set := range c.ReadPreferenceTags {
			out[i] = encodePairs(set)
		}
		return out
	}},
	{name: "maxStalenessSeconds", set: setMaxStaleness, get: func(c *ConnString, _ bool) []string {
		if c.MaxStaleness == nil {
			return nil
		}
		return []string{strconv.FormatInt(int64(*c.MaxStaleness/time.Second), 10)}
	}},
	strOpt("readConcernLevel", func(c *ConnString) *string { return &c.ReadConcernLevel }, nil),
	{name: "w", set: setW, get: func(c *ConnString, _ bool) []string {
		if c.W == nil {
			return nil
		}
		return []string{escape(c.W.String(), valueSafe)}
	}},
	boolOpt("journal", func(c *ConnString) **bool { return &c.Journal }),
	wTimeoutOption,
	{name: "wtimeout", deprecatedFor: "wTimeoutMS", set: func(p *parser, v string) error {
		return wTimeoutOption.set(p, v)
	}, replaced: func(p *parser) bool { return p.seen["wTimeoutMS"] > 0 }},

	boolOpt("retryReads", func(c *ConnString) **bool { return &c.RetryReads }),
	boolOpt("retryWrites", func(c *ConnString) **bool { return &c.RetryWrites }),
	intOpt("maxAdaptiveRetries", 0, math.MaxInt32, func(c *ConnString) **int { return &c.MaxAdaptiveRetries }),
	boolOpt("enableOverloadRetargeting", func(c *ConnString) **bool { return &c.EnableOverloadRetargeting }),

	{name: "tls", set: setTLS, get: func(c *ConnString, _ bool) []string { return boolValue(c.TLS) }},
	{name: "ssl", set: setTLS},
	strOpt("tlsCAFile", func(c *ConnString) *string { return &c.TLSCAFile }, nil),
	strOpt("tlsCertificateKeyFile", func(c *ConnString) *string { return &c.TLSCertificateKeyFile }, nil),
	secretOpt("tlsCertificateKeyFilePassword", func(c *ConnString) *Secret { return &c.TLSCertificateKeyFilePassword }, repeatWarn),
	boolOpt("tlsAllowInvalidCertificates", func(c *ConnString) **bool { return &c.TLSAllowInvalidCertificates }),
	boolOpt("tlsAllowInvalidHostnames", func(c *ConnString) **bool { return &c.TLSAllowInvalidHostnames }),
	boolOpt("tlsInsecure", func(c *ConnString) **bool { return &c.TLSInsecure }),
	boolOpt("tlsDisableOCSPEndpointCheck", func(c *ConnString) **bool { return &c.TLSDisableOCSPEndpointCheck }),
	boolOpt("tlsDisableCertificateRevocationCheck", func(c *ConnString) **bool { return &c.TLSDisableCertificateRevocationCheck }),

	withRepeat(strOpt("proxyHost", func(c *ConnString) *string { return &c.ProxyHost }, nil), repeatError),
	withRepeat(intOpt("proxyPort", 1, 65535, func(c *ConnString) **int { return &c.ProxyPort }), repeatError),
	withRepeat(strOpt("proxyUsername", func(c *ConnString) *string { return &c.ProxyUsername }, nil), repeatError),
	secretOpt("proxyPassword", func(c *ConnString) *Secret { return &c.ProxyPassword }, repeatError),
})

// markFailClosed marks the security options: tls, its alias ssl, every
// tls* option, authMechanism and authSource.
func markFailClosed(opts []*optionSpec) []*optionSpec {
	for _, o := range opts {
		switch {
		case o.name == "ssl", o.name == "authMechanism", o.name == "authSource",
			len(o.name) >= 3 && o.name[:3] == "tls":
			o.failClosed = true
		}
	}
	return opts
}

// FailsClosed reports whether option (a canonical or any-case option name)
// is a security option whose invalid value is an *Error whatever the
// parse mode: tls, ssl, every tls* option, authMechanism and authSource.
func FailsClosed(option string) bool {
	o := optionTable[asciiLower(option)]
	return o != nil && o.failClosed
}

// wTimeoutOption is shared with its deprecated alias wtimeout.
var wTimeoutOption = msOpt("wTimeoutMS", 0, maxMS, func(c *ConnString) **time.Duration { return &c.WTimeout })

// optionTable maps lower-cased keys to options.
var optionTable = func() map[string]*optionSpec {
	m := make(map[string]*optionSpec, len(options))
	for _, o := range options {
		m[asciiLower(o.name)] = o
	}
	return m
}()

// maxMS is the largest millisecond count a time.Duration holds; the 64-bit
// options (timeoutMS, wTimeoutMS) are capped there.
const maxMS = math.MaxInt64 / int64(time.Millisecond)

func withRepeat(o *optionSpec, r repeatRule) *optionSpec {
	o.repeat = r
	return o
}

func strValue(s string) []string {
	if s == "" {
		return nil
	}
	return []string{escape(s, valueSafe)}
}

func boolValue(b *bool) []string {
	if b == nil {
		return nil
	}
	return []string{strconv.FormatBool(*b)}
}

// strOpt is a string option; check returns why a value is invalid, or "".
func strOpt(name string, field func(*ConnString) *string, check func(string) string) *optionSpec {
	return &optionSpec{
		name: name,
		set: func(p *parser, v string) error {
			if check != nil {
				if reason := check(v); reason != "" {
					return badValue(reason)
				}
			}
			*field(p.c) = v
			return nil
		},
		get: func(c *ConnString, _ bool) []string { return strValue(*field(c)) },
	}
}

func secretOpt(name string, field func(*ConnString) *Secret, r repeatRule) *optionSpec {
	return &optionSpec{
		name:      name,
		sensitive: true,
		repeat:    r,
		set: func(p *parser, v string) error {
			*field(p.c) = Secret(v)
			return nil
		},
		get: func(c *ConnString, withSecrets bool) []string {
			s := *field(c)
			if s == "" {
				return nil
			}
			if !withSecrets {
				return []string{Redacted}
			}
			return []string{escape(string(s), valueSafe)}
		},
	}
}

func boolOpt(name string, field func(*ConnString) **bool) *optionSpec {
	return &optionSpec{
		name: name,
		set: func(p *parser, v string) error {
			b, err := parseBool(v)
			if err != nil {
				return err
			}
			*field(p.c) = &b
			return nil
		},
		get: func(c *ConnString, _ bool) []string { return boolValue(*field(c)) },
	}
}

func intOpt(name string, lo, hi int64, field func(*ConnString) **int) *optionSpec {
	return &optionSpec{
		name: name,
		set: func(p *parser, v string) error {
			n, err := parseInt(v, lo, hi)
			if err != nil {
				return err
			}
			i := int(n)
			*field(p.c) = &i
			return nil
		},
		get: func(c *ConnString, _ bool) []string {
			if f := *field(c); f != nil {
				return []string{strconv.Itoa(*f)}
			}
			return nil
		},
	}
}

// msOpt is a duration given in milliseconds.
func msOpt(name string, lo, hi int64, field func(*ConnString) **time.Duration) *optionSpec {
	return &optionSpec{
		name: name,
		set: func(p *parser, v string) error {
			n, err := parseInt(v, lo, hi)
			if err != nil {
				return err
			}
			d := time.Duration(n) * time.Millisecond
			*field(p.c) = &d
			return nil
		},
		get: func(c *ConnString, _ bool) []string {
			if f := *field(c); f != nil {
				return []string{strconv.FormatInt(int64(*f/time.Millisecond), 10)}
			}
			return nil
		},
	}
}

func parseBool(v string) (bool, error) {
	switch v {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, badValue(`must be "true" or "false"`)
}

// parseInt accepts an optional "-" and decimal digits, within [lo, hi].
func parseInt(v string, lo, hi int64) (int64, error) {
	digits := strings.TrimPrefix(v, "-")
	if !allDigits(digits) {
		return 0, badValue("not an integer")
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, badValue("must be an integer from " + strconv.FormatInt(lo, 10) + " to " + strconv.FormatInt(hi, 10))
	}
	return n, nil
}

// Mechanism names, as the auth specification spells them.
const (
	MechanismSCRAMSHA1   = "SCRAM-SHA-1"
	MechanismSCRAMSHA256 = "SCRAM-SHA-256"
	MechanismPLAIN       = "PLAIN"
	MechanismGSSAPI      = "GSSAPI"
	MechanismX509        = "MONGODB-X509"
	MechanismAWS         = "MONGODB-AWS"
	MechanismOIDC        = "MONGODB-OIDC"
)

var mechanisms = []string{MechanismSCRAMSHA1, MechanismSCRAMSHA256, MechanismPLAIN, MechanismGSSAPI, MechanismX509, MechanismAWS, MechanismOIDC}

// setAuthMechanism accepts any letter case. An unknown mechanism is an
// error, not a warning: ignoring it would silently authenticate some other
// way.
func setAuthMechanism(p *parser, v string) error {
	for _, m := range mechanisms {
		if strings.EqualFold(v, m) {
			p.c.AuthMechanism = m
			return nil
		}
	}
	return &Error{Option: "authMechanism", Value: v, Reason: "unsupported mechanism; use one of " + strings.Join(mechanisms, ", ")}
}

func setAuthSource(p *parser, v string) error {
	if v == "" {
		return &Error{Option: "authSource", Reason: "empty value (the auth specification makes this an error)"}
	}
	p.c.AuthSource = v
	return nil
}

// setAuthMechanismProperties parses "KEY:value,KEY2:value2" after
// percent-decoding, so an encoded comma still separates pairs. A pair
// without ":" is dropped with a warning; the rest are kept. Values are
// never shown: some mechanisms' properties are credentials.
func setAuthMechanismProperties(p *parser, v string) error {
	props := map[string]string{}
	for _, pair := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(pair, ":")
		if !ok || k == "" {
			if p.cfg.strict {
				return &Error{Option: "authMechanismProperties", Value: Redacted, Reason: `element without "KEY:" (a value cannot contain ",")`}
			}
			p.warn(Warning{Kind: InvalidValue, Option: "authMechanismProperties", Value: Redacted,
				Message: `option authMechanismProperties: an element without "KEY:" ignored (a value cannot contain ",")`})
			continue
		}
		k = asciiUpper(k)
		if _, dup := props[k]; dup {
			p.warn(Warning{Kind: RepeatedOption, Option: "authMechanismProperties", Value: k,
				Message: "option authMechanismProperties: property " + strconv.Quote(k) + " given more than once; the last is used"})
		}
		props[k] = val
	}
	if len(props) == 0 {
		return badValue("no KEY:value pairs")
	}
	p.c.AuthMechanismProperties = props
	return nil
}

// Compressor names this driver supports.
var compressorNames = []string{"snappy", "zlib", "zstd"}

func setCompressors(p *parser, v string) error {
	var list []string
	for _, name := range strings.Split(v, ",") {
		if name == "" {
			continue
		}
		known := false
		for _, c := range compressorNames {
			known = known || c == name
		}
		if !known {
			if p.cfg.strict {
				return &Error{Option: "compressors", Value: name, Reason: "unsupported compressor; use " + strings.Join(compressorNames, ", ")}
			}
			p.warn(Warning{Kind: InvalidValue, Option: "compressors", Value: name,
				Message: "option compressors: unsupported compressor " + strconv.Quote(name) + " ignored"})
			continue
		}
		dup := false
		for _, have := range list {
			dup = dup || have == name
		}
		if !dup {
			list = append(list, name)
		}
	}
	// With no supported name the value is ignored like any invalid one
	// (each name was already reported), and unset keeps one
	// representation: nil.
	if list != nil {
		p.c.Compressors = list
	}
	return nil
}

// Read preference modes.
var readPreferenceModes = []string{"primary", "primaryPreferred", "secondary", "secondaryPreferred", "nearest"}

func setReadPreference(p *parser, v string) error {
	for _, m := range readPreferenceModes {
		if v == m {
			p.c.ReadPreference = m
			return nil
		}
	}
	for _, m := range readPreferenceModes {
		if strings.EqualFold(v, m) {
			p.warn(Warning{Kind: NonCanonicalValue, Option: "readPreference", Value: v,
				Message: "option readPreference value " + strconv.Quote(v) + " should be written " + strconv.Quote(m)})
			p.c.ReadPreference = m
			return nil
		}
	}
	return badValue("unknown mode; use one of " + strings.Join(readPreferenceModes, ", "))
}

// setReadPreferenceTags adds one tag set; "" is the empty tag set.
func setReadPreferenceTags(p *parser, v string) error {
	set := map[string]string{}
	if v != "" {
		for _, pair := range strings.Split(v, ",") {
			k, val, ok := strings.Cut(pair, ":")
			if !ok || k == "" {
				return badValue(`each tag must be "name:value"`)
			}
			if _, dup := set[k]; dup {
				return badValue("tag " + strconv.Quote(k) + " given twice in one tag set")
			}
			set[k] = val
		}
	}
	p.c.ReadPreferenceTags = append(p.c.ReadPreferenceTags, set)
	return nil
}

// setMaxStaleness takes -1 (no maximum, stored as unset) or at least 90
// seconds, the spec's smallestMaxStalenessSeconds.
func setMaxStaleness(p *parser, v string) error {
	n, err := parseInt(v, -1, math.MaxInt32)
	if err != nil {
		return err
	}
	switch {
	case n == -1:
		p.c.MaxStaleness = nil
		return nil
	case n < 90:
		return badValue("must be -1 (no maximum) or at least 90")
	}
	d := time.Duration(n) * time.Second
	p.c.MaxStaleness = &d
	return nil
}

// setW takes a non-negative number of nodes or any other string as a tag.
func setW(p *parser, v string) error {
	if allDigits(strings.TrimPrefix(v, "-")) {
		n, err := parseInt(v, 0, math.MaxInt32)
		if err != nil {
			return badValue("must be a non-negative integer or a tag such as \"majority\"")
		}
		p.c.W = &W{Nodes: int(n)}
		return nil
	}
	p.c.W = &W{Tag: v}
	return nil
}

func setTLS(p *parser, v string) error {
	b, err := parseBool(v)
	if err != nil {
		return err
	}
	p.tlsValues = append(p.tlsValues, b)
	p.c.TLS = &b
	return nil
}

// checkServiceName applies RFC 6335 section 5.1: 1 to 15 letters, digits
// and hyphens, at least one letter, no hyphen at either end or twice in a
// row.
func checkServiceName(v string) string {
	// RFC 6335 allows 15 characters; the seedlist spec lifts that to what
	// fits in one DNS label with the leading underscore: 62.
	const reason = "not an RFC 6335 service name (1-62 letters, digits and single inner hyphens, with a letter)"
	if len(v) > 62 || v[0] == '-' || v[len(v)-1] == '-' || strings.Contains(v, "--") {
		return reason
	}
	letter := false
	for i := 0; i < len(v); i++ {
		b := v[i]
		switch {
		case 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z':
			letter = true
		case '0' <= b && b <= '9' || b == '-':
		default:
			return reason
		}
	}
	if !letter {
		return reason
	}
	return ""
}

// encodePairs writes a key:value map, keys sorted so output is stable.
func encodePairs(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(escape(k, valueSafe))
		b.WriteByte(':')
		b.WriteString(escape(m[k], valueSafe))
	}
	return b.String()
}
