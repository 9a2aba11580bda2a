package driver_test

import (
	"context"
	"fmt"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
)

// An explicit session travels in the context: every operation run with
// ctx is in sess, and, the session being causally consistent, each read
// sees the session's earlier writes, even on a secondary.
func ExampleClient_StartSession() {
	rs, err := mongotest.StartReplicaSet(3, mongotest.ReplicaSetOptions{})
	if err != nil {
		panic(err)
	}
	defer rs.Close()
	client := connectTo(rs.URI())
	defer client.Disconnect(context.Background())
	orders := client.Database("shop").Collection("orders")

	sess, err := client.StartSession(nil) // causally consistent by default
	if err != nil {
		panic(err)
	}
	defer sess.EndSession(context.Background())
	ctx := driver.NewSessionContext(context.Background(), sess)

	if _, err := orders.InsertOne(ctx, Order{ID: 1, Item: "tea"}); err != nil {
		panic(err)
	}
	// Sent with readConcern {afterClusterTime: <the insert's operationTime>}.
	secondaries := client.Database("shop").Collection("orders", &driver.CollectionOptions{
		ReadPreference: &driver.ReadPreference{Mode: driver.Secondary},
	})
	n, err := secondaries.CountDocuments(ctx, bson.D{})
	fmt.Println(n, err, sess.OperationTime() != nil)

	// UseSession starts a session, runs fn with it, and ends it.
	err = client.UseSession(context.Background(), func(ctx context.Context) error {
		_, err := orders.InsertOne(ctx, Order{ID: 2, Item: "jam"})
		return err
	})
	fmt.Println(err)
	// Output:
	// 1 <nil> true
	// <nil>
}
