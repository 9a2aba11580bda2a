package connstring

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// Secret fragments: long and distinctive, so that finding one in output
// can only mean a leak.
const (
	pwA = "Pw1stHalfQ7zK"
	pwB = "Pw2ndHalfX9vJ"
	pw  = pwA + pwB
)

// TestSecretsNeverPrinted parses URIs holding a password, a
// tlsCertificateKeyFilePassword, a proxyPassword or an AWS session token,
// valid and invalid, in default and strict mode, and checks that no error
// message, Error field, warning, String output or fmt/slog/JSON rendering
// of the result contains any part of the secret. For mis-encoded userinfo
// ("a:x/y@h"), each half around the stray delimiter counts as secret.
func TestSecretsNeverPrinted(t *testing.T) {
	// Delimiters that users forget to encode, placed inside the password.
	var mangled []string
	for _, d := range []string{"", ":", "@", "/", "?", "%", "%zz", "#", " ", "[", "&", "=", ",", "%2"} {
		mangled = append(mangled, pwA+d+pwB)
	}
	var uris []string
	for _, p := range mangled {
		for _, tail := range []string{
			"", "/", "/db", "/db?w=1", "/?w=1&foo=bar", "?w=1", "/db?authMechanism=SCRAM-SHA-256",
			"/?authMechanism=MONGODB-X509", "/?authMechanism=MONGODB-AWS", "/?authMechanism=GSSAPI&authSource=x",
			"/?authMechanism=MONGODB-OIDC&authMechanismProperties=ENVIRONMENT:azure,TOKEN_RESOURCE:r",
			"/?authMechanism=PLAIN&authMechanismProperties=A:b", "/?w=0&journal=true", "/?w=-2&journal=",
			"/?tlsInsecure=true&tlsAllowInvalidHostnames=true", "/?readPreferenceTags=a:b",
		} {
			for _, hosts := range []string{"h", "h1,h2:27018", "h:99999", "[::1", "%2Ftmp%2Fx.sock"} {
				uris = append(uris,
					"mongodb://alice:"+p+"@"+hosts+tail,
					"mongodb+srv://alice:"+p+"@"+hosts+tail,
					"mongodb://:"+p+"@"+hosts+tail,
				)
			}
		}
		for _, q := range []string{
			"tlsCertificateKeyFilePassword=" + p,
			"tlsCertificateKeyFilePassword=" + p + "&tlsCertificateKeyFilePassword=" + p,
			"tls=true&tlsCertificateKeyFilePassword=" + p + "&tlsInsecure=true&tlsAllowInvalidCertificates=true",
			"proxyHost=p&proxyUsername=u&proxyPassword=" + p,
			"proxyPassword=" + p,
			"proxyHost=p&proxyPassword=" + p,
			"proxyHost=p&proxyUsername=u&proxyPassword=" + p + "&proxyPassword=x",
			"proxyHost=p&proxyUsername=u&proxyPassword=" + p + "&w=-1",
			"authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:" + p,
			"authMechanism=MONGODB-AWS&authMechanismProperties=BOGUS,AWS_SESSION_TOKEN:" + p,
			"authMechanismProperties=TOKEN_RESOURCE:" + p,
		} {
			uris = append(uris, "mongodb://u@h/?"+q, "mongodb://h/?"+q, "mongodb://h?"+q)
		}
	}

	// A password with an unencoded "/" after a numeric first part: the
	// host parses, and the rest of the password lands in the path.
	uris = append(uris,
		"mongodb://alice:1/"+pwA+"$"+pwB+"?x@h",
		"mongodb://alice:1/"+pwA+"%zz"+pwB+"?x@h",
	)

	checked := 0
	for _, uri := range uris {
		for _, strict := range []bool{false, true} {
			var out []string
			opts := []Option{WithWarnings(func(w Warning) {
				out = append(out, w.Message, w.Option, w.Value, w.String(), fmt.Sprintf("%+v", w))
			})}
			if strict {
				opts = append(opts, WithStrict())
			}
			c, err := Parse(uri, opts...)
			if err != nil {
				out = append(out, err.Error(), fmt.Sprintf("%+v %#v", err, err))
			}
			if c != nil {
				out = append(out, c.String(), fmt.Sprintf("%v %+v %#v %s", c, *c, *c, c))
				b, _ := json.Marshal(c)
				out = append(out, string(b))
				var sb strings.Builder
				slog.New(slog.NewTextHandler(&sb, nil)).Info("parsed", "cs", c, "value", *c)
				out = append(out, sb.String())
				if cred, ok := c.Credential(); ok {
					out = append(out, fmt.Sprintf("%v %+v %#v", cred, cred, cred))
				}
			}
			for _, o := range out {
				if strings.Contains(o, pwA) || strings.Contains(o, pwB) {
					t.Fatalf("secret leaked for %q (strict=%v):\n%s", uri, strict, o)
				}
			}
			checked++
		}
	}
	t.Logf("checked %d parses (%d URIs, default and strict) for leaked secrets", checked, len(uris))
}
