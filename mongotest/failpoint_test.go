package mongotest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
)

func fp(mode any, data bson.D) bson.D {
	if data == nil {
		return d("configureFailPoint", "failCommand", "mode", mode)
	}
	return d("configureFailPoint", "failCommand", "mode", mode, "data", data)
}

// insertServer has a scripted insert, since CRUD is not part of this file's
// concern: the fail point runs before and around any handler.
func insertServer(t *testing.T) (*Server, *int) {
	s := NewServer(t, Options{Topology: Topology{Role: RolePrimary, SetName: "rs"}})
	ran := new(int)
	s.Handle("insert", func(ctx context.Context, s *Server, r *Request) (bson.Raw, error) {
		*ran++
		return bson.Marshal(d("n", 1))
	})
	return s, ran
}

func TestFailCommandModes(t *testing.T) {
	s, _ := insertServer(t)
	c := connect(t, s, clientOpts{})
	admin := func(cmd bson.D) bson.Raw { return c.mustRun("admin", cmd) }
	pattern := func() string {
		var b strings.Builder
		for i := 0; i < 4; i++ {
			if _, err := c.run("test", d("ping", 1)); err != nil {
				b.WriteByte('F')
			} else {
				b.WriteByte('.')
			}
		}
		return b.String()
	}
	data := d("failCommands", bson.A{"ping"}, "errorCode", 2)
	for _, tc := range []struct {
		mode any
		want string
	}{
		{d("times", 2), "FF.."},
		{d("times", 0), "...."},
		{d("skip", 1), ".FFF"},
		{"alwaysOn", "FFFF"},
		{"off", "...."},
		{d("times", 1.0), "F..."},
	} {
		admin(fp(tc.mode, data))
		if got := pattern(); got != tc.want {
			t.Errorf("mode %v: %s, want %s", tc.mode, got, tc.want)
		}
	}
	// count reports how often it fired before: 2+3+4+1.
	r := admin(fp(d("times", 1), data))
	if n := r.Lookup("count").Int64(); n != 10 {
		t.Errorf("count %d", n)
	}
	admin(fp("off", nil))
}

func TestFailCommandActions(t *testing.T) {
	s, ran := insertServer(t)
	c := connect(t, s, clientOpts{appName: "target"})
	other := connect(t, s, clientOpts{appName: "bystander"})
	set := func(data bson.D) {
		t.Helper()
		if err := s.SetFailPoint(fp(d("times", 1), data)); err != nil {
			t.Fatal(err)
		}
	}
	insert := d("insert", "c", "documents", bson.A{d("_id", 1)})
	retryable := d("insert", "c", "documents", bson.A{d("_id", 1)}, "lsid", d("id", bson.Binary{Subtype: 4, Data: make([]byte, 16)}), "txnNumber", int64(1))

	t.Run("errorCode", func(t *testing.T) {
		set(d("failCommands", bson.A{"insert"}, "errorCode", 91))
		before := *ran
		_, err := c.run("test", insert)
		ce := asCmdError(t, err)
		if ce.Code != 91 || ce.CodeName != "ShutdownInProgress" || ce.Message != "Failing command via 'failCommand' failpoint" || len(ce.Labels) != 0 {
			t.Error(ce)
		}
		if *ran != before {
			t.Error("the command ran")
		}
		if ce.Raw.Lookup("topologyVersion").Type != 0 {
			t.Error("topologyVersion on a shutdown error outside quiesce mode")
		}
		// A "not primary" error from a replica-set member carries it.
		set(d("failCommands", bson.A{"insert"}, "errorCode", 10107))
		_, err = c.run("test", insert)
		if asCmdError(t, err).Raw.Lookup("topologyVersion", "processId").Type == 0 {
			t.Error("no topologyVersion on a not-primary error")
		}
		if ce.Raw.Lookup("$clusterTime").Type == 0 || ce.Raw.Lookup("operationTime").Type == 0 {
			t.Error("no cluster time on an error from a replica-set member")
		}
	})
	t.Run("RetryableWriteError added on retryable writes", func(t *testing.T) {
		set(d("failCommands", bson.A{"insert"}, "errorCode", 10107))
		_, err := c.run("test", retryable)
		if ce := asCmdError(t, err); strings.Join(ce.Labels, ",") != "RetryableWriteError" {
			t.Error(ce)
		}
		// Not retryable: in a transaction, or an unlisted code.
		set(d("failCommands", bson.A{"insert"}, "errorCode", 10107))
		inTxn := append(append(bson.D{}, retryable...), bson.E{Key: "autocommit", Value: false})
		if _, err := c.run("test", inTxn); len(asCmdError(t, err).Labels) != 0 {
			t.Error(err)
		}
		set(d("failCommands", bson.A{"insert"}, "errorCode", 11000))
		if _, err := c.run("test", retryable); len(asCmdError(t, err).Labels) != 0 {
			t.Error(err)
		}
	})
	t.Run("errorLabels replace the server's", func(t *testing.T) {
		set(d("failCommands", bson.A{"insert"}, "errorCode", 10107, "errorLabels", bson.A{}))
		if _, err := c.run("test", retryable); len(asCmdError(t, err).Labels) != 0 {
			t.Error(err)
		}
		set(d("failCommands", bson.A{"insert"}, "errorCode", 112, "errorLabels", bson.A{"TransientTransactionError", "X"}))
		if _, err := c.run("test", insert); strings.Join(asCmdError(t, err).Labels, ",") != "TransientTransactionError,X" {
			t.Error(err)
		}
	})
	t.Run("writeConcernError", func(t *testing.T) {
		wce := d("code", 91, "codeName", "ShutdownInProgress", "errmsg", "Replication is being shut down")
		set(d("failCommands", bson.A{"insert"}, "writeConcernError", wce))
		before := *ran
		r := c.mustRun("test", retryable)
		if *ran != before+1 {
			t.Error("the command did not run")
		}
		if r.Lookup("n").Int32() != 1 || r.Lookup("writeConcernError", "code").Int32() != 91 || strings.Join(strs(r, "errorLabels"), ",") != "RetryableWriteError" {
			t.Error(r)
		}
		set(d("failCommands", bson.A{"insert"}, "writeConcernError", wce, "errorLabels", bson.A{"Mine"}))
		if r := c.mustRun("test", insert); strings.Join(strs(r, "errorLabels"), ",") != "Mine" {
			t.Error(r)
		}
		set(d("failCommands", bson.A{"insert"}, "writeConcernError", d("code", 64, "errmsg", "waiting for replication timed out")))
		if r := c.mustRun("test", retryable); r.Lookup("errorLabels").Type != 0 {
			t.Error(r)
		}
	})
	t.Run("closeConnection", func(t *testing.T) {
		cc := connect(t, s, clientOpts{})
		set(d("failCommands", bson.A{"ping"}, "closeConnection", true))
		if _, err := cc.run("admin", d("ping", 1)); err == nil {
			t.Fatal("got a reply")
		}
		waitConnError(t, s, "failCommand")
		connect(t, s, clientOpts{}).mustRun("admin", d("ping", 1))
	})
	t.Run("blockConnection", func(t *testing.T) {
		set(d("failCommands", bson.A{"ping"}, "blockConnection", true, "blockTimeMS", 120))
		start := time.Now()
		c.mustRun("admin", d("ping", 1))
		if el := time.Since(start); el < 120*time.Millisecond {
			t.Errorf("blocked %v", el)
		}
		set(d("failCommands", bson.A{"ping"}, "blockConnection", true, "blockTimeMS", 50, "errorCode", 89))
		start = time.Now()
		if _, err := c.run("admin", d("ping", 1)); asCmdError(t, err).Code != 89 || time.Since(start) < 50*time.Millisecond {
			t.Error(err, time.Since(start))
		}
	})
	t.Run("appName", func(t *testing.T) {
		if err := s.SetFailPoint(fp("alwaysOn", d("failCommands", bson.A{"ping", "hello"}, "errorCode", 2, "appName", "target"))); err != nil {
			t.Fatal(err)
		}
		other.mustRun("admin", d("ping", 1))
		other.mustRun("admin", d("hello", 1))
		if _, err := c.run("admin", d("ping", 1)); asCmdError(t, err).Code != 2 {
			t.Error(err)
		}
		if _, err := c.run("admin", d("hello", 1)); asCmdError(t, err).Code != 2 {
			t.Error(err)
		}
		// configureFailPoint itself is never failed.
		c.mustRun("admin", fp("off", nil))
		c.mustRun("admin", d("ping", 1))
	})
}

func TestFailPointConfigErrors(t *testing.T) {
	s := NewServer(t, Options{})
	c := connect(t, s, clientOpts{})
	for _, tc := range []struct {
		cmd  bson.D
		want string
	}{
		{d("configureFailPoint", 1, "mode", "off"), "string"},
		{d("configureFailPoint", "failCommand"), "requires mode"},
		{d("configureFailPoint", "failCommand", "mode", "sometimes"), "unknown fail point mode"},
		{d("configureFailPoint", "failCommand", "mode", 3), "expected a string or an object"},
		{d("configureFailPoint", "failCommand", "mode", d("times", 1, "skip", 1)), "not both"},
		{d("configureFailPoint", "failCommand", "mode", d("times", -1)), "negative"},
		{d("configureFailPoint", "failCommand", "mode", d("skip", -1)), "negative"},
		{d("configureFailPoint", "failCommand", "mode", d("times", 1.5)), "whole number"},
		{d("configureFailPoint", "failCommand", "mode", d("activationProbability", 0.5)), "activationProbability"},
		{d("configureFailPoint", "failCommand", "mode", "alwaysOn"), "failCommands"},
		{d("configureFailPoint", "failCommand", "mode", "alwaysOn", "data", 1), "data is of type"},
		{fp("alwaysOn", d("failCommands", bson.A{1})), "hold strings"},
		{fp("alwaysOn", d("failCommands", bson.A{"x"}, "closeConnection", 1)), "boolean"},
		{fp("alwaysOn", d("failCommands", bson.A{"x"}, "errorCode", "x")), "errorCode"},
		{fp("alwaysOn", d("failCommands", bson.A{"x"}, "errorCode", 0)), "not a valid error code"},
		{fp("alwaysOn", d("failCommands", bson.A{"x"}, "blockConnection", true)), "blockTimeMS"},
		{fp("alwaysOn", d("failCommands", bson.A{"x"}, "errorLabels", "x")), "errorLabels"},
		{fp("alwaysOn", d("failCommands", bson.A{"x"}, "errorLabels", bson.A{1})), "errorLabels"},
		{fp("alwaysOn", d("failCommands", bson.A{"x"}, "writeConcernError", 1)), "writeConcernError"},
		{fp("alwaysOn", d("failCommands", bson.A{"x"}, "appName", 1)), "appName"},
	} {
		_, err := c.run("admin", tc.cmd)
		if ce := asCmdError(t, err); !strings.Contains(ce.Message, tc.want) {
			t.Errorf("%v: %v, want %q", tc.cmd, ce, tc.want)
		}
		if err := s.SetFailPoint(tc.cmd); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("SetFailPoint(%v): %v", tc.cmd, err)
		}
	}
	if err := s.SetFailPoint(make(chan int)); err == nil {
		t.Error("SetFailPoint took a channel")
	}
	if err := s.SetFailPoint(bson.Raw{1, 2}); err == nil {
		t.Error("SetFailPoint took invalid BSON")
	}
}

func TestOtherFailPoints(t *testing.T) {
	s := NewServer(t, Options{})
	if _, ok := s.failpointHit(FailGetMoreAfterCursorCheckout); ok {
		t.Error("fired before being set")
	}
	if err := s.SetFailPoint(d("configureFailPoint", FailGetMoreAfterCursorCheckout, "mode", d("skip", 1), "data", d("errorCode", 237))); err != nil {
		t.Fatal(err)
	}
	var got []bool
	for i := 0; i < 3; i++ {
		data, ok := s.failpointHit(FailGetMoreAfterCursorCheckout)
		got = append(got, ok)
		if ok && data.Lookup("errorCode").Int32() != 237 {
			t.Error(data)
		}
	}
	if got[0] || !got[1] || !got[2] {
		t.Errorf("fired %v", got)
	}
	if err := s.SetFailPoint(d("configureFailPoint", OnPrimaryTransactionalWrite, "mode", d("times", 1), "data", d("closeConnection", true))); err != nil {
		t.Fatal(err)
	}
	if data, ok := s.failpointHit(OnPrimaryTransactionalWrite); !ok || !data.Lookup("closeConnection").Boolean() {
		t.Error(data, ok)
	}
	if _, ok := s.failpointHit(OnPrimaryTransactionalWrite); ok {
		t.Error("times 1 fired twice")
	}
	s.ClearFailPoints()
	if _, ok := s.failpointHit(FailGetMoreAfterCursorCheckout); ok {
		t.Error("fired after ClearFailPoints")
	}
}
