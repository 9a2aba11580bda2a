package bson_test

import (
	"fmt"

	"github.com/mongoscope/mongoscope/bson"
)

// Build a command with the append-style builder: no allocation beyond the
// buffer, which a caller can reuse.
func ExampleAppendDocumentStart() {
	buf := make([]byte, 0, 256)
	start, b := bson.AppendDocumentStart(buf)
	b = bson.AppendStringElement(b, "find", "orders")
	fstart, b := bson.AppendDocumentElementStart(b, "filter")
	b = bson.AppendStringElement(b, "status", "shipped")
	b, _ = bson.AppendDocumentEnd(b, fstart)
	b = bson.AppendInt32Element(b, "batchSize", 100)
	b, err := bson.AppendDocumentEnd(b, start)
	if err != nil {
		panic(err)
	}
	fmt.Println(bson.Raw(b).Validate() == nil, len(b))
	// Output: true 70
}

// Read fields straight from encoded bytes.
func ExampleRaw_Lookup() {
	b, _ := bson.Marshal(bson.D{
		{Key: "ok", Value: 1.0},
		{Key: "cursor", Value: bson.D{{Key: "firstBatch", Value: bson.A{bson.D{{Key: "_id", Value: int32(7)}}}}}},
	})
	raw := bson.Raw(b)
	ok, _ := raw.Lookup("ok").AsInt64OK()
	id, _ := raw.LookupPath("cursor.firstBatch.0._id")
	fmt.Println(ok, id.Int32())
	// Output: 1 7
}

// Iterate without allocating.
func ExampleRaw_Iter() {
	b, _ := bson.Marshal(bson.D{{Key: "a", Value: int32(1)}, {Key: "b", Value: "two"}})
	it := bson.Raw(b).Iter()
	for it.Next() {
		fmt.Println(it.Key(), it.Value().Type)
	}
	if err := it.Err(); err != nil {
		panic(err)
	}
	// Output:
	// a 32-bit integer
	// b string
}

// Errors name the byte offset and field path of bad input.
func ExampleDecodeError() {
	b, _ := bson.Marshal(bson.D{{Key: "user", Value: bson.D{{Key: "active", Value: true}}}})
	b[len(b)-3] = 7 // corrupt the boolean
	_, err := bson.DecodeD(b)
	fmt.Println(err)
	// Output: bson: invalid BSON at byte 22 (field "user.active"): boolean byte is 0x7, must be 0x00 or 0x01
}

func ExampleDecodeD() {
	b, _ := bson.Marshal(bson.D{{Key: "n", Value: int64(3)}, {Key: "tags", Value: bson.A{"x", "y"}}})
	d, err := bson.DecodeD(b)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%v %T\n", d[0].Value, d[1].Value)
	// Output: 3 bson.A
}
