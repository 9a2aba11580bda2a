package event

import (
	"context"
	"time"
)

// SelectionMonitor receives the server selection events (the messages of the
// server selection specification's logging section), with the context of
// the operation that selects.
type SelectionMonitor interface {
	SelectionEvent(ctx context.Context, e SelectionEvent)
}

// SelectionEvent is one of *ServerSelectionStarted,
// *ServerSelectionSucceeded, *ServerSelectionFailed or
// *ServerSelectionWaiting.
type SelectionEvent interface {
	// Selection returns the fields every selection event carries.
	Selection() *SelectionFields
	selectionEvent()
}

// SelectionFields are the fields every selection event carries.
type SelectionFields struct {
	Selector    string // the selector, e.g. the read preference, as text
	OperationID int64
	Operation   string // the operation's name, e.g. "find"
	// Topology is the deployment as selection saw it. Events of the same
	// description share it (its slices and pointers): read it, never
	// modify it.
	Topology TopologyDescription
}

// ServerSelectionStarted is sent when selection starts.
type ServerSelectionStarted struct {
	SelectionFields
}

// ServerSelectionWaiting is sent, once per selection, when no suitable
// server was found at first and selection waits for the topology to change.
type ServerSelectionWaiting struct {
	SelectionFields
	RemainingTime time.Duration // what is left of the selection timeout
}

// ServerSelectionSucceeded is sent when a server was selected.
type ServerSelectionSucceeded struct {
	SelectionFields
	Duration   time.Duration // since ServerSelectionStarted
	ServerHost string
	ServerPort int // 0 for a Unix socket
}

// ServerSelectionFailed is sent when selection timed out or found the
// deployment incompatible.
type ServerSelectionFailed struct {
	SelectionFields
	Duration time.Duration // since ServerSelectionStarted
	Failure  error
}

// Selection implements SelectionEvent.
func (f *SelectionFields) Selection() *SelectionFields { return f }

func (*ServerSelectionStarted) selectionEvent()   {}
func (*ServerSelectionWaiting) selectionEvent()   {}
func (*ServerSelectionSucceeded) selectionEvent() {}
func (*ServerSelectionFailed) selectionEvent()    {}
