package conn

import (
	"crypto/tls"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/connstring"
	"github.com/mongoscope/mongoscope/driver/internal/auth"
	"github.com/mongoscope/mongoscope/driver/internal/handshake"
	"github.com/mongoscope/mongoscope/driver/internal/tlsconfig"
)

// DefaultConnectTimeout is connectTimeoutMS when the options leave it
// unset (URI options specification).
const DefaultConnectTimeout = 10 * time.Second

// Settings are what all connections of one client share: built once from
// the client's resolved connection string (files read, metadata encoded),
// then turned into a Config per server address.
type Settings struct {
	base    Config
	tlsOpts tlsconfig.Options
	tlsBase *tls.Config
}

// SharedMetadata is the client metadata document every new connection of
// a client sends, which a library wrapping the client may extend after
// the client started (the handshake specification's appendMetadata):
// connections already established keep what they sent.
type SharedMetadata struct {
	mu   sync.Mutex
	opts handshake.Options
	doc  atomic.Pointer[bson.Raw]
}

// Load returns the current metadata document.
func (m *SharedMetadata) Load() bson.Raw {
	if p := m.doc.Load(); p != nil {
		return *p
	}
	return nil
}

// AppendDriverInfo appends d to the metadata new connections send. A d
// equal to one already given, at creation or appended since (fields
// compared exactly, "" being unset), changes nothing: the document is not
// even rebuilt, so it stays byte for byte what it was (a rebuild would
// read the environment again) and a library appending on every use does
// not grow the list. A field holding '|' (the delimiter) is refused, as
// is metadata that cannot be built.
func (m *SharedMetadata) AppendDriverInfo(d handshake.DriverInfo) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, prev := range m.opts.DriverInfo {
		if prev == d {
			return nil
		}
	}
	opts := m.opts
	opts.DriverInfo = append(append([]handshake.DriverInfo(nil), m.opts.DriverInfo...), d)
	md, err := handshake.Metadata(opts)
	if err != nil {
		return err
	}
	m.opts = opts
	m.doc.Store(&md)
	return nil
}

// Metadata returns the client's shared metadata.
func (s *Settings) Metadata() *SharedMetadata { return s.base.Shared }

// SettingsError is an option that cannot be turned into a connection
// setting, e.g. a proxy this driver cannot use yet.
type SettingsError struct {
	Option, Reason string
}

func (e *SettingsError) Error() string { return "conn: " + e.Option + ": " + e.Reason }

// Extra holds the settings that have no URI option.
type Extra struct {
	DriverInfo []handshake.DriverInfo
	ServerAPI  *handshake.ServerAPI
	Dialer     Dialer
}

// NewSettings builds the shared settings from a resolved connection
// string (driver.ClientOptions.Resolve). It reads the TLS files and builds
// the handshake metadata, so errors in either surface here, once, rather
// than on every connection.
func NewSettings(cs *connstring.ConnString, extra Extra) (*Settings, error) {
	s := &Settings{}
	b := &s.base
	b.ConnectTimeout = DefaultConnectTimeout
	if cs.ConnectTimeout != nil {
		b.ConnectTimeout = *cs.ConnectTimeout
	}
	if cs.SocketTimeout != nil {
		b.SocketTimeout = *cs.SocketTimeout
	}
	if cs.Timeout != nil {
		// timeoutMS: bounds the handshake of connections established in
		// the background (Config.Timeout).
		b.Timeout, b.TimeoutSet = *cs.Timeout, true
	}
	b.ZlibLevel = -1
	if cs.ZlibCompressionLevel != nil {
		b.ZlibLevel = *cs.ZlibCompressionLevel
	}
	b.Dialer = extra.Dialer
	if cs.ProxyHost != "" && b.Dialer == nil {
		return nil, &SettingsError{Option: "proxyHost", Reason: "SOCKS5 proxies are not supported yet; pass a Dialer that speaks to the proxy"}
	}
	b.Handshake = handshake.Options{
		AppName:     cs.AppName,
		DriverInfo:  extra.DriverInfo,
		Compressors: cs.Compressors,
		ServerAPI:   extra.ServerAPI,
	}
	if cs.LoadBalanced != nil {
		b.Handshake.LoadBalanced = *cs.LoadBalanced
	}
	md, err := handshake.Metadata(b.Handshake)
	if err != nil {
		return nil, err
	}
	b.Metadata = md
	b.Shared = &SharedMetadata{opts: b.Handshake}
	b.Shared.doc.Store(&md)
	if c, ok := cs.Credential(); ok {
		cred := &auth.Credential{Mechanism: c.Mechanism, Source: c.Source, Username: c.Username,
			Password: string(c.Password), PasswordSet: c.HasPassword, Props: c.MechanismProperties}
		if err := cred.Validate(); err != nil {
			return nil, err
		}
		b.Credential = cred
	}
	if cs.TLSEnabled() {
		o := tlsconfig.Options{
			CAFile:                     cs.TLSCAFile,
			CertificateKeyFile:         cs.TLSCertificateKeyFile,
			CertificateKeyFilePassword: string(cs.TLSCertificateKeyFilePassword),
			Insecure:                   flag(cs.TLSInsecure),
			AllowInvalidCertificates:   flag(cs.TLSAllowInvalidCertificates),
			AllowInvalidHostnames:      flag(cs.TLSAllowInvalidHostnames),
			// Accepted: the standard library checks no revocation, so
			// there is nothing for these to turn off.
			DisableOCSPEndpointCheck:          flag(cs.TLSDisableOCSPEndpointCheck),
			DisableCertificateRevocationCheck: flag(cs.TLSDisableCertificateRevocationCheck),
		}
		base, err := tlsconfig.New(o)
		if err != nil {
			return nil, err
		}
		s.tlsOpts, s.tlsBase = o, base
	}
	return s, nil
}

func flag(b *bool) bool { return b != nil && *b }

// Config returns the configuration of one connection to address, with TLS
// set up for that host (server name for SNI and verification).
func (s *Settings) Config(address string) Config {
	c := s.base
	c.Address = address
	if s.tlsBase != nil {
		c.TLS = tlsconfig.ForHost(s.tlsBase, hostOf(address), s.tlsOpts)
	}
	return c
}

// hostOf returns the host part of "host:port" or "[v6]:port"; a Unix
// socket path has no host name to verify.
func hostOf(address string) string {
	if strings.HasSuffix(address, ".sock") {
		return ""
	}
	h, _, err := net.SplitHostPort(address)
	if err != nil {
		return address
	}
	return h
}
