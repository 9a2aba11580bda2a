package app

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/cmd/mongoprobe/internal/config/configtest"
	"github.com/mongoscope/mongoscope/cmd/mongoprobe/internal/probe"
	"github.com/mongoscope/mongoscope/mongotest"
)

// parseMetrics parses a /metrics body in the Prometheus text format with
// Prometheus's own parser.
func parseMetrics(t *testing.T, body string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("the Prometheus text parser refuses /metrics: %v\n%s", err, body)
	}
	return fams
}

// gauge returns the value of the family's sample whose labels include
// want, and whether there is one.
func sample(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		case m.Untyped != nil:
			return m.GetUntyped().GetValue(), true
		}
		return 0, true
	}
	return 0, false
}

func writeConfig(t *testing.T, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mongoprobe.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// collector stands in for an OTLP/HTTP collector and keeps what it was
// sent.
type collector struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
}

func newCollector(t *testing.T) *collector {
	c := &collector{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		if req.Method == "POST" && req.URL.Path == "/v1/traces" {
			c.mu.Lock()
			c.bodies = append(c.bodies, b)
			c.mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *collector) all() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Join(c.bodies, nil)
}

// TestScrapeEveryMetric runs mongoprobe against an authenticated
// three-member replica set whose secondaries answer finds too slowly, and
// steps its primary down: /metrics, parsed with Prometheus's text parser,
// then holds every mongoprobe metric and the driver's own, and the
// password of the URI is in none of the logs, metrics, /probe output and
// spans sent to the OTLP collector.
func TestScrapeEveryMetric(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{Options: mongotest.Options{Auth: true}, ElectionDelay: 300 * time.Millisecond})
	if err := rs.AddUser("admin", "probe", configtest.Password); err != nil {
		t.Fatal(err)
	}
	// The secondaries' finds outlast the read timeout: the secondary
	// read times out.
	for _, m := range rs.Members()[1:] {
		if err := m.SetFailPoint(bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "alwaysOn"},
			{Key: "data", Value: bson.D{{Key: "failCommands", Value: bson.A{"find"}}, {Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: 800}}}}); err != nil {
			t.Fatal(err)
		}
	}
	uri := "mongodb://probe:" + configtest.Password + "@" + rs.Members()[0].Addr() + "/?replicaSet=" + rs.Name() + "&authSource=admin"
	path := writeConfig(t, fmt.Sprintf(`interval: 200ms
timeouts: {ping: 500ms, read: 300ms, write: 2s}
read_preferences: [primary, secondary]
clusters:
  - name: rs
    uri: %q
`, uri))
	col := newCollector(t)
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": col.URL}
	for k, v := range env {
		t.Setenv(k, v)
	}
	r := start(t, []string{"--config.file", path, "--log.level", "debug"}, func(k string) string { return env[k] })
	defer r.stop(t)

	waitMetric := func(name string, labels map[string]string, ok func(float64) bool) map[string]*dto.MetricFamily {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			_, body := r.get(t, "/metrics")
			fams := parseMetrics(t, body)
			if v, found := sample(fams, name, labels); found && ok(v) {
				return fams
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s%v never as expected:\n%s", name, labels, body)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	positive := func(v float64) bool { return v > 0 }
	early := waitMetric("mongoprobe_probe_timeouts_total", map[string]string{"cluster": "rs", "probe": "read", "target": "secondary"}, positive)
	if v, _ := sample(early, "mongoprobe_probe_success", map[string]string{"cluster": "rs", "probe": "read", "target": "secondary"}); v != 0 {
		t.Errorf("the secondary read succeeded though the secondaries' finds are blocked")
	}
	before := rs.LastEvent()
	if err := rs.StepDown(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := rs.WaitFor(ctx, mongotest.EventElected, before); err != nil {
		t.Fatal(err)
	}
	waitMetric("mongoprobe_primary_changes_total", map[string]string{"cluster": "rs"}, positive)
	waitMetric("mongoprobe_no_writable_primary_seconds_total", map[string]string{"cluster": "rs"}, positive)
	fams := waitMetric("mongoprobe_up", map[string]string{"cluster": "rs"}, func(v float64) bool { return v == 1 })

	for _, name := range probe.MetricNames {
		if _, ok := sample(fams, name, map[string]string{"cluster": "rs"}); !ok {
			t.Errorf("/metrics lacks %s{cluster=\"rs\"}", name)
		}
	}
	for _, name := range []string{"mongoprobe_build_info", "mongodb_driver_operation_duration_seconds", "mongodb_driver_command_duration_seconds",
		"mongodb_driver_pool_connections", "mongodb_driver_server_heartbeat_duration_seconds", "go_goroutines"} {
		if fams[name] == nil {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	if v, _ := sample(fams, "mongoprobe_member_up", map[string]string{"cluster": "rs", "member": rs.Members()[2].Addr()}); v != 1 {
		t.Errorf("member 2 is not up in /metrics")
	}

	code, probeBody := r.get(t, "/probe?target=rs")
	if code != 200 {
		t.Fatalf("/probe?target=rs: %d", code)
	}
	pf := parseMetrics(t, probeBody)
	if v, ok := sample(pf, "mongoprobe_probe_success", map[string]string{"probe": "write", "target": "primary"}); !ok || v != 1 {
		t.Errorf("/probe: write success %v %v:\n%s", v, ok, probeBody)
	}
	if v, ok := sample(pf, "mongoprobe_up", nil); !ok || v != 1 {
		t.Errorf("/probe: up %v %v", v, ok)
	}
	_, metricsBody := r.get(t, "/metrics")
	if code := r.stop(t); code != 0 {
		t.Errorf("exit code %d", code)
	}
	spans := col.all()
	if len(spans) == 0 || !bytes.Contains(spans, []byte("mongoprobe.round")) {
		t.Errorf("the collector received no round span")
	}
	for what, text := range map[string]string{"logs": r.stderr.String(), "/metrics": metricsBody, "/probe": probeBody, "spans": string(spans)} {
		if strings.Contains(text, configtest.Password) {
			t.Errorf("the %s contain the URI's password", what)
		}
	}
	if !strings.Contains(r.stderr.String(), `"msg":"lost the writable primary"`) {
		t.Errorf("the logs do not say the primary was lost")
	}
}

// TestUpAtZeroAgainstDeadCluster: with nothing listening, mongoprobe_up is
// on /metrics at 0, before the first round ends and after rounds.
func TestUpAtZeroAgainstDeadCluster(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	path := writeConfig(t, fmt.Sprintf(`interval: 100ms
timeouts: {ping: 100ms, read: 100ms, write: 100ms}
clusters:
  - name: dead
    uri: "mongodb://probe:%s@%s/?serverSelectionTimeoutMS=100&connectTimeoutMS=100"
`, configtest.Password, dead))
	r := start(t, []string{"--config.file", path}, noEnv)
	defer r.stop(t)
	_, body := r.get(t, "/metrics")
	if v, ok := sample(parseMetrics(t, body), "mongoprobe_up", map[string]string{"cluster": "dead"}); !ok || v != 0 {
		t.Fatalf("before the first round: mongoprobe_up %v, present %v:\n%s", v, ok, body)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, body = r.get(t, "/metrics")
		fams := parseMetrics(t, body)
		if n, _ := sample(fams, "mongoprobe_probes_total", map[string]string{"cluster": "dead", "probe": "write", "outcome": "failure"}); n >= 3 {
			if v, ok := sample(fams, "mongoprobe_up", map[string]string{"cluster": "dead"}); !ok || v != 0 {
				t.Fatalf("after three rounds: mongoprobe_up %v, present %v", v, ok)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no three failed rounds:\n%s", body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code, _ := r.get(t, "/-/ready"); code != 200 {
		t.Errorf("/-/ready: %d (a round completed, though it failed)", code)
	}
	if strings.Contains(body+r.stderr.String(), configtest.Password) {
		t.Errorf("the password is in /metrics or the logs")
	}
}

// TestCheck: check on a healthy replica set, given one seed, pings every
// member and exits 0; with a wrong password it exits 1 with the auth
// class, and never prints the password.
func TestCheck(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{Options: mongotest.Options{Auth: true}})
	if err := rs.AddUser("admin", "probe", configtest.Password); err != nil {
		t.Fatal(err)
	}
	seed := rs.Members()[0].Addr()
	var out, errs bytes.Buffer
	uri := "mongodb://probe:" + configtest.Password + "@" + seed + "/?replicaSet=" + rs.Name() + "&authSource=admin"
	if code := Main(context.Background(), []string{"check", "--uri", uri}, noEnv, &out, &errs); code != ExitOK {
		t.Fatalf("check: exit %d\n%s\n%s", code, out.String(), errs.String())
	}
	for _, m := range rs.Members() {
		if !strings.Contains(out.String(), "ping   "+m.Addr()) && !strings.Contains(out.String(), "ping  "+m.Addr()) {
			t.Errorf("check did not ping %s:\n%s", m.Addr(), out.String())
		}
	}
	if !strings.Contains(out.String(), "every probe succeeded") {
		t.Errorf("check output:\n%s", out.String())
	}

	out.Reset()
	errs.Reset()
	wrong := "Wr0ngPassw0rd"
	bad := "mongodb://probe:" + wrong + "@" + seed + "/?replicaSet=" + rs.Name() + "&authSource=admin&serverSelectionTimeoutMS=500"
	if code := Main(context.Background(), []string{"check", "--uri", bad}, noEnv, &out, &errs); code != ExitFailed {
		t.Fatalf("check with a wrong password: exit %d\n%s", code, out.String())
	}
	if !strings.Contains(out.String(), "auth") {
		t.Errorf("check does not say auth:\n%s", out.String())
	}
	if strings.Contains(out.String()+errs.String(), wrong) {
		t.Errorf("check printed the password:\n%s\n%s", out.String(), errs.String())
	}
}

// TestFerretDB runs check and a scrape against FerretDB v1, a real
// third-party server (started by make test; MONGOSCOPE_FERRETDB_URI and
// MONGOSCOPE_FERRETDB_AUTH_URI). MONGOSCOPE_REQUIRE_FERRETDB makes its
// absence a failure.
func TestFerretDB(t *testing.T) {
	uris := map[string]string{"noauth": os.Getenv("MONGOSCOPE_FERRETDB_URI"), "auth": os.Getenv("MONGOSCOPE_FERRETDB_AUTH_URI")}
	if uris["noauth"] == "" || uris["auth"] == "" {
		if os.Getenv("MONGOSCOPE_REQUIRE_FERRETDB") != "" {
			t.Fatal("MONGOSCOPE_REQUIRE_FERRETDB is set but MONGOSCOPE_FERRETDB_URI or MONGOSCOPE_FERRETDB_AUTH_URI is not")
		}
		t.Skip("no FerretDB (make test starts it; or make ferretdb-start and source .cache/ferretdb/env)")
	}
	for name, uri := range uris {
		t.Run(name, func(t *testing.T) {
			var out, errs bytes.Buffer
			if code := Main(context.Background(), []string{"check", "--uri", uri}, noEnv, &out, &errs); code != ExitOK {
				t.Fatalf("check against FerretDB: exit %d\n%s\n%s", code, out.String(), errs.String())
			}
			for _, want := range []string{"ping", "read", "write", "every probe succeeded"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("check output lacks %q:\n%s", want, out.String())
				}
			}
			if pw := passwordOf(uri); pw != "" && strings.Contains(out.String()+errs.String(), pw) {
				t.Errorf("check printed the password")
			}
		})
	}
	// The running daemon: a scrape shows the cluster up.
	path := writeConfig(t, fmt.Sprintf("interval: 200ms\nclusters:\n  - name: ferretdb\n    uri: %q\n", uris["auth"]))
	r := start(t, []string{"--config.file", path}, noEnv)
	defer r.stop(t)
	deadline := time.Now().Add(15 * time.Second)
	for {
		_, body := r.get(t, "/metrics")
		fams := parseMetrics(t, body)
		if v, _ := sample(fams, "mongoprobe_probe_success", map[string]string{"cluster": "ferretdb", "probe": "write"}); v == 1 {
			if up, _ := sample(fams, "mongoprobe_up", map[string]string{"cluster": "ferretdb"}); up != 1 {
				t.Errorf("mongoprobe_up %v against FerretDB", up)
			}
			if pw := passwordOf(uris["auth"]); pw != "" && strings.Contains(body+r.stderr.String(), pw) {
				t.Errorf("the password is in /metrics or the logs")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no successful write probe against FerretDB:\n%s\n%s", body, r.stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// passwordOf returns the password of a mongodb:// URI's userinfo.
func passwordOf(uri string) string {
	rest, ok := strings.CutPrefix(uri, "mongodb://")
	if !ok {
		return ""
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return ""
	}
	_, pw, _ := strings.Cut(rest[:at], ":")
	return pw
}
