package store_test

import (
	"errors"
	"fmt"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/store"
)

func Example() {
	s := store.New()
	c, _ := s.CollectionOrCreate("app", "users")
	one, _ := bson.ParseExtJSON([]byte(`{"_id": 1, "name": "Ada"}`))
	_ = c.Insert(one)

	// NumberLong(1) and 1.0 are the same _id as 1.
	again, _ := bson.ParseExtJSON([]byte(`{"_id": {"$numberLong": "1"}, "name": "Grace"}`))
	err := c.Insert(again)
	var dup *store.DuplicateKeyError
	fmt.Println(errors.As(err, &dup), dup.Err.Message)

	id, _ := bson.ParseExtJSON([]byte(`{"v": 1.0}`))
	doc, ok := c.FindByID(id.Lookup("v"))
	fmt.Println(ok, doc.Lookup("name").StringValue())
	// Output:
	// true E11000 duplicate key error collection: app.users index: _id_ dup key: { _id: 1 }
	// true Ada
}
