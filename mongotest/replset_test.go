package mongotest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/internal/wire"
)

func memberClient(t *testing.T, rs *ReplicaSet, i int) *client {
	t.Helper()
	return connect(t, rs.Members()[i], clientOpts{})
}

func electionID(r bson.Raw) bson.ObjectID {
	id, _ := r.Lookup("electionId").ObjectIDOK()
	return id
}

func TestReplicaSetHelloAgreement(t *testing.T) {
	rs := NewReplicaSet(t, 5, ReplicaSetOptions{
		Name:     "agree",
		Tags:     []map[string]string{nil, {"dc": "east"}},
		Passives: []int{2},
		Hidden:   []int{3},
		Arbiters: []int{4},
	})
	srvs := rs.Members()
	addr := func(i int) string { return srvs[i].Addr() }
	wantURI := "mongodb://" + addr(0) + "," + addr(1) + "," + addr(2) + "," + addr(4) + "/?replicaSet=agree"
	if rs.URI() != wantURI {
		t.Errorf("URI %s, want %s", rs.URI(), wantURI)
	}
	roles := []Role{RolePrimary, RoleSecondary, RoleSecondary, RoleHidden, RoleArbiter}
	var first bson.Raw
	for i := range srvs {
		h := memberClient(t, rs, i).hello
		if got := srvs[i].Topology().Role; got != roles[i] {
			t.Errorf("member %d role %s, want %s", i, got, roles[i])
		}
		for key, want := range map[string]string{
			"hosts":    addr(0) + "," + addr(1),
			"passives": addr(2),
			"arbiters": addr(4),
		} {
			if got := strings.Join(strs(h, key), ","); got != want {
				t.Errorf("member %d %s = %s, want %s", i, key, got, want)
			}
		}
		if h.Lookup("setName").StringValue() != "agree" || h.Lookup("setVersion").Int32() != 1 ||
			h.Lookup("primary").StringValue() != addr(0) || h.Lookup("me").StringValue() != addr(i) {
			t.Errorf("member %d: %v", i, h)
		}
		if (i == 0) != !electionID(h).IsZero() {
			t.Errorf("member %d electionId %v", i, electionID(h))
		}
		if first == nil {
			first = h
		}
	}
	checks := []struct {
		member int
		key    string
		want   any
	}{
		{0, "isWritablePrimary", true},
		{1, "secondary", true},
		{1, "tags.dc", "east"},
		{2, "passive", true},
		{3, "hidden", true},
		{4, "arbiterOnly", true},
	}
	for _, c := range checks {
		h := memberClient(t, rs, c.member).hello
		v, err := h.LookupPath(c.key)
		if err != nil {
			t.Errorf("member %d: %s missing", c.member, c.key)
			continue
		}
		switch w := c.want.(type) {
		case bool:
			if b, _ := v.BooleanOK(); b != w {
				t.Errorf("member %d: %s = %v", c.member, c.key, v)
			}
		case string:
			if v.StringValue() != w {
				t.Errorf("member %d: %s = %v", c.member, c.key, v)
			}
		}
	}
	if id := electionID(first); id[11] != 1 {
		t.Errorf("initial electionId %v, want term 1", id)
	}
	evs := rs.Events()
	if len(evs) != 1 || evs[0].Kind != EventElected || evs[0].Member != 0 || evs[0].Term != 1 || evs[0].Seq != 1 {
		t.Errorf("events %+v", evs)
	}
}

func TestReplicaSetStepDownElection(t *testing.T) {
	const delay = 150 * time.Millisecond
	rs := NewReplicaSet(t, 3, ReplicaSetOptions{ElectionDelay: delay})
	ctx := ctxT(t)
	oldPrimary := memberClient(t, rs, 0)
	oldID := electionID(oldPrimary.hello)
	sec := memberClient(t, rs, 1)

	// An awaitable hello on a secondary, answered by the step-down.
	sec.send("admin", awaitHello(rs.Members()[1], 30000), 0)
	seq := rs.LastEvent()
	start := time.Now()
	if err := rs.StepDown(ctx); err != nil {
		t.Fatal(err)
	}
	if p := rs.Primary(); p != nil {
		t.Errorf("primary %s right after the step-down", p.Addr())
	}
	r, err := sec.recv()
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("awaitable hello answered after %v", el)
	}
	if _, err := r.Body.LookupErr("primary"); err == nil {
		t.Errorf("hello during the election names a primary: %v", r.Body)
	}

	ev, err := rs.WaitFor(ctx, EventElected, seq)
	if err != nil {
		t.Fatal(err)
	}
	if el := ev.Time.Sub(start); el < delay {
		t.Errorf("elected after %v, want at least %v", el, delay)
	}
	// Member 0 may not stand again for 60 seconds; member 1 comes first.
	if ev.Member != 1 || ev.Term != 2 || rs.Term() != 2 {
		t.Errorf("event %+v, term %d", ev, rs.Term())
	}
	p, err := rs.WaitForPrimary(ctx)
	if err != nil || p != rs.Members()[1] {
		t.Fatalf("primary %v, %v", p, err)
	}
	h := memberClient(t, rs, 1).hello
	if !h.Lookup("isWritablePrimary").Boolean() || h.Lookup("primary").StringValue() != p.Addr() {
		t.Errorf("new primary's hello %v", h)
	}
	if newID := electionID(h); bytes.Compare(newID[:], oldID[:]) <= 0 {
		t.Errorf("electionId %v did not increase from %v", newID, oldID)
	}
	if h.Lookup("lastWrite", "opTime", "t").Int64() != 2 {
		t.Errorf("opTime.t %v", h.Lookup("lastWrite", "opTime"))
	}
	// The old primary kept its connections (mongod 4.2 and later) and
	// now says it is a secondary of the new primary.
	r2 := oldPrimary.mustRun("admin", d("hello", 1))
	if r2.Lookup("isWritablePrimary").Boolean() || !r2.Lookup("secondary").Boolean() || r2.Lookup("primary").StringValue() != p.Addr() {
		t.Errorf("old primary's hello %v", r2)
	}
	var kinds []EventKind
	for _, e := range rs.Events() {
		kinds = append(kinds, e.Kind)
	}
	if want := []EventKind{EventElected, EventSteppedDown, EventElected}; !equalKinds(kinds, want) {
		t.Errorf("events %v, want %v", kinds, want)
	}
}

func equalKinds(a, b []EventKind) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestReplicaSetStreamingHello(t *testing.T) {
	rs := NewReplicaSet(t, 3, ReplicaSetOptions{})
	c := memberClient(t, rs, 2)
	srv := rs.Members()[2]
	_, before := srv.TopologyVersion()
	c.send("admin", awaitHello(srv, 30000), wire.ExhaustAllowed)
	time.Sleep(20 * time.Millisecond)
	start := time.Now()
	if err := rs.Elect(2); err != nil {
		t.Fatal(err)
	}
	r, err := c.recv()
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("streamed hello answered after %v", el)
	}
	if r.Flags&wire.MoreToCome == 0 || !r.Body.Lookup("isWritablePrimary").Boolean() {
		t.Errorf("flags %v, reply %v", r.Flags, r.Body)
	}
	if got := r.Body.Lookup("topologyVersion", "counter").Int64(); got <= before {
		t.Errorf("counter %d, was %d", got, before)
	}
	if rs.Term() != 2 || rs.Primary() != srv {
		t.Errorf("term %d primary %v", rs.Term(), rs.Primary())
	}
	// Electing the primary again changes nothing.
	if err := rs.Elect(2); err != nil || rs.Term() != 2 {
		t.Errorf("%v, term %d", err, rs.Term())
	}
}

func TestReplicaSetKillRestart(t *testing.T) {
	rs := NewReplicaSet(t, 3, ReplicaSetOptions{ElectionDelay: 20 * time.Millisecond, Options: Options{Auth: true}})
	if err := rs.AddUser("admin", "ada", "pencil"); err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	old := rs.Members()[0]
	addr := old.Addr()
	pid, _ := old.TopologyVersion()
	c := connect(t, old, clientOpts{})
	seq := rs.LastEvent()
	if err := rs.Kill(0); err != nil {
		t.Fatal(err)
	}
	if !c.closed() {
		t.Error("a connection to the killed member is still open")
	}
	if nc, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		nc.Close()
		t.Error("the killed member still accepts connections")
	}
	if _, err := rs.WaitFor(ctx, EventKilled, seq); err != nil {
		t.Fatal(err)
	}
	ev, err := rs.WaitFor(ctx, EventElected, seq)
	if err != nil || ev.Member != 1 {
		t.Fatalf("%+v, %v", ev, err)
	}
	if err := rs.Kill(0); err == nil || !strings.Contains(err.Error(), "already killed") {
		t.Errorf("second Kill: %v", err)
	}
	if err := rs.Restart(1); err == nil || !strings.Contains(err.Error(), "running") {
		t.Errorf("Restart of a running member: %v", err)
	}

	if err := rs.Restart(0); err != nil {
		t.Fatal(err)
	}
	srv := rs.Members()[0]
	if srv == old || srv.Addr() != addr {
		t.Fatalf("restarted on %s, want %s", srv.Addr(), addr)
	}
	if p, _ := srv.TopologyVersion(); p == pid {
		t.Error("the restarted member kept its processId")
	}
	c = connect(t, srv, clientOpts{})
	if c.hello.Lookup("isWritablePrimary").Boolean() || c.hello.Lookup("primary").StringValue() != rs.Members()[1].Addr() {
		t.Errorf("restarted member's hello %v", c.hello)
	}
	// Users survive the restart, as replicated data does.
	if err := c.auth("admin", newSCRAMClient(SCRAMSHA256, "ada", "pencil"), true); err != nil {
		t.Errorf("auth on the restarted member: %v", err)
	}
	if _, err := rs.WaitFor(ctx, EventRestarted, seq); err != nil {
		t.Error(err)
	}
}

func TestReplicaSetPartition(t *testing.T) {
	rs := NewReplicaSet(t, 3, ReplicaSetOptions{ElectionDelay: 20 * time.Millisecond})
	ctx := ctxT(t)
	srv0 := rs.Members()[0]
	c := connect(t, srv0, clientOpts{})
	seq := rs.LastEvent()
	if err := rs.Partition(0); err != nil {
		t.Fatal(err)
	}
	if !c.closed() {
		t.Error("a connection to the partitioned member is still open")
	}
	// The port stays open, but every connection is cut at once.
	nc, err := net.Dial("tcp", srv0.Addr())
	if err != nil {
		t.Fatalf("the partitioned member's port is closed: %v", err)
	}
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := nc.Read(make([]byte, 1)); err == nil || isTimeout(err) {
		t.Errorf("a new connection to the partitioned member: %v", err)
	}
	nc.Close()
	for _, k := range []EventKind{EventSteppedDown, EventPartitioned, EventElected} {
		if _, err := rs.WaitFor(ctx, k, seq); err != nil {
			t.Fatal(err)
		}
	}
	if p := rs.Primary(); p != rs.Members()[1] {
		t.Fatalf("primary %v", p)
	}
	if srv0.Topology().Role != RoleSecondary || srv0.Topology().Primary != "" {
		t.Errorf("partitioned member's view %+v", srv0.Topology())
	}

	// Without a majority the primary steps down and nobody is elected.
	seq = rs.LastEvent()
	if err := rs.Partition(2); err != nil {
		t.Fatal(err)
	}
	if ev, err := rs.WaitFor(ctx, EventSteppedDown, seq); err != nil || ev.Member != 1 {
		t.Fatalf("%+v, %v", ev, err)
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if p, err := rs.WaitForPrimary(short); err == nil {
		t.Fatalf("primary %s without a majority", p.Addr())
	}
	if err := rs.Elect(1); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("Elect without a majority: %v", err)
	}

	if err := rs.Heal(0); err != nil {
		t.Fatal(err)
	}
	if p, err := rs.WaitForPrimary(ctx); err != nil || p != rs.Members()[0] {
		t.Fatalf("after healing: %v, %v", p, err)
	}
	c = connect(t, srv0, clientOpts{})
	if !c.hello.Lookup("isWritablePrimary").Boolean() {
		t.Errorf("healed member's hello %v", c.hello)
	}
	if err := rs.Heal(0); err == nil {
		t.Error("Heal of a member that is not partitioned succeeded")
	}
	if err := rs.Partition(2); err == nil {
		t.Error("second Partition succeeded")
	}
}

func TestReplicaSetLag(t *testing.T) {
	rs := NewReplicaSet(t, 3, ReplicaSetOptions{})
	sec := rs.Members()[1]
	_, before := sec.TopologyVersion()
	if err := rs.SetLag(1, 90*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, after := sec.TopologyVersion(); after <= before {
		t.Error("SetLag did not bump the topologyVersion")
	}
	lw := func(i int) time.Time {
		h := memberClient(t, rs, i).hello
		return time.UnixMilli(h.Lookup("lastWrite", "lastWriteDate").DateTime())
	}
	if gap := lw(0).Sub(lw(1)); gap < 89*time.Second || gap > 91*time.Second {
		t.Errorf("lastWriteDate gap %v, want 90s", gap)
	}
	if gap := lw(0).Sub(lw(2)); gap < -time.Second || gap > time.Second {
		t.Errorf("an unlagged secondary trails by %v", gap)
	}
	st := memberClient(t, rs, 0).mustRun("admin", d("replSetGetStatus", 1))
	opDate := func(i int) time.Time {
		v, err := st.LookupPath("members." + bson.ArrayKey(i) + ".optimeDate")
		if err != nil {
			t.Fatal(err)
		}
		return time.UnixMilli(v.DateTime())
	}
	if gap := opDate(0).Sub(opDate(1)); gap < 89*time.Second || gap > 91*time.Second {
		t.Errorf("replSetGetStatus optimeDate gap %v", gap)
	}
	for _, tc := range []struct {
		i    int
		d    time.Duration
		want string
	}{
		{1, -time.Second, "negative"},
		{7, time.Second, "out of range"},
	} {
		if err := rs.SetLag(tc.i, tc.d); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("SetLag(%d, %v): %v, want %q", tc.i, tc.d, err, tc.want)
		}
	}
	// The least-lagged member wins the election.
	if err := rs.SetLag(2, 0); err != nil {
		t.Fatal(err)
	}
	if err := rs.StepDown(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if p, err := rs.WaitForPrimary(ctxT(t)); err != nil || p != rs.Members()[2] {
		t.Errorf("primary %v, %v; want the unlagged member 2", p, err)
	}
}

func TestReplSetGetStatus(t *testing.T) {
	rs := NewReplicaSet(t, 3, ReplicaSetOptions{Name: "st", Arbiters: []int{2}})
	if err := rs.Kill(1); err != nil {
		t.Fatal(err)
	}
	c := memberClient(t, rs, 0)
	r := c.mustRun("admin", d("replSetGetStatus", 1))
	if r.Lookup("set").StringValue() != "st" || r.Lookup("myState").Int32() != 1 || r.Lookup("term").Int64() != 1 {
		t.Errorf("status %v", r)
	}
	want := []struct {
		state  int32
		str    string
		health float64
		self   bool
	}{
		{1, "PRIMARY", 1, true},
		{8, "(not reachable/healthy)", 0, false},
		{7, "ARBITER", 1, false},
	}
	for i, w := range want {
		m, err := r.LookupPath("members." + bson.ArrayKey(i))
		if err != nil {
			t.Fatal(err)
		}
		doc := m.Document()
		if doc.Lookup("_id").Int32() != int32(i) || doc.Lookup("name").StringValue() != rs.Members()[i].Addr() ||
			doc.Lookup("state").Int32() != w.state || doc.Lookup("stateStr").StringValue() != w.str ||
			doc.Lookup("health").Double() != w.health {
			t.Errorf("member %d: %v", i, doc)
		}
		if self, _ := doc.Lookup("self").BooleanOK(); self != w.self {
			t.Errorf("member %d self %v", i, self)
		}
		_, hasElection := doc.LookupErr("electionTime")
		if (hasElection == nil) != (w.state == 1) {
			t.Errorf("member %d electionTime presence wrong: %v", i, doc)
		}
	}
	if _, err := c.run("test", d("replSetGetStatus", 1)); err == nil || asCmdError(t, err).Code != 13 {
		t.Errorf("outside admin: %v", err)
	}
	alone := connect(t, NewServer(t, Options{}), clientOpts{})
	for _, cmd := range []string{"replSetGetStatus", "replSetFreeze", "replSetStepDown"} {
		_, err := alone.run("admin", d(cmd, 1))
		if ce := asCmdError(t, err); ce.Code != 76 || ce.CodeName != "NoReplicationEnabled" {
			t.Errorf("%s on a standalone: %v", cmd, ce)
		}
	}
}

func TestReplSetStepDownCommand(t *testing.T) {
	rs := NewReplicaSet(t, 3, ReplicaSetOptions{ElectionDelay: 20 * time.Millisecond})
	ctx := ctxT(t)
	prim, sec1, sec2 := memberClient(t, rs, 0), memberClient(t, rs, 1), memberClient(t, rs, 2)

	// On a secondary: NotWritablePrimary, with its topologyVersion.
	_, err := sec1.run("admin", d("replSetStepDown", 10))
	if ce := asCmdError(t, err); ce.Code != 10107 {
		t.Errorf("step-down on a secondary: %v", ce)
	} else if _, e := ce.Raw.LookupErr("topologyVersion"); e != nil {
		t.Errorf("no topologyVersion in %v", ce.Raw)
	}
	for _, tc := range []struct {
		cmd  bson.D
		code int32
	}{
		{d("replSetStepDown", 5, "secondaryCatchUpPeriodSecs", 10), 2},
		{d("replSetStepDown", -1), 2},
		{d("replSetStepDown", "x"), 14},
		{d("replSetStepDown", 10, "force", "yes"), 14},
		{d("replSetFreeze", -3), 2},
	} {
		if _, err := prim.run("admin", tc.cmd); err == nil || asCmdError(t, err).Code != tc.code {
			t.Errorf("%v: %v, want code %d", tc.cmd, err, tc.code)
		}
	}

	// Freezing: not on the primary; a frozen secondary is not electable,
	// so with both frozen the step-down times out.
	_, err = prim.run("admin", d("replSetFreeze", 30))
	if ce := asCmdError(t, err); ce.Code != 135 || ce.CodeName != "NotSecondary" {
		t.Errorf("freeze on the primary: %v", ce)
	}
	if r := sec1.mustRun("admin", d("replSetFreeze", 1)); !strings.Contains(r.Lookup("warning").StringValue(), "1 second") {
		t.Errorf("freeze 1: %v", r)
	}
	sec1.mustRun("admin", d("replSetFreeze", 30))
	sec2.mustRun("admin", d("replSetFreeze", 30))
	start := time.Now()
	_, err = prim.run("admin", d("replSetStepDown", 10, "secondaryCatchUpPeriodSecs", 1))
	if ce := asCmdError(t, err); ce.Code != 262 {
		t.Errorf("step-down with every secondary frozen: %v", ce)
	}
	if el := time.Since(start); el < time.Second {
		t.Errorf("gave up after %v, want the 1s catch-up period", el)
	}

	// A step-down waiting for a secondary succeeds once one thaws.
	done := make(chan error, 1)
	go func() {
		_, err := prim.run("admin", d("replSetStepDown", 30, "secondaryCatchUpPeriodSecs", 20))
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	if r := sec2.mustRun("admin", d("replSetFreeze", 0)); r.Lookup("info").StringValue() != "unfreezing" {
		t.Errorf("unfreeze: %v", r)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("step-down: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the step-down did not finish after a secondary thawed")
	}
	if p, err := rs.WaitForPrimary(ctx); err != nil || p != rs.Members()[2] {
		t.Fatalf("primary %v, %v", p, err)
	}
	// The connection that ran the step-down is still open.
	prim.mustRun("admin", d("ping", 1))
}

func TestReplicaSetThaw(t *testing.T) {
	rs := NewReplicaSet(t, 3, ReplicaSetOptions{Arbiters: []int{2}, ElectionDelay: -1})
	ctx := ctxT(t)
	memberClient(t, rs, 1).mustRun("admin", d("replSetFreeze", 1))
	seq := rs.LastEvent()
	start := time.Now()
	memberClient(t, rs, 0).mustRun("admin", d("replSetStepDown", 10, "force", true))
	if p := rs.Primary(); p != nil {
		t.Fatalf("primary %s while every data member is frozen", p.Addr())
	}
	ev, err := rs.WaitFor(ctx, EventElected, seq)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Member != 1 || ev.Time.Sub(start) < 900*time.Millisecond {
		t.Errorf("%+v after %v, want member 1 once its 1s freeze ends", ev, ev.Time.Sub(start))
	}
}

func TestReplicaSetImmediateElection(t *testing.T) {
	rs := NewReplicaSet(t, 3, ReplicaSetOptions{ElectionDelay: -1})
	if err := rs.StepDown(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if p := rs.Primary(); p != rs.Members()[1] {
		t.Errorf("primary %v right after the step-down, want member 1", p)
	}
}

func TestReplicaSetErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		opts ReplicaSetOptions
		want string
	}{
		{"no members", 0, ReplicaSetOptions{}, "1 to 50"},
		{"too many", 51, ReplicaSetOptions{}, "1 to 50"},
		{"addr", 1, ReplicaSetOptions{Options: Options{Addr: "127.0.0.1:1"}}, "Addr"},
		{"topology", 1, ReplicaSetOptions{Options: Options{Topology: Topology{Role: RoleMongos}}}, "Topology"},
		{"tags", 1, ReplicaSetOptions{Tags: make([]map[string]string, 2)}, "Tags"},
		{"hidden range", 2, ReplicaSetOptions{Hidden: []int{2}}, "Hidden: member 2 is out of range"},
		{"arbiter primary", 2, ReplicaSetOptions{Arbiters: []int{0}}, "member 0 starts as the primary"},
		{"two roles", 3, ReplicaSetOptions{Hidden: []int{1}, Passives: []int{1}}, "another role"},
		{"bad server option", 1, ReplicaSetOptions{Options: Options{Compressors: []string{"lz4"}}}, "lz4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs, err := StartReplicaSet(tc.n, tc.opts)
			if err == nil {
				rs.Close()
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v, want %q", err, tc.want)
			}
		})
	}

	rs := NewReplicaSet(t, 4, ReplicaSetOptions{Hidden: []int{2}, Arbiters: []int{3}})
	if err := rs.Kill(1); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		i    int
		want string
	}{
		{-1, "out of range"},
		{4, "out of range"},
		{1, "killed"},
		{2, "hidden"},
		{3, "arbiter"},
	} {
		if err := rs.Elect(tc.i); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Elect(%d): %v, want %q", tc.i, err, tc.want)
		}
	}
	if err := rs.SetLag(3, time.Second); err == nil || !strings.Contains(err.Error(), "arbiter") {
		t.Errorf("SetLag on an arbiter: %v", err)
	}
	rs.Close()
	for name, f := range map[string]func() error{
		"Kill":      func() error { return rs.Kill(0) },
		"Restart":   func() error { return rs.Restart(1) },
		"Partition": func() error { return rs.Partition(0) },
		"Heal":      func() error { return rs.Heal(0) },
		"Elect":     func() error { return rs.Elect(0) },
		"StepDown":  func() error { return rs.StepDown(context.Background()) },
	} {
		if err := f(); err == nil || !strings.Contains(err.Error(), "closed") {
			t.Errorf("%s after Close: %v", name, err)
		}
	}
	if _, err := rs.WaitForPrimary(context.Background()); err == nil {
		t.Error("WaitForPrimary after Close succeeded")
	}
	if _, err := rs.WaitFor(context.Background(), EventHealed, 0); err == nil {
		t.Error("WaitFor after Close succeeded")
	}
}

func TestReplicaSetWaitForTimeout(t *testing.T) {
	rs := NewReplicaSet(t, 1, ReplicaSetOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := rs.WaitFor(ctx, EventHealed, 0)
	if err == nil || !strings.Contains(err.Error(), `"healed"`) {
		t.Errorf("WaitFor: %v", err)
	}
	// A step-down of the only member times out after the catch-up period.
	short, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	if err := rs.StepDown(short); err == nil {
		t.Error("step-down of a one-member set succeeded")
	}
	if EventKind(99).String() != "EventKind(99)" || EventElected.String() != "elected" {
		t.Error(EventKind(99), EventElected)
	}
}

func TestReplicaSetCloseWakesWaiters(t *testing.T) {
	rs, err := StartReplicaSet(3, ReplicaSetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := rs.WaitFor(context.Background(), EventHealed, 0)
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond)
	rs.Close()
	rs.Close()
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "closed") {
			t.Errorf("WaitFor: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not wake WaitFor")
	}
}

func TestReplicaSetGoroutines(t *testing.T) {
	base := runtime.NumGoroutine()
	rs, err := StartReplicaSet(3, ReplicaSetOptions{ElectionDelay: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	c := memberClient(t, rs, 1)
	c.send("admin", awaitHello(rs.Members()[1], 30000), wire.ExhaustAllowed)
	if err := rs.StepDown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := rs.WaitForPrimary(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rs.Kill(2); err != nil {
		t.Fatal(err)
	}
	if err := rs.Restart(2); err != nil {
		t.Fatal(err)
	}
	if err := rs.Partition(0); err != nil {
		t.Fatal(err)
	}
	// A step-down left waiting when the set closes.
	waiting := memberClient(t, rs, 1)
	memberClient(t, rs, 2).mustRun("admin", d("replSetFreeze", 60))
	waiting.send("admin", d("replSetStepDown", 60, "secondaryCatchUpPeriodSecs", 30), 0)
	time.Sleep(50 * time.Millisecond)
	rs.Close()
	c.nc.Close()
	waiting.nc.Close()
	waitGoroutines(t, base)
}

func TestReplicaSetSharedData(t *testing.T) {
	rs := NewReplicaSet(t, 3, ReplicaSetOptions{ElectionDelay: -1})
	prim, sec := memberClient(t, rs, 0), memberClient(t, rs, 1)
	prim.mustRun("db", d("insert", "c", "documents", bson.A{d("_id", 1)}))

	count := func(c *client) int32 {
		t.Helper()
		r := c.mustRun("db", d("count", "c", "$readPreference", d("mode", "secondaryPreferred")))
		return r.Lookup("n").Int32()
	}
	if n := count(sec); n != 1 {
		t.Errorf("the secondary sees %d documents, want 1", n)
	}
	// Writes on a secondary fail with NotWritablePrimary, labelled
	// retryable for a retryable write; reads need secondaryOk.
	for _, tc := range []struct {
		cmd    bson.D
		code   int32
		labels string
	}{
		{d("insert", "c", "documents", bson.A{d("_id", 2)}), 10107, ""},
		{d("insert", "c", "documents", bson.A{d("_id", 2)}, "lsid", d("id", bson.Binary{Subtype: 4, Data: make([]byte, 16)}), "txnNumber", int64(1)), 10107, "RetryableWriteError"},
		{d("find", "c"), 13435, ""},
	} {
		_, err := sec.run("db", tc.cmd)
		if ce := asCmdError(t, err); ce.Code != tc.code || strings.Join(ce.Labels, ",") != tc.labels {
			t.Errorf("%v on a secondary: %v", tc.cmd[0].Key, ce)
		}
	}

	// After a step-down, the old primary refuses writes on the same
	// connection and the new one accepts them.
	if err := rs.StepDown(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := prim.run("db", d("insert", "c", "documents", bson.A{d("_id", 3)})); asCmdError(t, err).Code != 10107 {
		t.Errorf("write on the old primary: %v", err)
	}
	sec.mustRun("db", d("insert", "c", "documents", bson.A{d("_id", 3)}))

	// A restarted member still has the data.
	if err := rs.Kill(2); err != nil {
		t.Fatal(err)
	}
	if err := rs.Restart(2); err != nil {
		t.Fatal(err)
	}
	if n := count(memberClient(t, rs, 2)); n != 2 {
		t.Errorf("the restarted member sees %d documents, want 2", n)
	}
}

// A three-member set whose primary steps down; the test waits for the
// election that follows. In a test, use NewReplicaSet, which closes the
// set when the test ends.
func ExampleReplicaSet() {
	rs, err := StartReplicaSet(3, ReplicaSetOptions{ElectionDelay: 10 * time.Millisecond})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rs.Close()
	ctx := context.Background()
	seq := rs.LastEvent()
	if err := rs.StepDown(ctx); err != nil {
		fmt.Println(err)
		return
	}
	ev, err := rs.WaitFor(ctx, EventElected, seq)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("member", ev.Member, "elected in term", ev.Term)
	fmt.Println(rs.Primary() == rs.Members()[1])
	// Output:
	// member 1 elected in term 2
	// true
}
