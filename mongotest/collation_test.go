package mongotest

import (
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

// en2 is a case-insensitive collation (strength 2).
var en2 = d("locale", "en_US", "strength", 2)

// TestCollation runs each command against c = [{_id:1,x:"ping"},
// {_id:2,x:"PING"},{_id:3,x:"pong"},{_id:4,x:"Péng"}] (fresh for each row)
// and checks one reply field.
func TestCollation(t *testing.T) {
	for _, tc := range []struct {
		name string
		cmd  bson.D
		path string
		want string
	}{
		{"find by collection default", d("find", "c", "filter", d("x", "PING")), "cursor.firstBatch", `[{"_id":2,"x":"PING"}]`},
		{"find strength 2", d("find", "c", "filter", d("x", "PING"), "collation", en2), "cursor.firstBatch", `[{"_id":1,"x":"ping"},{"_id":2,"x":"PING"}]`},
		{"find simple", d("find", "c", "filter", d("x", "PING"), "collation", d("locale", "simple")), "cursor.firstBatch", `[{"_id":2,"x":"PING"}]`},
		{"find strength 1 ignores accents", d("find", "c", "filter", d("x", "peng"), "collation", d("locale", "fr", "strength", 1)), "cursor.firstBatch", `[{"_id":4,"x":"Péng"}]`},
		{"find strength 2 keeps accents", d("find", "c", "filter", d("x", "peng"), "collation", en2), "cursor.firstBatch", `[]`},
		{"find $in", d("find", "c", "filter", d("x", d("$in", bson.A{"PONG"})), "collation", en2), "cursor.firstBatch", `[{"_id":3,"x":"pong"}]`},
		{"find $gt", d("find", "c", "filter", d("x", d("$gt", "PING")), "collation", en2, "sort", d("_id", 1)), "cursor.firstBatch", `[{"_id":3,"x":"pong"}]`},
		{"find sort", d("find", "c", "sort", d("x", 1, "_id", 1), "projection", d("_id", 1), "collation", en2), "cursor.firstBatch", `[{"_id":4},{"_id":1},{"_id":2},{"_id":3}]`},
		{"find sort simple", d("find", "c", "sort", d("x", 1, "_id", 1), "projection", d("_id", 1)), "cursor.firstBatch", `[{"_id":2},{"_id":4},{"_id":1},{"_id":3}]`},
		{"count", d("count", "c", "query", d("x", "ping"), "collation", en2), "n", `2`},
		{"distinct", d("distinct", "c", "key", "x", "collation", en2), "values", `["Péng","ping","pong"]`},
		{"aggregate $match", d("aggregate", "c", "pipeline", bson.A{d("$match", d("x", "PING")), d("$count", "n")}, "cursor", bson.D{}, "collation", en2), "cursor.firstBatch", `[{"n":2}]`},
		{"aggregate $expr $eq", d("aggregate", "c", "pipeline", bson.A{d("$match", d("$expr", d("$eq", bson.A{"$x", "PONG"})))}, "cursor", bson.D{}, "collation", en2), "cursor.firstBatch", `[{"_id":3,"x":"pong"}]`},
		{"aggregate $group", d("aggregate", "c", "pipeline", bson.A{d("$group", d("_id", "$x", "n", d("$sum", 1))), d("$match", d("n", 2))}, "cursor", bson.D{}, "collation", en2), "cursor.firstBatch", `[{"_id":"ping","n":2}]`},
		{"aggregate $group simple", d("aggregate", "c", "pipeline", bson.A{d("$group", d("_id", "$x", "n", d("$sum", 1))), d("$match", d("n", 2))}, "cursor", bson.D{}), "cursor.firstBatch", `[]`},
		{"aggregate $lookup", d("aggregate", "c", "pipeline", bson.A{d("$match", d("_id", 3)), d("$lookup", d("from", "c", "localField", "x", "foreignField", "x", "as", "same")), d("$project", d("n", d("$size", "$same")))}, "cursor", bson.D{}, "collation", en2), "cursor.firstBatch", `[{"_id":3,"n":1}]`},
		{"aggregate $lookup equal by collation", d("aggregate", "c", "pipeline", bson.A{d("$match", d("_id", 1)), d("$lookup", d("from", "c", "localField", "x", "foreignField", "x", "as", "same")), d("$project", d("n", d("$size", "$same")))}, "cursor", bson.D{}, "collation", en2), "cursor.firstBatch", `[{"_id":1,"n":2}]`},
		{"aggregate $min $max $addToSet", d("aggregate", "c", "pipeline", bson.A{d("$match", d("_id", d("$lt", 4))), d("$group", d("_id", nil, "lo", d("$min", "$x"), "hi", d("$max", "$x"), "set", d("$addToSet", "$x")))}, "cursor", bson.D{}, "collation", en2), "cursor.firstBatch", `[{"_id":null,"lo":"ping","hi":"pong","set":["ping","pong"]}]`},
		{"aggregate $bucket", d("aggregate", "c", "pipeline", bson.A{d("$bucket", d("groupBy", "$x", "boundaries", bson.A{"a", "PO", "z"}))}, "cursor", bson.D{}, "collation", en2), "cursor.firstBatch", `[{"_id":"a","count":3},{"_id":"PO","count":1}]`},
		{"delete", d("delete", "c", "deletes", bson.A{d("q", d("x", "PING"), "limit", 0, "collation", en2)}), "n", `2`},
		{"update", d("update", "c", "updates", bson.A{d("q", d("x", "PING"), "u", d("$set", d("y", 1)), "multi", true, "collation", en2)}), "nModified", `2`},
		{"update $min by collation", d("update", "c", "updates", bson.A{d("q", d("_id", 1), "u", d("$min", d("x", "PONG")), "collation", en2)}), "nModified", `0`},
		{"update $min by bytes", d("update", "c", "updates", bson.A{d("q", d("_id", 1), "u", d("$min", d("x", "PONG")))}), "nModified", `1`},
		{"findAndModify", d("findAndModify", "c", "query", d("x", "PONG"), "update", d("$set", d("y", 1)), "new", true, "collation", en2), "value", `{"_id":3,"x":"pong","y":1}`},
		{"find with _id string", d("find", "c", "filter", d("_id", 1, "x", "PING"), "collation", en2), "cursor.firstBatch", `[{"_id":1,"x":"ping"}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c := crudServer(t)
			c.mustRun("db", d("insert", "c", "documents", bson.A{d("_id", 1, "x", "ping"), d("_id", 2, "x", "PING"), d("_id", 3, "x", "pong"), d("_id", 4, "x", "Péng")}))
			expectField(t, c.mustRun("db", tc.cmd), tc.path, tc.want)
		})
	}
}

func TestCollationStringID(t *testing.T) {
	_, c := crudServer(t)
	c.mustRun("db", d("insert", "c", "documents", bson.A{d("_id", "a")}))
	r := c.mustRun("db", d("find", "c", "filter", d("_id", "A"), "collation", en2))
	expectField(t, r, "cursor.firstBatch", `[{"_id":"a"}]`)
}

// TestCollectionDefaultCollation: create's collation is listed with its
// defaults filled in, is used by commands without a collation of their
// own, and is the collation of the _id index and of new indexes.
func TestCollectionDefaultCollation(t *testing.T) {
	_, c := crudServer(t)
	c.mustRun("db", d("create", "c", "collation", en2))
	c.mustRun("db", d("insert", "c", "documents", bson.A{d("_id", 1, "x", "ping"), d("_id", 2, "x", "PING")}))
	full := `{"locale":"en_US","caseLevel":false,"caseFirst":"off","strength":2,"numericOrdering":false,"alternate":"non-ignorable","maxVariable":"punct","normalization":false,"backwards":false,"version":"57.1"}`
	r := c.mustRun("db", d("listCollections", 1, "filter", d("name", "c")))
	expectField(t, r, "cursor.firstBatch.0.options", `{"collation":`+full+`}`)
	expectField(t, r, "cursor.firstBatch.0.idIndex.collation", full)
	expectField(t, c.mustRun("db", d("count", "c", "query", d("x", "Ping"))), "n", `2`)
	expectField(t, c.mustRun("db", d("count", "c", "query", d("x", "Ping"), "collation", d("locale", "simple"))), "n", `0`)
	c.mustRun("db", d("createIndexes", "c", "indexes", bson.A{d("key", d("x", 1), "name", "x_1"), d("key", d("x", 1), "name", "x_simple", "collation", d("locale", "simple"))}))
	r = c.mustRun("db", d("listIndexes", "c"))
	expectField(t, r, "cursor.firstBatch.0.collation", full)
	expectField(t, r, "cursor.firstBatch.1.collation", full)
	expectField(t, r, "cursor.firstBatch.2.collation", `<missing>`)
	// A unique index takes the default collation: "PING" and "ping" are
	// one key.
	_, err := c.run("db", d("createIndexes", "c", "indexes", bson.A{d("key", d("x", -1), "name", "x_u", "unique", true)}))
	wantCode(t, err, 11000, "x_u")
}

func TestIndexCollation(t *testing.T) {
	_, c := crudServer(t)
	c.mustRun("db", d("createIndexes", "c", "indexes", bson.A{d("key", d("a", 1), "name", "a_fr", "collation", d("locale", "fr", "strength", 1))}))
	r := c.mustRun("db", d("listIndexes", "c"))
	expectField(t, r, "cursor.firstBatch.1.collation", `{"locale":"fr","caseLevel":false,"caseFirst":"off","strength":1,"numericOrdering":false,"alternate":"non-ignorable","maxVariable":"punct","normalization":false,"backwards":false,"version":"57.1"}`)
	// The same key pattern with another collation is another index.
	c.mustRun("db", d("createIndexes", "c", "indexes", bson.A{d("key", d("a", 1), "name", "a_1")}))
	for _, tc := range []struct {
		name string
		spec bson.D
		code int32
		msg  string
	}{
		{"no locale", d("key", d("b", 1), "name", "b", "collation", d("strength", 1)), 40414, "collation.locale"},
		{"unknown field", d("key", d("b", 1), "name", "b", "collation", d("locale", "fr", "foo", 1)), 40415, "collation.foo"},
		{"same name other collation", d("key", d("a", 1), "name", "a_fr", "collation", d("locale", "fr")), 85, "different options"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.run("db", d("createIndexes", "c", "indexes", bson.A{tc.spec}))
			wantCode(t, err, tc.code, tc.msg)
		})
	}
}

// TestLet covers let and $expr in find, update, delete and findAndModify.
func TestLet(t *testing.T) {
	for _, tc := range []struct {
		name string
		cmd  bson.D
		path string
		want string
	}{
		{"find", d("find", "c", "filter", d("$expr", d("$eq", bson.A{"$_id", "$$id"})), "let", d("id", 2)), "cursor.firstBatch", `[{"_id":2,"x":"b"}]`},
		{"find $expr without let", d("find", "c", "filter", d("$expr", d("$gt", bson.A{"$_id", 1}))), "cursor.firstBatch", `[{"_id":2,"x":"b"}]`},
		{"find $expr in $or", d("find", "c", "filter", d("$or", bson.A{d("$expr", d("$eq", bson.A{"$x", "$$v"})), d("_id", 9)}), "let", d("v", "a")), "cursor.firstBatch", `[{"_id":1,"x":"a"}]`},
		{"delete", d("delete", "c", "deletes", bson.A{d("q", d("$expr", d("$eq", bson.A{"$x", "$$v"})), "limit", 0)}, "let", d("v", "b")), "n", `1`},
		{"update pipeline", d("update", "c", "updates", bson.A{d("q", d("$expr", d("$eq", bson.A{"$_id", "$$id"})), "u", bson.A{d("$set", d("y", "$$v"))})}, "let", d("id", 1, "v", "z")), "nModified", `1`},
		{"findAndModify", d("findAndModify", "c", "query", d("$expr", d("$eq", bson.A{"$_id", "$$id"})), "update", bson.A{d("$set", d("y", "$$v"))}, "new", true, "let", d("id", 1, "v", d("$literal", "$q"))), "value", `{"_id":1,"x":"a","y":"$q"}`},
		{"$expr error", d("find", "c", "filter", d("$expr", d("$divide", bson.A{1, 0}))), "ok", `1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c := crudServer(t)
			c.mustRun("db", d("insert", "c", "documents", bson.A{d("_id", 1, "x", "a"), d("_id", 2, "x", "b")}))
			r, err := c.run("db", tc.cmd)
			if tc.name == "$expr error" {
				wantCode(t, err, 16608, "divide")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			expectField(t, r, tc.path, tc.want)
		})
	}
}

// TestViewCollation: a view's collation is listed, is what reads on it
// use, and is the only one they may name.
func TestViewCollation(t *testing.T) {
	_, c := crudServer(t)
	c.mustRun("db", d("insert", "c", "documents", bson.A{d("_id", 1, "x", "ping"), d("_id", 2, "x", "PING"), d("_id", 3, "x", "pong")}))
	c.mustRun("db", d("create", "v", "viewOn", "c", "pipeline", bson.A{d("$project", d("x", 1))}, "collation", en2))
	r := c.mustRun("db", d("listCollections", 1, "filter", d("name", "v")))
	expectField(t, r, "cursor.firstBatch.0.options.collation.strength", `2`)
	expectField(t, c.mustRun("db", d("find", "v", "filter", d("x", "Ping"))), "cursor.firstBatch", `[{"_id":1,"x":"ping"},{"_id":2,"x":"PING"}]`)
	expectField(t, c.mustRun("db", d("find", "v", "filter", d("x", "Ping"), "collation", en2)), "cursor.firstBatch", `[{"_id":1,"x":"ping"},{"_id":2,"x":"PING"}]`)
	expectField(t, c.mustRun("db", d("count", "v", "query", d("x", "PONG"))), "n", `1`)
	expectField(t, c.mustRun("db", d("distinct", "v", "key", "x")), "values", `["ping","pong"]`)
	r = c.mustRun("db", d("aggregate", "v", "pipeline", bson.A{d("$match", d("x", "PING")), d("$count", "n")}, "cursor", bson.D{}))
	expectField(t, r, "cursor.firstBatch", `[{"n":2}]`)
	_, err := c.run("db", d("aggregate", "v", "pipeline", bson.A{}, "cursor", bson.D{}, "collation", d("locale", "simple")))
	wantCode(t, err, 167, "Cannot override")
	// A view without a collation does not take its collection's.
	c.mustRun("db", d("create", "c2", "collation", en2))
	c.mustRun("db", d("insert", "c2", "documents", bson.A{d("_id", 1, "x", "ping")}))
	c.mustRun("db", d("create", "v2", "viewOn", "c2"))
	expectField(t, c.mustRun("db", d("count", "v2", "query", d("x", "PING"))), "n", `0`)
	// let reaches a view's reads.
	r = c.mustRun("db", d("find", "v", "filter", d("$expr", d("$eq", bson.A{"$_id", "$$id"})), "let", d("id", 3)))
	expectField(t, r, "cursor.firstBatch", `[{"_id":3,"x":"pong"}]`)
}

// TestListCollectionsShapes: nameOnly entries are {name, type} only and
// the filter sees that shape; authorizedCollections is accepted.
func TestListCollectionsShapes(t *testing.T) {
	_, c := crudServer(t)
	c.mustRun("db", d("create", "c", "capped", true, "size", 4096))
	c.mustRun("db", d("create", "v", "viewOn", "c"))
	for _, tc := range []struct {
		name string
		cmd  bson.D
		want string
	}{
		{"nameOnly", d("listCollections", 1, "nameOnly", true), `[{"name":"c","type":"collection"},{"name":"v","type":"view"}]`},
		{"nameOnly authorizedCollections", d("listCollections", 1, "nameOnly", true, "authorizedCollections", true), `[{"name":"c","type":"collection"},{"name":"v","type":"view"}]`},
		{"nameOnly filter on type", d("listCollections", 1, "nameOnly", true, "filter", d("type", "view")), `[{"name":"v","type":"view"}]`},
		{"nameOnly filter on options", d("listCollections", 1, "nameOnly", true, "filter", d("options.capped", true)), `[]`},
		{"filter on options", d("listCollections", 1, "filter", d("options.capped", true), "nameOnly", false), `[{"name":"c"}]`},
		{"view entry", d("listCollections", 1, "filter", d("name", "v")), `[{"name":"v","type":"view","options":{"viewOn":"c","pipeline":[]},"info":{"readOnly":true}}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.mustRun("db", tc.cmd)
			got, _ := r.LookupPath("cursor.firstBatch")
			if msg := unifiedMatch(got, mustArray(t, tc.want), tc.name == "filter on options", "firstBatch"); msg != "" {
				t.Errorf("%s: firstBatch %s", msg, relaxed(t, got))
			}
		})
	}
	_, err := c.run("db", d("listCollections", 1, "authorizedCollections", "yes"))
	wantCode(t, err, 14, "authorizedCollections")
}

func mustArray(t *testing.T, js string) bson.RawValue {
	t.Helper()
	doc, err := bson.ParseExtJSON([]byte(`{"a":` + js + `}`))
	if err != nil {
		t.Fatal(err)
	}
	return doc.Lookup("a")
}

// TestUniqueIndexCollation: a unique index compares strings, also inside
// documents and arrays, by its collation.
func TestUniqueIndexCollation(t *testing.T) {
	_, c := crudServer(t)
	c.mustRun("db", d("createIndexes", "u", "indexes", bson.A{d("key", d("email", 1), "name", "email_ci", "unique", true, "collation", en2)}))
	c.mustRun("db", d("insert", "u", "documents", bson.A{d("_id", 1, "email", "Ann@x.org"), d("_id", 2, "email", bson.A{"bob@x.org"}), d("_id", 3, "email", d("a", "Cy"))}))
	for _, tc := range []struct {
		name string
		doc  bson.D
		code int32
	}{
		{"case differs", d("_id", 10, "email", "ann@X.ORG"), 11000},
		{"in an array", d("_id", 11, "email", "BOB@x.org"), 11000},
		{"in a document", d("_id", 12, "email", d("a", "cy")), 11000},
		{"accent differs", d("_id", 13, "email", "ánn@x.org"), 0},
		{"new", d("_id", 14, "email", "dee@x.org"), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.mustRun("db", d("insert", "u", "documents", bson.A{tc.doc}))
			if tc.code == 0 {
				expectField(t, r, "n", "1")
				return
			}
			expectField(t, r, "writeErrors.0.code", "11000")
			expectField(t, r, "writeErrors.0.keyPattern", `{"email":1}`)
		})
	}
	// A document may change its own key's case; an update into another
	// document's key fails.
	r := c.mustRun("db", d("update", "u", "updates", bson.A{d("q", d("_id", 14), "u", d("$set", d("email", "DEE@x.org")))}))
	expectField(t, r, "nModified", "1")
	r = c.mustRun("db", d("update", "u", "updates", bson.A{d("q", d("_id", 14), "u", d("$set", d("email", "ANN@x.org")))}))
	expectField(t, r, "writeErrors.0.code", "11000")
}

// TestIDCollation: in a collection with a default collation, _ids that it
// deems equal collide, and an _id lookup honours the query's collation.
func TestIDCollation(t *testing.T) {
	_, c := crudServer(t)
	c.mustRun("db", d("create", "c", "collation", en2))
	c.mustRun("db", d("insert", "c", "documents", bson.A{d("_id", "a", "n", 1)}))
	r := c.mustRun("db", d("insert", "c", "documents", bson.A{d("_id", "A")}))
	expectField(t, r, "writeErrors.0.code", "11000")
	expectField(t, c.mustRun("db", d("find", "c", "filter", d("_id", "A"))), "cursor.firstBatch", `[{"_id":"a","n":1}]`)
	expectField(t, c.mustRun("db", d("find", "c", "filter", d("_id", "A"), "collation", d("locale", "simple"))), "cursor.firstBatch", `[]`)
	expectField(t, c.mustRun("db", d("find", "c", "filter", d("_id", "a"), "collation", d("locale", "simple"))), "cursor.firstBatch", `[{"_id":"a","n":1}]`)
	r = c.mustRun("db", d("update", "c", "updates", bson.A{d("q", d("_id", "A"), "u", d("$inc", d("n", 1)))}))
	expectField(t, r, "nModified", "1")
	r = c.mustRun("db", d("delete", "c", "deletes", bson.A{d("q", d("_id", "A"), "limit", 1, "collation", d("locale", "simple"))}))
	expectField(t, r, "n", "0")
	r = c.mustRun("db", d("delete", "c", "deletes", bson.A{d("q", d("_id", "A"), "limit", 1)}))
	expectField(t, r, "n", "1")
}

// TestUpdateOperatorsCollation: the array operators and arrayFilters of an
// update compare strings by the statement's collation.
func TestUpdateOperatorsCollation(t *testing.T) {
	for _, tc := range []struct {
		name string
		u    any
		af   bson.A
		want string // a afterwards
	}{
		{"$addToSet", d("$addToSet", d("a", "B")), nil, `["a","b"]`},
		{"$addToSet $each", d("$addToSet", d("a", d("$each", bson.A{"A", "c"}))), nil, `["a","b","c"]`},
		{"$pull", d("$pull", d("a", "B")), nil, `["a"]`},
		{"$pull $in", d("$pull", d("a", d("$in", bson.A{"A"}))), nil, `["b"]`},
		{"$pullAll", d("$pullAll", d("a", bson.A{"A", "B"})), nil, `[]`},
		{"$push $sort", d("$push", d("a", d("$each", bson.A{"C"}, "$sort", 1))), nil, `["a","b","C"]`},
		{"arrayFilters", d("$set", d("a.$[e]", "z")), bson.A{d("e", "B")}, `["a","z"]`},
		{"$max", d("$max", d("s", "PING")), nil, `["a","b"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c := crudServer(t)
			c.mustRun("db", d("insert", "c", "documents", bson.A{d("_id", 1, "a", bson.A{"a", "b"}, "s", "ping")}))
			stmt := d("q", d("_id", 1), "u", tc.u, "collation", en2)
			if tc.af != nil {
				stmt = append(stmt, bson.E{Key: "arrayFilters", Value: tc.af})
			}
			c.mustRun("db", d("update", "c", "updates", bson.A{stmt}))
			r := c.mustRun("db", d("find", "c"))
			expectField(t, r, "cursor.firstBatch.0.a", tc.want)
			expectField(t, r, "cursor.firstBatch.0.s", `"ping"`)
		})
	}
}
