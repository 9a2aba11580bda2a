package auth

import (
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"

	"github.com/mongoscope/mongoscope/driver/connstring"
)

// Mechanism names, as the server and the connection string spell them.
const (
	MechanismSCRAMSHA1   = connstring.MechanismSCRAMSHA1
	MechanismSCRAMSHA256 = connstring.MechanismSCRAMSHA256
	MechanismPLAIN       = connstring.MechanismPLAIN
	MechanismX509        = connstring.MechanismX509
	MechanismGSSAPI      = connstring.MechanismGSSAPI
	MechanismAWS         = connstring.MechanismAWS
	MechanismOIDC        = connstring.MechanismOIDC
)

// externalSource is the database for mechanisms whose users live outside
// MongoDB.
const externalSource = "$external"

// Credential is what the client options give us.
//
// Source "" means the spec's default for the mechanism when the connection
// string names no database: "admin" for SCRAM and the negotiated default,
// "$external" for PLAIN and MONGODB-X509. (connstring.ConnString.Credential
// already applies the database default, so a Source from there is used as
// is.)
//
// Credential prints with the password redacted with every fmt verb and in
// log/slog.
type Credential struct {
	// Mechanism is "" when the mechanism is negotiated: SCRAM-SHA-256 if
	// the server lists it in saslSupportedMechs, otherwise SCRAM-SHA-1.
	Mechanism string
	// Source is the authentication database (authSource).
	Source   string
	Username string
	Password string
	// PasswordSet tells an empty password that was given ("user:@") from
	// none.
	PasswordSet bool
	// Props are the authMechanismProperties.
	Props map[string]string
}

// canonicalMechanism returns the canonical spelling of name ("" stays "")
// and whether this package knows the name at all.
func canonicalMechanism(name string) (string, bool) {
	if name == "" {
		return "", true
	}
	for _, m := range [...]string{MechanismSCRAMSHA1, MechanismSCRAMSHA256, MechanismPLAIN, MechanismX509,
		MechanismGSSAPI, MechanismAWS, MechanismOIDC} {
		if strings.EqualFold(name, m) {
			return m, true
		}
	}
	return name, false
}

// source returns the credential's database with the spec's default applied
// for mechanism (already canonical).
func (c *Credential) source(mechanism string) string {
	if c.Source != "" {
		return c.Source
	}
	switch mechanism {
	case MechanismPLAIN, MechanismX509, MechanismGSSAPI, MechanismAWS, MechanismOIDC:
		return externalSource
	}
	return "admin"
}

// hasPassword reports whether a password was given, empty or not.
func (c *Credential) hasPassword() bool { return c.PasswordSet || c.Password != "" }

// Validate checks the rules the auth spec sets for the credential's
// mechanism and returns an *Error naming the first one broken.
func (c *Credential) Validate() error {
	if err := c.validate(); err != nil {
		return err
	}
	return nil
}

func (c *Credential) validate() *Error {
	mech, known := canonicalMechanism(c.Mechanism)
	e := &Error{Mechanism: mech, Username: c.Username, Source: c.source(mech)}
	bad := func(reason string) *Error { e.Reason = reason; return e }
	if !known {
		e.Mechanism = c.Mechanism
		e.Source = c.Source
		return bad("unknown authentication mechanism; use one of SCRAM-SHA-256, SCRAM-SHA-1, PLAIN or MONGODB-X509")
	}
	switch mech {
	case MechanismGSSAPI, MechanismAWS, MechanismOIDC:
		return bad("not supported by this driver yet")
	case "", MechanismSCRAMSHA1, MechanismSCRAMSHA256, MechanismPLAIN:
		if c.Username == "" {
			return bad("a username is required")
		}
		if !c.hasPassword() {
			return bad("a password is required")
		}
		if mech == MechanismSCRAMSHA256 {
			// An explicit SCRAM-SHA-256 credential can never succeed with
			// a password SASLprep rejects, so say so before connecting.
			if _, err := saslPrep(c.Password); err != nil {
				return bad(err.Reason)
			}
		}
	case MechanismX509:
		if c.hasPassword() {
			return bad("a password must not be given")
		}
		if c.Source != "" && c.Source != externalSource {
			return bad(`the source must be "$external"`)
		}
	}
	if len(c.Props) > 0 {
		return bad("authMechanismProperties do not apply to this mechanism")
	}
	return nil
}

// String describes c with the password redacted.
func (c Credential) String() string {
	var b strings.Builder
	b.WriteString("{Mechanism:")
	if c.Mechanism == "" {
		b.WriteString("(negotiated)")
	} else {
		b.WriteString(c.Mechanism)
	}
	b.WriteString(" Source:")
	b.WriteString(strconv.Quote(c.Source))
	b.WriteString(" Username:")
	b.WriteString(strconv.Quote(c.Username))
	b.WriteString(" Password:")
	if c.hasPassword() {
		b.WriteString(connstring.Redacted)
	} else {
		b.WriteString("(none)")
	}
	if len(c.Props) > 0 {
		b.WriteString(" Props:{")
		for i, k := range sortedKeys(c.Props) {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(k)
			b.WriteByte(':')
			b.WriteString(strconv.Quote(propValue(k, c.Props[k])))
		}
		b.WriteByte('}')
	}
	b.WriteByte('}')
	return b.String()
}

// Format writes c.String() for every verb, so %#v and %x cannot reach the
// password field.
func (c Credential) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(c.String())) }

// LogValue keeps the password out of log/slog records.
func (c Credential) LogValue() slog.Value {
	attrs := []slog.Attr{
		slog.String("mechanism", c.Mechanism),
		slog.String("source", c.Source),
		slog.String("username", c.Username),
	}
	if c.hasPassword() {
		attrs = append(attrs, slog.String("password", connstring.Redacted))
	}
	for _, k := range sortedKeys(c.Props) {
		attrs = append(attrs, slog.String("prop."+k, propValue(k, c.Props[k])))
	}
	return slog.GroupValue(attrs...)
}

// propValue redacts the mechanism properties that are themselves
// credentials (MONGODB-AWS's session token).
func propValue(key, value string) string {
	if strings.EqualFold(key, "AWS_SESSION_TOKEN") && value != "" {
		return connstring.Redacted
	}
	return value
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
