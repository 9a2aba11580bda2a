// Package crudspec walks the CRUD unified specification tests for the test
// server's engine packages (query, update), which each evaluate the cases
// they can decide without a driver. Only tests import it.
package crudspec

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/internal/spectest"
)

// Run calls run for every test of crud/tests/unified whose initialData is
// exactly one collection and for which skip returns "", passing that
// collection's documents; other tests are counted as skipped with their
// reason. It logs the suite's summary and fails when no case ran.
func Run(t *testing.T, suite string, skip func(tc bson.Raw) string, run func(t *testing.T, tc bson.Raw, initial []bson.Raw)) {
	t.Helper()
	total := spectest.NewTally(suite)
	for _, path := range spectest.Files(t, "*.json", "crud", "tests", "unified") {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		file, err := bson.ParseExtJSON(data)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		base := filepath.Base(path)
		initial, ok := InitialCollection(file)
		tests, _ := file.Lookup("tests").ArrayOK()
		it := tests.Iter()
		for it.Next() {
			tc := it.Value().Document()
			name := base + "/" + tc.Lookup("description").StringValue()
			if !ok {
				total.Skip(t, name, "initialData is not exactly one collection")
				continue
			}
			if reason := skip(tc); reason != "" {
				total.Skip(t, name, reason)
				continue
			}
			total.Run(t, name, func(t *testing.T) { run(t, tc, initial) })
		}
	}
	total.Log(t)
	if total.Passed == 0 {
		t.Error("no CRUD spec case was evaluated")
	}
}

// InitialCollection returns the documents of a unified test file's
// initialData when it holds exactly one collection.
func InitialCollection(file bson.Raw) ([]bson.Raw, bool) {
	arr, ok := file.Lookup("initialData").ArrayOK()
	if !ok {
		return nil, false
	}
	vals, err := arr.Values()
	if err != nil || len(vals) != 1 {
		return nil, false
	}
	docs, _ := vals[0].Document().Lookup("documents").ArrayOK()
	dv, _ := docs.Values()
	var out []bson.Raw
	for _, d := range dv {
		out = append(out, d.Document())
	}
	return out, true
}
