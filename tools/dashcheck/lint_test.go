package dashcheck

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"
)

// The rules of Grafana's dashboard linter (github.com/grafana/dashboard-linter,
// which the module proxy here does not serve) that apply to these dashboards,
// written again: template-datasource-rule, panel-datasource-rule,
// target-promql-rule (TestQueriesParse), target-rate-interval-rule,
// panel-units-rule, panel-title-description-rule, uneditable-dashboard, and
// unique panel ids. The job and instance variable rules are left out: the
// dashboards select by mongoprobe's cluster label instead, which
// TestLintClusterVariable checks the way the linter checks job.

// TestLintDashboard: a title, a uid, a recent schema, not editable.
func TestLintDashboard(t *testing.T) {
	_, ds := dashboards(t)
	uids := map[string]string{}
	for _, d := range ds {
		if d.Title == "" || d.UID == "" {
			t.Errorf("%s: a dashboard needs a title and a uid", d.File)
		}
		if other, ok := uids[d.UID]; ok {
			t.Errorf("%s and %s have the same uid %q", other, d.File, d.UID)
		}
		uids[d.UID] = d.File
		if d.Schema < 39 {
			t.Errorf("%s: schemaVersion %d, want 39 or later", d.File, d.Schema)
		}
		if d.Editable {
			t.Errorf("%s: editable; provisioned dashboards are changed in tools/dashgen, not in Grafana", d.File)
		}
	}
}

func variable(d *Dashboard, name string) *Variable {
	for i, v := range d.Templating.List {
		if v.Name == name {
			return &d.Templating.List[i]
		}
	}
	return nil
}

// TestLintDatasource: a Prometheus datasource variable named datasource,
// labelled "Data source", and every panel and target uses it.
func TestLintDatasource(t *testing.T) {
	_, ds := dashboards(t)
	for _, d := range ds {
		v := variable(d, "datasource")
		if v == nil {
			t.Errorf("%s: no datasource template variable", d.File)
			continue
		}
		if v.Type != "datasource" || v.Query != "prometheus" || v.Label != "Data source" {
			t.Errorf("%s: the datasource variable is %+v; want type datasource, query prometheus, label \"Data source\"", d.File, *v)
		}
		uses := func(ds *Datasource) bool {
			return ds != nil && ds.Type == "prometheus" && (ds.UID == "${datasource}" || ds.UID == "$datasource")
		}
		for _, p := range d.AllPanels() {
			if p.Type == "row" {
				continue
			}
			if !uses(p.Datasource) {
				t.Errorf("%s: panel %q does not use the datasource variable: %+v", d.File, p.Title, p.Datasource)
			}
			for _, tg := range p.Targets {
				if !uses(tg.Datasource) {
					t.Errorf("%s: panel %q target %s does not use the datasource variable: %+v", d.File, p.Title, tg.RefID, tg.Datasource)
				}
			}
		}
	}
}

// TestLintClusterVariable: the cluster variable lists mongoprobe_up's
// clusters, refreshes when the time range changes, allows several, and every
// selector of a mongoprobe or driver metric matches it.
func TestLintClusterVariable(t *testing.T) {
	_, ds := dashboards(t)
	for _, d := range ds {
		v := variable(d, "cluster")
		if v == nil {
			t.Errorf("%s: no cluster template variable", d.File)
			continue
		}
		if v.Type != "query" || v.Definition != "label_values(mongoprobe_up, cluster)" || v.Refresh != 2 || !v.Multi || !v.IncludeAll {
			t.Errorf("%s: the cluster variable is %+v; want a multi-value query of label_values(mongoprobe_up, cluster), refreshed on time range change", d.File, *v)
		}
		if v.Datasource == nil || v.Datasource.UID != "${datasource}" {
			t.Errorf("%s: the cluster variable does not use the datasource variable", d.File)
		}
	}
	const sentinel = "CLUSTER_SENTINEL"
	for _, q := range queries(ds) {
		e, err := promql.ParseExpr(Expand(q.t.Expr, "1m", sentinel))
		if err != nil {
			continue // TestQueriesParse reports it
		}
		parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
			vs, ok := n.(*parser.VectorSelector)
			if !ok || !(strings.HasPrefix(vs.Name, "mongoprobe_") || strings.HasPrefix(vs.Name, "mongodb_driver_")) {
				return nil
			}
			for _, m := range vs.LabelMatchers {
				if m.Name == "cluster" && m.Value == sentinel && m.Type.String() == "=~" {
					return nil
				}
			}
			t.Errorf("%s: %s has no cluster=~\"$cluster\"", q, vs)
			return nil
		})
	}
}

// TestLintRateInterval: every rate, irate and increase (and the
// *_over_time functions) takes $__rate_interval as its range, so that
// Grafana can fit it to the scrape interval and the step.
func TestLintRateInterval(t *testing.T) {
	_, ds := dashboards(t)
	const sentinel = 7777 * time.Second // what $__rate_interval stands for here
	n := 0
	for _, q := range queries(ds) {
		e, err := promql.ParseExpr(Expand(q.t.Expr, "7777s", ".*"))
		if err != nil {
			continue
		}
		parser.Inspect(e, func(node parser.Node, _ []parser.Node) error {
			switch x := node.(type) {
			case *parser.MatrixSelector:
				if x.Range != sentinel {
					t.Errorf("%s: range %s is not $__rate_interval", q, x.Range)
				}
				n++
			case *parser.SubqueryExpr:
				t.Errorf("%s: a subquery; use $__rate_interval ranges only", q)
			}
			return nil
		})
		if strings.Contains(q.t.Expr, "$__interval") && !strings.Contains(q.t.Expr, "$__rate_interval") {
			t.Errorf("%s uses $__interval", q)
		}
	}
	if !t.Failed() {
		t.Logf("%d range selectors, all $__rate_interval", n)
	}
}

// TestLintPanels: unique ids, a title and a description on every panel, a
// unit on every timeseries and stat, targets with refIds, and no panel
// type the checks do not know.
func TestLintPanels(t *testing.T) {
	_, ds := dashboards(t)
	for _, d := range ds {
		ids := map[int]string{}
		titles := map[string]bool{}
		for _, p := range d.AllPanels() {
			if other, ok := ids[p.ID]; ok || p.ID <= 0 {
				t.Errorf("%s: panel %q has id %d, like %q", d.File, p.Title, p.ID, other)
			}
			ids[p.ID] = p.Title
			if strings.TrimSpace(p.Title) == "" {
				t.Errorf("%s: panel %d has no title", d.File, p.ID)
			}
			if titles[p.Title] {
				t.Errorf("%s: two panels are titled %q", d.File, p.Title)
			}
			titles[p.Title] = true
			switch p.Type {
			case "row":
				continue
			case "timeseries", "stat":
			default:
				t.Errorf("%s: panel %q has type %q; want row, timeseries or stat", d.File, p.Title, p.Type)
			}
			if p.Description == "" {
				t.Errorf("%s: panel %q has no description", d.File, p.Title)
			}
			if p.FieldConfig == nil || p.FieldConfig.Defaults.Unit == "" {
				t.Errorf("%s: panel %q has no unit", d.File, p.Title)
			}
			if len(p.Targets) == 0 {
				t.Errorf("%s: panel %q has no target", d.File, p.Title)
			}
			refs := map[string]bool{}
			for _, tg := range p.Targets {
				if tg.RefID == "" || refs[tg.RefID] {
					t.Errorf("%s: panel %q has a target with refId %q, empty or repeated", d.File, p.Title, tg.RefID)
				}
				refs[tg.RefID] = true
			}
		}
	}
}

// TestLintUnits: units fit the queries: a latency quantile is in seconds, a
// ratio in percentunit, a rate() panel in ops, an increase() panel short.
func TestLintUnits(t *testing.T) {
	_, ds := dashboards(t)
	for _, d := range ds {
		for _, p := range d.AllPanels() {
			if p.Type == "row" || p.FieldConfig == nil || len(p.Targets) == 0 {
				continue
			}
			unit, expr := p.FieldConfig.Defaults.Unit, p.Targets[0].Expr
			want := ""
			switch {
			case strings.HasPrefix(expr, "histogram_quantile("):
				want = "s"
			case strings.Contains(expr, ") / sum by"):
				want = "percentunit"
			case strings.Contains(expr, "rate(mongoprobe_no_writable_primary_seconds_total"):
				want = "percentunit" // seconds per second
			case strings.Contains(expr, "increase("):
				want = "short"
			case strings.Contains(expr, "rate("):
				want = "ops"
			}
			if want != "" && unit != want {
				t.Errorf("%s: panel %q has unit %q, want %q for %s", d.File, p.Title, unit, want, expr)
			}
		}
	}
}

// TestExemplars: every histogram panel of the driver's dashboard asks for
// exemplars, so that Grafana links its points to their traces through the
// Prometheus data source's exemplarTraceIdDestinations.
func TestExemplars(t *testing.T) {
	_, ds := dashboards(t)
	n := 0
	for _, q := range queries(ds) {
		isHist := strings.Contains(q.t.Expr, "_bucket{")
		if isHist && q.dash.File == "driver.json" && !q.t.Exemplar {
			t.Errorf("%s: a histogram query without exemplar: true", q)
		}
		if !isHist && q.t.Exemplar {
			t.Errorf("%s: exemplar: true on a query of no histogram", q)
		}
		if q.t.Exemplar {
			n++
		}
	}
	if n == 0 {
		t.Error("no target asks for exemplars")
	}
}
