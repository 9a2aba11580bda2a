package mongotest

import (
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

// TestBigGetMoreReply: a getMore batch of several megabytes (written from
// the stored documents as pieces, scatter.go) arrives whole and
// well-formed, with ok and, on a replica set, $clusterTime after the
// batch; compressed and checksummed replies take the copying path (built
// in one allocation, finished in place by appendOK) and arrive the same;
// a second cursor over the same data is unaffected.
func TestBigGetMoreReply(t *testing.T) {
	const n = 3000
	pad := strings.Repeat("x", 1000)
	for _, tc := range []struct {
		name string
		rs   bool
		o    clientOpts
	}{
		{"standalone", false, clientOpts{}},
		{"replica set", true, clientOpts{}},
		{"zstd", false, clientOpts{compressors: []string{"zstd"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s *Server
			if tc.rs {
				rs := NewReplicaSet(t, 1, ReplicaSetOptions{})
				s = rs.Primary()
			} else {
				s = NewServer(t, Options{})
			}
			c := connect(t, s, tc.o)
			docs := bson.A{}
			for i := 0; i < n; i++ {
				docs = append(docs, d("_id", i, "pad", pad))
			}
			c.mustRun("db", d("insert", "c", "documents", docs))
			for round := 0; round < 2; round++ {
				r := c.mustRun("db", d("find", "c", "batchSize", 1))
				id := cursorID(t, r)
				r = c.mustRun("db", d("getMore", id, "collection", "c"))
				if len(r) < 3_000_000 {
					t.Fatalf("getMore reply of %d bytes, want a batch of 3 MB", len(r))
				}
				if err := r.Validate(); err != nil {
					t.Fatalf("getMore reply: %v", err)
				}
				if ok, _ := r.Lookup("ok").AsFloat64OK(); ok != 1 {
					t.Fatalf("ok = %v", r.Lookup("ok"))
				}
				if _, err := r.LookupErr("$clusterTime"); (err == nil) != tc.rs {
					t.Fatalf("$clusterTime present = %v, want %v", err == nil, tc.rs)
				}
				ids := strings.Split(batchIDs(t, r, "nextBatch"), ",")
				if len(ids) != n-1 || ids[0] != "1" || ids[n-2] != "2999" {
					t.Fatalf("round %d: nextBatch of %d documents from %s to %s", round, len(ids), ids[0], ids[len(ids)-1])
				}
				if cursorID(t, r) != 0 {
					t.Fatalf("cursor id %d after the last batch", cursorID(t, r))
				}
			}
		})
	}
}
