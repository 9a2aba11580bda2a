// Package configtest holds the configuration error cases that both the
// config package's tests and the app's (exit code 2) run.
package configtest

import (
	"os"
	"path/filepath"
	"testing"
)

// Password is the password of every URI of the cases: no error may
// contain it.
const Password = "s3cr3tPassw0rd"

// ErrorCase is one invalid configuration.
type ErrorCase struct {
	Name string
	Args []string
	Env  map[string]string
	// YAML, when set, is written to a file whose path replaces "FILE" in
	// Args.
	YAML string
	// Setting is the *config.Error's Setting; Line its line (0: not
	// checked).
	Setting string
	Line    int
}

const goodURI = "mongodb://probe:" + Password + "@db1:27017,db2:27017/?replicaSet=rs0"

// ErrorCases are the configuration errors.
var ErrorCases = []ErrorCase{
	{Name: "unknown flag", Args: []string{"--nope"}, Setting: "--nope"},
	{Name: "flag without value", Args: []string{"--uri"}, Setting: "--uri"},
	{Name: "bad bool", Args: []string{"--web.listen-remote=maybe"}, Setting: "--web.listen-remote"},
	{Name: "unknown command", Args: []string{"chekc"}, Setting: "command"},
	{Name: "URI as an argument", Args: []string{goodURI}, Setting: "command"},
	{Name: "argument after command", Args: []string{"check", "extra"}, Setting: "command"},
	{Name: "bad listen address", Args: []string{"--web.listen-address", "nope"}, Setting: "--web.listen-address"},
	{Name: "remote listen address", Args: []string{"--web.listen-address", ":9417"}, Setting: "--web.listen-address"},
	{Name: "remote listen address 0.0.0.0", Args: []string{"--web.listen-address", "0.0.0.0:9417"}, Setting: "--web.listen-address"},
	{Name: "LAN listen address", Args: []string{"--web.listen-address", "192.168.1.10:9417"}, Setting: "--web.listen-address"},
	{Name: "bad port", Args: []string{"--web.listen-address", "127.0.0.1:99999"}, Setting: "--web.listen-address"},
	{Name: "bad log level", Args: []string{"--log.level", "loud"}, Setting: "--log.level"},
	{Name: "bad log format", Args: []string{"--log.format", "xml"}, Setting: "--log.format"},
	{Name: "bad fault interval", Args: []string{"--demo.fault-interval", "0s"}, Setting: "--demo.fault-interval"},
	{Name: "unparsable fault interval", Args: []string{"--demo.fault-interval", "soon"}, Setting: "--demo.fault-interval"},
	{Name: "empty cluster name", Args: []string{"--uri", goodURI, "--cluster.name", " "}, Setting: "--cluster.name"},
	{Name: "bad URI flag", Args: []string{"--uri", "mongodb://probe:" + Password + "@db1:27017/?maxPoolSize=-1"}, Setting: "--uri"},
	{Name: "bad URI scheme", Args: []string{"--uri", "http://probe:" + Password + "@db1"}, Setting: "--uri"},
	{Name: "bad URI env", Env: map[string]string{"MONGOPROBE_URI": "mongodb://probe:" + Password + "@db1:27017/?readPreference=primay"}, Setting: "MONGOPROBE_URI"},
	{Name: "URI w=0", Args: []string{"--uri", "mongodb://probe:" + Password + "@db1/?w=0"}, Setting: "--uri"},
	{Name: "URI cross-option", Args: []string{"--uri", "mongodb://probe:" + Password + "@db1,db2/?directConnection=true"}, Setting: "--uri"},
	{Name: "URI and file", Args: []string{"--uri", goodURI, "--config.file", "FILE"}, YAML: "clusters: []\n", Setting: "--uri"},
	{Name: "env URI and file", Args: []string{"--config.file", "FILE"}, Env: map[string]string{"MONGOPROBE_URI": goodURI}, YAML: "clusters: []\n", Setting: "MONGOPROBE_URI"},
	{Name: "demo and URI", Args: []string{"--demo", "--uri", goodURI}, Setting: "--demo"},
	{Name: "missing file", Args: []string{"--config.file", "/nonexistent/mongoprobe.yaml"}, Setting: "--config.file"},
	{Name: "empty file", Args: []string{"--config.file", "FILE"}, YAML: "", Setting: "clusters"},
	{Name: "no clusters", Args: []string{"--config.file", "FILE"}, YAML: "interval: 5s\n", Setting: "clusters"},
	{Name: "YAML syntax", Args: []string{"--config.file", "FILE"}, YAML: "clusters:\n  - name: a\n   uri: [\n", Setting: "--config.file"},
	{Name: "unknown key", Args: []string{"--config.file", "FILE"}, YAML: "intervall: 5s\nclusters: []\n", Setting: "intervall", Line: 1},
	{Name: "unknown cluster key", Args: []string{"--config.file", "FILE"}, YAML: "clusters:\n  - name: a\n    uri: " + goodURI + "\n    timeout: 1s\n", Setting: "clusters[0].timeout", Line: 4},
	{Name: "clusters not a list", Args: []string{"--config.file", "FILE"}, YAML: "clusters: " + goodURI + "\n", Setting: "clusters", Line: 1},
	{Name: "timeouts not a mapping", Args: []string{"--config.file", "FILE"}, YAML: "clusters:\n  - name: a\n    uri: " + goodURI + "\n    timeouts: 5s\n", Setting: "clusters[0].timeouts", Line: 4},
	{Name: "file not a mapping", Args: []string{"--config.file", "FILE"}, YAML: "- a\n- b\n", Setting: "--config.file", Line: 1},
	{Name: "missing name", Args: []string{"--config.file", "FILE"}, YAML: "clusters:\n  - uri: " + goodURI + "\n", Setting: "clusters[0].name"},
	{Name: "empty name", Args: []string{"--config.file", "FILE"}, YAML: "clusters:\n  - name: ''\n    uri: " + goodURI + "\n", Setting: "clusters[0].name", Line: 2},
	{Name: "duplicate name", Args: []string{"--config.file", "FILE"}, YAML: "clusters:\n  - name: a\n    uri: " + goodURI + "\n  - name: a\n    uri: " + goodURI + "\n", Setting: "clusters[1].name", Line: 4},
	{Name: "missing uri", Args: []string{"--config.file", "FILE"}, YAML: "clusters:\n  - name: a\n", Setting: "clusters[0].uri"},
	{Name: "uri not a string", Args: []string{"--config.file", "FILE"}, YAML: "clusters:\n  - name: a\n    uri: [x]\n", Setting: "clusters[0].uri", Line: 3},
	{Name: "bad uri", Args: []string{"--config.file", "FILE"}, YAML: "clusters:\n  - name: a\n    uri: mongodb://probe:" + Password + "@db1/?maxPoolSize=x\n", Setting: "clusters[0].uri", Line: 3},
	{Name: "bad interval", Args: []string{"--config.file", "FILE"}, YAML: "interval: 5\nclusters:\n  - name: a\n    uri: " + goodURI + "\n", Setting: "interval", Line: 1},
	{Name: "zero interval", Args: []string{"--config.file", "FILE"}, YAML: "clusters:\n  - name: a\n    uri: " + goodURI + "\n    interval: 0s\n", Setting: "clusters[0].interval", Line: 4},
	{Name: "negative timeout", Args: []string{"--config.file", "FILE"}, YAML: "clusters:\n  - name: a\n    uri: " + goodURI + "\n  - name: b\n    uri: " + goodURI + "\n    timeouts:\n      read: -2s\n", Setting: "clusters[1].timeouts.read", Line: 7},
	{Name: "bad timeout", Args: []string{"--config.file", "FILE"}, YAML: "timeouts:\n  ping: fast\nclusters:\n  - name: a\n    uri: " + goodURI + "\n", Setting: "timeouts.ping", Line: 2},
	{Name: "unknown timeout", Args: []string{"--config.file", "FILE"}, YAML: "timeouts:\n  pong: 1s\nclusters:\n  - name: a\n    uri: " + goodURI + "\n", Setting: "timeouts.pong", Line: 2},
	{Name: "canary keys zero", Args: []string{"--config.file", "FILE"}, YAML: "canary_keys: 0\nclusters:\n  - name: a\n    uri: " + goodURI + "\n", Setting: "canary_keys", Line: 1},
	{Name: "canary keys too many", Args: []string{"--config.file", "FILE"}, YAML: "clusters:\n  - name: a\n    uri: " + goodURI + "\n    canary_keys: 1001\n", Setting: "clusters[0].canary_keys", Line: 4},
	{Name: "canary database", Args: []string{"--config.file", "FILE"}, YAML: "canary_database: a.b\nclusters:\n  - name: a\n    uri: " + goodURI + "\n", Setting: "canary_database", Line: 1},
	{Name: "canary collection", Args: []string{"--config.file", "FILE"}, YAML: "canary_collection: ''\nclusters:\n  - name: a\n    uri: " + goodURI + "\n", Setting: "canary_collection", Line: 1},
	{Name: "read preferences empty", Args: []string{"--config.file", "FILE"}, YAML: "read_preferences: []\nclusters:\n  - name: a\n    uri: " + goodURI + "\n", Setting: "read_preferences", Line: 1},
	{Name: "bad read mode", Args: []string{"--config.file", "FILE"}, YAML: "read_preferences: [primary, secundary]\nclusters:\n  - name: a\n    uri: " + goodURI + "\n", Setting: "read_preferences[1]", Line: 1},
	{Name: "read preference duplicate", Args: []string{"--config.file", "FILE"}, YAML: "read_preferences: [nearest, {mode: nearest}]\nclusters:\n  - name: a\n    uri: " + goodURI + "\n", Setting: "read_preferences[1]", Line: 1},
	{Name: "read preference unknown key", Args: []string{"--config.file", "FILE"}, YAML: "clusters:\n  - name: a\n    uri: " + goodURI + "\n    read_preferences:\n      - mode: nearest\n        tag: {dc: east}\n", Setting: "clusters[0].read_preferences[0].tag", Line: 6},
	{Name: "read preference no mode", Args: []string{"--config.file", "FILE"}, YAML: "read_preferences: [{name: x}]\nclusters:\n  - name: a\n    uri: " + goodURI + "\n", Setting: "read_preferences[0].mode", Line: 1},
	{Name: "read preference tags with primary", Args: []string{"--config.file", "FILE"}, YAML: "read_preferences: [{mode: primary, tags: [{dc: east}]}]\nclusters:\n  - name: a\n    uri: " + goodURI + "\n", Setting: "read_preferences[0]", Line: 1},
	{Name: "read preference bad tags", Args: []string{"--config.file", "FILE"}, YAML: "read_preferences: [{mode: nearest, tags: [east]}]\nclusters:\n  - name: a\n    uri: " + goodURI + "\n", Setting: "read_preferences[0].tags[0]", Line: 1},
	{Name: "max staleness too small", Args: []string{"--config.file", "FILE"}, YAML: "read_preferences: [{mode: secondary, max_staleness: 10s}]\nclusters:\n  - name: a\n    uri: " + goodURI + "\n", Setting: "read_preferences[0].max_staleness", Line: 1},
	{Name: "write concern zero", Args: []string{"--config.file", "FILE"}, YAML: "write_concern: 0\nclusters:\n  - name: a\n    uri: " + goodURI + "\n", Setting: "write_concern", Line: 1},
	{Name: "write concern negative", Args: []string{"--config.file", "FILE"}, YAML: "clusters:\n  - name: a\n    uri: " + goodURI + "\n    write_concern: -1\n", Setting: "clusters[0].write_concern", Line: 4},
	{Name: "write concern list", Args: []string{"--config.file", "FILE"}, YAML: "write_concern: [1]\nclusters:\n  - name: a\n    uri: " + goodURI + "\n", Setting: "write_concern", Line: 1},
	{Name: "scheduled not a bool", Args: []string{"--config.file", "FILE"}, YAML: "scheduled: sometimes\nclusters:\n  - name: a\n    uri: " + goodURI + "\n", Setting: "scheduled", Line: 1},
}

// ArgsFor returns c's arguments, writing its YAML to a file in a temporary
// directory when it has one.
func (c ErrorCase) ArgsFor(t testing.TB) []string {
	t.Helper()
	args := append([]string(nil), c.Args...)
	for i, a := range args {
		if a == "FILE" {
			path := filepath.Join(t.TempDir(), "mongoprobe.yaml")
			if err := os.WriteFile(path, []byte(c.YAML), 0o600); err != nil {
				t.Fatal(err)
			}
			args[i] = path
		}
	}
	return args
}

// Getenv returns c's environment.
func (c ErrorCase) Getenv(k string) string { return c.Env[k] }
