package connstring

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/internal/spectest"
)

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// uriCase is the shared format of the connection-string and uri-options
// tests.
type uriCase struct {
	Description string `json:"description"`
	URI         string `json:"uri"`
	Valid       bool   `json:"valid"`
	Warning     *bool  `json:"warning"`
	Hosts       []struct {
		Type *string `json:"type"`
		Host string  `json:"host"`
		Port *int    `json:"port"`
	} `json:"hosts"`
	Auth *struct {
		Username *string `json:"username"`
		Password *string `json:"password"`
		DB       *string `json:"db"`
	} `json:"auth"`
	Options map[string]any `json:"options"`
}

func TestSpecConnectionString(t *testing.T) {
	runURISuite(t, "connection-string", spectest.Files(t, "*.json", "connection-string", "tests"))
}

func TestSpecURIOptions(t *testing.T) {
	runURISuite(t, "uri-options", spectest.Files(t, "*.json", "uri-options", "tests"))
}

func runURISuite(t *testing.T, suite string, files []string) {
	total := spectest.NewTally(suite)
	for _, path := range files {
		var f struct{ Tests []uriCase }
		readJSON(t, path, &f)
		file := spectest.NewTally(suite + "/" + filepath.Base(path))
		t.Run(filepath.Base(path), func(t *testing.T) {
			for _, tc := range f.Tests {
				if reason := failsClosedDeviation(tc); reason != "" {
					file.Skip(t, tc.Description, reason)
					continue
				}
				file.Run(t, tc.Description, func(t *testing.T) { checkURICase(t, tc) })
			}
		})
		file.Log(t)
		total.Add(file)
	}
	total.Log(t)
}

// failsClosedDeviation returns why a case is skipped: it expects an
// invalid value of a security option (tlsInsecure=invalid, ...) to be
// ignored with a warning, where Parse deliberately fails closed with an
// *Error naming the option (TestSecurityOptionsFailClosed checks that).
func failsClosedDeviation(tc uriCase) string {
	if !tc.Valid || tc.Warning == nil || !*tc.Warning {
		return ""
	}
	_, err := Parse(tc.URI)
	var e *Error
	if errors.As(err, &e) && FailsClosed(e.Option) {
		return "deliberate deviation: an invalid value of a security option (tls*, ssl, authMechanism, authSource) is an error, not a warning, so a typo cannot weaken TLS or authentication"
	}
	return ""
}

func checkURICase(t *testing.T, tc uriCase) {
	var warnings []Warning
	c, err := Parse(tc.URI, WithWarnings(func(w Warning) { warnings = append(warnings, w) }))
	if !tc.Valid {
		if err == nil {
			t.Fatalf("Parse(%q) succeeded, want an error", tc.URI)
		}
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("Parse(%q) error %T %v, want *Error", tc.URI, err, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("Parse(%q): %v", tc.URI, err)
	}
	if tc.Warning != nil && *tc.Warning != (len(warnings) > 0) {
		t.Errorf("Parse(%q) warnings %v, want warning=%v", tc.URI, warnings, *tc.Warning)
	}
	if tc.Hosts != nil {
		if len(tc.Hosts) != len(c.Hosts) {
			t.Fatalf("hosts %q, want %d hosts", c.Hosts, len(tc.Hosts))
		}
		for i, want := range tc.Hosts {
			kind, host, port := splitAddress(c.Hosts[i])
			if host != want.Host {
				t.Errorf("host %d = %q, want %q", i, host, want.Host)
			}
			if want.Port != nil && port != *want.Port {
				t.Errorf("host %d port = %d, want %d", i, port, *want.Port)
			}
			if want.Port == nil && kind != "unix" && port != DefaultPort {
				t.Errorf("host %d port = %d, want the default %d", i, port, DefaultPort)
			}
			if want.Type != nil && kind != *want.Type {
				t.Errorf("host %d type = %q, want %q", i, kind, *want.Type)
			}
		}
	}
	if a := tc.Auth; a != nil {
		if got, want := c.Username, deref(a.Username); got != want {
			t.Errorf("username %q, want %q", got, want)
		}
		if a.Password == nil && c.HasPassword {
			t.Errorf("password set, want none")
		}
		if a.Password != nil && (!c.HasPassword || string(c.Password) != *a.Password) {
			t.Errorf("password mismatch (set=%v), want %q", c.HasPassword, *a.Password)
		}
		if got, want := c.Database, deref(a.DB); got != want {
			t.Errorf("db %q, want %q", got, want)
		}
	}
	for key, want := range tc.Options {
		got, ok := specOption(c, strings.ToLower(key))
		if !ok {
			t.Errorf("option %s unset, want %v", key, want)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("option %s = %#v, want %#v", key, got, want)
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// splitAddress classifies one entry of ConnString.Hosts the way the spec
// tests name host types.
func splitAddress(addr string) (kind, host string, port int) {
	if strings.IndexByte(addr, '/') >= 0 {
		return "unix", addr, 0
	}
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "invalid", addr, 0
	}
	fmt.Sscan(p, &port)
	switch ip := net.ParseIP(h); {
	case strings.Contains(h, ":"):
		return "ip_literal", h, port
	case ip != nil && ip.To4() != nil:
		return "ipv4", h, port
	}
	return "hostname", h, port
}

// specOption returns the value of a lower-cased URI option as the spec
// tests write it in JSON (numbers as float64, durations in milliseconds).
// It reads the ConnString fields directly, independently of the parser's
// option table.
func specOption(c *ConnString, key string) (any, bool) {
	b := func(v *bool) (any, bool) {
		if v == nil {
			return nil, false
		}
		return *v, true
	}
	n := func(v *int) (any, bool) {
		if v == nil {
			return nil, false
		}
		return float64(*v), true
	}
	ms := func(v *time.Duration) (any, bool) {
		if v == nil {
			return nil, false
		}
		return float64(*v / time.Millisecond), true
	}
	s := func(v string) (any, bool) { return v, v != "" }
	switch key {
	case "appname":
		return s(c.AppName)
	case "authmechanism":
		return s(c.AuthMechanism)
	case "authsource":
		return s(c.AuthSource)
	case "authmechanismproperties":
		if c.AuthMechanismProperties == nil {
			return nil, false
		}
		m := map[string]any{}
		for k, v := range c.AuthMechanismProperties {
			m[k] = v
		}
		return m, true
	case "compressors":
		if c.Compressors == nil {
			return nil, false
		}
		l := []any{}
		for _, v := range c.Compressors {
			l = append(l, v)
		}
		return l, true
	case "zlibcompressionlevel":
		return n(c.ZlibCompressionLevel)
	case "connecttimeoutms":
		return ms(c.ConnectTimeout)
	case "sockettimeoutms":
		return ms(c.SocketTimeout)
	case "timeoutms":
		return ms(c.Timeout)
	case "serverselectiontimeoutms":
		return ms(c.ServerSelectionTimeout)
	case "serverselectiontryonce":
		return b(c.ServerSelectionTryOnce)
	case "heartbeatfrequencyms":
		return ms(c.HeartbeatFrequency)
	case "localthresholdms":
		return ms(c.LocalThreshold)
	case "directconnection":
		return b(c.DirectConnection)
	case "loadbalanced":
		return b(c.LoadBalanced)
	case "replicaset":
		return s(c.ReplicaSet)
	case "servermonitoringmode":
		return s(c.ServerMonitoringMode)
	case "srvmaxhosts":
		return n(c.SRVMaxHosts)
	case "srvservicename":
		return s(c.SRVServiceName)
	case "maxpoolsize":
		return n(c.MaxPoolSize)
	case "minpoolsize":
		return n(c.MinPoolSize)
	case "maxconnecting":
		return n(c.MaxConnecting)
	case "maxidletimems":
		return ms(c.MaxIdleTime)
	case "waitqueuetimeoutms":
		return ms(c.WaitQueueTimeout)
	case "readpreference":
		return s(c.ReadPreference)
	case "readpreferencetags":
		if c.ReadPreferenceTags == nil {
			return nil, false
		}
		l := []any{}
		for _, set := range c.ReadPreferenceTags {
			m := map[string]any{}
			for k, v := range set {
				m[k] = v
			}
			l = append(l, m)
		}
		return l, true
	case "maxstalenessseconds":
		if c.MaxStaleness == nil {
			return nil, false
		}
		return float64(*c.MaxStaleness / time.Second), true
	case "readconcernlevel":
		return s(c.ReadConcernLevel)
	case "w":
		if c.W == nil {
			return nil, false
		}
		if c.W.Tag != "" {
			return c.W.Tag, true
		}
		return float64(c.W.Nodes), true
	case "journal":
		return b(c.Journal)
	case "wtimeoutms":
		return ms(c.WTimeout)
	case "retryreads":
		return b(c.RetryReads)
	case "retrywrites":
		return b(c.RetryWrites)
	case "maxadaptiveretries":
		return n(c.MaxAdaptiveRetries)
	case "enableoverloadretargeting":
		return b(c.EnableOverloadRetargeting)
	case "tls", "ssl":
		return b(c.TLS)
	case "tlscafile":
		return s(c.TLSCAFile)
	case "tlscertificatekeyfile":
		return s(c.TLSCertificateKeyFile)
	case "tlscertificatekeyfilepassword":
		return s(string(c.TLSCertificateKeyFilePassword))
	case "tlsallowinvalidcertificates":
		return b(c.TLSAllowInvalidCertificates)
	case "tlsallowinvalidhostnames":
		return b(c.TLSAllowInvalidHostnames)
	case "tlsinsecure":
		return b(c.TLSInsecure)
	case "tlsdisableocspendpointcheck":
		return b(c.TLSDisableOCSPEndpointCheck)
	case "tlsdisablecertificaterevocationcheck":
		return b(c.TLSDisableCertificateRevocationCheck)
	case "proxyhost":
		return s(c.ProxyHost)
	case "proxyport":
		return n(c.ProxyPort)
	case "proxyusername":
		return s(c.ProxyUsername)
	case "proxypassword":
		return s(string(c.ProxyPassword))
	}
	return nil, false
}

func TestSpecAuthConnectionString(t *testing.T) {
	type credential struct {
		Username            *string        `json:"username"`
		Password            *string        `json:"password"`
		Source              *string        `json:"source"`
		Mechanism           *string        `json:"mechanism"`
		MechanismProperties map[string]any `json:"mechanism_properties"`
	}
	total := spectest.NewTally("auth/legacy")
	for _, path := range spectest.Files(t, "*.json", "auth", "tests", "legacy") {
		var f struct {
			Tests []struct {
				Description string          `json:"description"`
				URI         string          `json:"uri"`
				Valid       bool            `json:"valid"`
				Credential  json.RawMessage `json:"credential"`
			}
		}
		readJSON(t, path, &f)
		file := spectest.NewTally("auth/legacy/" + filepath.Base(path))
		t.Run(filepath.Base(path), func(t *testing.T) {
			for _, tc := range f.Tests {
				var want *credential
				if len(tc.Credential) > 0 && string(tc.Credential) != "null" {
					want = new(credential)
					if err := json.Unmarshal(tc.Credential, want); err != nil {
						t.Fatal(err)
					}
				}
				if tc.Valid && want != nil && want.Mechanism != nil && *want.Mechanism == MechanismAWS &&
					(want.Username != nil || want.Password != nil) {
					// The same file expects "user:pass@" with MONGODB-AWS to
					// fail ("should throw an exception if username and
					// password provided"), as auth.md does since 2025-09-30:
					// "If credentials are provided in the URI or client
					// options, the driver MUST raise an error." These older
					// cases contradict both.
					file.Skip(t, tc.Description, "MONGODB-AWS credentials in the URI: stale case contradicting auth.md (2025-09-30) and the file's own error case")
					continue
				}
				file.Run(t, tc.Description, func(t *testing.T) {
					c, err := Parse(tc.URI)
					if !tc.Valid {
						var e *Error
						if err == nil || !errors.As(err, &e) {
							t.Fatalf("Parse(%q) = %v, %v; want an *Error", tc.URI, c, err)
						}
						return
					}
					if err != nil {
						t.Fatalf("Parse(%q): %v", tc.URI, err)
					}
					got, ok := c.Credential()
					if want == nil {
						if ok {
							t.Fatalf("credential %+v, want none", got)
						}
						return
					}
					if !ok {
						t.Fatal("no credential, want one")
					}
					if got.Username != deref(want.Username) {
						t.Errorf("username %q, want %v", got.Username, want.Username)
					}
					if want.Password == nil && got.HasPassword {
						t.Error("password set, want none")
					}
					if want.Password != nil && (!got.HasPassword || string(got.Password) != *want.Password) {
						t.Error("password mismatch")
					}
					if want.Source != nil && got.Source != *want.Source {
						t.Errorf("source %q, want %q", got.Source, *want.Source)
					}
					if got.Mechanism != deref(want.Mechanism) {
						t.Errorf("mechanism %q, want %v", got.Mechanism, want.Mechanism)
					}
					if want.MechanismProperties == nil && got.MechanismProperties != nil {
						t.Errorf("mechanism properties %v, want none", got.MechanismProperties)
					}
					for k, v := range want.MechanismProperties {
						if gv, ok := got.MechanismProperties[k]; !ok || gv != v {
							t.Errorf("mechanism property %s = %q (set=%v), want %v", k, gv, ok, v)
						}
					}
				})
			}
		})
		file.Log(t)
		total.Passed += file.Passed
		total.Failed += file.Failed
		for r, n := range file.Skipped {
			total.Skipped[r] += n
		}
	}
	total.Log(t)
}

// TestSpecReadWriteConcernConnectionString runs the read-write-concern
// connection string tests. Two of their invalid cases (w=-2 and
// wtimeoutMS=-500) are invalid values, which the URI options tests
// ("Too low wTimeoutMS causes a warning") and the connection string spec
// make warnings. So every case runs twice: under WithStrict, where it must
// match the file exactly, and by default, where an invalid case may
// instead succeed with an InvalidValue warning.
func TestSpecReadWriteConcernConnectionString(t *testing.T) {
	total := spectest.NewTally("read-write-concern/connection-string")
	for _, path := range spectest.Files(t, "*.json", "read-write-concern", "tests", "connection-string") {
		var f struct {
			Tests []struct {
				Description  string         `json:"description"`
				URI          string         `json:"uri"`
				Valid        bool           `json:"valid"`
				Warning      *bool          `json:"warning"`
				ReadConcern  map[string]any `json:"readConcern"`
				WriteConcern map[string]any `json:"writeConcern"`
			}
		}
		readJSON(t, path, &f)
		file := spectest.NewTally("read-write-concern/" + filepath.Base(path))
		t.Run(filepath.Base(path), func(t *testing.T) {
			for _, tc := range f.Tests {
				file.Run(t, tc.Description, func(t *testing.T) {
					for _, strict := range []bool{true, false} {
						var warnings []Warning
						opts := []Option{WithWarnings(func(w Warning) { warnings = append(warnings, w) })}
						if strict {
							opts = append(opts, WithStrict())
						}
						c, err := Parse(tc.URI, opts...)
						if !tc.Valid {
							if err == nil && (strict || !hasKind(warnings, InvalidValue)) {
								t.Fatalf("strict=%v: Parse(%q) succeeded with warnings %v; want an error", strict, tc.URI, warnings)
							}
							continue
						}
						if err != nil {
							t.Fatalf("strict=%v: Parse(%q): %v", strict, tc.URI, err)
						}
						if tc.Warning != nil && *tc.Warning != (len(warnings) > 0) {
							t.Errorf("strict=%v: warnings %v, want warning=%v", strict, warnings, *tc.Warning)
						}
						if tc.ReadConcern != nil {
							got := map[string]any{}
							if c.ReadConcernLevel != "" {
								got["level"] = c.ReadConcernLevel
							}
							if !reflect.DeepEqual(got, tc.ReadConcern) {
								t.Errorf("read concern %v, want %v", got, tc.ReadConcern)
							}
						}
						if tc.WriteConcern != nil {
							got := map[string]any{}
							for _, k := range []string{"w", "wtimeoutMS", "journal"} {
								if v, ok := specOption(c, strings.ToLower(k)); ok {
									got[k] = v
								}
							}
							if !reflect.DeepEqual(got, tc.WriteConcern) {
								t.Errorf("write concern %v, want %v", got, tc.WriteConcern)
							}
						}
					}
				})
			}
		})
		file.Log(t)
		total.Passed += file.Passed
		total.Failed += file.Failed
	}
	total.Log(t)
}

func hasKind(ws []Warning, k WarningKind) bool {
	for _, w := range ws {
		if w.Kind == k {
			return true
		}
	}
	return false
}
