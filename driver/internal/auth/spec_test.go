package auth

import (
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/driver/connstring"
	"github.com/mongoscope/mongoscope/internal/spectest"
)

// credentialFromURI builds a Credential from a single-host URI with
// net/url, apart from driver/connstring, so the auth rules are checked on
// their own: Validate must accept what the spec calls valid and reject the
// credential errors it calls invalid. ok is false when the URI configures
// no credential.
func credentialFromURI(u *url.URL) (c Credential, ok bool) {
	q := u.Query()
	c.Mechanism = q.Get("authMechanism")
	if u.User != nil {
		c.Username = u.User.Username()
		c.Password, c.PasswordSet = u.User.Password()
	}
	if u.User == nil && c.Mechanism == "" {
		return c, false
	}
	c.Source = q.Get("authSource")
	mech, _ := canonicalMechanism(c.Mechanism)
	if db := strings.TrimPrefix(u.Path, "/"); c.Source == "" && db != "" {
		switch mech {
		case "", MechanismSCRAMSHA1, MechanismSCRAMSHA256, MechanismPLAIN:
			// The URI database is the default source for these; the
			// connection code passes it as Source.
			c.Source = db
		}
	}
	if p := q.Get("authMechanismProperties"); p != "" {
		c.Props = map[string]string{}
		for _, kv := range strings.Split(p, ",") {
			k, v, _ := strings.Cut(kv, ":")
			c.Props[k] = v
		}
	}
	return c, true
}

// TestSpecConnectionStringCredentials runs auth/tests/legacy: each valid
// credential must pass Validate and Start with the expected source and
// mechanism, each invalid one must fail Validate with an *Error.
func TestSpecConnectionStringCredentials(t *testing.T) {
	type credential struct {
		Username  *string `json:"username"`
		Password  *string `json:"password"`
		Source    *string `json:"source"`
		Mechanism *string `json:"mechanism"`
	}
	for _, path := range spectest.Files(t, "*.json", "auth", "tests", "legacy") {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			Tests []struct {
				Description string      `json:"description"`
				URI         string      `json:"uri"`
				Valid       bool        `json:"valid"`
				Credential  *credential `json:"credential"`
			} `json:"tests"`
		}
		if err := json.Unmarshal(raw, &f); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		tally := spectest.NewTally("auth/legacy/" + filepath.Base(path))
		for _, tc := range f.Tests {
			u, uerr := url.Parse(tc.URI)
			var cred Credential
			var configured bool
			if uerr == nil {
				cred, configured = credentialFromURI(u)
			}
			mech, _ := canonicalMechanism(cred.Mechanism)
			switch {
			case uerr != nil:
				tally.Skip(t, tc.Description, "multi-host or unusual URI: net/url cannot split it; driver/connstring's spec test covers it")
				continue
			case mech == MechanismGSSAPI || mech == MechanismAWS || mech == MechanismOIDC:
				tally.Skip(t, tc.Description, "GSSAPI, MONGODB-AWS and MONGODB-OIDC are not supported by this driver yet")
				continue
			case !configured:
				tally.Skip(t, tc.Description, "no credential configured, nothing to authenticate; driver/connstring checks the URI")
				continue
			case !tc.Valid && u.Query().Has("authSource") && u.Query().Get("authSource") == "":
				tally.Skip(t, tc.Description, "empty authSource is a URI syntax rule, enforced by driver/connstring")
				continue
			}
			tally.Run(t, tc.Description, func(t *testing.T) {
				err := cred.Validate()
				if !tc.Valid {
					var ae *Error
					if err == nil || !errors.As(err, &ae) {
						t.Fatalf("Validate(%v) = %v; want an *Error", cred, err)
					}
					return
				}
				if err != nil {
					t.Fatalf("Validate(%v): %v", cred, err)
				}
				conv, serr := start(&cred, defaultConfig)
				if serr != nil {
					t.Fatalf("Start: %v", serr)
				}
				want := tc.Credential
				if want == nil {
					t.Fatal("a valid URI with a credential has no expected credential")
				}
				if want.Source != nil && conv.source != *want.Source {
					t.Errorf("source %q, want %q", conv.source, *want.Source)
				}
				if want.Mechanism == nil && conv.mechanism != "" || want.Mechanism != nil && conv.mechanism != *want.Mechanism {
					t.Errorf("mechanism %q, want %v", conv.mechanism, want.Mechanism)
				}
				if want.Username != nil && conv.username != *want.Username {
					t.Errorf("username %q, want %q", conv.username, *want.Username)
				}
				if want.Password != nil && conv.password != *want.Password {
					t.Error("password differs from the expected one")
				}

				// What driver/connstring hands over must pass too.
				cs, err := connstring.Parse(tc.URI)
				if err != nil {
					t.Fatalf("connstring.Parse: %v", err)
				}
				cc, ok := cs.Credential()
				if !ok {
					t.Fatal("connstring sees no credential")
				}
				fromCS := Credential{Mechanism: cc.Mechanism, Source: cc.Source, Username: cc.Username,
					Password: string(cc.Password), PasswordSet: cc.HasPassword, Props: cc.MechanismProperties}
				if err := fromCS.Validate(); err != nil {
					t.Fatalf("Validate(connstring's %v): %v", fromCS, err)
				}
			})
		}
		tally.Log(t)
	}
}
