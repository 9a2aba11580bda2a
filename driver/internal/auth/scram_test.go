package auth

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

// The RFC examples and the auth spec's MongoDB example, message by message.
// The SCRAM core is fed the password its key derivation takes: the plain
// password for the RFCs, MongoDB's digest for the spec's SCRAM-SHA-1
// example.
func TestSCRAMVectors(t *testing.T) {
	tests := []struct {
		name, mech, password, nonce        string
		serverFirst, clientFinal, verifier string
	}{
		{
			name: "RFC 5802 SCRAM-SHA-1", mech: MechanismSCRAMSHA1, password: "pencil",
			nonce:       "fyko+d2lbbFgONRv9qkxdawL",
			serverFirst: "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096",
			clientFinal: "c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts=",
			verifier:    "v=rmF9pqV8S7suAoZWja4dJRkFsKQ=",
		},
		{
			name: "auth spec MongoDB SCRAM-SHA-1", mech: MechanismSCRAMSHA1, password: mongoPasswordDigest("user", "pencil"),
			nonce:       "fyko+d2lbbFgONRv9qkxdawL",
			serverFirst: "r=fyko+d2lbbFgONRv9qkxdawLHo+Vgk7qvUOKUwuWLIWg4l/9SraGMHEE,s=rQ9ZY3MntBeuP3E1TDVC4w==,i=10000",
			clientFinal: "c=biws,r=fyko+d2lbbFgONRv9qkxdawLHo+Vgk7qvUOKUwuWLIWg4l/9SraGMHEE,p=MC2T8BvbmWRckDw8oWl5IVghwCY=",
			verifier:    "v=UMWeI25JD1yNYZRMpZ4VHvhZ9e0=",
		},
		{
			name: "RFC 7677 SCRAM-SHA-256", mech: MechanismSCRAMSHA256, password: "pencil",
			nonce:       "rOprNGfwEbeRWgbNEkqO",
			serverFirst: "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
			clientFinal: "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
			verifier:    "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _ := testConfig(tc.nonce)
			c := newSCRAMClient(tc.mech, "user", tc.password, tc.nonce, cfg)
			first, err := c.start()
			if err != nil {
				t.Fatal(err)
			}
			if got, want := string(first), "n,,n=user,r="+tc.nonce; got != want {
				t.Fatalf("client-first = %q, want %q", got, want)
			}
			final, err := c.next([]byte(tc.serverFirst))
			if err != nil {
				t.Fatal(err)
			}
			if string(final) != tc.clientFinal {
				t.Fatalf("client-final = %q, want %q", final, tc.clientFinal)
			}
			if c.completed() {
				t.Fatal("completed before the server signature was checked")
			}
			if out, err := c.next([]byte(tc.verifier)); err != nil || len(out) != 0 {
				t.Fatalf("server-final: %q, %v", out, err)
			}
			if !c.completed() {
				t.Fatal("not completed after a good server signature")
			}
		})
	}
}

func TestMongoPasswordDigest(t *testing.T) {
	// hex(MD5("user:mongo:pencil")), computed independently.
	if got, want := mongoPasswordDigest("user", "pencil"), "1c33006ec1ffd90f9cadcbcc0e118200"; got != want {
		t.Fatalf("digest = %q, want %q", got, want)
	}
	// SCRAM-SHA-1 uses the digest and SCRAM-SHA-256 the prepared password.
	if got, _ := scramPassword(MechanismSCRAMSHA1, "user", "I\u00adX"); got != mongoPasswordDigest("user", "I\u00adX") {
		t.Fatalf("SCRAM-SHA-1 password = %q; want the digest of the unprepared password", got)
	}
	if got, _ := scramPassword(MechanismSCRAMSHA256, "user", "I\u00adX"); got != "IX" {
		t.Fatalf("SCRAM-SHA-256 password = %q, want %q", got, "IX")
	}
}

// RFC 4013 section 3's examples and the auth spec's SASLprep prose cases.
func TestSASLprep(t *testing.T) {
	tests := []struct {
		in, want string
		err      string
	}{
		{in: "I\u00adX", want: "IX"}, // soft hyphen mapped to nothing
		{in: "user", want: "user"},
		{in: "USER", want: "USER"},   // case preserved
		{in: "\u00aa", want: "a"},    // NFKC
		{in: "\u2168", want: "IX"},   // ROMAN NUMERAL NINE, NFKC
		{in: "IX", want: "IX"},       // auth spec, user "IX"
		{in: "\u2163", want: "IV"},   // ROMAN NUMERAL FOUR
		{in: "I\u00adV", want: "IV"}, // auth spec, user "\u2168"
		{in: "a\u00a0b", want: "a b"},
		{in: "\u0007", err: "prohibited character"},
		{in: "\u0627\u0031", err: "SASLprep"}, // bidi rule
		{in: "", want: ""},
	}
	for _, tc := range tests {
		got, err := saslPrep(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("saslPrep(%+q) = %q, %v; want an error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("saslPrep(%+q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// The auth spec's SASLprep prose test (step 4): each user authenticates
// with the password in prepared and unprepared forms.
func TestSCRAMSHA256SASLprepForms(t *testing.T) {
	srv := newFakeServer(t)
	srv.addUser("admin", "IX", "IX", "IX", MechanismSCRAMSHA256)
	srv.addUser("admin", "\u2168", "\u2163", "IV", MechanismSCRAMSHA256)
	tests := []struct{ user, password string }{
		{"IX", "IX"},
		{"IX", "I\u00adX"},
		{"\u2168", "IV"},
		{"\u2168", "I\u00adV"},
		{"\u2168", "\u2163"},
	}
	for _, mech := range []string{MechanismSCRAMSHA256, ""} {
		for _, tc := range tests {
			cfg, _ := testConfig("")
			conv, err := start(&Credential{Mechanism: mech, Username: tc.user, Password: tc.password}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := handshake(t, conv, srv); err != nil {
				t.Errorf("mechanism %q user %+q password %+q: %v", mech, tc.user, tc.password, err)
			}
		}
	}
}

func TestServerFirstErrors(t *testing.T) {
	const nonce = "clientNONCE"
	tests := []struct{ msg, want string }{
		{"r=clientNONCEsrv,s=c2FsdA==,i=4096", ""},
		{"r=clientNONCEsrv,s=c2FsdA==,i=4096,x=ext", ""},
		{"r=clientNONCEsrv,s=c2FsdA==,i=4095", "below the minimum of 4096"},
		{"r=clientNONCEsrv,s=c2FsdA==,i=1", "below the minimum"},
		{"r=clientNONCEsrv,s=c2FsdA==,i=0", "below the minimum"},
		{"r=clientNONCEsrv,s=c2FsdA==,i=10000001", "above the driver's limit"},
		{"r=clientNONCEsrv,s=c2FsdA==,i=9999999999", "not a number"},
		{"r=clientNONCEsrv,s=c2FsdA==,i=-5000", "not a number"},
		{"r=clientNONCEsrv,s=c2FsdA==,i=", "not a number"},
		{"r=otherNONCEsrv,s=c2FsdA==,i=4096", "does not extend the client nonce"},
		{"r=clientNONCE,s=c2FsdA==,i=4096", "does not extend the client nonce"},
		{"r=clientNONC,s=c2FsdA==,i=4096", "does not extend the client nonce"},
		{"r=clientNONCE\x01,s=c2FsdA==,i=4096", "non-printable character at byte 11"},
		{"m=ext,r=clientNONCEsrv,s=c2FsdA==,i=4096", "extension"},
		{"s=c2FsdA==,r=clientNONCEsrv,i=4096", "does not start with the nonce"},
		{"r=clientNONCEsrv,i=4096,s=c2FsdA==", "not the salt"},
		{"r=clientNONCEsrv,s=c2FsdA==,x=4096", "not the iteration count"},
		{"r=clientNONCEsrv,s=!!!,i=4096", "salt is not base64"},
		{"r=clientNONCEsrv,s=,i=4096", "salt is empty"},
		{"r=clientNONCEsrv,s=c2FsdA==", "attributes"},
		{"", "attributes"},
		{"e=other-error", "attributes"},
	}
	for _, tc := range tests {
		_, err := parseServerFirst(tc.msg, nonce)
		if tc.want == "" {
			if err != nil {
				t.Errorf("parseServerFirst(%q): %v", tc.msg, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseServerFirst(%q) = %v; want an error with %q", tc.msg, err, tc.want)
		}
	}
}

func TestServerFinalErrors(t *testing.T) {
	const nonce = "rOprNGfwEbeRWgbNEkqO"
	serverFirst := "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
	good := "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
	tests := []struct{ msg, want string }{
		{good, ""},
		{good + ",x=extension", ""},
		{"v=7rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=", "server signature does not match"},
		{"v=", "server signature does not match"},
		{"v=%%%", "not base64"},
		{"e=invalid-proof", `reports an error: "invalid-proof"`},
		{"e=" + strings.Repeat("x", 200), "..."},
		{"", "no server signature (v=)"},
		{"x=1," + good, "no server signature (v=)"},
	}
	cfg, _ := testConfig(nonce)
	for _, tc := range tests {
		c := newSCRAMClient(MechanismSCRAMSHA256, "user", "pencil", nonce, cfg)
		if _, err := c.start(); err != nil {
			t.Fatal(err)
		}
		if _, err := c.next([]byte(serverFirst)); err != nil {
			t.Fatal(err)
		}
		_, err := c.next([]byte(tc.msg))
		if tc.want == "" {
			if err != nil || !c.completed() {
				t.Errorf("server-final %q: %v", tc.msg, err)
			}
			continue
		}
		var ae *Error
		if err == nil || !errors.As(err, &ae) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("server-final %q: %v; want an *Error with %q", tc.msg, err, tc.want)
		}
		if c.completed() {
			t.Errorf("server-final %q: completed after an error", tc.msg)
		}
		// A failed client takes no further messages.
		if _, err := c.next([]byte(good)); err == nil {
			t.Errorf("server-final %q: a failed client accepted another message", tc.msg)
		}
	}
}

func TestSASLName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"user", "user"},
		{"a=b", "a=3Db"},
		{"a,b", "a=2Cb"},
		{"=,=", "=3D=2C=3D"},
		{"\u2168", "\u2168"}, // not prepared: the spec forbids SASLprep of usernames
	}
	for _, tc := range tests {
		if got := saslName(tc.in); got != tc.want {
			t.Errorf("saslName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRandomNonce(t *testing.T) {
	a, err := randomNonce()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := randomNonce()
	if a == b {
		t.Fatal("two nonces are equal")
	}
	raw, err := base64.StdEncoding.DecodeString(a)
	if err != nil || len(raw) != 24 || strings.Contains(a, ",") {
		t.Fatalf("nonce %q: %d bytes, %v", a, len(raw), err)
	}
}
