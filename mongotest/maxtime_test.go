package mongotest

import (
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
)

// withField returns cmd with one more field.
func withField(cmd bson.D, key string, v any) bson.D {
	return append(append(bson.D{}, cmd...), bson.E{Key: key, Value: v})
}

// TestMaxTimeMSCoversFailPointBlock: as mongod sets an operation's deadline
// before failCommand blocks it, a command blocked longer than its
// maxTimeMS fails with MaxTimeMSExpired (and does not run), on every
// command that takes maxTimeMS; one blocked for less runs.
func TestMaxTimeMSCoversFailPointBlock(t *testing.T) {
	s := NewServer(t, primaryOpts())
	c := connect(t, s, clientOpts{})
	c.mustRun("test", d("insert", "c", "documents", bson.A{d("_id", 1, "x", 1)}))
	cmds := []struct {
		db  string
		cmd bson.D
	}{
		{"test", d("find", "c")},
		{"test", d("aggregate", "c", "pipeline", bson.A{}, "cursor", bson.D{})},
		{"test", d("count", "c")},
		{"test", d("distinct", "c", "key", "x")},
		{"test", d("findAndModify", "c", "query", d("_id", 1), "update", d("$inc", d("n", 1)))},
		{"test", d("insert", "c", "documents", bson.A{d("_id", 2)})},
		{"test", d("update", "c", "updates", bson.A{d("q", d("_id", 1), "u", d("$inc", d("n", 1)))})},
		{"test", d("delete", "c", "deletes", bson.A{d("q", d("_id", 1), "limit", 1)})},
		{"test", d("createIndexes", "c", "indexes", bson.A{d("key", d("x", 1), "name", "x_1")})},
		{"test", d("listIndexes", "c")},
		{"test", d("listCollections", 1)},
		{"admin", d("listDatabases", 1)},
		{"admin", d("bulkWrite", 1, "ops", bson.A{d("insert", 0, "document", d("_id", 3))}, "nsInfo", bson.A{d("ns", "test.c")})},
		{"test", d("ping", 1)},
	}
	for _, tc := range cmds {
		name := tc.cmd[0].Key
		t.Run(name, func(t *testing.T) {
			for _, step := range []struct {
				block, maxTime int
				wantCode       int32 // 0: succeeds
			}{
				{block: 60, maxTime: 20, wantCode: 50},
				{block: 10, maxTime: 5000},
				{block: 60}, // no maxTimeMS
			} {
				before := c.mustRun("test", d("count", "c")).Lookup("n").Int32()
				c.mustRun("admin", fp(d("times", 1), d("failCommands", bson.A{name}, "blockConnection", true, "blockTimeMS", step.block)))
				cmd := tc.cmd
				if step.maxTime > 0 {
					cmd = withField(cmd, "maxTimeMS", step.maxTime)
				}
				start := time.Now()
				_, err := c.run(tc.db, cmd)
				if took := time.Since(start); took < time.Duration(step.block)*time.Millisecond {
					t.Errorf("block %dms, maxTimeMS %d: replied after %v, before the block ended", step.block, step.maxTime, took)
				}
				if step.wantCode == 0 {
					if err != nil {
						t.Errorf("block %dms, maxTimeMS %d: %v, want success", step.block, step.maxTime, err)
					}
					// Undo what a write did, so the next step sees the same data.
					c.mustRun("test", d("delete", "c", "deletes", bson.A{d("q", d("_id", d("$in", bson.A{2, 3})), "limit", 0)}))
					c.mustRun("test", d("update", "c", "updates", bson.A{d("q", d("_id", 1), "u", d("_id", 1, "x", 1), "upsert", true)}))
					continue
				}
				ce := asCmdError(t, err)
				if ce.Code != 50 || ce.CodeName != "MaxTimeMSExpired" || ce.Message != "operation exceeded time limit" {
					t.Errorf("block %dms, maxTimeMS %d: %v, want MaxTimeMSExpired (50) operation exceeded time limit", step.block, step.maxTime, ce)
				}
				if after := c.mustRun("test", d("count", "c")).Lookup("n").Int32(); after != before {
					t.Errorf("the timed-out %s ran: %d documents, had %d", name, after, before)
				}
			}
		})
	}
}

func TestMaxTimeMSArgument(t *testing.T) {
	s := NewServer(t, primaryOpts())
	c := connect(t, s, clientOpts{})
	for _, tc := range []struct {
		v        any
		wantCode int32
	}{
		{int32(100), 0},
		{int64(100), 0},
		{100.0, 0},
		{0, 0},
		{-1, 2},
		{1.5, 2},
		{int64(1) << 32, 2},
		{"100", 2},
	} {
		_, err := c.run("test", d("find", "c", "maxTimeMS", tc.v))
		switch {
		case tc.wantCode == 0 && err != nil:
			t.Errorf("maxTimeMS %v: %v", tc.v, err)
		case tc.wantCode != 0:
			if ce := asCmdError(t, err); ce.Code != tc.wantCode {
				t.Errorf("maxTimeMS %v: %v, want code %d", tc.v, ce, tc.wantCode)
			}
		}
	}
}

// TestMaxTimeMSErrorCodeWins: a fail point's errorCode is raised inside
// the fail point, before the command's first interrupt check.
func TestMaxTimeMSErrorCodeWins(t *testing.T) {
	s := NewServer(t, primaryOpts())
	c := connect(t, s, clientOpts{})
	c.mustRun("admin", fp(d("times", 1), d("failCommands", bson.A{"find"}, "blockConnection", true, "blockTimeMS", 40, "errorCode", 91)))
	_, err := c.run("test", d("find", "c", "maxTimeMS", 5))
	if ce := asCmdError(t, err); ce.Code != 91 {
		t.Fatalf("%v, want the fail point's ShutdownInProgress (91)", ce)
	}
}

// TestMaxTimeMSGetMoreAwaits: on getMore, maxTimeMS is an awaitData
// cursor's wait, not a limit: a blocked getMore still answers.
func TestMaxTimeMSGetMoreAwaits(t *testing.T) {
	s := NewServer(t, primaryOpts())
	c := connect(t, s, clientOpts{})
	c.mustRun("test", d("create", "cap", "capped", true, "size", 4096))
	c.mustRun("test", d("insert", "cap", "documents", bson.A{d("_id", 1)}))
	r := c.mustRun("test", d("find", "cap", "tailable", true, "awaitData", true))
	id := r.Lookup("cursor", "id").Int64()
	c.mustRun("admin", fp(d("times", 1), d("failCommands", bson.A{"getMore"}, "blockConnection", true, "blockTimeMS", 30)))
	if _, err := c.run("test", d("getMore", id, "collection", "cap", "maxTimeMS", 10)); err != nil {
		t.Fatalf("awaitData getMore: %v", err)
	}
}
