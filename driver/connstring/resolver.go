package connstring

import (
	"context"
	"net"
)

// Resolver answers the two DNS queries that mongodb+srv seedlist discovery
// needs. Its method set is that of *net.Resolver, so net.DefaultResolver (or
// a configured *net.Resolver) can be passed as is; tests and custom DNS
// setups pass their own implementation.
//
// LookupTXT must return one string per TXT record, the character strings of
// a record concatenated in order, as *net.Resolver does. A name with no
// records of the asked type is reported as a *net.DNSError with IsNotFound
// set. The two methods may be called at the same time: the lookups run in
// parallel.
type Resolver interface {
	LookupSRV(ctx context.Context, service, proto, name string) (cname string, addrs []*net.SRV, err error)
	LookupTXT(ctx context.Context, name string) ([]string, error)
}

// The standard library's resolver must keep satisfying Resolver: it is the
// default.
var _ Resolver = (*net.Resolver)(nil)

// defaultResolver returns r, or net.DefaultResolver when r is nil.
func defaultResolver(r Resolver) Resolver {
	if r == nil {
		return net.DefaultResolver
	}
	return r
}
