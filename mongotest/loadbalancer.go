package mongotest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// LoadBalancerOptions configure a simulated load-balanced deployment.
type LoadBalancerOptions struct {
	// Options are every service's server options (authentication,
	// compressors, wire version...). Addr and Topology must be left zero:
	// each service listens on its own loopback port in the load-balanced
	// role.
	Options Options
	// Addr is the load balancer's address; "" means "127.0.0.1:0".
	Addr string
}

// LoadBalancer is a simulated load-balanced deployment: a TCP front on one
// loopback address that hands each new connection to the next of n
// backend mongos services, round robin, and then forwards its bytes both
// ways, as a layer-4 load balancer does. Each service plays
// RoleLoadBalanced with its own serviceId and they share one store, so a
// write through one service is seen through every other. A driver
// connects to URI, with loadBalanced=true. Its methods are safe for
// concurrent use.
type LoadBalancer struct {
	r    *routers
	ln   net.Listener
	addr string

	mu     sync.Mutex
	next   int
	links  map[*lbLink]struct{}
	counts []int64
	done   bool
	wg     sync.WaitGroup
}

// lbLink is one client connection and the backend connection it was
// handed to.
type lbLink struct{ client, backend net.Conn }

func (l *lbLink) close() {
	l.client.Close()
	l.backend.Close()
}

// NewLoadBalancer starts a load balancer in front of n services for the
// test and closes both when the test ends. It fails the test if the
// deployment cannot start.
func NewLoadBalancer(t testing.TB, n int, opts LoadBalancerOptions) *LoadBalancer {
	t.Helper()
	lb, err := StartLoadBalancer(n, opts)
	if err != nil {
		t.Fatalf("mongotest: %v", err)
	}
	t.Cleanup(lb.Close)
	return lb
}

// StartLoadBalancer starts a load balancer in front of n services outside
// of a test; the caller must Close it.
func StartLoadBalancer(n int, opts LoadBalancerOptions) (*LoadBalancer, error) {
	r, err := startRouters("LoadBalancerOptions", n, opts.Options, RoleLoadBalanced)
	if err != nil {
		return nil, err
	}
	addr := opts.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		r.close()
		return nil, fmt.Errorf("mongotest: load balancer: listen on %s: %w", addr, err)
	}
	lb := &LoadBalancer{
		r:      r,
		ln:     ln,
		addr:   ln.Addr().String(),
		links:  map[*lbLink]struct{}{},
		counts: make([]int64, n),
	}
	lb.wg.Add(1)
	go lb.accept()
	return lb, nil
}

// Addr returns the load balancer's "host:port".
func (lb *LoadBalancer) Addr() string { return lb.addr }

// URI returns a connection string for the load balancer:
// "mongodb://host:port/?loadBalanced=true".
func (lb *LoadBalancer) URI() string {
	return "mongodb://" + lb.addr + "/?loadBalanced=true"
}

// Services returns the backend servers, in the order the load balancer
// hands out connections.
func (lb *LoadBalancer) Services() []*Server { return lb.r.servers() }

// AddUser adds a user to every service. See Server.AddUser.
func (lb *LoadBalancer) AddUser(db, username, password string, mechanisms ...string) error {
	return lb.r.addUser(db, username, password, mechanisms...)
}

// Connections returns how many client connections the load balancer has
// handed to each service so far, by service index.
func (lb *LoadBalancer) Connections() []int64 {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	return append([]int64(nil), lb.counts...)
}

// Close stops the load balancer, closes every connection through it and
// every service, and waits for their goroutines. It is safe to call more
// than once.
func (lb *LoadBalancer) Close() {
	lb.mu.Lock()
	already := lb.done
	lb.done = true
	links := make([]*lbLink, 0, len(lb.links))
	for l := range lb.links {
		links = append(links, l)
	}
	lb.mu.Unlock()
	if !already {
		lb.ln.Close()
		for _, l := range links {
			l.close()
		}
	}
	lb.wg.Wait()
	lb.r.close()
}

func (lb *LoadBalancer) accept() {
	defer lb.wg.Done()
	for {
		nc, err := lb.ln.Accept()
		if err != nil {
			lb.mu.Lock()
			done := lb.done
			lb.mu.Unlock()
			if done || errors.Is(err, net.ErrClosed) {
				return
			}
			// A temporary failure (too many open files): back off.
			time.Sleep(5 * time.Millisecond)
			continue
		}
		lb.mu.Lock()
		i := lb.next
		lb.next = (lb.next + 1) % len(lb.r.srvs)
		lb.counts[i]++
		lb.mu.Unlock()
		backend, err := net.DialTimeout("tcp", lb.r.srvs[i].Addr(), 5*time.Second)
		if err != nil {
			// The service is gone (closed by the test): the client sees
			// the connection drop, as behind a real load balancer.
			nc.Close()
			continue
		}
		l := &lbLink{client: nc, backend: backend}
		lb.mu.Lock()
		if lb.done {
			lb.mu.Unlock()
			l.close()
			return
		}
		lb.links[l] = struct{}{}
		lb.wg.Add(2)
		lb.mu.Unlock()
		go lb.pipe(l, l.backend, l.client)
		go lb.pipe(l, l.client, l.backend)
	}
}

// pipe copies src to dst until either side closes, then closes both, so
// the other direction ends too.
func (lb *LoadBalancer) pipe(l *lbLink, dst, src net.Conn) {
	defer lb.wg.Done()
	_, _ = io.Copy(dst, src)
	l.close()
	lb.mu.Lock()
	delete(lb.links, l)
	lb.mu.Unlock()
}
