package driver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/connstring"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
	"github.com/mongoscope/mongoscope/driver/logging"
	"github.com/mongoscope/mongoscope/mongotest"
)

// issueURI is the connection string of issue 10: a misspelt read
// preference mode, a boolean TLS written "yes" and a misspelt option name.
const issueURI = "mongodb://db.example.com/?readPreference=primay&tls=yes&maxPolSize=5"

// ApplyURI rejects an invalid value by default, naming the option; under
// LenientURI it ignores it with a Warning, except for security options,
// which fail closed in both modes; an unknown option is a Warning in both.
func TestApplyURIInvalidValues(t *testing.T) {
	cases := []struct {
		name    string
		uri     string
		lenient bool
		// option is the option the *OptionError names; "" means no error.
		option string
		// warnings are the kinds of warning expected when there is no error.
		warnings []connstring.WarningKind
	}{
		{name: "issue URI, strict", uri: issueURI, option: "readPreference"},
		{name: "issue URI, lenient: tls=yes fails closed", uri: issueURI, lenient: true, option: "tls"},
		{name: "bad mode, strict", uri: "mongodb://h/?readPreference=primay", option: "readPreference"},
		{name: "bad mode, lenient", uri: "mongodb://h/?readPreference=primay", lenient: true, warnings: []connstring.WarningKind{connstring.InvalidValue}},
		{name: "negative pool size, strict", uri: "mongodb://h/?maxPoolSize=-1", option: "maxPoolSize"},
		{name: "negative pool size, lenient", uri: "mongodb://h/?maxPoolSize=-1", lenient: true, warnings: []connstring.WarningKind{connstring.InvalidValue}},
		{name: "empty value, strict", uri: "mongodb://h/?journal=", option: "journal"},
		{name: "unknown compressor, strict", uri: "mongodb://h/?compressors=zlib,snoopy", option: "compressors"},
		{name: "tls=yes, strict", uri: "mongodb://h/?tls=yes", option: "tls"},
		{name: "tls=yes, lenient", uri: "mongodb://h/?tls=yes", lenient: true, option: "tls"},
		{name: "ssl=1, lenient", uri: "mongodb://h/?ssl=1", lenient: true, option: "ssl"},
		{name: "tlsInsecure=invalid, lenient", uri: "mongodb://h/?tlsInsecure=invalid", lenient: true, option: "tlsInsecure"},
		{name: "tlsAllowInvalidCertificates=invalid, lenient", uri: "mongodb://h/?tlsAllowInvalidCertificates=invalid", lenient: true, option: "tlsAllowInvalidCertificates"},
		{name: "tlsAllowInvalidHostnames=invalid, lenient", uri: "mongodb://h/?tlsAllowInvalidHostnames=invalid", lenient: true, option: "tlsAllowInvalidHostnames"},
		{name: "empty tlsCAFile, lenient", uri: "mongodb://h/?tlsCAFile=", lenient: true, option: "tlsCAFile"},
		{name: "unknown mechanism, lenient", uri: "mongodb://u:p@h/?authMechanism=SCRAM-SHA-512", lenient: true, option: "authMechanism"},
		{name: "unknown option, strict", uri: "mongodb://h/?maxPolSize=5", warnings: []connstring.WarningKind{connstring.UnknownOption}},
		{name: "unknown option, lenient", uri: "mongodb://h/?maxPolSize=5", lenient: true, warnings: []connstring.WarningKind{connstring.UnknownOption}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []connstring.WarningKind
			o := &ClientOptions{LenientURI: tc.lenient, OnWarning: func(w Warning) { got = append(got, w.Kind) }}
			err := o.ApplyURI(tc.uri)
			if tc.option != "" {
				var oe *OptionError
				var ce *connstring.Error
				if !errors.As(err, &oe) || oe.Option != tc.option || oe.Field == "" || !errors.As(err, &ce) || ce.Option != tc.option {
					t.Fatalf("ApplyURI(%s) = %v, want an *OptionError naming %s and its field", tc.uri, err, tc.option)
				}
				if o.URI != nil {
					t.Error("the URI was stored despite the error")
				}
				return
			}
			if err != nil {
				t.Fatalf("ApplyURI(%s): %v", tc.uri, err)
			}
			if !equalKinds(got, tc.warnings) {
				t.Errorf("warnings %v, want %v", got, tc.warnings)
			}
		})
	}
	t.Run("ClientOptionsFromURI is strict", func(t *testing.T) {
		var oe *OptionError
		if _, err := ClientOptionsFromURI(issueURI); !errors.As(err, &oe) || oe.Option != "readPreference" {
			t.Fatalf("ClientOptionsFromURI = %v", err)
		}
	})
}

func equalKinds(a, b []connstring.WarningKind) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// logRecords decodes a JSON handler's output.
func logRecords(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		out = append(out, m)
	}
	return out
}

// warnFor returns the WARN records about option.
func warnFor(records []map[string]any, option string) []map[string]any {
	var out []map[string]any
	for _, r := range records {
		if lvl, _ := r["level"].(string); strings.EqualFold(lvl, "warn") && r["option"] == option {
			out = append(out, r)
		}
	}
	return out
}

// Each connection-string warning reaches the slog handler given in
// ClientOptions.Logging at WARN level when the client connects, in both
// modes, with no other wiring; the client still works.
func TestURIWarningsReachLogHandler(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	cases := []struct {
		name    string
		query   string
		lenient bool
		options []string // options with a WARN record
	}{
		{"unknown option, strict", "?maxPolSize=5", false, []string{"maxPolSize"}},
		{"unknown option and ignored value, lenient", "?readPreference=primay&maxPolSize=5", true, []string{"readPreference", "maxPolSize"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			var seen []string
			o := &ClientOptions{
				LenientURI: tc.lenient,
				OnWarning:  func(w Warning) { seen = append(seen, w.Option) },
				// Every component off: the warnings are logged anyway.
				Logging: &logging.Options{Handler: slog.NewJSONHandler(&buf, nil), Getenv: func(string) string { return "" }},
			}
			c := connect(t, s.URI()+tc.query, o)
			if err := c.Ping(ctxTimeout(t, 10*time.Second)); err != nil {
				t.Fatal(err)
			}
			records := logRecords(t, buf.Bytes())
			for _, opt := range tc.options {
				w := warnFor(records, opt)
				if len(w) != 1 {
					t.Errorf("%d WARN records for %s in %s", len(w), opt, buf.String())
					continue
				}
				if msg, _ := w[0]["msg"].(string); !strings.Contains(msg, opt) {
					t.Errorf("message %q does not name %s", msg, opt)
				}
			}
			if strings.Join(seen, ",") != strings.Join(tc.options, ",") {
				t.Errorf("OnWarning got %v, want %v", seen, tc.options)
			}
			if tc.lenient {
				// The ignored mode leaves the default: primary.
				if rp := c.readPref.Mode.String(); !strings.EqualFold(rp, "primary") {
					t.Errorf("read preference %s, want primary", rp)
				}
			}
		})
	}
}

// The issue's URI against a live server: in neither mode does the client
// start with the typos silently dropped (TLS off, read preference
// primary); ApplyURI fails naming the option and nothing is sent.
func TestIssueURIDoesNotConnect(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	query := "?readPreference=primay&tls=yes&maxPolSize=5"
	for _, lenient := range []bool{false, true} {
		o := &ClientOptions{LenientURI: lenient}
		err := o.ApplyURI(s.URI() + query)
		var oe *OptionError
		want := map[bool]string{false: "readPreference", true: "tls"}[lenient]
		if !errors.As(err, &oe) || oe.Option != want {
			t.Fatalf("lenient=%v: ApplyURI = %v, want an *OptionError naming %s", lenient, err, want)
		}
		// Connect with what the caller has: no URI, so no hosts.
		if c, err := Connect(context.Background(), o); err == nil {
			c.Disconnect(context.Background())
			t.Fatalf("lenient=%v: Connect succeeded after ApplyURI failed", lenient)
		}
	}
	if cmds := s.Commands(); len(cmds) != 0 {
		t.Errorf("the server received %d commands", len(cmds))
	}
}

// With no Logging option, a MONGODB_LOG_* variable makes the sink, and
// the URI's warnings reach its destination.
func TestURIWarningsReachEnvLog(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	path := filepath.Join(t.TempDir(), "driver.log")
	t.Setenv("MONGODB_LOG_TOPOLOGY", "error")
	t.Setenv("MONGODB_LOG_PATH", path)
	c := connect(t, s.URI()+"?maxPolSize=5", nil)
	if err := c.Ping(ctxTimeout(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := c.Disconnect(context.Background()); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if w := warnFor(logRecords(t, b), "maxPolSize"); len(w) != 1 {
		t.Errorf("log file %s has no WARN record for maxPolSize", b)
	}
}

// DriverInfo, ServerAPI and Dialer set in code reach the connections:
// the handshake's client metadata carries the wrapping library, a declared
// Stable API makes the handshake a hello with apiVersion, and every
// connection is dialled through the Dialer.
func TestCodeOnlyConnectionOptions(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	dialer := &countingDialer{}
	started := &eventtest.Recorder{}
	o := &ClientOptions{
		DriverInfo: &DriverInfo{Name: "myodm", Version: "1.2.3", Platform: "fancyos"},
		ServerAPI:  &ServerAPI{Version: ServerAPIVersion1, Strict: Ptr(true)},
		Dialer:     dialer,
		Monitors:   []any{started},
	}
	c := connect(t, s.URI(), o)
	if err := c.Ping(ctxTimeout(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if dialer.n.Load() == 0 {
		t.Error("the custom Dialer was not used")
	}
	var handshakes int
	for _, cmd := range s.Commands() {
		client, err := cmd.Body.LookupErr("client")
		if err != nil {
			continue // not a handshake
		}
		handshakes++
		if cmd.Name != "hello" {
			t.Errorf("handshake %s with a ServerAPI, want hello", cmd.Name)
		}
		if v, _ := cmd.Body.Lookup("apiVersion").StringValueOK(); v != "1" {
			t.Errorf("handshake apiVersion %q, want \"1\": %v", v, cmd.Body)
		}
		if v, _ := cmd.Body.Lookup("apiStrict").BooleanOK(); !v {
			t.Errorf("handshake without apiStrict: %v", cmd.Body)
		}
		name, _ := client.Document().Lookup("driver", "name").StringValueOK()
		version, _ := client.Document().Lookup("driver", "version").StringValueOK()
		platform, _ := client.Document().Lookup("platform").StringValueOK()
		if !strings.HasSuffix(name, "|myodm") || !strings.HasSuffix(version, "|1.2.3") || !strings.HasSuffix(platform, "|fancyos") {
			t.Errorf("client metadata %v, want the driver info appended", client)
		}
	}
	if handshakes == 0 {
		t.Fatal("no handshake recorded")
	}
	// Every command, not only the handshake, declares the API, and the
	// command events show it as sent.
	for _, cmd := range s.Commands() {
		if len(cmd.Body) <= 5 {
			continue // redacted (authentication)
		}
		if v, _ := cmd.Body.Lookup("apiVersion").StringValueOK(); v != "1" {
			t.Errorf("%s without apiVersion: %v", cmd.Name, cmd.Body)
		}
		if v, _ := cmd.Body.Lookup("apiStrict").BooleanOK(); !v {
			t.Errorf("%s without apiStrict: %v", cmd.Name, cmd.Body)
		}
	}
	var ping bson.Raw
	for _, e := range eventtest.Of[*event.CommandStarted](started) {
		if e.CommandName == "ping" {
			ping = e.Command
		}
	}
	if ping == nil {
		t.Error("no CommandStarted for ping")
	} else if v, _ := ping.Lookup("apiVersion").StringValueOK(); v != "1" {
		t.Errorf("CommandStarted ping %v, want apiVersion", ping)
	}
	if int(dialer.n.Load()) < handshakes {
		t.Errorf("%d dials for %d handshakes: some connections bypassed the Dialer", dialer.n.Load(), handshakes)
	}

	t.Run("without them", func(t *testing.T) {
		s := mongotest.NewServer(t, mongotest.Options{})
		c := connect(t, s.URI(), nil)
		if err := c.Ping(ctxTimeout(t, 10*time.Second)); err != nil {
			t.Fatal(err)
		}
		for _, cmd := range s.Commands() {
			if _, err := cmd.Body.LookupErr("apiVersion"); err == nil {
				t.Errorf("%s %v: apiVersion without a ServerAPI", cmd.Name, cmd.Body)
			}
			if _, err := cmd.Body.LookupErr("client"); err == nil && cmd.Name == "hello" {
				t.Errorf("handshake %s %v: no ServerAPI or loadBalanced asks for hello", cmd.Name, cmd.Body)
			}
		}
	})
	t.Run("unknown API version", func(t *testing.T) {
		o := &ClientOptions{ServerAPI: &ServerAPI{Version: "2"}}
		if err := o.ApplyURI(s.URI()); err != nil {
			t.Fatal(err)
		}
		var oe *OptionError
		if _, err := Connect(context.Background(), o); !errors.As(err, &oe) || oe.Field != "ServerAPI" {
			t.Fatalf("Connect = %v, want an *OptionError for ServerAPI", err)
		}
	})
	t.Run("proxyHost needs a Dialer", func(t *testing.T) {
		o := &ClientOptions{}
		if err := o.ApplyURI(s.URI() + "?proxyHost=proxy.example.com"); err != nil {
			t.Fatal(err)
		}
		if _, err := Connect(context.Background(), o); err == nil || !strings.Contains(err.Error(), "proxyHost") {
			t.Fatalf("Connect with proxyHost and no Dialer = %v, want a proxyHost error", err)
		}
	})
}

type countingDialer struct {
	n atomic.Int64
	d net.Dialer
}

func (c *countingDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c.n.Add(1)
	return c.d.DialContext(ctx, network, addr)
}
