package unified

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
)

func TestCheckSchemaVersion(t *testing.T) {
	tests := []struct {
		v  string
		ok bool
	}{
		{"1.0", true}, {"1", true}, {"1.28", true}, {"1.28.0", true}, {"1.13", true},
		{"1.29", false}, {"1.28.1", false}, {"2.0", false}, {"0.1", false},
		{"1.2.3.4", false}, {"1.x", false}, {"", false}, {"-1.0", false},
	}
	for _, tt := range tests {
		err := checkSchemaVersion(tt.v)
		if (err == nil) != tt.ok {
			t.Errorf("checkSchemaVersion(%q) = %v, want ok=%v", tt.v, err, tt.ok)
		}
	}
	if err := checkSchemaVersion("2.0"); err == nil || !strings.Contains(err.Error(), "major version") {
		t.Errorf("a newer major must be refused for its major version, got %v", err)
	}
}

func TestParseServerVersion(t *testing.T) {
	tests := []struct {
		s    string
		want version
	}{
		{"4.9.0-alpha4-271-g7d5cf02", version{4, 9, 0}},
		{"8.0.0-rc1", version{8, 0, 0}},
		{"4.4", version{4, 4, 0}},
		{"7", version{7, 0, 0}},
	}
	for _, tt := range tests {
		got, err := parseVersion(tt.s, false)
		if err != nil || got != tt.want {
			t.Errorf("parseVersion(%q) = %v, %v; want %v", tt.s, got, err, tt.want)
		}
	}
	if !(version{4, 0, 9}).less(version{4, 0, 10}) || (version{4, 2, 0}).less(version{3, 6, 0}) {
		t.Error("versions must compare component by component, numerically")
	}
}

func mustDoc(t *testing.T, s string) bson.Raw {
	t.Helper()
	d, err := bson.ParseExtJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestApplyURIOptions(t *testing.T) {
	tests := []struct {
		name, base, opts string
		fast             bool
		want             string
		minPool          int
	}{
		{"none", "mongodb://a:1/", `{}`, false, "mongodb://a:1/", 0},
		{"override keeps the rest", "mongodb://a:1,b:2/?replicaSet=rs0&appname=x", `{"appName": "y", "retryWrites": false}`, false,
			"mongodb://a:1,b:2/?replicaSet=rs0&appName=y&retryWrites=false", 0},
		{"whole doubles are integers", "mongodb://a:1/", `{"maxIdleTimeMS": 1000000.0, "minPoolSize": 3}`, false,
			"mongodb://a:1/?maxIdleTimeMS=1000000&minPoolSize=3", 3},
		{"readPreferenceTags repeat", "mongodb://a:1/", `{"readPreference": "secondary", "readPreferenceTags": ["dc:ny", ""]}`, false,
			"mongodb://a:1/?readPreference=secondary&readPreferenceTags=dc%3Any&readPreferenceTags=", 0},
		{"directConnection keeps one seed and no replicaSet", "mongodb://u:p@a:1,b:2/?replicaSet=rs0&authSource=admin", `{"directConnection": true}`, false,
			"mongodb://u:p@a:1/?authSource=admin&directConnection=true", 0},
		{"fail points speed heartbeats up", "mongodb://a:1/", `{"appname": "z"}`, true,
			"mongodb://a:1/?appname=z&heartbeatFrequencyMS=500", 0},
		{"but not a client that sets its own", "mongodb://a:1/", `{"heartbeatFrequencyMS": 10000}`, true,
			"mongodb://a:1/?heartbeatFrequencyMS=10000", 0},
		{"authMechanismProperties", "mongodb://a:1/", `{"authMechanismProperties": {"SERVICE_NAME": "m"}}`, false,
			"mongodb://a:1/?authMechanismProperties=SERVICE_NAME%3Am", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, minPool, err := applyURIOptions(tt.base, mustDoc(t, tt.opts), tt.fast)
			if err != nil || got != tt.want || minPool != tt.minPool {
				t.Errorf("got %q, %d, %v; want %q, %d", got, minPool, err, tt.want, tt.minPool)
			}
		})
	}
	_, _, err := applyURIOptions("mongodb://a:1/", mustDoc(t, `{"authMechanismProperties": {"ENVIRONMENT": {"$$placeholder": 1}}}`), false)
	var se *skipError
	if !errors.As(err, &se) {
		t.Errorf("a $$placeholder must skip the test, got %v", err)
	}
}

func TestRequirements(t *testing.T) {
	reqs, err := parseRequirements(mustDoc(t, `{"r": [{"topologies": ["replicaset", "sharded-replicaset"], "auth": true}, {"topologies": ["single"]}]}`).Lookup("r"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		topo string
		auth bool
		want bool
	}{
		{"replicaset", true, true}, {"replicaset", false, false}, {"sharded", true, true},
		{"single", false, true}, {"single", true, true}, {"load-balanced", false, false},
	}
	for _, tt := range tests {
		if got := staticallyMet(reqs, tt.topo, tt.auth); got != tt.want {
			t.Errorf("staticallyMet(%s, auth %v) = %v, want %v", tt.topo, tt.auth, got, tt.want)
		}
	}
	if !wantsAuth(nil, reqs) || wantsAuth(reqs[1:]) {
		t.Error("wantsAuth must see auth: true and only it")
	}
	for _, bad := range []string{`{"r": []}`, `{"r": [{"minServerVersion": "4.x"}]}`, `{"r": [{"unknown": 1}]}`, `{"r": {}}`} {
		if _, err := parseRequirements(mustDoc(t, bad).Lookup("r")); err == nil {
			t.Errorf("%s: want an error", bad)
		}
	}
}

func TestMatchEvent(t *testing.T) {
	started := recEvent{kind: "command", name: "commandStartedEvent", doc: mustDoc(t,
		`{"commandName": "insert", "databaseName": "db", "command": {"insert": "c", "documents": [{"_id": 1}], "lsid": {"id": 1}}, "hasServiceId": false, "hasServerConnectionId": true}`)}
	changed := recEvent{kind: "sdam", name: "serverDescriptionChangedEvent", doc: mustDoc(t,
		`{"address": "a:1", "previousDescription": {"type": "Unknown"}, "newDescription": {"type": "RSPrimary"}}`)}
	pool := recEvent{kind: "cmap", name: "poolClearedEvent", doc: mustDoc(t, `{"hasServiceId": false, "interruptInUseConnections": true}`)}
	tests := []struct {
		name, exp string
		got       recEvent
		want      string // "" match, "mismatch", "invalid"
	}{
		{"command is a root document", `{"commandStartedEvent": {"command": {"insert": "c"}, "commandName": "insert"}}`, started, ""},
		{"nested documents allow no extra fields", `{"commandStartedEvent": {"command": {"documents": [{}]}}}`, started, "mismatch"},
		{"wrong database", `{"commandStartedEvent": {"databaseName": "other"}}`, started, "mismatch"},
		{"hasServerConnectionId", `{"commandStartedEvent": {"hasServerConnectionId": false}}`, started, "mismatch"},
		{"other event", `{"commandSucceededEvent": {}}`, started, "mismatch"},
		{"field the format does not define", `{"commandStartedEvent": {"requestId": 1}}`, started, "invalid"},
		{"unknown event", `{"commandDoneEvent": {}}`, started, "invalid"},
		{"two keys", `{"commandStartedEvent": {}, "poolReadyEvent": {}}`, started, "invalid"},
		{"description types", `{"serverDescriptionChangedEvent": {"previousDescription": {"type": "Unknown"}, "newDescription": {"type": "RSPrimary"}}}`, changed, ""},
		{"wrong new type", `{"serverDescriptionChangedEvent": {"newDescription": {"type": "RSSecondary"}}}`, changed, "mismatch"},
		{"interruptInUseConnections", `{"poolClearedEvent": {"interruptInUseConnections": true, "hasServiceId": false}}`, pool, ""},
		{"cmap event that must be empty", `{"poolReadyEvent": {"address": "a"}}`, recEvent{name: "poolReadyEvent", doc: mustDoc(t, `{}`)}, "invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := matchEvent(mustDoc(t, tt.exp), tt.got, nil, "e")
			var ie *InvalidTestError
			got := ""
			switch {
			case errors.As(err, &ie):
				got = "invalid"
			case err != nil:
				got = "mismatch"
			}
			if got != tt.want {
				t.Errorf("matchEvent = %v (%q), want %q", err, got, tt.want)
			}
		})
	}
}

func TestMatchLogMessage(t *testing.T) {
	failure := ""
	msg := logMessage{level: slog.LevelDebug, component: "command", failure: &failure, data: mustDoc(t,
		`{"message": "Command failed", "component": "command", "commandName": "find", "serverPort": 27017, "failure": ""}`)}
	tests := []struct {
		name, exp string
		ok        bool
	}{
		{"extra data fields are allowed", `{"level": "debug", "component": "command", "data": {"message": "Command failed", "commandName": "find"}}`, true},
		{"level", `{"level": "info", "component": "command", "data": {}}`, false},
		{"component", `{"level": "debug", "component": "topology", "data": {}}`, false},
		{"data", `{"level": "debug", "component": "command", "data": {"commandName": "insert"}}`, false},
		{"operators", `{"level": "debug", "component": "command", "data": {"serverPort": {"$$type": ["int", "long"]}, "serverHost": {"$$exists": false}}}`, true},
		{"failure redacted", `{"level": "debug", "component": "command", "failureIsRedacted": true, "data": {}}`, true},
		{"failure not redacted", `{"level": "debug", "component": "command", "failureIsRedacted": false, "data": {}}`, false},
		{"unknown field", `{"level": "debug", "component": "command", "data": {}, "extra": 1}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := matchLogMessage(mustDoc(t, tt.exp), msg, nil, "m")
			if (err == nil) != tt.ok {
				t.Errorf("matchLogMessage = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

func TestRegistry(t *testing.T) {
	// Every registered operation is a known one, so that a typo in a
	// registration cannot hide a test behind "not implemented".
	for kind, ops := range entityOps {
		for name := range ops {
			if !isKnown(kind, name) {
				t.Errorf("operation %s.%s is registered but not in knownOps", kind, name)
			}
		}
	}
	implemented, missing := knownOperations()
	if len(implemented["collection"]) == 0 || len(missing["collection"]) == 0 {
		t.Errorf("implemented %v, missing %v", implemented, missing)
	}
	for _, name := range []string{"failPoint", "targetedFailPoint", "assertSessionPinned", "assertSessionUnpinned",
		"assertSessionDirty", "assertSessionNotDirty", "assertSessionTransactionState", "assertCollectionExists",
		"assertCollectionNotExists", "assertIndexExists", "assertIndexNotExists", "assertNumberConnectionsCheckedOut",
		"assertSameLsidOnLastTwoCommands", "assertDifferentLsidOnLastTwoCommands", "waitForEvent", "assertEventCount",
		"runOnThread", "waitForThread", "wait", "createEntities", "recordTopologyDescription", "assertTopologyType",
		"waitForPrimaryChange", "loop"} {
		if specialOps[name] == nil {
			t.Errorf("special operation %s is missing", name)
		}
	}
}

func TestArgSet(t *testing.T) {
	a := newArgs(mustDoc(t, `{"filter": {}, "limit": 2, "rawData": true}`))
	a.doc("filter", true)
	a.int64Ptr("limit")
	var se *skipError
	if err := a.done(); !errors.As(err, &se) {
		t.Errorf("an argument the driver lacks (rawData) must skip, got %v", err)
	}
	a = newArgs(mustDoc(t, `{"filter": {}, "bogus": 1}`))
	a.doc("filter", true)
	var ie *InvalidTestError
	if err := a.done(); !errors.As(err, &ie) {
		t.Errorf("an unknown argument must be an error, got %v", err)
	}
	a = newArgs(mustDoc(t, `{"filter": 1}`))
	a.doc("filter", true)
	if err := a.done(); !errors.As(err, &ie) {
		t.Errorf("a mistyped argument must be an error, got %v", err)
	}
}

func TestActualError(t *testing.T) {
	reply := mustDoc(t, `{"ok": 0, "code": 11600, "codeName": "InterruptedAtShutdown", "errmsg": "x", "errorLabels": ["RetryableWriteError"]}`)
	tests := []struct {
		name     string
		err      error
		client   bool
		code     int32
		codeName string
		labels   []string
		response bool
	}{
		{"command error", &driver.OperationError{Op: "find", Err: &driver.CommandError{Code: 11600, CodeName: "InterruptedAtShutdown", Labels: []string{"RetryableWriteError"}, Raw: reply}},
			false, 11600, "InterruptedAtShutdown", []string{"RetryableWriteError"}, true},
		{"network error is a client error", &driver.OperationError{Op: "insert", Err: &driver.NetworkError{Op: "read", Err: errors.New("EOF")}},
			true, 0, "", nil, false},
		{"argument error is a client error", &driver.ArgumentError{Argument: "filter", Reason: "nil"}, true, 0, "", nil, false},
		{"write error", &driver.OperationError{Op: "insert", Err: &driver.WriteException{WriteErrors: []driver.WriteError{{Code: 11000, CodeName: "DuplicateKey"}}, Raw: reply}},
			false, 11000, "DuplicateKey", nil, true},
		{"write concern error", &driver.OperationError{Op: "insert", Err: &driver.WriteException{WriteConcernError: &driver.WriteConcernError{Code: 64, CodeName: "WriteConcernFailed", Labels: []string{"RetryableWriteError"}}}},
			false, 64, "WriteConcernFailed", nil, false},
		{"bulk write error", &driver.OperationError{Op: "insert", Err: &driver.BulkWriteException{WriteErrors: []driver.WriteError{{Index: 1, Code: 11000}}, Labels: []string{"NoWritesPerformed"}}},
			false, 11000, "", []string{"NoWritesPerformed"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := actualError(tt.err, result{})
			if a.IsClientError != tt.client || a.Code != tt.code || a.CodeName != tt.codeName || (a.Response != nil) != tt.response {
				t.Errorf("got client %v code %d %q response %v; want %v %d %q %v", a.IsClientError, a.Code, a.CodeName, a.Response != nil, tt.client, tt.code, tt.codeName, tt.response)
			}
			for _, l := range tt.labels {
				if !contains(a.Labels, l) {
					t.Errorf("labels %v lack %q", a.Labels, l)
				}
			}
			if a.HasCode == tt.client {
				t.Errorf("HasCode = %v for a client error %v", a.HasCode, tt.client)
			}
		})
	}
}

func TestNamedDatabases(t *testing.T) {
	file := mustDoc(t, `{"createEntities": [{"client": {"id": "c"}}, {"database": {"id": "d0", "client": "c", "databaseName": "one"}},
		{"database": {"id": "d1", "client": "c", "databaseName": "admin"}}],
		"initialData": [{"databaseName": "two", "collectionName": "x", "documents": []}, {"databaseName": "one", "collectionName": "y", "documents": []}]}`)
	test := mustDoc(t, `{"outcome": [{"databaseName": "three", "collectionName": "z", "documents": []}]}`)
	got := strings.Join(namedDatabases(file, test), ",")
	if got != "one,admin,two,three" {
		t.Errorf("namedDatabases = %s, want one,admin,two,three", got)
	}
}

func TestJudge(t *testing.T) {
	tc := &Test{Name: "f.json/t"}
	failed := Outcome{Err: errors.New("expectResult.x: missing; want 1")}
	tests := []struct {
		name           string
		diff, symptom  string
		known          string
		out            Outcome
		wantSkip       string
		wantErrContain string
	}{
		{name: "nothing listed", out: failed, wantErrContain: "missing"},
		{name: "difference with its symptom", diff: "server lacks x", symptom: "expectResult.x: missing", out: failed, wantSkip: "server lacks x"},
		{name: "difference, other failure", diff: "server lacks x", symptom: "expectResult.y", out: failed, wantErrContain: "fails otherwise"},
		{name: "difference without a symptom", diff: "server lacks x", out: failed, wantErrContain: "fails otherwise"},
		{name: "difference that passes", diff: "server lacks x", symptom: "x", out: Outcome{}, wantErrContain: "but it passes"},
		{name: "difference on a skipped test", diff: "server lacks x", symptom: "x", out: Outcome{Skip: "why"}, wantSkip: "why"},
		{name: "known failure", known: "bug 1", out: failed, wantSkip: "known failure: bug 1"},
		{name: "known failure that passes", known: "bug 1", out: Outcome{}, wantErrContain: "but it passes"},
	}
	for _, tt := range tests {
		r := &Runner{
			ServerDifference: func(*Test) (string, string) { return tt.diff, tt.symptom },
			KnownFailure:     func(*Test) string { return tt.known },
		}
		got, _ := r.judge(tc, tt.out)
		if got.Skip != tt.wantSkip {
			t.Errorf("%s: skip %q, want %q", tt.name, got.Skip, tt.wantSkip)
		}
		if tt.wantErrContain == "" && got.Err != nil || tt.wantErrContain != "" && (got.Err == nil || !strings.Contains(got.Err.Error(), tt.wantErrContain)) {
			t.Errorf("%s: err %v, want one containing %q", tt.name, got.Err, tt.wantErrContain)
		}
	}
}
