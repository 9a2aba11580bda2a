package logging

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/internal/spectest"
)

// The spec runner: the logging tests of the unified format describe the
// messages a driver must log for an operation. Without a client to run the
// operations, each expected message is turned into the event that would
// produce it (using the literal values the expectation names), logged
// through the default JSON handler, and the output is checked against the
// expectation: message text, level, component, and every field with its
// $$type, $$exists, literal or $$matchAsDocument rule.

type specFile struct {
	Tests []struct {
		Description       string            `json:"description"`
		Operations        []json.RawMessage `json:"operations"`
		ExpectLogMessages []struct {
			Messages []specMessage `json:"messages"`
		} `json:"expectLogMessages"`
	} `json:"tests"`
	CreateEntities []json.RawMessage `json:"createEntities"`
}

type specMessage struct {
	Level             string                     `json:"level"`
	Component         string                     `json:"component"`
	FailureIsRedacted bool                       `json:"failureIsRedacted"`
	Data              map[string]json.RawMessage `json:"data"`
}

// specSecret stands in for credentials in sensitive commands; it must
// never reach the output.
const specSecret = "pencil-Secret-42"

func TestSpecLogging(t *testing.T) {
	suites := []struct {
		name    string
		pattern string
		dir     []string
	}{
		{"connection-monitoring-and-pooling/logging", "*.json", []string{"connection-monitoring-and-pooling", "tests", "logging"}},
		{"command-logging-and-monitoring/logging", "*.json", []string{"command-logging-and-monitoring", "tests", "logging"}},
		{"server-selection/logging", "*.json", []string{"server-selection", "tests", "logging"}},
		{"server-discovery-and-monitoring/unified/logging", "logging-*.json", []string{"server-discovery-and-monitoring", "tests", "unified"}},
	}
	for _, su := range suites {
		t.Run(su.name, func(t *testing.T) {
			tally := spectest.NewTally(su.name)
			defer tally.Log(t)
			for _, path := range spectest.Files(t, su.pattern, su.dir...) {
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				var f specFile
				if err := json.Unmarshal(b, &f); err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				for _, tc := range f.Tests {
					name := filepath.Base(path) + "/" + tc.Description
					if reason := unsupported(tc.Operations); reason != "" {
						tally.Skip(t, name, reason)
						continue
					}
					var msgs []specMessage
					for _, c := range tc.ExpectLogMessages {
						msgs = append(msgs, c.Messages...)
					}
					if len(msgs) == 0 {
						tally.Skip(t, name, "expects no log messages (an operation-level check)")
						continue
					}
					tally.Run(t, name, func(t *testing.T) {
						for i, m := range msgs {
							if err := checkSpecMessage(m); err != nil {
								t.Errorf("message %d (%s): %v", i, m.Data["message"], err)
							}
						}
					})
				}
			}
		})
	}
}

// unsupported names a pool option the event model does not carry.
func unsupported(ops []json.RawMessage) string {
	for _, op := range ops {
		s := string(op)
		if strings.Contains(s, `"waitQueueSize"`) || strings.Contains(s, `"waitQueueMultiple"`) {
			return "waitQueueSize and waitQueueMultiple are deprecated pool options this driver does not support"
		}
	}
	return ""
}

func checkSpecMessage(m specMessage) error {
	var text string
	if err := json.Unmarshal(m.Data["message"], &text); err != nil {
		return fmt.Errorf("message: %v", err)
	}
	lvl, err := ParseLevel(m.Level)
	if err != nil {
		return err
	}
	idx := componentIndex(Component(m.Component))
	if idx < 0 {
		return fmt.Errorf("unknown component %q", m.Component)
	}
	var out bytes.Buffer
	s, err := New(Options{Stdout: &out, Getenv: env(map[string]string{"MONGODB_LOG_PATH": "stdout", components[idx].env: m.Level})})
	if err != nil {
		return err
	}
	if err := sendSpecEvent(s, text, m); err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1 || lines[0] == "" {
		return fmt.Errorf("logged %d lines at %s: %q", len(lines), lvl, out.String())
	}
	if strings.Contains(lines[0], specSecret) {
		return fmt.Errorf("credential leaked: %s", lines[0])
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &got); err != nil {
		return err
	}
	if got["msg"] != text || got["level"] != m.Level || got["component"] != m.Component {
		return fmt.Errorf("got msg=%v level=%v component=%v", got["msg"], got["level"], got["component"])
	}
	if m.FailureIsRedacted && got["failure"] != "" {
		return fmt.Errorf("failure not redacted: %v", got["failure"])
	}
	keys := make([]string, 0, len(m.Data))
	for k := range m.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "message" {
			continue
		}
		if err := matchField(k, m.Data[k], got); err != nil {
			return err
		}
	}
	return nil
}

// matchField applies one expectation to the logged value of key.
func matchField(key string, want json.RawMessage, got map[string]any) error {
	v, present := got[key]
	var op map[string]json.RawMessage
	if json.Unmarshal(want, &op) == nil {
		switch {
		case op["$$exists"] != nil:
			var exists bool
			_ = json.Unmarshal(op["$$exists"], &exists)
			if exists != present {
				return fmt.Errorf("%s: present=%v, want %v", key, present, exists)
			}
			return nil
		case op["$$type"] != nil:
			if !present {
				return fmt.Errorf("%s missing", key)
			}
			var types []string
			if json.Unmarshal(op["$$type"], &types) != nil {
				var one string
				_ = json.Unmarshal(op["$$type"], &one)
				types = []string{one}
			}
			for _, ty := range types {
				if hasType(v, ty) {
					return nil
				}
			}
			return fmt.Errorf("%s = %#v, want type %v", key, v, types)
		case op["$$matchAsDocument"] != nil:
			str, ok := v.(string)
			if !ok {
				return fmt.Errorf("%s = %#v, want a string", key, v)
			}
			var doc map[string]any
			if err := json.Unmarshal([]byte(str), &doc); err != nil {
				return fmt.Errorf("%s = %q is not a document: %v", key, str, err)
			}
			var inner map[string]json.RawMessage
			_ = json.Unmarshal(op["$$matchAsDocument"], &inner)
			exact := true
			if r, ok := inner["$$matchAsRoot"]; ok {
				exact = false
				inner = nil
				_ = json.Unmarshal(r, &inner)
			}
			if exact && len(doc) != len(inner) {
				return fmt.Errorf("%s = %s, want exactly %s", key, str, op["$$matchAsDocument"])
			}
			for k, w := range inner {
				var wv any
				_ = json.Unmarshal(w, &wv)
				if fmt.Sprint(doc[k]) != fmt.Sprint(wv) {
					return fmt.Errorf("%s.%s = %v, want %v", key, k, doc[k], wv)
				}
			}
			return nil
		}
		return fmt.Errorf("%s: unknown operator in %s", key, want)
	}
	var wv any
	if err := json.Unmarshal(want, &wv); err != nil {
		return err
	}
	if !present || fmt.Sprint(v) != fmt.Sprint(wv) {
		return fmt.Errorf("%s = %#v, want %#v", key, v, wv)
	}
	return nil
}

func hasType(v any, ty string) bool {
	switch ty {
	case "string":
		_, ok := v.(string)
		return ok
	case "bool":
		_, ok := v.(bool)
		return ok
	case "double":
		_, ok := v.(float64)
		return ok
	case "int", "long":
		f, ok := v.(float64)
		return ok && f == math.Trunc(f)
	}
	return false
}

// literal reads data[key] when it is a literal (not an operator).
func literal[T any](data map[string]json.RawMessage, key string, def T) T {
	raw, ok := data[key]
	if !ok || strings.HasPrefix(strings.TrimSpace(string(raw)), "{") {
		return def
	}
	var v T
	if json.Unmarshal(raw, &v) != nil {
		return def
	}
	return v
}

// wanted tells whether an optional field is expected: present with any
// rule other than $$exists: false.
func wanted(data map[string]json.RawMessage, key string) bool {
	raw, ok := data[key]
	if !ok {
		return false
	}
	var op struct {
		Exists *bool `json:"$$exists"`
	}
	return json.Unmarshal(raw, &op) != nil || op.Exists == nil || *op.Exists
}

// expectedDoc builds the document a command or reply field expects, from
// its $$matchAsRoot; an exact {} on a sensitive command gets a secret
// payload instead, so redaction is what makes it match.
func expectedDoc(data map[string]json.RawMessage, key, name string) (bson.Raw, error) {
	var op struct {
		M map[string]json.RawMessage `json:"$$matchAsDocument"`
	}
	raw, ok := data[key]
	if !ok || json.Unmarshal(raw, &op) != nil || op.M == nil {
		return bson.ParseExtJSON([]byte(`{"` + name + `": 1, "ok": 1}`))
	}
	if root, ok := op.M["$$matchAsRoot"]; ok {
		return bson.ParseExtJSON(root)
	}
	if len(op.M) == 0 {
		return bson.ParseExtJSON([]byte(`{"` + name + `": 1, "speculativeAuthenticate": {"pwd": "` + specSecret + `"}, "pwd": "` + specSecret + `"}`))
	}
	b, _ := json.Marshal(op.M)
	return bson.ParseExtJSON(b)
}

// emptyExpectation tells whether data[key] expects exactly the empty
// document, the redacted form.
func emptyExpectation(data map[string]json.RawMessage, key string) bool {
	var op struct {
		M map[string]json.RawMessage `json:"$$matchAsDocument"`
	}
	raw, ok := data[key]
	return ok && json.Unmarshal(raw, &op) == nil && op.M != nil && len(op.M) == 0
}

func reasonKey[K ~string](m map[K]string, text string) K {
	for k, v := range m {
		if v == text {
			return k
		}
	}
	return K(text)
}

// sendSpecEvent builds and sends the event behind one expected message.
func sendSpecEvent(s *Sink, text string, m specMessage) error {
	d := m.Data
	ctx := context.Background()
	const addr = "localhost:27017"
	failure := errors.New("expected failure")
	if m.FailureIsRedacted {
		failure = errors.New("auth failed: " + specSecret)
	}
	switch m.Component {
	case "command":
		name := literal(d, "commandName", "ping")
		f := event.CommandFields{CommandName: name, DatabaseName: literal(d, "databaseName", "db"), RequestID: 3, ServerHost: "localhost", ServerPort: 27017, ConnectionID: 1}
		if wanted(d, "operationId") {
			f.OperationID = 9
		}
		if wanted(d, "serverConnectionId") {
			f.ServerConnectionID = ptr(int64(12))
		}
		if wanted(d, "serviceId") {
			f.ServiceID = &oid
		}
		// The producer flags a sensitive command's events; the
		// expectation shows it as an exact {} or a redacted failure.
		f.Redacted = m.FailureIsRedacted || emptyExpectation(d, "command") || emptyExpectation(d, "reply")
		switch text {
		case "Command started":
			cmd, err := expectedDoc(d, "command", name)
			if err != nil {
				return err
			}
			s.CommandStarted(ctx, &event.CommandStarted{CommandFields: f, Command: cmd})
		case "Command succeeded":
			reply, err := expectedDoc(d, "reply", name)
			if err != nil {
				return err
			}
			s.CommandSucceeded(ctx, &event.CommandSucceeded{CommandFields: f, Reply: reply, Duration: time.Millisecond})
		case "Command failed":
			var reply bson.Raw
			if m.FailureIsRedacted {
				reply, _ = bson.ParseExtJSON([]byte(`{"ok": 0, "errmsg": "` + specSecret + `"}`))
			}
			s.CommandFailed(ctx, &event.CommandFailed{CommandFields: f, Reply: reply, Failure: failure, Duration: time.Millisecond})
		default:
			return fmt.Errorf("no event for %q", text)
		}
	case "connection":
		var e event.PoolEvent
		switch text {
		case "Connection pool created":
			e = &event.PoolCreated{Address: addr, Options: event.PoolOptions{
				MaxPoolSize: literal(d, "maxPoolSize", 100), MinPoolSize: literal(d, "minPoolSize", 0), MaxConnecting: literal(d, "maxConnecting", 2),
				MaxIdleTime: time.Duration(literal(d, "maxIdleTimeMS", 0)) * time.Millisecond, WaitQueueTimeout: time.Duration(literal(d, "waitQueueTimeoutMS", 0)) * time.Millisecond,
			}}
		case "Connection pool ready":
			e = &event.PoolReady{Address: addr}
		case "Connection pool cleared":
			pc := &event.PoolCleared{Address: addr}
			if wanted(d, "serviceId") {
				pc.ServiceID = &oid
			}
			e = pc
		case "Connection pool closed":
			e = &event.PoolClosed{Address: addr}
		case "Connection created":
			e = &event.ConnectionCreated{Address: addr, ConnectionID: 1}
		case "Connection ready":
			e = &event.ConnectionReady{Address: addr, ConnectionID: 1, Duration: time.Millisecond}
		case "Connection closed":
			e = &event.ConnectionClosed{Address: addr, ConnectionID: 1, Reason: reasonKey(closeReasons, literal(d, "reason", "")), Err: failure}
		case "Connection checkout started":
			e = &event.ConnectionCheckOutStarted{Address: addr}
		case "Connection checkout failed":
			e = &event.ConnectionCheckOutFailed{Address: addr, Reason: reasonKey(checkOutReasons, literal(d, "reason", "")), Err: failure, Duration: time.Millisecond}
		case "Connection checked out":
			e = &event.ConnectionCheckedOut{Address: addr, ConnectionID: 1, Duration: time.Millisecond}
		case "Connection checked in":
			e = &event.ConnectionCheckedIn{Address: addr, ConnectionID: 1}
		default:
			return fmt.Errorf("no event for %q", text)
		}
		s.PoolEvent(ctx, e)
	case "topology":
		hb := event.HeartbeatFields{TopologyID: oid, ServerHost: "localhost", ServerPort: 27017, DriverConnectionID: 1}
		if wanted(d, "serverConnectionId") {
			hb.ServerConnectionID = ptr(int64(12))
		}
		var e event.TopologyEvent
		switch text {
		case "Starting topology monitoring":
			e = &event.TopologyOpening{TopologyID: oid}
		case "Stopped topology monitoring":
			e = &event.TopologyClosed{TopologyID: oid}
		case "Starting server monitoring":
			e = &event.ServerOpening{TopologyID: oid, Address: addr}
		case "Stopped server monitoring":
			e = &event.ServerClosed{TopologyID: oid, Address: addr}
		case "Topology description changed":
			e = &event.TopologyDescriptionChanged{TopologyID: oid, Previous: event.TopologyDescription{Kind: "Unknown"}, New: topoDesc}
		case "Server heartbeat started":
			e = &event.ServerHeartbeatStarted{HeartbeatFields: hb}
		case "Server heartbeat succeeded":
			reply, err := expectedDoc(d, "reply", "isWritablePrimary")
			if err != nil {
				return err
			}
			e = &event.ServerHeartbeatSucceeded{HeartbeatFields: hb, Duration: time.Millisecond, Reply: reply}
		case "Server heartbeat failed":
			e = &event.ServerHeartbeatFailed{HeartbeatFields: hb, Duration: time.Millisecond, Failure: failure}
		default:
			return fmt.Errorf("no event for %q", text)
		}
		s.TopologyEvent(ctx, e)
	case "serverSelection":
		f := event.SelectionFields{Selector: "ReadPreference{mode: primary}", Operation: literal(d, "operation", "find"), Topology: topoDesc}
		if wanted(d, "operationId") {
			f.OperationID = 9
		}
		var e event.SelectionEvent
		switch text {
		case "Server selection started":
			e = &event.ServerSelectionStarted{SelectionFields: f}
		case "Server selection succeeded":
			e = &event.ServerSelectionSucceeded{SelectionFields: f, ServerHost: "localhost", ServerPort: 27017}
		case "Server selection failed":
			e = &event.ServerSelectionFailed{SelectionFields: f, Failure: failure}
		case "Waiting for suitable server to become available":
			e = &event.ServerSelectionWaiting{SelectionFields: f, RemainingTime: time.Second}
		default:
			return fmt.Errorf("no event for %q", text)
		}
		s.SelectionEvent(ctx, e)
	default:
		return fmt.Errorf("unknown component %q", m.Component)
	}
	return nil
}
