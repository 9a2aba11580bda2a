package conn

import (
	"crypto/tls"
	"syscall"
	"unsafe"
)

// poller peeks at a connection's socket without blocking: the state of
// Conn.pollReadable, made on first use.
type poller struct {
	raw   syscall.RawConn
	peek  func(fd uintptr) bool
	ready bool
	one   [1]byte
}

// pollReadable tells whether c's socket has bytes (or an error, or the
// end of the stream) to read now; ok is false when the socket cannot be
// polled (not a kernel socket), and Spinner then does not poll.
func (c *Conn) pollReadable() (ready, ok bool) {
	if c.pollFailed {
		return false, false
	}
	p := c.poll
	if p == nil {
		nc := c.nc
		if t, isTLS := nc.(*tls.Conn); isTLS {
			nc = t.NetConn()
		}
		sc, isSys := nc.(syscall.Conn)
		if !isSys {
			c.pollFailed = true
			return false, false
		}
		raw, err := sc.SyscallConn()
		if err != nil {
			c.pollFailed = true
			return false, false
		}
		p = &poller{raw: raw}
		p.peek = func(fd uintptr) bool {
			_, _, errno := syscall.Syscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&p.one[0])), 1,
				syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
			// Data, the end of the stream or an error other than "would
			// block": the read that follows will see it.
			p.ready = errno != syscall.EAGAIN && errno != syscall.EINTR
			return true
		}
		c.poll = p
	}
	if err := p.raw.Read(p.peek); err != nil {
		return true, true // closed: let the read report it
	}
	return p.ready, true
}
