package conn

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/internal/auth"
	"github.com/mongoscope/mongoscope/driver/internal/handshake"
	"github.com/mongoscope/mongoscope/mongotest"
)

// The connection against mongotest, our own test server: the two were
// written from the specifications by different hands, so agreement here is
// a check on both. (The official driver's view of mongotest is in
// tools/fidelity.)

func TestMongotestCompressorsAndRoles(t *testing.T) {
	for _, comp := range []string{"snappy", "zlib", "zstd"} {
		t.Run(comp, func(t *testing.T) {
			s := mongotest.NewServer(t, mongotest.Options{})
			c, err := Dial(context.Background(), Config{Address: s.Addr(), Handshake: handshake.Options{Compressors: []string{comp}}, ZlibLevel: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.Compressor().String() != comp {
				t.Fatalf("negotiated %v", c.Compressor())
			}
			r, err := c.Command(context.Background(), &Request{DB: "admin", Command: ping(t)})
			if err != nil {
				t.Fatal(err)
			}
			if !r.Compressed {
				t.Error("mongotest answered a compressed ping uncompressed")
			}
			r.Release()
			var sawPing bool
			for _, cmd := range s.Commands() {
				if cmd.Name == "ping" {
					sawPing = cmd.Compressor == comp
				}
			}
			if !sawPing {
				t.Errorf("mongotest did not log a %s-compressed ping", comp)
			}
		})
	}

	lb := mongotest.NewServer(t, mongotest.Options{Topology: mongotest.Topology{Role: mongotest.RoleLoadBalanced}})
	c, err := Dial(context.Background(), Config{Address: lb.Addr(), Handshake: handshake.Options{LoadBalanced: true}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Hello().ServiceID == nil {
		t.Error("load-balanced hello without serviceId")
	}
	c.Close()
}

func TestMongotestSCRAM(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{Auth: true})
	if err := s.AddUser("admin", "grace", "cobol-1959"); err != nil {
		t.Fatal(err)
	}
	if err := s.AddUser("admin", "old", "sha1-only", "SCRAM-SHA-1"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ user, pass, mech string }{
		{"grace", "cobol-1959", ""}, {"grace", "cobol-1959", "SCRAM-SHA-256"}, {"grace", "cobol-1959", "SCRAM-SHA-1"}, {"old", "sha1-only", ""},
	} {
		t.Run(tc.user+"/"+tc.mech, func(t *testing.T) {
			cred := &auth.Credential{Mechanism: tc.mech, Source: "admin", Username: tc.user, Password: tc.pass, PasswordSet: true}
			c, err := Dial(context.Background(), Config{Address: s.Addr(), Credential: cred, ConnectTimeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			st, err := c.RunCommand(context.Background(), "admin", doc(t, bson.D{{Key: "connectionStatus", Value: int32(1)}}))
			if err != nil {
				t.Fatal(err)
			}
			if u := st.Lookup("authInfo", "authenticatedUsers", "0", "user").StringValue(); u != tc.user {
				t.Errorf("connectionStatus %v", st)
			}
		})
	}
	// Speculative authentication: the hello carried the first SCRAM message,
	// so the server saw no saslStart at all.
	var starts int
	for _, cmd := range s.Commands() {
		if cmd.Name == "saslStart" {
			starts++
		}
	}
	if starts > 1 {
		t.Errorf("%d saslStart commands: speculative authentication was not used", starts)
	}

	cred := &auth.Credential{Source: "admin", Username: "grace", Password: "wrong-pass-0xCAFE", PasswordSet: true}
	_, err := Dial(context.Background(), Config{Address: s.Addr(), Credential: cred, ConnectTimeout: 5 * time.Second})
	var he *HandshakeError
	var ce *CommandError
	if !errors.As(err, &he) || !errors.As(err, &ce) || ce.Code != 18 || strings.Contains(err.Error(), "wrong-pass-0xCAFE") {
		t.Errorf("wrong password: %v", err)
	}
	// Unauthenticated commands are refused.
	c, err := Dial(context.Background(), Config{Address: s.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.RunCommand(context.Background(), "admin", doc(t, bson.D{{Key: "serverStatus", Value: int32(1)}}))
	if !errors.As(err, &ce) || ce.Code != 13 {
		t.Errorf("serverStatus without auth: %v", err)
	}
}

// Fault injection seen from our connection: failCommand's closeConnection
// is a network error that closes the connection; blockConnection runs into
// the context deadline.
func TestMongotestFaults(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	if err := s.SetFailPoint(bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: bson.D{{Key: "times", Value: int32(1)}}},
		{Key: "data", Value: bson.D{{Key: "failCommands", Value: []string{"ping"}}, {Key: "closeConnection", Value: true}}}}); err != nil {
		t.Fatal(err)
	}
	c, err := Dial(context.Background(), Config{Address: s.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Command(context.Background(), &Request{DB: "admin", Command: ping(t)})
	var ne *NetworkError
	if !errors.As(err, &ne) || !c.Closed() {
		t.Errorf("closeConnection: %v", err)
	}

	if err := s.SetFailPoint(bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "alwaysOn"},
		{Key: "data", Value: bson.D{{Key: "failCommands", Value: []string{"ping"}}, {Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: int32(500)}}}}); err != nil {
		t.Fatal(err)
	}
	c, err = Dial(context.Background(), Config{Address: s.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = c.Command(ctx, &Request{DB: "admin", Command: ping(t)})
	if !errors.As(err, &ne) || !ne.Timeout() || !c.Closed() {
		t.Errorf("blockConnection past the deadline: %v", err)
	}
}
