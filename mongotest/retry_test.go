package mongotest

import (
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/store"
)

func primaryOpts() Options {
	return Options{Topology: Topology{Role: RolePrimary, SetName: "rs"}}
}

func newLSID() bson.D {
	u := bson.NewUUID()
	return d("id", bson.Binary{Subtype: 4, Data: u[:]})
}

// withTxn adds lsid and txnNumber to cmd.
func withTxn(cmd bson.D, lsid bson.D, txn int64) bson.D {
	return append(append(bson.D{}, cmd...), bson.E{Key: "lsid", Value: lsid}, bson.E{Key: "txnNumber", Value: txn})
}

func TestRetryableWriteDedup(t *testing.T) {
	s := NewServer(t, primaryOpts())
	c := connect(t, s, clientOpts{})
	lsid := newLSID()
	tests := []struct {
		name  string
		cmd   bson.D
		reply map[string]string
	}{
		{"insert", d("insert", "c", "documents", bson.A{d("_id", 1, "n", 0), d("_id", 2, "n", 0)}), map[string]string{"n": "2", "writeErrors": "<missing>"}},
		{"update", d("update", "c", "updates", bson.A{d("q", d("_id", 1), "u", d("$inc", d("n", 1))), d("q", d("_id", 3), "u", d("$inc", d("n", 1)), "upsert", true)}),
			map[string]string{"n": "2", "nModified": "1", "upserted": `[{"index":1,"_id":3}]`}},
		{"findAndModify", d("findAndModify", "c", "query", d("_id", 2), "update", d("$inc", d("n", 5)), "new", true),
			map[string]string{"value": `{"_id":2,"n":5}`, "lastErrorObject": `{"n":1,"updatedExisting":true}`}},
		{"delete", d("delete", "c", "deletes", bson.A{d("q", d("_id", 3), "limit", 1)}), map[string]string{"n": "1"}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := withTxn(tc.cmd, lsid, int64(i+1))
			for attempt := 0; attempt < 3; attempt++ {
				r := c.mustRun("db", cmd)
				for path, want := range tc.reply {
					expectField(t, r, path, want)
				}
			}
		})
	}
	want := `[{"_id":1,"n":1},{"_id":2,"n":5}]`
	if got := findAll(t, c, "db", "c"); js(t, got) != js(t, want) {
		t.Fatalf("collection holds %s, want %s", got, want)
	}
	_, err := c.run("db", withTxn(d("insert", "c", "documents", bson.A{d("_id", 9)}), lsid, 1))
	wantCode(t, err, 225, "newer retryable write with txnNumber 4")
	// Another session has its own numbers.
	c.mustRun("db", withTxn(d("insert", "c", "documents", bson.A{d("_id", 9)}), newLSID(), 1))

	errTests := []struct {
		name string
		cmd  bson.D
		code int32
		msg  string
	}{
		{"no lsid", d("insert", "c", "documents", bson.A{d("_id", 10)}, "txnNumber", int64(1)), 72, "session ID"},
		{"int32 txnNumber", d("insert", "c", "documents", bson.A{d("_id", 10)}, "lsid", lsid, "txnNumber", int32(9)), 14, "txnNumber"},
		{"autocommit", withTxn(d("insert", "c", "documents", bson.A{d("_id", 10)}, "autocommit", false), lsid, 9), 238, "transactions"},
	}
	for _, tc := range errTests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.run("db", tc.cmd)
			wantCode(t, err, tc.code, tc.msg)
		})
	}
}

func TestOnPrimaryTransactionalWrite(t *testing.T) {
	s := NewServer(t, primaryOpts())
	setup := connect(t, s, clientOpts{})
	lsid := newLSID()

	// The default closes the connection after the write is applied; the
	// retry answers from the record.
	setup.mustRun("admin", d("configureFailPoint", OnPrimaryTransactionalWrite, "mode", d("times", 1)))
	c := connect(t, s, clientOpts{})
	ins := withTxn(d("insert", "c", "documents", bson.A{d("_id", 1), d("_id", 2)}), lsid, 1)
	c.send("db", ins, 0)
	if !c.closed() {
		t.Fatal("connection not closed by the fail point")
	}
	waitConnError(t, s, OnPrimaryTransactionalWrite)
	r := setup.mustRun("db", ins)
	expectField(t, r, "n", "2")
	expectField(t, r, "writeErrors", "<missing>")

	// failBeforeCommitExceptionCode: the write is not reflected.
	setup.mustRun("admin", d("configureFailPoint", OnPrimaryTransactionalWrite, "mode", d("times", 1),
		"data", d("closeConnection", false, "failBeforeCommitExceptionCode", 91)))
	ins = withTxn(d("insert", "c", "documents", bson.A{d("_id", 3)}), lsid, 2)
	_, err := setup.run("db", ins)
	wantCode(t, err, 91, "must not be reflected")
	if got := findAll(t, setup, "db", "c"); js(t, got) != js(t, `[{"_id":1},{"_id":2}]`) {
		t.Fatalf("failed write reflected: %s", got)
	}
	expectField(t, setup.mustRun("db", ins), "n", "1")

	// Update statements fire one by one: the first commits, then the
	// connection closes; the retry runs only the second.
	setup.mustRun("db", d("insert", "u", "documents", bson.A{d("_id", 1, "n", 0), d("_id", 2, "n", 0)}))
	setup.mustRun("admin", d("configureFailPoint", OnPrimaryTransactionalWrite, "mode", d("times", 1)))
	upd := withTxn(d("update", "u", "updates", bson.A{d("q", d("_id", 1), "u", d("$inc", d("n", 1))), d("q", d("_id", 2), "u", d("$inc", d("n", 1)))}), lsid, 3)
	c = connect(t, s, clientOpts{})
	c.send("db", upd, 0)
	if !c.closed() {
		t.Fatal("connection not closed by the fail point")
	}
	if got := findAll(t, setup, "db", "u"); js(t, got) != js(t, `[{"_id":1,"n":1},{"_id":2,"n":0}]`) {
		t.Fatalf("after the first statement: %s", got)
	}
	r = setup.mustRun("db", upd)
	expectField(t, r, "n", "2")
	expectField(t, r, "nModified", "2")
	if got := findAll(t, setup, "db", "u"); js(t, got) != js(t, `[{"_id":1,"n":1},{"_id":2,"n":1}]`) {
		t.Fatalf("after the retry: %s", got)
	}

	// findAndModify and delete take the write back when told to.
	setup.mustRun("admin", d("configureFailPoint", OnPrimaryTransactionalWrite, "mode", "alwaysOn",
		"data", d("closeConnection", false, "failBeforeCommitExceptionCode", 6)))
	for i, cmd := range []bson.D{
		d("findAndModify", "u", "query", d("_id", 1), "update", d("$set", d("n", 9))),
		d("findAndModify", "u", "query", d("_id", 1), "remove", true),
		d("delete", "u", "deletes", bson.A{d("q", bson.D{}, "limit", 0)}),
		d("update", "u", "updates", bson.A{d("q", d("_id", 5), "u", d("$set", d("n", 1)), "upsert", true)}),
	} {
		_, err := setup.run("db", withTxn(cmd, lsid, int64(10+i)))
		wantCode(t, err, 6, "")
	}
	// A delete taken back re-inserts the document at the end of natural
	// order, hence the sort.
	r = setup.mustRun("db", d("find", "u", "sort", d("_id", 1)))
	expectField(t, r, "cursor.firstBatch", `[{"_id":1,"n":1},{"_id":2,"n":1}]`)
	setup.mustRun("admin", d("configureFailPoint", OnPrimaryTransactionalWrite, "mode", "off"))
	// Writes without txnNumber never consult the fail point.
	setup.mustRun("admin", d("configureFailPoint", OnPrimaryTransactionalWrite, "mode", "alwaysOn"))
	setup.mustRun("db", d("insert", "u", "documents", bson.A{d("_id", 7)}))
}

// Members over one store share the retry record, as a replica set's do
// through the oplog: a write retried on a new primary is not applied
// twice.
func TestRetrySharedAcrossStore(t *testing.T) {
	st := store.New()
	var servers []*Server
	for i := 0; i < 2; i++ {
		s, err := newServerWithStore(primaryOpts(), st)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.listen(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		servers = append(servers, s)
	}
	lsid := newLSID()
	cmd := withTxn(d("update", "c", "updates", bson.A{d("q", d("_id", 1), "u", d("$inc", d("n", 1)), "upsert", true)}), lsid, 1)
	r1 := connect(t, servers[0], clientOpts{}).mustRun("db", cmd)
	c2 := connect(t, servers[1], clientOpts{})
	r2 := c2.mustRun("db", cmd)
	expectField(t, r2, "upserted", `[{"index":0,"_id":1}]`)
	expectField(t, r1, "upserted", `[{"index":0,"_id":1}]`)
	if got := findAll(t, c2, "db", "c"); js(t, got) != js(t, `[{"_id":1,"n":1}]`) {
		t.Fatalf("collection holds %s", got)
	}
	if servers[0].retries != servers[1].retries || servers[0].retries == &sharedFor(store.New()).retries {
		t.Fatal("retry tables not shared by store")
	}
}

// On the replica-set simulator, a retryable write's record (lsid,
// txnNumber) survives a step-down: the write retried on the new primary
// answers as the first attempt did and is not applied again, and the
// session's older txnNumbers are still too old there.
func TestRetryableWriteDedupAcrossStepDown(t *testing.T) {
	rs := NewReplicaSet(t, 3, ReplicaSetOptions{ElectionDelay: -1})
	ctx := ctxT(t)
	old := memberClient(t, rs, 0)
	lsid := newLSID()
	old.mustRun("db", withTxn(d("insert", "c", "documents", bson.A{d("_id", 0)}), lsid, 1))
	cmd := withTxn(d("update", "c", "updates", bson.A{d("q", d("_id", 1), "u", d("$inc", d("n", 1)), "upsert", true)}), lsid, 2)
	first := old.mustRun("db", cmd)
	expectField(t, first, "upserted", `[{"index":0,"_id":1}]`)
	if err := rs.StepDown(ctx); err != nil {
		t.Fatal(err)
	}
	p, err := rs.WaitForPrimary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p == rs.Members()[0] {
		t.Fatal("the old primary was elected again at once")
	}
	now := connect(t, p, clientOpts{})
	again := now.mustRun("db", cmd)
	expectField(t, again, "n", "1")
	expectField(t, again, "upserted", `[{"index":0,"_id":1}]`)
	if got := findAll(t, now, "db", "c"); js(t, got) != js(t, `[{"_id":0},{"_id":1,"n":1}]`) {
		t.Fatalf("after the retry on the new primary the collection holds %s", got)
	}
	_, err = now.run("db", withTxn(d("insert", "c", "documents", bson.A{d("_id", 9)}), lsid, 1))
	wantCode(t, err, 225, "txnNumber")
}
