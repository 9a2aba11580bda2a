package config

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
)

func TestTimeoutsFlags(t *testing.T) {
	cfg, err := Parse([]string{"check", "--timeouts"}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	tc := cfg.Timeouts
	want := []time.Duration{10 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond}
	if !tc.Enabled || !slices.Equal(tc.Budgets, want) || tc.Count != 20 || tc.MaxOvershoot != 20*time.Millisecond ||
		tc.Database != "" || tc.Collection != "" || tc.FilterJSON != "{}" || len(tc.Filter) != 5 {
		t.Errorf("defaults: %+v", tc)
	}

	cfg, err = Parse([]string{"check", "--uri", "mongodb://h", "--timeouts", "--timeouts.budgets", " 5ms, 1s", "--timeouts.count", "3",
		"--timeouts.filter", `{"$where": "sleep(100) || true", "n": {"$numberLong": "7"}}`, "--timeouts.collection", "test.big.sub",
		"--timeouts.max-overshoot", "5ms"}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	tc = cfg.Timeouts
	if !slices.Equal(tc.Budgets, []time.Duration{5 * time.Millisecond, time.Second}) || tc.Count != 3 || tc.MaxOvershoot != 5*time.Millisecond ||
		tc.Database != "test" || tc.Collection != "big.sub" {
		t.Errorf("%+v", tc)
	}
	if v, err := tc.Filter.LookupErr("n"); err != nil || v.Type != bson.TypeInt64 {
		t.Errorf("filter %v: n %v %v", tc.Filter, v, err)
	}

	if cfg, err := Parse([]string{"check"}, noEnv); err != nil || cfg.Timeouts.Enabled {
		t.Errorf("check alone: %+v %v", cfg, err)
	}
}

func TestTimeoutsFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args    []string
		setting string
	}{
		{[]string{"--timeouts"}, "--timeouts"},
		{[]string{"run", "--timeouts"}, "--timeouts"},
		{[]string{"check", "--timeouts.count", "3"}, "--timeouts.count"},
		{[]string{"check", "--timeouts", "--timeouts.budgets", "10ms,soon"}, "--timeouts.budgets"},
		{[]string{"check", "--timeouts", "--timeouts.budgets", "0s"}, "--timeouts.budgets"},
		{[]string{"check", "--timeouts", "--timeouts.budgets", "2m"}, "--timeouts.budgets"},
		{[]string{"check", "--timeouts", "--timeouts.budgets", ""}, "--timeouts.budgets"},
		{[]string{"check", "--timeouts", "--timeouts.count", "0"}, "--timeouts.count"},
		{[]string{"check", "--timeouts", "--timeouts.max-overshoot", "-1ms"}, "--timeouts.max-overshoot"},
		{[]string{"check", "--timeouts", "--timeouts.filter", "[1]"}, "--timeouts.filter"},
		{[]string{"check", "--timeouts", "--timeouts.filter", "{"}, "--timeouts.filter"},
		{[]string{"check", "--timeouts", "--timeouts.collection", "nodot"}, "--timeouts.collection"},
		{[]string{"check", "--timeouts", "--timeouts.collection", ".c"}, "--timeouts.collection"},
	} {
		_, err := Parse(c.args, noEnv)
		var ce *Error
		if !errors.As(err, &ce) || ce.Setting != c.setting {
			t.Errorf("%q: %v, want an error naming %s", c.args, err, c.setting)
		}
	}
}
