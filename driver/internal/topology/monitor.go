package topology

import (
	"context"
	"sync"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/conn"
	"github.com/mongoscope/mongoscope/driver/internal/handshake"
	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
)

// monitor checks one server: a dedicated connection, polling or streaming,
// and in streaming mode a second goroutine measuring round trips.
type monitor struct {
	t    *Topology
	s    *Server
	addr string

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// checkNow holds one pending request for an immediate check.
	checkNow chan struct{}

	mu         sync.Mutex
	started    bool
	stopped    bool
	rttStarted bool
	conn       *conn.Conn
	// cancelled is set when the application cancelled the check in
	// progress (by closing its connection); that check's error is not the
	// server's news, since the application already acted on it.
	cancelled bool

	// prevTV is the topologyVersion of the last successful check, nil
	// after a failure; only the run goroutine uses it.
	prevTV *handshake.TopologyVersion
	// api is the declared Stable API of the client, nil when none: it
	// makes every monitoring hello a hello with apiVersion.
	api *handshake.ServerAPI
}

func newMonitor(t *Topology, s *Server) *monitor {
	ctx, cancel := context.WithCancel(context.Background())
	api := t.cfg.ConnConfig(s.addr).Handshake.ServerAPI
	return &monitor{t: t, s: s, addr: s.addr, ctx: ctx, cancel: cancel, checkNow: make(chan struct{}, 1), api: api}
}

// start runs the monitor's goroutine, once; after stop it does nothing.
func (m *monitor) start() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started || m.stopped {
		return
	}
	m.started = true
	m.wg.Add(1)
	go m.run()
}

// stop ends the monitor's goroutines and closes its connections, and
// waits for them.
func (m *monitor) stop() {
	m.halt()
	m.wg.Wait()
}

// halt tells the monitor's goroutines to end without waiting for them, so
// that a monitor may halt itself.
func (m *monitor) halt() {
	m.mu.Lock()
	m.stopped = true
	c := m.conn
	m.mu.Unlock()
	m.cancel()
	if c != nil {
		c.Close()
	}
}

// requestCheck asks for a check now; run honours minHeartbeatFrequency.
func (m *monitor) requestCheck() {
	select {
	case m.checkNow <- struct{}{}:
	default:
	}
}

// cancelCheck interrupts the check in progress by closing its connection,
// as the error handling rules require after an application network error.
func (m *monitor) cancelCheck() {
	m.mu.Lock()
	c := m.conn
	if c != nil {
		m.cancelled = true
		m.conn = nil
	}
	m.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

func (m *monitor) run() {
	defer m.wg.Done()
	defer m.closeConn()
	for m.ctx.Err() == nil {
		// A request that arrived while the last check ran is satisfied
		// by it; the specification ignores such requests.
		select {
		case <-m.checkNow:
		default:
		}
		again := m.check()
		if m.ctx.Err() != nil {
			return
		}
		if again {
			continue
		}
		if !m.wait(time.Now()) {
			return
		}
	}
}

// wait sleeps until heartbeatFrequency after end, the end of the last
// check, or until a requested check, but never ends before
// minHeartbeatFrequency after end: the specification counts both from the
// end of the previous check, so a check that took long (a server that
// never answers, bounded by connectTimeout) is still followed by a full
// heartbeatFrequency of rest. It returns false when the monitor stops.
func (m *monitor) wait(end time.Time) bool {
	cfg := m.t.cfg
	timer := time.NewTimer(time.Until(end.Add(cfg.HeartbeatFrequency)))
	defer timer.Stop()
	select {
	case <-m.ctx.Done():
		return false
	case <-timer.C:
		return true
	case <-m.checkNow:
	}
	d := time.Until(end.Add(cfg.MinHeartbeatFrequency))
	if d <= 0 {
		return true
	}
	timer.Reset(d)
	select {
	case <-m.ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

func (m *monitor) closeConn() {
	m.mu.Lock()
	c := m.conn
	m.conn = nil
	m.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

func (m *monitor) current() *conn.Conn {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.conn
}

// check runs one check and applies its result. It returns true when the
// next check should begin at once: in the streaming protocol after every
// successful reply from a server that supports it (the next reply of the
// stream, or, when the server ended the stream by leaving moreToCome
// unset, a new awaitable hello), and after a network error on a server
// that was known, which deserves one retry.
func (m *monitor) check() bool {
	c := m.current()
	if c == nil {
		return m.connect()
	}
	// The awaitable hello carries this monitor's own last topologyVersion,
	// not the topology's, which an application error may have set.
	var tv *handshake.TopologyVersion
	if m.t.streaming {
		tv = m.prevTV
	}
	awaited := c.Streaming() || tv != nil
	m.heartbeatStarted(c, c.ID(), awaited)
	start := time.Now()
	var (
		reply *conn.Reply
		err   error
	)
	cfg := m.t.cfg
	switch {
	case c.Streaming():
		reply, err = m.receive(c, cfg.awaitTimeout())
	case tv != nil:
		// The awaitable hello: the server answers when its topology
		// changes or after maxAwaitTimeMS, and keeps answering (exhaust)
		// without being asked again.
		ctx, cancel := m.timeout(cfg.monitorTimeout())
		err = c.Send(ctx, &conn.Request{DB: "admin", Command: helloCommand(c, m.api, tv, cfg.HeartbeatFrequency), ExhaustAllowed: true})
		cancel()
		if err == nil {
			reply, err = m.receive(c, cfg.awaitTimeout())
		}
	default:
		ctx, cancel := m.timeout(cfg.monitorTimeout())
		reply, err = c.Command(ctx, &conn.Request{DB: "admin", Command: helloCommand(c, m.api, nil, 0)})
		cancel()
	}
	dur := time.Since(start)
	if err != nil {
		return m.failed(c, c.ID(), err, dur, awaited)
	}
	hello, err := handshake.ParseReply(reply.Body)
	reply.Release()
	if err != nil {
		c.Close()
		return m.failed(c, c.ID(), err, dur, awaited)
	}
	if !awaited {
		// A polling check's duration is a round trip; awaited replies
		// wait on purpose, so the RTT monitor measures instead.
		m.s.rtt.Add(dur)
	}
	m.succeeded(c, &hello, dur, awaited)
	if !m.t.streaming || hello.TopologyVersion == nil {
		return c.Streaming()
	}
	// The server streams (it may have learnt to since the handshake):
	// it needs the RTT monitor, and its next awaitable hello goes out at
	// once, even when this reply ended a stream.
	m.startRTT()
	return true
}

// timeout is the monitor's context bounded by d; d 0 means no bound
// (connectTimeoutMS=0), only the monitor's stop.
func (m *monitor) timeout(d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(m.ctx)
	}
	return context.WithTimeout(m.ctx, d)
}

// receive reads the next reply of an exhaust stream, waiting at most
// timeout (0: without limit).
func (m *monitor) receive(c *conn.Conn, timeout time.Duration) (*conn.Reply, error) {
	ctx, cancel := m.timeout(timeout)
	defer cancel()
	reply, err := c.Receive(ctx)
	if err != nil {
		return nil, err
	}
	if err := conn.ReplyError(reply.Body); err != nil {
		reply.Release()
		return nil, err
	}
	return reply, nil
}

// connect opens the monitoring connection; its handshake is the check.
func (m *monitor) connect() bool {
	// The connection is named before its socket exists, so that the
	// started event (published before the socket is created) and the
	// failed event of a dial that fails carry the id the dial's error
	// names.
	cc := m.config()
	cc.ID = conn.NextID()
	m.heartbeatStarted(nil, cc.ID, false)
	ctx, cancel := m.timeout(m.t.cfg.monitorTimeout())
	start := time.Now()
	c, err := conn.Dial(ctx, cc)
	dur := time.Since(start)
	cancel()
	if err != nil {
		return m.failed(nil, cc.ID, err, dur, false)
	}
	m.mu.Lock()
	if m.stopped {
		m.mu.Unlock()
		c.Close()
		// The started event has its pair even when the monitor was
		// stopped while dialling (every started event has one).
		m.publishSucceeded(c, c.Hello(), dur, false)
		return false
	}
	m.conn = c
	m.cancelled = false
	m.mu.Unlock()
	m.s.rtt.Add(dur)
	hello := c.Hello()
	m.succeeded(c, hello, dur, false)
	if m.t.streaming && hello.TopologyVersion != nil {
		m.startRTT()
	}
	// A streaming-capable server gets its awaitable hello at once.
	return m.t.streaming && hello.TopologyVersion != nil
}

// config is the configuration of a monitoring or RTT connection. The
// Server Monitoring specification forbids authenticating on it, or
// negotiating a mechanism, so it carries no credential. Its timeouts are
// the monitor's own: connectTimeoutMS to connect, and no socketTimeoutMS
// (which bounds application reads, and would cut every awaited hello
// short); each check sets its deadline through its context instead. Its
// ID is 0, so that Dial takes a fresh one from the process-wide counter
// (never one of the pool's ids); the server monitor sets its own first.
func (m *monitor) config() conn.Config {
	cc := m.t.cfg.ConnConfig(m.addr)
	cc.ID = 0
	cc.Credential = nil
	cc.ConnectTimeout = m.t.cfg.monitorTimeout()
	cc.SocketTimeout = 0
	// Monitors do not use timeoutMS (CSOT, "Server Monitoring").
	cc.Timeout, cc.TimeoutSet = 0, false
	return cc
}

func (m *monitor) succeeded(c *conn.Conn, hello *handshake.Reply, dur time.Duration, awaited bool) {
	m.prevTV = hello.TopologyVersion
	m.publishSucceeded(c, hello, dur, awaited)
	avg, _ := m.s.rtt.Average()
	sd := description.NewServer(m.addr, hello, avg, time.Now())
	sd.MinRoundTripTime = m.s.rtt.Min()
	m.t.apply(m.s, sd)
}

// publishSucceeded publishes the success of a check on c with reply hello.
func (m *monitor) publishSucceeded(c *conn.Conn, hello *handshake.Reply, dur time.Duration, awaited bool) {
	if d := m.t.cfg.Events; d != nil && d.Topology() {
		f := m.fields(c.ID(), awaited)
		id := hello.ConnectionID
		f.ServerConnectionID = &id
		d.TopologyEvent(context.Background(), &event.ServerHeartbeatSucceeded{HeartbeatFields: f, Duration: dur, Reply: hello.Raw})
	}
}

// handshakeSucceeded feeds the hello reply of an application connection's
// handshake, established under pool generation gen, into the topology like
// a successful check (Server Monitoring, "Clients update the topology from
// each handshake"): the server may have changed since its monitor's last
// check, and the reply says how. It is not a heartbeat, so no heartbeat
// event is published and no RTT sample taken (pool connections are
// established under the application's load; the description keeps the
// monitor's RTT). Two guards keep an old reply from undoing newer news:
// a reply whose connection was dialled before the pool was last cleared is
// dropped (the clear, and the Unknown description that came with it, may
// be newer than the reply), and Apply ignores a reply whose topologyVersion
// is older than the current description's. In load-balanced mode the
// server is a LoadBalancer whatever its hello says, so nothing is applied.
func (t *Topology) handshakeSucceeded(s *Server, gen uint64, hello *handshake.Reply) {
	if t.cfg.LoadBalanced || hello == nil {
		return
	}
	avg, _ := s.rtt.Average()
	sd := description.NewServer(s.addr, hello, avg, time.Now())
	sd.MinRoundTripTime = s.rtt.Min()
	t.publishMu.Lock()
	defer t.publishMu.Unlock()
	t.mu.Lock()
	// Clears happen with t.mu held, so the generation cannot move
	// between this test and the update.
	if t.closed || t.servers[s.addr] != s || s.pool.Stats().Generation != gen {
		t.mu.Unlock()
		return
	}
	evs := t.applyLocked(sd)
	removed := t.takeRemoved()
	t.mu.Unlock()
	t.finishApply(evs, removed)
	t.lastServerRemoved(evs, sd)
}

// failed handles a failed check: the failure event, then the error rules
// (mark Unknown, clear the pool), and one immediate retry for a server
// that was known.
func (m *monitor) failed(c *conn.Conn, id int64, err error, dur time.Duration, awaited bool) bool {
	if c != nil {
		c.Close()
	}
	m.prevTV = nil
	m.mu.Lock()
	cancelled := m.cancelled
	m.cancelled = false
	if m.conn == c {
		m.conn = nil
	}
	m.mu.Unlock()
	// The failure is published even when the monitor's stop caused it:
	// every started event has its pair. The monitors stop before the
	// topology publishes TopologyClosed, which stays the last event.
	if d := m.t.cfg.Events; d != nil && d.Topology() {
		d.TopologyEvent(context.Background(), &event.ServerHeartbeatFailed{HeartbeatFields: m.connFields(c, id, awaited), Duration: dur, Failure: err})
	}
	if m.ctx.Err() != nil {
		return false
	}
	if cancelled {
		// The application closed this check's connection after acting
		// on its own error: report nothing more, and wait (a check it
		// requested wakes the wait) as the specification's monitor does.
		return false
	}
	m.s.rtt.Reset()
	out := m.t.handle(m.s, description.PhaseCheck, errorInfo(err))
	return out.SkipWait
}

// heartbeatStarted publishes the start of a check on c, or, with c nil,
// of the dial of the connection that will have id connID.
func (m *monitor) heartbeatStarted(c *conn.Conn, connID int64, awaited bool) {
	if d := m.t.cfg.Events; d != nil && d.Topology() {
		d.TopologyEvent(context.Background(), &event.ServerHeartbeatStarted{HeartbeatFields: m.connFields(c, connID, awaited)})
	}
}

// connFields are the heartbeat fields of a check on c (nil while it is
// being dialled), whose driver id is connID: the server's id for it is
// known once its handshake has answered, and only then reported.
func (m *monitor) connFields(c *conn.Conn, connID int64, awaited bool) event.HeartbeatFields {
	f := m.fields(connID, awaited)
	if c != nil {
		if id := c.Hello().ConnectionID; id != 0 {
			f.ServerConnectionID = &id
		}
	}
	return f
}

func (m *monitor) fields(connID int64, awaited bool) event.HeartbeatFields {
	host, port := event.SplitAddress(m.addr)
	return event.HeartbeatFields{TopologyID: m.t.id, ServerHost: host, ServerPort: port, DriverConnectionID: connID, Awaited: awaited}
}

// startRTT starts the RTT monitor once: in streaming mode the awaited
// replies say nothing about round trips, so a plain hello on a second
// connection every heartbeatFrequency measures them.
func (m *monitor) startRTT() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rttStarted || m.stopped {
		return
	}
	m.rttStarted = true
	m.wg.Add(1)
	go m.runRTT()
}

func (m *monitor) runRTT() {
	defer m.wg.Done()
	var c *conn.Conn
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	timer := time.NewTimer(m.t.cfg.HeartbeatFrequency)
	defer timer.Stop()
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-timer.C:
		}
		ctx, cancel := m.timeout(m.t.cfg.monitorTimeout())
		start := time.Now()
		if c == nil || c.Closed() {
			nc, err := conn.Dial(ctx, m.config())
			if err == nil {
				c = nc
				m.s.rtt.Add(time.Since(start))
			}
		} else {
			reply, err := c.Command(ctx, &conn.Request{DB: "admin", Command: helloCommand(c, m.api, nil, 0)})
			if err == nil {
				reply.Release()
				m.s.rtt.Add(time.Since(start))
			} else {
				// The server monitor reports failures; this one only
				// reconnects next time.
				c.Close()
			}
		}
		cancel()
		timer.Reset(m.t.cfg.HeartbeatFrequency)
	}
}

// helloCommand is the monitoring hello: legacy isMaster unless the
// handshake showed the server takes hello or a Stable API is declared;
// with tv, the awaitable form. With api it carries apiVersion (and
// apiStrict and apiDeprecationErrors when set), as the Stable API
// requires of every command; it never carries the handshake's arguments
// (client metadata, compression, speculative authentication).
func helloCommand(c *conn.Conn, api *handshake.ServerAPI, tv *handshake.TopologyVersion, maxAwait time.Duration) bson.Raw {
	name := "isMaster"
	if h := c.Hello(); api != nil || (h != nil && h.HelloOK) {
		name = "hello"
	}
	start, dst := bson.AppendDocumentStart(make([]byte, 0, 128))
	dst = bson.AppendInt32Element(dst, name, 1)
	dst = bson.AppendBooleanElement(dst, "helloOk", true)
	if tv != nil {
		ts, d := bson.AppendDocumentElementStart(dst, "topologyVersion")
		d = bson.AppendObjectIDElement(d, "processId", tv.ProcessID)
		d = bson.AppendInt64Element(d, "counter", tv.Counter)
		// These builders only fail on a bad start offset, which ours are.
		d, _ = bson.AppendDocumentEnd(d, ts)
		dst = bson.AppendInt64Element(d, "maxAwaitTimeMS", maxAwait.Milliseconds())
	}
	if api != nil {
		dst = bson.AppendStringElement(dst, "apiVersion", api.Version)
		if api.Strict != nil {
			dst = bson.AppendBooleanElement(dst, "apiStrict", *api.Strict)
		}
		if api.DeprecationErrors != nil {
			dst = bson.AppendBooleanElement(dst, "apiDeprecationErrors", *api.DeprecationErrors)
		}
	}
	dst, _ = bson.AppendDocumentEnd(dst, start)
	return dst
}
