package mongotest_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
)

// A replica-set primary whose next insert fails with a retryable error,
// driven by the driver as an application would; the test then reads what
// the server received. In a test, use NewServer, which closes the server
// when the test ends.
func Example() {
	s, err := mongotest.Start(mongotest.Options{
		Topology: mongotest.Topology{Role: mongotest.RolePrimary, SetName: "rs0"},
	})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	err = s.SetFailPoint(bson.D{
		{Key: "configureFailPoint", Value: "failCommand"},
		{Key: "mode", Value: bson.D{{Key: "times", Value: 1}}},
		{Key: "data", Value: bson.D{{Key: "failCommands", Value: bson.A{"insert"}}, {Key: "errorCode", Value: 10107}}},
	})
	if err != nil {
		panic(err)
	}

	// Any driver connects to s.URI(); here, this module's.
	ctx := context.Background()
	opts := &driver.ClientOptions{}
	if err := opts.ApplyURI(s.URI() + "?replicaSet=rs0"); err != nil {
		panic(err)
	}
	client, err := driver.Connect(ctx, opts)
	if err != nil {
		panic(err)
	}
	defer client.Disconnect(ctx)
	insert := bson.D{{Key: "insert", Value: "orders"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}}}}
	_, err = client.RunCommand(ctx, "shop", insert)
	var ce *driver.CommandError
	if errors.As(err, &ce) {
		fmt.Println("insert refused:", ce.Code, ce.CodeName)
	}

	// The command log shows what arrived, handshakes and heartbeats
	// included; here, the application's commands.
	for _, c := range s.Commands() {
		if c.DB == "shop" {
			fmt.Println(c.DB, c.Name)
		}
	}
	// Output:
	// insert refused: 10107 NotWritablePrimary
	// shop insert
}
