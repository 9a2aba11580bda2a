package dashcheck

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestREADMEDashboards keeps the README's Dashboards subsection true: for
// each dashboard, the table under its **`file`** line lists its rows and
// their panels, the same as the JSON, in order; and the section says how the
// dashboards were checked, and that Grafana did not render them.
func TestREADMEDashboards(t *testing.T) {
	root, ds := dashboards(t)
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	start := strings.Index(readme, "\n### Dashboards\n")
	if start < 0 {
		t.Fatal("the README has no \"### Dashboards\" subsection")
	}
	section := readme[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	// listed[file] = "row: panel" lines, in order.
	listed := map[string][]string{}
	file := ""
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "**`") {
			file = strings.TrimPrefix(line, "**`")
			file = file[:strings.Index(file, "`")]
			continue
		}
		if file == "" || !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| row |") || strings.HasPrefix(line, "| --- |") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 2 {
			t.Errorf("README: %s: a table line with %d cells: %s", file, len(cells), line)
			continue
		}
		listed[file] = append(listed[file], cells[0]+":")
		for _, p := range strings.Split(cells[1], "; ") {
			listed[file] = append(listed[file], cells[0]+": "+p)
		}
	}
	for _, d := range ds {
		var want []string
		row := ""
		for _, p := range d.AllPanels() {
			if p.Type == "row" {
				row = p.Title
				want = append(want, row+":")
				continue
			}
			want = append(want, row+": "+p.Title)
		}
		got := listed[d.File]
		if !slices.Equal(got, want) {
			for _, w := range want {
				if !slices.Contains(got, w) {
					t.Errorf("README: %s's list lacks %q", d.File, w)
				}
			}
			for _, g := range got {
				if !slices.Contains(want, g) {
					t.Errorf("README: %s's list has %q, which is not in the dashboard", d.File, g)
				}
			}
			if !t.Failed() {
				t.Errorf("README: %s's list is out of order:\n got %q\nwant %q", d.File, got, want)
			}
		}
		delete(listed, d.File)
	}
	for f := range listed {
		t.Errorf("README lists %s, which is no dashboard in dashboards/", f)
	}
	words := strings.Join(strings.Fields(section), " ")
	for _, want := range []string{"make dashboards", "PromQL parser", "real Prometheus", "return data", "linter", "Grafana itself did not render them"} {
		if !strings.Contains(words, want) {
			t.Errorf("the Dashboards subsection lacks %q", want)
		}
	}
}
