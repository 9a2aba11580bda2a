package unified

import (
	"context"

	"github.com/mongoscope/mongoscope/bson"
)

// The operations of client entities.

func init() {
	register("client", "close", clientClose)
	register("client", "listDatabases", clientListDatabases)
}

// clientListDatabases runs listDatabases. The driver has no
// Client.ListDatabases yet, and RunCommand is how its users list
// databases today, so the operation maps onto it: the command, its events
// and its log messages are the driver's own. The result is the reply's
// databases, as the enumerate-databases specification's iterable.
func clientListDatabases(ctx context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	c := obj.(*clientEntity)
	a := newArgs(args)
	cmd := bson.D{{Key: "listDatabases", Value: 1}}
	for _, k := range []string{"filter", "nameOnly", "authorizedDatabases", "comment"} {
		if v := a.value(k); !v.IsZero() {
			cmd = append(cmd, bson.E{Key: k, Value: v})
		}
	}
	if err := a.done(); err != nil {
		return result{}, err
	}
	reply, err := c.c.RunCommand(ctx, "admin", cmd)
	if err != nil {
		return result{v: docValue(reply)}, err
	}
	return result{v: reply.Lookup("databases"), top: TopRootElements}, nil
}

// clientClose disconnects the client; its events so far stay observable.
func clientClose(_ context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	if err := argKeys(args); err != nil {
		return result{}, err
	}
	return result{}, obj.(*clientEntity).close()
}
