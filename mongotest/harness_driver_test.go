package mongotest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
)

func driverConnect(t *testing.T, uri string) *driver.Client {
	t.Helper()
	opts := &driver.ClientOptions{}
	if err := opts.ApplyURI(uri); err != nil {
		t.Fatal(err)
	}
	c, err := driver.Connect(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Disconnect(context.Background()) })
	return c
}

// Through this module's driver, as an application would: an
// administrator makes a user with createUser, the user logs in with each
// SCRAM mechanism, and getParameter answers.
func TestHarnessCommandsThroughDriver(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{Auth: true})
	if err := s.AddUser("admin", "root", "root-pw"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	host := s.Addr()
	admin := driverConnect(t, "mongodb://root:root-pw@"+host+"/")
	_, err := admin.RunCommand(ctx, "app", bson.D{
		{Key: "createUser", Value: "ada"}, {Key: "pwd", Value: "ada-pw"}, {Key: "roles", Value: bson.A{"readWrite"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	params, err := admin.RunCommand(ctx, "admin", bson.D{{Key: "getParameter", Value: "*"}})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := params.LookupErr("featureCompatibilityVersion"); err != nil || v.Type != bson.TypeEmbeddedDocument {
		t.Errorf("getParameter: %s", params)
	}
	for _, mech := range []string{"SCRAM-SHA-256", "SCRAM-SHA-1"} {
		t.Run(mech, func(t *testing.T) {
			u := driverConnect(t, "mongodb://ada:ada-pw@"+host+"/?authSource=app&authMechanism="+mech)
			// connectionStatus shows who the connection authenticated as.
			st, err := u.RunCommand(ctx, "app", bson.D{{Key: "connectionStatus", Value: 1}})
			if err != nil {
				t.Fatal(err)
			}
			if v, _ := st.LookupErr("authInfo", "authenticatedUsers"); !bytesContain(v.Value, "ada") {
				t.Errorf("connectionStatus %s", st)
			}
			bad := driverConnect(t, "mongodb://ada:wrong@"+host+"/?authSource=app&authMechanism="+mech)
			if _, err := bad.RunCommand(ctx, "app", bson.D{{Key: "ping", Value: 1}}); err == nil {
				t.Error("a wrong password authenticated")
			}
		})
	}
}

func bytesContain(b []byte, s string) bool { return strings.Contains(string(b), s) }
