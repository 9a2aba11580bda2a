package externaldeploy

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/driver"
	"github.com/mongoscope/mongoscope/internal/spectest/unified"
	"github.com/mongoscope/mongoscope/mongotest"
)

func TestStart(t *testing.T) {
	p := Provider{URI: "mongodb://127.0.0.1:27099/", Name: "FerretDB"}
	d, err := p.Start("single", false)
	if err != nil {
		t.Fatal(err)
	}
	if d.Topology() != "single" || d.InternalURI() != p.URI || d.ClientURI(nil) != p.URI {
		t.Errorf("deployment %s %s %s, want single and the URI", d.Topology(), d.InternalURI(), d.ClientURI(nil))
	}
	d.Close()
	tests := []struct {
		p        Provider
		topology string
		auth     bool
		cannot   bool // unified.ErrCannotPlay, else another error
	}{
		{p, "replicaset", false, true},
		{p, "sharded", false, true},
		{p, "single", true, true},
		{Provider{}, "single", false, false},
	}
	for _, tt := range tests {
		_, err := tt.p.Start(tt.topology, tt.auth)
		if err == nil || errors.Is(err, unified.ErrCannotPlay) != tt.cannot {
			t.Errorf("Start(%s, auth %v) = %v, want an error (ErrCannotPlay: %v)", tt.topology, tt.auth, err, tt.cannot)
		}
	}
	if got := p.Gap(errors.New("x")); got != "" {
		t.Errorf("Gap without Gaps = %q", got)
	}
	p.Gaps = func(error) string { return "lacks it" }
	if got := p.Gap(errors.New("x")); got != "lacks it" {
		t.Errorf("Gap = %q, want Gaps' answer", got)
	}
}

// A test that inserts a fixed _id into a database it names, with no
// initialData, passes only on a clean server; the admin database it also
// names must survive. A second test needs authentication.
const sharedFile = `{
  "description": "shared server", "schemaVersion": "1.0",
  "createEntities": [
    {"client": {"id": "client"}},
    {"database": {"id": "db", "client": "client", "databaseName": "externaldeploy-tests"}},
    {"collection": {"id": "coll", "database": "db", "collectionName": "coll"}},
    {"database": {"id": "admin", "client": "client", "databaseName": "admin"}}
  ],
  "tests": [
    {"description": "insert",
     "operations": [{"name": "insertOne", "object": "coll", "arguments": {"document": {"_id": 1}}}],
     "outcome": [{"databaseName": "externaldeploy-tests", "collectionName": "coll", "documents": [{"_id": 1}]}]},
    {"description": "needs auth", "runOnRequirements": [{"auth": true}], "operations": []}
  ]
}`

// fresh hides the SharedServer marker of the Provider it wraps.
type fresh struct{ unified.Provider }

func TestSharedServerStartsEachTestClean(t *testing.T) {
	s, err := mongotest.Start(mongotest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	path := filepath.Join(t.TempDir(), "shared.json")
	if err := os.WriteFile(path, []byte(sharedFile), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := unified.LoadTests(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	o := &driver.ClientOptions{}
	if err := o.ApplyURI(s.URI()); err != nil {
		t.Fatal(err)
	}
	c, err := driver.Connect(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Disconnect(ctx)
	keep := c.Database("admin").Collection("keep")
	if _, err := keep.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	shared := &unified.Runner{Provider: Provider{URI: s.URI(), Name: "mongotest"}}
	for i := 0; i < 2; i++ {
		if out := shared.Run(f.Tests[0]); out.Err != nil || out.Skip != "" {
			t.Fatalf("run %d on the shared server: %+v", i, out)
		}
	}
	// Without the marker nothing is dropped, so the same test fails: the
	// check above can fail.
	if out := (&unified.Runner{Provider: fresh{Provider{URI: s.URI()}}}).Run(f.Tests[0]); out.Err == nil {
		t.Error("the test passed on a server holding its document; it cannot tell whether databases are dropped")
	}
	if n, err := keep.CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Errorf("admin.keep holds %d documents (%v) after the runs; admin must never be dropped", n, err)
	}
	out := shared.Run(f.Tests[1])
	if out.Err != nil || !strings.Contains(out.Skip, "runs without authentication") {
		t.Errorf("a test needing authentication: %+v, want skipped as unplayable", out)
	}
}
