package driver_test

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/mongotest"
)

// The CRUD benchmarks run against an in-process mongotest server, so their
// allocations include the server's; bench/ (make bench) runs the same
// operations with the server in another process, next to the official
// driver. Here they show regressions in go test -bench.

// benchColl connects to a fresh server and returns a collection.
func benchColl(b *testing.B) *driver.Collection {
	b.Helper()
	srv := mongotest.NewServer(b, mongotest.Options{CommandLogSize: -1})
	o := &driver.ClientOptions{}
	if err := o.ApplyURI(srv.URI()); err != nil {
		b.Fatal(err)
	}
	c, err := driver.Connect(context.Background(), o)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Disconnect(context.Background()) })
	return c.Database("bench").Collection("corpus")
}

// benchDoc is a document of about 1.5 KB with strings, numbers, a nested
// document and an array, like the benchmarking specification's tweet.
func benchDoc() bson.D {
	return bson.D{
		{Key: "text", Value: strings.Repeat("lorem ipsum dolor sit amet ", 12)},
		{Key: "created_at", Value: "Sun Aug 23 18:42:54 +0000 2015"},
		{Key: "retweet_count", Value: int32(3)},
		{Key: "favorited", Value: false},
		{Key: "user", Value: bson.D{
			{Key: "id", Value: int64(123456789)},
			{Key: "name", Value: "A User"},
			{Key: "screen_name", Value: "a_user"},
			{Key: "description", Value: strings.Repeat("something about me ", 10)},
			{Key: "followers_count", Value: int32(1234)},
			{Key: "profile_image_url", Value: "http://example.com/images/profile_normal.jpeg"},
		}},
		{Key: "entities", Value: bson.D{
			{Key: "hashtags", Value: bson.A{"one", "two", "three"}},
			{Key: "urls", Value: bson.A{bson.D{{Key: "url", Value: "http://example.com/a"}, {Key: "indices", Value: bson.A{int32(1), int32(22)}}}}},
		}},
		{Key: "source", Value: strings.Repeat("<a href=\"http://example.com\">client</a>", 5)},
		{Key: "lang", Value: "en"},
	}
}

func BenchmarkFindOne(b *testing.B) {
	coll := benchColl(b)
	ctx := context.Background()
	const n = 1000
	docs := make([]any, n)
	for i := range docs {
		docs[i] = append(bson.D{{Key: "_id", Value: int32(i + 1)}}, benchDoc()...)
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		raw, err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: int32(i%n + 1)}}).Raw()
		if err != nil || len(raw) < 1000 {
			b.Fatal(err, len(raw))
		}
		i++
	}
}

func BenchmarkInsertOne(b *testing.B) {
	coll := benchColl(b)
	ctx := context.Background()
	doc := benchDoc()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := coll.InsertOne(ctx, doc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkInsertMany(b *testing.B) {
	coll := benchColl(b)
	ctx := context.Background()
	docs := make([]any, 1000)
	for i := range docs {
		docs[i] = benchDoc()
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := coll.InsertMany(ctx, docs); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFindMany(b *testing.B) {
	coll := benchColl(b)
	ctx := context.Background()
	const n = 10000
	docs := make([]any, n)
	for i := range docs {
		docs[i] = benchDoc()
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		cur, err := coll.Find(ctx, bson.D{})
		if err != nil {
			b.Fatal(err)
		}
		got := 0
		for cur.Next(ctx) {
			got++
		}
		if cur.Err() != nil || got != n {
			b.Fatal(cur.Err(), got)
		}
	}
}

// BenchmarkFindOneParallel runs FindOne on 16 goroutines (on GOMAXPROCS
// threads), as bench's concurrent row does.
func BenchmarkFindOneParallel(b *testing.B) {
	coll := benchColl(b)
	ctx := context.Background()
	const n = 1000
	docs := make([]any, n)
	for i := range docs {
		docs[i] = append(bson.D{{Key: "_id", Value: int32(i + 1)}}, benchDoc()...)
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for i := 0; pb.Next(); i++ {
			if _, err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: int32(i%n + 1)}}).Raw(); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkInsertOneParallel(b *testing.B) {
	coll := benchColl(b)
	ctx := context.Background()
	doc := benchDoc()
	b.ReportAllocs()
	b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := coll.InsertOne(ctx, doc); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
