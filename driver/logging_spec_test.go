package driver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
	"github.com/mongoscope/mongoscope/driver/logging"
	"github.com/mongoscope/mongoscope/internal/spectest"
	"github.com/mongoscope/mongoscope/mongotest"
)

// The live logging spec runner: the logging tests of the unified test
// format are run against a real client connected to mongotest, and the
// messages the client logged are compared with expectLogMessages under the
// unified format's rules (order, ignoreMessages, ignoreExtraMessages, the
// $$ operators, root documents allowing extra fields). The formatting of
// each message on its own is driver/logging's spec test; this one
// checks which messages a client emits, in which order, with which data.
//
// Client entities that only configure fail points (failPointClient,
// setupClient) are not created: the failPoint operation configures the
// deployment's server directly through mongotest, which is what those
// clients would do.

// lsFile is one unified-format test file, with the parts this runner reads.
type lsFile struct {
	RunOnRequirements []lsRequirement `json:"runOnRequirements"`
	CreateEntities    []lsEntity      `json:"createEntities"`
	Tests             []lsTest        `json:"tests"`
}

type lsRequirement struct {
	Topologies       []string `json:"topologies"`
	MinServerVersion string   `json:"minServerVersion"`
	MaxServerVersion string   `json:"maxServerVersion"`
	Auth             *bool    `json:"auth"`
	Serverless       string   `json:"serverless"`
}

// lsClientEntity is a unified-format client entity.
type lsClientEntity struct {
	ID                  string                     `json:"id"`
	URIOptions          map[string]json.RawMessage `json:"uriOptions"`
	ObserveLogMessages  map[string]string          `json:"observeLogMessages"`
	ObserveEvents       []string                   `json:"observeEvents"`
	UseMultipleMongoses *bool                      `json:"useMultipleMongoses"`
	// ObserveSensitiveCommands keeps the events of sensitive commands,
	// which a client otherwise ignores (monitoring_spec_test.go).
	ObserveSensitiveCommands bool `json:"observeSensitiveCommands"`
}

type lsEntity struct {
	Client   *lsClientEntity `json:"client"`
	Database *struct {
		ID           string `json:"id"`
		Client       string `json:"client"`
		DatabaseName string `json:"databaseName"`
	} `json:"database"`
	Collection *struct {
		ID                string `json:"id"`
		Database          string `json:"database"`
		CollectionName    string `json:"collectionName"`
		CollectionOptions struct {
			ReadPreference *lsReadPref `json:"readPreference"`
		} `json:"collectionOptions"`
	} `json:"collection"`
	Session *struct {
		ID string `json:"id"`
	} `json:"session"`
}

type lsReadPref struct {
	Mode    string              `json:"mode"`
	TagSets []map[string]string `json:"tagSets"`
}

type lsTest struct {
	Description       string          `json:"description"`
	RunOnRequirements []lsRequirement `json:"runOnRequirements"`
	Operations        []lsOperation   `json:"operations"`
	ExpectLogMessages []struct {
		Client              string         `json:"client"`
		Messages            []lsExpMessage `json:"messages"`
		IgnoreMessages      []lsExpMessage `json:"ignoreMessages"`
		IgnoreExtraMessages bool           `json:"ignoreExtraMessages"`
	} `json:"expectLogMessages"`
}

type lsOperation struct {
	Name        string          `json:"name"`
	Object      string          `json:"object"`
	Arguments   json.RawMessage `json:"arguments"`
	ExpectError *struct {
		IsClientError *bool `json:"isClientError"`
	} `json:"expectError"`
}

type lsExpMessage struct {
	Level             string          `json:"level"`
	Component         string          `json:"component"`
	FailureIsRedacted *bool           `json:"failureIsRedacted"`
	Data              json.RawMessage `json:"data"`
}

// lsKnownSkips are the cases whose expected messages come from features
// this driver does not have yet, keyed by file and description.
var lsKnownSkips = map[string]string{
	"connection-logging.json/Create a client, run a command, and close the client":     "expects a second checkout and check-in at close for the endSessions command; the driver has no sessions yet, so sends none",
	"redacted-commands.json/network error in response to authenticate is not redacted": mongotestLacks("authenticate"),
	"redacted-commands.json/network error in response to createUser is not redacted":   mongotestLacks("createUser"),
	"redacted-commands.json/network error in response to updateUser is not redacted":   mongotestLacks("updateUser"),
}

// mongotestLacks is the skip reason of a case that needs a fail point on a
// command mongotest does not implement: like mongod, it answers an unknown
// command with CommandNotFound before consulting failCommand.
func mongotestLacks(cmd string) string {
	return "mongotest has no " + cmd + " command, so the failCommand fail point on it never fires (the server-error case of the same command runs)"
}

// lsUnsupportedOps are the operations the driver has no API for.
var lsUnsupportedOps = map[string]string{
	"bulkWrite":         "bulkWrite: the driver has no bulk write API yet",
	"clientBulkWrite":   "clientBulkWrite: the driver has no client bulk write API yet",
	"startTransaction":  "transactions: the driver has no sessions or transactions yet",
	"commitTransaction": "transactions: the driver has no sessions or transactions yet",
	"abortTransaction":  "transactions: the driver has no sessions or transactions yet",
}

func TestLoggingSpecLive(t *testing.T) {
	suites := []struct {
		name    string
		pattern string
		dir     []string
	}{
		{"connection-monitoring-and-pooling/logging", "*.json", []string{"connection-monitoring-and-pooling", "tests", "logging"}},
		{"server-selection/logging", "*.json", []string{"server-selection", "tests", "logging"}},
		{"command-logging-and-monitoring/logging", "*.json", []string{"command-logging-and-monitoring", "tests", "logging"}},
		{"server-discovery-and-monitoring/unified/logging", "logging-*.json", []string{"server-discovery-and-monitoring", "tests", "unified"}},
	}
	t.Cleanup(func() {
		// Every client was disconnected: none of the driver's goroutines
		// may outlive the test.
		deadline := time.Now().Add(2 * time.Second)
		for g := driverGoroutines(); len(g) > 0; g = driverGoroutines() {
			if time.Now().After(deadline) {
				t.Errorf("%d driver goroutines left:\n%s", len(g), strings.Join(g, "\n\n"))
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
	for _, su := range suites {
		t.Run(su.name, func(t *testing.T) {
			tally := spectest.NewTally(su.name + " (live client on mongotest)")
			defer tally.Log(t)
			type result struct {
				name, skip string
				failed     bool
			}
			var results []*result
			// The cases run in parallel (several wait out a 2 s server
			// selection timeout); the group returns once all have ended.
			t.Run("cases", func(t *testing.T) {
				for _, path := range spectest.Files(t, su.pattern, su.dir...) {
					b, err := os.ReadFile(path)
					if err != nil {
						t.Fatal(err)
					}
					var f lsFile
					if err := json.Unmarshal(b, &f); err != nil {
						t.Fatalf("%s: %v", path, err)
					}
					for _, tc := range f.Tests {
						name := filepath.Base(path) + "/" + tc.Description
						topo, reason := lsPlan(f, tc)
						if reason == "" {
							reason = lsKnownSkips[name]
						}
						if reason != "" {
							tally.Skip(t, name, reason)
							continue
						}
						r := &result{name: name}
						results = append(results, r)
						t.Run(name, func(t *testing.T) {
							t.Parallel()
							defer func() { r.failed = t.Failed() }()
							r.skip = lsRun(t, f, tc, topo)
							if r.skip != "" {
								t.Skip(r.skip)
							}
						})
					}
				}
			})
			for _, r := range results {
				switch {
				case r.failed:
					tally.Failed++
				case r.skip != "":
					tally.Skipped[r.skip]++
				default:
					tally.Passed++
				}
			}
		})
	}
}

// lsPlan picks the deployment a case runs on, or says why it cannot run.
func lsPlan(f lsFile, tc lsTest) (topology, skip string) {
	for _, op := range tc.Operations {
		if r, ok := lsUnsupportedOps[op.Name]; ok {
			return "", r
		}
		if bytes.Contains(op.Arguments, []byte(`"waitQueueSize"`)) || bytes.Contains(op.Arguments, []byte(`"waitQueueMultiple"`)) {
			return "", "waitQueueSize and waitQueueMultiple are deprecated pool options this driver does not support"
		}
	}
	if reason := lsHelloFailPoint(tc.Operations); reason != "" {
		return "", reason
	}
	reqs := append(append([]lsRequirement(nil), f.RunOnRequirements...), tc.RunOnRequirements...)
	topologies := []string{"single", "replicaset", "sharded", "load-balanced"}
	for _, r := range reqs {
		if r.MinServerVersion != "" && lsVersionLess(mongotest.DefaultVersion, r.MinServerVersion) {
			return "", "needs server " + r.MinServerVersion + ", mongotest reports " + mongotest.DefaultVersion
		}
		if r.MaxServerVersion != "" && lsVersionLess(r.MaxServerVersion, mongotest.DefaultVersion) {
			return "", "needs server at most " + r.MaxServerVersion
		}
		if r.Serverless == "require" {
			return "", "needs Atlas Serverless"
		}
		if len(r.Topologies) > 0 {
			var keep []string
			for _, want := range r.Topologies {
				if want == "sharded-replicaset" {
					want = "sharded"
				}
				for _, have := range topologies {
					if want == have {
						keep = append(keep, have)
					}
				}
			}
			topologies = keep
		}
	}
	if len(topologies) == 0 {
		return "", "no deployment mongotest can play meets the requirements"
	}
	return topologies[0], ""
}

// lsHelloFailPoint finds a fail point on hello that names some of hello's
// spellings but not "isMaster". mongod treats hello, isMaster and ismaster
// as one command for failCommand, so such a fail point fails every hello;
// mongotest matches the name as sent, and the driver's handshake (legacy
// hello, as the handshake specification requires without the Stable API)
// is sent as "isMaster", so the handshake would escape it.
func lsHelloFailPoint(ops []lsOperation) string {
	for _, op := range ops {
		if op.Name != "failPoint" {
			continue
		}
		var a struct {
			FailPoint struct {
				Data struct {
					FailCommands []string `json:"failCommands"`
				} `json:"data"`
			} `json:"failPoint"`
		}
		if json.Unmarshal(op.Arguments, &a) != nil {
			continue
		}
		hello, camel := false, false
		for _, c := range a.FailPoint.Data.FailCommands {
			switch c {
			case "hello", "ismaster":
				hello = true
			case "isMaster":
				camel = true
			}
		}
		if hello && !camel {
			return `the fail point names hello and ismaster but not isMaster: mongod fails all three spellings, mongotest only the names given, so the driver's isMaster handshake escapes it`
		}
	}
	return ""
}

// lsVersionLess compares "major.minor[.patch]" versions.
func lsVersionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < 3; i++ {
		var x, y int
		if i < len(pa) {
			fmt.Sscan(pa[i], &x)
		}
		if i < len(pb) {
			fmt.Sscan(pb[i], &y)
		}
		if x != y {
			return x < y
		}
	}
	return false
}

func lsNeedsAuth(f lsFile, tc lsTest) bool {
	for _, r := range append(append([]lsRequirement(nil), f.RunOnRequirements...), tc.RunOnRequirements...) {
		if r.Auth != nil && *r.Auth {
			return true
		}
	}
	return false
}

// lsDeployment is the mongotest deployment one case runs on.
type lsDeployment struct {
	topology string
	hosts    []string // what client URIs list
	params   []string // the deployment's own URI options
	creds    string   // "user:password@" when authentication is on
	// failPoint returns the servers a failPoint operation configures: the
	// ones a fail-point client would send configureFailPoint to.
	failPoint func() []*mongotest.Server
}

const (
	lsUser     = "logging-user"
	lsPassword = "pencil-Secret-42"
)

func lsStart(t *testing.T, topology string, auth bool) *lsDeployment {
	opts := mongotest.Options{Auth: auth}
	addUser := func(s interface {
		AddUser(db, user, pw string, mechs ...string) error
	}) {
		if auth {
			if err := s.AddUser("admin", lsUser, lsPassword); err != nil {
				t.Fatal(err)
			}
		}
	}
	d := &lsDeployment{topology: topology}
	if auth {
		d.creds = lsUser + ":" + lsPassword + "@"
		d.params = append(d.params, "authSource=admin")
	}
	switch topology {
	case "single", "load-balanced":
		if topology == "load-balanced" {
			opts.Topology.Role = mongotest.RoleLoadBalanced
			d.params = append(d.params, "loadBalanced=true")
		}
		s := mongotest.NewServer(t, opts)
		addUser(s)
		d.hosts = []string{s.Addr()}
		d.failPoint = func() []*mongotest.Server { return []*mongotest.Server{s} }
	case "sharded":
		opts.Topology.Role = mongotest.RoleMongos
		a, b := mongotest.NewServer(t, opts), mongotest.NewServer(t, opts)
		addUser(a)
		addUser(b)
		d.hosts = []string{a.Addr(), b.Addr()}
		// A client limited to one mongos uses the first; so does the
		// fail-point client.
		d.failPoint = func() []*mongotest.Server { return []*mongotest.Server{a} }
	case "replicaset":
		rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{Options: opts})
		addUser(rs)
		for _, m := range rs.Members() {
			d.hosts = append(d.hosts, m.Addr())
		}
		d.params = append(d.params, "replicaSet="+rs.Name())
		d.failPoint = func() []*mongotest.Server { return []*mongotest.Server{rs.Primary()} }
	default:
		t.Fatalf("no deployment for topology %q", topology)
	}
	return d
}

// lsClient is a client entity: the client, what it logged, and the
// events waitForEvent counts.
type lsClient struct {
	c      *Client
	logs   *lsHandler
	events *eventtest.Recorder // every event, for waitForEvent
	cmds   *eventtest.Recorder // the observed command events, for expectEvents
	closed bool
}

type lsRunner struct {
	t       *testing.T
	d       *lsDeployment
	hasFail bool
	clients map[string]*lsClient
	dbs     map[string][2]string // id -> client id, database name
	colls   map[string]lsColl
}

type lsColl struct {
	db, name string
	rp       *lsReadPref
}

// lsRun runs one case; a non-empty result is why it was skipped.
func lsRun(t *testing.T, f lsFile, tc lsTest, topology string) string {
	r := &lsRunner{
		t: t, d: lsStart(t, topology, lsNeedsAuth(f, tc)),
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
	if err := r.createEntities(f.CreateEntities); err != nil {
		t.Fatal(err)
	}
	for i, op := range tc.Operations {
		skip, err := r.operation(op)
		if skip != "" {
			return skip
		}
		if err != nil {
			t.Fatalf("operation %d (%s): %v", i, op.Name, err)
		}
	}
	// Messages are collected while the operations run; heartbeats that
	// arrive afterwards are not part of the test.
	logged := map[string][]lsLogged{}
	for id, c := range r.clients {
		logged[id] = c.logs.take()
	}
	for _, exp := range tc.ExpectLogMessages {
		got, ok := logged[exp.Client]
		if !ok {
			t.Fatalf("expectLogMessages names client %q, which observes no log messages", exp.Client)
		}
		var kept []lsLogged
	next:
		for _, m := range got {
			for _, ig := range exp.IgnoreMessages {
				if lsMatchMessage(ig, m) == nil {
					continue next
				}
			}
			kept = append(kept, m)
		}
		for i, want := range exp.Messages {
			if i >= len(kept) {
				t.Errorf("client %s: message %d %s missing; got %d messages:\n%s", exp.Client, i, want.Data, len(kept), lsDump(kept))
				break
			}
			if err := lsMatchMessage(want, kept[i]); err != nil {
				t.Errorf("client %s: message %d: %v\nwant %s\ngot  %s\nall messages:\n%s", exp.Client, i, err, want.Data, kept[i], lsDump(kept))
				break
			}
		}
		if !exp.IgnoreExtraMessages && len(kept) > len(exp.Messages) {
			t.Errorf("client %s: %d extra messages after the %d expected:\n%s", exp.Client, len(kept)-len(exp.Messages), len(exp.Messages), lsDump(kept[len(exp.Messages):]))
		}
	}
	return ""
}

func lsDump(ms []lsLogged) string {
	var b strings.Builder
	for i, m := range ms {
		fmt.Fprintf(&b, "  %d: %s\n", i, m)
	}
	return b.String()
}

func (r *lsRunner) createEntities(es []lsEntity) error {
	for _, e := range es {
		switch {
		case e.Client != nil:
			if len(e.Client.ObserveLogMessages) == 0 && len(e.Client.ObserveEvents) == 0 {
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
			r.colls[e.Collection.ID] = lsColl{db: e.Collection.Database, name: e.Collection.CollectionName, rp: e.Collection.CollectionOptions.ReadPreference}
		case e.Session != nil:
			// The driver has no sessions: the cases that use one are
			// skipped (lsUnsupportedOps), the others never name it.
		default:
			return errors.New("unsupported entity")
		}
	}
	return nil
}

func (r *lsRunner) createClient(e lsEntity) error {
	ce := e.Client
	uri, err := r.d.clientURI(ce, r.hasFail)
	if err != nil {
		return err
	}
	levels := map[logging.Component]logging.Level{}
	for _, c := range []logging.Component{logging.ComponentCommand, logging.ComponentTopology, logging.ComponentServerSelection, logging.ComponentConnection} {
		levels[c] = logging.LevelOff
	}
	for comp, lv := range ce.ObserveLogMessages {
		l, err := logging.ParseLevel(lv)
		if err != nil {
			return err
		}
		levels[logging.Component(comp)] = l
	}
	h := &lsHandler{rec: &lsRecords{}}
	ev := &eventtest.Recorder{}
	cmds := msCommands(ce.ObserveEvents, ce.ObserveSensitiveCommands)
	o := &ClientOptions{
		// The command logging tests' README asks for a large max document
		// length (10,000) when running the logging tests, so replies come
		// whole and $$matchAsDocument can parse them.
		Logging:  &logging.Options{Handler: h, Levels: levels, MaxDocumentLength: 10000, Getenv: func(string) string { return "" }},
		Monitors: []any{ev, cmds},
	}
	if err := o.ApplyURI(uri); err != nil {
		return err
	}
	c, err := Connect(context.Background(), o)
	if err != nil {
		return err
	}
	r.clients[ce.ID] = &lsClient{c: c, logs: h, events: ev, cmds: cmds}
	return nil
}

// operation runs one operation; a non-empty skip says why the case cannot
// go on.
func (r *lsRunner) operation(op lsOperation) (skip string, err error) {
	if s, ok := lsUnsupportedOps[op.Name]; ok {
		return s, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	switch op.Name {
	case "createEntities":
		var a struct {
			Entities []lsEntity `json:"entities"`
		}
		if err := json.Unmarshal(op.Arguments, &a); err != nil {
			return "", err
		}
		return "", r.createEntities(a.Entities)
	case "waitForEvent":
		var a struct {
			Client string                     `json:"client"`
			Event  map[string]json.RawMessage `json:"event"`
			Count  int                        `json:"count"`
		}
		if err := json.Unmarshal(op.Arguments, &a); err != nil {
			return "", err
		}
		c, ok := r.clients[a.Client]
		if !ok {
			return "", fmt.Errorf("no client %q", a.Client)
		}
		return "", lsWaitForEvent(ctx, c.events, a.Event, a.Count)
	case "failPoint":
		var a struct {
			FailPoint json.RawMessage `json:"failPoint"`
		}
		if err := json.Unmarshal(op.Arguments, &a); err != nil {
			return "", err
		}
		doc, err := bson.ParseExtJSON(a.FailPoint)
		if err != nil {
			return "", err
		}
		for _, s := range r.d.failPoint() {
			if err := s.SetFailPoint(doc); err != nil {
				return "", err
			}
		}
		return "", nil
	case "close":
		c, ok := r.clients[op.Object]
		if !ok {
			return "", fmt.Errorf("no client %q", op.Object)
		}
		c.closed = true
		return "", c.c.Disconnect(ctx)
	case "runCommand":
		var a struct {
			Command json.RawMessage `json:"command"`
		}
		if err := json.Unmarshal(op.Arguments, &a); err != nil {
			return "", err
		}
		cmd, err := bson.ParseExtJSON(a.Command)
		if err != nil {
			return "", err
		}
		dbe, ok := r.dbs[op.Object]
		if !ok {
			return "", fmt.Errorf("no database %q", op.Object)
		}
		c, ok := r.clients[dbe[0]]
		if !ok {
			return "", fmt.Errorf("no client %q", dbe[0])
		}
		_, err = c.c.RunCommand(ctx, dbe[1], cmd)
		return "", lsExpectError(op, err)
	case "insertOne", "find", "listDatabases":
		var a struct {
			Document json.RawMessage `json:"document"`
			Filter   json.RawMessage `json:"filter"`
		}
		if len(op.Arguments) > 0 {
			if err := json.Unmarshal(op.Arguments, &a); err != nil {
				return "", err
			}
		}
		if len(a.Filter) == 0 {
			a.Filter = json.RawMessage("{}")
		}
		filter, err := bson.ParseExtJSON(a.Filter)
		if err != nil {
			return "", err
		}
		var clientID, db string
		var cmd bson.D
		var ro *RunCommandOptions
		if op.Name == "listDatabases" {
			clientID, db = op.Object, "admin"
			cmd = bson.D{{Key: "listDatabases", Value: 1}, {Key: "filter", Value: filter}}
		} else {
			coll, ok := r.colls[op.Object]
			if !ok {
				return "", fmt.Errorf("no collection %q", op.Object)
			}
			dbe := r.dbs[coll.db]
			clientID, db = dbe[0], dbe[1]
			if op.Name == "insertOne" {
				doc, err := bson.ParseExtJSON(a.Document)
				if err != nil {
					return "", err
				}
				cmd = bson.D{{Key: "insert", Value: coll.name}, {Key: "documents", Value: bson.A{doc}}}
			} else {
				cmd = bson.D{{Key: "find", Value: coll.name}, {Key: "filter", Value: filter}}
				if coll.rp != nil {
					ro = &RunCommandOptions{ReadPreference: coll.rp.Mode, ReadPreferenceTags: coll.rp.TagSets}
				}
			}
		}
		c, ok := r.clients[clientID]
		if !ok {
			return "", fmt.Errorf("no client %q", clientID)
		}
		_, err = c.c.RunCommand(ctx, db, cmd, ro)
		return "", lsExpectError(op, err)
	}
	return "", fmt.Errorf("operation %q on %q is not supported by this runner", op.Name, op.Object)
}

// lsExpectError checks an operation's error against its expectError.
func lsExpectError(op lsOperation, err error) error {
	switch {
	case op.ExpectError == nil && err != nil:
		return fmt.Errorf("unexpected error: %w", err)
	case op.ExpectError != nil && err == nil:
		return errors.New("succeeded, want an error")
	case op.ExpectError != nil && op.ExpectError.IsClientError != nil:
		var ce *CommandError
		if isClient := !errors.As(err, &ce); isClient != *op.ExpectError.IsClientError {
			return fmt.Errorf("error %v: client error %v, want %v", err, isClient, *op.ExpectError.IsClientError)
		}
	}
	return nil
}

// lsEvent is an SDAM or CMAP event as waitForEvent counts it.
type lsEvent struct {
	name    string // the unified format's event name
	newKind string // serverDescriptionChangedEvent's new server type
}

// lsEventOf names a recorded event in the unified format's terms; false
// for the events waitForEvent does not count.
func lsEventOf(e any) (lsEvent, bool) {
	switch e := e.(type) {
	case *event.ServerDescriptionChanged:
		return lsEvent{name: "serverDescriptionChangedEvent", newKind: e.New.Kind}, true
	case *event.TopologyDescriptionChanged:
		return lsEvent{name: "topologyDescriptionChangedEvent"}, true
	case *event.ServerHeartbeatStarted:
		return lsEvent{name: "serverHeartbeatStartedEvent"}, true
	case *event.ServerHeartbeatSucceeded:
		return lsEvent{name: "serverHeartbeatSucceededEvent"}, true
	case *event.ServerHeartbeatFailed:
		return lsEvent{name: "serverHeartbeatFailedEvent"}, true
	case *event.PoolReady:
		return lsEvent{name: "poolReadyEvent"}, true
	case *event.PoolCleared:
		return lsEvent{name: "poolClearedEvent"}, true
	case *event.ConnectionReady:
		return lsEvent{name: "connectionReadyEvent"}, true
	}
	return lsEvent{}, false
}

// lsWaitForEvent waits until rec holds count events that match the
// expected event, or fails when ctx's deadline (10 s, the unified format's
// limit) passes.
func lsWaitForEvent(ctx context.Context, rec *eventtest.Recorder, want map[string]json.RawMessage, count int) error {
	if len(want) != 1 {
		return fmt.Errorf("waitForEvent wants one event, got %d", len(want))
	}
	var name string
	var filter struct {
		NewDescription *struct {
			Type string `json:"type"`
		} `json:"newDescription"`
	}
	for k, v := range want {
		name = k
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&filter); err != nil {
			return fmt.Errorf("event %s: unsupported filter %s: %v", k, v, err)
		}
	}
	timeout := 10 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	n := 0
	if rec.Wait(timeout, func(evs []any) bool {
		n = 0
		for _, e := range evs {
			if le, ok := lsEventOf(e); ok && le.name == name && (filter.NewDescription == nil || filter.NewDescription.Type == le.newKind) {
				n++
			}
		}
		return n >= count
	}) {
		return nil
	}
	return fmt.Errorf("saw %d of %d %s events %s", n, count, name, want[name])
}

// lsLogged is one message a client logged: its slog level and message,
// and its attributes with their Go types (string, int64, float64, bool).
type lsLogged struct {
	level slog.Level
	msg   string
	attrs map[string]any
}

func (m lsLogged) String() string {
	keys := make([]string, 0, len(m.attrs))
	for k := range m.attrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] %q", logging.LevelName(m.level), m.msg)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%#v", k, m.attrs[k])
	}
	return b.String()
}

// lsHandler is an slog handler that keeps every record, whatever its
// level: the sink's component levels do the filtering.
type lsHandler struct {
	rec    *lsRecords
	attrs  []slog.Attr
	prefix string
}

type lsRecords struct {
	mu   sync.Mutex
	msgs []lsLogged
}

func (h *lsHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *lsHandler) Handle(_ context.Context, r slog.Record) error {
	m := lsLogged{level: r.Level, msg: r.Message, attrs: map[string]any{}}
	add := func(a slog.Attr) bool {
		v := a.Value.Resolve()
		var x any
		switch v.Kind() {
		case slog.KindString:
			x = v.String()
		case slog.KindInt64:
			x = v.Int64()
		case slog.KindUint64:
			x = int64(v.Uint64())
		case slog.KindFloat64:
			x = v.Float64()
		case slog.KindBool:
			x = v.Bool()
		default:
			x = v.String()
		}
		m.attrs[h.prefix+a.Key] = x
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	h.rec.mu.Lock()
	h.rec.msgs = append(h.rec.msgs, m)
	h.rec.mu.Unlock()
	return nil
}

func (h *lsHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), as...)
	return &c
}

func (h *lsHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.prefix = h.prefix + name + "."
	return &c
}

func (h *lsHandler) take() []lsLogged {
	h.rec.mu.Lock()
	defer h.rec.mu.Unlock()
	return append([]lsLogged(nil), h.rec.msgs...)
}

// lsMatchMessage matches one logged message against an expectedLogMessage.
func lsMatchMessage(want lsExpMessage, got lsLogged) error {
	lv, err := logging.ParseLevel(want.Level)
	if err != nil {
		return err
	}
	if got.level != lv.SlogLevel() {
		return fmt.Errorf("level %s, want %s", logging.LevelName(got.level), want.Level)
	}
	if got.attrs["component"] != want.Component {
		return fmt.Errorf("component %v, want %s", got.attrs["component"], want.Component)
	}
	exp, err := lsDecode(want.Data)
	if err != nil {
		return err
	}
	data, ok := exp.(map[string]any)
	if !ok {
		return fmt.Errorf("data is %T, not a document", exp)
	}
	actual := make(map[string]any, len(got.attrs)+1)
	for k, v := range got.attrs {
		actual[k] = v
	}
	actual["message"] = got.msg
	if err := lsMatch("data", data, actual, true); err != nil {
		return err
	}
	if want.FailureIsRedacted != nil {
		f, present := actual["failure"]
		if !present {
			return errors.New("failure missing")
		}
		if redacted := f == ""; redacted != *want.FailureIsRedacted {
			return fmt.Errorf("failure %q: redacted %v, want %v", f, redacted, *want.FailureIsRedacted)
		}
	}
	return nil
}

func lsDecode(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// lsMatch applies the unified format's matching rules: want may hold
// $$exists, $$type, $$matchAsDocument and $$matchAsRoot; documents at the
// root may have extra fields, nested ones may not; numbers compare by value.
func lsMatch(path string, want, got any, root bool) error {
	if w, ok := want.(map[string]any); ok {
		if len(w) == 1 {
			for k, arg := range w {
				if strings.HasPrefix(k, "$$") {
					return lsOperator(path, k, arg, got)
				}
			}
		}
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("%s = %#v, want a document", path, got)
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			wv := w[k]
			gv, present := g[k]
			if op, isOp := wv.(map[string]any); isOp && len(op) == 1 {
				if e, ok := op["$$exists"]; ok {
					if want := e == true; want != present {
						return fmt.Errorf("%s.%s: present %v, want %v", path, k, present, want)
					}
					continue
				}
			}
			if !present {
				return fmt.Errorf("%s.%s missing", path, k)
			}
			if err := lsMatch(path+"."+k, wv, gv, false); err != nil {
				return err
			}
		}
		if !root {
			for k := range g {
				if _, ok := w[k]; !ok {
					return fmt.Errorf("%s has extra field %q", path, k)
				}
			}
		}
		return nil
	}
	if w, ok := want.([]any); ok {
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Errorf("%s = %#v, want %d elements", path, got, len(w))
		}
		for i := range w {
			if err := lsMatch(fmt.Sprintf("%s.%d", path, i), w[i], g[i], false); err != nil {
				return err
			}
		}
		return nil
	}
	if wn, ok := lsNumber(want); ok {
		if gn, ok := lsNumber(got); ok && gn == wn {
			return nil
		}
		return fmt.Errorf("%s = %#v, want %v", path, got, want)
	}
	if want != got {
		return fmt.Errorf("%s = %#v, want %#v", path, got, want)
	}
	return nil
}

func lsOperator(path, op string, arg, got any) error {
	switch op {
	case "$$type":
		var types []string
		switch a := arg.(type) {
		case string:
			types = []string{a}
		case []any:
			for _, x := range a {
				s, _ := x.(string)
				types = append(types, s)
			}
		}
		for _, ty := range types {
			if lsHasType(got, ty) {
				return nil
			}
		}
		return fmt.Errorf("%s = %#v, want type %v", path, got, types)
	case "$$matchAsDocument":
		s, ok := got.(string)
		if !ok {
			return fmt.Errorf("%s = %#v, want an Extended JSON string", path, got)
		}
		doc, err := lsDecode([]byte(s))
		if err != nil {
			return fmt.Errorf("%s = %q is not a document: %v", path, s, err)
		}
		if m, ok := arg.(map[string]any); ok && len(m) == 1 && m["$$matchAsRoot"] != nil {
			return lsMatch(path, m["$$matchAsRoot"], doc, true)
		}
		return lsMatch(path, arg, doc, false)
	case "$$matchAsRoot":
		return lsMatch(path, arg, got, true)
	}
	return fmt.Errorf("%s: operator %s is not supported by this runner", path, op)
}

// lsHasType tells whether a logged value is of a unified-format type. Go's
// slog has one integer kind: an int64 is a "long", and an "int" too when
// it fits 32 bits.
func lsHasType(v any, ty string) bool {
	switch x := v.(type) {
	case string:
		return ty == "string"
	case bool:
		return ty == "bool"
	case float64:
		return ty == "double"
	case int64:
		return ty == "long" || ty == "int" && x >= math.MinInt32 && x <= math.MaxInt32
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			return ty == "double"
		}
		n, err := x.Int64()
		return err == nil && (ty == "long" || ty == "int" && n >= math.MinInt32 && n <= math.MaxInt32)
	case map[string]any:
		return ty == "object"
	case []any:
		return ty == "array"
	case nil:
		return ty == "null"
	}
	return false
}

func lsNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// TestLoggingSpecMatcher checks the runner's matching rules on their own,
// so a passing spec case means the messages matched, not a lax matcher.
func TestLoggingSpecMatcher(t *testing.T) {
	logged := lsLogged{level: slog.LevelDebug, msg: "Server heartbeat succeeded", attrs: map[string]any{
		"component": "topology", "serverHost": "127.0.0.1", "serverPort": int64(27017), "durationMS": 1.5,
		"awaited": false, "reply": `{"ok": 1.0, "me": "x"}`, "big": int64(1) << 40,
	}}
	tests := []struct {
		name, level, component, data string
		ok                           bool
	}{
		{"types and extra root fields", "debug", "topology", `{"message": "Server heartbeat succeeded", "serverHost": {"$$type": "string"}, "serverPort": {"$$type": ["int", "long"]}, "durationMS": {"$$type": "double"}}`, true},
		{"wrong message", "debug", "topology", `{"message": "Server heartbeat failed"}`, false},
		{"wrong level", "info", "topology", `{"message": "Server heartbeat succeeded"}`, false},
		{"wrong component", "debug", "connection", `{"message": "Server heartbeat succeeded"}`, false},
		{"missing field", "debug", "topology", `{"message": "Server heartbeat succeeded", "failure": {"$$exists": true}}`, false},
		{"absent field", "debug", "topology", `{"message": "Server heartbeat succeeded", "failure": {"$$exists": false}}`, true},
		{"present field said absent", "debug", "topology", `{"message": "Server heartbeat succeeded", "awaited": {"$$exists": false}}`, false},
		{"wrong type", "debug", "topology", `{"message": "Server heartbeat succeeded", "serverPort": {"$$type": "string"}}`, false},
		{"int64 beyond int32 is no int", "debug", "topology", `{"message": "Server heartbeat succeeded", "big": {"$$type": "int"}}`, false},
		{"literal number", "debug", "topology", `{"message": "Server heartbeat succeeded", "serverPort": 27017}`, true},
		{"wrong literal", "debug", "topology", `{"message": "Server heartbeat succeeded", "serverPort": 27018}`, false},
		{"matchAsRoot allows extra fields", "debug", "topology", `{"message": "Server heartbeat succeeded", "reply": {"$$matchAsDocument": {"$$matchAsRoot": {"ok": 1}}}}`, true},
		{"matchAsDocument alone does not", "debug", "topology", `{"message": "Server heartbeat succeeded", "reply": {"$$matchAsDocument": {"ok": 1}}}`, false},
		{"matchAsDocument on a non-document", "debug", "topology", `{"message": "Server heartbeat succeeded", "serverHost": {"$$matchAsDocument": {}}}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := lsMatchMessage(lsExpMessage{Level: tc.level, Component: tc.component, Data: json.RawMessage(tc.data)}, logged)
			if (err == nil) != tc.ok {
				t.Errorf("match = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// uriOptionValue writes a unified-format uriOptions value as a URI would
// carry it: numbers as integers where they are whole (a JSON 1000000 is
// "1000000", never "1e+06"), booleans and strings as they are.
func uriOptionValue(raw json.RawMessage) (string, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return "", err
	}
	return fmt.Sprint(v), nil
}

// clientURI is the connection string of a unified-format client entity on
// d: its uriOptions (numbers written as integers) after the deployment's
// own parameters, one mongos when useMultipleMongoses is false, and
// heartbeatFrequencyMS=500 when the test configures a fail point and the
// client sets no heartbeat, as the unified format lets a runner do, so
// the monitor meets the fail point at its next check, not 10 s on.
func (d *lsDeployment) clientURI(ce *lsClientEntity, hasFail bool) (string, error) {
	hosts := d.hosts
	if d.topology == "sharded" && ce.UseMultipleMongoses != nil && !*ce.UseMultipleMongoses {
		hosts = hosts[:1]
	}
	params := append([]string(nil), d.params...)
	keys := make([]string, 0, len(ce.URIOptions))
	for k := range ce.URIOptions {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	hasHeartbeat := false
	for _, k := range keys {
		v, err := uriOptionValue(ce.URIOptions[k])
		if err != nil {
			return "", err
		}
		if strings.EqualFold(k, "heartbeatFrequencyMS") {
			hasHeartbeat = true
		}
		params = append(params, k+"="+url.QueryEscape(v))
	}
	if hasFail && !hasHeartbeat {
		params = append(params, "heartbeatFrequencyMS=500")
	}
	uri := "mongodb://" + d.creds + strings.Join(hosts, ",") + "/"
	if len(params) > 0 {
		uri += "?" + strings.Join(params, "&")
	}
	return uri, nil
}
