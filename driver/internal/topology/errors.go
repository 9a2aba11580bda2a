package topology

import (
	"context"
	"errors"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/conn"
	"github.com/mongoscope/mongoscope/driver/internal/handshake"
	"github.com/mongoscope/mongoscope/driver/internal/pool"
	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
)

// HandleError applies the error handling rules to err, which an operation
// on a connection of generation to addr got in phase: it may mark the
// server Unknown, clear its pool (interrupting in-use connections when the
// rules say so), request an immediate check or cancel the check in
// progress. Errors from older generations, pool-cleared errors and errors
// for servers no longer monitored change nothing. It returns what was
// decided.
func (t *Topology) HandleError(addr string, generation uint64, err error, phase description.Phase) description.ErrorOutcome {
	return t.handleFor(addr, generation, nil, 0, err, phase)
}

// HandleConnError is HandleError for an error on c, whose generation,
// service id (behind a load balancer) and server maxWireVersion it uses.
func (t *Topology) HandleConnError(c *pool.Pooled[*conn.Conn], addr string, err error, phase description.Phase) description.ErrorOutcome {
	var maxWire int32
	if h := c.Conn().Hello(); h != nil {
		maxWire = h.MaxWireVersion
	}
	return t.handleFor(addr, c.Generation(), c.ServiceID(), maxWire, err, phase)
}

// handleFor converts err and handles it; maxWire 0 takes the server's
// current maxWireVersion.
func (t *Topology) handleFor(addr string, generation uint64, serviceID *bson.ObjectID, maxWire int32, err error, phase description.Phase) description.ErrorOutcome {
	if err == nil {
		return description.ErrorOutcome{}
	}
	var pce *pool.PoolClearedError
	if errors.As(err, &pce) {
		// The pool refused because it was cleared: the error that
		// cleared it was handled already.
		return description.ErrorOutcome{}
	}
	s, ok := t.Server(addr)
	if !ok {
		return description.ErrorOutcome{}
	}
	info := errorInfo(err)
	info.Generation = generation
	info.ServiceID = serviceID
	info.MaxWireVersion = maxWire
	var he *conn.HandshakeError
	if errors.As(err, &he) {
		phase = description.PhaseHandshake
		if he.Stage == "auth" {
			phase = description.PhaseAuth
			if info.ServiceID == nil && he.ServiceID != nil && t.cfg.LoadBalanced {
				// Authentication failed after the hello named the service:
				// the load-balancers specification has the error handled
				// for that service. The connection took the service's
				// generation when its hello completed, a moment ago.
				id := *he.ServiceID
				info.ServiceID = &id
				info.Generation = s.pool.ServiceGeneration(&id)
			}
		}
	}
	return t.handle(s, phase, info)
}

// errorInfo lifts what the error rules need out of a connection error.
func errorInfo(err error) description.ErrorInfo {
	info := description.ErrorInfo{Err: err}
	var ne *conn.NetworkError
	if errors.As(err, &ne) {
		info.Network = true
		// The connection labels a network error while connecting or
		// during the hello (CMAP backpressure); one inside an
		// authentication failure has no label.
		info.SystemOverloaded = ne.HasLabel(conn.LabelSystemOverloaded)
		// A network error whose cause is a deadline is a timeout too,
		// however it was built.
		var te interface{ Timeout() bool }
		info.Timeout = ne.Timeout() || errors.Is(ne.Err, context.DeadlineExceeded) || (errors.As(ne.Err, &te) && te.Timeout())
	}
	var ce *conn.CommandError
	var wce *conn.WriteConcernError
	switch {
	case errors.As(err, &ce):
		info.Code, info.Message = ce.Code, ce.Message
		info.SystemOverloaded = info.SystemOverloaded || ce.HasLabel("SystemOverloadedError")
		info.TopologyVersion = topologyVersion(ce.Raw)
	case errors.As(err, &wce):
		info.Code, info.Message = wce.Code, wce.Message
		for _, l := range wce.Labels {
			if l == "SystemOverloadedError" {
				info.SystemOverloaded = true
			}
		}
	}
	return info
}

// topologyVersion reads an error reply's topologyVersion; nil when it has
// none or it is malformed.
func topologyVersion(reply bson.Raw) *handshake.TopologyVersion {
	doc, ok := reply.Lookup("topologyVersion").DocumentOK()
	if !ok {
		return nil
	}
	pid, ok := doc.Lookup("processId").ObjectIDOK()
	if !ok {
		return nil
	}
	counter, ok := doc.Lookup("counter").AsInt64OK()
	if !ok {
		return nil
	}
	return &handshake.TopologyVersion{ProcessID: pid, Counter: counter}
}

// handle decides and acts. Marking Unknown and clearing the pool happen in
// one critical section, as the specification requires, so no selection
// sees the server Unknown with its old connections still usable.
func (t *Topology) handle(s *Server, phase description.Phase, info description.ErrorInfo) description.ErrorOutcome {
	info.Phase = phase
	info.LoadBalanced = t.cfg.LoadBalanced
	if t.cfg.LoadBalanced {
		// Generations are kept per service behind a load balancer.
		info.PoolGeneration = s.pool.ServiceGeneration(info.ServiceID)
	} else {
		info.PoolGeneration = s.pool.Stats().Generation
	}
	if phase == description.PhaseCheck {
		info.Generation = info.PoolGeneration
	}
	t.publishMu.Lock()
	t.mu.Lock()
	if t.closed || t.servers[s.addr] != s {
		t.mu.Unlock()
		t.publishMu.Unlock()
		return description.ErrorOutcome{}
	}
	current, _ := t.desc.Server(s.addr)
	if info.MaxWireVersion == 0 {
		info.MaxWireVersion = current.MaxWireVersion
	}
	out := description.HandleError(current, info)
	if out.Stale {
		t.mu.Unlock()
		t.publishMu.Unlock()
		return out
	}
	var evs []event.TopologyEvent
	if out.MarkUnknown {
		evs = t.applyLocked(out.Server)
	}
	if out.ClearPool {
		s.pool.ClearWithCause(out.ServiceID, out.InterruptInUse, info.Err)
	}
	removed := t.takeRemoved()
	t.mu.Unlock()
	t.finishApply(evs, removed)
	t.publishMu.Unlock()
	if s.monitor != nil {
		if out.CancelCheck {
			s.monitor.cancelCheck()
		}
		if out.RequestCheck {
			s.monitor.requestCheck()
		}
	}
	return out
}
