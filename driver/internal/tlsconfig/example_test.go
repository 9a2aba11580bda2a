package tlsconfig_test

import (
	"crypto/tls"
	"errors"
	"fmt"

	"github.com/mongoscope/mongoscope/driver/internal/tlsconfig"
)

// The client builds one configuration from its URI options, and every
// connection takes a copy for the host it dials.
func ExampleNew() {
	opts := tlsconfig.Options{
		// From mongodb://db0.example.com,db1.example.com/?tls=true&tlsAllowInvalidHostnames=true
		AllowInvalidHostnames: true,
	}
	base, err := tlsconfig.New(opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, host := range []string{"db0.example.com", "db1.example.com"} {
		cfg := tlsconfig.ForHost(base, host, opts)
		fmt.Println(cfg.ServerName, cfg.MinVersion == tls.VersionTLS12)
	}
	// Output:
	// db0.example.com true
	// db1.example.com true
}

// Errors name the option and the file, and never the password.
func ExampleNew_error() {
	_, err := tlsconfig.New(tlsconfig.Options{
		CertificateKeyFile:         "/nonexistent/client.pem",
		CertificateKeyFilePassword: "secret",
	})
	var e *tlsconfig.Error
	if errors.As(err, &e) {
		fmt.Println(e.Option, e.Path, e.Reason)
	}
	// Output:
	// tlsCertificateKeyFile /nonexistent/client.pem cannot open file
}
