package mongotest

import (
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/internal/wire"
	"github.com/xdg-go/stringprep"
)

// The driver's connection package lives under driver/internal and cannot
// be imported from here, so the tests speak the protocol through a small
// client of their own, built on internal/wire: it makes the bytes on the
// wire explicit anyway.

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func marshal(t testing.TB, v any) bson.Raw {
	t.Helper()
	if r, ok := v.(bson.Raw); ok {
		return r
	}
	b, err := bson.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func d(kv ...any) bson.D {
	var out bson.D
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, bson.E{Key: kv[i].(string), Value: kv[i+1]})
	}
	return out
}

// cmdError is an {ok: 0} reply.
type cmdError struct {
	Code     int32
	CodeName string
	Message  string
	Labels   []string
	Raw      bson.Raw
}

func (e *cmdError) Error() string {
	return fmt.Sprintf("%s (%d): %s %v", e.CodeName, e.Code, e.Message, e.Labels)
}

func replyError(body bson.Raw) error {
	if ok, _ := body.Lookup("ok").AsFloat64OK(); ok == 1 {
		return nil
	}
	e := &cmdError{Raw: body}
	e.Code = body.Lookup("code").Int32()
	e.CodeName = body.Lookup("codeName").StringValue()
	e.Message = body.Lookup("errmsg").StringValue()
	if arr, ok := body.Lookup("errorLabels").ArrayOK(); ok {
		vals, _ := arr.Values()
		for _, v := range vals {
			e.Labels = append(e.Labels, v.StringValue())
		}
	}
	return e
}

func asCmdError(t testing.TB, err error) *cmdError {
	t.Helper()
	var ce *cmdError
	if !errors.As(err, &ce) {
		t.Fatalf("want a command error, got %v", err)
	}
	return ce
}

// client is a test client connection.
type client struct {
	t        testing.TB
	nc       net.Conn
	comp     wire.Compressor // compress commands with it when not noop
	checksum bool
	reqID    int32
	hello    bson.Raw // the handshake reply
	id       int64    // connectionId from the handshake
}

type clientOpts struct {
	appName      string
	compressors  []string
	loadBalanced bool
	noHandshake  bool
	extra        bson.D // more hello fields (speculativeAuthenticate...)
	addr         string // dial this instead of the server (a load balancer)
}

// connect dials s and runs the handshake, a hello with client metadata.
func connect(t testing.TB, s *Server, o clientOpts) *client {
	t.Helper()
	c, err := connectErr(t, s, o)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	return c
}

func connectErr(t testing.TB, s *Server, o clientOpts) (*client, error) {
	t.Helper()
	addr := o.addr
	if addr == "" {
		addr = s.Addr()
	}
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	c := &client{t: t, nc: nc}
	if o.noHandshake {
		return c, nil
	}
	hello := d("hello", int32(1), "helloOk", true)
	md := d("driver", d("name", "mongotest-test", "version", "0"), "os", d("type", runtime.GOOS))
	if o.appName != "" {
		md = append(d("application", d("name", o.appName)), md...)
	}
	hello = append(hello, bson.E{Key: "client", Value: md})
	if len(o.compressors) > 0 {
		a := bson.A{}
		for _, n := range o.compressors {
			a = append(a, n)
		}
		hello = append(hello, bson.E{Key: "compression", Value: a})
	}
	if o.loadBalanced {
		hello = append(hello, bson.E{Key: "loadBalanced", Value: true})
	}
	hello = append(hello, o.extra...)
	reply, err := c.run("admin", hello)
	if err != nil {
		return c, err
	}
	c.hello = reply
	c.id, _ = reply.Lookup("connectionId").AsInt64OK()
	if arr, ok := reply.Lookup("compression").ArrayOK(); ok {
		vals, _ := arr.Values()
		if len(vals) > 0 {
			c.comp, _ = wire.CompressorByName(vals[0].StringValue())
		}
	}
	return c, nil
}

// send writes cmd with $db and returns the request id.
func (c *client) send(db string, cmd any, flags wire.Flags, seqs ...wire.Sequence) int32 {
	c.t.Helper()
	body := marshal(c.t, cmd)
	if db != "" {
		b := append([]byte(nil), body[:len(body)-1]...)
		b = bson.AppendStringElement(b, "$db", db)
		b = append(b, 0)
		b[0], b[1], b[2], b[3] = byte(len(b)), byte(len(b)>>8), byte(len(b)>>16), byte(len(b)>>24)
		body = b
	}
	c.reqID++
	if c.checksum {
		flags |= wire.ChecksumPresent
	}
	msg := wire.AppendMsg(nil, c.reqID, 0, flags, body, seqs...)
	name := ""
	if it := body.Iter(); it.Next() {
		name = it.Key()
	}
	if c.comp != wire.CompressorNoop && wire.Compressible(name) {
		out, err := wire.Compress(nil, msg, c.comp, -1)
		if err != nil {
			c.t.Fatal(err)
		}
		msg = out
	}
	c.write(msg)
	return c.reqID
}

func (c *client) write(msg []byte) {
	c.t.Helper()
	if _, err := c.nc.Write(msg); err != nil {
		c.t.Fatal(err)
	}
}

// reply is one decoded reply message.
type reply struct {
	wire.Msg
	compressed bool
}

// recv reads one OP_MSG reply; an error means the connection is gone or
// the reply is malformed.
func (c *client) recv() (reply, error) {
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf, err := wire.ReadMessage(c.nc, 0)
	if err != nil {
		return reply{}, err
	}
	msg := append([]byte(nil), buf.B...)
	buf.Release()
	var r reply
	if h, _ := wire.ParseHeader(msg); h.OpCode == wire.OpCompressed {
		if msg, err = wire.Decompress(nil, msg, MaxMessageSizeBytes); err != nil {
			return reply{}, err
		}
		r.compressed = true
	}
	m, err := wire.ParseMsg(msg)
	if err != nil {
		return reply{}, err
	}
	r.Msg = m
	return r, nil
}

// run sends cmd and reads its reply; an {ok: 0} reply is a *cmdError.
func (c *client) run(db string, cmd any) (bson.Raw, error) {
	c.t.Helper()
	id := c.send(db, cmd, 0)
	r, err := c.recv()
	if err != nil {
		return nil, err
	}
	if r.Header.ResponseTo != id {
		c.t.Fatalf("reply to %d, want %d", r.Header.ResponseTo, id)
	}
	return r.Body, replyError(r.Body)
}

func (c *client) mustRun(db string, cmd any) bson.Raw {
	c.t.Helper()
	r, err := c.run(db, cmd)
	if err != nil {
		c.t.Fatalf("%v: %v", cmd, err)
	}
	return r
}

// closed reports whether the server has closed the connection.
func (c *client) closed() bool {
	c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	var b [1]byte
	_, err := c.nc.Read(b[:])
	return err != nil && !isTimeout(err)
}

// scramClient is a SCRAM client written from RFC 5802 for the tests.
type scramClient struct {
	mech, user, password    string
	cnonce, clientFirstBare string
	serverSig               []byte
}

func newSCRAMClient(mech, user, password string) *scramClient {
	n := make([]byte, 18)
	rand.Read(n)
	return &scramClient{mech: mech, user: user, password: password, cnonce: base64.StdEncoding.EncodeToString(n)}
}

func (s *scramClient) first() []byte {
	name := strings.NewReplacer("=", "=3D", ",", "=2C").Replace(s.user)
	s.clientFirstBare = "n=" + name + ",r=" + s.cnonce
	return []byte("n,," + s.clientFirstBare)
}

func (s *scramClient) final(serverFirst []byte) ([]byte, error) {
	var nonce, salt string
	iter := 0
	for _, p := range strings.Split(string(serverFirst), ",") {
		switch {
		case strings.HasPrefix(p, "r="):
			nonce = p[2:]
		case strings.HasPrefix(p, "s="):
			salt = p[2:]
		case strings.HasPrefix(p, "i="):
			iter, _ = strconv.Atoi(p[2:])
		}
	}
	if !strings.HasPrefix(nonce, s.cnonce) || iter == 0 {
		return nil, fmt.Errorf("bad server-first %q", serverFirst)
	}
	saltB, err := base64.StdEncoding.DecodeString(salt)
	if err != nil {
		return nil, err
	}
	h, secret := sha256.New, s.password
	if p, err := stringprep.SASLprep.Prepare(s.password); err == nil {
		secret = p
	}
	if s.mech == SCRAMSHA1 {
		sum := md5.Sum([]byte(s.user + ":mongo:" + s.password))
		h, secret = sha1.New, hex.EncodeToString(sum[:])
	}
	salted, _ := pbkdf2.Key(h, secret, saltB, iter, h().Size())
	mac := func(key []byte, msg string) []byte {
		m := hmac.New(h, key)
		m.Write([]byte(msg))
		return m.Sum(nil)
	}
	clientKey := mac(salted, "Client Key")
	stored := sumOf(h, clientKey)
	withoutProof := "c=biws,r=" + nonce
	authMsg := s.clientFirstBare + "," + string(serverFirst) + "," + withoutProof
	sig := mac(stored, authMsg)
	proof := make([]byte, len(sig))
	for i := range sig {
		proof[i] = clientKey[i] ^ sig[i]
	}
	s.serverSig = mac(mac(salted, "Server Key"), authMsg)
	return []byte(withoutProof + ",p=" + base64.StdEncoding.EncodeToString(proof)), nil
}

func sumOf(h func() hash.Hash, b []byte) []byte {
	x := h()
	x.Write(b)
	return x.Sum(nil)
}

func (s *scramClient) verify(serverFinal []byte) error {
	if string(serverFinal) != "v="+base64.StdEncoding.EncodeToString(s.serverSig) {
		return fmt.Errorf("server signature %q does not match", serverFinal)
	}
	return nil
}

// auth runs a whole SCRAM conversation on c.
func (c *client) auth(db string, sc *scramClient, skipEmpty bool) error {
	c.t.Helper()
	start := d("saslStart", int32(1), "mechanism", sc.mech, "payload", bson.Binary{Data: sc.first()})
	if skipEmpty {
		start = append(start, bson.E{Key: "options", Value: d("skipEmptyExchange", true)})
	}
	r, err := c.run(db, start)
	if err != nil {
		return err
	}
	return c.continueAuth(db, sc, r)
}

// continueAuth finishes a conversation from the server-first reply r.
func (c *client) continueAuth(db string, sc *scramClient, r bson.Raw) error {
	id := r.Lookup("conversationId").Int32()
	final, err := sc.final(r.Lookup("payload").Binary().Data)
	if err != nil {
		return err
	}
	r, err = c.run(db, d("saslContinue", int32(1), "conversationId", id, "payload", bson.Binary{Data: final}))
	if err != nil {
		return err
	}
	if err := sc.verify(r.Lookup("payload").Binary().Data); err != nil {
		return err
	}
	if r.Lookup("done").Boolean() {
		return nil
	}
	r, err = c.run(db, d("saslContinue", int32(1), "conversationId", id, "payload", bson.Binary{Data: []byte{}}))
	if err != nil {
		return err
	}
	if !r.Lookup("done").Boolean() {
		return errors.New("conversation not done after the empty exchange")
	}
	return nil
}

// waitGoroutines waits for the goroutine count to fall back to n.
func waitGoroutines(t testing.TB, n int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > n && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := runtime.NumGoroutine(); got > n {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines, want at most %d:\n%s", got, n, buf[:runtime.Stack(buf, true)])
	}
}

// waitConnError waits until a connection error containing want is recorded.
func waitConnError(t testing.TB, s *Server, want string) ConnectionError {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		for _, e := range s.ConnectionErrors() {
			if strings.Contains(e.Reason, want) {
				return e
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no connection error containing %q; have %v", want, s.ConnectionErrors())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func timeIn() time.Time { return time.Now().Add(5 * time.Second) }
