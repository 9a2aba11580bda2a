package agg

import (
	"testing"

	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// joinCase is a pipeline over "input" with other collections of the
// database "db" readable by name.
type joinCase struct {
	name     string
	colls    map[string]string // collection name to a JSON array of documents
	let      string            // the let option, "" for none
	input    string
	pipeline string
	want     string
	code     int32
}

func runJoinCases(t *testing.T, cases []joinCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			colls := mapCollections{}
			for name, docs := range c.colls {
				colls["db."+name] = parseArray(t, docs)
			}
			o := Options{Now: testNow, DB: "db", Collections: colls}
			if c.let != "" {
				o.Let = parseDoc(t, c.let)
			}
			p, err := Compile(parseArray(t, c.pipeline), o)
			checkRun(t, p, err, c.input, c.want, c.code)
		})
	}
}

func TestLetVariables(t *testing.T) {
	in := `[{"_id": 1, "a": 5}]`
	runJoinCases(t, []joinCase{
		{name: "let option", let: `{"x": 2, "s": {"$concat": ["a", "b"]}}`, input: in,
			pipeline: `[{"$project": {"y": {"$add": ["$a", "$$x"]}, "s": "$$s"}}]`, want: `[{"_id": 1, "y": 7, "s": "ab"}]`},
		{name: "let dotted path", let: `{"d": {"k": [{"v": 1}, {"v": 2}]}}`, input: in,
			pipeline: `[{"$project": {"v": "$$d.k.v"}}]`, want: `[{"_id": 1, "v": [1, 2]}]`},
		{name: "let in $match $expr", let: `{"min": 4}`, input: `[{"_id": 1, "a": 5}, {"_id": 2, "a": 3}]`,
			pipeline: `[{"$match": {"$expr": {"$gt": ["$a", "$$min"]}}}]`, want: `[{"_id": 1, "a": 5}]`},
		{name: "let sees NOW", let: `{"t": "$$NOW"}`, input: in,
			pipeline: `[{"$project": {"_id": 0, "same": {"$eq": ["$$t", "$$NOW"]}}}]`, want: `[{"same": true}]`},
		{name: "undefined variable", input: in, pipeline: `[{"$project": {"v": "$$nope"}}]`, code: 17276},
		{name: "undefined variable found on no input", input: `[]`, pipeline: `[{"$group": {"_id": "$$nope.a"}}]`, code: 17276},
		{name: "let sees not its own variables", let: `{"a": 1, "b": "$$a"}`, input: in, pipeline: `[]`, code: 17276},
		{name: "$$ in a $match filter is a string", input: `[{"_id": 1, "s": "$$x"}, {"_id": 2}]`, pipeline: `[{"$match": {"s": "$$x"}}]`, want: `[{"_id": 1, "s": "$$x"}]`},
		{name: "$$ in $literal is a string", input: in, pipeline: `[{"$project": {"_id": 0, "s": {"$literal": "$$x"}}}]`, want: `[{"s": "$$x"}]`},
		{name: "$let variable outside its in", input: `[]`, pipeline: `[{"$project": {"v": {"$let": {"vars": {"b": 1}, "in": "$$b"}}, "w": "$$b"}}]`, code: 17276},
		{name: "$lookup variable outside its pipeline", input: `[]`, pipeline: `[{"$lookup": {"from": "x", "let": {"b": 1}, "pipeline": [], "as": "j"}}, {"$project": {"w": "$$b"}}]`, code: 17276},
		{name: "$lookup variable in a nested facet", input: `[]`, pipeline: `[{"$lookup": {"from": "x", "let": {"b": 1}, "pipeline": [{"$facet": {"f": [{"$project": {"w": "$$b"}}]}}], "as": "j"}}]`, want: `[]`},
		{name: "let name uppercase", let: `{"X": 1}`, input: in, pipeline: `[]`, code: 16867},
		{name: "let name bad char", let: `{"a-b": 1}`, input: in, pipeline: `[]`, code: 16868},
		{name: "let name empty", let: `{"": 1}`, input: in, pipeline: `[]`, code: 16866},
		{name: "$let", input: in,
			pipeline: `[{"$project": {"_id": 0, "v": {"$let": {"vars": {"b": {"$add": ["$a", 1]}}, "in": {"$multiply": ["$$b", 2]}}}}}]`, want: `[{"v": 12}]`},
		{name: "$let shadows", let: `{"b": 100}`, input: in,
			pipeline: `[{"$project": {"_id": 0, "v": {"$let": {"vars": {"b": 1}, "in": "$$b"}}, "w": "$$b"}}]`, want: `[{"v": 1, "w": 100}]`},
		{name: "$let missing in", input: in, pipeline: `[{"$project": {"v": {"$let": {"vars": {}}}}}]`, code: 16877},
		{name: "$let missing vars", input: in, pipeline: `[{"$project": {"v": {"$let": {"in": 1}}}}]`, code: 16876},
		{name: "$let unknown", input: in, pipeline: `[{"$project": {"v": {"$let": {"vars": {}, "in": 1, "x": 1}}}}]`, code: 16875},
		{name: "$let not object", input: in, pipeline: `[{"$project": {"v": {"$let": 1}}}]`, code: 16874},
		{name: "REMOVE", input: in, pipeline: `[{"$project": {"a": "$$REMOVE"}}]`, want: `[{"_id": 1}]`},
		{name: "rand arguments", input: in, pipeline: `[{"$project": {"r": {"$rand": {"a": 1}}}}]`, code: 3040501},
		{name: "rand scalar", input: in, pipeline: `[{"$project": {"r": {"$rand": 1}}}]`, code: 10065},
		{name: "rand range", input: in, pipeline: `[{"$project": {"_id": 0, "ok": {"$and": [{"$gte": [{"$rand": {}}, 0]}, {"$lt": [{"$rand": {}}, 1]}]}}}]`, want: `[{"ok": true}]`},
	})
}

func TestEvalLet(t *testing.T) {
	vars, err := EvalLet(parseDoc(t, `{"x": {"$add": [1, 2]}}`), testNow)
	if err != nil {
		t.Fatal(err)
	}
	v, err := Eval(parseDoc(t, `{"e": {"$multiply": ["$$x", "$n"]}}`).Lookup("e"), parseDoc(t, `{"n": 4}`), vars, testNow)
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := v.AsInt64OK(); !ok || n != 12 {
		t.Fatalf("got %s, want 12", v)
	}
	if _, err := EvalLet(parseDoc(t, `{"Bad": 1}`), testNow); mongoerr.As(err) == nil || mongoerr.As(err).Code != 16867 {
		t.Fatalf("got %v, want 16867", err)
	}
}

var (
	orders    = `[{"_id": 1, "item": "a", "qty": 2}, {"_id": 2, "item": "b", "qty": 1}, {"_id": 3, "tags": ["a", "c"]}, {"_id": 4}]`
	inventory = `[{"_id": 10, "sku": "a", "stock": 5}, {"_id": 11, "sku": "b", "stock": 0}, {"_id": 12, "sku": ["c", "d"]}, {"_id": 13}]`
)

func TestLookup(t *testing.T) {
	inv := map[string]string{"inventory": inventory}
	runJoinCases(t, []joinCase{
		{name: "equality", colls: inv, input: orders,
			pipeline: `[{"$lookup": {"from": "inventory", "localField": "item", "foreignField": "sku", "as": "inv"}}, {"$project": {"ids": "$inv._id"}}]`,
			// _id 4 has no item: null matches the foreign document without sku.
			want: `[{"_id": 1, "ids": [10]}, {"_id": 2, "ids": [11]}, {"_id": 3, "ids": [13]}, {"_id": 4, "ids": [13]}]`},
		{name: "local array matches elementwise, foreign array by element", colls: inv, input: orders,
			pipeline: `[{"$match": {"_id": 3}}, {"$lookup": {"from": "inventory", "localField": "tags", "foreignField": "sku", "as": "inv"}}, {"$project": {"ids": "$inv._id"}}]`,
			want:     `[{"_id": 3, "ids": [10, 12]}]`},
		{name: "missing collection gives empty arrays", input: `[{"_id": 1, "x": 1}]`,
			pipeline: `[{"$lookup": {"from": "none", "localField": "x", "foreignField": "x", "as": "j"}}]`, want: `[{"_id": 1, "x": 1, "j": []}]`},
		{name: "as a dotted path", colls: inv, input: `[{"_id": 1, "item": "b"}]`,
			pipeline: `[{"$lookup": {"from": "inventory", "localField": "item", "foreignField": "sku", "as": "a.b"}}]`,
			want:     `[{"_id": 1, "item": "b", "a": {"b": [{"_id": 11, "sku": "b", "stock": 0}]}}]`},
		{name: "pipeline with let", colls: inv, input: `[{"_id": 1, "item": "a", "qty": 2}, {"_id": 2, "item": "b", "qty": 1}]`,
			pipeline: `[{"$lookup": {"from": "inventory", "let": {"it": "$item", "q": "$qty"}, "pipeline": [
				{"$match": {"$expr": {"$and": [{"$eq": ["$sku", "$$it"]}, {"$gte": ["$stock", "$$q"]}]}}}, {"$project": {"_id": 1}}], "as": "ok"}}]`,
			want: `[{"_id": 1, "item": "a", "qty": 2, "ok": [{"_id": 10}]}, {"_id": 2, "item": "b", "qty": 1, "ok": []}]`},
		{name: "pipeline sees the outer let", colls: inv, let: `{"min": 1}`, input: `[{"_id": 1}]`,
			pipeline: `[{"$lookup": {"from": "inventory", "pipeline": [{"$match": {"$expr": {"$gte": ["$stock", "$$min"]}}}], "as": "j"}}, {"$project": {"n": {"$size": "$j"}}}]`,
			want:     `[{"_id": 1, "n": 1}]`},
		{name: "combined equality and pipeline", colls: inv, input: `[{"_id": 1, "item": "a"}, {"_id": 2, "item": "b"}]`,
			pipeline: `[{"$lookup": {"from": "inventory", "localField": "item", "foreignField": "sku", "let": {"i": "$_id"}, "pipeline": [{"$project": {"_id": 0, "o": "$$i", "stock": 1}}], "as": "j"}}]`,
			want:     `[{"_id": 1, "item": "a", "j": [{"stock": 5, "o": 1}]}, {"_id": 2, "item": "b", "j": [{"stock": 0, "o": 2}]}]`},
		{name: "nested lookup", colls: map[string]string{"inventory": inventory, "suppliers": `[{"_id": 1, "sku": "a", "name": "acme"}]`}, input: `[{"_id": 1, "item": "a"}]`,
			pipeline: `[{"$lookup": {"from": "inventory", "localField": "item", "foreignField": "sku", "pipeline": [
				{"$lookup": {"from": "suppliers", "localField": "sku", "foreignField": "sku", "as": "s"}}, {"$project": {"_id": 0, "s": "$s.name"}}], "as": "j"}}]`,
			want: `[{"_id": 1, "item": "a", "j": [{"s": ["acme"]}]}]`},
		{name: "not an object", input: `[]`, pipeline: `[{"$lookup": 1}]`, code: mongoerr.FailedToParse},
		{name: "no as", input: `[]`, pipeline: `[{"$lookup": {"from": "x", "localField": "a", "foreignField": "b"}}]`, code: mongoerr.FailedToParse},
		{name: "only localField", input: `[]`, pipeline: `[{"$lookup": {"from": "x", "localField": "a", "as": "b"}}]`, code: mongoerr.FailedToParse},
		{name: "let without pipeline", input: `[]`, pipeline: `[{"$lookup": {"from": "x", "localField": "a", "foreignField": "a", "let": {}, "as": "b"}}]`, code: mongoerr.FailedToParse},
		{name: "pipeline with only foreignField", input: `[]`, pipeline: `[{"$lookup": {"from": "x", "foreignField": "a", "pipeline": [], "as": "b"}}]`, code: mongoerr.FailedToParse},
		{name: "unknown argument", input: `[]`, pipeline: `[{"$lookup": {"from": "x", "pipeline": [], "as": "b", "foo": 1}}]`, code: mongoerr.FailedToParse},
		{name: "from not a string", input: `[]`, pipeline: `[{"$lookup": {"from": 1, "pipeline": [], "as": "b"}}]`, code: mongoerr.FailedToParse},
		{name: "pipeline not an array", input: `[]`, pipeline: `[{"$lookup": {"from": "x", "pipeline": {}, "as": "b"}}]`, code: mongoerr.FailedToParse},
		{name: "let bad name", input: `[]`, pipeline: `[{"$lookup": {"from": "x", "let": {"A": 1}, "pipeline": [], "as": "b"}}]`, code: 16867},
		{name: "$out inside", input: `[]`, pipeline: `[{"$lookup": {"from": "x", "pipeline": [{"$out": "y"}], "as": "b"}}]`, code: 51047},
		{name: "bad stage inside", input: `[]`, pipeline: `[{"$lookup": {"from": "x", "pipeline": [{"$nope": 1}], "as": "b"}}]`, code: mongoerr.Location40324},
	})
}

func TestFacetUnionWith(t *testing.T) {
	nums := `[{"_id": 1, "n": 1}, {"_id": 2, "n": 2}, {"_id": 3, "n": 3}]`
	runJoinCases(t, []joinCase{
		{name: "facet", input: nums,
			pipeline: `[{"$facet": {"small": [{"$match": {"n": {"$lt": 2}}}], "count": [{"$count": "c"}], "none": [{"$match": {"n": 9}}]}}]`,
			want:     `[{"small": [{"_id": 1, "n": 1}], "count": [{"c": 3}], "none": []}]`},
		{name: "facet on no input", input: `[]`, pipeline: `[{"$facet": {"a": []}}]`, want: `[{"a": []}]`},
		{name: "facet not object", input: `[]`, pipeline: `[{"$facet": 1}]`, code: 40169},
		{name: "facet not array", input: `[]`, pipeline: `[{"$facet": {"a": 1}}]`, code: 40170},
		{name: "facet element not object", input: `[]`, pipeline: `[{"$facet": {"a": [1]}}]`, code: 40171},
		{name: "facet nested facet", input: `[]`, pipeline: `[{"$facet": {"a": [{"$facet": {"b": []}}]}}]`, code: 40600},
		{name: "facet out", input: `[]`, pipeline: `[{"$facet": {"a": [{"$out": "x"}]}}]`, code: 40600},
		{name: "facet dollar name", input: `[]`, pipeline: `[{"$facet": {"$a": []}}]`, code: 16410},
		{name: "facet dotted name", input: `[]`, pipeline: `[{"$facet": {"a.b": []}}]`, code: 16412},
		{name: "unionWith string", colls: map[string]string{"other": `[{"_id": 9}]`}, input: `[{"_id": 1}]`,
			pipeline: `[{"$unionWith": "other"}]`, want: `[{"_id": 1}, {"_id": 9}]`},
		{name: "unionWith pipeline", colls: map[string]string{"other": `[{"_id": 9, "n": 1}, {"_id": 8, "n": 5}]`}, let: `{"m": 3}`, input: `[{"_id": 1}]`,
			pipeline: `[{"$unionWith": {"coll": "other", "pipeline": [{"$match": {"$expr": {"$gt": ["$n", "$$m"]}}}]}}, {"$project": {"_id": 1}}]`, want: `[{"_id": 1}, {"_id": 8}]`},
		{name: "unionWith missing collection", input: `[{"_id": 1}]`, pipeline: `[{"$unionWith": "none"}]`, want: `[{"_id": 1}]`},
		{name: "unionWith no coll", input: `[]`, pipeline: `[{"$unionWith": {"pipeline": []}}]`, code: 40414},
		{name: "unionWith unknown field", input: `[]`, pipeline: `[{"$unionWith": {"coll": "x", "y": 1}}]`, code: 40415},
		{name: "unionWith bad type", input: `[]`, pipeline: `[{"$unionWith": 1}]`, code: mongoerr.FailedToParse},
		{name: "unionWith pipeline type", input: `[]`, pipeline: `[{"$unionWith": {"coll": "x", "pipeline": 1}}]`, code: mongoerr.TypeMismatch},
		{name: "unionWith out inside", input: `[]`, pipeline: `[{"$unionWith": {"coll": "x", "pipeline": [{"$out": "y"}]}}]`, code: 31441},
	})
}

func TestGroupingStages(t *testing.T) {
	items := `[{"_id": 1, "t": "a", "p": 5}, {"_id": 2, "t": "b", "p": 15}, {"_id": 3, "t": "a", "p": 25}, {"_id": 4, "t": "a", "p": 100}]`
	runJoinCases(t, []joinCase{
		{name: "sortByCount", input: items, pipeline: `[{"$sortByCount": "$t"}]`, want: `[{"_id": "a", "count": 3}, {"_id": "b", "count": 1}]`},
		{name: "sortByCount expression", input: items, pipeline: `[{"$sortByCount": {"$gt": ["$p", 10]}}]`, want: `[{"_id": true, "count": 3}, {"_id": false, "count": 1}]`},
		{name: "sortByCount not a path", input: items, pipeline: `[{"$sortByCount": "t"}]`, code: 40148},
		{name: "sortByCount not an expression", input: items, pipeline: `[{"$sortByCount": {"a": 1}}]`, code: 40147},
		{name: "sortByCount number", input: items, pipeline: `[{"$sortByCount": 1}]`, code: 40149},
		{name: "count", input: items, pipeline: `[{"$count": "n"}]`, want: `[{"n": 4}]`},
		{name: "bucket", input: items, pipeline: `[{"$bucket": {"groupBy": "$p", "boundaries": [0, 10, 50], "default": "other"}}]`,
			want: `[{"_id": 0, "count": 1}, {"_id": 10, "count": 2}, {"_id": "other", "count": 1}]`},
		{name: "bucket output", input: items, pipeline: `[{"$bucket": {"groupBy": "$p", "boundaries": [0, 10, 200], "output": {"ids": {"$push": "$_id"}, "sum": {"$sum": "$p"}}}}]`,
			want: `[{"_id": 0, "ids": [1], "sum": 5}, {"_id": 10, "ids": [2, 3, 4], "sum": 140}]`},
		{name: "bucket default below", input: items, pipeline: `[{"$bucket": {"groupBy": "$p", "boundaries": [10, 50], "default": -1}}]`,
			want: `[{"_id": -1, "count": 2}, {"_id": 10, "count": 2}]`},
		{name: "bucket value outside without default", input: items, pipeline: `[{"$bucket": {"groupBy": "$p", "boundaries": [0, 10]}}]`, code: 40066},
		{name: "bucket unsorted", input: items, pipeline: `[{"$bucket": {"groupBy": "$p", "boundaries": [10, 0]}}]`, code: 40194},
		{name: "bucket equal boundaries", input: items, pipeline: `[{"$bucket": {"groupBy": "$p", "boundaries": [1, 1]}}]`, code: 40194},
		{name: "bucket mixed types", input: items, pipeline: `[{"$bucket": {"groupBy": "$p", "boundaries": [1, "a"]}}]`, code: 40193},
		{name: "bucket mixed numbers", input: items, pipeline: `[{"$bucket": {"groupBy": "$p", "boundaries": [0, 10.5, {"$numberLong": "200"}]}}]`,
			want: `[{"_id": 0, "count": 1}, {"_id": 10.5, "count": 3}]`},
		{name: "bucket one boundary", input: items, pipeline: `[{"$bucket": {"groupBy": "$p", "boundaries": [1]}}]`, code: 40192},
		{name: "bucket boundaries not array", input: items, pipeline: `[{"$bucket": {"groupBy": "$p", "boundaries": 1}}]`, code: 40200},
		{name: "bucket folded boundary", input: items, pipeline: `[{"$bucket": {"groupBy": "$p", "boundaries": [0, {"$add": [5, 5]}, 1000], "default": {"$literal": "$x"}}}]`,
			want: `[{"_id": 0, "count": 1}, {"_id": 10, "count": 3}]`},
		{name: "bucket rand boundary", input: items, pipeline: `[{"$bucket": {"groupBy": "$p", "boundaries": [0, {"$rand": {}}]}}]`, code: 40191},
		{name: "bucket non-constant boundary", input: items, pipeline: `[{"$bucket": {"groupBy": "$p", "boundaries": [0, "$p"]}}]`, code: 40191},
		{name: "bucket default inside", input: items, pipeline: `[{"$bucket": {"groupBy": "$p", "boundaries": [0, 10], "default": 5}}]`, code: 40199},
		{name: "bucket default non-constant", input: items, pipeline: `[{"$bucket": {"groupBy": "$p", "boundaries": [0, 10], "default": "$p"}}]`, code: 40195},
		{name: "bucket groupBy not path", input: items, pipeline: `[{"$bucket": {"groupBy": "p", "boundaries": [0, 10]}}]`, code: 40202},
		{name: "bucket output not object", input: items, pipeline: `[{"$bucket": {"groupBy": "$p", "boundaries": [0, 10], "output": 1}}]`, code: 40196},
		{name: "bucket unknown option", input: items, pipeline: `[{"$bucket": {"groupBy": "$p", "boundaries": [0, 10], "x": 1}}]`, code: 40197},
		{name: "bucket not object", input: items, pipeline: `[{"$bucket": 1}]`, code: 40201},
		{name: "bucket missing groupBy", input: items, pipeline: `[{"$bucket": {"boundaries": [0, 10]}}]`, code: 40198},
		{name: "replaceWith", input: `[{"_id": 1, "d": {"x": 1}}]`, pipeline: `[{"$replaceWith": "$d"}]`, want: `[{"x": 1}]`},
		{name: "replaceRoot with let", let: `{"v": {"k": 2}}`, input: `[{"_id": 1}]`, pipeline: `[{"$replaceRoot": {"newRoot": "$$v"}}]`, want: `[{"k": 2}]`},
	})
}
