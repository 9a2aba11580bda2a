package conn

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/internal/wire"
)

// The scripted server: a loopback listener that accepts one connection and
// plays a script written as a Go function. The helpers below frame
// messages by hand with encoding/binary, not with package wire, so a test
// comparing bytes checks wire's encoder as well as the connection.

type scriptConn struct {
	t  *testing.T
	nc net.Conn
}

// serve starts a server whose single connection runs script, and returns
// its address. The test waits for the script to finish at cleanup.
func serve(t *testing.T, network string, script func(s *scriptConn)) string {
	t.Helper()
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = t.TempDir() + "/m.sock"
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
		script(&scriptConn{t: t, nc: nc})
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		wg.Wait()
	})
	return ln.Addr().String()
}

// read returns the next whole message the client sent, or nil at EOF.
func (s *scriptConn) read() []byte {
	var hdr [16]byte
	if _, err := readFull(s.nc, hdr[:]); err != nil {
		return nil
	}
	n := int(binary.LittleEndian.Uint32(hdr[:]))
	msg := make([]byte, n)
	copy(msg, hdr[:])
	if _, err := readFull(s.nc, msg[16:]); err != nil {
		s.t.Errorf("server: truncated message: %v", err)
		return nil
	}
	return msg
}

func readFull(nc net.Conn, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := nc.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// expect reads one message and requires it to equal want byte for byte.
func (s *scriptConn) expect(what string, want []byte) []byte {
	got := s.read()
	if !bytes.Equal(got, want) {
		s.t.Errorf("server: %s: got\n%s\nwant\n%s", what, hex.Dump(got), hex.Dump(want))
	}
	return got
}

func (s *scriptConn) write(b []byte) {
	if _, err := s.nc.Write(b); err != nil {
		s.t.Errorf("server: write: %v", err)
	}
}

// doc marshals a bson.D for building expected and scripted bytes.
func doc(t testing.TB, d bson.D) bson.Raw {
	t.Helper()
	b, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func le32(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }

// opMsg frames an OP_MSG by hand: header, flags, a kind-0 body, kind-1
// sections given as identifier/documents pairs, and the CRC-32C when
// checksum is set.
func opMsg(reqID, respTo int32, flags uint32, body []byte, checksum bool, seqs ...any) []byte {
	if checksum {
		flags |= 1
	}
	b := le32(nil, 0)
	b = le32(b, uint32(reqID))
	b = le32(b, uint32(respTo))
	b = le32(b, 2013)
	b = le32(b, flags)
	b = append(b, 0)
	b = append(b, body...)
	for i := 0; i+1 < len(seqs); i += 2 {
		id := seqs[i].(string)
		docs := seqs[i+1].([]bson.Raw)
		size := 4 + len(id) + 1
		for _, d := range docs {
			size += len(d)
		}
		b = append(b, 1)
		b = le32(b, uint32(size))
		b = append(b, id...)
		b = append(b, 0)
		for _, d := range docs {
			b = append(b, d...)
		}
	}
	n := len(b)
	if checksum {
		n += 4
	}
	binary.LittleEndian.PutUint32(b, uint32(n))
	if checksum {
		b = le32(b, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
	}
	return b
}

// counter makes request ids 1, 2, 3, ... for Config.RequestID.
func counter() func() int32 {
	var n int32
	return func() int32 { n++; return n }
}

// testMetadata is a small fixed client document so hello bytes are stable.
func testMetadata(t testing.TB) bson.Raw {
	return doc(t, bson.D{{Key: "driver", Value: bson.D{{Key: "name", Value: "mongoscope"}, {Key: "version", Value: "test"}}}})
}

// helloReply is a server's answer to the handshake with the given extra
// fields; maxWireVersion 25 unless extra sets it.
func helloReply(t testing.TB, extra ...bson.E) bson.Raw {
	d := bson.D{{Key: "ismaster", Value: true}, {Key: "helloOk", Value: true}, {Key: "maxWireVersion", Value: int32(25)},
		{Key: "minWireVersion", Value: int32(0)}, {Key: "connectionId", Value: int32(7)}}
	d = append(d, extra...)
	d = append(d, bson.E{Key: "ok", Value: 1.0})
	return doc(t, d)
}

// expectedHello is the legacy hello the connection sends with
// testMetadata and the given compressors.
func expectedHello(t testing.TB, reqID int32, compressors ...string) []byte {
	d := bson.D{{Key: "isMaster", Value: int32(1)}, {Key: "helloOk", Value: true}, {Key: "backpressure", Value: "2"},
		{Key: "client", Value: testMetadata(t)}}
	if len(compressors) > 0 {
		d = append(d, bson.E{Key: "compression", Value: compressors})
	}
	d = append(d, bson.E{Key: "$db", Value: "admin"})
	return opMsg(reqID, 0, 0, doc(t, d), false)
}

// handshakeScript answers the hello and returns so the script can go on.
func (s *scriptConn) handshake(t testing.TB, compressors []string, extra ...bson.E) {
	s.expect("hello", expectedHello(t, 1, compressors...))
	s.write(opMsg(100, 1, 0, helloReply(t, extra...), false))
}

// dialScripted dials addr with fixed request ids and metadata.
func dialScripted(t *testing.T, addr string, mod func(*Config)) *Conn {
	t.Helper()
	cfg := Config{Address: addr, Metadata: testMetadata(t), RequestID: counter(), ConnectTimeout: 5 * time.Second, ZlibLevel: -1}
	if mod != nil {
		mod(&cfg)
	}
	c, err := Dial(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

var _ = wire.OpMsg
