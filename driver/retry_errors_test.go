package driver_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
)

// A server whose storage engine cannot retry writes refuses the
// txnNumber with code 20 "Transaction numbers are only allowed...": the
// retryable-writes specification has the driver say what to do about it.
// Without retryWrites no txnNumber is sent, and the error stays the
// server's.
func TestRetryableWritesNotSupportedError(t *testing.T) {
	rs := mongotest.NewReplicaSet(t, 1, mongotest.ReplicaSetOptions{})
	reply, _ := bson.Marshal(bson.D{{Key: "ok", Value: 0}, {Key: "code", Value: 20}, {Key: "codeName", Value: "IllegalOperation"},
		{Key: "errmsg", Value: "Transaction numbers are only allowed on a replica set member or mongos"}})
	rs.Primary().Handle("insert", func(context.Context, *mongotest.Server, *mongotest.Request) (bson.Raw, error) { return reply, nil })
	for _, tc := range []struct {
		uri  string
		want bool
	}{{rs.URI(), true}, {rs.URI() + "&retryWrites=false", false}} {
		c := dial(t, tc.uri, nil)
		_, err := c.Database("db").Collection("c").InsertOne(testCtx(t), bson.D{{Key: "x", Value: 1}})
		if err == nil {
			t.Fatalf("%s: no error", tc.uri)
		}
		if got := errors.Is(err, driver.ErrRetryableWritesNotSupported); got != tc.want {
			t.Fatalf("%s: errors.Is(err, ErrRetryableWritesNotSupported) = %v: %v", tc.uri, got, err)
		}
		if tc.want && !strings.Contains(err.Error(), "retryWrites=false") {
			t.Fatalf("the error does not say what to do: %v", err)
		}
		var ce *driver.CommandError
		if !errors.As(err, &ce) || ce.Code != 20 {
			t.Fatalf("the server's error is not in the chain: %v", err)
		}
	}
}
