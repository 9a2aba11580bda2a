package connstring

import (
	"fmt"
	"log/slog"
)

// Secret is a credential: a password, a TLS key password or a proxy
// password. It prints as Redacted (or "" when empty) with every fmt verb,
// in log/slog and in text marshalling, so a ConnString can be logged
// whole. Read the value with string(s).
type Secret string

// String returns Redacted, or "" for an empty secret.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return Redacted
}

// Format writes s.String() for every verb, including %#v and %x.
func (s Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(s.String())) }

// LogValue keeps the secret out of log/slog records.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalText keeps the secret out of encoding/json and similar encoders.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }
