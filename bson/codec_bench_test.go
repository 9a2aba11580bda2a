package bson

import (
	"fmt"
	"testing"
	"time"
)

// A typical application document: an order with a nested address, line
// items, tags and free-form metadata.

type benchAddress struct {
	Street  string `bson:"street"`
	City    string `bson:"city"`
	Zip     string `bson:"zip"`
	Country string `bson:"country"`
}

type benchLineItem struct {
	SKU      string  `bson:"sku"`
	Name     string  `bson:"name"`
	Quantity int32   `bson:"qty"`
	Price    float64 `bson:"price"`
}

type benchOrder struct {
	ID         ObjectID          `bson:"_id"`
	Customer   string            `bson:"customer"`
	Email      string            `bson:"email"`
	Status     string            `bson:"status"`
	Total      float64           `bson:"total"`
	Version    int64             `bson:"version"`
	Paid       bool              `bson:"paid"`
	CreatedAt  time.Time         `bson:"createdAt"`
	UpdatedAt  time.Time         `bson:"updatedAt"`
	Tags       []string          `bson:"tags"`
	Shipping   benchAddress      `bson:"shipping"`
	Items      []benchLineItem   `bson:"items"`
	Metadata   map[string]string `bson:"metadata"`
	Notes      string            `bson:"notes,omitempty"`
	Priority   int32             `bson:"priority"`
	LoyaltyPts int64             `bson:"loyaltyPoints"`
}

func benchSampleOrder() benchOrder {
	created := time.Date(2026, 3, 14, 15, 9, 26, 535e6, time.UTC)
	o := benchOrder{
		ID:         ObjectID{0x65, 0xf3, 0x1a, 0x2b, 0x9c, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07},
		Customer:   "Ada Lovelace",
		Email:      "ada@example.com",
		Status:     "shipped",
		Total:      1234.56,
		Version:    7,
		Paid:       true,
		CreatedAt:  created,
		UpdatedAt:  created.Add(36 * time.Hour),
		Tags:       []string{"priority", "gift", "international", "fragile"},
		Shipping:   benchAddress{Street: "12 St James's Square", City: "London", Zip: "SW1Y 4JH", Country: "GB"},
		Metadata:   map[string]string{"channel": "web", "campaign": "spring-sale", "coupon": "SPRING26"},
		Priority:   2,
		LoyaltyPts: 98765,
	}
	for i := 0; i < 8; i++ {
		o.Items = append(o.Items, benchLineItem{
			SKU:      fmt.Sprintf("SKU-%05d", 1000+i),
			Name:     fmt.Sprintf("Analytical Engine part #%d", i),
			Quantity: int32(i + 1),
			Price:    19.99 * float64(i+1),
		})
	}
	return o
}

func BenchmarkUnmarshalStruct(b *testing.B) {
	o := benchSampleOrder()
	doc, err := Marshal(&o)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		var v benchOrder
		if err := Unmarshal(doc, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarshalStruct(b *testing.B) {
	o := benchSampleOrder()
	doc, err := Marshal(&o)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Marshal(&o); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMarshalAppendStruct shows the cost without the result
// allocation, encoding into a reused buffer.
func BenchmarkMarshalAppendStruct(b *testing.B) {
	o := benchSampleOrder()
	buf, err := MarshalAppend(nil, &o)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if buf, err = MarshalAppend(buf[:0], &o); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUnmarshalStructReuse decodes again and again into one populated
// struct: the cost of atomicity (the target is copied, its slices and maps
// are replaced rather than reused) on top of a fresh decode.
func BenchmarkUnmarshalStructReuse(b *testing.B) {
	o := benchSampleOrder()
	doc, err := Marshal(&o)
	if err != nil {
		b.Fatal(err)
	}
	var v benchOrder
	if err := Unmarshal(doc, &v); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if err := Unmarshal(doc, &v); err != nil {
			b.Fatal(err)
		}
	}
}
