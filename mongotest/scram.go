package mongotest

import (
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/pbkdf2"
	"crypto/rand"
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
	"sync"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
	"github.com/xdg-go/stringprep"
)

// SCRAM mechanism names.
const (
	SCRAMSHA1   = "SCRAM-SHA-1"
	SCRAMSHA256 = "SCRAM-SHA-256"
)

// Iteration counts mongod uses by default (scramIterationCount and
// scramSHA256IterationCount).
const (
	scramSHA1Iterations   = 10000
	scramSHA256Iterations = 15000
)

// userStore keeps, per user, only the SCRAM salt, iteration count and the
// stored and server keys; the password itself is never kept.
type userStore struct {
	mu    sync.Mutex
	users map[UserRef]*user
}

type user struct {
	mechs []string
	creds map[string]*scramCred
	// What createUser and updateUser keep besides the credentials, for
	// usersInfo: the userId, roles ({role, db} documents) and customData.
	id         [16]byte
	roles      []bson.Raw
	customData bson.Raw
}

type scramCred struct {
	mech       string
	salt       []byte
	iterations int
	storedKey  []byte
	serverKey  []byte
}

func (c *scramCred) hash() func() hash.Hash {
	if c.mech == SCRAMSHA1 {
		return sha1.New
	}
	return sha256.New
}

// AddUser adds (or replaces) a user of database db who may authenticate
// with the given SCRAM mechanisms; none means both, as createUser does.
// Only the derived SCRAM keys are kept. Errors never contain the password.
func (s *Server) AddUser(db, username, password string, mechanisms ...string) error {
	if db == "" || username == "" {
		return errors.New("mongotest: AddUser needs a database and a user name")
	}
	u, err := newUser(username, password, mechanisms)
	if err != nil {
		return fmt.Errorf("mongotest: AddUser %q on %q: %w", username, db, err)
	}
	s.users.mu.Lock()
	defer s.users.mu.Unlock()
	if s.users.users == nil {
		s.users.users = map[UserRef]*user{}
	}
	s.users.users[UserRef{DB: db, User: username}] = u
	return nil
}

// newUser derives a user's SCRAM credentials; no mechanisms means both.
func newUser(username, password string, mechanisms []string) (*user, error) {
	if len(mechanisms) == 0 {
		mechanisms = []string{SCRAMSHA1, SCRAMSHA256}
	}
	u := &user{creds: map[string]*scramCred{}}
	for _, m := range mechanisms {
		if _, dup := u.creds[m]; dup {
			continue
		}
		cred, err := newSCRAMCred(m, username, password)
		if err != nil {
			return nil, err
		}
		u.mechs = append(u.mechs, m)
		u.creds[m] = cred
	}
	if _, err := rand.Read(u.id[:]); err != nil {
		return nil, fmt.Errorf("reading a random user id: %w", err)
	}
	u.id[6] = u.id[6]&0x0f | 0x40 // a version 4 UUID, as mongod's userId
	u.id[8] = u.id[8]&0x3f | 0x80
	return u, nil
}

func (s *Server) findUser(db, name string) *user {
	s.users.mu.Lock()
	defer s.users.mu.Unlock()
	return s.users.users[UserRef{DB: db, User: name}]
}

func newSCRAMCred(mech, username, password string) (*scramCred, error) {
	var (
		h      func() hash.Hash
		secret string
		salt   []byte
		iter   int
	)
	switch mech {
	case SCRAMSHA1:
		// MongoDB's SCRAM-SHA-1 salts the legacy digest, not the password.
		sum := md5.Sum([]byte(username + ":mongo:" + password))
		h, secret, salt, iter = sha1.New, hex.EncodeToString(sum[:]), make([]byte, 16), scramSHA1Iterations
	case SCRAMSHA256:
		prepped, err := stringprep.SASLprep.Prepare(password)
		if err != nil {
			return nil, errors.New("the password is not valid under SASLprep")
		}
		h, secret, salt, iter = sha256.New, prepped, make([]byte, 28), scramSHA256Iterations
	default:
		return nil, fmt.Errorf("unknown mechanism %q (want %s or %s)", mech, SCRAMSHA1, SCRAMSHA256)
	}
	if _, err := rand.Read(salt); err != nil {
		return nil, fmt.Errorf("reading a random salt: %w", err)
	}
	salted, err := pbkdf2.Key(h, secret, salt, iter, h().Size())
	if err != nil {
		return nil, fmt.Errorf("deriving the %s key failed", mech)
	}
	clientKey := hmacSum(h, salted, "Client Key")
	stored := h()
	stored.Write(clientKey)
	return &scramCred{
		mech: mech, salt: salt, iterations: iter,
		storedKey: stored.Sum(nil), serverKey: hmacSum(h, salted, "Server Key"),
	}, nil
}

func hmacSum(h func() hash.Hash, key []byte, msg string) []byte {
	m := hmac.New(h, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// scramConversation is one connection's SCRAM exchange in progress.
type scramConversation struct {
	id        int32
	db, user  string
	cred      *scramCred
	gs2Header string
	nonce     string
	authMsg   string // client-first-bare "," server-first, completed on continue
	proved    bool   // the proof checked out; an empty saslContinue ends it
	skipEmpty bool
}

var errAuthFailed = &mongoerr.Error{Code: mongoerr.AuthenticationFailed, CodeName: "AuthenticationFailed", Message: "Authentication failed."}

func saslStartCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	c := r.Conn
	c.sasl = nil
	conv, serverFirst, err := s.startSCRAM(r.DB, r.Body)
	if err != nil {
		return nil, err
	}
	c.sasl = conv
	return appendSASLReply(nil, conv.id, false, []byte(serverFirst)), nil
}

func saslContinueCmd(_ context.Context, s *Server, r *Request) (bson.Raw, error) {
	c := r.Conn
	conv := c.sasl
	if conv == nil {
		return nil, newError(17, "No SASL session state found")
	}
	id, ok := r.Body.Lookup("conversationId").AsInt64OK()
	if !ok || id != int64(conv.id) {
		c.sasl = nil
		return nil, newError(17, "Mismatched SASL conversation id")
	}
	payload, err := binaryPayload(r.Body)
	if err != nil {
		c.sasl = nil
		return nil, err
	}
	if conv.proved {
		// The exchange older clients finish with an empty message.
		c.sasl = nil
		if len(payload) != 0 {
			return nil, errAuthFailed
		}
		c.addUser(conv)
		return appendSASLReply(nil, conv.id, true, nil), nil
	}
	serverFinal, err := conv.finish(string(payload))
	if err != nil {
		c.sasl = nil
		return nil, err
	}
	conv.proved = true
	if conv.skipEmpty {
		c.sasl = nil
		c.addUser(conv)
	}
	return appendSASLReply(nil, conv.id, conv.skipEmpty, []byte(serverFinal)), nil
}

func (c *Conn) addUser(conv *scramConversation) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ref := UserRef{DB: conv.db, User: conv.user}
	for _, u := range c.users {
		if u == ref {
			return
		}
	}
	c.users = append(c.users, ref)
}

func appendSASLReply(dst []byte, id int32, done bool, payload []byte) bson.Raw {
	start, dst := bson.AppendDocumentStart(dst)
	dst = bson.AppendInt32Element(dst, "conversationId", id)
	dst = bson.AppendBooleanElement(dst, "done", done)
	dst = bson.AppendBinaryElement(dst, "payload", bson.SubtypeGeneric, payload)
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return bson.Raw(dst[start:])
}

func binaryPayload(doc bson.Raw) ([]byte, error) {
	v, err := doc.LookupErr("payload")
	if err != nil {
		return nil, newError(mongoerr.BadValue, "payload is required")
	}
	switch v.Type {
	case bson.TypeBinary:
		return v.Binary().Data, nil
	case bson.TypeString:
		return []byte(v.StringValue()), nil
	}
	return nil, newError(mongoerr.TypeMismatch, "payload is of type %s, expected binData", v.Type)
}

// startSCRAM checks a saslStart (or the speculativeAuthenticate document)
// and returns the conversation and the server-first message.
func (s *Server) startSCRAM(db string, cmd bson.Raw) (*scramConversation, string, error) {
	mech, _ := cmd.Lookup("mechanism").StringValueOK()
	if mech != SCRAMSHA1 && mech != SCRAMSHA256 {
		return nil, "", newError(334, "Received authentication for mechanism %s which is unknown or not enabled", mech)
	}
	payload, err := binaryPayload(cmd)
	if err != nil {
		return nil, "", err
	}
	gs2, bare, ok := splitClientFirst(string(payload))
	if !ok {
		return nil, "", newError(mongoerr.BadValue, "Invalid SCRAM client-first message")
	}
	name, cnonce, ok := parseClientFirstBare(bare)
	if !ok {
		return nil, "", newError(mongoerr.BadValue, "Invalid SCRAM client-first message")
	}
	u := s.findUser(db, name)
	if u == nil {
		return nil, "", errAuthFailed
	}
	cred := u.creds[mech]
	if cred == nil {
		return nil, "", newError(334, "Unable to use %s based authentication for user without any %s credentials registered", mech, mech)
	}
	snonce := make([]byte, 24)
	if _, err := rand.Read(snonce); err != nil {
		return nil, "", newError(mongoerr.InternalError, "reading a random nonce failed")
	}
	conv := &scramConversation{id: 1, db: db, user: name, cred: cred, gs2Header: gs2}
	conv.nonce = cnonce + base64.StdEncoding.EncodeToString(snonce)
	conv.skipEmpty, _ = cmd.Lookup("options", "skipEmptyExchange").BooleanOK()
	serverFirst := "r=" + conv.nonce + ",s=" + base64.StdEncoding.EncodeToString(cred.salt) + ",i=" + strconv.Itoa(cred.iterations)
	conv.authMsg = bare + "," + serverFirst
	return conv, serverFirst, nil
}

// splitClientFirst splits "n,,n=user,r=nonce" into the GS2 header ("n,,")
// and the bare message. Channel binding and an authorization identity are
// not supported, as in mongod.
func splitClientFirst(msg string) (gs2, bare string, ok bool) {
	if len(msg) < 3 || (msg[0] != 'n' && msg[0] != 'y') || msg[1] != ',' {
		return "", "", false
	}
	i := strings.IndexByte(msg[2:], ',')
	if i != 0 { // a non-empty authzid
		return "", "", false
	}
	return msg[:3], msg[3:], true
}

func parseClientFirstBare(bare string) (user, nonce string, ok bool) {
	parts := strings.Split(bare, ",")
	if len(parts) < 2 || !strings.HasPrefix(parts[0], "n=") || !strings.HasPrefix(parts[1], "r=") {
		return "", "", false
	}
	user, ok = unescapeSASLName(parts[0][2:])
	nonce = parts[1][2:]
	if !ok || user == "" || nonce == "" {
		return "", "", false
	}
	return user, nonce, true
}

// unescapeSASLName undoes RFC 5802's "=2C" and "=3D" escapes.
func unescapeSASLName(s string) (string, bool) {
	if !strings.Contains(s, "=") {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '=' {
			b.WriteByte(s[i])
			continue
		}
		switch {
		case strings.HasPrefix(s[i:], "=2C"):
			b.WriteByte(',')
		case strings.HasPrefix(s[i:], "=3D"):
			b.WriteByte('=')
		default:
			return "", false
		}
		i += 2
	}
	return b.String(), true
}

// finish checks the client-final message and returns the server-final
// one. Every failure is the same AuthenticationFailed, as in mongod, so a
// client learns nothing about which part was wrong.
func (conv *scramConversation) finish(clientFinal string) (string, error) {
	i := strings.LastIndex(clientFinal, ",p=")
	if i < 0 {
		return "", errAuthFailed
	}
	withoutProof, proofB64 := clientFinal[:i], clientFinal[i+3:]
	parts := strings.Split(withoutProof, ",")
	if len(parts) < 2 || parts[0] != "c="+base64.StdEncoding.EncodeToString([]byte(conv.gs2Header)) || parts[1] != "r="+conv.nonce {
		return "", errAuthFailed
	}
	proof, err := base64.StdEncoding.DecodeString(proofB64)
	h := conv.cred.hash()
	if err != nil || len(proof) != h().Size() {
		return "", errAuthFailed
	}
	authMsg := conv.authMsg + "," + withoutProof
	clientSig := hmacSum(h, conv.cred.storedKey, authMsg)
	clientKey := make([]byte, len(proof))
	for j := range proof {
		clientKey[j] = proof[j] ^ clientSig[j]
	}
	sum := h()
	sum.Write(clientKey)
	if subtle.ConstantTimeCompare(sum.Sum(nil), conv.cred.storedKey) != 1 {
		return "", errAuthFailed
	}
	return "v=" + base64.StdEncoding.EncodeToString(hmacSum(h, conv.cred.serverKey, authMsg)), nil
}

// appendSaslSupportedMechs answers hello's saslSupportedMechs "db.user"
// with the user's mechanisms; an unknown user gets no field, as in mongod.
func (s *Server) appendSaslSupportedMechs(dst []byte, body bson.Raw) []byte {
	name, ok := body.Lookup("saslSupportedMechs").StringValueOK()
	if !ok {
		return dst
	}
	db, user, ok := strings.Cut(name, ".")
	if !ok {
		return dst
	}
	u := s.findUser(db, user)
	if u == nil {
		return dst
	}
	s.users.mu.Lock()
	mechs := append([]string(nil), u.mechs...)
	s.users.mu.Unlock()
	return appendStrings(dst, "saslSupportedMechs", mechs)
}

// appendSpeculativeAuth starts the SCRAM conversation hello's
// speculativeAuthenticate asks for. A failure only leaves the field out:
// the client then authenticates the ordinary way, as with mongod.
func (c *Conn) appendSpeculativeAuth(dst []byte, db string, body bson.Raw) []byte {
	doc, ok := body.Lookup("speculativeAuthenticate").DocumentOK()
	if !ok {
		return dst
	}
	if _, err := doc.LookupErr("saslStart"); err != nil {
		return dst
	}
	if d, ok := doc.Lookup("db").StringValueOK(); ok {
		db = d
	}
	conv, serverFirst, err := c.s.startSCRAM(db, doc)
	if err != nil {
		return dst
	}
	c.sasl = conv
	return bson.AppendDocumentElement(dst, "speculativeAuthenticate", appendSASLReply(nil, conv.id, false, []byte(serverFirst)))
}

// logoutCmd forgets the users the connection authenticated on r.DB.
func logoutCmd(_ context.Context, _ *Server, r *Request) (bson.Raw, error) {
	c := r.Conn
	c.mu.Lock()
	kept := c.users[:0]
	for _, u := range c.users {
		if u.DB != r.DB {
			kept = append(kept, u)
		}
	}
	c.users = kept
	c.mu.Unlock()
	return nil, nil
}

// connectionStatusCmd reports the connection's users. Every user the Go API
// adds acts as root, so that is the role reported.
func connectionStatusCmd(_ context.Context, _ *Server, r *Request) (bson.Raw, error) {
	users := r.Conn.Users()
	start, dst := bson.AppendDocumentStart(nil)
	ai, dst := bson.AppendDocumentElementStart(dst, "authInfo")
	us, dst := bson.AppendArrayElementStart(dst, "authenticatedUsers")
	for i, u := range users {
		d, b := bson.AppendDocumentElementStart(dst, bson.ArrayKey(i))
		b = bson.AppendStringElement(b, "user", u.User)
		b = bson.AppendStringElement(b, "db", u.DB)
		dst, _ = bson.AppendDocumentEnd(b, d)
	}
	dst, _ = bson.AppendDocumentEnd(dst, us)
	rs, dst := bson.AppendArrayElementStart(dst, "authenticatedUserRoles")
	if len(users) > 0 {
		d, b := bson.AppendDocumentElementStart(dst, "0")
		b = bson.AppendStringElement(b, "role", "root")
		b = bson.AppendStringElement(b, "db", "admin")
		dst, _ = bson.AppendDocumentEnd(b, d)
	}
	dst, _ = bson.AppendDocumentEnd(dst, rs)
	dst, _ = bson.AppendDocumentEnd(dst, ai)
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst, nil
}

// authenticateCmd is mongod's {authenticate: 1, mechanism, user}, which
// since 4.0 serves only MONGODB-X509. mongotest has no TLS, so no client
// certificate: X.509 fails as on a connection without one, and any other
// mechanism is not enabled, as saslStart says.
func authenticateCmd(_ context.Context, _ *Server, r *Request) (bson.Raw, error) {
	mech, _ := r.Body.Lookup("mechanism").StringValueOK()
	if mech != "MONGODB-X509" {
		return nil, newError(334, "Received authentication for mechanism %s which is unknown or not enabled", mech)
	}
	if r.DB != "$external" {
		return nil, newError(17, "X.509 authentication must always use the $external database.")
	}
	return nil, newError(mongoerr.AuthenticationFailed, "No verified subject name available from client")
}
