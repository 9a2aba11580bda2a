package connstring_test

import (
	"errors"
	"fmt"

	"github.com/mongoscope/mongoscope/driver/connstring"
)

func ExampleParse() {
	c, err := connstring.Parse("mongodb://app:s3cret@db1.example.com,db2.example.com:27018/inventory?replicaSet=rs0")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Hosts)
	fmt.Println(c.Username, c.Database, c.ReplicaSet)
	fmt.Println(c) // the password is redacted
	// Output:
	// [db1.example.com:27017 db2.example.com:27018]
	// app inventory rs0
	// mongodb://app:xxxxx@db1.example.com:27017,db2.example.com:27018/inventory?replicaSet=rs0
}

func ExampleParse_options() {
	c, err := connstring.Parse("mongodb://h/?maxPoolSize=50&timeoutMS=2500&w=majority&readPreference=secondaryPreferred&tls=true")
	if err != nil {
		fmt.Println(err)
		return
	}
	// Options the URI leaves out are nil (or ""), so defaults stay with
	// the driver.
	if c.MaxPoolSize != nil {
		fmt.Println("maxPoolSize:", *c.MaxPoolSize)
	}
	if c.Timeout != nil {
		fmt.Println("timeout:", *c.Timeout)
	}
	fmt.Println("connectTimeout set:", c.ConnectTimeout != nil)
	fmt.Println("w:", c.W, "readPreference:", c.ReadPreference, "tls:", c.TLSEnabled())
	// Output:
	// maxPoolSize: 50
	// timeout: 2.5s
	// connectTimeout set: false
	// w: majority readPreference: secondaryPreferred tls: true
}

func ExampleWithWarnings() {
	_, err := connstring.Parse("mongodb://h/?connectMS=100&journal=yes&replicaSet=a&replicaSet=b",
		connstring.WithWarnings(func(w connstring.Warning) {
			fmt.Printf("%s: %s\n", w.Kind, w.Message)
		}))
	fmt.Println("error:", err)
	// Output:
	// unknown option: unsupported option "connectMS" ignored
	// invalid value: option journal value "yes" ignored: must be "true" or "false"
	// repeated option: option replicaSet given more than once; the last valid value is used
	// error: <nil>
}

func ExampleWithStrict() {
	_, err := connstring.Parse("mongodb://h/?w=-1", connstring.WithStrict())
	var e *connstring.Error
	if errors.As(err, &e) {
		fmt.Println(e.Option, e.Value)
	}
	fmt.Println(err)
	// Output:
	// w -1
	// connstring: w "-1": must be a non-negative integer or a tag such as "majority"
}

func ExampleConnString_Credential() {
	c, err := connstring.Parse("mongodb://alice:pw@h/sales?authMechanism=SCRAM-SHA-256")
	if err != nil {
		fmt.Println(err)
		return
	}
	cred, ok := c.Credential()
	fmt.Println(ok, cred.Username, cred.Mechanism, cred.Source)
	fmt.Printf("%v\n", cred.Password) // a Secret never prints its value
	// Output:
	// true alice SCRAM-SHA-256 sales
	// xxxxx
}

func ExampleError() {
	_, err := connstring.Parse("mongodb://alice:p@ss@h")
	fmt.Println(err)
	// Output:
	// connstring: userinfo (value redacted): the username and password must be percent-encoded: "@" must be written %40
}
