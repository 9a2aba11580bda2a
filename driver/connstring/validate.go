package connstring

import (
	"strconv"
	"time"
)

// Validate checks the rules that tie options together (TLS conflicts,
// directConnection, loadBalanced, srvMaxHosts and srvServiceName, SOCKS5
// proxy options, read preference, write concern, pool sizes and the
// credential) on c as it is now. Parse runs it; call it again after
// changing a ConnString by hand. Of opts only WithOIDCCallback matters.
func (c *ConnString) Validate(opts ...Option) error {
	var cfg parseConfig
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	return c.validate(len(c.Hosts), c.Username != "" || c.HasPassword, cfg.oidcCallback)
}

// validate checks cross-option rules. seeds is the number of seeds the
// multiple-host rules count: len(c.Hosts) when parsing, or the number of
// hosts an SRV lookup returned. userinfo reports an "@" in the URI, which
// turns authentication on even with an empty username. oidcCallback
// reports a MONGODB-OIDC callback configured in code.
func (c *ConnString) validate(seeds int, userinfo, oidcCallback bool) error {
	if err := c.validateOptions(seeds); err != nil {
		return err
	}
	return c.validateAuth(userinfo, oidcCallback)
}

// validateResolved checks a mongodb+srv ConnString whose Hosts are the
// seeds an SRV lookup returned and whose unset options may have been
// filled from a TXT record. Parse has already checked the credential,
// which a TXT record cannot change except for authSource.
func validateResolved(c *ConnString) error {
	return c.validateOptions(len(c.Hosts))
}

// validateOptions checks every cross-option rule except the credential's.
func (c *ConnString) validateOptions(seeds int) error {
	isTrue := func(b *bool) bool { return b != nil && *b }

	if c.Scheme == SchemeSRV {
		if isTrue(c.DirectConnection) {
			return &Error{Option: "directConnection", Value: "true", Reason: "not allowed with mongodb+srv, which may resolve to several hosts"}
		}
	} else {
		if c.SRVMaxHosts != nil {
			return &Error{Option: "srvMaxHosts", Reason: "only allowed with mongodb+srv"}
		}
		if c.SRVServiceName != "" {
			return &Error{Option: "srvServiceName", Reason: "only allowed with mongodb+srv"}
		}
	}
	if c.SRVMaxHosts != nil && *c.SRVMaxHosts > 0 {
		if c.ReplicaSet != "" {
			return &Error{Option: "srvMaxHosts", Value: strconv.Itoa(*c.SRVMaxHosts), Reason: "a positive srvMaxHosts is not allowed with replicaSet"}
		}
		if isTrue(c.LoadBalanced) {
			return &Error{Option: "srvMaxHosts", Value: strconv.Itoa(*c.SRVMaxHosts), Reason: "a positive srvMaxHosts is not allowed with loadBalanced=true"}
		}
	}
	if isTrue(c.DirectConnection) && seeds > 1 {
		return &Error{Option: "directConnection", Value: "true", Reason: "not allowed with more than one host"}
	}
	if isTrue(c.LoadBalanced) {
		switch {
		case seeds > 1:
			return &Error{Option: "loadBalanced", Value: "true", Reason: "not allowed with more than one host"}
		case c.ReplicaSet != "":
			return &Error{Option: "loadBalanced", Value: "true", Reason: "not allowed with replicaSet"}
		case isTrue(c.DirectConnection):
			return &Error{Option: "loadBalanced", Value: "true", Reason: "not allowed with directConnection=true"}
		}
	}

	if err := c.validateTLS(); err != nil {
		return err
	}
	if err := c.validateProxy(); err != nil {
		return err
	}

	if c.ReadPreference == "" || c.ReadPreference == "primary" {
		for _, set := range c.ReadPreferenceTags {
			if len(set) > 0 {
				return &Error{Option: "readPreferenceTags", Reason: "tag sets are not allowed with read preference primary (the default)"}
			}
		}
		if c.MaxStaleness != nil && *c.MaxStaleness > 0 {
			return &Error{Option: "maxStalenessSeconds", Value: strconv.FormatInt(int64(*c.MaxStaleness/time.Second), 10), Reason: "not allowed with read preference primary (the default)"}
		}
	}
	if c.W != nil && c.W.Tag == "" && c.W.Nodes == 0 && isTrue(c.Journal) {
		return &Error{Option: "journal", Value: "true", Reason: "an unacknowledged write concern (w=0) cannot ask for journaling"}
	}
	if c.MaxPoolSize != nil && *c.MaxPoolSize != 0 && c.MinPoolSize != nil && *c.MinPoolSize > *c.MaxPoolSize {
		return &Error{Option: "minPoolSize", Value: strconv.Itoa(*c.MinPoolSize), Reason: "greater than maxPoolSize " + strconv.Itoa(*c.MaxPoolSize)}
	}
	return nil
}

// validateTLS applies the URI options spec's list of conflicting TLS
// options: each pair below may not both appear, whatever their values.
func (c *ConnString) validateTLS() error {
	type opt struct {
		name string
		set  bool
	}
	insecure := opt{"tlsInsecure", c.TLSInsecure != nil}
	certs := opt{"tlsAllowInvalidCertificates", c.TLSAllowInvalidCertificates != nil}
	hosts := opt{"tlsAllowInvalidHostnames", c.TLSAllowInvalidHostnames != nil}
	ocsp := opt{"tlsDisableOCSPEndpointCheck", c.TLSDisableOCSPEndpointCheck != nil}
	revocation := opt{"tlsDisableCertificateRevocationCheck", c.TLSDisableCertificateRevocationCheck != nil}
	pairs := [][2]opt{
		{insecure, certs}, {insecure, hosts}, {insecure, ocsp}, {insecure, revocation},
		{certs, ocsp}, {certs, revocation}, {ocsp, revocation},
	}
	for _, p := range pairs {
		if p[0].set && p[1].set {
			return &Error{Option: p[0].name, Reason: "cannot be combined with " + p[1].name}
		}
	}
	return nil
}

// validateProxy applies the SOCKS5 spec: the other proxy options need
// proxyHost, and the username and password go together.
func (c *ConnString) validateProxy() error {
	if c.ProxyHost == "" {
		switch {
		case c.ProxyPort != nil:
			return &Error{Option: "proxyPort", Reason: "requires proxyHost"}
		case c.ProxyUsername != "":
			return &Error{Option: "proxyUsername", Reason: "requires proxyHost"}
		case c.ProxyPassword != "":
			return &Error{Option: "proxyPassword", Reason: "requires proxyHost"}
		}
	}
	if c.ProxyUsername != "" && c.ProxyPassword == "" {
		return &Error{Option: "proxyUsername", Reason: "requires proxyPassword"}
	}
	if c.ProxyPassword != "" && c.ProxyUsername == "" {
		return &Error{Option: "proxyPassword", Reason: "requires proxyUsername"}
	}
	return nil
}

// externalSource is the auth source of the mechanisms whose credentials
// live outside MongoDB.
const externalSource = "$external"

// validateAuth applies the auth specification's per-mechanism rules. No
// error repeats a property value: some are credentials.
func (c *ConnString) validateAuth(userinfo, oidcCallback bool) error {
	mech := c.AuthMechanism
	if !userinfo && mech == "" {
		if c.AuthMechanismProperties != nil {
			return &Error{Option: "authMechanismProperties", Reason: "given without authMechanism"}
		}
		return nil
	}
	needUser := func() error {
		if c.Username == "" {
			name := mech
			if name == "" {
				name = "the default mechanism"
			}
			return &Error{Option: "userinfo", Reason: name + " requires a username"}
		}
		return nil
	}
	noPassword := func() error {
		if c.HasPassword {
			return &Error{Option: "userinfo", Value: Redacted, Reason: mech + " does not take a password"}
		}
		return nil
	}
	noProperties := func() error {
		if c.AuthMechanismProperties != nil {
			name := mech
			if name == "" {
				name = "the default mechanism"
			}
			return &Error{Option: "authMechanismProperties", Reason: name + " takes no mechanism properties"}
		}
		return nil
	}
	external := func() error {
		if c.AuthSource != "" && c.AuthSource != externalSource {
			return &Error{Option: "authSource", Value: c.AuthSource, Reason: mech + ` requires authSource "$external"`}
		}
		return nil
	}
	onlyProperties := func(allowed ...string) error {
		for k := range c.AuthMechanismProperties {
			ok := false
			for _, a := range allowed {
				ok = ok || k == a
			}
			if !ok {
				return &Error{Option: "authMechanismProperties", Value: k, Reason: "property not supported by " + mech + " in a connection string"}
			}
		}
		return nil
	}
	first := func(errs ...func() error) error {
		for _, f := range errs {
			if err := f(); err != nil {
				return err
			}
		}
		return nil
	}

	switch mech {
	case "", MechanismSCRAMSHA1, MechanismSCRAMSHA256, MechanismPLAIN:
		return first(needUser, noProperties)
	case MechanismX509:
		return first(noPassword, external, noProperties)
	case MechanismGSSAPI:
		if err := first(needUser, external, func() error {
			return onlyProperties("SERVICE_NAME", "CANONICALIZE_HOST_NAME", "SERVICE_REALM", "SERVICE_HOST")
		}); err != nil {
			return err
		}
		if v, ok := c.AuthMechanismProperties["CANONICALIZE_HOST_NAME"]; ok {
			switch v {
			case "none", "forward", "forwardAndReverse", "true", "false":
			default:
				return &Error{Option: "authMechanismProperties", Value: "CANONICALIZE_HOST_NAME:" + v, Reason: `must be "none", "forward", "forwardAndReverse", "true" or "false"`}
			}
		}
		return nil
	case MechanismAWS:
		// Since 2025-09 the auth spec takes AWS credentials only from the
		// environment or an AWS SDK provider.
		if c.Username != "" || c.HasPassword {
			return &Error{Option: "userinfo", Value: Redacted, Reason: "MONGODB-AWS takes credentials from the environment, not the connection string"}
		}
		if _, ok := c.AuthMechanismProperties["AWS_SESSION_TOKEN"]; ok {
			return &Error{Option: "authMechanismProperties", Value: "AWS_SESSION_TOKEN", Reason: "MONGODB-AWS takes credentials from the environment, not the connection string"}
		}
		return first(external, func() error { return onlyProperties() })
	case MechanismOIDC:
		if err := first(noPassword, external, func() error { return onlyProperties("ENVIRONMENT", "TOKEN_RESOURCE") }); err != nil {
			return err
		}
		env, hasEnv := c.AuthMechanismProperties["ENVIRONMENT"]
		_, hasResource := c.AuthMechanismProperties["TOKEN_RESOURCE"]
		switch {
		case !hasEnv && !oidcCallback:
			return &Error{Option: "authMechanismProperties", Reason: "MONGODB-OIDC needs an ENVIRONMENT property or a callback configured in code"}
		case hasEnv && oidcCallback:
			return &Error{Option: "authMechanismProperties", Value: "ENVIRONMENT", Reason: "MONGODB-OIDC takes an ENVIRONMENT or a callback, not both"}
		case !hasEnv:
			if hasResource {
				return &Error{Option: "authMechanismProperties", Value: "TOKEN_RESOURCE", Reason: "only allowed with ENVIRONMENT azure or gcp"}
			}
			return nil
		}
		switch env {
		case "test", "k8s":
			if hasResource {
				return &Error{Option: "authMechanismProperties", Value: "TOKEN_RESOURCE", Reason: "only allowed with ENVIRONMENT azure or gcp"}
			}
			if env == "test" && c.Username != "" {
				return &Error{Option: "userinfo", Reason: "MONGODB-OIDC with ENVIRONMENT test takes no username"}
			}
		case "azure", "gcp":
			if !hasResource {
				return &Error{Option: "authMechanismProperties", Value: "ENVIRONMENT:" + env, Reason: "requires a TOKEN_RESOURCE property"}
			}
		default:
			return &Error{Option: "authMechanismProperties", Value: "ENVIRONMENT:" + env, Reason: `must be "test", "azure", "gcp" or "k8s"`}
		}
		return nil
	}
	return &Error{Option: "authMechanism", Value: mech, Reason: "unsupported mechanism"}
}

// Credential is the authentication configuration a URI describes, with
// the auth specification's defaults applied.
type Credential struct {
	Username    string
	Password    Secret
	HasPassword bool
	// Source is the database to authenticate against.
	Source string
	// Mechanism is "" when the mechanism is negotiated with the server.
	Mechanism string
	// MechanismProperties includes defaults (GSSAPI's SERVICE_NAME
	// "mongodb"); nil when there are none.
	MechanismProperties map[string]string
}

// Credential returns the credential c configures and true, or false when c
// does not turn authentication on. Userinfo or authMechanism turn it on;
// a database or authSource alone does not.
func (c *ConnString) Credential() (Credential, bool) {
	if c.Username == "" && !c.HasPassword && c.AuthMechanism == "" {
		return Credential{}, false
	}
	cred := Credential{
		Username:    c.Username,
		Password:    c.Password,
		HasPassword: c.HasPassword,
		Source:      c.AuthSource,
		Mechanism:   c.AuthMechanism,
	}
	switch c.AuthMechanism {
	case MechanismGSSAPI, MechanismX509, MechanismAWS, MechanismOIDC:
		// Always: Parse rejects any other authSource for these, and a
		// TXT record's authSource (meant for SCRAM users) must not apply.
		cred.Source = externalSource
	}
	if cred.Source == "" {
		switch c.AuthMechanism {
		case MechanismPLAIN:
			cred.Source = c.Database
			if cred.Source == "" {
				cred.Source = externalSource
			}
		default:
			cred.Source = c.Database
			if cred.Source == "" {
				cred.Source = "admin"
			}
		}
	}
	if c.AuthMechanismProperties != nil || c.AuthMechanism == MechanismGSSAPI {
		cred.MechanismProperties = make(map[string]string, len(c.AuthMechanismProperties)+1)
		for k, v := range c.AuthMechanismProperties {
			cred.MechanismProperties[k] = v
		}
		if _, ok := cred.MechanismProperties["SERVICE_NAME"]; !ok && c.AuthMechanism == MechanismGSSAPI {
			cred.MechanismProperties["SERVICE_NAME"] = "mongodb"
		}
	}
	return cred, true
}

// TLSEnabled reports whether connections use TLS: the tls (or ssl) option
// when given; otherwise true for mongodb+srv, as the seedlist discovery
// spec requires, and true when any other tls-prefixed option is present,
// since asking for a CA file or a client certificate means TLS was meant.
func (c *ConnString) TLSEnabled() bool {
	if c.TLS != nil {
		return *c.TLS
	}
	if c.Scheme == SchemeSRV {
		return true
	}
	return c.TLSCAFile != "" || c.TLSCertificateKeyFile != "" || c.TLSCertificateKeyFilePassword != "" ||
		c.TLSAllowInvalidCertificates != nil || c.TLSAllowInvalidHostnames != nil || c.TLSInsecure != nil ||
		c.TLSDisableOCSPEndpointCheck != nil || c.TLSDisableCertificateRevocationCheck != nil
}
