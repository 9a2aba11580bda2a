//go:build !linux

package conn

// poller is unused where the socket is not polled.
type poller struct{}

// pollReadable: polling a socket is implemented on Linux only; elsewhere
// Spinner never polls.
func (c *Conn) pollReadable() (ready, ok bool) { return false, false }
