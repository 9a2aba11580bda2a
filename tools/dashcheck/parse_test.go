package dashcheck

import (
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
)

// dashboards loads the repository's dashboards, and fails the test when
// there are none.
func dashboards(t *testing.T) (string, []*Dashboard) {
	t.Helper()
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	ds, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) < 2 {
		t.Fatalf("dashboards/ has %d dashboards, want driver.json and probe.json at least", len(ds))
	}
	return root, ds
}

// query is one target of one panel.
type query struct {
	dash  *Dashboard
	panel Panel
	t     Target
}

func (q query) String() string {
	return q.dash.File + ": panel " + `"` + q.panel.Title + `" target ` + q.t.RefID
}

func queries(ds []*Dashboard) []query {
	var qs []query
	for _, d := range ds {
		for _, p := range d.AllPanels() {
			for _, t := range p.Targets {
				qs = append(qs, query{d, p, t})
			}
		}
	}
	return qs
}

var promql = parser.NewParser(parser.Options{})

// TestQueriesParse: every panel's PromQL parses with Prometheus's own parser,
// once Grafana's variables are replaced as Grafana would.
func TestQueriesParse(t *testing.T) {
	_, ds := dashboards(t)
	qs := queries(ds)
	for _, q := range qs {
		if q.t.Expr == "" {
			t.Errorf("%s has no expr", q)
			continue
		}
		for _, cluster := range []string{"demo", "(demo|compose)", ".*"} {
			expr := Expand(q.t.Expr, "1m", cluster)
			if _, err := promql.ParseExpr(expr); err != nil {
				t.Errorf("%s: %s does not parse: %v", q, expr, err)
			}
		}
	}
	t.Logf("%d queries of %d dashboards parse", len(qs), len(ds))
}
