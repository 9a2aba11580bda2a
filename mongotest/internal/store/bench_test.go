package store

import (
	"fmt"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

// benchDoc builds a small document like the driver benchmarks insert.
func benchDoc(id bson.ObjectID, i int) bson.Raw {
	start, b := bson.AppendDocumentStart(nil)
	b = bson.AppendObjectIDElement(b, "_id", id)
	b = bson.AppendInt32Element(b, "i", int32(i))
	b = bson.AppendStringElement(b, "name", fmt.Sprintf("document number %d", i))
	b = bson.AppendDoubleElement(b, "score", float64(i)/3)
	b, _ = bson.AppendDocumentEnd(b, start)
	return b
}

func benchCollection(b *testing.B, n int) (*Collection, []bson.RawValue) {
	c, _ := New().CollectionOrCreate("bench", "c")
	ids := make([]bson.RawValue, n)
	for i := 0; i < n; i++ {
		id := bson.NewObjectID()
		if err := c.Insert(benchDoc(id, i)); err != nil {
			b.Fatal(err)
		}
		ids[i] = bson.RawValue{Type: bson.TypeObjectID, Value: append([]byte(nil), id[:]...)}
	}
	return c, ids
}

// BenchmarkFindByID looks documents up by ObjectID _id in a 10,000-document
// collection, alone and from parallel readers.
func BenchmarkFindByID(b *testing.B) {
	c, ids := benchCollection(b, 10000)
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, ok := c.FindByID(ids[i%len(ids)]); !ok {
				b.Fatal("not found")
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				if _, ok := c.FindByID(ids[i%len(ids)]); !ok {
					b.Error("not found")
					return
				}
				i++
			}
		})
	})
	intIDs := New()
	ic, _ := intIDs.CollectionOrCreate("bench", "c")
	for i := 0; i < 10000; i++ {
		start, d := bson.AppendDocumentStart(nil)
		d = bson.AppendInt32Element(d, "_id", int32(i))
		d, _ = bson.AppendDocumentEnd(d, start)
		_ = ic.Insert(d)
	}
	key := bson.RawValue{Type: bson.TypeDouble, Value: []byte{0, 0, 0, 0, 0, 0x88, 0xb3, 0x40}} // 5000.0
	b.Run("double key for int32 _id", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := ic.FindByID(key); !ok {
				b.Fatal("not found")
			}
		}
	})
}

// BenchmarkInsert inserts documents with and without an _id, and with a
// unique secondary index, into collections of up to 16384 documents.
func BenchmarkInsert(b *testing.B) {
	docs := make([]bson.Raw, 1<<14)
	for i := range docs {
		docs[i] = benchDoc(bson.NewObjectID(), i)
	}
	b.Run("with _id", func(b *testing.B) {
		b.ReportAllocs()
		c, _ := New().CollectionOrCreate("bench", "c")
		for i := 0; b.Loop(); i++ {
			if i%len(docs) == 0 {
				c, _ = New().CollectionOrCreate("bench", "c")
			}
			if err := c.Insert(docs[i%len(docs)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("generated _id", func(b *testing.B) {
		b.ReportAllocs()
		start, d := bson.AppendDocumentStart(nil)
		d = bson.AppendStringElement(d, "name", "no id here")
		d, _ = bson.AppendDocumentEnd(d, start)
		c, _ := New().CollectionOrCreate("bench", "c")
		for i := 0; b.Loop(); i++ {
			if i%len(docs) == 0 {
				c, _ = New().CollectionOrCreate("bench", "c")
			}
			if err := c.Insert(d); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unique index", func(b *testing.B) {
		b.ReportAllocs()
		spec, _ := bson.ParseExtJSON([]byte(`{"key": {"i": 1}, "unique": true}`))
		s, err := ParseIndexSpec(spec)
		if err != nil {
			b.Fatal(err)
		}
		newColl := func() *Collection {
			c, _ := New().CollectionOrCreate("bench", "c")
			if _, err := c.CreateIndexes([]IndexSpec{s}); err != nil {
				b.Fatal(err)
			}
			return c
		}
		c := newColl()
		for i := 0; b.Loop(); i++ {
			if i%len(docs) == 0 {
				c = newColl()
			}
			if err := c.Insert(docs[i%len(docs)]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
