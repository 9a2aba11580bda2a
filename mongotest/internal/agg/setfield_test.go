package agg

import "testing"

func TestFieldOperators(t *testing.T) {
	doc := `[{"_id": 1, "a.b": 1, "$c": 2, "d": {"e": 3}}]`
	runCases(t, []pipeCase{
		{"getField dotted", doc, `[{"$project": {"_id": 0, "x": {"$getField": "a.b"}}}]`, `[{"x": 1}]`, 0},
		{"getField dollar via literal", doc, `[{"$project": {"_id": 0, "x": {"$getField": {"$literal": "$c"}}}}]`, `[{"x": 2}]`, 0},
		{"getField input", doc, `[{"$project": {"_id": 0, "x": {"$getField": {"field": "e", "input": "$d"}}}}]`, `[{"x": 3}]`, 0},
		{"getField missing field", doc, `[{"$project": {"_id": 0, "x": {"$getField": "nope"}}}]`, `[{}]`, 0},
		{"getField null input", doc, `[{"$project": {"_id": 0, "x": {"$getField": {"field": "e", "input": null}}}}]`, `[{"x": null}]`, 0},
		{"getField scalar input", doc, `[{"$project": {"x": {"$getField": {"field": "e", "input": 5}}}}]`, ``, 3041705},
		{"getField path field", doc, `[{"$project": {"x": {"$getField": "$d"}}}]`, ``, 3041704},
		{"getField unknown argument", doc, `[{"$project": {"x": {"$getField": {"field": "a", "bogus": 1}}}}]`, ``, 3041701},
		{"setField new dollar field", doc, `[{"$replaceWith": {"$setField": {"field": {"$literal": "$x"}, "value": 1, "input": {"_id": 1}}}}]`, `[{"_id": 1, "$x": 1}]`, 0},
		{"setField keeps the place", doc, `[{"$replaceWith": {"$setField": {"field": "a.b", "value": 9, "input": "$$ROOT"}}}]`, `[{"_id": 1, "a.b": 9, "$c": 2, "d": {"e": 3}}]`, 0},
		{"setField $$REMOVE removes", doc, `[{"$replaceWith": {"$setField": {"field": "a.b", "value": "$$REMOVE", "input": "$$ROOT"}}}]`, `[{"_id": 1, "$c": 2, "d": {"e": 3}}]`, 0},
		{"setField embedded", doc, `[{"$project": {"_id": 0, "d": {"$setField": {"field": "x.y", "value": 1, "input": "$d"}}}}]`, `[{"d": {"e": 3, "x.y": 1}}]`, 0},
		{"setField null input", doc, `[{"$project": {"_id": 0, "x": {"$setField": {"field": "a", "value": 1, "input": "$nope"}}}}]`, `[{"x": null}]`, 0},
		{"setField needs value", doc, `[{"$project": {"x": {"$setField": {"field": "a", "input": "$d"}}}}]`, ``, 4161103},
		{"setField needs an object", doc, `[{"$project": {"x": {"$setField": "a"}}}]`, ``, 4161100},
		{"setField non-string field", doc, `[{"$project": {"x": {"$setField": {"field": true, "input": "$d", "value": 1}}}}]`, ``, 4161107},
		{"setField path field", doc, `[{"$project": {"x": {"$setField": {"field": "$a", "input": "$d", "value": 1}}}}]`, ``, 4161106},
		{"setField scalar input", doc, `[{"$project": {"x": {"$setField": {"field": "a", "input": 1, "value": 1}}}}]`, ``, 4161105},
		{"unsetField", doc, `[{"$replaceWith": {"$unsetField": {"field": {"$literal": "$c"}, "input": "$$ROOT"}}}]`, `[{"_id": 1, "a.b": 1, "d": {"e": 3}}]`, 0},
		{"unsetField takes no value", doc, `[{"$project": {"x": {"$unsetField": {"field": "a", "input": "$d", "value": 1}}}}]`, ``, 4161101},
	})
}
