package mongotest_test

import (
	"context"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest"
)

// Through this module's driver, as an application would: $lookup joins
// two collections, with the aggregate command's let option.
func TestAggregateLookupThroughDriver(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := driverConnect(t, "mongodb://"+s.Addr()+"/")
	for _, cmd := range []bson.D{
		{{Key: "insert", Value: "orders"}, {Key: "documents", Value: bson.A{
			bson.D{{Key: "_id", Value: 1}, {Key: "item", Value: "pen"}},
			bson.D{{Key: "_id", Value: 2}, {Key: "item", Value: "ink"}}}}},
		{{Key: "insert", Value: "stock"}, {Key: "documents", Value: bson.A{
			bson.D{{Key: "_id", Value: 10}, {Key: "sku", Value: "pen"}, {Key: "n", Value: 5}}}}},
	} {
		if _, err := c.RunCommand(ctx, "app", cmd); err != nil {
			t.Fatal(err)
		}
	}
	r, err := c.RunCommand(ctx, "app", bson.D{
		{Key: "aggregate", Value: "orders"},
		{Key: "pipeline", Value: bson.A{
			bson.D{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "stock"}, {Key: "localField", Value: "item"},
				{Key: "foreignField", Value: "sku"}, {Key: "as", Value: "s"}}}},
			bson.D{{Key: "$project", Value: bson.D{{Key: "n", Value: "$s.n"}, {Key: "tag", Value: "$$tag"}}}},
		}},
		{Key: "cursor", Value: bson.D{}},
		{Key: "let", Value: bson.D{{Key: "tag", Value: "t1"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := r.Lookup("cursor", "firstBatch").String()
	want := `[{"_id":1,"n":[5],"tag":"t1"},{"_id":2,"n":[],"tag":"t1"}]`
	if got != want {
		t.Fatalf("firstBatch %s, want %s", got, want)
	}
}
