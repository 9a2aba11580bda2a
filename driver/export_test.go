package driver

import "time"

// SessionsInUse is the number of server sessions c's operations and
// cursors hold, for the leak checks of package driver_test.
func SessionsInUse(c *Client) int { return c.sessions.InUse() }

// SpinWait is how long c's lone operations poll for replies (0: off).
func SpinWait(c *Client) time.Duration { return c.topo.Spinner().Budget() }
