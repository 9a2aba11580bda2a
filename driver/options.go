package driver

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mongoscope/mongoscope/driver/connstring"
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

// ClientOptions configures a client. The zero value is valid once it has
// hosts (from Hosts or a URI): every other field left at its zero value
// takes the default stated in its comment. Pointer fields are nil when
// unset, because their zero value is a real setting.
//
// Fields set in code and the connection string kept in URI combine with
// the URI taking precedence; see ApplyURI. Print it with String (or any
// fmt verb): secrets are redacted. Field names follow
// connstring.ConnString, and each field's comment names its URI option.
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
	// AuthSource is the database to authenticate against (authSource);
	// the default depends on the mechanism (the auth specification).
	AuthSource string
	// AuthMechanism (authMechanism) is one of connstring's Mechanism
	// constants; "" negotiates SCRAM with the server.
	AuthMechanism string
	// AuthMechanismProperties (authMechanismProperties) has upper-case
	// property names. Unlike in a URI, values may contain ",". A URI's
	// properties replace the whole map.
	AuthMechanismProperties map[string]string

	// AppName (appname) is sent in the handshake; at most 128 bytes.
	AppName string
	// Compressors (compressors) lists "snappy", "zlib" and "zstd" in
	// order of preference; default none.
	Compressors []string
	// ZlibCompressionLevel (zlibCompressionLevel) is -1 (the library's
	// default, which is the default) through 9.
	ZlibCompressionLevel *int

	// ConnectTimeout (connectTimeoutMS) bounds establishing one
	// connection; 0 means no timeout. Default 10s.
	ConnectTimeout *time.Duration
	// SocketTimeout (socketTimeoutMS, deprecated by Timeout) bounds one
	// network read or write; 0 or unset means no timeout.
	SocketTimeout *time.Duration
	// Timeout (timeoutMS) is the client-side operation timeout; 0 means
	// no limit. Default unset: the legacy timeouts apply.
	Timeout *time.Duration
	// ServerSelectionTimeout (serverSelectionTimeoutMS) bounds server
	// selection; positive. Default 30s.
	ServerSelectionTimeout *time.Duration
	// ServerSelectionTryOnce (serverSelectionTryOnce) is accepted for
	// completeness; it has no effect in this multi-threaded driver.
	ServerSelectionTryOnce *bool
	// HeartbeatFrequency (heartbeatFrequencyMS) is the interval between
	// server checks; at least 500ms. Default 10s.
	HeartbeatFrequency *time.Duration
	// LocalThreshold (localThresholdMS) is the latency window of server
	// selection; 0 picks only the fastest. Default 15ms.
	LocalThreshold *time.Duration

	// DirectConnection (directConnection) connects to the single host
	// given, whatever its role. Default false.
	DirectConnection *bool
	// LoadBalanced (loadBalanced) connects through a load balancer to a
	// single host. Default false.
	LoadBalanced *bool
	// ReplicaSet (replicaSet) is the replica set name to require.
	ReplicaSet string
	// ServerMonitoringMode (serverMonitoringMode) is "stream", "poll" or
	// "auto" (the default).
	ServerMonitoringMode string
	// SRVMaxHosts (srvMaxHosts) caps the seeds taken from SRV records,
	// chosen at random; 0 (the default) means no cap. mongodb+srv only.
	SRVMaxHosts *int
	// SRVServiceName (srvServiceName) is the SRV service name; default
	// "mongodb". mongodb+srv only.
	SRVServiceName string

	// MaxPoolSize (maxPoolSize) caps each server's connection pool; 0
	// means no cap. Default 100.
	MaxPoolSize *int
	// MinPoolSize (minPoolSize) is the number of connections each pool
	// keeps open. Default 0.
	MinPoolSize *int
	// MaxConnecting (maxConnecting) caps connections being established
	// at once per pool; positive. Default 2.
	MaxConnecting *int
	// MaxIdleTime (maxIdleTimeMS) closes connections idle that long; 0
	// (the default) means never.
	MaxIdleTime *time.Duration
	// WaitQueueTimeout (waitQueueTimeoutMS, deprecated by Timeout)
	// bounds waiting for a pooled connection; positive. Default unset:
	// server selection's timeout applies.
	WaitQueueTimeout *time.Duration

	// ReadPreference (readPreference) is "primary" (the default),
	// "primaryPreferred", "secondary", "secondaryPreferred" or "nearest".
	ReadPreference string
	// ReadPreferenceTags (readPreferenceTags) are tag sets tried in order;
	// an empty map matches any server. A URI's list replaces the whole
	// list.
	ReadPreferenceTags []map[string]string
	// MaxStaleness (maxStalenessSeconds) excludes secondaries staler than
	// this; at least 90s; nil (the default) means no maximum.
	MaxStaleness *time.Duration
	// ReadConcernLevel (readConcernLevel) is the default read concern;
	// default none (the server's).
	ReadConcernLevel string
	// W (w) is the default write concern's w; default none (the
	// server's).
	W *W
	// Journal (journal) is the default write concern's j.
	Journal *bool
	// WTimeout (wTimeoutMS, deprecated by Timeout) is the default write
	// concern's wtimeout; 0 means none.
	WTimeout *time.Duration

	// RetryReads (retryReads) and RetryWrites (retryWrites) retry an
	// operation once after a retryable error. Default true.
	RetryReads  *bool
	RetryWrites *bool
	// MaxAdaptiveRetries (maxAdaptiveRetries) caps retries after server
	// overload errors. Default 2.
	MaxAdaptiveRetries *int
	// EnableOverloadRetargeting (enableOverloadRetargeting) retries
	// overload errors on another server. Default false.
	EnableOverloadRetargeting *bool

	// TLS (tls, alias ssl) turns TLS on or off. Default off, but on for
	// mongodb+srv and when another TLS field is set.
	TLS *bool
	// TLSCAFile (tlsCAFile) is a PEM file of trusted CAs; default the
	// system pool.
	TLSCAFile string
	// TLSCertificateKeyFile (tlsCertificateKeyFile) is a PEM file with
	// the client certificate and its key.
	TLSCertificateKeyFile string
	// TLSCertificateKeyFilePassword (tlsCertificateKeyFilePassword)
	// decrypts that key.
	TLSCertificateKeyFilePassword Secret
	// TLSAllowInvalidCertificates (tlsAllowInvalidCertificates),
	// TLSAllowInvalidHostnames (tlsAllowInvalidHostnames) and
	// TLSInsecure (tlsInsecure, both at once) relax certificate checks;
	// TLSDisableOCSPEndpointCheck and TLSDisableCertificateRevocationCheck
	// relax revocation checks. Default false. The URI options
	// specification forbids setting certain pairs of them at all, even
	// to false.
	TLSAllowInvalidCertificates          *bool
	TLSAllowInvalidHostnames             *bool
	TLSInsecure                          *bool
	TLSDisableOCSPEndpointCheck          *bool
	TLSDisableCertificateRevocationCheck *bool

	// ProxyHost (proxyHost) is a SOCKS5 proxy to connect through;
	// ProxyPort (proxyPort) its port, default 1080; ProxyUsername and
	// ProxyPassword (proxyUsername, proxyPassword) its credentials, given
	// together.
	ProxyHost     string
	ProxyPort     *int
	ProxyUsername string
	ProxyPassword Secret

	// URI is the connection string given to ApplyURI. Its hosts and
	// options take precedence over the fields above.
	URI *connstring.ConnString

	// OnWarning, when set, receives each Warning ApplyURI and Resolve find
	// in the connection string and TXT record: unknown options and
	// ignored values, which the specifications say to log, not reject.
	OnWarning func(Warning) `json:"-"`

	// Resolver answers mongodb+srv DNS queries, the initial ones and the
	// rescans of mongos discovery; nil means net.DefaultResolver.
	Resolver Resolver `json:"-"`

	// Monitors receive the client's events: each value implements one or
	// more of the monitor interfaces of package event (OperationMonitor,
	// CommandMonitor, PoolMonitor, TopologyMonitor, SelectionMonitor) and
	// gets every event of those families, in the order given. Connect
	// refuses a value that implements none.
	Monitors []any `json:"-"`

	// Logging turns on the standardized log messages (package
	// driver/logging) with these settings, which override the
	// MONGODB_LOG_* environment variables for what they set (a handler or
	// *slog.Logger, levels per component, the document length). When nil,
	// the client logs only if a MONGODB_LOG_* variable turns a component
	// on.
	Logging *logging.Options `json:"-"`
}

// ClientOptionsFromURI returns options holding the parsed uri. Warnings
// are dropped; set OnWarning and call ApplyURI to receive them.
func ClientOptionsFromURI(uri string) (*ClientOptions, error) {
	o := &ClientOptions{}
	if err := o.ApplyURI(uri); err != nil {
		return nil, err
	}
	return o, nil
}

// ApplyURI parses uri with connstring.Parse and stores the result in
// o.URI, replacing any URI applied before. Warnings go to o.OnWarning. On
// error o is unchanged; the error is an *OptionError wrapping the
// *connstring.Error, and never contains a password.
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
	c, err := connstring.Parse(uri, connstring.WithWarnings(o.OnWarning), connstring.WithDeferredChecks())
	if err != nil {
		return wrapConnStringError(err)
	}
	o.URI = c
	return nil
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
	c, err := o.combine()
	if err != nil {
		return nil, err
	}
	if c.Scheme != connstring.SchemeSRV {
		return c, nil
	}
	s, err := connstring.LookupSeedlist(ctx, c, o.Resolver, connstring.WithWarnings(o.OnWarning))
	if err != nil {
		var ce *connstring.Error
		if !errors.As(err, &ce) {
			return nil, err // a DNS failure: *connstring.SRVError
		}
		return nil, wrapConnStringError(err)
	}
	out, err := s.Apply(c, nil)
	if err != nil {
		return nil, wrapConnStringError(err)
	}
	return out, nil
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
	m.AuthSource = pickString(code.AuthSource, uri.AuthSource)
	m.AuthMechanism = pickString(code.AuthMechanism, uri.AuthMechanism)
	m.AuthMechanismProperties = pickMap(code.AuthMechanismProperties, uri.AuthMechanismProperties)
	m.AppName = pickString(code.AppName, uri.AppName)
	m.Compressors = pickSlice(code.Compressors, uri.Compressors)
	m.ZlibCompressionLevel = pickPtr(code.ZlibCompressionLevel, uri.ZlibCompressionLevel)
	m.ConnectTimeout = pickPtr(code.ConnectTimeout, uri.ConnectTimeout)
	m.SocketTimeout = pickPtr(code.SocketTimeout, uri.SocketTimeout)
	m.Timeout = pickPtr(code.Timeout, uri.Timeout)
	m.ServerSelectionTimeout = pickPtr(code.ServerSelectionTimeout, uri.ServerSelectionTimeout)
	m.ServerSelectionTryOnce = pickPtr(code.ServerSelectionTryOnce, uri.ServerSelectionTryOnce)
	m.HeartbeatFrequency = pickPtr(code.HeartbeatFrequency, uri.HeartbeatFrequency)
	m.LocalThreshold = pickPtr(code.LocalThreshold, uri.LocalThreshold)
	m.DirectConnection = pickPtr(code.DirectConnection, uri.DirectConnection)
	m.LoadBalanced = pickPtr(code.LoadBalanced, uri.LoadBalanced)
	m.ReplicaSet = pickString(code.ReplicaSet, uri.ReplicaSet)
	m.ServerMonitoringMode = pickString(code.ServerMonitoringMode, uri.ServerMonitoringMode)
	m.SRVMaxHosts = pickPtr(code.SRVMaxHosts, uri.SRVMaxHosts)
	m.SRVServiceName = pickString(code.SRVServiceName, uri.SRVServiceName)
	m.MaxPoolSize = pickPtr(code.MaxPoolSize, uri.MaxPoolSize)
	m.MinPoolSize = pickPtr(code.MinPoolSize, uri.MinPoolSize)
	m.MaxConnecting = pickPtr(code.MaxConnecting, uri.MaxConnecting)
	m.MaxIdleTime = pickPtr(code.MaxIdleTime, uri.MaxIdleTime)
	m.WaitQueueTimeout = pickPtr(code.WaitQueueTimeout, uri.WaitQueueTimeout)
	m.ReadPreference = pickString(code.ReadPreference, uri.ReadPreference)
	m.ReadPreferenceTags = pickSlice(code.ReadPreferenceTags, uri.ReadPreferenceTags)
	m.MaxStaleness = pickPtr(code.MaxStaleness, uri.MaxStaleness)
	m.ReadConcernLevel = pickString(code.ReadConcernLevel, uri.ReadConcernLevel)
	m.W = pickPtr(code.W, uri.W)
	m.Journal = pickPtr(code.Journal, uri.Journal)
	m.WTimeout = pickPtr(code.WTimeout, uri.WTimeout)
	m.RetryReads = pickPtr(code.RetryReads, uri.RetryReads)
	m.RetryWrites = pickPtr(code.RetryWrites, uri.RetryWrites)
	m.MaxAdaptiveRetries = pickPtr(code.MaxAdaptiveRetries, uri.MaxAdaptiveRetries)
	m.EnableOverloadRetargeting = pickPtr(code.EnableOverloadRetargeting, uri.EnableOverloadRetargeting)
	m.TLS = pickPtr(code.TLS, uri.TLS)
	m.TLSCAFile = pickString(code.TLSCAFile, uri.TLSCAFile)
	m.TLSCertificateKeyFile = pickString(code.TLSCertificateKeyFile, uri.TLSCertificateKeyFile)
	m.TLSCertificateKeyFilePassword = pickString(code.TLSCertificateKeyFilePassword, uri.TLSCertificateKeyFilePassword)
	m.TLSAllowInvalidCertificates = pickPtr(code.TLSAllowInvalidCertificates, uri.TLSAllowInvalidCertificates)
	m.TLSAllowInvalidHostnames = pickPtr(code.TLSAllowInvalidHostnames, uri.TLSAllowInvalidHostnames)
	m.TLSInsecure = pickPtr(code.TLSInsecure, uri.TLSInsecure)
	m.TLSDisableOCSPEndpointCheck = pickPtr(code.TLSDisableOCSPEndpointCheck, uri.TLSDisableOCSPEndpointCheck)
	m.TLSDisableCertificateRevocationCheck = pickPtr(code.TLSDisableCertificateRevocationCheck, uri.TLSDisableCertificateRevocationCheck)
	m.ProxyHost = pickString(code.ProxyHost, uri.ProxyHost)
	m.ProxyPort = pickPtr(code.ProxyPort, uri.ProxyPort)
	m.ProxyUsername = pickString(code.ProxyUsername, uri.ProxyUsername)
	m.ProxyPassword = pickString(code.ProxyPassword, uri.ProxyPassword)
	return &m
}

func pickPtr[T any](code, uri *T) *T {
	if uri != nil {
		return uri
	}
	return code
}

func pickString[S ~string](code, uri S) S {
	if uri != "" {
		return uri
	}
	return code
}

func pickSlice[T any](code, uri []T) []T {
	if uri != nil {
		return uri
	}
	return code
}

func pickMap(code, uri map[string]string) map[string]string {
	if uri != nil {
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
	for _, chk := range o.valueChecks() {
		parsed, err := chk.run()
		if err != nil {
			return nil, err
		}
		if chk.option == "readPreference" {
			c.ReadPreference = parsed.ReadPreference
		}
	}
	return c, nil
}

// copyFields copies the fields set in code into a ConnString as they are.
func (o *ClientOptions) copyFields() *connstring.ConnString {
	return &connstring.ConnString{
		Scheme:                               connstring.SchemeMongoDB,
		Hosts:                                o.Hosts,
		AuthMechanism:                        o.AuthMechanism,
		ReadPreference:                       o.ReadPreference,
		Username:                             o.Username,
		Password:                             o.Password,
		HasPassword:                          o.Password != "",
		Database:                             o.Database,
		AuthSource:                           o.AuthSource,
		AuthMechanismProperties:              o.AuthMechanismProperties,
		AppName:                              o.AppName,
		Compressors:                          o.Compressors,
		ZlibCompressionLevel:                 o.ZlibCompressionLevel,
		ConnectTimeout:                       o.ConnectTimeout,
		SocketTimeout:                        o.SocketTimeout,
		Timeout:                              o.Timeout,
		ServerSelectionTimeout:               o.ServerSelectionTimeout,
		ServerSelectionTryOnce:               o.ServerSelectionTryOnce,
		HeartbeatFrequency:                   o.HeartbeatFrequency,
		LocalThreshold:                       o.LocalThreshold,
		DirectConnection:                     o.DirectConnection,
		LoadBalanced:                         o.LoadBalanced,
		ReplicaSet:                           o.ReplicaSet,
		ServerMonitoringMode:                 o.ServerMonitoringMode,
		SRVMaxHosts:                          o.SRVMaxHosts,
		SRVServiceName:                       o.SRVServiceName,
		MaxPoolSize:                          o.MaxPoolSize,
		MinPoolSize:                          o.MinPoolSize,
		MaxConnecting:                        o.MaxConnecting,
		MaxIdleTime:                          o.MaxIdleTime,
		WaitQueueTimeout:                     o.WaitQueueTimeout,
		ReadPreferenceTags:                   o.ReadPreferenceTags,
		MaxStaleness:                         o.MaxStaleness,
		ReadConcernLevel:                     o.ReadConcernLevel,
		W:                                    o.W,
		Journal:                              o.Journal,
		WTimeout:                             o.WTimeout,
		RetryReads:                           o.RetryReads,
		RetryWrites:                          o.RetryWrites,
		MaxAdaptiveRetries:                   o.MaxAdaptiveRetries,
		EnableOverloadRetargeting:            o.EnableOverloadRetargeting,
		TLS:                                  o.TLS,
		TLSCAFile:                            o.TLSCAFile,
		TLSCertificateKeyFile:                o.TLSCertificateKeyFile,
		TLSCertificateKeyFilePassword:        o.TLSCertificateKeyFilePassword,
		TLSAllowInvalidCertificates:          o.TLSAllowInvalidCertificates,
		TLSAllowInvalidHostnames:             o.TLSAllowInvalidHostnames,
		TLSInsecure:                          o.TLSInsecure,
		TLSDisableOCSPEndpointCheck:          o.TLSDisableOCSPEndpointCheck,
		TLSDisableCertificateRevocationCheck: o.TLSDisableCertificateRevocationCheck,
		ProxyHost:                            o.ProxyHost,
		ProxyPort:                            o.ProxyPort,
		ProxyUsername:                        o.ProxyUsername,
		ProxyPassword:                        o.ProxyPassword,
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
// option, in a URI that satisfies the option's preconditions, and parsed
// strictly. One copy of every bound, in connstring, serves both paths.
type valueCheck struct {
	field, option string
	shown         string // the value as the error shows it
	text          string // the value as the URI option writes it
	base          string // URI up to "?", and any options the check needs
}

func (v valueCheck) run() (*connstring.ConnString, error) {
	c, err := connstring.Parse(v.base+v.option+"="+escapeValue(v.text), connstring.WithStrict())
	if err == nil {
		return c, nil
	}
	oe := &OptionError{Option: v.option, Field: v.field, Value: v.shown, Reason: err.Error(), Err: err}
	var ce *connstring.Error
	if errors.As(err, &ce) {
		oe.Reason = ce.Reason
	}
	return nil, oe
}

const (
	plainBase = "mongodb://localhost/?"
	srvBase   = "mongodb+srv://localhost/?"
)

// valueChecks lists a check for each field set in code that has bounds.
func (o *ClientOptions) valueChecks() []valueCheck {
	var out []valueCheck
	intCheck := func(field, option string, v *int, base string) {
		if v != nil {
			s := strconv.Itoa(*v)
			out = append(out, valueCheck{field, option, s, s, base})
		}
	}
	msCheck := func(field, option string, d *time.Duration) {
		if d != nil {
			out = append(out, valueCheck{field, option, d.String(), msText(*d), plainBase})
		}
	}
	strCheck := func(field, option, v, base string) {
		if v != "" {
			out = append(out, valueCheck{field, option, v, v, base})
		}
	}
	intCheck("ZlibCompressionLevel", "zlibCompressionLevel", o.ZlibCompressionLevel, plainBase)
	intCheck("SRVMaxHosts", "srvMaxHosts", o.SRVMaxHosts, srvBase)
	intCheck("MaxPoolSize", "maxPoolSize", o.MaxPoolSize, plainBase)
	intCheck("MinPoolSize", "minPoolSize", o.MinPoolSize, plainBase)
	intCheck("MaxConnecting", "maxConnecting", o.MaxConnecting, plainBase)
	intCheck("MaxAdaptiveRetries", "maxAdaptiveRetries", o.MaxAdaptiveRetries, plainBase)
	intCheck("ProxyPort", "proxyPort", o.ProxyPort, plainBase+"proxyHost=localhost&")
	msCheck("ConnectTimeout", "connectTimeoutMS", o.ConnectTimeout)
	msCheck("SocketTimeout", "socketTimeoutMS", o.SocketTimeout)
	msCheck("Timeout", "timeoutMS", o.Timeout)
	msCheck("ServerSelectionTimeout", "serverSelectionTimeoutMS", o.ServerSelectionTimeout)
	msCheck("HeartbeatFrequency", "heartbeatFrequencyMS", o.HeartbeatFrequency)
	msCheck("LocalThreshold", "localThresholdMS", o.LocalThreshold)
	msCheck("MaxIdleTime", "maxIdleTimeMS", o.MaxIdleTime)
	msCheck("WaitQueueTimeout", "waitQueueTimeoutMS", o.WaitQueueTimeout)
	msCheck("WTimeout", "wTimeoutMS", o.WTimeout)
	if o.MaxStaleness != nil && *o.MaxStaleness >= 0 {
		s := strconv.FormatInt(int64(*o.MaxStaleness/time.Second), 10)
		out = append(out, valueCheck{"MaxStaleness", "maxStalenessSeconds", o.MaxStaleness.String(), s, plainBase + "readPreference=nearest&"})
	}
	strCheck("AppName", "appname", o.AppName, plainBase)
	strCheck("ServerMonitoringMode", "serverMonitoringMode", o.ServerMonitoringMode, plainBase)
	strCheck("SRVServiceName", "srvServiceName", o.SRVServiceName, srvBase)
	strCheck("ReadPreference", "readPreference", o.ReadPreference, plainBase)
	for _, name := range o.Compressors {
		// One at a time: a name containing "," must not pass as a list.
		if name == "" || strings.Contains(name, ",") {
			out = append(out, valueCheck{"Compressors", "compressors", name, "-", plainBase})
			continue
		}
		out = append(out, valueCheck{"Compressors", "compressors", name, name, plainBase})
	}
	if o.W != nil {
		s := o.W.String()
		if o.W.Tag == "" && o.W.Nodes < 0 {
			s = strconv.Itoa(o.W.Nodes)
		}
		out = append(out, valueCheck{"W", "w", s, s, plainBase})
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
	switch option {
	case "host":
		return "Hosts"
	case "userinfo":
		return "Username"
	case "scheme", "uri":
		return "URI"
	case "ssl":
		return "TLS"
	case "maxStalenessSeconds":
		return "MaxStaleness"
	}
	// The *MS options are the field name plus "MS"; the others are the
	// field name with different letter case.
	return fieldNames[strings.ToLower(strings.TrimSuffix(option, "MS"))]
}

// fieldNames maps lower-cased ClientOptions field names to the names.
var fieldNames = func() map[string]string {
	m := map[string]string{}
	t := reflect.TypeFor[ClientOptions]()
	for i := 0; i < t.NumField(); i++ {
		m[strings.ToLower(t.Field(i).Name)] = t.Field(i).Name
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
	v := reflect.ValueOf(o)
	t := v.Type()
	first := true
	for i := 0; i < t.NumField(); i++ {
		f := v.Field(i)
		if f.IsZero() {
			continue
		}
		if !first {
			b.WriteByte(' ')
		}
		first = false
		b.WriteString(t.Field(i).Name)
		b.WriteByte(':')
		b.WriteString(describe(f))
	}
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
	case Resolver:
		return fmt.Sprintf("%T", val)
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
