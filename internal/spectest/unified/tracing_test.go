package unified

import (
	"context"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

func opSpan(name string, nested ...*Span) *Span {
	return &Span{Name: name, Attributes: bson.D{{Key: "db.system.name", Value: "mongodb"}, {Key: "server.port", Value: int64(27017)}}, Nested: nested}
}

func TestMatchSpans(t *testing.T) {
	got := []*Span{
		opSpan("find db.c", opSpan("find"), opSpan("find")),
		opSpan("getMore db.c", opSpan("getMore")),
	}
	tests := []struct {
		name        string
		want        string
		ignoreExtra bool
		err         string // substring; "" means a match
	}{
		{"exact", `[{"name": "find db.c", "attributes": {"db.system.name": "mongodb"}, "nested": [{"name": "find", "attributes": {}}, {"name": "find", "attributes": {}}]},
			{"name": "getMore db.c", "attributes": {}, "nested": [{"name": "getMore", "attributes": {"server.port": {"$$type": "long"}}}]}]`, false, ""},
		{"extra root refused", `[{"name": "find db.c", "attributes": {}, "nested": [{"name": "find", "attributes": {}}, {"name": "find", "attributes": {}}]}]`, false, "unexpected spans"},
		{"extra root ignored", `[{"name": "getMore db.c", "attributes": {}}]`, true, ""},
		{"extra nested refused", `[{"name": "find db.c", "attributes": {}, "nested": [{"name": "find", "attributes": {}}]}, {"name": "getMore db.c", "attributes": {}, "nested": [{"name": "getMore", "attributes": {}}]}]`, false, "unexpected spans"},
		{"absent nested refused", `[{"name": "find db.c", "attributes": {}}, {"name": "getMore db.c", "attributes": {}}]`, false, "none expected"},
		{"wrong name", `[{"name": "find db.d", "attributes": {}}]`, true, `want "find db.d"`},
		{"wrong attribute", `[{"name": "find db.c", "attributes": {"db.system.name": "other"}}]`, true, "db.system.name"},
		{"attribute must not exist", `[{"name": "find db.c", "attributes": {"server.port": {"$$exists": false}}}]`, true, "server.port"},
		{"order matters", `[{"name": "getMore db.c", "attributes": {}}, {"name": "find db.c", "attributes": {}}]`, true, "missing"},
		{"malformed", `[{"name": "find db.c", "attributes": {}, "bogus": 1}]`, true, "invalid expectation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := mustDoc(t, `{"a": `+tt.want+`}`).Lookup("a").Array()
			tr := newTestRun(context.Background(), &Test{}, nil)
			err := tr.matchSpans("spans", want, got, tt.ignoreExtra)
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.err != "" && err == nil:
				t.Fatalf("matched; want an error with %q", tt.err)
			case tt.err != "" && !strings.Contains(err.Error(), tt.err):
				t.Fatalf("error %v; want one with %q", err, tt.err)
			}
		})
	}
}

// A test that expects tracing messages with no Tracing hook is skipped
// with a reason that says so.
func TestExpectTracingMessagesWithoutHook(t *testing.T) {
	file := &File{Doc: mustDoc(t, `{"description": "x", "schemaVersion": "1.27", "tests": []}`)}
	tc := &Test{File: file, Doc: mustDoc(t, `{"description": "t", "operations": [], "expectTracingMessages": [{"client": "c", "spans": []}]}`)}
	tr := newTestRun(context.Background(), tc, nil)
	err := tr.run()
	se, ok := err.(*skipError)
	if !ok || se.reason != "no tracing hook" {
		t.Fatalf("run() = %v; want the skip \"no tracing hook\"", err)
	}
}

func TestObserveTracingMessagesParse(t *testing.T) {
	var asked []bool
	tr := newTestRun(context.Background(), &Test{}, nil)
	tr.tracing = func(p bool) (any, func() []*Span) {
		asked = append(asked, p)
		return struct{}{}, func() []*Span { return nil }
	}
	for _, def := range []string{`{}`, `{"observeTracingMessages": {}}`, `{"observeTracingMessages": {"enableCommandPayload": true}}`} {
		if _, _, err := tr.newTracing(mustDoc(t, def)); err != nil {
			t.Fatalf("%s: %v", def, err)
		}
	}
	if len(asked) != 2 || asked[0] || !asked[1] {
		t.Fatalf("the hook was asked %v; want [false true]", asked)
	}
	for _, def := range []string{`{"observeTracingMessages": 1}`, `{"observeTracingMessages": {"enableCommandPayload": 1}}`, `{"observeTracingMessages": {"x": true}}`} {
		if _, _, err := tr.newTracing(mustDoc(t, def)); err == nil {
			t.Errorf("%s: accepted", def)
		}
	}
	tr.tracing = nil
	if m, c, err := tr.newTracing(mustDoc(t, `{"observeTracingMessages": {}}`)); m != nil || c != nil || err != nil {
		t.Errorf("without a hook: %v %v %v; want nothing", m, c, err)
	}
}
