package driver_test

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/internal/spectest/unified"
	"github.com/mongoscope/mongoscope/internal/spectest/unified/mongotestdeploy"
)

// The unified-format spec suites, run by the unified test runner
// (internal/spectest/unified) against mongotest deployments, through the
// driver's public API. Each Test logs its summary line.

func unifiedRunner() *unified.Runner {
	return &unified.Runner{Provider: mongotestdeploy.Provider{}, Skip: mongotestSkip}
}

// mongotestSkip names the tests that mongotest, not the driver, cannot
// honour.
func mongotestSkip(file string, test bson.Raw) string {
	ops, _ := test.Lookup("operations").ArrayOK()
	vals, _ := ops.Values()
	for _, v := range vals {
		op := v.Document()
		if op.Lookup("name").StringValue() != "failPoint" {
			continue
		}
		cmds, _ := op.Lookup("arguments", "failPoint", "data", "failCommands").ArrayOK()
		names, _ := cmds.Values()
		hello, camel := false, false
		for _, n := range names {
			switch n.StringValue() {
			case "hello", "ismaster":
				hello = true
			case "isMaster":
				camel = true
			}
		}
		if hello && !camel {
			return "the fail point names hello and ismaster but not isMaster: mongod fails all three spellings, mongotest only the names given, so the driver's isMaster handshake escapes it"
		}
	}
	return ""
}

// checkNoDriverGoroutines fails t if goroutines of the driver outlive the
// suite: every client entity must have been disconnected.
func checkNoDriverGoroutines(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		var left []string
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "mongoscope/driver/internal/") && !strings.Contains(g, "testing.tRunner") {
				left = append(left, g)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%d driver goroutines left:\n%s", len(left), strings.Join(left, "\n\n"))
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func runUnifiedSuite(t *testing.T, name string, pattern string, dir ...string) {
	unifiedRunner().RunSuite(t, unified.Suite{Name: name, Pattern: pattern, Dir: dir})
	checkNoDriverGoroutines(t)
}

func TestUnifiedFormatValidPass(t *testing.T) {
	runUnifiedSuite(t, "unified-test-format/valid-pass", "", "unified-test-format", "tests", "valid-pass")
}

func TestUnifiedCommandLoggingAndMonitoring(t *testing.T) {
	runUnifiedSuite(t, "command-logging-and-monitoring", "", "command-logging-and-monitoring", "tests")
}

func TestUnifiedSDAM(t *testing.T) {
	runUnifiedSuite(t, "server-discovery-and-monitoring/unified", "", "server-discovery-and-monitoring", "tests", "unified")
}

func TestUnifiedCMAPLogging(t *testing.T) {
	runUnifiedSuite(t, "connection-monitoring-and-pooling/logging", "", "connection-monitoring-and-pooling", "tests", "logging")
}

func TestUnifiedServerSelectionLogging(t *testing.T) {
	runUnifiedSuite(t, "server-selection/logging", "", "server-selection", "tests", "logging")
}

func TestUnifiedCRUD(t *testing.T) {
	runUnifiedSuite(t, "crud/unified", "", "crud", "tests", "unified")
}

func TestUnifiedCollectionManagement(t *testing.T) {
	runUnifiedSuite(t, "collection-management", "", "collection-management", "tests")
}

func TestUnifiedIndexManagement(t *testing.T) {
	runUnifiedSuite(t, "index-management", "", "index-management", "tests")
}

func TestUnifiedReadWriteConcern(t *testing.T) {
	runUnifiedSuite(t, "read-write-concern/operation", "", "read-write-concern", "tests", "operation")
}

func TestUnifiedRunCommand(t *testing.T) {
	runUnifiedSuite(t, "run-command/unified", "", "run-command", "tests", "unified")
}

func TestUnifiedVersionedAPI(t *testing.T) {
	runUnifiedSuite(t, "versioned-api", "", "versioned-api", "tests")
}

func TestUnifiedHandshake(t *testing.T) {
	runUnifiedSuite(t, "mongodb-handshake/unified", "", "mongodb-handshake", "tests", "unified")
}
