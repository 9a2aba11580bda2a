package event

import "context"

// A Dispatcher fans events out to any number of monitors. Build one with
// NewDispatcher; the zero value and a nil *Dispatcher have no monitors.
//
// Callers check for monitors before building an event, which keeps an
// unmonitored event free:
//
//	if d.Pool() {
//		d.PoolEvent(ctx, &event.ConnectionCheckedIn{Address: addr, ConnectionID: id})
//	}
//
// A Dispatcher is immutable and safe for concurrent use; monitors are called
// synchronously, in the order they were given, on the goroutine that emits
// the event, so they should be quick.
type Dispatcher struct {
	operation []OperationMonitor
	command   []CommandMonitor
	pool      []PoolMonitor
	topology  []TopologyMonitor
	selection []SelectionMonitor
	retry     []RetryMonitor
	unused    []any
}

// NewDispatcher returns a Dispatcher for monitors. Each value is checked for
// each monitor interface of this package and receives every family it
// implements, or, when it is a FamilyFilter, those of them it asks for. A *Dispatcher given here contributes its own monitors. Nil
// values are skipped; values that implement no monitor interface are kept
// aside and reported by Unused, so a caller can refuse them.
func NewDispatcher(monitors ...any) *Dispatcher {
	d := &Dispatcher{}
	for _, m := range monitors {
		if m == nil {
			continue
		}
		if inner, ok := m.(*Dispatcher); ok {
			if inner != nil {
				d.operation = append(d.operation, inner.operation...)
				d.command = append(d.command, inner.command...)
				d.pool = append(d.pool, inner.pool...)
				d.topology = append(d.topology, inner.topology...)
				d.selection = append(d.selection, inner.selection...)
				d.retry = append(d.retry, inner.retry...)
			}
			continue
		}
		want := AllFamilies
		if f, ok := m.(FamilyFilter); ok {
			want = f.EventFamilies()
		}
		used := false
		if x, ok := m.(OperationMonitor); ok {
			used = true
			if want&FamilyOperation != 0 {
				d.operation = append(d.operation, x)
			}
		}
		if x, ok := m.(CommandMonitor); ok {
			used = true
			if want&FamilyCommand != 0 {
				d.command = append(d.command, x)
			}
		}
		if x, ok := m.(PoolMonitor); ok {
			used = true
			if want&FamilyPool != 0 {
				d.pool = append(d.pool, x)
			}
		}
		if x, ok := m.(TopologyMonitor); ok {
			used = true
			if want&FamilyTopology != 0 {
				d.topology = append(d.topology, x)
			}
		}
		if x, ok := m.(SelectionMonitor); ok {
			used = true
			if want&FamilySelection != 0 {
				d.selection = append(d.selection, x)
			}
		}
		if x, ok := m.(RetryMonitor); ok {
			used = true
			if want&FamilyRetry != 0 {
				d.retry = append(d.retry, x)
			}
		}
		if !used {
			d.unused = append(d.unused, m)
		}
	}
	return d
}

// A Family is a set of event families, one bit per monitor interface.
type Family uint8

// The event families.
const (
	FamilyOperation Family = 1 << iota // OperationMonitor
	FamilyCommand                      // CommandMonitor
	FamilyPool                         // PoolMonitor
	FamilyTopology                     // TopologyMonitor
	FamilySelection                    // SelectionMonitor
	FamilyRetry                        // RetryMonitor

	AllFamilies Family = 1<<iota - 1
)

// A FamilyFilter is a monitor that may want fewer event families than it
// implements: a sink switched off (a tracer whose tracing is disabled, a
// logging sink whose components are off) answers with the families it
// would use, and NewDispatcher attaches it to those alone. Since the driver
// builds an event only for a family some monitor takes, a monitor that
// takes none costs nothing, yet is still accepted as a monitor. The answer
// is read once, when the Dispatcher is built.
type FamilyFilter interface {
	EventFamilies() Family
}

// Unused returns the values given to NewDispatcher that implement no
// monitor interface.
func (d *Dispatcher) Unused() []any {
	if d == nil {
		return nil
	}
	return d.unused
}

// Operation reports whether any OperationMonitor is attached.
func (d *Dispatcher) Operation() bool { return d != nil && len(d.operation) > 0 }

// Command reports whether any CommandMonitor is attached.
func (d *Dispatcher) Command() bool { return d != nil && len(d.command) > 0 }

// Pool reports whether any PoolMonitor is attached.
func (d *Dispatcher) Pool() bool { return d != nil && len(d.pool) > 0 }

// Topology reports whether any TopologyMonitor is attached.
func (d *Dispatcher) Topology() bool { return d != nil && len(d.topology) > 0 }

// Selection reports whether any SelectionMonitor is attached.
func (d *Dispatcher) Selection() bool { return d != nil && len(d.selection) > 0 }

// Retry reports whether any RetryMonitor is attached.
func (d *Dispatcher) Retry() bool { return d != nil && len(d.retry) > 0 }

// OperationStarted calls each OperationMonitor in turn, each with the
// context the previous one returned, and returns the last context.
func (d *Dispatcher) OperationStarted(ctx context.Context, e *OperationStarted) context.Context {
	if d == nil {
		return ctx
	}
	for _, m := range d.operation {
		if next := m.OperationStarted(ctx, e); next != nil {
			ctx = next
		}
	}
	return ctx
}

// OperationFinished calls each OperationMonitor.
func (d *Dispatcher) OperationFinished(ctx context.Context, e *OperationFinished) {
	if d == nil {
		return
	}
	for _, m := range d.operation {
		m.OperationFinished(ctx, e)
	}
}

// CommandStarted calls each CommandMonitor in turn, each with the context
// the previous one returned, and returns the last context.
func (d *Dispatcher) CommandStarted(ctx context.Context, e *CommandStarted) context.Context {
	if d == nil {
		return ctx
	}
	for _, m := range d.command {
		if next := m.CommandStarted(ctx, e); next != nil {
			ctx = next
		}
	}
	return ctx
}

// CommandSucceeded calls each CommandMonitor.
func (d *Dispatcher) CommandSucceeded(ctx context.Context, e *CommandSucceeded) {
	if d == nil {
		return
	}
	for _, m := range d.command {
		m.CommandSucceeded(ctx, e)
	}
}

// CommandFailed calls each CommandMonitor.
func (d *Dispatcher) CommandFailed(ctx context.Context, e *CommandFailed) {
	if d == nil {
		return
	}
	for _, m := range d.command {
		m.CommandFailed(ctx, e)
	}
}

// PoolEvent calls each PoolMonitor.
func (d *Dispatcher) PoolEvent(ctx context.Context, e PoolEvent) {
	if d == nil {
		return
	}
	for _, m := range d.pool {
		m.PoolEvent(ctx, e)
	}
}

// TopologyEvent calls each TopologyMonitor.
func (d *Dispatcher) TopologyEvent(ctx context.Context, e TopologyEvent) {
	if d == nil {
		return
	}
	for _, m := range d.topology {
		m.TopologyEvent(ctx, e)
	}
}

// SelectionEvent calls each SelectionMonitor.
func (d *Dispatcher) SelectionEvent(ctx context.Context, e SelectionEvent) {
	if d == nil {
		return
	}
	for _, m := range d.selection {
		m.SelectionEvent(ctx, e)
	}
}

// OperationRetry calls each RetryMonitor.
func (d *Dispatcher) OperationRetry(ctx context.Context, e *OperationRetry) {
	if d == nil {
		return
	}
	for _, m := range d.retry {
		m.OperationRetry(ctx, e)
	}
}
