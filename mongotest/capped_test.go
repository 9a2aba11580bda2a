package mongotest

import (
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

func TestCappedCollection(t *testing.T) {
	_, c := crudServer(t)
	c.mustRun("db", d("create", "m", "capped", true, "size", 4096, "max", 3))
	for i := 1; i <= 5; i++ {
		c.mustRun("db", d("insert", "m", "documents", bson.A{d("_id", i)}))
	}
	// max: the two oldest documents, in insertion order, are gone.
	expectField(t, c.mustRun("db", d("find", "m")), "cursor.firstBatch", `[{"_id":3},{"_id":4},{"_id":5}]`)
	expectField(t, c.mustRun("db", d("find", "m", "sort", d("$natural", -1))), "cursor.firstBatch", `[{"_id":5},{"_id":4},{"_id":3}]`)

	// mongod 5.3+ lets an update change a capped document's size, and
	// 5.0+ lets a delete remove one.
	c.mustRun("db", d("update", "m", "updates", bson.A{d("q", d("_id", 3), "u", d("$set", d("s", strings.Repeat("x", 100))))}))
	r := c.mustRun("db", d("delete", "m", "deletes", bson.A{d("q", d("_id", 4), "limit", 1)}))
	expectField(t, r, "n", "1")
	expectField(t, c.mustRun("db", d("find", "m", "projection", d("s", 0))), "cursor.firstBatch", `[{"_id":3},{"_id":5}]`)

	// size: documents of about 1 KiB in a 4096-byte collection keep at
	// most four, evicting the oldest first.
	c.mustRun("db", d("create", "s", "capped", true, "size", 100))
	big := strings.Repeat("y", 1000)
	for i := 1; i <= 6; i++ {
		c.mustRun("db", d("insert", "s", "documents", bson.A{d("_id", i, "b", big)}))
	}
	r = c.mustRun("db", d("find", "s", "projection", d("b", 0)))
	expectField(t, r, "cursor.firstBatch", `[{"_id":3},{"_id":4},{"_id":5},{"_id":6}]`)

	r = c.mustRun("db", d("listCollections", 1, "filter", d("name", "m")))
	expectField(t, r, "cursor.firstBatch.0.options", `{"capped":true,"size":4096,"max":3}`)
	r = c.mustRun("db", d("collStats", "m"))
	expectField(t, r, "capped", "true")
	expectField(t, r, "max", "3")
	expectField(t, r, "maxSize", "4096")
}
