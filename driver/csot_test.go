package driver_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
)

// TestTimeoutOptions: negative timeoutMS at each level is an
// *ArgumentError naming it; a budget that runs out is a *TimeoutError
// saying where, matched by errors.Is(err, context.DeadlineExceeded).
func TestTimeoutOptions(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	client := dial(t, s.URI(), nil)
	neg := -time.Millisecond
	tests := []struct {
		name    string
		run     func(ctx context.Context) error
		wantArg string // an *ArgumentError naming it
		stage   string // a *TimeoutError with this stage
	}{
		{name: "database", wantArg: "DatabaseOptions.Timeout", run: func(ctx context.Context) error {
			_, err := client.Database("d", &driver.DatabaseOptions{Timeout: &neg}).Collection("c").InsertOne(ctx, bson.D{})
			return err
		}},
		{name: "collection", wantArg: "CollectionOptions.Timeout", run: func(ctx context.Context) error {
			_, err := client.Database("d").Collection("c", &driver.CollectionOptions{Timeout: &neg}).InsertOne(ctx, bson.D{})
			return err
		}},
		{name: "operation", wantArg: "timeoutMS", run: func(ctx context.Context) error {
			_, err := client.Database("d").Collection("c").InsertOne(driver.WithTimeout(ctx, neg), bson.D{})
			return err
		}},
		{name: "server reply", stage: "waiting for the server's reply", run: func(ctx context.Context) error {
			if err := s.SetFailPoint(bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: bson.D{{Key: "times", Value: 1}}},
				{Key: "data", Value: bson.D{{Key: "failCommands", Value: bson.A{"insert"}}, {Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: 200}}}}); err != nil {
				t.Fatal(err)
			}
			d := 50 * time.Millisecond
			_, err := client.Database("d").Collection("c", &driver.CollectionOptions{Timeout: &d}).InsertOne(ctx, bson.D{})
			return err
		}},
		{name: "MaxTimeMSExpired", stage: "on the server (MaxTimeMSExpired)", run: func(ctx context.Context) error {
			if err := s.SetFailPoint(bson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: bson.D{{Key: "times", Value: 1}}},
				{Key: "data", Value: bson.D{{Key: "failCommands", Value: bson.A{"find"}}, {Key: "errorCode", Value: 50}}}}); err != nil {
				t.Fatal(err)
			}
			return client.Database("d").Collection("c").FindOne(driver.WithTimeout(ctx, time.Second), bson.D{}).Err()
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run(testCtx(t))
			if tc.wantArg != "" {
				var ae *driver.ArgumentError
				if !errors.As(err, &ae) || ae.Argument != tc.wantArg {
					t.Fatalf("got %v, want an *ArgumentError naming %s", err, tc.wantArg)
				}
				return
			}
			var te *driver.TimeoutError
			if !errors.As(err, &te) || te.Stage != tc.stage {
				t.Fatalf("got %v, want a *TimeoutError during %q", err, tc.stage)
			}
			if !errors.Is(err, context.DeadlineExceeded) || !driver.IsTimeout(err) {
				t.Fatalf("%v: errors.Is(DeadlineExceeded) and IsTimeout must hold", err)
			}
		})
	}
}
