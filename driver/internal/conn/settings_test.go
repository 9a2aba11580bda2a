package conn

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/driver/connstring"
	"github.com/mongoscope/mongoscope/driver/internal/handshake"
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

// A DriverInfo equal to one already given, at creation or appended, leaves
// the shared metadata as it was: not rebuilt (the environment, read again
// by a rebuild, may have changed since) and the list not grown; a
// different one is appended.
func TestSharedMetadataDuplicate(t *testing.T) {
	library := handshake.DriverInfo{Name: "library", Version: "1.2", Platform: "Library Platform"}
	framework := handshake.DriverInfo{Name: "framework", Version: "2.0"}
	for _, tc := range []struct {
		name    string
		initial []handshake.DriverInfo
		appends []handshake.DriverInfo
		dup     handshake.DriverInfo
	}{
		{"equal to the initial one", []handshake.DriverInfo{library}, nil, library},
		{"equal to the initial one, another between", []handshake.DriverInfo{library}, []handshake.DriverInfo{framework}, library},
		{"equal to an appended one", nil, []handshake.DriverInfo{library}, library},
		{"equal to an appended one, another after", nil, []handshake.DriverInfo{library, framework}, library},
		{"empty version equal to unset", []handshake.DriverInfo{{Name: "library"}}, nil, handshake.DriverInfo{Name: "library", Version: ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{}
			opts := handshake.Options{DriverInfo: tc.initial, Getenv: func(k string) string { return env[k] },
				FileExists: func(string) bool { return false }}
			md, err := handshake.Metadata(opts)
			if err != nil {
				t.Fatal(err)
			}
			m := &SharedMetadata{opts: opts}
			m.doc.Store(&md)
			for _, d := range tc.appends {
				if err := m.AppendDriverInfo(d); err != nil {
					t.Fatal(err)
				}
			}
			before, n := m.Load(), len(m.opts.DriverInfo)
			env["VERCEL"] = "1" // a rebuild would now add env.name
			if err := m.AppendDriverInfo(tc.dup); err != nil {
				t.Fatal(err)
			}
			if got := m.Load(); !bytes.Equal(got, before) {
				t.Errorf("a duplicate changed the metadata:\n got %s\nwant %s", got, before)
			}
			if len(m.opts.DriverInfo) != n {
				t.Errorf("a duplicate grew the list to %d", len(m.opts.DriverInfo))
			}
			if err := m.AppendDriverInfo(handshake.DriverInfo{Name: "other"}); err != nil {
				t.Fatal(err)
			}
			if got := m.Load(); !strings.Contains(got.Lookup("driver", "name").StringValue(), "|other") {
				t.Errorf("a new DriverInfo was not appended: %s", got)
			}
		})
	}
}
