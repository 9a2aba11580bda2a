package config

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestDrillConfig(t *testing.T) {
	cfg, err := Parse([]string{"drill", "--step-down", "--yes", "--uri", "mongodb://db1/?replicaSet=rs0"}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Command != CommandDrill || !cfg.Drill.StepDown || !cfg.Drill.Yes || cfg.Drill.Cluster != "" || cfg.Drill.Timeout != DefaultDrillTimeout {
		t.Errorf("%+v", cfg)
	}
	cfg, err = Parse([]string{"--step-down", "--cluster", "x", "--yes", "--drill.timeout", "30s", "--uri", "mongodb://db1", "--cluster.name", "x", "drill"}, func(string) string { return "" })
	if err != nil || cfg.Command != CommandDrill || cfg.Drill.Cluster != "x" || cfg.Drill.Timeout != 30*time.Second {
		t.Errorf("%+v %v", cfg, err)
	}
	// Demo mode: the cluster is checked by the command.
	if cfg, err := Parse([]string{"drill", "--step-down", "--yes"}, func(string) string { return "" }); err != nil || !cfg.Demo {
		t.Errorf("%+v %v", cfg, err)
	}
	var b bytes.Buffer
	Usage(&b)
	for _, want := range []string{"mongoprobe drill --step-down", "--yes", "--cluster name", "--drill.timeout", "/api/failovers"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("usage lacks %q", want)
		}
	}
}
