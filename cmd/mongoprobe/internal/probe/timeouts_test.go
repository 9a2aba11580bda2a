package probe

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/mongotest"
)

// TestTimeoutOvershootNetwork: a find blocked longer than the read's
// timeoutMS times out waiting for the reply; its overshoot is small and
// recorded in the result, the histogram, the side counter and the summary.
func TestTimeoutOvershootNetwork(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{})
	const readTimeout = 200 * time.Millisecond
	e := newCluster(t, rs.URI(), func(s *Settings) { s.Name = "over"; s.ReadTimeout = readTimeout })
	waitPrimary(t, e.c)
	// Connections pooled, RTTs measured: on a loaded machine (-race) a
	// first connection may take longer than the read's 200ms, so the
	// warm-up may see timeouts of its own, and the checks below count
	// from what it left.
	for i := 0; i < 5 && find(e.c.Round(context.Background()), ProbeRead, "primary").Err != nil; i++ {
	}
	base, baseText := e.c.Timeouts(), e.text(t)
	if base.Timeouts > 0 {
		t.Logf("the warm-up timed out: %+v", base)
	}
	failPoint(t, rs.Members()[0], bson.D{{Key: "failCommands", Value: bson.A{"find"}},
		{Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: 600}}, 1)

	res := find(e.c.Round(context.Background()), ProbeRead, "primary")
	t.Logf("class=%s stage=%s timeout=%v duration=%v overshoot=%v err=%v", res.Class, res.TimeoutStage, res.Timeout, res.Duration, res.Overshoot, res.Err)
	if res.Class != ClassTimeout {
		t.Fatalf("class = %q, want timeout: %+v", res.Class, res)
	}
	if res.TimeoutStage != event.TimeoutStageNetwork {
		t.Errorf("stage = %q, want %q", res.TimeoutStage, event.TimeoutStageNetwork)
	}
	if res.Timeout != readTimeout {
		t.Errorf("Timeout = %v, want %v", res.Timeout, readTimeout)
	}
	if res.Overshoot != res.Duration-res.Timeout {
		t.Errorf("Overshoot = %v, Duration-Timeout = %v", res.Overshoot, res.Duration-res.Timeout)
	}
	if res.Overshoot < -5*time.Millisecond || res.Overshoot >= 50*time.Millisecond {
		t.Errorf("overshoot = %v, want within [-5ms, 50ms) on loopback", res.Overshoot)
	}

	out := e.text(t)
	for series, want := range map[string]float64{
		`mongoprobe_timeout_overshoot_seconds_count{cluster="over",probe="read",stage="network"}`:       1,
		`mongoprobe_timeout_side_total{cluster="over",probe="read",side="client"}`:                      1,
		`mongoprobe_timeout_side_total{cluster="over",probe="read",side="server"}`:                      0,
		`mongoprobe_probe_timeouts_total{cluster="over",probe="read",stage="network",target="primary"}`: 1,
	} {
		if got := value(t, out, series) - value(t, baseText, series); got != want {
			t.Errorf("%s grew by %v, want %v:\n%s", series, got, want, grep(out, "timeout"))
		}
	}
	if !strings.Contains(out, `mongoprobe_timeout_side_total{cluster="over",probe="read",side="server"} 0`) {
		t.Errorf("no server side series at 0:\n%s", grep(out, "side_total"))
	}

	sum := e.c.Timeouts()
	t.Logf("summary: %+v", sum)
	if sum.Timeouts-base.Timeouts != 1 || sum.ByStage[event.TimeoutStageNetwork]-base.ByStage[event.TimeoutStageNetwork] != 1 ||
		sum.ClientFirst-base.ClientFirst != 1 || sum.ServerFirst != 0 || sum.Window != base.Window+1 || sum.ServerFirstRatio != 0 ||
		sum.OvershootMax < res.Overshoot {
		t.Errorf("summary = %+v, before = %+v", sum, base)
	}
	if base.Timeouts == 0 && (sum.OvershootMax != res.Overshoot || sum.OvershootP50 != res.Overshoot) {
		t.Errorf("summary = %+v", sum)
	}
	// The summary is a copy.
	sum.ByStage["network"] = 99
	if e.c.Timeouts().ByStage["network"] == 99 {
		t.Error("Timeouts shares its map")
	}
}

// TestTimeoutServerFirst: the server's MaxTimeMSExpired (code 50) before the
// client's deadline is a timeout at stage server, counted on the server side.
func TestTimeoutServerFirst(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{})
	e := newCluster(t, rs.URI(), func(s *Settings) { s.Name = "srv"; s.ReadTimeout = time.Second })
	waitPrimary(t, e.c)
	failPoint(t, rs.Members()[0], bson.D{{Key: "failCommands", Value: bson.A{"find"}}, {Key: "errorCode", Value: 50}}, 1)

	res := find(e.c.Round(context.Background()), ProbeRead, "primary")
	t.Logf("class=%s stage=%s code=%d timeout=%v duration=%v overshoot=%v err=%v", res.Class, res.TimeoutStage, res.Code, res.Timeout, res.Duration, res.Overshoot, res.Err)
	if res.Class != ClassTimeout || res.TimeoutStage != event.TimeoutStageServer {
		t.Fatalf("class %q stage %q, want timeout at server: %+v", res.Class, res.TimeoutStage, res)
	}
	if res.Overshoot >= 0 {
		t.Errorf("overshoot = %v: the server's answer came long before the 1s budget", res.Overshoot)
	}
	out := e.text(t)
	for _, want := range []string{
		`mongoprobe_timeout_side_total{cluster="srv",probe="read",side="server"} 1`,
		`mongoprobe_timeout_overshoot_seconds_count{cluster="srv",probe="read",stage="server"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("metrics lack %s:\n%s", want, grep(out, "timeout"))
		}
	}
	sum := e.c.Timeouts()
	if sum.ServerFirst != 1 || sum.ClientFirst != 0 || sum.ServerFirstRatio != 1 || sum.ByStage[event.TimeoutStageServer] != 1 {
		t.Errorf("summary = %+v", sum)
	}
}

// TestTimeoutSelection: a primary read on a replica set without a primary
// times out in server selection.
func TestTimeoutSelection(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{ElectionDelay: time.Minute})
	e := newCluster(t, rs.URI(), func(s *Settings) {
		s.Name = "sel"
		s.PingTimeout, s.ReadTimeout, s.WriteTimeout = 200*time.Millisecond, 200*time.Millisecond, 200*time.Millisecond
	})
	waitPrimary(t, e.c)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rs.StepDown(ctx); err != nil {
		t.Fatal(err)
	}
	for e.c.Status().Primary != "" {
		if ctx.Err() != nil {
			t.Fatal("the driver never saw the primary go")
		}
		time.Sleep(10 * time.Millisecond)
	}
	res := find(e.c.Round(context.Background()), ProbeRead, "primary")
	t.Logf("class=%s stage=%s timeout=%v duration=%v overshoot=%v", res.Class, res.TimeoutStage, res.Timeout, res.Duration, res.Overshoot)
	if res.Class != ClassTimeout || res.TimeoutStage != event.TimeoutStageSelection {
		t.Fatalf("class %q stage %q, want timeout at selection: %+v", res.Class, res.TimeoutStage, res)
	}
	if res.Overshoot < -5*time.Millisecond || res.Overshoot >= 50*time.Millisecond {
		t.Errorf("overshoot = %v", res.Overshoot)
	}
	if !strings.Contains(e.text(t), `mongoprobe_timeout_overshoot_seconds_count{cluster="sel",probe="read",stage="selection"} 1`) {
		t.Errorf("no selection overshoot:\n%s", grep(e.text(t), "overshoot_seconds_count"))
	}
	if e.c.Timeouts().ByStage[event.TimeoutStageSelection] < 2 { // the read and the write
		t.Errorf("summary = %+v", e.c.Timeouts())
	}
}

// TestTimedRead: TimedRead reads under its own budget, records nothing,
// and reports a missing document as a success.
func TestTimedRead(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{})
	e := newCluster(t, rs.URI(), func(s *Settings) { s.Name = "timed" })
	waitPrimary(t, e.c)
	if res := e.c.TimedRead(context.Background(), TimedRead{Budget: time.Second}); res.Err != nil || res.Target != "1s" || res.Timeout != time.Second {
		t.Fatalf("warm-up: %+v", res)
	}
	failPoint(t, rs.Members()[0], bson.D{{Key: "failCommands", Value: bson.A{"find"}},
		{Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: 300}}, 1)
	res := e.c.TimedRead(context.Background(), TimedRead{Database: "db", Collection: "c", Filter: bson.D{{Key: "x", Value: 1}}, Budget: 50 * time.Millisecond})
	t.Logf("class=%s stage=%s duration=%v overshoot=%v", res.Class, res.TimeoutStage, res.Duration, res.Overshoot)
	if res.Class != ClassTimeout || res.Target != "50ms" || res.Overshoot >= 50*time.Millisecond {
		t.Errorf("%+v", res)
	}
	if res := e.c.TimedRead(context.Background(), TimedRead{}); res.Err == nil || res.Class != ClassClient {
		t.Errorf("no budget: %+v", res)
	}
	if e.c.Timeouts().Timeouts != 0 || strings.Contains(e.text(t), "mongoprobe_timeout_overshoot_seconds_count{") ||
		!strings.Contains(e.text(t), `mongoprobe_timeout_side_total{cluster="timed",probe="read",side="client"} 0`) {
		t.Error("TimedRead was recorded")
	}
	if logs := e.log.String(); strings.Contains(logs, `level=WARN msg="probe failed"`) || !strings.Contains(logs, `level=DEBUG msg="probe failed"`) {
		t.Errorf("TimedRead's failures are not logged at DEBUG only:\n%s", grep(logs, "probe failed"))
	}
}

func TestSummarizeTimeouts(t *testing.T) {
	ms := time.Millisecond
	var rs []Result
	for i := 1; i <= 100; i++ {
		rs = append(rs, Result{Class: ClassTimeout, TimeoutStage: event.TimeoutStageNetwork, Overshoot: time.Duration(i) * ms})
	}
	rs = append(rs, Result{Class: ClassTimeout, TimeoutStage: event.TimeoutStageServer, Overshoot: -3 * ms},
		Result{Class: ClassTimeout, Overshoot: 500 * ms}, // no stage: other
		Result{Class: ClassNetwork, Overshoot: time.Hour}, Result{})
	s := SummarizeTimeouts(rs)
	if s.Timeouts != 102 || s.ByStage["network"] != 100 || s.ByStage["server"] != 1 || s.ByStage["other"] != 1 ||
		s.ServerFirst != 1 || s.ClientFirst != 101 || s.Window != 102 {
		t.Errorf("%+v", s)
	}
	if s.OvershootP50 != 50*ms || s.OvershootP99 != 100*ms || s.OvershootMax != 500*ms {
		t.Errorf("p50 %v p99 %v max %v", s.OvershootP50, s.OvershootP99, s.OvershootMax)
	}
	if z := SummarizeTimeouts(nil); z.Timeouts != 0 || z.ServerFirstRatio != 0 || z.OvershootMax != 0 || z.ByStage == nil {
		t.Errorf("%+v", z)
	}

	// The tracker keeps the last TimeoutWindow overshoots only.
	tr := newTimeoutTracker()
	for i := range TimeoutWindow + 10 {
		o := ms
		if i < 10 {
			o = time.Hour
		}
		tr.record(Result{Probe: ProbeRead, Class: ClassTimeout, TimeoutStage: "network", Overshoot: o})
	}
	if s := tr.summary(); s.Timeouts != TimeoutWindow+10 || s.Window != TimeoutWindow || s.OvershootMax != ms {
		t.Errorf("%+v", s)
	}
}

// TestTimeoutStageOfError: a *driver.TimeoutError's stage, for an error
// OperationFinished did not describe, maps to the event's constant.
func TestTimeoutStageOfError(t *testing.T) {
	for stage, want := range map[string]string{
		"server selection":                 event.TimeoutStageSelection,
		"connection checkout":              event.TimeoutStageCheckout,
		"connection establishment":         event.TimeoutStageConnect,
		"before sending the command":       event.TimeoutStageBeforeSend,
		"waiting for the server's reply":   event.TimeoutStageNetwork,
		"on the server (MaxTimeMSExpired)": event.TimeoutStageServer,
		"retrying after a retryable error": event.TimeoutStageRetry,
		"somewhere new":                    event.TimeoutStageOther,
	} {
		err := fmt.Errorf("find: %w", &driver.TimeoutError{Stage: stage, Err: errors.New("x")})
		class, _, got := classify(err, "")
		if class != ClassTimeout || got != want {
			t.Errorf("%q: class %q stage %q, want timeout %q", stage, class, got, want)
		}
		if side := TimeoutSide(got); (side == SideServer) != (want == event.TimeoutStageServer) {
			t.Errorf("%q: side %s", stage, side)
		}
	}
	// The event's stage wins.
	if _, _, got := classify(&driver.TimeoutError{Stage: "server selection", Err: errors.New("x")}, event.TimeoutStageRetry); got != event.TimeoutStageRetry {
		t.Errorf("stage %q", got)
	}
	// A parent context's deadline, with no TimeoutError.
	if class, _, got := classify(context.DeadlineExceeded, ""); class != ClassTimeout || got != event.TimeoutStageOther {
		t.Errorf("deadline: %q %q", class, got)
	}
}

// TestBudget: a probe's budget is its timeout, or what its context's
// earlier deadline leaves.
func TestBudget(t *testing.T) {
	now := time.Now()
	if b := budget(context.Background(), now, 200*time.Millisecond); b != 200*time.Millisecond {
		t.Errorf("no deadline: %v", b)
	}
	ctx, cancel := context.WithDeadline(context.Background(), now.Add(50*time.Millisecond))
	defer cancel()
	if b := budget(ctx, now, 200*time.Millisecond); b != 50*time.Millisecond {
		t.Errorf("earlier deadline: %v", b)
	}
	if b := budget(ctx, now, 10*time.Millisecond); b != 10*time.Millisecond {
		t.Errorf("later deadline: %v", b)
	}
	if b := budget(ctx, now.Add(time.Second), 10*time.Millisecond); b != 0 {
		t.Errorf("past deadline: %v", b)
	}
}

// value returns a series' value in an exposition, 0 when absent.
func value(t *testing.T, text, series string) float64 {
	t.Helper()
	for _, l := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", l, err)
			}
			return f
		}
	}
	return 0
}
