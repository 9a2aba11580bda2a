package auth

import (
	"context"
	"crypto/pbkdf2"
	"encoding/base64"
	"errors"
	"hash"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

const (
	fuzzNonce       = "fyko+d2lbbFgONRv9qkxdawL"
	fuzzPassword    = "pencil-fuzz-secret"
	fuzzServerFirst = "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096"
)

// fuzzConfig derives keys with one PBKDF2 round whatever the count says:
// the fuzz targets exercise the parsers and the state machine, and a real
// derivation per input would make them a thousand times slower. The
// iteration-count checks still run on the announced count.
func fuzzConfig() *config {
	return &config{
		nonce: func() (string, error) { return fuzzNonce, nil },
		cache: newKeyCache(4),
		derive: func(h func() hash.Hash, password string, salt []byte, _ int) ([]byte, error) {
			return pbkdf2.Key(h, password, salt, 1, h().Size())
		},
	}
}

// fuzzVerifier returns the server-final message that completes a fuzzConfig
// conversation after serverFirst.
func fuzzVerifier(tb testing.TB, mech, serverFirst string) string {
	pw, err := scramPassword(mech, "user", fuzzPassword)
	if err != nil {
		tb.Fatal(err)
	}
	c := newSCRAMClient(mech, "user", pw, fuzzNonce, fuzzConfig())
	if _, err := c.start(); err != nil {
		tb.Fatal(err)
	}
	if _, err := c.next([]byte(serverFirst)); err != nil {
		tb.Fatal(err)
	}
	return "v=" + base64.StdEncoding.EncodeToString(c.serverSignature)
}

// checkFuzzError checks that err is an *Error that does not leak the
// password, unless the server's own input held it (an error may quote the
// server).
func checkFuzzError(t *testing.T, err error, inputs ...[]byte) {
	t.Helper()
	var ae *Error
	if !errors.As(err, &ae) {
		t.Fatalf("error %T is not an *Error: %v", err, err)
	}
	secrets := []string{fuzzPassword, mongoPasswordDigest("user", fuzzPassword)}
	for _, in := range inputs {
		for _, s := range secrets {
			if strings.Contains(string(in), s) {
				return
			}
		}
	}
	if msg := err.Error(); strings.Contains(msg, secrets[0]) || strings.Contains(msg, secrets[1]) {
		t.Fatalf("error leaks the password: %s", msg)
	}
}

// FuzzSCRAMServerMessages feeds arbitrary server-first and server-final
// messages to the SCRAM client: it never panics, fails only with *Error,
// and completes only on the right server signature.
func FuzzSCRAMServerMessages(f *testing.F) {
	for _, mech := range []bool{false, true} {
		m := MechanismSCRAMSHA1
		if mech {
			m = MechanismSCRAMSHA256
		}
		f.Add(fuzzServerFirst, fuzzVerifier(f, m, fuzzServerFirst), mech)
		f.Add(fuzzServerFirst+",x=ext", fuzzVerifier(f, m, fuzzServerFirst+",x=ext")+",y=z", mech)
	}
	seeds := [][2]string{
		{fuzzServerFirst, "v=rmF9pqV8S7suAoZWja4dJRkFsKQ="},
		{fuzzServerFirst, "e=invalid-proof"},
		{fuzzServerFirst, ""},
		{fuzzServerFirst, "v=%%"},
		{"r=fyko+d2lbbFgONRv9qkxdawL3rfc,s=QSXCR+Q6sek8bf92,i=4095", ""},
		{"r=fyko+d2lbbFgONRv9qkxdawL3rfc,s=QSXCR+Q6sek8bf92,i=99999999", ""},
		{"r=fyko+d2lbbFgONRv9qkxdawL3rfc,s=,i=4096", ""},
		{"r=fyko+d2lbbFgONRv9qkxdawL3rfc,s=***,i=4096", ""},
		{"r=fyko+d2lbbFgONRv9qkxdawL,s=QSXCR+Q6sek8bf92,i=4096", ""},
		{"r=other,s=QSXCR+Q6sek8bf92,i=4096", ""},
		{"m=x,r=fyko+d2lbbFgONRv9qkxdawL3rfc,s=QSXCR+Q6sek8bf92,i=4096", ""},
		{"r=fyko+d2lbbFgONRv9qkxdawL\x00\xff,s=QSXCR+Q6sek8bf92,i=4096", ""},
		{"", ""},
		{",,,", ",,,"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], true)
	}
	f.Fuzz(func(t *testing.T, serverFirst, serverFinal string, sha256 bool) {
		mech := MechanismSCRAMSHA1
		if sha256 {
			mech = MechanismSCRAMSHA256
		}
		pw, perr := scramPassword(mech, "user", fuzzPassword)
		if perr != nil {
			t.Fatal(perr)
		}
		c := newSCRAMClient(mech, "user", pw, fuzzNonce, fuzzConfig())
		if _, err := c.start(); err != nil {
			t.Fatal(err)
		}
		final, err := c.next([]byte(serverFirst))
		if err != nil {
			checkFuzzError(t, err, []byte(serverFirst))
			if c.completed() {
				t.Fatal("completed after a bad server-first message")
			}
			return
		}
		if !strings.HasPrefix(string(final), "c=biws,r="+fuzzNonce) {
			t.Fatalf("client-final %q", final)
		}
		if _, err := c.next([]byte(serverFinal)); err != nil {
			checkFuzzError(t, err, []byte(serverFirst), []byte(serverFinal))
			if c.completed() {
				t.Fatal("completed after a bad server-final message")
			}
			return
		}
		if !c.completed() {
			t.Fatal("accepted a server-final message without completing")
		}
		want := "v=" + base64.StdEncoding.EncodeToString(c.serverSignature)
		if first, _, _ := strings.Cut(serverFinal, ","); first != want {
			t.Fatalf("completed on %q; the signature is %q", serverFinal, want)
		}
	})
}

// fuzzRunner answers with the fuzzer's replies, then fails.
type fuzzRunner struct{ replies [][]byte }

func (r *fuzzRunner) RunCommand(_ context.Context, _ string, cmd bson.Raw) (bson.Raw, error) {
	if err := cmd.Validate(); err != nil {
		return nil, err
	}
	if len(r.replies) == 0 {
		return nil, errors.New("fuzz: no more replies")
	}
	reply := r.replies[0]
	r.replies = r.replies[1:]
	return reply, nil
}

// FuzzAuthenticateReplies feeds an arbitrary hello reply and arbitrary
// command replies to every mechanism's conversation: it never panics, and
// every failure is an *Error.
func FuzzAuthenticateReplies(f *testing.F) {
	doc := func(d bson.D) []byte {
		b, err := bson.Marshal(d)
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	sasl := func(done bool, payload string) []byte {
		return doc(bson.D{{Key: "conversationId", Value: int32(1)}, {Key: "done", Value: done}, {Key: "payload", Value: bson.Binary{Data: []byte(payload)}}, {Key: "ok", Value: 1.0}})
	}
	spec := func(payload string) []byte {
		return doc(bson.D{{Key: "ok", Value: 1.0}, {Key: "speculativeAuthenticate", Value: bson.D{
			{Key: "conversationId", Value: int32(1)}, {Key: "done", Value: false}, {Key: "payload", Value: bson.Binary{Data: []byte(payload)}}}}})
	}
	mechs := doc(bson.D{{Key: "ok", Value: 1.0}, {Key: "saslSupportedMechs", Value: bson.A{"SCRAM-SHA-1", "SCRAM-SHA-256", 7}}})
	v1 := fuzzVerifier(f, MechanismSCRAMSHA1, fuzzServerFirst)
	v256 := fuzzVerifier(f, MechanismSCRAMSHA256, fuzzServerFirst)
	for m := uint8(0); m < 5; m++ {
		f.Add([]byte(nil), sasl(false, fuzzServerFirst), sasl(true, v256), []byte(nil), m)
		f.Add(mechs, sasl(false, fuzzServerFirst), sasl(false, v1), sasl(true, ""), m)
		f.Add(spec(fuzzServerFirst), sasl(true, v256), []byte(nil), []byte(nil), m)
		f.Add(spec(fuzzServerFirst), sasl(false, v1), sasl(false, ""), sasl(false, ""), m)
		f.Add(doc(bson.D{{Key: "speculativeAuthenticate", Value: bson.D{{Key: "dbname", Value: "$external"}}}}), doc(bson.D{{Key: "ok", Value: 0}}), []byte{5, 0, 0, 0, 0}, []byte{1, 2}, m)
	}
	f.Fuzz(func(t *testing.T, hello, r1, r2, r3 []byte, m uint8) {
		creds := [...]Credential{
			{Username: "user", Password: fuzzPassword},
			{Mechanism: MechanismSCRAMSHA1, Username: "user", Password: fuzzPassword},
			{Mechanism: MechanismSCRAMSHA256, Username: "user", Password: fuzzPassword},
			{Mechanism: MechanismPLAIN, Username: "user", Password: fuzzPassword},
			{Mechanism: MechanismX509, Username: "CN=user"},
		}
		cred := creds[int(m)%len(creds)]
		conv, serr := start(&cred, fuzzConfig())
		if serr != nil {
			t.Fatal(serr)
		}
		helloFor(t, conv)
		r := &fuzzRunner{replies: [][]byte{r1, r2, r3}}
		if err := conv.Authenticate(context.Background(), r, hello); err != nil {
			checkFuzzError(t, err, hello, r1, r2, r3)
		}
	})
}
