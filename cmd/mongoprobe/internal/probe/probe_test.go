package probe

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/cmd/mongoprobe/internal/logbuf"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
)

type env struct {
	c   *Cluster
	reg *prometheus.Registry
	log *logbuf.Buffer
}

func newCluster(t *testing.T, uri string, mod func(*Settings), deps ...Deps) *env {
	t.Helper()
	opts, err := driver.ClientOptionsFromURI(uri)
	if err != nil {
		t.Fatal(err)
	}
	s := Settings{
		Name: "test", Client: opts, Interval: time.Second,
		PingTimeout: 2 * time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second,
		CanaryKeys: 3, Scheduled: true,
	}
	if mod != nil {
		mod(&s)
	}
	e := &env{reg: prometheus.NewRegistry(), log: &logbuf.Buffer{}}
	var d Deps
	if len(deps) > 0 {
		d = deps[0]
	}
	d.Logger = slog.New(slog.NewTextHandler(e.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	d.Registerer = e.reg
	e.c, err = New(s, d)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.c.Close(context.Background()) })
	return e
}

// text is the registry's exposition.
func (e *env) text(t *testing.T) string {
	t.Helper()
	mfs, err := e.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	enc := expfmt.NewEncoder(&b, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

func waitPrimary(t *testing.T, c *Cluster) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for c.Status().Primary == "" {
		if time.Now().After(deadline) {
			t.Fatal("no primary discovered")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func find(r Round, probe, target string) Result {
	for _, res := range r.Results {
		if res.Probe == probe && res.Target == target {
			return res
		}
	}
	return Result{Probe: "missing " + probe + " " + target}
}

func failPoint(t *testing.T, s *mongotest.Server, data bson.D, times int) {
	t.Helper()
	mode := any("alwaysOn")
	if times > 0 {
		mode = bson.D{{Key: "times", Value: times}}
	}
	if err := s.SetFailPoint(bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: mode}, {Key: "data", Value: data}}); err != nil {
		t.Fatal(err)
	}
}

func TestRoundReplicaSet(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{})
	e := newCluster(t, rs.URI(), func(s *Settings) {
		s.ReadPreferences = []ReadPreference{
			{Pref: driver.ReadPreference{Mode: "primary"}},
			{Pref: driver.ReadPreference{Mode: "secondaryPreferred"}},
			{Name: "near", Pref: driver.ReadPreference{Mode: "nearest"}},
		}
	})
	if got := testutil.ToFloat64(e.c.up); got != 0 {
		t.Fatalf("up before a round = %v", got)
	}
	waitPrimary(t, e.c)
	members := map[string]bool{}
	for _, m := range rs.Members() {
		members[m.Addr()] = true
	}
	primary := rs.Primary().Addr()
	var r Round
	for i := 0; i < 4; i++ { // more writes than keys: the collection stays at 3
		r = e.c.Round(context.Background())
	}
	if !r.OK() || !r.Up {
		t.Fatalf("round not OK: %+v", r)
	}
	if len(r.Results) != 3+3+1 {
		t.Fatalf("%d results, want 7: %+v", len(r.Results), r.Results)
	}
	for addr := range members {
		res := find(r, ProbePing, addr)
		if res.Err != nil || res.Member != addr || res.Duration <= 0 || res.Cluster != "test" {
			t.Errorf("ping %s: %+v", addr, res)
		}
	}
	for _, target := range []string{"primary", "secondaryPreferred", "near"} {
		res := find(r, ProbeRead, target)
		if res.Err != nil || !members[res.Member] {
			t.Errorf("read %s: %+v", target, res)
		}
	}
	if res := find(r, ProbeRead, "primary"); res.Member != primary {
		t.Errorf("read primary answered by %q, want %q", res.Member, primary)
	}
	if res := find(r, ProbeRead, "secondaryPreferred"); res.Member == primary {
		t.Errorf("read secondaryPreferred answered by the primary")
	}
	w := find(r, ProbeWrite, WriteTarget)
	if w.Err != nil || w.Member != primary || w.Retries != 0 {
		t.Errorf("write: %+v (primary %s)", w, primary)
	}
	// The canary collection holds the fixed keys only.
	cl, err := driver.Connect(context.Background(), &driver.ClientOptions{Hosts: []string{primary}, URIOptions: driver.URIOptions{DirectConnection: driver.Ptr(true)}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Disconnect(context.Background())
	n, err := cl.Database(DefaultDatabase).Collection(DefaultCollection).CountDocuments(context.Background(), bson.D{})
	if err != nil || n != 3 {
		t.Errorf("canary holds %d documents (%v), want 3", n, err)
	}

	st := e.c.Status()
	if st.Primary != primary || len(st.Members) != 3 || st.Topology != "ReplicaSetWithPrimary" || st.LastRound == nil || !e.c.Ready() {
		t.Errorf("status: %+v", st)
	}
	if got := testutil.ToFloat64(e.c.up); got != 1 {
		t.Errorf("up = %v", got)
	}
	out := e.text(t)
	for _, want := range []string{
		`mongoprobe_up{cluster="test"} 1`,
		`mongoprobe_probe_success{cluster="test",probe="write",target="primary"} 1`,
		`mongoprobe_primary{cluster="test",member="` + primary + `"} 1`,
		`mongoprobe_member_type{cluster="test",member="` + primary + `",type="RSPrimary"} 1`,
		`mongoprobe_writable_primary{cluster="test"} 1`,
		`mongoprobe_no_writable_primary_seconds{cluster="test"} 0`,
		`mongoprobe_probe_answers_total{cluster="test",member="` + primary + `",probe="write",target="primary"} 4`,
		`mongoprobe_probes_total{class="",cluster="test",code="",outcome="success",probe="read",target="near"} 4`,
		`mongodb_driver_operation_duration_seconds_bucket{cluster="test"`,
		`mongoprobe_probe_duration_seconds_bucket{cluster="test",outcome="success",probe="ping",target="` + primary + `",le="0.0005"}`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestStepDown(t *testing.T) {
	const interval = 200 * time.Millisecond
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{ElectionDelay: time.Second})
	var mu sync.Mutex
	var rounds []Round
	e := newCluster(t, rs.URI(), func(s *Settings) {
		s.Interval = interval
		s.PingTimeout, s.ReadTimeout, s.WriteTimeout = 150*time.Millisecond, 150*time.Millisecond, 150*time.Millisecond
	}, Deps{OnRound: func(r Round) { mu.Lock(); rounds = append(rounds, r); mu.Unlock() }})
	waitPrimary(t, e.c)
	before := e.c.Status().NoPrimaryTotal
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.c.Run(ctx); close(done) }()
	time.Sleep(3 * interval)
	old := rs.Primary().Addr()
	last := rs.LastEvent()
	if err := rs.StepDown(context.Background()); err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer wcancel()
	elected, err := rs.WaitFor(wctx, mongotest.EventElected, last)
	if err != nil {
		t.Fatal(err)
	}
	var down mongotest.ReplicaSetEvent
	for _, ev := range rs.Events() {
		if ev.Kind == mongotest.EventSteppedDown && ev.Seq > last {
			down = ev
		}
	}
	if down.Seq == 0 {
		t.Fatal("no step-down event")
	}
	truth := elected.Time.Sub(down.Time)
	// Wait until the driver sees the new primary, then a few rounds.
	deadline := time.Now().Add(5 * time.Second)
	for e.c.Status().Primary != elected.Addr && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(4 * interval)
	cancel()
	<-done

	st := e.c.Status()
	if st.Primary != elected.Addr || st.Primary == old {
		t.Fatalf("primary %q, want %q (old %q)", st.Primary, elected.Addr, old)
	}
	if st.PrimaryChanges != 1 {
		t.Errorf("PrimaryChanges = %d, want 1", st.PrimaryChanges)
	}
	if got := testutil.ToFloat64(e.c.m.primaryChanges); got != 1 {
		t.Errorf("primary_changes_total = %v", got)
	}
	window := st.NoPrimaryTotal - before
	t.Logf("window without a writable primary: measured %v, truth %v", window, truth)
	if d := window - truth; d < -interval || d > interval {
		t.Errorf("window %v, truth %v (step-down %v, election %v)", window, truth, down.Time, elected.Time)
	}
	out := e.text(t)
	if !strings.Contains(out, `mongoprobe_member_type{cluster="test",member="`+elected.Addr+`",type="RSPrimary"} 1`) ||
		!strings.Contains(out, `mongoprobe_member_type{cluster="test",member="`+old+`",type="RSSecondary"} 1`) ||
		strings.Contains(out, `mongoprobe_member_type{cluster="test",member="`+old+`",type="RSPrimary"}`) {
		t.Errorf("member types:\n%s", grep(out, "mongoprobe_member_type"))
	}
	if !strings.Contains(out, "mongoprobe_primary_changes_total{cluster=\"test\"} 1") {
		t.Errorf("metrics: %s", grep(out, "primary_changes"))
	}
	// The metric's total agrees with the status.
	mfs, err := e.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, mf := range mfs {
		switch mf.GetName() {
		case "mongoprobe_no_writable_primary_seconds_total":
			found = true
			v := time.Duration(mf.GetMetric()[0].GetCounter().GetValue() * float64(time.Second))
			if d := v - before - truth; d < -interval || d > interval {
				t.Errorf("mongoprobe_no_writable_primary_seconds_total %v (%v before the step-down), truth %v", v, before, truth)
			}
		case "mongoprobe_no_writable_primary_seconds":
			if v := mf.GetMetric()[0].GetGauge().GetValue(); v != 0 {
				t.Errorf("mongoprobe_no_writable_primary_seconds = %v with a primary", v)
			}
		}
	}
	if !found {
		t.Errorf("no mongoprobe_no_writable_primary_seconds_total")
	}

	mu.Lock()
	defer mu.Unlock()
	failedInWindow := false
	for _, r := range rounds {
		w := find(r, ProbeWrite, WriteTarget)
		if w.Start.After(down.Time) && w.Start.Add(w.Duration).Before(elected.Time) && w.Err != nil {
			failedInWindow = true
		}
		if w.Start.After(down.Time) && w.Start.Add(w.Duration).Before(elected.Time) && w.Err == nil {
			t.Errorf("a write succeeded within the window: %+v", w)
		}
	}
	if !failedInWindow {
		t.Error("no write failed during the window")
	}
	lastW := find(rounds[len(rounds)-1], ProbeWrite, WriteTarget)
	if lastW.Err != nil || lastW.Member != elected.Addr {
		t.Errorf("the last write: %+v", lastW)
	}
	if !strings.Contains(e.log.String(), "primary changed") || !strings.Contains(e.log.String(), "lost the writable primary") {
		t.Errorf("logs lack the primary change")
	}
}

func grep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestErrorClasses(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{})
	cases := []struct {
		name   string
		query  string
		probe  string
		data   bson.D
		class  string
		code   int32
		member bool
	}{
		{"timeout", "", ProbeRead, bson.D{{Key: "failCommands", Value: bson.A{"find"}}, {Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: 600}}, ClassTimeout, 0, false},
		{"not_primary", "&retryWrites=false", ProbeWrite, bson.D{{Key: "failCommands", Value: bson.A{"update"}}, {Key: "errorCode", Value: 10107}}, ClassNotPrimary, 10107, true},
		{"server", "", ProbeRead, bson.D{{Key: "failCommands", Value: bson.A{"find"}}, {Key: "errorCode", Value: 2}}, ClassServer, 2, true},
		{"network", "&retryReads=false", ProbeRead, bson.D{{Key: "failCommands", Value: bson.A{"find"}}, {Key: "closeConnection", Value: true}}, ClassNetwork, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newCluster(t, rs.URI()+tc.query, func(s *Settings) { s.Name = tc.name; s.ReadTimeout = 200 * time.Millisecond })
			waitPrimary(t, e.c)
			p := rs.Primary()
			failPoint(t, p, tc.data, 1)
			defer p.ClearFailPoints()
			r := e.c.Round(context.Background())
			target := "primary"
			res := find(r, tc.probe, target)
			if res.Err == nil || res.Class != tc.class || res.Code != tc.code {
				t.Fatalf("%+v", res)
			}
			if tc.member && res.Member != p.Addr() {
				t.Errorf("member %q, want %q", res.Member, p.Addr())
			}
			if tc.class == ClassTimeout && res.TimeoutStage == "" {
				t.Errorf("no timeout stage: %+v", res)
			}
			out := e.text(t)
			want := `mongoprobe_probes_total{class="` + tc.class + `",cluster="` + tc.name + `",code="`
			if tc.code != 0 {
				want += itoa(tc.code)
			}
			want += `",outcome="failure",probe="` + tc.probe + `",target="primary"} 1`
			if !strings.Contains(out, want) {
				t.Errorf("metrics lack %s:\n%s", want, grep(out, "mongoprobe_probes_total"))
			}
			if tc.class == ClassTimeout && !strings.Contains(out, `mongoprobe_probe_timeouts_total{cluster="timeout",probe="read",stage="`+res.TimeoutStage+`",target="primary"} 1`) {
				t.Errorf("timeouts: %s", grep(out, "timeouts_total"))
			}
			if !strings.Contains(e.log.String(), "probe failed") || !strings.Contains(e.log.String(), "class="+tc.class) {
				t.Errorf("log: %s", e.log.String())
			}
		})
	}
}

func itoa(c int32) string { return strconv.Itoa(int(c)) }

func TestRetries(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{})
	e := newCluster(t, rs.URI(), nil)
	waitPrimary(t, e.c)
	p := rs.Primary()
	failPoint(t, p, bson.D{{Key: "failCommands", Value: bson.A{"find"}}, {Key: "errorCode", Value: 6}}, 1) // HostUnreachable, retryable
	r := e.c.Round(context.Background())
	res := find(r, ProbeRead, "primary")
	if res.Err != nil || res.Retries != 1 || res.Member != p.Addr() {
		t.Fatalf("%+v", res)
	}
	if !strings.Contains(e.text(t), `mongoprobe_probe_retries_total{cluster="test",probe="read",target="primary"} 1`) {
		t.Errorf("retries: %s", grep(e.text(t), "retries_total"))
	}
}

func TestAuthFailureHidesPassword(t *testing.T) {
	const password = "Sup3rS3cretPassw0rd"
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{Options: mongotest.Options{Auth: true}})
	if err := rs.AddUser("admin", "probe", "the-right-one"); err != nil {
		t.Fatal(err)
	}
	uri := strings.Replace(rs.URI(), "mongodb://", "mongodb://probe:"+password+"@", 1)
	e := newCluster(t, uri, func(s *Settings) {
		s.PingTimeout, s.ReadTimeout, s.WriteTimeout = time.Second, time.Second, time.Second
	})
	r := e.c.Round(context.Background())
	if r.Up || r.OK() {
		t.Fatalf("round succeeded with a wrong password: %+v", r)
	}
	sawAuth := false
	var errs []string
	for _, res := range r.Results {
		if res.Err == nil {
			t.Errorf("%+v succeeded", res)
			continue
		}
		errs = append(errs, res.Err.Error())
		if res.Class == ClassAuth {
			sawAuth = true
		}
	}
	if !sawAuth {
		t.Errorf("no auth class: %+v", r.Results)
	}
	if find(r, ProbePing, rs.Members()[0].Addr()).Class != ClassAuth {
		t.Errorf("ping: %+v", find(r, ProbePing, rs.Members()[0].Addr()))
	}
	e.c.Close(context.Background())
	for what, s := range map[string]string{"errors": strings.Join(errs, "\n"), "logs": e.log.String(), "metrics": e.text(t), "status": fmtStatus(e.c.Status())} {
		if strings.Contains(s, password) {
			t.Errorf("the password appears in the %s", what)
		}
	}
	if !strings.Contains(e.log.String(), "class=auth") {
		t.Errorf("logs: %s", e.log.String())
	}
}

func fmtStatus(s Status) string {
	var b strings.Builder
	if s.LastRound != nil {
		for _, r := range s.LastRound.Results {
			if r.Err != nil {
				b.WriteString(r.Err.Error())
			}
		}
	}
	for _, m := range s.Members {
		b.WriteString(m.Error)
	}
	return b.String()
}

func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestDeadCluster(t *testing.T) {
	addr := closedPort(t)
	e := newCluster(t, "mongodb://"+addr+"/?serverSelectionTimeoutMS=200&connectTimeoutMS=200", func(s *Settings) {
		s.PingTimeout, s.ReadTimeout, s.WriteTimeout = 200*time.Millisecond, 200*time.Millisecond, 200*time.Millisecond
	})
	if !strings.Contains(e.text(t), `mongoprobe_up{cluster="test"} 0`) {
		t.Fatal("no up gauge before a round")
	}
	r := e.c.Round(context.Background())
	if r.Up || r.OK() {
		t.Fatalf("%+v", r)
	}
	if res := find(r, ProbePing, addr); res.Err == nil || res.Member != "" {
		t.Errorf("ping of the seed: %+v", res)
	}
	out := e.text(t)
	if !strings.Contains(out, `mongoprobe_up{cluster="test"} 0`) || !strings.Contains(out, `mongoprobe_writable_primary{cluster="test"} 0`) {
		t.Errorf("metrics:\n%s", out)
	}
	if err := e.c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	out = e.text(t)
	if !strings.Contains(out, `mongoprobe_up{cluster="test"} 0`) {
		t.Errorf("up gauge gone after Close:\n%s", out)
	}
	if strings.Contains(out, "mongoprobe_probes_total") || strings.Contains(out, "mongodb_driver") {
		t.Errorf("metrics left after Close:\n%s", out)
	}
	if r := e.c.Round(context.Background()); r.Up || len(r.Results) != 0 {
		t.Errorf("a round after Close: %+v", r)
	}
	// A cluster of the same name takes the gauge over.
	e2opts, _ := driver.ClientOptionsFromURI("mongodb://" + addr)
	c2, err := New(Settings{Name: "test", Client: e2opts}, Deps{Registerer: e.reg})
	if err != nil {
		t.Fatal(err)
	}
	c2.Close(context.Background())
}

func TestBadClientOptions(t *testing.T) {
	reg := prometheus.NewRegistry()
	// A proxy without a Dialer: Connect refuses it.
	opts, err := driver.ClientOptionsFromURI("mongodb://127.0.0.1:1/?proxyHost=localhost")
	if err != nil {
		t.Skip(err)
	}
	c, err := New(Settings{Name: "bad", Client: opts, PingTimeout: 100 * time.Millisecond}, Deps{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	r := c.Round(context.Background())
	if r.Up || r.OK() {
		t.Fatalf("%+v", r)
	}
	for _, res := range r.Results {
		if res.Class != ClassClient {
			t.Errorf("%+v", res)
		}
	}
	if got := testutil.ToFloat64(c.up); got != 0 {
		t.Errorf("up = %v", got)
	}
}

func TestCloseLeavesNoGoroutines(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 3, mongotest.ReplicaSetOptions{})
	time.Sleep(50 * time.Millisecond)
	before := runtime.NumGoroutine()
	opts, err := driver.ClientOptionsFromURI(rs.URI())
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Settings{Name: "g", Client: opts, Interval: 50 * time.Millisecond}, Deps{Registerer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	time.Sleep(100 * time.Millisecond)
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ { // on-demand rounds while Run runs
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := c.Round(ctx); !r.OK() {
				t.Errorf("on-demand round: %+v", r)
			}
		}()
	}
	wg.Wait()
	time.Sleep(100 * time.Millisecond)
	if !c.Ready() {
		t.Error("not ready")
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after Close")
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := runtime.NumGoroutine(); got > before {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines, %d before:\n%s", got, before, buf[:runtime.Stack(buf, true)])
	}
}

func TestRoundCollector(t *testing.T) {
	r := Round{Up: true, Results: []Result{
		{Probe: ProbePing, Target: "a:1", Duration: 2 * time.Millisecond},
		{Probe: ProbeWrite, Target: "primary", Duration: time.Second, Err: context.DeadlineExceeded},
	}}
	reg := prometheus.NewRegistry()
	reg.MustRegister(RoundCollector(r))
	want := `
# HELP mongoprobe_probe_success 1 when the probe succeeded, else 0.
# TYPE mongoprobe_probe_success gauge
mongoprobe_probe_success{probe="ping",target="a:1"} 1
mongoprobe_probe_success{probe="write",target="primary"} 0
# HELP mongoprobe_up 1 when some member answered a ping or a canary read, else 0.
# TYPE mongoprobe_up gauge
mongoprobe_up 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "mongoprobe_probe_success", "mongoprobe_up"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(RoundCollector(r)); n != 5 {
		t.Errorf("%d metrics, want 5", n)
	}
}
