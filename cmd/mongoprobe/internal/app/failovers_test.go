package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/cmd/mongoprobe/internal/config/configtest"
	"github.com/mongoscope/mongoscope/cmd/mongoprobe/internal/logbuf"
	"github.com/mongoscope/mongoscope/mongotest"
)

// apiFailover is /api/failovers' form of a failover, as a client reads it.
type apiFailover struct {
	Cluster                 string  `json:"cluster"`
	OldPrimary              string  `json:"old_primary"`
	NewPrimary              string  `json:"new_primary"`
	Detected                string  `json:"detected"`
	NewPrimarySeen          string  `json:"new_primary_seen"`
	NewPrimaryAfterSeconds  float64 `json:"new_primary_after_seconds"`
	NewPrimaryAfter         string  `json:"new_primary_after"`
	WriteUnavailableSeconds float64 `json:"write_unavailable_seconds"`
	WriteUnavailable        string  `json:"write_unavailable"`
	Reads                   map[string]struct {
		Probes int `json:"probes"`
		Failed int `json:"failed"`
	} `json:"reads"`
	Errors  map[string]int `json:"errors"`
	Open    bool           `json:"open"`
	Settled bool           `json:"settled"`
	End     string         `json:"end"`
}

func getFailovers(t *testing.T, r *running, query string) (int, []apiFailover, string) {
	t.Helper()
	code, body := r.get(t, "/api/failovers"+query)
	if code != 200 {
		return code, nil, body
	}
	var out struct {
		Failovers []apiFailover `json:"failovers"`
	}
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatalf("/api/failovers is not JSON: %v\n%s", err, body)
	}
	return code, out.Failovers, body
}

// waitSettled polls /api/failovers until a closed failover is there.
func waitSettled(t *testing.T, r *running, query string, timeout time.Duration) ([]apiFailover, string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		_, fs, body := getFailovers(t, r, query)
		if len(fs) > 0 && !fs[0].Open {
			return fs, body
		}
		if time.Now().After(deadline) {
			t.Fatalf("no closed failover in /api/failovers%s:\n%s", query, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestFailoversAPI: a step-down of an authenticated replica set's primary
// is one settled failover in /api/failovers, whose detection-to-primary
// matches the set's own events, in the metrics and in one log record; the
// URI's password is in none of them.
func TestFailoversAPI(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{Options: mongotest.Options{Auth: true}, ElectionDelay: time.Second})
	if err := rs.AddUser("admin", "probe", configtest.Password); err != nil {
		t.Fatal(err)
	}
	uri := "mongodb://probe:" + configtest.Password + "@" + rs.Members()[0].Addr() + "/?replicaSet=" + rs.Name() + "&authSource=admin"
	path := writeConfig(t, fmt.Sprintf(`interval: 200ms
timeouts: {ping: 150ms, read: 150ms, write: 150ms}
read_preferences: [primary, secondaryPreferred]
clusters:
  - name: rs
    uri: %q
  - name: other
    uri: mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=100
    scheduled: false
`, uri))
	r := start(t, []string{"--config.file", path}, noEnv)
	defer r.stop(t)
	if code, fs, body := getFailovers(t, r, ""); code != 200 || len(fs) != 0 || !strings.Contains(body, `"failovers": []`) {
		t.Fatalf("before any failover: %d %s", code, body)
	}
	time.Sleep(time.Second)
	old := rs.Primary().Addr()
	last := rs.LastEvent()
	if err := rs.StepDown(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	elected, err := rs.WaitFor(ctx, mongotest.EventElected, last)
	if err != nil {
		t.Fatal(err)
	}
	var down mongotest.ReplicaSetEvent
	for _, ev := range rs.Events() {
		if ev.Kind == mongotest.EventSteppedDown && ev.Seq > last {
			down = ev
		}
	}
	truth := elected.Time.Sub(down.Time).Seconds()
	fs, body := waitSettled(t, r, "?cluster=rs", 10*time.Second)
	time.Sleep(600 * time.Millisecond)
	_, fs, body = getFailovers(t, r, "")
	if len(fs) != 1 {
		t.Fatalf("%d failovers, want 1:\n%s", len(fs), body)
	}
	f := fs[0]
	if f.Cluster != "rs" || f.OldPrimary != old || f.NewPrimary != elected.Addr || !f.Settled || f.End != "settled" || f.Open {
		t.Errorf("failover:\n%s", body)
	}
	if d := f.NewPrimaryAfterSeconds - truth; d < -0.2 || d > 0.2 {
		t.Errorf("new primary after %vs, truth %vs", f.NewPrimaryAfterSeconds, truth)
	}
	if d := f.WriteUnavailableSeconds - truth; f.WriteUnavailableSeconds <= 0 || d < -0.4 || d > 0.4 {
		t.Errorf("write unavailable %vs, truth %vs", f.WriteUnavailableSeconds, truth)
	}
	if _, err := time.Parse(time.RFC3339, f.Detected); err != nil || !strings.Contains(f.Detected, ".") || f.NewPrimaryAfter == "" || f.WriteUnavailable == "" {
		t.Errorf("times and durations: %s", body)
	}
	if len(f.Reads) != 2 || f.Reads["primary"].Failed == 0 {
		t.Errorf("reads: %s", body)
	}
	if _, fs, _ := getFailovers(t, r, "?cluster=other"); len(fs) != 0 {
		t.Errorf("?cluster=other: %+v", fs)
	}
	if code, body := r.get(t, "/api/failovers?cluster="+strings.Repeat("x", 100)); code != 400 || len(body) > 200 {
		t.Errorf("unknown cluster: %d %q", code, body)
	}
	_, metrics := r.get(t, "/metrics")
	fams := parseMetrics(t, metrics)
	for name, want := range map[string]float64{"mongoprobe_failovers_total": 1, "mongoprobe_failover_detection_to_primary_seconds": 1, "mongoprobe_failover_write_unavailable_seconds": 1} {
		labels := map[string]string{"cluster": "rs"}
		if name == "mongoprobe_failovers_total" {
			labels["settled"] = "true"
		}
		if v, ok := sample(fams, name, labels); !ok || v != want {
			t.Errorf("%s = %v %v, want %v", name, v, ok, want)
		}
	}
	if v, ok := sample(fams, "mongoprobe_failover_read_errors_total", map[string]string{"cluster": "rs", "read_preference": "primary"}); !ok || v < 1 {
		t.Errorf("mongoprobe_failover_read_errors_total{primary} = %v %v", v, ok)
	}
	if code := r.stop(t); code != 0 {
		t.Errorf("exit code %d", code)
	}
	logs := r.stderr.String()
	var rec map[string]any
	n := 0
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, `"msg":"failover"`) {
			n++
			if err := json.Unmarshal([]byte(l), &rec); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n != 1 || rec["cluster"] != "rs" || rec["old"] != old || rec["new"] != elected.Addr || rec["settled"] != true ||
		rec["reads_failed"] == nil || rec["errors"] == nil || rec["new_primary_after"] == nil || rec["write_unavailable"] == nil || rec["detected"] == nil {
		t.Errorf("%d failover records, the last: %v", n, rec)
	}
	for what, text := range map[string]string{"logs": logs, "/api/failovers": body, "/metrics": metrics} {
		if strings.Contains(text, configtest.Password) {
			t.Errorf("the %s contain the URI's password", what)
		}
	}
}

// TestDemoFailovers: the demo's injected step-down makes a settled
// failover, served by /api/failovers.
func TestDemoFailovers(t *testing.T) {
	r := start(t, []string{"--demo.fault-interval", "3s"}, noEnv)
	defer r.stop(t)
	fs, body := waitSettled(t, r, "?cluster=demo", 25*time.Second)
	f := fs[0]
	if !f.Settled || f.NewPrimary == "" || f.NewPrimary == f.OldPrimary || f.NewPrimaryAfterSeconds < 1 || f.WriteUnavailableSeconds <= 0 {
		t.Errorf("demo failover:\n%s", body)
	}
	if code := r.stop(t); code != 0 {
		t.Errorf("exit code %d", code)
	}
	if !strings.Contains(r.stderr.String(), `"msg":"failover"`) {
		t.Errorf("no failover record in the logs")
	}
}

// TestDrill: drill --step-down against a replica set given by --uri
// steps its primary down and prints a settled report (exit 0).
func TestDrill(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{Options: mongotest.Options{Auth: true}, ElectionDelay: time.Second})
	if err := rs.AddUser("admin", "probe", configtest.Password); err != nil {
		t.Fatal(err)
	}
	old := rs.Primary().Addr()
	uri := "mongodb://probe:" + configtest.Password + "@" + old + "/?replicaSet=" + rs.Name() + "&authSource=admin"
	var stdout, stderr logbuf.Buffer
	start := time.Now()
	code := Main(context.Background(), []string{"drill", "--step-down", "--cluster", "default", "--yes", "--uri", uri, "--log.format", "json", "--drill.timeout", "30s"}, noEnv, &stdout, &stderr)
	out := stdout.String()
	t.Logf("drill took %v:\n%s", time.Since(start), out)
	if code != ExitOK {
		t.Fatalf("exit code %d\n%s", code, stderr.String())
	}
	p := rs.Primary()
	if p == nil || p.Addr() == old {
		t.Fatalf("the primary did not change")
	}
	for _, want := range []string{`failover drill on cluster "default": SETTLED`, "old primary         " + old, "new primary         " + p.Addr(),
		"detected", "new primary seen", "write unavailable", "reads               primary:", "retries absorbed", "errors", "(settled)"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	var stepDowns int
	for _, c := range rs.Members()[0].Commands() {
		if c.Name == "replSetStepDown" {
			stepDowns++
		}
	}
	if stepDowns != 1 {
		t.Errorf("%d replSetStepDown commands on the old primary", stepDowns)
	}
	if !strings.Contains(stderr.String(), `"msg":"failover"`) {
		t.Errorf("no failover record in the logs")
	}
	if strings.Contains(out+stderr.String(), configtest.Password) {
		t.Errorf("the output contains the URI's password")
	}
}

func TestDrillRefusals(t *testing.T) {
	uri := "mongodb://probe:" + configtest.Password + "@127.0.0.1:1/?replicaSet=rs0"
	for _, c := range []struct {
		args    []string
		setting string
	}{
		{[]string{"drill", "--step-down", "--uri", uri}, "--yes"},
		{[]string{"drill", "--step-down", "--cluster", "default"}, "--yes"},
		{[]string{"drill", "--yes", "--uri", uri}, "--step-down"},
		{[]string{"drill", "--step-down", "--yes", "--cluster", "prod", "--uri", uri}, "--cluster"},
		{[]string{"drill", "--step-down", "--yes", "--cluster", "prod"}, "--cluster"}, // the demo's is "demo"
		{[]string{"drill", "--step-down", "--yes", "--drill.timeout", "0s", "--uri", uri}, "--drill.timeout"},
		{[]string{"--yes", "--uri", uri}, "--yes"},
		{[]string{"check", "--step-down", "--uri", uri}, "--step-down"},
	} {
		var stdout, stderr logbuf.Buffer
		code := Main(context.Background(), c.args, noEnv, &stdout, &stderr)
		if code != ExitConfig || !strings.Contains(stderr.String(), "invalid setting "+c.setting) {
			t.Errorf("%v: exit %d, stderr %q", c.args, code, stderr.String())
		}
		if strings.Contains(stdout.String()+stderr.String(), configtest.Password) {
			t.Errorf("%v: the output contains the password", c.args)
		}
	}
}

// TestDrillStepDownConnectionClosed: as servers before 4.2 do, the
// stepping-down primary closes the drill's connection (a fail point
// here, while the set steps down from Go): the network error is not a
// failure, since a new primary appears.
func TestDrillStepDownConnectionClosed(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{ElectionDelay: 500 * time.Millisecond})
	p := rs.Primary()
	if err := p.SetFailPoint(bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "alwaysOn"},
		{Key: "data", Value: bson.D{{Key: "failCommands", Value: bson.A{"replSetStepDown"}}, {Key: "closeConnection", Value: true}}}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() {
		if _, err := p.WaitForCommand(ctx, "replSetStepDown"); err == nil {
			rs.StepDown(ctx)
		}
	}()
	var stdout, stderr logbuf.Buffer
	code := Main(ctx, []string{"drill", "--step-down", "--yes", "--uri", rs.URI(), "--log.format", "json", "--drill.timeout", "20s"}, noEnv, &stdout, &stderr)
	if code != ExitOK || !strings.Contains(stdout.String(), "SETTLED") || !strings.Contains(stderr.String(), "the step-down's connection was closed") {
		t.Errorf("exit %d:\n%s\n%s", code, stdout.String(), stderr.String())
	}
}

// TestDrillNoFailover: a step-down refused by the server (a standalone
// has no replication) fails the drill, exit 1.
func TestDrillNoFailover(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	var stdout, stderr logbuf.Buffer
	code := Main(context.Background(), []string{"drill", "--step-down", "--yes", "--uri", "mongodb://" + srv.Addr(), "--drill.timeout", "10s"}, noEnv, &stdout, &stderr)
	if code != ExitFailed || !strings.Contains(stdout.String(), "FAILED") || !strings.Contains(stdout.String(), "replSetStepDown") {
		t.Errorf("exit %d:\n%s", code, stdout.String())
	}
}

// TestDrillSharded: a sharded cluster has no primary to step down: the
// drill fails at once rather than at its timeout.
func TestDrillSharded(t *testing.T) {
	sc := mongotest.NewShardedCluster(t, 2, mongotest.ShardedClusterOptions{})
	var stdout, stderr logbuf.Buffer
	begin := time.Now()
	code := Main(context.Background(), []string{"drill", "--step-down", "--yes", "--uri", sc.URI(), "--drill.timeout", "30s"}, noEnv, &stdout, &stderr)
	if code != ExitFailed || !strings.Contains(stdout.String(), "topology Sharded") || time.Since(begin) > 10*time.Second {
		t.Errorf("exit %d after %v:\n%s", code, time.Since(begin), stdout.String())
	}
}
