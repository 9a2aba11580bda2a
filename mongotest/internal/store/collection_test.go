package store

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mongoscope/mongoscope/bson"
	"github.com/mongoscope/mongoscope/mongotest/internal/mongoerr"
)

func newColl(t testing.TB) *Collection {
	t.Helper()
	c, err := New().CollectionOrCreate("db", "c")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestInsert(t *testing.T) {
	big := `{"_id": 1, "s": "` + strings.Repeat("x", MaxDocumentSize) + `"}`
	cases := []struct {
		name    string
		doc     string
		want    int32
		stored  string // relaxed Extended JSON; "" skips the check
		message string
	}{
		{"first _id", `{"_id": 1, "a": 2}`, 0, `{"_id":1,"a":2}`, ""},
		{"_id moved first", `{"a": 2, "_id": "x", "b": 3}`, 0, `{"_id":"x","a":2,"b":3}`, ""},
		{"document _id", `{"_id": {"k": 1}}`, 0, `{"_id":{"k":1}}`, ""},
		{"array _id", `{"_id": [1]}`, mongoerr.BadValue, "", "can't use an array for _id"},
		{"regex _id", `{"_id": {"$regularExpression": {"pattern": "a", "options": ""}}}`, mongoerr.BadValue, "", "can't use a regex for _id"},
		{"undefined _id", `{"_id": {"$undefined": true}}`, mongoerr.BadValue, "", "can't use a undefined for _id"},
		{"dollar field in _id", `{"_id": {"$gt": 1}}`, mongoerr.DollarPrefixedFieldName, "", "_id fields may not contain '$'-prefixed fields: $gt is not valid for storage."},
		{"too large", big, codeBSONObjectTooLarge, "", "object to insert too large"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			coll := newColl(t)
			stored, err := coll.InsertWithID(doc(t, c.doc))
			if code(err) != c.want {
				t.Fatalf("InsertWithID = %v, want code %d", err, c.want)
			}
			if err != nil {
				if !strings.Contains(mongoerr.As(err).Message, c.message) {
					t.Errorf("message %q, want %q", mongoerr.As(err).Message, c.message)
				}
				if coll.Count() != 0 || coll.Version() != 0 {
					t.Error("a failed insert changed the collection")
				}
				return
			}
			if got := extJSON(t, stored); got != c.stored {
				t.Errorf("stored %s, want %s", got, c.stored)
			}
			found, ok := coll.FindByID(stored.Lookup("_id"))
			if !ok || string(found) != string(stored) {
				t.Errorf("FindByID = %s, %v", found, ok)
			}
			if coll.Count() != 1 || coll.Size() != int64(len(stored)) || coll.Version() != 1 {
				t.Errorf("count %d size %d version %d", coll.Count(), coll.Size(), coll.Version())
			}
		})
	}
}

func TestInsertGeneratesID(t *testing.T) {
	c := newColl(t)
	in := doc(t, `{"a": 1}`)
	stored, err := c.InsertWithID(in)
	if err != nil {
		t.Fatal(err)
	}
	first := firstValue(stored)
	if it := stored.Iter(); !it.Next() || it.Key() != "_id" || first.Type != bson.TypeObjectID {
		t.Fatalf("stored %s", stored)
	}
	if stored.Lookup("a").Int32() != 1 {
		t.Errorf("stored %s", stored)
	}
	// The store keeps its own copy.
	in[len(in)-2] = 9
	if got, _ := c.FindByID(first); got.Lookup("a").Int32() != 1 {
		t.Error("the stored document shares the caller's buffer")
	}
	if err := c.Insert(bson.Raw{1, 2, 3}); code(err) != codeInvalidBSON {
		t.Errorf("invalid BSON: %v", err)
	}
}

func TestDuplicateID(t *testing.T) {
	first := []string{`1`, `"x"`, `{"a": 1}`, `{"$numberDecimal": "0"}`, `{"$numberDouble": "NaN"}`}
	second := []string{`{"$numberDecimal": "1.0"}`, `"x"`, `{"a": {"$numberLong": "1"}}`, `{"$numberDouble": "-0.0"}`, `{"$numberDecimal": "NaN"}`}
	dupKey := []string{`{ _id: NumberDecimal("1.0") }`, `{ _id: "x" }`, `{ _id: { a: 1 } }`, `{ _id: -0.0 }`, `{ _id: NumberDecimal("NaN") }`}
	for i := range first {
		t.Run(first[i], func(t *testing.T) {
			c := newColl(t)
			if err := c.Insert(doc(t, `{"_id": `+first[i]+`, "n": 1}`)); err != nil {
				t.Fatal(err)
			}
			err := c.Insert(doc(t, `{"_id": `+second[i]+`, "n": 2}`))
			var dk *DuplicateKeyError
			if !errors.As(err, &dk) {
				t.Fatalf("err = %v, want a DuplicateKeyError", err)
			}
			want := "E11000 duplicate key error collection: db.c index: _id_ dup key: " + dupKey[i]
			if e := mongoerr.As(err); e.Code != 11000 || e.CodeName != "DuplicateKey" || e.Message != want {
				t.Errorf("error %#v, want message %q", e, want)
			}
			if dk.Index != "_id_" || extJSON(t, dk.KeyPattern) != `{"_id":1}` || extJSON(t, dk.KeyValue) != extJSON(t, doc(t, `{"_id": `+second[i]+`}`)) {
				t.Errorf("index %s pattern %s value %s", dk.Index, dk.KeyPattern, dk.KeyValue)
			}
			if c.Count() != 1 {
				t.Error("duplicate stored")
			}
		})
	}
}

func TestFindByID(t *testing.T) {
	c := newColl(t)
	for _, id := range []string{`1`, `"s"`, `{"$oid": "000102030405060708090a0b"}`, `{"a": [1, 2]}`, `{"$numberDouble": "2.5"}`, `null`} {
		if err := c.Insert(doc(t, `{"_id": `+id+`}`)); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		id    string
		found bool
	}{
		{`1`, true}, {`{"$numberLong": "1"}`, true}, {`{"$numberDouble": "1.0"}`, true}, {`{"$numberDecimal": "1.00"}`, true},
		{`"s"`, true}, {`{"$symbol": "s"}`, true}, {`"S"`, false},
		{`{"$oid": "000102030405060708090a0b"}`, true}, {`{"$oid": "000102030405060708090a0c"}`, false},
		{`{"a": [{"$numberLong": "1"}, 2]}`, true}, {`{"a": [2, 1]}`, false},
		{`{"$numberDecimal": "2.50"}`, true}, {`2`, false},
		{`null`, true}, {`{"$undefined": true}`, false},
	}
	for _, tc := range cases {
		got, ok := c.FindByID(val(t, tc.id))
		if ok != tc.found || (ok && got == nil) {
			t.Errorf("FindByID(%s) = %s, %v; want found %v", tc.id, got, ok, tc.found)
		}
	}
}

func TestFindByIDAllocs(t *testing.T) {
	c := newColl(t)
	oid := bson.NewObjectID()
	if err := c.Insert(doc(t, `{"_id": {"$oid": "`+oid.Hex()+`"}}`)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if err := c.Insert(doc(t, fmt.Sprintf(`{"_id": %d}`, i))); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []bson.RawValue{val(t, `7`), val(t, `{"$numberDouble": "7.0"}`), val(t, `"missing string id"`), {Type: bson.TypeObjectID, Value: oid[:]}} {
		if n := testing.AllocsPerRun(100, func() { c.FindByID(id) }); n != 0 {
			t.Errorf("FindByID(%v) allocates %v times", id, n)
		}
	}
}

func TestReplace(t *testing.T) {
	cases := []struct {
		name    string
		id      string
		doc     string
		want    int32
		stored  string
		order   string
		message string
	}{
		{"same position", `2`, `{"_id": 2, "v": "new"}`, 0, `{"_id":2,"v":"new"}`, "1,2,3", ""},
		{"without _id", `2`, `{"v": "new"}`, 0, `{"_id":2,"v":"new"}`, "1,2,3", ""},
		{"_id later", `2`, `{"v": "new", "_id": 2}`, 0, `{"_id":2,"v":"new"}`, "1,2,3", ""},
		{"equal _id of another type", `2`, `{"_id": {"$numberLong": "2"}, "v": "new"}`, 0, `{"_id":2,"v":"new"}`, "1,2,3", ""},
		{"_id changed", `2`, `{"_id": 5}`, mongoerr.ImmutableField, "", "1,2,3", "After applying the update, the (immutable) field '_id' was found to have been altered to _id: 5"},
		{"unique violation", `2`, `{"u": 1}`, mongoerr.DuplicateKey, "", "1,2,3", "E11000 duplicate key error collection: db.c index: u_1 dup key: { u: 1 }"},
		{"not found", `9`, `{}`, mongoerr.NoSuchKey, "", "1,2,3", "no document in db.c with _id: 9"},
		{"invalid", `2`, "\x05\x00\x00\x00\x01", codeInvalidBSON, "", "1,2,3", "replacement document is not valid BSON"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newColl(t)
			if _, err := c.CreateIndexes([]IndexSpec{{Name: "u_1", Key: doc(t, `{"u": 1}`), Unique: true, Sparse: true}}); err != nil {
				t.Fatal(err)
			}
			for _, d := range []string{`{"_id": 1, "u": 1}`, `{"_id": 2, "v": "old"}`, `{"_id": 3}`} {
				if err := c.Insert(doc(t, d)); err != nil {
					t.Fatal(err)
				}
			}
			var newDoc bson.Raw
			if strings.HasPrefix(tc.doc, "{") {
				newDoc = doc(t, tc.doc)
			} else {
				newDoc = bson.Raw(tc.doc)
			}
			stored, err := c.ReplaceDoc(val(t, tc.id), newDoc)
			if code(err) != tc.want {
				t.Fatalf("ReplaceDoc = %v, want code %d", err, tc.want)
			}
			if tc.want == mongoerr.NoSuchKey && !IsNotFound(err) {
				t.Error("IsNotFound is false")
			}
			if err != nil && !strings.Contains(mongoerr.As(err).Message, tc.message) {
				t.Errorf("message %q, want %q", mongoerr.As(err).Message, tc.message)
			}
			if err == nil && extJSON(t, stored) != tc.stored {
				t.Errorf("stored %s, want %s", extJSON(t, stored), tc.stored)
			}
			if got := strings.Join(ids(c), ","); got != tc.order {
				t.Errorf("order %s, want %s", got, tc.order)
			}
		})
	}
}

func TestReplaceMovesUniqueKeys(t *testing.T) {
	c := newColl(t)
	if _, err := c.CreateIndexes([]IndexSpec{{Name: "u_1", Key: doc(t, `{"u": 1}`), Unique: true}}); err != nil {
		t.Fatal(err)
	}
	_ = c.Insert(doc(t, `{"_id": 1, "u": "a"}`))
	if err := c.Replace(val(t, `1`), doc(t, `{"u": "b"}`)); err != nil {
		t.Fatal(err)
	}
	// The old key is free, the new one taken.
	if err := c.Insert(doc(t, `{"_id": 2, "u": "a"}`)); err != nil {
		t.Errorf("old key still held: %v", err)
	}
	if err := c.Insert(doc(t, `{"_id": 3, "u": "b"}`)); code(err) != mongoerr.DuplicateKey {
		t.Errorf("new key not indexed: %v", err)
	}
	// Replacing a document with itself keeps its own keys.
	if err := c.Replace(val(t, `1`), doc(t, `{"u": "b", "x": 1}`)); err != nil {
		t.Errorf("self conflict: %v", err)
	}
	if !c.Delete(val(t, `1`)) {
		t.Fatal("Delete")
	}
	if err := c.Insert(doc(t, `{"_id": 3, "u": "b"}`)); err != nil {
		t.Errorf("deleted document's key still held: %v", err)
	}
}

func TestModify(t *testing.T) {
	c := newColl(t)
	_ = c.Insert(doc(t, `{"_id": 1, "n": 0}`))
	const workers, rounds = 8, 50
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				_, _, err := c.Modify(val(t, `1`), func(cur bson.Raw) (bson.Raw, error) {
					n := cur.Lookup("n").Int32()
					start, b := bson.AppendDocumentStart(nil)
					b = bson.AppendInt32Element(b, "n", n+1)
					b, _ = bson.AppendDocumentEnd(b, start)
					return b, nil
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	got, _ := c.FindByID(val(t, `1`))
	if n := got.Lookup("n").Int32(); n != workers*rounds {
		t.Errorf("n = %d, want %d: updates were lost", n, workers*rounds)
	}

	v := c.Version()
	before, after, err := c.Modify(val(t, `1`), func(bson.Raw) (bson.Raw, error) { return nil, nil })
	if err != nil || string(before) != string(after) || c.Version() != v {
		t.Errorf("a nil result changed the document: %v", err)
	}
	boom := errors.New("boom")
	if _, _, err := c.Modify(val(t, `1`), func(bson.Raw) (bson.Raw, error) { return nil, boom }); err != boom {
		t.Errorf("fn's error = %v", err)
	}
}

func TestDelete(t *testing.T) {
	c := newColl(t)
	for i := 1; i <= 3; i++ {
		_ = c.Insert(doc(t, fmt.Sprintf(`{"_id": %d, "k": %d}`, i, i%2)))
	}
	if c.Delete(val(t, `9`)) {
		t.Error("deleted a missing document")
	}
	if _, ok := c.DeleteIf(val(t, `1`), func(d bson.Raw) bool { return d.Lookup("k").Int32() == 0 }); ok {
		t.Error("DeleteIf ignored the predicate")
	}
	d, ok := c.DeleteIf(val(t, `{"$numberDouble": "1.0"}`), func(d bson.Raw) bool { return d.Lookup("k").Int32() == 1 })
	if !ok || extJSON(t, d) != `{"_id":1,"k":1}` {
		t.Errorf("DeleteIf = %s, %v", d, ok)
	}
	if got := strings.Join(ids(c), ","); got != "2,3" || c.Count() != 2 {
		t.Errorf("left %s", got)
	}
	if _, ok := c.FindByID(val(t, `1`)); ok {
		t.Error("deleted document still found")
	}
	// An _id can be reused after its document is deleted; it goes last.
	_ = c.Insert(doc(t, `{"_id": 1}`))
	if got := strings.Join(ids(c), ","); got != "2,3,1" {
		t.Errorf("order %s", got)
	}
}

func TestCompaction(t *testing.T) {
	c := newColl(t)
	for i := 0; i < 1000; i++ {
		_ = c.Insert(doc(t, fmt.Sprintf(`{"_id": %d}`, i)))
	}
	var held []string
	c.Scan(func(bson.Raw) bool { return true })
	for i := 0; i < 1000; i++ {
		if i%10 != 0 {
			c.Delete(val(t, fmt.Sprint(i)))
		}
	}
	c.mu.RLock()
	n := len(c.recs) - c.head
	c.mu.RUnlock()
	if n > 300 {
		t.Errorf("%d record slots for 100 documents: deleted records were not compacted", n)
	}
	held = ids(c)
	if len(held) != 100 || held[0] != "0" || held[99] != "990" || c.Count() != 100 {
		t.Errorf("after compaction: %d docs %v", len(held), held[:3])
	}
}

func TestScanSnapshot(t *testing.T) {
	c := newColl(t)
	for i := 1; i <= 5; i++ {
		_ = c.Insert(doc(t, fmt.Sprintf(`{"_id": %d, "v": 0}`, i)))
	}
	var seen []string
	c.Scan(func(d bson.Raw) bool {
		id := d.Lookup("_id").Int32()
		seen = append(seen, fmt.Sprintf("%d:%d", id, d.Lookup("v").Int32()))
		if id == 1 {
			// Writes during a scan: a later insert is not visited, a
			// deleted document is skipped, a replaced one shows its
			// new version.
			_ = c.Insert(doc(t, `{"_id": 6, "v": 0}`))
			c.Delete(val(t, `3`))
			_ = c.Replace(val(t, `4`), doc(t, `{"v": 1}`))
		}
		return id != 5
	})
	if got := strings.Join(seen, ","); got != "1:0,2:0,4:1,5:0" {
		t.Errorf("scan saw %s", got)
	}
	// Stopping early.
	n := 0
	c.Scan(func(bson.Raw) bool { n++; return n < 2 })
	if n != 2 {
		t.Errorf("Scan went on after false: %d", n)
	}
}

func TestScanAfter(t *testing.T) {
	c := newColl(t)
	for i := 1; i <= 5; i++ {
		_ = c.Insert(doc(t, fmt.Sprintf(`{"_id": %d}`, i)))
	}
	var rids []RecordID
	c.ScanAfter(0, func(id RecordID, _ bson.Raw) bool { rids = append(rids, id); return true })
	if len(rids) != 5 {
		t.Fatalf("record ids %v", rids)
	}
	c.Delete(val(t, `3`))
	cases := []struct {
		after RecordID
		want  string
	}{
		{0, "1,2,4,5"}, {rids[0], "2,4,5"}, {rids[2], "4,5"}, {rids[4], ""}, {rids[4] + 100, ""},
	}
	for _, tc := range cases {
		var got []string
		c.ScanAfter(tc.after, func(_ RecordID, d bson.Raw) bool {
			got = append(got, fmt.Sprint(d.Lookup("_id").Int32()))
			return true
		})
		if strings.Join(got, ",") != tc.want {
			t.Errorf("ScanAfter(%d) = %v, want %s", tc.after, got, tc.want)
		}
	}
	if !c.RecordExists(rids[1]) || c.RecordExists(rids[2]) || c.RecordExists(rids[4]+1) {
		t.Error("RecordExists")
	}
}

func TestCapped(t *testing.T) {
	cases := []struct {
		name  string
		opts  CollectionOptions
		pad   int
		n     int
		want  string
		limit int64
	}{
		{"max documents", CollectionOptions{Capped: true, Size: 1 << 20, Max: 3}, 0, 6, "4,5,6", 1 << 20},
		// Each document is 4130 bytes and the limit rounds 5000 up to
		// 5120, so one document fits at a time.
		{"size", CollectionOptions{Capped: true, Size: 5000}, 4096, 4, "4", 5120},
		{"small size rounds up to 4096", CollectionOptions{Capped: true, Size: 1}, 1000, 5, "2,3,4,5", 4096},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := New()
			if err := s.CreateCollection("db", "cap", tc.opts); err != nil {
				t.Fatal(err)
			}
			c := s.Collection("db", "cap")
			if c.limit != tc.limit {
				t.Errorf("limit %d, want %d", c.limit, tc.limit)
			}
			var first RecordID
			for i := 1; i <= tc.n; i++ {
				if err := c.Insert(doc(t, fmt.Sprintf(`{"_id": %d, "p": "%s"}`, i, strings.Repeat("x", tc.pad)))); err != nil {
					t.Fatal(err)
				}
				if i == 1 {
					c.ScanAfter(0, func(id RecordID, _ bson.Raw) bool { first = id; return false })
				}
			}
			if got := strings.Join(ids(c), ","); got != tc.want {
				t.Errorf("left %s, want %s", got, tc.want)
			}
			if c.RecordExists(first) {
				t.Error("the evicted first record still exists")
			}
			if _, ok := c.FindByID(val(t, `1`)); ok {
				t.Error("evicted document still found by _id")
			}
			if c.Size() > c.limit {
				t.Errorf("size %d over the limit %d", c.Size(), c.limit)
			}
		})
	}
	s := New()
	_ = s.CreateCollection("db", "cap", CollectionOptions{Capped: true, Size: 4096})
	c := s.Collection("db", "cap")
	if err := c.Insert(doc(t, `{"p": "`+strings.Repeat("x", 5000)+`"}`)); code(err) != mongoerr.BadValue {
		t.Errorf("oversized document: %v", err)
	}
	// Deletes are allowed, as in mongod 5.0 and later.
	_ = c.Insert(doc(t, `{"_id": 1}`))
	if !c.Delete(val(t, `1`)) {
		t.Error("delete from a capped collection")
	}
}

func TestCappedUniqueEviction(t *testing.T) {
	s := New()
	_ = s.CreateCollection("db", "cap", CollectionOptions{Capped: true, Size: 1 << 20, Max: 1})
	c := s.Collection("db", "cap")
	if _, err := c.CreateIndexes([]IndexSpec{{Name: "u_1", Key: doc(t, `{"u": 1}`), Unique: true}}); err != nil {
		t.Fatal(err)
	}
	_ = c.Insert(doc(t, `{"_id": 1, "u": 1}`))
	_ = c.Insert(doc(t, `{"_id": 2, "u": 2}`))
	// Document 1 was evicted, and its unique key with it.
	if err := c.Insert(doc(t, `{"_id": 3, "u": 1}`)); err != nil {
		t.Errorf("evicted key still held: %v", err)
	}
}

func TestWatch(t *testing.T) {
	s := New()
	c, _ := s.CollectionOrCreate("db", "c")
	steps := []struct {
		name string
		do   func() error
	}{
		{"insert", func() error { return c.Insert(doc(t, `{"_id": 1}`)) }},
		{"replace", func() error { return c.Replace(val(t, `1`), doc(t, `{"a": 1}`)) }},
		{"delete", func() error {
			if !c.Delete(val(t, `1`)) {
				return errors.New("not deleted")
			}
			return nil
		}},
		{"create index", func() error {
			_, err := c.CreateIndexes([]IndexSpec{{Name: "a_1", Key: doc(t, `{"a": 1}`)}})
			return err
		}},
		{"drop index", func() error { return c.DropIndex("a_1") }},
		{"drop", func() error { s.DropCollection("db", "c"); return nil }},
	}
	for _, st := range steps {
		ch := c.Watch()
		if c.Watch() != ch {
			t.Errorf("%s: two Watch calls before a change gave different channels", st.name)
		}
		v := c.Version()
		select {
		case <-ch:
			t.Fatalf("%s: channel closed before the change", st.name)
		default:
		}
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: channel not closed", st.name)
		}
		if c.Version() <= v {
			t.Errorf("%s: version did not increase", st.name)
		}
	}
	// A failed write is not a change.
	c2, _ := s.CollectionOrCreate("db", "c2")
	_ = c2.Insert(doc(t, `{"_id": 1}`))
	ch, v := c2.Watch(), c2.Version()
	_ = c2.Insert(doc(t, `{"_id": 1}`))
	select {
	case <-ch:
		t.Error("a failed insert woke watchers")
	default:
	}
	if c2.Version() != v {
		t.Error("a failed insert changed the version")
	}
}

// TestConcurrent runs scanning and finding readers against writers that
// insert, replace and delete; run it under -race.
func TestConcurrent(t *testing.T) {
	s := New()
	c, _ := s.CollectionOrCreate("db", "c")
	if _, err := c.CreateIndexes([]IndexSpec{{Name: "u_1", Key: doc(t, `{"u": 1}`), Unique: true, Sparse: true}}); err != nil {
		t.Fatal(err)
	}
	const writers, readers, ops = 4, 4, 300
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < ops; i++ {
				id := w*ops + i
				if err := c.Insert(doc(t, fmt.Sprintf(`{"_id": %d, "u": %d, "pad": "xxxxxxxx"}`, id, id))); err != nil {
					t.Error(err)
					return
				}
				if i%3 == 0 {
					_ = c.Replace(val(t, fmt.Sprint(id)), doc(t, fmt.Sprintf(`{"u": %d, "v": 1}`, id)))
				}
				if i%2 == 0 {
					c.Delete(val(t, fmt.Sprint(id)))
				}
			}
		}(w)
	}
	var rwg sync.WaitGroup
	for r := 0; r < readers; r++ {
		rwg.Add(1)
		go func(r int) {
			defer rwg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				last := int32(-1)
				c.Scan(func(d bson.Raw) bool {
					if d.Lookup("_id").Type != bson.TypeInt32 {
						t.Errorf("torn document %v", d)
						return false
					}
					last = d.Lookup("_id").Int32()
					return true
				})
				if last >= 0 {
					c.FindByID(val(t, fmt.Sprint(last)))
				}
				c.ListIndexes()
				s.ListDatabases()
				s.ListCollections("db")
			}
		}(r)
	}
	wg.Wait()
	close(stop)
	rwg.Wait()
	if got, want := c.Count(), writers*ops/2; got != want {
		t.Errorf("count %d, want %d", got, want)
	}
	n := 0
	c.Scan(func(bson.Raw) bool { n++; return true })
	if n != c.Count() {
		t.Errorf("scan saw %d of %d", n, c.Count())
	}
}

func TestWatchDropped(t *testing.T) {
	s := New()
	c, _ := s.CollectionOrCreate("db", "c")
	s.DropDatabase("db")
	select {
	case <-c.Watch():
	default:
		t.Error("Watch on a dropped collection should not block")
	}
}

// TestCallbackPanic checks that a panicking callback does not leave the
// collection locked.
func TestCallbackPanic(t *testing.T) {
	c := newColl(t)
	_ = c.Insert(doc(t, `{"_id": 1}`))
	calls := []func(){
		func() { c.DeleteIf(val(t, `1`), func(bson.Raw) bool { panic("pred") }) },
		func() {
			_, _, _ = c.Modify(val(t, `1`), func(bson.Raw) (bson.Raw, error) { panic("fn") })
		},
	}
	for i, call := range calls {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("call %d did not panic", i)
				}
			}()
			call()
		}()
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = c.Insert(doc(t, fmt.Sprintf(`{"_id": %d}`, 10+i)))
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("call %d left the collection locked", i)
		}
	}
}
