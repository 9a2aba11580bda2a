package conn

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/driver/internal/tlsconfig"
)

// dialerFunc is a Dialer from a function.
type dialerFunc func(ctx context.Context, network, addr string) (net.Conn, error)

func (f dialerFunc) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return f(ctx, network, addr)
}

// A network error or timeout while connecting or during the initial hello
// gets the SystemOverloadedError and RetryableError labels (CMAP,
// "backpressure-enabled"); a DNS failure and a TLS handshake that fails on
// the certificate get none.
func TestBackpressureLabels(t *testing.T) {
	caFile, cert := testPKI(t)
	base, err := tlsconfig.New(tlsconfig.Options{CAFile: caFile})
	if err != nil {
		t.Fatal(err)
	}
	refused := func(t *testing.T) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		return addr
	}
	for _, tc := range []struct {
		name     string
		setup    func(t *testing.T, c *Config)
		labelled bool
		timeout  bool
	}{
		{"connection refused", func(t *testing.T, c *Config) { c.Address = refused(t) }, true, false},
		{"DNS lookup failure", func(t *testing.T, c *Config) {
			c.Address = "nosuchhost.invalid:27017"
			c.Dialer = dialerFunc(func(context.Context, string, string) (net.Conn, error) {
				return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "nosuchhost.invalid", IsNotFound: true}}
			})
		}, false, false},
		{"DNS lookup timeout", func(t *testing.T, c *Config) {
			c.Address = "slow.invalid:27017"
			c.Dialer = dialerFunc(func(context.Context, string, string) (net.Conn, error) {
				return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "i/o timeout", Name: "slow.invalid", IsTimeout: true}}
			})
		}, true, true},
		{"connection closed during hello", func(t *testing.T, c *Config) {
			c.Address = serve(t, "tcp", func(s *scriptConn) { s.read() })
		}, true, false},
		{"hello timeout", func(t *testing.T, c *Config) {
			done := make(chan struct{})
			c.Address = serve(t, "tcp", func(s *scriptConn) { s.read(); <-done })
			t.Cleanup(func() { close(done) }) // before serve's cleanup waits for the script
			c.ConnectTimeout = 100 * time.Millisecond
		}, true, true},
		{"TLS closed by the server", func(t *testing.T, c *Config) {
			c.Address = serve(t, "tcp", func(s *scriptConn) {})
			c.TLS = tlsconfig.ForHost(base, "localhost", tlsconfig.Options{CAFile: caFile})
		}, true, false},
		{"TLS certificate for another host", func(t *testing.T, c *Config) {
			var sni string
			c.Address = serveTLS(t, cert, &sni, func(s *scriptConn) {})
			c.TLS = tlsconfig.ForHost(base, "db.example.com", tlsconfig.Options{CAFile: caFile})
		}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Metadata: testMetadata(t), RequestID: counter(), ConnectTimeout: 5 * time.Second}
			tc.setup(t, &cfg)
			_, err := Dial(context.Background(), cfg)
			var ne *NetworkError
			if !errors.As(err, &ne) {
				t.Fatalf("Dial = %v, want a NetworkError", err)
			}
			got := ne.HasLabel(LabelSystemOverloaded) && ne.HasLabel(LabelRetryable)
			if got != tc.labelled || (!tc.labelled && len(ne.Labels) > 0) {
				t.Errorf("labels %v, want the backpressure labels: %v (%v)", ne.Labels, tc.labelled, err)
			}
			if ne.Timeout() != tc.timeout {
				t.Errorf("Timeout() = %v, want %v (%v)", ne.Timeout(), tc.timeout, err)
			}
		})
	}
}
