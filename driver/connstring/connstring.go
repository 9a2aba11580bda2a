package connstring

import (
	"time"
)

// Schemes accepted by Parse.
const (
	SchemeMongoDB = "mongodb"
	SchemeSRV     = "mongodb+srv"
)

// DefaultPort is the port used for a host given without one.
const DefaultPort = 27017

// ConnString is a parsed connection string: its scheme, hosts, userinfo
// and database, and its options (URIOptions, embedded, so c.MaxPoolSize
// reads an option directly).
//
// Set and unset: an option the URI did not give is its zero value; see
// URIOptions.
type ConnString struct {
	// Scheme is SchemeMongoDB or SchemeSRV.
	Scheme string
	// Hosts are the seeds, in URI order. A hostname or IP address is
	// "host:port", lower-cased, IPv6 literals in brackets
	// ("[::1]:27017"), with DefaultPort when the URI gave none. A Unix
	// domain socket is its decoded path ("/tmp/mongodb-27017.sock"). For
	// SchemeSRV, Hosts holds the single SRV name, without a port.
	Hosts []string

	// Username is the decoded user name from the userinfo ("" if none).
	Username string
	// Password is the decoded password; HasPassword tells "user:@" (set,
	// empty) from "user@" (unset).
	Password    Secret
	HasPassword bool
	// Database is the decoded path after the hosts ("" if none). It is the
	// default database and, for some mechanisms, the default auth source;
	// it never on its own turns authentication on.
	Database string

	URIOptions
}

// URIOptions are the URI options: one field per option of the URI Options
// specification that this driver supports, each tagged uri:"<canonical
// option name>". ConnString and driver.ClientOptions both embed it, so an
// option is declared once; code that must treat every option (merging
// code and URI, checking values, printing) walks the fields by reflection
// and the tag, and a test checks that every option Parse knows has a
// field and every field an option.
//
// Set and unset: an option not given is its zero value. Options whose zero
// value is meaningful (numbers, booleans, durations, the write concern
// "w") are pointers, nil when unset. Strings are "" when unset: Parse
// ignores (with a Warning) an empty value for every string option (except
// authSource, for which the auth spec makes it an error), so a set string
// option is never empty. Lists and maps are nil when unset.
//
// Durations come from the *MS options (milliseconds) and MaxStaleness from
// maxStalenessSeconds. maxStalenessSeconds=-1 means "no maximum", the same
// as leaving it out, so Parse stores it as unset.
//
// Secrets (TLSCertificateKeyFilePassword, ProxyPassword, and the
// connection string's Password) are of type Secret, which prints as
// "xxxxx" with every fmt verb, in slog and in text marshalling; convert
// with string() to read the value.
type URIOptions struct {
	// AuthSource (authSource) is the database to authenticate against, as
	// given; ConnString.Credential resolves the per-mechanism default.
	AuthSource string `uri:"authSource"`
	// AuthMechanism (authMechanism) is the canonical mechanism name (one
	// of the Mechanism constants, e.g. "SCRAM-SHA-256"); "" negotiates
	// SCRAM with the server.
	AuthMechanism string `uri:"authMechanism"`
	// AuthMechanismProperties (authMechanismProperties) has upper-cased
	// property names. Values cannot contain a comma when given in a URI.
	AuthMechanismProperties map[string]string `uri:"authMechanismProperties"`

	// AppName (appname) is sent in the handshake; at most 128 bytes.
	AppName string `uri:"appname"`
	// Compressors (compressors) lists the supported compressors
	// ("snappy", "zlib", "zstd") in order of preference; default none.
	// Parse drops unknown names with a Warning.
	Compressors []string `uri:"compressors"`
	// ZlibCompressionLevel (zlibCompressionLevel) is -1 (the library's
	// default level) through 9.
	ZlibCompressionLevel *int `uri:"zlibCompressionLevel"`

	// ConnectTimeout (connectTimeoutMS) bounds establishing one
	// connection; 0 means no timeout. Default 10s.
	ConnectTimeout *time.Duration `uri:"connectTimeoutMS"`
	// SocketTimeout (socketTimeoutMS, deprecated by Timeout) bounds one
	// network read or write; 0 or unset means no timeout.
	SocketTimeout *time.Duration `uri:"socketTimeoutMS"`
	// Timeout (timeoutMS) is the client-side operation timeout; 0 means
	// no limit. Default unset: the legacy timeouts apply.
	Timeout *time.Duration `uri:"timeoutMS"`
	// ServerSelectionTimeout (serverSelectionTimeoutMS) bounds server
	// selection; positive. Default 30s.
	ServerSelectionTimeout *time.Duration `uri:"serverSelectionTimeoutMS"`
	// ServerSelectionTryOnce (serverSelectionTryOnce) is accepted for
	// completeness; the server selection spec gives it no meaning in a
	// multi-threaded driver.
	ServerSelectionTryOnce *bool `uri:"serverSelectionTryOnce"`
	// HeartbeatFrequency (heartbeatFrequencyMS) is the interval between
	// server checks; at least 500ms. Default 10s.
	HeartbeatFrequency *time.Duration `uri:"heartbeatFrequencyMS"`
	// LocalThreshold (localThresholdMS) is the latency window of server
	// selection; 0 picks only the fastest. Default 15ms.
	LocalThreshold *time.Duration `uri:"localThresholdMS"`

	// DirectConnection (directConnection) connects to the single host
	// given, whatever its role. Default false.
	DirectConnection *bool `uri:"directConnection"`
	// LoadBalanced (loadBalanced) connects through a load balancer to a
	// single host. Default false.
	LoadBalanced *bool `uri:"loadBalanced"`
	// ReplicaSet (replicaSet) is the replica set name to require.
	ReplicaSet string `uri:"replicaSet"`
	// ServerMonitoringMode (serverMonitoringMode) is "stream", "poll" or
	// "auto" (the default).
	ServerMonitoringMode string `uri:"serverMonitoringMode"`
	// SRVMaxHosts (srvMaxHosts) caps the seeds taken from SRV records,
	// chosen at random; 0 (the default) means no cap. mongodb+srv only.
	SRVMaxHosts *int `uri:"srvMaxHosts"`
	// SRVServiceName (srvServiceName) is the SRV service name; default
	// "mongodb". mongodb+srv only.
	SRVServiceName string `uri:"srvServiceName"`

	// MaxPoolSize (maxPoolSize) caps each server's connection pool; 0
	// means no cap. Default 100.
	MaxPoolSize *int `uri:"maxPoolSize"`
	// MinPoolSize (minPoolSize) is the number of connections each pool
	// keeps open. Default 0.
	MinPoolSize *int `uri:"minPoolSize"`
	// MaxConnecting (maxConnecting) caps connections being established
	// at once per pool; positive. Default 2.
	MaxConnecting *int `uri:"maxConnecting"`
	// MaxIdleTime (maxIdleTimeMS) closes connections idle that long; 0
	// (the default) means never.
	MaxIdleTime *time.Duration `uri:"maxIdleTimeMS"`
	// WaitQueueTimeout (waitQueueTimeoutMS, deprecated by Timeout)
	// bounds waiting for a pooled connection; positive. Default unset:
	// server selection's timeout applies.
	WaitQueueTimeout *time.Duration `uri:"waitQueueTimeoutMS"`

	// ReadPreference (readPreference) is the mode in camelCase:
	// "primary" (the default, also when ""), "primaryPreferred",
	// "secondary", "secondaryPreferred" or "nearest".
	ReadPreference string `uri:"readPreference"`
	// ReadPreferenceTags (readPreferenceTags) are the tag sets tried in
	// order; an empty map is the empty tag set, which matches any server.
	ReadPreferenceTags []map[string]string `uri:"readPreferenceTags"`
	// MaxStaleness (maxStalenessSeconds) excludes secondaries staler than
	// this; at least 90s when set; nil (the default) means no maximum.
	MaxStaleness *time.Duration `uri:"maxStalenessSeconds"`
	// ReadConcernLevel (readConcernLevel) is the default read concern;
	// default none (the server's).
	ReadConcernLevel string `uri:"readConcernLevel"`
	// W (w) is the default write concern's w; default none (the
	// server's).
	W *W `uri:"w"`
	// Journal (journal) is the default write concern's j.
	Journal *bool `uri:"journal"`
	// WTimeout (wTimeoutMS, deprecated by Timeout) is the default write
	// concern's wtimeout; 0 means none.
	WTimeout *time.Duration `uri:"wTimeoutMS"`

	// RetryReads (retryReads) and RetryWrites (retryWrites) retry an
	// operation once after a retryable error. Default true.
	RetryReads  *bool `uri:"retryReads"`
	RetryWrites *bool `uri:"retryWrites"`
	// MaxAdaptiveRetries (maxAdaptiveRetries) caps retries after server
	// overload errors (client backpressure). Default 2.
	MaxAdaptiveRetries *int `uri:"maxAdaptiveRetries"`
	// EnableOverloadRetargeting (enableOverloadRetargeting) retries
	// overload errors on another server. Default false.
	EnableOverloadRetargeting *bool `uri:"enableOverloadRetargeting"`

	// TLS is the tls option (or its alias ssl) as given; TLSEnabled tells
	// whether TLS is on once the implicit rules are applied (on for
	// mongodb+srv and when another TLS option is set).
	TLS *bool `uri:"tls"`
	// TLSCAFile (tlsCAFile) is a PEM file of trusted CAs; default the
	// system pool.
	TLSCAFile string `uri:"tlsCAFile"`
	// TLSCertificateKeyFile (tlsCertificateKeyFile) is a PEM file with
	// the client certificate and its key.
	TLSCertificateKeyFile string `uri:"tlsCertificateKeyFile"`
	// TLSCertificateKeyFilePassword (tlsCertificateKeyFilePassword)
	// decrypts that key.
	TLSCertificateKeyFilePassword Secret `uri:"tlsCertificateKeyFilePassword"`
	// TLSAllowInvalidCertificates (tlsAllowInvalidCertificates),
	// TLSAllowInvalidHostnames (tlsAllowInvalidHostnames) and
	// TLSInsecure (tlsInsecure, both at once) relax certificate checks;
	// TLSDisableOCSPEndpointCheck and TLSDisableCertificateRevocationCheck
	// relax revocation checks. Default false. The URI options
	// specification forbids setting certain pairs of them at all, even
	// to false.
	TLSAllowInvalidCertificates          *bool `uri:"tlsAllowInvalidCertificates"`
	TLSAllowInvalidHostnames             *bool `uri:"tlsAllowInvalidHostnames"`
	TLSInsecure                          *bool `uri:"tlsInsecure"`
	TLSDisableOCSPEndpointCheck          *bool `uri:"tlsDisableOCSPEndpointCheck"`
	TLSDisableCertificateRevocationCheck *bool `uri:"tlsDisableCertificateRevocationCheck"`

	// ProxyHost (proxyHost) is a SOCKS5 proxy to connect through;
	// ProxyPort (proxyPort) its port, nil for the default 1080;
	// ProxyUsername and ProxyPassword (proxyUsername, proxyPassword) its
	// credentials, given together.
	ProxyHost     string `uri:"proxyHost"`
	ProxyPort     *int   `uri:"proxyPort"`
	ProxyUsername string `uri:"proxyUsername"`
	ProxyPassword Secret `uri:"proxyPassword"`
}

// W is the write concern's "w": a number of nodes, or a tag such as
// "majority" when Tag is not "".
type W struct {
	Nodes int
	Tag   string
}

// String returns w as it is written in a URI.
func (w W) String() string {
	if w.Tag != "" {
		return w.Tag
	}
	return itoa(w.Nodes)
}
