package app

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/cmd/mongoprobe/internal/config"
	"github.com/mongoscope/mongoscope/cmd/mongoprobe/internal/config/configtest"
	"github.com/mongoscope/mongoscope/cmd/mongoprobe/internal/logbuf"
	"github.com/mongoscope/mongoscope/mongotest"
)

func noEnv(string) string { return "" }

func TestConfigErrorsExit2(t *testing.T) {
	for _, c := range configtest.ErrorCases {
		t.Run(c.Name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Main(context.Background(), c.ArgsFor(t), c.Getenv, &stdout, &stderr)
			if code != ExitConfig {
				t.Errorf("exit code %d, want 2; stderr: %s", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), c.Setting) {
				t.Errorf("stderr does not name %s: %s", c.Setting, stderr.String())
			}
			if strings.Contains(stderr.String()+stdout.String(), configtest.Password) {
				t.Errorf("the output contains the URI's password: %s", stderr.String())
			}
		})
	}
}

func TestHelpAndVersion(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"check", "--help"}} {
		var stdout, stderr bytes.Buffer
		if code := Main(context.Background(), args, noEnv, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "Usage:") {
			t.Errorf("%v: code %d, stdout %q", args, code, stdout.String())
		}
	}
	var stdout bytes.Buffer
	if code := Main(context.Background(), []string{"--version"}, noEnv, &stdout, io.Discard); code != 0 || !strings.HasPrefix(stdout.String(), "mongoprobe ") {
		t.Errorf("--version: %d %q", code, stdout.String())
	}
}

// TestCheckUnreachable: check on a cluster nobody listens on fails:
// every probe does.
func TestCheckUnreachable(t *testing.T) {
	var stdout, stderr logbuf.Buffer
	code := Main(context.Background(), []string{"check", "--uri", "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=200"}, noEnv, &stdout, &stderr)
	if code != ExitFailed {
		t.Errorf("exit code %d, want 1", code)
	}
	out := stdout.String()
	for _, want := range []string{"CLUSTER", "PROBE", "TARGET", "OUTCOME", "LATENCY", "MEMBER", "RETRIES", "ERROR", "default", "FAILED"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
}

type running struct {
	addr   string
	cancel context.CancelFunc
	done   chan int
	stderr *logbuf.Buffer
	client *http.Client
	code   *int // the exit code, once stopped
}

func start(t *testing.T, args []string, getenv func(string) string) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan int, 1), stderr: &logbuf.Buffer{},
		client: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 20 * time.Second}}
	addr := make(chan string, 1)
	go func() {
		r.done <- run(ctx, append([]string{"--web.listen-address", "127.0.0.1:0", "--log.format", "json"}, args...), getenv, io.Discard, r.stderr, func(a string) { addr <- a })
	}()
	select {
	case r.addr = <-addr:
	case code := <-r.done:
		t.Fatalf("exited with %d: %s", code, r.stderr.String())
	case <-time.After(20 * time.Second):
		t.Fatal("not listening")
	}
	return r
}

func (r *running) get(t *testing.T, path string, header ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+r.addr+path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := r.client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// stop ends the run and returns its exit code; it may be called again
// (a deferred stop after an explicit one).
func (r *running) stop(t *testing.T) int {
	t.Helper()
	if r.code != nil {
		return *r.code
	}
	r.cancel()
	select {
	case code := <-r.done:
		r.code = &code
		return code
	case <-time.After(30 * time.Second):
		buf := make([]byte, 1<<20)
		t.Fatalf("did not stop:\n%s", buf[:runtime.Stack(buf, true)])
	}
	return -1
}

// waitGoroutines waits for the goroutine count to come back to base.
func waitGoroutines(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Errorf("%d goroutines left, %d before:\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestRun(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	base := runtime.NumGoroutine()
	uri := "mongodb://probe:" + configtest.Password + "@" + srv.Addr() + "/?serverSelectionTimeoutMS=500"
	r := start(t, []string{"--uri", uri, "--cluster.name", "local"}, noEnv)

	if code, body := r.get(t, "/-/healthy"); code != 200 || !strings.Contains(body, "Healthy") {
		t.Errorf("/-/healthy: %d %q", code, body)
	}
	code, body := r.get(t, "/metrics", "Accept", "application/openmetrics-text; version=1.0.0")
	if code != 200 {
		t.Errorf("/metrics: %d", code)
	}
	for _, want := range []string{"mongoprobe_build_info{", "driver_version=", "goversion=", "go_goroutines", "process_", "# EOF"} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	long := strings.Repeat("x", 500) + "mongodb://u:pw@h"
	if code, body := r.get(t, "/probe?target="+long); code != 400 || strings.Contains(body, "mongodb://") || len(body) > 200 {
		t.Errorf("/probe unknown: %d %q", code, body)
	}
	if code, _ := r.get(t, "/probe"); code != 400 {
		t.Errorf("/probe without target: %d", code)
	}
	if code, _ := r.get(t, "/probe?target=local", "X-Prometheus-Scrape-Timeout-Seconds", "3"); code != 200 {
		t.Errorf("/probe?target=local: %d", code)
	}
	if code, body := r.get(t, "/"); code != 200 || !strings.Contains(body, "/metrics") || !strings.Contains(body, "/probe?target=local") || !strings.Contains(body, "/-/ready") {
		t.Errorf("/: %d %q", code, body)
	}
	if code, _ := r.get(t, "/nope"); code != 404 {
		t.Errorf("/nope: %d", code)
	}
	code, _ = r.get(t, "/-/ready")
	deadline := time.Now().Add(15 * time.Second)
	for code != 200 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		code, _ = r.get(t, "/-/ready")
	}
	if code != 200 {
		t.Errorf("/-/ready never 200")
	}

	if code := r.stop(t); code != 0 {
		t.Errorf("exit code %d", code)
	}
	logs := r.stderr.String()
	if strings.Contains(logs, configtest.Password) {
		t.Errorf("the logs contain the password")
	}
	for _, want := range []string{`"cluster":"local"`, `"hosts":"` + srv.Addr() + `"`, "http://" + r.addr + "/metrics", "/probe?target=local"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the logs lack %s:\n%s", want, logs)
		}
	}
	waitGoroutines(t, base)
}

func TestDemo(t *testing.T) {
	base := runtime.NumGoroutine()
	r := start(t, []string{"--demo.fault-interval", "1s"}, noEnv)
	if code, body := r.get(t, "/metrics"); code != 200 || !strings.Contains(body, "mongoprobe_build_info") {
		t.Errorf("/metrics: %d", code)
	}
	if code, _ := r.get(t, "/probe?target=demo"); code != 200 {
		t.Errorf("/probe?target=demo: %d", code)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(r.stderr.String(), "fault=step-down") && !strings.Contains(r.stderr.String(), `"fault":"step-down"`) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if code := r.stop(t); code != 0 {
		t.Errorf("exit code %d", code)
	}
	out := r.stderr.String()
	for _, want := range []string{"SIMULATION", "http://" + r.addr + "/metrics", "/probe?target=demo", "/-/ready", "MONGOPROBE_URI", `"component":"demo"`, `"fault":"step-down"`} {
		if !strings.Contains(out, want) {
			t.Errorf("stderr lacks %q:\n%s", want, out)
		}
	}
	waitGoroutines(t, base)
}

// TestTraces: a round's spans reach an OTLP/HTTP collector.
func TestTraces(t *testing.T) {
	var posts atomic.Int64
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == "POST" && req.URL.Path == "/v1/traces" {
			posts.Add(1)
		}
		io.Copy(io.Discard, req.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL}
	for k, v := range env {
		t.Setenv(k, v)
	}
	srv := mongotest.NewServer(t, mongotest.Options{})
	r := start(t, []string{"--uri", "mongodb://" + srv.Addr() + "/?serverSelectionTimeoutMS=500"}, func(k string) string { return env[k] })
	if code, _ := r.get(t, "/probe?target=default"); code != 200 {
		t.Errorf("/probe: %d", code)
	}
	if code := r.stop(t); code != 0 {
		t.Errorf("exit code %d", code)
	}
	if posts.Load() == 0 {
		t.Errorf("the collector received no POST /v1/traces")
	}
}

// TestConfigFile: clusters from a file; an unscheduled cluster does not
// hold readiness back, and is probed on demand.
func TestConfigFile(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	path := filepath.Join(t.TempDir(), "mongoprobe.yaml")
	yaml := "clusters:\n  - name: ondemand\n    uri: mongodb://" + srv.Addr() + "/?serverSelectionTimeoutMS=500\n    scheduled: false\n    interval: 1s\n"
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	r := start(t, []string{"--config.file", path}, noEnv)
	if code, body := r.get(t, "/-/ready"); code != 200 {
		t.Errorf("/-/ready: %d %q", code, body)
	}
	if code, _ := r.get(t, "/probe?target=ondemand"); code != 200 {
		t.Errorf("/probe?target=ondemand: %d", code)
	}
	if code := r.stop(t); code != 0 {
		t.Errorf("exit code %d", code)
	}
	// Its timeouts exceed its interval, but it is not scheduled: no warning.
	if logs := r.stderr.String(); strings.Contains(logs, "longer than the interval") {
		t.Errorf("an unscheduled cluster was warned about: %s", logs)
	}
}

func TestLogger(t *testing.T) {
	for _, tc := range []struct {
		format, want string
	}{{"console", "info hello"}, {"logfmt", "level=INFO msg=hello"}, {"json", `"msg":"hello"`}, {"auto", `"msg":"hello"`}} {
		var b bytes.Buffer
		l := newLogger(&config.Config{LogFormat: tc.format, LogLevel: slog.LevelInfo}, &b)
		l.Debug("hidden")
		l.Info("hello", "k", "v")
		if !strings.Contains(b.String(), tc.want) || strings.Contains(b.String(), "hidden") {
			t.Errorf("%s: %q", tc.format, b.String())
		}
	}
}
