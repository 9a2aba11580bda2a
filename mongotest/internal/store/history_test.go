package store

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

// contents renders a collection's documents in natural order.
func contents(t *testing.T, c *Collection) string {
	var out []string
	c.Scan(func(d bson.Raw) bool {
		out = append(out, extJSON(t, d))
		return true
	})
	return strings.Join(out, " ")
}

func TestHistoryReadsAtEachTime(t *testing.T) {
	s := New()
	s.EnableHistory(10)
	c, err := s.CollectionOrCreate("db", "c")
	if err != nil {
		t.Fatal(err)
	}
	// t=20: insert 1 and 2; t=30: update 1, delete 2, insert 3; t=40:
	// update 1 again, re-insert 2.
	for _, d := range []string{`{"_id": 1, "x": 1}`, `{"_id": 2, "x": 1}`} {
		if err := c.Insert(doc(t, d)); err != nil {
			t.Fatal(err)
		}
	}
	s.MarkTime(20)
	if err := c.Replace(val(t, "1"), doc(t, `{"_id": 1, "x": 2}`)); err != nil {
		t.Fatal(err)
	}
	c.Delete(val(t, "2"))
	if err := c.Insert(doc(t, `{"_id": 3, "x": 1}`)); err != nil {
		t.Fatal(err)
	}
	s.MarkTime(30)
	if err := c.Replace(val(t, "1"), doc(t, `{"_id": 1, "x": 3}`)); err != nil {
		t.Fatal(err)
	}
	if err := c.Insert(doc(t, `{"_id": 2, "x": 9}`)); err != nil {
		t.Fatal(err)
	}
	s.MarkTime(40)
	for _, tc := range []struct {
		t    uint64
		want string
		code int32
	}{
		{5, "", mongoerr.SnapshotTooOld},
		{10, "", 0},
		{15, "", 0},
		{20, `{"_id":1,"x":1} {"_id":2,"x":1}`, 0},
		{25, `{"_id":1,"x":1} {"_id":2,"x":1}`, 0},
		{30, `{"_id":1,"x":2} {"_id":3,"x":1}`, 0},
		{40, `{"_id":1,"x":3} {"_id":3,"x":1} {"_id":2,"x":9}`, 0},
		{99, `{"_id":1,"x":3} {"_id":3,"x":1} {"_id":2,"x":9}`, 0},
	} {
		t.Run(fmt.Sprint(tc.t), func(t *testing.T) {
			seq, err := s.SeqAt(tc.t)
			var f *Collection
			if err == nil {
				f, err = c.At(seq, tc.t)
			}
			if code(err) != tc.code {
				t.Fatalf("error %v, want code %d", err, tc.code)
			}
			if err != nil {
				return
			}
			if got := contents(t, f); got != tc.want {
				t.Fatalf("got %s\nwant %s", got, tc.want)
			}
			if f.Origin() != c {
				t.Fatal("Origin is not the collection")
			}
			if err := f.Insert(doc(t, `{"_id": 7}`)); err == nil {
				t.Fatal("a snapshot copy took a write")
			}
		})
	}
}

// Without history a changed document cannot be read in the past, and
// a bounded number of versions is kept.
func TestHistoryBounds(t *testing.T) {
	s := New()
	c, _ := s.CollectionOrCreate("db", "c")
	if err := c.Insert(doc(t, `{"_id": 1, "n": 0}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SeqAt(1); code(err) != mongoerr.SnapshotTooOld {
		t.Fatalf("history off: %v", err)
	}
	s.EnableHistory(1)
	for i := 1; i <= maxVersions+4; i++ {
		if err := c.Replace(val(t, "1"), doc(t, fmt.Sprintf(`{"_id": 1, "n": %d}`, i))); err != nil {
			t.Fatal(err)
		}
		s.MarkTime(uint64(1 + i))
	}
	for _, tc := range []struct {
		t    uint64
		want string
		code int32
	}{
		{1, "", mongoerr.SnapshotTooOld}, // versions dropped past maxVersions
		{6, `{"_id":1,"n":5}`, 0},
		{uint64(1 + maxVersions + 4), fmt.Sprintf(`{"_id":1,"n":%d}`, maxVersions+4), 0},
	} {
		seq, err := s.SeqAt(tc.t)
		if err != nil {
			t.Fatal(err)
		}
		f, err := c.At(seq, tc.t)
		if code(err) != tc.code {
			t.Fatalf("t=%d: error %v, want code %d", tc.t, err, tc.code)
		}
		if err == nil {
			if got := contents(t, f); got != tc.want {
				t.Fatalf("t=%d: got %s, want %s", tc.t, got, tc.want)
			}
		}
	}
	if n := len(c.ids[c.idKey(val(t, "1"))].old); n > maxVersions {
		t.Fatalf("%d versions kept", n)
	}
	// Marks are bounded; the oldest time becomes too old.
	for i := 0; i < maxMarks+10; i++ {
		_ = c.Replace(val(t, "1"), doc(t, fmt.Sprintf(`{"_id": 1, "m": %d}`, i)))
		s.MarkTime(uint64(1000 + i))
	}
	if len(s.hist.marks) > maxMarks {
		t.Fatalf("%d marks kept", len(s.hist.marks))
	}
	if _, err := s.SeqAt(1000); code(err) != mongoerr.SnapshotTooOld {
		t.Fatalf("oldest mark: %v", err)
	}
}

// Deleted records stay visible to snapshot reads through compaction.
func TestHistoryDeletesSurviveCompaction(t *testing.T) {
	s := New()
	s.EnableHistory(1)
	c, _ := s.CollectionOrCreate("db", "c")
	for i := 0; i < 200; i++ {
		if err := c.Insert(doc(t, fmt.Sprintf(`{"_id": %d}`, i))); err != nil {
			t.Fatal(err)
		}
	}
	s.MarkTime(2)
	for i := 0; i < 200; i++ {
		c.Delete(val(t, fmt.Sprint(i)))
	}
	s.MarkTime(3)
	seq, _ := s.SeqAt(2)
	f, err := c.At(seq, 2)
	if err != nil {
		t.Fatal(err)
	}
	if f.Count() != 200 {
		t.Fatalf("%d documents at time 2, want 200", f.Count())
	}
	if c.Count() != 0 {
		t.Fatalf("%d documents now", c.Count())
	}
}

// Marking the latest time again takes in changes made since its mark;
// a mark that adds nothing is not kept.
func TestHistoryRemark(t *testing.T) {
	s := New()
	s.EnableHistory(1)
	c, _ := s.CollectionOrCreate("db", "c")
	if err := c.Insert(doc(t, `{"_id": 1}`)); err != nil {
		t.Fatal(err)
	}
	s.MarkTime(2)
	if err := c.Insert(doc(t, `{"_id": 2}`)); err != nil {
		t.Fatal(err)
	}
	read := func() string {
		seq, err := s.SeqAt(2)
		if err != nil {
			t.Fatal(err)
		}
		f, err := c.At(seq, 2)
		if err != nil {
			t.Fatal(err)
		}
		return contents(t, f)
	}
	if got := read(); got != `{"_id":1}` {
		t.Fatalf("before the new mark: %s", got)
	}
	s.MarkTime(2)
	if got := read(); got != `{"_id":1} {"_id":2}` {
		t.Fatalf("after the new mark: %s", got)
	}
	n := len(s.hist.marks)
	s.MarkTime(3)
	if len(s.hist.marks) != n {
		t.Fatal("a mark adding nothing was kept")
	}
}
