package conn

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/auth"
	"github.com/mongoscope/mongoscope/internal/wire"
)

// A scripted SCRAM-SHA-256 server, written here from RFC 5802/7677 so the
// connection's authentication is checked against an independent
// implementation: it verifies the client proof and signs its reply.
type scramServer struct {
	password string // ASCII, so SASLprep leaves it as is
	salt     []byte
	iter     int
	// state of the one conversation
	clientFirstBare, serverFirst string
	nonce                        string
}

func (s *scramServer) keys() (storedKey, serverKey []byte) {
	salted, _ := pbkdf2.Key(sha256.New, s.password, s.salt, s.iter, 32)
	ck := mac(salted, "Client Key")
	h := sha256.Sum256(ck)
	return h[:], mac(salted, "Server Key")
}

func mac(key []byte, msg string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

func (s *scramServer) first(payload []byte) (string, error) {
	p := string(payload)
	if !strings.HasPrefix(p, "n,,") {
		return "", fmt.Errorf("client-first %q lacks the gs2 header", p)
	}
	s.clientFirstBare = p[3:]
	i := strings.Index(s.clientFirstBare, ",r=")
	if i < 0 {
		return "", fmt.Errorf("client-first %q has no nonce", p)
	}
	s.nonce = s.clientFirstBare[i+3:] + "server-nonce-part"
	s.serverFirst = fmt.Sprintf("r=%s,s=%s,i=%d", s.nonce, base64.StdEncoding.EncodeToString(s.salt), s.iter)
	return s.serverFirst, nil
}

// final checks the client proof; ok false means a wrong password.
func (s *scramServer) final(payload []byte) (reply string, ok bool, err error) {
	p := string(payload)
	i := strings.LastIndex(p, ",p=")
	if i < 0 || !strings.HasPrefix(p, "c=biws,r="+s.nonce) {
		return "", false, fmt.Errorf("client-final %q malformed", p)
	}
	proof, err := base64.StdEncoding.DecodeString(p[i+3:])
	if err != nil {
		return "", false, err
	}
	authMsg := s.clientFirstBare + "," + s.serverFirst + "," + p[:i]
	storedKey, serverKey := s.keys()
	sig := mac(storedKey, authMsg)
	if len(proof) != len(sig) {
		return "", false, nil
	}
	ck := make([]byte, len(sig))
	for j := range sig {
		ck[j] = proof[j] ^ sig[j]
	}
	if h := sha256.Sum256(ck); !bytes.Equal(h[:], storedKey) {
		return "", false, nil
	}
	return "v=" + base64.StdEncoding.EncodeToString(mac(serverKey, authMsg)), true, nil
}

// scramScript plays hello and a SCRAM-SHA-256 conversation; speculative
// chooses whether the hello reply answers speculativeAuthenticate. wire
// collects every byte the client sent.
func scramScript(t *testing.T, srv *scramServer, speculative bool, sent *bytes.Buffer, mu *sync.Mutex) func(*scriptConn) {
	authFailed := doc(t, bson.D{{Key: "ok", Value: 0.0}, {Key: "errmsg", Value: "Authentication failed."}, {Key: "code", Value: int32(18)}, {Key: "codeName", Value: "AuthenticationFailed"}})
	return func(s *scriptConn) {
		read := func() wire.Msg {
			b := s.read()
			mu.Lock()
			sent.Write(b)
			mu.Unlock()
			m, err := wire.ParseMsg(b)
			if err != nil {
				t.Errorf("server: %v", err)
			}
			return m
		}
		hello := read()
		spec, hasSpec := hello.Body.Lookup("speculativeAuthenticate").DocumentOK()
		if !hasSpec || spec.Lookup("mechanism").StringValue() != "SCRAM-SHA-256" || spec.Lookup("db").StringValue() != "admin" {
			t.Errorf("server: hello without a SCRAM-SHA-256 speculativeAuthenticate: %v", hello.Body)
			return
		}
		var extra []bson.E
		if speculative {
			sf, err := srv.first(spec.Lookup("payload").Binary().Data)
			if err != nil {
				t.Errorf("server: %v", err)
				return
			}
			extra = append(extra, bson.E{Key: "speculativeAuthenticate", Value: bson.D{{Key: "conversationId", Value: int32(1)},
				{Key: "done", Value: false}, {Key: "payload", Value: bson.Binary{Data: []byte(sf)}}}})
		}
		s.write(opMsg(100, hello.Header.RequestID, 0, helloReply(t, extra...), false))
		if !speculative {
			start := read()
			if start.Body.Lookup("saslStart").Int32() != 1 || start.Body.Lookup("$db").StringValue() != "admin" {
				t.Errorf("server: want saslStart on admin, got %v", start.Body)
			}
			sf, err := srv.first(start.Body.Lookup("payload").Binary().Data)
			if err != nil {
				t.Errorf("server: %v", err)
				return
			}
			s.write(opMsg(101, start.Header.RequestID, 0, doc(t, bson.D{{Key: "conversationId", Value: int32(1)}, {Key: "done", Value: false},
				{Key: "payload", Value: bson.Binary{Data: []byte(sf)}}, {Key: "ok", Value: 1.0}}), false))
		}
		cont := read()
		if cont.Body.Lookup("saslContinue").Int32() != 1 {
			t.Errorf("server: want saslContinue, got %v", cont.Body)
			return
		}
		sfinal, ok, err := srv.final(cont.Body.Lookup("payload").Binary().Data)
		if err != nil {
			t.Errorf("server: %v", err)
			return
		}
		if !ok {
			s.write(opMsg(102, cont.Header.RequestID, 0, authFailed, false))
			return
		}
		s.write(opMsg(102, cont.Header.RequestID, 0, doc(t, bson.D{{Key: "conversationId", Value: int32(1)}, {Key: "done", Value: true},
			{Key: "payload", Value: bson.Binary{Data: []byte(sfinal)}}, {Key: "ok", Value: 1.0}}), false))
		ping := read()
		s.write(opMsg(103, ping.Header.RequestID, 0, okReply(t), false))
	}
}

func TestSCRAMAgainstScriptedServer(t *testing.T) {
	for _, speculative := range []bool{true, false} {
		t.Run(fmt.Sprintf("speculative=%v", speculative), func(t *testing.T) {
			srv := &scramServer{password: "correct horse", salt: []byte("0123456789abcdef"), iter: 4096}
			var sent bytes.Buffer
			var mu sync.Mutex
			addr := serve(t, "tcp", scramScript(t, srv, speculative, &sent, &mu))
			cred := &auth.Credential{Mechanism: "SCRAM-SHA-256", Source: "admin", Username: "alice", Password: "correct horse", PasswordSet: true}
			c := dialScripted(t, addr, func(c *Config) { c.Credential = cred })
			r, err := c.Command(context.Background(), &Request{DB: "admin", Command: ping(t)})
			if err != nil {
				t.Fatal(err)
			}
			r.Release()
			mu.Lock()
			defer mu.Unlock()
			if bytes.Contains(sent.Bytes(), []byte("correct horse")) {
				t.Error("the password crossed the wire")
			}
		})
	}
}

// Credentials never reach errors, formatted values or logs: a failed
// authentication with a distinctive password is captured every way a
// user could see it, and all of it is searched for the password and its
// encodings.
func TestCredentialsNeverLeak(t *testing.T) {
	const secret = "Tr0ub4dor&3-leak-canary"
	srv := &scramServer{password: "the real one", salt: []byte("fedcba9876543210"), iter: 4096}
	var sent bytes.Buffer
	var mu sync.Mutex
	addr := serve(t, "tcp", scramScript(t, srv, true, &sent, &mu))
	cred := &auth.Credential{Mechanism: "SCRAM-SHA-256", Source: "admin", Username: "alice", Password: secret, PasswordSet: true}
	cfg := Config{Address: addr, Metadata: testMetadata(t), Credential: cred, ConnectTimeout: 5 * time.Second}
	_, err := Dial(context.Background(), cfg)
	var he *HandshakeError
	var ce *CommandError
	if !errors.As(err, &he) || he.Stage != "auth" || !errors.As(err, &ce) || ce.Code != 18 {
		t.Fatalf("Dial with a wrong password: %v", err)
	}

	var captured bytes.Buffer
	fmt.Fprintf(&captured, "%v\n%+v\n%#v\n%s\n", err, err, err, err)
	for e := err; e != nil; e = errors.Unwrap(e) {
		fmt.Fprintf(&captured, "%v\n%#v\n", e, e)
	}
	fmt.Fprintf(&captured, "%v\n%+v\n%#v\n%s\n", cred, cred, cred, *cred)
	fmt.Fprintf(&captured, "%v\n%+v\n", cfg, cfg)
	logger := slog.New(slog.NewJSONHandler(&captured, nil))
	logger.Info("dial failed", "err", err, "credential", cred, "credValue", *cred)
	slog.New(slog.NewTextHandler(&captured, nil)).Error("dial failed", "err", err, "credential", cred)
	mu.Lock()
	captured.Write(sent.Bytes())
	mu.Unlock()

	for _, form := range []string{secret, base64.StdEncoding.EncodeToString([]byte(secret)), fmt.Sprintf("%x", secret)} {
		if bytes.Contains(captured.Bytes(), []byte(form)) {
			t.Errorf("captured output contains the password as %q", form)
		}
	}
	if !strings.Contains(captured.String(), "alice") {
		t.Error("the capture missed the credential entirely; the test would prove nothing")
	}
}
