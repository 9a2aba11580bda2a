package stackcheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestScriptsSyntax: the shell scripts of the stack parse (bash -n), and so
// do the JavaScript programs mongosh runs in it (node --check, when node is
// on PATH: mongosh's language is JavaScript, its rs, db, sleep and quit are
// globals, which a syntax check does not resolve).
func TestScriptsSyntax(t *testing.T) {
	root, p := project(t)
	for _, f := range []string{"deploy/drill.sh", "tools/prometheus.sh"} {
		if out, err := exec.Command("bash", "-n", filepath.Join(root, f)).CombinedOutput(); err != nil {
			t.Errorf("bash -n %s: %v\n%s", f, err, out)
		}
	}
	var scripts []string
	for name, s := range p.Services {
		cmd := append(append([]string{}, s.Entrypoint...), s.Command...)
		if s.HealthCheck != nil {
			cmd = append(cmd, s.HealthCheck.Test...)
		}
		if len(cmd) == 0 || !strings.Contains(strings.Join(cmd, " "), "mongosh") {
			continue
		}
		// The entrypoint's --eval takes its value from the command
		// (mongo-init's), so both are read as one list.
		for i := 1; i < len(cmd); i++ {
			if cmd[i-1] == "--eval" {
				scripts = append(scripts, cmd[i])
			}
		}
		t.Logf("service %s runs mongosh", name)
	}
	if len(scripts) == 0 {
		t.Fatal("no service runs mongosh --eval")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH: the mongosh scripts' syntax is not checked")
	}
	for i, js := range scripts {
		file := filepath.Join(t.TempDir(), "script.js")
		if err := os.WriteFile(file, []byte(js), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(node, "--check", file).CombinedOutput(); err != nil {
			t.Errorf("mongosh script %d does not parse as JavaScript: %v\n%s\n%s", i, err, out, js)
		}
	}
}
