package agg_test

import (
	"fmt"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/agg"
)

func Example() {
	var stages []bson.Raw
	for _, s := range []string{
		`{"$match": {"qty": {"$gt": 0}}}`,
		`{"$group": {"_id": "$item", "total": {"$sum": "$qty"}, "avg": {"$avg": "$qty"}}}`,
		`{"$sort": {"total": -1}}`,
	} {
		stage, err := bson.ParseExtJSON([]byte(s))
		if err != nil {
			panic(err)
		}
		stages = append(stages, stage)
	}
	p, err := agg.Compile(stages, agg.Options{DB: "shop"})
	if err != nil {
		fmt.Println(err)
		return
	}
	var docs []bson.Raw
	for _, s := range []string{
		`{"_id": 1, "item": "pen", "qty": 2}`,
		`{"_id": 2, "item": "ink", "qty": 5}`,
		`{"_id": 3, "item": "pen", "qty": 4}`,
		`{"_id": 4, "item": "pad", "qty": 0}`,
	} {
		d, _ := bson.ParseExtJSON([]byte(s))
		docs = append(docs, d)
	}
	out, err := p.Run(func(yield func(bson.Raw) bool) {
		for _, d := range docs {
			if !yield(d) {
				return
			}
		}
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range out {
		fmt.Println(d)
	}

	_, err = agg.Compile([]bson.Raw{mustParse(`{"$graphLookup": {"from": "x"}}`)}, agg.Options{})
	fmt.Println(err)
	// Output:
	// {"_id":"pen","total":6,"avg":3.0}
	// {"_id":"ink","total":5,"avg":5.0}
	// NotImplemented (238): the $graphLookup stage is not supported by mongotest
}

func mustParse(s string) bson.Raw {
	d, err := bson.ParseExtJSON([]byte(s))
	if err != nil {
		panic(err)
	}
	return d
}
