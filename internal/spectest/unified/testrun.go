package unified

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
)

// testRun is the state of one test: its deployment, internal client,
// entity map and the fail points to disable.
type testRun struct {
	ctx      context.Context
	gapper   GapReporter // nil when the deployments lack nothing
	tracing  func(bool) (any, func() []*Span)
	tc       *Test
	dep      Deployment
	internal *driver.Client
	facts    *serverFacts
	params   map[string]bson.RawValue

	// hasFailPoint says the test configures fail points: client entities
	// that set no heartbeatFrequencyMS then check every 500 ms, as the
	// format allows, so they notice a fail point quickly.
	hasFailPoint bool

	mu             sync.Mutex
	entitiesClosed bool // closeEntities ran
	entities       map[string]any
	order          []string // entity ids in creation order, for clean-up
	failPoints     []failPointRecord
	notes          []string
}

type failPointRecord struct {
	client *clientEntity
	name   string
}

func newTestRun(ctx context.Context, tc *Test, dep Deployment) *testRun {
	return &testRun{ctx: ctx, tc: tc, dep: dep, params: map[string]bson.RawValue{}, entities: map[string]any{}}
}

// gap says why err shows the deployment, not the driver, falling short.
func (tr *testRun) gap(err error) string {
	if err == nil || tr.gapper == nil {
		return ""
	}
	return tr.gapper.Gap(err)
}

func (tr *testRun) note(format string, args ...any) {
	tr.mu.Lock()
	tr.notes = append(tr.notes, fmt.Sprintf(format, args...))
	tr.mu.Unlock()
}

func (tr *testRun) connectInternal() error {
	o := &driver.ClientOptions{}
	if err := o.ApplyURI(tr.dep.InternalURI()); err != nil {
		return fmt.Errorf("internal client: %w", err)
	}
	c, err := driver.Connect(tr.ctx, o)
	if err != nil {
		return fmt.Errorf("internal client: %w", err)
	}
	tr.internal = c
	if err := c.Ping(tr.ctx); err != nil {
		return fmt.Errorf("internal client: ping: %w", err)
	}
	return nil
}

// run executes the test: initialData, createEntities, the operations,
// then the expectations on events, log messages and collections.
func (tr *testRun) run() error {
	if err := checkKeys(tr.tc.File.Doc, "description", "schemaVersion", "runOnRequirements", "createEntities", "initialData", "tests", "_yamlAnchors"); err != nil {
		return invalid("", err, "malformed test file")
	}
	if err := checkKeys(tr.tc.Doc, "description", "runOnRequirements", "skipReason", "operations", "expectEvents", "expectLogMessages", "expectTracingMessages", "outcome"); err != nil {
		return invalid("", err, "malformed test")
	}
	if !tr.tc.Doc.Lookup("expectTracingMessages").IsZero() && tr.tracing == nil {
		return skipf("no tracing hook")
	}
	tr.hasFailPoint = usesFailPoint(tr.tc.Doc.Lookup("operations"))
	if err := tr.initialData(); err != nil {
		return fmt.Errorf("initialData: %w", err)
	}
	if v := tr.tc.File.Doc.Lookup("createEntities"); !v.IsZero() {
		if err := tr.createEntities(v); err != nil {
			return fmt.Errorf("createEntities: %w", err)
		}
	}
	ops, ok := tr.tc.Doc.Lookup("operations").ArrayOK()
	if !ok {
		return errors.New("operations is not an array")
	}
	vals, err := ops.Values()
	if err != nil {
		return err
	}
	for i, v := range vals {
		op, ok := v.DocumentOK()
		if !ok {
			return fmt.Errorf("operations.%d is not a document", i)
		}
		if err := tr.operation(op); err != nil {
			var se *skipError
			if errors.As(err, &se) {
				return err
			}
			return fmt.Errorf("operations.%d (%s on %s): %w", i, op.Lookup("name").StringValue(), op.Lookup("object").StringValue(), err)
		}
	}
	// "If any of the operation's test assertions fail, the entire test
	// case MUST fail as well": threads not waited for are waited for now.
	if err := tr.stopThreads(); err != nil {
		return err
	}
	// Listeners stop here: what is published during clean-up is not part
	// of the test.
	tr.settleLogs()
	snaps := tr.snapshotClients()
	if err := tr.disableFailPoints(); err != nil {
		return err
	}
	if err := tr.expectEvents(snaps); err != nil {
		return err
	}
	if err := tr.expectLogMessages(snaps); err != nil {
		return err
	}
	if err := tr.expectTracingMessages(snaps); err != nil {
		return err
	}
	return tr.outcome()
}

// usesFailPoint looks for failPoint and targetedFailPoint operations,
// including those scheduled on threads.
func usesFailPoint(ops bson.RawValue) bool {
	arr, ok := ops.ArrayOK()
	if !ok {
		return false
	}
	vals, _ := arr.Values()
	for _, v := range vals {
		d, _ := v.DocumentOK()
		switch d.Lookup("name").StringValue() {
		case "failPoint", "targetedFailPoint":
			return true
		case "runOnThread":
			if inner, ok := d.Lookup("arguments", "operation").DocumentOK(); ok {
				if n := inner.Lookup("name").StringValue(); n == "failPoint" || n == "targetedFailPoint" {
					return true
				}
			}
		}
	}
	return false
}

func (tr *testRun) initialData() error {
	arr, ok := tr.tc.File.Doc.Lookup("initialData").ArrayOK()
	if !ok {
		return nil
	}
	vals, err := arr.Values()
	if err != nil {
		return err
	}
	majority := bson.D{{Key: "w", Value: "majority"}}
	for i, v := range vals {
		cd, ok := v.DocumentOK()
		if !ok {
			return fmt.Errorf("%d: not a document", i)
		}
		if err := checkKeys(cd, "collectionName", "databaseName", "createOptions", "documents"); err != nil {
			return fmt.Errorf("%d: %w", i, err)
		}
		db, _ := cd.Lookup("databaseName").StringValueOK()
		coll, _ := cd.Lookup("collectionName").StringValueOK()
		for _, name := range []string{coll, "enxcol_." + coll + ".esc", "enxcol_." + coll + ".ecoc"} {
			if _, err := tr.internal.RunCommand(tr.ctx, db, bson.D{{Key: "drop", Value: name}, {Key: "writeConcern", Value: majority}}); err != nil && !isCode(err, 26) {
				return fmt.Errorf("drop %s.%s: %w", db, name, err)
			}
		}
		docs, _ := cd.Lookup("documents").ArrayOK()
		dv, err := docs.Values()
		if err != nil {
			return err
		}
		opts, hasOpts := cd.Lookup("createOptions").DocumentOK()
		if hasOpts || len(dv) == 0 {
			cmd := bson.D{{Key: "create", Value: coll}}
			if hasOpts {
				elems, _ := opts.Elements()
				for _, e := range elems {
					cmd = append(cmd, bson.E{Key: e.Key(), Value: e.Value()})
				}
			}
			cmd = append(cmd, bson.E{Key: "writeConcern", Value: majority})
			if _, err := tr.internal.RunCommand(tr.ctx, db, cmd); err != nil {
				return fmt.Errorf("create %s.%s: %w", db, coll, err)
			}
		}
		if len(dv) > 0 {
			cmd := bson.D{{Key: "insert", Value: coll}, {Key: "documents", Value: cd.Lookup("documents")}, {Key: "writeConcern", Value: majority}}
			if _, err := tr.internal.RunCommand(tr.ctx, db, cmd); err != nil {
				return fmt.Errorf("insert into %s.%s: %w", db, coll, err)
			}
		}
	}
	return nil
}

// isCode reports whether err is a server error with the given code.
func isCode(err error, code int32) bool {
	var ce *driver.CommandError
	return errors.As(err, &ce) && ce.Code == code
}

// outcome checks the collections' contents after the test, read through
// the internal client sorted by _id, with exact matching.
func (tr *testRun) outcome() error {
	arr, ok := tr.tc.Doc.Lookup("outcome").ArrayOK()
	if !ok {
		return nil
	}
	vals, err := arr.Values()
	if err != nil {
		return err
	}
	for i, v := range vals {
		cd, _ := v.DocumentOK()
		db, _ := cd.Lookup("databaseName").StringValueOK()
		coll, _ := cd.Lookup("collectionName").StringValueOK()
		want, _ := cd.Lookup("documents").ArrayOK()
		wantVals, err := want.Values()
		if err != nil {
			return err
		}
		got, err := tr.readAll(db, bson.D{
			{Key: "find", Value: coll}, {Key: "filter", Value: bson.D{}}, {Key: "sort", Value: bson.D{{Key: "_id", Value: 1}}},
			{Key: "readConcern", Value: bson.D{{Key: "level", Value: "local"}}},
		})
		if err != nil {
			return fmt.Errorf("outcome.%d: reading %s.%s: %w", i, db, coll, err)
		}
		if len(got) != len(wantVals) {
			return fmt.Errorf("outcome.%d: %s.%s holds %d documents, want %d: %v", i, db, coll, len(got), len(wantVals), got)
		}
		for j := range got {
			w := wantVals[j]
			g := bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: got[j]}
			if !exactEqual(w, g, 0) {
				return fmt.Errorf("outcome.%d: %s.%s document %d is %s, want %s", i, db, coll, j, show(g), show(w))
			}
		}
	}
	return nil
}

// readAll runs a cursor command through the internal client and returns
// every document, following getMore.
func (tr *testRun) readAll(db string, cmd bson.D) ([]bson.Raw, error) {
	reply, err := tr.internal.RunCommand(tr.ctx, db, cmd)
	if err != nil {
		return nil, err
	}
	var out []bson.Raw
	batch := "firstBatch"
	for {
		cur, _ := reply.Lookup("cursor").DocumentOK()
		arr, _ := cur.Lookup(batch).ArrayOK()
		vals, err := arr.Values()
		if err != nil {
			return nil, err
		}
		for _, v := range vals {
			out = append(out, v.Document())
		}
		id, _ := cur.Lookup("id").AsInt64OK()
		if id == 0 {
			return out, nil
		}
		ns, _ := cur.Lookup("ns").StringValueOK()
		coll := ns
		if i := len(db) + 1; len(ns) > i {
			coll = ns[i:]
		}
		reply, err = tr.internal.RunCommand(tr.ctx, db, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: coll}})
		if err != nil {
			return nil, err
		}
		batch = "nextBatch"
	}
}

func (tr *testRun) disableFailPoints() error {
	tr.mu.Lock()
	fps := tr.failPoints
	tr.failPoints = nil
	tr.mu.Unlock()
	var errs []error
	for _, fp := range fps {
		c := tr.internal
		if fp.client != nil && !fp.client.isClosed() {
			c = fp.client.c
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := c.RunCommand(ctx, "admin", bson.D{{Key: "configureFailPoint", Value: fp.name}, {Key: "mode", Value: "off"}})
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("disabling fail point %s: %w", fp.name, err))
		}
	}
	return errors.Join(errs...)
}

// cleanup ends threads, closes cursors and clients, and the internal
// client. The deployment is closed by the caller.
func (tr *testRun) cleanup() {
	_ = tr.disableFailPoints()
	tr.closeEntities()
	tr.mu.Lock()
	order := append([]string(nil), tr.order...)
	ents := tr.entities
	tr.mu.Unlock()
	for i := len(order) - 1; i >= 0; i-- {
		if c, ok := ents[order[i]].(*clientEntity); ok {
			c.close()
		}
	}
	if tr.internal != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_ = tr.internal.Disconnect(ctx)
		cancel()
	}
}

// closeEntities ends threads and closes cursors and sessions, once: what
// the clients still hold afterwards is what the test leaked.
func (tr *testRun) closeEntities() {
	tr.mu.Lock()
	if tr.entitiesClosed {
		tr.mu.Unlock()
		return
	}
	tr.entitiesClosed = true
	order := append([]string(nil), tr.order...)
	ents := tr.entities
	tr.mu.Unlock()
	for i := len(order) - 1; i >= 0; i-- {
		switch e := ents[order[i]].(type) {
		case *threadEntity:
			e.stop(5 * time.Second)
		case closer:
			e.closeEntity()
		}
	}
}

// checkClients closes the entities that hold sessions (cursors, sessions,
// threads) and runs check on each client entity still connected.
func (tr *testRun) checkClients(check func(*driver.Client) error) error {
	tr.closeEntities()
	tr.mu.Lock()
	order := append([]string(nil), tr.order...)
	ents := tr.entities
	tr.mu.Unlock()
	var errs []error
	for _, id := range order {
		if c, ok := ents[id].(*clientEntity); ok && !c.isClosed() {
			if err := check(c.c); err != nil {
				errs = append(errs, fmt.Errorf("client %s after the test: %w", id, err))
			}
		}
	}
	return errors.Join(errs...)
}

// settleLogs lets log messages catch up with the events the test waited
// for. A client's monitors see an event before its logging sink does (the
// sink is the last of its monitors), so a waitForEvent may return while
// the matching message is still being written on the emitting goroutine.
// It waits until no client logs anything new for 25 ms, at most 500 ms.
func (tr *testRun) settleLogs() {
	count := func() (n int, observing bool) {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		for _, e := range tr.entities {
			if c, ok := e.(*clientEntity); ok && c.log != nil {
				observing = true
				n += c.log.h.count()
			}
		}
		return n, observing
	}
	n, observing := count()
	if !observing {
		return
	}
	deadline := time.Now().Add(500 * time.Millisecond)
	for time.Now().Before(deadline) {
		time.Sleep(25 * time.Millisecond)
		m, _ := count()
		if m == n {
			return
		}
		n = m
	}
}

func (tr *testRun) stopThreads() error {
	tr.mu.Lock()
	var ths []*threadEntity
	for _, id := range tr.order {
		if th, ok := tr.entities[id].(*threadEntity); ok {
			ths = append(ths, th)
		}
	}
	tr.mu.Unlock()
	for _, th := range ths {
		if err := th.stop(10 * time.Second); err != nil {
			var se *skipError
			if errors.As(err, &se) {
				return se
			}
			return fmt.Errorf("a thread failed: %w", err)
		}
	}
	return nil
}

// closer is an entity that holds server resources (a cursor).
type closer interface{ closeEntity() }

// lookup returns entity id, or an error naming it.
func (tr *testRun) lookup(id string) (any, error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	e, ok := tr.entities[id]
	if !ok {
		return nil, fmt.Errorf("entity %q is undefined", id)
	}
	if u, ok := e.(*unsupportedEntity); ok {
		return nil, &skipError{reason: u.reason}
	}
	return e, nil
}

func lookupAs[T any](tr *testRun, id, kind string) (T, error) {
	var zero T
	e, err := tr.lookup(id)
	if err != nil {
		return zero, err
	}
	v, ok := e.(T)
	if !ok {
		return zero, fmt.Errorf("entity %q is a %s, not a %s", id, entityKind(e), kind)
	}
	return v, nil
}

// add stores an entity; a name already in use is an error.
func (tr *testRun) add(id string, e any) error {
	if id == "" {
		return errors.New("an entity needs an id")
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if _, ok := tr.entities[id]; ok {
		return fmt.Errorf("entity %q is already defined", id)
	}
	tr.entities[id] = e
	tr.order = append(tr.order, id)
	return nil
}

// BSONEntity implements Entities for the matcher.
func (tr *testRun) BSONEntity(id string) (bson.RawValue, error) {
	e, err := tr.lookup(id)
	if err != nil {
		return bson.RawValue{}, err
	}
	switch e := e.(type) {
	case *bsonEntity:
		return e.v, nil
	case *eventListEntity:
		return e.value(), nil
	}
	return bson.RawValue{}, fmt.Errorf("entity %q is a %s, not a BSON value", id, entityKind(e))
}

// SessionLsid implements Entities for the matcher: the session entity's
// lsid, also after endSession.
func (tr *testRun) SessionLsid(id string) (bson.Raw, error) {
	e, err := tr.lookup(id)
	if err != nil {
		return nil, err
	}
	se, ok := e.(*sessionEntity)
	if !ok {
		return nil, fmt.Errorf("entity %q is a %s, not a session", id, entityKind(e))
	}
	if lsid := se.id(); lsid != nil {
		return lsid, nil
	}
	return nil, fmt.Errorf("session %q has no lsid", id)
}

func itoa(i int) string { return strconv.Itoa(i) }

// namedDatabases are the databases a test's file names: those of its
// database entities and initialData, and of the test's outcome, in order
// of first mention.
func namedDatabases(file, test bson.Raw) []string {
	var names []string
	seen := map[string]bool{}
	add := func(name string) {
		if name != "" && !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	each := func(v bson.RawValue, f func(d bson.Raw)) {
		arr, _ := v.ArrayOK()
		vals, _ := arr.Values()
		for _, x := range vals {
			if d, ok := x.DocumentOK(); ok {
				f(d)
			}
		}
	}
	each(file.Lookup("createEntities"), func(d bson.Raw) {
		add(d.Lookup("database", "databaseName").StringValue())
	})
	each(file.Lookup("initialData"), func(d bson.Raw) { add(d.Lookup("databaseName").StringValue()) })
	each(test.Lookup("outcome"), func(d bson.Raw) { add(d.Lookup("databaseName").StringValue()) })
	return names
}

// dropNamedDatabases drops the databases the test names, so that a test
// on a long-lived server (SharedServer) starts clean. The server's own
// databases are never dropped.
func (tr *testRun) dropNamedDatabases() error {
	for _, db := range namedDatabases(tr.tc.File.Doc, tr.tc.Doc) {
		switch db {
		case "admin", "config", "local":
			continue
		}
		if _, err := tr.internal.RunCommand(tr.ctx, db, bson.D{{Key: "dropDatabase", Value: 1}}); err != nil {
			return fmt.Errorf("dropping database %s before the test: %w", db, err)
		}
	}
	return nil
}
