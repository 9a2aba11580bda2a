package auth

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"

	"github.com/xdg-go/stringprep"
)

// minIterations is the floor the spec sets on the server's iteration count,
// against a man in the middle downgrading the key derivation.
const minIterations = 4096

// maxIterations bounds the work a hostile server can make us do: PBKDF2
// cannot be interrupted by the context. Servers default to 10000 (SHA-1)
// and 15000 (SHA-256).
const maxIterations = 10_000_000

// scramHash returns the hash function for a SCRAM mechanism.
func scramHash(mechanism string) func() hash.Hash {
	if mechanism == MechanismSCRAMSHA1 {
		return sha1.New
	}
	return sha256.New
}

// mongoPasswordDigest is the password MongoDB's SCRAM-SHA-1 feeds to the
// key derivation: hex(MD5(username ":mongo:" password)), neither side
// SASLprepped, as the spec requires.
func mongoPasswordDigest(username, password string) string {
	sum := md5.Sum([]byte(username + ":mongo:" + password))
	return hex.EncodeToString(sum[:])
}

// saslPrep prepares a SCRAM-SHA-256 password with RFC 4013's profile. The
// error carries stringprep's fixed message but never the offending rune,
// which is part of the password.
func saslPrep(password string) (string, *Error) {
	prepared, err := stringprep.SASLprep.Prepare(password)
	if err != nil {
		reason := "the password is not valid under SASLprep (RFC 4013)"
		var se stringprep.Error
		if errors.As(err, &se) {
			reason += ": " + se.Msg
		}
		return "", fail(reason, nil)
	}
	return prepared, nil
}

// scramPassword returns what the mechanism's key derivation takes as the
// password.
func scramPassword(mechanism, username, password string) (string, *Error) {
	if mechanism == MechanismSCRAMSHA1 {
		return mongoPasswordDigest(username, password), nil
	}
	return saslPrep(password)
}

// scramState is how far a SCRAM client has got.
type scramState int

const (
	scramInitial   scramState = iota
	scramSentFirst            // client-first sent; expecting server-first
	scramSentFinal            // client-final sent; expecting server-final
	scramVerified             // the server proved it knows the password
	scramFailed               // a step failed; the client is unusable
)

// scramClient is the client side of RFC 5802 (and RFC 7677 for SHA-256),
// without channel binding, as MongoDB requires. password is the input to
// the key derivation: the MongoDB digest for SHA-1, the SASLprepped
// password for SHA-256.
type scramClient struct {
	mechanism string
	newHash   func() hash.Hash
	username  string
	password  string
	nonce     string
	cfg       *config

	state           scramState
	clientFirstBare string
	serverSignature []byte
}

func newSCRAMClient(mechanism, username, password, nonce string, cfg *config) *scramClient {
	return &scramClient{
		mechanism: mechanism,
		newHash:   scramHash(mechanism),
		username:  username,
		password:  password,
		nonce:     nonce,
		cfg:       cfg,
	}
}

// saslName escapes a username for the n= attribute (RFC 5802 5.1).
func saslName(s string) string {
	if !strings.ContainsAny(s, "=,") {
		return s
	}
	s = strings.ReplaceAll(s, "=", "=3D")
	return strings.ReplaceAll(s, ",", "=2C")
}

// start returns the client-first message. The gs2 header "n,," says the
// client neither supports nor wants channel binding, as the spec requires.
func (s *scramClient) start() ([]byte, error) {
	if s.state != scramInitial {
		return nil, fail("SCRAM conversation already started", nil)
	}
	s.clientFirstBare = "n=" + saslName(s.username) + ",r=" + s.nonce
	s.state = scramSentFirst
	return []byte("n,," + s.clientFirstBare), nil
}

func (s *scramClient) completed() bool { return s.state == scramVerified }

// next consumes one server message and returns the reply.
func (s *scramClient) next(challenge []byte) ([]byte, error) {
	var (
		out []byte
		err *Error
	)
	switch s.state {
	case scramSentFirst:
		out, err = s.clientFinal(challenge)
	case scramSentFinal:
		err = s.verify(challenge)
	default:
		err = fail("unexpected SCRAM message from the server", nil)
	}
	if err != nil {
		s.state = scramFailed
		return nil, err
	}
	return out, nil
}

// serverFirst is the parsed server-first message.
type serverFirst struct {
	nonce      string
	salt       []byte
	iterations int
}

// parseServerFirst parses "r=<nonce>,s=<salt>,i=<count>[,ext...]" and
// checks it against our nonce.
func parseServerFirst(msg, clientNonce string) (serverFirst, *Error) {
	var sf serverFirst
	attrs := strings.Split(msg, ",")
	if len(attrs) > 0 && strings.HasPrefix(attrs[0], "m=") {
		return sf, fail("server-first message requires an unsupported SCRAM extension (m=)", nil)
	}
	if len(attrs) < 3 {
		return sf, fail("server-first message has "+strconv.Itoa(len(attrs))+" attributes; want r=, s= and i=", nil)
	}
	nonce, ok := strings.CutPrefix(attrs[0], "r=")
	if !ok {
		return sf, fail("server-first message does not start with the nonce (r=)", nil)
	}
	if !strings.HasPrefix(nonce, clientNonce) || len(nonce) == len(clientNonce) {
		return sf, fail("server nonce does not extend the client nonce", nil)
	}
	if i := strings.IndexFunc(nonce, func(r rune) bool { return r < 0x21 || r > 0x7e }); i >= 0 {
		return sf, fail("server nonce has a non-printable character at byte "+strconv.Itoa(i), nil)
	}
	salt64, ok := strings.CutPrefix(attrs[1], "s=")
	if !ok {
		return sf, fail("server-first message's second attribute is not the salt (s=)", nil)
	}
	salt, err := decodeBase64(salt64)
	if err != nil {
		return sf, fail("server-first message's salt is not base64", err)
	}
	if len(salt) == 0 {
		return sf, fail("server-first message's salt is empty", nil)
	}
	count, ok := strings.CutPrefix(attrs[2], "i=")
	if !ok {
		return sf, fail("server-first message's third attribute is not the iteration count (i=)", nil)
	}
	n, ok := parseCount(count)
	switch {
	case !ok:
		return sf, fail("server-first message's iteration count "+strconv.Quote(truncate(count))+" is not a number", nil)
	case n < minIterations:
		return sf, fail("server-first message's iteration count "+strconv.Itoa(n)+" is below the minimum of "+strconv.Itoa(minIterations), nil)
	case n > maxIterations:
		return sf, fail("server-first message's iteration count "+strconv.Itoa(n)+" is above the driver's limit of "+strconv.Itoa(maxIterations), nil)
	}
	sf.nonce, sf.salt, sf.iterations = nonce, salt, n
	return sf, nil
}

// parseCount parses a decimal count of at most 9 digits (the limits above
// are far below that), so it cannot overflow.
func parseCount(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// truncate shortens server-supplied text quoted in an error.
func truncate(s string) string {
	const max = 64
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}

// clientFinal answers the server-first message with the client proof.
func (s *scramClient) clientFinal(challenge []byte) ([]byte, *Error) {
	msg := string(challenge)
	sf, err := parseServerFirst(msg, s.nonce)
	if err != nil {
		return nil, err
	}
	clientKey, serverKey, err := s.cfg.keys(s.mechanism, s.newHash, s.password, sf.salt, sf.iterations)
	if err != nil {
		return nil, err
	}
	withoutProof := "c=biws,r=" + sf.nonce // biws is base64("n,,")
	authMessage := []byte(s.clientFirstBare + "," + msg + "," + withoutProof)

	storedKey := s.hash(clientKey)
	proof := s.hmac(storedKey, authMessage) // the client signature, then the proof in place
	for i := range proof {
		proof[i] ^= clientKey[i]
	}
	s.serverSignature = s.hmac(serverKey, authMessage)
	s.state = scramSentFinal

	out := make([]byte, 0, len(withoutProof)+3+base64.StdEncoding.EncodedLen(len(proof)))
	out = append(out, withoutProof...)
	out = append(out, ",p="...)
	return base64.StdEncoding.AppendEncode(out, proof), nil
}

// verify checks the server-final message: an e= error, or v= with the
// server signature that proves the server knows the password too.
func (s *scramClient) verify(challenge []byte) *Error {
	msg := string(challenge)
	first, _, _ := strings.Cut(msg, ",")
	if e, ok := strings.CutPrefix(first, "e="); ok {
		return fail("server-final message reports an error: "+strconv.Quote(truncate(e)), nil)
	}
	v, ok := strings.CutPrefix(first, "v=")
	if !ok {
		return fail("server-final message has no server signature (v=)", nil)
	}
	sig, err := decodeBase64(v)
	if err != nil {
		return fail("server-final message's signature is not base64", err)
	}
	if subtle.ConstantTimeCompare(sig, s.serverSignature) != 1 {
		return fail("server signature does not match: the server did not prove it knows the password", nil)
	}
	s.state = scramVerified
	return nil
}

func (s *scramClient) hmac(key, data []byte) []byte {
	m := hmac.New(s.newHash, key)
	m.Write(data)
	return m.Sum(nil)
}

func (s *scramClient) hash(data []byte) []byte {
	h := s.newHash()
	h.Write(data)
	return h.Sum(nil)
}

// decodeBase64 decodes standard, padded base64 exactly: unlike
// encoding/base64, it refuses the CR and LF characters that package skips,
// so a SCRAM attribute has one spelling only.
func decodeBase64(s string) ([]byte, error) {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return nil, fmt.Errorf("line break at byte %d", i)
	}
	return base64.StdEncoding.Strict().DecodeString(s)
}
