package driver_test

import (
	"context"
	"fmt"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
)

// Retryable writes and reads are on by default: an insert whose
// connection drops is sent again, once, with the same session and
// txnNumber, so the server applies it once. With retryWrites=false the
// error reaches the application.
func ExampleClient_retries() {
	rs, err := mongotest.StartReplicaSet(3, mongotest.ReplicaSetOptions{})
	if err != nil {
		panic(err)
	}
	defer rs.Close()
	ctx := context.Background()
	client := connectTo(rs.URI()) // retryWrites=true and retryReads=true by default
	defer client.Disconnect(ctx)
	orders := client.Database("shop").Collection("orders")

	failNext(rs.Primary(), bson.D{{Key: "failCommands", Value: bson.A{"insert"}}, {Key: "closeConnection", Value: true}})
	_, err = orders.InsertOne(ctx, Order{ID: 1, Item: "tea"}) // retried once
	fmt.Println(err)

	noRetries := connectTo(rs.URI() + "&retryWrites=false&retryReads=false")
	defer noRetries.Disconnect(ctx)
	failNext(rs.Primary(), bson.D{{Key: "failCommands", Value: bson.A{"insert"}}, {Key: "closeConnection", Value: true}})
	_, err = noRetries.Database("shop").Collection("orders").InsertOne(ctx, Order{ID: 2, Item: "jam"})
	fmt.Println(driver.IsNetworkError(err))
	n, _ := orders.CountDocuments(ctx, bson.D{})
	fmt.Println(n)
	// Output:
	// <nil>
	// true
	// 1
}
