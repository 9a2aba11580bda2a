package mongotest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
)

// pattern runs cmd n times and returns one character a run: '.' for
// success, 'R' for IngressRequestRateLimitExceeded with both overload
// labels, 'E' for any other error.
func ingressPattern(t *testing.T, c *client, db string, cmd bson.D, n int) string {
	t.Helper()
	var b strings.Builder
	for range n {
		_, err := c.run(db, cmd)
		switch {
		case err == nil:
			b.WriteByte('.')
		default:
			ce := asCmdError(t, err)
			if ce.Code == 462 && ce.CodeName == "IngressRequestRateLimitExceeded" &&
				ce.Message == "Rate limiter 'ingressRequestRateLimiter' rate exceeded" &&
				slices.Equal(ce.Labels, []string{"SystemOverloadedError", "RetryableError"}) {
				b.WriteByte('R')
			} else {
				t.Logf("unexpected error: %v", ce)
				b.WriteByte('E')
			}
		}
	}
	return b.String()
}

func TestIngressRateLimit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(s *Server, c *client)
		db    string
		cmd   bson.D
		want  string
	}{
		{"off by default", func(*Server, *client) {}, "test", d("ping", 1), "....."},
		{"Go API, burst 2", func(s *Server, _ *client) { s.SetIngressRateLimit(1, 2) }, "test", d("ping", 1), "..RRR"},
		{"reads limited", func(s *Server, _ *client) { s.SetIngressRateLimit(1, 1) }, "test", d("find", "c"), ".RR"},
		{"writes limited", func(s *Server, _ *client) { s.SetIngressRateLimit(1, 1) }, "test", d("insert", "c", "documents", bson.A{d("x", 1)}), ".RR"},
		{"hello exempt", func(s *Server, _ *client) { s.SetIngressRateLimit(1, 1) }, "admin", d("hello", 1), "....."},
		{"isMaster exempt", func(s *Server, _ *client) { s.SetIngressRateLimit(1, 1) }, "admin", d("isMaster", 1), "....."},
		{"setParameter", func(_ *Server, c *client) {
			c.mustRun("admin", d("setParameter", 1, "ingressRequestRateLimiterEnabled", true,
				"ingressRequestAdmissionRatePerSec", 1, "ingressRequestAdmissionBurstSize", 3))
		}, "test", d("count", "c"), "...RR"},
		{"switched off again", func(s *Server, _ *client) { s.SetIngressRateLimit(1, 1); s.SetIngressRateLimit(0, 0) }, "test", d("ping", 1), "....."},
		{"setParameter off", func(s *Server, c *client) {
			s.SetIngressRateLimit(1, 1)
			c.mustRun("admin", d("setParameter", 1, "ingressRequestRateLimiterEnabled", false))
		}, "test", d("ping", 1), "....."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewServer(t, primaryOpts())
			c := connect(t, s, clientOpts{})
			tc.setup(s, c)
			if got := ingressPattern(t, c, tc.db, tc.cmd, len(tc.want)); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// TestIngressRateLimitRefills: the bucket refills at the rate.
func TestIngressRateLimitRefills(t *testing.T) {
	s := NewServer(t, primaryOpts())
	c := connect(t, s, clientOpts{})
	s.SetIngressRateLimit(10, 1)
	if got := ingressPattern(t, c, "test", d("ping", 1), 2); got != ".R" {
		t.Fatalf("got %s, want .R", got)
	}
	time.Sleep(250 * time.Millisecond) // two tokens' worth, capped at the burst of one
	if got := ingressPattern(t, c, "test", d("ping", 1), 2); got != ".R" {
		t.Fatalf("after a refill: got %s, want .R", got)
	}
}

// TestIngressRateLimitAuth: only authenticated connections are limited
// when the server requires authentication, as in mongod; authentication
// itself is never limited.
func TestIngressRateLimitAuth(t *testing.T) {
	s := NewServer(t, Options{Auth: true, Topology: Topology{Role: RolePrimary, SetName: "rs"}})
	if err := s.AddUser("admin", "u", "pw"); err != nil {
		t.Fatal(err)
	}
	s.SetIngressRateLimit(1, 1)
	anon := connect(t, s, clientOpts{})
	if got := ingressPattern(t, anon, "test", d("ping", 1), 3); got != "..." {
		t.Errorf("unauthenticated ping: %s, want ...", got)
	}
	c := connect(t, s, clientOpts{})
	if err := c.auth("admin", newSCRAMClient(SCRAMSHA256, "u", "pw"), true); err != nil {
		t.Fatalf("auth under the limiter: %v", err)
	}
	if got := ingressPattern(t, c, "test", d("ping", 1), 2); got != ".R" {
		t.Errorf("authenticated ping: %s, want .R", got)
	}
}

// TestOverloadBaseBackoffMS: with externalClientBaseBackoffMS set,
// overload errors (the limiter's, or a fail point's with the
// SystemOverloadedError label) carry baseBackoffMS; other errors do not.
func TestOverloadBaseBackoffMS(t *testing.T) {
	s := NewServer(t, primaryOpts())
	c := connect(t, s, clientOpts{})
	for _, tc := range []struct {
		name     string
		backoff  int
		labels   bson.A
		limiter  bool
		wantBase int32 // 0: absent
	}{
		{"fail point, backoff set", 50, bson.A{"SystemOverloadedError", "RetryableError"}, false, 50},
		{"fail point, backoff 0", 0, bson.A{"SystemOverloadedError", "RetryableError"}, false, 0},
		{"fail point without the label", 50, bson.A{"RetryableError"}, false, 0},
		{"limiter, backoff set", 75, nil, true, 75},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.mustRun("admin", d("setParameter", 1, "externalClientBaseBackoffMS", tc.backoff))
			if tc.limiter {
				s.SetIngressRateLimit(1, 1)
				defer s.SetIngressRateLimit(0, 0)
				c.run("test", d("ping", 1))
			} else {
				c.mustRun("admin", fp(d("times", 1), d("failCommands", bson.A{"ping"}, "errorCode", 462, "errorLabels", tc.labels)))
			}
			_, err := c.run("test", d("ping", 1))
			ce := asCmdError(t, err)
			v, err := ce.Raw.LookupErr("baseBackoffMS")
			switch {
			case tc.wantBase == 0 && err == nil:
				t.Errorf("baseBackoffMS %v, want none", v)
			case tc.wantBase != 0 && (err != nil || v.Int32() != tc.wantBase):
				t.Errorf("baseBackoffMS %v, want %d (%v)", v, tc.wantBase, ce)
			}
		})
	}
}
