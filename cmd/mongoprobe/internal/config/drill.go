package config

import (
	"flag"
	"strings"
	"time"
)

// CommandDrill is the failover drill: mongoprobe drill --step-down
// --cluster <name> --yes.
const CommandDrill = "drill"

// DefaultDrillTimeout is how long a drill waits for the failover to
// settle.
const DefaultDrillTimeout = 2 * time.Minute

// Drill is the drill command's settings.
type Drill struct {
	// StepDown asks for a step-down of the primary (the one action).
	StepDown bool
	// Cluster names the cluster to drill; "" when the configuration has
	// one cluster (or in demo mode).
	Cluster string
	// Yes confirms the drill; Parse refuses a drill without it.
	Yes     bool
	Timeout time.Duration
}

type drillFlags struct {
	stepDown, yes bool
	cluster       string
	timeout       time.Duration
}

// drillFlagNames are the flags only the drill command takes.
var drillFlagNames = []string{"step-down", "yes", "cluster", "drill.timeout"}

func (d *drillFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&d.stepDown, "step-down", false, "drill: step the cluster's primary down (replSetStepDown, stepDownSecs 60) and report the failover")
	fs.StringVar(&d.cluster, "cluster", "", "drill: the `name` of the configured cluster to drill (needed when there are several)")
	fs.BoolVar(&d.yes, "yes", false, "drill: confirm the drill, which makes the cluster fail over (refused without it)")
	fs.DurationVar(&d.timeout, "drill.timeout", DefaultDrillTimeout, "drill: how long to wait for the failover to settle (`duration`)")
}

// checkDrill checks the drill flags against the command and the clusters.
func checkDrill(cfg *Config, f *flags) error {
	var set []string
	f.fs.Visit(func(fl *flag.Flag) {
		for _, n := range drillFlagNames {
			if fl.Name == n {
				set = append(set, n)
			}
		}
	})
	if cfg.Command != CommandDrill {
		if len(set) > 0 {
			return errorf("--"+set[0], "only the drill command takes it (mongoprobe drill --step-down --yes ...)")
		}
		return nil
	}
	d := f.drill
	if d.timeout <= 0 {
		return errorf("--drill.timeout", "must be positive, not %v", d.timeout)
	}
	if !d.stepDown {
		return errorf("--step-down", "drill needs an action: --step-down (the only one)")
	}
	if !cfg.Demo {
		var names []string
		found := false
		for _, s := range cfg.Clusters {
			names = append(names, s.Name)
			found = found || s.Name == d.cluster
		}
		switch {
		case d.cluster == "" && len(names) > 1:
			return errorf("--cluster", "several clusters are configured (%s): name the one to drill", strings.Join(names, ", "))
		case d.cluster != "" && !found:
			return errorf("--cluster", "no configured cluster is named %s (the clusters: %s)", quoteShort(d.cluster), strings.Join(names, ", "))
		}
	}
	if !d.yes {
		what := "the cluster's"
		if d.cluster != "" {
			what = "cluster " + quoteShort(d.cluster) + "'s"
		}
		return errorf("--yes", "drill --step-down makes %s primary step down for 60s: confirm with --yes", what)
	}
	cfg.Drill = Drill{StepDown: d.stepDown, Cluster: d.cluster, Yes: d.yes, Timeout: d.timeout}
	return nil
}
