package connstring_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/driver/connstring"
	"github.com/mongoscope/mongoscope/internal/spectest"
)

// zone is a fake DNS zone: SRV and TXT records by lower-cased name
// without the trailing dot. It implements connstring.Resolver the way
// *net.Resolver does: a missing name is a *net.DNSError with IsNotFound,
// and the strings of one TXT record come back concatenated.
type zone struct {
	srv map[string][]*net.SRV
	txt map[string][][]string // name -> records -> character strings
}

func newZone() *zone {
	return &zone{srv: map[string][]*net.SRV{}, txt: map[string][][]string{}}
}

func dnsName(s string) string { return strings.ToLower(strings.TrimSuffix(s, ".")) }

func (z *zone) addSRV(name string, port uint16, target string) {
	n := dnsName(name)
	z.srv[n] = append(z.srv[n], &net.SRV{Target: target, Port: port})
}

func (z *zone) addTXT(name string, strs ...string) {
	n := dnsName(name)
	z.txt[n] = append(z.txt[n], strs)
}

func notFound(name string) error {
	return &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
}

func (z *zone) LookupSRV(ctx context.Context, service, proto, name string) (string, []*net.SRV, error) {
	if err := ctx.Err(); err != nil {
		return "", nil, err
	}
	q := "_" + service + "._" + proto + "." + dnsName(name)
	recs, ok := z.srv[q]
	if !ok {
		return "", nil, notFound(q)
	}
	out := make([]*net.SRV, len(recs))
	for i, r := range recs {
		cp := *r
		out[i] = &cp
	}
	return q + ".", out, nil
}

func (z *zone) LookupTXT(ctx context.Context, name string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	recs, ok := z.txt[dnsName(name)]
	if !ok {
		return nil, notFound(name)
	}
	out := make([]string, len(recs))
	for i, strs := range recs {
		out[i] = strings.Join(strs, "")
	}
	return out, nil
}

// readmeZone builds the zone the seedlist discovery tests were written
// for from the record tables in the suite's README ("Test Setup": the
// ```dns block listing the SRV and TXT records of test.build.10gen.cc), so
// the records are never copied into this repository.
func readmeZone(t *testing.T) *zone {
	t.Helper()
	path := spectest.File(t, "initial-dns-seedlist-discovery", "tests", "README.md")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z := newZone()
	inBlock := false
	nSRV, nTXT := 0, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "```dns"):
			inBlock = true
			continue
		case strings.HasPrefix(line, "```"):
			inBlock = false
			continue
		case !inBlock || line == "":
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 5 || fields[2] != "IN" {
			continue // a table header
		}
		name, typ := fields[0], fields[3]
		switch typ {
		case "SRV":
			if len(fields) != 6 {
				t.Fatalf("README SRV record %q: want name TTL IN SRV port target", line)
			}
			port, err := strconv.ParseUint(fields[4], 10, 16)
			if err != nil {
				t.Fatalf("README SRV record %q: port: %v", line, err)
			}
			z.addSRV(name, uint16(port), fields[5])
			nSRV++
		case "TXT":
			strs, err := txtStrings(line[strings.Index(line, "TXT")+3:])
			if err != nil {
				t.Fatalf("README TXT record %q: %v", line, err)
			}
			z.addTXT(name, strs...)
			nTXT++
		case "A":
		default:
			t.Fatalf("README record %q: unexpected type %s", line, typ)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if nSRV == 0 || nTXT == 0 {
		t.Fatalf("README %s: found %d SRV and %d TXT records; its format changed", path, nSRV, nTXT)
	}
	return z
}

// txtStrings reads the quoted character strings of a TXT record.
func txtStrings(s string) ([]string, error) {
	var out []string
	s = strings.TrimSpace(s)
	for s != "" {
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return nil, err
		}
		u, err := strconv.Unquote(q)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
		s = strings.TrimSpace(s[len(q):])
	}
	if len(out) == 0 {
		return nil, errors.New("no strings")
	}
	return out, nil
}

type seedlistCase struct {
	URI           string         `json:"uri"`
	Seeds         []string       `json:"seeds"`
	NumSeeds      *int           `json:"numSeeds"`
	Hosts         []string       `json:"hosts"`
	NumHosts      *int           `json:"numHosts"`
	Options       map[string]any `json:"options"`
	ParsedOptions map[string]any `json:"parsed_options"`
	Error         bool           `json:"error"`
	Ping          *bool          `json:"ping"`
	Comment       string         `json:"comment"`
}

// Why some assertions cannot run here: both need a MongoDB deployment.
const (
	reasonHostsRS = "hosts: the replica-set members SDAM discovers need a live replica set"
	reasonPing    = "ping: needs a live deployment"
	reasonREADME  = "seeds: the README lists fewer SRV records than the test expects (checked as a subset)"
)

// hostsAreSeeds reports whether a folder's topology keeps the seed list as
// its host list. A mongos or a load balancer never reports other members,
// so after SDAM the hosts are the seeds and "hosts"/"numHosts" are
// checkable against the seeds; a replica set reports its members, which
// differ from the seeds.
func hostsAreSeeds(folder string) bool {
	return folder == "sharded" || folder == "load-balanced"
}

func TestSpecSeedlistDiscovery(t *testing.T) {
	files := spectest.Files(t, "*.json", "initial-dns-seedlist-discovery", "tests")
	z := readmeZone(t)
	type counts struct {
		passed, failed int
		notRunnable    map[string]int
	}
	byFolder := map[string]*counts{}
	var folders []string
	for _, path := range files {
		folder := filepath.Base(filepath.Dir(path))
		c := byFolder[folder]
		if c == nil {
			c = &counts{notRunnable: map[string]int{}}
			byFolder[folder] = c
			folders = append(folders, folder)
		}
		var tc seedlistCase
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &tc); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if !tc.Error && len(tc.Hosts) > 0 && !hostsAreSeeds(folder) {
			c.notRunnable[reasonHostsRS]++
		}
		if !tc.Error && (tc.Ping == nil || *tc.Ping) {
			c.notRunnable[reasonPing]++
		}
		partial := !tc.Error && z.lacksSeeds(tc.URI, tc.Seeds)
		if partial {
			c.notRunnable[reasonREADME]++
		}
		name := folder + "/" + strings.TrimSuffix(filepath.Base(path), ".json")
		if t.Run(name, func(t *testing.T) { runSeedlistCase(t, z, folder, tc, partial) }) {
			c.passed++
		} else {
			c.failed++
		}
	}
	for _, f := range folders {
		c := byFolder[f]
		var reasons []string
		for r, n := range c.notRunnable {
			reasons = append(reasons, fmt.Sprintf("%d× %s", n, r))
		}
		sort.Strings(reasons)
		line := fmt.Sprintf("initial-dns-seedlist-discovery/%s: %d passed, %d failed, 0 skipped", f, c.passed, c.failed)
		if len(reasons) > 0 {
			line += "; assertions not runnable here: " + strings.Join(reasons, "; ")
		}
		t.Log(line)
	}
}

// lacksSeeds reports whether some expected seed of a test is not among
// the README's SRV records for the test's URI: the README's list is then
// incomplete for that test, and only the seeds it has can be checked.
func (z *zone) lacksSeeds(uri string, seeds []string) bool {
	c, err := connstring.Parse(uri)
	if err != nil || len(c.Hosts) != 1 {
		return false
	}
	service := c.SRVServiceName
	if service == "" {
		service = connstring.DefaultSRVServiceName
	}
	have := map[string]bool{}
	for _, r := range z.srv[dnsName("_"+service+"._tcp."+c.Hosts[0])] {
		have[net.JoinHostPort(dnsName(r.Target), strconv.Itoa(int(r.Port)))] = true
	}
	for _, s := range seeds {
		if !have[s] {
			return true
		}
	}
	return false
}

func runSeedlistCase(t *testing.T, z *zone, folder string, tc seedlistCase, partial bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := connstring.Parse(tc.URI)
	if err == nil {
		res, err = connstring.Resolve(ctx, res, z)
	}
	if tc.Error {
		if err == nil {
			t.Fatalf("%s: want an error (%s), got seeds %v", tc.URI, tc.Comment, res.Hosts)
		}
		t.Logf("error as expected: %v", err)
		return
	}
	if err != nil {
		t.Fatalf("%s: %v", tc.URI, err)
	}
	switch {
	case partial:
		assertSubset(t, "seeds", res.Hosts, tc.Seeds)
	case tc.Seeds != nil:
		assertSameSet(t, "seeds", res.Hosts, tc.Seeds)
	}
	if tc.NumSeeds != nil && len(res.Hosts) != *tc.NumSeeds {
		t.Errorf("numSeeds: got %d seeds %v, want %d", len(res.Hosts), res.Hosts, *tc.NumSeeds)
	}
	if hostsAreSeeds(folder) {
		if tc.Hosts != nil {
			assertSameSet(t, "hosts", res.Hosts, tc.Hosts)
		}
		if tc.NumHosts != nil && len(res.Hosts) != *tc.NumHosts {
			t.Errorf("numHosts: got %d, want %d", len(res.Hosts), *tc.NumHosts)
		}
	}
	for k, want := range tc.Options {
		got, ok := optionValue(res, k)
		if !ok {
			t.Errorf("option %s: not handled by this runner", k)
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("option %s: got %v, want %v", k, got, want)
		}
	}
	for k, want := range tc.ParsedOptions {
		var got any
		switch k {
		case "user":
			got = res.Username
		case "password":
			got = string(res.Password)
		case "db", "auth_database", "defaultDatabase":
			got = res.Database
		default:
			t.Errorf("parsed option %s: not handled by this runner", k)
			continue
		}
		if got != want {
			t.Errorf("parsed option %s: got %q, want %q", k, got, want)
		}
	}
}

// optionValue returns a resolved option in the JSON tests' terms.
func optionValue(c *connstring.ConnString, key string) (any, bool) {
	boolOf := func(b *bool) any {
		if b == nil {
			return nil
		}
		return *b
	}
	switch key {
	case "ssl", "tls":
		return c.TLSEnabled(), true
	case "loadBalanced":
		return boolOf(c.LoadBalanced), true
	case "directConnection":
		return boolOf(c.DirectConnection), true
	case "replicaSet":
		return c.ReplicaSet, true
	case "authSource":
		return c.AuthSource, true
	case "srvServiceName":
		return c.SRVServiceName, true
	case "srvMaxHosts":
		if c.SRVMaxHosts == nil {
			return nil, true
		}
		return float64(*c.SRVMaxHosts), true
	}
	return nil, false
}

func assertSameSet(t *testing.T, what string, got, want []string) {
	t.Helper()
	g := append([]string(nil), got...)
	w := append([]string(nil), want...)
	sort.Strings(g)
	sort.Strings(w)
	if strings.Join(g, ",") != strings.Join(w, ",") {
		t.Errorf("%s: got %v, want %v", what, got, want)
	}
}

func assertSubset(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) == 0 {
		t.Errorf("%s: got none, want some of %v", what, want)
	}
	for _, g := range got {
		found := false
		for _, w := range want {
			found = found || g == w
		}
		if !found {
			t.Errorf("%s: got %v, not all among %v", what, got, want)
		}
	}
}

// stub answers every SRV query with the same targets (port 27017) and has
// no TXT records, for the prose tests, which stub DNS results.
type stub struct{ targets []string }

func (s stub) LookupSRV(ctx context.Context, service, proto, name string) (string, []*net.SRV, error) {
	out := make([]*net.SRV, len(s.targets))
	for i, tg := range s.targets {
		out[i] = &net.SRV{Target: tg + ".", Port: 27017}
	}
	return "", out, nil
}

func (s stub) LookupTXT(ctx context.Context, name string) ([]string, error) {
	return nil, notFound(name)
}

func resolveURI(t *testing.T, uri string, r connstring.Resolver) (*connstring.ConnString, error) {
	t.Helper()
	c, err := connstring.Parse(uri)
	if err != nil {
		t.Fatalf("Parse(%q): %v", uri, err)
	}
	return connstring.Resolve(context.Background(), c, r)
}

// The prose tests of the seedlist discovery test README.
func TestSeedlistProse(t *testing.T) {
	t.Run("1 SRV names with fewer than three parts are allowed", func(t *testing.T) {
		for _, c := range []struct{ uri, target string }{
			{"mongodb+srv://localhost", "test_1.localhost"},
			{"mongodb+srv://mongo.local", "test_1.mongo.local"},
		} {
			res, err := resolveURI(t, c.uri, stub{[]string{c.target}})
			if err != nil {
				t.Errorf("%s -> %s: %v", c.uri, c.target, err)
				continue
			}
			if want := c.target + ":27017"; len(res.Hosts) != 1 || res.Hosts[0] != want {
				t.Errorf("%s: seeds %v, want [%s]", c.uri, res.Hosts, want)
			}
		}
	})
	bad := []struct {
		test, uri, target string
	}{
		{"2 not ending with the SRV domain", "mongodb+srv://localhost", "localhost.mongodb"},
		{"2 not ending with the SRV domain", "mongodb+srv://mongo.local", "test_1.evil.local"},
		{"2 not ending with the SRV domain", "mongodb+srv://blogs.mongodb.com", "blogs.evil.com"},
		{"3 identical to the SRV host name", "mongodb+srv://localhost", "localhost"},
		{"3 identical to the SRV host name", "mongodb+srv://mongo.local", "mongo.local"},
		{"4 no dot before the shared domain", "mongodb+srv://localhost", "test_1.cluster_1localhost"},
		{"4 no dot before the shared domain", "mongodb+srv://mongo.local", "test_1.my_hostmongo.local"},
		{"4 no dot before the shared domain", "mongodb+srv://blogs.mongodb.com", "cluster.testmongodb.com"},
	}
	for _, c := range bad {
		t.Run(c.test+" "+c.uri+" "+c.target, func(t *testing.T) {
			res, err := resolveURI(t, c.uri, stub{[]string{c.target}})
			if err == nil {
				t.Fatalf("resolved to %v, want an error", res.Hosts)
			}
			var se *connstring.SRVError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), strconv.Quote(c.target)) {
				t.Errorf("error %v (%T): want an *SRVError naming %q", err, err, c.target)
			}
		})
	}
}

func TestCheckSRVTarget(t *testing.T) {
	cases := []struct {
		host, target string
		ok           bool
	}{
		{"cluster0.example.com", "shard-00.example.com", true},
		{"cluster0.example.com", "shard-00.sub.example.com", true},
		{"cluster0.example.com", "SHARD-00.EXAMPLE.COM.", true},
		{"Cluster0.Example.Com.", "shard-00.example.com", true},
		{"cluster0.example.com", "cluster0.example.com", true}, // three parts: the host shares its own domain
		{"cluster0.example.com", "example.com", false},
		{"cluster0.example.com", "shard.evilexample.com", false},
		{"cluster0.example.com", ".example.com", false},
		{"cluster0.example.com", ".", false},
		{"cluster0.example.com", "", false},
		{"a.b.c.d", "x.b.c.d", true},
		{"a.b.c.d", "x.c.d", false},
		{"mongo.local", "a.mongo.local", true},
		{"mongo.local", "mongo.local", false},
		{"localhost", "a.b.localhost", true},
		{"localhost", "localhost", false},
		{"localhost", "xlocalhost", false},
	}
	for _, c := range cases {
		err := connstring.CheckSRVTarget(c.host, c.target)
		if (err == nil) != c.ok {
			t.Errorf("CheckSRVTarget(%q, %q) = %v, want ok=%v", c.host, c.target, err, c.ok)
		}
	}
}

func TestSelectHosts(t *testing.T) {
	hosts := []string{"a:1", "b:1", "c:1", "d:1", "e:1"}
	orig := append([]string(nil), hosts...)
	for _, max := range []int{-1, 0, 5, 6} {
		if got := connstring.SelectHosts(hosts, max, nil); strings.Join(got, ",") != strings.Join(hosts, ",") {
			t.Errorf("max %d: got %v, want all hosts in order", max, got)
		}
	}
	// Same seed, same choice: the source is injectable for tests.
	a := connstring.SelectHosts(hosts, 2, rand.New(rand.NewPCG(1, 2)))
	b := connstring.SelectHosts(hosts, 2, rand.New(rand.NewPCG(1, 2)))
	if strings.Join(a, ",") != strings.Join(b, ",") {
		t.Errorf("same seed gave %v and %v", a, b)
	}
	// Over many draws every host is chosen, none twice in one draw, and
	// the frequencies are close to uniform.
	rng := rand.New(rand.NewPCG(7, 11))
	freq := map[string]int{}
	const draws = 5000
	for i := 0; i < draws; i++ {
		got := connstring.SelectHosts(hosts, 2, rng)
		if len(got) != 2 || got[0] == got[1] {
			t.Fatalf("draw %d: %v", i, got)
		}
		for _, h := range got {
			freq[h]++
		}
	}
	for _, h := range hosts {
		// Expected 2000 each (2 of 5 per draw); allow a wide margin.
		if freq[h] < 1700 || freq[h] > 2300 {
			t.Errorf("host %s chosen %d times in %d draws of 2 from 5", h, freq[h], draws)
		}
	}
	if strings.Join(hosts, ",") != strings.Join(orig, ",") {
		t.Errorf("SelectHosts modified its input: %v", hosts)
	}
}

// scripted lets each test decide what the resolver answers.
type scripted struct {
	srv func(ctx context.Context, name string) ([]*net.SRV, error)
	txt func(ctx context.Context, name string) ([]string, error)
}

func (s scripted) LookupSRV(ctx context.Context, service, proto, name string) (string, []*net.SRV, error) {
	addrs, err := s.srv(ctx, "_"+service+"._"+proto+"."+name)
	return "", addrs, err
}

func (s scripted) LookupTXT(ctx context.Context, name string) ([]string, error) {
	if s.txt == nil {
		return nil, notFound(name)
	}
	return s.txt(ctx, name)
}

func oneSRV(target string, port uint16) func(context.Context, string) ([]*net.SRV, error) {
	return func(context.Context, string) ([]*net.SRV, error) {
		return []*net.SRV{{Target: target, Port: port}}, nil
	}
}

func txtRecords(recs ...string) func(context.Context, string) ([]string, error) {
	return func(context.Context, string) ([]string, error) { return recs, nil }
}

func TestResolve(t *testing.T) {
	errDNS := errors.New("server failure")
	cases := []struct {
		name    string
		uri     string
		r       scripted
		seeds   []string
		errHas  string // substring of the error; "" means success
		checkFn func(t *testing.T, c *connstring.ConnString)
	}{
		{
			name: "duplicates and case are folded",
			uri:  "mongodb+srv://cluster0.example.com",
			r: scripted{srv: func(context.Context, string) ([]*net.SRV, error) {
				return []*net.SRV{
					{Target: "A.example.com.", Port: 27017},
					{Target: "a.example.com.", Port: 27017},
					{Target: "b.example.com.", Port: 27018},
				}, nil
			}},
			seeds: []string{"a.example.com:27017", "b.example.com:27018"},
		},
		{
			name:   "SRV DNS error",
			uri:    "mongodb+srv://cluster0.example.com",
			r:      scripted{srv: func(context.Context, string) ([]*net.SRV, error) { return nil, errDNS }},
			errHas: "_mongodb._tcp.cluster0.example.com: SRV lookup failed: server failure",
		},
		{
			name:   "no SRV records",
			uri:    "mongodb+srv://cluster0.example.com",
			r:      scripted{srv: func(context.Context, string) ([]*net.SRV, error) { return nil, nil }},
			errHas: "no SRV records found",
		},
		{
			name:   "SRV name not found",
			uri:    "mongodb+srv://cluster0.example.com",
			r:      scripted{srv: func(_ context.Context, n string) ([]*net.SRV, error) { return nil, notFound(n) }},
			errHas: "no SRV records found",
		},
		{
			name:   "target with port 0",
			uri:    "mongodb+srv://cluster0.example.com",
			r:      scripted{srv: oneSRV("a.example.com.", 0)},
			errHas: "port 0",
		},
		{
			name:   "target dot: service not available",
			uri:    "mongodb+srv://cluster0.example.com",
			r:      scripted{srv: oneSRV(".", 27017)},
			errHas: "service is not available",
		},
		{
			name: "custom service name",
			uri:  "mongodb+srv://cluster0.example.com/?srvServiceName=custom",
			r: scripted{srv: func(_ context.Context, n string) ([]*net.SRV, error) {
				return []*net.SRV{{Target: "x.example.com", Port: 1}}, errIf(n != "_custom._tcp.cluster0.example.com", n)
			}},
			seeds: []string{"x.example.com:1"},
		},
		{
			name:   "TXT lookup failure is an error",
			uri:    "mongodb+srv://cluster0.example.com",
			r:      scripted{srv: oneSRV("a.example.com", 27017), txt: func(context.Context, string) ([]string, error) { return nil, errDNS }},
			errHas: "cluster0.example.com: TXT lookup failed",
		},
		{
			name:   "two TXT records",
			uri:    "mongodb+srv://cluster0.example.com",
			r:      scripted{srv: oneSRV("a.example.com", 27017), txt: txtRecords("replicaSet=a", "authSource=b")},
			errHas: "found 2 TXT records",
		},
		{
			name: "empty TXT record sets nothing",
			uri:  "mongodb+srv://cluster0.example.com",
			r:    scripted{srv: oneSRV("a.example.com", 27017), txt: txtRecords("")},
			checkFn: func(t *testing.T, c *connstring.ConnString) {
				if c.ReplicaSet != "" || c.AuthSource != "" || c.LoadBalanced != nil {
					t.Errorf("options set from an empty TXT record: %v", c)
				}
			},
		},
		{
			name:   "TXT option without a value",
			uri:    "mongodb+srv://cluster0.example.com",
			r:      scripted{srv: oneSRV("a.example.com", 27017), txt: txtRecords("replicaSet")},
			errHas: `bad TXT record: connstring: replicaSet: option has no "=" and value`,
		},
		{
			name:   "TXT option not allowed, value not shown",
			uri:    "mongodb+srv://cluster0.example.com",
			r:      scripted{srv: oneSRV("a.example.com", 27017), txt: txtRecords("replicaSet=rs&proxyPassword=hunter2")},
			errHas: "proxyPassword: only authSource, replicaSet and loadBalanced may be set in a TXT record",
		},
		{
			name: "TXT option keys are case-insensitive and URI-decoded values",
			uri:  "mongodb+srv://cluster0.example.com",
			r:    scripted{srv: oneSRV("a.example.com", 27017), txt: txtRecords("REPLICASET=r%26s&authsource=adm")},
			checkFn: func(t *testing.T, c *connstring.ConnString) {
				if c.ReplicaSet != "r&s" || c.AuthSource != "adm" {
					t.Errorf("replicaSet %q authSource %q", c.ReplicaSet, c.AuthSource)
				}
			},
		},
		{
			name: "URI options override TXT options",
			uri:  "mongodb+srv://cluster0.example.com/?replicaSet=fromURI&loadBalanced=false",
			r:    scripted{srv: oneSRV("a.example.com", 27017), txt: txtRecords("replicaSet=fromTXT&authSource=txtdb&loadBalanced=true")},
			checkFn: func(t *testing.T, c *connstring.ConnString) {
				if c.ReplicaSet != "fromURI" || c.AuthSource != "txtdb" || c.LoadBalanced == nil || *c.LoadBalanced {
					t.Errorf("replicaSet %q authSource %q loadBalanced %v", c.ReplicaSet, c.AuthSource, c.LoadBalanced)
				}
				if c.Scheme != connstring.SchemeSRV || !c.TLSEnabled() {
					t.Errorf("scheme %q TLS %v: want mongodb+srv with TLS", c.Scheme, c.TLSEnabled())
				}
			},
		},
		{
			name: "tls=false in the URI turns off the implicit TLS",
			uri:  "mongodb+srv://cluster0.example.com/?tls=false",
			r:    scripted{srv: oneSRV("a.example.com", 27017)},
			checkFn: func(t *testing.T, c *connstring.ConnString) {
				if c.TLSEnabled() {
					t.Error("TLS enabled despite tls=false")
				}
			},
		},
		{
			name: "srvMaxHosts limits the seeds",
			uri:  "mongodb+srv://cluster0.example.com/?srvMaxHosts=2",
			r: scripted{srv: func(context.Context, string) ([]*net.SRV, error) {
				return []*net.SRV{{Target: "a.example.com", Port: 1}, {Target: "b.example.com", Port: 1}, {Target: "c.example.com", Port: 1}}, nil
			}},
			checkFn: func(t *testing.T, c *connstring.ConnString) {
				if len(c.Hosts) != 2 {
					t.Errorf("seeds %v, want 2", c.Hosts)
				}
			},
		},
		{
			name: "loadBalanced from TXT with several hosts",
			uri:  "mongodb+srv://cluster0.example.com",
			r: scripted{srv: func(context.Context, string) ([]*net.SRV, error) {
				return []*net.SRV{{Target: "a.example.com", Port: 1}, {Target: "b.example.com", Port: 1}}, nil
			}, txt: txtRecords("loadBalanced=true")},
			errHas: "loadBalanced \"true\": not allowed with more than one host",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := resolveURI(t, c.uri, c.r)
			if c.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), c.errHas) {
					t.Fatalf("error %v, want one containing %q", err, c.errHas)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Fatalf("error shows a TXT value that may be a secret: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.seeds != nil && strings.Join(res.Hosts, ",") != strings.Join(c.seeds, ",") {
				t.Errorf("seeds %v, want %v", res.Hosts, c.seeds)
			}
			if c.checkFn != nil {
				c.checkFn(t, res)
			}
		})
	}
}

func errIf(cond bool, name string) error {
	if cond {
		return notFound(name)
	}
	return nil
}

func TestResolveWarningsAndStrict(t *testing.T) {
	r := scripted{srv: oneSRV("a.example.com", 27017), txt: txtRecords("loadBalanced=maybe&replicaSet=rs")}
	c, err := connstring.Parse("mongodb+srv://cluster0.example.com")
	if err != nil {
		t.Fatal(err)
	}
	var warnings []connstring.Warning
	res, err := connstring.Resolve(context.Background(), c, r, connstring.WithWarnings(func(w connstring.Warning) { warnings = append(warnings, w) }))
	if err != nil {
		t.Fatal(err)
	}
	if res.LoadBalanced != nil || res.ReplicaSet != "rs" {
		t.Errorf("loadBalanced %v replicaSet %q: the invalid value must be ignored, the valid one kept", res.LoadBalanced, res.ReplicaSet)
	}
	if len(warnings) != 1 || warnings[0].Kind != connstring.InvalidValue || !strings.HasPrefix(warnings[0].Message, "TXT record of cluster0.example.com: ") {
		t.Errorf("warnings %v: want one InvalidValue warning naming the TXT record", warnings)
	}
	if _, err := connstring.Resolve(context.Background(), c, r, connstring.WithStrict()); err == nil {
		t.Error("WithStrict: an invalid TXT value must be an error")
	}
}

func TestResolveContext(t *testing.T) {
	c, err := connstring.Parse("mongodb+srv://cluster0.example.com")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("already cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := connstring.Resolve(ctx, c, readmeLikeZone())
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want one wrapping context.Canceled", err)
		}
	})
	t.Run("deadline during the lookups", func(t *testing.T) {
		// Both lookups block until the context ends, as a resolver whose
		// server does not answer would.
		block := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
		r := scripted{
			srv: func(ctx context.Context, _ string) ([]*net.SRV, error) { return nil, block(ctx) },
			txt: func(ctx context.Context, _ string) ([]string, error) { return nil, block(ctx) },
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := connstring.Resolve(ctx, c, r)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("error %v, want one wrapping context.DeadlineExceeded", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("Resolve took %v after a 20ms deadline", d)
		}
	})
	t.Run("a failed SRV lookup does not wait for a slow TXT lookup", func(t *testing.T) {
		r := scripted{
			srv: func(context.Context, string) ([]*net.SRV, error) { return nil, errors.New("refused") },
			txt: func(ctx context.Context, _ string) ([]string, error) { <-ctx.Done(); return nil, ctx.Err() },
		}
		done := make(chan error, 1)
		go func() { _, err := connstring.Resolve(context.Background(), c, r); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "refused") {
				t.Errorf("error %v, want the SRV failure", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Resolve kept waiting for the TXT lookup after the SRV lookup failed")
		}
	})
}

func readmeLikeZone() *zone {
	z := newZone()
	z.addSRV("_mongodb._tcp.cluster0.example.com", 27017, "a.example.com.")
	return z
}

func TestLookupSeedlistInput(t *testing.T) {
	plain, err := connstring.Parse("mongodb://a.example.com")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*connstring.ConnString{
		nil,
		plain,
		{Scheme: connstring.SchemeSRV},
		{Scheme: connstring.SchemeSRV, Hosts: []string{"a.example.com", "b.example.com"}},
		{Scheme: connstring.SchemeSRV, Hosts: []string{"a.example.com:27017"}},
	} {
		if _, err := connstring.LookupSeedlist(context.Background(), c, readmeLikeZone()); err == nil {
			t.Errorf("LookupSeedlist(%v): want an error", c)
		} else {
			var e *connstring.Error
			if !errors.As(err, &e) {
				t.Errorf("LookupSeedlist(%v): error %T, want *connstring.Error", c, err)
			}
		}
	}
}

func TestSeedlistApply(t *testing.T) {
	c, err := connstring.Parse("mongodb+srv://cluster0.example.com/?srvMaxHosts=1")
	if err != nil {
		t.Fatal(err)
	}
	s := &connstring.Seedlist{Hosts: []string{"a.example.com:1", "b.example.com:1", "c.example.com:1"}}
	first, err := s.Apply(c, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.Apply(c, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Hosts) != 1 || first.Hosts[0] != again.Hosts[0] {
		t.Errorf("seeded selection %v then %v: want one host, the same each time", first.Hosts, again.Hosts)
	}
	if len(c.Hosts) != 1 || c.Hosts[0] != "cluster0.example.com" {
		t.Errorf("Apply modified its input: %v", c.Hosts)
	}
	// srvMaxHosts conflicts with a replicaSet from TXT even when there
	// are fewer records than srvMaxHosts.
	s = &connstring.Seedlist{Hosts: []string{"a.example.com:1"}, TXT: connstring.TXTOptions{ReplicaSet: "rs"}}
	if _, err := s.Apply(c, nil); err == nil || !strings.Contains(err.Error(), "srvMaxHosts") {
		t.Errorf("srvMaxHosts with a TXT replicaSet: error %v", err)
	}
}

// A *net.Resolver works as a Resolver, errors included. Its Dial fails at
// once, so the test sends no DNS traffic and does not depend on the
// machine's network.
func TestNetResolver(t *testing.T) {
	var _ connstring.Resolver = net.DefaultResolver
	r := &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no network in this test")
	}}
	c, err := connstring.Parse("mongodb+srv://cluster0.example.com")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := connstring.Resolve(ctx, c, r)
	var se *connstring.SRVError
	var dnsErr *net.DNSError
	if !errors.As(err, &se) || !errors.As(err, &dnsErr) {
		t.Fatalf("Resolve = %v, %v: want an *SRVError wrapping the resolver's *net.DNSError", res, err)
	}
	if se.Name != "_mongodb._tcp.cluster0.example.com" {
		t.Errorf("SRVError.Name %q", se.Name)
	}
}

// FuzzSeedlist feeds arbitrary SRV host names, targets and TXT records
// through discovery: it must never panic; a target it accepts must lie in
// the host's domain; TXT records may set only the three allowed options;
// and errors about a TXT record never echo the value of an option whose
// name ends in "password".
func FuzzSeedlist(f *testing.F) {
	f.Add("cluster0.example.com", "a.example.com.", uint16(27017), "replicaSet=rs&authSource=admin")
	f.Add("localhost", "localhost", uint16(1), "loadBalanced=true")
	f.Add("mongo.local", "x.mongo.local", uint16(2), "authSource")
	f.Add("a.b.c", ".", uint16(0), "ssl=false")
	f.Add("x", "y.x", uint16(5), "proxyPassword=hunter2&replicaSet=%zz")
	f.Fuzz(func(t *testing.T, host, target string, port uint16, txt string) {
		txt, check := markPasswords(host, target, txt)
		r := scripted{srv: oneSRV(target, port), txt: txtRecords(txt)}
		c := &connstring.ConnString{Scheme: connstring.SchemeSRV, Hosts: []string{host}}
		s, err := connstring.LookupSeedlist(context.Background(), c, r)
		if err != nil {
			if check && strings.Contains(err.Error(), "SECRET") {
				t.Fatalf("error echoes a password value: %v", err)
			}
			return
		}
		if connstring.CheckSRVTarget(host, target) != nil {
			t.Fatalf("accepted target %q for host %q", target, host)
		}
		if len(s.Hosts) != 1 {
			t.Fatalf("hosts %v", s.Hosts)
		}
		h, _, err := net.SplitHostPort(s.Hosts[0])
		if err != nil || !strings.HasSuffix("."+h, "."+strings.ToLower(strings.TrimSuffix(target, "."))) {
			t.Fatalf("seed %q from target %q", s.Hosts[0], target)
		}
		for _, pair := range strings.Split(txt, "&") {
			k, _, _ := strings.Cut(pair, "=")
			switch strings.ToLower(k) {
			case "", "authsource", "replicaset", "loadbalanced":
			default:
				t.Fatalf("TXT %q with option %q accepted", txt, k)
			}
		}
	})
}

// An SRV target with an empty label or a character no host name may hold
// is rejected, whichever way it is checked (found by FuzzSeedlist: "0.Com.."
// passed because the trailing dot was stripped twice, and "].Com" became
// the unusable seed "].com:27017").
func TestSRVTargetMalformed(t *testing.T) {
	for _, target := range []string{"0.Com..", "a..example.com", ".example.com", "x.example.com..", "].Com", "a b.example.com", "[::1].example.com"} {
		host := "example.com"
		if target == "0.Com.." || target == "].Com" {
			host = "Com"
		}
		if err := connstring.CheckSRVTarget(host, target); err == nil {
			t.Errorf("CheckSRVTarget(%q, %q) accepted an empty label", host, target)
		}
		r := scripted{srv: oneSRV(target, 27017)}
		c := &connstring.ConnString{Scheme: connstring.SchemeSRV, Hosts: []string{host}}
		if _, err := connstring.LookupSeedlist(context.Background(), c, r); err == nil {
			t.Errorf("LookupSeedlist accepted SRV target %q for %q", target, host)
		}
	}
	if err := connstring.CheckSRVTarget("example.com", "a.example.com."); err != nil {
		t.Errorf("a fully qualified target with one trailing dot: %v", err)
	}
}

// marker is put in front of every password value FuzzSeedlist feeds in, so
// that an echoed secret is recognisable whatever the fuzzer chose.
const marker = "\x01SECRET\x02"

// markPasswords prefixes the value of every "...password=" pair in txt with
// marker, and reports whether marker occurs nowhere else in the input.
func markPasswords(host, target, txt string) (string, bool) {
	if strings.Contains(host+target+txt, "SECRET") {
		return txt, false
	}
	pairs := strings.Split(txt, "&")
	for i, pair := range pairs {
		k, v, ok := strings.Cut(pair, "=")
		if ok && strings.HasSuffix(strings.ToLower(k), "password") {
			pairs[i] = k + "=" + marker + v
		}
	}
	return strings.Join(pairs, "&"), true
}
