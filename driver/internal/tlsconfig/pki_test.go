package tlsconfig

import (
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"hash"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// The test PKI is made fresh for every test binary run; no key material is
// committed.

type issued struct {
	cert *x509.Certificate
	key  crypto.Signer
}

func (i issued) certPEM() *pem.Block { return &pem.Block{Type: "CERTIFICATE", Bytes: i.cert.Raw} }

type testPKI struct {
	root, intermediate, rogueRoot issued

	serverLocalhost issued // localhost, 127.0.0.1, ::1; issued by root
	serverOther     issued // other.example; issued by intermediate
	serverRogue     issued // localhost; issued by rogueRoot
	serverExpired   issued // localhost; issued by root, expired

	client        issued // ECDSA, CN=client; issued by intermediate
	clientRSA     issued // RSA, CN=client-rsa; issued by root
	clientEd25519 issued // Ed25519, CN=client-ed25519; issued by root
}

var (
	pkiOnce sync.Once
	pkiVal  *testPKI
	pkiErr  error
)

func getPKI(tb testing.TB) *testPKI {
	tb.Helper()
	pkiOnce.Do(func() { pkiVal, pkiErr = makePKI() })
	if pkiErr != nil {
		tb.Fatalf("making the test PKI: %v", pkiErr)
	}
	return pkiVal
}

var serial int64

func issue(tmpl *x509.Certificate, key crypto.Signer, parent *issued) (issued, error) {
	serial++
	tmpl.SerialNumber = big.NewInt(serial)
	if tmpl.NotBefore.IsZero() {
		tmpl.NotBefore = time.Now().Add(-time.Hour)
		tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	}
	signerCert, signerKey := tmpl, key
	if parent != nil {
		signerCert, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signerCert, key.Public(), signerKey)
	if err != nil {
		return issued{}, err
	}
	cert, err := x509.ParseCertificate(der)
	return issued{cert: cert, key: key}, err
}

func ecKey() crypto.Signer {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err) // only in tests: the random source failed
	}
	return k
}

func makePKI() (*testPKI, error) {
	p := &testPKI{}
	var err error
	ca := func(cn string) *x509.Certificate {
		return &x509.Certificate{Subject: pkix.Name{CommonName: cn}, IsCA: true, BasicConstraintsValid: true,
			KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}
	}
	server := func(dns []string, ips ...net.IP) *x509.Certificate {
		return &x509.Certificate{Subject: pkix.Name{CommonName: dns[0]}, DNSNames: dns, IPAddresses: ips,
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	}
	client := func(cn string) *x509.Certificate {
		return &x509.Certificate{Subject: pkix.Name{CommonName: cn, Organization: []string{"mongoscope"}},
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	}
	steps := []func() error{
		func() error { p.root, err = issue(ca("Test Root CA"), ecKey(), nil); return err },
		func() error { p.intermediate, err = issue(ca("Test Intermediate CA"), ecKey(), &p.root); return err },
		func() error { p.rogueRoot, err = issue(ca("Rogue Root CA"), ecKey(), nil); return err },
		func() error {
			p.serverLocalhost, err = issue(server([]string{"localhost"}, net.IPv4(127, 0, 0, 1), net.IPv6loopback), ecKey(), &p.root)
			return err
		},
		func() error {
			p.serverOther, err = issue(server([]string{"other.example"}), ecKey(), &p.intermediate)
			return err
		},
		func() error {
			p.serverRogue, err = issue(server([]string{"localhost"}), ecKey(), &p.rogueRoot)
			return err
		},
		func() error {
			t := server([]string{"localhost"}, net.IPv4(127, 0, 0, 1))
			t.NotBefore, t.NotAfter = time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour)
			p.serverExpired, err = issue(t, ecKey(), &p.root)
			return err
		},
		func() error { p.client, err = issue(client("client"), ecKey(), &p.intermediate); return err },
		func() error {
			k, kerr := rsa.GenerateKey(rand.Reader, 2048)
			if kerr != nil {
				return kerr
			}
			p.clientRSA, err = issue(client("client-rsa"), k, &p.root)
			return err
		},
		func() error {
			_, k, kerr := ed25519.GenerateKey(rand.Reader)
			if kerr != nil {
				return kerr
			}
			p.clientEd25519, err = issue(client("client-ed25519"), k, &p.root)
			return err
		},
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// tlsCert is what a test server presents: leaf then chain.
func tlsCert(leaf issued, chain ...issued) tls.Certificate {
	c := tls.Certificate{Certificate: [][]byte{leaf.cert.Raw}, PrivateKey: leaf.key, Leaf: leaf.cert}
	for _, i := range chain {
		c.Certificate = append(c.Certificate, i.cert.Raw)
	}
	return c
}

func writePEM(tb testing.TB, dir, name string, blocks ...*pem.Block) string {
	tb.Helper()
	var data []byte
	for _, b := range blocks {
		data = append(data, pem.EncodeToMemory(b)...)
	}
	return writeFile(tb, dir, name, data)
}

func writeFile(tb testing.TB, dir, name string, data []byte) string {
	tb.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

func pkcs8PEM(tb testing.TB, key crypto.Signer) *pem.Block {
	tb.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		tb.Fatal(err)
	}
	return &pem.Block{Type: "PRIVATE KEY", Bytes: der}
}

// legacyPEM encrypts key the RFC 1423 way ("Proc-Type: 4,ENCRYPTED"), with
// the format's own type name (PKCS#1 for RSA, SEC 1 for EC).
func legacyPEM(tb testing.TB, key crypto.Signer, password string, alg x509.PEMCipher) *pem.Block {
	tb.Helper()
	var typ string
	var der []byte
	switch k := key.(type) {
	case *rsa.PrivateKey:
		typ, der = "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(k)
	case *ecdsa.PrivateKey:
		var err error
		typ = "EC PRIVATE KEY"
		if der, err = x509.MarshalECPrivateKey(k); err != nil {
			tb.Fatal(err)
		}
	default:
		tb.Fatalf("no legacy PEM form for %T", key)
	}
	//lint:ignore SA1019 the test must produce the legacy format the package reads.
	b, err := x509.EncryptPEMBlock(rand.Reader, typ, der, []byte(password), alg)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// The encryption side of PBES2, written independently of the package's
// decoder so that the two check each other.

type p8AlgID struct {
	Algorithm  asn1.ObjectIdentifier
	Parameters asn1.RawValue `asn1:"optional"`
}

type p8KDFParams struct {
	Salt      []byte
	Iter      int
	KeyLength int     `asn1:"optional"`
	PRF       p8AlgID `asn1:"optional"`
}

type pbes2Spec struct {
	schemeOID, kdfOID, prfOID, cipherOID asn1.ObjectIdentifier // nil prfOID: the SHA-1 default, omitted
	prf                                  func() hash.Hash
	keyLen                               int
	newBlock                             func([]byte) (cipher.Block, error)
	iter                                 int
	writeKeyLength                       bool
}

var (
	specAES256SHA256 = pbes2Spec{prfOID: oidHMACWithSHA256, prf: sha256.New, cipherOID: oidAES256CBC, keyLen: 32, newBlock: aes.NewCipher, iter: 2048}
	specAES128SHA1   = pbes2Spec{prf: sha1.New, cipherOID: oidAES128CBC, keyLen: 16, newBlock: aes.NewCipher, iter: 1000, writeKeyLength: true}
	specAES192SHA512 = pbes2Spec{prfOID: oidHMACWithSHA512, prf: sha512.New, cipherOID: oidAES192CBC, keyLen: 24, newBlock: aes.NewCipher, iter: 100}
	specDES3SHA1     = pbes2Spec{prfOID: oidHMACWithSHA1, prf: sha1.New, cipherOID: oidDESEDE3CBC, keyLen: 24, newBlock: des.NewTripleDESCipher, iter: 2048}
)

func mustMarshal(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := asn1.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// encryptPKCS8 wraps a plaintext PKCS#8 key in an EncryptedPrivateKeyInfo.
func encryptPKCS8(tb testing.TB, key crypto.Signer, password string, s pbes2Spec) *pem.Block {
	tb.Helper()
	plain, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		tb.Fatal(err)
	}
	salt := make([]byte, 16)
	_, _ = rand.Read(salt)
	dk, err := pbkdf2.Key(s.prf, password, salt, s.iter, s.keyLen)
	if err != nil {
		tb.Fatal(err)
	}
	block, err := s.newBlock(dk)
	if err != nil {
		tb.Fatal(err)
	}
	bs := block.BlockSize()
	iv := make([]byte, bs)
	_, _ = rand.Read(iv)
	pad := bs - len(plain)%bs
	for i := 0; i < pad; i++ {
		plain = append(plain, byte(pad))
	}
	ct := make([]byte, len(plain))
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(ct, plain)

	kdf := p8KDFParams{Salt: salt, Iter: s.iter}
	if s.writeKeyLength {
		kdf.KeyLength = s.keyLen
	}
	if s.prfOID != nil {
		kdf.PRF = p8AlgID{Algorithm: s.prfOID, Parameters: asn1.NullRawValue}
	}
	orDefault := func(o, d asn1.ObjectIdentifier) asn1.ObjectIdentifier {
		if o == nil {
			return d
		}
		return o
	}
	params := struct{ KDF, Enc p8AlgID }{
		KDF: p8AlgID{Algorithm: orDefault(s.kdfOID, oidPBKDF2), Parameters: asn1.RawValue{FullBytes: mustMarshal(tb, kdf)}},
		Enc: p8AlgID{Algorithm: s.cipherOID, Parameters: asn1.RawValue{FullBytes: mustMarshal(tb, iv)}},
	}
	info := struct {
		Alg  p8AlgID
		Data []byte
	}{
		Alg:  p8AlgID{Algorithm: orDefault(s.schemeOID, oidPBES2), Parameters: asn1.RawValue{FullBytes: mustMarshal(tb, params)}},
		Data: ct,
	}
	return &pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: mustMarshal(tb, info)}
}
