package driver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
	"github.com/mongoscope/mongoscope/internal/spectest"
)

// The live command monitoring spec runner: the monitoring tests of the
// command logging and monitoring specification (unified format) run
// against a real client on mongotest, and the command events the client
// published are compared with expectEvents. It shares the logging runner's
// deployments, entities, operations and matching rules
// (logging_spec_test.go). A case that needs a CRUD API the driver does not
// have yet (insertOne, find, bulkWrite...) is skipped: emulating it with
// RunCommand would check the test's emulation, not the driver.

type msFile struct {
	RunOnRequirements []lsRequirement `json:"runOnRequirements"`
	CreateEntities    []lsEntity      `json:"createEntities"`
	Tests             []msTest        `json:"tests"`
}

type msTest struct {
	Description       string          `json:"description"`
	RunOnRequirements []lsRequirement `json:"runOnRequirements"`
	Operations        []lsOperation   `json:"operations"`
	ExpectEvents      []struct {
		Client            string                       `json:"client"`
		EventType         string                       `json:"eventType"`
		Events            []map[string]json.RawMessage `json:"events"`
		IgnoreExtraEvents bool                         `json:"ignoreExtraEvents"`
	} `json:"expectEvents"`
}

// msOperations are the operations this runner can run through the public
// API as a user would.
var msOperations = []string{"runCommand", "failPoint"}

func TestMonitoringSpecLive(t *testing.T) {
	const suite = "command-logging-and-monitoring/monitoring"
	tally := spectest.NewTally(suite + " (live client on mongotest)")
	defer tally.Log(t)
	for _, path := range spectest.Files(t, "*.json", "command-logging-and-monitoring", "tests", "monitoring") {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var f msFile
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		lf := lsFile{RunOnRequirements: f.RunOnRequirements, CreateEntities: f.CreateEntities}
		for _, tc := range f.Tests {
			name := filepath.Base(path) + "/" + tc.Description
			lt := lsTest{Description: tc.Description, RunOnRequirements: tc.RunOnRequirements, Operations: tc.Operations}
			topo, reason := lsPlan(lf, lt)
			for _, op := range tc.Operations {
				if reason == "" && !slices.Contains(msOperations, op.Name) {
					reason = op.Name + ": the driver has no API for this operation yet (it has RunCommand)"
				}
			}
			if reason != "" {
				tally.Skip(t, name, reason)
				continue
			}
			tally.Run(t, name, func(t *testing.T) { msRun(t, lf, lt, tc, topo) })
		}
	}
}

// msRun runs one case and compares the events.
func msRun(t *testing.T, lf lsFile, lt lsTest, tc msTest, topology string) {
	r := &lsRunner{
		t: t, d: lsStart(t, topology, lsNeedsAuth(lf, lt)),
		clients: map[string]*lsClient{}, dbs: map[string][2]string{}, colls: map[string]lsColl{},
	}
	for _, op := range tc.Operations {
		if op.Name == "failPoint" {
			r.hasFail = true
		}
	}
	t.Cleanup(func() {
		for _, c := range r.clients {
			if !c.closed {
				c.c.Disconnect(context.Background())
			}
		}
	})
	if err := r.createEntities(lf.CreateEntities); err != nil {
		t.Fatal(err)
	}
	for i, op := range tc.Operations {
		if skip, err := r.operation(op); skip != "" || err != nil {
			t.Fatalf("operation %d (%s): %v %s", i, op.Name, err, skip)
		}
	}
	for _, exp := range tc.ExpectEvents {
		if exp.EventType != "" && exp.EventType != "command" {
			t.Fatalf("eventType %q is not supported by this runner", exp.EventType)
		}
		c, ok := r.clients[exp.Client]
		if !ok {
			t.Fatalf("expectEvents names client %q, which observes no events", exp.Client)
		}
		got := msEvents(c.cmds.Take())
		for i, want := range exp.Events {
			if i >= len(got) {
				t.Errorf("client %s: event %d missing; got %d events:\n%s", exp.Client, i, len(got), msDump(got))
				break
			}
			if err := msMatch(want, got[i]); err != nil {
				t.Errorf("client %s: event %d: %v\ngot events:\n%s", exp.Client, i, err, msDump(got))
				break
			}
		}
		if !exp.IgnoreExtraEvents && len(got) > len(exp.Events) {
			t.Errorf("client %s: %d extra events:\n%s", exp.Client, len(got)-len(exp.Events), msDump(got[len(exp.Events):]))
		}
	}
}

// msEvent is a published command event in the unified format's terms.
type msEvent struct {
	kind   string         // commandStartedEvent, commandSucceededEvent or commandFailedEvent
	fields map[string]any // commandName, databaseName, command or reply, has*
}

func (e msEvent) String() string { return fmt.Sprintf("%s %v", e.kind, e.fields) }

func msDump(evs []msEvent) string {
	var b strings.Builder
	for _, e := range evs {
		b.WriteString("  " + e.String() + "\n")
	}
	return b.String()
}

// msCommands returns the recorder of a client's command events: it keeps
// those the unified format's observeEvents and observeSensitiveCommands
// ask for.
func msCommands(observe []string, sensitive bool) *eventtest.Recorder {
	return &eventtest.Recorder{Keep: func(e any) bool {
		kind, f := msKind(e)
		return kind != "" && slices.Contains(observe, kind) && (!f.Redacted || sensitive)
	}}
}

// msKind is a command event's name in the unified format, and its fields;
// "" for other events.
func msKind(e any) (string, *event.CommandFields) {
	switch e := e.(type) {
	case *event.CommandStarted:
		return "commandStartedEvent", &e.CommandFields
	case *event.CommandSucceeded:
		return "commandSucceededEvent", &e.CommandFields
	case *event.CommandFailed:
		return "commandFailedEvent", &e.CommandFields
	}
	return "", nil
}

// msEvents puts recorded command events in the unified format's terms.
func msEvents(evs []any) []msEvent {
	var out []msEvent
	for _, e := range evs {
		kind, f := msKind(e)
		if kind == "" {
			continue
		}
		fields := map[string]any{
			"commandName":           f.CommandName,
			"databaseName":          f.DatabaseName,
			"hasServiceId":          f.ServiceID != nil,
			"hasServerConnectionId": f.ServerConnectionID != nil,
		}
		var docKey string
		var doc bson.Raw
		switch e := e.(type) {
		case *event.CommandStarted:
			docKey, doc = "command", e.Command
		case *event.CommandSucceeded:
			docKey, doc = "reply", e.Reply
		}
		if docKey != "" {
			v, err := msDecodeDoc(doc)
			if err != nil {
				v = "undecodable: " + err.Error()
			}
			fields[docKey] = v
		}
		out = append(out, msEvent{kind: kind, fields: fields})
	}
	return out
}

func msDecodeDoc(doc bson.Raw) (any, error) {
	if len(doc) == 0 {
		return map[string]any{}, nil
	}
	b, err := bson.AppendExtJSON(nil, doc, false)
	if err != nil {
		return nil, err
	}
	return lsDecode(b)
}

// msMatch compares one expected event with a published one: the kind, then
// every expected field under the unified format's rules (command and reply
// are root documents, which may hold extra fields).
func msMatch(want map[string]json.RawMessage, got msEvent) error {
	if len(want) != 1 {
		return fmt.Errorf("expected event with %d kinds", len(want))
	}
	for kind, raw := range want {
		if kind != got.kind {
			return fmt.Errorf("got %s, want %s", got.kind, kind)
		}
		exp, err := lsDecode(raw)
		if err != nil {
			return err
		}
		fields, ok := exp.(map[string]any)
		if !ok {
			return fmt.Errorf("%s is %T, not a document", kind, exp)
		}
		for k, w := range fields {
			g, present := got.fields[k]
			if !present {
				return fmt.Errorf("%s.%s: field not supported by this runner", kind, k)
			}
			if err := lsMatch(kind+"."+k, w, g, k == "command" || k == "reply"); err != nil {
				return err
			}
		}
	}
	return nil
}
