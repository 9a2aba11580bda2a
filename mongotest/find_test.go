package mongotest

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/internal/wire"
)

func insertN(t testing.TB, c *client, db, coll string, n int) {
	t.Helper()
	docs := bson.A{}
	for i := 0; i < n; i++ {
		docs = append(docs, d("_id", i, "v", n-i, "g", i%3))
	}
	c.mustRun(db, d("insert", coll, "documents", docs))
}

func cursorID(t testing.TB, r bson.Raw) int64 {
	t.Helper()
	v, err := r.LookupPath("cursor.id")
	if err != nil || v.Type != bson.TypeInt64 {
		t.Fatalf("no int64 cursor.id in %s", r)
	}
	return v.Int64()
}

func batchIDs(t testing.TB, r bson.Raw, key string) string {
	t.Helper()
	v, err := r.LookupPath("cursor." + key)
	if err != nil {
		t.Fatalf("no cursor.%s in %s", key, r)
	}
	var ids []string
	it := v.Array().Iter()
	for it.Next() {
		ids = append(ids, relaxed(t, it.Value().Document().Lookup("_id")))
	}
	return strings.Join(ids, ",")
}

func TestFind(t *testing.T) {
	_, c := crudServer(t)
	insertN(t, c, "db", "c", 6)
	tests := []struct {
		name string
		cmd  bson.D
		ids  string
		open bool
	}{
		{"all", d("find", "c"), "0,1,2,3,4,5", false},
		{"filter", d("find", "c", "filter", d("g", 1)), "1,4", false},
		{"by _id", d("find", "c", "filter", d("_id", 3)), "3", false},
		{"by _id numeric types", d("find", "c", "filter", d("_id", 3.0)), "3", false},
		{"by missing _id", d("find", "c", "filter", d("_id", 30)), "", false},
		{"sort", d("find", "c", "sort", d("v", 1)), "5,4,3,2,1,0", false},
		{"sort two keys", d("find", "c", "sort", d("g", -1, "_id", 1)), "2,5,1,4,0,3", false},
		{"natural reverse", d("find", "c", "sort", d("$natural", -1)), "5,4,3,2,1,0", false},
		{"skip limit", d("find", "c", "skip", 1, "limit", 2), "1,2", false},
		{"sort skip limit", d("find", "c", "sort", d("v", 1), "skip", 2, "limit", 3), "3,2,1", false},
		{"batchSize", d("find", "c", "batchSize", 2), "0,1", true},
		{"batchSize zero", d("find", "c", "batchSize", 0), "", true},
		{"singleBatch", d("find", "c", "batchSize", 2, "singleBatch", true), "0,1", false},
		{"limit below batchSize", d("find", "c", "limit", 3, "batchSize", 5), "0,1,2", false},
		{"hint by name", d("find", "c", "hint", "_id_"), "0,1,2,3,4,5", false},
		{"hint natural", d("find", "c", "hint", d("$natural", 1), "comment", "x", "noCursorTimeout", true), "0,1,2,3,4,5", false},
		{"missing collection", d("find", "nope"), "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := c.mustRun("db", tc.cmd)
			if got := batchIDs(t, r, "firstBatch"); got != tc.ids {
				t.Errorf("ids %q, want %q", got, tc.ids)
			}
			if id := cursorID(t, r); (id != 0) != tc.open {
				t.Errorf("cursor id %d, want open=%v", id, tc.open)
			}
			if ns := r.Lookup("cursor", "ns").StringValue(); !strings.HasPrefix(ns, "db.") {
				t.Errorf("ns %q", ns)
			}
		})
	}
	r := c.mustRun("db", d("find", "c", "filter", d("_id", 2), "projection", d("v", 1, "_id", 0)))
	expectField(t, r, "cursor.firstBatch", `[{"v":4}]`)
	r = c.mustRun("db", d("find", "c", "sort", d("_id", -1), "projection", d("g", 0), "limit", 1))
	expectField(t, r, "cursor.firstBatch", `[{"_id":5,"v":1}]`)
	r = c.mustRun("db", d("find", "c", "filter", d("g", 2), "projection", d("v", 1)))
	expectField(t, r, "cursor.firstBatch", `[{"_id":2,"v":4},{"_id":5,"v":1}]`)

	errTests := []struct {
		name string
		cmd  bson.D
		code int32
		msg  string
	}{
		{"negative limit", d("find", "c", "limit", -1), 51024, "limit"},
		{"negative skip", d("find", "c", "skip", -1), 51024, "skip"},
		{"negative batchSize", d("find", "c", "batchSize", -1), 51024, "batchSize"},
		{"unknown field", d("find", "c", "bogus", 1), 40415, "find.bogus"},
		{"collation alternate shifted", d("find", "c", "collation", d("locale", "fr", "alternate", "shifted")), 238, "alternate"},
		{"collation bad strength", d("find", "c", "collation", d("locale", "fr", "strength", 9)), 51024, "strength"},
		{"collation not a document", d("find", "c", "collation", "fr"), 14, "'find.collation' is the wrong type 'string'"},
		{"collation bad locale", d("find", "c", "collation", d("locale", "xx_bogus")), 2, "locale"},
		{"let not a document", d("find", "c", "let", 1), 14, "'find.let' is the wrong type"},
		{"$expr in $elemMatch", d("find", "c", "filter", d("a", d("$elemMatch", d("$expr", d("$eq", bson.A{1, 1}))))), 2, "top-level document"},
		{"undefined variable", d("find", "c", "filter", d("$expr", d("$eq", bson.A{"$a", "$$nope"}))), 17276, "nope"},
		{"returnKey with a sort", d("find", "c", "returnKey", true, "sort", d("a", 1)), 238, "returnKey"},
		{"min", d("find", "c", "min", d("_id", 1)), 238, "min"},
		{"bad operator", d("find", "c", "filter", d("a", d("$nosuch", 1))), 2, "$nosuch"},
		{"filter type", d("find", "c", "filter", 1), 14, "find.filter"},
		{"awaitData alone", d("find", "c", "awaitData", true), 9, "awaitData"},
		{"tailable on non-capped", d("find", "c", "tailable", true), 2, "non capped"},
		{"unknown hint", d("find", "c", "hint", "nosuch_1"), 2, "hint provided does not correspond"},
	}
	for _, tc := range errTests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.run("db", tc.cmd)
			wantCode(t, err, tc.code, tc.msg)
		})
	}
}

func TestGetMoreKillCursors(t *testing.T) {
	s, c := crudServer(t)
	insertN(t, c, "db", "c", 250)
	r := c.mustRun("db", d("find", "c"))
	if n := len(strings.Split(batchIDs(t, r, "firstBatch"), ",")); n != defaultFirstBatch {
		t.Fatalf("first batch of %d, want %d", n, defaultFirstBatch)
	}
	id := cursorID(t, r)
	r = c.mustRun("db", d("getMore", id, "collection", "c", "batchSize", 100))
	if cursorID(t, r) != id || !strings.HasPrefix(batchIDs(t, r, "nextBatch"), "101,102") {
		t.Fatalf("getMore: %s", r)
	}
	r = c.mustRun("db", d("getMore", id, "collection", "c"))
	if cursorID(t, r) != 0 || !strings.HasSuffix(batchIDs(t, r, "nextBatch"), ",248,249") {
		t.Fatalf("last getMore: %s", r)
	}
	if s.cursors.openCursors() != 0 {
		t.Fatal("exhausted cursor kept")
	}
	_, err := c.run("db", d("getMore", id, "collection", "c"))
	wantCode(t, err, 43, fmt.Sprintf("cursor id %d not found", id))

	// A sorted result resumes in order.
	r = c.mustRun("db", d("find", "c", "sort", d("v", 1), "batchSize", 2, "limit", 5))
	id = cursorID(t, r)
	r = c.mustRun("db", d("getMore", id, "collection", "c", "batchSize", 2))
	if got := batchIDs(t, r, "nextBatch"); got != "247,246" {
		t.Fatalf("sorted getMore %s", got)
	}
	r = c.mustRun("db", d("getMore", id, "collection", "c", "batchSize", 2))
	if got := batchIDs(t, r, "nextBatch"); got != "245" || cursorID(t, r) != 0 {
		t.Fatalf("sorted last getMore %s", r)
	}

	// The limit spans batches of a scan.
	r = c.mustRun("db", d("find", "c", "filter", d("g", 0), "batchSize", 3, "limit", 5))
	id = cursorID(t, r)
	r = c.mustRun("db", d("getMore", id, "collection", "c", "batchSize", 10))
	if got := batchIDs(t, r, "nextBatch"); got != "9,12" || cursorID(t, r) != 0 {
		t.Fatalf("limited getMore %s", r)
	}

	r = c.mustRun("db", d("find", "c", "batchSize", 1))
	id = cursorID(t, r)
	_, err = c.run("db", d("getMore", id, "collection", "other"))
	wantCode(t, err, 13, "different namespace")
	_, err = c.run("db", d("getMore", int32(id), "collection", "c"))
	wantCode(t, err, 14, "long")
	_, err = c.run("db", d("getMore", id, "collection", "c", "maxTimeMS", 10))
	wantCode(t, err, 2, "non-awaitData")
	r = c.mustRun("db", d("killCursors", "c", "cursors", bson.A{id, int64(12345)}))
	expectField(t, r, "cursorsKilled", fmt.Sprintf(`[%d]`, id))
	expectField(t, r, "cursorsNotFound", `[12345]`)
	expectField(t, r, "cursorsAlive", `[]`)
	expectField(t, r, "cursorsUnknown", `[]`)
	_, err = c.run("db", d("getMore", id, "collection", "c"))
	wantCode(t, err, 43, "not found")
}

func TestFailGetMoreAfterCursorCheckout(t *testing.T) {
	s, c := crudServer(t)
	insertN(t, c, "db", "c", 5)
	c.mustRun("admin", d("configureFailPoint", FailGetMoreAfterCursorCheckout, "mode", d("times", 1), "data", d("errorCode", 91, "closeConnection", false)))
	r := c.mustRun("db", d("find", "c", "batchSize", 2))
	id := cursorID(t, r)
	_, err := c.run("db", d("getMore", id, "collection", "c"))
	wantCode(t, err, 91, "failGetMoreAfterCursorCheckout")
	// mongod kills a cursor whose getMore failed.
	_, err = c.run("db", d("getMore", id, "collection", "c"))
	wantCode(t, err, 43, "not found")

	c.mustRun("admin", d("configureFailPoint", FailGetMoreAfterCursorCheckout, "mode", d("times", 1), "data", d("closeConnection", true)))
	id = cursorID(t, c.mustRun("db", d("find", "c", "batchSize", 2)))
	c.send("db", d("getMore", id, "collection", "c"), 0)
	if !c.closed() {
		t.Fatal("connection not closed")
	}
	waitConnError(t, s, "failGetMoreAfterCursorCheckout")
}

func TestTailableAwaitData(t *testing.T) {
	s, c := crudServer(t)
	c.mustRun("db", d("create", "capped", "capped", true, "size", 4096, "max", 3))
	c.mustRun("db", d("insert", "capped", "documents", bson.A{d("_id", 1), d("_id", 2)}))
	r := c.mustRun("db", d("find", "capped", "tailable", true, "awaitData", true, "batchSize", 1))
	id := cursorID(t, r)
	if id == 0 || batchIDs(t, r, "firstBatch") != "1" {
		t.Fatalf("tailable find: %s", r)
	}
	r = c.mustRun("db", d("getMore", id, "collection", "capped"))
	if batchIDs(t, r, "nextBatch") != "2" || cursorID(t, r) != id {
		t.Fatalf("getMore: %s", r)
	}
	// Nothing new: the getMore waits maxTimeMS and returns an empty batch
	// with the cursor still open.
	start := time.Now()
	r = c.mustRun("db", d("getMore", id, "collection", "capped", "maxTimeMS", 100))
	if el := time.Since(start); el < 90*time.Millisecond || el > 3*time.Second {
		t.Errorf("awaitData getMore took %v, want about 100ms", el)
	}
	if batchIDs(t, r, "nextBatch") != "" || cursorID(t, r) != id {
		t.Fatalf("empty getMore: %s", r)
	}
	// An insert while the getMore waits wakes it.
	other := connect(t, s, clientOpts{})
	go func() {
		time.Sleep(50 * time.Millisecond)
		other.nc.Write(wireInsert(t, "db", "capped", d("_id", 3)))
	}()
	start = time.Now()
	r = c.mustRun("db", d("getMore", id, "collection", "capped", "maxTimeMS", 5000))
	if batchIDs(t, r, "nextBatch") != "3" {
		t.Fatalf("woken getMore: %s", r)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("woken getMore took %v", el)
	}
	// A tailable cursor without awaitData returns at once.
	r = c.mustRun("db", d("find", "capped", "tailable", true))
	id2 := cursorID(t, r)
	r = c.mustRun("db", d("getMore", id2, "collection", "capped"))
	if batchIDs(t, r, "nextBatch") != "" || cursorID(t, r) != id2 {
		t.Fatalf("tailable getMore: %s", r)
	}
	// Evicting the cursor's last document loses its position.
	c.mustRun("db", d("insert", "capped", "documents", bson.A{d("_id", 4), d("_id", 5), d("_id", 6), d("_id", 7)}))
	_, err := c.run("db", d("getMore", id, "collection", "capped"))
	wantCode(t, err, 136, "position in capped collection")
	_, err = c.run("db", d("find", "capped", "tailable", true, "sort", d("_id", 1)))
	wantCode(t, err, 2, "tailable")
}

// wireInsert is an OP_MSG insert with moreToCome (no reply), for a client
// that writes from another goroutine.
func wireInsert(t testing.TB, db, coll string, doc bson.D) []byte {
	body := marshal(t, d("insert", coll, "documents", bson.A{doc}, "writeConcern", d("w", 0), "$db", db))
	return wire.AppendMsg(nil, 99, 0, wire.MoreToCome, body)
}

// An awaitData getMore that is waiting ends with the server: Close does
// not wait out maxTimeMS and leaves no goroutine behind.
func TestAwaitDataEndsOnClose(t *testing.T) {
	before := runtime.NumGoroutine()
	s, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, s, clientOpts{})
	c.mustRun("db", d("create", "capped", "capped", true, "size", 4096))
	id := cursorID(t, c.mustRun("db", d("find", "capped", "tailable", true, "awaitData", true)))
	c.send("db", d("getMore", id, "collection", "capped", "maxTimeMS", 60_000), 0)
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	s.Close()
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("Close took %v", el)
	}
	c.nc.Close()
	waitGoroutines(t, before)
}
