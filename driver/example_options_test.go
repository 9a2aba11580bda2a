package driver_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/mongoscope/mongoscope/driver"
)

// Options from a connection string. Printing them never shows the
// password.
func ExampleClientOptionsFromURI() {
	opts, err := driver.ClientOptionsFromURI("mongodb://app:s3cret@db1.example.com,db2.example.com/?replicaSet=rs0&maxPoolSize=50")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(opts.URI.Hosts, opts.URI.ReplicaSet, *opts.URI.MaxPoolSize)
	fmt.Println(opts)
	// Output:
	// [db1.example.com:27017 db2.example.com:27017] rs0 50
	// driver.ClientOptions{URI:"mongodb://app:xxxxx@db1.example.com:27017,db2.example.com:27017/?replicaSet=rs0&maxPoolSize=50"}
}

// Options set in code. Unset fields take their defaults; pointer fields
// are set with Ptr, because their zero value is a real setting.
func ExampleClientOptions() {
	opts := &driver.ClientOptions{
		Hosts:    []string{"db1.example.com", "db2.example.com:27018"},
		Username: "app",
		Password: "s3cret",
		URIOptions: driver.URIOptions{
			ReplicaSet:     "rs0",
			MaxPoolSize:    driver.Ptr(50),
			ConnectTimeout: driver.Ptr(5 * time.Second),
			RetryWrites:    driver.Ptr(false),
		},
	}
	if err := opts.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(opts)
	// Output:
	// driver.ClientOptions{Hosts:[db1.example.com db2.example.com:27018] Username:"app" Password:xxxxx ConnectTimeout:5s ReplicaSet:"rs0" MaxPoolSize:50 RetryWrites:false}
}

// Code and a URI together: the URI wins where both set an option, whatever
// the order of the calls, and the code's value stays where the URI is
// silent.
func ExampleClientOptions_ApplyURI() {
	opts := &driver.ClientOptions{
		URIOptions: driver.URIOptions{AppName: "billing", MaxPoolSize: driver.Ptr(100)},
	}
	// From the deployment's configuration, for example.
	if err := opts.ApplyURI("mongodb://db.example.com/?maxPoolSize=20"); err != nil {
		fmt.Println(err)
		return
	}
	opts.MaxPoolSize = driver.Ptr(200) // set after ApplyURI: still overridden

	c, err := opts.Resolve(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Hosts, c.AppName, *c.MaxPoolSize)
	// Output:
	// [db.example.com:27017] billing 20
}

// Validate reports conflicts whichever side each option came from, as an
// *OptionError naming the option and the field.
func ExampleClientOptions_Validate() {
	opts := &driver.ClientOptions{URIOptions: driver.URIOptions{MinPoolSize: driver.Ptr(20)}}
	if err := opts.ApplyURI("mongodb://db.example.com/?maxPoolSize=10"); err != nil {
		fmt.Println(err)
		return
	}
	err := opts.Validate()
	fmt.Println(err)
	var oe *driver.OptionError
	if errors.As(err, &oe) {
		fmt.Println(oe.Field)
	}
	// Output:
	// driver: option minPoolSize (MinPoolSize) "20": greater than maxPoolSize 10
	// MinPoolSize
}

// exampleDNS serves one SRV name and one TXT record, standing in for DNS.
type exampleDNS struct{}

func (exampleDNS) LookupSRV(_ context.Context, service, proto, name string) (string, []*net.SRV, error) {
	if service != "mongodb" || proto != "tcp" || name != "cluster0.example.com" {
		return "", nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
	}
	return "", []*net.SRV{
		{Target: "shard-00.example.com.", Port: 27017},
		{Target: "shard-01.example.com.", Port: 27017},
	}, nil
}

func (exampleDNS) LookupTXT(context.Context, string) ([]string, error) {
	return []string{"replicaSet=atlas-rs&authSource=admin"}, nil
}

// Resolve performs the mongodb+srv lookups. The TXT record's options come
// below code and URI: here the code's authSource replaces the TXT one, and
// TLS is on because mongodb+srv implies it.
func ExampleClientOptions_Resolve() {
	opts := &driver.ClientOptions{
		URIOptions: driver.URIOptions{AuthSource: "users"},
		Resolver:   exampleDNS{}, // nil uses net.DefaultResolver
	}
	if err := opts.ApplyURI("mongodb+srv://app:s3cret@cluster0.example.com/"); err != nil {
		fmt.Println(err)
		return
	}
	c, err := opts.Resolve(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Hosts)
	fmt.Println(c.ReplicaSet, c.AuthSource, c.TLSEnabled())
	// Output:
	// [shard-00.example.com:27017 shard-01.example.com:27017]
	// atlas-rs users true
}

// A mistyped value in a URI is an error naming the option; LenientURI
// ignores it with a warning instead, except for a security option such as
// tls, which fails closed. An unknown option is a warning either way.
func ExampleClientOptions_LenientURI() {
	const uri = "mongodb://db.example.com/?readPreference=primay&tls=yes&maxPolSize=5"
	strict := &driver.ClientOptions{}
	fmt.Println(strict.ApplyURI(uri))

	lenient := &driver.ClientOptions{LenientURI: true}
	fmt.Println(lenient.ApplyURI(uri))

	lenient.OnWarning = func(w driver.Warning) { fmt.Println("warning:", w.Message) }
	fmt.Println(lenient.ApplyURI("mongodb://db.example.com/?readPreference=primay&tls=true&maxPolSize=5"))
	// Output:
	// driver: option readPreference (ReadPreference) "primay": unknown mode; use one of primary, primaryPreferred, secondary, secondaryPreferred, nearest
	// driver: option tls (TLS) "yes": must be "true" or "false"
	// warning: option readPreference value "primay" ignored: unknown mode; use one of primary, primaryPreferred, secondary, secondaryPreferred, nearest
	// warning: unsupported option "maxPolSize" ignored
	// <nil>
}
