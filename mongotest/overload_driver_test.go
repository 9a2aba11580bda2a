package mongotest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
)

// Through this module's driver, as an application would see them: the
// ingress rate limiter's overload error, and a command blocked past its
// maxTimeMS.
func TestOverloadAndMaxTimeThroughDriver(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	c := driverConnect(t, "mongodb://"+s.Addr()+"/")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ping := bson.D{{Key: "ping", Value: 1}}
	if _, err := c.RunCommand(ctx, "admin", ping); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		setup     func() func()
		cmd       bson.D
		wantCode  int32
		wantLabel string
	}{
		{"ingress rate limit", func() func() {
			// One token a second, taken by the first ping: the ones after
			// it, and any retries within the second, are refused.
			s.SetIngressRateLimit(1, 1)
			return func() { s.SetIngressRateLimit(0, 0) }
		}, ping, 462, "SystemOverloadedError"},
		{"maxTimeMS", func() func() {
			err := s.SetFailPoint(bson.D{{Key: "configureFailPoint", Value: "failCommand"},
				{Key: "mode", Value: bson.D{{Key: "times", Value: 1}}},
				{Key: "data", Value: bson.D{{Key: "failCommands", Value: bson.A{"count"}}, {Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: 50}}}})
			if err != nil {
				t.Fatal(err)
			}
			return s.ClearFailPoints
		}, bson.D{{Key: "count", Value: "c"}, {Key: "maxTimeMS", Value: 10}}, 50, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer tc.setup()()
			var err error
			for range 3 {
				if _, err = c.RunCommand(ctx, "test", tc.cmd); err != nil {
					break
				}
			}
			var ce *driver.CommandError
			if !errors.As(err, &ce) {
				t.Fatalf("%v, want a command error", err)
			}
			if ce.Code != tc.wantCode || (tc.wantLabel != "" && !ce.HasErrorLabel(tc.wantLabel)) {
				t.Errorf("%v, want code %d labelled %q", ce, tc.wantCode, tc.wantLabel)
			}
		})
	}
}
