package config

import (
	"flag"
	"strings"
	"time"

	"github.com/mongoscope/mongoscope/bson"
)

// The defaults of check --timeouts.
const (
	DefaultTimeoutsBudgets      = "10ms,50ms,100ms,250ms"
	DefaultTimeoutsCount        = 20
	MaxTimeoutsCount            = 10000
	DefaultTimeoutsMaxOvershoot = 20 * time.Millisecond
	MaxTimeoutsBudget           = time.Minute
)

// TimeoutCheck is check --timeouts: reads under tight budgets, to measure
// how far past their timeoutMS they return.
type TimeoutCheck struct {
	// Enabled is --timeouts (only with the check command).
	Enabled bool
	// Budgets are the timeoutMS tried, in order; Count reads run under
	// each, one after the other.
	Budgets []time.Duration
	Count   int
	// Filter is findOne's filter (--timeouts.filter, Extended JSON);
	// FilterJSON is its text as given, "{}" by default.
	Filter     bson.Raw
	FilterJSON string
	// Database and Collection are --timeouts.collection's; "" means each
	// cluster's canary.
	Database, Collection string
	// MaxOvershoot is the bound every timeout's overshoot must stay
	// under for check to exit 0.
	MaxOvershoot time.Duration
}

type timeoutFlags struct {
	enabled                    bool
	budgets, filter, namespace string
	count                      int
	maxOvershoot               time.Duration
}

func (f *flags) addTimeoutFlags() {
	fs, t := f.fs, &f.timeouts
	fs.BoolVar(&t.enabled, "timeouts", false, "with check: instead of a round, run --timeouts.count reads under each of\n--timeouts.budgets and print how far past its timeoutMS each timeout returned (its overshoot),\nwhere the budget ran out, and how often the server's MaxTimeMSExpired came first; exit 0 when\nevery overshoot stayed under --timeouts.max-overshoot and no read failed otherwise (in the\ndemo, a fail point blocks the primary's finds for 150ms)")
	fs.StringVar(&t.budgets, "timeouts.budgets", DefaultTimeoutsBudgets, "check --timeouts: comma-separated `durations`, the reads' timeoutMS")
	fs.IntVar(&t.count, "timeouts.count", DefaultTimeoutsCount, "check --timeouts: how many reads (`n`) under each budget")
	fs.StringVar(&t.filter, "timeouts.filter", "{}", "check --timeouts: the reads' findOne filter, as Extended `JSON`: a slow query, e.g. '{\"$where\": \"sleep(100) || true\"}'")
	fs.StringVar(&t.namespace, "timeouts.collection", "", "check --timeouts: the `db.collection` read (default: the cluster's canary, mongoprobe.canary)")
	fs.DurationVar(&t.maxOvershoot, "timeouts.max-overshoot", DefaultTimeoutsMaxOvershoot, "check --timeouts: the `duration` every timeout's overshoot must stay under")
}

// parseTimeouts fills cfg.Timeouts from the flags.
func (f *flags) parseTimeouts(cfg *Config) error {
	t := f.timeouts
	set := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if !t.enabled {
		for name := range set {
			if strings.HasPrefix(name, "timeouts.") {
				return errorf("--"+name, "needs --timeouts (with the check command)")
			}
		}
		return nil
	}
	if cfg.Command != CommandCheck {
		return errorf("--timeouts", "only the check command takes it: mongoprobe check --timeouts")
	}
	tc := TimeoutCheck{Enabled: true, Count: t.count, MaxOvershoot: t.maxOvershoot, FilterJSON: t.filter}
	for _, b := range strings.Split(t.budgets, ",") {
		b = strings.TrimSpace(b)
		d, err := time.ParseDuration(b)
		if err != nil {
			return errorf("--timeouts.budgets", "%s is not a duration (e.g. 10ms)", quoteShort(b))
		}
		if d <= 0 || d > MaxTimeoutsBudget {
			return errorf("--timeouts.budgets", "%v: each budget must be positive and at most %v", d, MaxTimeoutsBudget)
		}
		tc.Budgets = append(tc.Budgets, d)
	}
	if tc.Count < 1 || tc.Count > MaxTimeoutsCount {
		return errorf("--timeouts.count", "must be between 1 and %d, not %d", MaxTimeoutsCount, tc.Count)
	}
	if tc.MaxOvershoot <= 0 {
		return errorf("--timeouts.max-overshoot", "must be positive, not %v", tc.MaxOvershoot)
	}
	filter, err := bson.ParseExtJSON([]byte(t.filter))
	if err != nil {
		return errorf("--timeouts.filter", "not an Extended JSON object: %v", err)
	}
	tc.Filter = filter
	if t.namespace != "" {
		db, coll, ok := strings.Cut(t.namespace, ".")
		if !ok || db == "" || coll == "" {
			return errorf("--timeouts.collection", "%s is not db.collection", quoteShort(t.namespace))
		}
		tc.Database, tc.Collection = db, coll
	}
	cfg.Timeouts = tc
	return nil
}
