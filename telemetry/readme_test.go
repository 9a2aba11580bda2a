package telemetry_test

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/telemetry/metrics"
	"github.com/prometheus/client_golang/prometheus"
)

// TestREADMEListsEveryMetric keeps the README's metric table true: every
// metric family the sink describes is in it, and nothing else is.
func TestREADMEListsEveryMetric(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(readme), "## Telemetry")
	if i < 0 {
		t.Fatal("the README has no Telemetry section")
	}
	section := string(readme[i:])
	if j := strings.Index(section[3:], "\n## "); j >= 0 {
		section = section[:j+3]
	}
	table := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "| `mongodb_driver_") {
			for _, m := range regexp.MustCompile("`(mongodb_driver_[a-z_]+)`").FindAllStringSubmatch(strings.Split(line, "|")[1], -1) {
				table[m[1]] = true
			}
		}
	}
	ch := make(chan *prometheus.Desc, 64)
	go func() {
		metrics.New(metrics.Options{}).Describe(ch)
		close(ch)
	}()
	described := map[string]bool{}
	fq := regexp.MustCompile(`fqName: "([^"]+)"`)
	for d := range ch {
		m := fq.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("cannot read the name of %s", d)
		}
		name := m[1]
		if strings.HasSuffix(name, "_total") || !described[name] {
			described[name] = true
		}
	}
	var missing, extra []string
	for n := range described {
		if !table[n] {
			missing = append(missing, n)
		}
	}
	for n := range table {
		if !described[n] {
			extra = append(extra, n)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(described) < 19 {
		t.Errorf("the sink describes %d metrics, fewer than the 19 documented", len(described))
	}
	if len(missing) > 0 || len(extra) > 0 {
		t.Errorf("README metric table: missing %v, not a metric of the sink %v", missing, extra)
	}
	for _, line := range []string{"tel, err := telemetry.New(telemetry.Options{})", "tel.Apply(opts)", "OTEL_GO_INSTRUMENTATION_MONGODB_ENABLED", "OTEL_GO_INSTRUMENTATION_MONGODB_QUERY_TEXT_MAX_LENGTH"} {
		if !strings.Contains(section, line) {
			t.Errorf("the README's Telemetry section lacks %q", line)
		}
	}
}
