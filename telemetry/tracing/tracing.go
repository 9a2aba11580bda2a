package tracing

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/driver/event"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// The environment variables the specification names for Go.
const (
	EnvEnabled            = "OTEL_GO_INSTRUMENTATION_MONGODB_ENABLED"
	EnvQueryTextMaxLength = "OTEL_GO_INSTRUMENTATION_MONGODB_QUERY_TEXT_MAX_LENGTH"
)

// Options configure a Tracer.
type Options struct {
	// TracerProvider makes the tracer; nil means the global one
	// (otel.GetTracerProvider), looked up when New runs.
	TracerProvider trace.TracerProvider
	// Enabled turns tracing on or off for the client the Tracer is given
	// to; nil means OTEL_GO_INSTRUMENTATION_MONGODB_ENABLED ("1", "true",
	// "yes", in any case, turn it on; anything else, or unset, leaves it
	// off, as the specification asks).
	Enabled *bool
	// QueryTextMaxLength is the length db.query.text is cut to; 0 leaves
	// the attribute out. nil means
	// OTEL_GO_INSTRUMENTATION_MONGODB_QUERY_TEXT_MAX_LENGTH when it holds
	// a positive integer, and 0 when it is unset or holds anything else
	// (a bad value never turns the attribute on). A negative value is 0.
	QueryTextMaxLength *int
	// Getenv reads the environment variables; nil means os.Getenv. Tests
	// set it so that they need not change the process's environment.
	Getenv func(string) string
}

var (
	_ event.OperationMonitor = (*Tracer)(nil)
	_ event.CommandMonitor   = (*Tracer)(nil)
	_ event.SelectionMonitor = (*Tracer)(nil)
	_ event.PoolMonitor      = (*Tracer)(nil)
)

// A Tracer turns driver events into spans. Give it to a client in
// driver.ClientOptions.Monitors. It is safe for concurrent use by any
// number of operations, and starts no goroutine.
type Tracer struct {
	enabled  bool
	queryMax int
	tracer   trace.Tracer

	// What the start of a span needs that depends only on names, built
	// once per operation (or command and server) rather than per call.
	ops  boundedCache[opCacheKey, *startStatic]
	cmds boundedCache[cmdCacheKey, *startStatic]
}

// New returns a Tracer for o. The tracer it asks the provider for is named
// and versioned after the driver's handshake (driver.DriverName,
// driver.DriverVersion).
func New(o Options) *Tracer {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	t := &Tracer{}
	if o.Enabled != nil {
		t.enabled = *o.Enabled
	} else {
		t.enabled = envTrue(getenv(EnvEnabled))
	}
	if o.QueryTextMaxLength != nil {
		t.queryMax = max(*o.QueryTextMaxLength, 0)
	} else {
		t.queryMax = envLength(getenv(EnvQueryTextMaxLength))
	}
	if !t.enabled {
		return t
	}
	tp := o.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	t.tracer = tp.Tracer(driver.DriverName, trace.WithInstrumentationVersion(driver.DriverVersion()))
	return t
}

func envTrue(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes":
		return true
	}
	return false
}

// envLength reads a positive integer; anything else is 0.
func envLength(s string) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// Enabled reports whether the Tracer makes spans.
func (t *Tracer) Enabled() bool { return t != nil && t.enabled }

// EventFamilies implements event.FamilyFilter: an enabled Tracer takes the
// operation, command, selection and pool events; a disabled one takes none,
// so a client given a disabled Tracer builds no events for it and runs as
// fast as one with no monitor.
func (t *Tracer) EventFamilies() event.Family {
	if !t.Enabled() {
		return 0
	}
	return event.FamilyOperation | event.FamilyCommand | event.FamilySelection | event.FamilyPool
}

// QueryTextMaxLength returns the length db.query.text is cut to, 0 when
// the attribute is left out.
func (t *Tracer) QueryTextMaxLength() int {
	if t == nil {
		return 0
	}
	return t.queryMax
}

// The attribute names.
const (
	attrSystem           = "db.system.name"
	attrNamespace        = "db.namespace"
	attrCollection       = "db.collection.name"
	attrOperationName    = "db.operation.name"
	attrOperationSummary = "db.operation.summary"
	attrCommandName      = "db.command.name"
	attrQuerySummary     = "db.query.summary"
	attrQueryText        = "db.query.text"
	attrStatusCode       = "db.response.status_code"
	attrServerAddress    = "server.address"
	attrServerPort       = "server.port"
	attrTransport        = "network.transport"
	attrDriverConnID     = "db.mongodb.driver_connection_id"
	attrServerConnID     = "db.mongodb.server_connection_id"
	attrCursorID         = "db.mongodb.cursor_id"
	attrLsid             = "db.mongodb.lsid"
	attrTxnNumber        = "db.mongodb.txn_number"
)

// The attributes this package adds to operation spans beyond the
// specification, set when the operation ends.
const (
	// AttrSelectionDuration is the time spent in server selection, over
	// all attempts, in seconds (float64).
	AttrSelectionDuration = "db.mongodb.selection.duration"
	// AttrCheckoutDuration is the time spent checking out connections,
	// over all attempts, in seconds (float64).
	AttrCheckoutDuration = "db.mongodb.checkout.duration"
	// AttrAttempts is the number of command attempts, retries included
	// (int64).
	AttrAttempts = "db.mongodb.attempts"
	// AttrTimeout is the operation's time budget (timeoutMS or the
	// context's deadline) in seconds (float64), set only when it had one.
	AttrTimeout = "db.mongodb.timeout"
)

// The span events this package adds to operation spans, with their
// attributes.
const (
	// EventServerSelected: server.address, server.port (none for a Unix
	// socket) and AttrWait, the time since selection started.
	EventServerSelected = "server selected"
	// EventSelectionFailed: AttrWait.
	EventSelectionFailed = "server selection failed"
	// EventCheckedOut: server.address, db.mongodb.driver_connection_id
	// and AttrWait, the checkout's wait.
	EventCheckedOut = "connection checked out"
	// EventCheckOutFailed: server.address, AttrCheckOutFailReason and
	// AttrWait.
	EventCheckOutFailed = "connection check out failed"
	// AttrWait is a span event's wait in seconds (float64).
	AttrWait = "db.mongodb.wait.duration"
	// AttrCheckOutFailReason is why a checkout failed: "poolClosed",
	// "timeout" or "connectionError".
	AttrCheckOutFailReason = "db.mongodb.checkout.failure_reason"
)

var systemAttr = attribute.String(attrSystem, "mongodb")

// clientKind is built once: trace.WithSpanKind allocates a closure.
var clientKind = trace.WithSpanKind(trace.SpanKindClient)

// The context keys hold the Tracer, so that two Tracers on one client
// keep their spans apart.
type opKey struct{ t *Tracer }
type cmdKey struct{ t *Tracer }

// opState is an operation's span and what its events need. It is itself
// the context OperationStarted returns: it wraps the context the tracer's
// Start returned (in which the operation's span is current) and answers
// this Tracer's opKey, and the callerKey when this Tracer was the first to
// see the operation, so that the state and the context cost one
// allocation.
type opState struct {
	context.Context
	t         *Tracer
	span      trace.Span
	recording bool // span.IsRecording() when it started

	ownCaller bool   // caller is this operation's, answered for callerKey
	caller    caller // the span current where the operation was called

	mu             sync.Mutex
	selectionStart time.Time
	// scratch and evOpt build a span event's attributes or the
	// operation's totals without an allocation of their own; under mu.
	scratch [5]attribute.KeyValue
	evOpt   [1]trace.EventOption
}

// Value answers this Tracer's opKey with the state, callerKey with the
// caller when the state holds it, and anything else as the wrapped
// context does.
func (o *opState) Value(key any) any {
	switch k := key.(type) {
	case opKey:
		if k.t == o.t {
			return o
		}
	case callerKey:
		if o.ownCaller {
			return &o.caller
		}
	}
	return o.Context.Value(key)
}

// cmdState is a command's span. Like opState, it is the context
// CommandStarted returns, wrapping the one the tracer's Start returned.
type cmdState struct {
	context.Context
	t         *Tracer
	span      trace.Span
	recording bool

	// attrs and opts hold the start options, so that they take no
	// allocation of their own (the API copies the attributes).
	attrs [cmdAttrsCap]attribute.KeyValue
	opts  [2]trace.SpanStartOption
}

// cmdAttrsCap is the most attributes a command span starts with.
const cmdAttrsCap = 14

// Value answers this Tracer's cmdKey with the state.
func (c *cmdState) Value(key any) any {
	if k, ok := key.(cmdKey); ok && k.t == c.t {
		return c
	}
	return c.Context.Value(key)
}

// specOperationName gives the name the OpenTelemetry specification uses
// for the operation: the driver's events already carry it (runCommand for
// a command the application wrote, dropCollection, createCollection, else
// the command's name); an event of an older producer that names a generic
// command by itself is named runCommand here.
func specOperationName(e *event.OperationStarted) string {
	if e.Generic {
		return "runCommand"
	}
	return e.Name
}

// callerKey holds a *caller: the span that was current where the
// operation was called, set by the first Tracer that sees the operation.
// A second Tracer on the same client, handed the same event, then finds
// the caller's span rather than the first one's operation span; an
// operation the driver runs inside another (another event) still nests
// under the span current in its context.
type callerKey struct{}

type caller struct {
	ev   *event.OperationStarted
	span trace.Span
}

// parent returns the span an operation's span starts under, and the
// links it carries. This is the one place that decides a parent:
//
//   - a cursor's getMore or killCursors (e.Origin set) starts under the
//     span of the operation that opened the cursor, with a link to the
//     caller's span when it has one;
//   - an operation the driver runs inside one of this Tracer's operations
//     starts under that operation's span;
//   - any other operation starts under the caller's span.
//
// Transactions (issue 16) will add a case here: an operation in a session
// with a transaction in progress starts under the transaction's span.
func (t *Tracer) parent(ctx context.Context, e *event.OperationStarted, caller trace.Span) (trace.Span, []trace.Link) {
	if e.Origin != nil {
		if o, _ := e.Origin.Value(opKey{t}).(*opState); o != nil {
			var links []trace.Link
			if sc := caller.SpanContext(); sc.IsValid() {
				links = []trace.Link{{SpanContext: sc}}
			}
			return o.span, links
		}
	}
	if o, _ := ctx.Value(opKey{t}).(*opState); o != nil {
		return o.span, nil
	}
	return caller, nil
}

// sameSpan says whether a and b are one span (by trace and span id), so
// that a span current in a context need not be made current again.
// Spans are not compared as interface values: some span types are not
// comparable.
func sameSpan(a, b trace.Span) bool {
	x, y := a.SpanContext(), b.SpanContext()
	return x.TraceID() == y.TraceID() && x.SpanID() == y.SpanID()
}

// withParent returns ctx with span current, ctx itself when it is.
func withParent(ctx context.Context, span trace.Span) context.Context {
	if sameSpan(span, trace.SpanFromContext(ctx)) {
		return ctx
	}
	return trace.ContextWithSpan(ctx, span)
}

// startStatic is what a span's start needs that its names decide: its
// name (the summary), its fixed attributes and, for operations, the
// start options. It is shared and never changed.
type startStatic struct {
	summary string
	attrs   []attribute.KeyValue
	opts    []trace.SpanStartOption
}

type opCacheKey struct{ name, db, coll string }

type cmdCacheKey struct {
	name, db, coll, host string
	port                 int
}

// boundedCache is a map read without a lock (the map is replaced, never
// changed) that stops growing at cacheMax entries: past that, callers
// build what they need each time.
type boundedCache[K comparable, V any] struct {
	mu sync.Mutex
	m  atomic.Pointer[map[K]V]
}

const cacheMax = 256

func (c *boundedCache[K, V]) get(k K) (V, bool) {
	if m := c.m.Load(); m != nil {
		v, ok := (*m)[k]
		return v, ok
	}
	var zero V
	return zero, false
}

func (c *boundedCache[K, V]) put(k K, v V) {
	if m := c.m.Load(); m != nil && len(*m) >= cacheMax {
		return // full: no lock taken on each miss
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	n := 0
	if old != nil {
		n = len(*old)
		if _, ok := (*old)[k]; ok || n >= cacheMax {
			return
		}
	}
	m := make(map[K]V, n+1)
	if old != nil {
		for k, v := range *old {
			m[k] = v
		}
	}
	m[k] = v
	c.m.Store(&m)
}

// opStatic returns the name and start options of e's span.
func (t *Tracer) opStatic(e *event.OperationStarted) *startStatic {
	name := specOperationName(e)
	coll := e.Collection
	if e.Generic {
		coll = ""
	}
	k := opCacheKey{name, e.Database, coll}
	if st, ok := t.ops.get(k); ok {
		return st
	}
	summary := name + " " + e.Database
	if coll != "" {
		summary += "." + coll
	}
	attrs := make([]attribute.KeyValue, 0, 5)
	attrs = append(attrs, systemAttr)
	if e.Database != "" {
		attrs = append(attrs, attribute.String(attrNamespace, e.Database))
	}
	if coll != "" {
		attrs = append(attrs, attribute.String(attrCollection, coll))
	}
	attrs = append(attrs, attribute.String(attrOperationName, name), attribute.String(attrOperationSummary, summary))
	st := &startStatic{summary: summary, attrs: attrs,
		opts: []trace.SpanStartOption{clientKind, trace.WithAttributes(attrs...)}}
	t.ops.put(k, st)
	return st
}

// OperationStarted starts the operation's span, named "<op> <db>.<coll>"
// or "<op> <db>".
func (t *Tracer) OperationStarted(ctx context.Context, e *event.OperationStarted) context.Context {
	if t == nil || !t.enabled || e == nil {
		return ctx
	}
	c, _ := ctx.Value(callerKey{}).(*caller)
	own := c == nil || c.ev != e
	var callerSp trace.Span
	if own {
		callerSp = trace.SpanFromContext(ctx)
	} else {
		callerSp = c.span
	}
	parent, links := t.parent(ctx, e, callerSp)
	st := t.opStatic(e)
	opts := st.opts
	if len(links) > 0 {
		opts = []trace.SpanStartOption{clientKind, trace.WithAttributes(st.attrs...), trace.WithLinks(links...)}
	}
	// The operation's span is current in what the driver carries on, for
	// the application's code the driver may call (none yet) and for other
	// monitors; this Tracer finds it by its own key.
	sctx, span := t.tracer.Start(withParent(ctx, parent), st.summary, opts...)
	o := &opState{Context: sctx, t: t, span: span, recording: span.IsRecording()}
	if own {
		o.ownCaller = true
		o.caller = caller{ev: e, span: callerSp}
	}
	return o
}

// OperationFinished sets the operation's totals, records its error and
// ends its span.
func (t *Tracer) OperationFinished(ctx context.Context, e *event.OperationFinished) {
	if t == nil || !t.enabled || e == nil {
		return
	}
	o, _ := ctx.Value(opKey{t}).(*opState)
	if o == nil {
		return
	}
	if o.recording {
		o.mu.Lock()
		attrs := append(o.scratch[:0],
			attribute.Float64(AttrSelectionDuration, e.Selection.Seconds()),
			attribute.Float64(AttrCheckoutDuration, e.CheckOut.Seconds()),
			attribute.Int64(AttrAttempts, int64(e.Attempts)))
		if e.Timeout > 0 {
			attrs = append(attrs, attribute.Float64(AttrTimeout, e.Timeout.Seconds()))
		}
		o.span.SetAttributes(attrs...)
		o.mu.Unlock()
		if e.Err != nil {
			o.span.RecordError(e.Err, trace.WithStackTrace(true))
			o.span.SetStatus(codes.Error, e.Err.Error())
		}
	}
	o.span.End()
}

// addEvent adds the event name with attrs, which must be o.scratch's;
// o.mu is held.
func (o *opState) addEvent(name string, attrs []attribute.KeyValue) {
	o.evOpt[0] = trace.WithAttributes(attrs...)
	o.span.AddEvent(name, o.evOpt[:]...)
	o.evOpt[0] = nil
}

// SelectionEvent adds the "server selected" (or "server selection
// failed") event to the operation's span.
func (t *Tracer) SelectionEvent(ctx context.Context, e event.SelectionEvent) {
	if t == nil || !t.enabled || e == nil {
		return
	}
	o, _ := ctx.Value(opKey{t}).(*opState)
	if o == nil || !o.recording {
		return
	}
	switch e := e.(type) {
	case *event.ServerSelectionStarted:
		if e == nil {
			return
		}
		o.mu.Lock()
		o.selectionStart = time.Now()
		o.mu.Unlock()
	case *event.ServerSelectionSucceeded:
		if e == nil {
			return
		}
		o.mu.Lock()
		attrs := append(o.scratch[:0], attribute.String(attrServerAddress, e.ServerHost))
		if e.ServerPort != 0 {
			attrs = append(attrs, attribute.Int64(attrServerPort, int64(e.ServerPort)))
		}
		if w, ok := o.selectionWait(); ok {
			attrs = append(attrs, attribute.Float64(AttrWait, w.Seconds()))
		}
		o.addEvent(EventServerSelected, attrs)
		o.mu.Unlock()
	case *event.ServerSelectionFailed:
		o.mu.Lock()
		attrs := o.scratch[:0]
		if w, ok := o.selectionWait(); ok {
			attrs = append(attrs, attribute.Float64(AttrWait, w.Seconds()))
		}
		o.addEvent(EventSelectionFailed, attrs)
		o.mu.Unlock()
	}
}

// selectionWait returns the time since selection started, and forgets
// the start; o.mu is held.
func (o *opState) selectionWait() (time.Duration, bool) {
	if o.selectionStart.IsZero() {
		return 0, false
	}
	w := time.Since(o.selectionStart)
	o.selectionStart = time.Time{}
	return w, true
}

// PoolEvent adds the "connection checked out" (or "connection check out
// failed") event to the operation's span. The pool's other events are
// not an operation's.
func (t *Tracer) PoolEvent(ctx context.Context, e event.PoolEvent) {
	if t == nil || !t.enabled || e == nil {
		return
	}
	switch e := e.(type) {
	case *event.ConnectionCheckedOut:
		o, _ := ctx.Value(opKey{t}).(*opState)
		if o == nil || e == nil || !o.recording {
			return
		}
		o.mu.Lock()
		attrs := append(serverAttrs(o.scratch[:0], e.Address),
			attribute.Int64(attrDriverConnID, e.ConnectionID),
			attribute.Float64(AttrWait, e.Duration.Seconds()))
		o.addEvent(EventCheckedOut, attrs)
		o.mu.Unlock()
	case *event.ConnectionCheckOutFailed:
		o, _ := ctx.Value(opKey{t}).(*opState)
		if o == nil || e == nil || !o.recording {
			return
		}
		o.mu.Lock()
		attrs := append(serverAttrs(o.scratch[:0], e.Address),
			attribute.String(AttrCheckOutFailReason, string(e.Reason)),
			attribute.Float64(AttrWait, e.Duration.Seconds()))
		o.addEvent(EventCheckOutFailed, attrs)
		o.mu.Unlock()
	}
}

// serverAttrs appends server.address and, but for a Unix socket,
// server.port, as the "server selected" event and command spans have
// them.
func serverAttrs(attrs []attribute.KeyValue, address string) []attribute.KeyValue {
	host, port := event.SplitAddress(address)
	attrs = append(attrs, attribute.String(attrServerAddress, host))
	if port != 0 {
		attrs = append(attrs, attribute.Int64(attrServerPort, int64(port)))
	}
	return attrs
}

// cmdStatic returns the name-decided attributes of a command's span: up
// to the transport.
func (t *Tracer) cmdStatic(e *event.CommandStarted, coll string) *startStatic {
	k := cmdCacheKey{e.CommandName, e.DatabaseName, coll, e.ServerHost, e.ServerPort}
	if st, ok := t.cmds.get(k); ok {
		return st
	}
	summary := e.CommandName + " " + e.DatabaseName
	if coll != "" {
		summary += "." + coll
	}
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs, systemAttr, attribute.String(attrNamespace, e.DatabaseName))
	if coll != "" {
		attrs = append(attrs, attribute.String(attrCollection, coll))
	}
	attrs = append(attrs,
		attribute.String(attrCommandName, e.CommandName),
		attribute.String(attrQuerySummary, summary),
		attribute.String(attrServerAddress, e.ServerHost))
	if isUnix(e.ServerHost, e.ServerPort) {
		attrs = append(attrs, attribute.String(attrTransport, "unix"))
	} else {
		attrs = append(attrs, attribute.Int64(attrServerPort, int64(e.ServerPort)), attribute.String(attrTransport, "tcp"))
	}
	st := &startStatic{summary: summary, attrs: attrs}
	t.cmds.put(k, st)
	return st
}

// appendCmdAttrs appends the attributes of a command's span that its
// names do not decide.
func (t *Tracer) appendCmdAttrs(attrs []attribute.KeyValue, e *event.CommandStarted) []attribute.KeyValue {
	cmd := e.Command
	attrs = append(attrs, attribute.Int64(attrDriverConnID, e.ConnectionID))
	if e.ServerConnectionID != nil {
		attrs = append(attrs, attribute.Int64(attrServerConnID, *e.ServerConnectionID))
	}
	if id := commandCursorID(e.CommandName, cmd); id != 0 {
		attrs = append(attrs, attribute.Int64(attrCursorID, id))
	}
	// One pass finds lsid and txnNumber (the first of each, as Lookup
	// would), rather than one walk of the command each.
	var lsid, txn bson.RawValue
	var haveLsid, haveTxn bool
	for it := cmd.Iter(); it.Next() && !(haveLsid && haveTxn); {
		switch string(it.KeyBytes()) {
		case "lsid":
			if !haveLsid {
				lsid, haveLsid = it.Value(), true
			}
		case "txnNumber":
			if !haveTxn {
				txn, haveTxn = it.Value(), true
			}
		}
	}
	if s, ok := lsidText(lsid); haveLsid && ok {
		attrs = append(attrs, attribute.String(attrLsid, s))
	}
	if n, ok := txn.AsInt64OK(); haveTxn && ok {
		attrs = append(attrs, attribute.Int64(attrTxnNumber, n))
	}
	if t.queryMax > 0 {
		attrs = append(attrs, attribute.String(attrQueryText, queryText(cmd, t.queryMax)))
	}
	return attrs
}

// CommandStarted starts the command's span under the operation's, except
// for a security-sensitive command, which gets none.
func (t *Tracer) CommandStarted(ctx context.Context, e *event.CommandStarted) context.Context {
	if t == nil || !t.enabled || e == nil {
		return ctx
	}
	if e.Redacted || event.IsSensitiveCommand(e.CommandName, e.Command) {
		return ctx
	}
	st := t.cmdStatic(e, commandCollection(e.CommandName, e.Command))
	pctx := ctx
	o, _ := ctx.Value(opKey{t}).(*opState)
	if o != nil {
		// Under this Tracer's operation span, whatever span another
		// monitor made current since.
		pctx = withParent(ctx, o.span)
	}
	// Under an operation span that records nothing (not sampled), the
	// command's own attributes are built only if its span records after
	// all (a sampler that samples it alone).
	full := o == nil || o.recording
	c := &cmdState{t: t}
	attrs := append(c.attrs[:0], st.attrs...)
	if full {
		attrs = t.appendCmdAttrs(attrs, e)
	}
	c.opts[0], c.opts[1] = clientKind, trace.WithAttributes(attrs...)
	sctx, span := t.tracer.Start(pctx, e.CommandName, c.opts[:]...)
	c.Context, c.span, c.recording = sctx, span, span.IsRecording()
	c.opts[1] = nil
	if !full && c.recording {
		span.SetAttributes(t.appendCmdAttrs(c.attrs[:0], e)...)
	}
	// The command's span is current in what the driver carries on, so
	// that the log sink's command messages name it (span_id).
	return c
}

// CommandSucceeded adds the cursor id a reply returns and ends the span.
func (t *Tracer) CommandSucceeded(ctx context.Context, e *event.CommandSucceeded) {
	if t == nil || !t.enabled || e == nil {
		return
	}
	c, _ := ctx.Value(cmdKey{t}).(*cmdState)
	if c == nil {
		return
	}
	if c.recording && !e.Redacted {
		if id, ok := e.Reply.Lookup("cursor", "id").AsInt64OK(); ok && id != 0 {
			c.span.SetAttributes(attribute.Int64(attrCursorID, id))
		}
	}
	c.span.End()
}

// statusCodes holds the text of the server error codes seen, so that
// the common ones are not formatted each time.
var statusCodes boundedCache[int64, string]

func statusCodeText(code int64) string {
	if s, ok := statusCodes.get(code); ok {
		return s
	}
	s := strconv.FormatInt(code, 10)
	statusCodes.put(code, s)
	return s
}

// CommandFailed records the failure, with the server's error code as
// db.response.status_code when there is one, and ends the span.
func (t *Tracer) CommandFailed(ctx context.Context, e *event.CommandFailed) {
	if t == nil || !t.enabled || e == nil {
		return
	}
	c, _ := ctx.Value(cmdKey{t}).(*cmdState)
	if c == nil {
		return
	}
	if c.recording {
		if code, ok := e.Reply.Lookup("code").AsInt64OK(); ok {
			c.span.SetAttributes(attribute.String(attrStatusCode, statusCodeText(code)))
		}
		if e.Failure != nil {
			c.span.RecordError(e.Failure, trace.WithStackTrace(true))
			c.span.SetStatus(codes.Error, e.Failure.Error())
		} else {
			c.span.SetStatus(codes.Error, "command failed")
		}
	}
	c.span.End()
}

// isUnix says whether the server is reached over a Unix domain socket:
// the driver reports no port for one.
func isUnix(host string, port int) bool {
	return port == 0 && (strings.HasSuffix(host, ".sock") || strings.HasPrefix(host, "/"))
}

// commandCollection returns the collection a command names: the value of
// its first element when that is a string (find, insert, drop, ...), or
// getMore's collection field. Database and admin commands name none.
func commandCollection(name string, cmd bson.Raw) string {
	if name == "getMore" {
		s, _ := cmd.Lookup("collection").StringValueOK()
		return s
	}
	el, err := cmd.Index(0)
	if err != nil {
		return ""
	}
	s, _ := el.Value().StringValueOK()
	return s
}

// commandCursorID returns the cursor a command uses: getMore's, or the
// first that killCursors kills.
func commandCursorID(name string, cmd bson.Raw) int64 {
	switch name {
	case "getMore":
		el, err := cmd.Index(0)
		if err != nil {
			return 0
		}
		id, _ := el.Value().AsInt64OK()
		return id
	case "killCursors":
		arr, ok := cmd.Lookup("cursors").ArrayOK()
		if !ok {
			return 0
		}
		v, err := arr.Index(0)
		if err != nil {
			return 0
		}
		id, _ := v.Value().AsInt64OK()
		return id
	}
	return 0
}

// lsidText returns the session id of a command's lsid (its id) as text:
// a UUID's canonical form, or the bytes in hex for any other binary.
func lsidText(lsid bson.RawValue) (string, bool) {
	if lsid.Type != bson.TypeEmbeddedDocument && lsid.Type != bson.TypeArray {
		return "", false
	}
	v, err := bson.Raw(lsid.Value).LookupErr("id")
	if err != nil {
		return "", false
	}
	bin, ok := v.BinaryOK()
	if !ok {
		return "", false
	}
	sub, data := bin.Subtype, bin.Data
	const hexd = "0123456789abcdef"
	if sub == 4 && len(data) == 16 {
		b := make([]byte, 0, 36)
		for i, c := range data {
			if i == 4 || i == 6 || i == 8 || i == 10 {
				b = append(b, '-')
			}
			b = append(b, hexd[c>>4], hexd[c&0xf])
		}
		return string(b), true
	}
	b := make([]byte, 0, 2*len(data))
	for _, c := range data {
		b = append(b, hexd[c>>4], hexd[c&0xf])
	}
	return string(b), true
}

// The fields db.query.text leaves out, as the specification lists them.
var queryTextOmitted = map[string]bool{"lsid": true, "$db": true, "$clusterTime": true, "signature": true}

// queryText writes cmd as relaxed Extended JSON without the fields the
// specification leaves out, cut to max bytes (on a character boundary,
// with "..." after a cut, as the logging specification does).
func queryText(cmd bson.Raw, max int) string {
	doc := make([]byte, 0, len(cmd))
	st, doc := bson.AppendDocumentStart(doc)
	it := cmd.Iter()
	for it.Next() {
		if queryTextOmitted[string(it.KeyBytes())] {
			continue
		}
		doc = append(doc, it.Element()...)
	}
	doc, err := bson.AppendDocumentEnd(doc, st)
	if err != nil {
		return ""
	}
	// Extended JSON is most often under twice the BSON's size: one buffer
	// then holds it without growing.
	js, err := bson.AppendExtJSON(make([]byte, 0, 2*len(doc)+16), doc, false)
	if err != nil {
		return ""
	}
	if len(js) <= max {
		return string(js)
	}
	cut := max
	for cut > 0 && !utf8Start(js[cut]) {
		cut--
	}
	return string(append(js[:cut], "..."...))
}

func utf8Start(b byte) bool { return b&0xc0 != 0x80 }
