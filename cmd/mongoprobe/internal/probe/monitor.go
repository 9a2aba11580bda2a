package probe

import (
	"context"
	"net"
	"strconv"
	"sync"

	"github.com/mongoscope/mongoscope/driver/event"
)

// attempt is what the driver's events tell about one probe's operation.
// The probe puts it in the operation's context; opMonitor fills it.
type attempt struct {
	mu       sync.Mutex
	opID     int64 // the first operation seen under this context
	member   string
	attempts int
	retries  int
	stage    string
	finished bool
}

type attemptKey struct{}

func withAttempt(ctx context.Context, a *attempt) context.Context {
	return context.WithValue(ctx, attemptKey{}, a)
}

func attemptFrom(ctx context.Context) *attempt {
	if ctx == nil {
		return nil
	}
	a, _ := ctx.Value(attemptKey{}).(*attempt)
	return a
}

// opMonitor attributes operation, command and retry events to the probe
// whose context they carry. It is given to every client of a cluster;
// events of operations that are not the probe's are ignored.
type opMonitor struct{}

var (
	_ event.OperationMonitor = opMonitor{}
	_ event.CommandMonitor   = opMonitor{}
	_ event.RetryMonitor     = opMonitor{}
)

// own tells whether the operation opID is the one the probe runs (the
// first one seen under its context), so that a session's or a cursor's
// side operations do not count.
func (a *attempt) own(opID int64) bool {
	if a.opID == 0 {
		a.opID = opID
	}
	return a.opID == opID
}

func (opMonitor) OperationStarted(ctx context.Context, e *event.OperationStarted) context.Context {
	if a := attemptFrom(ctx); a != nil && e != nil {
		a.mu.Lock()
		a.own(e.OperationID)
		a.mu.Unlock()
	}
	return ctx
}

func (opMonitor) OperationFinished(ctx context.Context, e *event.OperationFinished) {
	a := attemptFrom(ctx)
	if a == nil || e == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.own(e.OperationID) {
		return
	}
	a.finished = true
	a.attempts = e.Attempts
	a.stage = e.TimeoutStage
}

func (opMonitor) OperationRetry(ctx context.Context, e *event.OperationRetry) {
	a := attemptFrom(ctx)
	if a == nil || e == nil {
		return
	}
	a.mu.Lock()
	if a.own(e.OperationID) {
		a.retries++
	}
	a.mu.Unlock()
}

func (opMonitor) CommandStarted(ctx context.Context, e *event.CommandStarted) context.Context {
	if a := attemptFrom(ctx); a != nil && e != nil {
		a.mu.Lock()
		if a.own(e.OperationID) {
			a.member = "" // a new attempt: nobody answered it yet
		}
		a.mu.Unlock()
	}
	return ctx
}

func (opMonitor) CommandSucceeded(ctx context.Context, e *event.CommandSucceeded) {
	if a := attemptFrom(ctx); a != nil && e != nil {
		a.mu.Lock()
		if a.own(e.OperationID) {
			a.member = address(e.ServerHost, e.ServerPort)
		}
		a.mu.Unlock()
	}
}

func (opMonitor) CommandFailed(ctx context.Context, e *event.CommandFailed) {
	if a := attemptFrom(ctx); a != nil && e != nil {
		a.mu.Lock()
		if a.own(e.OperationID) {
			if e.Reply != nil { // the server answered, with an error
				a.member = address(e.ServerHost, e.ServerPort)
			} else {
				a.member = ""
			}
		}
		a.mu.Unlock()
	}
}

// address is a command event's server as the topology names it.
func address(host string, port int) string {
	if port == 0 {
		return host // a Unix socket
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// topoMonitor hands the main client's SDAM events to the cluster.
type topoMonitor struct{ c *Cluster }

var _ event.TopologyMonitor = topoMonitor{}

func (m topoMonitor) TopologyEvent(_ context.Context, e event.TopologyEvent) {
	if e, ok := e.(*event.TopologyDescriptionChanged); ok && e != nil {
		m.c.topologyChanged(e.New)
	}
}
