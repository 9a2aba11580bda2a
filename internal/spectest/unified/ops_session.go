package unified

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
)

// sessionEntity is an explicit session. lsid keeps the session's id once
// read, so that $$sessionLsid still resolves after endSession.
type sessionEntity struct {
	client *clientEntity
	s      *driver.Session

	mu   sync.Mutex
	lsid bson.Raw
}

// id returns the session's lsid, taking its server session if it has none
// yet; after endSession, the one it had.
func (se *sessionEntity) id() bson.Raw {
	se.mu.Lock()
	defer se.mu.Unlock()
	if se.lsid == nil {
		se.lsid = se.s.ID()
	}
	return se.lsid
}

// end ends the session once, keeping its lsid for $$sessionLsid.
func (se *sessionEntity) end(ctx context.Context) {
	se.id()
	se.s.EndSession(ctx)
}

func (se *sessionEntity) closeEntity() { se.end(context.Background()) }

// The transaction operations wait for the driver's transactions API.
var transactionOps = []string{"startTransaction", "commitTransaction", "abortTransaction", "withTransaction"}

func init() {
	knownOps["session"] = append([]string{"endSession", "getSnapshotTime"}, transactionOps...)
	register("session", "endSession", func(ctx context.Context, _ *testRun, obj any, args bson.Raw) (result, error) {
		if err := argKeys(args); err != nil {
			return result{}, err
		}
		obj.(*sessionEntity).end(ctx)
		return result{}, nil
	})
	register("session", "getSnapshotTime", func(_ context.Context, _ *testRun, obj any, args bson.Raw) (result, error) {
		if err := argKeys(args); err != nil {
			return result{}, err
		}
		ts, err := obj.(*sessionEntity).s.SnapshotTime()
		if err != nil {
			return result{}, err
		}
		return result{v: bson.RawValue{Type: bson.TypeTimestamp, Value: bson.AppendTimestamp(nil, ts.T, ts.I)}}, nil
	})
	for _, name := range transactionOps {
		register("session", name, func(context.Context, *testRun, any, bson.Raw) (result, error) {
			return result{}, skipf("operation %s not implemented: the driver has no transactions yet", name)
		})
	}
}

// createSession makes a session entity: {id, client, sessionOptions}.
func (tr *testRun) createSession(id string, def bson.Raw) error {
	if err := checkKeys(def, "id", "client", "sessionOptions"); err != nil {
		return err
	}
	c, err := lookupAs[*clientEntity](tr, def.Lookup("client").StringValue(), "client")
	if err != nil {
		return err
	}
	o := &driver.SessionOptions{}
	if so, ok := def.Lookup("sessionOptions").DocumentOK(); ok {
		if err := checkKeys(so, "causalConsistency", "snapshot", "snapshotTime", "defaultTransactionOptions", "defaultTimeoutMS"); err != nil {
			return fmt.Errorf("sessionOptions: %w", err)
		}
		if b, ok := so.Lookup("causalConsistency").BooleanOK(); ok {
			o.CausalConsistency = &b
		}
		if b, ok := so.Lookup("snapshot").BooleanOK(); ok {
			o.Snapshot = &b
		}
		if v := so.Lookup("snapshotTime"); !v.IsZero() {
			name, ok := v.StringValueOK()
			if !ok {
				return fmt.Errorf("sessionOptions.snapshotTime: want the name of a saved entity, got %s", show(v))
			}
			bv, err := tr.BSONEntity(name)
			if err != nil {
				return fmt.Errorf("sessionOptions.snapshotTime: %w", err)
			}
			t, i, ok := bv.TimestampOK()
			if !ok {
				return fmt.Errorf("sessionOptions.snapshotTime: entity %q is not a timestamp", name)
			}
			o.SnapshotTime = &bson.Timestamp{T: t, I: i}
		}
		if v := so.Lookup("defaultTimeoutMS"); !v.IsZero() {
			n, ok := v.AsInt64OK()
			if !ok {
				return fmt.Errorf("sessionOptions.defaultTimeoutMS: want an integer, got %s", show(v))
			}
			d := time.Duration(n) * time.Millisecond
			o.DefaultTimeout = &d
		}
		if dt, ok := so.Lookup("defaultTransactionOptions").DocumentOK(); ok {
			if err := checkKeys(dt, "readConcern", "writeConcern", "readPreference", "maxCommitTimeMS"); err != nil {
				return fmt.Errorf("sessionOptions.defaultTransactionOptions: %w", err)
			}
			if !dt.Lookup("maxCommitTimeMS").IsZero() {
				return skipf("sessionOptions.defaultTransactionOptions.maxCommitTimeMS: the driver has no transactions yet")
			}
			rc, rp, wc, err := concernsOf(dt, "sessionOptions.defaultTransactionOptions")
			if err != nil {
				return err
			}
			o.DefaultReadConcern, o.DefaultReadPreference, o.DefaultWriteConcern = rc, rp, wc
		}
	}
	s, err := c.c.StartSession(o)
	if err != nil {
		return err
	}
	return tr.add(id, &sessionEntity{client: c, s: s})
}

// sessionContext returns ctx carrying the session entity named by the
// operation's "session" argument, and the arguments without it; without
// one, ctx and args as they are.
func (tr *testRun) sessionContext(ctx context.Context, args bson.Raw) (context.Context, bson.Raw, error) {
	v := args.Lookup("session")
	if v.IsZero() {
		return ctx, args, nil
	}
	id, ok := v.StringValueOK()
	if !ok {
		return nil, nil, invalid("arguments.session", nil, "session must be an entity name, got %s", show(v))
	}
	se, err := lookupAs[*sessionEntity](tr, id, "session")
	if err != nil {
		var sk *skipError
		if errors.As(err, &sk) {
			return nil, nil, err
		}
		return nil, nil, invalid("arguments.session", err, "session")
	}
	st, b := bson.AppendDocumentStart(make([]byte, 0, len(args)))
	it := args.Iter()
	for it.Next() {
		if it.Key() != "session" {
			b = bson.AppendValueElement(b, it.Key(), it.Value())
		}
	}
	b, _ = bson.AppendDocumentEnd(b, st)
	return driver.NewSessionContext(ctx, se.s), b, nil
}

// opSessionDirty asserts that a session is (or is not) dirty.
func opSessionDirty(want bool) specialFunc {
	return func(_ context.Context, tr *testRun, args bson.Raw) error {
		if err := argKeys(args, "session"); err != nil {
			return err
		}
		id, err := reqString(args, "session")
		if err != nil {
			return err
		}
		se, err := lookupAs[*sessionEntity](tr, id, "session")
		if err != nil {
			return err
		}
		if got := se.s.Dirty(); got != want {
			return fmt.Errorf("session %s: dirty is %v, want %v", id, got, want)
		}
		return nil
	}
}

// timeoutContext takes an operation's timeoutMS and timeoutMode
// arguments off args and gives them to the operation through its context
// (driver.WithTimeout, driver.WithTimeoutMode).
func timeoutContext(ctx context.Context, args bson.Raw) (context.Context, bson.Raw, error) {
	v, m := args.Lookup("timeoutMS"), args.Lookup("timeoutMode")
	if v.IsZero() && m.IsZero() {
		return ctx, args, nil
	}
	if !v.IsZero() {
		n, ok := v.AsInt64OK()
		if !ok {
			return nil, nil, invalid("arguments.timeoutMS", nil, "timeoutMS must be an integer, got %s", show(v))
		}
		ctx = driver.WithTimeout(ctx, time.Duration(n)*time.Millisecond)
	}
	if !m.IsZero() {
		mode, ok := m.StringValueOK()
		if !ok {
			return nil, nil, invalid("arguments.timeoutMode", nil, "timeoutMode must be a string, got %s", show(m))
		}
		ctx = driver.WithTimeoutMode(ctx, driver.TimeoutMode(mode))
	}
	st, b := bson.AppendDocumentStart(make([]byte, 0, len(args)))
	it := args.Iter()
	for it.Next() {
		if k := it.Key(); k != "timeoutMS" && k != "timeoutMode" {
			b = bson.AppendValueElement(b, k, it.Value())
		}
	}
	b, _ = bson.AppendDocumentEnd(b, st)
	return ctx, b, nil
}
