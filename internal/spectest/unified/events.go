package unified

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
)

// recEvent is one event a client published, in the format's terms: its
// family ("command", "cmap" or "sdam"), its name (commandStartedEvent...)
// and the fields expectations may assert on, as a document.
type recEvent struct {
	kind string
	name string
	doc  bson.Raw
}

func (e recEvent) String() string { return e.name + " " + e.doc.String() }

// eventFields are the fields an expected event may assert on, by event.
var eventFields = map[string][]string{
	"commandStartedEvent":             {"command", "commandName", "databaseName", "hasServiceId", "hasServerConnectionId"},
	"commandSucceededEvent":           {"reply", "commandName", "databaseName", "hasServiceId", "hasServerConnectionId"},
	"commandFailedEvent":              {"commandName", "databaseName", "hasServiceId", "hasServerConnectionId"},
	"poolCreatedEvent":                nil,
	"poolReadyEvent":                  nil,
	"poolClearedEvent":                {"hasServiceId", "interruptInUseConnections"},
	"poolClosedEvent":                 nil,
	"connectionCreatedEvent":          nil,
	"connectionReadyEvent":            nil,
	"connectionClosedEvent":           {"reason"},
	"connectionCheckOutStartedEvent":  nil,
	"connectionCheckOutFailedEvent":   {"reason"},
	"connectionCheckedOutEvent":       nil,
	"connectionCheckedInEvent":        nil,
	"serverDescriptionChangedEvent":   {"previousDescription", "newDescription"},
	"serverHeartbeatStartedEvent":     {"awaited"},
	"serverHeartbeatSucceededEvent":   {"awaited"},
	"serverHeartbeatFailedEvent":      {"awaited"},
	"topologyDescriptionChangedEvent": {"previousDescription", "newDescription"},
	"topologyOpeningEvent":            nil,
	"topologyClosedEvent":             nil,
}

// eventKind is the expectEvents eventType an event name belongs to.
func eventKind(name string) string {
	switch {
	case strings.HasPrefix(name, "command"):
		return "command"
	case strings.HasPrefix(name, "pool"), strings.HasPrefix(name, "connection"):
		return "cmap"
	}
	return "sdam"
}

// recorder is a client entity's monitor: it keeps the events of the
// types the entity observes, and counts checked-out connections always.
type recorder struct {
	observe    map[string]bool
	ignoreCmds map[string]bool
	sensitive  bool
	stores     []*eventListEntity

	mu         sync.Mutex
	events     []recEvent
	started    []bson.Raw // the observed commands, for the lsid assertions
	checkedOut int
}

func newRecorder(def bson.Raw) (*recorder, error) {
	r := &recorder{observe: map[string]bool{}, ignoreCmds: map[string]bool{"configureFailPoint": true}}
	names, err := stringList(def.Lookup("observeEvents"))
	if err != nil {
		return nil, fmt.Errorf("observeEvents: %w", err)
	}
	for _, n := range names {
		if _, ok := eventFields[n]; !ok {
			return nil, fmt.Errorf("observeEvents: unknown event %q", n)
		}
		r.observe[n] = true
	}
	ign, err := stringList(def.Lookup("ignoreCommandMonitoringEvents"))
	if err != nil {
		return nil, fmt.Errorf("ignoreCommandMonitoringEvents: %w", err)
	}
	for _, n := range ign {
		r.ignoreCmds[n] = true
	}
	r.sensitive, _ = def.Lookup("observeSensitiveCommands").BooleanOK()
	if arr, ok := def.Lookup("storeEventsAsEntities").ArrayOK(); ok {
		vals, err := arr.Values()
		if err != nil {
			return nil, err
		}
		for _, v := range vals {
			d, _ := v.DocumentOK()
			if err := checkKeys(d, "id", "events"); err != nil {
				return nil, fmt.Errorf("storeEventsAsEntities: %w", err)
			}
			evs, err := stringList(d.Lookup("events"))
			if err != nil {
				return nil, fmt.Errorf("storeEventsAsEntities: %w", err)
			}
			st := &eventListEntity{id: d.Lookup("id").StringValue(), names: map[string]bool{}}
			for _, n := range evs {
				st.names[n] = true
			}
			r.stores = append(r.stores, st)
		}
	}
	return r, nil
}

// stringList reads an optional array of strings.
func stringList(v bson.RawValue) ([]string, error) {
	if v.IsZero() {
		return nil, nil
	}
	arr, ok := v.ArrayOK()
	if !ok {
		return nil, errors.New("not an array")
	}
	vals, err := arr.Values()
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(vals))
	for _, x := range vals {
		s, ok := x.StringValueOK()
		if !ok {
			return nil, fmt.Errorf("%s is not a string", show(x))
		}
		out = append(out, s)
	}
	return out, nil
}

func (r *recorder) add(name string, d bson.D, started bson.Raw) {
	for _, st := range r.stores {
		if st.names[name] {
			st.add(name, d)
		}
	}
	if !r.observe[name] {
		return
	}
	b, err := bson.Marshal(d)
	if err != nil {
		b, _ = bson.Marshal(bson.D{{Key: "marshalError", Value: err.Error()}})
	}
	r.mu.Lock()
	r.events = append(r.events, recEvent{kind: eventKind(name), name: name, doc: b})
	if started != nil {
		r.started = append(r.started, started)
	}
	r.mu.Unlock()
}

func (r *recorder) snapshot() []recEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recEvent(nil), r.events...)
}

func (r *recorder) reset() {
	r.mu.Lock()
	r.events = nil
	r.started = nil
	r.mu.Unlock()
}

func (r *recorder) checkedOutNow() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.checkedOut
}

func (r *recorder) lastStarted(n int) []bson.Raw {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.started) < n {
		return append([]bson.Raw(nil), r.started...)
	}
	return append([]bson.Raw(nil), r.started[len(r.started)-n:]...)
}

// keepCommand applies the rules for ignored command events.
func (r *recorder) keepCommand(f *event.CommandFields) bool {
	return !r.ignoreCmds[f.CommandName] && (!f.Redacted || r.sensitive)
}

func commandDoc(f *event.CommandFields) bson.D {
	return bson.D{
		{Key: "commandName", Value: f.CommandName},
		{Key: "databaseName", Value: f.DatabaseName},
		{Key: "hasServiceId", Value: f.ServiceID != nil && !f.ServiceID.IsZero()},
		{Key: "hasServerConnectionId", Value: f.ServerConnectionID != nil && *f.ServerConnectionID > 0},
		{Key: "requestId", Value: f.RequestID},
		{Key: "operationId", Value: f.OperationID},
		{Key: "connectionId", Value: f.ConnectionID},
		{Key: "serverHost", Value: f.ServerHost},
		{Key: "serverPort", Value: f.ServerPort},
	}
}

func docOrEmpty(d bson.Raw) bson.Raw {
	if len(d) == 0 {
		return bson.Raw{5, 0, 0, 0, 0}
	}
	return d
}

// CommandStarted implements event.CommandMonitor.
func (r *recorder) CommandStarted(ctx context.Context, e *event.CommandStarted) context.Context {
	if r.keepCommand(&e.CommandFields) {
		cmd := docOrEmpty(e.Command)
		r.add("commandStartedEvent", append(commandDoc(&e.CommandFields), bson.E{Key: "command", Value: cmd}), cmd)
	}
	return ctx
}

// CommandSucceeded implements event.CommandMonitor.
func (r *recorder) CommandSucceeded(_ context.Context, e *event.CommandSucceeded) {
	if r.keepCommand(&e.CommandFields) {
		r.add("commandSucceededEvent", append(commandDoc(&e.CommandFields),
			bson.E{Key: "reply", Value: docOrEmpty(e.Reply)}, bson.E{Key: "duration", Value: e.Duration.Seconds()}), nil)
	}
}

// CommandFailed implements event.CommandMonitor.
func (r *recorder) CommandFailed(_ context.Context, e *event.CommandFailed) {
	if r.keepCommand(&e.CommandFields) {
		failure := ""
		if e.Failure != nil {
			failure = e.Failure.Error()
		}
		r.add("commandFailedEvent", append(commandDoc(&e.CommandFields),
			bson.E{Key: "failure", Value: failure}, bson.E{Key: "duration", Value: e.Duration.Seconds()}), nil)
	}
}

// PoolEvent implements event.PoolMonitor.
func (r *recorder) PoolEvent(_ context.Context, e event.PoolEvent) {
	d := bson.D{{Key: "address", Value: e.PoolAddress()}}
	var name string
	switch e := e.(type) {
	case *event.PoolCreated:
		name = "poolCreatedEvent"
	case *event.PoolReady:
		name = "poolReadyEvent"
	case *event.PoolCleared:
		name = "poolClearedEvent"
		d = append(d, bson.E{Key: "hasServiceId", Value: e.ServiceID != nil && !e.ServiceID.IsZero()},
			bson.E{Key: "interruptInUseConnections", Value: e.InterruptInUseConnections})
	case *event.PoolClosed:
		name = "poolClosedEvent"
	case *event.ConnectionCreated:
		name = "connectionCreatedEvent"
		d = append(d, bson.E{Key: "connectionId", Value: e.ConnectionID})
	case *event.ConnectionReady:
		name = "connectionReadyEvent"
		d = append(d, bson.E{Key: "connectionId", Value: e.ConnectionID})
	case *event.ConnectionClosed:
		name = "connectionClosedEvent"
		d = append(d, bson.E{Key: "connectionId", Value: e.ConnectionID}, bson.E{Key: "reason", Value: string(e.Reason)})
	case *event.ConnectionCheckOutStarted:
		name = "connectionCheckOutStartedEvent"
	case *event.ConnectionCheckOutFailed:
		name = "connectionCheckOutFailedEvent"
		d = append(d, bson.E{Key: "reason", Value: string(e.Reason)})
	case *event.ConnectionCheckedOut:
		name = "connectionCheckedOutEvent"
		d = append(d, bson.E{Key: "connectionId", Value: e.ConnectionID})
		r.mu.Lock()
		r.checkedOut++
		r.mu.Unlock()
	case *event.ConnectionCheckedIn:
		name = "connectionCheckedInEvent"
		d = append(d, bson.E{Key: "connectionId", Value: e.ConnectionID})
		r.mu.Lock()
		r.checkedOut--
		r.mu.Unlock()
	default:
		return
	}
	r.add(name, d, nil)
}

// TopologyEvent implements event.TopologyMonitor.
func (r *recorder) TopologyEvent(_ context.Context, e event.TopologyEvent) {
	var name string
	var d bson.D
	desc := func(kind string) bson.D { return bson.D{{Key: "type", Value: kind}} }
	switch e := e.(type) {
	case *event.TopologyOpening:
		name = "topologyOpeningEvent"
	case *event.TopologyClosed:
		name = "topologyClosedEvent"
	case *event.TopologyDescriptionChanged:
		name = "topologyDescriptionChangedEvent"
		d = bson.D{{Key: "previousDescription", Value: desc(e.Previous.Kind)}, {Key: "newDescription", Value: desc(e.New.Kind)}}
	case *event.ServerOpening:
		name = "serverOpeningEvent"
		d = bson.D{{Key: "address", Value: e.Address}}
	case *event.ServerClosed:
		name = "serverClosedEvent"
		d = bson.D{{Key: "address", Value: e.Address}}
	case *event.ServerDescriptionChanged:
		name = "serverDescriptionChangedEvent"
		d = bson.D{{Key: "address", Value: e.Address}, {Key: "previousDescription", Value: desc(e.Previous.Kind)}, {Key: "newDescription", Value: desc(e.New.Kind)}}
	case *event.ServerHeartbeatStarted:
		name = "serverHeartbeatStartedEvent"
		d = bson.D{{Key: "awaited", Value: e.Awaited}}
	case *event.ServerHeartbeatSucceeded:
		name = "serverHeartbeatSucceededEvent"
		d = bson.D{{Key: "awaited", Value: e.Awaited}}
	case *event.ServerHeartbeatFailed:
		name = "serverHeartbeatFailedEvent"
		d = bson.D{{Key: "awaited", Value: e.Awaited}}
	default:
		return
	}
	if d == nil {
		d = bson.D{}
	}
	r.add(name, d, nil)
}

// matchEvent matches one observed event against an expectedEvent.
func matchEvent(exp bson.Raw, got recEvent, ents Entities, path string) error {
	elems, err := exp.Elements()
	if err != nil {
		return invalid(path, err, "malformed expected event")
	}
	if len(elems) != 1 {
		return invalid(path, nil, "an expected event has exactly one key, got %d", len(elems))
	}
	name := elems[0].Key()
	allowed, known := eventFields[name]
	if !known {
		return invalid(path, nil, "unknown event %q", name)
	}
	if name != got.name {
		return mismatch(path, elems[0].Value(), bson.RawValue{}, "got %s, want %s", got, name)
	}
	fields, ok := elems[0].Value().DocumentOK()
	if !ok {
		return invalid(path, nil, "%s is not a document", name)
	}
	fe, err := fields.Elements()
	if err != nil {
		return invalid(path, err, "malformed expected event")
	}
	for _, f := range fe {
		k := f.Key()
		ok := false
		for _, a := range allowed {
			ok = ok || a == k
		}
		if !ok {
			return invalid(join(path, name+"."+k), nil, "%s has no assertion %q in the unified format", name, k)
		}
		if err := Match(f.Value(), got.doc.Lookup(k), &Options{Entities: ents, Path: join(path, name+"."+k), Top: TopRoot}); err != nil {
			return err
		}
	}
	return nil
}

// eventListEntity is an array of events kept with storeEventsAsEntities.
type eventListEntity struct {
	id    string
	names map[string]bool

	mu   sync.Mutex
	docs bson.A
}

func (l *eventListEntity) add(name string, d bson.D) {
	doc := append(bson.D{{Key: "name", Value: name}, {Key: "observedAt", Value: float64(time.Now().UnixNano()) / 1e9}}, d...)
	l.mu.Lock()
	l.docs = append(l.docs, doc)
	l.mu.Unlock()
}

func (l *eventListEntity) value() bson.RawValue {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, err := bson.Marshal(bson.D{{Key: "v", Value: append(bson.A{}, l.docs...)}})
	if err != nil {
		return bson.RawValue{}
	}
	return bson.Raw(b).Lookup("v")
}

// clientSnapshot is what a client had observed when the operations ended.
type clientSnapshot struct {
	events []recEvent
	logs   []logMessage
	logOn  bool
	// spans are the client's finished spans, when it observes tracing
	// messages (tracingOn).
	spans     []*Span
	tracingOn bool
}

func (tr *testRun) snapshotClients() map[string]clientSnapshot {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	out := map[string]clientSnapshot{}
	for id, e := range tr.entities {
		c, ok := e.(*clientEntity)
		if !ok {
			continue
		}
		s := clientSnapshot{events: c.rec.snapshot()}
		if c.log != nil {
			s.logOn = true
			s.logs = c.log.h.take()
		}
		if c.tracing != nil {
			s.tracingOn = true
			s.spans = c.tracing.spans()
		}
		out[id] = s
	}
	return out
}

func (tr *testRun) expectEvents(snaps map[string]clientSnapshot) error {
	arr, ok := tr.tc.Doc.Lookup("expectEvents").ArrayOK()
	if !ok {
		return nil
	}
	vals, err := arr.Values()
	if err != nil {
		return err
	}
	for i, v := range vals {
		path := "expectEvents." + itoa(i)
		d, _ := v.DocumentOK()
		if err := checkKeys(d, "client", "eventType", "events", "ignoreExtraEvents"); err != nil {
			return invalid(path, err, "malformed expectedEventsForClient")
		}
		id := d.Lookup("client").StringValue()
		if _, err := lookupAs[*clientEntity](tr, id, "client"); err != nil {
			return invalid(path, err, "client")
		}
		snap := snaps[id]
		kind := "command"
		if s, ok := d.Lookup("eventType").StringValueOK(); ok {
			kind = s
		}
		if kind != "command" && kind != "cmap" && kind != "sdam" {
			return invalid(path, nil, "unknown eventType %q", kind)
		}
		var got []recEvent
		for _, e := range snap.events {
			if e.kind == kind {
				got = append(got, e)
			}
		}
		ignoreExtra, _ := d.Lookup("ignoreExtraEvents").BooleanOK()
		want, err := d.Lookup("events").Array().Values()
		if err != nil {
			return invalid(path, err, "events")
		}
		for j, w := range want {
			wd, ok := w.DocumentOK()
			if !ok {
				return invalid(path, nil, "events.%d is not a document", j)
			}
			if eventKind(firstKey(wd)) != kind {
				return invalid(join(path, "events."+itoa(j)), nil, "%s is not a %s event", firstKey(wd), kind)
			}
			if j >= len(got) {
				return fmt.Errorf("%s: client %s: event %d (%s) missing; got %d %s events:\n%s", path, id, j, wd, len(got), kind, dumpEvents(got))
			}
			if err := matchEvent(wd, got[j], tr, join(path, "events."+itoa(j))); err != nil {
				return fmt.Errorf("client %s: %w\ngot %s events:\n%s", id, err, kind, dumpEvents(got))
			}
		}
		if !ignoreExtra && len(got) > len(want) {
			return fmt.Errorf("%s: client %s: %d unexpected %s events after the %d expected:\n%s", path, id, len(got)-len(want), kind, len(want), dumpEvents(got[len(want):]))
		}
	}
	return nil
}

func firstKey(d bson.Raw) string {
	it := d.Iter()
	if it.Next() {
		return it.Key()
	}
	return ""
}

func dumpEvents(evs []recEvent) string {
	var b strings.Builder
	for i, e := range evs {
		s := e.String()
		if len(s) > 400 {
			s = s[:400] + "..."
		}
		fmt.Fprintf(&b, "  %d: %s\n", i, s)
	}
	return b.String()
}

// countEvents counts a client's observed events matching an expected
// event; an invalid expectation is an error.
func countEvents(c *clientEntity, exp bson.Raw, ents Entities) (int, error) {
	n := 0
	for _, e := range c.rec.snapshot() {
		err := matchEvent(exp, e, ents, "event")
		var ie *InvalidTestError
		if errors.As(err, &ie) {
			return 0, err
		}
		if err == nil {
			n++
		}
	}
	return n, nil
}
