package stackcheck

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type grafanaDatasources struct {
	APIVersion  int `yaml:"apiVersion"`
	Datasources []struct {
		Name     string `yaml:"name"`
		UID      string `yaml:"uid"`
		Type     string `yaml:"type"`
		URL      string `yaml:"url"`
		JSONData struct {
			ExemplarTraceIDDestinations []struct {
				Name          string `yaml:"name"`
				DatasourceUID string `yaml:"datasourceUid"`
			} `yaml:"exemplarTraceIdDestinations"`
		} `yaml:"jsonData"`
	} `yaml:"datasources"`
}

type grafanaDashboards struct {
	APIVersion int `yaml:"apiVersion"`
	Providers  []struct {
		Name    string `yaml:"name"`
		Type    string `yaml:"type"`
		Options struct {
			Path string `yaml:"path"`
		} `yaml:"options"`
	} `yaml:"providers"`
}

// provisioning returns the host folder mounted as Grafana's provisioning
// folder (/etc/grafana/provisioning, its default).
func provisioning(t *testing.T) (root, dir string) {
	root, p := project(t)
	g := service(t, p, "grafana")
	dir = HostPath(root, g, "/etc/grafana/provisioning")
	if dir == "" {
		t.Fatal("grafana has no bind mount on /etc/grafana/provisioning")
	}
	if rel, err := InRepo(root, dir); err != nil || rel != "deploy/grafana/provisioning" {
		t.Fatalf("grafana's provisioning comes from %s, want deploy/grafana/provisioning (%v)", dir, err)
	}
	return root, dir
}

func TestGrafanaDatasources(t *testing.T) {
	root, dir := provisioning(t)
	_, p := project(t)
	var cfg grafanaDatasources
	readYAML(t, filepath.Join(dir, "datasources", "datasources.yml"), &cfg)
	if cfg.APIVersion != 1 {
		t.Errorf("apiVersion = %d, want 1", cfg.APIVersion)
	}
	byUID := map[string]string{} // uid to type
	for _, ds := range cfg.Datasources {
		if ds.UID == "" || byUID[ds.UID] != "" {
			t.Errorf("data source %s: uid %q is empty or not unique", ds.Name, ds.UID)
		}
		byUID[ds.UID] = ds.Type
		h, port, err := ServiceAddr(ds.URL)
		if err != nil {
			t.Errorf("data source %s: url %s: %v", ds.Name, ds.URL, err)
			continue
		}
		s, ok := p.Services[h]
		if !ok || !ListensOn(s, port) {
			t.Errorf("data source %s: url %s is not a port of a service of the stack", ds.Name, ds.URL)
		}
	}
	if byUID["prometheus"] != "prometheus" || byUID["jaeger"] != "jaeger" {
		t.Errorf("data sources by uid = %v, want prometheus (prometheus) and jaeger (jaeger)", byUID)
	}
	// The exemplars' label is the one telemetry/metrics writes.
	src, err := os.ReadFile(filepath.Join(root, "telemetry/metrics/exemplar.go"))
	if err != nil {
		t.Fatal(err)
	}
	links := 0
	for _, ds := range cfg.Datasources {
		for _, d := range ds.JSONData.ExemplarTraceIDDestinations {
			links++
			if ds.Type != "prometheus" {
				t.Errorf("data source %s (%s) has exemplar destinations; only Prometheus's have", ds.Name, ds.Type)
			}
			if byUID[d.DatasourceUID] != "jaeger" {
				t.Errorf("exemplar destination %s goes to uid %q, not the Jaeger data source", d.Name, d.DatasourceUID)
			}
			if !strings.Contains(string(src), `"`+d.Name+`"`) {
				t.Errorf("exemplar destination label %q is not the label telemetry/metrics puts on exemplars", d.Name)
			}
		}
	}
	if links == 0 {
		t.Error("the Prometheus data source has no exemplarTraceIdDestinations")
	}
}

func TestGrafanaDashboards(t *testing.T) {
	root, dir := provisioning(t)
	_, p := project(t)
	g := service(t, p, "grafana")
	var cfg grafanaDashboards
	readYAML(t, filepath.Join(dir, "dashboards", "dashboards.yml"), &cfg)
	if cfg.APIVersion != 1 || len(cfg.Providers) == 0 {
		t.Fatalf("dashboards.yml: apiVersion %d, %d providers; want 1 and at least one", cfg.APIVersion, len(cfg.Providers))
	}
	for _, pr := range cfg.Providers {
		if pr.Type != "file" {
			t.Errorf("provider %s has type %q, want file", pr.Name, pr.Type)
			continue
		}
		host := HostPath(root, g, pr.Options.Path)
		if host == "" {
			t.Errorf("provider %s loads %s, which grafana does not mount", pr.Name, pr.Options.Path)
			continue
		}
		rel, err := InRepo(root, host)
		if err != nil || rel != "dashboards" {
			t.Errorf("provider %s loads %s from %s, want the repository's dashboards/ (%v)", pr.Name, pr.Options.Path, host, err)
		}
		if st, err := os.Stat(host); err != nil || !st.IsDir() {
			t.Errorf("provider %s: %s is not a folder: %v", pr.Name, host, err)
			continue
		}
		// The dashboards themselves: each must be a JSON object with a
		// title and uid (tools/dashcheck checks their panels and queries).
		files, _ := filepath.Glob(filepath.Join(host, "*.json"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var d struct {
				Title string `json:"title"`
				UID   string `json:"uid"`
			}
			if err := json.Unmarshal(b, &d); err != nil {
				t.Errorf("%s: %v", f, err)
			} else if d.Title == "" || d.UID == "" {
				t.Errorf("%s: a dashboard needs a title and a uid", f)
			}
		}
		t.Logf("provider %s: %s, %d dashboards", pr.Name, rel, len(files))
	}
}
