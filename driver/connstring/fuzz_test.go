package connstring

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/mongoscope/mongoscope/internal/spectest"
)

// FuzzParse checks that Parse never panics, fails only with *Error, and
// that a parsed ConnString survives a round trip: the URI written with its
// secrets (format(true), test-only) parses back to an equal ConnString,
// and String, which redacts secrets, parses back to a ConnString with the
// same String.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		c, err := Parse(uri)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse(%q) error %T, want *Error", uri, err)
			}
			return
		}
		full := c.format(true)
		c2, err := Parse(full)
		if err != nil {
			t.Fatalf("Parse(%q) ok, but its URI %q fails: %v", uri, full, err)
		}
		if !reflect.DeepEqual(c, c2) {
			t.Fatalf("round trip of %q via %q:\n got %#v\nwant %#v", uri, full, c2, c)
		}
		redacted := c.String()
		c3, err := Parse(redacted)
		if err != nil {
			t.Fatalf("Parse(%q) ok, but its String %q fails: %v", uri, redacted, err)
		}
		if again := c3.String(); again != redacted {
			t.Fatalf("String not stable for %q: %q then %q", uri, redacted, again)
		}
	})
}

// fuzzSeeds are hand-written URIs plus, when the specifications are
// present, every URI in the connection string, URI options and auth tests.
func fuzzSeeds() []string {
	seeds := []string{
		"mongodb://localhost",
		"mongodb://u%40x:p%3Aw@h1,h2:27018,[::1]:27019,%2Ftmp%2Fm.sock/db%3F?replicaSet=rs&w=majority",
		"mongodb+srv://cluster0.example.com/?srvMaxHosts=2&srvServiceName=svc&tls=false",
		"mongodb://h/?readPreference=secondary&readPreferenceTags=dc:ny,rack:1&readPreferenceTags=&maxStalenessSeconds=120",
		"mongodb://h/?authMechanism=GSSAPI&authMechanismProperties=SERVICE_NAME:a,CANONICALIZE_HOST_NAME:forward",
		"mongodb://u@h/?authMechanism=MONGODB-OIDC&authMechanismProperties=ENVIRONMENT:azure,TOKEN_RESOURCE:mongodb://x",
		"mongodb://h/?tlsCertificateKeyFilePassword=k%26y&proxyHost=p&proxyPort=1080&proxyUsername=a&proxyPassword=b",
		"mongodb://h/?compressors=zstd,snappy,zlib&zlibCompressionLevel=-1&timeoutMS=0&wtimeout=5&gssapiServiceName=x",
		"mongodb://[fe80::1%25eth0]:1/?appname=a%20b&w=0&journal=false",
	}
	root, ok := spectest.Root()
	if !ok {
		return seeds
	}
	for _, dir := range []string{"connection-string/tests", "uri-options/tests", "auth/tests/legacy", "read-write-concern/tests/connection-string"} {
		files, _ := filepath.Glob(filepath.Join(root, dir, "*.json"))
		for _, path := range files {
			b, err := os.ReadFile(path)
			if err != nil {
				continue
			}
			var doc struct {
				Tests []struct {
					URI string `json:"uri"`
				} `json:"tests"`
			}
			if json.Unmarshal(b, &doc) != nil {
				continue
			}
			for _, tc := range doc.Tests {
				seeds = append(seeds, tc.URI)
			}
		}
	}
	return seeds
}
