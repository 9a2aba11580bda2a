package conn

import (
	"github.com/mongoscope/mongoscope/bson"

	"context"
	"encoding/binary"
	"net"
	"testing"
)

// BenchmarkCommandRoundTrip measures one command and its reply over
// loopback TCP against a server that answers every message at once, so
// the figure is the connection's own cost plus the kernel's.
func BenchmarkCommandRoundTrip(b *testing.B) {
	for _, comp := range []string{"", "snappy", "zstd"} {
		name := comp
		if name == "" {
			name = "none"
		}
		b.Run(name, func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer ln.Close()
			go benchServer(b, ln, comp)
			cfg := Config{Address: ln.Addr().String(), Metadata: testMetadata(b), ZlibLevel: -1}
			if comp != "" {
				cfg.Handshake.Compressors = []string{comp}
			}
			c, err := Dial(context.Background(), cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			cmd := doc(b, bsonFind())
			req := &Request{DB: "db", Command: cmd}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r, err := c.Command(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				r.Release()
			}
		})
	}
}

// benchServer answers the handshake and then every message with the same
// reply, compressed with comp when set. The compressed payload is made
// once, so the server costs little next to the client being measured.
func benchServer(b *testing.B, ln net.Listener, comp string) {
	nc, err := ln.Accept()
	if err != nil {
		return
	}
	defer nc.Close()
	hello := helloReply(b)
	if comp != "" {
		hello = helloReplyWith(b, comp)
	}
	reply := opMsg(0, 0, 0, doc(b, bsonBatch()), false)
	if comp != "" {
		reply = compressed(b, reply, map[string]byte{"snappy": 1, "zlib": 2, "zstd": 3}[comp])
	}
	var hdr [16]byte
	for first := true; ; first = false {
		if _, err := readFull(nc, hdr[:]); err != nil {
			return
		}
		n := int(binary.LittleEndian.Uint32(hdr[:]))
		body := make([]byte, n-16)
		if _, err := readFull(nc, body); err != nil {
			return
		}
		id := binary.LittleEndian.Uint32(hdr[4:])
		var msg []byte
		if first {
			msg = opMsg(1, int32(id), 0, hello, false)
		} else {
			msg = reply
			binary.LittleEndian.PutUint32(msg[8:], id)
		}
		if _, err := nc.Write(msg); err != nil {
			return
		}
	}
}

func bsonFind() bsonD {
	return bsonD{{Key: "find", Value: "orders"}, {Key: "filter", Value: bsonD{{Key: "status", Value: "open"}}}, {Key: "batchSize", Value: int32(101)}}
}

// bsonBatch is a find reply with 20 small documents.
func bsonBatch() bsonD {
	var docs []any
	for i := 0; i < 20; i++ {
		docs = append(docs, bsonD{{Key: "_id", Value: int32(i)}, {Key: "status", Value: "open"}, {Key: "total", Value: float64(i) * 1.5}})
	}
	return bsonD{{Key: "cursor", Value: bsonD{{Key: "id", Value: int64(0)}, {Key: "ns", Value: "db.orders"}, {Key: "firstBatch", Value: docs}}}, {Key: "ok", Value: 1.0}}
}

func helloReplyWith(b testing.TB, comp string) []byte {
	return helloReply(b, bsonE{Key: "compression", Value: []string{comp}})
}

type (
	bsonD = bson.D
	bsonE = bson.E
)
