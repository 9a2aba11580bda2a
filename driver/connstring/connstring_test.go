package connstring

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"
)

func parseWarn(t *testing.T, uri string, opts ...Option) (*ConnString, []Warning, error) {
	t.Helper()
	var ws []Warning
	opts = append(opts, WithWarnings(func(w Warning) { ws = append(ws, w) }))
	c, err := Parse(uri, opts...)
	return c, ws, err
}

func kinds(ws []Warning) []WarningKind {
	var k []WarningKind
	for _, w := range ws {
		k = append(k, w.Kind)
	}
	return k
}

func ptr[T any](v T) *T { return &v }

func TestParseValid(t *testing.T) {
	tests := []struct {
		name  string
		uri   string
		opts  []Option
		warns []WarningKind
		check func(t *testing.T, c *ConnString)
	}{
		{name: "default port and lower-cased host", uri: "mongodb://Example.COM,h2:1",
			check: func(t *testing.T, c *ConnString) {
				want := []string{"example.com:27017", "h2:1"}
				if !reflect.DeepEqual(c.Hosts, want) {
					t.Errorf("hosts %q, want %q", c.Hosts, want)
				}
			}},
		{name: "IPv6 with zone and canonical form", uri: "mongodb://[FE80:0::1%25eth0]:2,[::FFFF:1.2.3.4]",
			check: func(t *testing.T, c *ConnString) {
				want := []string{"[fe80::1%eth0]:2", "[::ffff:1.2.3.4]:27017"}
				if !reflect.DeepEqual(c.Hosts, want) {
					t.Errorf("hosts %q, want %q", c.Hosts, want)
				}
			}},
		{name: "unix socket keeps case", uri: "mongodb://%2FTmp%2FM.sock,rel%2Fx.sock",
			check: func(t *testing.T, c *ConnString) {
				want := []string{"/Tmp/M.sock", "rel/x.sock"}
				if !reflect.DeepEqual(c.Hosts, want) {
					t.Errorf("hosts %q, want %q", c.Hosts, want)
				}
			}},
		{name: "srv host without port", uri: "mongodb+srv://Cluster0.Example.com",
			check: func(t *testing.T, c *ConnString) {
				if c.Scheme != SchemeSRV || !reflect.DeepEqual(c.Hosts, []string{"cluster0.example.com"}) {
					t.Errorf("scheme %q hosts %q", c.Scheme, c.Hosts)
				}
				if !c.TLSEnabled() {
					t.Error("mongodb+srv must enable TLS implicitly")
				}
			}},
		{name: "srv with short host name", uri: "mongodb+srv://localhost"},
		{name: "userinfo decoding and empty password", uri: "mongodb://%C3%BCser:@h",
			check: func(t *testing.T, c *ConnString) {
				if c.Username != "üser" || !c.HasPassword || c.Password != "" {
					t.Errorf("user %q hasPassword %v", c.Username, c.HasPassword)
				}
			}},
		{name: "unencoded UTF-8 in userinfo is accepted", uri: "mongodb://jürgen:pässword@h",
			check: func(t *testing.T, c *ConnString) {
				if c.Username != "jürgen" || string(c.Password) != "pässword" {
					t.Errorf("user %q", c.Username)
				}
			}},
		{name: "database decoded", uri: "mongodb://h/my%3Fdb.coll?w=1",
			check: func(t *testing.T, c *ConnString) {
				if c.Database != "my?db.coll" {
					t.Errorf("database %q", c.Database)
				}
			}},
		{name: "keys are case-insensitive", uri: "mongodb://h/?REPLICASET=rs&ReadPreference=nearest&MAXpoolSIZE=7",
			check: func(t *testing.T, c *ConnString) {
				if c.ReplicaSet != "rs" || c.ReadPreference != "nearest" || *c.MaxPoolSize != 7 {
					t.Errorf("%q %q %v", c.ReplicaSet, c.ReadPreference, c.MaxPoolSize)
				}
			}},
		{name: "repeated key: last valid value wins", uri: "mongodb://h/?w=1&w=-2&maxPoolSize=3&maxPoolSize=4",
			warns: []WarningKind{RepeatedOption, InvalidValue, RepeatedOption},
			check: func(t *testing.T, c *ConnString) {
				if *c.W != (W{Nodes: 1}) || *c.MaxPoolSize != 4 {
					t.Errorf("w %v maxPoolSize %d", c.W, *c.MaxPoolSize)
				}
			}},
		{name: "empty segments are skipped", uri: "mongodb://h/?&&w=2&",
			check: func(t *testing.T, c *ConnString) {
				if c.W.Nodes != 2 {
					t.Errorf("w %v", c.W)
				}
			}},
		{name: "semicolon is not a delimiter and plus is not a space", uri: "mongodb://h/?w=a;b&appname=x+y",
			check: func(t *testing.T, c *ConnString) {
				if c.W.Tag != "a;b" || c.AppName != "x+y" {
					t.Errorf("w %v appname %q", c.W, c.AppName)
				}
			}},
		{name: "deprecated wtimeout alone is used", uri: "mongodb://h/?wtimeout=5", warns: []WarningKind{DeprecatedOption},
			check: func(t *testing.T, c *ConnString) {
				if *c.WTimeout != 5*time.Millisecond {
					t.Errorf("wtimeout %v", c.WTimeout)
				}
			}},
		{name: "deprecated gssapiServiceName", uri: "mongodb://u@h/?authMechanism=GSSAPI&gssapiServiceName=svc", warns: []WarningKind{DeprecatedOption},
			check: func(t *testing.T, c *ConnString) {
				if c.AuthMechanismProperties["SERVICE_NAME"] != "svc" {
					t.Errorf("props %v", c.AuthMechanismProperties)
				}
			}},
		{name: "gssapiServiceName loses to SERVICE_NAME", uri: "mongodb://u@h/?gssapiServiceName=old&authMechanism=GSSAPI&authMechanismProperties=service_name:new",
			warns: []WarningKind{DeprecatedOption},
			check: func(t *testing.T, c *ConnString) {
				if c.AuthMechanismProperties["SERVICE_NAME"] != "new" {
					t.Errorf("props %v", c.AuthMechanismProperties)
				}
			}},
		{name: "mechanism is case-insensitive", uri: "mongodb://u:p@h/?authMechanism=scram-sha-256",
			check: func(t *testing.T, c *ConnString) {
				if c.AuthMechanism != MechanismSCRAMSHA256 {
					t.Errorf("mechanism %q", c.AuthMechanism)
				}
			}},
		{name: "read preference case is normalised with a warning", uri: "mongodb://h/?readPreference=SECONDARYpreferred",
			warns: []WarningKind{NonCanonicalValue},
			check: func(t *testing.T, c *ConnString) {
				if c.ReadPreference != "secondaryPreferred" {
					t.Errorf("mode %q", c.ReadPreference)
				}
			}},
		{name: "maxStalenessSeconds=-1 means unset", uri: "mongodb://h/?readPreference=primary&maxStalenessSeconds=-1",
			check: func(t *testing.T, c *ConnString) {
				if c.MaxStaleness != nil {
					t.Errorf("maxStaleness %v", *c.MaxStaleness)
				}
			}},
		{name: "maxStalenessSeconds below 90 is ignored", uri: "mongodb://h/?readPreference=secondary&maxStalenessSeconds=89", warns: []WarningKind{InvalidValue}},
		{name: "empty tag set is allowed with primary", uri: "mongodb://h/?readPreferenceTags=",
			check: func(t *testing.T, c *ConnString) {
				if !reflect.DeepEqual(c.ReadPreferenceTags, []map[string]string{{}}) {
					t.Errorf("tags %v", c.ReadPreferenceTags)
				}
			}},
		{name: "tag values may hold colons", uri: "mongodb://h/?readPreference=nearest&readPreferenceTags=a:b:c",
			check: func(t *testing.T, c *ConnString) {
				if c.ReadPreferenceTags[0]["a"] != "b:c" {
					t.Errorf("tags %v", c.ReadPreferenceTags)
				}
			}},
		{name: "duplicate tag in one set is ignored", uri: "mongodb://h/?readPreference=nearest&readPreferenceTags=a:1,a:2", warns: []WarningKind{InvalidValue}},
		{name: "compressors: unknown dropped, duplicates removed", uri: "mongodb://h/?compressors=zstd,snoopy,zstd,,zlib", warns: []WarningKind{InvalidValue},
			check: func(t *testing.T, c *ConnString) {
				if !reflect.DeepEqual(c.Compressors, []string{"zstd", "zlib"}) {
					t.Errorf("compressors %q", c.Compressors)
				}
			}},
		{name: "only unknown compressors leave the option unset", uri: "mongodb://h/?compressors=snoopy", warns: []WarningKind{InvalidValue},
			check: func(t *testing.T, c *ConnString) {
				if c.Compressors != nil {
					t.Errorf("compressors %q", c.Compressors)
				}
			}},
		{name: "w as a tag", uri: "mongodb://h/?w=dc1",
			check: func(t *testing.T, c *ConnString) {
				if *c.W != (W{Tag: "dc1"}) || c.W.String() != "dc1" {
					t.Errorf("w %v", c.W)
				}
			}},
		{name: "w=0 with journal=false", uri: "mongodb://h/?w=0&journal=false"},
		{name: "maxPoolSize=0 means no limit for minPoolSize", uri: "mongodb://h/?maxPoolSize=0&minPoolSize=500"},
		{name: "appname of 128 bytes", uri: "mongodb://h/?appname=" + strings.Repeat("a", 128)},
		{name: "appname of 129 bytes is ignored", uri: "mongodb://h/?appname=" + strings.Repeat("a", 129), warns: []WarningKind{InvalidValue}},
		{name: "srvServiceName must follow RFC 6335", uri: "mongodb+srv://a.b.c/?srvServiceName=bad_name", warns: []WarningKind{InvalidValue}},
		{name: "srvServiceName may exceed 15 characters (seedlist spec)", uri: "mongodb+srv://a.b.c/?srvServiceName=" + strings.Repeat("s", 62),
			check: func(t *testing.T, c *ConnString) {
				if c.SRVServiceName != strings.Repeat("s", 62) {
					t.Errorf("srvServiceName %q", c.SRVServiceName)
				}
			}},
		{name: "srvServiceName longer than one DNS label", uri: "mongodb+srv://a.b.c/?srvServiceName=" + strings.Repeat("s", 63), warns: []WarningKind{InvalidValue}},
		{name: "heartbeatFrequencyMS minimum", uri: "mongodb://h/?heartbeatFrequencyMS=499", warns: []WarningKind{InvalidValue}},
		{name: "heartbeatFrequencyMS=500", uri: "mongodb://h/?heartbeatFrequencyMS=500",
			check: func(t *testing.T, c *ConnString) {
				if *c.HeartbeatFrequency != 500*time.Millisecond {
					t.Errorf("heartbeat %v", c.HeartbeatFrequency)
				}
			}},
		{name: "32-bit options reject larger values", uri: "mongodb://h/?maxPoolSize=2147483648", warns: []WarningKind{InvalidValue}},
		{name: "timeoutMS is 64-bit", uri: "mongodb://h/?timeoutMS=4294967296000",
			check: func(t *testing.T, c *ConnString) {
				if *c.Timeout != 4294967296000*time.Millisecond {
					t.Errorf("timeout %v", c.Timeout)
				}
			}},
		{name: "integers take no plus sign", uri: "mongodb://h/?maxPoolSize=+5", warns: []WarningKind{InvalidValue}},
		{name: "booleans are lower-case true or false only", uri: "mongodb://h/?retryWrites=True&retryReads=1", warns: []WarningKind{InvalidValue, InvalidValue}},
		{name: "invalid percent-encoding in a value", uri: "mongodb://h/?replicaSet=a%zz", warns: []WarningKind{InvalidValue}},
		{name: "unknown option", uri: "mongodb://h/?connectMS=5", warns: []WarningKind{UnknownOption}},
		{name: "empty proxyUsername is ignored", uri: "mongodb://h/?proxyHost=p&proxyUsername=", warns: []WarningKind{InvalidValue}},
		{name: "proxy port range", uri: "mongodb://h/?proxyHost=p&proxyPort=65536", warns: []WarningKind{InvalidValue}},
		{name: "X509 with empty userinfo", uri: "mongodb://@h/?authMechanism=MONGODB-X509",
			check: func(t *testing.T, c *ConnString) {
				cred, ok := c.Credential()
				if !ok || cred.Username != "" || cred.Source != "$external" {
					t.Errorf("credential %+v %v", cred, ok)
				}
			}},
		{name: "OIDC callback configured in code", uri: "mongodb://h/?authMechanism=MONGODB-OIDC", opts: []Option{WithOIDCCallback()}},
		{name: "OIDC k8s accepts a username", uri: "mongodb://u@h/?authMechanism=MONGODB-OIDC&authMechanismProperties=ENVIRONMENT:k8s"},
		{name: "GSSAPI legacy boolean canonicalisation", uri: "mongodb://u@h/?authMechanism=GSSAPI&authMechanismProperties=CANONICALIZE_HOST_NAME:true"},
		{name: "property names are case-insensitive", uri: "mongodb://u@h/?authMechanism=GSSAPI&authMechanismProperties=service_realm:R,Service_Host:x",
			check: func(t *testing.T, c *ConnString) {
				want := map[string]string{"SERVICE_REALM": "R", "SERVICE_HOST": "x"}
				if !reflect.DeepEqual(c.AuthMechanismProperties, want) {
					t.Errorf("props %v", c.AuthMechanismProperties)
				}
			}},
		{name: "authSource alone configures nothing", uri: "mongodb://h/db?authSource=other",
			check: func(t *testing.T, c *ConnString) {
				if _, ok := c.Credential(); ok {
					t.Error("credential configured")
				}
			}},
		{name: "all TLS options without conflicts", uri: "mongodb://h/?ssl=true&tls=true&tlsCAFile=%2Fca.pem&tlsCertificateKeyFile=c.pem&tlsCertificateKeyFilePassword=pw&tlsInsecure=true",
			check: func(t *testing.T, c *ConnString) {
				if !*c.TLS || c.TLSCAFile != "/ca.pem" || c.TLSCertificateKeyFile != "c.pem" || c.TLSCertificateKeyFilePassword != "pw" || !*c.TLSInsecure {
					t.Errorf("%+v", c)
				}
			}},
		{name: "every remaining option", uri: "mongodb://h/?serverMonitoringMode=poll&localThresholdMS=0&serverSelectionTimeoutMS=1&waitQueueTimeoutMS=9&maxIdleTimeMS=0&maxConnecting=3&retryReads=false&readConcernLevel=snapshot&loadBalanced=false&directConnection=false&maxAdaptiveRetries=0&enableOverloadRetargeting=true&serverSelectionTryOnce=true&zlibCompressionLevel=-1",
			check: func(t *testing.T, c *ConnString) {
				if c.ServerMonitoringMode != "poll" || *c.LocalThreshold != 0 || *c.ServerSelectionTimeout != time.Millisecond ||
					*c.WaitQueueTimeout != 9*time.Millisecond || *c.MaxIdleTime != 0 || *c.MaxConnecting != 3 || *c.RetryReads ||
					c.ReadConcernLevel != "snapshot" || *c.LoadBalanced || *c.DirectConnection || *c.MaxAdaptiveRetries != 0 ||
					!*c.EnableOverloadRetargeting || !*c.ServerSelectionTryOnce || *c.ZlibCompressionLevel != -1 {
					t.Errorf("%+v", c)
				}
			}},
		{name: "strict mode leaves unknown options as warnings", uri: "mongodb://h/?foo=1", opts: []Option{WithStrict()}, warns: []WarningKind{UnknownOption}},
		{name: "nil option is ignored", uri: "mongodb://h", opts: []Option{nil}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, ws, err := parseWarn(t, tc.uri, tc.opts...)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.uri, err)
			}
			if got := kinds(ws); !reflect.DeepEqual(got, tc.warns) {
				t.Errorf("warnings %v (%v), want %v", got, ws, tc.warns)
			}
			if tc.check != nil {
				tc.check(t, c)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name   string
		uri    string
		opts   []Option
		option string // the Error.Option wanted
	}{
		{"unsupported scheme", "postgres://h", nil, "scheme"},
		{"scheme is case-sensitive", "MONGODB://h", nil, "scheme"},
		{"empty host in list", "mongodb://a,,b", nil, "host"},
		{"trailing comma", "mongodb://a,", nil, "host"},
		{"empty port", "mongodb://a:", nil, "host"},
		{"port with sign", "mongodb://a:+1", nil, "host"},
		{"unclosed IPv6", "mongodb://[::1", nil, "host"},
		{"IPv4 in brackets", "mongodb://[127.0.0.1]", nil, "host"},
		{"text after bracket", "mongodb://[::1]x", nil, "host"},
		{"odd IPv6 zone", "mongodb://[fe80::1%25a%2Fb]", nil, "host"},
		{"unix socket with port", "mongodb://%2Ftmp%2Fa.sock:1", nil, "host"},
		{"unix socket without .sock", "mongodb://%2Ftmp%2Fa", nil, "host"},
		{"bad host encoding", "mongodb://a%zz", nil, "host"},
		{"forbidden host character", "mongodb://a%3Ab", nil, "host"},
		{"empty host name with port", "mongodb://:27017", nil, "host"},
		{"srv with IP", "mongodb+srv://127.0.0.1", nil, "host"},
		{"srv with IPv6", "mongodb+srv://[::1]", nil, "host"},
		{"srv with socket", "mongodb+srv://%2Ftmp%2Fa.sock", nil, "host"},
		{"srv with directConnection", "mongodb+srv://a.b.c/?directConnection=true", nil, "directConnection"},
		{"userinfo with forbidden character", "mongodb://a#b:c@h", nil, "userinfo"},
		{"bad password encoding", "mongodb://a:b%zz@h", nil, "userinfo"},
		{"unescaped question mark in password", "mongodb://a:b?c@h", nil, "host"},
		{"database with dollar", "mongodb://h/$external", nil, "database"},
		{"database with space", "mongodb://h/a%20b", nil, "database"},
		{"database bad encoding", "mongodb://h/a%z", nil, "database"},
		{"at sign in database", "mongodb://h/a@b", nil, "uri"},
		{"option without value", "mongodb://h/?w=1&journal", nil, "journal"},
		{"unknown mechanism", "mongodb://u:p@h/?authMechanism=MONGODB-CR", nil, "authMechanism"},
		{"properties without mechanism", "mongodb://h/?authMechanismProperties=A:b", nil, "authMechanismProperties"},
		{"properties with SCRAM", "mongodb://u:p@h/?authMechanismProperties=SERVICE_NAME:b", nil, "authMechanismProperties"},
		{"unknown GSSAPI property", "mongodb://u@h/?authMechanism=GSSAPI&authMechanismProperties=REALM:x", nil, "authMechanismProperties"},
		{"X509 with properties", "mongodb://h/?authMechanism=MONGODB-X509&authMechanismProperties=A:b", nil, "authMechanismProperties"},
		{"PLAIN without username", "mongodb://:p@h/?authMechanism=PLAIN", nil, "userinfo"},
		{"OIDC ALLOWED_HOSTS in URI", "mongodb://h/?authMechanism=MONGODB-OIDC&authMechanismProperties=ENVIRONMENT:k8s,ALLOWED_HOSTS:x", nil, "authMechanismProperties"},
		{"OIDC TOKEN_RESOURCE with test", "mongodb://h/?authMechanism=MONGODB-OIDC&authMechanismProperties=ENVIRONMENT:test,TOKEN_RESOURCE:x", nil, "authMechanismProperties"},
		{"OIDC TOKEN_RESOURCE without environment", "mongodb://h/?authMechanism=MONGODB-OIDC&authMechanismProperties=TOKEN_RESOURCE:x", []Option{WithOIDCCallback()}, "authMechanismProperties"},
		{"OIDC environment and callback", "mongodb://h/?authMechanism=MONGODB-OIDC&authMechanismProperties=ENVIRONMENT:k8s", []Option{WithOIDCCallback()}, "authMechanismProperties"},
		{"AWS authSource", "mongodb://h/?authMechanism=MONGODB-AWS&authSource=admin", nil, "authSource"},
		{"tags with explicit primary", "mongodb://h/?readPreference=primary&readPreferenceTags=dc:ny", nil, "readPreferenceTags"},
		{"tags with implicit primary", "mongodb://h/?readPreferenceTags=dc:ny", nil, "readPreferenceTags"},
		{"max staleness with implicit primary", "mongodb://h/?maxStalenessSeconds=120", nil, "maxStalenessSeconds"},
		{"min pool size above max", "mongodb://h/?maxPoolSize=2&minPoolSize=3", nil, "minPoolSize"},
		{"repeated proxyPassword", "mongodb://h/?proxyHost=p&proxyUsername=u&proxyPassword=a&proxyPassword=b", nil, "proxyPassword"},
		{"strict: invalid value", "mongodb://h/?w=-2", []Option{WithStrict()}, "w"},
		{"strict: empty value", "mongodb://h/?journal=", []Option{WithStrict()}, "journal"},
		{"strict: bad property element", "mongodb://u@h/?authMechanism=GSSAPI&authMechanismProperties=x", []Option{WithStrict()}, "authMechanismProperties"},
		{"strict: unknown compressor", "mongodb://h/?compressors=snoopy", []Option{WithStrict()}, "compressors"},
		{"strict: deprecated alias with bad value", "mongodb://h/?wtimeout=x", []Option{WithStrict()}, "wtimeout"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(tc.uri, tc.opts...)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse(%q) = %v, %v; want *Error", tc.uri, c, err)
			}
			if e.Option != tc.option {
				t.Errorf("Error.Option %q, want %q (%v)", e.Option, tc.option, err)
			}
			if !strings.HasPrefix(err.Error(), "connstring: "+tc.option) {
				t.Errorf("message %q does not name %q", err, tc.option)
			}
		})
	}
}

func TestErrorFormat(t *testing.T) {
	tests := []struct {
		err  Error
		want string
	}{
		{Error{Option: "w", Value: "-2", Reason: "bad"}, `connstring: w "-2": bad`},
		{Error{Option: "userinfo", Value: Redacted, Reason: "bad"}, `connstring: userinfo (value redacted): bad`},
		{Error{Option: "host", Reason: "missing host"}, `connstring: host: missing host`},
		{Error{Reason: "plain"}, `connstring: plain`},
	}
	for _, tc := range tests {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("%#v.Error() = %q, want %q", tc.err, got, tc.want)
		}
	}
	for k := UnknownOption; k <= NonCanonicalValue; k++ {
		if s := k.String(); strings.HasPrefix(s, "warning ") {
			t.Errorf("kind %d has no name", k)
		}
	}
	if s := WarningKind(99).String(); s != "warning 99" {
		t.Errorf("unknown kind = %q", s)
	}
	w := Warning{Message: "m"}
	if w.String() != "m" {
		t.Error("Warning.String")
	}
}

func TestCredentialDefaults(t *testing.T) {
	tests := []struct {
		uri    string
		source string
		props  map[string]string
	}{
		{"mongodb://u:p@h", "admin", nil},
		{"mongodb://u:p@h/db", "db", nil},
		{"mongodb://u:p@h/db?authSource=s", "s", nil},
		{"mongodb://u:p@h/?authMechanism=PLAIN", "$external", nil},
		{"mongodb://u:p@h/db?authMechanism=PLAIN", "db", nil},
		{"mongodb://u@h/db?authMechanism=GSSAPI", "$external", map[string]string{"SERVICE_NAME": "mongodb"}},
		{"mongodb://h/db?authMechanism=MONGODB-AWS", "$external", nil},
		{"mongodb://h/db?authMechanism=MONGODB-OIDC&authMechanismProperties=ENVIRONMENT:test", "$external", map[string]string{"ENVIRONMENT": "test"}},
	}
	for _, tc := range tests {
		c, err := Parse(tc.uri)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.uri, err)
		}
		cred, ok := c.Credential()
		if !ok || cred.Source != tc.source || !reflect.DeepEqual(cred.MechanismProperties, tc.props) {
			t.Errorf("%s: credential %+v (%v), want source %q props %v", tc.uri, cred, ok, tc.source, tc.props)
		}
	}
}

func TestTLSEnabled(t *testing.T) {
	tests := []struct {
		uri  string
		want bool
	}{
		{"mongodb://h", false},
		{"mongodb://h/?tls=true", true},
		{"mongodb://h/?ssl=true", true},
		{"mongodb+srv://a.b.c", true},
		{"mongodb+srv://a.b.c/?tls=false", false},
		{"mongodb://h/?tlsCAFile=ca.pem", true},
		{"mongodb://h/?tlsAllowInvalidHostnames=false", true},
		{"mongodb://h/?tls=false&tlsCAFile=ca.pem", false},
	}
	for _, tc := range tests {
		c, err := Parse(tc.uri)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.uri, err)
		}
		if got := c.TLSEnabled(); got != tc.want {
			t.Errorf("%s: TLSEnabled() = %v, want %v", tc.uri, got, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	c, err := Parse("mongodb://a,b/?replicaSet=rs")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate on a parsed URI: %v", err)
	}
	c.LoadBalanced = ptr(true)
	var e *Error
	if err := c.Validate(); !errors.As(err, &e) || e.Option != "loadBalanced" {
		t.Fatalf("Validate after setting loadBalanced: %v", err)
	}

	srv, err := Parse("mongodb+srv://a.b.c/?srvMaxHosts=1")
	if err != nil {
		t.Fatal(err)
	}
	// After SRV resolution the seed list may be longer and a TXT record
	// may add loadBalanced=true.
	srv.Hosts = []string{"x.b.c:1", "y.b.c:2"}
	if err := validateResolved(srv); err != nil {
		t.Fatalf("validateResolved: %v", err)
	}
	srv.LoadBalanced = ptr(true)
	if err := validateResolved(srv); !errors.As(err, &e) || e.Option != "srvMaxHosts" {
		t.Fatalf("validateResolved with loadBalanced: %v", err)
	}
	srv.SRVMaxHosts = ptr(0)
	if err := validateResolved(srv); !errors.As(err, &e) || e.Option != "loadBalanced" {
		t.Fatalf("validateResolved with loadBalanced and two seeds: %v", err)
	}
}

func TestStringRoundTrip(t *testing.T) {
	tests := []struct {
		uri  string
		want string
	}{
		{"mongodb://localhost", "mongodb://localhost:27017"},
		{"mongodb://u%3Ax:p%40w@H1,[::1]:2,%2Ftmp%2Fm.sock/d%3Fb?w=majority&ssl=true&wtimeout=5",
			"mongodb://u%3Ax:xxxxx@h1:27017,[::1]:2,%2Ftmp%2Fm.sock/d%3Fb?w=majority&wTimeoutMS=5&tls=true"},
		{"mongodb+srv://a.b.c/?srvMaxHosts=0&readPreference=nearest&readPreferenceTags=b:2,a:1&readPreferenceTags=",
			"mongodb+srv://a.b.c/?srvMaxHosts=0&readPreference=nearest&readPreferenceTags=a:1,b:2&readPreferenceTags="},
		{"mongodb://h/?proxyHost=p&proxyUsername=u&proxyPassword=secret&tlsCertificateKeyFilePassword=k",
			"mongodb://h:27017/?tlsCertificateKeyFilePassword=xxxxx&proxyHost=p&proxyUsername=u&proxyPassword=xxxxx"},
		{"mongodb://h/?appname=a%26b%3Dc%25&replicaSet=r%40s",
			"mongodb://h:27017/?appname=a%26b%3Dc%25&replicaSet=r@s"},
		{"mongodb://[fe80::1%25en0]", "mongodb://[fe80::1%25en0]:27017"},
		{"mongodb://u@h/?authMechanism=MONGODB-OIDC&authMechanismProperties=ENVIRONMENT:azure,TOKEN_RESOURCE:mongodb://x%2Cy",
			""}, // the comma splits the value: parsed with a warning, see below
	}
	for _, tc := range tests {
		c, err := Parse(tc.uri)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.uri, err)
		}
		s := c.String()
		if tc.want != "" && s != tc.want {
			t.Errorf("String() = %q, want %q", s, tc.want)
		}
		back, err := Parse(c.format(true))
		if err != nil || !reflect.DeepEqual(back, c) {
			t.Errorf("round trip of %q: %+v, %v", tc.uri, back, err)
		}
	}
	var nilCS *ConnString
	if nilCS.String() != "<nil>" {
		t.Error("nil ConnString String")
	}
	manual := &ConnString{Hosts: []string{"h:1"}}
	if got := manual.String(); got != "mongodb://h:1" {
		t.Errorf("String with no scheme = %q", got)
	}
}

func TestSecretPrinting(t *testing.T) {
	s := Secret("hunter2")
	type holder struct{ P Secret }
	outputs := []string{
		s.String(), fmt.Sprint(s), fmt.Sprintf("%s %v %q %x %X %#v %+v %d", s, s, s, s, s, s, s, s),
		fmt.Sprintf("%v %+v %#v", holder{s}, holder{s}, &holder{s}),
	}
	b, _ := json.Marshal(holder{s})
	outputs = append(outputs, string(b))
	var sb strings.Builder
	slog.New(slog.NewTextHandler(&sb, nil)).Info("x", "p", s, "h", holder{s})
	slog.New(slog.NewJSONHandler(&sb, nil)).Info("x", "p", s)
	outputs = append(outputs, sb.String())
	for _, o := range outputs {
		if strings.Contains(o, "hunter2") {
			t.Errorf("secret printed: %s", o)
		}
	}
	if Secret("").String() != "" {
		t.Error("empty secret should print empty")
	}
	if string(s) != "hunter2" {
		t.Error("conversion must reveal the value")
	}
}

func TestStringOfResolvedSRV(t *testing.T) {
	c, err := Parse("mongodb+srv://u:p@a.b.c/db?srvMaxHosts=2&srvServiceName=svc")
	if err != nil {
		t.Fatal(err)
	}
	c.Hosts = []string{"x.b.c:27017", "y.b.c:27018"} // as after SRV resolution
	c.ReplicaSet = "rs"                              // as from a TXT record
	want := "mongodb://u:xxxxx@x.b.c:27017,y.b.c:27018/db?replicaSet=rs&tls=true"
	if got := c.String(); got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
	back, err := Parse(c.format(true))
	if err != nil || back.Scheme != SchemeMongoDB || !back.TLSEnabled() || !reflect.DeepEqual(back.Hosts, c.Hosts) {
		t.Fatalf("resolved URI parses to %+v, %v", back, err)
	}
}

func TestValidateOIDCCallback(t *testing.T) {
	c, err := Parse("mongodb://h/?authMechanism=MONGODB-OIDC", WithOIDCCallback())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(WithOIDCCallback()); err != nil {
		t.Errorf("Validate(WithOIDCCallback()) = %v", err)
	}
	if err := c.Validate(); err == nil {
		t.Error("Validate() without a callback accepted MONGODB-OIDC without ENVIRONMENT")
	}
}

func TestCredentialExternalSourceWins(t *testing.T) {
	c, err := Parse("mongodb://h/?authMechanism=MONGODB-X509")
	if err != nil {
		t.Fatal(err)
	}
	c.AuthSource = "admin" // as a TXT record may set it
	if cred, _ := c.Credential(); cred.Source != "$external" {
		t.Errorf("source %q, want $external", cred.Source)
	}
}

func TestParseDeferredChecks(t *testing.T) {
	// The cross-option rule is skipped and left to Validate...
	c, err := Parse("mongodb://a,b/?directConnection=true", WithDeferredChecks())
	if err != nil {
		t.Fatalf("Parse with deferred checks: %v", err)
	}
	var e *Error
	if err := c.Validate(); !errors.As(err, &e) || e.Option != "directConnection" {
		t.Errorf("Validate = %v, want the directConnection conflict", err)
	}
	if _, err := Parse("mongodb://a,b/?directConnection=true"); err == nil {
		t.Error("Parse without deferred checks accepted directConnection with two hosts")
	}
	// ...but the credential's own rules still run at parse time.
	if _, err := Parse("mongodb://u:p@a/?authMechanism=MONGODB-X509", WithDeferredChecks()); !errors.As(err, &e) {
		t.Errorf("deferred Parse accepted an X509 password: %v", err)
	}
}

// A security option's invalid value is an *Error naming the option in
// both modes: ignoring it, as the specifications say for other options,
// could connect without TLS (tls=yes) or relax certificate checks.
func TestSecurityOptionsFailClosed(t *testing.T) {
	cases := []struct{ query, option string }{
		{"tls=yes", "tls"},
		{"tls=", "tls"},
		{"ssl=1", "ssl"},
		{"tlsInsecure=invalid", "tlsInsecure"},
		{"tlsAllowInvalidCertificates=invalid", "tlsAllowInvalidCertificates"},
		{"tlsAllowInvalidHostnames=yes", "tlsAllowInvalidHostnames"},
		{"tlsDisableOCSPEndpointCheck=1", "tlsDisableOCSPEndpointCheck"},
		{"tlsDisableCertificateRevocationCheck=no", "tlsDisableCertificateRevocationCheck"},
		{"tlsCAFile=", "tlsCAFile"},
		{"tlsCertificateKeyFile=", "tlsCertificateKeyFile"},
		{"tlsCertificateKeyFilePassword=", "tlsCertificateKeyFilePassword"},
		{"TLSINSECURE=maybe", "tlsInsecure"},
		{"authMechanism=SCRAM-SHA-512", "authMechanism"},
		{"authSource=", "authSource"},
	}
	for _, c := range cases {
		for _, strict := range []bool{false, true} {
			var opts []Option
			if strict {
				opts = append(opts, WithStrict())
			}
			var warnings []Warning
			opts = append(opts, WithWarnings(func(w Warning) { warnings = append(warnings, w) }))
			_, err := Parse("mongodb://u:p@h/?"+c.query, opts...)
			var e *Error
			if !errors.As(err, &e) || e.Option != c.option {
				t.Errorf("strict=%v %s: err %v, want an *Error naming %s", strict, c.query, err, c.option)
			}
			if len(warnings) > 0 {
				t.Errorf("strict=%v %s: warnings %v, want the error alone", strict, c.query, warnings)
			}
		}
		if !FailsClosed(c.option) {
			t.Errorf("FailsClosed(%q) = false", c.option)
		}
	}
	// Every tls* option fails closed, including ones added later.
	for _, o := range options {
		if strings.HasPrefix(o.name, "tls") && !o.failClosed {
			t.Errorf("%s does not fail closed", o.name)
		}
	}
	// Other options keep the specification's warning.
	for _, name := range []string{"readPreference", "maxPoolSize", "journal", "proxyHost"} {
		if FailsClosed(name) {
			t.Errorf("FailsClosed(%q) = true", name)
		}
	}
}
