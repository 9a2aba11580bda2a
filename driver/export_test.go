package driver

import (
	"context"
	"time"
)

// SessionsInUse is the number of server sessions c's operations and
// cursors hold, for the leak checks of package driver_test.
func SessionsInUse(c *Client) int { return c.sessions.InUse() }

// SpinWait is how long c's lone operations poll for replies (0: off).
func SpinWait(c *Client) time.Duration { return c.topo.Spinner().Budget() }

// SetOverloadBackoff replaces c's backoff jitter (in [0, 1]) and sleep
// for overload retries; nil keeps the default. Call it before c runs
// operations.
func SetOverloadBackoff(c *Client, jitter func() float64, sleep func(context.Context, time.Duration) error) {
	c.exec.Overload.Jitter, c.exec.Overload.Sleep = jitter, sleep
}
