package logging

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"go.opentelemetry.io/otel/trace"
)

// A Sink writes the specification's log messages for the events it
// receives. Build one with New; it is safe for concurrent use.
type Sink struct {
	handler slog.Handler
	min     [numComponents]slog.Level
	maxDoc  int
	closer  io.Closer
}

var (
	_ event.CommandMonitor   = (*Sink)(nil)
	_ event.PoolMonitor      = (*Sink)(nil)
	_ event.TopologyMonitor  = (*Sink)(nil)
	_ event.SelectionMonitor = (*Sink)(nil)
)

// EventFamilies implements event.FamilyFilter: the Sink takes the events
// of a family only when some message it makes of them passes its levels
// (command events: the command component's debug messages; pool events:
// the connection component's debug messages; topology events: the
// topology component's debug messages or the failover component's info
// "Primary changed"; selection events: the serverSelection component's
// debug messages, or its info "Waiting for suitable server to become
// available"). So a component turned off, or a sink at info (where only
// the waiting and failover messages exist), costs the driver nothing for
// the events it would ignore: not even building them.
func (s *Sink) EventFamilies() event.Family {
	var f event.Family
	on := func(c int, l slog.Level) bool { return l >= s.min[c] && l < slogOff }
	if on(compCommand, debug) {
		f |= event.FamilyCommand
	}
	if on(compConnection, debug) {
		f |= event.FamilyPool
	}
	if on(compTopology, debug) || on(compFailover, info) {
		f |= event.FamilyTopology
	}
	if on(compSelection, info) {
		f |= event.FamilySelection
	}
	return f
}

// Close closes the file MONGODB_LOG_PATH named, if the Sink opened one.
// Call it once the client that sends events here is disconnected: a
// message logged after Close is lost.
func (s *Sink) Close() error {
	if s.closer == nil {
		return nil
	}
	err := s.closer.Close()
	s.closer = nil
	return err
}

// Enabled reports whether messages of component c at level l are emitted.
func (s *Sink) Enabled(ctx context.Context, c Component, l Level) bool {
	i := componentIndex(c)
	return i >= 0 && s.enabled(ctx, i, l.SlogLevel())
}

func (s *Sink) enabled(ctx context.Context, comp int, l slog.Level) bool {
	return l >= s.min[comp] && l < slogOff && s.handler.Enabled(ctx, l)
}

var (
	debug = LevelDebug.SlogLevel()
	info  = LevelInformational.SlogLevel()
)

// record starts a message; emit finishes it.
func (s *Sink) record(comp int, l slog.Level, msg string) slog.Record {
	r := slog.NewRecord(time.Now(), l, msg, 0)
	r.AddAttrs(slog.String("component", string(components[comp].c)))
	return r
}

func (s *Sink) emit(ctx context.Context, r slog.Record) {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	// A handler's write error has nowhere to go: logging must never fail
	// the operation it describes.
	_ = s.handler.Handle(ctx, r)
}

func addServer(r *slog.Record, host string, port int) {
	r.AddAttrs(slog.String("serverHost", host))
	if port != 0 { // a Unix socket has no port, and the field is omitted
		r.AddAttrs(slog.Int("serverPort", port))
	}
}

func addAddress(r *slog.Record, address string) {
	host, port := event.SplitAddress(address)
	addServer(r, host, port)
}

func durationMS(d time.Duration) slog.Attr {
	return slog.Float64("durationMS", float64(d)/float64(time.Millisecond))
}

// document renders doc as relaxed Extended JSON cut to the maximum length.
func (s *Sink) document(doc bson.Raw) string {
	if len(doc) == 0 {
		return "{}"
	}
	b, err := bson.AppendExtJSON(nil, doc, false)
	if err != nil {
		// The bytes are not shown: a malformed document may hold anything.
		return "<malformed BSON document>"
	}
	return truncate(string(b), s.maxDoc)
}

// truncate cuts s to at most max bytes, backing up to a UTF-8 boundary so
// the result stays valid, and marks the cut with "..." (not counted).
func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

func (s *Sink) errorText(err error) string {
	if err == nil {
		return ""
	}
	return truncate(err.Error(), s.maxDoc)
}

// redacted tells whether a command event's payload must be logged as
// redacted: the producer set Redacted (conn's MonitoredCommand applies the
// specification's rules, speculativeAuthenticate included), or, for an
// event built by hand without the flag, the command's name alone makes it
// sensitive (saslStart, createUser...). doc is the event's command or reply.
func redacted(f *event.CommandFields, doc bson.Raw) bool {
	return f.Redacted || event.IsSensitiveCommand(f.CommandName, doc)
}

func (s *Sink) addCommandFields(r *slog.Record, f *event.CommandFields) {
	r.AddAttrs(
		slog.String("commandName", f.CommandName),
		slog.String("databaseName", f.DatabaseName),
		slog.Int64("requestId", int64(f.RequestID)),
	)
	if f.OperationID != 0 {
		r.AddAttrs(slog.Int64("operationId", f.OperationID))
	}
	r.AddAttrs(slog.Int64("driverConnectionId", f.ConnectionID))
	addServer(r, f.ServerHost, f.ServerPort)
	if f.ServerConnectionID != nil {
		r.AddAttrs(slog.Int64("serverConnectionId", *f.ServerConnectionID))
	}
	if f.ServiceID != nil {
		r.AddAttrs(slog.String("serviceId", f.ServiceID.Hex()))
	}
}

// CommandStarted logs "Command started". It implements event.CommandMonitor.
func (s *Sink) CommandStarted(ctx context.Context, e *event.CommandStarted) context.Context {
	if !s.enabled(ctx, compCommand, debug) {
		return ctx
	}
	r := s.record(compCommand, debug, "Command started")
	s.addCommandFields(&r, &e.CommandFields)
	cmd := "{}"
	if !redacted(&e.CommandFields, e.Command) {
		cmd = s.document(e.Command)
	}
	r.AddAttrs(slog.String("command", cmd))
	s.emit(ctx, r)
	return ctx
}

// CommandSucceeded logs "Command succeeded". It implements
// event.CommandMonitor.
func (s *Sink) CommandSucceeded(ctx context.Context, e *event.CommandSucceeded) {
	if !s.enabled(ctx, compCommand, debug) {
		return
	}
	r := s.record(compCommand, debug, "Command succeeded")
	s.addCommandFields(&r, &e.CommandFields)
	reply := "{}"
	if !redacted(&e.CommandFields, e.Reply) {
		reply = s.document(e.Reply)
	}
	r.AddAttrs(durationMS(e.Duration), slog.String("reply", reply))
	s.emit(ctx, r)
}

// CommandFailed logs "Command failed". It implements event.CommandMonitor.
func (s *Sink) CommandFailed(ctx context.Context, e *event.CommandFailed) {
	if !s.enabled(ctx, compCommand, debug) {
		return
	}
	r := s.record(compCommand, debug, "Command failed")
	s.addCommandFields(&r, &e.CommandFields)
	// The server's refusal of a sensitive command is logged empty (even
	// its code, as the specification's log tests expect); a network error
	// or timeout, which has no reply, holds nothing of the command and is
	// logged as it is, as the specification requires.
	failure := ""
	if e.Reply == nil || !redacted(&e.CommandFields, e.Reply) {
		failure = s.errorText(e.Failure)
	}
	r.AddAttrs(durationMS(e.Duration), slog.String("failure", failure))
	s.emit(ctx, r)
}

// Connection closed and checkout failed reasons, as the CMAP specification
// spells them.
var (
	closeReasons = map[event.CloseReason]string{
		event.ReasonStale:      "Connection became stale because the pool was cleared",
		event.ReasonIdle:       "Connection has been available but unused for longer than the configured max idle time",
		event.ReasonError:      "An error occurred while using the connection",
		event.ReasonPoolClosed: "Connection pool was closed",
	}
	checkOutReasons = map[event.CheckOutFailReason]string{
		event.ReasonCheckOutTimeout:         "Wait queue timeout elapsed without a connection becoming available",
		event.ReasonCheckOutConnectionError: "An error occurred while trying to establish a new connection",
		event.ReasonCheckOutPoolClosed:      "Connection pool was closed",
	}
)

func reasonText[K ~string](m map[K]string, k K) string {
	if t, ok := m[k]; ok {
		return t
	}
	return string(k)
}

// PoolEvent logs the CMAP messages. It implements event.PoolMonitor.
func (s *Sink) PoolEvent(ctx context.Context, ev event.PoolEvent) {
	if !s.enabled(ctx, compConnection, debug) {
		return
	}
	var r slog.Record
	start := func(msg string) {
		r = s.record(compConnection, debug, msg)
		addAddress(&r, ev.PoolAddress())
	}
	switch e := ev.(type) {
	case *event.PoolCreated:
		start("Connection pool created")
		o := e.Options
		r.AddAttrs(
			slog.Int64("maxIdleTimeMS", o.MaxIdleTime.Milliseconds()),
			slog.Int("minPoolSize", o.MinPoolSize),
			slog.Int("maxPoolSize", o.MaxPoolSize),
			slog.Int("maxConnecting", o.MaxConnecting),
			slog.Int64("waitQueueTimeoutMS", o.WaitQueueTimeout.Milliseconds()),
		)
	case *event.PoolReady:
		start("Connection pool ready")
	case *event.PoolCleared:
		start("Connection pool cleared")
		if e.ServiceID != nil {
			r.AddAttrs(slog.String("serviceId", e.ServiceID.Hex()))
		}
	case *event.PoolClosed:
		start("Connection pool closed")
	case *event.ConnectionCreated:
		start("Connection created")
		r.AddAttrs(slog.Int64("driverConnectionId", e.ConnectionID))
	case *event.ConnectionReady:
		start("Connection ready")
		r.AddAttrs(slog.Int64("driverConnectionId", e.ConnectionID), durationMS(e.Duration))
	case *event.ConnectionClosed:
		start("Connection closed")
		r.AddAttrs(slog.Int64("driverConnectionId", e.ConnectionID), slog.String("reason", reasonText(closeReasons, e.Reason)))
		if e.Reason == event.ReasonError && e.Err != nil {
			r.AddAttrs(slog.String("error", s.errorText(e.Err)))
		}
	case *event.ConnectionCheckOutStarted:
		start("Connection checkout started")
	case *event.ConnectionCheckOutFailed:
		start("Connection checkout failed")
		r.AddAttrs(slog.String("reason", reasonText(checkOutReasons, e.Reason)))
		if e.Reason == event.ReasonCheckOutConnectionError && e.Err != nil {
			r.AddAttrs(slog.String("error", s.errorText(e.Err)))
		}
		r.AddAttrs(durationMS(e.Duration))
	case *event.ConnectionCheckedOut:
		start("Connection checked out")
		r.AddAttrs(slog.Int64("driverConnectionId", e.ConnectionID), durationMS(e.Duration))
	case *event.ConnectionCheckedIn:
		start("Connection checked in")
		r.AddAttrs(slog.Int64("driverConnectionId", e.ConnectionID))
	default:
		return
	}
	s.emit(ctx, r)
}

// TopologyEvent logs the SDAM messages. ServerDescriptionChanged has none:
// the specification leaves it out as redundant with "Topology description
// changed". A TopologyDescriptionChanged that changes the primary also
// logs "Primary changed" at informational level in the failover component
// (see primaryChanged). It
// implements event.TopologyMonitor.
func (s *Sink) TopologyEvent(ctx context.Context, ev event.TopologyEvent) {
	if e, ok := ev.(*event.TopologyDescriptionChanged); ok {
		s.primaryChanged(ctx, e)
	}
	if _, ok := ev.(*event.ServerDescriptionChanged); ok || !s.enabled(ctx, compTopology, debug) {
		return
	}
	var r slog.Record
	start := func(msg string) {
		r = s.record(compTopology, debug, msg)
		r.AddAttrs(slog.String("topologyId", ev.Topology().Hex()))
	}
	heartbeat := func(msg string, f *event.HeartbeatFields) {
		start(msg)
		addServer(&r, f.ServerHost, f.ServerPort)
		r.AddAttrs(slog.Int64("driverConnectionId", f.DriverConnectionID))
		if f.ServerConnectionID != nil {
			r.AddAttrs(slog.Int64("serverConnectionId", *f.ServerConnectionID))
		}
		r.AddAttrs(slog.Bool("awaited", f.Awaited))
	}
	switch e := ev.(type) {
	case *event.TopologyOpening:
		start("Starting topology monitoring")
	case *event.TopologyClosed:
		start("Stopped topology monitoring")
	case *event.ServerOpening:
		start("Starting server monitoring")
		addAddress(&r, e.Address)
	case *event.ServerClosed:
		start("Stopped server monitoring")
		addAddress(&r, e.Address)
	case *event.TopologyDescriptionChanged:
		start("Topology description changed")
		r.AddAttrs(slog.String("previousDescription", e.Previous.String()), slog.String("newDescription", e.New.String()))
	case *event.ServerHeartbeatStarted:
		heartbeat("Server heartbeat started", &e.HeartbeatFields)
	case *event.ServerHeartbeatSucceeded:
		heartbeat("Server heartbeat succeeded", &e.HeartbeatFields)
		reply := "{}"
		if !event.IsSensitiveCommand("hello", e.Reply) {
			reply = s.document(e.Reply)
		}
		r.AddAttrs(durationMS(e.Duration), slog.String("reply", reply))
	case *event.ServerHeartbeatFailed:
		heartbeat("Server heartbeat failed", &e.HeartbeatFields)
		r.AddAttrs(durationMS(e.Duration), slog.String("failure", s.errorText(e.Failure)))
	default:
		return
	}
	s.emit(ctx, r)
}

// primaryChanged logs "Primary changed" at informational level when e
// changes the primary: its address, or its electionId when the same
// server was elected again. The message carries previousPrimary and
// newPrimary ("none" when there is none) and the reason, as far as the
// descriptions tell it: the old primary stepped down (it is now a
// secondary or another member type), was replaced by a newer primary
// (which marked it stale), is unreachable (a network error), was marked
// Unknown by another error, or left the topology; a new primary comes
// with its electionId. Closing the client changes the primary too, but is
// not logged: "Stopped topology monitoring" says it.
func (s *Sink) primaryChanged(ctx context.Context, e *event.TopologyDescriptionChanged) {
	if !s.enabled(ctx, compFailover, info) || (e.New.Kind == "Unknown" && len(e.New.Servers) == 0) {
		return
	}
	old, hadOld := e.Previous.Primary()
	cur, hasNew := e.New.Primary()
	switch {
	case !hadOld && !hasNew:
		return
	case hadOld && hasNew && old.Address == cur.Address && sameID(old.ElectionID, cur.ElectionID):
		return
	}
	var reason []string
	if hadOld && (!hasNew || old.Address != cur.Address) {
		reason = append(reason, old.Address+" "+s.leftPrimary(old.Address, e.New, hasNew))
	}
	if hasNew {
		switch {
		case e.Previous.MaxElectionID == nil && !hadOld:
			reason = append(reason, "discovered")
		case hadOld && old.Address == cur.Address:
			reason = append(reason, "elected again")
		default:
			reason = append(reason, "elected")
		}
		if cur.ElectionID != nil {
			reason[len(reason)-1] += ", electionId " + cur.ElectionID.Hex()
		}
		if cur.SetVersion != nil {
			reason[len(reason)-1] += ", setVersion " + strconv.FormatInt(*cur.SetVersion, 10)
		}
	}
	r := s.record(compFailover, info, "Primary changed")
	r.AddAttrs(slog.String("topologyId", e.TopologyID.Hex()),
		slog.String("previousPrimary", addressOrNone(old.Address, hadOld)),
		slog.String("newPrimary", addressOrNone(cur.Address, hasNew)),
		slog.String("reason", strings.Join(reason, "; ")))
	s.emit(ctx, r)
}

// leftPrimary says why the primary at addr no longer is one in t. Error
// texts are cut to the maximum document length, as failures are.
func (s *Sink) leftPrimary(addr string, t event.TopologyDescription, newPrimary bool) string {
	var now event.ServerDescription
	found := false
	for _, sd := range t.Servers {
		if sd.Address == addr {
			now, found = sd, true
			break
		}
	}
	switch {
	case !found:
		return "left the topology"
	case now.Kind == "Unknown" && newPrimary:
		// One server's description is applied at a time: a new primary
		// appearing together with the old one turning Unknown marked it
		// stale.
		return "replaced by a newer primary"
	case now.Kind == "Unknown" && isNetworkError(now.Error):
		return "unreachable: " + s.errorText(now.Error)
	case now.Kind == "Unknown" && now.Error != nil:
		return "marked Unknown: " + s.errorText(now.Error)
	case now.Kind == "Unknown":
		return "marked Unknown"
	case now.Kind == "RSSecondary" || now.Kind == "RSOther" || now.Kind == "RSArbiter" || now.Kind == "RSGhost":
		return "stepped down (now " + now.Kind + ")"
	}
	return "is now " + now.Kind
}

// isNetworkError reports an error that says whether it is a timeout, as
// the driver's network errors (and the net package's) do.
func isNetworkError(err error) bool {
	var ne interface{ Timeout() bool }
	return errors.As(err, &ne)
}

func addressOrNone(addr string, ok bool) string {
	if !ok {
		return "none"
	}
	return addr
}

func sameID(a, b *bson.ObjectID) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// SelectionEvent logs the server selection messages. It implements
// event.SelectionMonitor.
func (s *Sink) SelectionEvent(ctx context.Context, ev event.SelectionEvent) {
	l := debug
	if _, ok := ev.(*event.ServerSelectionWaiting); ok {
		l = info
	}
	if !s.enabled(ctx, compSelection, l) {
		return
	}
	var r slog.Record
	f := ev.Selection()
	start := func(msg string) {
		r = s.record(compSelection, l, msg)
		r.AddAttrs(slog.String("selector", f.Selector))
		if f.OperationID != 0 {
			r.AddAttrs(slog.Int64("operationId", f.OperationID))
		}
		r.AddAttrs(slog.String("operation", f.Operation), slog.String("topologyDescription", f.Topology.String()))
	}
	switch e := ev.(type) {
	case *event.ServerSelectionStarted:
		start("Server selection started")
	case *event.ServerSelectionSucceeded:
		start("Server selection succeeded")
		addServer(&r, e.ServerHost, e.ServerPort)
	case *event.ServerSelectionFailed:
		start("Server selection failed")
		r.AddAttrs(slog.String("failure", s.errorText(e.Failure)))
	case *event.ServerSelectionWaiting:
		start("Waiting for suitable server to become available")
		r.AddAttrs(slog.Int64("remainingTimeMS", e.RemainingTime.Milliseconds()))
	default:
		return
	}
	s.emit(ctx, r)
}
