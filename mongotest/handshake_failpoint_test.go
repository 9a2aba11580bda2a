package mongotest

import (
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
)

// TestFailCommandOnHandshake checks that failCommand with an appName filter
// applies to the handshake's own hello, whose client metadata names the
// application, as mongod 4.4 and later do (the CMAP integration tests
// block and fail connection establishment this way).
func TestFailCommandOnHandshake(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cmds    bson.A
		data    bson.D
		app     string
		code    int32 // the handshake's error code; 0 means it succeeds
		closed  bool  // the server closes the connection
		blocked time.Duration
	}{
		{name: "errorCode", cmds: bson.A{"hello"}, data: d("errorCode", 91), app: "target", code: 91},
		{name: "legacy name listed too", cmds: bson.A{"isMaster", "hello"}, data: d("errorCode", 91), app: "target", code: 91},
		{name: "other appName", cmds: bson.A{"hello"}, data: d("errorCode", 91), app: "bystander"},
		{name: "no appName", cmds: bson.A{"hello"}, data: d("errorCode", 91)},
		{name: "closeConnection", cmds: bson.A{"hello"}, data: d("closeConnection", true), app: "target", closed: true},
		{name: "blockConnection", cmds: bson.A{"hello"}, data: d("blockConnection", true, "blockTimeMS", 60), app: "target", blocked: 60 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewServer(t, Options{})
			data := append(d("failCommands", tc.cmds, "appName", "target"), tc.data...)
			if err := s.SetFailPoint(fp("alwaysOn", data)); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			c, err := connectErr(t, s, clientOpts{appName: tc.app})
			took := time.Since(start)
			switch {
			case tc.code != 0:
				if ce := asCmdError(t, err); ce.Code != tc.code {
					t.Errorf("handshake failed with %v, want code %d", ce, tc.code)
				}
			case tc.closed:
				if err == nil {
					t.Fatal("handshake succeeded on a closed connection")
				}
				waitConnError(t, s, "failCommand")
			default:
				if err != nil {
					t.Fatalf("handshake: %v", err)
				}
				if took < tc.blocked {
					t.Errorf("handshake took %v, want at least %v", took, tc.blocked)
				}
				// The metadata was recorded once: later hellos of the
				// connection may not repeat it, and a ping works.
				c.mustRun("admin", d("ping", 1))
			}
			if tc.app != "" && tc.code != 0 {
				// The refused handshake still counts as the first hello
				// and named the application, so the next hello of the
				// connection is matched (and failed) by the fail point.
				if _, err := c.run("admin", d("hello", 1)); asCmdError(t, err).Code != tc.code {
					t.Errorf("second hello: %v", err)
				}
			}
		})
	}
}
