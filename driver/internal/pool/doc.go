// Package pool is the connection pool of one server, as the Connection
// Monitoring and Pooling (CMAP) specification describes it: paused, ready and
// closed states, generations (per service id behind a load balancer),
// minPoolSize, maxPoolSize and maxConnecting limits, maxIdleTimeMS, a FIFO
// wait queue bounded by the caller's context, clearing, background
// population, CMAP events, and a pull-style Stats snapshot.
//
// The pool is generic over its connection type: it needs only the methods
// of the small Conn interface and a Dial function, so the driver checks out
// *conn.Conn with no type assertion and the tests run the same pool on fake
// connections.
package pool
