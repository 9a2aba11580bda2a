package operation

import (
	"errors"
	"strings"
	"testing"

	"github.com/mongoscope/mongoscope/bson"
)

func mustDoc(t testing.TB, v any) bson.Raw {
	t.Helper()
	b, err := bson.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// cursorReply is {cursor: {id, ns, <key>: batch}, ok: 1}, as mongod sends it.
func cursorReply(id any, ns string, key string, batch any) bson.D {
	return bson.D{{Key: "cursor", Value: bson.D{{Key: "id", Value: id}, {Key: "ns", Value: ns}, {Key: key, Value: batch}}}, {Key: "ok", Value: 1.0}}
}

func TestCursorLoadRejectsMalformedReplies(t *testing.T) {
	docs := bson.A{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 2}}}
	for _, tc := range []struct {
		name  string
		reply any
		field string // "" when the reply is sound
	}{
		{"sound", cursorReply(int64(7), "db.c", "firstBatch", docs), ""},
		{"sound, id 0, int32 id", cursorReply(int32(0), "db.c", "firstBatch", bson.A{}), ""},
		{"no cursor", bson.D{{Key: "ok", Value: 1}}, "cursor"},
		{"cursor not a document", bson.D{{Key: "cursor", Value: "x"}}, "cursor"},
		{"id a string", cursorReply("7", "db.c", "firstBatch", docs), "cursor.id"},
		{"id a fraction", cursorReply(1.5, "db.c", "firstBatch", docs), "cursor.id"},
		{"id missing", bson.D{{Key: "cursor", Value: bson.D{{Key: "firstBatch", Value: docs}}}}, "cursor.id"},
		{"ns a number", cursorReply(int64(0), "", "firstBatch", docs), "cursor.ns"},
		{"ns without a dot", cursorReply(int64(0), "dbc", "firstBatch", docs), "cursor.ns"},
		{"batch missing", cursorReply(int64(0), "db.c", "nextBatch", docs), "cursor.firstBatch"},
		{"batch a document", cursorReply(int64(0), "db.c", "firstBatch", bson.D{{Key: "0", Value: 1}}), "cursor.firstBatch"},
		{"batch element a number", cursorReply(int64(0), "db.c", "firstBatch", bson.A{bson.D{}, 3}), "cursor.firstBatch.1"},
		{"batch element null", cursorReply(int64(0), "db.c", "firstBatch", bson.A{nil}), "cursor.firstBatch.0"},
		{"postBatchResumeToken a string", bson.D{{Key: "cursor", Value: bson.D{{Key: "id", Value: int64(0)}, {Key: "firstBatch", Value: bson.A{}},
			{Key: "postBatchResumeToken", Value: "t"}}}}, "cursor.postBatchResumeToken"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := mustDoc(t, tc.reply)
			if tc.name == "ns a number" {
				body = mustDoc(t, bson.D{{Key: "cursor", Value: bson.D{{Key: "id", Value: int64(0)}, {Key: "ns", Value: 5}, {Key: "firstBatch", Value: docs}}}})
			}
			c := Cursor{db: "orig", coll: "orig", id: 99}
			err := c.load(body, "firstBatch", false)
			if tc.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var re *ReplyError
			if !errors.As(err, &re) || re.Field != tc.field || re.Reason == "" {
				t.Fatalf("error %v (%T), want a *ReplyError on %q", err, err, tc.field)
			}
			if c.id != 99 || c.db != "orig" || c.coll != "orig" || c.batch != nil {
				t.Fatalf("a refused reply changed the cursor: id %d ns %s.%s", c.id, c.db, c.coll)
			}
		})
	}
}

func TestGetMoreReplyWithAnotherCursorID(t *testing.T) {
	c := Cursor{id: 42}
	err := c.load(mustDoc(t, cursorReply(int64(43), "db.c", "nextBatch", bson.A{})), "nextBatch", true)
	var re *ReplyError
	if !errors.As(err, &re) || re.Field != "cursor.id" {
		t.Fatalf("error %v, want a *ReplyError on cursor.id", err)
	}
	if err := c.load(mustDoc(t, cursorReply(int64(0), "db.c", "nextBatch", bson.A{})), "nextBatch", true); err != nil || c.id != 0 {
		t.Fatalf("a closing getMore: %v, id %d", err, c.id)
	}
}

// FuzzCursorReply feeds the cursor parser (find, aggregate, getMore,
// listCollections, listIndexes replies) arbitrary documents: it must not
// panic, a refusal must be a *ReplyError naming a field under "cursor",
// and an accepted batch must yield exactly its documents.
func FuzzCursorReply(f *testing.F) {
	docs := bson.A{bson.D{{Key: "_id", Value: 1}, {Key: "qty", Value: 5}}, bson.D{{Key: "_id", Value: "x"}}}
	for _, r := range []any{
		cursorReply(int64(8127364), "shop.items", "firstBatch", docs),
		cursorReply(int64(0), "shop.items", "nextBatch", docs),
		cursorReply(int64(0), "shop.$cmd.listCollections", "firstBatch", bson.A{bson.D{{Key: "name", Value: "c"}, {Key: "type", Value: "collection"}}}),
		bson.D{{Key: "cursor", Value: bson.D{{Key: "firstBatch", Value: bson.A{}}, {Key: "postBatchResumeToken", Value: bson.D{{Key: "_data", Value: "8263"}}},
			{Key: "id", Value: int64(5)}, {Key: "ns", Value: "db.coll"}}}, {Key: "ok", Value: 1.0}},
		cursorReply("7", "a.b", "firstBatch", bson.A{1, "x", nil}),
		bson.D{{Key: "ok", Value: 1}},
	} {
		f.Add([]byte(mustDoc(f, r)), true)
		f.Add([]byte(mustDoc(f, r)), false)
	}
	f.Fuzz(func(t *testing.T, body []byte, first bool) {
		key := "nextBatch"
		if first {
			key = "firstBatch"
		}
		c := Cursor{db: "d", coll: "c", id: 1}
		err := c.load(body, key, !first)
		if _, _, ferr := FirstDocument(body); ferr != nil && ferr.Error() == "" {
			t.Fatal("an error without a reason")
		}
		if err != nil {
			var re *ReplyError
			if !errors.As(err, &re) || !strings.HasPrefix(re.Field, "cursor") || re.Reason == "" {
				t.Fatalf("error %v (%T): want a *ReplyError naming a cursor field", err, err)
			}
			if c.id != 1 || c.batch != nil {
				t.Fatal("a refused reply changed the cursor")
			}
			return
		}
		if !first && c.id != 0 && c.id != 1 {
			t.Fatalf("getMore accepted cursor id %d for cursor 1", c.id)
		}
		n := c.Remaining()
		got := 0
		for {
			d, ok, err := c.Next()
			if err != nil {
				if bson.Raw(body).Validate() == nil {
					t.Fatalf("an accepted batch of a valid reply fails in Next: %v", err)
				}
				return
			}
			if !ok {
				break
			}
			if d == nil {
				t.Fatal("Next returned a nil document")
			}
			got++
		}
		if got != n && bson.Raw(body).Validate() == nil {
			t.Fatalf("Remaining said %d, Next gave %d", n, got)
		}
	})
}
