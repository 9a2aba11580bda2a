package conn

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/driver/connstring"
	"github.com/mongoscope/mongoscope/driver/internal/tlsconfig"
)

func parse(t *testing.T, uri string) *connstring.ConnString {
	t.Helper()
	cs, err := connstring.Parse(uri)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func TestSettingsFromURI(t *testing.T) {
	cs := parse(t, "mongodb://bob:pw@h1:27017,h2/app?appname=probe&compressors=zstd,zlib&zlibCompressionLevel=4&connectTimeoutMS=1500&socketTimeoutMS=2500&authMechanism=SCRAM-SHA-1")
	s, err := NewSettings(cs, Extra{})
	if err != nil {
		t.Fatal(err)
	}
	c := s.Config("h2:27017")
	if c.Address != "h2:27017" || c.ConnectTimeout != 1500*time.Millisecond || c.SocketTimeout != 2500*time.Millisecond ||
		c.ZlibLevel != 4 || c.Handshake.AppName != "probe" || strings.Join(c.Handshake.Compressors, ",") != "zstd,zlib" || c.TLS != nil {
		t.Errorf("config %+v", c)
	}
	if c.Credential == nil || c.Credential.Username != "bob" || c.Credential.Source != "app" || c.Credential.Mechanism != "SCRAM-SHA-1" {
		t.Errorf("credential %v", c.Credential)
	}
	if v := c.Metadata.Lookup("application", "name").StringValue(); v != "probe" {
		t.Errorf("metadata application.name %q", v)
	}

	d, err := NewSettings(parse(t, "mongodb://h1"), Extra{})
	if err != nil {
		t.Fatal(err)
	}
	if c := d.Config("h1:27017"); c.ConnectTimeout != DefaultConnectTimeout || c.ZlibLevel != -1 || c.SocketTimeout != 0 || c.Credential != nil {
		t.Errorf("defaults %+v", c)
	}

	for _, tc := range []struct{ uri, want string }{
		{"mongodb://h1/?proxyHost=p.example", "proxyHost"},
		{"mongodb://h1/?tls=true&tlsCAFile=/nonexistent/ca.pem", "tlsCAFile"},
		{"mongodb://h1/?authMechanism=MONGODB-AWS", "MONGODB-AWS"},
	} {
		_, err := NewSettings(parse(t, tc.uri), Extra{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %s", tc.uri, err, tc.want)
		}
	}
	var te *tlsconfig.Error
	if _, err := NewSettings(parse(t, "mongodb://h1/?tls=true&tlsCAFile=/nonexistent/ca.pem"), Extra{}); !errors.As(err, &te) {
		t.Errorf("bad CA file: %T", err)
	}
}

// From a URI to a verified TLS connection: tlsCAFile is read once, and
// each server's host name goes into SNI and the certificate check.
func TestSettingsTLSEndToEnd(t *testing.T) {
	caFile, cert := testPKI(t)
	var sni string
	addr := serveTLS(t, cert, &sni, func(s *scriptConn) {
		msg := s.read()
		if msg == nil {
			return
		}
		s.write(opMsg(100, int32(le(msg[4:8])), 0, helloReply(t), false))
	})
	_, port, _ := net.SplitHostPort(addr)
	cs := parse(t, "mongodb://localhost:"+port+"/?tls=true&tlsCAFile="+url.QueryEscape(caFile))
	s, err := NewSettings(cs, Extra{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := Dial(context.Background(), s.Config("localhost:"+port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if sni != "localhost" {
		t.Errorf("SNI %q", sni)
	}
}

func le(b []byte) uint32 { return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24 }
