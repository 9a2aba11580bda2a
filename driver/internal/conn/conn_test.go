package conn

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/golang/snappy"
	"github.com/klauspost/compress/zstd"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/handshake"
	"github.com/mongoscope/mongoscope/internal/wire"
)

func ping(t testing.TB) bson.Raw { return doc(t, bson.D{{Key: "ping", Value: int32(1)}}) }

func pingWithDB(t testing.TB, db string) bson.Raw {
	return doc(t, bson.D{{Key: "ping", Value: int32(1)}, {Key: "$db", Value: db}})
}

func okReply(t testing.TB) bson.Raw { return doc(t, bson.D{{Key: "ok", Value: 1.0}}) }

func TestHandshakeAndCommandBytes(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			addr := serve(t, network, func(s *scriptConn) {
				s.handshake(t, nil)
				s.expect("ping", opMsg(2, 0, 0, pingWithDB(t, "admin"), false))
				s.write(opMsg(101, 2, 0, okReply(t), false))
			})
			c := dialScripted(t, addr, nil)
			if h := c.Hello(); !h.IsWritablePrimary || !h.HelloOK || h.MaxWireVersion != 25 || h.ConnectionID != 7 {
				t.Errorf("hello reply read as %+v", h)
			}
			if c.Compressor() != wire.CompressorNoop {
				t.Errorf("compressor %v without negotiation", c.Compressor())
			}
			r, err := c.Command(context.Background(), &Request{DB: "admin", Command: ping(t)})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Release()
			if !bytes.Equal(r.Body, okReply(t)) {
				t.Errorf("reply body %v", r.Body)
			}
		})
	}
}

// The Stable API and load-balanced mode use the hello command, not legacy
// hello, and load-balanced mode requires serviceId in the reply.
func TestHelloVariants(t *testing.T) {
	strict := true
	api := &handshake.ServerAPI{Version: "1", Strict: &strict}
	wantAPI := doc(t, bson.D{{Key: "hello", Value: int32(1)}, {Key: "helloOk", Value: true}, {Key: "backpressure", Value: "2"},
		{Key: "client", Value: testMetadata(t)}, {Key: "apiVersion", Value: "1"}, {Key: "apiStrict", Value: true}, {Key: "$db", Value: "admin"}})
	addr := serve(t, "tcp", func(s *scriptConn) {
		s.expect("hello with serverApi", opMsg(1, 0, 0, wantAPI, false))
		s.write(opMsg(100, 1, 0, helloReply(t), false))
	})
	dialScripted(t, addr, func(c *Config) { c.Handshake.ServerAPI = api })

	wantLB := doc(t, bson.D{{Key: "hello", Value: int32(1)}, {Key: "helloOk", Value: true}, {Key: "backpressure", Value: "2"},
		{Key: "client", Value: testMetadata(t)}, {Key: "loadBalanced", Value: true}, {Key: "$db", Value: "admin"}})
	addr = serve(t, "tcp", func(s *scriptConn) {
		s.expect("hello with loadBalanced", opMsg(1, 0, 0, wantLB, false))
		s.write(opMsg(100, 1, 0, helloReply(t), false))
	})
	_, err := Dial(context.Background(), Config{Address: addr, Metadata: testMetadata(t), RequestID: counter(),
		Handshake: handshake.Options{LoadBalanced: true}})
	var he *HandshakeError
	if !errors.As(err, &he) || !strings.Contains(err.Error(), "Driver attempted to initialize in load balancing mode, but the server does not support this mode.") {
		t.Errorf("load-balanced hello without serviceId: %v", err)
	}

	sid := bson.NewObjectID()
	addr = serve(t, "tcp", func(s *scriptConn) {
		s.expect("hello with loadBalanced", opMsg(1, 0, 0, wantLB, false))
		s.write(opMsg(100, 1, 0, helloReply(t, bson.E{Key: "serviceId", Value: sid}), false))
	})
	c := dialScripted(t, addr, func(c *Config) { c.Handshake.LoadBalanced = true })
	if c.Hello().ServiceID == nil || *c.Hello().ServiceID != sid {
		t.Errorf("serviceId %v", c.Hello().ServiceID)
	}
}

// compressed frames an OP_COMPRESSED around msg by hand, compressing with
// the libraries directly.
func compressed(t testing.TB, msg []byte, id byte) []byte {
	var payload []byte
	switch id {
	case 1:
		payload = snappy.Encode(nil, msg[16:])
	case 2:
		var b bytes.Buffer
		w, _ := zlib.NewWriterLevel(&b, zlib.DefaultCompression)
		_, _ = w.Write(msg[16:])
		_ = w.Close()
		payload = b.Bytes()
	case 3:
		enc, _ := zstd.NewWriter(nil)
		payload = enc.EncodeAll(msg[16:], nil)
		_ = enc.Close()
	}
	out := le32(nil, uint32(16+9+len(payload)))
	out = append(out, msg[4:12]...)
	out = le32(out, 2012)
	out = append(out, msg[12:16]...)
	out = le32(out, uint32(len(msg)-16))
	out = append(out, id)
	return append(out, payload...)
}

// uncompress checks an OP_COMPRESSED message's header and returns the
// original message, decompressing with the libraries directly.
func uncompress(t testing.TB, msg []byte, wantID byte) []byte {
	t.Helper()
	if len(msg) < 25 || binary.LittleEndian.Uint32(msg[12:]) != 2012 {
		t.Errorf("not OP_COMPRESSED: % x", msg)
		return nil
	}
	orig := binary.LittleEndian.Uint32(msg[16:])
	size := int(binary.LittleEndian.Uint32(msg[20:]))
	if msg[24] != wantID {
		t.Errorf("compressor id %d, want %d", msg[24], wantID)
	}
	var body []byte
	var err error
	switch msg[24] {
	case 1:
		body, err = snappy.Decode(nil, msg[25:])
	case 2:
		var r io.ReadCloser
		if r, err = zlib.NewReader(bytes.NewReader(msg[25:])); err == nil {
			body, err = io.ReadAll(r)
		}
	case 3:
		dec, _ := zstd.NewReader(nil)
		body, err = dec.DecodeAll(msg[25:], nil)
		dec.Close()
	}
	if err != nil || len(body) != size {
		t.Errorf("payload: %v, %d bytes, header says %d", err, len(body), size)
		return nil
	}
	out := le32(nil, uint32(16+len(body)))
	out = append(out, msg[4:12]...)
	out = le32(out, orig)
	return append(out, body...)
}

// Each compressor: negotiated in the hello, used for a ping in both
// directions, and never for a command on the spec's list (hello here).
func TestCompression(t *testing.T) {
	for _, tc := range []struct {
		name string
		id   byte
	}{{"snappy", 1}, {"zlib", 2}, {"zstd", 3}} {
		t.Run(tc.name, func(t *testing.T) {
			offer := []string{tc.name, "zstd"}
			if tc.name == "zstd" {
				offer = []string{"zstd"}
			}
			hello := doc(t, bson.D{{Key: "hello", Value: int32(1)}})
			addr := serve(t, "tcp", func(s *scriptConn) {
				s.handshake(t, offer, bson.E{Key: "compression", Value: []string{tc.name}})
				got := uncompress(t, s.read(), tc.id)
				if want := opMsg(2, 0, 0, pingWithDB(t, "admin"), false); !bytes.Equal(got, want) {
					t.Errorf("ping after decompression: % x, want % x", got, want)
				}
				s.write(compressed(t, opMsg(101, 2, 0, okReply(t), false), tc.id))
				s.expect("hello, never compressed", opMsg(3, 0, 0, doc(t, bson.D{{Key: "hello", Value: int32(1)}, {Key: "$db", Value: "admin"}}), false))
				s.write(opMsg(102, 3, 0, helloReply(t), false))
			})
			c := dialScripted(t, addr, func(c *Config) { c.Handshake.Compressors = offer })
			if c.Compressor().String() != tc.name {
				t.Fatalf("negotiated %v", c.Compressor())
			}
			r, err := c.Command(context.Background(), &Request{DB: "admin", Command: ping(t)})
			if err != nil {
				t.Fatal(err)
			}
			if !r.Compressed || !bytes.Equal(r.Body, okReply(t)) {
				t.Errorf("reply compressed=%v body %v", r.Compressed, r.Body)
			}
			r.Release()
			r, err = c.Command(context.Background(), &Request{DB: "admin", Command: hello})
			if err != nil {
				t.Fatal(err)
			}
			r.Release()
		})
	}
}

func TestChecksum(t *testing.T) {
	addr := serve(t, "tcp", func(s *scriptConn) {
		s.handshake(t, nil)
		s.read()
		s.write(opMsg(101, 2, 0, okReply(t), true))
		s.read()
		bad := opMsg(102, 3, 0, okReply(t), true)
		bad[len(bad)-1] ^= 0xff
		s.write(bad)
	})
	c := dialScripted(t, addr, nil)
	r, err := c.Command(context.Background(), &Request{DB: "admin", Command: ping(t)})
	if err != nil {
		t.Fatalf("reply with a good checksum: %v", err)
	}
	r.Release()
	_, err = c.Command(context.Background(), &Request{DB: "admin", Command: ping(t)})
	var ne *NetworkError
	if !errors.As(err, &ne) || !errors.Is(err, wire.ErrChecksum) || !c.Closed() {
		t.Errorf("bad checksum: %v (closed %v)", err, c.Closed())
	}
	if _, err := c.Command(context.Background(), &Request{DB: "admin", Command: ping(t)}); !errors.Is(err, ErrClosed) {
		t.Errorf("command on a closed connection: %v", err)
	}
}

// An exhaust request: the server streams three replies, the first two with
// moreToCome, each answering the one before.
func TestExhaust(t *testing.T) {
	getMore := doc(t, bson.D{{Key: "getMore", Value: int64(5)}, {Key: "collection", Value: "c"}})
	getMoreDB := doc(t, bson.D{{Key: "getMore", Value: int64(5)}, {Key: "collection", Value: "c"}, {Key: "$db", Value: "db"}})
	batch := func(n int32) bson.Raw { return doc(t, bson.D{{Key: "n", Value: n}, {Key: "ok", Value: 1.0}}) }
	addr := serve(t, "tcp", func(s *scriptConn) {
		s.handshake(t, nil)
		s.expect("exhaust getMore", opMsg(2, 0, 1<<16, getMoreDB, false))
		s.write(opMsg(201, 2, 2, batch(1), false))
		s.write(opMsg(202, 201, 2, batch(2), false))
		s.write(opMsg(203, 202, 0, batch(3), false))
		s.expect("next command", opMsg(3, 0, 0, pingWithDB(t, "admin"), false))
		s.write(opMsg(204, 3, 0, okReply(t), false))
	})
	c := dialScripted(t, addr, nil)
	ctx := context.Background()
	if err := c.Send(ctx, &Request{DB: "db", Command: getMore, ExhaustAllowed: true}); err != nil {
		t.Fatal(err)
	}
	for i := int32(1); i <= 3; i++ {
		r, err := c.Receive(ctx)
		if err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		if got := r.Body.Lookup("n").Int32(); got != i || r.MoreToCome != (i < 3) || c.Streaming() != (i < 3) {
			t.Errorf("reply %d: n=%d moreToCome=%v streaming=%v", i, got, r.MoreToCome, c.Streaming())
		}
		if i < 3 {
			if err := c.Send(ctx, &Request{DB: "admin", Command: ping(t)}); err == nil {
				t.Error("Send while streaming succeeded")
			}
		}
		r.Release()
	}
	r, err := c.Command(ctx, &Request{DB: "admin", Command: ping(t)})
	if err != nil {
		t.Fatal(err)
	}
	r.Release()
}

// An unacknowledged write carries moreToCome and gets no reply; the next
// command is answered normally.
func TestMoreToComeRequest(t *testing.T) {
	ins := doc(t, bson.D{{Key: "insert", Value: "c"}, {Key: "writeConcern", Value: bson.D{{Key: "w", Value: int32(0)}}}})
	insDB := doc(t, bson.D{{Key: "insert", Value: "c"}, {Key: "writeConcern", Value: bson.D{{Key: "w", Value: int32(0)}}}, {Key: "$db", Value: "db"}})
	docs := []bson.Raw{doc(t, bson.D{{Key: "_id", Value: int32(1)}}), doc(t, bson.D{{Key: "_id", Value: int32(2)}})}
	addr := serve(t, "tcp", func(s *scriptConn) {
		s.handshake(t, nil)
		s.expect("unacknowledged insert", opMsg(2, 0, 2, insDB, false, "documents", docs))
		s.expect("ping", opMsg(3, 0, 0, pingWithDB(t, "admin"), false))
		s.write(opMsg(101, 3, 0, okReply(t), false))
	})
	c := dialScripted(t, addr, nil)
	ctx := context.Background()
	r, err := c.Command(ctx, &Request{DB: "db", Command: ins, MoreToCome: true, Sequences: []wire.Sequence{{Identifier: "documents", Docs: docs}}})
	if r != nil || err != nil {
		t.Fatalf("unacknowledged write: %v, %v", r, err)
	}
	r, err = c.Command(ctx, &Request{DB: "admin", Command: ping(t)})
	if err != nil {
		t.Fatal(err)
	}
	r.Release()
}

func TestServerErrors(t *testing.T) {
	fail := doc(t, bson.D{{Key: "ok", Value: 0.0}, {Key: "errmsg", Value: "E11000 duplicate key"}, {Key: "code", Value: int32(11000)},
		{Key: "codeName", Value: "DuplicateKey"}, {Key: "errorLabels", Value: []string{"RetryableWriteError"}}})
	wce := doc(t, bson.D{{Key: "n", Value: int32(1)}, {Key: "writeConcernError", Value: bson.D{{Key: "code", Value: int32(64)},
		{Key: "codeName", Value: "WriteConcernFailed"}, {Key: "errmsg", Value: "waiting for replication timed out"},
		{Key: "errInfo", Value: bson.D{{Key: "wtimeout", Value: true}}}}}, {Key: "ok", Value: 1.0}})
	addr := serve(t, "tcp", func(s *scriptConn) {
		s.handshake(t, nil)
		s.read()
		s.write(opMsg(101, 2, 0, fail, false))
		s.read()
		s.write(opMsg(102, 3, 0, wce, false))
		s.read()
		s.write(opMsg(103, 4, 0, okReply(t), false))
	})
	c := dialScripted(t, addr, nil)
	ctx := context.Background()
	r, err := c.Command(ctx, &Request{DB: "db", Command: ping(t)})
	var ce *CommandError
	if r != nil || !errors.As(err, &ce) || ce.Code != 11000 || ce.CodeName != "DuplicateKey" || ce.Message != "E11000 duplicate key" ||
		!ce.HasLabel("RetryableWriteError") || !bytes.Equal(ce.Raw, fail) {
		t.Errorf("ok:0 reply: %v, %#v", r, err)
	}
	if c.Closed() {
		t.Error("a server error closed the connection")
	}
	r, err = c.Command(ctx, &Request{DB: "db", Command: ping(t)})
	var we *WriteConcernError
	if r == nil || !errors.As(err, &we) || we.Code != 64 || we.CodeName != "WriteConcernFailed" || we.Details.Lookup("wtimeout").Boolean() != true {
		t.Errorf("writeConcernError: %v, %#v", r, err)
	}
	r.Release()
	r, err = c.Command(ctx, &Request{DB: "db", Command: ping(t)})
	if err != nil {
		t.Fatal(err)
	}
	r.Release()
}

func TestReplyError(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    bson.D
		want string // "" for nil, else substring
	}{
		{"ok double", bson.D{{Key: "ok", Value: 1.0}}, ""},
		{"ok int32", bson.D{{Key: "ok", Value: int32(1)}}, ""},
		{"ok int64", bson.D{{Key: "ok", Value: int64(1)}}, ""},
		{"ok true", bson.D{{Key: "ok", Value: true}}, ""},
		{"ok 0", bson.D{{Key: "ok", Value: 0.0}, {Key: "errmsg", Value: "boom"}}, "boom"},
		{"ok false", bson.D{{Key: "ok", Value: false}}, "server error"},
		{"ok string", bson.D{{Key: "ok", Value: "1"}}, "ok field of type string"},
		{"no ok", bson.D{{Key: "n", Value: int32(1)}}, "no ok field"},
		{"ok 0 code", bson.D{{Key: "ok", Value: 0.0}, {Key: "code", Value: int64(13)}, {Key: "codeName", Value: "Unauthorized"}}, "13 (Unauthorized)"},
	} {
		err := ReplyError(doc(t, tc.d))
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// Malformed replies close the connection with a typed error.
func TestBadReplies(t *testing.T) {
	good := opMsg(101, 2, 0, okReply(t), false)
	badKind := append([]byte(nil), good...)
	badKind[20] = 7
	wrongTo := opMsg(101, 99, 0, okReply(t), false)
	huge := le32(nil, 1<<30)
	huge = append(huge, good[4:]...)
	withSeq := opMsg(101, 2, 0, okReply(t), false, "documents", []bson.Raw{okReply(t)})
	corrupt := compressed(t, good, 1)
	corrupt[25] ^= 0x55 // the snappy preamble: the decoded length no longer matches
	query := make([]byte, 0, 64)
	query = le32(query, 0)
	query = append(query, good[4:12]...)
	query = le32(query, 2004)
	query = append(query, good[16:]...)
	binary.LittleEndian.PutUint32(query, uint32(len(query)))
	for _, tc := range []struct {
		name  string
		reply []byte
		want  string
	}{
		{"truncated", good[:len(good)-3], "read"},
		{"bad section kind", badKind, "decode"},
		{"wrong responseTo", wrongTo, "answers request 99"},
		{"over maxMessageSizeBytes", huge, "read"},
		{"document sequence", withSeq, "sequences"},
		{"corrupt snappy", corrupt, "decode"},
		{"OP_QUERY as a reply", query, "opcode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := serve(t, "tcp", func(s *scriptConn) {
				s.handshake(t, nil)
				s.read()
				s.write(tc.reply)
			})
			c := dialScripted(t, addr, nil)
			r, err := c.Command(context.Background(), &Request{DB: "admin", Command: ping(t)})
			var ne *NetworkError
			if r != nil || !errors.As(err, &ne) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, %v; want a NetworkError mentioning %q", r, err, tc.want)
			}
			if !c.Closed() {
				t.Error("connection left open")
			}
		})
	}
}

func TestDeadlineAndCancel(t *testing.T) {
	release := make(chan struct{})
	addr := serve(t, "tcp", func(s *scriptConn) {
		s.handshake(t, nil)
		s.read()
		<-release
	})
	t.Cleanup(func() { close(release) })
	c := dialScripted(t, addr, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Command(ctx, &Request{DB: "admin", Command: ping(t)})
	var ne *NetworkError
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("deadline: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("deadline of 50ms took %v", d)
	}
	if !c.Closed() {
		t.Error("a timed-out connection stays open")
	}

	// Cancellation without a deadline interrupts the read too.
	release2 := make(chan struct{})
	addr = serve(t, "tcp", func(s *scriptConn) {
		s.handshake(t, nil)
		s.read()
		<-release2
	})
	t.Cleanup(func() { close(release2) })
	c = dialScripted(t, addr, nil)
	ctx2, cancel2 := context.WithCancel(context.Background())
	time.AfterFunc(30*time.Millisecond, cancel2)
	_, err = c.Command(ctx2, &Request{DB: "admin", Command: ping(t)})
	if !errors.Is(err, context.Canceled) || !c.Closed() {
		t.Errorf("cancel: %v", err)
	}

	// The socket timeout bounds a read when the context has no deadline.
	release3 := make(chan struct{})
	addr = serve(t, "tcp", func(s *scriptConn) {
		s.handshake(t, nil)
		s.read()
		<-release3
	})
	t.Cleanup(func() { close(release3) })
	c = dialScripted(t, addr, func(c *Config) { c.SocketTimeout = 40 * time.Millisecond })
	_, err = c.Command(context.Background(), &Request{DB: "admin", Command: ping(t)})
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("socket timeout: %v", err)
	}
}

// A server that accepts but never answers the hello: connectTimeoutMS
// bounds the whole handshake.
func TestConnectTimeout(t *testing.T) {
	release := make(chan struct{})
	addr := serve(t, "tcp", func(s *scriptConn) {
		s.read()
		<-release
	})
	t.Cleanup(func() { close(release) })
	start := time.Now()
	_, err := Dial(context.Background(), Config{Address: addr, Metadata: testMetadata(t), ConnectTimeout: 60 * time.Millisecond})
	var ne *NetworkError
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("Dial = %v, want a timeout", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Errorf("took %v", time.Since(start))
	}
	if _, err := Dial(context.Background(), Config{}); err == nil {
		t.Error("Dial with no address succeeded")
	}
}

// A message larger than the server's maxMessageSizeBytes is refused before
// anything is written; the connection stays usable.
func TestMessageTooLarge(t *testing.T) {
	addr := serve(t, "tcp", func(s *scriptConn) {
		s.handshake(t, nil, bson.E{Key: "maxMessageSizeBytes", Value: int32(200)})
		s.expect("ping", opMsg(3, 0, 0, pingWithDB(t, "admin"), false))
		s.write(opMsg(101, 3, 0, okReply(t), false))
	})
	c := dialScripted(t, addr, nil)
	big := doc(t, bson.D{{Key: "insert", Value: strings.Repeat("x", 300)}})
	_, err := c.Command(context.Background(), &Request{DB: "admin", Command: big})
	var me *MessageSizeError
	if !errors.As(err, &me) || c.Closed() {
		t.Fatalf("oversized message: %v (closed %v)", err, c.Closed())
	}
	r, err := c.Command(context.Background(), &Request{DB: "admin", Command: ping(t)})
	if err != nil {
		t.Fatal(err)
	}
	r.Release()
}

// A hello refused by the server, or from a server too old for OP_MSG,
// fails the dial.
func TestHandshakeFailures(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply bson.Raw
		want  string
	}{
		{"refused", doc(t, bson.D{{Key: "ok", Value: 0.0}, {Key: "errmsg", Value: "no"}, {Key: "code", Value: int32(8000)}}), "8000"},
		{"old server", doc(t, bson.D{{Key: "ismaster", Value: true}, {Key: "maxWireVersion", Value: int32(5)}, {Key: "ok", Value: 1.0}}), "wire version 5"},
		{"bad field type", doc(t, bson.D{{Key: "ismaster", Value: true}, {Key: "maxWireVersion", Value: "x"}, {Key: "ok", Value: 1.0}}), "maxWireVersion"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := serve(t, "tcp", func(s *scriptConn) {
				s.read()
				s.write(opMsg(100, 1, 0, tc.reply, false))
			})
			_, err := Dial(context.Background(), Config{Address: addr, Metadata: testMetadata(t), RequestID: counter()})
			var he *HandshakeError
			if !errors.As(err, &he) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Dial = %v, want a HandshakeError mentioning %q", err, tc.want)
			}
		})
	}
}

// What bounds the handshake's commands (handshakeBound), against a server
// that accepts and never answers the hello: socketTimeoutMS without
// timeoutMS; the client's timeoutMS outside an operation, where
// connectTimeoutMS bounds only the socket; an operation's context
// (ForOperation), without socketTimeoutMS or connectTimeoutMS.
func TestHandshakeTimeouts(t *testing.T) {
	const short, long = 60 * time.Millisecond, 600 * time.Millisecond
	for _, tc := range []struct {
		name     string
		cfg      func(*Config)
		ctxLimit time.Duration // the context's deadline, 0 for none
		op       bool          // the context is an operation's (ForOperation)
		min, max time.Duration // how long the failure may take
	}{
		{"socketTimeoutMS without timeoutMS", func(c *Config) { c.ConnectTimeout, c.SocketTimeout = 10*time.Second, short }, 0, false, 0, long / 2},
		{"timeoutMS in the background", func(c *Config) {
			c.ConnectTimeout, c.SocketTimeout, c.Timeout, c.TimeoutSet = 10*time.Second, 10*time.Second, short, true
		}, 0, false, 0, long / 2},
		{"timeoutMS 0 in the background: not connectTimeoutMS", func(c *Config) { c.ConnectTimeout, c.TimeoutSet = short, true },
			long, false, long * 3 / 4, 10 * time.Second},
		{"an operation's context", func(c *Config) {
			c.ConnectTimeout, c.SocketTimeout, c.Timeout, c.TimeoutSet = short, short, short, true
		},
			long, true, long * 3 / 4, 10 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			addr := serve(t, "tcp", func(s *scriptConn) {
				s.read()
				<-release
			})
			t.Cleanup(func() { close(release) })
			cfg := Config{Address: addr, Metadata: testMetadata(t)}
			tc.cfg(&cfg)
			ctx := context.Background()
			if tc.ctxLimit > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.ctxLimit)
				defer cancel()
			}
			if tc.op {
				ctx = ForOperation(ctx)
			}
			start := time.Now()
			_, err := Dial(ctx, cfg)
			took := time.Since(start)
			var ne *NetworkError
			if !errors.As(err, &ne) || !ne.Timeout() {
				t.Fatalf("Dial = %v, want a timeout", err)
			}
			if took < tc.min || took > tc.max {
				t.Fatalf("the hello timed out after %v, want between %v and %v", took, tc.min, tc.max)
			}
		})
	}
}
