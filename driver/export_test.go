package driver

// SessionsInUse is the number of server sessions c's operations and
// cursors hold, for the leak checks of package driver_test.
func SessionsInUse(c *Client) int { return c.sessions.InUse() }
