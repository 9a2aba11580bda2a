package connstring

// Option configures Parse.
type Option func(*parseConfig)

type parseConfig struct {
	warn         func(Warning)
	strict       bool
	oidcCallback bool
}

// WithWarnings calls fn, in URI order, for each Warning (unknown options,
// ignored values, repeated or deprecated keys). Without it warnings are
// dropped.
func WithWarnings(fn func(Warning)) Option {
	return func(c *parseConfig) { c.warn = fn }
}

// WithStrict makes an invalid option value an *Error instead of an
// InvalidValue Warning. The specifications ask for the warning; strict
// parsing suits tools that check a URI before it is deployed.
func WithStrict() Option {
	return func(c *parseConfig) { c.strict = true }
}

// WithOIDCCallback tells Parse that the client supplies a MONGODB-OIDC
// callback in code. The auth specification then makes a URI without an
// ENVIRONMENT mechanism property valid, and one with it invalid (a client
// may not have both).
func WithOIDCCallback() Option {
	return func(c *parseConfig) { c.oidcCallback = true }
}
