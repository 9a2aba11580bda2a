package unified

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mongoscope/mongoscope/bson"
)

// The special test operations (object "testRunner").

func init() {
	registerSpecial("failPoint", opFailPoint)
	registerSpecial("targetedFailPoint", opTargetedFailPoint)
	for _, name := range []string{"assertSessionTransactionState", "assertSessionPinned", "assertSessionUnpinned"} {
		registerSpecial(name, opSessionAssertion(name))
	}
	registerSpecial("assertSessionDirty", opSessionDirty(true))
	registerSpecial("assertSessionNotDirty", opSessionDirty(false))
	registerSpecial("assertSameLsidOnLastTwoCommands", opLsidOnLastTwo(true))
	registerSpecial("assertDifferentLsidOnLastTwoCommands", opLsidOnLastTwo(false))
	registerSpecial("assertCollectionExists", opCollectionExists(true))
	registerSpecial("assertCollectionNotExists", opCollectionExists(false))
	registerSpecial("assertIndexExists", opIndexExists(true))
	registerSpecial("assertIndexNotExists", opIndexExists(false))
	registerSpecial("createEntities", opCreateEntities)
	registerSpecial("assertNumberConnectionsCheckedOut", opAssertNumberConnectionsCheckedOut)
	registerSpecial("runOnThread", opRunOnThread)
	registerSpecial("waitForThread", opWaitForThread)
	registerSpecial("waitForEvent", opWaitForEvent)
	registerSpecial("assertEventCount", opAssertEventCount)
	registerSpecial("recordTopologyDescription", opRecordTopologyDescription)
	registerSpecial("assertTopologyType", opAssertTopologyType)
	registerSpecial("waitForPrimaryChange", opWaitForPrimaryChange)
	registerSpecial("wait", opWait)
	registerSpecial("loop", func(context.Context, *testRun, bson.Raw) error {
		return skipf("operation loop not implemented: it serves the drivers' long-running workload executor, and no specification file uses it")
	})
}

// opFailPoint configures a fail point through the client entity, with the
// primary read preference, and records it for disabling after the test.
func opFailPoint(ctx context.Context, tr *testRun, args bson.Raw) error {
	if err := argKeys(args, "failPoint", "client"); err != nil {
		return err
	}
	fp, err := reqDoc(args, "failPoint")
	if err != nil {
		return err
	}
	id, err := reqString(args, "client")
	if err != nil {
		return err
	}
	c, err := lookupAs[*clientEntity](tr, id, "client")
	if err != nil {
		return err
	}
	name, ok := fp.Lookup("configureFailPoint").StringValueOK()
	if !ok || firstKey(fp) != "configureFailPoint" {
		return invalid("arguments.failPoint", nil, "a failPoint is a configureFailPoint command")
	}
	if _, err := c.c.RunCommand(ctx, "admin", fp); err != nil {
		return fmt.Errorf("configureFailPoint %s: %w", name, err)
	}
	tr.mu.Lock()
	tr.failPoints = append(tr.failPoints, failPointRecord{client: c, name: name})
	tr.mu.Unlock()
	return nil
}

func opTargetedFailPoint(_ context.Context, tr *testRun, args bson.Raw) error {
	if err := argKeys(args, "failPoint", "session"); err != nil {
		return err
	}
	if _, err := reqDoc(args, "failPoint"); err != nil {
		return err
	}
	if _, err := reqString(args, "session"); err != nil {
		return err
	}
	return skipf("operation targetedFailPoint not implemented: it targets the mongos a session is pinned to by a transaction, and the driver has no transactions yet")
}

func opSessionAssertion(name string) specialFunc {
	return func(_ context.Context, tr *testRun, args bson.Raw) error {
		if _, err := reqString(args, "session"); err != nil {
			return err
		}
		return skipf("operation %s not implemented: it asserts on a transaction's state or mongos pinning, and the driver has no transactions yet", name)
	}
}

func opLsidOnLastTwo(same bool) specialFunc {
	return func(_ context.Context, tr *testRun, args bson.Raw) error {
		if err := argKeys(args, "client"); err != nil {
			return err
		}
		id, err := reqString(args, "client")
		if err != nil {
			return err
		}
		c, err := lookupAs[*clientEntity](tr, id, "client")
		if err != nil {
			return err
		}
		last := c.rec.lastStarted(2)
		if len(last) < 2 {
			return fmt.Errorf("client %s observed %d commandStartedEvents, need two", id, len(last))
		}
		var lsids [2]bson.RawValue
		for i, cmd := range last {
			v, err := cmd.LookupErr("lsid")
			if err != nil {
				return fmt.Errorf("client %s: command %s has no lsid", id, cmd)
			}
			lsids[i] = v
		}
		if eq := exactEqual(lsids[0], lsids[1], 0); eq != same {
			return fmt.Errorf("client %s: the last two commands have lsids %s and %s; want them %s", id, show(lsids[0]), show(lsids[1]), map[bool]string{true: "the same", false: "different"}[same])
		}
		return nil
	}
}

// opCollectionExists asks listCollections through the internal client.
func opCollectionExists(want bool) specialFunc {
	return func(_ context.Context, tr *testRun, args bson.Raw) error {
		if err := argKeys(args, "collectionName", "databaseName"); err != nil {
			return err
		}
		coll, err := reqString(args, "collectionName")
		if err != nil {
			return err
		}
		db, err := reqString(args, "databaseName")
		if err != nil {
			return err
		}
		docs, err := tr.readAll(db, bson.D{{Key: "listCollections", Value: 1}, {Key: "filter", Value: bson.D{{Key: "name", Value: coll}}}})
		if err != nil {
			return fmt.Errorf("listCollections: %w", err)
		}
		if got := len(docs) > 0; got != want {
			return fmt.Errorf("collection %s.%s exists: %v, want %v", db, coll, got, want)
		}
		return nil
	}
}

// opIndexExists asks listIndexes through the internal client; a missing
// collection has no index.
func opIndexExists(want bool) specialFunc {
	return func(_ context.Context, tr *testRun, args bson.Raw) error {
		if err := argKeys(args, "collectionName", "databaseName", "indexName"); err != nil {
			return err
		}
		coll, err := reqString(args, "collectionName")
		if err != nil {
			return err
		}
		db, err := reqString(args, "databaseName")
		if err != nil {
			return err
		}
		index, err := reqString(args, "indexName")
		if err != nil {
			return err
		}
		docs, err := tr.readAll(db, bson.D{{Key: "listIndexes", Value: coll}})
		if err != nil && !isCode(err, 26) {
			return fmt.Errorf("listIndexes: %w", err)
		}
		got := false
		for _, d := range docs {
			if n, _ := d.Lookup("name").StringValueOK(); n == index {
				got = true
			}
		}
		if got != want {
			return fmt.Errorf("index %s on %s.%s exists: %v, want %v", index, db, coll, got, want)
		}
		return nil
	}
}

func opCreateEntities(_ context.Context, tr *testRun, args bson.Raw) error {
	if err := argKeys(args, "entities"); err != nil {
		return err
	}
	v := args.Lookup("entities")
	if v.IsZero() {
		return invalid("arguments.entities", nil, "entities is required")
	}
	return tr.createEntities(v)
}

func opAssertNumberConnectionsCheckedOut(_ context.Context, tr *testRun, args bson.Raw) error {
	if err := argKeys(args, "client", "connections"); err != nil {
		return err
	}
	id, err := reqString(args, "client")
	if err != nil {
		return err
	}
	want, err := reqInt(args, "connections")
	if err != nil {
		return err
	}
	c, err := lookupAs[*clientEntity](tr, id, "client")
	if err != nil {
		return err
	}
	if got := c.rec.checkedOutNow(); int64(got) != want {
		return fmt.Errorf("client %s has %d connections checked out, want %d", id, got, want)
	}
	return nil
}

func opRunOnThread(ctx context.Context, tr *testRun, args bson.Raw) (err error) {
	if err := argKeys(args, "thread", "operation"); err != nil {
		return err
	}
	var id string
	id, err = reqString(args, "thread")
	if err != nil {
		return err
	}
	op, err := reqDoc(args, "operation")
	if err != nil {
		return err
	}
	th, err := lookupAs[*threadEntity](tr, id, "thread")
	if err != nil {
		return err
	}
	defer func() {
		// Sending on a thread already told to stop.
		if recover() != nil {
			err = fmt.Errorf("thread %s was already waited for", id)
		}
	}()
	select {
	case th.ops <- op:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func opWaitForThread(_ context.Context, tr *testRun, args bson.Raw) error {
	v, err := stringArgs(args, "thread")
	if err != nil {
		return err
	}
	id := v[0]
	th, err := lookupAs[*threadEntity](tr, id, "thread")
	if err != nil {
		return err
	}
	if err := th.stop(10 * time.Second); err != nil {
		var se *skipError
		if errors.As(err, &se) {
			return se
		}
		return fmt.Errorf("thread %s: %w", id, err)
	}
	return nil
}

// eventArgs reads the arguments of waitForEvent and assertEventCount.
func eventArgs(tr *testRun, args bson.Raw) (*clientEntity, bson.Raw, int, error) {
	if err := argKeys(args, "client", "event", "count"); err != nil {
		return nil, nil, 0, err
	}
	id, err := reqString(args, "client")
	if err != nil {
		return nil, nil, 0, err
	}
	ev, err := reqDoc(args, "event")
	if err != nil {
		return nil, nil, 0, err
	}
	n, err := reqInt(args, "count")
	if err != nil {
		return nil, nil, 0, err
	}
	c, err := lookupAs[*clientEntity](tr, id, "client")
	if err != nil {
		return nil, nil, 0, err
	}
	return c, ev, int(n), nil
}

// opWaitForEvent waits, up to the format's 10 s, for count matching
// events, counting those published before it started.
func opWaitForEvent(ctx context.Context, tr *testRun, args bson.Raw) error {
	c, ev, count, err := eventArgs(tr, args)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := countEvents(c, ev, tr)
		if err != nil {
			return err
		}
		if n >= count {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("waitForEvent: client %s published %d of %d events %s within 10s", c.id, n, count, ev)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func opAssertEventCount(_ context.Context, tr *testRun, args bson.Raw) error {
	c, ev, count, err := eventArgs(tr, args)
	if err != nil {
		return err
	}
	n, err := countEvents(c, ev, tr)
	if err != nil {
		return err
	}
	if n != count {
		return fmt.Errorf("assertEventCount: client %s published %d events %s, want %d", c.id, n, ev, count)
	}
	return nil
}

func opRecordTopologyDescription(_ context.Context, tr *testRun, args bson.Raw) error {
	v, err := stringArgs(args, "client", "id")
	if err != nil {
		return err
	}
	cid, id := v[0], v[1]
	c, err := lookupAs[*clientEntity](tr, cid, "client")
	if err != nil {
		return err
	}
	return tr.add(id, &topologyEntity{snap: c.c.Topology()})
}

func opAssertTopologyType(_ context.Context, tr *testRun, args bson.Raw) error {
	v, err := stringArgs(args, "topologyDescription", "topologyType")
	if err != nil {
		return err
	}
	id, want := v[0], v[1]
	td, err := lookupAs[*topologyEntity](tr, id, "topologyDescription")
	if err != nil {
		return err
	}
	if td.snap.Kind != want {
		return fmt.Errorf("topology description %s has type %s, want %s", id, td.snap.Kind, want)
	}
	return nil
}

func opWaitForPrimaryChange(ctx context.Context, tr *testRun, args bson.Raw) error {
	if err := argKeys(args, "client", "priorTopologyDescription", "timeoutMS"); err != nil {
		return err
	}
	cid, err := reqString(args, "client")
	if err != nil {
		return err
	}
	tid, err := reqString(args, "priorTopologyDescription")
	if err != nil {
		return err
	}
	limit := 10 * time.Second
	if !args.Lookup("timeoutMS").IsZero() {
		ms, err := reqInt(args, "timeoutMS")
		if err != nil {
			return err
		}
		limit = time.Duration(ms) * time.Millisecond
	}
	c, err := lookupAs[*clientEntity](tr, cid, "client")
	if err != nil {
		return err
	}
	td, err := lookupAs[*topologyEntity](tr, tid, "topologyDescription")
	if err != nil {
		return err
	}
	prior := ""
	for _, s := range td.snap.Servers {
		if s.Kind == "RSPrimary" {
			prior = s.Address
		}
	}
	deadline := time.Now().Add(limit)
	for {
		for _, s := range c.c.Topology().Servers {
			if s.Kind == "RSPrimary" && s.Address != prior {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("waitForPrimaryChange: client %s found no primary other than %q within %v", cid, prior, limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func opWait(ctx context.Context, tr *testRun, args bson.Raw) error {
	if err := argKeys(args, "ms"); err != nil {
		return err
	}
	ms, err := reqInt(args, "ms")
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Duration(ms) * time.Millisecond):
		return nil
	}
}
