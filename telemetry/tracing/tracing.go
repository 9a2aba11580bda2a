package tracing

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
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

// The context keys hold the Tracer, so that two Tracers on one client
// keep their spans apart.
type opKey struct{ t *Tracer }
type cmdKey struct{ t *Tracer }

// opState is an operation's span and what its events need, kept in the
// context OperationStarted returns.
type opState struct {
	span trace.Span

	mu             sync.Mutex
	selectionStart time.Time
}

// cmdState is a command's span, kept in the context CommandStarted
// returns.
type cmdState struct {
	span trace.Span
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

// callerSpan returns the span current where the operation e was called.
func callerSpan(ctx context.Context, e *event.OperationStarted) trace.Span {
	if c, ok := ctx.Value(callerKey{}).(*caller); ok && c.ev == e {
		return c.span
	}
	return trace.SpanFromContext(ctx)
}

// parent returns the context an operation's span starts in, and the links
// it carries. This is the one place that decides a parent:
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
func (t *Tracer) parent(ctx context.Context, e *event.OperationStarted) (context.Context, []trace.Link) {
	caller := callerSpan(ctx, e)
	if e.Origin != nil {
		if o, _ := e.Origin.Value(opKey{t}).(*opState); o != nil {
			var links []trace.Link
			if sc := caller.SpanContext(); sc.IsValid() {
				links = []trace.Link{{SpanContext: sc}}
			}
			return trace.ContextWithSpan(ctx, o.span), links
		}
	}
	if o, _ := ctx.Value(opKey{t}).(*opState); o != nil {
		return trace.ContextWithSpan(ctx, o.span), nil
	}
	return trace.ContextWithSpan(ctx, caller), nil
}

// OperationStarted starts the operation's span, named "<op> <db>.<coll>"
// or "<op> <db>".
func (t *Tracer) OperationStarted(ctx context.Context, e *event.OperationStarted) context.Context {
	if t == nil || !t.enabled || e == nil {
		return ctx
	}
	name := specOperationName(e)
	coll := e.Collection
	if e.Generic {
		coll = ""
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
	pctx, links := t.parent(ctx, e)
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...)}
	if len(links) > 0 {
		opts = append(opts, trace.WithLinks(links...))
	}
	_, span := t.tracer.Start(pctx, summary, opts...)
	if c, ok := ctx.Value(callerKey{}).(*caller); !ok || c.ev != e {
		ctx = context.WithValue(ctx, callerKey{}, &caller{ev: e, span: trace.SpanFromContext(ctx)})
	}
	// The operation's span is current in what the driver carries on, for
	// the application's code the driver may call (none yet) and for other
	// monitors; this Tracer finds it by its own key.
	return context.WithValue(trace.ContextWithSpan(ctx, span), opKey{t}, &opState{span: span})
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
	attrs := []attribute.KeyValue{
		attribute.Float64(AttrSelectionDuration, e.Selection.Seconds()),
		attribute.Float64(AttrCheckoutDuration, e.CheckOut.Seconds()),
		attribute.Int64(AttrAttempts, int64(e.Attempts)),
	}
	if e.Timeout > 0 {
		attrs = append(attrs, attribute.Float64(AttrTimeout, e.Timeout.Seconds()))
	}
	o.span.SetAttributes(attrs...)
	if e.Err != nil {
		o.span.RecordError(e.Err, trace.WithStackTrace(true))
		o.span.SetStatus(codes.Error, e.Err.Error())
	}
	o.span.End()
}

// SelectionEvent adds the "server selected" (or "server selection
// failed") event to the operation's span.
func (t *Tracer) SelectionEvent(ctx context.Context, e event.SelectionEvent) {
	if t == nil || !t.enabled || e == nil {
		return
	}
	o, _ := ctx.Value(opKey{t}).(*opState)
	if o == nil {
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
		attrs := []attribute.KeyValue{attribute.String(attrServerAddress, e.ServerHost)}
		if e.ServerPort != 0 {
			attrs = append(attrs, attribute.Int64(attrServerPort, int64(e.ServerPort)))
		}
		if w, ok := o.selectionWait(); ok {
			attrs = append(attrs, attribute.Float64(AttrWait, w.Seconds()))
		}
		o.span.AddEvent(EventServerSelected, trace.WithAttributes(attrs...))
	case *event.ServerSelectionFailed:
		var attrs []attribute.KeyValue
		if w, ok := o.selectionWait(); ok {
			attrs = append(attrs, attribute.Float64(AttrWait, w.Seconds()))
		}
		o.span.AddEvent(EventSelectionFailed, trace.WithAttributes(attrs...))
	}
}

func (o *opState) selectionWait() (time.Duration, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
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
		if o == nil || e == nil {
			return
		}
		o.span.AddEvent(EventCheckedOut, trace.WithAttributes(serverAttrs(e.Address,
			attribute.Int64(attrDriverConnID, e.ConnectionID),
			attribute.Float64(AttrWait, e.Duration.Seconds()))...))
	case *event.ConnectionCheckOutFailed:
		o, _ := ctx.Value(opKey{t}).(*opState)
		if o == nil || e == nil {
			return
		}
		o.span.AddEvent(EventCheckOutFailed, trace.WithAttributes(serverAttrs(e.Address,
			attribute.String(AttrCheckOutFailReason, string(e.Reason)),
			attribute.Float64(AttrWait, e.Duration.Seconds()))...))
	}
}

// serverAttrs returns server.address and, but for a Unix socket,
// server.port, as the "server selected" event and command spans have them,
// followed by more.
func serverAttrs(address string, more ...attribute.KeyValue) []attribute.KeyValue {
	host, port := event.SplitAddress(address)
	attrs := make([]attribute.KeyValue, 0, 2+len(more))
	attrs = append(attrs, attribute.String(attrServerAddress, host))
	if port != 0 {
		attrs = append(attrs, attribute.Int64(attrServerPort, int64(port)))
	}
	return append(attrs, more...)
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
	cmd := e.Command
	coll := commandCollection(e.CommandName, cmd)
	summary := e.CommandName + " " + e.DatabaseName
	if coll != "" {
		summary += "." + coll
	}
	attrs := make([]attribute.KeyValue, 0, 16)
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
	attrs = append(attrs, attribute.Int64(attrDriverConnID, e.ConnectionID))
	if e.ServerConnectionID != nil {
		attrs = append(attrs, attribute.Int64(attrServerConnID, *e.ServerConnectionID))
	}
	if id := commandCursorID(e.CommandName, cmd); id != 0 {
		attrs = append(attrs, attribute.Int64(attrCursorID, id))
	}
	if lsid, ok := lsidText(cmd); ok {
		attrs = append(attrs, attribute.String(attrLsid, lsid))
	}
	if n, ok := cmd.Lookup("txnNumber").AsInt64OK(); ok {
		attrs = append(attrs, attribute.Int64(attrTxnNumber, n))
	}
	if t.queryMax > 0 {
		attrs = append(attrs, attribute.String(attrQueryText, queryText(cmd, t.queryMax)))
	}
	pctx := ctx
	if o, _ := ctx.Value(opKey{t}).(*opState); o != nil {
		// Under this Tracer's operation span, whatever span another
		// monitor made current since.
		pctx = trace.ContextWithSpan(ctx, o.span)
	}
	_, span := t.tracer.Start(pctx, e.CommandName, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	// The command's span is current in what the driver carries on, so
	// that the log sink's command messages name it (span_id).
	return context.WithValue(trace.ContextWithSpan(ctx, span), cmdKey{t}, &cmdState{span: span})
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
	if !e.Redacted {
		if id, ok := e.Reply.Lookup("cursor", "id").AsInt64OK(); ok && id != 0 {
			c.span.SetAttributes(attribute.Int64(attrCursorID, id))
		}
	}
	c.span.End()
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
	if code, ok := e.Reply.Lookup("code").AsInt64OK(); ok {
		c.span.SetAttributes(attribute.String(attrStatusCode, strconv.FormatInt(code, 10)))
	}
	if e.Failure != nil {
		c.span.RecordError(e.Failure, trace.WithStackTrace(true))
		c.span.SetStatus(codes.Error, e.Failure.Error())
	} else {
		c.span.SetStatus(codes.Error, "command failed")
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

// lsidText returns the session id of a command's lsid as text: a UUID's
// canonical form, or the bytes in hex for any other binary.
func lsidText(cmd bson.Raw) (string, bool) {
	v, err := cmd.LookupErr("lsid", "id")
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
		if queryTextOmitted[it.Key()] {
			continue
		}
		doc = bson.AppendValueElement(doc, it.Key(), it.Value())
	}
	doc, err := bson.AppendDocumentEnd(doc, st)
	if err != nil {
		return ""
	}
	js, err := bson.AppendExtJSON(nil, doc, false)
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
	return string(js[:cut]) + "..."
}

func utf8Start(b byte) bool { return b&0xc0 != 0x80 }
