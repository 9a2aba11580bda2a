package driver_test

import (
	"errors"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/eventtest"
	"github.com/mongoscope/mongoscope/mongotest"
)

// Regression tests of the rule-by-rule audit of the driver-sessions,
// snapshot-sessions and causal-consistency specifications, each through
// driver.Connect and the public API.

// Ending a session while a cursor opened in it is still open must not put
// its server session back in the pool, where another session or an
// implicit one would take it and use the lsid while the cursor still does
// (driver-sessions, "Server Session Pool": a server session is never used
// by two ClientSessions at the same time). The cursor's getMore is then an
// operation in an ended session, an error; the cursor is still killed
// with the lsid, and only then does the server session go back.
func TestSessionEndWithOpenCursor(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	c, rec := sessClient(t, srv.URI())
	ctx := testCtx(t)
	coll := c.Database("sess").Collection("endcur")
	if _, err := coll.InsertMany(ctx, []any{bson.D{}, bson.D{}, bson.D{}, bson.D{}, bson.D{}}); err != nil {
		t.Fatal(err)
	}
	s := startSession(t, c, nil)
	id := s.ID()
	cur, err := coll.Find(driver.NewSessionContext(ctx, s), bson.D{}, &driver.FindOptions{BatchSize: driver.Ptr[int32](2)})
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close(ctx)
	s.EndSession(ctx)

	other := startSession(t, c, nil)
	if rawEqual(other.ID(), id) {
		t.Fatal("a new session took the server session of an ended session whose cursor is still open")
	}
	if _, err := coll.InsertOne(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	if lsid, _ := lastStarted(t, rec).Command.LookupErr("lsid"); rawEqual(lsid.Document(), id) {
		t.Fatal("an implicit session used the lsid of an open cursor")
	}

	// The first batch is still there; the getMore after it is refused.
	for range 2 {
		if !cur.Next(ctx) {
			t.Fatalf("first batch: %v", cur.Err())
		}
	}
	rec.Reset()
	if cur.Next(ctx) {
		t.Fatal("a getMore ran in an ended session")
	}
	if !errors.Is(cur.Err(), driver.ErrSessionEnded) {
		t.Fatalf("getMore in an ended session: %v, want ErrSessionEnded", cur.Err())
	}
	// The failed cursor is killed at once (as after any failed getMore),
	// with the lsid it still holds.
	if err := cur.Close(ctx); err != nil {
		t.Fatal(err)
	}
	kc := eventtest.Of[*event.CommandStarted](rec)
	if len(kc) != 1 || kc[0].CommandName != "killCursors" {
		t.Fatalf("%d commands were sent, want one killCursors", len(kc))
	}
	if lsid, err := kc[0].Command.LookupErr("lsid"); err != nil || !rawEqual(lsid.Document(), id) {
		t.Fatal("killCursors did not carry the cursor's lsid")
	}
	// Now the server session is free again.
	if !rawEqual(startSession(t, c, nil).ID(), id) {
		t.Fatal("the server session did not go back to the pool when the cursor closed")
	}
}
