package driver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/internal/spectest"
)

// A focused runner for the SDAM unified-format files that need no CRUD:
// those whose operations are all in suOps and whose expectEvents are SDAM
// or CMAP events (no command events, no log messages, which the logging
// runner checks). Files are chosen by that predicate on their content,
// never by name; the rest are counted as skipped with the reason. The
// deployments (mongotest playing single, replicaset, sharded or
// load-balanced) and the fail-point routing are the logging runner's
// (lsStart): a fail-point or setup client is not created, its failPoint
// goes to mongotest directly.

// suOps are the operations this runner interprets. runCommand maps to
// Client.RunCommand, wait to a sleep.
var suOps = map[string]bool{
	"createEntities": true, "failPoint": true, "waitForEvent": true, "assertEventCount": true,
	"close": true, "runCommand": true, "wait": true,
}

type suFile struct {
	RunOnRequirements []lsRequirement `json:"runOnRequirements"`
	CreateEntities    []lsEntity      `json:"createEntities"`
	InitialData       []struct {
		CollectionName string            `json:"collectionName"`
		DatabaseName   string            `json:"databaseName"`
		Documents      []json.RawMessage `json:"documents"`
	} `json:"initialData"`
	Tests []suTest `json:"tests"`
}

type suTest struct {
	Description       string            `json:"description"`
	RunOnRequirements []lsRequirement   `json:"runOnRequirements"`
	Operations        []lsOperation     `json:"operations"`
	ExpectLogMessages []json.RawMessage `json:"expectLogMessages"`
	ExpectEvents      []struct {
		Client            string                       `json:"client"`
		EventType         string                       `json:"eventType"`
		IgnoreExtraEvents bool                         `json:"ignoreExtraEvents"`
		Events            []map[string]json.RawMessage `json:"events"`
	} `json:"expectEvents"`
}

// suUnsupported says why the runner cannot run tc, or "".
func suUnsupported(tc suTest) string {
	var ops []string
	for _, op := range tc.Operations {
		if !suOps[op.Name] {
			ops = append(ops, op.Name)
		}
	}
	if len(ops) > 0 {
		sort.Strings(ops)
		return "needs operations this CRUD-free runner does not interpret (the driver has no CRUD API yet; thread and topology-assertion operations are not implemented here): " + strings.Join(slicesCompact(ops), ", ")
	}
	if len(tc.ExpectLogMessages) > 0 {
		return "expects log messages: run by the logging spec runner (TestLoggingSpecLive)"
	}
	for _, e := range tc.ExpectEvents {
		if e.EventType != "sdam" && e.EventType != "cmap" {
			return "expects command events, which this runner does not check"
		}
	}
	return ""
}

func slicesCompact(s []string) []string {
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

func TestSDAMUnifiedNoCRUD(t *testing.T) {
	tally := spectest.NewTally("server-discovery-and-monitoring/unified (CRUD-free, live client on mongotest)")
	defer tally.Log(t)
	for _, path := range spectest.Files(t, "*.json", "server-discovery-and-monitoring", "tests", "unified") {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var f suFile
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, tc := range f.Tests {
			name := filepath.Base(path) + "/" + tc.Description
			if reason := suUnsupported(tc); reason != "" {
				tally.Skip(t, name, reason)
				continue
			}
			topo, reason := lsPlan(lsFile{RunOnRequirements: f.RunOnRequirements}, lsTest{RunOnRequirements: tc.RunOnRequirements, Operations: tc.Operations})
			if reason != "" {
				tally.Skip(t, name, reason)
				continue
			}
			tally.Run(t, name, func(t *testing.T) { suRun(t, f, tc, topo) })
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	for g := driverGoroutines(); len(g) > 0; g = driverGoroutines() {
		if time.Now().After(deadline) {
			t.Errorf("%d driver goroutines left:\n%s", len(g), strings.Join(g, "\n\n"))
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// suEvent is one recorded SDAM or CMAP event: its unified-format name,
// its kind ("sdam" or "cmap") and, for description changes, the types.
type suEvent struct {
	name, kind   string
	prev, newTyp string
}

// suClient is a client entity and the events it observes.
type suClient struct {
	c       *Client
	observe map[string]bool
	closed  bool

	mu  sync.Mutex
	evs []suEvent
}

func (c *suClient) add(e suEvent) {
	if !c.observe[e.name] {
		return
	}
	c.mu.Lock()
	c.evs = append(c.evs, e)
	c.mu.Unlock()
}

func (c *suClient) events() []suEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]suEvent(nil), c.evs...)
}

func (c *suClient) TopologyEvent(_ context.Context, e event.TopologyEvent) {
	ev := suEvent{kind: "sdam"}
	switch e := e.(type) {
	case *event.TopologyOpening:
		ev.name = "topologyOpeningEvent"
	case *event.TopologyClosed:
		ev.name = "topologyClosedEvent"
	case *event.TopologyDescriptionChanged:
		ev.name, ev.prev, ev.newTyp = "topologyDescriptionChangedEvent", e.Previous.Kind, e.New.Kind
	case *event.ServerOpening:
		ev.name = "serverOpeningEvent"
	case *event.ServerClosed:
		ev.name = "serverClosedEvent"
	case *event.ServerDescriptionChanged:
		ev.name, ev.prev, ev.newTyp = "serverDescriptionChangedEvent", e.Previous.Kind, e.New.Kind
	case *event.ServerHeartbeatStarted:
		ev.name = "serverHeartbeatStartedEvent"
	case *event.ServerHeartbeatSucceeded:
		ev.name = "serverHeartbeatSucceededEvent"
	case *event.ServerHeartbeatFailed:
		ev.name = "serverHeartbeatFailedEvent"
	default:
		return
	}
	c.add(ev)
}

func (c *suClient) PoolEvent(_ context.Context, e event.PoolEvent) {
	ev := suEvent{kind: "cmap"}
	switch e.(type) {
	case *event.PoolCreated:
		ev.name = "poolCreatedEvent"
	case *event.PoolReady:
		ev.name = "poolReadyEvent"
	case *event.PoolCleared:
		ev.name = "poolClearedEvent"
	case *event.PoolClosed:
		ev.name = "poolClosedEvent"
	case *event.ConnectionCreated:
		ev.name = "connectionCreatedEvent"
	case *event.ConnectionReady:
		ev.name = "connectionReadyEvent"
	case *event.ConnectionClosed:
		ev.name = "connectionClosedEvent"
	case *event.ConnectionCheckOutStarted:
		ev.name = "connectionCheckOutStartedEvent"
	case *event.ConnectionCheckOutFailed:
		ev.name = "connectionCheckOutFailedEvent"
	case *event.ConnectionCheckedOut:
		ev.name = "connectionCheckedOutEvent"
	case *event.ConnectionCheckedIn:
		ev.name = "connectionCheckedInEvent"
	default:
		return
	}
	c.add(ev)
}

// suExpected is an expected event: its name and what it says of the
// previous and new description types ("" when it says nothing).
type suExpected struct {
	name         string
	prev, newTyp string
}

// suParseExpected reads {"<name>": {"previousDescription": {"type": ...},
// "newDescription": {"type": ...}}}; any other field is an error, so the
// runner never passes a case by ignoring what it was asked to check.
func suParseExpected(ev map[string]json.RawMessage) (suExpected, error) {
	if len(ev) != 1 {
		return suExpected{}, fmt.Errorf("an event must have one key, got %d", len(ev))
	}
	var x suExpected
	for name, raw := range ev {
		x.name = name
		var fields map[string]map[string]string
		if err := json.Unmarshal(raw, &fields); err != nil {
			return x, fmt.Errorf("%s: unsupported expectation %s: %v", name, raw, err)
		}
		for k, v := range fields {
			for vk := range v {
				if vk != "type" {
					return x, fmt.Errorf("%s.%s.%s: unsupported expectation", name, k, vk)
				}
			}
			switch k {
			case "previousDescription":
				x.prev = v["type"]
			case "newDescription":
				x.newTyp = v["type"]
			default:
				return x, fmt.Errorf("%s.%s: unsupported expectation", name, k)
			}
		}
	}
	return x, nil
}

func (x suExpected) matches(e suEvent) bool {
	return x.name == e.name && (x.prev == "" || x.prev == e.prev) && (x.newTyp == "" || x.newTyp == e.newTyp)
}

func (x suExpected) String() string {
	s := x.name
	if x.prev != "" || x.newTyp != "" {
		s += fmt.Sprintf("{%s -> %s}", x.prev, x.newTyp)
	}
	return s
}

func (e suEvent) String() string {
	if e.prev != "" || e.newTyp != "" {
		return fmt.Sprintf("%s{%s -> %s}", e.name, e.prev, e.newTyp)
	}
	return e.name
}

type suRunner struct {
	t       *testing.T
	d       *lsDeployment
	hasFail bool
	clients map[string]*suClient
	dbs     map[string][2]string // database id -> client id, database name
}

func suRun(t *testing.T, f suFile, tc suTest, topology string) {
	r := &suRunner{t: t, d: lsStart(t, topology, lsNeedsAuth(lsFile{RunOnRequirements: f.RunOnRequirements}, lsTest{RunOnRequirements: tc.RunOnRequirements})),
		clients: map[string]*suClient{}, dbs: map[string][2]string{}}
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
		for _, s := range r.d.failPoint() {
			s.ClearFailPoints()
		}
	})
	if err := r.initialData(f); err != nil {
		t.Fatalf("initialData: %v", err)
	}
	if err := r.createEntities(f.CreateEntities); err != nil {
		t.Fatal(err)
	}
	for i, op := range tc.Operations {
		if err := r.operation(op); err != nil {
			t.Fatalf("operation %d (%s): %v", i, op.Name, err)
		}
	}
	for _, exp := range tc.ExpectEvents {
		c, ok := r.clients[exp.Client]
		if !ok {
			t.Fatalf("expectEvents names client %q, which observes nothing", exp.Client)
		}
		var got []suEvent
		for _, e := range c.events() {
			if e.kind == exp.EventType {
				got = append(got, e)
			}
		}
		for i, raw := range exp.Events {
			want, err := suParseExpected(raw)
			if err != nil {
				t.Fatal(err)
			}
			if i >= len(got) {
				t.Fatalf("client %s: event %d %v missing; got %v", exp.Client, i, want, got)
			}
			if !want.matches(got[i]) {
				t.Fatalf("client %s: event %d is %v, want %v; all: %v", exp.Client, i, got[i], want, got)
			}
		}
		if !exp.IgnoreExtraEvents && len(got) > len(exp.Events) {
			t.Fatalf("client %s: %d extra %s events after the %d expected: %v", exp.Client, len(got)-len(exp.Events), exp.EventType, len(exp.Events), got)
		}
	}
}

// initialData creates each collection (dropping it first) with its
// documents, through a client of the deployment's own.
func (r *suRunner) initialData(f suFile) error {
	if len(f.InitialData) == 0 {
		return nil
	}
	o := &ClientOptions{}
	uri := "mongodb://" + r.d.creds + strings.Join(r.d.hosts, ",") + "/"
	if len(r.d.params) > 0 {
		uri += "?" + strings.Join(r.d.params, "&")
	}
	if err := o.ApplyURI(uri); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Connect(ctx, o)
	if err != nil {
		return err
	}
	defer c.Disconnect(ctx)
	for _, d := range f.InitialData {
		if _, err := c.RunCommand(ctx, d.DatabaseName, bson.D{{Key: "drop", Value: d.CollectionName}}); err != nil {
			var ce *CommandError
			if !errors.As(err, &ce) || ce.Code != 26 { // NamespaceNotFound
				return err
			}
		}
		if _, err := c.RunCommand(ctx, d.DatabaseName, bson.D{{Key: "create", Value: d.CollectionName}}); err != nil {
			return err
		}
		if len(d.Documents) == 0 {
			continue
		}
		docs := bson.A{}
		for _, raw := range d.Documents {
			doc, err := bson.ParseExtJSON(raw)
			if err != nil {
				return err
			}
			docs = append(docs, doc)
		}
		if _, err := c.RunCommand(ctx, d.DatabaseName, bson.D{{Key: "insert", Value: d.CollectionName}, {Key: "documents", Value: docs}}); err != nil {
			return err
		}
	}
	return nil
}

func (r *suRunner) createEntities(es []lsEntity) error {
	for _, e := range es {
		switch {
		case e.Client != nil:
			if len(e.Client.ObserveEvents) == 0 {
				// A fail-point or setup client: failPoint goes to
				// mongotest directly.
				continue
			}
			if err := r.createClient(e); err != nil {
				return fmt.Errorf("client %s: %w", e.Client.ID, err)
			}
		case e.Database != nil:
			r.dbs[e.Database.ID] = [2]string{e.Database.Client, e.Database.DatabaseName}
		case e.Collection != nil:
			// Only CRUD operations use collections; none runs here.
		default:
			return errors.New("unsupported entity")
		}
	}
	return nil
}

func (r *suRunner) createClient(e lsEntity) error {
	ce := e.Client
	uri, err := r.d.clientURI(ce, r.hasFail)
	if err != nil {
		return err
	}
	sc := &suClient{observe: map[string]bool{}}
	for _, name := range ce.ObserveEvents {
		sc.observe[name] = true
	}
	o := &ClientOptions{Monitors: []any{sc}}
	if err := o.ApplyURI(uri); err != nil {
		return err
	}
	c, err := Connect(context.Background(), o)
	if err != nil {
		return err
	}
	sc.c = c
	r.clients[ce.ID] = sc
	return nil
}

// eventArgs are the arguments of waitForEvent and assertEventCount.
type eventArgs struct {
	Client string                     `json:"client"`
	Event  map[string]json.RawMessage `json:"event"`
	Count  int                        `json:"count"`
}

func (r *suRunner) countEvents(a eventArgs) (int, *suClient, error) {
	c, ok := r.clients[a.Client]
	if !ok {
		return 0, nil, fmt.Errorf("no client %q", a.Client)
	}
	want, err := suParseExpected(a.Event)
	if err != nil {
		return 0, c, err
	}
	n := 0
	for _, e := range c.events() {
		if want.matches(e) {
			n++
		}
	}
	return n, c, nil
}

func (r *suRunner) operation(op lsOperation) error {
	// The unified format bounds waitForEvent by 10 s.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	switch op.Name {
	case "createEntities":
		var a struct {
			Entities []lsEntity `json:"entities"`
		}
		if err := json.Unmarshal(op.Arguments, &a); err != nil {
			return err
		}
		return r.createEntities(a.Entities)
	case "waitForEvent":
		var a eventArgs
		if err := json.Unmarshal(op.Arguments, &a); err != nil {
			return err
		}
		for {
			n, _, err := r.countEvents(a)
			if err != nil || n >= a.Count {
				return err
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("saw %d of %d events %v", n, a.Count, a.Event)
			case <-time.After(5 * time.Millisecond):
			}
		}
	case "assertEventCount":
		var a eventArgs
		if err := json.Unmarshal(op.Arguments, &a); err != nil {
			return err
		}
		n, _, err := r.countEvents(a)
		if err == nil && n != a.Count {
			err = fmt.Errorf("%d events %v, want %d", n, a.Event, a.Count)
		}
		return err
	case "failPoint":
		var a struct {
			FailPoint json.RawMessage `json:"failPoint"`
		}
		if err := json.Unmarshal(op.Arguments, &a); err != nil {
			return err
		}
		doc, err := bson.ParseExtJSON(a.FailPoint)
		if err != nil {
			return err
		}
		for _, s := range r.d.failPoint() {
			if err := s.SetFailPoint(doc); err != nil {
				return err
			}
		}
		return nil
	case "wait":
		var a struct {
			MS int `json:"ms"`
		}
		if err := json.Unmarshal(op.Arguments, &a); err != nil {
			return err
		}
		time.Sleep(time.Duration(a.MS) * time.Millisecond)
		return nil
	case "close":
		c, ok := r.clients[op.Object]
		if !ok {
			return fmt.Errorf("no client %q", op.Object)
		}
		c.closed = true
		return c.c.Disconnect(ctx)
	case "runCommand":
		var a struct {
			Command json.RawMessage `json:"command"`
		}
		if err := json.Unmarshal(op.Arguments, &a); err != nil {
			return err
		}
		db, ok := r.dbs[op.Object]
		if !ok {
			return fmt.Errorf("no database %q", op.Object)
		}
		c, ok := r.clients[db[0]]
		if !ok {
			return fmt.Errorf("no client %q", db[0])
		}
		cmd, err := bson.ParseExtJSON(a.Command)
		if err != nil {
			return err
		}
		_, err = c.c.RunCommand(ctx, db[1], cmd)
		switch {
		case op.ExpectError == nil && err != nil:
			return fmt.Errorf("unexpected error: %w", err)
		case op.ExpectError != nil && err == nil:
			return errors.New("succeeded, want an error")
		}
		return nil
	}
	return fmt.Errorf("operation %q is not supported by this runner", op.Name)
}

// TestSDAMUnifiedMatcher checks the runner's event expectations on their
// own, so a passing case means the events matched, not a lax matcher.
func TestSDAMUnifiedMatcher(t *testing.T) {
	tests := []struct {
		exp   string
		ev    suEvent
		match bool
		bad   bool
	}{
		{exp: `{"topologyDescriptionChangedEvent": {}}`, ev: suEvent{name: "topologyDescriptionChangedEvent", prev: "Unknown", newTyp: "Single"}, match: true},
		{exp: `{"topologyDescriptionChangedEvent": {"newDescription": {"type": "Unknown"}}}`, ev: suEvent{name: "topologyDescriptionChangedEvent", prev: "Unknown", newTyp: "Single"}},
		{exp: `{"topologyDescriptionChangedEvent": {"previousDescription": {"type": "Sharded"}, "newDescription": {}}}`, ev: suEvent{name: "topologyDescriptionChangedEvent", prev: "Sharded", newTyp: "Unknown"}, match: true},
		{exp: `{"serverDescriptionChangedEvent": {}}`, ev: suEvent{name: "topologyDescriptionChangedEvent"}},
		{exp: `{"poolClearedEvent": {"hasServiceId": true}}`, bad: true},
		{exp: `{"serverDescriptionChangedEvent": {"newDescription": {"setName": "rs"}}}`, bad: true},
		{exp: `{"a": {}, "b": {}}`, bad: true},
	}
	for _, tt := range tests {
		var ev map[string]json.RawMessage
		if err := json.Unmarshal([]byte(tt.exp), &ev); err != nil {
			t.Fatal(err)
		}
		x, err := suParseExpected(ev)
		if (err != nil) != tt.bad {
			t.Errorf("%s: error %v, want error %v", tt.exp, err, tt.bad)
			continue
		}
		if err == nil && x.matches(tt.ev) != tt.match {
			t.Errorf("%s matches %v: %v, want %v", tt.exp, tt.ev, !tt.match, tt.match)
		}
	}
}
