package mongotest

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/internal/wire"
)

// Conn is the server side of one client connection. Its accessors are
// safe for concurrent use; handlers receive it in Request.Conn.
type Conn struct {
	s      *Server
	id     int64
	nc     net.Conn
	br     *bufio.Reader
	remote string

	ctx       context.Context
	cancel    context.CancelFunc
	closeOnce sync.Once

	mu         sync.Mutex
	metadata   bson.Raw
	appName    string
	users      []UserRef
	compressor wire.Compressor
	helloSeen  bool

	// Used only by the goroutine handling messages.
	sasl  *scramConversation
	req   Request
	out   []byte      // the reply message
	cout  []byte      // the compressed reply message
	dbuf  []byte      // the decompressed request
	body  []byte      // the reply body
	merge []byte      // the request body with sequences merged
	iov   net.Buffers // the pieces of a scattered reply (scatter.go)
}

// UserRef names an authenticated user.
type UserRef struct {
	DB   string
	User string
}

// Largest scratch buffer a connection keeps between messages; bigger ones
// are dropped so one huge message does not pin memory.
const maxKeptBuffer = 1 << 20

func newConn(s *Server, nc net.Conn) *Conn {
	c := &Conn{
		s:  s,
		id: s.nextConnID.Add(1),
		nc: nc,
	}
	if nc != nil {
		c.br = bufio.NewReaderSize(nc, 16<<10)
		if a := nc.RemoteAddr(); a != nil {
			c.remote = a.String()
		}
	}
	c.ctx, c.cancel = context.WithCancel(s.ctx)
	return c
}

// ID returns the server's connectionId for the connection, as hello reports.
func (c *Conn) ID() int64 { return c.id }

// RemoteAddr returns the client's address, as whatsmyuri reports it.
func (c *Conn) RemoteAddr() string { return c.remote }

// ClientMetadata returns the client document of the connection's first
// hello, or nil.
func (c *Conn) ClientMetadata() bson.Raw {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.metadata
}

// AppName returns client.application.name from the handshake, or "".
func (c *Conn) AppName() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.appName
}

// Users returns the users the connection has authenticated as.
func (c *Conn) Users() []UserRef {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]UserRef(nil), c.users...)
}

// Compressor returns the compressor of the client's last compressed
// message ("snappy", "zlib", "zstd", "noop"), or "" if it sent none.
func (c *Conn) Compressor() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.compressor == wire.CompressorNoop {
		return ""
	}
	return c.compressor.String()
}

func (c *Conn) authenticated() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.users) > 0
}

// close ends the connection once; a non-empty reason is recorded.
func (c *Conn) close(reason string) {
	c.closeOnce.Do(func() {
		if reason != "" {
			c.s.recordConnError(c.id, reason)
		}
		// The socket closes before the context is cancelled, so a
		// handler woken by the cancellation cannot write a last reply.
		if c.nc != nil {
			c.nc.Close()
		}
		c.cancel()
		c.s.forget(c)
	})
}

// readFailure returns the reason to record for a failed read, or "" when
// the client simply went away or the server is closing the connection.
func readFailure(ctx context.Context, err error) string {
	if ctx.Err() != nil || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		return ""
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return ""
	}
	return err.Error()
}

// handleLoop reads and answers the connection's messages, one at a time.
// Reading on this goroutine, rather than on a reader goroutine of its own,
// halves the round trip over loopback; waits watch for a hang-up instead
// (waitFor).
func (c *Conn) handleLoop() {
	defer c.s.wg.Done()
	defer func() {
		// A bug in a handler must not take the whole test binary down;
		// the connection is closed and the panic recorded, which the
		// fuzz target and the tests check for.
		if v := recover(); v != nil {
			c.close(fmt.Sprintf("panic: %v", v))
		}
	}()
	for {
		buf, err := wire.ReadMessage(c.br, MaxMessageSizeBytes)
		if err != nil {
			c.close(readFailure(c.ctx, err))
			return
		}
		err = c.handleMessage(buf.B)
		buf.Release()
		if err != nil {
			c.close(closeReason(c.ctx, err))
			return
		}
	}
}

// waitFor blocks until d has passed, ch (when not nil) is closed, or the
// connection ends. Meanwhile a watcher notices the client hanging up, so an
// awaitable hello or a blocked command does not outlive its client.
func (c *Conn) waitFor(ctx context.Context, d time.Duration, ch <-chan struct{}) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	stop := c.watch()
	defer stop()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// watch starts a goroutine that peeks at the socket: an error other than
// the deadline stop sets means the client is gone, and the connection is
// closed. Peeking consumes nothing, so bytes that do arrive (a pipelined
// request) stay buffered for the next read. stop must be called before the
// connection reads again.
func (c *Conn) watch() (stop func()) {
	if c.nc == nil || c.br == nil {
		return func() {}
	}
	done := make(chan struct{})
	c.s.wg.Add(1)
	go func() {
		defer c.s.wg.Done()
		defer close(done)
		if _, err := c.br.Peek(1); err != nil && !isTimeout(err) {
			c.close("")
		}
	}()
	return func() {
		// A deadline in the past ends the peek at once.
		c.nc.SetReadDeadline(time.Unix(1, 0))
		<-done
		c.nc.SetReadDeadline(time.Time{})
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// closeReason turns the error that ended a connection into the reason to
// record: nothing when the client or the server closed it.
func closeReason(ctx context.Context, err error) string {
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return ""
	}
	var w writeError
	if errors.As(err, &w) {
		return ""
	}
	return err.Error()
}

// writeError is a failed write to the client: it went away.
type writeError struct{ err error }

func (e writeError) Error() string { return "write: " + e.err.Error() }

// errClose closes the connection on purpose (a fail point), with a reason.
type errClose string

func (e errClose) Error() string { return string(e) }

// handleMessage decodes one request and writes its replies. An error
// closes the connection.
func (c *Conn) handleMessage(msg []byte) error {
	h, err := wire.ParseHeader(msg)
	if err != nil {
		return err
	}
	comp, compressed := wire.CompressorNoop, false
	if h.OpCode == wire.OpCompressed {
		out, err := wire.Decompress(c.dbuf[:0], msg, MaxMessageSizeBytes)
		if err != nil {
			return err
		}
		if cap(out) <= maxKeptBuffer {
			c.dbuf = out[:0]
		}
		comp, compressed = wire.Compressor(msg[24]), true
		if !c.s.compressorEnabled(comp) {
			return fmt.Errorf("OP_COMPRESSED with %s, which the server does not enable", comp)
		}
		c.mu.Lock()
		c.compressor = comp
		c.mu.Unlock()
		msg = out
		if h, err = wire.ParseHeader(msg); err != nil {
			return err
		}
	}
	switch h.OpCode {
	case wire.OpMsg:
		return c.handleMsg(msg, comp, compressed)
	case wire.OpQuery:
		return c.handleQuery(msg, h)
	default:
		return fmt.Errorf("unsupported opcode %s", h.OpCode)
	}
}

func (s *Server) compressorEnabled(comp wire.Compressor) bool {
	if comp == wire.CompressorNoop {
		return true
	}
	for _, c := range s.compressors {
		if c == comp {
			return true
		}
	}
	return false
}

func (c *Conn) handleMsg(msg []byte, comp wire.Compressor, compressed bool) error {
	m, err := wire.ParseMsg(msg)
	if err != nil {
		return err
	}
	r := &c.req
	c.decodeRequest(r, m)
	if compressed {
		r.Compressor = comp.String()
	}
	checksum := m.Flags&wire.ChecksumPresent != 0
	compress := compressed && wire.Compressible(r.Name)
	reply, sc, err := c.dispatchScatter(c.ctx, r, !checksum && !compress)
	if err != nil {
		return err
	}
	if m.Flags&wire.MoreToCome != 0 {
		if sc != nil {
			clear(sc.bufs) // no reply: drop the references to the documents
		}
		return nil
	}
	responseTo := m.Header.RequestID
	if sc != nil {
		// A big cursor batch, written from its documents; never the
		// start of an exhaust stream (dispatchScatter).
		_, err := c.writeScatter(sc, responseTo)
		return err
	}
	stream := r.more && r.ExhaustAllowed
	for {
		id, err := c.writeMsg(reply, responseTo, checksum, compress, comp, stream)
		if err != nil || !stream {
			return err
		}
		// Exhaust: run the command again, as mongod does, with the state
		// the last reply reported, until the client hangs up or a reply
		// ends the stream.
		responseTo = id
		r.streaming = true
		if reply, err = c.dispatch(c.ctx, r); err != nil {
			return err
		}
		stream = r.more
	}
}

// decodeRequest fills r from an OP_MSG: the body with each document
// sequence merged in as an array, the command name and $db. Problems a
// command reply can describe are left in r.parseErr for dispatch.
func (c *Conn) decodeRequest(r *Request, m wire.Msg) {
	*r = Request{Conn: c, ExhaustAllowed: m.Flags&wire.ExhaustAllowed != 0}
	body := m.Body
	if len(m.Sequences) > 0 {
		merged, err := mergeSequences(c.merge[:0], body, m.Sequences)
		if cap(merged) <= maxKeptBuffer {
			c.merge = merged[:0]
		}
		if err != nil {
			r.parseErr = err
		} else {
			body = merged
		}
	}
	r.Body = body
	it := body.Iter()
	if it.Next() {
		r.Name = it.Key()
	}
	if r.parseErr != nil {
		return
	}
	v, err := body.LookupErr("$db")
	switch {
	case err != nil:
		r.parseErr = newError(40571, "OP_MSG requests require a $db argument")
	case v.Type != bson.TypeString:
		r.parseErr = newError(14, "$db is of type %s, expected a string", v.Type)
	default:
		r.DB = v.StringValue()
		if msg := invalidDBName(r.DB); msg != "" {
			r.parseErr = newError(73, "Invalid database name: '%s': %s", r.DB, msg)
		}
	}
}

// mergeSequences appends body with each sequence added as an array field,
// which is how mongod presents them to commands.
func mergeSequences(dst []byte, body bson.Raw, seqs []wire.Sequence) (bson.Raw, error) {
	for _, s := range seqs {
		if _, err := body.LookupErr(s.Identifier); err == nil {
			return dst, newError(40433, "Duplicate field between command and document sequence: '%s'", s.Identifier)
		}
	}
	// The merged document's size is known up to the array keys' digits:
	// growing dst once saves copying a large insert several times over.
	need := len(body)
	for _, s := range seqs {
		need += len(s.Identifier) + 7
		for _, doc := range s.Docs {
			need += len(doc) + 2 + 10 // type byte, key's NUL, at most 10 digits
		}
	}
	dst = slices.Grow(dst, need)
	start, dst := bson.AppendDocumentStart(dst)
	dst = append(dst, body[4:len(body)-1]...)
	for _, s := range seqs {
		as, d := bson.AppendArrayElementStart(dst, s.Identifier)
		for i, doc := range s.Docs {
			d = bson.AppendDocumentElement(d, bson.ArrayKey(i), doc)
		}
		var err error
		if dst, err = bson.AppendDocumentEnd(d, as); err != nil {
			return dst, newError(10334, "merged command is too large: %v", err)
		}
	}
	dst, err := bson.AppendDocumentEnd(dst, start)
	if err != nil {
		return dst, newError(10334, "merged command is too large: %v", err)
	}
	return bson.Raw(dst[start:]), nil
}

// invalidDBName says why name cannot be a database name, or "".
func invalidDBName(name string) string {
	if name == "$external" {
		// The database of external users, which mongod accepts
		// (saslStart there gets MechanismUnavailable, as anywhere).
		return ""
	}
	if name == "" {
		return "it is empty"
	}
	if len(name) >= 64 {
		return "it is 64 bytes or longer"
	}
	for i := 0; i < len(name); i++ {
		switch name[i] {
		case '/', '\\', '.', ' ', '"', '$', 0:
			return fmt.Sprintf("it contains %q", name[i])
		}
	}
	return ""
}

// writeMsg writes one OP_MSG reply and returns its requestID.
func (c *Conn) writeMsg(body []byte, responseTo int32, checksum, compress bool, comp wire.Compressor, moreToCome bool) (int32, error) {
	if err := c.delay(); err != nil {
		return 0, err
	}
	id := c.s.nextRequestID()
	var flags wire.Flags
	if moreToCome {
		flags |= wire.MoreToCome
	}
	if !compress && !checksum && len(body) > maxKeptBuffer {
		// A big body (a cursor batch) goes out as it is, after its
		// header, rather than copied into a message buffer first.
		var h [wire.HeaderLen + 5]byte
		_, hb := wire.AppendHeaderStart(h[:0], id, responseTo, wire.OpMsg)
		hb = wire.AppendMsgFlags(hb, flags)
		hb = append(hb, 0)
		binary.LittleEndian.PutUint32(hb, uint32(len(hb)+len(body)))
		if c.nc == nil {
			return id, nil
		}
		bufs := net.Buffers{hb, body}
		if _, err := bufs.WriteTo(c.nc); err != nil {
			return id, writeError{err}
		}
		return id, nil
	}
	start, b := wire.AppendHeaderStart(c.out[:0], id, responseTo, wire.OpMsg)
	b = wire.AppendMsgFlags(b, flags)
	b = append(b, 0)
	b = append(b, body...)
	b = wire.FinishMessage(b, start, checksum)
	if cap(b) <= maxKeptBuffer {
		c.out = b[:0]
	}
	return id, c.write(b, compress, comp)
}

func (c *Conn) write(msg []byte, compress bool, comp wire.Compressor) error {
	if compress {
		out, err := wire.Compress(c.cout[:0], msg, comp, -1)
		if err != nil {
			return fmt.Errorf("compress the reply with %s: %w", comp, err)
		}
		if cap(out) <= maxKeptBuffer {
			c.cout = out[:0]
		}
		msg = out
	}
	if c.nc == nil {
		return nil
	}
	if _, err := c.nc.Write(msg); err != nil {
		return writeError{err}
	}
	return nil
}

// delay waits out the latency AddLatency set, unless the connection closes.
func (c *Conn) delay() error {
	d := time.Duration(c.s.latency.Load())
	if d <= 0 {
		return nil
	}
	return c.waitFor(c.ctx, d, nil)
}

// handleQuery answers an OP_QUERY. Only the legacy hello is accepted, as
// mongod 6.0 and later do; any other query gets an error reply.
func (c *Conn) handleQuery(msg []byte, h wire.Header) error {
	q, err := wire.ParseQuery(msg)
	if err != nil {
		return err
	}
	doc := q.Query
	// Old drivers wrap the command with read preference as {$query: ...}.
	if v, err := doc.LookupErr("$query"); err == nil {
		if d, ok := v.DocumentOK(); ok {
			doc = d
		}
	}
	name := ""
	if it := doc.Iter(); it.Next() {
		name = it.Key()
	}
	db, coll, _ := cutNamespace(q.FullCollectionName)
	r := &c.req
	*r = Request{Conn: c, DB: db, Name: name, Body: doc, legacyQuery: true}
	if coll != "$cmd" || !isHelloName(name) {
		r.parseErr = newError(352, "Unsupported OP_QUERY command: %s. The client driver may require an upgrade. For more details see https://dochub.mongodb.org/core/legacy-opcode-removal", name)
	} else if msg := invalidDBName(db); msg != "" {
		r.parseErr = newError(73, "Invalid database name: '%s': %s", db, msg)
	}
	reply, err := c.dispatch(c.ctx, r)
	if err != nil {
		return err
	}
	if err := c.delay(); err != nil {
		return err
	}
	// mongod sets AwaitCapable (8) on every OP_REPLY, and QueryFailure
	// (2) when the command failed.
	flags := int32(8)
	if ok, _ := bson.Raw(reply).Lookup("ok").AsFloat64OK(); ok != 1 {
		flags |= 2
	}
	b := wire.AppendReply(c.out[:0], c.s.nextRequestID(), h.RequestID, wire.Reply{ResponseFlags: flags, Documents: []bson.Raw{reply}})
	if cap(b) <= maxKeptBuffer {
		c.out = b[:0]
	}
	return c.write(b, false, wire.CompressorNoop)
}

func cutNamespace(ns string) (db, coll string, ok bool) {
	for i := 0; i < len(ns); i++ {
		if ns[i] == '.' {
			return ns[:i], ns[i+1:], true
		}
	}
	return ns, "", false
}

func isHelloName(name string) bool {
	return name == "hello" || name == "isMaster" || name == "ismaster"
}

// nextRequestID numbers reply messages; mongod uses one counter for all.
func (s *Server) nextRequestID() int32 {
	for {
		if n := s.requestIDs.Add(1); n > 0 {
			return n
		}
		s.requestIDs.Store(0)
	}
}
