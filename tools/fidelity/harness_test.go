package fidelity

import (
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/mongoscope/mongoscope/mongotest"
)

// The commands the official driver's test harness (mtest, the unified
// runner) runs at setup, through the official driver.
func TestHarnessSetupCommands(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	c := connect(t, s.URI())
	admin := c.Database("admin")

	// mtest.Setup: getParameter "*" must answer.
	params, err := admin.RunCommand(ctx(t), bson.D{{Key: "getParameter", Value: "*"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if v, err := params.LookupErr("featureCompatibilityVersion", "version"); err != nil || v.StringValue() == "" {
		t.Errorf("getParameter: %s", params)
	}
	err = admin.RunCommand(ctx(t), bson.D{{Key: "getParameter", Value: 1}, {Key: "nope", Value: 1}}).Err()
	var se mongo.ServerError
	if !errors.As(err, &se) || !se.HasErrorCode(72) {
		t.Errorf("unknown parameter: %v", err)
	}
	for _, cmd := range []string{"listCommands", "hostInfo", "getCmdLineOpts", "dbStats"} {
		if err := admin.RunCommand(ctx(t), bson.D{{Key: cmd, Value: 1}}).Err(); err != nil {
			t.Errorf("%s: %v", cmd, err)
		}
	}
	// The runner's terminateOpenSessions.
	if err := admin.RunCommand(ctx(t), bson.D{{Key: "killAllSessions", Value: bson.A{}}}).Err(); err != nil {
		t.Error(err)
	}
}

// listIndexes' cursor, on db.coll, is iterated with getMores by the
// official driver.
func TestListIndexesGetMore(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	c := connect(t, s.URI())
	coll := c.Database("db").Collection("c")
	_, err := coll.Indexes().CreateMany(ctx(t), []mongo.IndexModel{{Keys: bson.D{{Key: "a", Value: 1}}}, {Keys: bson.D{{Key: "b", Value: 1}}}})
	if err != nil {
		t.Fatal(err)
	}
	cur, err := coll.Indexes().List(ctx(t), options.ListIndexes().SetBatchSize(1))
	if err != nil {
		t.Fatal(err)
	}
	var got []bson.M
	if err := cur.All(ctx(t), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Errorf("indexes %v", got)
	}
	getMores := 0
	for _, cmd := range s.Commands() {
		if cmd.Name == "getMore" {
			getMores++
		}
	}
	if getMores < 2 {
		t.Errorf("%d getMores, want at least 2", getMores)
	}
}

// A user made with createUser authenticates through the official driver.
func TestCreateUserThenAuthenticate(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{Auth: true})
	if err := s.AddUser("admin", "root", "root-secret"); err != nil {
		t.Fatal(err)
	}
	root := connect(t, s.URI(), options.Client().SetAuth(options.Credential{Username: "root", Password: "root-secret"}))
	err := root.Database("app").RunCommand(ctx(t), bson.D{
		{Key: "createUser", Value: "ada"}, {Key: "pwd", Value: "pencil"},
		{Key: "roles", Value: bson.A{"readWrite"}},
	}).Err()
	if err != nil {
		t.Fatal(err)
	}
	for _, mech := range []string{"SCRAM-SHA-256", "SCRAM-SHA-1"} {
		t.Run(mech, func(t *testing.T) {
			cred := options.Credential{Username: "ada", Password: "pencil", AuthSource: "app", AuthMechanism: mech}
			u := connect(t, s.URI(), options.Client().SetAuth(cred))
			if err := u.Ping(ctx(t), nil); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The search index helpers get mongod's SearchNotEnabled error.
func TestSearchIndexesNotEnabled(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	c := connect(t, s.URI())
	coll := c.Database("db").Collection("c")
	_, err := coll.SearchIndexes().List(ctx(t), nil)
	var se mongo.ServerError
	if !errors.As(err, &se) || !se.HasErrorCode(31082) {
		t.Errorf("List: %v", err)
	}
	_, err = coll.SearchIndexes().CreateOne(ctx(t), mongo.SearchIndexModel{Definition: bson.D{}})
	if !errors.As(err, &se) || !se.HasErrorCode(31082) {
		t.Errorf("CreateOne: %v", err)
	}
}
