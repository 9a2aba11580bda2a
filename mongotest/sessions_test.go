package mongotest

import (
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
)

// localSessions returns how many sessions $listLocalSessions lists.
func localSessions(t *testing.T, c *client) int {
	t.Helper()
	r := c.mustRun("admin", d("aggregate", 1, "pipeline", bson.A{d("$listLocalSessions", d("allUsers", true))}, "cursor", bson.D{}))
	vals, _ := r.Lookup("cursor", "firstBatch").Array().Values()
	return len(vals)
}

func TestRefreshSessions(t *testing.T) {
	s := NewServer(t, primaryOpts())
	c := connect(t, s, clientOpts{})
	for _, tc := range []struct {
		name     string
		cmd      bson.D
		wantCode int32
		wantN    int
	}{
		{"two sessions", d("refreshSessions", bson.A{newLSID(), newLSID()}), 0, 2},
		{"none", d("refreshSessions", bson.A{}), 0, 2},
		{"not an array", d("refreshSessions", 1), 14, 2},
		{"not a session id", d("refreshSessions", bson.A{d("id", 1)}), 14, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.run("admin", tc.cmd)
			switch {
			case tc.wantCode == 0 && err != nil:
				t.Fatal(err)
			case tc.wantCode != 0:
				if ce := asCmdError(t, err); ce.Code != tc.wantCode {
					t.Fatalf("%v, want code %d", ce, tc.wantCode)
				}
			}
			if n := localSessions(t, c); n != tc.wantN {
				t.Errorf("$listLocalSessions lists %d sessions, want %d", n, tc.wantN)
			}
		})
	}
}

// TestSessionExpiry: a session unused for logicalSessionTimeoutMinutes
// (shortened here) leaves $listLocalSessions, and its retryable-write
// record goes with it, so an older txnNumber is no longer too old;
// refreshSessions and any command carrying the lsid keep it alive.
func TestSessionExpiry(t *testing.T) {
	const ttl = 300 * time.Millisecond
	for _, tc := range []struct {
		name    string
		keep    func(c *client, lsid bson.D) // run halfway through the wait
		expired bool
	}{
		{"unused", func(*client, bson.D) {}, true},
		{"refreshed", func(c *client, lsid bson.D) { c.mustRun("admin", d("refreshSessions", bson.A{lsid})) }, false},
		{"used", func(c *client, lsid bson.D) { c.mustRun("test", d("find", "c", "lsid", lsid)) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewServer(t, primaryOpts())
			s.sessionTimeout = ttl
			c := connect(t, s, clientOpts{})
			lsid := newLSID()
			c.mustRun("test", withTxn(d("insert", "c", "documents", bson.A{d("x", 1)}), lsid, 5))
			if n := localSessions(t, c); n != 1 {
				t.Fatalf("%d sessions listed, want 1", n)
			}
			time.Sleep(ttl * 2 / 3)
			tc.keep(c, lsid)
			time.Sleep(ttl * 2 / 3)
			n := localSessions(t, c)
			_, err := c.run("test", withTxn(d("insert", "c", "documents", bson.A{d("x", 2)}), lsid, 1))
			if tc.expired {
				if n != 0 {
					t.Errorf("%d sessions listed after expiry, want 0", n)
				}
				if err != nil {
					t.Errorf("txnNumber 1 after the session expired: %v, want success", err)
				}
				return
			}
			if n != 1 {
				t.Errorf("%d sessions listed, want 1", n)
			}
			if ce := asCmdError(t, err); ce.Code != 225 {
				t.Errorf("txnNumber 1 on a live session: %v, want TransactionTooOld (225)", ce)
			}
		})
	}
}
