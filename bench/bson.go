package main

import (
	"bytes"
	"fmt"
	"runtime/debug"
	"testing"

	ours "github.com/mongoscope/mongoscope/bson"
	theirs "go.mongodb.org/mongo-driver/v2/bson"
)

func officialVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "go.mongodb.org/mongo-driver/v2" {
				return d.Version
			}
		}
	}
	return "(unknown version)"
}

// bsonTasks builds the benchmarking spec's BSON micro-benchmarks for the
// flat, deep and full documents: decode to a document type, encode it back,
// and validate as a raw document.
func bsonTasks(data map[string][]byte) []task {
	var tasks []task
	for _, name := range []string{"flat", "deep", "full"} {
		js := data[name+"_bson"]
		// The official driver turns the Extended JSON into BSON; our parser
		// must produce the very same bytes, which is checked here.
		var td theirs.D
		if err := theirs.UnmarshalExtJSON(js, true, &td); err != nil {
			fail(fmt.Errorf("%s: official UnmarshalExtJSON: %w", name, err))
		}
		doc, err := theirs.Marshal(td)
		if err != nil {
			fail(err)
		}
		oursDoc, err := ours.ParseExtJSON(js)
		if err != nil {
			fail(fmt.Errorf("%s: ParseExtJSON: %w", name, err))
		}
		if !bytes.Equal(oursDoc, doc) {
			fail(fmt.Errorf("%s: our Extended JSON parser and the official one disagree on the BSON", name))
		}
		var od ours.D
		if err := ours.Unmarshal(doc, &od); err != nil {
			fail(err)
		}
		if again, err := ours.Marshal(od); err != nil || !bytes.Equal(again, doc) {
			fail(fmt.Errorf("%s: our decode/encode round trip differs (%v)", name, err))
		}
		size := int64(len(doc))
		tasks = append(tasks,
			task{name: name + " decode to D", bytes: size,
				ours: func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						var d ours.D
						if err := ours.Unmarshal(doc, &d); err != nil {
							b.Fatal(err)
						}
					}
				},
				theirs: func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						var d theirs.D
						if err := theirs.Unmarshal(doc, &d); err != nil {
							b.Fatal(err)
						}
					}
				}},
			task{name: name + " encode from D", bytes: size,
				ours: func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						if _, err := ours.Marshal(od); err != nil {
							b.Fatal(err)
						}
					}
				},
				theirs: func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						if _, err := theirs.Marshal(td); err != nil {
							b.Fatal(err)
						}
					}
				}},
			task{name: name + " validate Raw", bytes: size,
				ours: func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						if err := ours.Raw(doc).Validate(); err != nil {
							b.Fatal(err)
						}
					}
				},
				theirs: func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						if err := theirs.Raw(doc).Validate(); err != nil {
							b.Fatal(err)
						}
					}
				}},
		)
	}
	return tasks
}
