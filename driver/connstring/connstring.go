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

// ConnString is a parsed connection string.
//
// Set and unset: an option the URI did not give is its zero value. Options
// whose zero value is meaningful (numbers, booleans, durations, the write
// concern "w") are pointers, nil when unset. Strings are "" when unset: Parse
// ignores (with a Warning) an empty value for every string option (except
// authSource, for which the auth spec makes it an error), so a set string
// option is never empty. Lists and maps are nil when unset.
//
// Durations come from the *MS options (milliseconds) and MaxStaleness from
// maxStalenessSeconds. maxStalenessSeconds=-1 means "no maximum", the same
// as leaving it out, so Parse stores it as unset.
//
// Secrets (Password, TLSCertificateKeyFilePassword, ProxyPassword) are of
// type Secret, which prints as "xxxxx" with every fmt verb, in slog and in
// text marshalling; convert with string() to read the value.
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

	// AuthSource is the authSource option as given; Credential resolves
	// the per-mechanism default.
	AuthSource string
	// AuthMechanism is the canonical mechanism name (e.g. "SCRAM-SHA-256"),
	// "" when the server negotiates it.
	AuthMechanism string
	// AuthMechanismProperties has upper-cased property names. Values cannot
	// contain a comma when given in a URI.
	AuthMechanismProperties map[string]string

	// AppName is the appname option (at most 128 bytes).
	AppName string
	// Compressors lists the supported compressors named by compressors, in
	// the URI's priority order (unknown names are dropped with a Warning).
	Compressors []string
	// ZlibCompressionLevel is -1 (default level) through 9.
	ZlibCompressionLevel *int

	ConnectTimeout         *time.Duration // connectTimeoutMS; 0 means no timeout
	SocketTimeout          *time.Duration // socketTimeoutMS (deprecated by timeoutMS); 0 means no timeout
	Timeout                *time.Duration // timeoutMS (client-side operations timeout); 0 means no limit
	ServerSelectionTimeout *time.Duration // serverSelectionTimeoutMS; always positive
	// ServerSelectionTryOnce is parsed for completeness; the server
	// selection spec gives it no meaning in a multi-threaded driver.
	ServerSelectionTryOnce *bool
	HeartbeatFrequency     *time.Duration // heartbeatFrequencyMS; at least 500ms
	LocalThreshold         *time.Duration // localThresholdMS

	DirectConnection     *bool
	LoadBalanced         *bool
	ReplicaSet           string
	ServerMonitoringMode string // "stream", "poll" or "auto"
	SRVMaxHosts          *int   // 0 means no maximum; SchemeSRV only
	SRVServiceName       string // SchemeSRV only

	MaxPoolSize      *int // 0 means no maximum
	MinPoolSize      *int
	MaxConnecting    *int // always positive
	MaxIdleTime      *time.Duration
	WaitQueueTimeout *time.Duration // waitQueueTimeoutMS (deprecated by timeoutMS); always positive

	// ReadPreference is the mode in camelCase ("secondaryPreferred"); ""
	// means the default, primary.
	ReadPreference string
	// ReadPreferenceTags are the tag sets in URI order; an empty map is
	// the empty tag set, which matches any server.
	ReadPreferenceTags []map[string]string
	// MaxStaleness is maxStalenessSeconds, at least 90 seconds when set.
	MaxStaleness     *time.Duration
	ReadConcernLevel string
	W                *W
	Journal          *bool
	WTimeout         *time.Duration // wTimeoutMS (deprecated by timeoutMS)

	RetryReads                *bool
	RetryWrites               *bool
	MaxAdaptiveRetries        *int // client backpressure: overload retries
	EnableOverloadRetargeting *bool

	// TLS is the tls option (or its alias ssl) as given; TLSEnabled tells
	// whether TLS is on once the implicit rules are applied.
	TLS                                  *bool
	TLSCAFile                            string
	TLSCertificateKeyFile                string
	TLSCertificateKeyFilePassword        Secret
	TLSAllowInvalidCertificates          *bool
	TLSAllowInvalidHostnames             *bool
	TLSInsecure                          *bool
	TLSDisableOCSPEndpointCheck          *bool
	TLSDisableCertificateRevocationCheck *bool

	// SOCKS5 proxy. ProxyPort is nil for the default, 1080.
	ProxyHost     string
	ProxyPort     *int
	ProxyUsername string
	ProxyPassword Secret
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
