package agg

import (
	"errors"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// fuzzSeeds are pipelines (JSON arrays of stages) covering every stage
// and most operators, so mutations start from valid shapes.
var fuzzSeeds = []string{
	`[{"$match": {"a": {"$gt": 1}, "$expr": {"$lt": ["$a", 5]}}}, {"$sort": {"a": -1}}, {"$skip": 1}, {"$limit": 2}]`,
	`[{"$project": {"a": 1, "b.c": 1, "x": {"$add": ["$a", 1, 2.5]}}}]`,
	`[{"$project": {"_id": 0, "e.c": 0}}]`,
	`[{"$addFields": {"e.z": {"$concat": ["$s", "x"]}, "n": {"$cond": [{"$gt": ["$a", 1]}, "$a", null]}}}, {"$unset": ["a", "b.c"]}]`,
	`[{"$set": {"t": {"$type": "$a"}, "s": {"$toString": "$a"}, "m": {"$mod": ["$a", 2]}, "d": {"$divide": ["$a", 3]}}}]`,
	`[{"$group": {"_id": {"k": "$s"}, "n": {"$sum": 1}, "avg": {"$avg": "$a"}, "lo": {"$min": "$a"}, "hi": {"$max": "$a"}, "p": {"$push": "$$ROOT"}, "u": {"$addToSet": "$a"}, "f": {"$first": "$a"}, "l": {"$last": "$a"}, "c": {"$count": {}}}}]`,
	`[{"$unwind": {"path": "$e", "includeArrayIndex": "i", "preserveNullAndEmptyArrays": true}}, {"$count": "n"}]`,
	`[{"$unwind": "$e"}, {"$replaceRoot": {"newRoot": {"x": "$e"}}}]`,
	`[{"$replaceWith": "$b"}, {"$out": "o"}]`,
	`[{"$project": {"x": {"$substrCP": ["$s", 1, 2]}, "y": {"$arrayElemAt": ["$e", -1]}, "z": {"$size": "$e"}, "w": {"$in": [1, "$e"]}, "v": {"$ifNull": ["$q", "$s"]}}}]`,
	`[{"$project": {"x": {"$and": ["$a", {"$or": [false, {"$not": "$s"}]}]}, "y": {"$cmp": ["$a", "$s"]}, "z": {"$abs": {"$subtract": ["$a", 10]}}, "q": {"$multiply": ["$a", "$a"]}}}]`,
	`[{"$set": {"i": {"$toInt": "$s"}, "l": {"$toLong": "$a"}, "d": {"$toDouble": "$a"}, "b": {"$toBool": "$a"}, "u": {"$toUpper": "$s"}, "w": {"$toLower": "$s"}, "n": "$$NOW", "r": "$$REMOVE"}}]`,
	`[{"$lookup": {}}]`,
	`[{"$lookup": {"from": "c", "localField": "e.c", "foreignField": "a", "as": "j"}}, {"$unwind": "$j"}]`,
	`[{"$lookup": {"from": "c", "let": {"x": "$a"}, "pipeline": [{"$match": {"$expr": {"$eq": ["$a", "$$x"]}}}], "as": "j.k"}}]`,
	`[{"$facet": {"a": [{"$sortByCount": "$s"}], "b": [{"$unionWith": {"coll": "c", "pipeline": [{"$count": "n"}]}}]}}]`,
	`[{"$bucket": {"groupBy": "$a", "boundaries": [0, 2, 10], "default": "x", "output": {"n": {"$sum": 1}}}}]`,
	`[{"$project": {"v": {"$let": {"vars": {"y": "$a"}, "in": {"$add": ["$$y", {"$rand": {}}]}}}}}]`,
	`[{"$foo": 1}]`,
}

var fuzzDocs = []string{
	`{"_id": 1, "a": 1, "s": "abc", "b": {"c": 1}, "e": [1, {"c": 2}, [3]]}`,
	`{"_id": 2, "a": {"$numberLong": "9223372036854775807"}, "s": "42", "e": []}`,
	`{"_id": 3, "a": 2.5, "b": null, "e": null}`,
	`{"_id": 4, "a": {"$numberDecimal": "1.5"}, "s": {"$date": "2024-01-01T00:00:00Z"}}`,
}

func FuzzPipeline(f *testing.F) {
	for _, s := range fuzzSeeds {
		wrapped := parseDoc(f, `{"p": `+s+`}`)
		f.Add([]byte(wrapped.Lookup("p").Value), []byte(parseDoc(f, fuzzDocs[0])))
	}
	var base []bson.Raw
	for _, d := range fuzzDocs {
		base = append(base, parseDoc(f, d))
	}
	f.Fuzz(func(t *testing.T, pipeline, doc []byte) {
		// pipeline is an array; each element's bytes, whatever their type,
		// are offered as a stage, so Compile also sees invalid BSON.
		var stages []bson.Raw
		it := bson.Raw(pipeline).Iter()
		for it.Next() && len(stages) < 16 {
			stages = append(stages, bson.Raw(it.Value().Value))
		}
		colls := mapCollections{"db.c": append(base[:len(base):len(base)], bson.Raw(doc))}
		p, err := Compile(stages, Options{DB: "db", Collections: colls, Out: func(string, string, []bson.Raw) error { return nil }})
		if err != nil {
			var me *mongoerr.Error
			if !errors.As(err, &me) {
				t.Fatalf("Compile error %T is not a *mongoerr.Error: %v", err, err)
			}
			return
		}
		input := append(append([]bson.Raw(nil), base...), bson.Raw(doc))
		res, err := p.Run(feed(input))
		if err != nil {
			var me *mongoerr.Error
			if !errors.As(err, &me) {
				t.Fatalf("Run error %T is not a *mongoerr.Error: %v", err, err)
			}
			return
		}
		if bson.Raw(doc).Validate() != nil {
			return // results built from malformed input need not be valid
		}
		for _, r := range res {
			if err := r.Validate(); err != nil {
				t.Fatalf("result %x is not valid BSON: %v", []byte(r), err)
			}
		}
	})
}
