package unified

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/logging"
)

// logMessage is one message a client logged: its level, component and
// data (the attributes and the message, as a document).
type logMessage struct {
	level     slog.Level
	component string
	data      bson.Raw
	failure   *string // the "failure" attribute, when present
}

func (m logMessage) String() string {
	return fmt.Sprintf("[%s %s] %s", logging.LevelName(m.level), m.component, m.data)
}

// logHandler is an slog handler that keeps every record: the sink's
// component levels do the filtering.
type logHandler struct {
	rec    *logRecords
	attrs  []slog.Attr
	prefix string
}

type logRecords struct {
	mu   sync.Mutex
	msgs []logMessage
}

func (h *logHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *logHandler) Handle(_ context.Context, r slog.Record) error {
	m := logMessage{level: r.Level}
	d := bson.D{{Key: "message", Value: r.Message}}
	add := func(a slog.Attr) bool {
		v := a.Value.Resolve()
		var x any
		switch v.Kind() {
		case slog.KindString:
			x = v.String()
		case slog.KindInt64:
			// An integer is an int when it fits, a long otherwise.
			if n := v.Int64(); n >= math.MinInt32 && n <= math.MaxInt32 {
				x = int32(n)
			} else {
				x = n
			}
		case slog.KindUint64:
			x = int64(v.Uint64())
		case slog.KindFloat64:
			x = v.Float64()
		case slog.KindBool:
			x = v.Bool()
		default:
			x = v.String()
		}
		key := h.prefix + a.Key
		switch key {
		case "component":
			m.component = v.String()
		case "failure":
			s := v.String()
			m.failure = &s
		}
		d = append(d, bson.E{Key: key, Value: x})
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	b, err := bson.Marshal(d)
	if err != nil {
		return err
	}
	m.data = b
	h.rec.mu.Lock()
	h.rec.msgs = append(h.rec.msgs, m)
	h.rec.mu.Unlock()
	return nil
}

func (h *logHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), as...)
	return &c
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.prefix = h.prefix + name + "."
	return &c
}

// count is the number of messages kept so far.
func (h *logHandler) count() int {
	h.rec.mu.Lock()
	defer h.rec.mu.Unlock()
	return len(h.rec.msgs)
}

// take returns and forgets the messages so far.
func (h *logHandler) take() []logMessage {
	h.rec.mu.Lock()
	defer h.rec.mu.Unlock()
	out := h.rec.msgs
	h.rec.msgs = nil
	return out
}

// matchLogMessage matches one message against an expectedLogMessage.
func matchLogMessage(exp bson.Raw, got logMessage, ents Entities, path string) error {
	if err := checkKeys(exp, "level", "component", "failureIsRedacted", "data"); err != nil {
		return invalid(path, err, "malformed expectedLogMessage")
	}
	lvName, _ := exp.Lookup("level").StringValueOK()
	lv, err := logging.ParseLevel(lvName)
	if err != nil {
		return invalid(join(path, "level"), err, "unknown level %q", lvName)
	}
	if got.level != lv.SlogLevel() {
		return mismatch(join(path, "level"), exp.Lookup("level"), bson.RawValue{}, "got level %s, want %s (message %s)", logging.LevelName(got.level), lvName, got)
	}
	comp, _ := exp.Lookup("component").StringValueOK()
	if got.component != comp {
		return mismatch(join(path, "component"), exp.Lookup("component"), bson.RawValue{}, "got component %q, want %q (message %s)", got.component, comp, got)
	}
	data, ok := exp.Lookup("data").DocumentOK()
	if !ok {
		return invalid(join(path, "data"), nil, "data is required and must be a document")
	}
	if err := MatchDocument(data, got.data, &Options{Entities: ents, Path: join(path, "data")}); err != nil {
		return err
	}
	if want, ok := exp.Lookup("failureIsRedacted").BooleanOK(); ok {
		if got.failure == nil {
			return mismatch(join(path, "failureIsRedacted"), exp.Lookup("failureIsRedacted"), bson.RawValue{}, "the message has no failure")
		}
		// A redacted failure keeps no server message: the sink writes it
		// empty.
		if redacted := *got.failure == ""; redacted != want {
			return mismatch(join(path, "failureIsRedacted"), exp.Lookup("failureIsRedacted"), bson.RawValue{}, "failure %q: redacted %v, want %v", *got.failure, redacted, want)
		}
	}
	return nil
}

func (tr *testRun) expectLogMessages(snaps map[string]clientSnapshot) error {
	arr, ok := tr.tc.Doc.Lookup("expectLogMessages").ArrayOK()
	if !ok {
		return nil
	}
	vals, err := arr.Values()
	if err != nil {
		return err
	}
	for i, v := range vals {
		path := "expectLogMessages." + itoa(i)
		d, _ := v.DocumentOK()
		if err := checkKeys(d, "client", "messages", "ignoreMessages", "ignoreExtraMessages"); err != nil {
			return invalid(path, err, "malformed expectedLogMessagesForClient")
		}
		id := d.Lookup("client").StringValue()
		snap, ok := snaps[id]
		if !ok || !snap.logOn {
			return invalid(path, nil, "client %q observes no log messages", id)
		}
		var ignore []bson.Raw
		if a, ok := d.Lookup("ignoreMessages").ArrayOK(); ok {
			iv, _ := a.Values()
			for _, x := range iv {
				ignore = append(ignore, x.Document())
			}
		}
		var kept []logMessage
	next:
		for _, m := range snap.logs {
			for j, ig := range ignore {
				err := matchLogMessage(ig, m, tr, join(path, "ignoreMessages."+itoa(j)))
				if _, bad := err.(*InvalidTestError); bad {
					return err
				}
				if err == nil {
					continue next
				}
			}
			kept = append(kept, m)
		}
		want, err := d.Lookup("messages").Array().Values()
		if err != nil {
			return invalid(path, err, "messages")
		}
		for j, w := range want {
			if j >= len(kept) {
				return fmt.Errorf("%s: client %s: message %d %s missing; got %d messages:\n%s", path, id, j, w.Document(), len(kept), dumpLogs(kept))
			}
			if err := matchLogMessage(w.Document(), kept[j], tr, join(path, "messages."+itoa(j))); err != nil {
				return fmt.Errorf("client %s: %w\nall messages:\n%s", id, err, dumpLogs(kept))
			}
		}
		ignoreExtra, _ := d.Lookup("ignoreExtraMessages").BooleanOK()
		if !ignoreExtra && len(kept) > len(want) {
			return fmt.Errorf("%s: client %s: %d extra messages after the %d expected:\n%s", path, id, len(kept)-len(want), len(want), dumpLogs(kept[len(want):]))
		}
	}
	return nil
}

func dumpLogs(ms []logMessage) string {
	var b strings.Builder
	for i, m := range ms {
		fmt.Fprintf(&b, "  %d: %s\n", i, m)
	}
	return b.String()
}
