package connstring

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
)

// DefaultSRVServiceName is the SRV service name used when srvServiceName is
// not given.
const DefaultSRVServiceName = "mongodb"

// SRVError is a failed mongodb+srv seedlist discovery: a DNS query that
// failed or returned nothing, a record that must not be used, or a TXT
// record that cannot be parsed. Name is the DNS name queried, such as
// "_mongodb._tcp.cluster0.example.com" for SRV or "cluster0.example.com"
// for TXT. Err is the resolver's error or, for a bad TXT option, an *Error;
// errors.Is sees context.DeadlineExceeded through it when the caller's
// context ran out.
type SRVError struct {
	Name   string
	Reason string
	Err    error
}

// Error formats e as "connstring: mongodb+srv <name>: <reason>[: <err>]".
func (e *SRVError) Error() string {
	s := "connstring: mongodb+srv " + e.Name + ": " + e.Reason
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error.
func (e *SRVError) Unwrap() error { return e.Err }

// TXTOptions are the options a TXT record may set. The Initial DNS
// Seedlist Discovery specification allows only these three; unset ones
// are "" or nil.
type TXTOptions struct {
	AuthSource   string
	ReplicaSet   string
	LoadBalanced *bool
}

// Seedlist is what DNS says about a mongodb+srv host, before srvMaxHosts
// and before its TXT options are merged with other options.
type Seedlist struct {
	// SRVName is the name whose SRV records were read:
	// "_{srvServiceName}._tcp.{host}".
	SRVName string
	// Hosts are the SRV targets as "host:port", lower-cased, without
	// duplicates, in the order the resolver returned them (the
	// specification tells drivers to ignore priority and weight).
	Hosts []string
	// TXT holds the options of the host's TXT record, if it has one.
	TXT TXTOptions
}

// LookupSeedlist queries the SRV and TXT records of c's mongodb+srv host,
// in parallel, and checks them as the Initial DNS Seedlist Discovery
// specification requires: at least one SRV record; every target inside the
// host's domain (see CheckSRVTarget); at most one TXT record, which may set
// only authSource, replicaSet and loadBalanced, and whose options are
// parsed like a URI's (opts apply: WithWarnings receives its warnings,
// WithStrict makes its invalid values errors). r nil means
// net.DefaultResolver. Timeouts and cancellation come from ctx.
//
// Drivers that merge options from several sources use this; Resolve does
// the whole job for a connection string alone.
func LookupSeedlist(ctx context.Context, c *ConnString, r Resolver, opts ...Option) (*Seedlist, error) {
	if c == nil || c.Scheme != SchemeSRV {
		return nil, &Error{Option: "scheme", Reason: "seedlist discovery needs a " + SchemeSRV + " connection string"}
	}
	if len(c.Hosts) != 1 {
		return nil, &Error{Option: "host", Reason: "a " + SchemeSRV + " connection string has exactly one host name, got " + strconv.Itoa(len(c.Hosts))}
	}
	host := c.Hosts[0]
	if _, _, err := net.SplitHostPort(host); err == nil {
		return nil, &Error{Option: "host", Value: host, Reason: "a " + SchemeSRV + " host name cannot have a port"}
	}
	service := c.SRVServiceName
	if service == "" {
		service = DefaultSRVServiceName
	}
	r = defaultResolver(r)

	// The TXT lookup runs beside the SRV lookup and is always waited for,
	// so no goroutine outlives this call; a failed SRV lookup cancels it.
	txtCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	type txtResult struct {
		recs []string
		err  error
	}
	txtc := make(chan txtResult, 1)
	go func() {
		recs, err := r.LookupTXT(txtCtx, normalizeHost(host))
		txtc <- txtResult{recs, err}
	}()

	hosts, srvErr := LookupSRVHosts(ctx, r, host, service)
	if srvErr != nil {
		cancel()
	}
	txt := <-txtc
	if srvErr != nil {
		return nil, srvErr
	}
	s := &Seedlist{SRVName: srvName(service, host), Hosts: hosts}
	var err error
	s.TXT, err = txtOptions(normalizeHost(host), txt.recs, txt.err, opts)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// LookupSRVHosts returns the validated targets of the SRV records of
// "_{service}._tcp.{host}" as "host:port" (see Seedlist.Hosts). It is the
// SRV half of LookupSeedlist, also used to poll SRV records for mongos
// discovery. r nil means net.DefaultResolver.
func LookupSRVHosts(ctx context.Context, r Resolver, host, service string) ([]string, error) {
	host = normalizeHost(host)
	name := srvName(service, host)
	if err := ctx.Err(); err != nil {
		return nil, &SRVError{Name: name, Reason: "SRV lookup not started", Err: err}
	}
	_, addrs, err := defaultResolver(r).LookupSRV(ctx, service, "tcp", host)
	if err != nil {
		// Go's resolver may return some records with an error for others;
		// a partial answer is not used, as the specification asks for an
		// error whenever a DNS error happens.
		reason := "SRV lookup failed"
		if isNotFound(err) {
			reason = "no SRV records found"
		}
		return nil, &SRVError{Name: name, Reason: reason, Err: err}
	}
	if len(addrs) == 0 {
		return nil, &SRVError{Name: name, Reason: "no SRV records found"}
	}
	hosts := make([]string, 0, len(addrs))
	seen := make(map[string]bool, len(addrs))
	for _, a := range addrs {
		if a == nil {
			continue
		}
		// Check the name as DNS returned it; normalising first would
		// strip a trailing dot twice and hide an empty label.
		if err := CheckSRVTarget(host, a.Target); err != nil {
			return nil, &SRVError{Name: name, Reason: err.Error()}
		}
		target := normalizeHost(a.Target)
		if a.Port == 0 {
			return nil, &SRVError{Name: name, Reason: "SRV target " + strconv.Quote(target) + " has port 0"}
		}
		hp := net.JoinHostPort(target, strconv.Itoa(int(a.Port)))
		if !seen[hp] {
			seen[hp] = true
			hosts = append(hosts, hp)
		}
	}
	if len(hosts) == 0 {
		return nil, &SRVError{Name: name, Reason: "no SRV records found"}
	}
	return hosts, nil
}

// CheckSRVTarget reports whether target, a host name returned by an SRV
// query for the mongodb+srv host srvHost, may be used. Per the Initial DNS
// Seedlist Discovery specification, srvHost's domain is srvHost without its
// first label when srvHost has three or more labels, and srvHost itself
// when it has one or two; target must end with "." followed by that
// domain. For the short names this also gives target at least one more
// label than srvHost, as the specification requires. Names compare
// case-insensitively; one trailing dot is ignored.
func CheckSRVTarget(srvHost, target string) error {
	srvHost = normalizeHost(srvHost)
	target = normalizeHost(target)
	if target == "" {
		// RFC 2782: a target of "." means the service is not offered here.
		return errors.New("SRV target \".\" means the service is not available")
	}
	if strings.HasPrefix(target, ".") || strings.HasSuffix(target, ".") || strings.Contains(target, "..") {
		return errors.New("SRV target " + strconv.Quote(target) + " has an empty label")
	}
	// A target becomes a seed host, so it must pass the same host-name
	// rules as a host written in the URI.
	if why := checkHostName(target); why != "" {
		return errors.New("SRV target " + strconv.Quote(target) + " is not a host name: " + why)
	}
	domain := srvHost
	if strings.Count(srvHost, ".") >= 2 {
		domain = srvHost[strings.IndexByte(srvHost, '.')+1:]
	}
	if target == srvHost && domain == srvHost {
		return errors.New("SRV target " + strconv.Quote(target) + " is the SRV host name itself; it must be a subdomain of " + strconv.Quote(domain))
	}
	if !strings.HasSuffix(target, "."+domain) || len(target) == len(domain)+1 {
		return errors.New("SRV target " + strconv.Quote(target) + " is not in the domain " + strconv.Quote(domain))
	}
	return nil
}

// SelectHosts returns hosts when max is zero, negative or at least
// len(hosts); otherwise max hosts chosen at random with a partial
// Fisher-Yates shuffle, as the specification recommends, from rng (nil
// means the math/rand/v2 global source). hosts is not modified.
func SelectHosts(hosts []string, max int, rng *rand.Rand) []string {
	if max <= 0 || max >= len(hosts) {
		return hosts
	}
	pool := append([]string(nil), hosts...)
	for i := 0; i < max; i++ {
		var j int
		if rng != nil {
			j = i + rng.IntN(len(pool)-i)
		} else {
			j = i + rand.IntN(len(pool)-i)
		}
		pool[i], pool[j] = pool[j], pool[i]
	}
	return pool[:max:max]
}

// Apply returns a copy of c with s merged in, as the specification
// describes: Hosts becomes the seed list (at most srvMaxHosts of s.Hosts,
// chosen with SelectHosts from rng), and each TXT option fills the
// corresponding option only where c leaves it unset. Scheme stays
// SchemeSRV, so TLSEnabled still reports the implicit TLS of mongodb+srv.
// The cross-option rules (srvMaxHosts with replicaSet or loadBalanced,
// loadBalanced with several hosts, ...) are checked on the result. The copy
// shares c's maps and slices other than Hosts.
func (s *Seedlist) Apply(c *ConnString, rng *rand.Rand) (*ConnString, error) {
	out := *c
	if out.AuthSource == "" {
		out.AuthSource = s.TXT.AuthSource
	}
	if out.ReplicaSet == "" {
		out.ReplicaSet = s.TXT.ReplicaSet
	}
	if out.LoadBalanced == nil && s.TXT.LoadBalanced != nil {
		v := *s.TXT.LoadBalanced
		out.LoadBalanced = &v
	}
	maxHosts := 0
	if out.SRVMaxHosts != nil {
		maxHosts = *out.SRVMaxHosts
	}
	// Validation comes before host selection so that srvMaxHosts with
	// replicaSet fails even when srvMaxHosts >= the number of records.
	out.Hosts = append([]string(nil), s.Hosts...)
	if err := validateResolved(&out); err != nil {
		return nil, err
	}
	out.Hosts = append([]string(nil), SelectHosts(out.Hosts, maxHosts, rng)...)
	return &out, nil
}

// Resolve performs mongodb+srv seedlist discovery for c: LookupSeedlist,
// then Seedlist.Apply with a random source. The result is c as if its
// hosts and TXT options had been written in the URI. r nil means
// net.DefaultResolver; opts are those of LookupSeedlist.
func Resolve(ctx context.Context, c *ConnString, r Resolver, opts ...Option) (*ConnString, error) {
	s, err := LookupSeedlist(ctx, c, r, opts...)
	if err != nil {
		return nil, err
	}
	return s.Apply(c, nil)
}

// txtOptions turns the answer to a TXT query into TXTOptions.
func txtOptions(name string, recs []string, lookupErr error, opts []Option) (TXTOptions, error) {
	if lookupErr != nil {
		if isNotFound(lookupErr) {
			return TXTOptions{}, nil
		}
		// A TXT record that cannot be read may hold authSource or
		// replicaSet; connecting without them would silently use the
		// wrong settings.
		return TXTOptions{}, &SRVError{Name: name, Reason: "TXT lookup failed", Err: lookupErr}
	}
	switch len(recs) {
	case 0:
		return TXTOptions{}, nil
	case 1:
	default:
		return TXTOptions{}, &SRVError{Name: name, Reason: "found " + strconv.Itoa(len(recs)) + " TXT records; at most one is allowed"}
	}
	var cfg parseConfig
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	warn := func(w Warning) {
		if cfg.warn != nil {
			w.Message = "TXT record of " + name + ": " + w.Message
			cfg.warn(w)
		}
	}
	popts := []Option{WithWarnings(warn)}
	if cfg.strict {
		popts = append(popts, WithStrict())
	}
	var out TXTOptions
	seen := map[string]bool{}
	for _, pair := range strings.Split(recs[0], "&") {
		if pair == "" {
			continue
		}
		key, _, ok := strings.Cut(pair, "=")
		switch {
		case !ok:
			return TXTOptions{}, &SRVError{Name: name, Reason: "bad TXT record", Err: &Error{Option: key, Reason: "option has no \"=\" and value"}}
		case !txtAllowed(key):
			// The value is left out: an unexpected key may hold a secret.
			return TXTOptions{}, &SRVError{Name: name, Reason: "bad TXT record", Err: &Error{Option: key, Reason: "only authSource, replicaSet and loadBalanced may be set in a TXT record"}}
		}
		// Each pair is parsed on its own, with the URI's decoding and
		// value rules; the rules that tie options together run only once
		// the TXT options are merged with the others, as the
		// specification orders.
		cs, err := Parse("mongodb://txt.invalid/?"+pair, popts...)
		if err != nil {
			return TXTOptions{}, &SRVError{Name: name, Reason: "bad TXT record", Err: err}
		}
		k := strings.ToLower(key)
		if seen[k] {
			warn(Warning{Kind: RepeatedOption, Option: key, Message: "option " + key + " given more than once; the last valid value is used"})
		}
		seen[k] = true
		switch k {
		case "authsource":
			if cs.AuthSource != "" {
				out.AuthSource = cs.AuthSource
			}
		case "replicaset":
			if cs.ReplicaSet != "" {
				out.ReplicaSet = cs.ReplicaSet
			}
		case "loadbalanced":
			if cs.LoadBalanced != nil {
				out.LoadBalanced = cs.LoadBalanced
			}
		}
	}
	return out, nil
}

func txtAllowed(key string) bool {
	switch strings.ToLower(key) {
	case "authsource", "replicaset", "loadbalanced":
		return true
	}
	return false
}

func srvName(service, host string) string {
	return "_" + service + "._tcp." + normalizeHost(host)
}

// normalizeHost lower-cases a DNS name and drops one trailing dot, the
// form in which names are compared.
func normalizeHost(h string) string {
	return strings.ToLower(strings.TrimSuffix(h, "."))
}

func isNotFound(err error) bool {
	var dnsErr *net.DNSError
	return errors.As(err, &dnsErr) && dnsErr.IsNotFound
}
