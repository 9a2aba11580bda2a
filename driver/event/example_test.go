package event_test

import (
	"context"
	"fmt"

	"github.com/mongoscope/mongoscope/driver/event"
)

// checkoutPrinter is a PoolMonitor that prints checkouts.
type checkoutPrinter struct{}

func (checkoutPrinter) PoolEvent(ctx context.Context, e event.PoolEvent) {
	if co, ok := e.(*event.ConnectionCheckedOut); ok {
		fmt.Printf("checked out connection %d from %s\n", co.ConnectionID, co.Address)
	}
}

func ExampleNewDispatcher() {
	d := event.NewDispatcher(checkoutPrinter{})
	fmt.Println("pool monitors:", d.Pool(), "command monitors:", d.Command())
	if d.Pool() { // skip building the event when nobody listens
		d.PoolEvent(context.Background(), &event.ConnectionCheckedOut{Address: "localhost:27017", ConnectionID: 3})
	}
	// Output:
	// pool monitors: true command monitors: false
	// checked out connection 3 from localhost:27017
}
