package mongotest

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/internal/spectest"
)

// failCommandUses is every failCommand fail point the suites' JSON tests
// configure: the data documents, as JSON, with their files.
type failCommandUse struct {
	file string
	fp   map[string]any
}

func collectFailCommands(t *testing.T, suites ...string) []failCommandUse {
	var uses []failCommandUse
	var walk func(file string, v any)
	walk = func(file string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["configureFailPoint"] == "failCommand" {
				uses = append(uses, failCommandUse{file, v})
			}
			for _, e := range v {
				walk(file, e)
			}
		case []any:
			for _, e := range v {
				walk(file, e)
			}
		}
	}
	for _, suite := range suites {
		for _, path := range spectest.Files(t, "*.json", suite, "tests") {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var doc any
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			walk(path, doc)
		}
	}
	return uses
}

var auditSuites = []string{"client-side-operations-timeout", "retryable-reads", "retryable-writes", "client-backpressure"}

// TestFailCommandSpecConfigurations: every failCommand configuration the
// suites use is accepted as it is written (modes and data options).
func TestFailCommandSpecConfigurations(t *testing.T) {
	uses := collectFailCommands(t, auditSuites...)
	s := NewServer(t, primaryOpts())
	for _, u := range uses {
		b, err := json.Marshal(u.fp)
		if err != nil {
			t.Fatal(err)
		}
		var raw bson.Raw
		if err := bson.UnmarshalExtJSON(b, &raw); err != nil {
			t.Fatalf("%s: %v", u.file, err)
		}
		if err := s.SetFailPoint(raw); err != nil {
			t.Errorf("%s: %s: %v", u.file, b, err)
		}
	}
	s.ClearFailPoints()
}

// auditCommands are a command of each name the suites' fail points
// target, with the database it runs on; setup runs first (for getMore, a
// find leaving a cursor) and returns values the command's body needs.
var auditCommands = map[string]func(c *client) (string, bson.D){
	"find": func(*client) (string, bson.D) { return "test", d("find", "c") },
	"aggregate": func(*client) (string, bson.D) {
		return "test", d("aggregate", "c", "pipeline", bson.A{}, "cursor", bson.D{})
	},
	"count":         func(*client) (string, bson.D) { return "test", d("count", "c") },
	"distinct":      func(*client) (string, bson.D) { return "test", d("distinct", "c", "key", "x") },
	"listDatabases": func(*client) (string, bson.D) { return "admin", d("listDatabases", 1) },
	"listCollections": func(*client) (string, bson.D) {
		return "test", d("listCollections", 1)
	},
	"listIndexes": func(*client) (string, bson.D) { return "test", d("listIndexes", "c") },
	"createIndexes": func(*client) (string, bson.D) {
		return "test", d("createIndexes", "c", "indexes", bson.A{d("key", d("x", 1), "name", "x_1")})
	},
	"dropIndexes": func(*client) (string, bson.D) { return "test", d("dropIndexes", "c", "index", "x_1") },
	"insert":      func(*client) (string, bson.D) { return "test", d("insert", "c", "documents", bson.A{d("x", 1)}) },
	"update": func(*client) (string, bson.D) {
		return "test", d("update", "c", "updates", bson.A{d("q", bson.D{}, "u", d("$set", d("y", 1)))})
	},
	"delete": func(*client) (string, bson.D) {
		return "test", d("delete", "c", "deletes", bson.A{d("q", d("x", 99), "limit", 1)})
	},
	"findAndModify": func(*client) (string, bson.D) {
		return "test", d("findAndModify", "c", "query", d("x", 99), "remove", true)
	},
	"bulkWrite": func(*client) (string, bson.D) {
		return "admin", d("bulkWrite", 1, "ops", bson.A{d("insert", 0, "document", d("x", 1))}, "nsInfo", bson.A{d("ns", "test.c")})
	},
	"getMore": func(c *client) (string, bson.D) {
		r := c.mustRun("test", d("find", "c", "batchSize", 0))
		return "test", d("getMore", r.Lookup("cursor", "id").Int64(), "collection", "c")
	},
	"killCursors": func(*client) (string, bson.D) { return "test", d("killCursors", "c", "cursors", bson.A{int64(12345)}) },
	"ping":        func(*client) (string, bson.D) { return "admin", d("ping", 1) },
	"hello":       func(*client) (string, bson.D) { return "admin", d("hello", 1) },
	"isMaster":    func(*client) (string, bson.D) { return "admin", d("isMaster", 1) },
	"saslContinue": func(*client) (string, bson.D) {
		return "admin", d("saslContinue", 1, "conversationId", 1, "payload", bson.Binary{Data: []byte("x")})
	},
	"mapReduce": func(*client) (string, bson.D) {
		return "test", d("mapReduce", "c", "map", "function(){}", "reduce", "function(){}", "out", d("inline", 1))
	},
	"commitTransaction": func(*client) (string, bson.D) { return "admin", d("commitTransaction", 1) },
	"abortTransaction":  func(*client) (string, bson.D) { return "admin", d("abortTransaction", 1) },
}

// TestFailCommandOnEverySpecCommand: each command the suites' fail points
// name exists, so errorCode with errorLabels, blockConnection and
// closeConnection fire on it, as on mongod.
func TestFailCommandOnEverySpecCommand(t *testing.T) {
	names := map[string]bool{}
	for _, u := range collectFailCommands(t, auditSuites...) {
		data, _ := u.fp["data"].(map[string]any)
		cmds, _ := data["failCommands"].([]any)
		for _, c := range cmds {
			names[c.(string)] = true
		}
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	slices.Sort(sorted)
	s := NewServer(t, primaryOpts())
	for _, name := range sorted {
		t.Run(name, func(t *testing.T) {
			sample := auditCommands[name]
			if sample == nil {
				t.Fatalf("the suites fail %s, which this test has no sample of", name)
			}
			for _, tc := range []struct {
				what string
				data bson.D
			}{
				{"errorCode+errorLabels+block", d("errorCode", 462, "errorLabels", bson.A{"SystemOverloadedError", "RetryableError"}, "blockConnection", true, "blockTimeMS", 5)},
				{"closeConnection", d("closeConnection", true)},
			} {
				c := connect(t, s, clientOpts{appName: "audit"})
				db, cmd := sample(c)
				c.mustRun("admin", fp(d("times", 1), append(d("failCommands", bson.A{name}, "appName", "audit"), tc.data...)))
				_, err := c.run(db, cmd)
				if strings.HasPrefix(tc.what, "closeConnection") {
					if err == nil || !c.closed() {
						t.Errorf("%s: %v, want the connection closed", tc.what, err)
					}
					continue
				}
				ce := asCmdError(t, err)
				if ce.Code != 462 || !slices.Equal(ce.Labels, []string{"SystemOverloadedError", "RetryableError"}) {
					t.Errorf("%s: %v, want 462 with both labels", tc.what, ce)
				}
			}
		})
	}
}

// TestFailCommandWriteConcernErrorLabels: the retryable writes tests'
// writeConcernError with errorLabels (and without, labelled by the
// server) on each write command.
func TestFailCommandWriteConcernErrorLabels(t *testing.T) {
	s := NewServer(t, primaryOpts())
	c := connect(t, s, clientOpts{})
	lsid := newLSID()
	for i, name := range []string{"insert", "update", "delete", "findAndModify", "bulkWrite"} {
		for _, tc := range []struct {
			labels bson.A
			want   []string
		}{
			{bson.A{"RetryableWriteError"}, []string{"RetryableWriteError"}},
			{bson.A{}, nil},
			{nil, []string{"RetryableWriteError"}}, // 91 is a retryable code
		} {
			data := d("failCommands", bson.A{name}, "writeConcernError", d("code", 91, "errmsg", "Replication is being shut down"))
			if tc.labels != nil {
				data = append(data, bson.E{Key: "errorLabels", Value: tc.labels})
			}
			c.mustRun("admin", fp(d("times", 1), data))
			db, cmd := auditCommands[name](c)
			r, err := c.run(db, withTxn(cmd, lsid, int64(100+i)))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if r.Lookup("writeConcernError", "code").Int32() != 91 {
				t.Errorf("%s: no writeConcernError in %s", name, r)
			}
			var got []string
			if arr, ok := r.Lookup("errorLabels").ArrayOK(); ok {
				vals, _ := arr.Values()
				for _, v := range vals {
					got = append(got, v.StringValue())
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s with errorLabels %v: labels %v, want %v", name, tc.labels, got, tc.want)
			}
		}
	}
}
