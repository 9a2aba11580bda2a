package topology

import (
	"context"
	"time"

	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/selection"
	"github.com/mongoscope/mongoscope/driver/internal/topology/description"
)

// Op identifies the operation a selection is for, in the selection events.
type Op struct {
	Name string // e.g. "find", "insert", "ping"
	ID   int64  // the operation id its command events carry
}

// SelectFor is Select with the server selection events of the logging
// specification: ServerSelectionStarted, ServerSelectionWaiting once if no
// server was suitable at first, then ServerSelectionSucceeded or
// ServerSelectionFailed. They carry ctx, so a monitor can put the wait on
// the caller's trace. Without a selection monitor it is Select. minRTT is
// the chosen server's minimum round trip time read during selection (see
// selectWith), which a monitor resetting the server afterwards does not
// change: client-side operation timeouts derive maxTimeMS from it (CSOT,
// "Command Execution").
func (t *Topology) SelectFor(ctx context.Context, sel selection.Selector, op Op) (s *Server, minRTT time.Duration, err error) {
	d := t.cfg.Events
	if !d.Selection() {
		return t.selectWith(ctx, sel, nil)
	}
	f := event.SelectionFields{
		Selector:    sel.String(),
		OperationID: op.ID,
		Operation:   op.Name,
		Topology:    t.eventDescription(),
	}
	start := time.Now()
	d.SelectionEvent(ctx, &event.ServerSelectionStarted{SelectionFields: f})
	s, minRTT, err = t.selectWith(ctx, sel, func(_ description.TopologyDescription, remaining time.Duration) {
		w := f
		w.Topology = t.eventDescription()
		d.SelectionEvent(ctx, &event.ServerSelectionWaiting{SelectionFields: w, RemainingTime: remaining})
	})
	f.Topology = t.eventDescription()
	if err != nil {
		d.SelectionEvent(ctx, &event.ServerSelectionFailed{SelectionFields: f, Failure: err, Duration: time.Since(start)})
		return nil, 0, err
	}
	ok := &event.ServerSelectionSucceeded{SelectionFields: f, Duration: time.Since(start)}
	ok.ServerHost, ok.ServerPort = event.SplitAddress(s.Address())
	d.SelectionEvent(ctx, ok)
	return s, minRTT, nil
}

// waitFunc is selection.Options.OnWait.
type waitFunc = func(t description.TopologyDescription, remaining time.Duration)

// Current implements selection.Source. The description is the topology's
// own immutable snapshot: selection reads it without a copy or a lock.
func (t *Topology) Current() (description.TopologyDescription, <-chan struct{}) {
	sn := t.snap.Load()
	return sn.desc, sn.changed
}

// OperationCount implements selection.Source: the operations in progress
// on the server at addr, 0 when the topology has no such server.
func (t *Topology) OperationCount(addr string) int64 {
	s := t.snap.Load().servers[addr]
	if s == nil {
		return 0
	}
	return s.ops.Load()
}

// RequestImmediateCheck implements selection.Source: every monitor checks
// its server now, or as soon as minHeartbeatFrequency allows.
func (t *Topology) RequestImmediateCheck() {
	for _, s := range t.snap.Load().servers {
		if s.monitor != nil {
			s.monitor.requestCheck()
		}
	}
}

// Select chooses a server for sel (see selection.Select) and counts one
// operation in progress on it; the caller calls EndOperation when done.
func (t *Topology) Select(ctx context.Context, sel selection.Selector) (*Server, error) {
	s, _, err := t.selectWith(ctx, sel, nil)
	return s, err
}

// selectWith is Select with selection.Options.OnWait; it also returns the
// chosen server's minimum round trip time as selection saw it.
func (t *Topology) selectWith(ctx context.Context, sel selection.Selector, onWait waitFunc) (*Server, time.Duration, error) {
	opts := selection.Options{
		Timeout:            t.cfg.ServerSelectionTimeout,
		LocalThreshold:     t.cfg.LocalThreshold,
		HeartbeatFrequency: t.cfg.HeartbeatFrequency,
		Closed:             t.closing.Done(), // Close ends a waiting selection
		OnWait:             onWait,
	}
	for {
		if t.closing.Err() != nil {
			return nil, 0, ErrClosed
		}
		chosen, err := selection.Select(ctx, t, sel, opts)
		if err != nil {
			if t.closing.Err() != nil {
				return nil, 0, ErrClosed
			}
			return nil, 0, err
		}
		if s := t.snap.Load().servers[chosen.Address]; s != nil {
			s.ops.Add(1)
			// The description's minRoundTripTime is set when a check
			// completes, which under the streaming protocol is every
			// heartbeatFrequencyMS or later, while the RTT task's samples
			// come in between: the larger of the two, both read now,
			// during selection, is as fresh as the RTT task and immune,
			// like the description, to a reset after selection.
			return s, max(chosen.MinRoundTripTime, s.rtt.Min()), nil
		}
		// The server was removed between selection and lookup: select
		// again from the newer topology.
	}
}
