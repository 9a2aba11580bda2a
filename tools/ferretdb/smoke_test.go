package main

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/xdg-go/scram"

	"github.com/mongoscope/mongoscope/bson"
)

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    options
		wantErr string
	}{
		{"defaults", nil, options{listen: "127.0.0.1:27099", logLevel: slog.LevelWarn}, ""},
		{"all", []string{"-listen", "127.0.0.1:0", "-dir", "d", "-ready-file", "r", "-log-file", "l", "-log-level", "debug"},
			options{listen: "127.0.0.1:0", dir: "d", readyFile: "r", logFile: "l", logLevel: slog.LevelDebug}, ""},
		{"bad level", []string{"-log-level", "loud"}, options{}, "-log-level"},
		{"auth refused", []string{"-auth"}, options{}, "cannot enable authentication"},
		{"stray argument", []string{"extra"}, options{}, "unexpected arguments"},
		{"unknown flag", []string{"-port", "1"}, options{}, "not defined"},
		{"help", []string{"-h"}, options{}, flag.ErrHelp.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			got, err := parseFlags(tt.args, &out)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseFlags error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseFlags: %v (output %q)", err, out.String())
			}
			if got != tt.want {
				t.Fatalf("parseFlags = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestRun starts the embedded server in-process on a random port and checks
// the ready file, a handshake, and that stopping removes the temporary data.
func TestRun(t *testing.T) {
	readyFile := filepath.Join(t.TempDir(), "ready")
	logFile := filepath.Join(t.TempDir(), "log")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, options{listen: "127.0.0.1:0", readyFile: readyFile, logFile: logFile, logLevel: slog.LevelWarn}, &out)
	}()

	var addr string
	deadline := time.Now().Add(20 * time.Second)
	for addr == "" {
		select {
		case err := <-done:
			t.Fatalf("run returned early: %v", err)
		default:
		}
		if b, err := os.ReadFile(readyFile); err == nil {
			addr = strings.TrimSpace(string(b))
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no ready file after 20s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !regexp.MustCompile(`^127\.0\.0\.1:[1-9][0-9]*$`).MatchString(addr) {
		t.Fatalf("ready file holds %q, want 127.0.0.1:PORT", addr)
	}

	c := dial(t, addr)
	checkHello(t, c)
	c.mustRun(bson.D{{Key: "insert", Value: "smoke"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}}}, {Key: "$db", Value: "test"}})
	reply := c.mustRun(bson.D{{Key: "find", Value: "smoke"}, {Key: "$db", Value: "test"}})
	if n := len(mustValues(t, reply.Lookup("cursor", "firstBatch").Array())); n != 1 {
		t.Fatalf("find returned %d documents, want 1: %s", n, reply)
	}

	// FerretDB waits a few seconds for open connections when it stops.
	c.c.Close()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("run did not return 20s after cancel")
	}

	m := regexp.MustCompile(`data in (\S+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("output %q does not name the data directory", out.String())
	}
	if _, err := os.Stat(m[1]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary data directory %s still exists after stop (stat: %v)", m[1], err)
	}
	if _, err := os.Stat(readyFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ready file still exists after stop (stat: %v)", err)
	}
}

func mustValues(t *testing.T, arr bson.Raw) []bson.RawValue {
	t.Helper()
	vs, err := arr.Values()
	if err != nil {
		t.Fatalf("array %s: %v", arr, err)
	}
	return vs
}

// checkHello sends the first hello of a connection, as a driver's handshake
// does, checks what mongoscope relies on, and returns the reply.
func checkHello(t *testing.T, c *conn) bson.Raw {
	t.Helper()
	reply := c.mustRun(bson.D{
		{Key: "hello", Value: 1},
		{Key: "helloOk", Value: true},
		{Key: "client", Value: bson.D{
			{Key: "driver", Value: bson.D{{Key: "name", Value: "mongoscope-smoke"}, {Key: "version", Value: "0"}}},
			{Key: "os", Value: bson.D{{Key: "type", Value: "linux"}}},
		}},
		{Key: "compression", Value: bson.A{"zstd", "zlib", "snappy"}},
		{Key: "$db", Value: "admin"},
	})
	if w, isBool := reply.Lookup("isWritablePrimary").BooleanOK(); !isBool || !w {
		t.Errorf("hello isWritablePrimary = %s, want true", reply.Lookup("isWritablePrimary"))
	}
	// OP_MSG needs wire version 6; mongoscope supports servers of 4.2
	// (wire version 8) and newer.
	if v, isInt := reply.Lookup("maxWireVersion").Int32OK(); !isInt || v < 8 {
		t.Errorf("hello maxWireVersion = %s, want an int32 >= 8", reply.Lookup("maxWireVersion"))
	}
	c.mustRun(bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}})
	return reply
}

// TestServer checks the server named by MONGOSCOPE_FERRETDB_URI (make
// ferretdb-start) and logs the hello fields that matter to the driver.
func TestServer(t *testing.T) {
	uri := os.Getenv("MONGOSCOPE_FERRETDB_URI")
	if uri == "" {
		t.Skip("MONGOSCOPE_FERRETDB_URI is not set (make ferretdb-start sets it up)")
	}
	addr, _ := hostOf(t, uri)
	c := dial(t, addr)
	reply := checkHello(t, c)
	for _, k := range []string{"helloOk", "isWritablePrimary", "maxWireVersion", "minWireVersion", "compression",
		"saslSupportedMechs", "speculativeAuthenticate", "connectionId", "logicalSessionTimeoutMinutes",
		"maxBsonObjectSize", "maxMessageSizeBytes", "maxWriteBatchSize", "topologyVersion", "setName", "msg"} {
		v, err := reply.LookupErr(k)
		if err != nil {
			t.Logf("hello %s: absent", k)
			continue
		}
		t.Logf("hello %s: %s (%s)", k, v, v.Type)
	}
	t.Logf("hello reply: %s", reply)

	// mongod allows client metadata only in the first hello; FerretDB does too.
	again := c.run(bson.D{{Key: "hello", Value: 1}, {Key: "client", Value: bson.D{{Key: "application", Value: bson.D{{Key: "name", Value: "x"}}}}}, {Key: "$db", Value: "admin"}})
	if ok(again) {
		t.Errorf("second hello with client metadata succeeded: %s", again)
	} else {
		t.Logf("second hello with client metadata: %s", again)
	}

	build := c.mustRun(bson.D{{Key: "buildInfo", Value: 1}, {Key: "$db", Value: "admin"}})
	t.Logf("buildInfo version: %s, versionArray: %s", build.Lookup("version"), build.Lookup("versionArray"))
}

// saslConversation authenticates c as user on db with mechanism, the way a
// driver does without speculative authentication. It returns the reply of
// the first failing step, or nil on success.
func saslConversation(t *testing.T, c *conn, mechanism, db, user, password string) bson.Raw {
	t.Helper()
	hash := scram.SHA256
	if mechanism == "SCRAM-SHA-1" {
		hash = scram.SHA1
		// MongoDB's SCRAM-SHA-1 uses a digest of the password as the password.
		sum := md5.Sum([]byte(user + ":mongo:" + password))
		password = hex.EncodeToString(sum[:])
	}
	client, err := hash.NewClient(user, password, "")
	if err != nil {
		t.Fatalf("scram client: %v", err)
	}
	conv := client.NewConversation()
	payload, err := conv.Step("")
	if err != nil {
		t.Fatalf("scram first step: %v", err)
	}
	reply := c.run(bson.D{
		{Key: "saslStart", Value: 1},
		{Key: "mechanism", Value: mechanism},
		{Key: "payload", Value: bson.Binary{Data: []byte(payload)}},
		{Key: "autoAuthorize", Value: 1},
		{Key: "options", Value: bson.D{{Key: "skipEmptyExchange", Value: true}}},
		{Key: "$db", Value: db},
	})
	for step := 0; step < 4; step++ {
		if !ok(reply) {
			return reply
		}
		done, _ := reply.Lookup("done").BooleanOK()
		if !conv.Done() {
			server, _ := reply.Lookup("payload").BinaryOK()
			payload, err = conv.Step(string(server.Data))
			if err != nil {
				// A server signature that does not verify is a failure, never a skip.
				t.Fatalf("%s step %d: %v", mechanism, step+1, err)
			}
		} else {
			// The client has verified the server; the server wants an
			// empty round to say done.
			payload = ""
		}
		if done {
			if !conv.Valid() {
				t.Fatalf("%s: server said done before the client verified it", mechanism)
			}
			t.Logf("%s: done after %d saslContinue round(s)", mechanism, step)
			return nil
		}
		reply = c.run(bson.D{
			{Key: "saslContinue", Value: 1},
			{Key: "conversationId", Value: reply.Lookup("conversationId")},
			{Key: "payload", Value: bson.Binary{Data: []byte(payload)}},
			{Key: "$db", Value: db},
		})
	}
	t.Fatalf("%s: conversation did not finish in 4 steps", mechanism)
	return nil
}

func code(reply bson.Raw) int64 {
	v, _ := reply.Lookup("code").AsInt64OK()
	return v
}

func saslMechs(t *testing.T, c *conn, dbUser string) []string {
	t.Helper()
	reply := c.mustRun(bson.D{{Key: "hello", Value: 1}, {Key: "saslSupportedMechs", Value: dbUser}, {Key: "$db", Value: "admin"}})
	var mechs []string
	arr, isArr := reply.Lookup("saslSupportedMechs").ArrayOK()
	if !isArr {
		return nil
	}
	for _, v := range mustValues(t, arr) {
		mechs = append(mechs, v.StringValue())
	}
	return mechs
}

// TestServerAuth checks the authenticated server named by
// MONGOSCOPE_FERRETDB_AUTH_URI: SCRAM-SHA-1 and SCRAM-SHA-256 with the user
// created at start-up, createUser with one mechanism each, and refusals.
func TestServerAuth(t *testing.T) {
	uri := os.Getenv("MONGOSCOPE_FERRETDB_AUTH_URI")
	if uri == "" {
		t.Skip("MONGOSCOPE_FERRETDB_AUTH_URI is not set (make ferretdb-start sets it up)")
	}
	addr, ui := hostOf(t, uri)
	if ui == nil {
		t.Fatal("MONGOSCOPE_FERRETDB_AUTH_URI has no user")
	}
	user := ui.Username()
	pass, _ := ui.Password()

	c := dial(t, addr)
	checkHello(t, c)
	if r := c.run(bson.D{{Key: "listDatabases", Value: 1}, {Key: "$db", Value: "admin"}}); ok(r) || code(r) != 13 {
		t.Errorf("listDatabases before authentication = %s, want Unauthorized (13)", r)
	}
	if got := saslMechs(t, c, "admin."+user); strings.Join(got, ",") != "SCRAM-SHA-1,SCRAM-SHA-256" {
		t.Errorf("saslSupportedMechs for admin.%s = %q, want SCRAM-SHA-1 and SCRAM-SHA-256", user, got)
	}
	if got := saslMechs(t, c, "admin.nosuchuser"); len(got) != 0 {
		t.Errorf("saslSupportedMechs for an unknown user = %q, want none", got)
	}

	// Speculative authentication in an OP_MSG hello: FerretDB v1 handles it
	// only in the legacy OP_QUERY hello, so the field is ignored here.
	first, err := scram.SHA256.NewClient(user, pass, "")
	if err != nil {
		t.Fatal(err)
	}
	firstMsg, err := first.NewConversation().Step("")
	if err != nil {
		t.Fatal(err)
	}
	spec := dial(t, addr).mustRun(bson.D{{Key: "hello", Value: 1}, {Key: "speculativeAuthenticate", Value: bson.D{
		{Key: "saslStart", Value: 1}, {Key: "mechanism", Value: "SCRAM-SHA-256"},
		{Key: "payload", Value: bson.Binary{Data: []byte(firstMsg)}}, {Key: "db", Value: "admin"},
	}}, {Key: "$db", Value: "admin"}})
	if v, err := spec.LookupErr("speculativeAuthenticate"); err == nil {
		t.Errorf("OP_MSG hello answered speculativeAuthenticate (%s); README.md says it does not", v.Type)
	}

	for _, mech := range []string{"PLAIN", "MONGODB-X509", "GSSAPI"} {
		r := c.run(bson.D{{Key: "saslStart", Value: 1}, {Key: "mechanism", Value: mech},
			{Key: "payload", Value: bson.Binary{Data: []byte("\x00" + user + "\x00" + pass)}}, {Key: "$db", Value: "admin"}})
		if ok(r) || code(r) != 18 {
			t.Errorf("saslStart %s = %s, want AuthenticationFailed (18)", mech, r)
		}
	}

	for _, mech := range []string{"SCRAM-SHA-256", "SCRAM-SHA-1"} {
		t.Run(mech, func(t *testing.T) {
			c := dial(t, addr)
			if r := saslConversation(t, c, mech, "admin", user, pass); r != nil {
				t.Fatalf("authentication failed: %s", r)
			}
			c.mustRun(bson.D{{Key: "listDatabases", Value: 1}, {Key: "$db", Value: "admin"}})

			bad := dial(t, addr)
			r := saslConversation(t, bad, mech, "admin", user, pass+"x")
			if r == nil || code(r) != 18 {
				t.Fatalf("wrong password: reply %s, want AuthenticationFailed (18)", r)
			}
			if strings.Contains(r.String(), pass) {
				t.Fatal("the error reply contains the password")
			}
		})
	}

	admin := dial(t, addr)
	if r := saslConversation(t, admin, "SCRAM-SHA-256", "admin", user, pass); r != nil {
		t.Fatalf("authentication failed: %s", r)
	}
	for _, tt := range []struct{ name, mech, other string }{
		{"sha1only", "SCRAM-SHA-1", "SCRAM-SHA-256"},
		{"sha256only", "SCRAM-SHA-256", "SCRAM-SHA-1"},
	} {
		t.Run("createUser "+tt.mech, func(t *testing.T) {
			admin.run(bson.D{{Key: "dropUser", Value: tt.name}, {Key: "$db", Value: "test"}})
			admin.mustRun(bson.D{{Key: "createUser", Value: tt.name}, {Key: "pwd", Value: "pw-" + tt.name},
				{Key: "roles", Value: bson.A{}}, {Key: "mechanisms", Value: bson.A{tt.mech}}, {Key: "$db", Value: "test"}})
			defer admin.mustRun(bson.D{{Key: "dropUser", Value: tt.name}, {Key: "$db", Value: "test"}})

			if got := saslMechs(t, admin, "test."+tt.name); len(got) != 1 || got[0] != tt.mech {
				t.Errorf("saslSupportedMechs = %q, want [%s]", got, tt.mech)
			}
			if r := saslConversation(t, dial(t, addr), tt.mech, "test", tt.name, "pw-"+tt.name); r != nil {
				t.Errorf("%s: %s", tt.mech, r)
			}
			if r := saslConversation(t, dial(t, addr), tt.other, "test", tt.name, "pw-"+tt.name); r == nil {
				t.Errorf("%s succeeded for a user without it", tt.other)
			} else {
				t.Logf("%s for a %s-only user: %s", tt.other, tt.mech, r)
			}
		})
	}
}
