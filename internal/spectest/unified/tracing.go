package unified

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mongoscope/mongoscope/bson"
)

// Span is a finished tracing span as a Runner's Tracing hook reports it,
// in the runner's own terms so that the runner needs no tracing library.
type Span struct {
	Name string
	// Attributes are the span's attributes in the order it got them:
	// strings as BSON strings, integers as int64, floats as doubles,
	// booleans as booleans. A hook may add the attributes of the span's
	// "exception" event here (exception.message, exception.type,
	// exception.stacktrace), which the specification's tests expect on
	// the span.
	Attributes bson.D
	// Nested are the span's children, in the order they started.
	Nested []*Span
}

// String shows the span and its children on one line.
func (s *Span) String() string {
	var b strings.Builder
	s.write(&b)
	return b.String()
}

func (s *Span) write(b *strings.Builder) {
	b.WriteString(fmt.Sprintf("%q %v", s.Name, s.Attributes))
	if len(s.Nested) > 0 {
		b.WriteString(" [")
		for i, n := range s.Nested {
			if i > 0 {
				b.WriteString(", ")
			}
			n.write(b)
		}
		b.WriteString("]")
	}
}

// tracingClient is what a client entity that observes tracing messages
// holds: the hook's span source.
type tracingClient struct {
	spans func() []*Span
}

// newTracing reads a client's observeTracingMessages and asks the hook
// for a monitor; it returns nil, nil when the client observes nothing or
// the Runner has no hook (expectTracingMessages is then skipped).
func (tr *testRun) newTracing(def bson.Raw) (any, *tracingClient, error) {
	v := def.Lookup("observeTracingMessages")
	if v.IsZero() {
		return nil, nil, nil
	}
	obs, ok := v.DocumentOK()
	if !ok {
		return nil, nil, errors.New("observeTracingMessages is not a document")
	}
	if err := checkKeys(obs, "enableCommandPayload"); err != nil {
		return nil, nil, fmt.Errorf("observeTracingMessages: %w", err)
	}
	payload := false
	if p := obs.Lookup("enableCommandPayload"); !p.IsZero() {
		b, ok := p.BooleanOK()
		if !ok {
			return nil, nil, errors.New("observeTracingMessages.enableCommandPayload is not a boolean")
		}
		payload = b
	}
	if tr.tracing == nil {
		return nil, nil, nil
	}
	mon, spans := tr.tracing(payload)
	if mon == nil || spans == nil {
		return nil, nil, errors.New("the Tracing hook returned no monitor or no span source")
	}
	return mon, &tracingClient{spans: spans}, nil
}

// expectTracingMessages checks each client's spans: one object or an
// array of them (the format describes an object; the specification's
// tests give an array).
func (tr *testRun) expectTracingMessages(snaps map[string]clientSnapshot) error {
	v := tr.tc.Doc.Lookup("expectTracingMessages")
	if v.IsZero() {
		return nil
	}
	var items []bson.Raw
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		items = []bson.Raw{v.Document()}
	case bson.TypeArray:
		vals, err := v.Array().Values()
		if err != nil {
			return invalid("expectTracingMessages", err, "malformed")
		}
		for i, x := range vals {
			d, ok := x.DocumentOK()
			if !ok {
				return invalid("expectTracingMessages."+itoa(i), nil, "not a document")
			}
			items = append(items, d)
		}
	default:
		return invalid("expectTracingMessages", nil, "neither a document nor an array")
	}
	for i, d := range items {
		path := "expectTracingMessages." + itoa(i)
		if err := checkKeys(d, "client", "ignoreExtraSpans", "spans"); err != nil {
			return invalid(path, err, "malformed expectedTracingMessages")
		}
		id, _ := d.Lookup("client").StringValueOK()
		snap, ok := snaps[id]
		if !ok || !snap.tracingOn {
			return invalid(path, nil, "client %q observes no tracing messages", id)
		}
		ignoreExtra, _ := d.Lookup("ignoreExtraSpans").BooleanOK()
		want, ok := d.Lookup("spans").ArrayOK()
		if !ok {
			return invalid(join(path, "spans"), nil, "spans is required and must be an array")
		}
		if err := tr.matchSpans(join(path, "spans"), want, snap.spans, ignoreExtra); err != nil {
			return fmt.Errorf("client %s: %w\nall spans:\n%s", id, err, dumpSpans(snap.spans, "  "))
		}
	}
	return nil
}

// matchSpans matches expected spans against got in order. With
// ignoreExtra, the expected spans must appear in got in that order with
// others between or after them; without it, got must hold exactly them.
// The rule applies again, with the same flag, to each span's nested ones.
func (tr *testRun) matchSpans(path string, want bson.Raw, got []*Span, ignoreExtra bool) error {
	vals, err := want.Values()
	if err != nil {
		return invalid(path, err, "malformed")
	}
	j := 0
	for i, w := range vals {
		wd, ok := w.DocumentOK()
		if !ok {
			return invalid(join(path, itoa(i)), nil, "a span is not a document")
		}
		p := join(path, itoa(i))
		if err := checkKeys(wd, "name", "attributes", "nested"); err != nil {
			return invalid(p, err, "malformed span")
		}
		var first error
		for {
			if j >= len(got) {
				if first != nil {
					return first
				}
				return fmt.Errorf("%s: span %s missing; got %d spans", p, wd.Lookup("name"), len(got))
			}
			err := tr.matchSpan(p, wd, got[j], ignoreExtra)
			j++
			var ie *InvalidTestError
			if err == nil {
				break
			}
			if errors.As(err, &ie) || !ignoreExtra {
				return err
			}
			if first == nil {
				first = err
			}
		}
	}
	if !ignoreExtra && j < len(got) {
		return fmt.Errorf("%s: %d unexpected spans after the %d expected:\n%s", path, len(got)-j, len(vals), dumpSpans(got[j:], "  "))
	}
	return nil
}

func (tr *testRun) matchSpan(path string, want bson.Raw, got *Span, ignoreExtra bool) error {
	name, ok := want.Lookup("name").StringValueOK()
	if !ok {
		return invalid(join(path, "name"), nil, "name is required and must be a string")
	}
	if got.Name != name {
		return mismatch(join(path, "name"), want.Lookup("name"), bson.RawValue{}, "got span %q, want %q", got.Name, name)
	}
	attrs, ok := want.Lookup("attributes").DocumentOK()
	if !ok {
		return invalid(join(path, "attributes"), nil, "attributes is required and must be a document")
	}
	act, err := bson.Marshal(got.Attributes)
	if err != nil {
		return fmt.Errorf("%s: span %q: attributes: %w", path, got.Name, err)
	}
	if err := MatchDocument(attrs, act, &Options{Entities: tr, Path: join(path, "attributes")}); err != nil {
		return fmt.Errorf("span %q: %w", got.Name, err)
	}
	nested := want.Lookup("nested")
	if nested.IsZero() {
		if !ignoreExtra && len(got.Nested) > 0 {
			return fmt.Errorf("%s: span %q has %d nested spans, none expected", path, got.Name, len(got.Nested))
		}
		return nil
	}
	arr, ok := nested.ArrayOK()
	if !ok {
		return invalid(join(path, "nested"), nil, "nested must be an array")
	}
	return tr.matchSpans(join(path, "nested"), arr, got.Nested, ignoreExtra)
}

func dumpSpans(spans []*Span, indent string) string {
	var b strings.Builder
	for i, s := range spans {
		line := fmt.Sprintf("%q %v", s.Name, s.Attributes)
		if len(line) > 600 {
			line = line[:600] + "..."
		}
		fmt.Fprintf(&b, "%s%d: %s\n", indent, i, line)
		if len(s.Nested) > 0 {
			b.WriteString(dumpSpans(s.Nested, indent+"    "))
		}
	}
	return b.String()
}
