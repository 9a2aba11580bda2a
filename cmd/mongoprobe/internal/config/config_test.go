package config

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/cmd/mongoprobe/internal/config/configtest"
)

func noEnv(string) string { return "" }

func TestErrors(t *testing.T) {
	for _, c := range configtest.ErrorCases {
		t.Run(c.Name, func(t *testing.T) {
			_, err := Parse(c.ArgsFor(t), c.Getenv)
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Parse: %v (%T), want a *Error", err, err)
			}
			if ce.Setting != c.Setting {
				t.Errorf("Setting = %q, want %q (%v)", ce.Setting, c.Setting, err)
			}
			if c.Line != 0 && ce.Line != c.Line {
				t.Errorf("Line = %d, want %d (%v)", ce.Line, c.Line, err)
			}
			if !strings.Contains(err.Error(), c.Setting) {
				t.Errorf("the message %q does not name %s", err, c.Setting)
			}
			if strings.Contains(err.Error(), configtest.Password) {
				t.Errorf("the message %q contains the URI's password", err)
			}
		})
	}
}

func TestPasswordNeverInErrors(t *testing.T) {
	const pw = configtest.Password
	bad := []string{
		"mongodb://u:" + pw + "@h/?maxPoolSize=-1",
		"mongodb://u:" + pw + "@h/?authMechanism=NOPE",
		"mongodb://u:" + pw + "@h:notaport",
		"mongodb://u:" + pw + "@",
		"mongodb+srv://u:" + pw + "@a,b",
		"mongodb://u:" + pw + "@h/?w=0",
		"mongodb://u:" + pw + "@h/?tls=maybe",
		"mongodb://u:" + pw + "@h,i/?loadBalanced=true",
		"mongodb://u:%zz" + pw + "@h",
		"mongodb://u:" + pw + "@h/?readPreference=primary&maxStalenessSeconds=100",
		"mongo://u:" + pw + "@h",
	}
	for _, uri := range bad {
		_, err := Parse([]string{"--uri", uri}, noEnv)
		if err == nil {
			t.Errorf("no error for a bad URI")
			continue
		}
		if strings.Contains(err.Error(), pw) || strings.Contains(err.Error(), "zz"+pw) {
			t.Errorf("error contains the password: %v", err)
		}
		_, err = Parse(nil, func(k string) string {
			if k == EnvURI {
				return uri
			}
			return ""
		})
		if err == nil || strings.Contains(err.Error(), pw) {
			t.Errorf("env: error %v", err)
		}
		path := filepath.Join(t.TempDir(), "c.yaml")
		os.WriteFile(path, []byte("clusters:\n  - name: a\n    uri: '"+uri+"'\n"), 0o600)
		_, err = Parse([]string{"--config.file", path}, noEnv)
		if err == nil || strings.Contains(err.Error(), pw) {
			t.Errorf("file: error %v", err)
		}
	}
	// The redacted form used in logs.
	cfg, err := Parse([]string{"--uri", "mongodb://u:" + pw + "@h1,h2/?tlsCertificateKeyFilePassword=" + pw + "&replicaSet=rs0"}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	r := Redacted(cfg.Clusters[0])
	if strings.Contains(r, pw) || !strings.Contains(r, "h1") || !strings.Contains(r, "xxxxx") {
		t.Errorf("Redacted = %q", r)
	}
}

func TestDefaults(t *testing.T) {
	cfg, err := Parse(nil, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Demo || cfg.Command != CommandRun || cfg.ListenAddress != DefaultListenAddress || cfg.LogFormat != "auto" || cfg.DemoFaultInterval != 30*time.Second || len(cfg.Clusters) != 0 {
		t.Errorf("defaults: %+v", cfg)
	}
	cfg, err = Parse([]string{"check", "--uri", "mongodb://h1/?replicaSet=rs0"}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Demo || cfg.Command != CommandCheck || len(cfg.Clusters) != 1 {
		t.Fatalf("check: %+v", cfg)
	}
	s := cfg.Clusters[0]
	if s.Name != "default" || s.Interval != 5*time.Second || s.PingTimeout != time.Second || s.ReadTimeout != 2*time.Second ||
		s.WriteTimeout != 5*time.Second || s.Database != "mongoprobe" || s.Collection != "canary" || s.CanaryKeys != 8 ||
		!s.Scheduled || len(s.ReadPreferences) != 1 || s.ReadPreferences[0].Pref.Mode != "primary" ||
		s.WriteConcern == nil || s.WriteConcern.W == nil || s.WriteConcern.W.Tag != "majority" || s.Client == nil {
		t.Errorf("default settings: %+v", s)
	}
	// The command after the flags, the flag over the environment.
	cfg, err = Parse([]string{"--uri", "mongodb://flag", "--cluster.name", "x", "check"}, func(k string) string {
		if k == EnvURI {
			return "mongodb://env"
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Command != CommandCheck || cfg.Clusters[0].Name != "x" || Hosts(cfg.Clusters[0])[0] != "flag:27017" {
		t.Errorf("flag over env: %+v %v", cfg, Hosts(cfg.Clusters[0]))
	}
	cfg, err = Parse([]string{"--demo", "--demo.fault-interval=2s", "-log.level=debug", "--log.format", "json", "--web.listen-address", "[::1]:0"}, noEnv)
	if err != nil || !cfg.Demo || cfg.DemoFaultInterval != 2*time.Second || cfg.LogFormat != "json" {
		t.Errorf("demo: %+v %v", cfg, err)
	}
	for _, addr := range []string{"localhost:9417", "127.0.0.2:1"} {
		if _, err := Parse([]string{"--web.listen-address", addr}, noEnv); err != nil {
			t.Errorf("%s: %v", addr, err)
		}
	}
	if cfg, err := Parse([]string{"--web.listen-address", ":9417", "--web.listen-remote"}, noEnv); err != nil || !cfg.ListenRemote {
		t.Errorf("remote: %v", err)
	}
	for _, a := range []string{"--help", "-h", "help"} {
		if _, err := Parse([]string{a}, noEnv); !errors.Is(err, ErrHelp) {
			t.Errorf("%s: %v", a, err)
		}
	}
	if cfg, err := Parse([]string{"--version", "--log.level=nope"}, noEnv); err != nil || !cfg.Version {
		t.Errorf("version: %v", err)
	}
}

func TestFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mongoprobe.yaml")
	if err := os.WriteFile(path, []byte(Example), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Parse([]string{"--config.file", path}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Clusters) != 2 || len(cfg.Warnings) != 0 {
		t.Fatalf("clusters: %+v, warnings %v", cfg.Clusters, cfg.Warnings)
	}
	prod, staging := cfg.Clusters[0], cfg.Clusters[1]
	if prod.Name != "prod" || prod.Interval != 5*time.Second || !prod.Scheduled || len(prod.ReadPreferences) != 3 {
		t.Errorf("prod: %+v", prod)
	}
	rp := prod.ReadPreferences[2]
	if rp.Name != "analytics" || rp.Pref.Mode != "secondary" || len(rp.Pref.Tags) != 2 || rp.Pref.Tags[0]["use"] != "analytics" ||
		rp.Pref.MaxStaleness == nil || *rp.Pref.MaxStaleness != 120*time.Second {
		t.Errorf("analytics: %+v", rp)
	}
	if prod.ReadPreferences[1].Name != "secondaryPreferred" {
		t.Errorf("read preference name: %+v", prod.ReadPreferences[1])
	}
	if staging.Name != "staging" || staging.Interval != 30*time.Second || staging.Scheduled || staging.WriteConcern.W.Nodes != 1 ||
		staging.ReadPreferences[0].Pref.Mode != "primary" || staging.ReadTimeout != 2*time.Second {
		t.Errorf("staging: %+v", staging)
	}
	if strings.Contains(Redacted(prod), "secret") {
		t.Errorf("Redacted(prod) = %s", Redacted(prod))
	}

	// A timeout longer than the interval is a warning.
	os.WriteFile(path, []byte("interval: 1s\nclusters:\n  - name: a\n    uri: mongodb://h\n    write_concern: dcs\n"), 0o600)
	cfg, err = Parse([]string{"--config.file", path}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Warnings) != 2 || !strings.Contains(cfg.Warnings[0], "read timeout") {
		t.Errorf("warnings: %q", cfg.Warnings)
	}
	if cfg.Clusters[0].WriteConcern.W.Tag != "dcs" {
		t.Errorf("tag write concern: %+v", cfg.Clusters[0].WriteConcern.W)
	}
}

func TestUsage(t *testing.T) {
	var b bytes.Buffer
	Usage(&b)
	for _, want := range []string{"check", "--web.listen-address", "127.0.0.1:9417", "--config.file", "--log.level", "--log.format",
		"--uri", "--demo", "--demo.fault-interval", "--version", "--web.listen-remote", "MONGOPROBE_URI", "OTEL_EXPORTER_OTLP_ENDPOINT", "Examples", "clusters:"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("usage lacks %q", want)
		}
	}
}
