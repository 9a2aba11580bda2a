package mongotest

import (
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

// TestAggregateJoins runs the stages that read a second collection, and
// the let option, through the aggregate command.
func TestAggregateJoins(t *testing.T) {
	_, c := crudServer(t)
	c.mustRun("db", d("insert", "orders", "documents", bson.A{
		d("_id", 1, "item", "pen", "qty", 2), d("_id", 2, "item", "ink", "qty", 9), d("_id", 3, "item", "cap", "qty", 1)}))
	c.mustRun("db", d("insert", "stock", "documents", bson.A{
		d("_id", 10, "sku", "pen", "n", 5), d("_id", 11, "sku", "ink", "n", 3)}))
	tests := []struct {
		name string
		cmd  bson.D
		want string
	}{
		{"lookup equality", d("aggregate", "orders", "pipeline", bson.A{
			d("$lookup", d("from", "stock", "localField", "item", "foreignField", "sku", "as", "s")),
			d("$project", d("n", "$s.n"))}, "cursor", bson.D{}),
			`[{"_id":1,"n":[5]},{"_id":2,"n":[3]},{"_id":3,"n":[]}]`},
		{"lookup pipeline with let", d("aggregate", "orders", "pipeline", bson.A{
			d("$lookup", d("from", "stock", "let", d("it", "$item", "q", "$qty"), "pipeline", bson.A{
				d("$match", d("$expr", d("$and", bson.A{d("$eq", bson.A{"$sku", "$$it"}), d("$gte", bson.A{"$n", "$$q"})}))),
				d("$project", d("_id", 1))}, "as", "enough")),
			d("$project", d("enough", 1))}, "cursor", bson.D{}),
			`[{"_id":1,"enough":[{"_id":10}]},{"_id":2,"enough":[]},{"_id":3,"enough":[]}]`},
		{"let option", d("aggregate", "orders", "pipeline", bson.A{
			d("$match", d("$expr", d("$gt", bson.A{"$qty", "$$min"}))), d("$project", d("_id", 1))},
			"cursor", bson.D{}, "let", d("min", 1)),
			`[{"_id":1},{"_id":2}]`},
		{"unionWith and facet", d("aggregate", "orders", "pipeline", bson.A{
			d("$unionWith", d("coll", "stock", "pipeline", bson.A{d("$project", d("item", "$sku"))})),
			d("$facet", d("byItem", bson.A{d("$sortByCount", "$item"), d("$sort", d("count", -1, "_id", 1))}, "total", bson.A{d("$count", "n")}))},
			"cursor", bson.D{}),
			`[{"byItem":[{"_id":"ink","count":2},{"_id":"pen","count":2},{"_id":"cap","count":1}],"total":[{"n":5}]}]`},
		{"bucket", d("aggregate", "orders", "pipeline", bson.A{
			d("$bucket", d("groupBy", "$qty", "boundaries", bson.A{0, 5, 10}, "output", d("items", d("$push", "$item"))))},
			"cursor", bson.D{}),
			`[{"_id":0,"items":["pen","cap"]},{"_id":5,"items":["ink"]}]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := c.mustRun("db", tc.cmd)
			expectField(t, r, "cursor.firstBatch", tc.want)
		})
	}
	_, err := c.run("db", d("aggregate", "orders", "pipeline", bson.A{d("$project", d("v", "$$nope"))}, "cursor", bson.D{}))
	wantCode(t, err, 17276, "Use of undefined variable: nope")
	_, err = c.run("db", d("aggregate", "orders", "pipeline", bson.A{}, "cursor", bson.D{}, "let", d("Bad", 1)))
	wantCode(t, err, 16867, "invalid character for a user variable name")
}

// TestLookupFromView: $lookup and $unionWith read a view as its pipeline's
// result, a view's own $lookup reads other collections, and reading a
// cycle of views through $unionWith ends with ViewDepthLimitExceeded.
func TestLookupFromView(t *testing.T) {
	_, c := crudServer(t)
	c.mustRun("db", d("insert", "orders", "documents", bson.A{d("_id", 1, "sku", "a"), d("_id", 2, "sku", "b")}))
	c.mustRun("db", d("insert", "stock", "documents", bson.A{d("_id", 10, "sku", "a", "n", 5), d("_id", 11, "sku", "b", "n", 0)}))
	c.mustRun("db", d("create", "instock", "viewOn", "stock", "pipeline", bson.A{d("$match", d("n", d("$gt", 0)))}))
	r := c.mustRun("db", d("aggregate", "orders", "pipeline", bson.A{
		d("$lookup", d("from", "instock", "localField", "sku", "foreignField", "sku", "as", "s")),
		d("$project", d("n", "$s.n"))}, "cursor", bson.D{}))
	expectField(t, r, "cursor.firstBatch", `[{"_id":1,"n":[5]},{"_id":2,"n":[]}]`)
	r = c.mustRun("db", d("aggregate", "orders", "pipeline", bson.A{d("$unionWith", "instock"), d("$count", "n")}, "cursor", bson.D{}))
	expectField(t, r, "cursor.firstBatch", `[{"n":3}]`)
	// A view whose pipeline joins: read directly and through find.
	c.mustRun("db", d("create", "joined", "viewOn", "orders", "pipeline", bson.A{
		d("$lookup", d("from", "stock", "localField", "sku", "foreignField", "sku", "as", "s")),
		d("$project", d("n", "$s.n"))}))
	expectField(t, c.mustRun("db", d("find", "joined", "filter", d("_id", 2))), "cursor.firstBatch", `[{"_id":2,"n":[0]}]`)
	// Views that join each other: mongod refuses to create the second
	// (GraphContainsCycle); mongotest creates it and fails the read.
	c.mustRun("db", d("create", "va", "viewOn", "orders", "pipeline", bson.A{d("$unionWith", "vb")}))
	c.mustRun("db", d("create", "vb", "viewOn", "orders", "pipeline", bson.A{d("$unionWith", "va")}))
	_, err := c.run("db", d("find", "va"))
	wantCode(t, err, 43, "View depth")
}
