package auth

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

// serverError is what a Runner returns for an ok:0 reply in these tests,
// standing in for the connection code's typed server error.
type serverError struct {
	Code    int32
	Message string
}

func (e *serverError) Error() string { return fmt.Sprintf("server error %d: %s", e.Code, e.Message) }

// errAuthFailed is MongoDB's AuthenticationFailed (18).
func errAuthFailed() *serverError { return &serverError{Code: 18, Message: "Authentication failed."} }

// fakeUser is a user as the server stores it: per mechanism, the salt,
// iteration count and the StoredKey/ServerKey pair, never the password.
type fakeUser struct {
	creds map[string]fakeCred
}

type fakeCred struct {
	salt                 []byte
	iterations           int
	storedKey, serverKey []byte
}

// fakeServer plays the server side of MongoDB's SCRAM, written apart from
// the client code: it derives its own keys from the password at user
// creation and checks client proofs the way RFC 5802 describes.
type fakeServer struct {
	t     testing.TB
	users map[string]*fakeUser // "db.user"

	// Behaviour switches.
	speculative     bool // answer speculativeAuthenticate
	noSupportedMech bool // leave saslSupportedMechs out of hello (an old server)
	ignoreSkipEmpty bool // behave like a server older than 4.4
	badSignature    bool // send a wrong v=
	badNonce        bool // send a nonce that does not extend the client's
	iterations      int  // when non-zero, announce this count instead of the stored one
	// storedIterations, when non-zero, is the count addUser derives keys
	// with; otherwise the server's minimums (4096 and 5000) keep tests fast.
	storedIterations int

	// What happened.
	commands []string // command names, in order ("saslStart", ...)
	proofs   [][]byte // client proofs received
	keys     [][]byte // ClientKeys recovered from proofs

	conv *fakeConversation
}

type fakeConversation struct {
	mech, db, user  string
	clientFirstBare string
	serverFirst     string
	nonce           string
	skipEmpty       bool
	stage           int // 1: sent server-first; 2: sent server-final
}

func newFakeServer(t testing.TB) *fakeServer {
	return &fakeServer{t: t, users: map[string]*fakeUser{}, speculative: true}
}

func fakeHash(mech string) func() hash.Hash {
	if mech == MechanismSCRAMSHA1 {
		return sha1.New
	}
	return sha256.New
}

func fakeHMAC(h func() hash.Hash, key []byte, data string) []byte {
	m := hmac.New(h, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// addUser creates a user. The password is what createUser would receive;
// for SCRAM-SHA-256 the server stores the SASLprepped form, which the test
// passes in already prepared (preparedSHA256) to keep this file free of
// the client's SASLprep code.
func (s *fakeServer) addUser(db, user, password, preparedSHA256 string, mechs ...string) {
	u := &fakeUser{creds: map[string]fakeCred{}}
	for i, mech := range mechs {
		h := fakeHash(mech)
		pw := preparedSHA256
		iterations := 5000
		if mech == MechanismSCRAMSHA1 {
			sum := md5.Sum([]byte(user + ":mongo:" + password))
			pw = hex.EncodeToString(sum[:])
			iterations = 4096
		}
		if s.storedIterations != 0 {
			iterations = s.storedIterations
		}
		salt := []byte(fmt.Sprintf("salt-%s-%s-%d", db, user, i))
		salted, err := pbkdf2.Key(h, pw, salt, iterations, h().Size())
		if err != nil {
			s.t.Fatal(err)
		}
		clientKey := fakeHMAC(h, salted, "Client Key")
		stored := h()
		stored.Write(clientKey)
		u.creds[mech] = fakeCred{salt: salt, iterations: iterations, storedKey: stored.Sum(nil), serverKey: fakeHMAC(h, salted, "Server Key")}
	}
	s.users[db+"."+user] = u
}

// hello answers a hello command built with AppendHelloFields.
func (s *fakeServer) hello(cmd bson.Raw) bson.Raw {
	start, out := bson.AppendDocumentStart(nil)
	out = bson.AppendBooleanElement(out, "isWritablePrimary", true)
	if ns, ok := cmd.Lookup("saslSupportedMechs").StringValueOK(); ok && !s.noSupportedMech {
		if u, ok := s.users[ns]; ok {
			a, arr := bson.AppendArrayElementStart(out, "saslSupportedMechs")
			i := 0
			for _, m := range []string{MechanismSCRAMSHA1, MechanismSCRAMSHA256} {
				if _, ok := u.creds[m]; ok {
					arr = bson.AppendStringElement(arr, bson.ArrayKey(i), m)
					i++
				}
			}
			out, _ = bson.AppendDocumentEnd(arr, a)
		}
	}
	if spec, ok := cmd.Lookup("speculativeAuthenticate").DocumentOK(); ok && s.speculative {
		if _, isSASL := spec.Lookup("saslStart").AsInt64OK(); isSASL {
			db := spec.Lookup("db").StringValue()
			if reply, err := s.saslStart(db, spec); err == nil {
				// The speculative reply is the saslStart reply without ok.
				d, _ := bson.DecodeD(reply)
				var kept bson.D
				for _, e := range d {
					if e.Key != "ok" {
						kept = append(kept, e)
					}
				}
				b, _ := bson.Marshal(kept)
				out = bson.AppendDocumentElement(out, "speculativeAuthenticate", b)
			}
		}
	}
	out = bson.AppendDoubleElement(out, "ok", 1)
	out, _ = bson.AppendDocumentEnd(out, start)
	return out
}

// RunCommand implements Runner.
func (s *fakeServer) RunCommand(_ context.Context, db string, cmd bson.Raw) (bson.Raw, error) {
	if err := cmd.Validate(); err != nil {
		s.t.Errorf("invalid command: %v", err)
		return nil, err
	}
	elems, _ := cmd.Elements()
	name := elems[0].Key()
	s.commands = append(s.commands, name)
	switch name {
	case "saslStart":
		return s.saslStart(db, cmd)
	case "saslContinue":
		return s.saslContinue(db, cmd)
	}
	return nil, &serverError{Code: 59, Message: "no such command: " + name}
}

func (s *fakeServer) saslStart(db string, cmd bson.Raw) (bson.Raw, error) {
	mech := cmd.Lookup("mechanism").StringValue()
	if mech != MechanismSCRAMSHA1 && mech != MechanismSCRAMSHA256 {
		return nil, &serverError{Code: 2, Message: "unsupported mechanism"}
	}
	if auto, _ := cmd.Lookup("autoAuthorize").AsInt64OK(); auto != 1 {
		s.t.Errorf("saslStart without autoAuthorize:1: %v", cmd)
	}
	payload := cmd.Lookup("payload").Binary().Data
	bare, ok := strings.CutPrefix(string(payload), "n,,")
	if !ok {
		return nil, &serverError{Code: 17, Message: "bad gs2 header"}
	}
	nAttr, rAttr, _ := strings.Cut(bare, ",")
	user, ok1 := strings.CutPrefix(nAttr, "n=")
	nonce, ok2 := strings.CutPrefix(rAttr, "r=")
	if !ok1 || !ok2 || nonce == "" {
		return nil, &serverError{Code: 17, Message: "bad client-first message"}
	}
	user = strings.ReplaceAll(strings.ReplaceAll(user, "=2C", ","), "=3D", "=")
	u, ok := s.users[db+"."+user]
	if !ok {
		return nil, errAuthFailed()
	}
	c, ok := u.creds[mech]
	if !ok {
		return nil, errAuthFailed()
	}
	combined := nonce + "SrvNonce+/9"
	if s.badNonce {
		combined = "X" + combined
	}
	iterations := c.iterations
	if s.iterations != 0 {
		iterations = s.iterations
	}
	serverFirst := fmt.Sprintf("r=%s,s=%s,i=%d", combined, base64.StdEncoding.EncodeToString(c.salt), iterations)
	s.conv = &fakeConversation{
		mech: mech, db: db, user: user,
		clientFirstBare: bare, serverFirst: serverFirst, nonce: combined,
		skipEmpty: cmd.Lookup("options", "skipEmptyExchange").Boolean() && !s.ignoreSkipEmpty,
		stage:     1,
	}
	return saslReply(1, false, []byte(serverFirst)), nil
}

func (s *fakeServer) saslContinue(db string, cmd bson.Raw) (bson.Raw, error) {
	conv := s.conv
	if conv == nil || conv.db != db {
		return nil, &serverError{Code: 17, Message: "no conversation"}
	}
	if id, _ := cmd.Lookup("conversationId").AsInt64OK(); id != 1 {
		return nil, &serverError{Code: 17, Message: "wrong conversationId"}
	}
	payload := cmd.Lookup("payload").Binary().Data
	switch conv.stage {
	case 1:
		parts := strings.Split(string(payload), ",")
		if len(parts) != 3 || parts[0] != "c=biws" || parts[1] != "r="+conv.nonce || !strings.HasPrefix(parts[2], "p=") {
			return nil, &serverError{Code: 17, Message: "bad client-final message"}
		}
		proof, err := base64.StdEncoding.DecodeString(parts[2][2:])
		if err != nil {
			return nil, &serverError{Code: 17, Message: "bad proof"}
		}
		c := s.users[db+"."+conv.user].creds[conv.mech]
		h := fakeHash(conv.mech)
		authMessage := conv.clientFirstBare + "," + conv.serverFirst + "," + parts[0] + "," + parts[1]
		sig := fakeHMAC(h, c.storedKey, authMessage)
		if len(proof) != len(sig) {
			return nil, errAuthFailed()
		}
		clientKey := make([]byte, len(sig))
		for i := range sig {
			clientKey[i] = proof[i] ^ sig[i]
		}
		s.proofs = append(s.proofs, proof)
		s.keys = append(s.keys, clientKey)
		stored := h()
		stored.Write(clientKey)
		if !bytes.Equal(stored.Sum(nil), c.storedKey) {
			return nil, errAuthFailed()
		}
		v := fakeHMAC(h, c.serverKey, authMessage)
		if s.badSignature {
			v[0] ^= 1
		}
		conv.stage = 2
		return saslReply(1, conv.skipEmpty, []byte("v="+base64.StdEncoding.EncodeToString(v))), nil
	case 2:
		if len(payload) != 0 {
			return nil, &serverError{Code: 17, Message: "expected the empty exchange"}
		}
		s.conv = nil
		return saslReply(1, true, nil), nil
	}
	return nil, &serverError{Code: 17, Message: "conversation over"}
}

func saslReply(id int32, done bool, payload []byte) bson.Raw {
	start, out := bson.AppendDocumentStart(nil)
	out = bson.AppendInt32Element(out, "conversationId", id)
	out = bson.AppendBooleanElement(out, "done", done)
	out = bson.AppendBinaryElement(out, "payload", bson.SubtypeGeneric, payload)
	out = bson.AppendDoubleElement(out, "ok", 1)
	out, _ = bson.AppendDocumentEnd(out, start)
	return out
}

// testConfig is a config with its own cache, a fixed nonce when nonce is
// not empty, and a counter of PBKDF2 runs.
func testConfig(nonce string) (*config, *atomic.Int64) {
	var derivations atomic.Int64
	cfg := &config{
		cache: newKeyCache(keyCacheSize),
		derive: func(h func() hash.Hash, password string, salt []byte, iterations int) ([]byte, error) {
			derivations.Add(1)
			return pbkdf2Derive(h, password, salt, iterations)
		},
		nonce: randomNonce,
	}
	if nonce != "" {
		cfg.nonce = func() (string, error) { return nonce, nil }
	}
	return cfg, &derivations
}

// helloFor builds the hello command the connection code would send.
func helloFor(t testing.TB, conv Conversation) bson.Raw {
	t.Helper()
	start, cmd := bson.AppendDocumentStart(nil)
	cmd = bson.AppendInt32Element(cmd, "hello", 1)
	cmd = conv.AppendHelloFields(cmd)
	cmd, err := bson.AppendDocumentEnd(cmd, start)
	if err != nil {
		t.Fatal(err)
	}
	if err := bson.Raw(cmd).Validate(); err != nil {
		t.Fatalf("hello with auth fields is not valid BSON: %v", err)
	}
	return cmd
}

// handshake runs hello plus authentication against s.
func handshake(t testing.TB, conv Conversation, s *fakeServer) error {
	t.Helper()
	return conv.Authenticate(context.Background(), s, s.hello(helloFor(t, conv)))
}
