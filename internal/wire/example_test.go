package wire_test

import (
	"bytes"
	"fmt"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/internal/wire"
)

// Example builds a ping command as an OP_MSG, compresses it, and reads it
// back the way a server would.
func Example() {
	start, body := bson.AppendDocumentStart(nil)
	body = bson.AppendInt32Element(body, "ping", 1)
	body = bson.AppendStringElement(body, "$db", "admin")
	body, _ = bson.AppendDocumentEnd(body, start)

	msg := wire.AppendMsg(nil, 1, 0, wire.ChecksumPresent, body)
	if wire.Compressible("ping") {
		msg, _ = wire.Compress(nil, msg, wire.CompressorZstd, -1)
	}

	buf, err := wire.ReadMessage(bytes.NewReader(msg), wire.DefaultMaxMessageSize)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer buf.Release()
	hdr, _ := wire.ParseHeader(buf.B)
	fmt.Println("received", hdr.OpCode)
	plain, err := wire.Decompress(nil, buf.B, wire.DefaultMaxMessageSize)
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := wire.ParseMsg(plain)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("request", m.Header.RequestID, "flags", m.Flags, "ping", m.Body.Lookup("ping").Int32())
	// Output:
	// received OP_COMPRESSED
	// request 1 flags 1 ping 1
}
