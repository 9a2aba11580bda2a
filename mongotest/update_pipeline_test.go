package mongotest

import (
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

// Pipeline-style updates through the update and findAndModify commands:
// the result replaces the document (keeping its _id), upserts start from
// the query's equality fields, and a stage an update does not allow is
// mongod's InvalidOptions write error (a command error for findAndModify).
func TestUpdatePipeline(t *testing.T) {
	_, c := crudServer(t)
	c.mustRun("db", d("insert", "c", "documents", bson.A{d("_id", 1, "t", d("u", 1)), d("_id", 2, "a", 2, "b", 3)}))
	tests := []struct {
		name  string
		stmts bson.A
		reply map[string]string
	}{
		{"replaceRoot keeps _id", bson.A{d("q", d("_id", 1), "u", bson.A{d("$replaceRoot", d("newRoot", "$t")), d("$addFields", d("foo", 1))})},
			map[string]string{"n": "1", "nModified": "1", "writeErrors": "<missing>"}},
		{"set from fields", bson.A{d("q", d("_id", 2), "u", bson.A{d("$set", d("s", d("$add", bson.A{"$a", "$b"}))), d("$unset", "a")})},
			map[string]string{"n": "1", "nModified": "1"}},
		{"upsert seeds from the query", bson.A{d("q", d("_id", 3, "k", 4), "u", bson.A{d("$set", d("k2", d("$multiply", bson.A{"$k", 2})))}, "upsert", true)},
			map[string]string{"n": "1", "upserted": `[{"index":0,"_id":3}]`}},
		{"disallowed stage", bson.A{d("q", d("_id", 1), "u", bson.A{d("$match", d("a", 1))})},
			map[string]string{"n": "0", "writeErrors.0.code": "72", "writeErrors.0.errmsg": `"$match is not allowed to be used within an update"`}},
		{"changing _id", bson.A{d("q", d("_id", 1), "u", bson.A{d("$set", d("_id", 9))})},
			map[string]string{"n": "0", "writeErrors.0.code": "66"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := c.mustRun("db", d("update", "c", "updates", tc.stmts))
			for path, want := range tc.reply {
				expectField(t, r, path, want)
			}
		})
	}
	r := c.mustRun("db", d("findAndModify", "c", "query", d("_id", 2), "update", bson.A{d("$set", d("f", "$s"))}, "new", true))
	expectField(t, r, "value", `{"_id":2,"b":3,"s":5,"f":5}`)
	r = c.mustRun("db", d("findAndModify", "c", "query", d("_id", 5, "x", 1), "update", bson.A{d("$set", d("y", "$x"))}, "upsert", true, "new", true))
	expectField(t, r, "value", `{"_id":5,"x":1,"y":1}`)
	// An unknown stage name fails the command: mongod lite-parses the
	// stage names before it runs any statement.
	_, err := c.run("db", d("update", "c", "updates", bson.A{d("q", d("_id", 1), "u", bson.A{d("$nope", bson.D{})})}))
	wantCode(t, err, 40324, "$nope")
	_, err = c.run("db", d("update", "c", "updates", bson.A{d("q", d("_id", 1), "u", bson.A{d("$set", d("a", 1)), 5})}))
	wantCode(t, err, 14, "Each element of the 'pipeline' array must be an object")
	_, err = c.run("db", d("findAndModify", "c", "query", d("_id", 2), "update", bson.A{d("$sort", d("a", 1))}))
	wantCode(t, err, 72, "$sort is not allowed to be used within an update")

	want := `[{"_id":1,"u":1,"foo":1},{"_id":2,"b":3,"s":5,"f":5},{"_id":3,"k":4,"k2":8},{"_id":5,"x":1,"y":1}]`
	if got := findAll(t, c, "db", "c"); js(t, got) != js(t, want) {
		t.Errorf("collection holds\n%s\nwant\n%s", got, want)
	}
}

// The 8.0 sort option of a single update or replacement picks the first
// match in sort order; with multi it fails the command as mongod does.
func TestUpdateSort(t *testing.T) {
	_, c := crudServer(t)
	c.mustRun("db", d("insert", "c", "documents", bson.A{d("_id", 1, "x", 11), d("_id", 2, "x", 22), d("_id", 3, "x", 33)}))
	tests := []struct {
		name string
		stmt bson.D
		want string
	}{
		{"updateOne sort descending", d("q", d("_id", d("$gt", 1)), "u", d("$inc", d("x", 1)), "sort", d("_id", -1)),
			`[{"_id":1,"x":11},{"_id":2,"x":22},{"_id":3,"x":34}]`},
		{"replaceOne sort", d("q", d("_id", d("$gt", 1)), "u", d("x", 1), "sort", d("x", 1)),
			`[{"_id":1,"x":11},{"_id":2,"x":1},{"_id":3,"x":34}]`},
		{"empty sort is natural order", d("q", bson.D{}, "u", d("$set", d("y", 1)), "sort", bson.D{}),
			`[{"_id":1,"x":11,"y":1},{"_id":2,"x":1},{"_id":3,"x":34}]`},
		{"upsert when nothing matches", d("q", d("_id", 4), "u", d("$set", d("x", 4)), "sort", d("x", 1), "upsert", true),
			`[{"_id":1,"x":11,"y":1},{"_id":2,"x":1},{"_id":3,"x":34},{"_id":4,"x":4}]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := c.mustRun("db", d("update", "c", "updates", bson.A{tc.stmt}))
			expectField(t, r, "n", "1")
			expectField(t, r, "writeErrors", "<missing>")
			if got := findAll(t, c, "db", "c"); js(t, got) != js(t, tc.want) {
				t.Errorf("collection holds\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
	_, err := c.run("db", d("update", "c", "updates", bson.A{d("q", bson.D{}, "u", d("$set", d("z", 1)), "multi", true, "sort", d("x", 1))}))
	wantCode(t, err, 9, "Cannot specify sort with multi=true")
	_, err = c.run("db", d("update", "c", "updates", bson.A{d("q", bson.D{}, "u", d("$set", d("z", 1)), "sort", 1)}))
	wantCode(t, err, 14, "BSON field 'update.updates.sort' is the wrong type 'int', expected type 'object'")
	r := c.mustRun("db", d("update", "c", "updates", bson.A{d("q", bson.D{}, "u", d("$set", d("z", 1)), "sort", d("x", "up"))}))
	expectField(t, r, "writeErrors.0.code", "2")
}
