package description

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/driver/internal/conn"
)

// refused is the error a monitor's dial to a dead server gets, on the
// driver's connection id.
func refused(id int64) error {
	return &conn.NetworkError{Op: "dial", Address: "b:27017", ConnID: id,
		Err: &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{Port: 27017}, Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}}
}

// reset is a read error, whose message holds the local (ephemeral) port.
func reset(localPort int) error {
	return &conn.NetworkError{Op: "read", Address: "b:27017", ConnID: int64(localPort),
		Err: &net.OpError{Op: "read", Net: "tcp", Source: &net.TCPAddr{Port: localPort}, Addr: &net.TCPAddr{Port: 27017},
			Err: &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}}}
}

// TestErrorEquality: Server Description Equality compares the error field
// (SDAM, ServerDescription "(=) error"); the comparison must not depend on
// the volatile parts of a message (connection numbers, local ports), or a
// dead member changes on every heartbeat.
func TestErrorEquality(t *testing.T) {
	cmdErr := func(code int32, msg string) error { return &conn.CommandError{Code: code, Message: msg} }
	for _, tc := range []struct {
		name string
		a, b error
		want bool
	}{
		{"both nil", nil, nil, true},
		{"nil and error", nil, refused(1), false},
		{"refused on different connections", refused(3), refused(17), true},
		{"reset on different local ports", reset(50001), reset(50977), true},
		// A dead server's first failure is the monitoring connection
		// dropping, the next ones refused dials: the same kind.
		{"refused and reset", refused(3), reset(50001), true},
		{"refused and EOF", refused(3), &conn.NetworkError{Op: "read", ConnID: 3, Err: io.EOF}, true},
		{"EOF on different connections", &conn.NetworkError{Op: "read", ConnID: 3, Err: io.EOF}, &conn.NetworkError{Op: "read", ConnID: 4, Err: io.EOF}, true},
		{"same server error", cmdErr(91, "shutting down"), cmdErr(91, "shutting down"), true},
		{"server errors with different codes", cmdErr(91, "x"), cmdErr(189, "x"), false},
		{"network and server error", refused(1), cmdErr(91, "x"), false},
		{"timeout and refused", &conn.NetworkError{Op: "read", ConnID: 2, Err: context.DeadlineExceeded}, refused(2), false},
		{"timeouts", &conn.NetworkError{Op: "read", ConnID: 2, Err: context.DeadlineExceeded}, &conn.NetworkError{Op: "dial", ConnID: 3, Err: os.ErrDeadlineExceeded}, true},
		{"handshake network errors", &conn.HandshakeError{Stage: "hello", ConnID: 1, Err: refused(1)}, &conn.HandshakeError{Stage: "hello", ConnID: 2, Err: refused(2)}, true},
		{"handshake and plain network error", &conn.HandshakeError{Stage: "hello", ConnID: 1, Err: refused(1)}, refused(2), false},
		{"auth failures", &conn.HandshakeError{Stage: "auth", ConnID: 1, Err: cmdErr(18, "auth failed")}, &conn.HandshakeError{Stage: "auth", ConnID: 2, Err: cmdErr(18, "auth failed")}, true},
		{"server errors without code", cmdErr(0, "a"), cmdErr(0, "b"), false},
		{"wrapped alike", fmt.Errorf("check %d: %w", 1, refused(1)), fmt.Errorf("check %d: %w", 2, refused(9)), true},
		{"joined", errors.Join(errors.New("x"), io.EOF), errors.Join(errors.New("x"), io.EOF), true},
		{"joined differently", errors.Join(errors.New("x"), io.EOF), errors.Join(errors.New("x")), false},
		{"stale primary", &StalePrimaryError{Address: "a"}, &StalePrimaryError{Address: "a"}, true},
		{"stale primary and mismatch", &StalePrimaryError{Address: "a"}, &StalePrimaryError{Address: "a", Mismatch: true}, false},
		{"plain errors with the same text", errors.New("e"), errors.New("e"), true},
		{"plain errors with other text", errors.New("e"), errors.New("f"), false},
	} {
		a, b := UnknownServer("b:27017", tc.a), UnknownServer("b:27017", tc.b)
		if got := a.Equal(b); got != tc.want {
			t.Errorf("%s: Equal = %v, want %v (%v / %v)", tc.name, got, tc.want, tc.a, tc.b)
		}
		if got := b.Equal(a); got != tc.want {
			t.Errorf("%s: Equal is not symmetric", tc.name)
		}
	}
}

// TestPossiblePrimaryEqualsUnknown: the SDAM monitoring rules publish
// ServerDescriptionChanged only for a change under Server Description
// Equality, and PossiblePrimary is "synonymous with Unknown" for a
// multi-threaded client (SDAM, ServerType). A secondary naming an
// unchecked seed as its primary changes the secondary only; the seed's
// first real description is a change from PossiblePrimary.
func TestPossiblePrimaryEqualsUnknown(t *testing.T) {
	td := mustNew(t, Settings{Seeds: []string{"a", "b"}})
	sec := NewServer("a:27017", reply(t, `{"ok":1,"secondary":true,"setName":"rs","setVersion":1,"primary":"b:27017",
		"hosts":["a:27017","b:27017"],"maxWireVersion":21}`), 0, time.Time{})
	td, ch := td.Apply(sec)
	b, _ := td.Server("b:27017")
	if b.Type != PossiblePrimary {
		t.Fatalf("b is %s, want PossiblePrimary", b.Type)
	}
	if len(ch.Servers) != 1 || ch.Servers[0].New.Address != "a:27017" || !ch.TopologyChanged {
		t.Errorf("changes %+v, want a's alone (and the topology's)", ch)
	}
	prim := NewServer("b:27017", reply(t, `{"ok":1,"isWritablePrimary":true,"setName":"rs","setVersion":1,
		"electionId":{"$oid":"000000000000000000000001"},"hosts":["a:27017","b:27017"],"maxWireVersion":21}`), 0, time.Time{})
	_, ch = td.Apply(prim)
	if len(ch.Servers) != 1 || ch.Servers[0].Old.Type != PossiblePrimary || ch.Servers[0].New.Type != RSPrimary {
		t.Errorf("changes %+v, want b PossiblePrimary -> RSPrimary", ch)
	}
	// The rule changes the type alone ("change its type to
	// PossiblePrimary"): an Unknown server keeps the error of its failed
	// check, and so is not changed either.
	down := UnknownServer("b:27017", refused(4))
	td2, _ := mustNew(t, Settings{Seeds: []string{"a", "b"}}).Apply(down)
	td2, ch = td2.Apply(sec)
	if b, _ := td2.Server("b:27017"); b.Type != PossiblePrimary || !sameError(b.Error, down.Error) || len(ch.Servers) != 1 {
		t.Errorf("b = %+v, changes %+v; want PossiblePrimary keeping its error, a's change alone", b, ch)
	}
	if !(ServerDescription{Address: "x", Type: PossiblePrimary}).Equal(ServerDescription{Address: "x"}) {
		t.Error("PossiblePrimary must equal Unknown")
	}
	if (ServerDescription{Address: "x", Type: PossiblePrimary}).Equal(ServerDescription{Address: "x", Type: RSSecondary}) {
		t.Error("PossiblePrimary must not equal RSSecondary")
	}
}
