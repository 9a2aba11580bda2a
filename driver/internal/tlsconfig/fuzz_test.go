package tlsconfig

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"strings"
	"testing"
)

// fuzzPassword makes the fuzzer's password distinctive: a leading \x01
// never appears raw in a message (PEM types and the like are quoted), so
// finding it in an error means the password leaked.
func fuzzPassword(p string) string { return "\x01" + p }

// FuzzParseKey feeds arbitrary tlsCertificateKeyFile contents and passwords
// to the parser: it must never panic, every error must be an *Error that
// does not show the password, and every success must be a usable
// certificate whose leaf comes first.
func FuzzParseKey(f *testing.F) {
	p := getPKI(f)
	const pw = "hunter2"
	enc := func(b ...*pem.Block) []byte {
		var out []byte
		for _, x := range b {
			out = append(out, pem.EncodeToMemory(x)...)
		}
		return out
	}
	cheap := func(s pbes2Spec) pbes2Spec { s.iter = 2; return s }
	cert, inter := p.client.certPEM(), p.intermediate.certPEM()
	seeds := [][]byte{
		enc(cert, inter, pkcs8PEM(f, p.client.key)),
		enc(pkcs8PEM(f, p.client.key), cert),
		enc(cert, legacyPEM(f, p.client.key, fuzzPassword(pw), x509.PEMCipherAES128)),
		enc(cert, legacyPEM(f, p.client.key, fuzzPassword(pw), x509.PEMCipher3DES)),
		enc(cert, encryptPKCS8(f, p.client.key, fuzzPassword(pw), cheap(specAES256SHA256))),
		enc(cert, encryptPKCS8(f, p.client.key, fuzzPassword(pw), cheap(specAES128SHA1))),
		enc(cert, encryptPKCS8(f, p.client.key, fuzzPassword(pw), cheap(specDES3SHA1))),
		enc(p.clientEd25519.certPEM(), encryptPKCS8(f, p.clientEd25519.key, fuzzPassword(pw), cheap(specAES192SHA512))),
		enc(cert, &pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: []byte{0x30, 0x03, 0x06, 0x01, 0x00}}),
		enc(cert, &pem.Block{Type: "RSA PRIVATE KEY", Headers: map[string]string{"Proc-Type": "4,ENCRYPTED", "DEK-Info": "DES-CBC,0011223344556677"}, Bytes: make([]byte, 16)}),
		[]byte("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n"),
		[]byte("not PEM at all"),
		nil,
	}
	for _, s := range seeds {
		f.Add(s, pw)
		f.Add(s, "")
		f.Add(s, "wrong")
	}
	f.Fuzz(func(t *testing.T, data []byte, password string) {
		secret := fuzzPassword(password)
		if password == "" {
			secret = ""
		}
		// A low iteration cap keeps each execution quick; the real cap is
		// a number, not a code path.
		c, err := parseCertificateKeyFile("fuzz.pem", data, secret, 64)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not an *Error: %v", err, err)
			}
			if e.Option == "" || e.Reason == "" || e.Path != "fuzz.pem" {
				t.Fatalf("incomplete error: %#v", e)
			}
			if secret != "" && strings.Contains(err.Error(), secret) {
				t.Fatalf("error shows the password: %q", err.Error())
			}
			return
		}
		if c.Leaf == nil || len(c.Certificate) == 0 || string(c.Certificate[0]) != string(c.Leaf.Raw) || c.PrivateKey == nil {
			t.Fatalf("success without a usable certificate: %+v", c)
		}
	})
}

// FuzzParseCAFile feeds arbitrary tlsCAFile contents to the parser.
func FuzzParseCAFile(f *testing.F) {
	p := getPKI(f)
	f.Add(pem.EncodeToMemory(p.root.certPEM()))
	f.Add(append(pem.EncodeToMemory(p.root.certPEM()), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("x")})...))
	f.Add([]byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"))
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pool, err := parseCAFile("ca.pem", data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Option != "tlsCAFile" || e.Path != "ca.pem" {
				t.Fatalf("bad error %T: %v", err, err)
			}
			return
		}
		if pool == nil {
			t.Fatal("nil pool without an error")
		}
	})
}
