package stackcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMEComposeSection keeps the README's compose stack section true:
// every host port the stack publishes is there as its 127.0.0.1 URL or
// address, and so are make drill and the sentence on how it was checked.
func TestREADMEComposeSection(t *testing.T) {
	root, p := project(t)
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	start := strings.Index(readme, "\n## The compose stack\n")
	if start < 0 {
		t.Fatal("the README has no \"The compose stack\" section")
	}
	section := readme[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	if run := strings.Index(readme, "\n## Running mongoprobe\n"); run < 0 || run > start {
		t.Error("the compose stack section must come after Running mongoprobe")
	}
	for name, s := range p.Services {
		for _, port := range s.Ports {
			if !strings.Contains(section, "127.0.0.1:"+port.Published) {
				t.Errorf("the section does not give service %s's address 127.0.0.1:%s", name, port.Published)
			}
		}
	}
	words := strings.Join(strings.Fields(section), " ") // line breaks do not matter
	for _, want := range []string{"docker compose up", "make drill", "no Docker engine", "checked statically, not run"} {
		if !strings.Contains(words, want) {
			t.Errorf("the section lacks %q", want)
		}
	}
}
