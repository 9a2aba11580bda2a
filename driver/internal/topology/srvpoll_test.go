package topology

import (
	"context"
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/driver/connstring"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/conn"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
	"github.com/mongoscope/mongoscope/driver/internal/handshake"
	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
	"github.com/mongoscope/mongoscope/mongotest"
)

// The names of the SRV polling prose tests (their README's DNS set-up).
const (
	srvTarget   = "localhost.test.build.10gen.cc"
	srvTest1    = "test1.test.build.10gen.cc"
	srvTest3    = "test3.test.build.10gen.cc"
	srvTest22   = "test22.test.build.10gen.cc"
	fastRescan  = 20 * time.Millisecond
	srvWaitTime = 10 * time.Second
)

// srvAddr is the prose tests' "localhost.test.build.10gen.cc:<port>".
func srvAddr(port uint16) string {
	return net.JoinHostPort(srvTarget, strconv.Itoa(int(port)))
}

func srvAddrs(ports ...uint16) []string {
	out := make([]string, len(ports))
	for i, p := range ports {
		out[i] = srvAddr(p)
	}
	return out
}

// fakeDNS answers SRV queries from records the test changes, and records
// when it was asked.
type fakeDNS struct {
	mu      sync.Mutex
	records map[string][]*net.SRV // by "_service._tcp.name"
	err     error
	hang    bool // wait for the context instead of answering
	calls   []time.Time
	names   []string
}

func newFakeDNS() *fakeDNS { return &fakeDNS{records: map[string][]*net.SRV{}} }

func (f *fakeDNS) LookupSRV(ctx context.Context, service, proto, name string) (string, []*net.SRV, error) {
	f.mu.Lock()
	f.calls = append(f.calls, time.Now())
	key := "_" + service + "._" + proto + "." + name
	f.names = append(f.names, key)
	recs, err, hang := slices.Clone(f.records[key]), f.err, f.hang
	f.mu.Unlock()
	if hang {
		<-ctx.Done()
		return "", nil, &net.DNSError{Err: ctx.Err().Error(), Name: key, IsTimeout: true}
	}
	if err != nil {
		return "", nil, err
	}
	if len(recs) == 0 {
		return "", nil, &net.DNSError{Err: "no such host", Name: key, IsNotFound: true}
	}
	return key, recs, nil
}

func (f *fakeDNS) LookupTXT(_ context.Context, name string) ([]string, error) {
	return nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
}

// set makes the records of _service._tcp.name point at srvTarget on ports.
func (f *fakeDNS) set(service, name string, ports ...uint16) {
	recs := make([]*net.SRV, len(ports))
	for i, p := range ports {
		recs[i] = &net.SRV{Target: srvTarget + ".", Port: p, Priority: uint16(i), Weight: 5}
	}
	f.setRecords(service, name, recs...)
}

func (f *fakeDNS) setRecords(service, name string, recs ...*net.SRV) {
	f.mu.Lock()
	f.records["_"+service+"._tcp."+name] = recs
	f.err = nil
	f.mu.Unlock()
}

func (f *fakeDNS) fail(err error) {
	f.mu.Lock()
	f.err = err
	f.mu.Unlock()
}

func (f *fakeDNS) setHang(h bool) {
	f.mu.Lock()
	f.hang = h
	f.mu.Unlock()
}

func (f *fakeDNS) callTimes() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// waitCalls waits until the resolver has been asked n times in all and
// returns the times of the calls.
func (f *fakeDNS) waitCalls(t *testing.T, n int) []time.Time {
	t.Helper()
	deadline := time.Now().Add(srvWaitTime)
	for {
		c := f.callTimes()
		if len(c) >= n {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("the resolver was asked %d times, want %d", len(c), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// srvCluster is mongotest servers reachable under the prose tests' names:
// the topology sees "localhost.test.build.10gen.cc:<port>" and its
// connections dial the server standing in for that port.
type srvCluster struct {
	addrs map[string]string
	lb    bool
}

func newSRVCluster(t *testing.T, topo func(port uint16) mongotest.Topology, ports ...uint16) *srvCluster {
	c := &srvCluster{addrs: map[string]string{}}
	for _, p := range ports {
		tp := topo(p)
		c.lb = c.lb || tp.Role == mongotest.RoleLoadBalanced
		c.addrs[srvAddr(p)] = mongotest.NewServer(t, mongotest.Options{Topology: tp}).Addr()
	}
	return c
}

func mongosCluster(t *testing.T) *srvCluster {
	return newSRVCluster(t, func(uint16) mongotest.Topology {
		return mongotest.Topology{Role: mongotest.RoleMongos}
	}, 27017, 27018, 27019, 27020)
}

func (c *srvCluster) connConfig(addr string) conn.Config {
	cc := conn.Config{Address: addr, Handshake: handshake.Options{LoadBalanced: c.lb}}
	if real, ok := c.addrs[addr]; ok {
		cc.Address = real
	}
	return cc
}

// srvConfig is an SRV-seeded Config polling dns every fastRescan.
func srvConfig(c *srvCluster, dns *fakeDNS, host string, seeds ...uint16) Config {
	return Config{
		Seeds:                 srvAddrs(seeds...),
		SRVHost:               host,
		Resolver:              dns,
		RescanSRVInterval:     fastRescan,
		HeartbeatFrequency:    100 * time.Millisecond,
		MinHeartbeatFrequency: 10 * time.Millisecond,
		ConnConfig:            c.connConfig,
	}
}

func hostList(d description.TopologyDescription) []string {
	out := make([]string, len(d.Servers))
	for i, s := range d.Servers {
		out[i] = s.Address
	}
	slices.Sort(out)
	return out
}

func hostsAre(want ...string) func(description.TopologyDescription) bool {
	want = slices.Clone(want)
	slices.Sort(want)
	return func(d description.TopologyDescription) bool { return slices.Equal(hostList(d), want) }
}

// allMongos holds when every server is a discovered mongos.
func allMongos(d description.TopologyDescription) bool {
	for _, s := range d.Servers {
		if s.Type != description.Mongos {
			return false
		}
	}
	return d.Type == description.Sharded
}

// pollerRunning looks for the SRV poller's goroutine; one not yet
// scheduled shows only the wrapper of Connect's go statement.
func pollerRunning() bool {
	for _, g := range leaked() {
		if strings.Contains(g, "topology.(*Topology).pollSRV") || strings.Contains(g, "topology.(*Topology).Connect.gowrap") {
			return true
		}
	}
	return false
}

// TestSRVPollingProse runs the prose tests that change DNS records (1-5,
// 10-13): after the change, the topology holds the new hosts, every one of
// them monitored until it is a known mongos.
func TestSRVPollingProse(t *testing.T) {
	tests := []struct {
		name    string
		host    string
		service string // "" is the default, mongodb
		max     int
		before  []uint16
		after   []uint16
		want    []uint16
		// oneOf, when set, is the hosts of which exactly one more than
		// want joins (prose test 12's random choice).
		oneOf []uint16
	}{
		{name: "1 addition", host: srvTest1, before: []uint16{27017, 27018}, after: []uint16{27017, 27018, 27019}, want: []uint16{27017, 27018, 27019}},
		{name: "2 removal", host: srvTest1, before: []uint16{27017, 27018}, after: []uint16{27017}, want: []uint16{27017}},
		{name: "3 replacement", host: srvTest1, before: []uint16{27017, 27018}, after: []uint16{27017, 27019}, want: []uint16{27017, 27019}},
		{name: "4 both replaced by one", host: srvTest1, before: []uint16{27017, 27018}, after: []uint16{27019}, want: []uint16{27019}},
		{name: "5 both replaced by two", host: srvTest1, before: []uint16{27017, 27018}, after: []uint16{27019, 27020}, want: []uint16{27019, 27020}},
		{name: "10 srvMaxHosts 0", host: srvTest1, before: []uint16{27017, 27018}, after: []uint16{27017, 27019, 27020}, want: []uint16{27017, 27019, 27020}},
		{name: "11 srvMaxHosts equal to records", host: srvTest1, max: 2, before: []uint16{27017, 27018}, after: []uint16{27019, 27020}, want: []uint16{27019, 27020}},
		{name: "12 srvMaxHosts below records", host: srvTest1, max: 2, before: []uint16{27017, 27018}, after: []uint16{27017, 27019, 27020}, want: []uint16{27017}, oneOf: []uint16{27019, 27020}},
		{name: "13 custom service name", host: srvTest22, service: "customname", before: []uint16{27017}, after: []uint16{27019, 27020}, want: []uint16{27019, 27020}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mongosCluster(t)
			dns := newFakeDNS()
			service := tt.service
			if service == "" {
				service = DefaultSRVServiceName
			}
			dns.set(service, tt.host, tt.before...)
			cfg := srvConfig(c, dns, tt.host, tt.before...)
			cfg.SRVServiceName = tt.service
			cfg.SRVMaxHosts = tt.max
			topo := newTopology(t, cfg)
			waitFor(t, topo, "the seeds as mongos", func(d description.TopologyDescription) bool {
				return hostsAre(srvAddrs(tt.before...)...)(d) && allMongos(d)
			})

			dns.set(service, tt.host, tt.after...)
			d := waitFor(t, topo, "the new host list", func(d description.TopologyDescription) bool {
				got := hostList(d)
				if len(tt.oneOf) == 0 {
					return hostsAre(srvAddrs(tt.want...)...)(d)
				}
				rest := slices.DeleteFunc(slices.Clone(got), func(a string) bool { return slices.Contains(srvAddrs(tt.want...), a) })
				return len(got) == len(tt.want)+1 && len(rest) == 1 && slices.Contains(srvAddrs(tt.oneOf...), rest[0])
			})
			if tt.max > 0 && len(d.Servers) > tt.max {
				t.Fatalf("%d servers with srvMaxHosts %d: %v", len(d.Servers), tt.max, hostList(d))
			}
			// Further rescans of the same records change nothing, and
			// every host is monitored into a mongos.
			n := len(dns.callTimes())
			dns.waitCalls(t, n+3)
			d = waitFor(t, topo, "every host a mongos", allMongos)
			wantN := len(tt.want)
			if len(tt.oneOf) > 0 {
				wantN++
			}
			if got := hostList(d); len(got) != wantN {
				t.Fatalf("the host list changed on later rescans: %v", got)
			}
			dns.mu.Lock()
			for _, name := range dns.names {
				if want := "_" + service + "._tcp." + tt.host; name != want {
					t.Errorf("queried %q, want %q", name, want)
				}
			}
			dns.mu.Unlock()
		})
	}
}

// TestSRVPollingErrors runs prose tests 6-8 and a rescan whose records are
// all unusable: the host list is kept and the reason reported. Polling
// goes on, so a later good answer still applies.
func TestSRVPollingErrors(t *testing.T) {
	bad := []*net.SRV{{Target: "evil.example.com.", Port: 27019}, {Target: srvTarget + ".", Port: 0}}
	tests := []struct {
		name   string
		break_ func(*fakeDNS)
		reason string
	}{
		{"6 lookup timeout", func(f *fakeDNS) { f.fail(&net.DNSError{Err: "i/o timeout", Name: srvTest1, IsTimeout: true}) }, "i/o timeout"},
		{"7 lookup failure", func(f *fakeDNS) {
			f.fail(&net.DNSError{Err: "no such host", Name: srvTest1, IsNotFound: true})
		}, "no such host"},
		{"8 no records", func(f *fakeDNS) { f.setRecords("mongodb", srvTest1) }, "SRV lookup failed"},
		{"no usable record", func(f *fakeDNS) { f.setRecords("mongodb", srvTest1, bad...) }, "no usable SRV records"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mongosCluster(t)
			dns := newFakeDNS()
			dns.set("mongodb", srvTest1, 27017, 27018)
			var mu sync.Mutex
			var reported []error
			cfg := srvConfig(c, dns, srvTest1, 27017, 27018)
			cfg.OnSRVPollError = func(err error) {
				mu.Lock()
				reported = append(reported, err)
				mu.Unlock()
			}
			topo := newTopology(t, cfg)
			waitFor(t, topo, "the seeds as mongos", allMongos)

			tt.break_(dns)
			n := len(dns.callTimes())
			dns.waitCalls(t, n+3)
			d := topo.Description()
			if got, want := hostList(d), srvAddrs(27017, 27018); !slices.Equal(got, want) || !allMongos(d) {
				t.Fatalf("hosts %v (%s), want %v unchanged", got, d.Type, want)
			}
			mu.Lock()
			var msgs []string
			for _, err := range reported {
				var pe *SRVPollError
				if !errors.As(err, &pe) || pe.Name != "_mongodb._tcp."+srvTest1 {
					t.Errorf("reported %T %v, want an *SRVPollError naming the query", err, err)
				}
				msgs = append(msgs, err.Error())
			}
			mu.Unlock()
			if all := strings.Join(msgs, "\n"); !strings.Contains(all, tt.reason) {
				t.Fatalf("reports %q do not say %q", all, tt.reason)
			}

			dns.set("mongodb", srvTest1, 27017, 27019)
			waitFor(t, topo, "the hosts of the repaired records", hostsAre(srvAddrs(27017, 27019)...))
		})
	}
}

// TestSRVPollingSkipsBadRecords: records outside the SRV host's domain or
// with port 0 are skipped and reported; the others apply.
func TestSRVPollingSkipsBadRecords(t *testing.T) {
	c := mongosCluster(t)
	dns := newFakeDNS()
	dns.set("mongodb", srvTest1, 27017, 27018)
	var mu sync.Mutex
	var reported []string
	cfg := srvConfig(c, dns, srvTest1, 27017, 27018)
	cfg.OnSRVPollError = func(err error) {
		mu.Lock()
		reported = append(reported, err.Error())
		mu.Unlock()
	}
	topo := newTopology(t, cfg)
	dns.setRecords("mongodb", srvTest1,
		&net.SRV{Target: "LOCALHOST.test.build.10gen.cc.", Port: 27019},
		&net.SRV{Target: "evil.example.com.", Port: 27020},
		&net.SRV{Target: srvTarget + ".", Port: 0},
	)
	waitFor(t, topo, "the one good record", hostsAre(srvAddr(27019)))
	mu.Lock()
	all := strings.Join(reported, "\n")
	mu.Unlock()
	for _, want := range []string{`"evil.example.com.:27020"`, `"localhost.test.build.10gen.cc.:0": port 0`} {
		if !strings.Contains(all, want) {
			t.Errorf("reports %q lack %s", all, want)
		}
	}
}

// TestSRVPollingFallbackInterval: after a rescan that found nothing usable
// the next waits heartbeatFrequency; once records are back, the rescan
// interval applies again.
func TestSRVPollingFallbackInterval(t *testing.T) {
	const heartbeat = 400 * time.Millisecond
	c := mongosCluster(t)
	dns := newFakeDNS()
	dns.set("mongodb", srvTest1, 27017)
	cfg := srvConfig(c, dns, srvTest1, 27017)
	cfg.HeartbeatFrequency = heartbeat
	newTopology(t, cfg)
	dns.waitCalls(t, 2)

	dns.fail(&net.DNSError{Err: "server misbehaving", Name: srvTest1, IsTemporary: true})
	n := len(dns.callTimes())
	calls := dns.waitCalls(t, n+2)
	if gap := calls[n+1].Sub(calls[n]); gap < heartbeat*3/4 {
		t.Fatalf("rescan %v after a failed one, want about heartbeatFrequency (%v)", gap, heartbeat)
	}

	dns.set("mongodb", srvTest1, 27017)
	n = len(dns.waitCalls(t, n+3)) // the first good rescan
	calls = dns.waitCalls(t, n+4)
	if span := calls[n+3].Sub(calls[n-1]); span >= 4*heartbeat {
		t.Fatalf("4 rescans took %v after records came back; the fallback interval stuck", span)
	}
}

// TestSRVPollingStops: no rescans for a load-balanced topology (prose test
// 9) or one that starts as a replica set, and they end once discovery
// finds a replica set. A direct connection cannot be combined with SRV.
func TestSRVPollingStops(t *testing.T) {
	t.Run("9 load balanced", func(t *testing.T) {
		c := newSRVCluster(t, func(uint16) mongotest.Topology {
			return mongotest.Topology{Role: mongotest.RoleLoadBalanced}
		}, 27017)
		dns := newFakeDNS()
		dns.set("mongodb", srvTest3, 27017)
		cfg := srvConfig(c, dns, srvTest3, 27017)
		cfg.LoadBalanced = true
		topo := newTopology(t, cfg)
		if pollerRunning() {
			t.Fatal("an SRV poller runs in load-balanced mode")
		}
		dns.set("mongodb", srvTest3, 27017, 27018)
		time.Sleep(5 * fastRescan)
		if got := hostList(topo.Description()); !slices.Equal(got, srvAddrs(27017)) {
			t.Fatalf("hosts %v, want only %s", got, srvAddr(27017))
		}
		if n := len(dns.callTimes()); n != 0 {
			t.Fatalf("%d SRV rescans in load-balanced mode", n)
		}
	})

	rsMember := func(uint16) mongotest.Topology {
		return mongotest.Topology{Role: mongotest.RolePrimary, SetName: "rs", Me: srvAddr(27017), Hosts: srvAddrs(27017)}
	}
	t.Run("replica set name", func(t *testing.T) {
		c := newSRVCluster(t, rsMember, 27017)
		dns := newFakeDNS()
		dns.set("mongodb", srvTest3, 27017, 27018)
		cfg := srvConfig(c, dns, srvTest3, 27017)
		cfg.SetName = "rs"
		topo := newTopology(t, cfg)
		if pollerRunning() {
			t.Fatal("an SRV poller runs for a replica set")
		}
		waitFor(t, topo, "the primary", hasPrimary(srvAddr(27017)))
		time.Sleep(5 * fastRescan)
		if n := len(dns.callTimes()); n != 0 {
			t.Fatalf("%d SRV rescans of a replica set", n)
		}
	})

	t.Run("discovered replica set", func(t *testing.T) {
		c := newSRVCluster(t, rsMember, 27017)
		dns := newFakeDNS()
		dns.set("mongodb", srvTest3, 27017)
		topo := newTopology(t, srvConfig(c, dns, srvTest3, 27017))
		waitFor(t, topo, "the primary", hasPrimary(srvAddr(27017)))
		dns.set("mongodb", srvTest3, 27017, 27018)
		deadline := time.Now().Add(srvWaitTime)
		for pollerRunning() {
			if time.Now().After(deadline) {
				t.Fatal("the SRV poller still runs for a replica set")
			}
			time.Sleep(5 * time.Millisecond)
		}
		n := len(dns.callTimes())
		time.Sleep(5 * fastRescan)
		if m := len(dns.callTimes()); m != n {
			t.Fatalf("%d SRV rescans after the topology became a replica set", m-n)
		}
		if got := hostList(topo.Description()); !slices.Equal(got, srvAddrs(27017)) {
			t.Fatalf("hosts %v, want only %s", got, srvAddr(27017))
		}
	})

	// Fed descriptions, not monitors, make the topology a replica set
	// well before the first rescan is due: that rescan must not query DNS.
	t.Run("no query once a replica set", func(t *testing.T) {
		dns := newFakeDNS()
		dns.set("mongodb", srvTest3, 27017, 27018)
		cfg := srvConfig(&srvCluster{}, dns, srvTest3, 27017)
		cfg.RescanSRVInterval = 300 * time.Millisecond
		topo, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		topo.noMonitors = true
		if err := topo.Connect(); err != nil {
			t.Fatal(err)
		}
		defer topo.Close()
		feed(t, topo, srvAddr(27017), []byte(`{"ok": 1, "isWritablePrimary": true, "setName": "rs", "hosts": ["`+srvAddr(27017)+`"], "minWireVersion": 0, "maxWireVersion": 21}`))
		if d := topo.Description(); d.Type != description.ReplicaSetWithPrimary {
			t.Fatalf("fed a primary, topology %s", d.Type)
		}
		if !pollerRunning() {
			t.Fatal("no SRV poller for an Unknown topology")
		}
		deadline := time.Now().Add(srvWaitTime)
		for pollerRunning() {
			if time.Now().After(deadline) {
				t.Fatal("the SRV poller still runs for a replica set")
			}
			time.Sleep(5 * time.Millisecond)
		}
		if n := len(dns.callTimes()); n != 0 {
			t.Fatalf("%d SRV queries for a replica set", n)
		}
	})

	t.Run("direct connection", func(t *testing.T) {
		_, err := New(Config{Seeds: srvAddrs(27017), SRVHost: srvTest3, DirectConnection: true, ConnConfig: connConfig})
		var de *description.ConfigError
		if !errors.As(err, &de) || de.Field != "DirectConnection" {
			t.Fatalf("New = %v, want a DirectConnection config error", err)
		}
	})
}

// TestSRVPollingEvents: an added host gets ServerOpening and a monitor
// that discovers it; a removed one gets ServerClosed and its pool is
// closed; Close stops the poller, even in a hanging lookup, and leaves no
// goroutine behind.
func TestSRVPollingEvents(t *testing.T) {
	c := mongosCluster(t)
	dns := newFakeDNS()
	dns.set("mongodb", srvTest1, 27017, 27018)
	rec := &eventtest.Recorder{}
	cfg := srvConfig(c, dns, srvTest1, 27017, 27018)
	cfg.Events = event.NewDispatcher(rec)
	cfg.ConnectTimeout = time.Minute // the hanging lookup must end by Close, not by a timeout
	topo, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := topo.Connect(); err != nil {
		t.Fatal(err)
	}
	defer topo.Close()
	waitFor(t, topo, "the seeds as mongos", allMongos)
	old, ok := topo.Server(srvAddr(27017))
	if !ok {
		t.Fatal("no server for the seed")
	}
	before := len(topologyEvents(rec))

	dns.set("mongodb", srvTest1, 27018, 27019)
	waitFor(t, topo, "the new host a mongos", func(d description.TopologyDescription) bool {
		return hostsAre(srvAddrs(27018, 27019)...)(d) && allMongos(d)
	})
	var kinds []string
	for _, e := range topologyEvents(rec)[before:] {
		switch e := e.(type) {
		case *event.ServerClosed:
			kinds = append(kinds, "closed "+e.Address)
		case *event.ServerOpening:
			kinds = append(kinds, "opening "+e.Address)
		case *event.TopologyDescriptionChanged:
			if len(kinds) > 0 && !strings.HasPrefix(kinds[len(kinds)-1], "changed") {
				kinds = append(kinds, "changed")
			}
		}
	}
	if got, want := strings.Join(kinds, ", "), "closed "+srvAddr(27017)+", opening "+srvAddr(27019)+", changed"; got != want {
		t.Fatalf("events %q, want %q", got, want)
	}
	deadline := time.Now().Add(srvWaitTime)
	for old.Pool().Stats().State != "closed" {
		if time.Now().After(deadline) {
			t.Fatal("the removed server's pool was not closed")
		}
		time.Sleep(5 * time.Millisecond)
	}

	dns.setHang(true)
	dns.waitCalls(t, len(dns.callTimes())+1)
	if !pollerRunning() {
		t.Fatal("no SRV poller found while connected: the leak check would prove nothing")
	}
	done := make(chan struct{})
	go func() { topo.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(srvWaitTime):
		t.Fatal("Close waits for a hanging SRV lookup")
	}
	if g := settled(); len(g) > 0 {
		t.Fatalf("%d goroutines left after Close:\n%s", len(g), strings.Join(g, "\n\n"))
	}
	closed := 0
	for _, e := range topologyEvents(rec) {
		if e, ok := e.(*event.ServerClosed); ok && (e.Address == srvAddr(27018) || e.Address == srvAddr(27019)) {
			closed++
		}
	}
	if closed != 2 {
		t.Fatalf("%d ServerClosed events for the remaining hosts at Close, want 2", closed)
	}
}

func TestSRVConfig(t *testing.T) {
	base := func(mod func(*Config)) Config {
		c := Config{Seeds: []string{"a.example.com:27017"}, SRVHost: "x.example.com", ConnConfig: connConfig}
		mod(&c)
		return c
	}
	tests := []struct {
		name  string
		cfg   Config
		field string
	}{
		{"negative interval", base(func(c *Config) { c.RescanSRVInterval = -1 }), "RescanSRVInterval"},
		{"negative max hosts", base(func(c *Config) { c.SRVMaxHosts = -1 }), "SRVMaxHosts"},
		{"service name without SRV", base(func(c *Config) { c.SRVHost, c.SRVServiceName = "", "custom" }), "SRVServiceName"},
		{"max hosts without SRV", base(func(c *Config) { c.SRVHost, c.SRVMaxHosts = "", 2 }), "SRVMaxHosts"},
		{"max hosts load balanced", base(func(c *Config) { c.SRVMaxHosts, c.LoadBalanced = 1, true }), "SRVMaxHosts"},
		{"max hosts replica set", base(func(c *Config) { c.SRVMaxHosts, c.SetName = 1, "rs" }), "SRVMaxHosts"},
		{"host with port", base(func(c *Config) { c.SRVHost = "x.example.com:27017" }), "SRVHost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Field != tt.field {
				t.Fatalf("err = %v, want a config error for %s", err, tt.field)
			}
		})
	}
	topo, err := New(base(func(*Config) {}))
	if err != nil {
		t.Fatal(err)
	}
	if topo.cfg.SRVServiceName != DefaultSRVServiceName || topo.cfg.RescanSRVInterval != DefaultRescanSRVInterval {
		t.Fatalf("SRV defaults not applied: %q %v", topo.cfg.SRVServiceName, topo.cfg.RescanSRVInterval)
	}
	topo.Close()
}

func TestSRVHosts(t *testing.T) {
	tests := []struct {
		name    string
		recs    []*net.SRV
		hosts   string
		skipped string
	}{
		{"none", nil, "", ""},
		{"nil record", []*net.SRV{nil, {Target: "a.test.build.10gen.cc.", Port: 1}}, "a.test.build.10gen.cc:1", ""},
		{"case and dot", []*net.SRV{{Target: "A.Test.Build.10gen.cc.", Port: 27017}}, "a.test.build.10gen.cc:27017", ""},
		{"no trailing dot", []*net.SRV{{Target: "a.test.build.10gen.cc", Port: 27017}}, "a.test.build.10gen.cc:27017", ""},
		{"dns order kept", []*net.SRV{{Target: "b.test.build.10gen.cc.", Port: 2, Priority: 9}, {Target: "a.test.build.10gen.cc.", Port: 1}}, "b.test.build.10gen.cc:2 a.test.build.10gen.cc:1", ""},
		{"other domain", []*net.SRV{{Target: "a.example.com.", Port: 1}, {Target: "b.test.build.10gen.cc.", Port: 2}}, "b.test.build.10gen.cc:2", "a.example.com.:1"},
		{"domain suffix only", []*net.SRV{{Target: "evil-test.build.10gen.cc.", Port: 1}}, "", "evil-test.build.10gen.cc.:1"},
		{"the srv host itself", []*net.SRV{{Target: "test1.test.build.10gen.cc.", Port: 1}}, "test1.test.build.10gen.cc:1", ""},
		{"root target", []*net.SRV{{Target: ".", Port: 1}}, "", ".:1"},
		{"port 0", []*net.SRV{{Target: "a.test.build.10gen.cc.", Port: 0}}, "", "a.test.build.10gen.cc.:0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hosts, skipped := srvHosts(srvTest1, tt.recs)
			var sk []string
			for _, e := range skipped {
				sk = append(sk, e.Target)
				if e.Reason == "" {
					t.Errorf("no reason for skipping %s", e.Target)
				}
			}
			if got := strings.Join(hosts, " "); got != tt.hosts {
				t.Errorf("hosts %q, want %q", got, tt.hosts)
			}
			if got := strings.Join(sk, " "); got != tt.skipped {
				t.Errorf("skipped %q, want %q", got, tt.skipped)
			}
		})
	}
}

func TestSRVPollErrorMessage(t *testing.T) {
	tests := []struct {
		err  *SRVPollError
		want string
	}{
		{&SRVPollError{Name: "_mongodb._tcp.a.b.c", Reason: "SRV lookup failed", Err: errors.New("boom")}, "topology: SRV rescan of _mongodb._tcp.a.b.c: SRV lookup failed: boom"},
		{&SRVPollError{Name: "_mongodb._tcp.a.b.c", Target: "x.y:1", Reason: "port 0"}, `topology: SRV rescan of _mongodb._tcp.a.b.c: record "x.y:1": port 0`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
	inner := &net.DNSError{Err: "x", IsTimeout: true}
	var de *net.DNSError
	if !errors.As(error(&SRVPollError{Err: inner}), &de) {
		t.Error("Unwrap does not reach the resolver's error")
	}
}

// FuzzSRVHosts: any record set yields only hosts inside the SRV host's
// domain with a non-zero port, and every record is either used or skipped.
func FuzzSRVHosts(f *testing.F) {
	f.Add(srvTest1, "localhost.test.build.10gen.cc.", uint16(27017), "evil.example.com.", uint16(1))
	f.Add("a.b", "x.a.b", uint16(0), ".", uint16(9))
	f.Add("localhost", "db.localhost.", uint16(1), "localhost.", uint16(2))
	f.Add("", "", uint16(0), "..", uint16(65535))
	f.Add("Test1.Test.Build.10gen.CC.", "A.TEST.BUILD.10GEN.CC", uint16(5), "a..test.build.10gen.cc", uint16(6))
	f.Fuzz(func(t *testing.T, host, t1 string, p1 uint16, t2 string, p2 uint16) {
		recs := []*net.SRV{{Target: t1, Port: p1}, nil, {Target: t2, Port: p2}}
		hosts, skipped := srvHosts(host, recs)
		if len(hosts)+len(skipped) != 2 {
			t.Fatalf("%d hosts and %d skipped from 2 records", len(hosts), len(skipped))
		}
		for _, h := range hosts {
			name, port, err := net.SplitHostPort(h)
			if err != nil || port == "0" {
				t.Fatalf("host %q: %v", h, err)
			}
			if err := connstring.CheckSRVTarget(host, name); err != nil {
				t.Fatalf("host %q outside %q: %v", h, host, err)
			}
		}
	})
}
