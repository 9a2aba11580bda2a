package probe

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/mongotest"
)

// failoverRun probes a three-member set every interval (timeouts 150ms,
// so that writes fail while there is no primary), applies fault, and
// returns the failover once closed, with the set's step-down (or kill)
// and election times.
func failoverRun(t *testing.T, fault func(rs *mongotest.ReplicaSet) error, lostKind mongotest.EventKind) (*env, *mongotest.ReplicaSet, Failover, time.Duration) {
	t.Helper()
	const interval = 200 * time.Millisecond
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{ElectionDelay: time.Second})
	e := newCluster(t, rs.URI(), func(s *Settings) {
		s.Interval = interval
		s.PingTimeout, s.ReadTimeout, s.WriteTimeout = 150*time.Millisecond, 150*time.Millisecond, 150*time.Millisecond
	})
	waitPrimary(t, e.c)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.c.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	time.Sleep(3 * interval)
	last := rs.LastEvent()
	if err := fault(rs); err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer wcancel()
	elected, err := rs.WaitFor(wctx, mongotest.EventElected, last)
	if err != nil {
		t.Fatal(err)
	}
	var lost mongotest.ReplicaSetEvent
	for _, ev := range rs.Events() {
		if ev.Kind == lostKind && ev.Seq > last && lost.Seq == 0 {
			lost = ev
		}
	}
	if lost.Seq == 0 {
		t.Fatalf("no %v event: %+v", lostKind, rs.Events())
	}
	truth := elected.Time.Sub(lost.Time)
	deadline := time.Now().Add(10 * time.Second)
	for {
		fs := e.c.Failovers()
		if len(fs) > 0 && !fs[len(fs)-1].Open {
			time.Sleep(3 * interval) // no second failover comes
			fs = e.c.Failovers()
			if len(fs) != 1 {
				t.Fatalf("%d failovers, want 1: %+v", len(fs), fs)
			}
			f := fs[0]
			t.Logf("failover %+v; truth: lost %v, elected %v, window %v", f, lost.Time, elected.Time, truth)
			if f.NewPrimary != elected.Addr {
				t.Errorf("new primary %q, want %q", f.NewPrimary, elected.Addr)
			}
			if d := f.NewPrimaryAfter - truth; d < -interval || d > interval {
				t.Errorf("detected→new primary %v, truth %v", f.NewPrimaryAfter, truth)
			}
			if d := f.Detected.Sub(lost.Time); d < 0 || d > interval {
				t.Errorf("detected %v, the set's event at %v", f.Detected, lost.Time)
			}
			if d := f.WriteUnavailable - truth; f.WriteUnavailable <= 0 || d < -2*interval || d > 2*interval {
				t.Errorf("write unavailable %v, truth %v (from %v until %v)", f.WriteUnavailable, truth, f.WriteUnavailableFrom, f.WriteUnavailableUntil)
			}
			if !f.Settled || f.End != "settled" || f.Open || f.WritesFailed == 0 || f.Errors[ClassTimeout]+f.Errors[ClassNetwork]+f.Errors[ClassNotPrimary] == 0 {
				t.Errorf("failover %+v", f)
			}
			return e, rs, f, truth
		}
		if time.Now().After(deadline) {
			t.Fatalf("no closed failover: %+v\n%s", fs, e.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func checkFailoverOutputs(t *testing.T, e *env, f Failover) {
	t.Helper()
	if got := testutil.ToFloat64(e.c.fo.m.total.WithLabelValues("true")); got != 1 {
		t.Errorf("mongoprobe_failovers_total{settled=true} = %v", got)
	}
	out := e.text(t)
	for _, want := range []string{
		`mongoprobe_failovers_total{cluster="test",settled="true"} 1`,
		`mongoprobe_failovers_total{cluster="test",settled="false"} 0`,
		`mongoprobe_failover_detection_to_primary_seconds_count{cluster="test"} 1`,
		`mongoprobe_failover_write_unavailable_seconds_count{cluster="test"} 1`,
		`mongoprobe_failover_read_errors_total{cluster="test",read_preference="primary"}`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("metrics lack %s:\n%s", want, grep(out, "failover"))
		}
	}
	var rec string
	for _, l := range strings.Split(e.log.String(), "\n") {
		if strings.Contains(l, "msg=failover ") {
			if rec != "" {
				t.Errorf("two failover records:\n%s\n%s", rec, l)
			}
			rec = l
		}
	}
	for _, want := range []string{"cluster=test", "old=" + f.OldPrimary, "new=" + f.NewPrimary, "detected=", "new_primary_after=",
		"write_unavailable=", "reads_failed.primary=", "retries_absorbed=", "errors.total=", "settled=true"} {
		if !strings.Contains(rec, want) {
			t.Errorf("the failover record lacks %s: %q", want, rec)
		}
	}
}

func TestFailoverStepDown(t *testing.T) {
	var old string
	e, _, f, _ := failoverRun(t, func(rs *mongotest.ReplicaSet) error {
		old = rs.Primary().Addr()
		return rs.StepDown(context.Background())
	}, mongotest.EventSteppedDown)
	if f.OldPrimary != old || !strings.HasPrefix(f.Cause, "RSSecondary") && !strings.HasPrefix(f.Cause, "Unknown") && !strings.HasPrefix(f.Cause, "now ") {
		t.Errorf("old %q (want %q), cause %q", f.OldPrimary, old, f.Cause)
	}
	checkFailoverOutputs(t, e, f)
}

func TestFailoverKill(t *testing.T) {
	var old string
	e, _, f, _ := failoverRun(t, func(rs *mongotest.ReplicaSet) error {
		old = rs.Members()[0].Addr()
		return rs.Kill(0)
	}, mongotest.EventKilled)
	if f.OldPrimary != old {
		t.Errorf("old %q, want %q", f.OldPrimary, old)
	}
	checkFailoverOutputs(t, e, f)
}

// TestFailoverDefinitions feeds SDAM descriptions and rounds to a cluster
// directly, checking each definition on known times.
func TestFailoverDefinitions(t *testing.T) {
	e := newCluster(t, "mongodb://127.0.0.1:1/?proxyHost=localhost", nil)
	c := e.c
	e1, e2, e3 := bson.NewObjectID(), bson.NewObjectID(), bson.NewObjectID()
	a, b := "h1:27017", "h2:27017"
	set := func(kind string, servers ...event.ServerDescription) {
		c.topologyChanged(event.TopologyDescription{Kind: kind, Servers: servers})
	}
	prim := func(addr string, id *bson.ObjectID) event.ServerDescription {
		return event.ServerDescription{Address: addr, Kind: "RSPrimary", ElectionID: id}
	}
	sec := func(addr string) event.ServerDescription {
		return event.ServerDescription{Address: addr, Kind: "RSSecondary"}
	}
	open := func() Failover {
		t.Helper()
		fs := c.Failovers()
		if len(fs) == 0 || !fs[len(fs)-1].Open {
			t.Fatalf("no open failover: %+v", fs)
		}
		return fs[len(fs)-1]
	}
	write := func(start time.Time, d time.Duration, err error, retries int) Result {
		r := Result{Probe: ProbeWrite, Target: WriteTarget, Start: start, Duration: d, Err: err, Retries: retries}
		if err != nil {
			r.Class = ClassTimeout
		}
		return r
	}
	failed := errors.New("failed")

	set("ReplicaSetWithPrimary", prim(a, &e1), sec(b))
	// The primary lost, then back unchanged: no failover.
	set("ReplicaSetNoPrimary", event.ServerDescription{Address: a, Kind: "Unknown"}, sec(b))
	open()
	set("ReplicaSetWithPrimary", prim(a, &e1), sec(b))
	if fs := c.Failovers(); len(fs) != 0 {
		t.Fatalf("a primary back unchanged made a failover: %+v", fs)
	}

	// A step-down: a window, a new primary, writes failed and blocked.
	set("ReplicaSetNoPrimary", sec(a), sec(b))
	f := open()
	if f.OldPrimary != a || f.Cause != "now RSSecondary" || !f.NewPrimarySeen.IsZero() {
		t.Fatalf("%+v", f)
	}
	D := f.Detected
	c.record(Round{Start: D, Results: []Result{
		write(D.Add(-time.Second), 100*time.Millisecond, failed, 0), // ended before D: not this failover's
		{Probe: ProbeRead, Target: "primary", Start: D.Add(-10 * time.Millisecond), Duration: 40 * time.Millisecond, Err: failed, Class: ClassNetwork},
		{Probe: ProbePing, Target: a, Start: D, Duration: time.Millisecond, Err: failed, Class: ClassNetwork}, // pings do not count
	}})
	c.record(Round{Start: D, Results: []Result{write(D.Add(-50*time.Millisecond), 60*time.Millisecond, failed, 0)}})
	time.Sleep(5 * time.Millisecond)
	set("ReplicaSetWithPrimary", sec(a), prim(b, &e2))
	f = open()
	P := f.NewPrimarySeen
	if f.NewPrimary != b || P.Before(D) || f.NewPrimaryAfter != P.Sub(D) {
		t.Fatalf("%+v", f)
	}
	// A write that succeeded before P does not settle it.
	c.record(Round{Start: D, Results: []Result{write(D.Add(time.Millisecond), time.Millisecond, nil, 0)}})
	open()
	// The write in flight at P succeeds after it, with 2 retries: settled.
	c.record(Round{Start: D, Results: []Result{
		write(P.Add(-100*time.Millisecond), 150*time.Millisecond, nil, 2),
		{Probe: ProbeRead, Target: "primary", Start: P, Duration: 70 * time.Millisecond, Retries: 1},
	}})
	fs := c.Failovers()
	if len(fs) != 1 {
		t.Fatalf("%+v", fs)
	}
	f = fs[0]
	wantFrom, wantUntil := D.Add(-50*time.Millisecond), P.Add(50*time.Millisecond)
	if f.Open || !f.Settled || f.End != "settled" || !f.WriteUnavailableFrom.Equal(wantFrom) || !f.WriteUnavailableUntil.Equal(wantUntil) ||
		f.WriteUnavailable != wantUntil.Sub(wantFrom) || f.Writes != 3 || f.WritesFailed != 1 || f.RetriesAbsorbed != 3 ||
		f.Errors[ClassTimeout] != 1 || f.Errors[ClassNetwork] != 1 || len(f.Errors) != 2 ||
		f.Reads["primary"] != (ReadImpact{Probes: 2, Failed: 1, MaxLatency: 70 * time.Millisecond}) {
		t.Errorf("%+v", f)
	}

	// An immediate switch (b to a in one event): detected = new primary seen.
	set("ReplicaSetWithPrimary", prim(a, &e3), sec(b))
	f = open()
	if f.OldPrimary != b || f.NewPrimary != a || !f.Detected.Equal(f.NewPrimarySeen) || f.NewPrimaryAfter != 0 || f.Cause != "primary changed without a window" {
		t.Errorf("%+v", f)
	}
	// A write that started after P and succeeded: settled, no unavailability.
	c.record(Round{Start: D, Results: []Result{write(f.NewPrimarySeen.Add(time.Millisecond), time.Millisecond, nil, 0)}})
	fs = c.Failovers()
	if f = fs[len(fs)-1]; len(fs) != 2 || !f.Settled || f.WriteUnavailable != 0 || !f.WriteUnavailableFrom.IsZero() {
		t.Errorf("%+v", fs)
	}

	// A new electionId on the same member, no window: a failover too;
	// then a loss before it settled supersedes it, and the cap closes
	// the next one unsettled.
	e4 := bson.NewObjectID()
	set("ReplicaSetWithPrimary", prim(a, &e4), sec(b))
	if f = open(); f.OldPrimary != a || f.NewPrimary != a {
		t.Errorf("%+v", f)
	}
	c.mu.Lock()
	c.fo.cap = 50 * time.Millisecond
	c.mu.Unlock()
	set("ReplicaSetNoPrimary", event.ServerDescription{Address: a, Kind: "Unknown", Error: errors.New("connection refused")}, sec(b))
	if f = open(); f.Cause != "Unknown: connection refused" {
		t.Errorf("%+v", f)
	}
	c.record(Round{Start: D, Results: []Result{write(f.Detected, 10*time.Millisecond, failed, 0)}})
	time.Sleep(60 * time.Millisecond)
	fs = c.Failovers()
	if len(fs) != 4 || fs[2].End != "superseded" || fs[2].Settled || fs[3].End != "cap" || fs[3].Settled || fs[3].Open ||
		fs[3].WriteUnavailable < 50*time.Millisecond || fs[3].NewPrimary != "" {
		t.Errorf("%+v", fs)
	}
	out := e.text(t)
	for _, want := range []string{`mongoprobe_failovers_total{cluster="test",settled="true"} 2`, `mongoprobe_failovers_total{cluster="test",settled="false"} 2`,
		`mongoprobe_failover_read_errors_total{cluster="test",read_preference="primary"} 1`,
		`mongoprobe_failover_detection_to_primary_seconds_count{cluster="test"} 3`, `mongoprobe_failover_write_unavailable_seconds_count{cluster="test"} 4`} {
		if !strings.Contains(out, want) {
			t.Errorf("metrics lack %s:\n%s", want, grep(out, "failover"))
		}
	}
	if n := strings.Count(e.log.String(), "msg=failover "); n != 4 {
		t.Errorf("%d failover records, want 4", n)
	}

	// The JSON form.
	js, err := json.Marshal(fs[0])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		t.Fatal(err)
	}
	if s, _ := m["detected"].(string); len(s) != len("2006-01-02T15:04:05.000Z") || !strings.HasSuffix(s, "Z") {
		t.Errorf("detected %q", m["detected"])
	}
	if v, _ := m["write_unavailable_seconds"].(float64); v != fs[0].WriteUnavailable.Seconds() || m["write_unavailable"] != fs[0].WriteUnavailable.String() {
		t.Errorf("write unavailable: %s", js)
	}
	if r, _ := m["reads"].(map[string]any)["primary"].(map[string]any); r["failed"] != 1.0 || r["max_latency"] != "70ms" {
		t.Errorf("reads: %s", js)
	}
	if fs[3].NewPrimarySeen.IsZero() {
		js, _ := json.Marshal(fs[3])
		if !strings.Contains(string(js), `"new_primary_seen":null`) {
			t.Errorf("zero time: %s", js)
		}
	}
}

// TestFailoverHistory keeps the last FailoverHistory failovers.
func TestFailoverHistory(t *testing.T) {
	e := newCluster(t, "mongodb://127.0.0.1:1/?proxyHost=localhost", nil)
	addrs := []string{"h1:1", "h2:1"}
	for i := range FailoverHistory + 5 {
		e.c.topologyChanged(event.TopologyDescription{Kind: "ReplicaSetWithPrimary", Servers: []event.ServerDescription{
			{Address: addrs[i%2], Kind: "RSPrimary"}, {Address: addrs[(i+1)%2], Kind: "RSSecondary"}}})
	}
	fs := e.c.Failovers()
	// 24 changes: 23 superseded, the last open.
	if len(fs) != FailoverHistory+1 || !fs[len(fs)-1].Open || fs[0].End != "superseded" {
		t.Errorf("%d failovers: %+v", len(fs), fs)
	}
}
