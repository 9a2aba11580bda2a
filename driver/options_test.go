package driver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/driver/connstring"
)

// Fields of ClientOptions that have no ConnString counterpart, and
// ConnString fields that have no ClientOptions counterpart.
var (
	codeOnlyFields = map[string]bool{"URI": true, "LenientURI": true, "OnWarning": true, "Resolver": true, "Monitors": true, "Logging": true, "DriverInfo": true, "ServerAPI": true, "Dialer": true, "SpinWait": true}
	uriOnlyFields  = map[string]bool{"Scheme": true, "HasPassword": true}
)

// ClientOptions and ConnString share their options through the embedded
// URIOptions; the few other fields mirror each other by name and type.
func TestFieldsMirrorConnString(t *testing.T) {
	co := reflect.TypeFor[ClientOptions]()
	cs := reflect.TypeFor[connstring.ConnString]()
	for _, typ := range []reflect.Type{co, cs} {
		f, ok := typ.FieldByName("URIOptions")
		if !ok || !f.Anonymous || f.Type != reflect.TypeFor[URIOptions]() {
			t.Errorf("%v does not embed connstring.URIOptions", typ)
		}
	}
	for i := 0; i < cs.NumField(); i++ {
		f := cs.Field(i)
		if uriOnlyFields[f.Name] || f.Anonymous {
			continue
		}
		g, ok := co.FieldByName(f.Name)
		if !ok {
			t.Errorf("ConnString.%s has no ClientOptions field", f.Name)
			continue
		}
		if g.Type != f.Type {
			t.Errorf("ClientOptions.%s is %v, ConnString.%s is %v", g.Name, g.Type, f.Name, f.Type)
		}
	}
	for i := 0; i < co.NumField(); i++ {
		f := co.Field(i)
		if codeOnlyFields[f.Name] || f.Anonymous || !f.IsExported() {
			continue
		}
		if _, ok := cs.FieldByName(f.Name); !ok {
			t.Errorf("ClientOptions.%s has no ConnString field and is not listed in codeOnlyFields", f.Name)
		}
	}
	// Errors name the field of every option.
	for _, f := range reflect.VisibleFields(reflect.TypeFor[URIOptions]()) {
		if got := fieldOf(f.Tag.Get("uri")); got != f.Name {
			t.Errorf("fieldOf(%q) = %q, want %q", f.Tag.Get("uri"), got, f.Name)
		}
	}
}

// sample returns a non-zero value of type typ; n picks one of two
// different values.
func sample(t *testing.T, typ reflect.Type, n int) reflect.Value {
	t.Helper()
	switch typ.Kind() {
	case reflect.Pointer:
		p := reflect.New(typ.Elem())
		p.Elem().Set(sample(t, typ.Elem(), n))
		return p
	case reflect.String:
		return reflect.ValueOf(fmt.Sprintf("v%d", n)).Convert(typ)
	case reflect.Int, reflect.Int64:
		return reflect.ValueOf(int64(n + 1)).Convert(typ)
	case reflect.Bool:
		return reflect.ValueOf(n == 0)
	case reflect.Slice:
		s := reflect.MakeSlice(typ, 1, 1)
		s.Index(0).Set(sample(t, typ.Elem(), n))
		return s
	case reflect.Map:
		m := reflect.MakeMap(typ)
		m.SetMapIndex(sample(t, typ.Key(), n), sample(t, typ.Elem(), n))
		return m
	case reflect.Struct:
		v := reflect.New(typ).Elem()
		v.Field(0).Set(sample(t, v.Field(0).Type(), n))
		return v
	}
	t.Fatalf("no sample for %v", typ)
	return reflect.Value{}
}

// merge takes each option from the URI when the URI sets it, and from
// code otherwise, for every field of URIOptions: a new option needs no
// edit in merge, and this test fails if merge stops walking all of them.
func TestMergeEveryField(t *testing.T) {
	for _, f := range reflect.VisibleFields(reflect.TypeFor[URIOptions]()) {
		code := &connstring.ConnString{Scheme: connstring.SchemeMongoDB, Hosts: []string{"a:1"}}
		uri := &connstring.ConnString{Scheme: connstring.SchemeMongoDB, Hosts: []string{"b:1"}}
		a, b := sample(t, f.Type, 0), sample(t, f.Type, 1)
		field := func(c *connstring.ConnString) reflect.Value {
			return reflect.ValueOf(&c.URIOptions).Elem().FieldByIndex(f.Index)
		}
		field(code).Set(a)
		if got := field(merge(code, uri)); !reflect.DeepEqual(got.Interface(), a.Interface()) {
			t.Errorf("%s: URI unset: merged %v, want the code's %v", f.Name, got, a)
		}
		field(uri).Set(b)
		if got := field(merge(code, uri)); !reflect.DeepEqual(got.Interface(), b.Interface()) {
			t.Errorf("%s: both set: merged %v, want the URI's %v", f.Name, got, b)
		}
		if got := field(merge(code, nil)); !reflect.DeepEqual(got.Interface(), a.Interface()) {
			t.Errorf("%s: no URI: merged %v, want the code's %v", f.Name, got, a)
		}
	}
}

// copyFields carries every mirrored field over, the URI options included.
func TestCopyEveryField(t *testing.T) {
	for _, f := range reflect.VisibleFields(reflect.TypeFor[ClientOptions]()) {
		if codeOnlyFields[f.Name] || f.Anonymous || !f.IsExported() {
			continue
		}
		o := &ClientOptions{}
		v := sample(t, f.Type, 0)
		reflect.ValueOf(o).Elem().FieldByIndex(f.Index).Set(v)
		got := reflect.ValueOf(o.copyFields()).Elem().FieldByName(f.Name)
		if !reflect.DeepEqual(got.Interface(), v.Interface()) {
			t.Errorf("%s: copied %v, want %v", f.Name, got, v)
		}
	}
}

// Every option set in code is checked against the URI option's bounds,
// unless its type cannot be out of bounds. A new field of a checked type
// is covered without an edit; a new type fails here until valueChecks (or
// noBounds, with a reason) handles it.
func TestValueChecksCoverEveryField(t *testing.T) {
	noBounds := map[reflect.Type]string{
		reflect.TypeFor[*bool]():               "true and false are both valid",
		reflect.TypeFor[Secret]():              "any secret is valid",
		reflect.TypeFor[map[string]string]():   "authMechanismProperties are checked by the mechanism rules in Validate",
		reflect.TypeFor[[]map[string]string](): "tag sets have no bounds",
	}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[URIOptions]()) {
		if _, ok := noBounds[f.Type]; ok || f.Name == "AuthMechanism" {
			continue // AuthMechanism: codeConnString checks it by name
		}
		o := &ClientOptions{}
		reflect.ValueOf(&o.URIOptions).Elem().FieldByIndex(f.Index).Set(sample(t, f.Type, 0))
		checks := o.valueChecks()
		if len(checks) == 0 {
			t.Errorf("%s (%v) set in code is not checked", f.Name, f.Type)
			continue
		}
		if checks[0].field.name != f.Name || checks[0].field.option != f.Tag.Get("uri") {
			t.Errorf("%s: check names %+v", f.Name, checks[0].field)
		}
	}
	// Secrets never reach String, fmt or JSON, whichever field holds them.
	o := &ClientOptions{Password: "hunter2"}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[URIOptions]()) {
		if f.Type == reflect.TypeFor[Secret]() {
			reflect.ValueOf(&o.URIOptions).Elem().FieldByIndex(f.Index).SetString("hunter2")
		}
	}
	js, _ := json.Marshal(o)
	for _, out := range []string{o.String(), fmt.Sprintf("%#v", o), fmt.Sprintf("%+v", *o), string(js)} {
		if strings.Contains(out, "hunter2") {
			t.Errorf("a secret is shown: %s", out)
		}
	}
}

// Precedence: defaults < code < URI, whatever the order of the calls.
func TestPrecedence(t *testing.T) {
	cases := []struct {
		name  string
		code  func(o *ClientOptions)
		uri   string
		check func(t *testing.T, c *connstring.ConnString)
	}{
		{
			name: "URI value wins over code value",
			code: func(o *ClientOptions) { o.MaxPoolSize = Ptr(50) },
			uri:  "mongodb://h/?maxPoolSize=20",
			check: func(t *testing.T, c *connstring.ConnString) {
				wantInt(t, "maxPoolSize", c.MaxPoolSize, 20)
			},
		},
		{
			name: "code value kept where the URI is silent",
			code: func(o *ClientOptions) { o.MaxPoolSize = Ptr(50); o.AppName = "svc" },
			uri:  "mongodb://h/?minPoolSize=5",
			check: func(t *testing.T, c *connstring.ConnString) {
				wantInt(t, "maxPoolSize", c.MaxPoolSize, 50)
				wantInt(t, "minPoolSize", c.MinPoolSize, 5)
				if c.AppName != "svc" {
					t.Errorf("appname %q", c.AppName)
				}
			},
		},
		{
			name: "a zero from the URI wins over a non-zero from code",
			code: func(o *ClientOptions) {
				o.MaxPoolSize = Ptr(50)
				o.RetryWrites = Ptr(true)
				o.ConnectTimeout = Ptr(time.Second)
			},
			uri: "mongodb://h/?maxPoolSize=0&retryWrites=false&connectTimeoutMS=0",
			check: func(t *testing.T, c *connstring.ConnString) {
				wantInt(t, "maxPoolSize", c.MaxPoolSize, 0)
				if c.RetryWrites == nil || *c.RetryWrites {
					t.Errorf("retryWrites %v, want false", c.RetryWrites)
				}
				if c.ConnectTimeout == nil || *c.ConnectTimeout != 0 {
					t.Errorf("connectTimeout %v, want 0", c.ConnectTimeout)
				}
			},
		},
		{
			name: "URI hosts replace code hosts",
			code: func(o *ClientOptions) { o.Hosts = []string{"code1:27017", "code2:27017"} },
			uri:  "mongodb://uri1,uri2:27018",
			check: func(t *testing.T, c *connstring.ConnString) {
				if strings.Join(c.Hosts, ",") != "uri1:27017,uri2:27018" {
					t.Errorf("hosts %v", c.Hosts)
				}
			},
		},
		{
			name: "code hosts are normalised like a URI's",
			code: func(o *ClientOptions) {
				o.Hosts = []string{"DB1.Example.com", "[::1]:27018", "/tmp/mongodb-27017.sock"}
			},
			check: func(t *testing.T, c *connstring.ConnString) {
				if strings.Join(c.Hosts, ",") != "db1.example.com:27017,[::1]:27018,/tmp/mongodb-27017.sock" {
					t.Errorf("hosts %v", c.Hosts)
				}
			},
		},
		{
			name: "URI credentials replace code credentials as a pair",
			code: func(o *ClientOptions) { o.Hosts = []string{"h"}; o.Username = "codeuser"; o.Password = "codepass" },
			uri:  "mongodb://uriuser@h",
			check: func(t *testing.T, c *connstring.ConnString) {
				if c.Username != "uriuser" || c.HasPassword || c.Password != "" {
					t.Errorf("user %q password set %v: want the URI's user and no password", c.Username, c.HasPassword)
				}
			},
		},
		{
			name: "code credentials kept when the URI has none",
			code: func(o *ClientOptions) { o.Username = "codeuser"; o.Password = "codepass"; o.AuthSource = "admin" },
			uri:  "mongodb://h/?authSource=other",
			check: func(t *testing.T, c *connstring.ConnString) {
				if c.Username != "codeuser" || string(c.Password) != "codepass" || !c.HasPassword || c.AuthSource != "other" {
					t.Errorf("user %q password %v authSource %q", c.Username, c.HasPassword, c.AuthSource)
				}
			},
		},
		{
			name: "lists are replaced whole",
			code: func(o *ClientOptions) {
				o.ReadPreference = "secondary"
				o.ReadPreferenceTags = []map[string]string{{"dc": "ny"}, {}}
				o.Compressors = []string{"zstd", "zlib"}
			},
			uri: "mongodb://h/?readPreference=secondary&readPreferenceTags=dc:sf&compressors=snappy",
			check: func(t *testing.T, c *connstring.ConnString) {
				if len(c.ReadPreferenceTags) != 1 || c.ReadPreferenceTags[0]["dc"] != "sf" {
					t.Errorf("tags %v", c.ReadPreferenceTags)
				}
				if strings.Join(c.Compressors, ",") != "snappy" {
					t.Errorf("compressors %v", c.Compressors)
				}
				if c.ReadPreference != "secondary" {
					t.Errorf("readPreference %q", c.ReadPreference)
				}
			},
		},
		{
			name: "TLS from the URI wins over code",
			code: func(o *ClientOptions) { o.TLS = Ptr(true) },
			uri:  "mongodb://h/?tls=false",
			check: func(t *testing.T, c *connstring.ConnString) {
				if c.TLSEnabled() {
					t.Error("TLS on")
				}
			},
		},
		{
			name: "code values are normalised like a URI's",
			code: func(o *ClientOptions) {
				o.Hosts = []string{"h"}
				o.ReadPreference = "SecondaryPreferred"
				o.AuthMechanism = "scram-sha-256"
				o.Username = "u"
			},
			check: func(t *testing.T, c *connstring.ConnString) {
				if c.ReadPreference != "secondaryPreferred" || c.AuthMechanism != "SCRAM-SHA-256" {
					t.Errorf("readPreference %q mechanism %q", c.ReadPreference, c.AuthMechanism)
				}
			},
		},
	}
	for _, tc := range cases {
		for _, order := range []string{"code then URI", "URI then code"} {
			t.Run(tc.name+"/"+order, func(t *testing.T) {
				o := &ClientOptions{}
				applyURI := func() {
					if tc.uri == "" {
						return
					}
					if err := o.ApplyURI(tc.uri); err != nil {
						t.Fatal(err)
					}
				}
				if order == "code then URI" {
					tc.code(o)
					applyURI()
				} else {
					applyURI()
					tc.code(o)
				}
				c, err := o.Resolve(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				tc.check(t, c)
			})
		}
	}
}

func wantInt(t *testing.T, name string, got *int, want int) {
	t.Helper()
	if got == nil || *got != want {
		t.Errorf("%s: got %v, want %d", name, got, want)
	}
}

// fakeDNS answers SRV queries for one name and has one TXT record.
type fakeDNS struct {
	srvName string
	targets []string
	txt     string
}

func (f fakeDNS) LookupSRV(ctx context.Context, service, proto, name string) (string, []*net.SRV, error) {
	q := "_" + service + "._" + proto + "." + name
	if q != f.srvName {
		return "", nil, &net.DNSError{Err: "no such host", Name: q, IsNotFound: true}
	}
	var out []*net.SRV
	for _, tg := range f.targets {
		out = append(out, &net.SRV{Target: tg + ".", Port: 27017})
	}
	return "", out, nil
}

func (f fakeDNS) LookupTXT(ctx context.Context, name string) ([]string, error) {
	if f.txt == "" {
		return nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
	}
	return []string{f.txt}, nil
}

// With mongodb+srv the TXT record's options sit between the defaults and
// code: code and URI both override them.
func TestPrecedenceSRV(t *testing.T) {
	dns := fakeDNS{
		srvName: "_mongodb._tcp.cluster0.example.com",
		targets: []string{"a.example.com", "b.example.com"},
		txt:     "replicaSet=txtRS&authSource=txtDB",
	}
	cases := []struct {
		name  string
		code  func(o *ClientOptions)
		uri   string
		check func(t *testing.T, c *connstring.ConnString)
	}{
		{
			name: "TXT fills what code and URI leave unset; TLS implicit",
			code: func(o *ClientOptions) {},
			uri:  "mongodb+srv://cluster0.example.com",
			check: func(t *testing.T, c *connstring.ConnString) {
				if c.ReplicaSet != "txtRS" || c.AuthSource != "txtDB" || !c.TLSEnabled() {
					t.Errorf("replicaSet %q authSource %q TLS %v", c.ReplicaSet, c.AuthSource, c.TLSEnabled())
				}
				if strings.Join(c.Hosts, ",") != "a.example.com:27017,b.example.com:27017" {
					t.Errorf("seeds %v", c.Hosts)
				}
			},
		},
		{
			name: "code overrides TXT, URI overrides code",
			code: func(o *ClientOptions) { o.ReplicaSet = "codeRS"; o.AuthSource = "codeDB" },
			uri:  "mongodb+srv://cluster0.example.com/?authSource=uriDB",
			check: func(t *testing.T, c *connstring.ConnString) {
				if c.ReplicaSet != "codeRS" || c.AuthSource != "uriDB" {
					t.Errorf("replicaSet %q authSource %q", c.ReplicaSet, c.AuthSource)
				}
			},
		},
		{
			name: "tls=false in code turns off the implicit TLS",
			code: func(o *ClientOptions) { o.TLS = Ptr(false) },
			uri:  "mongodb+srv://cluster0.example.com",
			check: func(t *testing.T, c *connstring.ConnString) {
				if c.TLSEnabled() {
					t.Error("TLS on")
				}
			},
		},
		{
			name: "srvMaxHosts from code",
			code: func(o *ClientOptions) { o.SRVMaxHosts = Ptr(1); o.ReplicaSet = ""; o.LenientURI = true },
			uri:  "mongodb+srv://cluster0.example.com/?replicaSet=",
			check: func(t *testing.T, c *connstring.ConnString) {
				t.Fatalf("srvMaxHosts with the TXT replicaSet must fail; got %v", c.Hosts)
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := &ClientOptions{Resolver: dns}
			tc.code(o)
			if err := o.ApplyURI(tc.uri); err != nil {
				t.Fatal(err)
			}
			c, err := o.Resolve(context.Background())
			if err != nil {
				if strings.HasPrefix(tc.name, "srvMaxHosts") && strings.Contains(err.Error(), "srvMaxHosts") {
					return
				}
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

func TestResolveDNSErrors(t *testing.T) {
	o := &ClientOptions{Resolver: fakeDNS{srvName: "_mongodb._tcp.other.example.com"}}
	if err := o.ApplyURI("mongodb+srv://cluster0.example.com"); err != nil {
		t.Fatal(err)
	}
	_, err := o.Resolve(context.Background())
	var se *connstring.SRVError
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T), want *connstring.SRVError", err, err)
	}
	o.Resolver = fakeDNS{srvName: "_mongodb._tcp.cluster0.example.com", targets: []string{"a.example.com"}, txt: "socketTimeoutMS=1"}
	_, err = o.Resolve(context.Background())
	var oe *OptionError
	if !errors.As(err, &oe) || oe.Option != "socketTimeoutMS" || !strings.Contains(err.Error(), "TXT record") {
		t.Fatalf("error %v, want an *OptionError naming socketTimeoutMS in the TXT record", err)
	}
}

const secretPW = "s3cret-Pa55"

// Every rule Validate applies, from code, from the URI, or split between
// them. No error may show a password.
func TestValidate(t *testing.T) {
	hosts2 := []string{"a", "b"}
	cases := []struct {
		name   string
		code   ClientOptions
		uri    string
		option string // the OptionError's Option; "" means valid
		field  string
	}{
		{name: "valid code options", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{MaxPoolSize: Ptr(0), MinPoolSize: Ptr(10), ConnectTimeout: Ptr(time.Duration(0))}}},
		{name: "valid URI", uri: "mongodb://u:" + secretPW + "@a,b/?replicaSet=rs"},
		{name: "no hosts", option: "host", field: "Hosts"},
		{name: "bad host", code: ClientOptions{Hosts: []string{"a:99999"}}, option: "host", field: "Hosts"},
		{name: "host with a comma", code: ClientOptions{Hosts: []string{"a,b"}}, option: "host", field: "Hosts"},
		{name: "socket path without .sock", code: ClientOptions{Hosts: []string{"/tmp/mongo"}}, option: "host", field: "Hosts"},

		{name: "directConnection with several hosts", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{DirectConnection: Ptr(true)}}, option: "directConnection", field: "DirectConnection"},
		{name: "directConnection from code, hosts from URI", code: ClientOptions{URIOptions: URIOptions{DirectConnection: Ptr(true)}}, uri: "mongodb://a,b", option: "directConnection", field: "DirectConnection"},
		{name: "directConnection=true with mongodb+srv", code: ClientOptions{URIOptions: URIOptions{DirectConnection: Ptr(true)}}, uri: "mongodb+srv://c.example.com", option: "directConnection"},
		{name: "loadBalanced with several hosts", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{LoadBalanced: Ptr(true)}}, option: "loadBalanced", field: "LoadBalanced"},
		{name: "loadBalanced with replicaSet", code: ClientOptions{URIOptions: URIOptions{ReplicaSet: "rs"}}, uri: "mongodb://a/?loadBalanced=true", option: "loadBalanced"},
		{name: "loadBalanced with directConnection", code: ClientOptions{Hosts: []string{"a"}, URIOptions: URIOptions{LoadBalanced: Ptr(true), DirectConnection: Ptr(true)}}, option: "loadBalanced"},
		{name: "srvMaxHosts without mongodb+srv", code: ClientOptions{Hosts: []string{"a"}, URIOptions: URIOptions{SRVMaxHosts: Ptr(2)}}, option: "srvMaxHosts", field: "SRVMaxHosts"},
		{name: "srvServiceName without mongodb+srv", code: ClientOptions{Hosts: []string{"a"}, URIOptions: URIOptions{SRVServiceName: "svc"}}, option: "srvServiceName", field: "SRVServiceName"},
		{name: "srvMaxHosts with replicaSet", code: ClientOptions{URIOptions: URIOptions{SRVMaxHosts: Ptr(2), ReplicaSet: "rs"}}, uri: "mongodb+srv://c.example.com", option: "srvMaxHosts", field: "SRVMaxHosts"},
		{name: "srvMaxHosts with loadBalanced", code: ClientOptions{URIOptions: URIOptions{LoadBalanced: Ptr(true)}}, uri: "mongodb+srv://c.example.com/?srvMaxHosts=1", option: "srvMaxHosts"},
		{name: "srvMaxHosts negative", code: ClientOptions{URIOptions: URIOptions{SRVMaxHosts: Ptr(-1)}}, uri: "mongodb+srv://c.example.com", option: "srvMaxHosts", field: "SRVMaxHosts"},
		{name: "srvServiceName invalid", code: ClientOptions{URIOptions: URIOptions{SRVServiceName: "-bad-"}}, uri: "mongodb+srv://c.example.com", option: "srvServiceName"},

		{name: "negative connectTimeout", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{ConnectTimeout: Ptr(-time.Millisecond)}}, option: "connectTimeoutMS", field: "ConnectTimeout"},
		{name: "negative sub-millisecond socketTimeout", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{SocketTimeout: Ptr(-time.Nanosecond)}}, option: "socketTimeoutMS", field: "SocketTimeout"},
		{name: "negative timeout", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{Timeout: Ptr(-time.Second)}}, option: "timeoutMS", field: "Timeout"},
		{name: "zero serverSelectionTimeout", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{ServerSelectionTimeout: Ptr(time.Duration(0))}}, option: "serverSelectionTimeoutMS", field: "ServerSelectionTimeout"},
		{name: "negative localThreshold", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{LocalThreshold: Ptr(-time.Second)}}, option: "localThresholdMS"},
		{name: "negative maxIdleTime", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{MaxIdleTime: Ptr(-time.Second)}}, option: "maxIdleTimeMS"},
		{name: "zero waitQueueTimeout", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{WaitQueueTimeout: Ptr(time.Duration(0))}}, option: "waitQueueTimeoutMS"},
		{name: "negative wTimeout", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{WTimeout: Ptr(-time.Second)}}, option: "wTimeoutMS", field: "WTimeout"},
		{name: "timeout beyond 32 bits of ms", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{ConnectTimeout: Ptr(30 * 24 * time.Hour)}}, option: "connectTimeoutMS"},
		{name: "heartbeatFrequency under 500ms", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{HeartbeatFrequency: Ptr(499 * time.Millisecond)}}, option: "heartbeatFrequencyMS", field: "HeartbeatFrequency"},
		{name: "heartbeatFrequency of 500ms", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{HeartbeatFrequency: Ptr(500 * time.Millisecond)}}},

		{name: "negative maxPoolSize", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{MaxPoolSize: Ptr(-1)}}, option: "maxPoolSize", field: "MaxPoolSize"},
		{name: "negative minPoolSize", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{MinPoolSize: Ptr(-1)}}, option: "minPoolSize", field: "MinPoolSize"},
		{name: "zero maxConnecting", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{MaxConnecting: Ptr(0)}}, option: "maxConnecting", field: "MaxConnecting"},
		{name: "minPoolSize above maxPoolSize", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{MinPoolSize: Ptr(10)}}, uri: "mongodb://a/?maxPoolSize=5", option: "minPoolSize", field: "MinPoolSize"},
		{name: "minPoolSize with unlimited maxPoolSize", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{MinPoolSize: Ptr(10), MaxPoolSize: Ptr(0)}}},
		{name: "negative maxAdaptiveRetries", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{MaxAdaptiveRetries: Ptr(-1)}}, option: "maxAdaptiveRetries"},
		{name: "zlib level too high", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{ZlibCompressionLevel: Ptr(10)}}, option: "zlibCompressionLevel", field: "ZlibCompressionLevel"},
		{name: "unknown compressor", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{Compressors: []string{"zstd", "lz4"}}}, option: "compressors", field: "Compressors"},
		{name: "compressor list in one element", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{Compressors: []string{"zstd,zlib"}}}, option: "compressors", field: "Compressors"},
		{name: "appname too long", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{AppName: strings.Repeat("x", 129)}}, option: "appname", field: "AppName"},
		{name: "unknown serverMonitoringMode", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{ServerMonitoringMode: "push"}}, option: "serverMonitoringMode", field: "ServerMonitoringMode"},

		{name: "unknown readPreference", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{ReadPreference: "closest"}}, option: "readPreference", field: "ReadPreference"},
		{name: "maxStaleness under 90s", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{ReadPreference: "secondary", MaxStaleness: Ptr(89 * time.Second)}}, option: "maxStalenessSeconds", field: "MaxStaleness"},
		{name: "negative maxStaleness", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{ReadPreference: "secondary", MaxStaleness: Ptr(-time.Second)}}, option: "maxStalenessSeconds", field: "MaxStaleness"},
		{name: "maxStaleness with primary", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{MaxStaleness: Ptr(120 * time.Second)}}, option: "maxStalenessSeconds", field: "MaxStaleness"},
		{name: "maxStaleness from code with secondary from URI", code: ClientOptions{URIOptions: URIOptions{MaxStaleness: Ptr(120 * time.Second)}}, uri: "mongodb://a/?readPreference=secondary"},
		{name: "tags with primary", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{ReadPreferenceTags: []map[string]string{{"dc": "ny"}}}}, option: "readPreferenceTags", field: "ReadPreferenceTags"},
		{name: "w=0 with journal", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{W: &W{Nodes: 0}, Journal: Ptr(true)}}, option: "journal", field: "Journal"},
		{name: "w=0 from URI with journal from code", code: ClientOptions{URIOptions: URIOptions{Journal: Ptr(true)}}, uri: "mongodb://a/?w=0", option: "journal"},
		{name: "negative w", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{W: &W{Nodes: -1}}}, option: "w", field: "W"},

		{name: "tlsInsecure with tlsAllowInvalidCertificates", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{TLSInsecure: Ptr(false), TLSAllowInvalidCertificates: Ptr(false)}}, option: "tlsInsecure", field: "TLSInsecure"},
		{name: "tlsInsecure from URI, tlsAllowInvalidHostnames from code", code: ClientOptions{URIOptions: URIOptions{TLSAllowInvalidHostnames: Ptr(true)}}, uri: "mongodb://a/?tlsInsecure=true", option: "tlsInsecure"},
		{name: "tlsInsecure with tlsDisableOCSPEndpointCheck", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{TLSInsecure: Ptr(true), TLSDisableOCSPEndpointCheck: Ptr(true)}}, option: "tlsInsecure"},
		{name: "tlsAllowInvalidCertificates with tlsDisableCertificateRevocationCheck", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{TLSAllowInvalidCertificates: Ptr(true), TLSDisableCertificateRevocationCheck: Ptr(true)}}, option: "tlsAllowInvalidCertificates"},
		{name: "OCSP and revocation checks both disabled", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{TLSDisableOCSPEndpointCheck: Ptr(true), TLSDisableCertificateRevocationCheck: Ptr(true)}}, option: "tlsDisableOCSPEndpointCheck"},

		{name: "proxyPort without proxyHost", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{ProxyPort: Ptr(1080)}}, option: "proxyPort", field: "ProxyPort"},
		{name: "proxyPort out of range", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{ProxyHost: "p", ProxyPort: Ptr(70000)}}, option: "proxyPort"},
		{name: "proxyPassword without proxyUsername", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{ProxyHost: "p", ProxyPassword: secretPW}}, option: "proxyPassword", field: "ProxyPassword"},
		{name: "proxy credentials", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{ProxyHost: "p", ProxyUsername: "pu", ProxyPassword: secretPW}}},

		{name: "password without username", code: ClientOptions{Hosts: hosts2, Password: secretPW}, option: "userinfo", field: "Username"},
		{name: "PLAIN without username", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{AuthMechanism: "PLAIN"}}, option: "userinfo"},
		{name: "SCRAM from code, username from URI", code: ClientOptions{URIOptions: URIOptions{AuthMechanism: "SCRAM-SHA-1"}}, uri: "mongodb://u:" + secretPW + "@a"},
		{name: "X509 from code, password from URI", code: ClientOptions{URIOptions: URIOptions{AuthMechanism: "MONGODB-X509"}}, uri: "mongodb://u:" + secretPW + "@a", option: "userinfo"},
		{name: "X509 with a password", code: ClientOptions{Hosts: hosts2, Username: "CN=x", Password: secretPW, URIOptions: URIOptions{AuthMechanism: "MONGODB-X509"}}, option: "userinfo"},
		{name: "GSSAPI with a database authSource", code: ClientOptions{Hosts: hosts2, Username: "u@R", URIOptions: URIOptions{AuthMechanism: "GSSAPI", AuthSource: "admin"}}, option: "authSource", field: "AuthSource"},
		{name: "unknown mechanism", code: ClientOptions{Hosts: hosts2, Username: "u", URIOptions: URIOptions{AuthMechanism: "KERBEROS5"}}, option: "authMechanism", field: "AuthMechanism"},
		{name: "properties without mechanism", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{AuthMechanismProperties: map[string]string{"SERVICE_NAME": "m"}}}, option: "authMechanismProperties", field: "AuthMechanismProperties"},
		{name: "OIDC TOKEN_RESOURCE with a comma from code", code: ClientOptions{Hosts: hosts2, URIOptions: URIOptions{AuthMechanism: "MONGODB-OIDC", AuthMechanismProperties: map[string]string{"ENVIRONMENT": "azure", "TOKEN_RESOURCE": "api://a,b"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.code
			if tc.uri != "" {
				if err := o.ApplyURI(tc.uri); err != nil {
					t.Fatalf("ApplyURI: %v", err)
				}
			}
			err := o.Validate()
			if tc.option == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			var oe *OptionError
			if !errors.As(err, &oe) {
				t.Fatalf("Validate: %v (%T), want *OptionError for %s", err, err, tc.option)
			}
			if oe.Option != tc.option || (tc.field != "" && oe.Field != tc.field) {
				t.Errorf("Option %q Field %q (%v), want %q %q", oe.Option, oe.Field, err, tc.option, tc.field)
			}
			if strings.Contains(err.Error(), secretPW) || strings.Contains(fmt.Sprintf("%+v", oe), secretPW) {
				t.Errorf("error shows the password: %v", err)
			}
			if _, rerr := o.Resolve(context.Background()); rerr == nil {
				t.Error("Resolve accepted what Validate rejects")
			}
		})
	}
}

func TestApplyURI(t *testing.T) {
	t.Run("error leaves options unchanged and hides the password", func(t *testing.T) {
		o := &ClientOptions{}
		if err := o.ApplyURI("mongodb://a/?maxPoolSize=1"); err != nil {
			t.Fatal(err)
		}
		before := o.URI
		err := o.ApplyURI("mongodb://u:" + secretPW + "@a/?authMechanism=MONGODB-X509")
		var oe *OptionError
		var ce *connstring.Error
		if !errors.As(err, &oe) || !errors.As(err, &ce) {
			t.Fatalf("error %v (%T), want *OptionError wrapping *connstring.Error", err, err)
		}
		if strings.Contains(err.Error(), secretPW) {
			t.Errorf("error shows the password: %v", err)
		}
		if o.URI != before {
			t.Error("a failed ApplyURI replaced the URI")
		}
	})
	t.Run("a second URI replaces the first", func(t *testing.T) {
		o := &ClientOptions{}
		for _, u := range []string{"mongodb://a/?maxPoolSize=1&appname=x", "mongodb://b/?minPoolSize=2"} {
			if err := o.ApplyURI(u); err != nil {
				t.Fatal(err)
			}
		}
		c, err := o.Resolve(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if c.MaxPoolSize != nil || c.AppName != "" || strings.Join(c.Hosts, ",") != "b:27017" {
			t.Errorf("got %v: want only the second URI", c)
		}
	})
	t.Run("a URI may rely on an option set in code, in either order", func(t *testing.T) {
		before := &ClientOptions{URIOptions: URIOptions{ReadPreference: "secondary"}}
		if err := before.ApplyURI("mongodb://a/?readPreferenceTags=dc:ny"); err != nil {
			t.Fatalf("ApplyURI: %v", err)
		}
		after := &ClientOptions{}
		if err := after.ApplyURI("mongodb://a/?readPreferenceTags=dc:ny"); err != nil {
			t.Fatalf("ApplyURI: %v", err)
		}
		after.ReadPreference = "secondary"
		for _, o := range []*ClientOptions{before, after} {
			c, err := o.Resolve(context.Background())
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if c.ReadPreference != "secondary" || len(c.ReadPreferenceTags) != 1 || c.ReadPreferenceTags[0]["dc"] != "ny" {
				t.Errorf("read preference %q tags %v", c.ReadPreference, c.ReadPreferenceTags)
			}
		}
	})
	t.Run("conflicts are reported by Validate on the combination", func(t *testing.T) {
		for uri, option := range map[string]string{
			"mongodb://a/?readPreferenceTags=dc:ny":       "readPreferenceTags",
			"mongodb://a,b/?directConnection=true":        "directConnection",
			"mongodb://a/?loadBalanced=true&replicaSet=r": "loadBalanced",
		} {
			o := &ClientOptions{}
			if err := o.ApplyURI(uri); err != nil {
				t.Fatalf("ApplyURI(%s): %v", uri, err)
			}
			var oe *OptionError
			if err := o.Validate(); !errors.As(err, &oe) || oe.Option != option {
				t.Errorf("Validate after %s: %v, want an error naming %s", uri, err, option)
			}
			if _, err := o.Resolve(context.Background()); !errors.As(err, &oe) || oe.Option != option {
				t.Errorf("Resolve after %s: %v, want an error naming %s", uri, err, option)
			}
		}
	})
	t.Run("ApplyURI still rejects bad values and credentials", func(t *testing.T) {
		for _, uri := range []string{
			"mongodb://a/?authMechanism=MONGODB-X509&authSource=admin",
			"mongodb://u:p@a/?authMechanism=MONGODB-X509",
			"mongodb://a:99999",
		} {
			o := &ClientOptions{}
			err := o.ApplyURI(uri)
			var oe *OptionError
			if !errors.As(err, &oe) {
				t.Errorf("ApplyURI(%s) = %v, want an *OptionError", uri, err)
			}
			if o.URI != nil {
				t.Errorf("ApplyURI(%s) stored the URI despite the error", uri)
			}
		}
	})
	t.Run("warnings reach OnWarning", func(t *testing.T) {
		var got []Warning
		o := &ClientOptions{LenientURI: true, OnWarning: func(w Warning) { got = append(got, w) }}
		if err := o.ApplyURI("mongodb://a/?connectMS=5&maxPoolSize=-1"); err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].Kind != connstring.UnknownOption || got[1].Kind != connstring.InvalidValue {
			t.Errorf("warnings %v", got)
		}
	})
	t.Run("ClientOptionsFromURI", func(t *testing.T) {
		o, err := ClientOptionsFromURI("mongodb://a/?replicaSet=rs")
		if err != nil || o.URI == nil || o.URI.ReplicaSet != "rs" {
			t.Fatalf("%v %v", o, err)
		}
		if _, err := ClientOptionsFromURI("http://a"); err == nil {
			t.Fatal("want an error for a bad scheme")
		}
	})
}

// String, fmt's verbs and JSON never show a secret, whether it was set in
// code or came from the URI.
func TestStringRedacts(t *testing.T) {
	const (
		pw      = "pw-" + secretPW
		keyPW   = "key-" + secretPW
		proxyPW = "proxy-" + secretPW
		uriPW   = "uri-" + secretPW
		uriKey  = "urikey-" + secretPW
		uriPrx  = "uriproxy-" + secretPW
	)
	o := &ClientOptions{
		Hosts:      []string{"a"},
		Username:   "user",
		Password:   pw,
		OnWarning:  func(Warning) {},
		URIOptions: URIOptions{TLSCertificateKeyFilePassword: keyPW, ProxyHost: "p", ProxyUsername: "pu", ProxyPassword: proxyPW, MaxPoolSize: Ptr(7), ConnectTimeout: Ptr(3 * time.Second), AuthMechanismProperties: map[string]string{"ENVIRONMENT": "azure"}},
	}
	if err := o.ApplyURI("mongodb://u:" + uriPW + "@h/?tlsCertificateKeyFilePassword=" + uriKey + "&proxyHost=q&proxyUsername=qu&proxyPassword=" + uriPrx); err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	outputs := map[string]string{
		"String":  o.String(),
		"%v":      fmt.Sprintf("%v", o),
		"%+v":     fmt.Sprintf("%+v", o),
		"%#v":     fmt.Sprintf("%#v", o),
		"%v val":  fmt.Sprintf("%v", *o),
		"%+v val": fmt.Sprintf("%+v", *o),
		"%#v val": fmt.Sprintf("%#v", *o),
		"%s URI":  fmt.Sprintf("%s", o.URI),
		"json":    string(js),
	}
	for name, out := range outputs {
		if strings.Contains(out, secretPW) {
			t.Errorf("%s shows a secret: %s", name, out)
		}
	}
	s := o.String()
	for _, want := range []string{"MaxPoolSize:7", "ConnectTimeout:3s", "Password:xxxxx", "ProxyPassword:xxxxx", `Hosts:[a]`, "OnWarning:set", "u:xxxxx@h"} {
		if !strings.Contains(s, want) {
			t.Errorf("String() = %s; missing %q", s, want)
		}
	}
	// The secrets are still there to be used.
	if string(o.Password) != pw || string(o.URI.Password) != uriPW {
		t.Error("redaction changed the stored secrets")
	}
	// A session token set in code despite the auth specification is a
	// credential: String hides it.
	o.AuthMechanismProperties = map[string]string{"AWS_SESSION_TOKEN": "tok-" + secretPW}
	if s := o.String(); strings.Contains(s, secretPW) || !strings.Contains(s, "AWS_SESSION_TOKEN:xxxxx") {
		t.Errorf("String() = %s", s)
	}
}

func TestOptionErrorFormat(t *testing.T) {
	cases := []struct {
		e    OptionError
		want string
	}{
		{OptionError{Option: "maxPoolSize", Field: "MaxPoolSize", Value: "-1", Reason: "negative"}, `driver: option maxPoolSize (MaxPoolSize) "-1": negative`},
		{OptionError{Option: "userinfo", Field: "Username", Value: connstring.Redacted, Reason: "no"}, `driver: option userinfo (Username) xxxxx: no`},
		{OptionError{Field: "Hosts", Reason: "none"}, `driver: option Hosts: none`},
	}
	for _, c := range cases {
		if got := c.e.Error(); got != c.want {
			t.Errorf("got %s, want %s", got, c.want)
		}
	}
}

func TestMsText(t *testing.T) {
	cases := map[time.Duration]string{
		0: "0", time.Millisecond: "1", 1500 * time.Microsecond: "2", time.Nanosecond: "1",
		-time.Nanosecond: "-1", -time.Millisecond: "-1", -1500 * time.Microsecond: "-2", 2 * time.Second: "2000",
	}
	for d, want := range cases {
		if got := msText(d); got != want {
			t.Errorf("msText(%v) = %s, want %s", d, got, want)
		}
	}
}

// FuzzApplyURI: ApplyURI, Validate, Resolve (no DNS for mongodb://) and
// String never panic, and String never shows the password.
func FuzzApplyURI(f *testing.F) {
	f.Add("mongodb://u:" + secretPW + "@a,b/?replicaSet=rs&maxPoolSize=5")
	f.Add("mongodb://a/?directConnection=true&loadBalanced=true")
	f.Add("mongodb+srv://c.example.com/?srvMaxHosts=2")
	f.Add("mongodb://%2Ftmp%2Fm.sock/db?tls=true&tlsInsecure=false")
	f.Fuzz(func(t *testing.T, uri string) {
		o := &ClientOptions{Username: "code", Password: secretPW, URIOptions: URIOptions{MaxPoolSize: Ptr(3)}}
		if err := o.ApplyURI(uri); err != nil {
			var oe *OptionError
			if !errors.As(err, &oe) {
				t.Fatalf("ApplyURI error %T", err)
			}
			return
		}
		_ = o.Validate()
		if o.URI.Scheme == connstring.SchemeMongoDB {
			_, _ = o.Resolve(context.Background())
		}
		// (Unless the fuzzer wrote the same text into the URI as a
		// non-secret part, such as the username.)
		if s := o.String(); strings.Contains(s, secretPW) && !strings.Contains(uri, secretPW) {
			t.Fatalf("String shows the code password: %s", s)
		}
		if o.URI.HasPassword && len(o.URI.Password) >= 4 && strings.Contains(o.String(), ":"+string(o.URI.Password)+"@") {
			t.Fatalf("String shows the URI password: %s", o.String())
		}
	})
}
