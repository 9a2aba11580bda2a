package app

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/cmd/mongoprobe/internal/logbuf"
	"github.com/mongoscope/mongoscope/mongotest"
)

// row returns the table's row of one budget, its cells split.
func row(t *testing.T, out, budget string) []string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		f := regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(l), -1)
		if len(f) > 0 && f[0] == budget {
			return f
		}
	}
	t.Fatalf("no row for %s:\n%s", budget, out)
	return nil
}

const header = "BUDGET  RUNS  OK  TIMED OUT  ERRORS  STAGES"

// TestCheckTimeoutsDemo: in the demo, finds blocked 150ms time out under a
// 20ms budget, waiting for the reply, a little late (under 50ms, a bound
// loose enough for a loaded machine), and succeed under 250ms.
func TestCheckTimeoutsDemo(t *testing.T) {
	var stdout, stderr logbuf.Buffer
	code := Main(context.Background(), []string{"check", "--timeouts", "--timeouts.count", "3", "--timeouts.budgets", "20ms,250ms", "--timeouts.max-overshoot", "50ms", "--log.format", "logfmt"}, noEnv, &stdout, &stderr)
	out := stdout.String()
	t.Logf("\n%s", out)
	if code != ExitOK {
		t.Errorf("exit code %d, want 0; stderr:\n%s", code, stderr.String())
	}
	for _, want := range []string{"cluster demo:", "SIMULATION", header, "OVERSHOOT P50", "P99", "MAX", "SERVER-FIRST", "every timeout's overshoot stayed under 50ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q", want)
		}
	}
	if r := row(t, out, "20ms"); len(r) != 10 || r[1] != "3" || r[2] != "0" || r[3] != "3" || r[4] != "0" || r[5] != "network=3" || r[9] != "0 (0%)" {
		t.Errorf("20ms: %q", r)
	}
	if r := row(t, out, "250ms"); len(r) != 10 || r[1] != "3" || r[2] != "3" || r[3] != "0" || r[5] != "-" {
		t.Errorf("250ms: %q", r)
	}
}

// TestCheckTimeoutsURI: against a given URI, MaxTimeMSExpired from the
// server counts as server-first; blocked finds time out at network, and a
// bound they cannot hold fails the check; a read the server refuses fails
// it too. The password is never printed.
func TestCheckTimeoutsURI(t *testing.T) {
	const pw = "s3cr3t-t1me0uts"
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{})
	if err := rs.AddUser("admin", "probe", pw); err != nil {
		t.Fatal(err)
	}
	uri := strings.Replace(rs.URI(), "mongodb://", "mongodb://probe:"+pw+"@", 1)
	setFP := func(data bson.D) {
		t.Helper()
		err := rs.Members()[0].SetFailPoint(bson.D{{Key: "configureFailPoint", Value: "failCommand"},
			{Key: "mode", Value: bson.D{{Key: "skip", Value: 1}}}, {Key: "data", Value: data}}) // the warm-up read passes
		if err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) (int, string) {
		t.Helper()
		var stdout, stderr logbuf.Buffer
		code := Main(context.Background(), append([]string{"check", "--timeouts", "--uri", uri, "--log.format", "logfmt"}, args...), noEnv, &stdout, &stderr)
		if strings.Contains(stdout.String()+stderr.String(), pw) {
			t.Errorf("the password is in the output")
		}
		t.Logf("exit %d\n%s", code, stdout.String())
		return code, stdout.String()
	}

	setFP(bson.D{{Key: "failCommands", Value: bson.A{"find"}}, {Key: "errorCode", Value: 50}})
	code, out := run("--timeouts.count", "3", "--timeouts.budgets", "500ms", "--timeouts.collection", "app.orders",
		"--timeouts.filter", `{"status": "slow"}`)
	if code != ExitOK {
		t.Errorf("server-first: exit %d", code)
	}
	if !strings.Contains(out, `findOne {"status": "slow"} on app.orders`) {
		t.Errorf("the header does not name the read")
	}
	if r := row(t, out, "500ms"); len(r) != 10 || r[3] != "3" || r[5] != "server=3" || r[9] != "3 (100%)" || !strings.HasPrefix(r[8], "-") {
		t.Errorf("500ms: %q", r)
	}

	setFP(bson.D{{Key: "failCommands", Value: bson.A{"find"}}, {Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: 200}})
	code, out = run("--timeouts.count", "2", "--timeouts.budgets", "30ms", "--timeouts.max-overshoot", "1ns")
	if code != ExitFailed {
		t.Errorf("an impossible bound: exit %d, want 1", code)
	}
	if r := row(t, out, "30ms"); r[3] != "2" || r[5] != "network=2" {
		t.Errorf("30ms: %q", r)
	}
	if !strings.Contains(out, "FAILED: 2 timeout(s) overshot their timeoutMS by 1ns or more") {
		t.Errorf("no FAILED line")
	}

	setFP(bson.D{{Key: "failCommands", Value: bson.A{"ping"}}, {Key: "errorCode", Value: 2}}) // off for find
	code, out = run("--timeouts.count", "1", "--timeouts.budgets", "1s", "--timeouts.filter", `{"$bogus": 1}`)
	if code != ExitFailed || !strings.Contains(out, "the warm-up read") {
		t.Errorf("a refused filter: exit %d", code)
	}
}
