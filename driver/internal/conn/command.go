package conn

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/handshake"
	"github.com/mongoscope/mongoscope/internal/wire"
)

// Request is one command to send.
type Request struct {
	// DB is the database; it goes into the command as "$db".
	DB string
	// Command is the command document without "$db". Its first key names
	// the command.
	Command bson.Raw
	// Sequences are kind-1 sections, e.g. the documents of an insert.
	// The caller splits batches (wire.SplitBatch) before building them.
	Sequences []wire.Sequence
	// MoreToCome asks the server not to reply: an unacknowledged write.
	// Send returns once the message is written.
	MoreToCome bool
	// LazyBody checks only the reply body's framing on arrival, not its
	// elements: for cursor replies, whose batches the cursor and the
	// decoders read with checks of their own (every reader of package
	// bson returns a typed error on malformed input). It saves scanning a
	// 16 MB batch twice.
	LazyBody bool
	// ExhaustAllowed lets the server answer with a stream of replies
	// (moreToCome set on each but the last), read with Receive.
	ExhaustAllowed bool
	// Watched says the caller interrupts the exchange itself, with Wake,
	// if the context ends: Command then registers no watch of its own on
	// the context, which saves an operation that cost.
	Watched bool
	// NoSocketTimeout ignores the connection's socketTimeoutMS: the
	// operation runs under timeoutMS (client-side operations timeout),
	// whose budget is the context's deadline.
	NoSocketTimeout bool
}

// socketTimeout is the socketTimeoutMS that applies to req.
func (c *Conn) socketTimeout(req *Request) time.Duration {
	if req.NoSocketTimeout {
		return 0
	}
	return c.cfg.SocketTimeout
}

// Reply is one reply message. Body aliases a pooled buffer: it is valid
// until Release, which the caller must call once done with it.
type Reply struct {
	Body bson.Raw
	// MoreToCome is set when the server will send another reply to the
	// same request without being asked (exhaust).
	MoreToCome bool
	// RequestID and ResponseTo are the reply's header fields.
	RequestID, ResponseTo int32
	// Compressed tells whether the reply arrived as OP_COMPRESSED.
	Compressed bool

	buf  *wire.Buffer
	dbuf *[]byte
}

// Release returns the reply's buffer to the pool. Body must not be used
// afterwards. Release on a nil Reply does nothing.
func (r *Reply) Release() {
	if r == nil {
		return
	}
	if r.buf != nil {
		if cap(r.buf.B) > bigReply {
			RecycleBuffer(r.buf.B) // wire's pool would drop it
		} else {
			r.buf.Release()
		}
		r.buf = nil
	}
	if r.dbuf != nil {
		putBuf(r.dbuf)
		r.dbuf = nil
	}
	r.Body = nil
}

// Pooled message buffers; those that grew past maxPooled are dropped so one
// huge message does not pin memory.
const maxPooled = 1 << 20

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) > maxPooled {
		return
	}
	*b = (*b)[:0]
	bufPool.Put(b)
}

// MessageSizeError says a message to send exceeds the server's
// maxMessageSizeBytes; nothing was sent and the connection stays usable.
type MessageSizeError struct {
	Size, Max int
}

func (e *MessageSizeError) Error() string {
	return fmt.Sprintf("conn: message of %d bytes exceeds the server's maxMessageSizeBytes %d", e.Size, e.Max)
}

// commandName returns the first key of cmd, or "".
func commandName(cmd bson.Raw) string {
	it := cmd.Iter()
	if it.Next() {
		return it.Key()
	}
	return ""
}

// appendCommand builds the OP_MSG for req into dst, with the client's
// declared Stable API (api, nil when none) on every command.
func appendCommand(dst []byte, requestID int32, req *Request, api *handshake.ServerAPI) ([]byte, error) {
	if len(req.Command) < 5 || req.Command[len(req.Command)-1] != 0 {
		return dst, errors.New("conn: command is not a BSON document")
	}
	var flags wire.Flags
	if req.MoreToCome {
		flags |= wire.MoreToCome
	}
	if req.ExhaustAllowed {
		flags |= wire.ExhaustAllowed
	}
	start, b := wire.AppendHeaderStart(dst, requestID, 0, wire.OpMsg)
	b = wire.AppendMsgFlags(b, flags)
	b = append(b, 0) // section kind 0: the body
	docStart := len(b)
	b = append(b, req.Command[:len(req.Command)-1]...)
	b = handshake.AppendServerAPI(b, api)
	if req.DB != "" {
		b = bson.AppendStringElement(b, "$db", req.DB)
	}
	b = append(b, 0)
	binary.LittleEndian.PutUint32(b[docStart:], uint32(len(b)-docStart))
	for _, s := range req.Sequences {
		var ss int
		ss, b = wire.AppendSequenceStart(b, s.Identifier)
		for _, d := range s.Docs {
			b = append(b, d...)
		}
		b = wire.FinishSequence(b, ss)
	}
	return wire.FinishMessage(b, start, false), nil
}

// Send writes req. With req.MoreToCome no reply follows; otherwise read it
// with Receive. Most callers want Command.
func (c *Conn) Send(ctx context.Context, req *Request) error {
	_, err := c.send(ctx, req, c.cfg.SocketTimeout)
	return err
}

func (c *Conn) send(ctx context.Context, req *Request, socketTimeout time.Duration) (int32, error) {
	if err := c.sendable(); err != nil {
		return 0, err
	}
	return c.sendAs(ctx, req, socketTimeout, c.reqID())
}

// sendable tells why nothing can be sent now, before a request id is used.
func (c *Conn) sendable() error {
	if c.closed.Load() {
		return ErrClosed
	}
	if c.streaming {
		return errors.New("conn: the server is still streaming replies to an exhaust request; Receive them first")
	}
	return nil
}

// sendAs is send with the request id chosen by the caller, which command
// monitoring needs before the message goes out; sendable was checked.
func (c *Conn) sendAs(ctx context.Context, req *Request, socketTimeout time.Duration, id int32) (int32, error) {
	if c.vectored(req) {
		return c.sendVectored(ctx, req, socketTimeout, id)
	}
	bp := getBuf()
	defer putBuf(bp)
	msg, err := appendCommand((*bp)[:0], id, req, c.cfg.Handshake.ServerAPI)
	*bp = msg
	if err != nil {
		return 0, err
	}
	if c.comp != wire.CompressorNoop && wire.Compressible(commandName(req.Command)) {
		cp := getBuf()
		defer putBuf(cp)
		out, err := wire.Compress((*cp)[:0], msg, c.comp, c.cfg.ZlibLevel)
		*cp = out
		if err != nil {
			return 0, fmt.Errorf("conn: compress with %s: %w", c.comp, err)
		}
		msg = out
	}
	if max := int(c.hello.MaxMessageSizeBytes); max > 0 && len(msg) > max {
		return 0, &MessageSizeError{Size: len(msg), Max: max}
	}
	if err := c.write(ctx, msg, socketTimeout); err != nil {
		return 0, err
	}
	if !req.MoreToCome {
		c.expect = id
	}
	return id, nil
}

// vectorMin is the size of a request's documents from which they are
// written from where they lie (writev) instead of being copied into the
// message buffer: copying a batch of large documents costs a buffer as big
// as the batch and the time to fill it.
const vectorMin = 256 << 10

// vectored tells whether req's documents are to be written in place:
// they are big enough, the message is not to be compressed (compression
// needs the whole message), and the stream writes vectors in one call
// (a TLS stream would turn each document into a record of its own).
func (c *Conn) vectored(req *Request) bool {
	if len(req.Sequences) == 0 {
		return false
	}
	switch c.nc.(type) {
	case *net.TCPConn, *net.UnixConn:
	default:
		return false
	}
	if c.comp != wire.CompressorNoop && wire.Compressible(commandName(req.Command)) {
		return false
	}
	n := 0
	for _, sq := range req.Sequences {
		for _, d := range sq.Docs {
			n += len(d)
		}
	}
	return n >= vectorMin
}

// vecPool holds the vectors of sendVectored.
var vecPool = sync.Pool{New: func() any { v := make([][]byte, 0, 16); return &v }}

// sendVectored is sendAs for a request whose documents are written in
// place: the header, the body and each sequence's start are built in a
// pooled buffer, and the documents are written from the caller's memory,
// those that lie end to end in one piece.
func (c *Conn) sendVectored(ctx context.Context, req *Request, socketTimeout time.Duration, id int32) (int32, error) {
	if len(req.Command) < 5 || req.Command[len(req.Command)-1] != 0 {
		return 0, errors.New("conn: command is not a BSON document")
	}
	bp := getBuf()
	defer putBuf(bp)
	var flags wire.Flags
	if req.MoreToCome {
		flags |= wire.MoreToCome
	}
	if req.ExhaustAllowed {
		flags |= wire.ExhaustAllowed
	}
	start, b := wire.AppendHeaderStart((*bp)[:0], id, 0, wire.OpMsg)
	b = wire.AppendMsgFlags(b, flags)
	b = append(b, 0) // section kind 0: the body
	docStart := len(b)
	b = append(b, req.Command[:len(req.Command)-1]...)
	b = handshake.AppendServerAPI(b, c.cfg.Handshake.ServerAPI)
	if req.DB != "" {
		b = bson.AppendStringElement(b, "$db", req.DB)
	}
	b = append(b, 0)
	binary.LittleEndian.PutUint32(b[docStart:], uint32(len(b)-docStart))
	// Each sequence's start goes into b; ends[k] is where the k-th ends.
	var endsArr [4]int
	ends := endsArr[:0]
	total := 0
	for _, sq := range req.Sequences {
		ss, out := wire.AppendSequenceStart(b, sq.Identifier)
		b = out
		n := len(b) - ss
		for _, d := range sq.Docs {
			n += len(d)
		}
		binary.LittleEndian.PutUint32(b[ss:], uint32(n))
		ends = append(ends, len(b))
		total += n - (len(b) - ss)
	}
	total += len(b) - start
	binary.LittleEndian.PutUint32(b[start:], uint32(total))
	*bp = b
	if max := int(c.hello.MaxMessageSizeBytes); max > 0 && total > max {
		return 0, &MessageSizeError{Size: total, Max: max}
	}
	vp := vecPool.Get().(*[][]byte)
	vec := (*vp)[:0]
	prev := start
	for k, sq := range req.Sequences {
		vec = append(vec, b[prev:ends[k]])
		prev = ends[k]
		for _, d := range sq.Docs {
			last := vec[len(vec)-1]
			if len(d) > 0 && cap(last)-len(last) >= len(d) && &last[:len(last)+1][len(last)] == &d[0] {
				vec[len(vec)-1] = last[:len(last)+len(d)] // d follows last in memory
				continue
			}
			vec = append(vec, d)
		}
	}
	err := c.writeVector(ctx, vec, socketTimeout)
	clear(vec)
	if cap(vec) <= 4096 {
		*vp = vec[:0]
		vecPool.Put(vp)
	}
	if err != nil {
		return 0, err
	}
	if !req.MoreToCome {
		c.expect = id
	}
	return id, nil
}

// writeVector is write for a message in pieces.
func (c *Conn) writeVector(ctx context.Context, vec [][]byte, socketTimeout time.Duration) error {
	stop, err := c.deadline(ctx, socketTimeout)
	if err != nil {
		return c.fail("write", err)
	}
	nb := net.Buffers(vec)
	_, err = nb.WriteTo(c.nc)
	c.stopped(stop)
	if err != nil {
		if c.closed.Load() && !isTimeout(err) && ctx.Err() == nil {
			return ErrClosed
		}
		return c.fail("write", ioErr(ctx, err))
	}
	return nil
}

func (c *Conn) write(ctx context.Context, msg []byte, socketTimeout time.Duration) error {
	stop, err := c.deadline(ctx, socketTimeout)
	if err != nil {
		return c.fail("write", err)
	}
	_, err = c.nc.Write(msg)
	c.stopped(stop)
	if err != nil {
		if c.closed.Load() && !isTimeout(err) && ctx.Err() == nil {
			return ErrClosed
		}
		return c.fail("write", ioErr(ctx, err))
	}
	return nil
}

// Receive reads the next reply: the answer to the last Send, or the next
// reply of an exhaust stream. The reply is checked against the request it
// answers; a reply to something else, a malformed message or a checksum
// mismatch closes the connection.
func (c *Conn) Receive(ctx context.Context) (*Reply, error) {
	return c.receive(ctx, c.cfg.SocketTimeout, c.expect)
}

func (c *Conn) receive(ctx context.Context, socketTimeout time.Duration, responseTo int32) (*Reply, error) {
	if c.closed.Load() {
		return nil, ErrClosed
	}
	stop, err := c.deadline(ctx, socketTimeout)
	if err != nil {
		return nil, c.fail("read", err)
	}
	var buf *wire.Buffer
	if s := c.cfg.Spin; s != nil {
		s.waiting.Add(1)
		if c.br.Buffered() == 0 {
			s.spin(c)
		}
		buf, err = c.readMessage()
		s.waiting.Add(-1)
	} else {
		buf, err = c.readMessage()
	}
	c.stopped(stop)
	if err != nil {
		if c.closed.Load() && !isTimeout(err) && ctx.Err() == nil {
			return nil, ErrClosed
		}
		return nil, c.fail("read", ioErr(ctx, err))
	}
	r, err := c.decode(buf, responseTo)
	if err != nil {
		buf.Release()
		return nil, c.fail("decode", err)
	}
	c.streaming = r.MoreToCome
	if r.MoreToCome {
		c.expect = r.RequestID
	}
	return r, nil
}

// bigReply is the size from which a reply is read into a buffer of its
// exact size, allocated once: wire.ReadMessage grows its buffer by
// doubling as bytes arrive, which for a 16 MB batch allocates twice that.
// The server is a handshaken peer whose maxMessageSizeBytes bounds the
// size, and such buffers are never pooled anyway.
const bigReply = 1 << 20

// readMessage reads one message: a big one (bigReply) into a buffer of
// its size, others into a pooled buffer.
func (c *Conn) readMessage() (*wire.Buffer, error) {
	h, err := c.br.Peek(4)
	if err != nil {
		if err == io.EOF && len(h) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return nil, &wire.Error{Op: "read", Offset: len(h), Reason: "reading the message header", Err: err}
	}
	length := int(int32(binary.LittleEndian.Uint32(h)))
	max := c.maxSize
	if max <= 0 {
		max = wire.DefaultMaxMessageSize
	}
	if length <= bigReply || length > max {
		return wire.ReadMessage(c.br, c.maxSize)
	}
	b := getBig(length)
	if n, err := c.readFull(b); err != nil {
		RecycleBuffer(b)
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, &wire.Error{Op: "read", Offset: n, Reason: "reading " + strconv.Itoa(length) + "-byte message", Err: err}
	}
	return &wire.Buffer{B: b}, nil
}

// readFull is io.ReadFull from the stream; with a Spinner, each read that
// would wait polls first (Spinner.spin), so that a big reply arriving in
// pieces is drained as each lands rather than after a wake-up each time:
// the server's writes, held up while the socket's buffer is full, go on
// sooner too.
func (c *Conn) readFull(b []byte) (int, error) {
	s := c.cfg.Spin
	if s == nil {
		return io.ReadFull(c.br, b)
	}
	n := 0
	for n < len(b) {
		if c.br.Buffered() == 0 {
			s.spin(c)
		}
		m, err := c.br.Read(b[n:])
		n += m
		if err != nil {
			if err == io.EOF && n > 0 && n < len(b) {
				err = io.ErrUnexpectedEOF
			}
			return n, err
		}
	}
	return n, nil
}

// Detach returns the body for the caller to keep: the reply's own buffer
// when it is too big to be pooled (no copy), otherwise a copy. The reply
// is released.
func (r *Reply) Detach() bson.Raw {
	out, _ := r.DetachBuffer()
	return out
}

// DetachBuffer is Detach that also returns, when body lies in a big
// buffer of the reply's (no copy was made), that whole buffer: its owner,
// now the caller, may hand it back with RecycleBuffer once neither body
// nor anything sliced from it is read any more. buf is nil when body is a
// copy.
func (r *Reply) DetachBuffer() (body bson.Raw, buf []byte) {
	if r == nil {
		return nil, nil
	}
	switch {
	case r.dbuf != nil && cap(*r.dbuf) > maxPooled:
		body, buf, r.dbuf = r.Body, *r.dbuf, nil // putBuf would drop it
	case r.dbuf == nil && r.buf != nil && cap(r.buf.B) > bigReply:
		body, buf = r.Body, r.buf.B
		r.buf = nil
	default:
		body = append(bson.Raw(nil), r.Body...)
	}
	r.Release()
	return body, buf
}

func (c *Conn) decode(buf *wire.Buffer, responseTo int32) (*Reply, error) {
	h, err := wire.ParseHeader(buf.B)
	if err != nil {
		return nil, err
	}
	if h.ResponseTo != responseTo {
		return nil, fmt.Errorf("reply answers request %d, want %d", h.ResponseTo, responseTo)
	}
	r := &Reply{RequestID: h.RequestID, ResponseTo: h.ResponseTo, buf: buf}
	msg := buf.B
	if h.OpCode == wire.OpCompressed {
		dp := getBuf()
		out, err := wire.Decompress((*dp)[:0], msg, c.maxSize)
		*dp = out
		if err != nil {
			putBuf(dp)
			return nil, err
		}
		r.dbuf, r.Compressed = dp, true
		msg = out
		if h, err = wire.ParseHeader(msg); err != nil {
			r.Release()
			return nil, err
		}
	}
	switch h.OpCode {
	case wire.OpMsg:
		parse := wire.ParseMsg
		if c.lazyBody {
			parse = wire.ParseMsgFraming
		}
		m, err := parse(msg)
		if err != nil {
			r.Release()
			return nil, err
		}
		if len(m.Sequences) > 0 {
			r.Release()
			return nil, errors.New("reply has document sequences, which no command reply uses")
		}
		r.Body = m.Body
		r.MoreToCome = m.Flags&wire.MoreToCome != 0
	default:
		r.Release()
		return nil, fmt.Errorf("reply has opcode %s, want OP_MSG", h.OpCode)
	}
	return r, nil
}

// Command sends req and reads its reply. The error is a *CommandError when
// the server refused the command (the reply is then released and nil), or
// a *WriteConcernError alongside a non-nil reply when the write happened
// without the requested acknowledgement. Network failures close the
// connection. With req.MoreToCome, Command returns (nil, nil) once the
// message is written.
func (c *Conn) Command(ctx context.Context, req *Request) (*Reply, error) {
	if err := c.sendable(); err != nil {
		return nil, err
	}
	if !req.MoreToCome {
		if req.Watched {
			c.watched = true
			defer c.unwatchExternal()
		} else {
			defer c.unwatch(c.watch(ctx))
		}
	}
	id, err := c.sendAs(ctx, req, c.socketTimeout(req), c.reqID())
	if err != nil || req.MoreToCome {
		return nil, err
	}
	c.lazyBody = req.LazyBody
	r, err := c.receive(ctx, c.socketTimeout(req), id)
	c.lazyBody = false
	if err != nil {
		return nil, err
	}
	switch rerr := ReplyError(r.Body).(type) {
	case nil:
		return r, nil
	case *WriteConcernError:
		return r, rerr
	default:
		r.Release()
		return nil, rerr
	}
}

// RunCommand runs cmd on db and returns a copy of the reply body; a
// refusal comes back as *CommandError. Authentication uses it.
func (c *Conn) RunCommand(ctx context.Context, db string, cmd bson.Raw) (bson.Raw, error) {
	req := &Request{DB: db, Command: cmd}
	if c.establishing != estDone {
		// Authentication, during Dial: each command is bounded as
		// handshakeBound says.
		hctx, cancel, st := c.handshakeBound(ctx)
		defer cancel()
		ctx, req.NoSocketTimeout = hctx, st == 0
	}
	r, err := c.Command(ctx, req)
	if r == nil {
		return nil, err
	}
	defer r.Release()
	return append(bson.Raw(nil), r.Body...), err
}
