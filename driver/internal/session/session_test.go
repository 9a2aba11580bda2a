package session

import (
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
)

// The sessions specification's prose test 2: the pool is LIFO.
func TestPoolLIFO(t *testing.T) {
	p := NewPool()
	a, b := p.Get(nil), p.Get(nil)
	p.Put(a, nil)
	p.Put(b, nil)
	if got := p.Get(nil); got != b {
		t.Fatal("first Get after returning A then B did not give B")
	}
	if got := p.Get(nil); got != a {
		t.Fatal("second Get did not give A")
	}
	if p.InUse() != 2 || p.Created() != 2 {
		t.Fatalf("in use %d created %d", p.InUse(), p.Created())
	}
}

// The acquire and return algorithms: stale sessions (under a minute left)
// are never handed out and are pruned from the back on return; dirty
// sessions are discarded.
func TestPoolExpiryAndDirty(t *testing.T) {
	now := time.Unix(1000, 0)
	p := NewPool()
	p.now = func() time.Time { return now }
	timeout := 30 * time.Minute
	old, fresh := p.Get(&timeout), p.Get(&timeout)
	old.LastUse = now.Add(-29*time.Minute - time.Second) // 59s left
	fresh.LastUse = now
	p.Put(fresh, &timeout)
	p.Put(old, &timeout) // about to expire: discarded
	if p.Len() != 1 {
		t.Fatalf("pool holds %d sessions, want 1 (the stale one discarded)", p.Len())
	}
	s := p.Get(&timeout)
	if s != fresh {
		t.Fatal("Get did not return the fresh session")
	}
	// A session that went stale while pooled is skipped by Get.
	s.LastUse = now.Add(-40 * time.Minute)
	p.Put(s, nil) // no timeout: kept
	if got := p.Get(&timeout); got == s {
		t.Fatal("Get handed out a stale session")
	}
	// Return prunes stale sessions at the back.
	p2 := NewPool()
	p2.now = p.now
	x, y := p2.Get(nil), p2.Get(nil)
	x.LastUse, y.LastUse = now.Add(-45*time.Minute), now
	p2.Put(x, nil)
	p2.Put(y, &timeout)
	if p2.Len() != 1 {
		t.Fatalf("return did not prune the stale session at the back: %d left", p2.Len())
	}
	d := p2.Get(nil)
	d.Dirty = true
	p2.Put(d, nil)
	if p2.Len() != 0 {
		t.Fatal("a dirty session went back into the pool")
	}
	// Load-balanced mode (no timeout): nothing expires.
	p3 := NewPool()
	p3.now = p.now
	z := p3.Get(nil)
	z.LastUse = now.Add(-24 * time.Hour)
	p3.Put(z, nil)
	if p3.Get(nil) != z {
		t.Fatal("without a timeout a session expired")
	}
}

func TestLSIDIsUUID(t *testing.T) {
	s := newServer()
	v, err := s.LSID.LookupErr("id")
	if err != nil {
		t.Fatal(err)
	}
	b, ok := v.BinaryOK()
	if !ok || b.Subtype != 4 || len(b.Data) != 16 {
		t.Fatalf("lsid id %v", v)
	}
}

func TestClockKeepsGreatest(t *testing.T) {
	doc := func(ts, inc uint32, sig string) bson.Raw {
		st, b := bson.AppendDocumentStart(nil)
		b = bson.AppendTimestampElement(b, "clusterTime", ts, inc)
		b = bson.AppendStringElement(b, "signature", sig)
		b, _ = bson.AppendDocumentEnd(b, st)
		return b
	}
	var c Clock
	if c.Get() != nil {
		t.Fatal("a new clock has a time")
	}
	c.Advance(doc(10, 5, "a"))
	c.Advance(doc(10, 4, "b")) // lower increment: ignored
	c.Advance(doc(9, 99, "c")) // lower time: ignored
	if got := c.Get().Lookup("signature").StringValue(); got != "a" {
		t.Fatalf("clock took a lower time: %s", got)
	}
	c.Advance(doc(10, 6, "d"))
	if got := c.Get().Lookup("signature").StringValue(); got != "d" {
		t.Fatalf("clock ignored a greater increment: %s", got)
	}
	c.Advance(bson.Raw{5, 0, 0, 0, 0}) // no clusterTime: ignored
	if got := c.Get().Lookup("signature").StringValue(); got != "d" {
		t.Fatal("a malformed document moved the clock")
	}
}

func ts(t, i uint32) bson.RawValue {
	return bson.RawValue{Type: bson.TypeTimestamp, Value: bson.AppendTimestamp(nil, t, i)}
}

func doc(kv ...any) bson.Raw {
	st, b := bson.AppendDocumentStart(nil)
	for i := 0; i < len(kv); i += 2 {
		switch v := kv[i+1].(type) {
		case string:
			b = bson.AppendStringElement(b, kv[i].(string), v)
		case bson.RawValue:
			b = bson.AppendValueElement(b, kv[i].(string), v)
		case bson.Raw:
			b = bson.AppendDocumentElement(b, kv[i].(string), v)
		}
	}
	b, _ = bson.AppendDocumentEnd(b, st)
	return b
}

// The readConcern an explicit session sends, by kind of session and what
// it has seen.
func TestClientReadConcern(t *testing.T) {
	majority := doc("level", "majority")
	tests := []struct {
		name         string
		c            *Client
		opTime, snap *Timestamp
		rc           bson.Raw
		clusterTimes bool
		want         bson.Raw
	}{
		{"causal, no operationTime yet", &Client{Causal: true}, nil, nil, nil, true, nil},
		{"causal, level kept", &Client{Causal: true}, nil, nil, majority, true, majority},
		{"causal, afterClusterTime", &Client{Causal: true}, &Timestamp{5, 1}, nil, nil, true, doc("afterClusterTime", ts(5, 1))},
		{"causal, merged", &Client{Causal: true}, &Timestamp{5, 1}, nil, majority, true, doc("level", "majority", "afterClusterTime", ts(5, 1))},
		{"causal, no cluster times", &Client{Causal: true}, &Timestamp{5, 1}, nil, majority, false, majority},
		{"not causal", &Client{}, &Timestamp{5, 1}, nil, majority, true, majority},
		{"snapshot, first read", &Client{Snapshot: true}, &Timestamp{5, 1}, nil, majority, true, doc("level", "snapshot")},
		{"snapshot, later", &Client{Snapshot: true}, nil, &Timestamp{3, 2}, nil, true, doc("level", "snapshot", "atClusterTime", ts(3, 2))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.opTime != nil {
				tt.c.AdvanceOperationTime(*tt.opTime)
			}
			if tt.snap != nil {
				tt.c.SetSnapshotTime(*tt.snap)
			}
			if got := tt.c.ReadConcern(tt.rc, tt.clusterTimes); string(got) != string(tt.want) {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
		})
	}
}

// Observe takes operationTime (only forward), $clusterTime, and a
// snapshot session's first atClusterTime.
func TestClientObserve(t *testing.T) {
	ct := func(t, i uint32) bson.Raw { return doc("clusterTime", ts(t, i)) }
	c := &Client{Snapshot: true}
	c.Observe(doc("operationTime", ts(4, 1), "$clusterTime", ct(4, 1), "cursor", doc("atClusterTime", ts(4, 0))))
	c.Observe(doc("operationTime", ts(3, 1), "$clusterTime", ct(3, 1), "atClusterTime", ts(9, 9)))
	if op, ok := c.OperationTime(); !ok || op != (Timestamp{4, 1}) {
		t.Errorf("operationTime %v", op)
	}
	if got := c.ClusterTime(); string(got) != string(ct(4, 1)) {
		t.Errorf("clusterTime %s", got)
	}
	if s, ok := c.SnapshotTime(); !ok || s != (Timestamp{4, 0}) {
		t.Errorf("snapshot time %v", s)
	}
	d := &Client{}
	d.Observe(doc("atClusterTime", ts(9, 9)))
	if _, ok := d.SnapshotTime(); ok {
		t.Error("a non-snapshot session recorded a snapshot time")
	}
	if g := GreaterClusterTime(ct(1, 2), ct(1, 3)); string(g) != string(ct(1, 3)) {
		t.Errorf("GreaterClusterTime %s", g)
	}
	if g := GreaterClusterTime(ct(2, 0), nil); string(g) != string(ct(2, 0)) {
		t.Errorf("GreaterClusterTime with nil %s", g)
	}
}

// The server session is taken once, lazily, and returned once at End;
// after End the session refuses to give it.
func TestClientServerSession(t *testing.T) {
	p := NewPool()
	c := &Client{Pool: p}
	if p.InUse() != 0 {
		t.Fatal("taken before use")
	}
	s1, _ := c.Server(nil)
	s2, _ := c.Server(nil)
	if s1 != s2 || p.InUse() != 1 {
		t.Fatalf("two server sessions, or %d in use", p.InUse())
	}
	c.End()
	c.End()
	if p.InUse() != 0 || p.Len() != 1 {
		t.Fatalf("after End: in use %d, idle %d", p.InUse(), p.Len())
	}
	if _, err := c.Server(nil); err != ErrEnded {
		t.Fatalf("Server after End: %v", err)
	}
	d := &Client{Pool: p}
	s, _ := d.Server(nil)
	s.Dirty = true
	if !d.Dirty() {
		t.Fatal("not dirty")
	}
	d.End()
	if p.Len() != 0 {
		t.Fatal("a dirty server session went back to the pool")
	}
}

// The pool's boundaries: a session with exactly one minute left is still
// used and kept (the specification discards those with less than a
// minute), and pruning on return stops at the first session at the back
// that is not about to expire, leaving a stale one in front of it for Get
// to discard.
func TestPoolExpiryBoundaries(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	timeout := 30 * time.Minute
	p := NewPool()
	p.now = func() time.Time { return now }
	edge := p.Get(&timeout)
	edge.LastUse = now.Add(-29 * time.Minute) // exactly a minute left
	p.Put(edge, &timeout)
	if p.Len() != 1 || p.Get(&timeout) != edge {
		t.Fatal("a session with exactly one minute left was discarded")
	}
	// Back to front: fresh, stale, then the one returned.
	fresh, stale, back := p.Get(nil), p.Get(nil), p.Get(nil)
	p.Put(fresh, nil)
	p.Put(stale, nil)
	fresh.LastUse, stale.LastUse, back.LastUse = now, now.Add(-40*time.Minute), now
	p.Put(back, &timeout)
	if p.Len() != 3 {
		t.Fatalf("return pruned past a session not about to expire: %d left, want 3", p.Len())
	}
	if got := p.Get(&timeout); got != back {
		t.Fatal("Get did not give the most recently returned session")
	}
	if got := p.Get(&timeout); got != fresh {
		t.Fatal("Get did not skip the stale session for the fresh one behind it")
	}
	if p.Len() != 0 {
		t.Fatalf("%d sessions left", p.Len())
	}
}

// A server session an explicit session took before the deployment's
// session timeout was known (Session.ID on a new client) learns it at its
// first command, so that its return applies the expiry check: a session
// about to expire is discarded, not pooled.
func TestClientLearnsSessionTimeout(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	p := NewPool()
	p.now = func() time.Time { return now }
	c := &Client{Pool: p}
	s, _ := c.Server(nil)
	timeout := 30 * time.Minute
	if s2, _ := c.Server(&timeout); s2 != s {
		t.Fatal("the session changed server session")
	}
	s.LastUse = now.Add(-29*time.Minute - time.Second)
	c.End()
	if p.Len() != 0 {
		t.Fatal("a server session with less than a minute left went back to the pool")
	}
}
