package auth

// plainClient is RFC 4616's PLAIN, which MongoDB uses for LDAP: one
// message, "\x00user\x00password", with no authorization identity.
type plainClient struct {
	username, password string
	sent               bool
}

func (p *plainClient) start() ([]byte, error) {
	p.sent = true
	out := make([]byte, 0, 2+len(p.username)+len(p.password))
	out = append(out, 0)
	out = append(out, p.username...)
	out = append(out, 0)
	return append(out, p.password...), nil
}

// completed: PLAIN has nothing to verify once the message is sent; the
// server's ok:1 is the answer.
func (p *plainClient) completed() bool { return p.sent }

func (p *plainClient) next([]byte) ([]byte, error) {
	return nil, fail("unexpected challenge from the server for PLAIN", nil)
}
