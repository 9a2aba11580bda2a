package mongotest

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/internal/wire"
)

func TestCompressors(t *testing.T) {
	s := NewServer(t, Options{})
	for _, name := range []string{"snappy", "zlib", "zstd"} {
		t.Run(name, func(t *testing.T) {
			c := connect(t, s, clientOpts{compressors: []string{name}})
			if c.comp.String() != name {
				t.Fatalf("negotiated %v", c.comp)
			}
			c.send("admin", d("ping", 1, "pad", strings.Repeat("x", 1000)), 0)
			r, err := c.recv()
			if err != nil {
				t.Fatal(err)
			}
			if !r.compressed || replyError(r.Body) != nil {
				t.Errorf("compressed %v, %v", r.compressed, r.Body)
			}
			// Never-compressed commands are answered uncompressed, even
			// when the client compressed them against the rules.
			msg := wire.AppendMsg(nil, 99, 0, 0, marshal(t, d("hello", 1, "$db", "admin")))
			cm, err := wire.Compress(nil, msg, c.comp, -1)
			if err != nil {
				t.Fatal(err)
			}
			c.write(cm)
			if r, err = c.recv(); err != nil || r.compressed || r.Header.ResponseTo != 99 {
				t.Errorf("hello reply compressed=%v err=%v", r.compressed, err)
			}
			sc := serverConn(t, s, c.id)
			if sc.Compressor() != name {
				t.Errorf("Conn.Compressor() = %q", sc.Compressor())
			}
		})
	}
	// An uncompressed request gets an uncompressed reply.
	c := connect(t, s, clientOpts{compressors: []string{"zstd"}})
	c.comp = wire.CompressorNoop
	c.send("admin", d("ping", 1), 0)
	if r, err := c.recv(); err != nil || r.compressed {
		t.Errorf("compressed=%v err=%v", r.compressed, err)
	}
}

// serverConn finds the server side of a connection.
func serverConn(t testing.TB, s *Server, id int64) *Conn {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.conns[id]
	if c == nil {
		t.Fatalf("no connection %d", id)
	}
	return c
}

func TestChecksums(t *testing.T) {
	s := NewServer(t, Options{})
	c := connect(t, s, clientOpts{})
	c.checksum = true
	c.send("admin", d("ping", 1), 0)
	r, err := c.recv() // ParseMsg verifies the checksum
	if err != nil {
		t.Fatal(err)
	}
	if r.Flags&wire.ChecksumPresent == 0 {
		t.Error("reply to a checksummed request has no checksum")
	}
	// Compressed and checksummed.
	c2 := connect(t, s, clientOpts{compressors: []string{"snappy"}})
	c2.checksum = true
	c2.send("admin", d("ping", 1), 0)
	if r, err := c2.recv(); err != nil || r.Flags&wire.ChecksumPresent == 0 || !r.compressed {
		t.Errorf("%v %v", r.Flags, err)
	}
	// A wrong checksum closes the connection.
	msg := wire.AppendMsg(nil, 5, 0, wire.ChecksumPresent, marshal(t, d("ping", 1, "$db", "admin")))
	msg[len(msg)-1] ^= 0xff
	c.write(msg)
	if !c.closed() {
		t.Error("connection open after a bad checksum")
	}
	waitConnError(t, s, "checksum")
}

func TestMalformedMessages(t *testing.T) {
	ping := marshal(t, d("ping", 1, "$db", "admin"))
	okMsg := wire.AppendMsg(nil, 1, 0, 0, ping)
	withLen := func(b []byte) []byte {
		binary.LittleEndian.PutUint32(b, uint32(len(b)))
		return b
	}
	header := func(op int32, rest ...byte) []byte {
		return withLen(append(rawHeader(0, 1, op), rest...))
	}
	compressedWith := func(id byte) []byte {
		out, err := wire.Compress(nil, okMsg, wire.CompressorSnappy, -1)
		if err != nil {
			t.Fatal(err)
		}
		out[24] = id
		return out
	}
	nested := func() []byte {
		inner, _ := wire.Compress(nil, okMsg, wire.CompressorSnappy, -1)
		// An OP_COMPRESSED whose original opcode is OP_COMPRESSED.
		b := rawHeader(0, 1, int32(wire.OpCompressed))
		b = binary.LittleEndian.AppendUint32(b, uint32(wire.OpCompressed))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(inner)-16))
		b = append(b, 0) // noop
		b = append(b, inner[16:]...)
		return withLen(b)
	}
	badBSON := append([]byte(nil), okMsg...)
	badBSON[21] = 0x7f // body length field
	unknownFlag := append([]byte(nil), okMsg...)
	unknownFlag[16] = 0x04 // required bit 2
	twoBodies := withLen(append(append([]byte(nil), okMsg...), append([]byte{0}, ping...)...))
	for _, tc := range []struct {
		name string
		msg  []byte
		want string
	}{
		{"short length", rawHeader(8, 1, 2013), "below the 16-byte header"},
		{"too large", rawHeader(MaxMessageSizeBytes+1, 1, 2013), "exceeds the limit"},
		{"unknown opcode", header(2002, 1, 2, 3, 4), "unsupported opcode"},
		{"OP_REPLY from a client", header(1, make([]byte, 20)...), "unsupported opcode"},
		{"empty OP_MSG", header(2013), "OP_MSG"},
		{"bad BSON", badBSON, "OP_MSG"},
		{"unknown required flag", unknownFlag, "flag"},
		{"two bodies", twoBodies, "kind-0"},
		{"unknown compressor", compressedWith(9), "OP_COMPRESSED"},
		{"disabled compressor", compressedWith(byte(wire.CompressorZlib)), "OP_COMPRESSED"},
		{"nested compression", nested(), "originalOpcode is OP_COMPRESSED"},
		{"bad OP_QUERY", header(2004, 0, 0, 0, 0, 'a'), "OP_QUERY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewServer(t, Options{Compressors: []string{"snappy"}})
			c := connect(t, s, clientOpts{noHandshake: true})
			c.write(tc.msg)
			if !c.closed() {
				t.Fatal("connection still open")
			}
			e := waitConnError(t, s, "")
			if !strings.Contains(e.Reason, tc.want) {
				t.Errorf("reason %q, want %q", e.Reason, tc.want)
			}
			// The server goes on serving others.
			connect(t, s, clientOpts{}).mustRun("admin", d("ping", 1))
		})
	}
}

func TestLegacyOpQuery(t *testing.T) {
	s := NewServer(t, Options{Topology: Topology{Role: RoleSecondary, SetName: "rs"}})
	c := connect(t, s, clientOpts{noHandshake: true})
	for i, tc := range []struct {
		ns    string
		query bson.D
		code  int32
	}{
		{"admin.$cmd", d("isMaster", 1, "helloOk", true, "client", d("driver", d("name", "old"))), 0},
		{"test.$cmd", d("ismaster", 1), 0},
		{"admin.$cmd", d("$query", d("hello", 1), "$readPreference", d("mode", "secondaryPreferred")), 0},
		{"admin.$cmd", d("find", "c"), 352},
		{"test.coll", d("isMaster", 1), 352},
		{"a b.$cmd", d("isMaster", 1), 73},
	} {
		id := int32(100 + i)
		c.write(wire.AppendQuery(nil, id, wire.Query{FullCollectionName: tc.ns, NumberToReturn: -1, Query: marshal(t, tc.query)}))
		c.nc.SetReadDeadline(timeIn())
		buf, err := wire.ReadMessage(c.nc, 0)
		if err != nil {
			t.Fatalf("%v: %v", tc.query, err)
		}
		rep, err := wire.ParseReply(buf.B)
		if err != nil {
			t.Fatal(err)
		}
		if h, _ := wire.ParseHeader(buf.B); h.ResponseTo != id {
			t.Errorf("responseTo %d", h.ResponseTo)
		}
		body := rep.Documents[0]
		if tc.code == 0 {
			if rep.ResponseFlags != 8 || !body.Lookup("secondary").Boolean() || body.Lookup("setName").StringValue() != "rs" {
				t.Errorf("%v: flags %d %v", tc.query, rep.ResponseFlags, body)
			}
			// hello answers isWritablePrimary, the legacy names ismaster.
			field := "ismaster"
			if i == 2 {
				field = "isWritablePrimary"
			}
			if v, err := body.LookupErr(field); err != nil || v.Boolean() {
				t.Errorf("%v: %s = %v", tc.query, field, v)
			}
		} else if ce := asCmdError(t, replyError(body)); ce.Code != tc.code || rep.ResponseFlags&2 == 0 {
			t.Errorf("%v: %v flags %d", tc.query, ce, rep.ResponseFlags)
		}
		buf.Release()
	}
	// The first OP_QUERY hello set the client metadata.
	if name := serverConn(t, s, 1).ClientMetadata().Lookup("driver", "name").StringValue(); name != "old" {
		t.Errorf("metadata %q", name)
	}
}

func TestDocumentSequences(t *testing.T) {
	s := NewServer(t, Options{})
	var got bson.Raw
	s.Handle("insert", func(ctx context.Context, s *Server, r *Request) (bson.Raw, error) {
		got = append(bson.Raw(nil), r.Body...)
		return bson.Marshal(d("n", arrayLen(r.Body, "documents")))
	})
	c := connect(t, s, clientOpts{})
	docs := []bson.Raw{marshal(t, d("_id", 1)), marshal(t, d("_id", 2, "x", "y"))}
	seqs := []wire.Sequence{{Identifier: "documents", Docs: docs}, {Identifier: "extra", Docs: nil}}
	c.send("test", d("insert", "coll", "ordered", true), 0, seqs...)
	r, err := c.recv()
	if err != nil || replyError(r.Body) != nil {
		t.Fatal(err, r.Body)
	}
	if r.Body.Lookup("n").Int64() != 2 {
		t.Error(r.Body)
	}
	want := `{"insert":"coll","ordered":true,"$db":"test","documents":[{"_id":1},{"_id":2,"x":"y"}],"extra":[]}`
	if got.String() != want {
		t.Errorf("merged body\n%s\nwant\n%s", got, want)
	}
	if logged := s.Commands()[1].Body.String(); logged != want {
		t.Errorf("logged %s", logged)
	}
	if s.ops.insert.Load() != 2 {
		t.Errorf("opcounters.insert %d", s.ops.insert.Load())
	}
	// A sequence may not repeat a body field.
	c.send("test", d("insert", "coll", "documents", bson.A{}), 0, wire.Sequence{Identifier: "documents", Docs: docs})
	r, _ = c.recv()
	if ce := asCmdError(t, replyError(r.Body)); ce.Code != 40433 || ce.CodeName != "Location40433" {
		t.Error(ce)
	}
}

func TestMoreToComeRequest(t *testing.T) {
	s := NewServer(t, Options{})
	c := connect(t, s, clientOpts{})
	c.send("test", d("ping", 1, "w", 0), wire.MoreToCome)
	c.send("test", d("nosuch", 1), wire.MoreToCome) // errors are dropped too
	// The next reply is the answer to the next request.
	id := c.send("admin", d("buildInfo", 1), 0)
	r, err := c.recv()
	if err != nil || r.Header.ResponseTo != id {
		t.Fatalf("%v responseTo %d want %d", err, r.Header.ResponseTo, id)
	}
	if n := len(s.Commands()); n != 4 {
		t.Errorf("%d commands logged", n)
	}
}
