package tlsconfig

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// Options are the TLS settings of one client, as the URI options give them.
// Whether TLS is on at all (tls/ssl) is the caller's decision; these only
// say how.
type Options struct {
	// CAFile (tlsCAFile) is a PEM file of trusted certificate authorities.
	// Empty means the system roots.
	CAFile string
	// CertificateKeyFile (tlsCertificateKeyFile) is a PEM file holding the
	// client certificate, its intermediates and its private key, in any
	// order. The certificate whose public key matches the key is the leaf.
	CertificateKeyFile string
	// CertificateKeyFilePassword (tlsCertificateKeyFilePassword) decrypts
	// the private key when it is encrypted, either as legacy
	// "Proc-Type: 4,ENCRYPTED" PEM or as PKCS#8 "ENCRYPTED PRIVATE KEY"
	// (PBES2 with PBKDF2 and AES-CBC or DES-EDE3-CBC). It never appears in
	// errors or in String output.
	CertificateKeyFilePassword string
	// Insecure (tlsInsecure) relaxes every check this package can relax:
	// it is AllowInvalidCertificates and AllowInvalidHostnames together.
	Insecure bool
	// AllowInvalidCertificates (tlsAllowInvalidCertificates) skips
	// verification of the server's certificate chain, and so its host name
	// too.
	AllowInvalidCertificates bool
	// AllowInvalidHostnames (tlsAllowInvalidHostnames) still verifies the
	// server's chain against the roots (validity dates and key usage
	// included) but does not check that it names the host.
	AllowInvalidHostnames bool
	// DisableOCSPEndpointCheck (tlsDisableOCSPEndpointCheck) and
	// DisableCertificateRevocationCheck
	// (tlsDisableCertificateRevocationCheck) are accepted so that a URI
	// carrying them works, and change nothing: crypto/tls performs no
	// revocation checks (neither CRLs nor OCSP), so there is nothing to
	// disable.
	DisableOCSPEndpointCheck          bool
	DisableCertificateRevocationCheck bool
	// ServerName is the host the certificate must name and the SNI sent,
	// without a port. An IP address is sent without SNI and checked against
	// the certificate's IP SANs. Usually left empty here and given per
	// connection to ForHost.
	ServerName string
	// MinVersion is the lowest TLS version offered; 0 means TLS 1.2.
	MinVersion uint16
}

// String describes the options with the password redacted.
func (o Options) String() string {
	var b strings.Builder
	b.WriteString("tlsconfig.Options{")
	first := true
	field := func(name, value string) {
		if !first {
			b.WriteString(", ")
		}
		first = false
		b.WriteString(name)
		b.WriteByte('=')
		b.WriteString(value)
	}
	if o.CAFile != "" {
		field("CAFile", strconv.Quote(o.CAFile))
	}
	if o.CertificateKeyFile != "" {
		field("CertificateKeyFile", strconv.Quote(o.CertificateKeyFile))
	}
	if o.CertificateKeyFilePassword != "" {
		field("CertificateKeyFilePassword", "[redacted]")
	}
	for _, f := range []struct {
		name string
		on   bool
	}{
		{"Insecure", o.Insecure},
		{"AllowInvalidCertificates", o.AllowInvalidCertificates},
		{"AllowInvalidHostnames", o.AllowInvalidHostnames},
		{"DisableOCSPEndpointCheck", o.DisableOCSPEndpointCheck},
		{"DisableCertificateRevocationCheck", o.DisableCertificateRevocationCheck},
	} {
		if f.on {
			field(f.name, "true")
		}
	}
	if o.ServerName != "" {
		field("ServerName", strconv.Quote(o.ServerName))
	}
	if o.MinVersion != 0 {
		field("MinVersion", tls.VersionName(o.MinVersion))
	}
	b.WriteByte('}')
	return b.String()
}

// GoString is String, so that %#v does not print the password either.
func (o Options) GoString() string { return o.String() }

// Error is a TLS option that could not be used: which option, which file,
// and what was wrong with it. It never holds a password.
type Error struct {
	Option string // the URI option, e.g. "tlsCAFile"
	Path   string // the file concerned, if any
	Reason string // what was wrong
	Err    error  // the underlying error, if any
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("tlsconfig: ")
	b.WriteString(e.Option)
	if e.Path != "" {
		b.WriteString(" ")
		b.WriteString(strconv.Quote(e.Path))
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// maxIterations bounds the PBKDF2 work a key file may ask for, so a hostile
// or corrupt file cannot stall New for hours; real files use thousands to a
// few hundred thousand.
const maxIterations = 10_000_000

// New builds the client-wide TLS configuration. The files are read here,
// once; connections then take per-host copies with ForHost.
//
// The server's certificate is verified against CAFile (or the system
// roots) and its host name against ServerName, unless Insecure,
// AllowInvalidCertificates or AllowInvalidHostnames relax that. A client
// certificate from CertificateKeyFile is sent whenever the server asks for
// one; it is also Certificates[0] of the result, with its Leaf set, for
// MONGODB-X509 authentication to read the subject from.
//
// Every error is an *Error naming the option.
func New(o Options) (*tls.Config, error) {
	minVersion := o.MinVersion
	switch minVersion {
	case 0:
		minVersion = tls.VersionTLS12
	case tls.VersionTLS10, tls.VersionTLS11, tls.VersionTLS12, tls.VersionTLS13:
	default:
		return nil, &Error{Option: "MinVersion", Reason: fmt.Sprintf("unknown TLS version 0x%04x", minVersion)}
	}
	cfg := &tls.Config{MinVersion: minVersion}
	if o.CAFile != "" {
		roots, err := loadCAFile(o.CAFile)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = roots
	}
	if o.CertificateKeyFile != "" {
		data, err := readFile("tlsCertificateKeyFile", o.CertificateKeyFile)
		if err != nil {
			return nil, err
		}
		cert, err := parseCertificateKeyFile(o.CertificateKeyFile, data, o.CertificateKeyFilePassword, maxIterations)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
		// Send the certificate whatever CA names the server lists: the
		// server's own error is clearer than sending none.
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return &cert, nil
		}
	}
	applyVerification(cfg, o)
	if o.ServerName != "" {
		cfg.ServerName = normalizeHost(o.ServerName)
	}
	return cfg, nil
}

// ForHost returns a copy of base for a connection to host (no port; an
// IPv6 literal may keep its brackets): ServerName is set to host, and the
// verification o asks for is applied. base is not modified and may be a
// configuration of the caller's own; nil means a fresh one with TLS 1.2 as
// the minimum. Reading no files, it is cheap enough for every connection.
//
// ForHost only relaxes: what base already relaxes stays relaxed. With
// AllowInvalidHostnames, a base that already skips the standard
// verification (InsecureSkipVerify, as New sets it for that option) is
// taken to be set up already and is left as it is.
func ForHost(base *tls.Config, host string, o Options) *tls.Config {
	var cfg *tls.Config
	if base == nil {
		cfg = &tls.Config{MinVersion: tls.VersionTLS12}
	} else {
		cfg = base.Clone()
	}
	cfg.ServerName = normalizeHost(host)
	applyVerification(cfg, o)
	return cfg
}

// applyVerification relaxes cfg's certificate checks as far as o says and
// no further. It is idempotent, so New and ForHost can both call it.
func applyVerification(cfg *tls.Config, o Options) {
	switch {
	case o.Insecure || o.AllowInvalidCertificates:
		cfg.InsecureSkipVerify = true
	case o.AllowInvalidHostnames:
		if cfg.InsecureSkipVerify {
			return
		}
		// crypto/tls can only skip all of its verification, so skip it and
		// verify the chain here, without a host name.
		cfg.InsecureSkipVerify = true
		cfg.VerifyConnection = chainVerifier(cfg.RootCAs, cfg.Time, cfg.VerifyConnection)
	}
}

// chainVerifier verifies the server's chain against roots (nil: the system
// roots) without checking the host name, then runs next, if any.
func chainVerifier(roots *x509.CertPool, now func() time.Time, next func(tls.ConnectionState) error) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return &Error{Option: "tlsAllowInvalidHostnames", Reason: "the server sent no certificate"}
		}
		opts := x509.VerifyOptions{
			Roots:         roots,
			Intermediates: x509.NewCertPool(),
			KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		}
		if now != nil {
			opts.CurrentTime = now()
		}
		for _, c := range cs.PeerCertificates[1:] {
			opts.Intermediates.AddCert(c)
		}
		if _, err := cs.PeerCertificates[0].Verify(opts); err != nil {
			return err
		}
		if next != nil {
			return next(cs)
		}
		return nil
	}
}

// normalizeHost turns a host as it appears in an address into the name
// crypto/tls checks: brackets and an IPv6 zone are dropped, since a
// certificate names neither.
func normalizeHost(host string) string {
	h := host
	if len(h) >= 2 && h[0] == '[' && h[len(h)-1] == ']' {
		h = h[1 : len(h)-1]
	}
	if i := strings.IndexByte(h, '%'); i >= 0 && net.ParseIP(h[:i]) != nil {
		h = h[:i]
	}
	if net.ParseIP(h) != nil {
		return h
	}
	return host
}
