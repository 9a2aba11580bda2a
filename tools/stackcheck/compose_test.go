package stackcheck

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"
	"go.yaml.in/yaml/v3"
)

// services are the compose stack's services: the three members of the
// replica set, the one-shot that initiates it, mongoprobe, Prometheus,
// Grafana and Jaeger.
var services = []string{"grafana", "jaeger", "mongo-init", "mongo1", "mongo2", "mongo3", "mongoprobe", "prometheus"}

func project(t *testing.T) (string, *types.Project) {
	t.Helper()
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	p, err := LoadProject(context.Background(), root)
	if err != nil {
		t.Fatalf("docker-compose.yml does not load and validate with compose-go: %v", err)
	}
	return root, p
}

func service(t *testing.T, p *types.Project, name string) types.ServiceConfig {
	t.Helper()
	s, ok := p.Services[name]
	if !ok {
		t.Fatalf("docker-compose.yml has no service %s", name)
	}
	return s
}

func TestComposeServices(t *testing.T) {
	_, p := project(t)
	var got []string
	for name := range p.Services {
		got = append(got, name)
	}
	sort.Strings(got)
	if !slices.Equal(got, services) {
		t.Errorf("services = %v, want %v", got, services)
	}
}

func TestComposeImagesPinned(t *testing.T) {
	_, p := project(t)
	for name, s := range p.Services {
		if s.Build != nil {
			continue // built here: see TestComposeMongoprobeBuild
		}
		if s.Image == "" {
			t.Errorf("service %s has neither an image nor a build", name)
			continue
		}
		if why := Pinned(s.Image); why != "" {
			t.Errorf("service %s: image %s is not pinned: %s", name, s.Image, why)
		}
	}
}

func TestComposeMongoprobeBuild(t *testing.T) {
	root, p := project(t)
	s := service(t, p, "mongoprobe")
	if s.Build == nil {
		t.Fatal("mongoprobe is not built from the Dockerfile: it has no build section")
	}
	if filepath.Clean(s.Build.Context) != root {
		t.Errorf("mongoprobe's build context is %s, want the repository's root %s", s.Build.Context, root)
	}
	if s.Build.Dockerfile != "Dockerfile" {
		t.Errorf("mongoprobe's Dockerfile is %q, want Dockerfile (the root's)", s.Build.Dockerfile)
	}
	if _, err := os.Stat(filepath.Join(root, "Dockerfile")); err != nil {
		t.Error(err)
	}
	if s.Image != "" && Pinned(s.Image) != "" {
		t.Errorf("mongoprobe's image name %s: %s", s.Image, Pinned(s.Image))
	}
}

func TestComposeHostPortsOnLoopback(t *testing.T) {
	_, p := project(t)
	n := 0
	for name, s := range p.Services {
		for _, port := range s.Ports {
			n++
			if port.HostIP != "127.0.0.1" {
				t.Errorf("service %s publishes container port %d on host address %q, want 127.0.0.1", name, port.Target, port.HostIP)
			}
			if port.Published == "" {
				t.Errorf("service %s publishes container port %d on a random host port; name it", name, port.Target)
			}
		}
		if s.NetworkMode == "host" {
			t.Errorf("service %s uses the host's network, which bypasses the loopback-only ports", name)
		}
	}
	want := map[string]string{"grafana": "3000", "prometheus": "9090", "mongoprobe": "9417", "jaeger": "16686"}
	for name, hostPort := range want {
		if !slices.ContainsFunc(service(t, p, name).Ports, func(pc types.ServicePortConfig) bool { return pc.Published == hostPort }) {
			t.Errorf("service %s is not published on 127.0.0.1:%s, the README's URL", name, hostPort)
		}
	}
	if n == 0 {
		t.Error("no service publishes a port")
	}
}

// TestComposeMountsExist: every file or folder the stack mounts from the
// host is in the repository (tracked by git when it is a work tree).
func TestComposeMountsExist(t *testing.T) {
	root, p := project(t)
	mounts := Mounts(p)
	if len(mounts) == 0 {
		t.Fatal("the stack mounts nothing; the configuration files must be mounted")
	}
	for _, m := range mounts {
		src := m.Source
		if !filepath.IsAbs(src) {
			src = filepath.Join(root, src)
		}
		rel, err := InRepo(root, src)
		if err != nil {
			t.Errorf("service %s, %s to %s: %v", m.Service, m.Kind, m.Target, err)
			continue
		}
		if _, err := os.Stat(src); err != nil {
			t.Errorf("service %s, %s to %s: %v", m.Service, m.Kind, m.Target, err)
			continue
		}
		if tracked, ok := Tracked(root, rel); ok && !tracked {
			t.Errorf("service %s mounts %s, which git does not track: a fresh clone lacks it", m.Service, rel)
		}
		t.Logf("service %s: %s %s -> %s", m.Service, m.Kind, rel, m.Target)
	}
}

func TestComposeReplicaSet(t *testing.T) {
	_, p := project(t)
	for _, name := range []string{"mongo1", "mongo2", "mongo3"} {
		s := service(t, p, name)
		if s.Image != "mongo:8.0" {
			t.Errorf("%s runs %s, want mongo:8.0", name, s.Image)
		}
		cmd := strings.Join(s.Command, " ")
		if !strings.Contains(cmd, "--replSet rs0") || !strings.Contains(cmd, "--bind_ip_all") {
			t.Errorf("%s's command %q lacks --replSet rs0 or --bind_ip_all", name, cmd)
		}
		if s.HealthCheck == nil || s.HealthCheck.Disable || len(s.HealthCheck.Test) == 0 {
			t.Errorf("%s has no health check, which mongo-init waits for", name)
		}
	}
	init := service(t, p, "mongo-init")
	script := strings.Join(append(slices.Clone(init.Entrypoint), init.Command...), " ")
	for _, want := range []string{"mongosh", "--eval", "rs.initiate(", "NotYetInitialized", `"mongo1:27017"`, `"mongo2:27017"`, `"mongo3:27017"`, `_id: "rs0"`} {
		if !strings.Contains(script, want) {
			t.Errorf("mongo-init's command lacks %q:\n%s", want, script)
		}
	}
	for _, m := range []string{"mongo1", "mongo2", "mongo3"} {
		if d, ok := init.DependsOn[m]; !ok || d.Condition != types.ServiceConditionHealthy {
			t.Errorf("mongo-init does not wait for %s to be healthy: %+v", m, d)
		}
	}
	if init.Restart != "" && init.Restart != "no" {
		t.Errorf("mongo-init is a one-shot, but restarts %q", init.Restart)
	}
	probe := service(t, p, "mongoprobe")
	if d, ok := probe.DependsOn["mongo-init"]; !ok || d.Condition != types.ServiceConditionCompletedSuccessfully {
		t.Errorf("mongoprobe does not wait for mongo-init to complete: %+v", d)
	}
}

// mongoprobeConfig is what the stack's tests read of mongoprobe's file.
type mongoprobeConfig struct {
	Clusters []mongoprobeCluster `yaml:"clusters"`
}

type mongoprobeCluster struct {
	Name            string `yaml:"name"`
	URI             string `yaml:"uri"`
	ReadPreferences []any  `yaml:"read_preferences"`
}

func readYAML(t *testing.T, file string, v any) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// flagValue returns the value of --name in args (--name value or --name=value).
func flagValue(args []string, name string) string {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

func TestComposeMongoprobe(t *testing.T) {
	root, p := project(t)
	s := service(t, p, "mongoprobe")
	cfgPath := flagValue(s.Command, "--config.file")
	if cfgPath == "" {
		t.Fatalf("mongoprobe's command %q has no --config.file", s.Command)
	}
	host := HostPath(root, s, cfgPath)
	if host == "" {
		t.Fatalf("mongoprobe's --config.file %s is not mounted", cfgPath)
	}
	if rel, _ := InRepo(root, host); rel != "deploy/mongoprobe/mongoprobe.yml" {
		t.Errorf("mongoprobe's configuration comes from %s, want deploy/mongoprobe/mongoprobe.yml", host)
	}
	var cfg mongoprobeConfig
	readYAML(t, host, &cfg)
	if len(cfg.Clusters) != 1 || cfg.Clusters[0].Name != "compose" {
		t.Fatalf("mongoprobe.yml's clusters = %+v, want one named compose", cfg.Clusters)
	}
	c := cfg.Clusters[0]
	u, err := url.Parse(c.URI)
	if err != nil {
		t.Fatal(err)
	}
	if u.Query().Get("replicaSet") != "rs0" {
		t.Errorf("the compose cluster's URI %s does not name replicaSet=rs0", c.URI)
	}
	var hosts []string
	for _, h := range strings.Split(u.Host, ",") {
		name, port, err := ServiceAddr(h)
		if err != nil {
			t.Errorf("URI host %s: %v", h, err)
			continue
		}
		hosts = append(hosts, name)
		if _, ok := p.Services[name]; !ok || port != 27017 {
			t.Errorf("URI host %s is not a service of the stack on 27017", h)
		}
	}
	if !slices.Equal(hosts, []string{"mongo1", "mongo2", "mongo3"}) {
		t.Errorf("URI hosts = %v, want mongo1, mongo2, mongo3", hosts)
	}
	var modes []string
	for _, rp := range c.ReadPreferences {
		if m, ok := rp.(string); ok {
			modes = append(modes, m)
		}
	}
	if !slices.Equal(modes, []string{"primary", "secondaryPreferred", "nearest"}) {
		t.Errorf("read preferences = %v, want primary, secondaryPreferred, nearest", c.ReadPreferences)
	}

	otlp := s.Environment["OTEL_EXPORTER_OTLP_ENDPOINT"]
	if otlp == nil {
		t.Fatal("mongoprobe has no OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	h, port, err := ServiceAddr(*otlp)
	if err != nil || h != "jaeger" || port != 4318 {
		t.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT = %s, want Jaeger's OTLP/HTTP port (http://jaeger:4318): %v", *otlp, err)
	}
	j := service(t, p, "jaeger")
	if v := j.Environment["COLLECTOR_OTLP_ENABLED"]; v == nil || *v != "true" {
		t.Error("jaeger lacks COLLECTOR_OTLP_ENABLED=true")
	}
	if !ListensOn(j, 4318) || !ListensOn(j, 16686) {
		t.Error("jaeger does not declare ports 4318 (OTLP/HTTP) and 16686 (UI)")
	}
}

// prometheusConfig is what the tests read of prometheus.yml.
type prometheusConfig struct {
	ScrapeConfigs []struct {
		JobName        string `yaml:"job_name"`
		MetricsPath    string `yaml:"metrics_path"`
		ScrapeInterval string `yaml:"scrape_interval"`
		StaticConfigs  []struct {
			Targets []string `yaml:"targets"`
		} `yaml:"static_configs"`
		RelabelConfigs []struct {
			SourceLabels []string `yaml:"source_labels"`
			TargetLabel  string   `yaml:"target_label"`
			Replacement  *string  `yaml:"replacement"`
		} `yaml:"relabel_configs"`
	} `yaml:"scrape_configs"`
}

func TestComposePrometheus(t *testing.T) {
	root, p := project(t)
	s := service(t, p, "prometheus")
	if !slices.Contains(s.Command, "--enable-feature=exemplar-storage") {
		t.Errorf("prometheus's command %q lacks --enable-feature=exemplar-storage", s.Command)
	}
	cfgPath := flagValue(s.Command, "--config.file")
	host := HostPath(root, s, cfgPath)
	if rel, _ := InRepo(root, host); cfgPath == "" || rel != "deploy/prometheus/prometheus.yml" {
		t.Fatalf("prometheus's --config.file %q is not deploy/prometheus/prometheus.yml mounted (host path %q)", cfgPath, host)
	}
	var cfg prometheusConfig
	readYAML(t, host, &cfg)
	var mp mongoprobeConfig
	readYAML(t, filepath.Join(root, "deploy/mongoprobe/mongoprobe.yml"), &mp)

	probe := service(t, p, "mongoprobe")
	jobs := map[string]bool{}
	for _, sc := range cfg.ScrapeConfigs {
		jobs[sc.MetricsPath] = true
		switch sc.MetricsPath {
		case "", "/metrics":
			if sc.ScrapeInterval != "5s" {
				t.Errorf("job %s scrapes /metrics every %q, want 5s", sc.JobName, sc.ScrapeInterval)
			}
			for _, st := range sc.StaticConfigs {
				for _, target := range st.Targets {
					h, port, err := ServiceAddr(target)
					if err != nil || h != "mongoprobe" || !ListensOn(probe, port) {
						t.Errorf("job %s target %s is not mongoprobe's port", sc.JobName, target)
					}
				}
			}
		case "/probe":
			var param, addr bool
			for _, rc := range sc.RelabelConfigs {
				if rc.TargetLabel == "__param_target" && slices.Equal(rc.SourceLabels, []string{"__address__"}) {
					param = true
				}
				if rc.TargetLabel == "__address__" && rc.Replacement != nil {
					h, port, err := ServiceAddr(*rc.Replacement)
					addr = err == nil && h == "mongoprobe" && ListensOn(probe, port)
				}
			}
			if !param || !addr {
				t.Errorf("job %s lacks the multi-target relabelling (__address__ to __param_target, then __address__ = mongoprobe:9417)", sc.JobName)
			}
			for _, st := range sc.StaticConfigs {
				for _, target := range st.Targets {
					if !slices.ContainsFunc(mp.Clusters, func(c mongoprobeCluster) bool {
						return c.Name == target
					}) {
						t.Errorf("job %s probes target %s, which mongoprobe.yml does not configure (only configured names are accepted)", sc.JobName, target)
					}
				}
			}
		default:
			t.Errorf("job %s scrapes %s, which mongoprobe does not serve", sc.JobName, sc.MetricsPath)
		}
	}
	if !jobs["/metrics"] || !jobs["/probe"] {
		t.Errorf("prometheus.yml's jobs scrape %v, want /metrics and /probe", jobs)
	}
}

func TestDrillScript(t *testing.T) {
	root, p := project(t)
	file := filepath.Join(root, "deploy/drill.sh")
	st, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode()&0o111 == 0 {
		t.Errorf("%s is not executable", file)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"replSetStepDown", "rs.isMaster().primary", "docker compose"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("drill.sh lacks %q", want)
		}
	}
	for _, m := range []string{"mongo1", "mongo2", "mongo3"} {
		if _, ok := p.Services[m]; !ok || !strings.Contains(string(b), m) {
			t.Errorf("drill.sh and the stack disagree on service %s", m)
		}
	}
}
