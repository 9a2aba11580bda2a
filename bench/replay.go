package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"

	ours "github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// The replay server: a TCP server that answers the CRUD rows' commands
// with reply bodies recorded once from mongotest for the same task, so
// that the server's side of an operation costs next to nothing and both
// drivers read the same bytes. It understands just enough of the wire
// protocol for that: OP_MSG (no compression, no checksum verification)
// and OP_QUERY for the legacy handshake. See replayNotes for what it
// answers and what it does not.

const (
	opReply = 1
	opQuery = 2004
	opMsg   = 2013

	flagChecksumPresent = 1 << 0
	flagMoreToCome      = 1 << 1
)

// patched is a recorded reply body with an int64 or int32 field whose
// value the server replaces per request: a cursor id, or insert's n.
type patched struct {
	body []byte
	off  int // offset of the value in body; -1 when there is none
}

// recording is what the replay server answers with.
type recording struct {
	hello    []byte    // {hello: 1, helloOk: true} reply, topologyVersion removed
	isMaster []byte    // {isMaster: 1, helloOk: true} reply, topologyVersion removed
	first    patched   // find {} first batch; off is cursor.id
	batches  []patched // each getMore's reply in turn; off is cursor.id
	findOne  []byte    // find {_id: 1}, limit 1, singleBatch
	insert   patched   // insert of one document; off is n (int32)
	ok       []byte    // {ok: 1.0}
}

// recordFromMongotest starts an in-process mongotest server, seeds it as
// the find rows do, and records its replies to the commands the replay
// server answers.
func recordFromMongotest(docs *specDocs) (*recording, error) {
	srv, err := mongotest.Start(mongotest.Options{CommandLogSize: -1})
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	ctx := context.Background()
	tc, err := mongo.Connect(options.Client().ApplyURI(srv.URI()))
	if err != nil {
		return nil, err
	}
	defer tc.Disconnect(ctx)
	e := &crudEnv{ctx: ctx, docs: docs, theirs: tc.Database(crudDB).Collection(crudColl)}
	if err := e.seed(); err != nil {
		return nil, err
	}
	addr := strings.TrimPrefix(srv.URI(), "mongodb://")
	if i := strings.IndexAny(addr, "/?"); i >= 0 {
		addr = addr[:i]
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	rc := &rawClient{conn: conn, r: bufio.NewReader(conn)}

	rec := &recording{}
	for _, x := range []struct {
		dst *[]byte
		cmd string
	}{{&rec.hello, "hello"}, {&rec.isMaster, "isMaster"}} {
		b, err := rc.run(ours.D{{Key: x.cmd, Value: int32(1)}, {Key: "helloOk", Value: true}, {Key: "$db", Value: "admin"}})
		if err != nil {
			return nil, err
		}
		// Without topologyVersion neither driver streams hello (an
		// awaitable hello would need the server to hold the reply).
		if *x.dst, err = withoutField(b, "topologyVersion"); err != nil {
			return nil, err
		}
	}
	if rec.ok, err = ours.Marshal(ours.D{{Key: "ok", Value: 1.0}}); err != nil {
		return nil, err
	}

	b, err := rc.run(ours.D{{Key: "find", Value: crudColl}, {Key: "filter", Value: ours.D{}}, {Key: "$db", Value: crudDB}})
	if err != nil {
		return nil, err
	}
	if rec.first, err = cursorReply(b); err != nil {
		return nil, err
	}
	id := int64(binary.LittleEndian.Uint64(b[rec.first.off:]))
	for id != 0 {
		b, err := rc.run(ours.D{{Key: "getMore", Value: id}, {Key: "collection", Value: crudColl}, {Key: "$db", Value: crudDB}})
		if err != nil {
			return nil, err
		}
		p, err := cursorReply(b)
		if err != nil {
			return nil, err
		}
		rec.batches = append(rec.batches, p)
		id = int64(binary.LittleEndian.Uint64(b[p.off:]))
	}

	if rec.findOne, err = rc.run(ours.D{{Key: "find", Value: crudColl}, {Key: "filter", Value: ours.D{{Key: "_id", Value: int32(1)}}},
		{Key: "limit", Value: int64(1)}, {Key: "singleBatch", Value: true}, {Key: "$db", Value: crudDB}}); err != nil {
		return nil, err
	}

	b, err = rc.run(ours.D{{Key: "insert", Value: crudColl}, {Key: "documents", Value: ours.A{docs.smallOurs}}, {Key: "$db", Value: crudDB}})
	if err != nil {
		return nil, err
	}
	off, t, ok := valueOffset(b, "n")
	if !ok || t != ours.TypeInt32 {
		return nil, fmt.Errorf("replay: mongotest's insert reply has no int32 n: %v", ours.Raw(b))
	}
	rec.insert = patched{body: b, off: off}
	return rec, nil
}

// cursorReply locates cursor.id in a find or getMore reply.
func cursorReply(b []byte) (patched, error) {
	coff, t, ok := valueOffset(b, "cursor")
	if !ok || t != ours.TypeEmbeddedDocument {
		return patched{}, fmt.Errorf("replay: reply has no cursor: %.200v", ours.Raw(b))
	}
	ioff, t, ok := valueOffset(b[coff:], "id")
	if !ok || t != ours.TypeInt64 {
		return patched{}, fmt.Errorf("replay: reply has no int64 cursor.id")
	}
	return patched{body: b, off: coff + ioff}, nil
}

// valueOffset returns the offset in doc of the value of its top-level
// field key, and the value's type.
func valueOffset(doc []byte, key string) (int, ours.Type, bool) {
	it := ours.Raw(doc).Iter()
	for it.Next() {
		if string(it.KeyBytes()) == key {
			return it.Offset() + 1 + len(key) + 1, it.Value().Type, true
		}
	}
	return 0, 0, false
}

// withoutField returns doc without its top-level field key.
func withoutField(doc []byte, key string) ([]byte, error) {
	out := make([]byte, 4, len(doc))
	it := ours.Raw(doc).Iter()
	for it.Next() {
		if string(it.KeyBytes()) != key {
			out = append(out, it.Element()...)
		}
	}
	if it.Err() != nil {
		return nil, it.Err()
	}
	out = append(out, 0)
	binary.LittleEndian.PutUint32(out, uint32(len(out)))
	return out, nil
}

// rawClient sends OP_MSG commands and reads their replies: the recorder's
// side of the wire.
type rawClient struct {
	conn  net.Conn
	r     *bufio.Reader
	reqID int32
}

func (c *rawClient) run(cmd ours.D) ([]byte, error) {
	body, err := ours.Marshal(cmd)
	if err != nil {
		return nil, err
	}
	c.reqID++
	msg := make([]byte, 21, 21+len(body))
	binary.LittleEndian.PutUint32(msg[0:], uint32(21+len(body)))
	binary.LittleEndian.PutUint32(msg[4:], uint32(c.reqID))
	binary.LittleEndian.PutUint32(msg[12:], opMsg)
	msg = append(msg, body...)
	if _, err := c.conn.Write(msg); err != nil {
		return nil, err
	}
	var hdr [16]byte
	if _, err := io.ReadFull(c.r, hdr[:]); err != nil {
		return nil, err
	}
	n := int(binary.LittleEndian.Uint32(hdr[:]))
	if n < 21 || binary.LittleEndian.Uint32(hdr[12:]) != opMsg {
		return nil, fmt.Errorf("replay: recorder: unexpected reply header % x", hdr)
	}
	rest := make([]byte, n-16)
	if _, err := io.ReadFull(c.r, rest); err != nil {
		return nil, err
	}
	if rest[4] != 0 {
		return nil, fmt.Errorf("replay: recorder: reply's first section is of kind %d", rest[4])
	}
	doc := rest[5:]
	dl := int(binary.LittleEndian.Uint32(doc))
	if dl > len(doc) {
		return nil, fmt.Errorf("replay: recorder: short reply")
	}
	doc = doc[:dl]
	if !ok_(ours.Raw(doc)) {
		return nil, fmt.Errorf("replay: recorder: %v failed: %v", cmd[0].Key, ours.Raw(doc))
	}
	return doc, nil
}

// ok_ tells whether a reply's ok is 1, whatever its numeric type.
func ok_(doc ours.Raw) bool {
	v := doc.Lookup("ok")
	if f, ok := v.DoubleOK(); ok {
		return f == 1
	}
	if i, ok := v.Int32OK(); ok {
		return i == 1
	}
	if i, ok := v.Int64OK(); ok {
		return i == 1
	}
	return false
}

// replayServer serves a recording on a TCP listener.
type replayServer struct {
	rec *recording
	ln  net.Listener

	mu      sync.Mutex
	cursors map[int64]int // cursor id → index of the next batch in rec.batches
	conns   map[net.Conn]struct{}
	closed  bool
	nextID  atomic.Int64
	reqID   atomic.Int32
	wg      sync.WaitGroup // the accept loop and one goroutine per connection
}

// startReplay records from mongotest and serves the recording on a
// loopback port.
func startReplay(docs *specDocs) (*replayServer, error) {
	rec, err := recordFromMongotest(docs)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &replayServer{rec: rec, ln: ln, cursors: map[int64]int{}, conns: map[net.Conn]struct{}{}}
	s.nextID.Store(1 << 40)
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

func (s *replayServer) URI() string {
	return "mongodb://" + s.ln.Addr().String() + "/?directConnection=true"
}

// Close stops the listener, closes every connection and waits for their
// goroutines.
func (s *replayServer) Close() {
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	_ = s.ln.Close()
	s.wg.Wait()
}

func (s *replayServer) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serve(c)
	}
}

func (s *replayServer) serve(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		_ = c.Close()
	}()
	r := bufio.NewReaderSize(c, 64<<10)
	var hdr [16]byte
	var buf []byte
	var out [36]byte // a reply's header and its fixed fields
	var patch [8]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return
		}
		n := int(binary.LittleEndian.Uint32(hdr[:]))
		if n < 16+5 || n > 48<<20 {
			return
		}
		if cap(buf) < n-16 {
			buf = make([]byte, n-16)
		}
		buf = buf[:n-16]
		if _, err := io.ReadFull(r, buf); err != nil {
			return
		}
		reqID := binary.LittleEndian.Uint32(hdr[4:])
		var cmd ours.Raw
		var docCount int
		switch binary.LittleEndian.Uint32(hdr[12:]) {
		case opMsg:
			var more bool
			var err error
			cmd, docCount, more, err = parseMsg(buf)
			if err != nil {
				return
			}
			body, p, w := s.answer(cmd, docCount, patch[:])
			if more {
				continue // the client wants no reply
			}
			s.write(c, out[:21], reqID, opMsg, body, p, patch[:w])
		case opQuery:
			q, err := parseQuery(buf)
			if err != nil {
				return
			}
			body, p, w := s.answer(q, -1, patch[:])
			s.write(c, out[:36], reqID, opReply, body, p, patch[:w])
		default:
			return // neither driver sends anything else uncompressed
		}
	}
}

// write sends one reply: the header (and OP_REPLY's fixed fields) in
// hdr, then body with patch in place of the bytes at off (when off >= 0).
func (s *replayServer) write(c net.Conn, hdr []byte, reqID uint32, op uint32, body []byte, off int, patch []byte) {
	clear(hdr)
	binary.LittleEndian.PutUint32(hdr[0:], uint32(len(hdr)+len(body)))
	binary.LittleEndian.PutUint32(hdr[4:], uint32(s.reqID.Add(1)))
	binary.LittleEndian.PutUint32(hdr[8:], reqID)
	binary.LittleEndian.PutUint32(hdr[12:], op)
	if op == opReply {
		binary.LittleEndian.PutUint32(hdr[32:], 1) // numberReturned
	}
	// OP_MSG: flagBits 0 and a kind-0 section, both zero bytes.
	var bufs net.Buffers
	if off < 0 {
		bufs = net.Buffers{hdr, body}
	} else {
		bufs = net.Buffers{hdr, body[:off], patch, body[off+len(patch):]}
	}
	_, _ = bufs.WriteTo(c)
}

// answer returns the reply body to cmd and, when a value in it is
// replaced, its offset and width (the new value is then in patch), else
// -1 and 0. docCount is the number of documents in the request's kind-1
// sections, -1 when it has none.
func (s *replayServer) answer(cmd ours.Raw, docCount int, patch []byte) ([]byte, int, int) {
	it := cmd.Iter()
	if !it.Next() {
		return s.rec.notImplemented("(empty command)"), -1, 0
	}
	name := string(it.KeyBytes())
	switch name {
	case "hello":
		return s.rec.hello, -1, 0
	case "isMaster", "ismaster":
		return s.rec.isMaster, -1, 0
	case "ping", "endSessions", "drop", "create":
		return s.rec.ok, -1, 0
	case "find":
		filter, _ := cmd.Lookup("filter").DocumentOK()
		if len(filter) > 5 || !cmd.Lookup("limit").IsZero() {
			return s.rec.findOne, -1, 0
		}
		id := s.nextID.Add(1)
		s.mu.Lock()
		s.cursors[id] = 0
		s.mu.Unlock()
		binary.LittleEndian.PutUint64(patch, uint64(id))
		return s.rec.first.body, s.rec.first.off, 8
	case "getMore":
		id, _ := it.Value().Int64OK()
		s.mu.Lock()
		i, ok := s.cursors[id]
		if ok {
			if i+1 >= len(s.rec.batches) {
				delete(s.cursors, id)
			} else {
				s.cursors[id] = i + 1
			}
		}
		s.mu.Unlock()
		if !ok || i >= len(s.rec.batches) {
			return s.rec.cursorNotFound(id), -1, 0
		}
		b := s.rec.batches[i]
		if i+1 < len(s.rec.batches) {
			binary.LittleEndian.PutUint64(patch, uint64(id))
		} else {
			binary.LittleEndian.PutUint64(patch, 0)
		}
		return b.body, b.off, 8
	case "killCursors":
		if a, ok := cmd.Lookup("cursors").ArrayOK(); ok {
			vs, _ := a.Values()
			s.mu.Lock()
			for _, v := range vs {
				delete(s.cursors, v.Int64())
			}
			s.mu.Unlock()
		}
		return s.rec.ok, -1, 0
	case "insert":
		if docCount < 0 { // documents inline in the command
			a, _ := cmd.Lookup("documents").ArrayOK()
			vs, _ := a.Values()
			docCount = len(vs)
		}
		binary.LittleEndian.PutUint32(patch, uint32(docCount))
		return s.rec.insert.body, s.rec.insert.off, 4
	}
	return s.rec.notImplemented(name), -1, 0
}

func (r *recording) notImplemented(name string) []byte {
	b, _ := ours.Marshal(ours.D{{Key: "ok", Value: 0.0}, {Key: "errmsg", Value: "the bench replay server does not answer " + name},
		{Key: "code", Value: int32(238)}, {Key: "codeName", Value: "NotImplemented"}})
	return b
}

func (r *recording) cursorNotFound(id int64) []byte {
	b, _ := ours.Marshal(ours.D{{Key: "ok", Value: 0.0}, {Key: "errmsg", Value: fmt.Sprintf("cursor id %d not found", id)},
		{Key: "code", Value: int32(43)}, {Key: "codeName", Value: "CursorNotFound"}})
	return b
}

// parseMsg returns an OP_MSG's command document (after the header), the
// number of documents in its kind-1 sections (-1 when there is none), and
// whether the client set moreToCome.
func parseMsg(b []byte) (ours.Raw, int, bool, error) {
	flags := binary.LittleEndian.Uint32(b)
	if flags&flagChecksumPresent != 0 {
		if len(b) < 8 {
			return nil, 0, false, errors.New("short message")
		}
		b = b[:len(b)-4]
	}
	var cmd ours.Raw
	count := -1
	for i := 4; i < len(b); {
		kind := b[i]
		i++
		if i+4 > len(b) {
			return nil, 0, false, errors.New("short section")
		}
		n := int(binary.LittleEndian.Uint32(b[i:]))
		if n < 5 || i+n > len(b) {
			return nil, 0, false, errors.New("bad section size")
		}
		switch kind {
		case 0:
			cmd = ours.Raw(b[i : i+n])
		case 1:
			sec := b[i+4 : i+n]
			z := 0
			for z < len(sec) && sec[z] != 0 {
				z++
			}
			if count < 0 {
				count = 0
			}
			for j := z + 1; j+4 <= len(sec); {
				dl := int(binary.LittleEndian.Uint32(sec[j:]))
				if dl < 5 {
					return nil, 0, false, errors.New("bad document in sequence")
				}
				j += dl
				count++
			}
		default:
			return nil, 0, false, fmt.Errorf("section kind %d", kind)
		}
		i += n
	}
	if cmd == nil {
		return nil, 0, false, errors.New("no command section")
	}
	return cmd, count, flags&flagMoreToCome != 0, nil
}

// parseQuery returns an OP_QUERY's query document.
func parseQuery(b []byte) (ours.Raw, error) {
	i := 4 // flags
	for i < len(b) && b[i] != 0 {
		i++
	}
	i += 1 + 8 // NUL, numberToSkip, numberToReturn
	if i+4 > len(b) {
		return nil, errors.New("short query")
	}
	n := int(binary.LittleEndian.Uint32(b[i:]))
	if n < 5 || i+n > len(b) {
		return nil, errors.New("bad query document")
	}
	return ours.Raw(b[i : i+n]), nil
}

const replayNotes = `
"(replay server)" rows: the same rows against a replay server in a child
process instead of mongotest. It answers each command with a reply body
recorded once from mongotest for the same task: hello and isMaster (over
OP_MSG, and over OP_QUERY for the official driver's handshake, without
topologyVersion so that neither driver streams hello), find {} (the first
batch, then each getMore's nextBatch in turn, with a fresh cursor id per
find and 0 on the last batch), findOne (the tweet with _id 1, whatever _id
is asked for), insert ({n, ok} with n the request's document count), and
{ok: 1} to ping, endSessions, killCursors, drop and create. It keeps no
data and checks nothing else in a request: its per-operation cost is
reading the request and writing the recorded bytes (no copy), so the rows
measure the drivers, and both read the same bytes. Anything else gets
NotImplemented (238); no compression, no authentication, no TLS. Each
side of a replay row is the median of at most 3 runs. Its "server share"
is mostly the kernel's socket work, counted in the server's system time.`
