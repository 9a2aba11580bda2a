package auth

import "strconv"

// Error is a failed or refused authentication. Mechanism, Username and
// Source say which credential; Reason says what went wrong; Err is the
// cause when there is one (the server's error for a rejected command).
// Neither Reason nor Err ever carries the password, a SCRAM proof, the
// salted password or a derived key.
type Error struct {
	Mechanism string
	Username  string
	Source    string
	Reason    string
	Err       error
}

// Error formats e as
// `auth: SCRAM-SHA-256 for user "x" on db "admin": <reason>[: <cause>]`.
func (e *Error) Error() string {
	b := []byte("auth: ")
	if e.Mechanism != "" {
		b = append(b, e.Mechanism...)
	} else {
		b = append(b, "default mechanism"...)
	}
	if e.Username != "" {
		b = append(b, " for user "...)
		b = strconv.AppendQuote(b, e.Username)
	}
	if e.Source != "" {
		b = append(b, " on db "...)
		b = strconv.AppendQuote(b, e.Source)
	}
	b = append(b, ": "...)
	b = append(b, e.Reason...)
	if e.Err != nil {
		b = append(b, ": "...)
		b = append(b, e.Err.Error()...)
	}
	return string(b)
}

// Unwrap returns the cause, so errors.As finds the server's error.
func (e *Error) Unwrap() error { return e.Err }

// fail builds an *Error with only a reason; the conversation fills in
// which credential it was about (see conversation.wrap).
func fail(reason string, err error) *Error { return &Error{Reason: reason, Err: err} }
