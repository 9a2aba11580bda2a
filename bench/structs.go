package main

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	ours "github.com/mongoscope/mongoscope/bson"
	theirs "go.mongodb.org/mongo-driver/v2/bson"
)

// A typical application document: an order with an address, line items,
// tags and free-form metadata. The two drivers get identical structs except
// for the ObjectID type each defines.

type address struct {
	Street  string `bson:"street"`
	City    string `bson:"city"`
	Zip     string `bson:"zip"`
	Country string `bson:"country"`
}

type lineItem struct {
	SKU      string  `bson:"sku"`
	Name     string  `bson:"name"`
	Quantity int32   `bson:"qty"`
	Price    float64 `bson:"price"`
}

type oursOrder struct {
	ID         ours.ObjectID     `bson:"_id"`
	Customer   string            `bson:"customer"`
	Email      string            `bson:"email"`
	Status     string            `bson:"status"`
	Total      float64           `bson:"total"`
	Version    int64             `bson:"version"`
	Paid       bool              `bson:"paid"`
	CreatedAt  time.Time         `bson:"createdAt"`
	UpdatedAt  time.Time         `bson:"updatedAt"`
	Tags       []string          `bson:"tags"`
	Shipping   address           `bson:"shipping"`
	Items      []lineItem        `bson:"items"`
	Metadata   map[string]string `bson:"metadata"`
	Notes      string            `bson:"notes,omitempty"`
	Priority   int32             `bson:"priority"`
	LoyaltyPts int64             `bson:"loyaltyPoints"`
}

type theirsOrder struct {
	ID         theirs.ObjectID   `bson:"_id"`
	Customer   string            `bson:"customer"`
	Email      string            `bson:"email"`
	Status     string            `bson:"status"`
	Total      float64           `bson:"total"`
	Version    int64             `bson:"version"`
	Paid       bool              `bson:"paid"`
	CreatedAt  time.Time         `bson:"createdAt"`
	UpdatedAt  time.Time         `bson:"updatedAt"`
	Tags       []string          `bson:"tags"`
	Shipping   address           `bson:"shipping"`
	Items      []lineItem        `bson:"items"`
	Metadata   map[string]string `bson:"metadata"`
	Notes      string            `bson:"notes,omitempty"`
	Priority   int32             `bson:"priority"`
	LoyaltyPts int64             `bson:"loyaltyPoints"`
}

func sampleOrder() oursOrder {
	created := time.Date(2026, 3, 14, 15, 9, 26, 535e6, time.UTC)
	o := oursOrder{
		ID:         ours.ObjectID{0x65, 0xf3, 0x1a, 0x2b, 0x9c, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07},
		Customer:   "Ada Lovelace",
		Email:      "ada@example.com",
		Status:     "shipped",
		Total:      1234.56,
		Version:    7,
		Paid:       true,
		CreatedAt:  created,
		UpdatedAt:  created.Add(36 * time.Hour),
		Tags:       []string{"priority", "gift", "international", "fragile"},
		Shipping:   address{Street: "12 St James's Square", City: "London", Zip: "SW1Y 4JH", Country: "GB"},
		Metadata:   map[string]string{"channel": "web", "campaign": "spring-sale", "coupon": "SPRING26"},
		Priority:   2,
		LoyaltyPts: 98765,
	}
	for i := 0; i < 8; i++ {
		o.Items = append(o.Items, lineItem{
			SKU:      fmt.Sprintf("SKU-%05d", 1000+i),
			Name:     fmt.Sprintf("Analytical Engine part #%d", i),
			Quantity: int32(i + 1),
			Price:    19.99 * float64(i+1),
		})
	}
	return o
}

func toTheirs(o oursOrder) theirsOrder {
	return theirsOrder{
		ID: theirs.ObjectID(o.ID), Customer: o.Customer, Email: o.Email, Status: o.Status,
		Total: o.Total, Version: o.Version, Paid: o.Paid, CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt,
		Tags: o.Tags, Shipping: o.Shipping, Items: o.Items, Metadata: o.Metadata, Notes: o.Notes,
		Priority: o.Priority, LoyaltyPts: o.LoyaltyPts,
	}
}

// structTasks measures Marshal and Unmarshal of the order struct. Both
// drivers must produce documents of the same length (the metadata map makes
// the byte order vary), and ours must read theirs back to the same struct.
func structTasks() []task {
	o := sampleOrder()
	t := toTheirs(o)
	oursDoc, err := ours.Marshal(o)
	if err != nil {
		fail(fmt.Errorf("ours Marshal(order): %w", err))
	}
	theirsDoc, err := theirs.Marshal(t)
	if err != nil {
		fail(err)
	}
	if len(oursDoc) != len(theirsDoc) {
		fail(fmt.Errorf("order encodes to %d bytes with ours and %d with theirs", len(oursDoc), len(theirsDoc)))
	}
	// Each side must read the other's encoding back to the same struct.
	var back oursOrder
	if err := ours.Unmarshal(theirsDoc, &back); err != nil {
		fail(fmt.Errorf("ours Unmarshal(theirs' order): %w", err))
	}
	if !reflect.DeepEqual(back, o) {
		fail(fmt.Errorf("order differs after crossing drivers:\n got %+v\nwant %+v", back, o))
	}
	size := int64(len(theirsDoc))
	return []task{
		{name: "struct unmarshal", bytes: size,
			ours: func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					var v oursOrder
					if err := ours.Unmarshal(theirsDoc, &v); err != nil {
						b.Fatal(err)
					}
				}
			},
			theirs: func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					var v theirsOrder
					if err := theirs.Unmarshal(theirsDoc, &v); err != nil {
						b.Fatal(err)
					}
				}
			}},
		{name: "struct marshal", bytes: size,
			ours: func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if _, err := ours.Marshal(&o); err != nil {
						b.Fatal(err)
					}
				}
			},
			theirs: func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if _, err := theirs.Marshal(&t); err != nil {
						b.Fatal(err)
					}
				}
			}},
	}
}
