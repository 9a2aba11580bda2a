package tlsconfig

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// maxFileSize bounds what is read from a certificate or key file, so that a
// path naming a device or a huge file fails instead of filling memory.
const maxFileSize = 16 << 20

// readFile reads a whole option file, at most maxFileSize bytes.
func readFile(option, path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{Option: option, Path: path, Reason: "cannot open file", Err: err}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, &Error{Option: option, Path: path, Reason: "cannot read file", Err: err}
	}
	if len(data) > maxFileSize {
		return nil, &Error{Option: option, Path: path, Reason: fmt.Sprintf("file is larger than %d bytes", maxFileSize)}
	}
	return data, nil
}

// loadCAFile reads the trusted roots from a PEM file.
func loadCAFile(path string) (*x509.CertPool, error) {
	data, err := readFile("tlsCAFile", path)
	if err != nil {
		return nil, err
	}
	return parseCAFile(path, data)
}

// parseCAFile collects every CERTIFICATE block. Like
// x509.CertPool.AppendCertsFromPEM it passes over blocks it cannot parse,
// since system bundles sometimes hold certificates Go rejects, but a file
// in which none is usable is an error that says why.
func parseCAFile(path string, data []byte) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	n, blocks := 0, 0
	var firstErr error
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		blocks++
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		pool.AddCert(cert)
		n++
	}
	if n > 0 {
		return pool, nil
	}
	e := &Error{Option: "tlsCAFile", Path: path, Err: firstErr}
	switch {
	case firstErr != nil:
		e.Reason = "no usable certificate: the PEM certificates do not parse"
	case blocks == 0:
		e.Reason = "no PEM certificates found"
	default:
		e.Reason = "no PEM certificates found (no CERTIFICATE block)"
	}
	return nil, e
}

// parseCertificateKeyFile builds the client certificate from the contents
// of a tlsCertificateKeyFile: every CERTIFICATE block and exactly one
// private key, in any order. maxIter bounds PBKDF2 work.
func parseCertificateKeyFile(path string, data []byte, password string, maxIter int) (tls.Certificate, error) {
	var (
		certs  []*x509.Certificate
		keys   []*pem.Block
		blocks int
	)
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		blocks++
		switch {
		case block.Type == "CERTIFICATE":
			cert, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				return tls.Certificate{}, &Error{Option: "tlsCertificateKeyFile", Path: path,
					Reason: fmt.Sprintf("certificate %d does not parse", len(certs)+1), Err: err}
			}
			certs = append(certs, cert)
		case strings.HasSuffix(block.Type, "PRIVATE KEY"):
			keys = append(keys, block)
		}
		// Other blocks (such as the "EC PARAMETERS" openssl writes before
		// an EC key) carry nothing a client certificate needs.
	}
	fileErr := func(reason string) error {
		return &Error{Option: "tlsCertificateKeyFile", Path: path, Reason: reason}
	}
	switch {
	case blocks == 0:
		return tls.Certificate{}, fileErr("no PEM blocks found")
	case len(certs) == 0:
		return tls.Certificate{}, fileErr("no PEM certificates found (the file must hold the client certificate and its private key)")
	case len(keys) == 0:
		return tls.Certificate{}, fileErr("no private key found (the file must hold the client certificate and its private key)")
	case len(keys) > 1:
		return tls.Certificate{}, fileErr(fmt.Sprintf("%d private keys found, want one", len(keys)))
	}
	key, err := decodeKey(path, keys[0], password, maxIter)
	if err != nil {
		return tls.Certificate{}, err
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return tls.Certificate{}, fileErr(fmt.Sprintf("private key of type %T cannot sign a TLS handshake", key))
	}
	pub, ok := signer.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok {
		return tls.Certificate{}, fileErr(fmt.Sprintf("private key of type %T cannot be matched to a certificate", key))
	}
	leaf := -1
	for i, c := range certs {
		if pub.Equal(c.PublicKey) {
			leaf = i
			break
		}
	}
	if leaf < 0 {
		return tls.Certificate{}, fileErr("private key does not match any certificate in the file")
	}
	// The leaf goes first and the others follow in file order, which is
	// what the TLS Certificate message wants.
	chain := make([][]byte, 0, len(certs))
	chain = append(chain, certs[leaf].Raw)
	for i, c := range certs {
		if i != leaf {
			chain = append(chain, c.Raw)
		}
	}
	return tls.Certificate{Certificate: chain, PrivateKey: key, Leaf: certs[leaf]}, nil
}

// decodeKey decrypts a private key block if it needs it and parses it.
func decodeKey(path string, block *pem.Block, password string, maxIter int) (any, error) {
	wrongPassword := &Error{Option: "tlsCertificateKeyFilePassword", Path: path,
		Reason: "wrong password: the private key does not decrypt"}
	encrypted := block.Type == "ENCRYPTED PRIVATE KEY" || x509.IsEncryptedPEMBlock(block)
	if encrypted && password == "" {
		return nil, &Error{Option: "tlsCertificateKeyFilePassword", Path: path,
			Reason: "the private key is encrypted and no password was given"}
	}
	switch {
	case block.Type == "ENCRYPTED PRIVATE KEY":
		der, err := decryptPKCS8(path, block.Bytes, password, maxIter)
		if err != nil {
			return nil, err
		}
		key, err := x509.ParsePKCS8PrivateKey(der)
		if err != nil {
			// The padding check passes by chance for some wrong passwords.
			return nil, wrongPassword
		}
		return key, nil
	case x509.IsEncryptedPEMBlock(block):
		//lint:ignore SA1019 legacy PEM encryption is still what some key files use, and this is the only standard-library way to read it.
		der, err := x509.DecryptPEMBlock(block, []byte(password))
		if errors.Is(err, x509.IncorrectPasswordError) {
			return nil, wrongPassword
		}
		if err != nil {
			return nil, &Error{Option: "tlsCertificateKeyFile", Path: path,
				Reason: "cannot decrypt the legacy encrypted PEM key", Err: err}
		}
		key, err := parsePlainKey(block.Type, der)
		if err != nil {
			return nil, wrongPassword
		}
		return key, nil
	}
	key, err := parsePlainKey(block.Type, block.Bytes)
	if err != nil {
		return nil, &Error{Option: "tlsCertificateKeyFile", Path: path,
			Reason: fmt.Sprintf("the %q block does not parse", block.Type), Err: err}
	}
	return key, nil
}

// parsePlainKey parses an unencrypted key, trying the format its PEM type
// names first and then the others, since files are not always labelled
// correctly.
func parsePlainKey(typ string, der []byte) (any, error) {
	var first error
	pkcs1 := func(b []byte) (any, error) { return x509.ParsePKCS1PrivateKey(b) }
	ec := func(b []byte) (any, error) { return x509.ParseECPrivateKey(b) }
	pkcs8 := x509.ParsePKCS8PrivateKey
	order := []func([]byte) (any, error){pkcs8, pkcs1, ec}
	switch typ {
	case "RSA PRIVATE KEY":
		order = []func([]byte) (any, error){pkcs1, pkcs8, ec}
	case "EC PRIVATE KEY":
		order = []func([]byte) (any, error){ec, pkcs8, pkcs1}
	}
	for _, parse := range order {
		// Check err, not key: a typed nil pointer in an interface is not nil.
		key, err := parse(der)
		if err == nil {
			return key, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}
