package driver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mongoscope/mongoscope/driver/connstring"
	"github.com/mongoscope/mongoscope/driver/internal/conn"
	"github.com/mongoscope/mongoscope/driver/internal/handshake"
	"github.com/mongoscope/mongoscope/driver/logging"
)

// Secret is a credential that prints as "xxxxx" with every fmt verb, in
// log/slog and in JSON; string(s) reads it.
type Secret = connstring.Secret

// W is the write concern's "w": a number of nodes, or a tag such as
// "majority".
type W = connstring.W

// Warning is something ApplyURI ignored or corrected in a connection string
// that is still usable.
type Warning = connstring.Warning

// Resolver answers the DNS queries of mongodb+srv seedlist discovery;
// *net.Resolver satisfies it.
type Resolver = connstring.Resolver

// Ptr returns a pointer to v, for the pointer fields of ClientOptions:
// MaxPoolSize: driver.Ptr(50).
func Ptr[T any](v T) *T { return &v }

// URIOptions are the options a connection string can set, one field per
// URI option, each field's comment naming its option. ClientOptions embeds
// them, so opts.MaxPoolSize reads and sets an option directly; in a
// composite literal write them inside URIOptions:
//
//	&driver.ClientOptions{URIOptions: driver.URIOptions{MaxPoolSize: driver.Ptr(50)}}
type URIOptions = connstring.URIOptions

// ClientOptions configures a client. The zero value is valid once it has
// hosts (from Hosts or a URI): every other field left at its zero value
// takes the default stated in its comment. Pointer fields are nil when
// unset, because their zero value is a real setting.
//
// The URI options are the embedded URIOptions (see connstring.URIOptions
// for each field: MaxPoolSize, Timeout, ReadPreference, TLS, ...), the
// same struct connstring.ConnString embeds, so an option is declared in
// one place. The fields below them are set only in code.
//
// Fields set in code and the connection string kept in URI combine with
// the URI taking precedence; see ApplyURI. Print it with String (or any
// fmt verb): secrets are redacted.
type ClientOptions struct {
	// Hosts are the seeds: "host:port" (the port defaults to 27017),
	// "[ipv6]:port", or the path of a Unix domain socket ending in ".sock".
	// A URI's hosts replace them. mongodb+srv discovery is asked for with
	// a URI (ApplyURI).
	Hosts []string

	// Username and Password are the credential's user name and password
	// (URI userinfo). They go together: when the URI has userinfo, both
	// come from the URI. An empty Password means none.
	Username string
	Password Secret
	// Database is the default database (URI path); for the SCRAM
	// mechanisms and PLAIN it is also the default authSource.
	Database string

	// URIOptions are the URI options set in code, one field per option,
	// promoted (opts.MaxPoolSize): AuthSource, AuthMechanism, AppName,
	// Compressors, the timeouts, ReplicaSet, the pool sizes,
	// ReadPreference, W, RetryWrites, the TLS and proxy options, ...; `go
	// doc connstring.URIOptions` documents each with its URI option name
	// and default. Unlike in a URI, AuthMechanismProperties values may
	// contain ",". A URI's lists and maps (Compressors,
	// ReadPreferenceTags, AuthMechanismProperties) replace the code's
	// whole.
	URIOptions

	// URI is the connection string given to ApplyURI. Its hosts and
	// options take precedence over the fields above.
	URI *connstring.ConnString

	// LenientURI makes ApplyURI follow the Connection String
	// specification to the letter: a value that is invalid for its option
	// (readPreference=primay, maxPoolSize=-1, an empty value) is ignored
	// with a Warning instead of failing. By default (false) such a value
	// is an *OptionError naming the option, as the same mistake made in
	// code is. In both modes an invalid value of a security option (tls,
	// ssl, every tls* option, authMechanism, authSource) is an error, so
	// that a typo never turns TLS off or changes how the client
	// authenticates; and an unknown option (maxPolSize) is a Warning.
	LenientURI bool `json:",omitempty"`

	// OnWarning, when set, receives each Warning ApplyURI and Resolve find
	// in the connection string and TXT record: unknown options, ignored
	// values (with LenientURI), deprecated and repeated keys, which the
	// specifications say to log, not reject. Connect also logs each one at
	// WARN through the client's logging sink (Logging or MONGODB_LOG_*),
	// when it has one.
	OnWarning func(Warning) `json:"-"`

	// Resolver answers mongodb+srv DNS queries, the initial ones and the
	// rescans of mongos discovery; nil means net.DefaultResolver.
	Resolver Resolver `json:"-"`

	// Monitors receive the client's events: each value implements one or
	// more of the monitor interfaces of package event (OperationMonitor,
	// CommandMonitor, PoolMonitor, TopologyMonitor, SelectionMonitor,
	// RetryMonitor) and gets every event of those families, in the order
	// given. Connect refuses a value that implements none. Monitors run
	// synchronously on the goroutine that emits the event. Any monitor may read
	// Client.Topology; but a topology event, PoolReady or PoolCleared is
	// sent while the client orders its discovery updates, so a monitor
	// must not run an operation on the client from inside one (hand it
	// to another goroutine): the operation may need to update the
	// topology, which waits for the monitor to return.
	Monitors []any `json:"-"`

	// Logging turns on the standardized log messages (package
	// driver/logging) with these settings, which override the
	// MONGODB_LOG_* environment variables for what they set (a handler or
	// *slog.Logger, levels per component, the document length). When nil,
	// the client logs only if a MONGODB_LOG_* variable turns a component
	// on.
	Logging *logging.Options `json:"-"`

	// DriverInfo, when set, is appended to the driver's name, version and
	// platform in the handshake's client metadata, as the handshake
	// specification asks of libraries that wrap a driver (an ODM, a
	// framework). Code only: there is no URI option.
	DriverInfo *DriverInfo `json:",omitempty"`

	// ServerAPI, when set, declares the Stable API version the client
	// uses, as the versioned API specification describes: every command
	// (the handshake, heartbeats and getMore included) carries apiVersion,
	// and apiStrict and apiDeprecationErrors when set, and the handshake
	// uses hello, never legacy hello. Connect refuses a version other than
	// ServerAPIVersion1. Code only: there is no URI option. With RunCommand
	// a command that itself holds these fields is undefined behaviour.
	ServerAPI *ServerAPI `json:",omitempty"`

	// Dialer, when set, opens the client's network connections
	// (monitoring and pooled) instead of a net.Dialer; TLS, when on, runs
	// over the connection it returns. This driver does not speak SOCKS5
	// yet: with ProxyHost set (proxyHost), Connect refuses to start unless
	// a Dialer is given, which must then reach the servers through the
	// proxy itself. Code only.
	Dialer Dialer `json:"-"`

	// SpinWait is how long an operation that is the client's only one
	// waiting for a reply polls its connection for it before its
	// goroutine parks; nil means DefaultSpinWait, and zero or less turns
	// polling off. Against a nearby server this halves the latency of
	// one-at-a-time operations on machines whose idle CPUs are slow to
	// wake (virtual machines above all), for at most SpinWait of CPU time
	// per operation. Operations stop polling as soon as a second one
	// waits, and the client stops polling for a while after polls that
	// ran out of time, so concurrent loads and distant servers are not
	// affected. Linux only (elsewhere it does nothing). Code only.
	SpinWait *time.Duration `json:",omitempty"`

	// uriWarnings are the Warnings of the URI last applied, which Connect
	// logs through the client's logging sink.
	uriWarnings []Warning
}

// DriverInfo names a library built on this driver, for the handshake's
// client metadata. Each non-empty field is appended to the driver's own
// value, separated by "|".
type DriverInfo struct {
	Name     string
	Version  string
	Platform string
}

// ServerAPIVersion1 is the only Stable API version the server defines.
const ServerAPIVersion1 = "1"

// ServerAPI is a Stable API declaration (the versioned API
// specification). Version is required ("1"); Strict makes the server
// reject commands outside the Stable API; DeprecationErrors makes it
// reject deprecated ones. Nil booleans are not sent.
type ServerAPI struct {
	Version           string
	Strict            *bool
	DeprecationErrors *bool
}

// Dialer opens network connections; *net.Dialer satisfies it.
type Dialer interface {
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// ClientOptionsFromURI returns options holding the parsed uri, parsed
// strictly (see ApplyURI). Its warnings are kept for Connect to log; to
// receive them in code, or to parse leniently, set OnWarning or
// LenientURI on a ClientOptions and call ApplyURI.
func ClientOptionsFromURI(uri string) (*ClientOptions, error) {
	o := &ClientOptions{}
	if err := o.ApplyURI(uri); err != nil {
		return nil, err
	}
	return o, nil
}

// ApplyURI parses uri with connstring.Parse and stores the result in
// o.URI, replacing any URI applied before. On error o is unchanged; the
// error is an *OptionError wrapping the *connstring.Error, naming the
// option, and never contains a password.
//
// Invalid values: by default a value that is invalid for its option
// (readPreference=primay, maxPoolSize=-1, journal=) is an error, as the
// same mistake made in code is. With o.LenientURI set before the call,
// such a value is ignored with a Warning instead, as the Connection String
// specification says. In both modes an invalid value of a security option
// (tls, ssl, every tls* option, authMechanism, authSource) is an error,
// so that a typo can neither turn TLS off nor change how the client
// authenticates, and an unknown option (maxPolSize) is a Warning, not an
// error, as the specification requires.
//
// Warnings (unknown options, values ignored under LenientURI, deprecated
// and repeated keys) go to o.OnWarning as they are found, and Connect
// logs each one at WARN level through the client's logging sink (set
// Logging, or a MONGODB_LOG_* variable). With neither, they are dropped:
// the logging specification's default is to log nothing.
//
// Precedence: the URI's hosts and options win over the fields set in
// code, whether those are set before or after this call, because the URI
// is kept apart from the fields and the two are combined only by Validate
// and Resolve. This is the order the Connection String specification
// recommends (defaults, then code, then the URI): an application keeps its
// defaults in code, and each deployment adjusts them through its URI
// without a rebuild. A field the URI leaves unset keeps the code's value.
// Lists and maps (Hosts, ReadPreferenceTags, Compressors,
// AuthMechanismProperties) and the username/password pair are replaced
// whole, never merged element by element.
//
// ApplyURI reports what is wrong with the URI by itself: its syntax, each
// value, and the credential. The rules that tie options together run in
// Validate and Resolve, on the combination of code and URI, so a URI may
// rely on an option set in code (readPreferenceTags in the URI with the
// read preference mode in code, say), whatever the order of the calls.
func (o *ClientOptions) ApplyURI(uri string) error {
	var warnings []Warning
	c, err := connstring.Parse(uri, append(o.parseOptions(&warnings), connstring.WithDeferredChecks())...)
	if err != nil {
		return wrapConnStringError(err)
	}
	o.URI, o.uriWarnings = c, warnings
	return nil
}

// parseOptions are the connstring options for the URI and the TXT record:
// strict unless LenientURI, each warning passed to OnWarning and kept in
// *warnings.
func (o *ClientOptions) parseOptions(warnings *[]Warning) []connstring.Option {
	onWarning := o.OnWarning
	opts := []connstring.Option{connstring.WithWarnings(func(w Warning) {
		*warnings = append(*warnings, w)
		if onWarning != nil {
			onWarning(w)
		}
	})}
	if !o.LenientURI {
		opts = append(opts, connstring.WithStrict())
	}
	return opts
}

// OptionError is an invalid option or combination of options. Option is
// the URI option name ("maxPoolSize"), or the part of the configuration at
// fault ("host", "userinfo", "scheme"); Field is the ClientOptions field
// ("MaxPoolSize"), "" when none matches. Value is the offending value,
// "xxxxx" or "" for secrets. Err is the underlying *connstring.Error when
// there is one.
type OptionError struct {
	Option string
	Field  string
	Value  string
	Reason string
	Err    error
}

// Error formats e as `driver: option <option> (<Field>) "<value>": <reason>`.
func (e *OptionError) Error() string {
	var b strings.Builder
	b.WriteString("driver: option ")
	name := e.Option
	if name == "" {
		name = e.Field
	}
	b.WriteString(name)
	if e.Field != "" && e.Field != name {
		b.WriteString(" (" + e.Field + ")")
	}
	if e.Value != "" {
		if e.Value == connstring.Redacted {
			b.WriteString(" " + connstring.Redacted)
		} else {
			b.WriteString(" " + strconv.Quote(e.Value))
		}
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	return b.String()
}

// Unwrap returns e.Err.
func (e *OptionError) Unwrap() error { return e.Err }

// Validate checks the options as Resolve would combine them (code fields
// overridden by the URI), without DNS lookups: each value set in code is
// checked against the bounds connstring.Parse applies to the same URI
// option (negative timeouts and sizes, heartbeatFrequency below 500ms,
// maxConnecting 0, zlib levels, unknown compressors or modes, ...), then
// the combination against connstring's cross-option rules
// (directConnection or loadBalanced with several hosts, loadBalanced with
// replicaSet, srvMaxHosts with replicaSet or loadBalanced or without
// mongodb+srv, minPoolSize above maxPoolSize, maxStaleness or tags with
// primary, w=0 with journal, the TLS options that exclude each other, the
// SOCKS5 options, and the auth mechanisms' requirements). Errors are
// *OptionError.
//
// For a mongodb+srv URI, the rules that depend on the SRV and TXT records
// run again in Resolve, after the lookups, as the specification requires.
func (o *ClientOptions) Validate() error {
	_, err := o.combine()
	return err
}

// Resolve returns the configuration a client would use: the code fields,
// overridden by the URI, validated; for mongodb+srv, with the seeds from
// the SRV records (at most SRVMaxHosts, chosen at random) and the TXT
// record's authSource, replicaSet and loadBalanced filling only what
// neither code nor URI set. The result's Scheme stays mongodb+srv in that
// case, so its TLSEnabled reports the implicit TLS unless code or URI set
// TLS. Defaults are not filled in: an unset field is nil or "". DNS
// lookups use o.Resolver and honour ctx. Errors are *OptionError or, for
// DNS, *connstring.SRVError. The result shares its slices and maps with o
// and o.URI: copy them before changing them.
func (o *ClientOptions) Resolve(ctx context.Context) (*connstring.ConnString, error) {
	c, _, err := o.resolve(ctx)
	return c, err
}

// resolve is Resolve, also returning the warnings to log: the URI's and
// the TXT record's.
func (o *ClientOptions) resolve(ctx context.Context) (*connstring.ConnString, []Warning, error) {
	warnings := append([]Warning(nil), o.uriWarnings...)
	c, err := o.combine()
	if err != nil {
		return nil, warnings, err
	}
	if c.Scheme != connstring.SchemeSRV {
		return c, warnings, nil
	}
	s, err := connstring.LookupSeedlist(ctx, c, o.Resolver, o.parseOptions(&warnings)...)
	if err != nil {
		var ce *connstring.Error
		if !errors.As(err, &ce) {
			return nil, warnings, err // a DNS failure: *connstring.SRVError
		}
		return nil, warnings, wrapConnStringError(err)
	}
	out, err := s.Apply(c, nil)
	if err != nil {
		return nil, warnings, wrapConnStringError(err)
	}
	return out, warnings, nil
}

// logWarnings writes each connection-string warning at WARN level through
// the client's logging sink, if it has one.
func logWarnings(ctx context.Context, sink *logging.Sink, warnings []Warning) {
	if sink == nil {
		return
	}
	for _, w := range warnings {
		attrs := []slog.Attr{slog.String("kind", w.Kind.String()), slog.String("option", w.Option)}
		if w.Value != "" {
			// connstring has already redacted a secret's value.
			attrs = append(attrs, slog.String("value", w.Value))
		}
		sink.Warn(ctx, "Connection string: "+w.Message, attrs...)
	}
}

// connExtra is what the connection settings take from the code-only
// fields.
func (o *ClientOptions) connExtra() (conn.Extra, error) {
	var x conn.Extra
	if d := o.DriverInfo; d != nil {
		x.DriverInfo = []handshake.DriverInfo{{Name: d.Name, Version: d.Version, Platform: d.Platform}}
	}
	if a := o.ServerAPI; a != nil {
		if a.Version != ServerAPIVersion1 {
			return x, &OptionError{Option: "ServerAPI", Field: "ServerAPI", Value: a.Version, Reason: "unknown Stable API version; the only one is \"1\" (ServerAPIVersion1)"}
		}
		x.ServerAPI = &handshake.ServerAPI{Version: a.Version, Strict: a.Strict, DeprecationErrors: a.DeprecationErrors}
	}
	if o.Dialer != nil {
		x.Dialer = o.Dialer
	}
	return x, nil
}

// combine checks the code fields, merges them under the URI and validates
// the result.
func (o *ClientOptions) combine() (*connstring.ConnString, error) {
	code, err := o.codeConnString()
	if err != nil {
		return nil, err
	}
	c := merge(code, o.URI)
	if len(c.Hosts) == 0 {
		return nil, &OptionError{Option: "host", Field: "Hosts", Reason: "no hosts: set Hosts or apply a URI"}
	}
	if err := c.Validate(); err != nil {
		return nil, wrapConnStringError(err)
	}
	return c, nil
}

// merge returns code's values overridden by each value uri sets.
func merge(code, uri *connstring.ConnString) *connstring.ConnString {
	if uri == nil {
		return code
	}
	m := *code
	m.Scheme, m.Hosts = uri.Scheme, uri.Hosts
	if uri.Username != "" || uri.HasPassword {
		m.Username, m.Password, m.HasPassword = uri.Username, uri.Password, uri.HasPassword
	}
	m.Database = pickString(code.Database, uri.Database)
	m.URIOptions = overlay(code.URIOptions, uri.URIOptions)
	return &m
}

// overlay returns base with each option that over sets (a non-nil pointer,
// slice or map, a non-empty string) taken from over. It walks the fields
// by reflection, so a new option needs no edit here; it runs once per
// Validate, Resolve or Connect, never per operation.
func overlay(base, over URIOptions) URIOptions {
	out := base
	dst, src := reflect.ValueOf(&out).Elem(), reflect.ValueOf(&over).Elem()
	for i := 0; i < src.NumField(); i++ {
		if f := src.Field(i); !f.IsZero() {
			dst.Field(i).Set(f)
		}
	}
	return out
}

func pickString[S ~string](code, uri S) S {
	if uri != "" {
		return uri
	}
	return code
}

// codeConnString checks the fields set in code and returns them as a
// ConnString (scheme mongodb, hosts, mechanism and read preference
// normalised as Parse writes them).
func (o *ClientOptions) codeConnString() (*connstring.ConnString, error) {
	c := o.copyFields()
	c.Hosts = nil
	for _, h := range o.Hosts {
		norm, err := checkHost(h)
		if err != nil {
			return nil, err
		}
		c.Hosts = append(c.Hosts, norm)
	}
	if o.AuthMechanism != "" {
		m, ok := canonicalMechanism(o.AuthMechanism)
		if !ok {
			return nil, &OptionError{Option: "authMechanism", Field: "AuthMechanism", Value: o.AuthMechanism, Reason: "unsupported mechanism; use one of " + strings.Join(mechanisms, ", ")}
		}
		c.AuthMechanism = m
	}
	if o.MaxStaleness != nil && *o.MaxStaleness < 0 {
		// In a URI -1 means "no maximum"; in code that is nil.
		return nil, &OptionError{Option: "maxStalenessSeconds", Field: "MaxStaleness", Value: o.MaxStaleness.String(), Reason: "negative; leave it nil for no maximum"}
	}
	opts := reflect.ValueOf(&c.URIOptions).Elem()
	for _, chk := range o.valueChecks() {
		parsed, err := chk.run()
		if err != nil {
			return nil, err
		}
		if f := opts.Field(chk.field.index); f.Kind() == reflect.String {
			// Parse's spelling: readPreference=SECONDARY is "secondary".
			f.Set(reflect.ValueOf(parsed.URIOptions).Field(chk.field.index))
		}
	}
	return c, nil
}

// copyFields copies the fields set in code into a ConnString as they are.
func (o *ClientOptions) copyFields() *connstring.ConnString {
	return &connstring.ConnString{
		Scheme:      connstring.SchemeMongoDB,
		Hosts:       o.Hosts,
		Username:    o.Username,
		Password:    o.Password,
		HasPassword: o.Password != "",
		Database:    o.Database,
		URIOptions:  o.URIOptions,
	}
}

var mechanisms = []string{
	connstring.MechanismSCRAMSHA1, connstring.MechanismSCRAMSHA256, connstring.MechanismPLAIN,
	connstring.MechanismGSSAPI, connstring.MechanismX509, connstring.MechanismAWS, connstring.MechanismOIDC,
}

// canonicalMechanism accepts a mechanism name in any letter case, as Parse
// does.
func canonicalMechanism(name string) (string, bool) {
	for _, m := range mechanisms {
		if strings.EqualFold(name, m) {
			return m, true
		}
	}
	return "", false
}

// valueCheck is one code value to check against the bounds Parse applies
// to the URI option of the same name: the value is written as that
// option and parsed strictly, with the cross-option rules deferred to
// Validate. One copy of every bound, in connstring, serves both paths.
type valueCheck struct {
	field uriField
	shown string // the value as the error shows it
	text  string // the value as the URI option writes it
}

func (v valueCheck) run() (*connstring.ConnString, error) {
	c, err := connstring.Parse("mongodb://localhost/?"+v.field.option+"="+escapeValue(v.text), connstring.WithStrict(), connstring.WithDeferredChecks())
	if err == nil {
		return c, nil
	}
	oe := &OptionError{Option: v.field.option, Field: v.field.name, Value: v.shown, Reason: err.Error(), Err: err}
	var ce *connstring.Error
	if errors.As(err, &ce) {
		oe.Reason = ce.Reason
	}
	return nil, oe
}

// uriField is one field of URIOptions and the URI option it holds.
type uriField struct {
	index  int
	name   string // the field's name, "MaxPoolSize"
	option string // the option's canonical name, its uri tag: "maxPoolSize"
}

// uriFields lists URIOptions' fields, read once from the type.
var uriFields = func() []uriField {
	t := reflect.TypeFor[URIOptions]()
	out := make([]uriField, t.NumField())
	for i := range out {
		f := t.Field(i)
		out[i] = uriField{index: i, name: f.Name, option: f.Tag.Get("uri")}
	}
	return out
}()

// valueChecks lists a check for each option set in code that a URI value
// could get wrong, chosen by the field's type so that a new option is
// checked without an edit here: numbers, durations, strings (except
// authMechanism, which codeConnString checks apart because Parse ties it
// to the credential), compressors one name at a time, and w. Booleans
// cannot be out of range; secrets have no bounds; maps and tag sets have
// none in code either (their values may contain "," there).
func (o *ClientOptions) valueChecks() []valueCheck {
	var out []valueCheck
	v := reflect.ValueOf(&o.URIOptions).Elem()
	for _, f := range uriFields {
		fv := v.Field(f.index)
		if fv.IsZero() {
			continue
		}
		add := func(shown, text string) { out = append(out, valueCheck{field: f, shown: shown, text: text}) }
		switch val := fv.Interface().(type) {
		case *int:
			add(strconv.Itoa(*val), strconv.Itoa(*val))
		case *time.Duration:
			if f.option == "maxStalenessSeconds" {
				// Seconds; codeConnString rejects a negative one first.
				add(val.String(), strconv.FormatInt(int64(*val/time.Second), 10))
				continue
			}
			add(val.String(), msText(*val))
		case string:
			if f.option != "authMechanism" {
				add(val, val)
			}
		case []string:
			for _, name := range val {
				// One at a time: a name containing "," must not pass as
				// a list.
				if name == "" || strings.Contains(name, ",") {
					add(name, "-")
					continue
				}
				add(name, name)
			}
		case *W:
			s := val.String()
			if val.Tag == "" && val.Nodes < 0 {
				s = strconv.Itoa(val.Nodes)
			}
			add(s, s)
		}
	}
	return out
}

// msText writes d in whole milliseconds, rounding away from zero so that
// a non-zero duration never checks as 0 and a negative one stays negative.
func msText(d time.Duration) string {
	ms := d / time.Millisecond
	switch {
	case d > 0 && d%time.Millisecond != 0:
		ms++
	case d < 0 && d%time.Millisecond != 0:
		ms--
	}
	return strconv.FormatInt(int64(ms), 10)
}

// escapeValue percent-encodes every byte but RFC 3986's unreserved ones,
// so a value reaches Parse's option as written.
func escapeValue(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// checkHost checks one entry of Hosts by parsing it as a URI's host and
// returns it normalised as Parse writes it (lower case, default port).
func checkHost(h string) (string, error) {
	text := h
	switch {
	case strings.Contains(h, "/"):
		// A socket path is written fully encoded in a URI.
		text = escapeValue(h)
	case strings.ContainsAny(h, ",?@"):
		return "", &OptionError{Option: "host", Field: "Hosts", Value: h, Reason: `a host cannot contain ",", "?" or "@"`}
	}
	c, err := connstring.Parse(connstring.SchemeMongoDB + "://" + text + "/")
	if err != nil {
		oe := wrapConnStringError(err)
		oe.Value = h
		return "", oe
	}
	if len(c.Hosts) != 1 {
		return "", &OptionError{Option: "host", Field: "Hosts", Value: h, Reason: "not a single host"}
	}
	return c.Hosts[0], nil
}

// fieldOf returns the ClientOptions field for a URI option name, or for
// the other names connstring.Error uses; "" when there is none.
func fieldOf(option string) string {
	return fieldNames[option]
}

// fieldNames maps the names connstring.Error uses to ClientOptions fields:
// each URI option (from URIOptions' tags), its aliases, and the parts of
// a URI outside the options.
var fieldNames = func() map[string]string {
	m := map[string]string{
		"host": "Hosts", "userinfo": "Username", "database": "Database", "scheme": "URI", "uri": "URI",
		"ssl": "TLS", "wtimeout": "WTimeout", "gssapiServiceName": "AuthMechanismProperties",
	}
	for _, f := range uriFields {
		m[f.option] = f.name
	}
	return m
}()

// wrapConnStringError turns an error holding a *connstring.Error into an
// *OptionError naming the field. Parse and Validate return no other kind.
func wrapConnStringError(err error) *OptionError {
	var ce *connstring.Error
	if errors.As(err, &ce) {
		oe := &OptionError{Option: ce.Option, Field: fieldOf(ce.Option), Value: ce.Value, Reason: ce.Reason, Err: err}
		var se *connstring.SRVError
		if errors.As(err, &se) {
			// A bad TXT record: say where the option came from.
			oe.Reason = ce.Reason + " (in the TXT record of " + se.Name + ")"
		}
		return oe
	}
	return &OptionError{Option: "host", Field: "Hosts", Reason: err.Error(), Err: err}
}

// String describes o with every secret replaced by "xxxxx": the fields set
// in code (nil and empty ones left out) and the URI, itself redacted. It
// has a value receiver, and GoString returns the same text, so that every
// fmt verb on a ClientOptions or a pointer to one is redacted.
func (o ClientOptions) String() string {
	var b strings.Builder
	b.WriteString("driver.ClientOptions{")
	first := true
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			sf, f := t.Field(i), v.Field(i)
			if sf.Anonymous && sf.Type.Kind() == reflect.Struct {
				walk(f) // URIOptions: its fields, as if declared here
				continue
			}
			if !sf.IsExported() || f.IsZero() {
				continue
			}
			if !first {
				b.WriteByte(' ')
			}
			first = false
			b.WriteString(sf.Name)
			b.WriteByte(':')
			b.WriteString(describe(f))
		}
	}
	walk(reflect.ValueOf(o))
	b.WriteByte('}')
	return b.String()
}

// GoString returns o.String(), for %#v.
func (o ClientOptions) GoString() string { return o.String() }

// describe formats one set field for String.
func describe(f reflect.Value) string {
	switch val := f.Interface().(type) {
	case Secret:
		return val.String()
	case *connstring.ConnString:
		return strconv.Quote(val.String())
	case map[string]string:
		keys := make([]string, 0, len(val))
		for k := range val {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			v := val[k]
			if k == "AWS_SESSION_TOKEN" {
				// A credential, should one be set in code despite the
				// auth specification.
				v = connstring.Redacted
			}
			parts[i] = k + ":" + v
		}
		return "map[" + strings.Join(parts, " ") + "]"
	case func(Warning), *logging.Options:
		return "set"
	case []any:
		types := make([]string, len(val))
		for i, m := range val {
			types[i] = fmt.Sprintf("%T", m)
		}
		return "[" + strings.Join(types, " ") + "]"
	case Resolver, Dialer:
		return fmt.Sprintf("%T", val)
	case *DriverInfo:
		return fmt.Sprintf("%+v", *val)
	case *ServerAPI:
		s := "{Version:" + val.Version
		if val.Strict != nil {
			s += " Strict:" + strconv.FormatBool(*val.Strict)
		}
		if val.DeprecationErrors != nil {
			s += " DeprecationErrors:" + strconv.FormatBool(*val.DeprecationErrors)
		}
		return s + "}"
	case *time.Duration:
		return val.String()
	case *W:
		return val.String()
	case string:
		return strconv.Quote(val)
	}
	if f.Kind() == reflect.Pointer {
		return fmt.Sprint(f.Elem().Interface())
	}
	return fmt.Sprint(f.Interface())
}
