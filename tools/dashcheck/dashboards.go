// Package dashcheck checks the Grafana dashboards in the repository's
// dashboards/ folder (written by tools/dashgen) without Grafana: every
// query parses with Prometheus's own PromQL parser, returns data from a real
// Prometheus scraping a demo mongoprobe, and the dashboards follow the
// dashboard linter's rules that apply to them. It is its own module, since
// Prometheus's is heavy.
package dashcheck

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Dashboard is the part of Grafana's dashboard JSON that the checks read.
type Dashboard struct {
	File       string `json:"-"`
	Title      string `json:"title"`
	UID        string `json:"uid"`
	Editable   bool   `json:"editable"`
	Schema     int    `json:"schemaVersion"`
	Templating struct {
		List []Variable `json:"list"`
	} `json:"templating"`
	Panels []Panel `json:"panels"`
}

type Variable struct {
	Name       string      `json:"name"`
	Label      string      `json:"label"`
	Type       string      `json:"type"`
	Query      any         `json:"query"`
	Datasource *Datasource `json:"datasource"`
	Definition string      `json:"definition"`
	Refresh    int         `json:"refresh"`
	Multi      bool        `json:"multi"`
	IncludeAll bool        `json:"includeAll"`
}

type Datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type Panel struct {
	ID          int         `json:"id"`
	Type        string      `json:"type"`
	Title       string      `json:"title"`
	Description string      `json:"description"`
	Datasource  *Datasource `json:"datasource"`
	FieldConfig *struct {
		Defaults struct {
			Unit string `json:"unit"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
	Panels  []Panel  `json:"panels"` // a collapsed row's
	Targets []Target `json:"targets"`
}

type Target struct {
	Datasource *Datasource `json:"datasource"`
	Expr       string      `json:"expr"`
	RefID      string      `json:"refId"`
	Exemplar   bool        `json:"exemplar"`
}

// AllPanels are the dashboard's panels, those inside collapsed rows too.
func (d *Dashboard) AllPanels() []Panel {
	var out []Panel
	var walk func([]Panel)
	walk = func(ps []Panel) {
		for _, p := range ps {
			out = append(out, p)
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out
}

// Root is the repository's root: the nearest folder above the working
// directory that has dashboards/ and go.work.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if st, err := os.Stat(filepath.Join(dir, "dashboards")); err == nil && st.IsDir() {
			if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no repository root (with dashboards/ and go.work) above the working directory")
		}
		dir = parent
	}
}

// Load reads every dashboards/*.json of the repository at root, by name.
func Load(root string) ([]*Dashboard, error) {
	files, err := filepath.Glob(filepath.Join(root, "dashboards", "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var ds []*Dashboard
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		d := &Dashboard{File: filepath.Base(f)}
		if err := json.Unmarshal(b, d); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		ds = append(ds, d)
	}
	return ds, nil
}

// Expand replaces the template variables Grafana would replace in a query:
// $__rate_interval by rateInterval and $cluster (or ${cluster}) by cluster,
// a regular expression for the cluster label.
func Expand(expr, rateInterval, cluster string) string {
	return strings.NewReplacer(
		"${__rate_interval}", rateInterval,
		"$__rate_interval", rateInterval,
		"${cluster}", cluster,
		"$cluster", cluster,
	).Replace(expr)
}
