package connstring

// Option configures Parse.
type Option func(*parseConfig)

type parseConfig struct {
	warn         func(Warning)
	strict       bool
	oidcCallback bool
	deferChecks  bool
}

// WithWarnings calls fn, in URI order, for each Warning (unknown options,
// ignored values, repeated or deprecated keys). Without it warnings are
// dropped.
func WithWarnings(fn func(Warning)) Option {
	return func(c *parseConfig) { c.warn = fn }
}

// WithDeferredChecks skips, at parse time, the rules that tie options
// together (directConnection with several hosts, loadBalanced with
// replicaSet, tags with a primary read preference, ...). It is for callers
// that combine the result with options from elsewhere and then call
// Validate on the combination, as driver.ClientOptions does: a URI may
// rely on an option set in code. Each value's own checks and the
// credential's checks still run.
func WithDeferredChecks() Option {
	return func(c *parseConfig) { c.deferChecks = true }
}

// WithStrict makes an invalid option value an *Error instead of an
// InvalidValue Warning. The specifications ask for the warning; strict
// parsing suits tools that check a URI before it is deployed, and
// driver.ClientOptions.ApplyURI parses strictly unless LenientURI is set.
// Unknown options stay Warnings (the specification makes them warnings in
// every mode: a newer driver's option must not break an older one). Without
// WithStrict, security options (FailsClosed) are strict anyway.
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
