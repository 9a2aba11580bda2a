package mongotest

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

// expectedCursorReply builds, independently of the server's encoders, the
// reply {cursor: {nextBatch: docs, id, ns}, ok: 1.0, <cluster time>}.
func expectedCursorReply(t *testing.T, s *Server, docs []bson.Raw, id int64, ns string) []byte {
	t.Helper()
	arr := bson.A{}
	for _, doc := range docs {
		arr = append(arr, doc)
	}
	b := marshal(t, d("cursor", d("nextBatch", arr, "id", id, "ns", ns), "ok", 1.0))
	out := append([]byte(nil), b[:len(b)-1]...)
	out = s.appendClusterTime(out)
	out = append(out, 0)
	binary.LittleEndian.PutUint32(out, uint32(len(out)))
	return out
}

// TestScatterLayout: the pieces of a scattered reply, concatenated, are
// byte for byte the contiguous reply, for batches of small documents
// (copied between the headers), big ones (pieces of their own) and mixes,
// with array keys of one to five digits, on a standalone and a replica
// set ($clusterTime in the tail).
func TestScatterLayout(t *testing.T) {
	mk := func(n int, size func(i int) int) []bson.Raw {
		docs := make([]bson.Raw, n)
		for i := range docs {
			pad := strings.Repeat("p", size(i))
			docs[i] = marshal(t, d("_id", int32(i), "pad", pad))
		}
		return docs
	}
	for _, tc := range []struct {
		name string
		docs []bson.Raw
		id   int64
	}{
		{"empty", nil, 0},
		{"one big", mk(1, func(int) int { return 3000 }), 7},
		{"one small", mk(1, func(int) int { return 10 }), 0},
		{"small", mk(12000, func(int) int { return 20 }), -1},
		{"big", mk(11000, func(int) int { return minScatterDoc }), 1 << 40},
		{"just under", mk(150, func(int) int { return minScatterDoc - 25 }), 3},
		{"mixed", mk(10500, func(i int) int { return (i % 7) * 200 }), 5},
		{"big runs", mk(2000, func(i int) int { return (i / 100 % 2) * 1000 }), 0},
	} {
		for _, rs := range []bool{false, true} {
			name := tc.name
			if rs {
				name += "/replica set"
			}
			t.Run(name, func(t *testing.T) {
				var s *Server
				if rs {
					s = NewReplicaSet(t, 1, ReplicaSetOptions{}).Primary()
				} else {
					s = NewServer(t, Options{})
				}
				c := newConn(s, nil)
				r := &Request{Conn: c, DB: "db", Name: "getMore"}
				b := &cursorBatch{key: "nextBatch", docs: tc.docs, id: tc.id, ns: "db.coll"}
				sc := c.scatter(r, b)
				var got []byte
				for _, p := range sc.bufs[1:] {
					got = append(got, p...)
				}
				if len(got) != sc.size {
					t.Fatalf("pieces of %d bytes, size says %d", len(got), sc.size)
				}
				want := c.appendOK(nil, r, b.appendReply(), nil)
				if !bytes.Equal(got, want) {
					t.Fatalf("scattered reply differs from the contiguous one (%d and %d bytes)", len(got), len(want))
				}
				if !bytes.Equal(got, expectedCursorReply(t, s, tc.docs, tc.id, "db.coll")) {
					t.Fatalf("scattered reply differs from the expected one")
				}
				// Small bytes before each big document, the document,
				// and the small bytes after the last one.
				pieces := 1
				for _, doc := range tc.docs {
					if len(doc) >= minScatterDoc {
						pieces += 2
					}
				}
				if len(sc.bufs)-1 != pieces {
					t.Fatalf("%d pieces, want %d", len(sc.bufs)-1, pieces)
				}
			})
		}
	}
}

// TestScatterGetMoreWire: a big getMore batch read back over the wire is
// byte for byte the expected reply, whether written as pieces (a plain
// client) or contiguous (a client sending checksums, whose replies carry
// one), over several rounds, with the cursor left open or exhausted, on a
// standalone and a replica set; a fail point on getMore, even one that
// only delays it, makes the reply contiguous.
func TestScatterGetMoreWire(t *testing.T) {
	const n = 4000
	for _, rs := range []bool{false, true} {
		name := "standalone"
		if rs {
			name = "replica set"
		}
		t.Run(name, func(t *testing.T) {
			var s *Server
			if rs {
				s = NewReplicaSet(t, 1, ReplicaSetOptions{}).Primary()
			} else {
				s = NewServer(t, Options{})
			}
			plain := connect(t, s, clientOpts{})
			summed := connect(t, s, clientOpts{})
			summed.checksum = true
			docs := make([]bson.Raw, n)
			ins := bson.A{}
			for i := range docs {
				// Sizes from 30 to about 2,600 bytes: small documents
				// copied, big ones written from the store.
				docs[i] = marshal(t, d("_id", int32(i), "pad", strings.Repeat("x", (i*37)%2600)))
				ins = append(ins, docs[i])
			}
			plain.mustRun("db", d("insert", "c", "documents", ins))
			for round := 0; round < 3; round++ {
				for _, tc := range []struct {
					name    string
					c       *client
					fp      bool
					scatter bool
				}{
					{"plain", plain, false, true},
					{"checksum", summed, false, false},
					{"fail point", plain, true, false},
				} {
					if tc.fp {
						plain.mustRun("admin", fp(d("times", 2), d("failCommands", bson.A{"getMore"}, "blockConnection", true, "blockTimeMS", 1)))
					}
					r := tc.c.mustRun("db", d("find", "c", "batchSize", 1))
					id := cursorID(t, r)
					// The first getMore leaves the cursor open; the
					// second ends it in even rounds (no batchSize: the
					// scan reaches the end) and leaves it open in odd
					// ones (the batch is full before the scan looks
					// further).
					type step struct {
						from, to  int
						batchSize int
						open      bool
					}
					steps := []step{{1, n / 2, n/2 - 1, true}, {n / 2, n, 0, false}}
					if round%2 == 1 {
						steps[1] = step{n / 2, n, n / 2, true}
					}
					for _, step := range steps {
						before := s.scatterWrites.Load()
						r = tc.c.mustRun("db", d("getMore", id, "collection", "c", "batchSize", step.batchSize))
						wantID := int64(0)
						if step.open {
							wantID = id
						}
						want := expectedCursorReply(t, s, docs[step.from:step.to], wantID, "db.c")
						if !bytes.Equal(r, want) {
							t.Fatalf("round %d, %s, documents %d-%d: reply of %d bytes differs from the expected %d", round, tc.name, step.from, step.to, len(r), len(want))
						}
						wantScatter := int64(0)
						if tc.scatter {
							wantScatter = 1
						}
						if got := s.scatterWrites.Load() - before; got != wantScatter {
							t.Fatalf("round %d, %s: %d replies written as pieces, want %d", round, tc.name, got, wantScatter)
						}
					}
					if id := cursorID(t, r); id != 0 {
						tc.c.mustRun("db", d("killCursors", "c", "cursors", bson.A{id}))
					}
				}
			}
		})
	}
}

// TestScatterConcurrentUpdates: documents updated and deleted by another
// connection while big batches holding them are written as pieces: each
// reply is well-formed, with every document whole in one of its versions:
// the store never changes a stored document's bytes, it swaps in a new
// copy.
func TestScatterConcurrentUpdates(t *testing.T) {
	const n = 3000
	s := NewServer(t, Options{})
	reader := connect(t, s, clientOpts{})
	writer := connect(t, s, clientOpts{})
	ins := bson.A{}
	for i := 0; i < n; i++ {
		ins = append(ins, d("_id", int32(i), "v", int32(0), "pad", strings.Repeat("x", 1000)))
	}
	reader.mustRun("db", d("insert", "c", "documents", ins))
	done := make(chan struct{})
	stop := make(chan struct{})
	go func() {
		defer close(done)
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := writer.run("db", d("update", "c", "updates", bson.A{
				d("q", d(), "u", d("$set", d("v", int32(i), "pad", strings.Repeat("y", 1000+i%7))), "multi", true),
			})); err != nil {
				return
			}
			if _, err := writer.run("db", d("delete", "c", "deletes", bson.A{d("q", d("_id", int32(n-i)), "limit", 1)})); err != nil {
				return
			}
		}
	}()
	defer func() { close(stop); <-done }()
	before := s.scatterWrites.Load()
	for round := 0; round < 5; round++ {
		r := reader.mustRun("db", d("find", "c", "batchSize", 1))
		r = reader.mustRun("db", d("getMore", cursorID(t, r), "collection", "c"))
		if err := r.Validate(); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		it := r.Lookup("cursor", "nextBatch").Array().Iter()
		for it.Next() {
			doc := it.Value().Document()
			if err := doc.Validate(); err != nil {
				t.Fatalf("round %d: document %s: %v", round, it.Key(), err)
			}
			if _, ok := doc.Lookup("v").Int32OK(); !ok {
				t.Fatalf("round %d: document %s without v: %s", round, it.Key(), doc)
			}
		}
	}
	if s.scatterWrites.Load() == before {
		t.Fatal("no reply written as pieces")
	}
}
