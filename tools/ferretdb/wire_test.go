package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
)

// The smoke tests frame OP_MSG by hand so that they check FerretDB without
// relying on mongoscope's own connection code.

const (
	opMsg         = 2013
	headerLen     = 16
	flagChecksum  = 1 << 0
	maxReplyBytes = 48_000_000
)

// conn is one hand-driven connection to a server.
type conn struct {
	t      *testing.T
	c      net.Conn
	nextID int32
}

func dial(t *testing.T, addr string) *conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return &conn{t: t, c: c, nextID: 1}
}

// encodeOpMsg frames body as an OP_MSG with one kind-0 section.
func encodeOpMsg(requestID int32, body []byte) []byte {
	msg := make([]byte, headerLen, headerLen+4+1+len(body))
	msg = binary.LittleEndian.AppendUint32(msg, 0) // flagBits
	msg = append(msg, 0)                           // section kind 0: body
	msg = append(msg, body...)
	binary.LittleEndian.PutUint32(msg[0:], uint32(len(msg)))
	binary.LittleEndian.PutUint32(msg[4:], uint32(requestID))
	binary.LittleEndian.PutUint32(msg[8:], 0) // responseTo
	binary.LittleEndian.PutUint32(msg[12:], opMsg)
	return msg
}

// decodeOpMsg checks an OP_MSG reply to requestID and returns its body.
func decodeOpMsg(msg []byte, requestID int32) (bson.Raw, error) {
	if len(msg) < headerLen+4+1 {
		return nil, fmt.Errorf("reply of %d bytes is shorter than an OP_MSG", len(msg))
	}
	if got := int32(binary.LittleEndian.Uint32(msg[8:])); got != requestID {
		return nil, fmt.Errorf("responseTo %d, want %d", got, requestID)
	}
	if op := binary.LittleEndian.Uint32(msg[12:]); op != opMsg {
		return nil, fmt.Errorf("opCode %d, want %d", op, opMsg)
	}
	flags := binary.LittleEndian.Uint32(msg[16:])
	rest := msg[20:]
	if flags&flagChecksum != 0 {
		if len(rest) < 4 {
			return nil, fmt.Errorf("checksum flag set but no room for it")
		}
		rest = rest[:len(rest)-4]
	}
	var body bson.Raw
	for len(rest) > 0 {
		kind := rest[0]
		rest = rest[1:]
		if len(rest) < 4 {
			return nil, fmt.Errorf("section kind %d truncated", kind)
		}
		n := int(binary.LittleEndian.Uint32(rest))
		if n < 5 || n > len(rest) {
			return nil, fmt.Errorf("section kind %d declares %d bytes, %d left", kind, n, len(rest))
		}
		switch kind {
		case 0:
			if body != nil {
				return nil, fmt.Errorf("two kind-0 sections")
			}
			body = bson.Raw(rest[:n])
		case 1:
			// Document sequences are legal in replies; these tests expect none.
			return nil, fmt.Errorf("unexpected kind-1 section in reply")
		default:
			return nil, fmt.Errorf("unknown section kind %d", kind)
		}
		rest = rest[n:]
	}
	if body == nil {
		return nil, fmt.Errorf("reply has no kind-0 section")
	}
	if err := body.Validate(); err != nil {
		return nil, fmt.Errorf("reply body: %w", err)
	}
	return body, nil
}

// run sends cmd and returns the reply body, whatever its ok value.
func (c *conn) run(cmd bson.D) bson.Raw {
	c.t.Helper()
	body, err := bson.Marshal(cmd)
	if err != nil {
		c.t.Fatalf("marshal %v: %v", cmd, err)
	}
	id := c.nextID
	c.nextID++
	if err := c.c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.c.Write(encodeOpMsg(id, body)); err != nil {
		c.t.Fatalf("write %s: %v", cmd[0].Key, err)
	}
	var hdr [headerLen]byte
	if _, err := io.ReadFull(c.c, hdr[:]); err != nil {
		c.t.Fatalf("read %s reply header: %v", cmd[0].Key, err)
	}
	n := int(binary.LittleEndian.Uint32(hdr[:]))
	if n < headerLen || n > maxReplyBytes {
		c.t.Fatalf("%s reply declares %d bytes", cmd[0].Key, n)
	}
	msg := make([]byte, n)
	copy(msg, hdr[:])
	if _, err := io.ReadFull(c.c, msg[headerLen:]); err != nil {
		c.t.Fatalf("read %s reply: %v", cmd[0].Key, err)
	}
	reply, err := decodeOpMsg(msg, id)
	if err != nil {
		c.t.Fatalf("%s: %v", cmd[0].Key, err)
	}
	return reply
}

// ok reports whether reply has ok equal to 1.
func ok(reply bson.Raw) bool {
	v, isNum := reply.Lookup("ok").AsFloat64OK()
	return isNum && v == 1
}

// mustRun runs cmd and fails the test unless the server answers ok:1.
func (c *conn) mustRun(cmd bson.D) bson.Raw {
	c.t.Helper()
	reply := c.run(cmd)
	if !ok(reply) {
		c.t.Fatalf("%s failed: %s", cmd[0].Key, reply)
	}
	return reply
}

// hostOf returns the host:port of a single-host mongodb:// URI and its
// credentials, if any.
func hostOf(t *testing.T, uri string) (addr string, user *url.Userinfo) {
	t.Helper()
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "mongodb" || u.Host == "" || strings.Contains(u.Host, ",") {
		// The URI may hold a password: name the problem, not the value.
		t.Fatalf("not a single-host mongodb:// URI (parse error: %v)", err != nil)
	}
	return u.Host, u.User
}

func TestOpMsgFraming(t *testing.T) {
	body, err := bson.Marshal(bson.D{{Key: "ok", Value: 1.0}})
	if err != nil {
		t.Fatal(err)
	}
	good := encodeOpMsg(7, body)
	binary.LittleEndian.PutUint32(good[8:], 7) // as a reply to request 7

	withChecksum := append([]byte(nil), good...)
	withChecksum = append(withChecksum, 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(withChecksum[16:], flagChecksum)
	binary.LittleEndian.PutUint32(withChecksum[0:], uint32(len(withChecksum)))

	mutate := func(f func(m []byte) []byte) []byte {
		return f(append([]byte(nil), good...))
	}

	tests := []struct {
		name    string
		msg     []byte
		wantErr string
	}{
		{"ok", good, ""},
		{"checksum is skipped", withChecksum, ""},
		{"short", good[:20], "shorter than an OP_MSG"},
		{"wrong responseTo", mutate(func(m []byte) []byte { m[8] = 8; return m }), "responseTo 8"},
		{"wrong opCode", mutate(func(m []byte) []byte { m[12] = 1; return m }), "opCode"},
		{"unknown section kind", mutate(func(m []byte) []byte { m[20] = 5; return m }), "unknown section kind 5"},
		{"sequence section", mutate(func(m []byte) []byte { m[20] = 1; return m }), "kind-1"},
		{"section too long", mutate(func(m []byte) []byte { m[21] = 200; return m }), "declares 200 bytes"},
		{"truncated section", mutate(func(m []byte) []byte { return m[:23] }), "truncated"},
		{"two bodies", mutate(func(m []byte) []byte { return append(m, m[20:]...) }), "two kind-0"},
		{"bad bson", mutate(func(m []byte) []byte { m[len(m)-1] = 1; return m }), "reply body"},
		{"checksum flag without room", mutate(func(m []byte) []byte {
			binary.LittleEndian.PutUint32(m[16:], flagChecksum)
			return m[:21]
		}), "no room"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reply, err := decodeOpMsg(tt.msg, 7)
			if tt.wantErr == "" {
				if err != nil || !ok(reply) {
					t.Fatalf("decodeOpMsg = %s, %v; want ok:1", reply, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("decodeOpMsg error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}
