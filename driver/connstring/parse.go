package connstring

import (
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Parse parses a "mongodb://" or "mongodb+srv://" connection string.
//
// It follows the Connection String and URI Options specifications: option
// keys are case-insensitive; an unknown key, or a value that is empty or
// invalid for its option, is ignored with a Warning (an *Error under
// WithStrict); a security option is the exception (see FailsClosed): its
// invalid or empty value is always an *Error, so that a typo such as
// tls=yes cannot silently connect without TLS; a repeated key keeps its last valid value with a Warning,
// except readPreferenceTags, which is a list, and the proxy options, which
// the SOCKS5 specification makes errors. Conflicting options, malformed
// hosts or userinfo and invalid credentials are errors of type *Error.
// Booleans are "true" or "false" only; "&" is the only option delimiter;
// "+" is not decoded as a space. An "@" in the database name must be
// percent-encoded: an unencoded one is taken for a password with an
// unencoded "/" and rejected.
//
// For "mongodb+srv" Parse checks what can be checked before DNS resolution
// (one host, no port, no directConnection=true, and the srvMaxHosts rules);
// the rules that depend on the resolved seeds and TXT options run again in
// the SRV resolution step.
//
// Parse never panics and never puts a password, tlsCertificateKeyFilePassword
// or proxyPassword into an error or warning.
func Parse(uri string, opts ...Option) (*ConnString, error) {
	p := &parser{c: &ConnString{}, seen: map[string]int{}}
	for _, o := range opts {
		if o != nil {
			o(&p.cfg)
		}
	}
	if err := p.parse(uri); err != nil {
		return nil, err
	}
	return p.c, nil
}

// parser holds the state of one Parse call.
type parser struct {
	cfg parseConfig
	c   *ConnString

	// seen counts each option by canonical name, to find repeats.
	seen map[string]int
	// tlsValues are the valid values of every tls and ssl key, which the
	// URI options spec requires to agree.
	tlsValues []bool
	// deprecated holds aliases applied after the loop, once it is known
	// whether their replacement is present.
	deprecated []deprecatedValue
	// userinfo records an "@" in the host part, which turns on
	// authentication even with an empty username.
	userinfo bool
	// suspicious is set when "@" appears after the host part. Such a URI
	// may be userinfo with an unescaped "/" or "?", so errors about the
	// host part must not echo it: it could be part of a password.
	suspicious bool
}

type deprecatedValue struct {
	spec  *optionSpec
	value string
}

const (
	prefixMongoDB = SchemeMongoDB + "://"
	prefixSRV     = SchemeSRV + "://"
)

func (p *parser) parse(uri string) error {
	var rest string
	switch {
	case strings.HasPrefix(uri, prefixMongoDB):
		p.c.Scheme, rest = SchemeMongoDB, uri[len(prefixMongoDB):]
	case strings.HasPrefix(uri, prefixSRV):
		p.c.Scheme, rest = SchemeSRV, uri[len(prefixSRV):]
	case uri == "":
		return &Error{Option: "uri", Reason: "empty connection string"}
	default:
		return &Error{Option: "scheme", Value: schemeOf(uri), Reason: `must be "mongodb://" or "mongodb+srv://"`}
	}

	// The host part ends at the first "/" or "?"; the slash before the
	// options is optional.
	hostinfo, tail := rest, ""
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		hostinfo, tail = rest[:i], rest[i:]
	}
	p.suspicious = strings.IndexByte(tail, '@') >= 0

	var path, query string
	tail = strings.TrimPrefix(tail, "/")
	if q := strings.IndexByte(tail, '?'); q >= 0 {
		path, query = tail[:q], tail[q+1:]
	} else {
		path = tail
	}
	if strings.IndexByte(path, '@') >= 0 {
		// Either userinfo with an unescaped "/" or a database name with
		// an unescaped "@"; both must be percent-encoded, and the text
		// may hold a password, so it is not echoed.
		return &Error{Option: "uri", Value: Redacted, Reason: `unescaped "@" after the hosts: percent-encode "/", "?" and "@" in the username and password, and "@" in the database name`}
	}

	hosts := hostinfo
	if at := strings.LastIndexByte(hostinfo, '@'); at >= 0 {
		if err := p.parseUserinfo(hostinfo[:at]); err != nil {
			return err
		}
		hosts = hostinfo[at+1:]
	}
	if err := p.parseHosts(hosts, path); err != nil {
		return err
	}
	if err := p.parseDatabase(path); err != nil {
		return err
	}
	if err := p.parseOptions(query); err != nil {
		return err
	}
	return p.finish()
}

// schemeOf returns the scheme of a URI with an unsupported one, or "" when
// the text before "://" does not look like a scheme (it is then not shown,
// since it may be anything, including a password).
func schemeOf(uri string) string {
	i := strings.Index(uri, "://")
	if i <= 0 || i > 32 {
		return ""
	}
	for j := 0; j < i; j++ {
		b := uri[j]
		if !isAlnum(b) && b != '+' && b != '-' && b != '.' {
			return ""
		}
	}
	return uri[:i]
}

// parseUserinfo splits and decodes "user[:password]". Errors never carry
// the userinfo text.
func (p *parser) parseUserinfo(ui string) error {
	p.userinfo = true
	if strings.IndexByte(ui, '@') >= 0 {
		return &Error{Option: "userinfo", Value: Redacted, Reason: `the username and password must be percent-encoded: "@" must be written %40`}
	}
	if strings.Count(ui, ":") > 1 {
		return &Error{Option: "userinfo", Value: Redacted, Reason: `the username and password must be percent-encoded: more than one ":" (write ":" as %3A)`}
	}
	for i := 0; i < len(ui); i++ {
		if !userinfoAllowed(ui[i]) {
			return &Error{Option: "userinfo", Value: Redacted, Reason: "the username and password must be percent-encoded: they contain a character that RFC 3986 does not allow unencoded"}
		}
	}
	user, pass, hasPass := strings.Cut(ui, ":")
	u, ok := unescape(user)
	if !ok {
		return &Error{Option: "userinfo", Value: Redacted, Reason: `the username must be percent-encoded: "%" must start %XX (write "%" as %25)`}
	}
	pw, ok := unescape(pass)
	if !ok {
		return &Error{Option: "userinfo", Value: Redacted, Reason: `the password must be percent-encoded: "%" must start %XX (write "%" as %25)`}
	}
	p.c.Username, p.c.Password, p.c.HasPassword = u, Secret(pw), hasPass
	return nil
}

// userinfoAllowed reports whether b may appear unencoded in userinfo:
// RFC 3986 unreserved, sub-delims, ":" and "%" (checked when decoding),
// plus any non-ASCII byte, which some users paste unencoded.
func userinfoAllowed(b byte) bool {
	return isUnreserved(b) || isSubDelim(b) || b == ':' || b == '%' || b >= 0x80
}

// hostErr builds a host error, leaving the text out when the URI may
// have an unescaped "/" or "?" in its userinfo.
func (p *parser) hostErr(value, reason string) error {
	if p.suspicious {
		return &Error{Option: "host", Value: Redacted, Reason: reason + ` (if the URI has a username or password, percent-encode "/", "?" and "@" in them)`}
	}
	return &Error{Option: "host", Value: value, Reason: reason}
}

func (p *parser) parseHosts(hosts, path string) error {
	if hosts == "" {
		if strings.Contains(path, ".sock") {
			return p.hostErr("", `missing host; a UNIX domain socket path must be percent-encoded ("/" as %2F)`)
		}
		return p.hostErr("", "missing host")
	}
	srv := p.c.Scheme == SchemeSRV
	parts := strings.Split(hosts, ",")
	if srv && len(parts) != 1 {
		return p.hostErr(hosts, "a mongodb+srv URI takes exactly one host name")
	}
	p.c.Hosts = make([]string, 0, len(parts))
	for _, raw := range parts {
		h, err := p.parseHost(raw)
		if err != nil {
			return err
		}
		if srv {
			if h.port != 0 {
				return p.hostErr(raw, "a mongodb+srv host name takes no port")
			}
			if _, err := netip.ParseAddr(h.name); err == nil || h.kind != hostName {
				return p.hostErr(raw, "a mongodb+srv URI needs a DNS host name, not an IP address or socket path")
			}
			p.c.Hosts = append(p.c.Hosts, h.name)
			continue
		}
		p.c.Hosts = append(p.c.Hosts, h.address())
	}
	return nil
}

type hostKind int

const (
	hostName hostKind = iota
	hostIPLiteral
	hostUnix
)

type parsedHost struct {
	kind hostKind
	name string // lower-cased host name, IPv6 address without brackets, or socket path
	port int    // 0 when the URI gave none
}

func (h parsedHost) address() string {
	port := h.port
	if port == 0 {
		port = DefaultPort
	}
	switch h.kind {
	case hostUnix:
		return h.name
	case hostIPLiteral:
		return "[" + h.name + "]:" + itoa(port)
	}
	return h.name + ":" + itoa(port)
}

func (p *parser) parseHost(raw string) (parsedHost, error) {
	if raw == "" {
		return parsedHost{}, p.hostErr("", "empty host in the host list")
	}
	if raw[0] == '[' {
		end := strings.IndexByte(raw, ']')
		if end < 0 {
			return parsedHost{}, p.hostErr(raw, `IPv6 literal without a closing "]"`)
		}
		lit, ok := unescape(raw[1:end])
		if !ok {
			return parsedHost{}, p.hostErr(raw, "invalid percent-encoding in IPv6 literal")
		}
		addr, err := netip.ParseAddr(lit)
		if err != nil || !addr.Is6() {
			return parsedHost{}, p.hostErr(raw, "not an IPv6 address")
		}
		for _, b := range []byte(addr.Zone()) {
			if !isUnreserved(b) {
				return parsedHost{}, p.hostErr(raw, "IPv6 zone must be letters, digits, \"-\", \".\", \"_\" or \"~\"")
			}
		}
		h := parsedHost{kind: hostIPLiteral, name: addr.String()}
		after := raw[end+1:]
		if after == "" {
			return h, nil
		}
		if after[0] != ':' {
			return parsedHost{}, p.hostErr(raw, `unexpected text after "]"`)
		}
		port, err := p.parsePort(raw, after[1:])
		h.port = port
		return h, err
	}
	if strings.Count(raw, ":") > 1 {
		return parsedHost{}, p.hostErr(raw, `more than one ":" (an IPv6 address must be in brackets)`)
	}
	name, portText, hasPort := strings.Cut(raw, ":")
	decoded, ok := unescape(name)
	if !ok {
		return parsedHost{}, p.hostErr(raw, "invalid percent-encoding")
	}
	if decoded == "" {
		return parsedHost{}, p.hostErr(raw, "empty host name")
	}
	var h parsedHost
	if strings.IndexByte(decoded, '/') >= 0 {
		if !strings.HasSuffix(decoded, ".sock") {
			return parsedHost{}, p.hostErr(raw, `a UNIX domain socket path must end in ".sock"`)
		}
		if hasPort {
			return parsedHost{}, p.hostErr(raw, "a UNIX domain socket takes no port")
		}
		if strings.IndexByte(decoded, 0) >= 0 {
			return parsedHost{}, p.hostErr(raw, "NUL byte in socket path")
		}
		return parsedHost{kind: hostUnix, name: decoded}, nil
	}
	if reason := checkHostName(decoded); reason != "" {
		return parsedHost{}, p.hostErr(raw, reason)
	}
	h = parsedHost{kind: hostName, name: asciiLower(decoded)}
	if hasPort {
		port, err := p.parsePort(raw, portText)
		if err != nil {
			return parsedHost{}, err
		}
		h.port = port
	}
	return h, nil
}

// checkHostName returns why name cannot be a host name, or "". ASCII is
// limited to letters, digits, "-", "." and "_" (which some private DNS
// names use); other bytes must be UTF-8, for internationalised names.
func checkHostName(name string) string {
	if !utf8.ValidString(name) {
		return "host name is not valid UTF-8"
	}
	for i := 0; i < len(name); i++ {
		b := name[i]
		if b < 0x80 && !isAlnum(b) && b != '-' && b != '.' && b != '_' {
			return "character " + strconv.QuoteRune(rune(b)) + " is not allowed in a host name"
		}
	}
	return ""
}

func (p *parser) parsePort(raw, text string) (int, error) {
	if text == "" {
		return 0, p.hostErr(raw, "empty port")
	}
	if !allDigits(text) {
		return 0, p.hostErr(raw, "port is not a number")
	}
	n, err := strconv.Atoi(text)
	if err != nil || n < 1 || n > 65535 {
		return 0, p.hostErr(raw, "port must be between 1 and 65535")
	}
	return n, nil
}

func (p *parser) parseDatabase(path string) error {
	// Like host errors, database errors hide the text when an "@" later
	// in the URI hints at a mis-encoded password.
	shown := func(s string) string {
		if p.suspicious {
			return Redacted
		}
		return s
	}
	db, ok := unescape(path)
	if !ok {
		return &Error{Option: "database", Value: shown(path), Reason: "invalid percent-encoding"}
	}
	if i := strings.IndexAny(db, "/\\ \"$\x00"); i >= 0 {
		return &Error{Option: "database", Value: shown(db), Reason: "a database name cannot contain " + strconv.QuoteRune(rune(db[i]))}
	}
	p.c.Database = db
	return nil
}

// parseOptions applies the "&"-separated key=value pairs in order.
func (p *parser) parseOptions(query string) error {
	// afterSecret is set after a secret option: a following segment
	// that is not an option may be the rest of a secret holding an
	// unescaped "&", so its text is not shown.
	afterSecret := false
	for _, seg := range strings.Split(query, "&") {
		if seg == "" {
			continue
		}
		rawKey, rawValue, ok := strings.Cut(seg, "=")
		if strings.IndexByte(rawKey, '@') >= 0 {
			// Option keys never contain "@": this is userinfo with an
			// unescaped "?", and may hold a password.
			return &Error{Option: "uri", Value: Redacted, Reason: `an option name contains "@": percent-encode "?" and "@" in the username and password`}
		}
		key, keyOK := unescape(rawKey)
		if !keyOK {
			key = rawKey
		}
		spec := optionTable[asciiLower(key)]
		if !ok {
			if afterSecret && spec == nil {
				return &Error{Option: "uri", Value: Redacted, Reason: `text without "=" after a secret option: percent-encode "&" in secrets as %26`}
			}
			return &Error{Option: rawKey, Reason: `option has no "=" and value`}
		}
		if spec == nil {
			if afterSecret {
				p.warn(Warning{Kind: UnknownOption, Option: Redacted, Message: `unsupported option ignored (its name is not shown because it follows a secret option; percent-encode "&" in secrets as %26)`})
				continue
			}
			p.warn(Warning{Kind: UnknownOption, Option: key, Message: "unsupported option " + strconv.Quote(key) + " ignored"})
			continue
		}
		afterSecret = spec.sensitive
		if err := p.apply(spec, rawValue); err != nil {
			return err
		}
	}
	return nil
}

// apply decodes and sets one option, handling repeats and bad values.
func (p *parser) apply(spec *optionSpec, rawValue string) error {
	p.seen[spec.name]++
	if p.seen[spec.name] > 1 {
		switch spec.repeat {
		case repeatError:
			return &Error{Option: spec.name, Reason: "option given more than once"}
		case repeatWarn:
			p.warn(Warning{Kind: RepeatedOption, Option: spec.name, Message: "option " + spec.name + " given more than once; the last valid value is used"})
		}
	}
	value, ok := unescape(rawValue)
	if !ok {
		return p.invalid(spec, rawValue, "invalid percent-encoding")
	}
	if spec.deprecatedFor != "" {
		p.deprecated = append(p.deprecated, deprecatedValue{spec: spec, value: value})
		return nil
	}
	return p.set(spec, value)
}

// set runs spec's setter on a decoded value.
func (p *parser) set(spec *optionSpec, value string) error {
	if value == "" && !spec.allowEmpty {
		return p.invalid(spec, value, "empty value")
	}
	err := spec.set(p, value)
	if bv, ok := err.(badValue); ok {
		return p.invalid(spec, value, string(bv))
	}
	return err
}

// invalid reports a value that the specifications say to ignore with a
// warning; WithStrict, or a security option, makes it an error.
func (p *parser) invalid(spec *optionSpec, value, reason string) error {
	shown := value
	if spec.sensitive && value != "" {
		shown = Redacted
	}
	if p.cfg.strict || spec.failClosed {
		return &Error{Option: spec.name, Value: shown, Reason: reason}
	}
	msg := "option " + spec.name
	if shown != "" {
		if shown == Redacted {
			msg += " value " + Redacted
		} else {
			msg += " value " + strconv.Quote(shown)
		}
	}
	p.warn(Warning{Kind: InvalidValue, Option: spec.name, Value: shown, Message: msg + " ignored: " + reason})
	return nil
}

func (p *parser) warn(w Warning) {
	if p.cfg.warn != nil {
		p.cfg.warn(w)
	}
}

// finish applies what needs the whole option list, then validates.
func (p *parser) finish() error {
	sawTrue, sawFalse := false, false
	for _, v := range p.tlsValues {
		if v {
			sawTrue = true
		} else {
			sawFalse = true
		}
	}
	if sawTrue && sawFalse {
		return &Error{Option: "tls", Reason: "tls and ssl are given with different values"}
	}
	for _, d := range p.deprecated {
		if d.spec.replaced(p) {
			p.warn(Warning{Kind: DeprecatedOption, Option: d.spec.name, Message: "deprecated option " + d.spec.name + " ignored because " + d.spec.deprecatedFor + " is present"})
			continue
		}
		p.warn(Warning{Kind: DeprecatedOption, Option: d.spec.name, Message: "option " + d.spec.name + " is deprecated; use " + d.spec.deprecatedFor})
		if err := p.set(d.spec, d.value); err != nil {
			return err
		}
	}
	if p.cfg.deferChecks {
		return p.c.validateAuth(p.userinfo, p.cfg.oidcCallback)
	}
	return p.c.validate(len(p.c.Hosts), p.userinfo, p.cfg.oidcCallback)
}

// unescape decodes %XX sequences; it reports false for a "%" not followed
// by two hex digits. "+" stays "+".
func unescape(s string) (string, bool) {
	n := strings.IndexByte(s, '%')
	if n < 0 {
		return s, true
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			b = append(b, c)
			continue
		}
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return "", false
		}
		b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
		i += 2
	}
	return string(b), true
}

func isHex(b byte) bool {
	return '0' <= b && b <= '9' || 'a' <= b && b <= 'f' || 'A' <= b && b <= 'F'
}

func unhex(b byte) byte {
	switch {
	case b <= '9':
		return b - '0'
	case b >= 'a':
		return b - 'a' + 10
	}
	return b - 'A' + 10
}

func isAlnum(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
}

func isUnreserved(b byte) bool {
	return isAlnum(b) || b == '-' || b == '.' || b == '_' || b == '~'
}

func isSubDelim(b byte) bool {
	return strings.IndexByte("!$&'()*+,;=", b) >= 0
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// asciiUpper upper-cases a-z only, so that normalising is idempotent.
func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - ('a' - 'A')
		}
	}
	return string(b)
}

// asciiLower lower-cases A-Z only, as the spec normalises option keys.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

func itoa(n int) string { return strconv.Itoa(n) }
