package conn

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/driver/internal/tlsconfig"
)

// testPKI makes a CA and a server certificate for localhost, and writes
// the CA to a PEM file.
func testPKI(t *testing.T) (caFile string, server tls.Certificate) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mongoscope test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{"localhost"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caFile = filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return caFile, tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// serveTLS is serve behind a TLS listener; sni receives the server name
// the client asked for.
func serveTLS(t *testing.T, cert tls.Certificate, sni *string, script func(*scriptConn)) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert},
		GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) { *sni = h.ServerName; return nil, nil }})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
		if err := nc.(*tls.Conn).Handshake(); err != nil {
			return
		}
		script(&scriptConn{t: t, nc: nc})
	}()
	t.Cleanup(func() { _ = ln.Close(); <-done })
	return ln.Addr().String()
}

func TestTLS(t *testing.T) {
	caFile, cert := testPKI(t)
	base, err := tlsconfig.New(tlsconfig.Options{CAFile: caFile})
	if err != nil {
		t.Fatal(err)
	}
	var sni string
	addr := serveTLS(t, cert, &sni, func(s *scriptConn) {
		s.handshake(t, nil)
		s.expect("ping", opMsg(2, 0, 0, pingWithDB(t, "admin"), false))
		s.write(opMsg(101, 2, 0, okReply(t), false))
	})
	_, port, _ := net.SplitHostPort(addr)
	c := dialScripted(t, "localhost:"+port, func(c *Config) { c.TLS = tlsconfig.ForHost(base, "localhost", tlsconfig.Options{CAFile: caFile}) })
	r, err := c.Command(context.Background(), &Request{DB: "admin", Command: ping(t)})
	if err != nil {
		t.Fatal(err)
	}
	r.Release()
	if sni != "localhost" {
		t.Errorf("SNI %q, want localhost", sni)
	}

	// A server name the certificate does not cover fails in the TLS
	// handshake, with a NetworkError whose Op says so.
	addr = serveTLS(t, cert, &sni, func(s *scriptConn) {})
	_, port, _ = net.SplitHostPort(addr)
	_, err = Dial(context.Background(), Config{Address: "127.0.0.1:" + port, Metadata: testMetadata(t),
		TLS: tlsconfig.ForHost(base, "db.example.com", tlsconfig.Options{CAFile: caFile}), ConnectTimeout: 5 * time.Second})
	var ne *NetworkError
	if !errors.As(err, &ne) || ne.Op != "tls" || !strings.Contains(err.Error(), "db.example.com") {
		t.Errorf("wrong host name: %v", err)
	}
}
