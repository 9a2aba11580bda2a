package connstring

import (
	"strings"
)

// String returns c as a connection string with every secret replaced by
// Redacted ("xxxxx"): the password, tlsCertificateKeyFilePassword and
// proxyPassword. The replacement keeps the URI's shape, so the output of a
// parsed ConnString parses again, to c with those secrets set to "xxxxx".
// Options are written once each, in a fixed order and canonical spelling;
// durations in whole milliseconds (seconds for maxStalenessSeconds).
//
// A mongodb+srv ConnString whose Hosts were replaced by resolved seeds
// (more than one, or with a port) is written as the "mongodb://" URI the
// seedlist discovery spec says it stands for: the seeds, tls=true unless
// tls is set, and no srvMaxHosts or srvServiceName.
func (c *ConnString) String() string {
	if c == nil {
		return "<nil>"
	}
	return c.format(false)
}

// format writes the URI, with secrets when withSecrets is set (for tests
// that check the round trip; never for display).
func (c *ConnString) format(withSecrets bool) string {
	var b strings.Builder
	scheme := c.Scheme
	resolved := scheme == SchemeSRV && (len(c.Hosts) != 1 || strings.IndexByte(c.Hosts[0], ':') >= 0)
	if scheme == "" || resolved {
		scheme = SchemeMongoDB
	}
	b.WriteString(scheme)
	b.WriteString("://")
	if c.Username != "" || c.HasPassword {
		b.WriteString(escape(c.Username, userinfoSafe))
		if c.HasPassword {
			b.WriteByte(':')
			switch {
			case !withSecrets:
				b.WriteString(Redacted)
			default:
				b.WriteString(escape(string(c.Password), userinfoSafe))
			}
		}
		b.WriteByte('@')
	}
	for i, h := range c.Hosts {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(formatHost(h))
	}

	var opts []string
	for _, o := range options {
		if o.get == nil {
			continue
		}
		if resolved {
			switch o.name {
			case "srvMaxHosts", "srvServiceName":
				continue
			case "tls":
				if c.TLS == nil {
					opts = append(opts, "tls=true")
					continue
				}
			}
		}
		for _, v := range o.get(c, withSecrets) {
			opts = append(opts, o.name+"="+v)
		}
	}
	if c.Database != "" || len(opts) > 0 {
		b.WriteByte('/')
		b.WriteString(escape(c.Database, databaseSafe))
	}
	if len(opts) > 0 {
		b.WriteByte('?')
		b.WriteString(strings.Join(opts, "&"))
	}
	return b.String()
}

// formatHost writes one entry of Hosts so that Parse reads it back: a
// socket path fully encoded, the zone of an IPv6 literal with "%" as %25,
// anything else as is except for characters that would split the list.
func formatHost(h string) string {
	switch {
	case strings.HasPrefix(h, "["):
		return strings.ReplaceAll(h, "%", "%25")
	case strings.IndexByte(h, '/') >= 0:
		return escape(h, isUnreserved)
	}
	return escape(h, hostSafe)
}

// Byte classes left unencoded in each part of the URI. Everything else is
// written as %XX, which Parse decodes.
var (
	userinfoSafe = func(b byte) bool { return isUnreserved(b) || isSubDelim(b) }
	// databaseSafe leaves out "@", which Parse rejects in the path as a
	// sign of a mis-encoded password, and "$", which a database name cannot
	// hold.
	databaseSafe = func(b byte) bool { return isUnreserved(b) || strings.IndexByte("!&'()*+,;=:", b) >= 0 }
	// valueSafe leaves out the separators of option values ("&", "=",
	// ",", ":") and "%".
	valueSafe = func(b byte) bool { return isUnreserved(b) || strings.IndexByte("!$'()*+;/@", b) >= 0 }
	// hostSafe keeps a host name and its ":port" readable.
	hostSafe = func(b byte) bool { return b >= 0x80 || isUnreserved(b) || b == ':' }
)

// escape percent-encodes every byte of s that safe rejects.
func escape(s string, safe func(byte) bool) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if !safe(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if safe(c) {
			b = append(b, c)
			continue
		}
		b = append(b, '%', hex[c>>4], hex[c&15])
	}
	return string(b)
}
