package mongotest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/internal/wire"
)

// captureConn is a net.Conn that keeps what the server writes.
type captureConn struct{ out bytes.Buffer }

func (c *captureConn) Read([]byte) (int, error)         { return 0, io.EOF }
func (c *captureConn) Write(b []byte) (int, error)      { return c.out.Write(b) }
func (c *captureConn) Close() error                     { return nil }
func (c *captureConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *captureConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *captureConn) SetDeadline(time.Time) error      { return nil }
func (c *captureConn) SetReadDeadline(time.Time) error  { return nil }
func (c *captureConn) SetWriteDeadline(time.Time) error { return nil }

var fuzzUsers = func() map[UserRef]*user {
	s, _ := newServer(Options{})
	s.AddUser("admin", "u", "p")
	return s.users.users
}()

func fuzzSeeds(t testing.TB) [][]byte {
	msg := func(flags wire.Flags, cmd bson.D, seqs ...wire.Sequence) []byte {
		return wire.AppendMsg(nil, 7, 0, flags, marshal(t, cmd), seqs...)
	}
	ping := msg(0, d("ping", 1, "$db", "admin"))
	seeds := [][]byte{
		ping,
		msg(wire.ChecksumPresent, d("hello", 1, "helloOk", true, "compression", bson.A{"zstd", "zlib"}, "client", d("application", d("name", "a")), "$db", "admin")),
		msg(wire.MoreToCome, d("insert", "c", "$db", "test"), wire.Sequence{Identifier: "documents", Docs: []bson.Raw{marshal(t, d("_id", 1))}}),
		msg(wire.ExhaustAllowed, d("hello", 1, "topologyVersion", d("processId", bson.NewObjectID(), "counter", int64(0)), "maxAwaitTimeMS", 1, "$db", "admin")),
		msg(0, d("saslStart", 1, "mechanism", "SCRAM-SHA-256", "payload", bson.Binary{Data: []byte("n,,n=u,r=abc")}, "options", d("skipEmptyExchange", true), "$db", "admin")),
		msg(0, d("saslContinue", 1, "conversationId", 1, "payload", bson.Binary{Data: []byte("c=biws,r=abc,p=AAAA")}, "$db", "admin")),
		msg(0, d("buildInfo", 1, "$db", "x")),
		msg(0, d("serverStatus", 1, "$db", "admin")),
		msg(0, d("nosuch", 1)),
		wire.AppendQuery(nil, 3, wire.Query{FullCollectionName: "admin.$cmd", NumberToReturn: -1, Query: marshal(t, d("isMaster", 1))}),
		wire.AppendQuery(nil, 3, wire.Query{FullCollectionName: "admin.$cmd", NumberToReturn: -1, Query: marshal(t, d("find", "c"))}),
		append(msg(0, d("configureFailPoint", "failCommand", "mode", d("times", 1), "data", d("failCommands", bson.A{"ping"}, "errorCode", 91, "errorLabels", bson.A{"x"}), "$db", "admin")), ping...),
		append(msg(0, d("configureFailPoint", "failCommand", "mode", "alwaysOn", "data", d("failCommands", bson.A{"ping"}, "writeConcernError", d("code", 91)), "$db", "admin")), ping...),
		rawHeader(16, 1, 2013),
	}
	for _, comp := range []wire.Compressor{wire.CompressorNoop, wire.CompressorSnappy, wire.CompressorZlib, wire.CompressorZstd} {
		out, err := wire.Compress(nil, ping, comp, -1)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, out)
	}
	return seeds
}

// FuzzServerMessage feeds a byte stream of client messages to one
// connection's handler. Nothing may panic, every reply must be a valid
// message, and failures must end in an error, which closes the
// connection.
func FuzzServerMessage(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := newServer(Options{Topology: Topology{Role: RolePrimary, SetName: "rs"}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.cancel()
		s.users.users = fuzzUsers
		cc := &captureConn{}
		c := newConn(s, cc)
		// Bound any wait (blockConnection, awaitable hello) so one input
		// cannot stall the fuzzer.
		ctx, cancel := context.WithTimeout(c.ctx, 20*time.Millisecond)
		defer cancel()
		c.ctx = ctx
		r := bytes.NewReader(data)
		for {
			buf, err := wire.ReadMessage(r, MaxMessageSizeBytes)
			if err != nil {
				break
			}
			err = c.handleMessage(buf.B)
			buf.Release()
			if err != nil {
				if err.Error() == "" {
					t.Error("an error without a reason")
				}
				break
			}
		}
		out := bytes.NewReader(cc.out.Bytes())
		for out.Len() > 0 {
			buf, err := wire.ReadMessage(out, 0)
			if err != nil {
				t.Fatalf("reply stream: %v", err)
			}
			checkReply(t, buf.B)
			buf.Release()
		}
	})
}

func checkReply(t *testing.T, msg []byte) {
	h, err := wire.ParseHeader(msg)
	if err != nil {
		t.Fatal(err)
	}
	if h.OpCode == wire.OpCompressed {
		if msg, err = wire.Decompress(nil, msg, MaxMessageSizeBytes); err != nil {
			t.Fatal(err)
		}
		h, _ = wire.ParseHeader(msg)
	}
	var body bson.Raw
	switch h.OpCode {
	case wire.OpMsg:
		m, err := wire.ParseMsg(msg)
		if err != nil {
			t.Fatal(err)
		}
		body = m.Body
	case wire.OpReply:
		r, err := wire.ParseReply(msg)
		if err != nil || len(r.Documents) != 1 {
			t.Fatal(err)
		}
		body = r.Documents[0]
	default:
		t.Fatalf("reply opcode %s", h.OpCode)
	}
	if _, ok := body.Lookup("ok").AsFloat64OK(); !ok {
		t.Fatalf("reply without ok: %v", body)
	}
	if ok, _ := body.Lookup("ok").AsFloat64OK(); ok == 0 && body.Lookup("code").Type != bson.TypeInt32 {
		t.Fatalf("error reply without code: %v", body)
	}
}

// The seeds, run as a test: each but the bare header gets a reply (the
// moreToCome insert none) and no error.
func TestFuzzSeedsReply(t *testing.T) {
	bare := rawHeader(16, 1, 2013)
	for i, seed := range fuzzSeeds(t) {
		s, _ := newServer(Options{})
		cc := &captureConn{}
		c := newConn(s, cc)
		// The exhaust seed streams until the client goes away.
		ctx, cancel := context.WithTimeout(c.ctx, 50*time.Millisecond)
		c.ctx = ctx
		r := bytes.NewReader(seed)
		var failure error
		for failure == nil {
			buf, err := wire.ReadMessage(r, MaxMessageSizeBytes)
			if err != nil {
				break
			}
			failure = c.handleMessage(buf.B)
			buf.Release()
		}
		cancel()
		s.cancel()
		isBare := bytes.Equal(seed, bare)
		if (failure != nil) != isBare && !errors.Is(failure, context.DeadlineExceeded) {
			t.Errorf("seed %d: %v", i, failure)
		}
		if cc.out.Len() == 0 && !isBare && !bytes.Contains(seed, []byte("insert")) {
			t.Errorf("seed %d: no reply", i)
		}
	}
}
