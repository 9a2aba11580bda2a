// Package tlsconfig turns the TLS URI options (tlsCAFile,
// tlsCertificateKeyFile, tlsCertificateKeyFilePassword, tlsInsecure,
// tlsAllowInvalidCertificates, tlsAllowInvalidHostnames and the two
// revocation options) into a *tls.Config for the connections of one client,
// and derives the per-host copy each connection uses.
//
// Certificate revocation: the Go standard library checks neither CRLs nor
// OCSP (stapled or not) when it verifies a chain, and this package adds no
// such check, so tlsDisableOCSPEndpointCheck and
// tlsDisableCertificateRevocationCheck are accepted and have nothing to
// disable.
package tlsconfig
