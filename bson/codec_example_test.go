package bson_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/mongoscope/mongoscope/bson"
)

type codecAddress struct {
	City    string `bson:"city"`
	Country string `bson:"country,omitempty"`
}

type codecPerson struct {
	ID       bson.ObjectID     `bson:"_id"`
	Name     string            `bson:"name"`
	Age      int               `bson:"age,omitempty"`
	Email    string            `bson:"email,omitempty"`
	Born     time.Time         `bson:"born"`
	Address  codecAddress      `bson:"address"`
	Tags     []string          `bson:"tags"`
	Password string            `bson:"-"`
	Labels   map[string]string `bson:"labels,omitempty"`
}

func ExampleMarshal() {
	p := codecPerson{
		ID:       bson.ObjectID{0x65, 0xf3, 0x1a, 0x2b, 0x9c, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07},
		Name:     "Ada",
		Age:      36,
		Born:     time.Date(1815, 12, 10, 0, 0, 0, 0, time.UTC),
		Address:  codecAddress{City: "London"},
		Tags:     []string{"math", "engines"},
		Password: "never written",
	}
	doc, err := bson.Marshal(&p)
	if err != nil {
		fmt.Println(err)
		return
	}
	elems, _ := bson.Raw(doc).Elements()
	for _, e := range elems {
		fmt.Printf("%s: %v\n", e.Key(), e.Value().Type)
	}
	fmt.Println(bson.Raw(doc).Lookup("address", "city").StringValue())
	// Output:
	// _id: objectID
	// name: string
	// age: 32-bit integer
	// born: UTC datetime
	// address: embedded document
	// tags: array
	// London
}

func ExampleUnmarshal() {
	doc, _ := bson.Marshal(bson.D{
		{Key: "name", Value: "Grace"},
		{Key: "age", Value: int64(85)},
		{Key: "address", Value: bson.D{{Key: "city", Value: "Arlington"}}},
		{Key: "tags", Value: bson.A{"navy", "cobol"}},
		{Key: "unknown", Value: true}, // skipped: no field has this key
	})
	var p codecPerson
	if err := bson.Unmarshal(doc, &p); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Name, p.Age, p.Address.City, p.Tags)
	// Output: Grace 85 Arlington [navy cobol]
}

func ExampleUnmarshal_typeError() {
	type Item struct {
		Price float64 `bson:"price"`
	}
	type Order struct {
		Items []Item `bson:"items"`
	}
	doc, _ := bson.Marshal(bson.D{{Key: "items", Value: bson.A{
		bson.D{{Key: "price", Value: 1.5}},
		bson.D{{Key: "price", Value: "cheap"}},
	}}})
	var o Order
	err := bson.Unmarshal(doc, &o)
	var te *bson.UnmarshalTypeError
	if errors.As(err, &te) {
		fmt.Println(te.Path)
		fmt.Println(err)
	}
	// Output:
	// items.1.price
	// bson: cannot decode string at "items.1.price" into Go type float64
}

// A failed Unmarshal changes nothing, not even fields decoded before the
// error; and decoding never writes into memory the target shares with
// others, so a copy of the value keeps seeing its old contents.
func ExampleUnmarshal_atomic() {
	p := codecPerson{Name: "Ada", Tags: []string{"math"}, Labels: map[string]string{"era": "1840s"}}
	doc, _ := bson.Marshal(bson.D{
		{Key: "name", Value: "Grace"},
		{Key: "tags", Value: bson.A{"navy"}},
		{Key: "age", Value: "eighty-five"}, // not an int
	})
	err := bson.Unmarshal(doc, &p)
	fmt.Println(err != nil, p.Name, p.Tags)

	shared := p // shares p's slice and map
	doc, _ = bson.Marshal(bson.D{
		{Key: "tags", Value: bson.A{"navy"}},
		{Key: "labels", Value: bson.D{{Key: "lang", Value: "COBOL"}}},
	})
	if err := bson.Unmarshal(doc, &p); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Tags, len(p.Labels), shared.Tags, len(shared.Labels))
	// Output:
	// true Ada [math]
	// [navy] 2 [math] 1
}

// Inline flattens a struct into its parent, and an inline map collects the
// keys no field claims.
func ExampleMarshal_inline() {
	type Audit struct {
		CreatedBy string `bson:"createdBy"`
		Version   int32  `bson:"version"`
	}
	type Doc struct {
		Name  string         `bson:"name"`
		Audit Audit          `bson:",inline"`
		Extra map[string]any `bson:",inline"`
	}
	doc, _ := bson.Marshal(Doc{Name: "a", Audit: Audit{CreatedBy: "me", Version: 2}})
	elems, _ := bson.Raw(doc).Elements()
	for i, e := range elems {
		if i > 0 {
			fmt.Print(" ")
		}
		fmt.Print(e.Key())
	}
	fmt.Println()

	src, _ := bson.Marshal(bson.D{{Key: "name", Value: "b"}, {Key: "version", Value: int32(3)}, {Key: "color", Value: "red"}})
	var back Doc
	_ = bson.Unmarshal(src, &back)
	fmt.Println(back.Name, back.Audit.Version, back.Extra)
	// Output:
	// name createdBy version
	// b 3 map[color:red]
}

func ExampleMarshalValue() {
	t, b, _ := bson.MarshalValue([]int32{1, 2})
	fmt.Println(t, len(b))
	// Output: array 19
}

func ExampleRawValue_Unmarshal() {
	doc, _ := bson.Marshal(bson.D{{Key: "address", Value: bson.D{{Key: "city", Value: "Paris"}}}})
	var a codecAddress
	if err := bson.Raw(doc).Lookup("address").Unmarshal(&a); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(a.City)
	// Output: Paris
}
