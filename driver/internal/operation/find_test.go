package operation

import (
	"math"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

func i64(v int64) *int64 { return &v }
func i32(v int32) *int32 { return &v }

// TestFindCommandMapping: the find command's limit, batchSize and
// singleBatch, as the find/getMore/killCursors and CRUD specifications map
// the options, and the order of the fields.
func TestFindCommandMapping(t *testing.T) {
	filter, _ := bson.Marshal(bson.D{})
	for _, tc := range []struct {
		name string
		f    Find
		keys string // the command's keys, in order
		want map[string]int64
	}{
		{"no options", Find{}, "find filter", nil},
		{"limit", Find{Limit: i64(5)}, "find filter limit", map[string]int64{"limit": 5}},
		{"limit 0 is no limit", Find{Limit: i64(0)}, "find filter", nil},
		{"negative limit is one batch", Find{Limit: i64(-5)}, "find filter limit batchSize singleBatch", map[string]int64{"limit": 5, "batchSize": 5}},
		{"batchSize equal to limit", Find{Limit: i64(4), BatchSize: i32(4)}, "find filter limit batchSize", map[string]int64{"limit": 4, "batchSize": 5}},
		{"negative batchSize is one batch", Find{BatchSize: i32(-3)}, "find filter batchSize singleBatch", map[string]int64{"batchSize": 3}},
		{"min int32 batchSize", Find{BatchSize: i32(math.MinInt32)}, "find filter batchSize singleBatch", map[string]int64{"batchSize": math.MaxInt32}},
		{"batchSize 0 is left out", Find{BatchSize: i32(0)}, "find filter", nil},
		{"FindOne", Find{Limit: i64(1), Single: true}, "find filter limit singleBatch", map[string]int64{"limit": 1}},
		{"tailable awaitData", Find{Tailable: true, AwaitData: true}, "find filter tailable awaitData", nil},
		{"awaitData alone is not sent", Find{AwaitData: true}, "find filter", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.f.Collection, tc.f.Filter = "c", filter
			cmd := tc.f.Command()
			var keys []string
			it := cmd.Iter()
			for it.Next() {
				keys = append(keys, it.Key())
			}
			if got := strings.Join(keys, " "); got != tc.keys {
				t.Fatalf("keys %q, want %q", got, tc.keys)
			}
			for k, v := range tc.want {
				if got, ok := cmd.Lookup(k).AsInt64OK(); !ok || got != v {
					t.Errorf("%s = %v, want %d", k, cmd.Lookup(k), v)
				}
			}
			if v, err := cmd.LookupErr("singleBatch"); err == nil && !v.Boolean() {
				t.Error("singleBatch sent as false")
			}
		})
	}
}
