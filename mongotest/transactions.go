package mongotest

import (
	"context"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// transactionCmd answers commitTransaction and abortTransaction. mongotest
// has no transactions (startTransaction is refused), so there is never
// one to commit or abort; the commands exist so that failCommand fail
// points naming them fire, as the client-side operations timeout tests
// configure them.
func transactionCmd(_ context.Context, _ *Server, r *Request) (bson.Raw, error) {
	return nil, newError(mongoerr.NotImplemented, "mongotest does not support transactions: %s", r.Name)
}

// mapReduceCmd exists so that failCommand fail points naming mapReduce
// fire (the retryable reads tests); mongotest does not run map-reduce.
func mapReduceCmd(_ context.Context, _ *Server, _ *Request) (bson.Raw, error) {
	return nil, newError(mongoerr.NotImplemented, "mongotest does not support mapReduce")
}
