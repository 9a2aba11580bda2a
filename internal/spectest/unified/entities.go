package unified

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/driver/logging"
)

// entityKind names an entity's type as operations are registered under
// it: "client", "database", "collection", "thread", "cursor", "bson",
// "topologyDescription".
func entityKind(e any) string {
	switch e := e.(type) {
	case *clientEntity:
		return "client"
	case *databaseEntity:
		return "database"
	case *collectionEntity:
		return "collection"
	case *threadEntity:
		return "thread"
	case *cursorEntity:
		return "cursor"
	case *bsonEntity, *eventListEntity:
		return "bson"
	case *topologyEntity:
		return "topologyDescription"
	case *sessionEntity:
		return "session"
	case *unsupportedEntity:
		return e.kind
	}
	return fmt.Sprintf("%T", e)
}

// The entities whose driver feature does not exist yet: the test that
// defines one is skipped with this reason.
var unsupportedEntities = map[string]string{
	"bucket":           "bucket entities: the driver has no GridFS API yet",
	"clientEncryption": "clientEncryption entities: the driver has no client-side field level encryption",
}

// The entity each entity kind's definition names, which must exist.
var entityParent = map[string][2]string{
	"database":         {"client", "client"},
	"collection":       {"database", "database"},
	"session":          {"client", "client"},
	"bucket":           {"database", "database"},
	"clientEncryption": {"clientEncryptionOpts", "keyVaultClient"},
}

func (tr *testRun) createEntities(v bson.RawValue) error {
	arr, ok := v.ArrayOK()
	if !ok {
		return errors.New("not an array")
	}
	vals, err := arr.Values()
	if err != nil {
		return err
	}
	for i, ev := range vals {
		d, ok := ev.DocumentOK()
		if !ok {
			return fmt.Errorf("%d: not a document", i)
		}
		elems, err := d.Elements()
		if err != nil {
			return err
		}
		if len(elems) != 1 {
			return fmt.Errorf("%d: an entity has exactly one key, got %d", i, len(elems))
		}
		kind := elems[0].Key()
		def, ok := elems[0].Value().DocumentOK()
		if !ok {
			return fmt.Errorf("%d: %s is not a document", i, kind)
		}
		if err := tr.createEntity(kind, def); err != nil {
			var se *skipError
			if errors.As(err, &se) {
				return err
			}
			id, _ := def.Lookup("id").StringValueOK()
			return fmt.Errorf("%s %q: %w", kind, id, err)
		}
	}
	return nil
}

func (tr *testRun) createEntity(kind string, def bson.Raw) error {
	id, ok := def.Lookup("id").StringValueOK()
	if !ok {
		return errors.New("id is required")
	}
	// An undefined parent is an error even for the kinds the runner
	// refuses, so that a malformed file never passes as skipped.
	if p, ok := entityParent[kind]; ok {
		ref, _ := def.Lookup(p[0]).StringValueOK()
		if p[0] == "clientEncryptionOpts" {
			ref, _ = def.Lookup(p[0], p[1]).StringValueOK()
		}
		if _, err := tr.lookup(ref); err != nil {
			return fmt.Errorf("%s: %w", p[1], err)
		}
	}
	if reason, ok := unsupportedEntities[kind]; ok {
		// Kept as a placeholder: a test that never uses it runs, one that
		// does is skipped with the reason.
		return tr.add(id, &unsupportedEntity{kind: kind, reason: reason})
	}
	switch kind {
	case "client":
		return tr.createClient(id, def)
	case "session":
		return tr.createSession(id, def)
	case "database":
		if err := checkKeys(def, "id", "client", "databaseName", "databaseOptions"); err != nil {
			return err
		}
		c, err := lookupAs[*clientEntity](tr, def.Lookup("client").StringValue(), "client")
		if err != nil {
			return err
		}
		name, ok := def.Lookup("databaseName").StringValueOK()
		if !ok {
			return errors.New("databaseName is required")
		}
		opts, _ := def.Lookup("databaseOptions").DocumentOK()
		if err := checkOptions(opts); err != nil {
			return fmt.Errorf("databaseOptions: %w", err)
		}
		rc, rp, wc, err := concernsOf(opts, "databaseOptions")
		if err != nil {
			return err
		}
		to, err := timeoutOf(opts, "databaseOptions")
		if err != nil {
			return err
		}
		db := c.c.Database(name, &driver.DatabaseOptions{ReadConcern: rc, ReadPreference: rp, WriteConcern: wc, Timeout: to})
		return tr.add(id, &databaseEntity{client: c, name: name, opts: opts, db: db})
	case "collection":
		if err := checkKeys(def, "id", "database", "collectionName", "collectionOptions"); err != nil {
			return err
		}
		db, err := lookupAs[*databaseEntity](tr, def.Lookup("database").StringValue(), "database")
		if err != nil {
			return err
		}
		name, ok := def.Lookup("collectionName").StringValueOK()
		if !ok {
			return errors.New("collectionName is required")
		}
		opts, _ := def.Lookup("collectionOptions").DocumentOK()
		if err := checkOptions(opts); err != nil {
			return fmt.Errorf("collectionOptions: %w", err)
		}
		rc, rp, wc, err := concernsOf(opts, "collectionOptions")
		if err != nil {
			return err
		}
		to, err := timeoutOf(opts, "collectionOptions")
		if err != nil {
			return err
		}
		coll := db.db.Collection(name, &driver.CollectionOptions{ReadConcern: rc, ReadPreference: rp, WriteConcern: wc, Timeout: to})
		return tr.add(id, &collectionEntity{db: db, name: name, opts: opts, coll: coll})
	case "thread":
		if err := checkKeys(def, "id"); err != nil {
			return err
		}
		th := newThread(tr)
		if err := tr.add(id, th); err != nil {
			th.stop(time.Second)
			return err
		}
		return nil
	}
	return fmt.Errorf("unknown entity type %q", kind)
}

// checkOptions checks a collectionOrDatabaseOptions document.
func checkOptions(opts bson.Raw) error {
	if opts == nil {
		return nil
	}
	return checkKeys(opts, "readConcern", "readPreference", "timeoutMS", "writeConcern")
}

// clientEntity is a client and what it observed.
type clientEntity struct {
	id  string
	c   *driver.Client
	rec *recorder
	log *logCapture // nil unless observeLogMessages
	// tracing is nil unless observeTracingMessages (and a Runner.Tracing
	// hook).
	tracing *tracingClient

	mu     sync.Mutex
	closed bool
}

func (c *clientEntity) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// close disconnects the client once.
func (c *clientEntity) close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.c.Disconnect(ctx)
}

type databaseEntity struct {
	client *clientEntity
	name   string
	opts   bson.Raw
	db     *driver.Database
}

type collectionEntity struct {
	db   *databaseEntity
	name string
	opts bson.Raw
	coll *driver.Collection
}

// unsupportedEntity stands for an entity whose driver feature does not
// exist yet: using it skips the test with the reason.
type unsupportedEntity struct {
	kind, reason string
}

// bsonEntity is a value saved with saveResultAsEntity.
type bsonEntity struct{ v bson.RawValue }

// topologyEntity is a recorded TopologyDescription.
type topologyEntity struct{ snap driver.TopologySnapshot }

// cursorEntity is a find or command cursor saved with saveResultAsEntity.
// next returns the next document, (nil, nil) when the cursor is
// exhausted; tryNext does at most one round trip.
type cursorEntity struct {
	next    func(ctx context.Context) (bson.Raw, error)
	tryNext func(ctx context.Context) (bson.Raw, bool, error)
	close   func(ctx context.Context) error
	once    sync.Once
}

func (c *cursorEntity) closeEntity() { c.closeWith(context.Background()) }

// closeWith closes the cursor with ctx's values (an operation-level
// timeoutMS) under a 10 s bound.
func (c *cursorEntity) closeWith(ctx context.Context) {
	c.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = c.close(ctx)
	})
}

var clientKeys = []string{
	"id", "uriOptions", "useMultipleMongoses", "observeEvents", "ignoreCommandMonitoringEvents",
	"storeEventsAsEntities", "observeLogMessages", "observeTracingMessages", "serverApi",
	"observeSensitiveCommands", "autoEncryptOpts", "awaitMinPoolSizeMS",
}

func (tr *testRun) createClient(id string, def bson.Raw) error {
	if err := checkKeys(def, clientKeys...); err != nil {
		return err
	}
	if _, ok := def.Lookup("autoEncryptOpts").DocumentOK(); ok {
		return skipf("autoEncryptOpts: the driver has no client-side field level encryption")
	}
	var multi *bool
	if b, ok := def.Lookup("useMultipleMongoses").BooleanOK(); ok {
		multi = &b
	}
	base := tr.dep.ClientURI(multi)
	if multi != nil && *multi && tr.dep.Topology() == "sharded" && len(strings.Split(uriHosts(base), ",")) < 2 {
		// "If true and the topology is a sharded cluster, the test runner
		// MUST assert that this MongoClient connects to multiple mongos."
		return fmt.Errorf("useMultipleMongoses: the deployment gives one mongos (%s)", base)
	}
	uriOpts, _ := def.Lookup("uriOptions").DocumentOK()
	uri, minPool, err := applyURIOptions(base, uriOpts, tr.hasFailPoint)
	if err != nil {
		return err
	}
	rec, err := newRecorder(def)
	if err != nil {
		return err
	}
	o := &driver.ClientOptions{Monitors: []any{rec}}
	mon, tc, err := tr.newTracing(def)
	if err != nil {
		return err
	}
	if mon != nil {
		o.Monitors = append(o.Monitors, mon)
	}
	if err := o.ApplyURI(uri); err != nil {
		return err
	}
	if api, ok := def.Lookup("serverApi").DocumentOK(); ok {
		if err := checkKeys(api, "version", "strict", "deprecationErrors"); err != nil {
			return fmt.Errorf("serverApi: %w", err)
		}
		sa := &driver.ServerAPI{Version: api.Lookup("version").StringValue()}
		if b, ok := api.Lookup("strict").BooleanOK(); ok {
			sa.Strict = &b
		}
		if b, ok := api.Lookup("deprecationErrors").BooleanOK(); ok {
			sa.DeprecationErrors = &b
		}
		o.ServerAPI = sa
	}
	ce := &clientEntity{id: id, rec: rec, tracing: tc}
	if obs, ok := def.Lookup("observeLogMessages").DocumentOK(); ok {
		lc, err := newLogCapture(obs)
		if err != nil {
			return fmt.Errorf("observeLogMessages: %w", err)
		}
		ce.log = lc
		o.Logging = lc.options()
	}
	c, err := driver.Connect(tr.ctx, o)
	if err != nil {
		return err
	}
	ce.c = c
	if err := tr.add(id, ce); err != nil {
		ce.close()
		return err
	}
	for _, st := range rec.stores {
		if err := tr.add(st.id, st); err != nil {
			return err
		}
	}
	if ms, ok := def.Lookup("awaitMinPoolSizeMS").AsInt64OK(); ok && minPool > 0 {
		if err := awaitMinPool(tr.ctx, c, minPool, time.Duration(ms)*time.Millisecond); err != nil {
			return err
		}
		// "event/log listeners ... should ignore any events that occur
		// before the pool is being populated."
		rec.reset()
		if ce.log != nil {
			ce.log.reset()
		}
	}
	return nil
}

// awaitMinPool waits until every data-bearing server's pool holds
// minPoolSize connections.
func awaitMinPool(ctx context.Context, c *driver.Client, min int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		ok := true
		snap := c.Topology()
		n := 0
		for _, s := range snap.Servers {
			switch s.Kind {
			case "Standalone", "Mongos", "RSPrimary", "RSSecondary", "LoadBalancer":
				n++
				if s.Pool.Total < min {
					ok = false
				}
			}
		}
		if ok && n > 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("awaitMinPoolSizeMS: the pools did not reach minPoolSize %d within %v: %v", min, limit, snap)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// applyURIOptions returns base with uriOptions applied, each replacing
// the same option (compared without case) of base; and the minPoolSize
// it sets.
func applyURIOptions(base string, uriOpts bson.Raw, fastHeartbeat bool) (string, int, error) {
	prefix, query, _ := strings.Cut(base, "?")
	type kv struct{ k, v string }
	var params []kv
	if query != "" {
		for _, p := range strings.Split(query, "&") {
			k, v, _ := strings.Cut(p, "=")
			params = append(params, kv{k, v})
		}
	}
	drop := func(key string) {
		out := params[:0]
		for _, p := range params {
			if !strings.EqualFold(p.k, key) {
				out = append(out, p)
			}
		}
		params = out
	}
	minPool := 0
	hasHeartbeat := false
	if uriOpts != nil {
		elems, err := uriOpts.Elements()
		if err != nil {
			return "", 0, err
		}
		for _, e := range elems {
			k, v := e.Key(), e.Value()
			if _, _, ok := operator(v); ok {
				return "", 0, skipf("uriOptions.%s is a $$placeholder for credentials from the test environment, which this runner has none of", k)
			}
			drop(k)
			if strings.EqualFold(k, "heartbeatFrequencyMS") {
				hasHeartbeat = true
			}
			var vals []string
			switch {
			case strings.EqualFold(k, "readPreferenceTags") && v.Type == bson.TypeArray:
				arr, _ := v.Array().Values()
				for _, t := range arr {
					vals = append(vals, t.StringValue())
				}
			case v.Type == bson.TypeEmbeddedDocument:
				// authMechanismProperties: "K:V,K2:V2".
				elems, err := v.Document().Elements()
				if err != nil {
					return "", 0, err
				}
				var parts []string
				for _, pe := range elems {
					if _, _, ok := operator(pe.Value()); ok {
						return "", 0, skipf("uriOptions.%s.%s is a $$placeholder for credentials from the test environment, which this runner has none of", k, pe.Key())
					}
					s, err := scalarString(pe.Value())
					if err != nil {
						return "", 0, fmt.Errorf("uriOptions.%s.%s: %w", k, pe.Key(), err)
					}
					parts = append(parts, pe.Key()+":"+s)
				}
				vals = []string{strings.Join(parts, ",")}
			default:
				s, err := scalarString(v)
				if err != nil {
					return "", 0, fmt.Errorf("uriOptions.%s: %w", k, err)
				}
				vals = []string{s}
			}
			if strings.EqualFold(k, "minPoolSize") {
				minPool, _ = strconv.Atoi(vals[0])
			}
			for _, s := range vals {
				params = append(params, kv{k, url.QueryEscape(s)})
			}
		}
	}
	if v, ok := uriOpts.Lookup("directConnection").BooleanOK(); ok && v {
		// "the connection string ... MUST only have a single seed and
		// MUST NOT specify the replicaSet option."
		prefix = firstSeedOnly(prefix)
		drop("replicaSet")
	}
	if fastHeartbeat && !hasHeartbeat {
		drop("heartbeatFrequencyMS")
		params = append(params, kv{"heartbeatFrequencyMS", "500"})
	}
	if len(params) == 0 {
		return prefix, minPool, nil
	}
	parts := make([]string, len(params))
	for i, p := range params {
		parts[i] = p.k + "=" + p.v
	}
	return prefix + "?" + strings.Join(parts, "&"), minPool, nil
}

// uriHosts returns the host list of a connection string.
func uriHosts(uri string) string {
	_, rest, ok := strings.Cut(uri, "://")
	if !ok {
		return ""
	}
	hosts, _, _ := strings.Cut(rest, "/")
	if i := strings.LastIndex(hosts, "@"); i >= 0 {
		hosts = hosts[i+1:]
	}
	return hosts
}

// firstSeedOnly cuts "mongodb://[userinfo@]h1,h2/" to its first host.
func firstSeedOnly(prefix string) string {
	scheme, rest, ok := strings.Cut(prefix, "://")
	if !ok {
		return prefix
	}
	hosts, path, _ := strings.Cut(rest, "/")
	user := ""
	if i := strings.LastIndex(hosts, "@"); i >= 0 {
		user, hosts = hosts[:i+1], hosts[i+1:]
	}
	first, _, _ := strings.Cut(hosts, ",")
	return scheme + "://" + user + first + "/" + path
}

// scalarString writes a URI option value as a connection string carries
// it: whole numbers without a fraction or exponent.
func scalarString(v bson.RawValue) (string, error) {
	switch v.Type {
	case bson.TypeString:
		return v.StringValue(), nil
	case bson.TypeBoolean:
		return strconv.FormatBool(v.Boolean()), nil
	case bson.TypeInt32, bson.TypeInt64:
		n, _ := v.AsInt64OK()
		return strconv.FormatInt(n, 10), nil
	case bson.TypeDouble:
		f := v.Double()
		if f == math.Trunc(f) && math.Abs(f) < 1e15 {
			return strconv.FormatInt(int64(f), 10), nil
		}
		return strconv.FormatFloat(f, 'f', -1, 64), nil
	}
	return "", fmt.Errorf("unsupported value %s", show(v))
}

// threadEntity runs operations, in order, on a goroutine of its own.
type threadEntity struct {
	ops  chan bson.Raw
	done chan struct{}

	mu   sync.Mutex
	errs []error
	once sync.Once
}

func newThread(tr *testRun) *threadEntity {
	th := &threadEntity{ops: make(chan bson.Raw, 64), done: make(chan struct{})}
	go func() {
		defer close(th.done)
		for op := range th.ops {
			if err := tr.operation(op); err != nil {
				th.mu.Lock()
				th.errs = append(th.errs, fmt.Errorf("%s on %s: %w", op.Lookup("name").StringValue(), op.Lookup("object").StringValue(), err))
				th.mu.Unlock()
			}
		}
	}()
	return th
}

// stop tells the thread no operation follows and waits up to limit for
// it to finish; it returns the thread's errors (a skip first).
func (th *threadEntity) stop(limit time.Duration) error {
	th.once.Do(func() { close(th.ops) })
	select {
	case <-th.done:
	case <-time.After(limit):
		return fmt.Errorf("the thread did not finish within %v", limit)
	}
	th.mu.Lock()
	defer th.mu.Unlock()
	for _, err := range th.errs {
		var se *skipError
		if errors.As(err, &se) {
			return se
		}
	}
	return errors.Join(th.errs...)
}

// logCapture collects a client's log messages.
type logCapture struct {
	levels map[logging.Component]logging.Level
	h      *logHandler
}

func (l *logCapture) options() *logging.Options {
	// The command logging tests want whole documents, so that
	// $$matchAsDocument can parse them: a large maximum length.
	return &logging.Options{Handler: l.h, Levels: l.levels, MaxDocumentLength: 10000, Getenv: func(string) string { return "" }}
}

func (l *logCapture) reset() { l.h.take() }

func newLogCapture(obs bson.Raw) (*logCapture, error) {
	levels := map[logging.Component]logging.Level{}
	for _, c := range []logging.Component{logging.ComponentCommand, logging.ComponentTopology, logging.ComponentServerSelection, logging.ComponentConnection} {
		levels[c] = logging.LevelOff
	}
	elems, err := obs.Elements()
	if err != nil {
		return nil, err
	}
	if len(elems) == 0 {
		return nil, errors.New("names no component")
	}
	for _, e := range elems {
		s, ok := e.Value().StringValueOK()
		if !ok {
			return nil, fmt.Errorf("%s: the level is not a string", e.Key())
		}
		lv, err := logging.ParseLevel(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Key(), err)
		}
		levels[logging.Component(e.Key())] = lv
	}
	return &logCapture{levels: levels, h: &logHandler{rec: &logRecords{}}}, nil
}
