package fidelity

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongoscope/mongoscope/mongotest"
)

// connect opens an official client on uri with the given options and
// disconnects it at the end of the test.
func connect(t *testing.T, uri string, opts ...*options.ClientOptions) *mongo.Client {
	t.Helper()
	o := options.Client().ApplyURI(uri).SetServerSelectionTimeout(5 * time.Second).SetConnectTimeout(5 * time.Second)
	c, err := mongo.Connect(append([]*options.ClientOptions{o}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = c.Disconnect(ctx)
	})
	return c
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestHandshakeAndPing(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	c := connect(t, s.URI(), options.Client().SetAppName("fidelity"))
	if err := c.Ping(ctx(t), nil); err != nil {
		t.Fatal(err)
	}
	var info bson.M
	if err := c.Database("admin").RunCommand(ctx(t), bson.D{{Key: "buildInfo", Value: 1}}).Decode(&info); err != nil {
		t.Fatal(err)
	}
	if info["version"] == nil {
		t.Errorf("buildInfo: %v", info)
	}
	seen := false
	for _, cmd := range s.Commands() {
		if cmd.Name == "ping" {
			seen = true
		}
	}
	if !seen {
		t.Error("the server's command log has no ping")
	}
}

// Each compressor: the official driver negotiates it and its commands
// come through (the server closes a connection whose compressed message it
// cannot decode, so a wrong framing fails the ping).
func TestCompressors(t *testing.T) {
	for _, comp := range []string{"snappy", "zlib", "zstd"} {
		t.Run(comp, func(t *testing.T) {
			s := mongotest.NewServer(t, mongotest.Options{Compressors: []string{comp}})
			c := connect(t, s.URI(), options.Client().SetCompressors([]string{comp}))
			for i := 0; i < 3; i++ {
				if err := c.Ping(ctx(t), nil); err != nil {
					t.Fatal(err)
				}
			}
			if errs := s.ConnectionErrors(); len(errs) > 0 {
				t.Errorf("connection errors: %v", errs)
			}
			assertCompressed(t, s, comp)
		})
	}
}

func TestSCRAM(t *testing.T) {
	for _, mech := range []string{"SCRAM-SHA-256", "SCRAM-SHA-1", ""} {
		t.Run("mechanism="+mech, func(t *testing.T) {
			s := mongotest.NewServer(t, mongotest.Options{Auth: true})
			if err := s.AddUser("admin", "ada", "pencil-and-paper"); err != nil {
				t.Fatal(err)
			}
			cred := options.Credential{Username: "ada", Password: "pencil-and-paper", AuthSource: "admin", AuthMechanism: mech}
			c := connect(t, s.URI(), options.Client().SetAuth(cred))
			if err := c.Ping(ctx(t), nil); err != nil {
				t.Fatal(err)
			}
			var st struct {
				AuthInfo struct {
					AuthenticatedUsers []struct {
						User string `bson:"user"`
						DB   string `bson:"db"`
					} `bson:"authenticatedUsers"`
				} `bson:"authInfo"`
			}
			if err := c.Database("admin").RunCommand(ctx(t), bson.D{{Key: "connectionStatus", Value: 1}}).Decode(&st); err != nil {
				t.Fatal(err)
			}
			if u := st.AuthInfo.AuthenticatedUsers; len(u) != 1 || u[0].User != "ada" || u[0].DB != "admin" {
				t.Errorf("connectionStatus %+v", st)
			}

			bad := connect(t, s.URI(), options.Client().SetAuth(options.Credential{Username: "ada", Password: "wrong", AuthSource: "admin", AuthMechanism: mech}))
			if err := bad.Ping(ctx(t), nil); err == nil {
				t.Error("a wrong password authenticated")
			}
		})
	}
}

// A failCommand error with labels reaches the official driver's error as
// the server sent it. The code is WriteConflict, no state change: a
// shutdown error would (rightly) make the driver mark the server Unknown
// until its next heartbeat.
func TestFailCommandLabels(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	c := connect(t, s.URI())
	err := c.Database("admin").RunCommand(ctx(t), bson.D{{Key: "configureFailPoint", Value: "failCommand"},
		{Key: "mode", Value: bson.D{{Key: "times", Value: 1}}},
		{Key: "data", Value: bson.D{{Key: "failCommands", Value: bson.A{"buildInfo"}}, {Key: "errorCode", Value: 112},
			{Key: "errorLabels", Value: bson.A{"TransientTransactionError", "MyLabel"}}}}}).Err()
	if err != nil {
		t.Fatal(err)
	}
	err = c.Database("admin").RunCommand(ctx(t), bson.D{{Key: "buildInfo", Value: 1}}).Err()
	var ce mongo.CommandError
	if !errors.As(err, &ce) || ce.Code != 112 || ce.Name != "WriteConflict" || !ce.HasErrorLabel("MyLabel") || !ce.HasErrorLabel("TransientTransactionError") {
		t.Fatalf("failCommand: %#v", err)
	}
	// times: 1 — the next one succeeds.
	if err := c.Database("admin").RunCommand(ctx(t), bson.D{{Key: "buildInfo", Value: 1}}).Err(); err != nil {
		t.Errorf("second buildInfo: %v", err)
	}
}

// blockConnection holds the reply longer than the client's timeout: the
// official driver times out; without the block it succeeds.
func TestBlockConnection(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	c := connect(t, s.URI(), options.Client().SetTimeout(300*time.Millisecond))
	if err := c.Database("admin").RunCommand(ctx(t), bson.D{{Key: "configureFailPoint", Value: "failCommand"},
		{Key: "mode", Value: "alwaysOn"},
		{Key: "data", Value: bson.D{{Key: "failCommands", Value: bson.A{"buildInfo"}}, {Key: "blockConnection", Value: true},
			{Key: "blockTimeMS", Value: 1000}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := c.Database("admin").RunCommand(context.Background(), bson.D{{Key: "buildInfo", Value: 1}}).Err()
	if !mongo.IsTimeout(err) {
		t.Fatalf("blocked buildInfo: %v, want a timeout", err)
	}
	if d := time.Since(start); d > 900*time.Millisecond {
		t.Errorf("the timeout took %v; blockTimeMS was 1000 and timeoutMS 300", d)
	}
	if err := c.Database("admin").RunCommand(context.Background(), bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "off"}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Database("admin").RunCommand(context.Background(), bson.D{{Key: "buildInfo", Value: 1}}).Err(); err != nil {
		t.Errorf("after the fail point is off: %v", err)
	}
}
