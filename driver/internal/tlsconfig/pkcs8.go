package tlsconfig

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/asn1"
	"fmt"
	"hash"
)

// Encrypted PKCS#8 (RFC 5958 EncryptedPrivateKeyInfo) with PBES2 (RFC 8018):
// the standard library parses only plaintext PKCS#8, so the envelope is
// opened here.

var (
	oidPBES2  = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2 = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}

	oidHMACWithSHA1   = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 7}
	oidHMACWithSHA224 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 8}
	oidHMACWithSHA256 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}
	oidHMACWithSHA384 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 10}
	oidHMACWithSHA512 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 11}

	oidAES128CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 2}
	oidAES192CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 22}
	oidAES256CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}
	oidDESEDE3CBC = asn1.ObjectIdentifier{1, 2, 840, 113549, 3, 7}
)

type algorithmIdentifier struct {
	Algorithm  asn1.ObjectIdentifier
	Parameters asn1.RawValue `asn1:"optional"`
}

type encryptedPrivateKeyInfo struct {
	Algorithm     algorithmIdentifier
	EncryptedData []byte
}

type pbes2Params struct {
	KeyDerivationFunc algorithmIdentifier
	EncryptionScheme  algorithmIdentifier
}

type pbkdf2Params struct {
	Salt           []byte
	IterationCount int
	KeyLength      int                 `asn1:"optional"`
	PRF            algorithmIdentifier `asn1:"optional"`
}

// pbeCipher is one PBES2 encryption scheme.
type pbeCipher struct {
	keyLen int
	block  func(key []byte) (cipher.Block, error)
}

func pbeCipherFor(oid asn1.ObjectIdentifier) (pbeCipher, bool) {
	switch {
	case oid.Equal(oidAES128CBC):
		return pbeCipher{16, aes.NewCipher}, true
	case oid.Equal(oidAES192CBC):
		return pbeCipher{24, aes.NewCipher}, true
	case oid.Equal(oidAES256CBC):
		return pbeCipher{32, aes.NewCipher}, true
	case oid.Equal(oidDESEDE3CBC):
		return pbeCipher{24, des.NewTripleDESCipher}, true
	}
	return pbeCipher{}, false
}

func prfFor(oid asn1.ObjectIdentifier) (func() hash.Hash, bool) {
	switch {
	case len(oid) == 0, oid.Equal(oidHMACWithSHA1): // absent: the default, SHA-1
		return sha1.New, true
	case oid.Equal(oidHMACWithSHA224):
		return sha256.New224, true
	case oid.Equal(oidHMACWithSHA256):
		return sha256.New, true
	case oid.Equal(oidHMACWithSHA384):
		return sha512.New384, true
	case oid.Equal(oidHMACWithSHA512):
		return sha512.New, true
	}
	return nil, false
}

// unmarshalAll decodes der into v and rejects trailing bytes.
func unmarshalAll(der []byte, v any) error {
	rest, err := asn1.Unmarshal(der, v)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("%d trailing bytes", len(rest))
	}
	return nil
}

// decryptPKCS8 opens an EncryptedPrivateKeyInfo and returns the plaintext
// PKCS#8 DER. A bad padding is reported as a wrong password.
func decryptPKCS8(path string, der []byte, password string, maxIter int) ([]byte, error) {
	malformed := func(what string, err error) error {
		return &Error{Option: "tlsCertificateKeyFile", Path: path,
			Reason: "malformed ENCRYPTED PRIVATE KEY: " + what, Err: err}
	}
	unsupported := func(what string, oid asn1.ObjectIdentifier, supported string) error {
		return &Error{Option: "tlsCertificateKeyFile", Path: path,
			Reason: fmt.Sprintf("unsupported PKCS#8 %s %s (supported: %s)", what, oid, supported)}
	}
	var info encryptedPrivateKeyInfo
	if err := unmarshalAll(der, &info); err != nil {
		return nil, malformed("EncryptedPrivateKeyInfo", err)
	}
	if !info.Algorithm.Algorithm.Equal(oidPBES2) {
		return nil, unsupported("encryption scheme", info.Algorithm.Algorithm, "PBES2")
	}
	var params pbes2Params
	if err := unmarshalAll(info.Algorithm.Parameters.FullBytes, &params); err != nil {
		return nil, malformed("PBES2 parameters", err)
	}
	if !params.KeyDerivationFunc.Algorithm.Equal(oidPBKDF2) {
		return nil, unsupported("key derivation function", params.KeyDerivationFunc.Algorithm, "PBKDF2")
	}
	var kdf pbkdf2Params
	if err := unmarshalAll(params.KeyDerivationFunc.Parameters.FullBytes, &kdf); err != nil {
		return nil, malformed("PBKDF2 parameters", err)
	}
	prf, ok := prfFor(kdf.PRF.Algorithm)
	if !ok {
		return nil, unsupported("PBKDF2 pseudorandom function", kdf.PRF.Algorithm, "HMAC with SHA-1, SHA-224, SHA-256, SHA-384, SHA-512")
	}
	ciph, ok := pbeCipherFor(params.EncryptionScheme.Algorithm)
	if !ok {
		return nil, unsupported("cipher", params.EncryptionScheme.Algorithm, "AES-128/192/256-CBC, DES-EDE3-CBC")
	}
	if kdf.IterationCount < 1 || kdf.IterationCount > maxIter {
		return nil, malformed(fmt.Sprintf("PBKDF2 iteration count %d is outside 1..%d", kdf.IterationCount, maxIter), nil)
	}
	if kdf.KeyLength != 0 && kdf.KeyLength != ciph.keyLen {
		return nil, malformed(fmt.Sprintf("PBKDF2 key length %d, the cipher needs %d", kdf.KeyLength, ciph.keyLen), nil)
	}
	var iv []byte
	if err := unmarshalAll(params.EncryptionScheme.Parameters.FullBytes, &iv); err != nil {
		return nil, malformed("cipher IV", err)
	}
	key, err := pbkdf2.Key(prf, password, kdf.Salt, kdf.IterationCount, ciph.keyLen)
	if err != nil {
		// Only FIPS 140-only mode refuses here (short password or salt);
		// the password is not part of the message.
		return nil, &Error{Option: "tlsCertificateKeyFilePassword", Path: path,
			Reason: "PBKDF2 key derivation refused", Err: err}
	}
	block, err := ciph.block(key)
	if err != nil {
		return nil, malformed("cipher key", err)
	}
	bs := block.BlockSize()
	if len(iv) != bs {
		return nil, malformed(fmt.Sprintf("cipher IV is %d bytes, want %d", len(iv), bs), nil)
	}
	ct := info.EncryptedData
	if len(ct) == 0 || len(ct)%bs != 0 {
		return nil, malformed(fmt.Sprintf("encrypted data is %d bytes, not a positive multiple of %d", len(ct), bs), nil)
	}
	pt := make([]byte, len(ct))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(pt, ct)
	// PKCS#7 padding: n bytes of value n, 1 <= n <= block size. Anything
	// else means the key, hence the password, was wrong.
	n := int(pt[len(pt)-1])
	if n < 1 || n > bs {
		return nil, &Error{Option: "tlsCertificateKeyFilePassword", Path: path,
			Reason: "wrong password: the private key does not decrypt"}
	}
	for _, b := range pt[len(pt)-n:] {
		if int(b) != n {
			return nil, &Error{Option: "tlsCertificateKeyFilePassword", Path: path,
				Reason: "wrong password: the private key does not decrypt"}
		}
	}
	return pt[:len(pt)-n], nil
}
