package tlsconfig

import (
	"context"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type handshakeResult struct {
	clientErr, serverErr error
	sni                  string
	clientCert           *x509.Certificate // as the server verified it
	clientChainLen       int
}

// handshake runs one TLS handshake over an loopback TCP connection between client
// and a server presenting serverCert. With clientCAs set, the server
// requires a client certificate and verifies it against them.
func handshake(t *testing.T, client *tls.Config, serverCert tls.Certificate, clientCAs *x509.CertPool) handshakeResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var res handshakeResult
	srvCfg := &tls.Config{
		Certificates: []tls.Certificate{serverCert},
		GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			res.sni = hello.ServerName
			return nil, nil
		},
	}
	if clientCAs != nil {
		srvCfg.ClientAuth = tls.RequireAndVerifyClientCert
		srvCfg.ClientCAs = clientCAs
	}
	// A loopback connection, not net.Pipe: the kernel's buffers let a
	// client that gives up mid-flight send its alert without waiting for
	// the server to finish writing.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc, err := ln.Accept()
		if err != nil {
			res.serverErr = err
			return
		}
		sc.SetDeadline(time.Now().Add(10 * time.Second))
		s := tls.Server(sc, srvCfg)
		res.serverErr = s.HandshakeContext(ctx)
		if res.serverErr == nil {
			st := s.ConnectionState()
			if len(st.PeerCertificates) > 0 {
				res.clientCert = st.PeerCertificates[0]
				res.clientChainLen = len(st.PeerCertificates)
			}
		}
		s.Close()
	}()
	cc, err := net.DialTimeout("tcp", ln.Addr().String(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	cc.SetDeadline(time.Now().Add(10 * time.Second))
	c := tls.Client(cc, client)
	res.clientErr = c.HandshakeContext(ctx)
	c.Close()
	<-done
	return res
}

func rootPool(p *testPKI) *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(p.root.cert)
	return pool
}

func TestVerification(t *testing.T) {
	p := getPKI(t)
	dir := t.TempDir()
	caFile := writePEM(t, dir, "ca.pem", p.root.certPEM())

	localhost := tlsCert(p.serverLocalhost)
	other := tlsCert(p.serverOther, p.intermediate)
	rogue := tlsCert(p.serverRogue)
	expired := tlsCert(p.serverExpired)
	clientAsServer := tlsCert(p.client, p.intermediate) // has only the clientAuth key usage

	tests := []struct {
		name    string
		server  tls.Certificate
		host    string
		opts    Options
		wantErr string // in the client's error; "" means the handshake succeeds
		wantSNI string
	}{
		{name: "valid chain and host", server: localhost, host: "localhost", wantSNI: "localhost"},
		{name: "IPv4 address checked against IP SANs, no SNI", server: localhost, host: "127.0.0.1"},
		{name: "bracketed IPv6 address", server: localhost, host: "[::1]"},
		{name: "IPv6 address with a zone", server: localhost, host: "::1%lo"},
		{name: "chain through an intermediate", server: other, host: "other.example", wantSNI: "other.example"},
		{name: "revocation options relax nothing", server: localhost, host: "localhost", wantSNI: "localhost",
			opts: Options{DisableOCSPEndpointCheck: true, DisableCertificateRevocationCheck: true}},

		{name: "wrong host", server: localhost, host: "db.example", wantErr: "not db.example", wantSNI: "db.example"},
		{name: "wrong IP", server: localhost, host: "127.0.0.2", wantErr: "127.0.0.2"},
		{name: "wrong host, revocation options", server: localhost, host: "db.example", wantErr: "not db.example", wantSNI: "db.example",
			opts: Options{DisableOCSPEndpointCheck: true, DisableCertificateRevocationCheck: true}},
		{name: "wrong host, AllowInvalidHostnames", server: localhost, host: "db.example", wantSNI: "db.example",
			opts: Options{AllowInvalidHostnames: true}},
		{name: "wrong host, AllowInvalidCertificates", server: localhost, host: "db.example", wantSNI: "db.example",
			opts: Options{AllowInvalidCertificates: true}},
		{name: "wrong host, Insecure", server: localhost, host: "db.example", wantSNI: "db.example",
			opts: Options{Insecure: true}},
		{name: "wrong host via intermediate, AllowInvalidHostnames", server: other, host: "localhost", wantSNI: "localhost",
			opts: Options{AllowInvalidHostnames: true}},

		{name: "unknown CA", server: rogue, host: "localhost", wantErr: "unknown authority", wantSNI: "localhost"},
		{name: "unknown CA, AllowInvalidHostnames", server: rogue, host: "localhost", wantErr: "unknown authority", wantSNI: "localhost",
			opts: Options{AllowInvalidHostnames: true}},
		{name: "unknown CA, AllowInvalidCertificates", server: rogue, host: "localhost", wantSNI: "localhost",
			opts: Options{AllowInvalidCertificates: true}},
		{name: "unknown CA, Insecure", server: rogue, host: "localhost", wantSNI: "localhost",
			opts: Options{Insecure: true}},
		{name: "intermediate not sent", server: tlsCert(p.serverOther), host: "other.example", wantErr: "unknown authority", wantSNI: "other.example"},
		{name: "intermediate not sent, AllowInvalidHostnames", server: tlsCert(p.serverOther), host: "other.example", wantErr: "unknown authority",
			wantSNI: "other.example", opts: Options{AllowInvalidHostnames: true}},

		{name: "expired", server: expired, host: "localhost", wantErr: "expired", wantSNI: "localhost"},
		{name: "expired, AllowInvalidHostnames", server: expired, host: "localhost", wantErr: "expired", wantSNI: "localhost",
			opts: Options{AllowInvalidHostnames: true}},
		{name: "expired, AllowInvalidCertificates", server: expired, host: "localhost", wantSNI: "localhost",
			opts: Options{AllowInvalidCertificates: true}},
		{name: "client-only key usage, AllowInvalidHostnames", server: clientAsServer, host: "client", wantErr: "key usage", wantSNI: "client",
			opts: Options{AllowInvalidHostnames: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.CAFile = caFile
			base, err := New(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			cfg := ForHost(base, tc.host, tc.opts)
			res := handshake(t, cfg, tc.server, nil)
			if tc.wantErr == "" {
				if res.clientErr != nil || res.serverErr != nil {
					t.Fatalf("handshake failed: client %v, server %v", res.clientErr, res.serverErr)
				}
			} else if res.clientErr == nil || !strings.Contains(res.clientErr.Error(), tc.wantErr) {
				t.Fatalf("client error = %v, want one containing %q", res.clientErr, tc.wantErr)
			}
			if res.sni != tc.wantSNI {
				t.Errorf("SNI = %q, want %q", res.sni, tc.wantSNI)
			}
			if base.ServerName != "" {
				t.Errorf("ForHost changed the base: ServerName %q", base.ServerName)
			}
		})
	}
}

// TestNewServerName checks that New alone, given ServerName, makes a usable
// configuration.
func TestNewServerName(t *testing.T) {
	p := getPKI(t)
	caFile := writePEM(t, t.TempDir(), "ca.pem", p.root.certPEM())
	for _, tc := range []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{name: "host", opts: Options{CAFile: caFile, ServerName: "localhost"}},
		{name: "wrong host", opts: Options{CAFile: caFile, ServerName: "other.example"}, wantErr: "not other.example"},
		{name: "wrong host allowed", opts: Options{CAFile: caFile, ServerName: "other.example", AllowInvalidHostnames: true}},
		{name: "system roots", opts: Options{ServerName: "localhost"}, wantErr: "unknown authority"},
		{name: "bracketed IPv6", opts: Options{CAFile: caFile, ServerName: "[::1]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := New(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			res := handshake(t, cfg, tlsCert(p.serverLocalhost), nil)
			if tc.wantErr == "" && res.clientErr != nil {
				t.Fatalf("handshake failed: %v", res.clientErr)
			}
			if tc.wantErr != "" && (res.clientErr == nil || !strings.Contains(res.clientErr.Error(), tc.wantErr)) {
				t.Fatalf("client error = %v, want one containing %q", res.clientErr, tc.wantErr)
			}
		})
	}
}

// TestForHostOwnConfig applies the options to a configuration the caller
// built, without changing it.
func TestForHostOwnConfig(t *testing.T) {
	p := getPKI(t)
	own := &tls.Config{RootCAs: rootPool(p), MinVersion: tls.VersionTLS13}
	var extraCalls int
	own.VerifyConnection = func(tls.ConnectionState) error { extraCalls++; return nil }

	cfg := ForHost(own, "db.example", Options{AllowInvalidHostnames: true})
	if res := handshake(t, cfg, tlsCert(p.serverLocalhost), nil); res.clientErr != nil {
		t.Fatalf("AllowInvalidHostnames on an own config: %v", res.clientErr)
	}
	if extraCalls != 1 {
		t.Errorf("the config's own VerifyConnection ran %d times, want 1", extraCalls)
	}
	if res := handshake(t, cfg, tlsCert(p.serverRogue), nil); res.clientErr == nil {
		t.Error("AllowInvalidHostnames on an own config accepted an unknown CA")
	}
	if own.InsecureSkipVerify || own.ServerName != "" {
		t.Errorf("ForHost changed the base: %+v", own)
	}
	strict := ForHost(own, "db.example", Options{})
	if res := handshake(t, strict, tlsCert(p.serverLocalhost), nil); res.clientErr == nil {
		t.Error("strict ForHost accepted a certificate for another host")
	}
	if cfg := ForHost(nil, "localhost", Options{}); cfg.MinVersion != tls.VersionTLS12 || cfg.ServerName != "localhost" || cfg.InsecureSkipVerify {
		t.Errorf("ForHost(nil) = MinVersion %x, ServerName %q, InsecureSkipVerify %v", cfg.MinVersion, cfg.ServerName, cfg.InsecureSkipVerify)
	}
}

func TestMinVersion(t *testing.T) {
	for _, tc := range []struct {
		in, want uint16
	}{{0, tls.VersionTLS12}, {tls.VersionTLS13, tls.VersionTLS13}, {tls.VersionTLS10, tls.VersionTLS10}} {
		cfg, err := New(Options{MinVersion: tc.in})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.MinVersion != tc.want {
			t.Errorf("MinVersion %x gave %x, want %x", tc.in, cfg.MinVersion, tc.want)
		}
	}
	_, err := New(Options{MinVersion: 0x0999})
	var e *Error
	if !errors.As(err, &e) || e.Option != "MinVersion" {
		t.Errorf("bad MinVersion: %v", err)
	}
}

const password = "Sw0rdf1sh-do-not-leak" // distinctive so a leak is findable

func TestClientCertificate(t *testing.T) {
	p := getPKI(t)
	dir := t.TempDir()
	caFile := writePEM(t, dir, "ca.pem", p.root.certPEM())
	clientKey := func(i issued) *pem.Block {
		der, err := x509.MarshalECPrivateKey(i.key.(*ecdsa.PrivateKey))
		if err != nil {
			t.Fatal(err)
		}
		return &pem.Block{Type: "EC PRIVATE KEY", Bytes: der}
	}
	tests := []struct {
		name   string
		client issued
		blocks []*pem.Block
		pass   string
		chain  int // certificates the server receives
	}{
		{name: "EC key after certificates", client: p.client, chain: 2,
			blocks: []*pem.Block{p.client.certPEM(), p.intermediate.certPEM(), clientKey(p.client)}},
		{name: "key first, intermediate before leaf", client: p.client, chain: 2,
			blocks: []*pem.Block{pkcs8PEM(t, p.client.key), p.intermediate.certPEM(), p.client.certPEM()}},
		{name: "EC PARAMETERS block is passed over", client: p.client, chain: 2,
			blocks: []*pem.Block{p.client.certPEM(), p.intermediate.certPEM(), {Type: "EC PARAMETERS", Bytes: mustMarshal(t, asn1.ObjectIdentifier{1, 2, 840, 10045, 3, 1, 7})}, clientKey(p.client)}},
		{name: "password given, key not encrypted", client: p.client, chain: 2, pass: password,
			blocks: []*pem.Block{p.client.certPEM(), p.intermediate.certPEM(), pkcs8PEM(t, p.client.key)}},
		{name: "RSA PKCS#1 key", client: p.clientRSA, chain: 1,
			blocks: []*pem.Block{p.clientRSA.certPEM(), {Type: "RSA PRIVATE KEY", Bytes: mustPKCS1(t, p.clientRSA)}}},
		{name: "RSA legacy encrypted AES-256-CBC", client: p.clientRSA, chain: 1, pass: password,
			blocks: []*pem.Block{p.clientRSA.certPEM(), legacyPEM(t, p.clientRSA.key, password, x509.PEMCipherAES256)}},
		{name: "EC legacy encrypted DES-EDE3-CBC", client: p.client, chain: 2, pass: password,
			blocks: []*pem.Block{p.client.certPEM(), p.intermediate.certPEM(), legacyPEM(t, p.client.key, password, x509.PEMCipher3DES)}},
		{name: "PKCS#8 PBES2 AES-256-CBC HMAC-SHA256", client: p.client, chain: 2, pass: password,
			blocks: []*pem.Block{p.client.certPEM(), p.intermediate.certPEM(), encryptPKCS8(t, p.client.key, password, specAES256SHA256)}},
		{name: "PKCS#8 PBES2 AES-128-CBC default PRF with key length", client: p.client, chain: 2, pass: password,
			blocks: []*pem.Block{p.client.certPEM(), p.intermediate.certPEM(), encryptPKCS8(t, p.client.key, password, specAES128SHA1)}},
		{name: "PKCS#8 PBES2 AES-192-CBC HMAC-SHA512", client: p.client, chain: 2, pass: password,
			blocks: []*pem.Block{p.client.certPEM(), p.intermediate.certPEM(), encryptPKCS8(t, p.client.key, password, specAES192SHA512)}},
		{name: "PKCS#8 PBES2 DES-EDE3-CBC HMAC-SHA1", client: p.clientRSA, chain: 1, pass: password,
			blocks: []*pem.Block{p.clientRSA.certPEM(), encryptPKCS8(t, p.clientRSA.key, password, specDES3SHA1)}},
		{name: "PKCS#8 Ed25519 encrypted", client: p.clientEd25519, chain: 1, pass: password,
			blocks: []*pem.Block{encryptPKCS8(t, p.clientEd25519.key, password, specAES256SHA256), p.clientEd25519.certPEM()}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			keyFile := writePEM(t, dir, fmt.Sprintf("client%d.pem", i), tc.blocks...)
			opts := Options{CAFile: caFile, CertificateKeyFile: keyFile, CertificateKeyFilePassword: tc.pass}
			base, err := New(opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := base.Certificates[0].Leaf; got == nil || !got.Equal(tc.client.cert) {
				t.Fatalf("Certificates[0].Leaf is not the client certificate")
			}
			cfg := ForHost(base, "localhost", opts)
			res := handshake(t, cfg, tlsCert(p.serverLocalhost), rootPool(p))
			if res.clientErr != nil || res.serverErr != nil {
				t.Fatalf("handshake failed: client %v, server %v", res.clientErr, res.serverErr)
			}
			if res.clientCert == nil || !res.clientCert.Equal(tc.client.cert) {
				t.Fatalf("server saw client certificate %v", res.clientCert)
			}
			if res.clientChainLen != tc.chain {
				t.Errorf("server received %d certificates, want %d", res.clientChainLen, tc.chain)
			}
		})
	}
	t.Run("no client certificate configured", func(t *testing.T) {
		cfg, err := New(Options{CAFile: caFile, ServerName: "localhost"})
		if err != nil {
			t.Fatal(err)
		}
		if res := handshake(t, cfg, tlsCert(p.serverLocalhost), rootPool(p)); res.serverErr == nil {
			t.Fatal("a server requiring a client certificate accepted none")
		}
	})
}

func mustPKCS1(t *testing.T, i issued) []byte {
	k, ok := i.key.(*rsa.PrivateKey)
	if !ok {
		t.Fatalf("%T is not RSA", i.key)
	}
	return x509.MarshalPKCS1PrivateKey(k)
}

// TestErrors checks that every bad input is an *Error naming the option and
// the file, with a reason, and never showing the password.
func TestErrors(t *testing.T) {
	p := getPKI(t)
	dir := t.TempDir()
	const wrong = "Wr0ng-pass-also-secret"
	chain := []*pem.Block{p.client.certPEM(), p.intermediate.certPEM()}
	keyFile := func(name string, key *pem.Block) string {
		return writePEM(t, dir, name, append(append([]*pem.Block{}, chain...), key)...)
	}
	unsupported := func(name string, s pbes2Spec) string {
		return keyFile(name, encryptPKCS8(t, p.client.key, password, s))
	}
	legacyBadDEK := legacyPEM(t, p.client.key, password, x509.PEMCipherAES128)
	legacyBadDEK.Headers["DEK-Info"] = "AES-128-CBC,zz"
	garbageCert := &pem.Block{Type: "CERTIFICATE", Bytes: []byte("not DER")}

	type errCase struct {
		name       string
		opts       Options
		wantOption string
		wantPath   bool // the path of the file named by the option
		wantReason string
		wantIs     error
	}
	tests := []errCase{
		{name: "CA file missing", opts: Options{CAFile: filepath.Join(dir, "nope.pem")},
			wantOption: "tlsCAFile", wantReason: "cannot open file", wantIs: fs.ErrNotExist},
		{name: "CA file is garbage", opts: Options{CAFile: writeFile(t, dir, "garbage-ca.pem", []byte("hello, not PEM"))},
			wantOption: "tlsCAFile", wantReason: "no PEM certificates found"},
		{name: "CA file holds only a key", opts: Options{CAFile: writePEM(t, dir, "key-as-ca.pem", pkcs8PEM(t, p.client.key))},
			wantOption: "tlsCAFile", wantReason: "no CERTIFICATE block"},
		{name: "CA file certificate does not parse", opts: Options{CAFile: writePEM(t, dir, "bad-ca.pem", garbageCert)},
			wantOption: "tlsCAFile", wantReason: "do not parse"},
		{name: "CA file is a directory", opts: Options{CAFile: dir},
			wantOption: "tlsCAFile", wantReason: "cannot read file"},
		{name: "key file missing", opts: Options{CertificateKeyFile: filepath.Join(dir, "nope.pem")},
			wantOption: "tlsCertificateKeyFile", wantReason: "cannot open file", wantIs: fs.ErrNotExist},
		{name: "key file is garbage", opts: Options{CertificateKeyFile: writeFile(t, dir, "garbage.pem", []byte("-----BEGIN nothing"))},
			wantOption: "tlsCertificateKeyFile", wantReason: "no PEM blocks found"},
		{name: "key file without key", opts: Options{CertificateKeyFile: writePEM(t, dir, "certonly.pem", chain...)},
			wantOption: "tlsCertificateKeyFile", wantReason: "no private key found"},
		{name: "key file without certificate", opts: Options{CertificateKeyFile: writePEM(t, dir, "keyonly.pem", pkcs8PEM(t, p.client.key))},
			wantOption: "tlsCertificateKeyFile", wantReason: "no PEM certificates found"},
		{name: "two keys", opts: Options{CertificateKeyFile: writePEM(t, dir, "twokeys.pem", p.client.certPEM(), pkcs8PEM(t, p.client.key), pkcs8PEM(t, p.client.key))},
			wantOption: "tlsCertificateKeyFile", wantReason: "2 private keys found"},
		{name: "key does not match certificate", opts: Options{CertificateKeyFile: keyFile("mismatch.pem", pkcs8PEM(t, p.serverOther.key))},
			wantOption: "tlsCertificateKeyFile", wantReason: "does not match"},
		{name: "certificate in key file does not parse", opts: Options{CertificateKeyFile: writePEM(t, dir, "badcert.pem", garbageCert, pkcs8PEM(t, p.client.key))},
			wantOption: "tlsCertificateKeyFile", wantReason: "certificate 1 does not parse"},
		{name: "plain key does not parse", opts: Options{CertificateKeyFile: keyFile("badkey.pem", &pem.Block{Type: "PRIVATE KEY", Bytes: []byte{0x30, 0x03, 0x02, 0x01, 0x00}})},
			wantOption: "tlsCertificateKeyFile", wantReason: `"PRIVATE KEY" block does not parse`},
		{name: "legacy encrypted, wrong password", opts: Options{CertificateKeyFile: keyFile("legacy.pem", legacyPEM(t, p.client.key, password, x509.PEMCipherAES256)), CertificateKeyFilePassword: wrong},
			wantOption: "tlsCertificateKeyFilePassword", wantReason: "wrong password"},
		{name: "legacy encrypted, no password", opts: Options{CertificateKeyFile: keyFile("legacy2.pem", legacyPEM(t, p.client.key, password, x509.PEMCipherAES256))},
			wantOption: "tlsCertificateKeyFilePassword", wantReason: "no password was given"},
		{name: "legacy encrypted, bad DEK-Info", opts: Options{CertificateKeyFile: keyFile("legacy3.pem", legacyBadDEK), CertificateKeyFilePassword: password},
			wantOption: "tlsCertificateKeyFile", wantReason: "cannot decrypt the legacy encrypted PEM key"},
		{name: "PKCS#8 AES-256, wrong password", opts: Options{CertificateKeyFile: keyFile("p8aes.pem", encryptPKCS8(t, p.client.key, password, specAES256SHA256)), CertificateKeyFilePassword: wrong},
			wantOption: "tlsCertificateKeyFilePassword", wantReason: "wrong password"},
		{name: "PKCS#8 DES-EDE3, wrong password", opts: Options{CertificateKeyFile: keyFile("p8des.pem", encryptPKCS8(t, p.client.key, password, specDES3SHA1)), CertificateKeyFilePassword: wrong},
			wantOption: "tlsCertificateKeyFilePassword", wantReason: "wrong password"},
		{name: "PKCS#8 encrypted, no password", opts: Options{CertificateKeyFile: keyFile("p8nopass.pem", encryptPKCS8(t, p.client.key, password, specAES128SHA1))},
			wantOption: "tlsCertificateKeyFilePassword", wantReason: "no password was given"},
		{name: "PKCS#8 AES-256-GCM cipher", opts: Options{CertificateKeyFile: unsupported("gcm.pem", pbes2Spec{prf: specAES256SHA256.prf, prfOID: oidHMACWithSHA256, cipherOID: asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 46}, keyLen: 32, newBlock: specAES256SHA256.newBlock, iter: 1}), CertificateKeyFilePassword: password},
			wantOption: "tlsCertificateKeyFile", wantReason: "unsupported PKCS#8 cipher 2.16.840.1.101.3.4.1.46"},
		{name: "PKCS#8 PBES1 scheme", opts: Options{CertificateKeyFile: unsupported("pbes1.pem", pbes2Spec{schemeOID: asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 10}, prf: specDES3SHA1.prf, cipherOID: oidDESEDE3CBC, keyLen: 24, newBlock: specDES3SHA1.newBlock, iter: 1}), CertificateKeyFilePassword: password},
			wantOption: "tlsCertificateKeyFile", wantReason: "unsupported PKCS#8 encryption scheme 1.2.840.113549.1.5.10"},
		{name: "PKCS#8 scrypt", opts: Options{CertificateKeyFile: unsupported("scrypt.pem", pbes2Spec{kdfOID: asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 11591, 4, 11}, prf: specDES3SHA1.prf, cipherOID: oidDESEDE3CBC, keyLen: 24, newBlock: specDES3SHA1.newBlock, iter: 1}), CertificateKeyFilePassword: password},
			wantOption: "tlsCertificateKeyFile", wantReason: "unsupported PKCS#8 key derivation function 1.3.6.1.4.1.11591.4.11"},
		{name: "PKCS#8 HMAC-MD5 PRF", opts: Options{CertificateKeyFile: unsupported("md5.pem", pbes2Spec{prfOID: asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 6}, prf: specDES3SHA1.prf, cipherOID: oidDESEDE3CBC, keyLen: 24, newBlock: specDES3SHA1.newBlock, iter: 1}), CertificateKeyFilePassword: password},
			wantOption: "tlsCertificateKeyFile", wantReason: "unsupported PKCS#8 PBKDF2 pseudorandom function 1.2.840.113549.2.6"},
		{name: "PKCS#8 huge iteration count", opts: Options{CertificateKeyFile: keyFile("huge.pem", hugeIter(t, p)), CertificateKeyFilePassword: password},
			wantOption: "tlsCertificateKeyFile", wantReason: "iteration count 10000001 is outside"},
		{name: "PKCS#8 key length disagrees with cipher", opts: Options{CertificateKeyFile: unsupported("keylen.pem", pbes2Spec{prf: specAES128SHA1.prf, cipherOID: oidAES256CBC, keyLen: 16, newBlock: specAES128SHA1.newBlock, iter: 1, writeKeyLength: true}), CertificateKeyFilePassword: password},
			wantOption: "tlsCertificateKeyFile", wantReason: "key length 16, the cipher needs 32"},
		{name: "PKCS#8 envelope is garbage", opts: Options{CertificateKeyFile: keyFile("p8garbage.pem", &pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: []byte("garbage")}), CertificateKeyFilePassword: password},
			wantOption: "tlsCertificateKeyFile", wantReason: "malformed ENCRYPTED PRIVATE KEY"},
		{name: "bad MinVersion", opts: Options{MinVersion: 1}, wantOption: "MinVersion", wantReason: "unknown TLS version 0x0001"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := New(tc.opts)
			if err == nil {
				t.Fatalf("New succeeded: %v", cfg)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v is not an *Error", err, err)
			}
			if e.Option != tc.wantOption {
				t.Errorf("Option = %q, want %q (%v)", e.Option, tc.wantOption, err)
			}
			wantPath := tc.opts.CAFile
			if strings.HasPrefix(tc.wantOption, "tlsCertificateKeyFile") {
				wantPath = tc.opts.CertificateKeyFile
			}
			if e.Path != wantPath {
				t.Errorf("Path = %q, want %q", e.Path, wantPath)
			}
			if !strings.Contains(e.Reason, tc.wantReason) {
				t.Errorf("Reason = %q, want it to contain %q", e.Reason, tc.wantReason)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("errors.Is(%v, %v) is false", err, tc.wantIs)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.wantOption) || (wantPath != "" && !strings.Contains(msg, wantPath)) {
				t.Errorf("message %q does not name the option and the file", msg)
			}
			assertNoSecret(t, []string{password, wrong},
				msg, fmt.Sprintf("%v", err), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", e),
				fmt.Sprintf("%#v", e.Err), tc.opts.String(),
				fmt.Sprintf("%v", tc.opts), fmt.Sprintf("%+v", tc.opts), fmt.Sprintf("%#v", tc.opts), fmt.Sprintf("%v", &tc.opts))
		})
	}
}

func hugeIter(t *testing.T, p *testPKI) *pem.Block {
	s := specAES128SHA1
	s.iter = 1
	b := encryptPKCS8(t, p.client.key, password, s)
	// Patch the iteration count in place: encrypting with 10 million rounds
	// would take seconds, and the decoder must refuse before deriving.
	var info struct {
		Alg struct {
			Algorithm  asn1.ObjectIdentifier
			Parameters asn1.RawValue
		}
		Data []byte
	}
	if _, err := asn1.Unmarshal(b.Bytes, &info); err != nil {
		t.Fatal(err)
	}
	var params struct{ KDF, Enc p8AlgID }
	if _, err := asn1.Unmarshal(info.Alg.Parameters.FullBytes, &params); err != nil {
		t.Fatal(err)
	}
	var kdf p8KDFParams
	if _, err := asn1.Unmarshal(params.KDF.Parameters.FullBytes, &kdf); err != nil {
		t.Fatal(err)
	}
	kdf.Iter = maxIterations + 1
	params.KDF.Parameters = asn1.RawValue{FullBytes: mustMarshal(t, kdf)}
	info.Alg.Parameters = asn1.RawValue{FullBytes: mustMarshal(t, params)}
	b.Bytes = mustMarshal(t, info)
	return b
}

func assertNoSecret(t *testing.T, secrets []string, outputs ...string) {
	t.Helper()
	for _, out := range outputs {
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("output shows a password: %q", out)
			}
		}
	}
}

func TestOptionsStringRedacts(t *testing.T) {
	o := Options{CAFile: "/etc/ca.pem", CertificateKeyFile: "/etc/client.pem", CertificateKeyFilePassword: password,
		AllowInvalidHostnames: true, ServerName: "db.example", MinVersion: tls.VersionTLS13}
	want := `tlsconfig.Options{CAFile="/etc/ca.pem", CertificateKeyFile="/etc/client.pem", CertificateKeyFilePassword=[redacted], AllowInvalidHostnames=true, ServerName="db.example", MinVersion=TLS 1.3}`
	for _, got := range []string{o.String(), fmt.Sprintf("%v", o), fmt.Sprintf("%+v", o), fmt.Sprintf("%#v", o), fmt.Sprintf("%s", &o)} {
		if got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
	if got := (Options{}).String(); got != "tlsconfig.Options{}" {
		t.Errorf("empty options: %s", got)
	}
}

// TestOpenSSLInterop reads encrypted PKCS#8 files written by the openssl
// command, a check on the format independent of the test's own encoder.
func TestOpenSSLInterop(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl command not installed; the test's own PKCS#8 encoder covers the format")
	}
	p := getPKI(t)
	dir := t.TempDir()
	plain := writePEM(t, dir, "plain.pem", pkcs8PEM(t, p.client.key))
	for _, args := range [][]string{
		{"-v2", "aes-256-cbc", "-v2prf", "hmacWithSHA256"},
		{"-v2", "aes-128-cbc", "-v2prf", "hmacWithSHA1"},
		{"-v2", "des3"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			out := filepath.Join(dir, "enc.pem")
			cmd := exec.Command(openssl, append([]string{"pkcs8", "-topk8", "-in", plain, "-out", out, "-passout", "env:TLSCONFIG_TEST_PASS"}, args...)...)
			cmd.Env = append(cmd.Environ(), "TLSCONFIG_TEST_PASS="+password)
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Skipf("openssl cannot write this format here: %v: %s", err, b)
			}
			enc, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			keyFile := writeFile(t, dir, "client.pem", append(pem.EncodeToMemory(p.client.certPEM()), enc...))
			if _, err := New(Options{CertificateKeyFile: keyFile, CertificateKeyFilePassword: password}); err != nil {
				t.Fatalf("reading openssl's %v file: %v", args, err)
			}
			_, err = New(Options{CertificateKeyFile: keyFile, CertificateKeyFilePassword: "wrong"})
			var e *Error
			if !errors.As(err, &e) || e.Option != "tlsCertificateKeyFilePassword" {
				t.Fatalf("wrong password gave %v", err)
			}
		})
	}
}
