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
