package driver_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/driver/event"
	"github.com/mongoscope/mongoscope/mongotest"
)

// The CRUD flows of the public API run against two servers: mongotest and
// FerretDB v1 over SQLite, a real third-party server that make test starts
// (tools/ferretdb.sh) and names in MONGOSCOPE_FERRETDB_URI. Each flow checks
// its own expectations on each server, and returns a summary of what it saw
// that must be the same on both. Without MONGOSCOPE_FERRETDB_URI the
// FerretDB half skips, saying so, unless MONGOSCOPE_REQUIRE_FERRETDB=1 (which
// make test sets) turns that into a failure; a server named but unreachable
// is always a failure, never a skip.
//
// Where FerretDB v1 behaves differently from MongoDB the case is skipped on
// FerretDB with the difference written down (interopFlow.ferretSkip); an
// assertion is never loosened for it. MONGOSCOPE_INTEROP_RUN_SKIPPED=1 runs
// those cases anyway, to see whether each difference still holds (each
// should then fail as its reason says).

// interopFlow is one user-level flow through the public API.
type interopFlow struct {
	name string
	// run does the flow on coll, a fresh collection of a fresh database,
	// fails t on a wrong answer, and returns a summary that must be the
	// same on every server (no ObjectIDs, no addresses, no timings).
	run func(t *testing.T, ctx context.Context, env *interopEnv) string
	// ferretSkip, when set, is the exact way FerretDB v1 differs from
	// MongoDB in this flow: the flow is skipped on FerretDB with it.
	ferretSkip string
	// mongotestSkip, when set, is what mongotest does not do yet in this
	// flow: the flow is skipped on mongotest with it.
	mongotestSkip string
}

// interopEnv is what a flow works on.
type interopEnv struct {
	uri    string // the server's, for a flow that needs a client of its own
	client *driver.Client
	db     *driver.Database
	coll   *driver.Collection
}

// interopFerretURI returns MONGOSCOPE_FERRETDB_URI, skipping t when it is
// unset (failing it instead under MONGOSCOPE_REQUIRE_FERRETDB=1).
func interopFerretURI(t *testing.T) string {
	t.Helper()
	uri := os.Getenv("MONGOSCOPE_FERRETDB_URI")
	if uri == "" {
		if os.Getenv("MONGOSCOPE_REQUIRE_FERRETDB") == "1" {
			t.Fatal("MONGOSCOPE_FERRETDB_URI is not set but MONGOSCOPE_REQUIRE_FERRETDB=1")
		}
		t.Skip("MONGOSCOPE_FERRETDB_URI is not set; make test starts FerretDB (tools/ferretdb.sh) and sets it")
	}
	return uri
}

// interopServer is one server the flows run against.
type interopServer struct {
	name   string
	uri    string
	client *driver.Client
	skip   string // when set, the flows skip this server with this reason
}

// interopServers returns the servers the flows run against: mongotest
// always, FerretDB when MONGOSCOPE_FERRETDB_URI names one (its client is
// checked with a ping: a named server that does not answer fails the
// test).
func interopServers(t *testing.T) []interopServer {
	t.Helper()
	srv := mongotest.NewServer(t, mongotest.Options{})
	out := []interopServer{{name: "mongotest", uri: srv.URI(), client: dial(t, srv.URI(), nil)}}
	uri := os.Getenv("MONGOSCOPE_FERRETDB_URI")
	switch {
	case uri != "":
		c := dial(t, uri, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := c.Ping(ctx); err != nil {
			t.Fatalf("MONGOSCOPE_FERRETDB_URI=%s is set but FerretDB does not answer: %v", uri, err)
		}
		out = append(out, interopServer{name: "ferretdb", uri: uri, client: c})
	case os.Getenv("MONGOSCOPE_REQUIRE_FERRETDB") == "1":
		t.Fatal("MONGOSCOPE_FERRETDB_URI is not set but MONGOSCOPE_REQUIRE_FERRETDB=1")
	default:
		out = append(out, interopServer{name: "ferretdb", skip: "MONGOSCOPE_FERRETDB_URI is not set; make test starts FerretDB (tools/ferretdb.sh) and sets it"})
	}
	return out
}

// interopDBName returns a database name of its own for one flow, so that
// runs never see each other's data on a long-lived FerretDB.
func interopDBName(flow string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return '_'
	}, flow)
	if len(name) > 40 {
		name = name[:40]
	}
	return "interop_" + name + "_" + hex.EncodeToString(b[:])
}

// runInteropFlows runs every flow on every server and compares the
// summaries with mongotest's.
func runInteropFlows(t *testing.T, flows []interopFlow) {
	servers := interopServers(t)
	for _, f := range flows {
		t.Run(f.name, func(t *testing.T) {
			got := map[string]string{}
			for _, s := range servers {
				t.Run(s.name, func(t *testing.T) {
					if s.skip != "" {
						t.Skip(s.skip)
					}
					skip := map[string]string{"ferretdb": f.ferretSkip, "mongotest": f.mongotestSkip}[s.name]
					if skip != "" {
						if os.Getenv("MONGOSCOPE_INTEROP_RUN_SKIPPED") != "1" {
							t.Skip(skip)
						}
						t.Logf("running a documented difference (MONGOSCOPE_INTEROP_RUN_SKIPPED=1): %s", skip)
					}
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					defer cancel()
					dbName := interopDBName(f.name)
					db := s.client.Database(dbName)
					t.Cleanup(func() {
						ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
						defer cancel()
						if _, err := s.client.RunCommand(ctx, dbName, bson.D{{Key: "dropDatabase", Value: 1}}); err != nil {
							t.Errorf("dropDatabase %s: %v", dbName, err)
						}
					})
					got[s.name] = f.run(t, ctx, &interopEnv{uri: s.uri, client: s.client, db: db, coll: db.Collection("items")})
				})
			}
			want, ok := got["mongotest"]
			if !ok {
				return
			}
			for name, g := range got {
				if g != want {
					t.Errorf("%s and mongotest differ:\n%s:\n%s\nmongotest:\n%s", name, name, g, want)
				}
			}
		})
	}
}

// interopSeed inserts n items {_id: i, qty: i*10, tag: "even"/"odd"} for i in 1..n.
func interopSeed(t *testing.T, ctx context.Context, coll *driver.Collection, n int) {
	t.Helper()
	docs := make([]any, n)
	for i := range docs {
		tag := "odd"
		if (i+1)%2 == 0 {
			tag = "even"
		}
		docs[i] = item{ID: i + 1, Qty: (i + 1) * 10, Tag: tag}
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatalf("seeding %d items: %v", n, err)
	}
}

// interopIDs returns the _ids of items, for summaries.
func interopIDs(items []item) []int {
	out := make([]int, len(items))
	for i, it := range items {
		out[i] = it.ID
	}
	return out
}

// interopFindAll runs Find and collects the result with driver.All.
func interopFindAll(t *testing.T, ctx context.Context, coll *driver.Collection, filter any, opts ...*driver.FindOptions) []item {
	t.Helper()
	cur, err := coll.Find(ctx, filter, opts...)
	if err != nil {
		t.Fatalf("Find(%v): %v", filter, err)
	}
	got, err := driver.All[item](ctx, cur)
	if err != nil {
		t.Fatalf("All: %v", err)
	}
	return got
}

// interopCursorGone checks, with a getMore through RunCommand, that the server
// no longer knows cursor id: mongod answers CursorNotFound (43).
func interopCursorGone(t *testing.T, ctx context.Context, env *interopEnv, id int64) string {
	t.Helper()
	_, err := env.client.RunCommand(ctx, env.db.Name(), bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: env.coll.Name()}})
	var ce *driver.CommandError
	if !errors.As(err, &ce) {
		t.Fatalf("getMore on closed cursor %d: want a CommandError, got %v", id, err)
	}
	if ce.Code != 43 {
		t.Fatalf("getMore on closed cursor %d: want CursorNotFound (43), got %d %s: %s", id, ce.Code, ce.CodeName, ce.Message)
	}
	return fmt.Sprintf("getMore after Close: %d %s", ce.Code, ce.CodeName)
}

func interopWriteErrors(err error) []driver.WriteError {
	var we *driver.WriteException
	if errors.As(err, &we) {
		return we.WriteErrors
	}
	var bwe *driver.BulkWriteException
	if errors.As(err, &bwe) {
		return bwe.WriteErrors
	}
	return nil
}

func interopWriteErrorsText(wes []driver.WriteError) string {
	var parts []string
	for _, we := range wes {
		// mongod's writeErrors entries carry index, code and errmsg but
		// no codeName, so the code alone is compared.
		parts = append(parts, fmt.Sprintf("[%d] %d", we.Index, we.Code))
	}
	return strings.Join(parts, ", ")
}

var interopInsertFlows = []interopFlow{
	{name: "InsertOne generated and given ids", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		r, err := env.coll.InsertOne(ctx, bson.D{{Key: "qty", Value: 5}})
		if err != nil {
			t.Fatal(err)
		}
		oid, ok := r.InsertedID.(bson.ObjectID)
		if !ok || !r.Acknowledged {
			t.Fatalf("InsertOne without _id: %+v, want a generated ObjectID, acknowledged", r)
		}
		back, err := driver.Decode[bson.M](env.coll.FindOne(ctx, bson.D{{Key: "_id", Value: oid}}))
		if err != nil || back["qty"] != int32(5) {
			t.Fatalf("FindOne of the generated _id: %v, %v", back, err)
		}
		r, err = env.coll.InsertOne(ctx, item{ID: 42, Qty: 1})
		if err != nil {
			t.Fatal(err)
		}
		if r.InsertedID != int32(42) {
			t.Fatalf("InsertOne with _id 42: InsertedID %#v", r.InsertedID)
		}
		it, err := driver.Decode[item](env.coll.FindOne(ctx, bson.D{{Key: "_id", Value: 42}}))
		if err != nil || it != (item{ID: 42, Qty: 1}) {
			t.Fatalf("FindOne(_id 42): %+v, %v", it, err)
		}
		return fmt.Sprintf("generated %T; given %#v; read back %+v", r.InsertedID, r.InsertedID, it)
	}},
	{name: "InsertMany interopIDs in order", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		r, err := env.coll.InsertMany(ctx, []any{item{ID: 3}, bson.D{{Key: "qty", Value: 1}}, bson.M{"_id": "s"}, bson.D{{Key: "_id", Value: 1.5}}})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.InsertedIDs) != 4 || r.InsertedIDs[0] != int32(3) || r.InsertedIDs[2] != "s" || r.InsertedIDs[3] != 1.5 {
			t.Fatalf("InsertedIDs %#v", r.InsertedIDs)
		}
		if _, ok := r.InsertedIDs[1].(bson.ObjectID); !ok {
			t.Fatalf("InsertedIDs[1] %#v: want a generated ObjectID", r.InsertedIDs[1])
		}
		cur, err := env.coll.Find(ctx, bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		all, err := driver.All[bson.Raw](ctx, cur)
		if err != nil || len(all) != 4 {
			t.Fatalf("Find after InsertMany: %d documents, %v", len(all), err)
		}
		return fmt.Sprintf("ids %#v %#v %#v; %d documents", r.InsertedIDs[0], r.InsertedIDs[2], r.InsertedIDs[3], len(all))
	}},
	{name: "InsertOne duplicate _id", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		if _, err := env.coll.InsertOne(ctx, item{ID: 1}); err != nil {
			t.Fatal(err)
		}
		_, err := env.coll.InsertOne(ctx, item{ID: 1, Qty: 2})
		var we *driver.WriteException
		if !errors.As(err, &we) || len(we.WriteErrors) != 1 || we.WriteErrors[0].Code != 11000 || we.WriteErrors[0].Index != 0 {
			t.Fatalf("duplicate InsertOne: want a WriteException with one 11000 at index 0, got %v", err)
		}
		var oe *driver.OperationError
		if !errors.As(err, &oe) || oe.Op != "insert" {
			t.Fatalf("duplicate InsertOne: want an OperationError for insert, got %v", err)
		}
		if !driver.IsDuplicateKeyError(err) || driver.IsTimeout(err) || driver.IsNetworkError(err) {
			t.Fatalf("duplicate InsertOne: IsDuplicateKeyError %v IsTimeout %v IsNetworkError %v", driver.IsDuplicateKeyError(err), driver.IsTimeout(err), driver.IsNetworkError(err))
		}
		return "write errors: " + interopWriteErrorsText(we.WriteErrors)
	}},
	{name: "InsertMany ordered stops at the duplicate", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		interopSeed(t, ctx, env.coll, 2)
		_, err := env.coll.InsertMany(ctx, []any{item{ID: 10}, item{ID: 11}, item{ID: 2}, item{ID: 12}})
		var bwe *driver.BulkWriteException
		if !errors.As(err, &bwe) || len(bwe.WriteErrors) != 1 || bwe.WriteErrors[0].Index != 2 || bwe.WriteErrors[0].Code != 11000 {
			t.Fatalf("ordered InsertMany with a duplicate at 2: %v", err)
		}
		p := bwe.PartialResult
		if p == nil || p.InsertedCount != 2 || len(p.InsertedIDs) != 2 || p.InsertedIDs[0] != int32(10) || p.InsertedIDs[1] != int32(11) {
			t.Fatalf("partial result %+v", p)
		}
		got := interopIDs(interopFindAll(t, ctx, env.coll, bson.D{}, &driver.FindOptions{Sort: bson.D{{Key: "_id", Value: 1}}}))
		if fmt.Sprint(got) != "[1 2 10 11]" {
			t.Fatalf("after the ordered insert: %v, want [1 2 10 11] (12 not inserted)", got)
		}
		return fmt.Sprintf("write errors: %s; inserted %d; stored %v", interopWriteErrorsText(bwe.WriteErrors), p.InsertedCount, got)
	}},
	{name: "InsertMany unordered reports every duplicate", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		interopSeed(t, ctx, env.coll, 3)
		_, err := env.coll.InsertMany(ctx, []any{item{ID: 10}, item{ID: 1}, item{ID: 11}, item{ID: 3}, item{ID: 12}}, &driver.InsertManyOptions{Ordered: driver.Ptr(false)})
		var bwe *driver.BulkWriteException
		if !errors.As(err, &bwe) || !driver.IsDuplicateKeyError(err) {
			t.Fatalf("unordered InsertMany with duplicates: %v", err)
		}
		if interopWriteErrorsText(bwe.WriteErrors) != "[1] 11000, [3] 11000" {
			t.Fatalf("write errors %s, want [1] and [3] DuplicateKey", interopWriteErrorsText(bwe.WriteErrors))
		}
		if p := bwe.PartialResult; p.InsertedCount != 3 || len(p.InsertedIDs) != 3 || p.InsertedIDs[4] != int32(12) {
			t.Fatalf("partial result %+v", p)
		}
		got := interopIDs(interopFindAll(t, ctx, env.coll, bson.D{}, &driver.FindOptions{Sort: bson.D{{Key: "_id", Value: 1}}}))
		if fmt.Sprint(got) != "[1 2 3 10 11 12]" {
			t.Fatalf("after the unordered insert: %v", got)
		}
		return fmt.Sprintf("write errors: %s; inserted %d; stored %v", interopWriteErrorsText(bwe.WriteErrors), bwe.PartialResult.InsertedCount, got)
	}},
	{name: "unique index duplicate", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		_, err := env.coll.Indexes().CreateOne(ctx, driver.IndexModel{Keys: bson.D{{Key: "tag", Value: 1}}, Options: &driver.IndexOptions{Unique: driver.Ptr(true)}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := env.coll.InsertOne(ctx, item{ID: 1, Tag: "a"}); err != nil {
			t.Fatal(err)
		}
		_, err = env.coll.InsertOne(ctx, item{ID: 2, Tag: "a"})
		if !driver.IsDuplicateKeyError(err) {
			t.Fatalf("InsertOne breaking the unique index: %v", err)
		}
		one := interopWriteErrorsText(interopWriteErrors(err))
		_, err = env.coll.InsertMany(ctx, []any{item{ID: 3, Tag: "b"}, item{ID: 4, Tag: "b"}, item{ID: 5, Tag: "a"}, item{ID: 6, Tag: "c"}}, &driver.InsertManyOptions{Ordered: driver.Ptr(false)})
		many := interopWriteErrorsText(interopWriteErrors(err))
		if many != "[1] 11000, [2] 11000" {
			t.Fatalf("unordered InsertMany breaking the unique index: %v", err)
		}
		return "InsertOne: " + one + "; InsertMany: " + many
	}},
	{name: "unacknowledged InsertOne", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		coll := env.db.Collection("items", &driver.CollectionOptions{WriteConcern: driver.Unacknowledged()})
		r, err := coll.InsertOne(ctx, item{ID: 1, Qty: 3})
		if err != nil || r.Acknowledged {
			t.Fatalf("unacknowledged InsertOne: %+v, %v", r, err)
		}
		// The write lands eventually; an acknowledged read on a new
		// operation sees it once the server has processed it.
		deadline := time.Now().Add(5 * time.Second)
		for {
			it, err := driver.Decode[item](env.coll.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}))
			if err == nil {
				return fmt.Sprintf("acknowledged %v; read back %+v", r.Acknowledged, it)
			}
			if !errors.Is(err, driver.ErrNoDocuments) || time.Now().After(deadline) {
				t.Fatalf("reading the unacknowledged insert: %v", err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}, ferretSkip: "FerretDB v1 replies to an OP_MSG with moreToCome set (a w:0 write), which MongoDB never does; " +
		"the stray reply is read by the connection's next command, which fails with " +
		"\"network error ...: decode: reply answers request N, want N+1\" and closes the connection " +
		"(driver/internal/conn's TestFerretDBHandshakeAndCRUD covers the connection's side)"},
}

var interopFindFlows = []interopFlow{
	{name: "Find filter sort projection skip limit", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		interopSeed(t, ctx, env.coll, 20)
		cur, err := env.coll.Find(ctx, bson.D{{Key: "tag", Value: "even"}, {Key: "qty", Value: bson.D{{Key: "$gt", Value: 40}}}},
			&driver.FindOptions{Sort: bson.D{{Key: "qty", Value: -1}}, Projection: bson.D{{Key: "tag", Value: 0}}, Skip: driver.Ptr[int64](1), Limit: driver.Ptr[int64](3)})
		if err != nil {
			t.Fatal(err)
		}
		docs, err := driver.All[bson.Raw](ctx, cur)
		if err != nil {
			t.Fatal(err)
		}
		var s []string
		for _, d := range docs {
			s = append(s, d.String())
		}
		if got := strings.Join(s, " "); got != `{"_id":18,"qty":180} {"_id":16,"qty":160} {"_id":14,"qty":140}` {
			t.Fatalf("got %s", got)
		}
		// An inclusion projection keeps _id unless excluded.
		cur, err = env.coll.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: bson.A{2, 3}}}}},
			&driver.FindOptions{Sort: bson.D{{Key: "_id", Value: 1}}, Projection: bson.D{{Key: "qty", Value: 1}, {Key: "_id", Value: 0}}})
		if err != nil {
			t.Fatal(err)
		}
		proj, err := driver.All[bson.Raw](ctx, cur)
		if err != nil || len(proj) != 2 || proj[0].String() != `{"qty":20}` || proj[1].String() != `{"qty":30}` {
			t.Fatalf("inclusion projection: %v, %v", proj, err)
		}
		return strings.Join(s, " ") + " / " + proj[0].String() + proj[1].String()
	}},
	{name: "Find getMore over several batches", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		interopSeed(t, ctx, env.coll, 25)
		cur, err := env.coll.Find(ctx, bson.D{{Key: "qty", Value: bson.D{{Key: "$gte", Value: 10}}}},
			&driver.FindOptions{BatchSize: driver.Ptr[int32](4), Sort: bson.D{{Key: "_id", Value: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		defer cur.Close(ctx)
		if cur.ID() == 0 || cur.RemainingBatchLength() != 4 {
			t.Fatalf("first batch: id %d, %d documents; want an open cursor and 4", cur.ID(), cur.RemainingBatchLength())
		}
		var batches []int
		var got []int
		for {
			newBatch := cur.RemainingBatchLength() == 0
			if !cur.Next(ctx) {
				break
			}
			if newBatch || len(got) == 0 {
				batches = append(batches, cur.RemainingBatchLength()+1)
			}
			var it item
			if err := cur.Decode(&it); err != nil {
				t.Fatal(err)
			}
			got = append(got, it.ID)
		}
		if err := cur.Err(); err != nil {
			t.Fatal(err)
		}
		if len(got) != 25 || got[0] != 1 || got[24] != 25 || cur.ID() != 0 {
			t.Fatalf("iterated %v, cursor id %d at the end", got, cur.ID())
		}
		if fmt.Sprint(batches) != "[4 4 4 4 4 4 1]" {
			t.Fatalf("batches %v: want 7 (6 of 4 and one of 1)", batches)
		}
		return fmt.Sprintf("%d documents in %d batches, interopIDs %d..%d", len(got), len(batches), got[0], got[24])
	}},
	{name: "Find limit over batches", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		interopSeed(t, ctx, env.coll, 25)
		cur, err := env.coll.Find(ctx, bson.D{}, &driver.FindOptions{BatchSize: driver.Ptr[int32](3), Limit: driver.Ptr[int64](7), Sort: bson.D{{Key: "_id", Value: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		for it, err := range driver.Iter[item](ctx, cur) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, it.ID)
		}
		if fmt.Sprint(got) != "[1 2 3 4 5 6 7]" || cur.ID() != 0 {
			t.Fatalf("limit 7, batch size 3: %v (cursor %d)", got, cur.ID())
		}
		// A negative limit is one batch and no cursor.
		cur, err = env.coll.Find(ctx, bson.D{}, &driver.FindOptions{Limit: driver.Ptr[int64](-5), Sort: bson.D{{Key: "_id", Value: -1}}})
		if err != nil {
			t.Fatal(err)
		}
		if cur.ID() != 0 {
			t.Errorf("negative limit left cursor %d open", cur.ID())
		}
		neg, err := driver.All[item](ctx, cur)
		if err != nil || fmt.Sprint(interopIDs(neg)) != "[25 24 23 22 21]" {
			t.Fatalf("limit -5: %v, %v", interopIDs(neg), err)
		}
		// A negative batch size is one batch of that many, and no cursor.
		cur, err = env.coll.Find(ctx, bson.D{}, &driver.FindOptions{BatchSize: driver.Ptr[int32](-3), Sort: bson.D{{Key: "_id", Value: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		if cur.ID() != 0 {
			t.Errorf("negative batch size left cursor %d open", cur.ID())
		}
		nb, err := driver.All[item](ctx, cur)
		if err != nil || fmt.Sprint(interopIDs(nb)) != "[1 2 3]" {
			t.Fatalf("batch size -3: %v, %v", interopIDs(nb), err)
		}
		return fmt.Sprintf("limit 7: %v; limit -5: %v; batch size -3: %v", got, interopIDs(neg), interopIDs(nb))
	}},
	{name: "Find nothing", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		interopSeed(t, ctx, env.coll, 3)
		cur, err := env.coll.Find(ctx, bson.D{{Key: "qty", Value: bson.D{{Key: "$lt", Value: 0}}}})
		if err != nil {
			t.Fatal(err)
		}
		if cur.ID() != 0 || cur.Next(ctx) || cur.Err() != nil {
			t.Fatalf("empty result: id %d, err %v", cur.ID(), cur.Err())
		}
		var out []item
		if err := cur.All(ctx, &out); err != nil || len(out) != 0 {
			t.Fatalf("All on an empty cursor: %v, %v", out, err)
		}
		// A collection that does not exist reads as empty.
		cur, err = env.db.Collection("nothing_here").Find(ctx, bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		none, err := driver.All[bson.M](ctx, cur)
		if err != nil || len(none) != 0 {
			t.Fatalf("Find on a missing collection: %v, %v", none, err)
		}
		return "empty, cursor 0"
	}},
	{name: "FindOne and ErrNoDocuments", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		interopSeed(t, ctx, env.coll, 10)
		var it item
		if err := env.coll.FindOne(ctx, bson.D{{Key: "tag", Value: "odd"}}, &driver.FindOneOptions{Sort: bson.D{{Key: "qty", Value: -1}}, Skip: driver.Ptr[int64](1)}).Decode(&it); err != nil {
			t.Fatal(err)
		}
		if it.ID != 7 {
			t.Fatalf("second-largest odd: %+v, want _id 7", it)
		}
		raw, err := env.coll.FindOne(ctx, bson.D{{Key: "_id", Value: 4}}, &driver.FindOneOptions{Projection: bson.D{{Key: "_id", Value: 0}, {Key: "tag", Value: 1}}}).Raw()
		if err != nil || raw.String() != `{"tag":"even"}` {
			t.Fatalf("FindOne with a projection: %v, %v", raw, err)
		}
		res := env.coll.FindOne(ctx, bson.D{{Key: "_id", Value: 99}})
		if !errors.Is(res.Err(), driver.ErrNoDocuments) {
			t.Fatalf("FindOne of nothing: %v", res.Err())
		}
		var none item
		if err := res.Decode(&none); !errors.Is(err, driver.ErrNoDocuments) {
			t.Fatalf("Decode of nothing: %v", err)
		}
		if _, err := driver.Decode[item](res); !errors.Is(err, driver.ErrNoDocuments) {
			t.Fatalf("driver.Decode of nothing: %v", err)
		}
		return fmt.Sprintf("%+v %s; missing: %v", it, raw, res.Err())
	}},
	{name: "generics All Iter Decode into structs and maps", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		interopSeed(t, ctx, env.coll, 6)
		cur, err := env.coll.Find(ctx, bson.D{{Key: "tag", Value: "even"}}, &driver.FindOptions{Sort: bson.D{{Key: "_id", Value: 1}}, BatchSize: driver.Ptr[int32](1)})
		if err != nil {
			t.Fatal(err)
		}
		ms, err := driver.All[bson.M](ctx, cur)
		if err != nil || len(ms) != 3 || ms[2]["qty"] != int32(60) {
			t.Fatalf("All[bson.M]: %v, %v", ms, err)
		}
		// Iter stops early when the loop breaks, and closes the cursor.
		cur, err = env.coll.Find(ctx, bson.D{}, &driver.FindOptions{Sort: bson.D{{Key: "_id", Value: 1}}, BatchSize: driver.Ptr[int32](2)})
		if err != nil {
			t.Fatal(err)
		}
		id := cur.ID()
		var seen []int
		for it, err := range driver.Iter[item](ctx, cur) {
			if err != nil {
				t.Fatal(err)
			}
			seen = append(seen, it.ID)
			if len(seen) == 3 {
				break
			}
		}
		if fmt.Sprint(seen) != "[1 2 3]" || cur.ID() != 0 {
			t.Fatalf("Iter with break: %v, cursor %d", seen, cur.ID())
		}
		gone := interopCursorGone(t, ctx, env, id)
		// A document that does not fit T is an error from Decode.
		type wrong struct {
			Tag int `bson:"tag"`
		}
		_, err = driver.Decode[wrong](env.coll.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}))
		if err == nil {
			t.Fatal("decoding a string into an int succeeded")
		}
		d, err := driver.Decode[bson.D](env.coll.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}))
		if err != nil || len(d) != 3 || d[0].Key != "_id" {
			t.Fatalf("Decode[bson.D]: %v, %v", d, err)
		}
		return fmt.Sprintf("All %d maps; Iter %v; %s; D %v", len(ms), seen, gone, d)
	}},
	{name: "Close a live cursor", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		interopSeed(t, ctx, env.coll, 10)
		cur, err := env.coll.Find(ctx, bson.D{}, &driver.FindOptions{BatchSize: driver.Ptr[int32](2)})
		if err != nil {
			t.Fatal(err)
		}
		if !cur.Next(ctx) {
			t.Fatalf("Next: %v", cur.Err())
		}
		id := cur.ID()
		if id == 0 {
			t.Fatal("the cursor is not open after the first batch of 2 of 10")
		}
		if err := cur.Close(ctx); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if cur.ID() != 0 || cur.Next(ctx) {
			t.Fatalf("after Close: id %d", cur.ID())
		}
		if err := cur.Close(ctx); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		return interopCursorGone(t, ctx, env, id)
	}},
	{name: "server error in a filter", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		interopSeed(t, ctx, env.coll, 1)
		_, err := env.coll.Find(ctx, bson.D{{Key: "qty", Value: bson.D{{Key: "$bogus", Value: 1}}}})
		var ce *driver.CommandError
		if !errors.As(err, &ce) || ce.Code != 2 || ce.CodeName != "BadValue" {
			t.Fatalf("unknown operator: want BadValue (2), got %v", err)
		}
		if !strings.Contains(ce.Message, "$bogus") {
			t.Errorf("message %q does not name the operator", ce.Message)
		}
		err = env.coll.FindOne(ctx, bson.D{{Key: "$bogus", Value: 1}}).Err()
		if !errors.As(err, &ce) || ce.Code != 2 {
			t.Fatalf("FindOne with an unknown top-level operator: want BadValue (2), got %v", err)
		}
		return fmt.Sprintf("%d %s", ce.Code, ce.CodeName)
	}},
	{name: "argument errors before sending", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		var out []string
		for _, f := range []func() error{
			func() error { _, err := env.coll.Find(ctx, nil); return err },
			func() error { _, err := env.coll.InsertOne(ctx, nil); return err },
			func() error { _, err := env.coll.InsertMany(ctx, nil); return err },
			func() error { _, err := env.coll.InsertMany(ctx, []any{bson.D{}, 42}); return err },
			func() error {
				_, err := env.coll.Find(ctx, bson.D{}, &driver.FindOptions{Skip: driver.Ptr[int64](-1)})
				return err
			},
		} {
			var ae *driver.ArgumentError
			if err := f(); !errors.As(err, &ae) {
				t.Fatalf("want an ArgumentError, got %v", err)
			}
			out = append(out, ae.Argument)
		}
		return strings.Join(out, ",")
	}},
	{name: "concerns and read preference per level", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		db := env.client.Database(env.db.Name(), &driver.DatabaseOptions{ReadConcern: &driver.ReadConcern{Level: driver.ReadConcernLocal}, WriteConcern: driver.Majority()})
		coll := db.Collection("items", &driver.CollectionOptions{ReadPreference: &driver.ReadPreference{Mode: driver.PrimaryPreferred}, WriteConcern: &driver.WriteConcern{W: &driver.W{Nodes: 1}, Journal: driver.Ptr(true)}})
		if _, err := coll.InsertOne(ctx, item{ID: 1, Qty: 9}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Collection("items").InsertOne(ctx, item{ID: 2, Qty: 8}); err != nil {
			t.Fatal(err)
		}
		// And per operation.
		if _, err := coll.InsertOne(ctx, item{ID: 3, Qty: 7}, &driver.InsertOneOptions{WriteConcern: driver.Majority()}); err != nil {
			t.Fatal(err)
		}
		got := interopIDs(interopFindAll(t, ctx, coll, bson.D{}, &driver.FindOptions{Sort: bson.D{{Key: "_id", Value: 1}},
			ReadConcern: &driver.ReadConcern{Level: driver.ReadConcernMajority}, ReadPreference: &driver.ReadPreference{Mode: driver.SecondaryPreferred}}))
		if fmt.Sprint(got) != "[1 2 3]" {
			t.Fatalf("read back %v", got)
		}
		// A bad setting is an ArgumentError from the first operation.
		bad := db.Collection("items", &driver.CollectionOptions{WriteConcern: &driver.WriteConcern{W: &driver.W{}, Journal: driver.Ptr(true)}})
		_, err := bad.InsertOne(ctx, item{ID: 4})
		var ae *driver.ArgumentError
		if !errors.As(err, &ae) {
			t.Fatalf("w:0 j:true: %v", err)
		}
		return fmt.Sprintf("%v; %s", got, ae.Argument)
	}},
}

func TestInteropInsert(t *testing.T) { runInteropFlows(t, interopInsertFlows) }

func TestInteropFind(t *testing.T) { runInteropFlows(t, interopFindFlows) }

// TestFerretDBReachable: under make test (MONGOSCOPE_REQUIRE_FERRETDB=1) a
// FerretDB that is missing or does not answer fails the run rather than
// skipping the interop flows.
func TestFerretDBReachable(t *testing.T) {
	uri := interopFerretURI(t)
	c := dial(t, uri, nil)
	ctx := testCtx(t)
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("FerretDB at %s: %v", uri, err)
	}
	reply, err := c.RunCommand(ctx, "admin", bson.D{{Key: "buildInfo", Value: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("FerretDB buildInfo: version %v, ferretdb %v", reply.Lookup("version"), reply.Lookup("ferretdb"))
}

// interopFerretClosesConnection is how FerretDB v1 answers an insert holding a
// BSON type it does not store: no reply, the connection closed.
const interopFerretClosesConnection = "it closes the connection on an insert holding one, so the driver reports " +
	`"network error ...: read: wire: read at byte 0: reading the message header: EOF"`

// interopBSONTypeCases are values of every BSON type, as Extended JSON, with
// mongod's $type alias for them.
var interopBSONTypeCases = []struct {
	name, value, alias string
	ferretSkip         string
}{
	{name: "double", value: `{"$numberDouble": "1.5"}`, alias: "double"},
	{name: "negative zero", value: `{"$numberDouble": "-0.0"}`, alias: "double",
		ferretSkip: `FerretDB v1 stores -0.0 as 0.0: the document reads back as {"_id":1,"v":0.0}`},
	{name: "NaN", value: `{"$numberDouble": "NaN"}`, alias: "double",
		ferretSkip: "FerretDB v1 does not store NaN: " + interopFerretClosesConnection},
	{name: "infinity", value: `{"$numberDouble": "Infinity"}`, alias: "double",
		ferretSkip: `FerretDB v1 refuses infinite doubles: server error 2: invalid value: { "v": +Inf } (infinity values are not allowed)`},
	{name: "string", value: `"grüß dich"`, alias: "string"},
	{name: "document", value: `{"x": {"y": {"z": 1}}}`, alias: "object"},
	{name: "array", value: `[1, "two", {"three": 3}]`, alias: "array"},
	{name: "nested array", value: `[1, [2, {"a": 3}]]`, alias: "array",
		ferretSkip: `FerretDB v1 refuses nested arrays: server error 2: invalid value: { "v": [ 1, [ 2, { a: 3 } ] ] } (nested arrays are not supported)`},
	{name: "binary", value: `{"$binary": {"base64": "AQI=", "subType": "00"}}`, alias: "binData"},
	{name: "uuid", value: `{"$binary": {"base64": "c//SZESzTGmQ6OfR38A11A==", "subType": "04"}}`, alias: "binData"},
	{name: "undefined", value: `{"$undefined": true}`, alias: "undefined",
		ferretSkip: "FerretDB v1 does not store the undefined type: " + interopFerretClosesConnection},
	{name: "objectId", value: `{"$oid": "5f0000000000000000000abc"}`, alias: "objectId"},
	{name: "bool", value: `true`, alias: "bool"},
	{name: "date", value: `{"$date": {"$numberLong": "1577836800123"}}`, alias: "date"},
	{name: "null", value: `null`, alias: "null"},
	{name: "regex", value: `{"$regularExpression": {"pattern": "^a.c$", "options": "i"}}`, alias: "regex"},
	{name: "dbPointer", value: `{"$dbPointer": {"$ref": "a.b", "$id": {"$oid": "5f0000000000000000000abc"}}}`, alias: "dbPointer",
		ferretSkip: "FerretDB v1 does not store DBPointer: " + interopFerretClosesConnection},
	{name: "javascript", value: `{"$code": "function() { return 1; }"}`, alias: "javascript",
		ferretSkip: "FerretDB v1 does not store JavaScript code: " + interopFerretClosesConnection},
	{name: "symbol", value: `{"$symbol": "sym"}`, alias: "symbol",
		ferretSkip: "FerretDB v1 does not store symbols: " + interopFerretClosesConnection},
	{name: "javascript with scope", value: `{"$code": "x", "$scope": {"x": 1}}`, alias: "javascriptWithScope",
		ferretSkip: "FerretDB v1 does not store JavaScript code with scope: " + interopFerretClosesConnection},
	{name: "int32", value: `{"$numberInt": "-2147483648"}`, alias: "int"},
	{name: "timestamp", value: `{"$timestamp": {"t": 1577836800, "i": 7}}`, alias: "timestamp"},
	{name: "int64", value: `{"$numberLong": "9223372036854775807"}`, alias: "long"},
	{name: "decimal128", value: `{"$numberDecimal": "1.50"}`, alias: "decimal",
		ferretSkip: "FerretDB v1 does not support Decimal128: " + interopFerretClosesConnection},
	{name: "minKey", value: `{"$minKey": 1}`, alias: "minKey",
		ferretSkip: "FerretDB v1 does not store MinKey: " + interopFerretClosesConnection},
	{name: "maxKey", value: `{"$maxKey": 1}`, alias: "maxKey",
		ferretSkip: "FerretDB v1 does not store MaxKey: " + interopFerretClosesConnection},
}

// interopBSONTypeFlows: a document holding each type goes in with InsertOne and
// comes back byte for byte with FindOne, and {$type: alias} finds it.
func interopBSONTypeFlows() []interopFlow {
	var flows []interopFlow
	for _, tc := range interopBSONTypeCases {
		flows = append(flows, interopFlow{name: "round trip " + tc.name, ferretSkip: tc.ferretSkip, run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
			doc, err := bson.ParseExtJSON([]byte(`{"_id": 1, "v": ` + tc.value + `}`))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := env.coll.InsertOne(ctx, doc); err != nil {
				t.Fatalf("InsertOne(%s): %v", doc, err)
			}
			back, err := env.coll.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Raw()
			if err != nil {
				t.Fatal(err)
			}
			if string(back) != string(doc) {
				t.Fatalf("read back %s, inserted %s", back, doc)
			}
			cur, err := env.coll.Find(ctx, bson.D{{Key: "v", Value: bson.D{{Key: "$type", Value: tc.alias}}}})
			if err != nil {
				t.Fatal(err)
			}
			byType, err := driver.All[bson.Raw](ctx, cur)
			if err != nil || len(byType) != 1 {
				t.Fatalf("find {v: {$type: %q}}: %v, %v", tc.alias, byType, err)
			}
			return back.String()
		}})
	}
	return flows
}

// interopFindOptionFlows: the options of Find, one at a time, on five items.
func interopFindOptionFlows() []interopFlow {
	ferretNotImplemented := func(field string) string {
		return fmt.Sprintf(`FerretDB v1 does not implement find's %s: server error 238 (NotImplemented): find: support for field %q with non-default value true is not implemented yet`, field, field)
	}
	all := func(t *testing.T, ctx context.Context, env *interopEnv, o *driver.FindOptions) []bson.Raw {
		t.Helper()
		interopSeed(t, ctx, env.coll, 5)
		cur, err := env.coll.Find(ctx, bson.D{}, o)
		if err != nil {
			t.Fatal(err)
		}
		docs, err := driver.All[bson.Raw](ctx, cur)
		if err != nil {
			t.Fatal(err)
		}
		return docs
	}
	plain := func(o *driver.FindOptions) func(t *testing.T, ctx context.Context, env *interopEnv) string {
		return func(t *testing.T, ctx context.Context, env *interopEnv) string {
			docs := all(t, ctx, env, o)
			if len(docs) != 5 || docs[0].String() != `{"_id":1,"qty":10,"tag":"odd"}` {
				t.Fatalf("got %v", docs)
			}
			return fmt.Sprint(docs)
		}
	}
	return []interopFlow{
		{name: "comment string", run: plain(&driver.FindOptions{Comment: "from interop"})},
		{name: "comment document", run: plain(&driver.FindOptions{Comment: bson.D{{Key: "from", Value: "interop"}}}),
			ferretSkip: "FerretDB v1 takes only a string comment where mongod 4.4+ takes any BSON value: server error 14 (TypeMismatch): BSON field 'find.comment' is the wrong type 'object', expected type 'string'"},
		{name: "hint by name", run: plain(&driver.FindOptions{Hint: "_id_"})},
		{name: "hint by key", run: plain(&driver.FindOptions{Hint: bson.D{{Key: "_id", Value: 1}}})},
		{name: "maxTimeMS", run: plain(&driver.FindOptions{MaxTime: driver.Ptr(5 * time.Second)})},
		{name: "allowDiskUse", run: plain(&driver.FindOptions{AllowDiskUse: driver.Ptr(true)})},
		{name: "hint naming no index", ferretSkip: "FerretDB v1 ignores hint: a hint naming no index returns the documents where mongod fails with BadValue (2) \"hint provided does not correspond to an existing index\"",
			run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
				interopSeed(t, ctx, env.coll, 1)
				_, err := env.coll.Find(ctx, bson.D{}, &driver.FindOptions{Hint: "no_such_index"})
				var ce *driver.CommandError
				if !errors.As(err, &ce) || ce.Code != 2 || !strings.Contains(ce.Message, "hint provided does not correspond to an existing index") {
					t.Fatalf("want BadValue (2) for a hint naming no index, got %v", err)
				}
				return fmt.Sprint(ce.Code)
			}},
		{name: "showRecordId", ferretSkip: `FerretDB v1 returns "$recordId": 0 for every document, where mongod gives each its own record id`,
			run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
				docs := all(t, ctx, env, &driver.FindOptions{ShowRecordID: driver.Ptr(true)})
				seen := map[int64]bool{}
				for _, d := range docs {
					id, ok := d.Lookup("$recordId").AsInt64OK()
					if !ok || seen[id] {
						t.Fatalf("$recordId missing or repeated in %v", docs)
					}
					seen[id] = true
				}
				return fmt.Sprintf("%d distinct record ids", len(seen))
			}},
		{name: "returnKey without an index", ferretSkip: ferretNotImplemented("returnKey"),
			run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
				docs := all(t, ctx, env, &driver.FindOptions{ReturnKey: driver.Ptr(true)})
				if len(docs) != 5 || docs[0].String() != "{}" {
					t.Fatalf("returnKey with a collection scan: want 5 empty documents, got %v", docs)
				}
				return fmt.Sprint(docs)
			}},
		{name: "noCursorTimeout", ferretSkip: ferretNotImplemented("noCursorTimeout"), run: plain(&driver.FindOptions{NoCursorTimeout: driver.Ptr(true)})},
		{name: "allowPartialResults", ferretSkip: ferretNotImplemented("allowPartialResults"), run: plain(&driver.FindOptions{AllowPartialResults: driver.Ptr(true)})},
		{name: "tailable on a collection that is not capped", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
			interopSeed(t, ctx, env.coll, 1)
			_, err := env.coll.Find(ctx, bson.D{}, &driver.FindOptions{CursorType: driver.Tailable})
			var ce *driver.CommandError
			if !errors.As(err, &ce) || ce.Code != 2 || !strings.Contains(ce.Message, "tailable cursor requested on non capped collection") {
				t.Fatalf("want BadValue (2), got %v", err)
			}
			return fmt.Sprint(ce.Code)
		}},
	}
}

// interopCappedFlows: capped collections and tailable cursors.
var interopCappedFlows = []interopFlow{
	{name: "capped max keeps the newest", ferretSkip: "FerretDB v1 does not enforce a capped collection's max: after 5 inserts into {capped: true, size: 4096, max: 3} all 5 documents remain",
		run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
			if _, err := env.client.RunCommand(ctx, env.db.Name(), bson.D{{Key: "create", Value: "log"}, {Key: "capped", Value: true}, {Key: "size", Value: 4096}, {Key: "max", Value: 3}}); err != nil {
				t.Fatal(err)
			}
			log := env.db.Collection("log")
			for i := 1; i <= 5; i++ {
				if _, err := log.InsertOne(ctx, item{ID: i}); err != nil {
					t.Fatal(err)
				}
			}
			got := interopIDs(interopFindAll(t, ctx, log, bson.D{}))
			if fmt.Sprint(got) != "[3 4 5]" {
				t.Fatalf("capped max 3 after 5 inserts: %v, want [3 4 5] in insertion order", got)
			}
			return fmt.Sprint(got)
		}},
	{name: "tailable cursor waits for new documents", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		return interopTail(t, ctx, env, 1)
	}},
	{name: "tailable cursor whose first batch holds every document", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		return interopTail(t, ctx, env, 0)
	}, ferretSkip: "FerretDB v1 closes a tailable cursor (cursor id 0) when its first batch holds every document of the capped collection, where mongod keeps it open for documents inserted later; with a batch size smaller than the collection FerretDB keeps it open"},
}

// interopTail opens a tailable cursor on a capped collection of two
// documents (batchSize 0: the server's default), reads them with TryNext,
// and checks that the cursor stays open and sees a document inserted
// afterwards.
func interopTail(t *testing.T, ctx context.Context, env *interopEnv, batchSize int32) string {
	if _, err := env.client.RunCommand(ctx, env.db.Name(), bson.D{{Key: "create", Value: "log"}, {Key: "capped", Value: true}, {Key: "size", Value: 1 << 20}}); err != nil {
		t.Fatal(err)
	}
	log := env.db.Collection("log")
	if _, err := log.InsertMany(ctx, []any{item{ID: 1}, item{ID: 2}}); err != nil {
		t.Fatal(err)
	}
	cur, err := log.Find(ctx, bson.D{}, &driver.FindOptions{CursorType: driver.Tailable, BatchSize: &batchSize})
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close(ctx)
	var got []int
	for cur.TryNext(ctx) {
		var it item
		if err := cur.Decode(&it); err != nil {
			t.Fatal(err)
		}
		got = append(got, it.ID)
	}
	if cur.Err() != nil || cur.ID() == 0 {
		t.Fatalf("after the existing documents %v: err %v, cursor %d; want an open cursor", got, cur.Err(), cur.ID())
	}
	if _, err := log.InsertOne(ctx, item{ID: 3}); err != nil {
		t.Fatal(err)
	}
	if !cur.TryNext(ctx) {
		t.Fatalf("TryNext after an insert: nothing (err %v, cursor %d)", cur.Err(), cur.ID())
	}
	var it item
	if err := cur.Decode(&it); err != nil || it.ID != 3 {
		t.Fatalf("the new document: %+v, %v", it, err)
	}
	got = append(got, it.ID)
	return fmt.Sprint(got)
}

// interopCommandCounter counts the commands a client starts, by name.
type interopCommandCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *interopCommandCounter) CommandStarted(ctx context.Context, e *event.CommandStarted) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[e.CommandName]++
	return ctx
}
func (c *interopCommandCounter) CommandSucceeded(context.Context, *event.CommandSucceeded) {}
func (c *interopCommandCounter) CommandFailed(context.Context, *event.CommandFailed)       {}

func (c *interopCommandCounter) count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[name]
}

var interopBatchFlows = []interopFlow{
	{name: "InsertMany split by maxMessageSizeBytes", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		// Four documents of 12.5 MB are over the 48 MB both servers
		// allow in one message: three go in the first insert command,
		// one in the second.
		var counter interopCommandCounter
		c := dial(t, env.uri, &driver.ClientOptions{Monitors: []any{&counter}})
		coll := c.Database(env.db.Name()).Collection("big")
		big := strings.Repeat("x", 25<<19)
		var docs []any
		for i := 1; i <= 4; i++ {
			docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "s", Value: big}})
		}
		r, err := coll.InsertMany(ctx, docs)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.InsertedIDs) != 4 || counter.count("insert") != 2 {
			t.Fatalf("%d interopIDs in %d insert commands; want 4 in 2", len(r.InsertedIDs), counter.count("insert"))
		}
		cur, err := coll.Find(ctx, bson.D{}, &driver.FindOptions{Projection: bson.D{{Key: "s", Value: 0}}, Sort: bson.D{{Key: "_id", Value: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		back, err := driver.All[item](ctx, cur)
		if err != nil || fmt.Sprint(interopIDs(back)) != "[1 2 3 4]" {
			t.Fatalf("read back %v, %v", interopIDs(back), err)
		}
		// A document over maxBsonObjectSize is refused before sending.
		n := counter.count("insert")
		_, err = coll.InsertOne(ctx, bson.D{{Key: "s", Value: strings.Repeat("x", 16<<20)}})
		if err == nil || counter.count("insert") != n {
			t.Fatalf("a 16 MiB string: %v after %d more insert commands", err, counter.count("insert")-n)
		}
		return fmt.Sprintf("%d commands for %d documents", 2, len(back))
	}},
	{name: "Find default first batch and getMore", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		interopSeed(t, ctx, env.coll, 250)
		cur, err := env.coll.Find(ctx, bson.D{}, &driver.FindOptions{Sort: bson.D{{Key: "_id", Value: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		first := cur.RemainingBatchLength()
		if first != 101 || cur.ID() == 0 {
			t.Fatalf("first batch %d documents, cursor %d; want 101 and an open cursor", first, cur.ID())
		}
		got, err := driver.All[item](ctx, cur)
		if err != nil || len(got) != 250 || got[249].ID != 250 {
			t.Fatalf("All: %d, %v", len(got), err)
		}
		return fmt.Sprintf("first batch %d, %d in all", first, len(got))
	}},
}

func TestInteropBSONTypes(t *testing.T) { runInteropFlows(t, interopBSONTypeFlows()) }

func TestInteropFindOptions(t *testing.T) { runInteropFlows(t, interopFindOptionFlows()) }

func TestInteropCapped(t *testing.T) { runInteropFlows(t, interopCappedFlows) }

func TestInteropBatches(t *testing.T) { runInteropFlows(t, interopBatchFlows) }

// interopPeople is the data set of the query flows: nested documents, arrays of
// values and of documents, null, a missing field, and the three numeric
// types.
const interopPeople = `[
 {"_id": 1, "name": "ada", "age": 36, "tags": ["math", "code"], "addr": {"city": "london", "zip": "N1"}, "scores": [{"k": "a", "v": 5}, {"k": "b", "v": 9}]},
 {"_id": 2, "name": "bob", "age": {"$numberLong": "25"}, "tags": ["code"], "addr": {"city": "paris"}, "scores": [{"k": "a", "v": 7}]},
 {"_id": 3, "name": "Cy", "age": null, "tags": [], "scores": []},
 {"_id": 4, "name": "dee", "age": 41.5, "tags": ["math"], "addr": {"city": "london", "zip": "E2"}},
 {"_id": 5, "name": "eve", "age": 19}
]`

func interopSeedPeople(t *testing.T, ctx context.Context, coll *driver.Collection) {
	t.Helper()
	raw, err := bson.ParseExtJSON([]byte(`{"a": ` + interopPeople + `}`))
	if err != nil {
		t.Fatal(err)
	}
	var docs []any
	it := raw.Lookup("a").Array().Iter()
	for it.Next() {
		docs = append(docs, it.Value().Document())
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
}

// interopQueryCases are filters (Extended JSON) over interopPeople, with the _ids
// mongod returns in _id order.
var interopQueryCases = []struct {
	filter, want string
	ferretSkip   string
}{
	{`{"age": {"$gt": 30}}`, "[1 4]", ""},
	{`{"age": {"$gte": 19, "$lt": 36}}`, "[2 5]", ""},
	{`{"age": {"$ne": 25}}`, "[1 3 4 5]", ""},
	{`{"age": null}`, "[3]", ""},
	{`{"addr": {"$exists": false}}`, "[3 5]", ""},
	{`{"age": {"$type": "number"}}`, "[1 2 4 5]", ""},
	{`{"age": {"$mod": [5, 0]}}`, "[2]", ""},
	{`{"tags": "math"}`, "[1 4]", ""},
	{`{"tags.0": "code"}`, "[2]", ""},
	{`{"tags": {"$size": 0}}`, "[3]", ""},
	{`{"tags": {"$all": ["math", "code"]}}`, "[1]", ""},
	{`{"addr.city": "london"}`, "[1 4]", ""},
	{`{"addr": {"city": "paris"}}`, "[2]", ""},
	{`{"scores": {"$elemMatch": {"k": "a", "v": {"$gt": 6}}}}`, "[2]",
		"FerretDB v1's $elemMatch takes only operators, not field conditions: server error 2 (BadValue): unknown operator: k"},
	{`{"tags": {"$elemMatch": {"$eq": "code"}}}`, "[1 2]", ""},
	{`{"scores.v": 9}`, "[1]", ""},
	{`{"name": {"$regex": "^[a-c]", "$options": "i"}}`, "[1 2 3]", ""},
	{`{"name": {"$in": ["ada", "eve", "zed"]}}`, "[1 5]", ""},
	{`{"name": {"$nin": ["ada", "eve"]}}`, "[2 3 4]", ""},
	{`{"$or": [{"age": {"$lt": 20}}, {"tags": "code"}]}`, "[1 2 5]", ""},
	{`{"$and": [{"tags": "math"}, {"age": {"$lt": 40}}]}`, "[1]", ""},
	{`{"$nor": [{"tags": "math"}, {"age": null}]}`, "[2 5]", ""},
	{`{"age": {"$not": {"$gt": 30}}}`, "[2 3 5]", ""},
	{`{"$expr": {"$gt": ["$age", 30]}}`, "[1 4]",
		"FerretDB v1 has no $gt expression: server error 238 (NotImplemented): Invalid $match :: caused by :: The operator $gt is not implemented yet"},
	{`{"$expr": {"$eq": ["$addr.city", "london"]}}`, "[1 4]",
		"FerretDB v1 has no $eq expression: server error 238 (NotImplemented): Invalid $match :: caused by :: The operator $eq is not implemented yet"},
}

func interopQueryFlows() []interopFlow {
	var flows []interopFlow
	for _, qc := range interopQueryCases {
		flows = append(flows, interopFlow{name: qc.filter, ferretSkip: qc.ferretSkip, run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
			interopSeedPeople(t, ctx, env.coll)
			filter, err := bson.ParseExtJSON([]byte(qc.filter))
			if err != nil {
				t.Fatal(err)
			}
			got := interopIDs(interopFindAll(t, ctx, env.coll, filter, &driver.FindOptions{Sort: bson.D{{Key: "_id", Value: 1}}}))
			if fmt.Sprint(got) != qc.want {
				t.Fatalf("find %s: %v, want %s", qc.filter, got, qc.want)
			}
			return fmt.Sprint(got)
		}})
	}
	flows = append(flows,
		interopFlow{name: "sort across null and the numeric types", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
			interopSeedPeople(t, ctx, env.coll)
			up := interopIDs(interopFindAll(t, ctx, env.coll, bson.D{}, &driver.FindOptions{Sort: bson.D{{Key: "age", Value: 1}}}))
			down := interopIDs(interopFindAll(t, ctx, env.coll, bson.D{}, &driver.FindOptions{Sort: bson.D{{Key: "age", Value: -1}}}))
			if fmt.Sprint(up) != "[3 5 2 1 4]" || fmt.Sprint(down) != "[4 1 2 5 3]" {
				t.Fatalf("sort by age: %v ascending, %v descending; want [3 5 2 1 4] and [4 1 2 5 3]", up, down)
			}
			return fmt.Sprint(up, down)
		}},
		interopFlow{name: "sort on two keys and a nested field", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
			interopSeedPeople(t, ctx, env.coll)
			got := interopIDs(interopFindAll(t, ctx, env.coll, bson.D{}, &driver.FindOptions{Sort: bson.D{{Key: "addr.city", Value: 1}, {Key: "_id", Value: -1}}}))
			// Missing addr.city sorts as null, first.
			if fmt.Sprint(got) != "[5 3 4 1 2]" {
				t.Fatalf("sort by addr.city, -_id: %v, want [5 3 4 1 2]", got)
			}
			return fmt.Sprint(got)
		}},
		interopFlow{name: "collation on find", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
			interopSeedPeople(t, ctx, env.coll)
			en2 := bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 2}}
			got := interopIDs(interopFindAll(t, ctx, env.coll, bson.D{{Key: "name", Value: "CY"}}, &driver.FindOptions{Collation: en2}))
			sorted := interopIDs(interopFindAll(t, ctx, env.coll, bson.D{}, &driver.FindOptions{Collation: en2, Sort: bson.D{{Key: "name", Value: 1}}}))
			// Without a collation "Cy" sorts before the lower-case names.
			plain := interopIDs(interopFindAll(t, ctx, env.coll, bson.D{}, &driver.FindOptions{Sort: bson.D{{Key: "name", Value: 1}}}))
			if fmt.Sprint(got, sorted, plain) != "[3] [1 2 3 4 5] [3 1 2 4 5]" {
				t.Fatalf("name CY under strength 2: %v; sorted by name under it %v, without it %v", got, sorted, plain)
			}
			return fmt.Sprint(got, sorted, plain)
		}, ferretSkip: `FerretDB v1 has no collation: server error 238 (NotImplemented): find: support for field "collation" with value ... is not implemented yet`},
		interopFlow{name: "let on find", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
			interopSeedPeople(t, ctx, env.coll)
			got := interopIDs(interopFindAll(t, ctx, env.coll, bson.D{{Key: "$expr", Value: bson.D{{Key: "$eq", Value: bson.A{"$name", "$$who"}}}}},
				&driver.FindOptions{Let: bson.D{{Key: "who", Value: "dee"}}}))
			if fmt.Sprint(got) != "[4]" {
				t.Fatalf("$expr with $$who = dee: %v", got)
			}
			return fmt.Sprint(got)
		}, ferretSkip: `FerretDB v1 has no let: server error 238 (NotImplemented): find: support for field "let" with value ... is not implemented yet`},
		interopFlow{name: "projection of a nested field", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
			interopSeedPeople(t, ctx, env.coll)
			raw, err := env.coll.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}, &driver.FindOneOptions{
				Projection: bson.D{{Key: "addr.city", Value: 1}, {Key: "_id", Value: 0}}}).Raw()
			if err != nil {
				t.Fatal(err)
			}
			if raw.String() != `{"addr":{"city":"london"}}` {
				t.Fatalf("projection: %s", raw)
			}
			return raw.String()
		}},
		interopFlow{name: "projection with $slice", ferretSkip: "FerretDB v1 does not support $slice in a find projection: server error 238 (NotImplemented): projection expression { $slice: 1 } is not supported",
			run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
				interopSeedPeople(t, ctx, env.coll)
				raw, err := env.coll.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}, &driver.FindOneOptions{
					Projection: bson.D{{Key: "tags", Value: bson.D{{Key: "$slice", Value: 1}}}, {Key: "name", Value: 1}}}).Raw()
				if err != nil {
					t.Fatal(err)
				}
				if raw.String() != `{"_id":1,"name":"ada","tags":["math"]}` {
					t.Fatalf("projection: %s", raw)
				}
				return raw.String()
			}},
	)
	return flows
}

func TestInteropQueries(t *testing.T) { runInteropFlows(t, interopQueryFlows()) }

var interopClientFlows = []interopFlow{
	{name: "getMore on a cursor the server killed", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		interopSeed(t, ctx, env.coll, 10)
		cur, err := env.coll.Find(ctx, bson.D{}, &driver.FindOptions{BatchSize: driver.Ptr[int32](2), Sort: bson.D{{Key: "_id", Value: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		defer cur.Close(ctx)
		if _, err := env.client.RunCommand(ctx, env.db.Name(), bson.D{{Key: "killCursors", Value: env.coll.Name()}, {Key: "cursors", Value: bson.A{cur.ID()}}}); err != nil {
			t.Fatal(err)
		}
		n := 0
		for cur.Next(ctx) {
			n++
		}
		var ce *driver.CommandError
		if n != 2 || !errors.As(cur.Err(), &ce) || ce.Code != 43 {
			t.Fatalf("after killCursors: %d documents then %v; want the first batch's 2 then CursorNotFound (43)", n, cur.Err())
		}
		if cur.ID() != 0 {
			t.Errorf("cursor id %d after CursorNotFound", cur.ID())
		}
		return fmt.Sprintf("%d documents, then %d %s", n, ce.Code, ce.CodeName)
	}},
	{name: "Disconnect with a live cursor", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		interopSeed(t, ctx, env.coll, 10)
		c := dial(t, env.uri, nil)
		cur, err := c.Database(env.db.Name()).Collection(env.coll.Name()).Find(ctx, bson.D{}, &driver.FindOptions{BatchSize: driver.Ptr[int32](3)})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Disconnect(ctx); err != nil {
			t.Fatalf("Disconnect: %v", err)
		}
		n := 0
		for cur.Next(ctx) {
			n++
		}
		if !errors.Is(cur.Err(), driver.ErrClientDisconnected) {
			t.Fatalf("Next after Disconnect: %d documents, then %v; want ErrClientDisconnected", n, cur.Err())
		}
		if err := cur.Close(ctx); err != nil {
			t.Errorf("Close after Disconnect: %v", err)
		}
		_, err = c.Database(env.db.Name()).Collection(env.coll.Name()).InsertOne(ctx, item{ID: 99})
		if !errors.Is(err, driver.ErrClientDisconnected) {
			t.Fatalf("InsertOne after Disconnect: %v", err)
		}
		return fmt.Sprintf("%d documents from the batch in hand, then ErrClientDisconnected", n)
	}},
	{name: "concurrent inserts and reads", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		return interopConcurrent(t, ctx, env.coll)
	}},
	{name: "concurrent inserts and reads on one connection", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		c := dial(t, env.uri+"?maxPoolSize=1", nil)
		return interopConcurrent(t, ctx, c.Database(env.db.Name()).Collection(env.coll.Name()))
	}},
	{name: "compressors asked for", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		// mongotest compresses; FerretDB v1 offers no compressor, so the
		// client sends uncompressed.
		return interopClientCRUD(t, ctx, env, env.uri+"?compressors=zstd,snappy,zlib", nil)
	}},
	{name: "Stable API v1 strict", run: func(t *testing.T, ctx context.Context, env *interopEnv) string {
		return interopClientCRUD(t, ctx, env, env.uri, &driver.ClientOptions{ServerAPI: &driver.ServerAPI{Version: driver.ServerAPIVersion1, Strict: driver.Ptr(true)}})
	}},
}

// interopConcurrent has 8 goroutines insert and read back 25 items each
// through coll.
func interopConcurrent(t *testing.T, ctx context.Context, coll *driver.Collection) string {
	t.Helper()
	const workers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				id := w*each + i + 1
				if _, err := coll.InsertOne(ctx, item{ID: id, Qty: id}); err != nil {
					errs <- err
					return
				}
				got, err := driver.Decode[item](coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}))
				if err != nil || got.Qty != id {
					errs <- fmt.Errorf("FindOne(%d): %+v, %v", id, got, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got := interopFindAll(t, ctx, coll, bson.D{}, &driver.FindOptions{Sort: bson.D{{Key: "_id", Value: 1}}})
	if len(got) != workers*each || got[len(got)-1].ID != workers*each {
		t.Fatalf("%d documents after %d concurrent inserts", len(got), workers*each)
	}
	return fmt.Sprintf("%d documents", len(got))
}

// interopClientCRUD runs a short insert-find-update-delete round through a
// client of its own made with opts.
func interopClientCRUD(t *testing.T, ctx context.Context, env *interopEnv, uri string, opts *driver.ClientOptions) string {
	t.Helper()
	c := dial(t, uri, opts)
	coll := c.Database(env.db.Name()).Collection(env.coll.Name())
	if _, err := coll.InsertMany(ctx, []any{item{ID: 1, Qty: 1}, item{ID: 2, Qty: 2}, item{ID: 3, Qty: 3}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.UpdateMany(ctx, bson.D{{Key: "qty", Value: bson.D{{Key: "$gte", Value: 2}}}}, bson.D{{Key: "$set", Value: bson.D{{Key: "tag", Value: "big"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: 3}}); err != nil {
		t.Fatal(err)
	}
	cur, err := coll.Find(ctx, bson.D{}, &driver.FindOptions{Sort: bson.D{{Key: "_id", Value: 1}}, BatchSize: driver.Ptr[int32](1)})
	if err != nil {
		t.Fatal(err)
	}
	got, err := driver.All[item](ctx, cur)
	if err != nil || fmt.Sprint(got) != "[{1 1 } {2 2 big}]" {
		t.Fatalf("read back %v, %v", got, err)
	}
	return fmt.Sprint(got)
}

func TestInteropClient(t *testing.T) { runInteropFlows(t, interopClientFlows) }

// TestInteropAuthenticatedCRUD: through SCRAM, against mongotest with
// authentication and FerretDB's authenticating server
// (MONGOSCOPE_FERRETDB_AUTH_URI): a user's CRUD works; a wrong password
// fails the handshake with AuthenticationFailed (18) in an *AuthError;
// no credential is Unauthorized (13) for a find.
func TestInteropAuthenticatedCRUD(t *testing.T) {
	type target struct {
		name, uri, skip string
	}
	srv := mongotest.NewServer(t, mongotest.Options{Auth: true})
	const pass = "interop-Password-1"
	if err := srv.AddUser("admin", "mongoscope", pass); err != nil {
		t.Fatal(err)
	}
	targets := []target{{name: "mongotest", uri: strings.Replace(srv.URI(), "mongodb://", "mongodb://mongoscope:"+pass+"@", 1) + "?authSource=admin"}}
	switch uri := os.Getenv("MONGOSCOPE_FERRETDB_AUTH_URI"); {
	case uri != "":
		targets = append(targets, target{name: "ferretdb", uri: uri})
	case os.Getenv("MONGOSCOPE_REQUIRE_FERRETDB") == "1":
		t.Fatal("MONGOSCOPE_FERRETDB_AUTH_URI is not set but MONGOSCOPE_REQUIRE_FERRETDB=1")
	default:
		targets = append(targets, target{name: "ferretdb", skip: "MONGOSCOPE_FERRETDB_AUTH_URI is not set; make test starts FerretDB (tools/ferretdb.sh) and sets it"})
	}
	got := map[string]string{}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			if tg.skip != "" {
				t.Skip(tg.skip)
			}
			ctx := testCtx(t)
			u, err := url.Parse(tg.uri)
			if err != nil || u.User == nil {
				t.Fatalf("the URI of %s has no credential (%v)", tg.name, err)
			}
			user := u.User.Username()
			password, _ := u.User.Password()
			dbName := interopDBName("auth")
			c := dial(t, tg.uri, nil)
			coll := c.Database(dbName).Collection("items")
			t.Cleanup(func() { _, _ = c.RunCommand(context.Background(), dbName, bson.D{{Key: "dropDatabase", Value: 1}}) })
			if _, err := coll.InsertMany(ctx, []any{item{ID: 1, Qty: 1}, item{ID: 2, Qty: 2}}); err != nil {
				t.Fatalf("authenticated InsertMany: %v", err)
			}
			items := interopFindAll(t, ctx, coll, bson.D{}, &driver.FindOptions{Sort: bson.D{{Key: "_id", Value: 1}}})
			if fmt.Sprint(interopIDs(items)) != "[1 2]" {
				t.Fatalf("authenticated Find: %v", interopIDs(items))
			}

			// The same URI with a wrong password.
			wu := *u
			wu.User = url.UserPassword(user, "wrong-Password-2")
			wrong := dial(t, wu.String(), nil)
			_, err = wrong.Database(dbName).Collection("items").InsertOne(ctx, item{ID: 3})
			var ae *driver.AuthError
			var he *driver.HandshakeError
			if !errors.As(err, &ae) || !errors.As(err, &he) || ae.Code != 18 || ae.Username != user {
				t.Fatalf("wrong password: %v; want a HandshakeError holding an AuthError with code 18", err)
			}
			if strings.Contains(err.Error(), "wrong-Password-2") || strings.Contains(err.Error(), password) {
				t.Fatalf("the error shows a password: %v", err)
			}

			// No credential at all.
			nu := *u
			nu.User, nu.RawQuery = nil, ""
			none := dial(t, nu.String(), nil)
			_, err = none.Database(dbName).Collection("items").Find(ctx, bson.D{})
			var ce *driver.CommandError
			if !errors.As(err, &ce) || ce.Code != 13 {
				t.Fatalf("find without a credential: %v; want Unauthorized (13)", err)
			}
			got[tg.name] = fmt.Sprintf("crud %v; wrong password %d %s; no credential %d %s", interopIDs(items), ae.Code, ae.CodeName, ce.Code, ce.CodeName)
		})
	}
	if f, ok := got["ferretdb"]; ok && f != got["mongotest"] {
		t.Errorf("ferretdb and mongotest differ:\nferretdb:  %s\nmongotest: %s", f, got["mongotest"])
	}
}
