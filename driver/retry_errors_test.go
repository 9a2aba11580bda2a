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

// Retryable writes prose test 1 ("Test that retryable writes raise an
// exception when using the MMAPv1 storage engine"), with the storage
// engine scripted: mongotest has none, so its insert answers as MMAPv1
// does, refusing a command that carries a txnNumber with IllegalOperation
// (20) "Transaction numbers are only allowed on a replica set member or
// mongos" and running one that carries none. The driver must replace the
// message with one that says to add retryWrites=false, keep code 20, and
// not retry. Without retryWrites no txnNumber is sent, and the insert
// goes through. A code 20 with another message is the server's own error.
func TestRetryableWritesNotSupportedError(t *testing.T) {
	for _, tc := range []struct {
		name, query, errmsg string
		want                bool // the replacement error
		wantErr             bool
	}{
		{"retryWrites", "", "Transaction numbers are only allowed on a replica set member or mongos", true, true},
		{"retryWrites=false", "&retryWrites=false", "Transaction numbers are only allowed on a replica set member or mongos", false, false},
		{"other code 20", "", "Illegal operation for another reason", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := mongotest.NewReplicaSet(t, 1, mongotest.ReplicaSetOptions{})
			prim := rs.Primary()
			refusal, _ := bson.Marshal(bson.D{{Key: "ok", Value: 0}, {Key: "code", Value: 20}, {Key: "codeName", Value: "IllegalOperation"},
				{Key: "errmsg", Value: tc.errmsg}})
			applied, _ := bson.Marshal(bson.D{{Key: "n", Value: 1}})
			prim.Handle("insert", func(_ context.Context, _ *mongotest.Server, r *mongotest.Request) (bson.Raw, error) {
				if _, err := r.Body.LookupErr("txnNumber"); err == nil {
					return refusal, nil
				}
				return applied, nil
			})
			c, rec := sessClient(t, rs.URI()+tc.query)
			rec.Reset()
			_, err := c.Database("db").Collection("c").InsertOne(testCtx(t), bson.D{{Key: "x", Value: 1}})
			if n := len(started(rec, "insert")); n != 1 {
				t.Errorf("%d inserts sent, want 1 (code 20 is not retryable)", n)
			}
			if !tc.wantErr {
				if err != nil {
					t.Fatalf("insert without a txnNumber: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			if got := errors.Is(err, driver.ErrRetryableWritesNotSupported); got != tc.want {
				t.Fatalf("errors.Is(err, ErrRetryableWritesNotSupported) = %v: %v", got, err)
			}
			msg := strings.ToLower(err.Error())
			if tc.want && (!strings.Contains(msg, "this mongodb deployment does not support retryable writes") ||
				!strings.Contains(msg, "please add retrywrites=false to your connection string")) {
				t.Errorf("the error does not carry the replacement message: %v", err)
			}
			var ce *driver.CommandError
			if !errors.As(err, &ce) || ce.Code != 20 {
				t.Fatalf("the server's error (code 20) is not in the chain: %v", err)
			}
		})
	}
}
