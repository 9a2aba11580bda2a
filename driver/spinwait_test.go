package driver_test

import (
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
)

// ClientOptions.SpinWait reaches the client's pools: nil is the default,
// zero or less turns polling off, and the client works either way.
func TestSpinWaitOption(t *testing.T) {
	srv := mongotest.NewServer(t, mongotest.Options{})
	d := func(v time.Duration) *time.Duration { return &v }
	for _, tc := range []struct {
		name string
		opt  *time.Duration
		want time.Duration
	}{
		{"default", nil, driver.DefaultSpinWait},
		{"off", d(0), 0},
		{"negative", d(-time.Second), 0},
		{"10µs", d(10 * time.Microsecond), 10 * time.Microsecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, srv.URI(), &driver.ClientOptions{SpinWait: tc.opt})
			if got := driver.SpinWait(c); got != tc.want {
				t.Fatalf("SpinWait %v, want %v", got, tc.want)
			}
			if err := c.Ping(testCtx(t)); err != nil {
				t.Fatal(err)
			}
		})
	}
}
