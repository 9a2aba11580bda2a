package topology

import (
	"context"
	"time"

	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/driver/internal/selection"
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
// the caller's trace. Without a selection monitor it is Select.
func (t *Topology) SelectFor(ctx context.Context, sel selection.Selector, op Op) (*Server, error) {
	d := t.cfg.Events
	if !d.Selection() {
		return t.Select(ctx, sel)
	}
	f := event.SelectionFields{
		Selector:    sel.String(),
		OperationID: op.ID,
		Operation:   op.Name,
		Topology:    eventTopology(t.Description()),
	}
	d.SelectionEvent(ctx, &event.ServerSelectionStarted{SelectionFields: f})
	s, err := t.selectWith(ctx, sel, func(_ selection.Topology, remaining time.Duration) {
		w := f
		w.Topology = eventTopology(t.Description())
		d.SelectionEvent(ctx, &event.ServerSelectionWaiting{SelectionFields: w, RemainingTime: remaining})
	})
	f.Topology = eventTopology(t.Description())
	if err != nil {
		d.SelectionEvent(ctx, &event.ServerSelectionFailed{SelectionFields: f, Failure: err})
		return nil, err
	}
	ok := &event.ServerSelectionSucceeded{SelectionFields: f}
	ok.ServerHost, ok.ServerPort = event.SplitAddress(s.Address())
	d.SelectionEvent(ctx, ok)
	return s, nil
}

// waitFunc is selection.Options.OnWait.
type waitFunc = func(t selection.Topology, remaining time.Duration)
