package mongotest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

func TestGetParameter(t *testing.T) {
	s := NewServer(t, Options{Version: "8.0.4"})
	c := connect(t, s, clientOpts{})
	for _, tc := range []struct {
		name string
		cmd  bson.D
		want map[string]string // path -> relaxed JSON
	}{
		{"star", d("getParameter", "*"), map[string]string{
			"featureCompatibilityVersion":     `{"version":"8.0"}`,
			"requireApiVersion":               "false",
			"transactionLifetimeLimitSeconds": "60",
			"enableTestCommands":              "true",
			"authenticationMechanisms":        `["SCRAM-SHA-1","SCRAM-SHA-256"]`,
		}},
		{"allParameters", d("getParameter", d("allParameters", true)), map[string]string{
			"requireApiVersion": "false",
		}},
		{"named", d("getParameter", 1, "featureCompatibilityVersion", 1), map[string]string{
			"featureCompatibilityVersion": `{"version":"8.0"}`,
			"requireApiVersion":           "<missing>",
		}},
		{"showDetails", d("getParameter", d("showDetails", true), "requireApiVersion", 1), map[string]string{
			"requireApiVersion": `{"value":false,"settableAtRuntime":true,"settableAtStartup":true}`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.mustRun("admin", tc.cmd)
			for path, want := range tc.want {
				expectField(t, r, path, want)
			}
		})
	}
	for _, tc := range []struct {
		name string
		db   string
		cmd  bson.D
		code int32
		msg  string
	}{
		{"unknown", "admin", d("getParameter", 1, "noSuchParameter", 1), 72, "no option found to get"},
		{"none", "admin", d("getParameter", 1), 72, "no option found to get"},
		{"not admin", "db", d("getParameter", "*"), 13, "may only be run against the admin database"},
		{"set unknown", "admin", d("setParameter", 1, "noSuchParameter", 1), 72, "attempted to set unrecognized parameter [noSuchParameter], use help:true to see options "},
		{"set none", "admin", d("setParameter", 1), 72, "no option found to set"},
		{"set startup-only", "admin", d("setParameter", 1, "enableTestCommands", false), 20, "not allowed to change [enableTestCommands] at runtime"},
		{"set wrong type", "admin", d("setParameter", 1, "transactionLifetimeLimitSeconds", "x"), 2, "transactionLifetimeLimitSeconds"},
		{"set out of range", "admin", d("setParameter", 1, "transactionLifetimeLimitSeconds", 0), 2, "greater than or equal to 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.run(tc.db, tc.cmd)
			wantCode(t, err, tc.code, tc.msg)
		})
	}
}

func TestSetParameter(t *testing.T) {
	s := NewServer(t, Options{})
	c := connect(t, s, clientOpts{})
	r := c.mustRun("admin", d("setParameter", 1, "transactionLifetimeLimitSeconds", int64(30), "cursorTimeoutMillis", 1000))
	expectField(t, r, "was", "60")
	r = c.mustRun("admin", d("getParameter", 1, "transactionLifetimeLimitSeconds", 1, "cursorTimeoutMillis", 1))
	expectField(t, r, "transactionLifetimeLimitSeconds", "30")
	expectField(t, r, "cursorTimeoutMillis", "1000")
	if v := r.Lookup("transactionLifetimeLimitSeconds"); v.Type != bson.TypeInt32 {
		t.Errorf("transactionLifetimeLimitSeconds is %s, want int32", v.Type)
	}

	// requireApiVersion is honoured: commands without apiVersion fail,
	// hellos included (unless they claim internalClient), and it can be
	// turned off with apiVersion.
	c.mustRun("admin", d("setParameter", 1, "requireApiVersion", true))
	_, err := c.run("db", d("ping", 1))
	wantCode(t, err, 498870, "The apiVersion parameter is required, please configure your MongoClient's API version")
	_, err = connectErr(t, s, clientOpts{})
	wantCode(t, err, 498870, "apiVersion")
	connect(t, s, clientOpts{extra: d("apiVersion", "1")})
	connect(t, s, clientOpts{extra: d("internalClient", d("minWireVersion", 0, "maxWireVersion", 25))})
	c.mustRun("db", d("ping", 1, "apiVersion", "1"))
	r = c.mustRun("admin", d("setParameter", 1, "requireApiVersion", false, "apiVersion", "1"))
	expectField(t, r, "was", "true")
	c.mustRun("db", d("ping", 1))
}

func TestHarnessCommands(t *testing.T) {
	s, c := crudServer(t)
	c.mustRun("db", d("insert", "c", "documents", bson.A{d("_id", 1, "x", "abc"), d("_id", 2)}))
	c.mustRun("db", d("createIndexes", "c", "indexes", bson.A{d("key", d("x", 1), "name", "x_1")}))

	t.Run("listCommands", func(t *testing.T) {
		r := c.mustRun("admin", d("listCommands", 1))
		cmds := r.Lookup("commands").Document()
		for name, cmd := range commands {
			_, err := cmds.LookupErr(name)
			// Aliases and mongos's own commands are not listed by mongod.
			want := !commandAliases[name] && cmd.flags.availableOn(RoleStandalone)
			if (err == nil) != want {
				t.Errorf("listCommands: %s listed=%v, want %v", name, err == nil, want)
			}
		}
		expectField(t, r, "commands.find.apiVersions", `["1"]`)
		expectField(t, r, "commands.isMaster.requiresAuth", "false")
		expectField(t, r, "commands.isMaster.apiVersions", "[]")
		expectField(t, r, "commands.hello.apiVersions", `["1"]`)
		expectField(t, r, "commands.find.adminOnly", "false")
		expectField(t, r, "commands.getParameter.adminOnly", "true")
		expectField(t, r, "commands.hello.requiresAuth", "false")
		expectField(t, r, "commands.insert.requiresAuth", "true")
		expectField(t, r, "commands.getLog.apiVersions", "[]")
	})
	t.Run("hostInfo", func(t *testing.T) {
		r := c.mustRun("admin", d("hostInfo", 1))
		want := []string{"system.currentTime", "system.hostname", "system.numCores", "system.cpuArch", "os.type", "extra"}
		if _, ok := memTotalMB(); ok {
			want = append(want, "system.memSizeMB", "system.memLimitMB")
		}
		for _, p := range want {
			if _, err := r.LookupPath(p); err != nil {
				t.Errorf("hostInfo lacks %s: %s", p, r)
			}
		}
	})
	t.Run("getCmdLineOpts", func(t *testing.T) {
		r := c.mustRun("admin", d("getCmdLineOpts", 1))
		port := s.Addr()[strings.LastIndex(s.Addr(), ":")+1:]
		expectField(t, r, "parsed.net.port", port)
		expectField(t, r, "argv.0", `"mongod"`)
		_, err := c.run("db", d("getCmdLineOpts", 1))
		wantCode(t, err, 13, "admin")
	})
	t.Run("getLog", func(t *testing.T) {
		r := c.mustRun("admin", d("getLog", "*"))
		expectField(t, r, "names", `["global","startupWarnings"]`)
		r = c.mustRun("admin", d("getLog", "startupWarnings"))
		expectField(t, r, "log", `[]`)
		expectField(t, r, "totalLinesWritten", "0")
		r = c.mustRun("admin", d("getLog", "global"))
		lines := r.Lookup("log").Array()
		vals, _ := lines.Values()
		if len(vals) == 0 || !strings.Contains(vals[len(vals)-1].StringValue(), `"commandName":"getLog"`) {
			t.Errorf("global log %s", r)
		}
		_, err := c.run("admin", d("getLog", "nope"))
		if ce := asCmdError(t, err); ce.Code != 0 || ce.Message != "no RamLog named: nope" {
			t.Errorf("getLog nope: %v", ce)
		}
		_, err = c.run("admin", d("getLog", 1))
		wantCode(t, err, 14, "must be of type String")
	})
	t.Run("dbStats", func(t *testing.T) {
		r := c.mustRun("db", d("dbStats", 1))
		expectField(t, r, "db", `"db"`)
		expectField(t, r, "collections", "1")
		expectField(t, r, "objects", "2")
		expectField(t, r, "indexes", "2")
		r = c.mustRun("empty", d("dbStats", 1))
		expectField(t, r, "collections", "0")
		_, err := c.run("db", d("dbStats", 1, "scale", 0))
		wantCode(t, err, 2, "Scale factor")
		_, err = c.run("db", d("dbStats", 1, "nope", 0))
		wantCode(t, err, 40415, "dbStats.nope")
	})
	t.Run("collStats", func(t *testing.T) {
		r := c.mustRun("db", d("collStats", "c"))
		expectField(t, r, "ns", `"db.c"`)
		expectField(t, r, "count", "2")
		expectField(t, r, "nindexes", "2")
		expectField(t, r, "capped", "false")
		if _, err := r.LookupPath("indexSizes.x_1"); err != nil {
			t.Errorf("no indexSizes.x_1: %s", r)
		}
		_, err := c.run("db", d("collStats", "nope"))
		wantCode(t, err, 26, "Collection [db.nope] not found.")
	})
}

func TestSearchIndexCommandsNotEnabled(t *testing.T) {
	_, c := crudServer(t)
	c.mustRun("db", d("create", "c"))
	const msg = "Using Atlas Search Database Commands and the $listSearchIndexes aggregation stage requires additional configuration."
	for _, cmd := range []bson.D{
		d("createSearchIndexes", "c", "indexes", bson.A{d("definition", d("mappings", d("dynamic", true)))}),
		d("updateSearchIndex", "c", "name", "x", "definition", bson.D{}),
		d("dropSearchIndex", "c", "name", "x"),
		d("aggregate", "c", "pipeline", bson.A{d("$listSearchIndexes", bson.D{})}, "cursor", bson.D{}),
	} {
		t.Run(cmd[0].Key, func(t *testing.T) {
			_, err := c.run("db", cmd)
			if ce := wantCode(t, err, 31082, msg); ce.CodeName != "SearchNotEnabled" {
				t.Errorf("codeName %s", ce.CodeName)
			}
		})
	}
}

func TestListIndexesCursor(t *testing.T) {
	_, c := crudServer(t)
	c.mustRun("db", d("createIndexes", "c", "indexes", bson.A{
		d("key", d("a", 1), "name", "a_1"), d("key", d("b", 1), "name", "b_1"),
	}))
	r := c.mustRun("db", d("listIndexes", "c", "cursor", d("batchSize", 1)))
	expectField(t, r, "cursor.ns", `"db.c"`)
	if got := names(t, r, "cursor.firstBatch"); got != "_id_" {
		t.Errorf("first batch %q", got)
	}
	id := cursorID(t, r)
	r = c.mustRun("db", d("getMore", id, "collection", "c", "batchSize", 1))
	expectField(t, r, "cursor.ns", `"db.c"`)
	if got := names(t, r, "cursor.nextBatch"); got != "a_1" {
		t.Errorf("second batch %q", got)
	}
	r = c.mustRun("db", d("getMore", id, "collection", "c"))
	if got := names(t, r, "cursor.nextBatch"); got != "b_1" || cursorID(t, r) != 0 {
		t.Errorf("last batch %s", r)
	}
}

func TestUserManagement(t *testing.T) {
	s := NewServer(t, Options{Auth: true})
	if err := s.AddUser("admin", "root", secret); err != nil {
		t.Fatal(err)
	}
	c := connect(t, s, clientOpts{})
	if err := c.auth("admin", newSCRAMClient(SCRAMSHA256, "root", secret), false); err != nil {
		t.Fatal(err)
	}
	const pwd = "n3w-us3r-pa55"
	c.mustRun("app", d("createUser", "alice", "pwd", pwd, "roles", bson.A{"readWrite", d("role", "read", "db", "other")},
		"customData", d("team", "x")))
	c.mustRun("app", d("createUser", "bob", "pwd", pwd, "roles", bson.A{}, "mechanisms", bson.A{SCRAMSHA1}))

	for _, tc := range []struct {
		name, user, mech string
		ok               bool
	}{
		{"alice sha256", "alice", SCRAMSHA256, true},
		{"alice sha1", "alice", SCRAMSHA1, true},
		{"bob sha1", "bob", SCRAMSHA1, true},
		{"bob sha256 not enabled", "bob", SCRAMSHA256, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := connect(t, s, clientOpts{})
			err := u.auth("app", newSCRAMClient(tc.mech, tc.user, pwd), false)
			if (err == nil) != tc.ok {
				t.Fatalf("auth: %v, want ok=%v", err, tc.ok)
			}
		})
	}

	r := c.mustRun("app", d("usersInfo", "alice"))
	expectField(t, r, "users.0._id", `"app.alice"`)
	expectField(t, r, "users.0.roles", `[{"role":"readWrite","db":"app"},{"role":"read","db":"other"}]`)
	expectField(t, r, "users.0.customData", `{"team":"x"}`)
	expectField(t, r, "users.0.mechanisms", `["SCRAM-SHA-1","SCRAM-SHA-256"]`)
	if v, _ := r.LookupPath("users.0.userId"); v.Type != bson.TypeBinary {
		t.Errorf("userId %s", v.Type)
	}
	r = c.mustRun("app", d("usersInfo", 1))
	if vals, _ := r.Lookup("users").Array().Values(); len(vals) != 2 {
		t.Errorf("usersInfo: 1 gave %s", r)
	}
	r = c.mustRun("admin", d("usersInfo", d("forAllDBs", true)))
	if vals, _ := r.Lookup("users").Array().Values(); len(vals) != 3 {
		t.Errorf("forAllDBs gave %s", r)
	}
	r = c.mustRun("admin", d("usersInfo", bson.A{d("user", "bob", "db", "app"), "root"}))
	if vals, _ := r.Lookup("users").Array().Values(); len(vals) != 2 {
		t.Errorf("array form gave %s", r)
	}

	// updateUser changes the password; the old one no longer works.
	c.mustRun("app", d("updateUser", "alice", "pwd", pwd+"2", "roles", bson.A{"read"}))
	u := connect(t, s, clientOpts{})
	if err := u.auth("app", newSCRAMClient(SCRAMSHA256, "alice", pwd), false); err == nil {
		t.Error("old password still works")
	}
	u = connect(t, s, clientOpts{})
	if err := u.auth("app", newSCRAMClient(SCRAMSHA256, "alice", pwd+"2"), false); err != nil {
		t.Error(err)
	}
	r = c.mustRun("app", d("usersInfo", "alice"))
	expectField(t, r, "users.0.roles", `[{"role":"read","db":"app"}]`)

	for _, tc := range []struct {
		name string
		cmd  bson.D
		code int32
		msg  string
	}{
		{"duplicate", d("createUser", "alice", "pwd", "x", "roles", bson.A{}), 51003, `User "alice@app" already exists`},
		{"no roles", d("createUser", "carol", "pwd", "x"), 40414, "roles' is missing"},
		{"no pwd", d("createUser", "carol", "roles", bson.A{}), 2, "Must provide a 'pwd' field"},
		{"bad mechanism", d("createUser", "carol", "pwd", "x", "roles", bson.A{}, "mechanisms", bson.A{"PLAIN"}), 2, "Unknown auth mechanism"},
		{"update missing", d("updateUser", "nobody", "pwd", "x"), 11, "User nobody@app not found"},
		{"update nothing", d("updateUser", "alice"), 2, "Must specify at least one field"},
		{"drop missing", d("dropUser", "nobody"), 11, "User 'nobody@app' not found"},
		{"unknown role", d("createUser", "carol", "pwd", "x", "roles", bson.A{"nosuch"}), 31, "Could not find role: nosuch@app"},
		{"admin-only role elsewhere", d("createUser", "carol", "pwd", "x", "roles", bson.A{"root"}), 31, "Could not find role: root@app"},
		{"empty mechanisms", d("createUser", "carol", "pwd", "x", "roles", bson.A{}, "mechanisms", bson.A{}), 2, "mechanisms field must not be empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.run("app", tc.cmd)
			wantCode(t, err, tc.code, tc.msg)
		})
	}

	c.mustRun("app", d("dropUser", "bob"))
	u = connect(t, s, clientOpts{})
	if err := u.auth("app", newSCRAMClient(SCRAMSHA1, "bob", pwd), false); err == nil {
		t.Error("dropped user authenticated")
	}
	r = c.mustRun("app", d("dropAllUsersFromDatabase", 1))
	expectField(t, r, "n", "1")
	r = c.mustRun("app", d("usersInfo", 1))
	expectField(t, r, "users", "[]")

	// The failCommand fail point fires on the new commands.
	c.mustRun("admin", d("configureFailPoint", "failCommand", "mode", d("times", 1),
		"data", d("failCommands", bson.A{"createUser"}, "errorCode", 2)))
	_, err := c.run("app", d("createUser", "dave", "pwd", pwd, "roles", bson.A{}))
	wantCode(t, err, 2, "failCommand")

	// Passwords never reach the command log.
	var all strings.Builder
	for _, cmd := range s.Commands() {
		fmt.Fprintf(&all, "%s %s %x\n", cmd.Name, cmd.Body, []byte(cmd.Body))
	}
	r = c.mustRun("admin", d("getLog", "global"))
	fmt.Fprintf(&all, "%s", r)
	if strings.Contains(all.String(), "pa55") {
		t.Error("a password reached the command log")
	}
	if !strings.Contains(all.String(), "createUser") {
		t.Error("createUser not logged at all")
	}
}

func TestCurrentOp(t *testing.T) {
	s := NewServer(t, Options{})
	c := connect(t, s, clientOpts{appName: "watcher"})
	other := connect(t, s, clientOpts{appName: "idle-one"})
	lsid := d("id", bson.Binary{Subtype: 4, Data: make([]byte, 16)})
	r := c.mustRun("admin", d("aggregate", 1, "pipeline", bson.A{d("$currentOp", bson.D{})}, "cursor", bson.D{}, "lsid", lsid))
	expectField(t, r, "cursor.ns", `"admin.$cmd.aggregate"`)
	vals, _ := r.Lookup("cursor", "firstBatch").Array().Values()
	if len(vals) != 1 {
		t.Fatalf("ops %s", r)
	}
	expectField(t, r, "cursor.firstBatch.0.active", "true")
	expectField(t, r, "cursor.firstBatch.0.connectionId", fmt.Sprint(c.id))
	expectField(t, r, "cursor.firstBatch.0.clientMetadata.application.name", `"watcher"`)
	expectField(t, r, "cursor.firstBatch.0.command.aggregate", "1")
	expectField(t, r, "cursor.firstBatch.0.lsid.id", `{"$binary":{"base64":"AAAAAAAAAAAAAAAAAAAAAA==","subType":"04"}}`)
	expectField(t, r, "cursor.firstBatch.0.op", `"command"`)

	// idleConnections lists the others; later stages run on the documents.
	r = c.mustRun("admin", d("aggregate", 1, "pipeline", bson.A{
		d("$currentOp", d("idleConnections", true, "allUsers", true)),
		d("$match", d("active", false)),
		d("$project", d("_id", 0, "connectionId", 1, "app", "$clientMetadata.application.name")),
	}, "cursor", bson.D{}))
	expectField(t, r, "cursor.firstBatch", fmt.Sprintf(`[{"connectionId":%d,"app":"idle-one"}]`, other.id))

	for _, tc := range []struct {
		name string
		db   string
		cmd  bson.D
		code int32
		msg  string
	}{
		{"not admin", "db", d("aggregate", 1, "pipeline", bson.A{d("$currentOp", bson.D{})}, "cursor", bson.D{}), 73, "$currentOp must be run against the 'admin' database with {aggregate: 1}"},
		{"on a collection", "admin", d("aggregate", "c", "pipeline", bson.A{d("$currentOp", bson.D{})}, "cursor", bson.D{}), 73, "with {aggregate: 1}"},
		{"unknown option", "admin", d("aggregate", 1, "pipeline", bson.A{d("$currentOp", d("nope", true))}, "cursor", bson.D{}), 40415, "'$currentOp.nope' is an unknown field"},
		{"idleSessions", "admin", d("aggregate", 1, "pipeline", bson.A{d("$currentOp", d("idleSessions", true))}, "cursor", bson.D{}), 238, "idleSessions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.run(tc.db, tc.cmd)
			wantCode(t, err, tc.code, tc.msg)
		})
	}
}

func TestCollStatsStage(t *testing.T) {
	_, c := crudServer(t)
	c.mustRun("db", d("create", "capped", "capped", true, "size", 4096, "max", 10))
	c.mustRun("db", d("insert", "capped", "documents", bson.A{d("_id", 1)}))
	r := c.mustRun("db", d("aggregate", "capped", "pipeline", bson.A{
		d("$collStats", d("storageStats", bson.D{}, "count", bson.D{})),
		d("$project", d("_id", 0, "ns", 1, "capped", "$storageStats.capped", "maxSize", "$storageStats.maxSize",
			"max", "$storageStats.max", "n", "$storageStats.count", "count", 1)),
	}, "cursor", bson.D{}))
	expectField(t, r, "cursor.firstBatch", `[{"ns":"db.capped","capped":true,"maxSize":4096,"max":10,"n":1,"count":1}]`)

	for _, tc := range []struct {
		name string
		cmd  bson.D
		code int32
		msg  string
	}{
		{"missing collection", d("aggregate", "nope", "pipeline", bson.A{d("$collStats", d("storageStats", bson.D{}))}, "cursor", bson.D{}),
			26, "Unable to retrieve storageStats in $collStats stage :: caused by :: Collection [db.nope] not found."},
		{"latencyStats", d("aggregate", "capped", "pipeline", bson.A{d("$collStats", d("latencyStats", bson.D{}))}, "cursor", bson.D{}), 238, "latencyStats"},
		{"unknown option", d("aggregate", "capped", "pipeline", bson.A{d("$collStats", d("nope", 1))}, "cursor", bson.D{}), 40415, "$collStats.nope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.run("db", tc.cmd)
			wantCode(t, err, tc.code, tc.msg)
		})
	}
}

func TestAPIStrict(t *testing.T) {
	_, c := crudServer(t)
	c.mustRun("db", d("insert", "c", "documents", bson.A{d("_id", 1)}))
	c.mustRun("db", d("find", "c", "apiVersion", "1", "apiStrict", true))
	c.mustRun("db", d("distinct", "c", "key", "_id", "apiVersion", "1", "apiStrict", false))
	c.mustRun("db", d("distinct", "c", "key", "_id", "apiVersion", "1", "apiDeprecationErrors", true))
	// An alias is in API version 1 when its command is.
	c.mustRun("db", d("findandmodify", "c", "query", d("_id", 1), "update", d("$set", d("x", 1)), "apiVersion", "1", "apiStrict", true))
	c.mustRun("admin", d("hello", 1, "apiVersion", "1", "apiStrict", true))
	for _, tc := range []struct {
		name string
		cmd  bson.D
		code int32
		msg  string
	}{
		{"distinct", d("distinct", "c", "key", "_id", "apiVersion", "1", "apiStrict", true), 323,
			"Provided apiStrict:true, but the command distinct is not in API Version 1. Information on supported commands and migrations in API Version 1 can be found at https://dochub.mongodb.org/core/manual-versioned-api."},
		{"alias named as its command", d("buildinfo", 1, "apiVersion", "1", "apiStrict", true), 323, "the command buildInfo is not"},
		{"isMaster, apart from hello", d("isMaster", 1, "apiVersion", "1", "apiStrict", true), 323, "the command isMaster is not"},
		{"ismaster, isMaster's alias", d("ismaster", 1, "apiVersion", "1", "apiStrict", true), 323, "the command isMaster is not"},
		{"strict without version", d("find", "c", "apiStrict", true), 4886600, "Provided apiStrict and/or apiDeprecationErrors without passing apiVersion"},
		{"deprecationErrors without version", d("find", "c", "apiDeprecationErrors", false), 4886600, "without passing apiVersion"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.run("db", tc.cmd)
			wantCode(t, err, tc.code, tc.msg)
		})
	}
}

func TestListLocalSessions(t *testing.T) {
	s := NewServer(t, Options{Auth: true})
	if err := s.AddUser("admin", "root", secret); err != nil {
		t.Fatal(err)
	}
	if err := s.AddUser("app", "ada", secret); err != nil {
		t.Fatal(err)
	}
	root := connect(t, s, clientOpts{})
	if err := root.auth("admin", newSCRAMClient(SCRAMSHA256, "root", secret), false); err != nil {
		t.Fatal(err)
	}
	ada := connect(t, s, clientOpts{})
	if err := ada.auth("app", newSCRAMClient(SCRAMSHA256, "ada", secret), false); err != nil {
		t.Fatal(err)
	}
	lsid := func(b byte) bson.D {
		id := make([]byte, 16)
		id[15] = b
		return d("id", bson.Binary{Subtype: 4, Data: id})
	}
	root.mustRun("admin", d("ping", 1, "lsid", lsid(1)))
	ada.mustRun("app", d("ping", 1, "lsid", lsid(2)))
	ada.mustRun("app", d("ping", 1, "lsid", lsid(3)))

	list := func(c *client, opts bson.D) bson.Raw {
		return c.mustRun("admin", d("aggregate", 1, "pipeline", bson.A{
			d("$listLocalSessions", opts), d("$project", d("_id", 0, "user", "$user.name")),
		}, "cursor", bson.D{}))
	}
	expectField(t, list(ada, bson.D{}), "cursor.firstBatch", `[{"user":"ada@app"},{"user":"ada@app"}]`)
	expectField(t, list(root, bson.D{}), "cursor.firstBatch", `[{"user":"root@admin"}]`)
	expectField(t, list(root, d("allUsers", true)), "cursor.firstBatch", `[{"user":"root@admin"},{"user":"ada@app"},{"user":"ada@app"}]`)
	expectField(t, list(root, d("users", bson.A{d("user", "ada", "db", "app")})), "cursor.firstBatch", `[{"user":"ada@app"},{"user":"ada@app"}]`)

	r := ada.mustRun("admin", d("aggregate", 1, "pipeline", bson.A{d("$listLocalSessions", bson.D{})}, "cursor", bson.D{}))
	if v, _ := r.LookupPath("cursor.firstBatch.0._id.uid"); v.Type != bson.TypeBinary {
		t.Errorf("no uid: %s", r)
	}
	if v, _ := r.LookupPath("cursor.firstBatch.0.lastUse"); v.Type != bson.TypeDateTime {
		t.Errorf("no lastUse: %s", r)
	}

	// endSessions forgets them.
	ada.mustRun("admin", d("endSessions", bson.A{lsid(2), lsid(3)}))
	expectField(t, list(ada, bson.D{}), "cursor.firstBatch", `[]`)

	_, err := ada.run("admin", d("aggregate", 1, "pipeline", bson.A{d("$listLocalSessions", bson.D{})}, "cursor", bson.D{},
		"apiVersion", "1", "apiStrict", true))
	wantCode(t, err, 323, "$listLocalSessions is not allowed with 'apiStrict: true' in API Version 1")
}
