package auth

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		cred    Credential
		wantErr string // "" for valid
	}{
		{"negotiated", Credential{Username: "u", Password: "p"}, ""},
		{"negotiated, empty password given", Credential{Username: "u", PasswordSet: true}, ""},
		{"negotiated, no username", Credential{Password: "p"}, "a username is required"},
		{"negotiated, no password", Credential{Username: "u"}, "a password is required"},
		{"SCRAM-SHA-1", Credential{Mechanism: MechanismSCRAMSHA1, Username: "u", Password: "p"}, ""},
		{"SCRAM-SHA-1, lower case", Credential{Mechanism: "scram-sha-1", Username: "u", Password: "p"}, ""},
		{"SCRAM-SHA-1, no username", Credential{Mechanism: MechanismSCRAMSHA1, Password: "p"}, "a username is required"},
		{"SCRAM-SHA-1, no password", Credential{Mechanism: MechanismSCRAMSHA1, Username: "u"}, "a password is required"},
		{"SCRAM-SHA-1, props", Credential{Mechanism: MechanismSCRAMSHA1, Username: "u", Password: "p", Props: map[string]string{"SERVICE_NAME": "x"}}, "do not apply"},
		{"SCRAM-SHA-1, any password", Credential{Mechanism: MechanismSCRAMSHA1, Username: "u", Password: "bell\u0007"}, ""},
		{"SCRAM-SHA-256", Credential{Mechanism: MechanismSCRAMSHA256, Username: "u", Password: "p"}, ""},
		{"SCRAM-SHA-256, no username", Credential{Mechanism: MechanismSCRAMSHA256, Password: "p"}, "a username is required"},
		{"SCRAM-SHA-256, SASLprep rejects the password", Credential{Mechanism: MechanismSCRAMSHA256, Username: "u", Password: "bell\u0007"}, "SASLprep (RFC 4013): prohibited character"},
		{"PLAIN", Credential{Mechanism: MechanismPLAIN, Username: "u", Password: "p"}, ""},
		{"PLAIN, no username", Credential{Mechanism: MechanismPLAIN, Password: "p"}, "a username is required"},
		{"PLAIN, no password", Credential{Mechanism: MechanismPLAIN, Username: "u"}, "a password is required"},
		{"MONGODB-X509", Credential{Mechanism: MechanismX509}, ""},
		{"MONGODB-X509, username", Credential{Mechanism: MechanismX509, Username: "CN=x"}, ""},
		{"MONGODB-X509, $external", Credential{Mechanism: MechanismX509, Source: "$external"}, ""},
		{"MONGODB-X509, password", Credential{Mechanism: MechanismX509, Username: "CN=x", Password: "p"}, "a password must not be given"},
		{"MONGODB-X509, empty password given", Credential{Mechanism: MechanismX509, PasswordSet: true}, "a password must not be given"},
		{"MONGODB-X509, other source", Credential{Mechanism: MechanismX509, Source: "bar"}, `the source must be "$external"`},
		{"MONGODB-X509, props", Credential{Mechanism: MechanismX509, Props: map[string]string{"A": "b"}}, "do not apply"},
		{"GSSAPI", Credential{Mechanism: MechanismGSSAPI, Username: "u@REALM"}, "not supported by this driver yet"},
		{"MONGODB-AWS", Credential{Mechanism: MechanismAWS}, "not supported by this driver yet"},
		{"MONGODB-OIDC", Credential{Mechanism: MechanismOIDC}, "not supported by this driver yet"},
		{"unknown", Credential{Mechanism: "MONGODB-CR", Username: "u", Password: "p"}, `auth: MONGODB-CR for user "u": unknown authentication mechanism`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cred.Validate()
			conv, serr := Start(&tc.cred)
			if tc.wantErr == "" {
				if err != nil || serr != nil || conv == nil {
					t.Fatalf("Validate: %v; Start: %v", err, serr)
				}
				return
			}
			for _, e := range []error{err, serr} {
				var ae *Error
				if e == nil || !errors.As(e, &ae) || !strings.Contains(e.Error(), tc.wantErr) {
					t.Fatalf("got %v; want an *Error containing %q", e, tc.wantErr)
				}
			}
			if conv != nil {
				t.Fatal("Start returned a conversation with an error")
			}
		})
	}
	if _, err := Start(nil); err == nil {
		t.Fatal("Start(nil) succeeded")
	}
}

func TestDefaultSource(t *testing.T) {
	tests := []struct {
		cred Credential
		want string
	}{
		{Credential{Username: "u", Password: "p"}, "admin"},
		{Credential{Mechanism: MechanismSCRAMSHA1, Username: "u", Password: "p"}, "admin"},
		{Credential{Mechanism: MechanismSCRAMSHA256, Username: "u", Password: "p"}, "admin"},
		{Credential{Mechanism: MechanismPLAIN, Username: "u", Password: "p"}, "$external"},
		{Credential{Mechanism: MechanismX509}, "$external"},
		{Credential{Username: "u", Password: "p", Source: "foo"}, "foo"},
		{Credential{Mechanism: MechanismPLAIN, Username: "u", Password: "p", Source: "foo"}, "foo"},
	}
	for _, tc := range tests {
		conv, err := start(&tc.cred, defaultConfig)
		if err != nil {
			t.Fatal(err)
		}
		if conv.source != tc.want {
			t.Errorf("%v: source %q, want %q", tc.cred, conv.source, tc.want)
		}
	}
}

func TestErrorFormat(t *testing.T) {
	cause := errors.New("cause")
	tests := []struct {
		err  Error
		want string
	}{
		{Error{Mechanism: "SCRAM-SHA-256", Username: "x", Source: "admin", Reason: "r"}, `auth: SCRAM-SHA-256 for user "x" on db "admin": r`},
		{Error{Mechanism: "SCRAM-SHA-1", Username: "x", Source: "admin", Reason: "r", Err: cause}, `auth: SCRAM-SHA-1 for user "x" on db "admin": r: cause`},
		{Error{Mechanism: "MONGODB-X509", Source: "$external", Reason: "r"}, `auth: MONGODB-X509 on db "$external": r`},
		{Error{Reason: "r"}, `auth: default mechanism: r`},
		{Error{Username: "a\"b", Reason: "r"}, `auth: default mechanism for user "a\"b": r`},
	}
	for _, tc := range tests {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
	e := &Error{Reason: "r", Err: cause}
	if !errors.Is(e, cause) {
		t.Fatal("Unwrap does not reach the cause")
	}
}

// TestNoCredentialLeaks runs failing conversations with a distinctive
// password and checks that no error, no printed Credential and no slog
// record holds the password, its MongoDB digest, its base64 or hex forms,
// or the SCRAM proofs and client keys that went over the wire.
func TestNoCredentialLeaks(t *testing.T) {
	const password = "Zebra-Quartz-7731!pw"
	secrets := []string{password, mongoPasswordDigest("leaky", password)}
	forms := func(b []byte) []string {
		return []string{string(b), base64.StdEncoding.EncodeToString(b), base64.RawStdEncoding.EncodeToString(b),
			base64.URLEncoding.EncodeToString(b), base64.RawURLEncoding.EncodeToString(b), hex.EncodeToString(b), fmt.Sprintf("%x", b), fmt.Sprint(b)}
	}

	var errs []error
	creds := []Credential{
		{Username: "leaky", Password: password},
		{Mechanism: MechanismSCRAMSHA1, Username: "leaky", Password: password},
		{Mechanism: MechanismSCRAMSHA256, Username: "leaky", Password: password},
		{Mechanism: MechanismPLAIN, Username: "leaky", Password: password},
		{Mechanism: MechanismX509, Username: "leaky", Password: password},
		{Mechanism: MechanismSCRAMSHA256, Username: "leaky", Password: password + "\u0007"},
		{Username: "leaky", Password: password + "\u0007"},
		{Mechanism: "BOGUS", Username: "leaky", Password: password},
		{Mechanism: MechanismAWS, Username: "leaky", Password: password, Props: map[string]string{"AWS_SESSION_TOKEN": password}},
	}
	setups := []func(s *fakeServer){
		func(s *fakeServer) {},                           // wrong password (the server knows another one)
		func(s *fakeServer) { s.badSignature = true },    // the server does not prove itself
		func(s *fakeServer) { s.badNonce = true },        // a man in the middle
		func(s *fakeServer) { s.iterations = 1 },         // a downgrade
		func(s *fakeServer) { s.speculative = false },    // the full exchange
		func(s *fakeServer) { s.ignoreSkipEmpty = true }, // an old server
	}
	rightUsers, wrongUsers := newFakeServer(t), newFakeServer(t)
	rightUsers.addUser("admin", "leaky", password, password, MechanismSCRAMSHA1, MechanismSCRAMSHA256)
	wrongUsers.addUser("admin", "leaky", "not-"+password, "not-"+password, MechanismSCRAMSHA1, MechanismSCRAMSHA256)
	var proofs [][]byte
	for _, cred := range creds {
		for _, setup := range setups {
			srv := newFakeServer(t)
			setup(srv)
			// "leaky" has the right password for the signature, nonce
			// and iteration cases, so the client gets as far as it can,
			// and another one otherwise.
			srv.users = wrongUsers.users
			if srv.badSignature || srv.badNonce || srv.iterations != 0 {
				srv.users = rightUsers.users
			}
			if err := cred.Validate(); err != nil {
				errs = append(errs, err)
			}
			cfg, _ := testConfig("")
			conv, err := start(&cred, cfg)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if err := handshake(t, conv, srv); err != nil {
				errs = append(errs, err)
			} else if cred.Mechanism != MechanismPLAIN && cred.Mechanism != MechanismX509 {
				t.Fatalf("%v succeeded against a server set up to fail it", cred)
			}
			proofs = append(proofs, srv.proofs...)
			proofs = append(proofs, srv.keys...)
		}
	}
	if len(errs) < len(creds)*len(setups) {
		t.Fatalf("only %d errors collected", len(errs))
	}

	var outputs []string
	for _, err := range errs {
		outputs = append(outputs, err.Error(), fmt.Sprintf("%v|%+v|%#v|%s|%q", err, err, err, err, err))
		for u := errors.Unwrap(err); u != nil; u = errors.Unwrap(u) {
			outputs = append(outputs, u.Error())
		}
	}
	for _, cred := range creds {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%T %d"} {
			outputs = append(outputs, fmt.Sprintf(verb, cred), fmt.Sprintf(verb, &cred))
		}
		outputs = append(outputs, cred.String(), fmt.Sprint([]Credential{cred}), fmt.Sprintf("%+v", struct{ C Credential }{cred}))
		var js, text bytes.Buffer
		slog.New(slog.NewJSONHandler(&js, nil)).Info("connect", "cred", cred, "credp", &cred)
		slog.New(slog.NewTextHandler(&text, nil)).Info("connect", "cred", cred, "credp", &cred)
		outputs = append(outputs, js.String(), text.String())
		if !strings.Contains(js.String(), `"password":"xxxxx"`) {
			t.Errorf("slog JSON output has no redacted password: %s", js.String())
		}
	}
	var js bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&js, nil))
	for _, err := range errs {
		logger.Error("auth failed", "err", err)
	}
	outputs = append(outputs, js.String())

	// The SASLprep failure must not name the rejected character either.
	needles := []string{"\u0007", "u0007", "U+0007"}
	for _, s := range secrets {
		needles = append(needles, forms([]byte(s))...)
	}
	for _, p := range proofs {
		needles = append(needles, forms(p)...)
	}
	for _, out := range outputs {
		for _, n := range needles {
			if strings.Contains(out, n) {
				t.Fatalf("output leaks a secret (%q):\n%s", n, out)
			}
		}
	}
	if len(proofs) == 0 {
		t.Fatal("no proofs reached the server; the test checked nothing about them")
	}
}

func TestCredentialString(t *testing.T) {
	c := Credential{Mechanism: MechanismSCRAMSHA256, Source: "admin", Username: "u", Password: "secret",
		Props: map[string]string{"B": "2", "AWS_SESSION_TOKEN": "tok", "A": "1"}}
	want := `{Mechanism:SCRAM-SHA-256 Source:"admin" Username:"u" Password:xxxxx Props:{A:"1" AWS_SESSION_TOKEN:"xxxxx" B:"2"}}`
	if got := fmt.Sprintf("%#v", c); got != want {
		t.Errorf("%%#v = %s\nwant %s", got, want)
	}
	if got := (Credential{}).String(); got != `{Mechanism:(negotiated) Source:"" Username:"" Password:(none)}` {
		t.Errorf("empty credential = %s", got)
	}
}
