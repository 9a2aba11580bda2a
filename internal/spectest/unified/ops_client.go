package unified

import (
	"context"

	"github.com/mongoscope/mongoscope/bson"
)

// The operations of client entities.

func init() {
	register("client", "close", clientClose)
}

// clientClose disconnects the client; its events so far stay observable.
func clientClose(_ context.Context, tr *testRun, obj any, args bson.Raw) (result, error) {
	if err := argKeys(args); err != nil {
		return result{}, err
	}
	return result{}, obj.(*clientEntity).close()
}
