package probe

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestREADMEListsEveryMetric keeps the root README's mongoprobe metric
// table true: every metric a Cluster exports is in it, and it names no
// other.
func TestREADMEListsEveryMetric(t *testing.T) {
	b, err := os.ReadFile("../../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	start := strings.Index(readme, "## Running mongoprobe")
	if start < 0 {
		t.Fatal("the README has no Running mongoprobe section")
	}
	section := readme[start:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	var listed []string
	for _, m := range regexp.MustCompile(`(?m)^\| (mongoprobe_[a-z_]+) \|`).FindAllStringSubmatch(section, -1) {
		listed = append(listed, m[1])
	}
	for _, name := range MetricNames {
		if !slices.Contains(listed, name) {
			t.Errorf("the README's mongoprobe table lacks %s", name)
		}
	}
	for _, name := range listed {
		if !slices.Contains(MetricNames, name) {
			t.Errorf("the README's mongoprobe table lists %s, which no Cluster exports", name)
		}
	}
}
