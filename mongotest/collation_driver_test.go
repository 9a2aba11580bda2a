package mongotest_test

import (
	"context"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest"
)

// Through this module's driver, as an application would: a
// case-insensitive find and a let variable in a delete's $expr.
func TestCollationAndLetThroughDriver(t *testing.T) {
	s := mongotest.NewServer(t, mongotest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := driverConnect(t, "mongodb://"+s.Addr()+"/")
	run := func(cmd bson.D) bson.Raw {
		t.Helper()
		r, err := c.RunCommand(ctx, "app", cmd)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	run(bson.D{{Key: "insert", Value: "users"}, {Key: "documents", Value: bson.A{
		bson.D{{Key: "_id", Value: 1}, {Key: "name", Value: "Zoë"}},
		bson.D{{Key: "_id", Value: 2}, {Key: "name", Value: "ZOE"}},
		bson.D{{Key: "_id", Value: 3}, {Key: "name", Value: "amy"}}}}})
	r := run(bson.D{{Key: "find", Value: "users"}, {Key: "filter", Value: bson.D{{Key: "name", Value: "zoe"}}},
		{Key: "collation", Value: bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 1}}}})
	if got, want := r.Lookup("cursor", "firstBatch").String(), `[{"_id":1,"name":"Zoë"},{"_id":2,"name":"ZOE"}]`; got != want {
		t.Errorf("find firstBatch %s, want %s", got, want)
	}
	r = run(bson.D{{Key: "delete", Value: "users"}, {Key: "deletes", Value: bson.A{
		bson.D{{Key: "q", Value: bson.D{{Key: "$expr", Value: bson.D{{Key: "$eq", Value: bson.A{"$name", "$$who"}}}}}}, {Key: "limit", Value: 0}}}},
		{Key: "let", Value: bson.D{{Key: "who", Value: "amy"}}}})
	if got := r.Lookup("n").String(); got != "1" {
		t.Errorf("delete n = %s, want 1", got)
	}
	_, err := c.RunCommand(ctx, "app", bson.D{{Key: "find", Value: "users"},
		{Key: "collation", Value: bson.D{{Key: "strength", Value: 2}}}})
	if err == nil {
		t.Error("a collation without locale was accepted")
	}
}
