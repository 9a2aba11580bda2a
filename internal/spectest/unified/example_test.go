package unified_test

import (
	"fmt"

	"github.com/mongoscope/mongoscope/internal/spectest/unified"
)

func ExampleMatch() {
	expected, _ := unified.ParseValue([]byte(`{"ok": 1, "cursor": {"id": {"$$type": ["int", "long"]}, "ns": "db.coll", "firstBatch": [{"_id": 1, "x": 2}]}}`))
	actual, _ := unified.ParseValue([]byte(`{"ok": 1.0, "cursor": {"id": {"$numberLong": "0"}, "ns": "db.coll", "firstBatch": [{"_id": 1, "x": 3}]}, "$clusterTime": {}}`))
	err := unified.Match(expected, actual, &unified.Options{Path: "reply"})
	fmt.Println(err)
	// Output: reply.cursor.firstBatch.0.x: got 3, want 2
}
