package demo

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mongoscope/mongoscope/cmd/mongoprobe/internal/probe"
)

// TestSlowMemberTimesOut: with the slow-member fault, the slow member's
// pings time out under the demo's ping timeout, so the timeout metrics move;
// the other members' pings and the reads still succeed.
func TestSlowMemberTimesOut(t *testing.T) {
	d, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	s, err := d.Settings()
	if err != nil {
		t.Fatal(err)
	}
	if s.PingTimeout >= SlowMemberLatency {
		t.Fatalf("ping timeout %v, slow member latency %v", s.PingTimeout, SlowMemberLatency)
	}
	reg := prometheus.NewRegistry()
	c, err := probe.New(s, probe.Deps{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	// Before the fault, a round succeeds (a loaded machine may need a few
	// to open the connections under the 250ms pings).
	ok := false
	for range 5 {
		if ok = c.Round(context.Background()).OK(); ok {
			break
		}
	}
	if !ok {
		t.Fatal("no round succeeded before the fault")
	}
	base := c.Timeouts().Timeouts
	slow := d.RS.Members()[1]
	slow.AddLatency(SlowMemberLatency)
	defer slow.AddLatency(0)
	for i := range 3 {
		r := c.Round(context.Background())
		for _, res := range r.Results {
			if res.Err == nil {
				continue
			}
			t.Logf("round %d: %s %s: class=%s stage=%s overshoot=%v", i, res.Probe, res.Target, res.Class, res.TimeoutStage, res.Overshoot)
			if res.Probe != probe.ProbePing || res.Class != probe.ClassTimeout {
				t.Errorf("round %d: unexpected failure %s %s: %v", i, res.Probe, res.Target, res.Err)
			}
		}
		if res := find(r, slow.Addr()); res.Class != probe.ClassTimeout {
			t.Errorf("round %d: the slow member's ping: %+v", i, res)
		}
		if !r.Up {
			t.Errorf("round %d not up", i)
		}
	}
	sum := c.Timeouts()
	t.Logf("summary: %+v", sum)
	if sum.Timeouts-base < 3 {
		t.Errorf("%d timeouts in 3 rounds, want 3 at least", sum.Timeouts-base)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, mf := range mfs {
		if mf.GetName() == "mongoprobe_timeout_overshoot_seconds" {
			found = true
		}
	}
	if !found {
		t.Error("no mongoprobe_timeout_overshoot_seconds")
	}
}

func find(r probe.Round, member string) probe.Result {
	for _, res := range r.Results {
		if res.Probe == probe.ProbePing && res.Target == member {
			return res
		}
	}
	return probe.Result{}
}
