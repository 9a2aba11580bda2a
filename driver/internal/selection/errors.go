package selection

import (
	"errors"
	"fmt"
	"time"
)

// Error reports an invalid read preference: Field names the component
// ("mode", "tagSets" or "maxStalenessSeconds") and Reason says what is wrong.
type Error struct {
	Field  string
	Reason string
}

func (e *Error) Error() string {
	return "selection: invalid read preference " + e.Field + ": " + e.Reason
}

// ErrTimeout is wrapped by a SelectionError that ran out of
// serverSelectionTimeoutMS (a context deadline wraps
// context.DeadlineExceeded instead).
var ErrTimeout = errors.New("server selection timeout")

// ErrSourceClosed is wrapped by a SelectionError that ended because the
// source closed (Options.Closed) while selection waited.
var ErrSourceClosed = errors.New("topology closed")

// SelectionError reports a failed selection: an invalid read preference, an
// incompatible topology, a timeout or a cancelled context. It carries the
// topology as last seen, summarised without credentials.
type SelectionError struct {
	// Selector describes what was asked for.
	Selector string
	// Topology is the last topology seen, as Summary renders it.
	Topology string
	// TimedOut is true when serverSelectionTimeoutMS or the context's
	// deadline ran out before a server became suitable.
	TimedOut bool
	// Waited is how long selection took before failing.
	Waited time.Duration
	// Err is the cause: a *Error, the topology's compatibility error,
	// ErrTimeout, ErrSourceClosed, or the context's error.
	Err error
}

func (e *SelectionError) Error() string {
	what := "server selection failed"
	if e.TimedOut {
		what = fmt.Sprintf("server selection timed out after %s", e.Waited.Round(time.Millisecond))
	}
	return fmt.Sprintf("%s for %s: %v; topology: %s", what, e.Selector, e.Err, e.Topology)
}

// Unwrap returns the cause.
func (e *SelectionError) Unwrap() error { return e.Err }

// Timeout reports whether selection ran out of time, so that net.Error-style
// checks work.
func (e *SelectionError) Timeout() bool { return e.TimedOut }
