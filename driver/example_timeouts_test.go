package driver_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
)

// timeoutMS gives each operation one budget: selection, checkout, every
// attempt and the server's own maxTimeMS all come out of it. The
// database, the collection and the operation (driver.WithTimeout) may
// each override it; a context's deadline still applies, and the earlier
// of the two wins.
func ExampleWithTimeout() {
	s := startServer(mongotest.Options{})
	defer s.Close()
	opts := &driver.ClientOptions{}
	if err := opts.ApplyURI(s.URI()); err != nil {
		panic(err)
	}
	opts.Timeout = driver.Ptr(5 * time.Second) // timeoutMS=5000
	client, err := driver.Connect(context.Background(), opts)
	if err != nil {
		panic(err)
	}
	defer client.Disconnect(context.Background())
	failNext(s, bson.D{{Key: "failCommands", Value: bson.A{"find"}}, {Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: 300}})

	orders := client.Database("shop").Collection("orders")
	ctx := driver.WithTimeout(context.Background(), 100*time.Millisecond)
	err = orders.FindOne(ctx, bson.D{}).Err()
	var te *driver.TimeoutError
	fmt.Println(driver.IsTimeout(err), errors.Is(err, context.DeadlineExceeded), errors.As(err, &te))
	// Output:
	// true true true
}
