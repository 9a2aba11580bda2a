package stackcheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestPromtoolCheckConfig runs `promtool check config` on the stack's
// Prometheus configuration. promtool is Debian's (tools/prometheus.sh
// install); without it the test skips, unless MONGOSCOPE_REQUIRE_PROMTOOL=1
// (set by make test), when it fails.
func TestPromtoolCheckConfig(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("MONGOSCOPE_REQUIRE_PROMTOOL") == "1" {
			t.Fatal("promtool is not on PATH and MONGOSCOPE_REQUIRE_PROMTOOL=1: run tools/prometheus.sh install")
		}
		t.Skip("promtool is not on PATH (tools/prometheus.sh install installs it; make test does)")
	}
	file := filepath.Join(root, "deploy/prometheus/prometheus.yml")
	out, err := exec.Command(promtool, "check", "config", file).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check config %s: %v\n%s", file, err, out)
	}
	version, _ := exec.Command(promtool, "--version").Output()
	t.Logf("%s\n%s", out, version)
}
